"""Integration of the Lagrangian DAE.

Two integrators, chosen per system (``method="auto"``):

* ``"projection"`` — when the index-1 (KKT) matrix ``[[M, Cᵀ], [C, 0]]`` is
  regular (every flow has inertia on the constraint manifold: mechanisms,
  RLC loops with an inductor in every loop): an explicit Runge–Kutta method
  (scipy's DOP853, or ``solver="Radau"`` for stiff systems) on the index-1 form, with
  q and f projected back onto the position- and velocity-level constraints after
  every accepted step, so holonomic constraints do not drift;
* ``"ida"`` — when the mass matrix is singular on the manifold (an RC circuit:
  capacitor and resistor flows are algebraic): SUNDIALS IDA (variable-order
  BDF, through scikit-sundae) on the stabilized index-2 (GGL) form
  ``q̇ − f + Φ_qᵀη = 0``, ``M ḟ + h + Φ_qᵀλ + Aᵀμ = 0``, ``φ = 0``,
  ``Φ_q f + Φ_t = 0``, ``A f + a = 0``, multipliers left out of the error test.

>>> import sympy as sp
>>> from netdyn import LagrangianModel, coordinates, t, simulate
>>> x, = coordinates("x,")
>>> sol = simulate(LagrangianModel([x], T=x.diff(t)**2/2, V=x**2/2), (0, 3.14159265), q0={"x": 1})
>>> round(float(sol["x"][-1]), 6)
-1.0
"""
from __future__ import annotations

import numpy as np
import scipy.linalg as sla
from scipy.integrate import DOP853, RK45, Radau

from netdyn.errors import IntegrationError, SingularSystemError
from netdyn.initial import consistent_initial_conditions
from netdyn.numeric import compile_model
from netdyn.structure import SingularityWatch, integration_failure, prepare

SOLVERS = {"DOP853": DOP853, "RK45": RK45, "Radau": Radau}


def as_model(system, formulation=None):
    """A ``LagrangianModel`` from a model or a ``Network``."""
    if hasattr(system, "derive"):
        return system
    if hasattr(system, "model"):
        return system.model(formulation=formulation)
    raise TypeError(f"expected a LagrangianModel or a Network, got {type(system).__name__}")


def simulate(system, t_span, q0=None, f0=None, params=None, t_eval=None, rtol=1e-8, atol=None,
             method="auto", solver="DOP853", guess=None, max_step=np.inf, formulation=None):
    """Integrate a model (or a network) over ``t_span``; returns a :class:`~netdyn.solution.Solution`.

    ``q0``/``f0`` map coordinate names to initial displacements/flows; the rest
    are completed consistently with the constraints. ``params`` overrides the
    model's parameter values. ``atol=None`` scales the absolute tolerance to
    each variable's magnitude (found by a coarse first pass), so charges in
    nanocoulombs and angles in radians are integrated equally well.
    """
    from netdyn.solution import Solution

    model = as_model(system, formulation)
    cm = compile_model(model)
    p = cm.parameter_vector(params)
    t0, t1 = float(t_span[0]), float(t_span[1])
    if not t1 > t0:
        raise IntegrationError(f"t_span must increase, got {t_span}")
    t_eval = np.linspace(t0, t1, 1001) if t_eval is None else np.asarray(t_eval, dtype=float)
    q, f = consistent_initial_conditions(cm, t0, q0, f0, p, guess=guess)
    model, cm, p = prepare(model, cm, t0, q, p, params)  # redundant constraints out, reported in metadata
    if method == "auto":
        method = "projection" if kkt_regular(cm, t0, q, f, p) else "ida"
    if method == "projection":
        run = lambda tol, at, te: _projection(cm, p, t0, t1, q, f, te, tol, at, SOLVERS[solver], max_step)
    elif method == "ida":
        run = lambda tol, at, te: _ida(cm, p, t0, t1, q, f, te, tol, at, max_step)
    else:
        raise IntegrationError(f"unknown method {method!r}; use 'auto', 'projection' or 'ida'")
    if atol is None:
        coarse = run(1e-5, None, np.linspace(t0, t1, 201))
        atol = _scaled_atol(coarse, rtol)
    res = run(rtol, atol, t_eval)
    return Solution(model, cm, p, res, method=method)


def kkt_regular(cm, tt, q, f, p):
    """Whether the index-1 matrix is regular at a state (relative pivot size above 1e-11)."""
    K, _, _ = cm.kkt(tt, q, f, p)
    s = np.linalg.svd(K, compute_uv=False)
    return s.size == 0 or s[-1] > 1e-11 * s[0]


def _scaled_atol(res, rtol):
    y = np.vstack([res["q"], res["f"]])  # the work integrals keep their relative control
    scale = np.max(np.abs(y), axis=1)
    floor = max(np.max(scale), 1e-300) * 1e-6  # variables held at ~0 (by a constraint) get a usable atol
    return np.maximum(scale, floor) * rtol * 1e-2


def _split_atol(atol, n):
    if atol is None:
        return 1e-10
    atol = np.asarray(atol, dtype=float)
    return atol if atol.ndim == 0 else atol[: 2 * n]


# ------------------------------------------------------------------------------------------ projection

def _projection(cm, p, t0, t1, q0, f0, t_eval, rtol, atol, solver_cls, max_step):
    n = cm.n

    def rhs(tt, y):
        q, f = y[:n], y[n:2 * n]
        K, r, _ = cm.kkt(tt, q, f, p)
        z = _solve_kkt(K, r, tt)
        pd, ps = cm.power(tt, q, f, z[n:n + cm.m1], z[n + cm.m1:], p)
        return np.concatenate([f, z[:n], [pd, ps]])

    def project(tt, y):
        q, f = y[:n].copy(), y[n:2 * n].copy()
        if cm.m1:
            for _ in range(8):
                c = cm.constraints(tt, q, f, p)
                phi = c["phi"]
                if np.max(np.abs(phi)) < 1e-14 * (1 + np.max(np.abs(q))):
                    break
                J = c["Phi_q"]
                q -= J.T @ np.linalg.solve(J @ J.T, phi)
        c = cm.constraints(tt, q, f, p)
        C = np.vstack([c["Phi_q"], c["A"]])
        r = C @ f + np.concatenate([c["Phi_t"], c["a"]])
        f -= C.T @ np.linalg.solve(C @ C.T, r)
        return np.concatenate([q, f, y[2 * n:]])

    y0 = np.concatenate([q0, f0, [0.0, 0.0]])
    at = _split_atol(atol, n)
    if np.ndim(at):
        at = np.concatenate([at, [1e-14, 1e-14]])
    try:
        solver = solver_cls(rhs, t0, y0, t1, rtol=rtol, atol=at, max_step=max_step)
    except SingularSystemError:
        raise
    ts, ys = [], []
    i = 0
    if t_eval.size and t_eval[0] <= t0:
        ts.append(t0)
        ys.append(y0)
        i = int(np.searchsorted(t_eval, t0, side="right"))
    nsteps = 0
    watch = SingularityWatch(cm, p)
    while solver.status == "running":
        msg = solver.step()
        nsteps += 1
        if solver.status == "failed":
            raise integration_failure(cm, solver.t, solver.y[:n], p, msg)
        watch.step(solver)
        j = int(np.searchsorted(t_eval, solver.t, side="right"))
        if j > i:
            dense = solver.dense_output()
            for tt in t_eval[i:j]:
                y = dense(tt)
                ys.append(project(tt, y) if cm.has_constraints else y)
                ts.append(tt)
            i = j
        if cm.has_constraints:
            solver.y = project(solver.t, solver.y)
            solver.f = rhs(solver.t, solver.y)
    Y = np.array(ys).T if ys else np.zeros((2 * n + 2, 0))
    T = np.array(ts)
    acc, lam, mu = _post_multipliers(cm, p, T, Y[:n], Y[n:2 * n])
    return {"t": T, "q": Y[:n], "f": Y[n:2 * n], "acc": acc, "lam": lam, "mu": mu, "nsteps": nsteps,
            "work": {"dissipated": Y[2 * n], "supplied": Y[2 * n + 1]},
            "message": "The solver successfully reached the end of the integration interval."}


def _solve_kkt(K, r, tt):
    lu, piv = sla.lu_factor(K, check_finite=False)
    d = np.abs(np.diag(lu))
    if d.size and d.min() <= 1e-12 * d.max():
        raise SingularSystemError(
            f"singular configuration at t = {tt:.6g}: the constrained mass matrix lost rank "
            "(a dead centre, a locked linkage or redundant constraints); check the mechanism or stop before it")
    return sla.lu_solve((lu, piv), r, check_finite=False)


def _post_multipliers(cm, p, T, Q, F):
    n, m1, m2 = cm.n, cm.m1, cm.m2
    acc = np.zeros((n, T.size))
    lam = np.zeros((m1, T.size))
    mu = np.zeros((m2, T.size))
    for k, tt in enumerate(T):
        K, r, _ = cm.kkt(tt, Q[:, k], F[:, k], p)
        z = np.linalg.lstsq(K, r, rcond=None)[0]
        acc[:, k] = z[:n]
        lam[:, k] = z[n:n + m1]
        mu[:, k] = z[n + m1:]
    return acc, lam, mu


# ------------------------------------------------------------------------------------------ IDA

def _ida(cm, p, t0, t1, q0, f0, t_eval, rtol, atol, max_step):
    from sksundae.ida import IDA

    n, m1, m2 = cm.n, cm.m1, cm.m2
    N = 2 * n + 2 * m1 + m2 + 2
    sq, sf, sl, sm, se = (slice(0, n), slice(n, 2 * n), slice(2 * n, 2 * n + m1),
                          slice(2 * n + m1, 2 * n + m1 + m2), slice(2 * n + m1 + m2, N - 2))
    sw = slice(N - 2, N)
    inertial_cols = {j for (_, j) in cm.eq.M.keys()}
    algebraic = [n + i for i in range(n) if i not in inertial_cols] + list(range(2 * n, N - 2))

    def residual(tt, y, yp, res):
        q, f = y[sq], y[sf]
        M, h = cm.dynamics(tt, q, f, p)
        if cm.has_constraints:
            c = cm.constraints(tt, q, f, p)
            Pq, A = c["Phi_q"], c["A"]
            res[sq] = yp[sq] - f + Pq.T @ y[se]
            res[sf] = M @ yp[sf] + h + Pq.T @ y[sl] + A.T @ y[sm]
            res[sl] = c["phi"]
            res[sm] = A @ f + c["a"]
            res[se] = Pq @ f + c["Phi_t"]
        else:
            res[sq] = yp[sq] - f
            res[sf] = M @ yp[sf] + h
        res[sw] = yp[sw] - np.array(cm.power(tt, q, f, y[sl], y[sm], p))

    y0 = np.zeros(N)
    y0[sq], y0[sf] = q0, f0
    yp0 = np.zeros(N)
    yp0[sq] = f0
    at = np.full(N, 1e-10)
    base = _split_atol(atol, n)
    at[: 2 * n] = base
    at[2 * n:] = 1e6  # multipliers and GGL terms out of the error test
    at[sw] = 1e-14  # work integrals (joules): nearly relative error control
    te = np.asarray(t_eval, dtype=float)
    if te[0] > t0:
        te = np.concatenate([[t0], te])
    if te.size < 3:
        te = np.linspace(t0, t1, 3)
    solver = IDA(residual, rtol=rtol, atol=at, algebraic_idx=algebraic or None, calc_initcond="yp0",
                 calc_init_dt=(t1 - t0) * 1e-6, max_num_steps=200000,
                 max_step=0 if not np.isfinite(max_step) else max_step)
    out = solver.solve(te, y0, yp0)
    if not out.success:
        tt = out.t[-1] if len(out.t) else t0
        raise IntegrationError(f"IDA failed at t = {tt:.6g}: {out.message}; the system may be "
                               "singular there (check the structure) or need looser tolerances")
    Y, YP, T = out.y.T, out.yp.T, np.asarray(out.t)
    keep = np.isin(T, t_eval) if t_eval[0] > t0 else np.ones(T.size, dtype=bool)
    Y, YP, T = Y[:, keep], YP[:, keep], T[keep]
    return {"t": T, "q": Y[sq], "f": Y[sf], "acc": YP[sf], "lam": Y[sl], "mu": Y[sm],
            "work": {"dissipated": Y[N - 2], "supplied": Y[N - 1]},
            "nsteps": int(getattr(out, "nfev", 0) or 0), "message": str(out.message)}
