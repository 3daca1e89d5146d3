/* FMI 2.0 Model Exchange and Co-Simulation runtime of an FMU exported by netdyn (netdyn/export/fmu.py).
 *
 * The model's own equations, M(q,t) qdd + h(q,f,t) + Phi_q^T lambda + R^T mu = 0 with phi(q,t) = 0 and
 * A f + a = 0, come from netdyn's C export (<id>.c); netdyn_model.h/.c add the hidden position constraints
 * phi2 (rows of coordinates with neither inertia nor dissipation), the Jacobians dh/df and dgamma/df, the
 * outputs and the tables of this model (sizes, value references, start values, the initial partition).
 *
 * States: the independent coordinates q_S (coordinate partitioning of [Phi_q; Phi2_q]) and the independent
 * inertial flows f_J. fmi2GetDerivatives solves the dependent coordinates by Newton on phi = phi2 = 0, then
 * one Newton system for the remaining flows f_V (flows without inertia and dependent inertial flows), the
 * inertial accelerations and the multipliers:
 *     C f + c = 0                                   (velocity level of every constraint)
 *     M_{:,I} a_I + h(q, f) + Phi_q^T lambda + R^T mu = 0   (every row but the phi2 rows)
 *     W (C_{:,I} a_I + gamma(q, f)) = 0             (acceleration level, combinations W free of flows
 *                                                    without inertia)
 * which is linear (one solve) when h is affine in f and gamma does not depend on f (linear circuits).
 * Model Exchange keeps the partition chosen at export (it names the states) and stops with an error when its
 * condition falls below 1e-6 of its start value, or, exported with dynamic_states (NDF_DYNAMIC), has abstract
 * states state_k and re-selects the partition at a step event when the condition falls below 0.3; Co-Simulation integrates with Dormand-Prince 5(4) and re-selects the partition when it degrades.
 * Time events: the corners of PULSE/PWL sources (nextEventTime; Co-Simulation steps stop at them).
 */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include "fmi2Functions.h"
#include "netdyn_model.h"

#define N NDF_N
#define MPOS (NDF_M1 + NDF_MP)            /* position-level constraint rows: phi, phi2 */
#define MC (NDF_M1 + NDF_MP + NDF_M2)     /* velocity-level constraint rows: phi, phi2, psi */
#define NNU (NDF_M1 + NDF_M2)             /* multipliers lambda, mu */
#define NV (N - NDF_NJ)                   /* flows solved: without inertia, dependent inertial */
#define NW (NV + NDF_NI + NNU)            /* unknowns of the rate solve */
#define NX (NDF_NS + NDF_NJ)              /* continuous states */
#define P1(k) ((k) + 1)                   /* array sizes that may be 0 */

enum { MODE_INSTANTIATED, MODE_INIT, MODE_EVENT, MODE_CONTINUOUS, MODE_STEP, MODE_TERMINATED, MODE_ERROR };

typedef struct {
    fmi2CallbackFunctions cb;
    char name[128];
    fmi2Type type;
    int logging, mode, dirty, failed, warned, reselect;
    double time, rtol, tstop;
    int stop_defined;
    double r[P1(NDF_NR)], rgood[P1(NDF_NR)];   /* values; those of the last successful solve */
    int posdep[P1(MPOS)], posstate[P1(NDF_NS)], veldep[P1(NDF_NK)], velstate[P1(NDF_NJ)], vset[P1(NV)];
    double pos_ratio, vel_ratio, pos_ratio0, vel_ratio0;
    double nominal[P1(NX)];
    /* work */
    double M[P1(N * N)], h[P1(N)], hf[P1(N * N)], C[P1(MC * N)], Rm[P1(NDF_M2 * N)], c[P1(MC)], gam[P1(MC)], gamf[P1(MC * N)];
    double T[P1(MC * MC)], W[P1(NDF_NK * MC)], Jw[P1(NW * NW)], Rw[P1(NW)], Sw[P1(NW)], Jp[P1(MPOS * MPOS)], Rp[P1(MPOS)];
    double Bk[P1(NDF_NK * NDF_NK)], G[P1(MC * N)];
    int piv[P1(NW + MPOS + MC + N)];
    /* Co-Simulation: Dormand-Prince 5(4) */
    double x[P1(NX)], xs[P1(NX)], k[7][P1(NX)], err[P1(NX)];
    double hstep;
    int fsal;
} Inst;

/* ------------------------------------------------------------------------------------------ logging */

static void logmsg(Inst *s, fmi2Status status, const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    if (!s->cb.logger) return;
    if (status == fmi2OK && !s->logging) return;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    s->cb.logger(s->cb.componentEnvironment, s->name, status,
                 status == fmi2OK ? "logAll" : (status == fmi2Warning ? "logStatusWarning" : "logStatusError"),
                 "%s", buf);
}

/* --------------------------------------------------------------------------------- dense linear algebra */

/* LU with partial pivoting in place; returns 1 when singular. ratio: min |u_ii| / max(max |u_ii|, scale), a
 * cheap condition estimate of a partition block (scale: the largest entry of the whole Jacobian, so that a
 * block of one falls as well: a pendulum's dependent y as it reaches the horizontal). */
static int lu(double *A, int n, int *piv, double *ratio, double scale)
{
    double umax = 0.0, umin = HUGE_VAL;
    for (int c = 0; c < n; ++c) {
        int p = c;
        for (int i = c + 1; i < n; ++i)
            if (fabs(A[i * n + c]) > fabs(A[p * n + c])) p = i;
        piv[c] = p;
        if (!(fabs(A[p * n + c]) > 0.0)) return 1;
        if (p != c)
            for (int j = 0; j < n; ++j) { double t = A[c * n + j]; A[c * n + j] = A[p * n + j]; A[p * n + j] = t; }
        for (int i = c + 1; i < n; ++i) {
            double l = A[i * n + c] / A[c * n + c];
            A[i * n + c] = l;
            for (int j = c + 1; j < n; ++j) A[i * n + j] -= l * A[c * n + j];
        }
        if (fabs(A[c * n + c]) > umax) umax = fabs(A[c * n + c]);
        if (fabs(A[c * n + c]) < umin) umin = fabs(A[c * n + c]);
    }
    if (ratio) *ratio = n ? umin / (umax > scale ? umax : scale) : 1.0;
    return 0;
}

static void lusolve(const double *A, int n, const int *piv, double *b)
{
    for (int c = 0; c < n; ++c)   /* the row interchanges first (later ones moved the multipliers' rows) */
        if (piv[c] != c) { double t = b[c]; b[c] = b[piv[c]]; b[piv[c]] = t; }
    for (int c = 0; c < n; ++c)
        for (int i = c + 1; i < n; ++i) b[i] -= A[i * n + c] * b[c];
    for (int i = n - 1; i >= 0; --i) {
        double sum = b[i];
        for (int j = i + 1; j < n; ++j) sum -= A[i * n + j] * b[j];
        b[i] = sum / A[i * n + i];
    }
}

/* --------------------------------------------------------------------------------- the partition */

static void complete_partition(Inst *s)
{
    int isdep[P1(N)], k = 0;
    for (int j = 0; j < N; ++j) isdep[j] = 0;
    for (int i = 0; i < MPOS; ++i) isdep[s->posdep[i]] = 1;
    for (int j = 0; j < N; ++j) if (!isdep[j]) s->posstate[k++] = j;
    for (int j = 0; j < N; ++j) isdep[j] = 0;
    for (int i = 0; i < NDF_NK; ++i) isdep[s->veldep[i]] = 1;
    k = 0;
    for (int i = 0; i < NDF_NI; ++i) if (!isdep[ndf_inertial[i]]) s->velstate[k++] = ndf_inertial[i];
    k = 0;
    for (int i = 0; i < NDF_NN; ++i) s->vset[k++] = ndf_noninertial[i];
    for (int i = 0; i < NDF_NK; ++i) s->vset[k++] = s->veldep[i];
}

/* Gaussian elimination with complete pivoting on the columns allowed; the pivot columns are the dependent ones
 * (at export the same rule chose the first partition, weighted by the user's preferences; a re-selection takes
 * the best conditioned). Returns the rank. */
static int pivot_columns(double *A, int rows, int cols, const int *allowed, int *out)
{
    int rowused[P1(MC + MPOS)], colused[P1(N)], rank = 0;
    double amax = 0.0;
    for (int i = 0; i < rows; ++i) rowused[i] = 0;
    for (int j = 0; j < cols; ++j) colused[j] = !allowed[j];
    for (int i = 0; i < rows * cols; ++i) if (fabs(A[i]) > amax) amax = fabs(A[i]);
    for (int step = 0; step < rows; ++step) {
        int pi = -1, pj = -1;
        double best = 0.0;
        for (int i = 0; i < rows; ++i) {
            if (rowused[i]) continue;
            for (int j = 0; j < cols; ++j) {
                double v = colused[j] ? 0.0 : fabs(A[i * cols + j]);
                if (v > best) { best = v; pi = i; pj = j; }
            }
        }
        if (pi < 0 || fabs(A[pi * cols + pj]) <= 1e-12 * amax) break;
        rowused[pi] = colused[pj] = 1;
        out[rank++] = pj;
        for (int i = 0; i < rows; ++i) {
            double l;
            if (rowused[i]) continue;
            l = A[i * cols + pj] / A[pi * cols + pj];
            for (int j = 0; j < cols; ++j) A[i * cols + j] -= l * A[pi * cols + j];
        }
    }
    return rank;
}

static void eval_positions_jacobian(Inst *s, double *Pq)
{
    const double *q = s->r + NDF_Q0, *f = s->r + NDF_F0, *p = s->r + NDF_P0, *u = s->r + NDF_U0;
    if (NDF_M1) nd_Phi_q(s->time, q, f, p, u, Pq);
    if (NDF_MP) nd_Phi2_q(s->time, q, f, p, u, Pq + NDF_M1 * N);
}

static void eval_velocity_rows(Inst *s)
{
    const double *q = s->r + NDF_Q0, *f = s->r + NDF_F0, *p = s->r + NDF_P0, *u = s->r + NDF_U0;
    double t = s->time;
    eval_positions_jacobian(s, s->C);
    if (NDF_M2) nd_A(t, q, f, p, u, s->C + MPOS * N);
    if (NDF_M2) nd_reaction(t, q, f, p, u, s->Rm);   /* where mu acts: A, or a servo constraint's reaction */
    if (NDF_M1) nd_Phi_t(t, q, f, p, u, s->c);
    if (NDF_MP) nd_Phi2_t(t, q, f, p, u, s->c + NDF_M1);
    if (NDF_M2) nd_a(t, q, f, p, u, s->c + MPOS);
}

/* T C = [[U]; [0]] on the columns without inertia: the rows W of T give the acceleration-level equations
 * free of those flows. Returns the number of such rows found (must be NDF_NK). */
static int reduce_rows(Inst *s)
{
    int used[P1(MC)], rank = 0, k = 0;
    double gmax = 0.0;
    for (int i = 0; i < MC; ++i) {
        used[i] = 0;
        for (int j = 0; j < MC; ++j) s->T[i * MC + j] = i == j ? 1.0 : 0.0;
        for (int j = 0; j < NDF_NN; ++j) {
            s->G[i * N + j] = s->C[i * N + ndf_noninertial[j]];
            if (fabs(s->G[i * N + j]) > gmax) gmax = fabs(s->G[i * N + j]);
        }
    }
    for (int j = 0; j < NDF_NN; ++j) {
        int p = -1;
        double best = 1e-12 * gmax;
        for (int i = 0; i < MC; ++i)
            if (!used[i] && fabs(s->G[i * N + j]) > best) { best = fabs(s->G[i * N + j]); p = i; }
        if (p < 0) continue;
        used[p] = 1;
        ++rank;
        for (int i = 0; i < MC; ++i) {
            double l;
            if (used[i]) continue;
            l = s->G[i * N + j] / s->G[p * N + j];
            for (int jj = 0; jj < NDF_NN; ++jj) s->G[i * N + jj] -= l * s->G[p * N + jj];
            for (int jj = 0; jj < MC; ++jj) s->T[i * MC + jj] -= l * s->T[p * MC + jj];
        }
    }
    for (int i = 0; i < MC; ++i) {
        if (used[i]) continue;
        if (k < NDF_NK)
            for (int jj = 0; jj < MC; ++jj) s->W[k * MC + jj] = s->T[i * MC + jj];
        ++k;
    }
    (void)rank;
    return k;
}

/* The acceleration-level rows on the inertial columns: B = W C_{:,I} (NK x NI). */
static void reduced_inertial_rows(Inst *s, double *B)
{
    for (int r = 0; r < NDF_NK; ++r)
        for (int j = 0; j < NDF_NI; ++j) {
            double sum = 0.0;
            for (int l = 0; l < MC; ++l) sum += s->W[r * MC + l] * s->C[l * N + ndf_inertial[j]];
            B[r * NDF_NI + j] = sum;
        }
}

/* Choose the dependent coordinates and flows at the current state (Co-Simulation re-selection). */
static int select_partition(Inst *s)
{
    int allowed[P1(N)], dep[P1(N)], rank;
    double B[P1(NDF_NK * NDF_NI)], Bfull[P1(NDF_NK * N)];
    for (int j = 0; j < N; ++j) allowed[j] = 1;
    if (MPOS) {
        eval_positions_jacobian(s, s->G);
        rank = pivot_columns(s->G, MPOS, N, allowed, dep);
        if (rank != MPOS) return 1;
        for (int i = 0; i < MPOS; ++i) s->posdep[i] = dep[i];
    }
    if (NDF_NK) {
        eval_velocity_rows(s);
        if (reduce_rows(s) != NDF_NK) return 1;
        reduced_inertial_rows(s, B);
        for (int j = 0; j < N; ++j) allowed[j] = 0;
        for (int r = 0; r < NDF_NK; ++r) {
            for (int j = 0; j < N; ++j) Bfull[r * N + j] = 0.0;
            for (int j = 0; j < NDF_NI; ++j) Bfull[r * N + ndf_inertial[j]] = B[r * NDF_NI + j];
        }
        for (int j = 0; j < NDF_NI; ++j) allowed[ndf_inertial[j]] = 1;
        rank = pivot_columns(Bfull, NDF_NK, N, allowed, dep);
        if (rank != NDF_NK) return 1;
        for (int i = 0; i < NDF_NK; ++i) s->veldep[i] = dep[i];
    }
    complete_partition(s);
    return 0;
}

/* ------------------------------------------------------------------------------------ the solves */

static int solve_positions(Inst *s)
{
    double *q = s->r + NDF_Q0;
    const double *f = s->r + NDF_F0, *p = s->r + NDF_P0, *u = s->r + NDF_U0;
    double prev = HUGE_VAL;
    if (!MPOS) { s->pos_ratio = 1.0; return 0; }
    for (int it = 0; it < 60; ++it) {
        double step = 0.0, scale = 0.0, gmax = 0.0;
        if (NDF_M1) nd_phi(s->time, q, f, p, u, s->Rp);
        if (NDF_MP) nd_phi2(s->time, q, f, p, u, s->Rp + NDF_M1);
        eval_positions_jacobian(s, s->G);
        for (int i = 0; i < MPOS * N; ++i) if (fabs(s->G[i]) > gmax) gmax = fabs(s->G[i]);
        for (int i = 0; i < MPOS; ++i) {
            for (int k = 0; k < MPOS; ++k) s->Jp[i * MPOS + k] = s->G[i * N + s->posdep[k]];
            s->Rp[i] = -s->Rp[i];
        }
        if (lu(s->Jp, MPOS, s->piv, &s->pos_ratio, gmax)) {
            logmsg(s, fmi2Error, "the dependent coordinates' block of the constraint Jacobian is singular at "
                   "t = %g: the coordinate partition chosen does not hold here", s->time);
            return 1;
        }
        lusolve(s->Jp, MPOS, s->piv, s->Rp);
        for (int k = 0; k < MPOS; ++k) {
            double *x = q + s->posdep[k];
            if (!isfinite(s->Rp[k])) { logmsg(s, fmi2Error, "position solve: not a number at t = %g", s->time); return 1; }
            *x += s->Rp[k];
            if (fabs(s->Rp[k]) > step) step = fabs(s->Rp[k]);
            if (fabs(*x) > scale) scale = fabs(*x);
        }
        if (step <= 1e-13 * scale || step == 0.0) return 0;
        if (it >= 2 && step >= 0.5 * prev && step <= 1e-8 * scale) return 0;  /* at the rounding level */
        prev = step;
    }
    if (s->pos_ratio < 1e-3 * s->pos_ratio0)
        logmsg(s, fmi2Error, "t = %g: the coordinate partition has degraded (condition %.3g of its start value): the "
               "dependent coordinates cannot be solved from these states; export with other states "
               "(save_fmu(..., states=[...]), or a stop_time covering this time) or as Co-Simulation (kind=\"cs\", "
               "which re-selects)", s->time, s->pos_ratio / s->pos_ratio0);
    else
        logmsg(s, fmi2Error, "the position solve (Newton on the constraints) did not converge at t = %g", s->time);
    return 1;
}

static int solve_rates(Inst *s)
{
    double dprev = HUGE_VAL, bscale = 0.0;
    double *q = s->r + NDF_Q0, *f = s->r + NDF_F0, *a = s->r + NDF_A0, *nu = s->r + NDF_L0;
    const double *p = s->r + NDF_P0, *u = s->r + NDF_U0;
    double t = s->time;
    nd_mass_matrix(t, q, f, p, u, s->M);
    if (MC) eval_velocity_rows(s);
    if (NDF_NK) {
        if (reduce_rows(s) != NDF_NK) {
            logmsg(s, fmi2Error, "the constraints on flows without inertia changed rank at t = %g", t);
            return 1;
        }
        reduced_inertial_rows(s, s->G);
        for (int i = 0; i < NDF_NK * NDF_NI; ++i) if (fabs(s->G[i]) > bscale) bscale = fabs(s->G[i]);
        for (int r = 0; r < NDF_NK; ++r)
            for (int k = 0; k < NDF_NK; ++k) {
                int col = 0;
                for (int j = 0; j < NDF_NI; ++j) if (ndf_inertial[j] == s->veldep[k]) col = j;
                s->Bk[r * NDF_NK + k] = s->G[r * NDF_NI + col];
            }
        if (lu(s->Bk, NDF_NK, s->piv, &s->vel_ratio, bscale)) {
            logmsg(s, fmi2Error, "the dependent flows' block of the constraint Jacobian is singular at t = %g: "
                   "the flow partition chosen does not hold here", t);
            return 1;
        }
    } else {
        s->vel_ratio = 1.0;
    }
    for (int it = 0; it < 30; ++it) {
        double *J = s->Jw, *R = s->Rw, *sc = s->Sw, be = 0.0, bmax[3] = {0.0, 0.0, 0.0};
        int row = 0, converged;
        nd_h(t, q, f, p, u, s->h);
        nd_h_f(t, q, f, p, u, s->hf);
        if (NDF_M1) nd_gamma_phi(t, q, f, p, u, s->gam);
        if (NDF_MP) nd_gamma2(t, q, f, p, u, s->gam + NDF_M1);
        if (NDF_M2) nd_gamma_psi(t, q, f, p, u, s->gam + MPOS);
        if (MC) nd_gamma_f(t, q, f, p, u, s->gamf);
        for (int i = 0; i < NW * NW; ++i) J[i] = 0.0;
        for (int i = 0; i < MC; ++i, ++row) {   /* C f + c = 0 */
            double sum = s->c[i], mag = fabs(s->c[i]);
            for (int j = 0; j < N; ++j) { sum += s->C[i * N + j] * f[j]; mag += fabs(s->C[i * N + j] * f[j]); }
            R[row] = -sum;
            sc[row] = mag;
            for (int v = 0; v < NV; ++v) J[row * NW + v] = s->C[i * N + s->vset[v]];
        }
        for (int rr = 0; rr < N - NDF_MP; ++rr, ++row) {   /* M a + h + [Phi_q; R]^T nu = 0 */
            int i = ndf_dynrow[rr];
            double sum = s->h[i], mag = fabs(s->h[i]);
            for (int j = 0; j < NDF_NI; ++j) {
                sum += s->M[i * N + ndf_inertial[j]] * a[ndf_inertial[j]];
                mag += fabs(s->M[i * N + ndf_inertial[j]] * a[ndf_inertial[j]]);
                J[row * NW + NV + j] = s->M[i * N + ndf_inertial[j]];
            }
            for (int k = 0; k < NDF_M1; ++k) {
                sum += s->C[k * N + i] * nu[k];
                mag += fabs(s->C[k * N + i] * nu[k]);
                J[row * NW + NV + NDF_NI + k] = s->C[k * N + i];
            }
            for (int k = 0; k < NDF_M2; ++k) {
                sum += s->Rm[k * N + i] * nu[NDF_M1 + k];
                mag += fabs(s->Rm[k * N + i] * nu[NDF_M1 + k]);
                J[row * NW + NV + NDF_NI + NDF_M1 + k] = s->Rm[k * N + i];
            }
            R[row] = -sum;
            sc[row] = mag;
            for (int v = 0; v < NV; ++v) J[row * NW + v] = s->hf[i * N + s->vset[v]];
        }
        for (int r = 0; r < NDF_NK; ++r, ++row) {   /* W (C_I a_I + gamma) = 0 */
            double sum = 0.0, mag = 0.0;
            for (int l = 0; l < MC; ++l) {
                double w = s->W[r * MC + l], cl = s->gam[l], ml = fabs(s->gam[l]);
                if (w == 0.0) continue;
                for (int j = 0; j < NDF_NI; ++j) {
                    cl += s->C[l * N + ndf_inertial[j]] * a[ndf_inertial[j]];
                    ml += fabs(s->C[l * N + ndf_inertial[j]] * a[ndf_inertial[j]]);
                    J[row * NW + NV + j] += w * s->C[l * N + ndf_inertial[j]];
                }
                for (int v = 0; v < NV; ++v) J[row * NW + v] += w * s->gamf[l * N + s->vset[v]];
                sum += w * cl;
                mag += fabs(w) * ml;
            }
            R[row] = -sum;
            sc[row] = mag;
        }
        /* the backward error: each residual against the size of its terms, floored at 1e-10 of its block's
         * largest (so an equation whose terms all vanish, at rest, is not held to noise) */
        for (int i = 0; i < NW; ++i) {
            int b = i < MC ? 0 : (i < MC + N - NDF_MP ? 1 : 2);
            if (sc[i] > bmax[b]) bmax[b] = sc[i];
        }
        for (int i = 0; i < NW; ++i) {
            int b = i < MC ? 0 : (i < MC + N - NDF_MP ? 1 : 2);
            double e = fabs(R[i]) / (sc[i] + 1e-10 * bmax[b] + 1e-300);
            if (!(e <= be)) be = e;
        }
        if (it > 0 && be <= 1e-13) return 0;
        if (it >= 2 && dprev <= 1e-6 && be <= 1e-6) return 0;   /* stagnated at the rounding level */
        if (lu(J, NW, s->piv, NULL, 0.0)) {
            logmsg(s, fmi2Error, "the rate equations are singular at t = %g (a structure of index two or more "
                   "appeared: export in another formulation)", t);
            return 1;
        }
        lusolve(J, NW, s->piv, R);
        {   /* the step against each unknown's size (floored at 1e-6 of the largest flow, acceleration or
             * multiplier) */
            double fs = 0.0, as = 0.0, ns = 0.0, d = 0.0;
            for (int j = 0; j < N; ++j) if (fabs(f[j]) > fs) fs = fabs(f[j]);
            for (int j = 0; j < NDF_NI; ++j) if (fabs(a[ndf_inertial[j]]) > as) as = fabs(a[ndf_inertial[j]]);
            for (int k = 0; k < NNU; ++k) if (fabs(nu[k]) > ns) ns = fabs(nu[k]);
            for (int i = 0; i < NW; ++i)
                if (!isfinite(R[i])) { logmsg(s, fmi2Error, "rate solve: not a number at t = %g", t); return 1; }
            for (int v = 0; v < NV; ++v) {
                double *x = f + s->vset[v], e = fabs(R[v]) / (fabs(*x) + 1e-6 * fs + 1e-300);
                *x += R[v];
                if (e > d) d = e;
            }
            for (int j = 0; j < NDF_NI; ++j) {
                double *x = a + ndf_inertial[j], e = fabs(R[NV + j]) / (fabs(*x) + 1e-6 * as + 1e-300);
                *x += R[NV + j];
                if (e > d) d = e;
            }
            for (int k = 0; k < NNU; ++k) {
                double e = fabs(R[NV + NDF_NI + k]) / (fabs(nu[k]) + 1e-6 * ns + 1e-300);
                nu[k] += R[NV + NDF_NI + k];
                if (e > d) d = e;
            }
            converged = NDF_AFFINE || d <= 1e-12;
            dprev = d;
        }
        if (converged) return 0;
    }
    logmsg(s, fmi2Error, "the rate solve (Newton on the flows without inertia and the accelerations) did not "
           "converge at t = %g", t);
    return 1;
}

/* Everything at the current time and states: dependent coordinates, flows, accelerations, outputs. */
static int compute(Inst *s)
{
    if (!s->dirty) return s->failed;
    s->failed = solve_positions(s) || solve_rates(s);
    if (s->failed) {   /* the Newton guesses of the next solve: the last good values, not what diverged */
        for (int j = 0; j < N; ++j) {
            s->r[NDF_Q0 + j] = s->rgood[NDF_Q0 + j];
            s->r[NDF_F0 + j] = s->rgood[NDF_F0 + j];
            s->r[NDF_A0 + j] = s->rgood[NDF_A0 + j];
        }
        for (int k = 0; k < NNU; ++k) s->r[NDF_L0 + k] = s->rgood[NDF_L0 + k];
    } else {
        double *r = s->r;
        for (int j = 0; j < NDF_NN; ++j) r[NDF_A0 + ndf_noninertial[j]] = 0.0;
        if (NDF_NO)
            nd_outputs(s->time, r + NDF_Q0, r + NDF_F0, r + NDF_A0, r + NDF_L0, r + NDF_L0 + NDF_M1, r + NDF_P0,
                       r + NDF_U0, r + NDF_O0);
        memcpy(s->rgood, s->r, sizeof s->rgood);
    }
    s->dirty = 0;
    return s->failed;
}

static void get_states(Inst *s, double *x)
{
    for (int i = 0; i < NDF_NS; ++i) x[i] = s->r[NDF_Q0 + s->posstate[i]];
    for (int i = 0; i < NDF_NJ; ++i) x[NDF_NS + i] = s->r[NDF_F0 + s->velstate[i]];
}

static void set_states(Inst *s, const double *x)
{
    for (int i = 0; i < NDF_NS; ++i) s->r[NDF_Q0 + s->posstate[i]] = x[i];
    for (int i = 0; i < NDF_NJ; ++i) s->r[NDF_F0 + s->velstate[i]] = x[NDF_NS + i];
    s->dirty = 1;
}

static int derivatives(Inst *s, double *dx)
{
    if (compute(s)) return 1;
    for (int i = 0; i < NDF_NS; ++i) dx[i] = s->r[NDF_F0 + s->posstate[i]];
    for (int i = 0; i < NDF_NJ; ++i) dx[NDF_NS + i] = s->r[NDF_A0 + s->velstate[i]];
    return 0;
}

/* The partition's blocks against their condition at the start: 0 fine, 1 worse than `limit` times. */
static int degraded(Inst *s, double limit)
{
    return s->pos_ratio < limit * s->pos_ratio0 || s->vel_ratio < limit * s->vel_ratio0;
}

/* ------------------------------------------------------------------------------------- time events */

static double next_event(double t)
{
    double best = HUGE_VAL, eps = 1e-12 * (fabs(t) > 1.0 ? fabs(t) : 1.0);
    for (int i = 0; i < NDF_NFIX; ++i)
        if (ndf_ev_fixed[i] > t + eps && ndf_ev_fixed[i] < best) best = ndf_ev_fixed[i];
    for (int i = 0; i < NDF_NPER; ++i) {
        double o = ndf_ev_offset[i], per = ndf_ev_period[i], k = t < o ? 0.0 : floor((t - o) / per) + 1.0;
        double tk = o + k * per;
        while (tk <= t + eps) tk += per;
        if (tk < best) best = tk;
    }
    return best;
}

/* ------------------------------------------------------------------------ Dormand-Prince 5(4) */

static const double DP_C[7] = {0.0, 1.0 / 5, 3.0 / 10, 4.0 / 5, 8.0 / 9, 1.0, 1.0};
static const double DP_A[7][6] = {
    {0, 0, 0, 0, 0, 0},
    {1.0 / 5, 0, 0, 0, 0, 0},
    {3.0 / 40, 9.0 / 40, 0, 0, 0, 0},
    {44.0 / 45, -56.0 / 15, 32.0 / 9, 0, 0, 0},
    {19372.0 / 6561, -25360.0 / 2187, 64448.0 / 6561, -212.0 / 729, 0, 0},
    {9017.0 / 3168, -355.0 / 33, 46732.0 / 5247, 49.0 / 176, -5103.0 / 18656, 0},
    {35.0 / 384, 0, 500.0 / 1113, 125.0 / 192, -2187.0 / 6784, 11.0 / 84}};
static const double DP_E[7] = {71.0 / 57600, 0, -71.0 / 16695, 71.0 / 1920, -17253.0 / 339200, 22.0 / 525,
                               -1.0 / 40};

static int eval_at(Inst *s, double t, const double *x, double *dx)
{
    s->time = t;
    set_states(s, x);
    return derivatives(s, dx);
}

/* Integrate the states from s->time to tend (adaptive steps, error per state against rtol and the state's
 * nominal size); `reselect`: re-choose the partition when it degrades (Co-Simulation). */
static int integrate(Inst *s, double tend, double rtol, int reselect)
{
    double t = s->time;
    int steps = 0;
    get_states(s, s->x);
    if (!s->fsal || s->hstep <= 0.0) {
        if (eval_at(s, t, s->x, s->k[0])) return 1;
        s->fsal = 1;
    }
    if (s->hstep <= 0.0) s->hstep = 1e-4 * (tend - t);
    while (t < tend - 1e-14 * (fabs(tend) > 1.0 ? fabs(tend) : 1.0)) {
        double h = s->hstep, errn = 0.0;
        int last = 0;
        if (t + h >= tend || t + 1.01 * h >= tend) { h = tend - t; last = 1; }
        for (int st = 1; st < 7; ++st) {
            for (int i = 0; i < NX; ++i) {
                double sum = s->x[i];
                for (int j = 0; j < st; ++j) sum += h * DP_A[st][j] * s->k[j][i];
                s->xs[i] = sum;
            }
            if (eval_at(s, t + DP_C[st] * h, s->xs, s->k[st])) {
                s->hstep = 0.25 * h;    /* a failed solve inside the step: try a smaller one */
                s->fsal = 0;
                if (h < 1e-14 * (fabs(t) + 1.0)) return 1;
                set_states(s, s->x);
                s->time = t;
                if (eval_at(s, t, s->x, s->k[0])) return 1;
                if (reselect && select_partition(s) == 0) {   /* and other states, where the solve failed */
                    s->dirty = 1;
                    if (compute(s)) return 1;
                    s->pos_ratio0 = s->pos_ratio;
                    s->vel_ratio0 = s->vel_ratio;
                    get_states(s, s->x);
                    if (eval_at(s, t, s->x, s->k[0])) return 1;
                }
                s->fsal = 1;
                goto next;
            }
        }
        for (int i = 0; i < NX; ++i) {
            double e = 0.0, sc;
            for (int j = 0; j < 7; ++j) e += DP_E[j] * s->k[j][i];
            e *= h;
            sc = rtol * (1e-2 * s->nominal[i] + (fabs(s->x[i]) > fabs(s->xs[i]) ? fabs(s->x[i]) : fabs(s->xs[i])));
            if (sc > 0.0) errn += (e / sc) * (e / sc);
            else if (e != 0.0) errn = HUGE_VAL;
        }
        errn = NX ? sqrt(errn / NX) : 0.0;
        if (errn <= 1.0) {
            double fac = errn > 0.0 ? 0.9 * pow(errn, -0.2) : 5.0;
            t += h;
            for (int i = 0; i < NX; ++i) { s->x[i] = s->xs[i]; s->k[0][i] = s->k[6][i]; }
            s->time = t;   /* r holds the state at t (the last stage is at t + h with the new state) */
            if (!last || s->hstep < h) s->hstep = h * (fac > 5.0 ? 5.0 : fac);
            if (reselect && degraded(s, 0.3)) {
                if (select_partition(s)) { logmsg(s, fmi2Error, "no regular partition at t = %g", t); return 1; }
                s->dirty = 1;
                if (compute(s)) return 1;
                s->pos_ratio0 = s->pos_ratio;
                s->vel_ratio0 = s->vel_ratio;
                logmsg(s, fmi2OK, "t = %g: coordinate partition re-selected", t);
                get_states(s, s->x);
                if (eval_at(s, t, s->x, s->k[0])) return 1;
            }
        } else {
            double fac = 0.9 * pow(errn, -0.2);
            s->hstep = h * (fac < 0.2 ? 0.2 : fac);
        }
        if (++steps > 5000000) { logmsg(s, fmi2Error, "more than 5e6 steps"); return 1; }
        if (s->hstep < 1e-15 * (fabs(t) + 1.0)) {
            logmsg(s, fmi2Error, "step size underflow at t = %g", t);
            return 1;
        }
    next:;
    }
    s->time = tend;
    set_states(s, s->x);
    return compute(s);
}

/* Samples of the coarse first pass for netdyn's export (t, q, f at each sample), when it asks for them. */
static double *sample_buf = NULL;
static int sample_cap = 0, sample_count = 0;

/* Nominal sizes of the states from a coarse first pass over the experiment (as netdyn.simulate scales its
 * absolute tolerances): the largest magnitude of each, floored at 1e-6 of the largest of its kind. The pass
 * re-selects the partition where it degrades; the partition of the states is restored after it. */
static void nominals_from_first_pass(Inst *s)
{
    double rsave[P1(NDF_NR)], peak[P1(NX)], t0 = s->time, qmax = 0.0, fmax = 0.0;
    int pd[P1(MPOS)], vd[P1(NDF_NK)], ps[P1(NDF_NS)], vs[P1(NDF_NJ)];
    int ok = 1;
    memcpy(rsave, s->r, sizeof rsave);
    memcpy(pd, s->posdep, sizeof pd); memcpy(vd, s->veldep, sizeof vd);
    memcpy(ps, s->posstate, sizeof ps); memcpy(vs, s->velstate, sizeof vs);
    for (int i = 0; i < NX; ++i) { s->nominal[i] = 1.0; peak[i] = 0.0; }
    if (s->stop_defined && s->tstop > t0 && NX > 0) {
        double tt = t0, span = s->tstop - t0;
        s->hstep = 0.0;
        s->fsal = 0;
        for (int seg = 0; seg < 200 && ok; ++seg) {
            double tn = t0 + span * (seg + 1) / 200.0, ev = next_event(tt);
            int corner = ev < tn;
            if (corner) tn = ev;
            if (integrate(s, tn, 1e-6, 1)) { ok = 0; break; }
            if (corner) s->fsal = 0;
            for (int i = 0; i < NDF_NS; ++i) if (fabs(s->r[NDF_Q0 + ps[i]]) > peak[i]) peak[i] = fabs(s->r[NDF_Q0 + ps[i]]);
            for (int i = 0; i < NDF_NJ; ++i)
                if (fabs(s->r[NDF_F0 + vs[i]]) > peak[NDF_NS + i]) peak[NDF_NS + i] = fabs(s->r[NDF_F0 + vs[i]]);
            if (sample_buf && sample_count < sample_cap) {
                double *out = sample_buf + (size_t)sample_count * (1 + 2 * N);
                out[0] = s->time;
                for (int j = 0; j < N; ++j) { out[1 + j] = s->r[NDF_Q0 + j]; out[1 + N + j] = s->r[NDF_F0 + j]; }
                ++sample_count;
            }
            tt = tn;
            if (tt >= s->tstop) break;
        }
        if (!ok) logmsg(s, fmi2Warning, "the coarse first pass stopped at t = %g; the states' nominal sizes are 1",
                        s->time);
    } else {
        ok = 0;
    }
    memcpy(s->r, rsave, sizeof rsave);
    memcpy(s->posdep, pd, sizeof pd); memcpy(s->veldep, vd, sizeof vd);
    complete_partition(s);
    s->time = t0;
    s->dirty = 1;
    s->hstep = 0.0;
    s->fsal = 0;
    if (!ok) { compute(s); return; }
    for (int i = 0; i < NX; ++i) {
        if (i < NDF_NS && peak[i] > qmax) qmax = peak[i];
        if (i >= NDF_NS && peak[i] > fmax) fmax = peak[i];
    }
    for (int i = 0; i < NX; ++i) {
        double kind = i < NDF_NS ? qmax : fmax, floor_ = 1e-6 * kind;
        s->nominal[i] = kind > 0.0 ? (peak[i] > floor_ ? peak[i] : floor_) : 1.0;
    }
    compute(s);
}

/* ------------------------------------------------------------------------------- FMI: common */

#define GUARD(s) if (!(s)) return fmi2Error; if ((s)->mode == MODE_ERROR) return fmi2Error
/* the head of a call on the state vector: the instance, guarded, and the vector's length checked */
#define STATE_VECTOR_CALL(s, c, nx) Inst *s = (Inst *)(c); GUARD(s); if ((nx) != NX) return fmi2Error

const char *fmi2GetTypesPlatform(void) { return fmi2TypesPlatform; }
const char *fmi2GetVersion(void) { return fmi2Version; }

fmi2Status fmi2SetDebugLogging(fmi2Component c, fmi2Boolean loggingOn, size_t nCategories,
                               const fmi2String categories[])
{
    Inst *s = (Inst *)c;
    (void)nCategories; (void)categories;
    if (!s) return fmi2Error;
    s->logging = loggingOn;
    return fmi2OK;
}

static void reset(Inst *s)
{
    for (int i = 0; i < NDF_NR; ++i) s->r[i] = s->rgood[i] = ndf_start[i];
    for (int i = 0; i < MPOS; ++i) s->posdep[i] = ndf_posdep0[i];
    for (int i = 0; i < NDF_NK; ++i) s->veldep[i] = ndf_veldep0[i];
    for (int i = 0; i < NX; ++i) s->nominal[i] = 1.0;
    complete_partition(s);
    s->time = 0.0;
    s->rtol = NDF_RTOL;
    s->tstop = 0.0;
    s->stop_defined = 0;
    s->dirty = 1;
    s->failed = 0;
    s->warned = 0;
    s->hstep = 0.0;
    s->fsal = 0;
    s->pos_ratio0 = s->vel_ratio0 = 1.0;
    s->mode = MODE_INSTANTIATED;
}

fmi2Component fmi2Instantiate(fmi2String instanceName, fmi2Type fmuType, fmi2String fmuGUID,
                              fmi2String fmuResourceLocation, const fmi2CallbackFunctions *functions,
                              fmi2Boolean visible, fmi2Boolean loggingOn)
{
    Inst *s;
    (void)fmuResourceLocation; (void)visible;
    if (!functions || !functions->allocateMemory || !functions->freeMemory) return NULL;
    if (!fmuGUID || strcmp(fmuGUID, ndf_guid) != 0) {
        if (functions->logger)
            functions->logger(functions->componentEnvironment, instanceName, fmi2Error, "logStatusError",
                              "wrong GUID %s, expected %s", fmuGUID ? fmuGUID : "(null)", ndf_guid);
        return NULL;
    }
    if ((fmuType == fmi2ModelExchange && !NDF_ME) || (fmuType == fmi2CoSimulation && !NDF_CS)) {
        if (functions->logger)
            functions->logger(functions->componentEnvironment, instanceName, fmi2Error, "logStatusError",
                              "this FMU was exported without %s", fmuType == fmi2ModelExchange ?
                              "Model Exchange" : "Co-Simulation");
        return NULL;
    }
    s = (Inst *)functions->allocateMemory(1, sizeof(Inst));
    if (!s) return NULL;
    memset(s, 0, sizeof(Inst));
    s->cb = *functions;
    snprintf(s->name, sizeof s->name, "%s", instanceName ? instanceName : "netdyn");
    s->type = fmuType;
    s->logging = loggingOn;
    reset(s);
    return s;
}

void fmi2FreeInstance(fmi2Component c)
{
    Inst *s = (Inst *)c;
    if (s) s->cb.freeMemory(s);
}

fmi2Status fmi2SetupExperiment(fmi2Component c, fmi2Boolean toleranceDefined, fmi2Real tolerance,
                               fmi2Real startTime, fmi2Boolean stopTimeDefined, fmi2Real stopTime)
{
    Inst *s = (Inst *)c;
    GUARD(s);
    if (toleranceDefined && tolerance > 0.0) s->rtol = tolerance;
    s->time = startTime;
    s->stop_defined = stopTimeDefined;
    s->tstop = stopTime;
    s->dirty = 1;
    return fmi2OK;
}

fmi2Status fmi2EnterInitializationMode(fmi2Component c)
{
    Inst *s = (Inst *)c;
    GUARD(s);
    s->mode = MODE_INIT;
    return fmi2OK;
}

fmi2Status fmi2ExitInitializationMode(fmi2Component c)
{
    Inst *s = (Inst *)c;
    GUARD(s);
    s->dirty = 1;
    if (compute(s)) { s->mode = MODE_ERROR; return fmi2Error; }
    s->pos_ratio0 = s->pos_ratio;
    s->vel_ratio0 = s->vel_ratio;
    nominals_from_first_pass(s);
    if (s->failed) { s->mode = MODE_ERROR; return fmi2Error; }
    s->mode = s->type == fmi2ModelExchange ? MODE_EVENT : MODE_STEP;
    return fmi2OK;
}

fmi2Status fmi2Terminate(fmi2Component c)
{
    Inst *s = (Inst *)c;
    if (!s) return fmi2Error;
    s->mode = MODE_TERMINATED;
    return fmi2OK;
}

fmi2Status fmi2Reset(fmi2Component c)
{
    Inst *s = (Inst *)c;
    if (!s) return fmi2Error;
    reset(s);
    return fmi2OK;
}

fmi2Status fmi2GetReal(fmi2Component c, const fmi2ValueReference vr[], size_t nvr, fmi2Real value[])
{
    Inst *s = (Inst *)c;
    GUARD(s);
    if (s->mode != MODE_INSTANTIATED && s->mode != MODE_INIT && compute(s)) return fmi2Error;
    for (size_t i = 0; i < nvr; ++i) {
        if (NDF_DYNAMIC && vr[i] >= NDF_NR && vr[i] < NDF_NR + 2 * NX) {   /* state_k, der(state_k) */
            double v[P1(NX)];
            size_t k = vr[i] - NDF_NR;
            if (k < (size_t)NX) get_states(s, v);
            else if (derivatives(s, v)) return fmi2Error;
            value[i] = v[k < (size_t)NX ? k : k - NX];
            continue;
        }
        if (vr[i] >= NDF_NR) { logmsg(s, fmi2Error, "unknown value reference %u", vr[i]); return fmi2Error; }
        value[i] = s->r[vr[i]];
    }
    return fmi2OK;
}

fmi2Status fmi2SetReal(fmi2Component c, const fmi2ValueReference vr[], size_t nvr, const fmi2Real value[])
{
    Inst *s = (Inst *)c;
    GUARD(s);
    for (size_t i = 0; i < nvr; ++i) {
        if (vr[i] >= NDF_NR) { logmsg(s, fmi2Error, "unknown value reference %u", vr[i]); return fmi2Error; }
        if (vr[i] >= NDF_O0 && vr[i] < NDF_O0 + NDF_NO) {
            logmsg(s, fmi2Error, "value reference %u is an output; it cannot be set", vr[i]);
            return fmi2Error;
        }
        s->r[vr[i]] = value[i];
    }
    s->dirty = 1;
    s->fsal = 0;
    return fmi2OK;
}

static fmi2Status unsupported(fmi2Component c, const char *what)
{
    Inst *s = (Inst *)c;
    if (s) logmsg(s, fmi2Error, "%s is not supported by this FMU", what);
    return fmi2Error;
}

fmi2Status fmi2GetInteger(fmi2Component c, const fmi2ValueReference vr[], size_t nvr, fmi2Integer value[])
{ (void)vr; (void)value; return nvr ? unsupported(c, "fmi2GetInteger") : fmi2OK; }
fmi2Status fmi2GetBoolean(fmi2Component c, const fmi2ValueReference vr[], size_t nvr, fmi2Boolean value[])
{ (void)vr; (void)value; return nvr ? unsupported(c, "fmi2GetBoolean") : fmi2OK; }
fmi2Status fmi2GetString(fmi2Component c, const fmi2ValueReference vr[], size_t nvr, fmi2String value[])
{ (void)vr; (void)value; return nvr ? unsupported(c, "fmi2GetString") : fmi2OK; }
fmi2Status fmi2SetInteger(fmi2Component c, const fmi2ValueReference vr[], size_t nvr, const fmi2Integer value[])
{ (void)vr; (void)value; return nvr ? unsupported(c, "fmi2SetInteger") : fmi2OK; }
fmi2Status fmi2SetBoolean(fmi2Component c, const fmi2ValueReference vr[], size_t nvr, const fmi2Boolean value[])
{ (void)vr; (void)value; return nvr ? unsupported(c, "fmi2SetBoolean") : fmi2OK; }
fmi2Status fmi2SetString(fmi2Component c, const fmi2ValueReference vr[], size_t nvr, const fmi2String value[])
{ (void)vr; (void)value; return nvr ? unsupported(c, "fmi2SetString") : fmi2OK; }

/* FMU states: a copy of the instance (its arrays are fixed-size; no pointer inside but the callbacks, which
 * stay those of the instance a state is set into). Serialized: a header (magic, the GUID, the size) and the
 * copy's bytes, for this binary only. */
#define STATE_MAGIC 0x6e64666dU   /* "ndfm" */
typedef struct { unsigned magic; char guid[64]; size_t size; } StateHeader;

fmi2Status fmi2GetFMUstate(fmi2Component c, fmi2FMUstate *FMUstate)
{
    Inst *s = (Inst *)c, *copy;
    GUARD(s);
    if (!FMUstate) return fmi2Error;
    copy = *FMUstate ? (Inst *)*FMUstate : (Inst *)s->cb.allocateMemory(1, sizeof(Inst));
    if (!copy) { logmsg(s, fmi2Error, "fmi2GetFMUstate: out of memory"); return fmi2Error; }
    memcpy(copy, s, sizeof(Inst));
    *FMUstate = copy;
    return fmi2OK;
}

fmi2Status fmi2SetFMUstate(fmi2Component c, fmi2FMUstate FMUstate)
{
    Inst *s = (Inst *)c;
    fmi2CallbackFunctions cb;
    char name[sizeof s->name];
    if (!s || !FMUstate) return fmi2Error;
    cb = s->cb;
    memcpy(name, s->name, sizeof name);
    memcpy(s, FMUstate, sizeof(Inst));
    s->cb = cb;
    memcpy(s->name, name, sizeof name);
    return fmi2OK;
}

fmi2Status fmi2FreeFMUstate(fmi2Component c, fmi2FMUstate *FMUstate)
{
    Inst *s = (Inst *)c;
    if (!s || !FMUstate) return fmi2Error;
    if (*FMUstate) s->cb.freeMemory(*FMUstate);
    *FMUstate = NULL;
    return fmi2OK;
}

fmi2Status fmi2SerializedFMUstateSize(fmi2Component c, fmi2FMUstate FMUstate, size_t *size)
{
    (void)FMUstate;
    if (!c || !size) return fmi2Error;
    *size = sizeof(StateHeader) + sizeof(Inst);
    return fmi2OK;
}

fmi2Status fmi2SerializeFMUstate(fmi2Component c, fmi2FMUstate FMUstate, fmi2Byte serializedState[], size_t size)
{
    Inst *s = (Inst *)c;
    StateHeader head;
    if (!s || !FMUstate || !serializedState) return fmi2Error;
    if (size < sizeof(StateHeader) + sizeof(Inst)) {
        logmsg(s, fmi2Error, "fmi2SerializeFMUstate: %lu bytes given, %lu needed", (unsigned long)size,
               (unsigned long)(sizeof(StateHeader) + sizeof(Inst)));
        return fmi2Error;
    }
    memset(&head, 0, sizeof head);
    head.magic = STATE_MAGIC;
    snprintf(head.guid, sizeof head.guid, "%s", ndf_guid);
    head.size = sizeof(Inst);
    memcpy(serializedState, &head, sizeof head);
    memcpy(serializedState + sizeof head, FMUstate, sizeof(Inst));
    return fmi2OK;
}

fmi2Status fmi2DeSerializeFMUstate(fmi2Component c, const fmi2Byte serializedState[], size_t size,
                                   fmi2FMUstate *FMUstate)
{
    Inst *s = (Inst *)c, *copy;
    StateHeader head;
    if (!s || !serializedState || !FMUstate) return fmi2Error;
    if (size != sizeof head + sizeof(Inst)) {
        logmsg(s, fmi2Error, "fmi2DeSerializeFMUstate: %lu bytes is not a state of this FMU (%lu)",
               (unsigned long)size, (unsigned long)(sizeof head + sizeof(Inst)));
        return fmi2Error;
    }
    memcpy(&head, serializedState, sizeof head);
    if (head.magic != STATE_MAGIC || head.size != sizeof(Inst) || strncmp(head.guid, ndf_guid, sizeof head.guid)) {
        logmsg(s, fmi2Error, "fmi2DeSerializeFMUstate: not a state of this FMU (another model or build)");
        return fmi2Error;
    }
    copy = *FMUstate ? (Inst *)*FMUstate : (Inst *)s->cb.allocateMemory(1, sizeof(Inst));
    if (!copy) { logmsg(s, fmi2Error, "fmi2DeSerializeFMUstate: out of memory"); return fmi2Error; }
    memcpy(copy, serializedState + sizeof head, sizeof(Inst));
    *FMUstate = copy;
    return fmi2OK;
}

fmi2Status fmi2GetDirectionalDerivative(fmi2Component c, const fmi2ValueReference vUnknown_ref[], size_t nUnknown,
                                        const fmi2ValueReference vKnown_ref[], size_t nKnown,
                                        const fmi2Real dvKnown[], fmi2Real dvUnknown[])
{
    (void)vUnknown_ref; (void)nUnknown; (void)vKnown_ref; (void)nKnown; (void)dvKnown; (void)dvUnknown;
    return unsupported(c, "fmi2GetDirectionalDerivative");
}

/* ------------------------------------------------------------------------------- FMI: Model Exchange */

fmi2Status fmi2EnterEventMode(fmi2Component c)
{
    Inst *s = (Inst *)c;
    GUARD(s);
    s->mode = MODE_EVENT;
    return fmi2OK;
}

fmi2Status fmi2NewDiscreteStates(fmi2Component c, fmi2EventInfo *info)
{
    Inst *s = (Inst *)c;
    double te;
    GUARD(s);
    te = next_event(s->time);
    info->newDiscreteStatesNeeded = fmi2False;
    info->terminateSimulation = fmi2False;
    info->nominalsOfContinuousStatesChanged = fmi2False;
    info->valuesOfContinuousStatesChanged = fmi2False;
    if (s->reselect) {   /* dynamic state selection: another partition, so other values behind state_k */
        s->reselect = 0;
        if (select_partition(s)) {
            logmsg(s, fmi2Error, "t = %g: no regular coordinate partition", s->time);
            s->mode = MODE_ERROR;
            return fmi2Error;
        }
        s->dirty = 1;
        if (compute(s)) return fmi2Error;
        s->pos_ratio0 = s->pos_ratio;
        s->vel_ratio0 = s->vel_ratio;
        logmsg(s, fmi2OK, "t = %g: coordinate partition re-selected", s->time);
        info->valuesOfContinuousStatesChanged = fmi2True;
        info->nominalsOfContinuousStatesChanged = fmi2True;
    }
    info->nextEventTimeDefined = te < HUGE_VAL ? fmi2True : fmi2False;
    info->nextEventTime = te < HUGE_VAL ? te : 0.0;
    return fmi2OK;
}

fmi2Status fmi2EnterContinuousTimeMode(fmi2Component c)
{
    Inst *s = (Inst *)c;
    GUARD(s);
    s->mode = MODE_CONTINUOUS;
    return fmi2OK;
}

fmi2Status fmi2CompletedIntegratorStep(fmi2Component c, fmi2Boolean noSetFMUStatePriorToCurrentPoint,
                                       fmi2Boolean *enterEventMode, fmi2Boolean *terminateSimulation)
{
    Inst *s = (Inst *)c;
    (void)noSetFMUStatePriorToCurrentPoint;
    GUARD(s);
    *enterEventMode = fmi2False;
    *terminateSimulation = fmi2False;
    if (compute(s)) return fmi2Error;
    if (NDF_DYNAMIC && degraded(s, 0.3)) {   /* re-select in event mode, as Co-Simulation does in its step */
        s->reselect = 1;
        *enterEventMode = fmi2True;
        return fmi2OK;
    }
    if (degraded(s, 1e-6)) {
        logmsg(s, fmi2Error, "t = %g: the coordinate partition chosen at export has degraded (condition %.3g of its "
               "start value); these states cannot go on. Export with other states (save_fmu(..., states=[...]) or a "
               "stop_time that covers this time), or kind=\"cs\" (which re-selects)", s->time, s->pos_ratio / s->pos_ratio0 < s->vel_ratio / s->vel_ratio0 ?
               s->pos_ratio / s->pos_ratio0 : s->vel_ratio / s->vel_ratio0);
        s->mode = MODE_ERROR;
        return fmi2Error;
    }
    if (!s->warned && degraded(s, 1e-3)) {
        s->warned = 1;
        logmsg(s, fmi2Warning, "t = %g: the coordinate partition's condition fell below 1e-3 of its start value",
               s->time);
    }
    return fmi2OK;
}

fmi2Status fmi2SetTime(fmi2Component c, fmi2Real time)
{
    Inst *s = (Inst *)c;
    GUARD(s);
    s->time = time;
    s->dirty = 1;
    return fmi2OK;
}

fmi2Status fmi2SetContinuousStates(fmi2Component c, const fmi2Real x[], size_t nx)
{
    STATE_VECTOR_CALL(s, c, nx);
    set_states(s, x);
    return fmi2OK;
}

fmi2Status fmi2GetDerivatives(fmi2Component c, fmi2Real dx[], size_t nx)
{
    STATE_VECTOR_CALL(s, c, nx);
    return derivatives(s, dx) ? fmi2Error : fmi2OK;
}

fmi2Status fmi2GetEventIndicators(fmi2Component c, fmi2Real eventIndicators[], size_t ni)
{
    (void)eventIndicators;
    return ni ? unsupported(c, "event indicators") : fmi2OK;
}

fmi2Status fmi2GetContinuousStates(fmi2Component c, fmi2Real x[], size_t nx)
{
    STATE_VECTOR_CALL(s, c, nx);
    get_states(s, x);
    return fmi2OK;
}

fmi2Status fmi2GetNominalsOfContinuousStates(fmi2Component c, fmi2Real x_nominal[], size_t nx)
{
    STATE_VECTOR_CALL(s, c, nx);
    for (size_t i = 0; i < nx; ++i) x_nominal[i] = s->nominal[i];
    return fmi2OK;
}

/* ------------------------------------------------------------------------------- FMI: Co-Simulation */

fmi2Status fmi2SetRealInputDerivatives(fmi2Component c, const fmi2ValueReference vr[], size_t nvr,
                                       const fmi2Integer order[], const fmi2Real value[])
{ (void)vr; (void)order; (void)value; return nvr ? unsupported(c, "fmi2SetRealInputDerivatives") : fmi2OK; }
fmi2Status fmi2GetRealOutputDerivatives(fmi2Component c, const fmi2ValueReference vr[], size_t nvr,
                                        const fmi2Integer order[], fmi2Real value[])
{ (void)vr; (void)order; (void)value; return nvr ? unsupported(c, "fmi2GetRealOutputDerivatives") : fmi2OK; }

fmi2Status fmi2DoStep(fmi2Component c, fmi2Real currentCommunicationPoint, fmi2Real communicationStepSize,
                      fmi2Boolean noSetFMUStatePriorToCurrentPoint)
{
    Inst *s = (Inst *)c;
    double tend = currentCommunicationPoint + communicationStepSize;
    (void)noSetFMUStatePriorToCurrentPoint;
    GUARD(s);
    s->time = currentCommunicationPoint;
    while (s->time < tend - 1e-13 * (fabs(tend) > 1.0 ? fabs(tend) : 1.0)) {
        double tn = next_event(s->time);
        int corner = tn < tend;
        if (integrate(s, corner ? tn : tend, s->rtol, 1)) { s->mode = MODE_ERROR; return fmi2Error; }
        if (corner) s->fsal = 0;   /* a source's corner: restart the stages there */
    }
    s->time = tend;
    return fmi2OK;
}

fmi2Status fmi2CancelStep(fmi2Component c) { return unsupported(c, "fmi2CancelStep"); }

fmi2Status fmi2GetStatus(fmi2Component c, const fmi2StatusKind k, fmi2Status *value)
{ (void)k; (void)value; return unsupported(c, "fmi2GetStatus"); }
fmi2Status fmi2GetRealStatus(fmi2Component c, const fmi2StatusKind k, fmi2Real *value)
{
    Inst *s = (Inst *)c;
    GUARD(s);
    if (k != fmi2LastSuccessfulTime) return unsupported(c, "fmi2GetRealStatus of this kind");
    *value = s->time;
    return fmi2OK;
}
fmi2Status fmi2GetIntegerStatus(fmi2Component c, const fmi2StatusKind k, fmi2Integer *value)
{ (void)k; (void)value; return unsupported(c, "fmi2GetIntegerStatus"); }
fmi2Status fmi2GetBooleanStatus(fmi2Component c, const fmi2StatusKind k, fmi2Boolean *value)
{ (void)k; (void)value; return unsupported(c, "fmi2GetBooleanStatus"); }
fmi2Status fmi2GetStringStatus(fmi2Component c, const fmi2StatusKind k, fmi2String *value)
{ (void)k; (void)value; return unsupported(c, "fmi2GetStringStatus"); }

/* ------------------------------------------------------------------------- netdyn's export check */

static char check_log[1024];

static void check_logger(fmi2ComponentEnvironment env, fmi2String name, fmi2Status status, fmi2String category,
                         fmi2String message, ...)
{
    va_list ap;
    size_t used = strlen(check_log);
    (void)env; (void)name; (void)category;
    if (status == fmi2OK || used + 2 >= sizeof check_log) return;
    va_start(ap, message);
    vsnprintf(check_log + used, sizeof check_log - used, message, ap);
    va_end(ap);
    used = strlen(check_log);
    if (used + 2 < sizeof check_log) strcat(check_log, "; ");
}

static void *check_alloc(size_t n, size_t size) { return calloc(n, size); }
static void check_free(void *p) { free(p); }

/* Instantiate with the start values, initialize (the coarse first pass runs to tstop when tstop > t0, and its
 * samples t, q, f go to `samples`, at most `cap` of them), evaluate the derivatives once: returns the number
 * of samples (0 or more) on success, -1 on failure with the FMU's error messages in msg. Called by netdyn at
 * export (through ctypes). */
FMI2_Export int netdyn_selfcheck(char *msg, int len, double *states, double tstop, double *samples, int cap);
int netdyn_selfcheck(char *msg, int len, double *states, double tstop, double *samples, int cap)
{
    fmi2CallbackFunctions cb;
    fmi2Component c;
    double dx[P1(NX)];
    int bad = 0;
    cb.logger = check_logger;
    cb.allocateMemory = check_alloc;
    cb.freeMemory = check_free;
    cb.stepFinished = NULL;
    cb.componentEnvironment = NULL;
    check_log[0] = '\0';
    sample_buf = samples;
    sample_cap = samples ? cap : 0;
    sample_count = 0;
    c = fmi2Instantiate("check", NDF_ME ? fmi2ModelExchange : fmi2CoSimulation, ndf_guid, "", &cb, fmi2False,
                        fmi2False);
    if (!c) bad = 1;
    if (!bad) bad = fmi2SetupExperiment(c, fmi2False, 0.0, NDF_T0, tstop > NDF_T0, tstop) != fmi2OK;
    if (!bad) bad = fmi2EnterInitializationMode(c) != fmi2OK;
    if (!bad) bad = fmi2ExitInitializationMode(c) != fmi2OK;
    if (!bad) bad = derivatives((Inst *)c, dx) != 0;
    if (!bad && states) get_states((Inst *)c, states);
    if (c) fmi2FreeInstance(c);
    sample_buf = NULL;
    sample_cap = 0;
    if (msg && len > 0) snprintf(msg, (size_t)len, "%s", check_log);
    return bad ? -1 : sample_count;
}
