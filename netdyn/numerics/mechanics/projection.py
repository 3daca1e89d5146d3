"""``Projection``: an explicit Runge–Kutta method on the index-1 form, projected onto the constraints.

For systems whose KKT matrix ``[[M, Cᵀ], [C, 0]]`` is regular (every flow has
inertia on the constraint manifold: mechanisms, RLC loops with an inductor in
every loop). scipy's DOP853 (or RK45, or Radau for mildly stiff systems)
integrates ``[q, f, W_d, W_s]``; after every accepted step ``q`` and ``f`` are
projected back onto ``φ = 0`` and the velocity-level constraints, so holonomic
constraints do not drift (NUMERICS.md: 4e-15 residual on a pendulum at twice
DOP853's plain cost). Multipliers are recovered at the output times from the KKT system.

>>> import numpy as np
>>> from netdyn import LagrangianModel, coordinates, t
>>> from netdyn.numerics.functions.compiled import compile_model
>>> x, = coordinates("x,")
>>> cm = compile_model(LagrangianModel([x], T=x.diff(t)**2/2, V=x**2/2))
>>> tr = Projection(cm, cm.parameter_vector()).integrate(0, np.pi, np.array([1.0]), np.array([0.0]),
...                                                       np.array([np.pi]), 1e-10, 1e-12)
>>> round(float(tr.q[0, -1]), 8)
-1.0
"""
from __future__ import annotations

import numpy as np
from scipy.linalg.lapack import dgesv
import scipy.sparse as sps
import scipy.sparse.linalg as spla
from scipy.integrate import DOP853, RK45, Radau

from netdyn.errors import IntegrationError, SingularSystemError
from netdyn.numerics.mechanics.fastkkt import fast_kkt, singular
from netdyn.numerics.integrators.base import Integrator, split_atol, work_atol
from netdyn.numerics.dae.structure import SingularityWatch, integration_failure
from netdyn.numerics.results.trajectory import INTERRUPTED, SUCCESS, Trajectory, interrupted_message

SOLVERS = {"DOP853": DOP853, "RK45": RK45, "Radau": Radau}


class Projection(Integrator):
    """DOP853 (or ``solver``) on the index-1 form with projection after every step."""

    name = "projection"
    carries_work = True

    def __init__(self, cm, p, solver="DOP853", max_step=np.inf, watch_singularities=True, fast=True):
        if solver not in SOLVERS:
            raise IntegrationError(f"unknown solver {solver!r}; use one of {sorted(SOLVERS)}")
        self.cm, self.p, self.solver_cls, self.max_step = cm, p, SOLVERS[solver], max_step
        self.watch_singularities = watch_singularities
        # one compiled function for every KKT term and a banded solve (netdyn.numerics.mechanics.fastkkt);
        # fast=False keeps the reference path (separate lambdified functions, KKT LU) it is tested against
        self.fast = fast_kkt(cm, p, solve_kkt) if fast else None
        self.gram = None  # the factorised C Cᵀ of the last projection (the singularity watch's cheap test)

    # ------------------------------------------------------------------ the index-1 right-hand side
    def rhs(self, tt, y):
        cm, p, n = self.cm, self.p, self.cm.n
        q, f = y[:n], y[n:2 * n]
        if self.fast is not None:
            acc, lam, mu = self.fast.solve(tt, q, f)
            pd, ps = self.fast.power(tt, q, f, lam, mu)
            return np.concatenate([f, acc, [pd, ps]])
        K, r = cm.kkt_system(tt, q, f, p)
        z = solve_kkt(K, r, tt)
        pd, ps = cm.power(tt, q, f, z[n:n + cm.m1], z[n + cm.m1:], p)
        return np.concatenate([f, z[:n], [pd, ps]])

    def project(self, tt, y):
        """``y`` with q moved onto φ = 0 (Gauss–Newton) and f onto the velocity-level constraints."""
        cm, p, n = self.cm, self.p, self.cm.n
        if self.fast is not None:
            q, f, self.gram = self.fast.project(tt, y[:n], y[n:2 * n])
            return np.concatenate([q, f, y[2 * n:]])
        q, f = y[:n].copy(), y[n:2 * n].copy()
        if cm.m1:
            for _ in range(8):
                c = cm.constraints(tt, q, f, p)
                if np.max(np.abs(c.phi)) < 1e-14 * (1 + np.max(np.abs(q))):
                    break
                q -= c.Phi_q.T @ np.linalg.solve(c.Phi_q @ c.Phi_q.T, c.phi)
        c = cm.constraints(tt, q, f, p)
        C = c.jacobian
        f -= C.T @ np.linalg.solve(C @ C.T, C @ f + c.velocity_terms)
        return np.concatenate([q, f, y[2 * n:]])

    # ------------------------------------------------------------------ stepping
    def integrate(self, t0, t1, q0, f0, t_eval, rtol, atol, progress=None):
        cm, n = self.cm, self.cm.n
        y0 = np.concatenate([q0, f0, [0.0, 0.0]])
        at = split_atol(atol, n)
        if np.ndim(at):
            at = np.concatenate([at, work_atol(atol, n)])
        solver = self.solver_cls(self.rhs, t0, y0, t1, rtol=rtol, atol=at, max_step=self.max_step)
        ts, ys = [], []
        i = 0
        if t_eval.size and t_eval[0] <= t0:
            ts.append(t0)
            ys.append(y0)
            i = int(np.searchsorted(t_eval, t0, side="right"))
        nsteps = 0
        watch = SingularityWatch(cm, self.p, fast=self.fast) if self.watch_singularities and cm.m1 else None
        status, message = 0, SUCCESS
        while solver.status == "running":
            try:
                msg = solver.step()
                if solver.status == "failed":
                    raise integration_failure(cm, solver.t, solver.y[:n], self.p, msg)
                nsteps += 1
                j = int(np.searchsorted(t_eval, solver.t, side="right"))
                if j > i:
                    dense = solver.dense_output()
                    for tt in t_eval[i:j]:
                        y = dense(tt)
                        ys.append(self.project(tt, y) if cm.has_constraints else y)
                        ts.append(tt)
                    i = j
                if cm.has_constraints:
                    solver.y = self.project(solver.t, solver.y)
                    solver.f = self.rhs(solver.t, solver.y)
                if watch is not None:  # on the projected state, with the projection's factorised C Cᵀ
                    watch.step(solver.t, solver.y[:n], solver.y[n:2 * n], solver.f[n:2 * n], self.gram)
                if progress is not None:  # after the step's outputs are kept
                    progress(solver.t)
            except KeyboardInterrupt:  # Ctrl-C: keep what was computed (the output times reached)
                status, message = INTERRUPTED, interrupted_message(ts[-1] if ts else t0)
                del ts[len(ys):], ys[len(ts):]
                break
        Y = np.array(ys).T if ys else np.zeros((2 * n + 2, 0))
        T = np.array(ts)
        acc, lam, mu = kkt_solutions(cm, self.p, T, Y[:n], Y[n:2 * n], self.fast)
        return Trajectory(T, Y[:n], Y[n:2 * n], acc, lam, mu, Y[2 * n], Y[2 * n + 1], nsteps=nsteps, message=message,
                          status=status)


SPARSE_KKT = 50  # above this many unknowns the KKT matrix is factorised sparse (NUMERICS.md: 0.27 vs 2.3 ms at 500)


def solve_kkt(K, r, tt):
    """Solve the KKT system at time ``tt``; a lost pivot is a :class:`SingularSystemError` (dead centre).

    Dense LAPACK LU up to :data:`SPARSE_KKT` unknowns, SuperLU above (the KKT matrix of a chain or a large
    network is mostly zeros).
    """
    if K.shape[0] > SPARSE_KKT:
        try:
            lu = spla.splu(sps.csc_matrix(K))
            d = np.abs(lu.U.diagonal())
        except RuntimeError:  # exactly singular
            d = np.zeros(1)
        if d.size and d.min() > 1e-12 * d.max():
            return lu.solve(r)
        raise singular(tt)
    if not K.size:
        return r
    lu, _, z, info = dgesv(K, r)  # LAPACK directly: scipy.linalg's wrappers cost ~10x the 18×18 solve
    d = np.abs(np.diagonal(lu))
    if info > 0 or (d.size and d.min() <= 1e-12 * d.max()):
        raise singular(tt)
    return z


def kkt_solutions(cm, p, T, Q, F, fast=None):
    """Accelerations and multipliers at each output time, from the KKT system (LU; least squares if singular).

    With ``fast`` (a :class:`~netdyn.numerics.mechanics.fastkkt.FastKKT`) each time costs one compiled evaluation and
    one banded (or LU) solve, the right-hand side's own factorisation.
    """
    n, m1, m2 = cm.n, cm.m1, cm.m2
    acc, lam, mu = np.zeros((n, T.size)), np.zeros((m1, T.size)), np.zeros((m2, T.size))
    for k, tt in enumerate(T):
        if fast is not None:
            try:
                acc[:, k], lam[:, k], mu[:, k] = fast.solve(tt, Q[:, k], F[:, k])
                continue
            except SingularSystemError:  # redundant constraints: the least-squares solve below
                pass
        K, r, _ = cm.kkt(tt, Q[:, k], F[:, k], p)
        try:  # an LU solve; least squares only where the matrix is singular (redundant constraints)
            z = solve_kkt(K, r, tt)
        except SingularSystemError:
            z = np.linalg.lstsq(K, r, rcond=None)[0]
        acc[:, k], lam[:, k], mu[:, k] = z[:n], z[n:n + m1], z[n + m1:]
    return acc, lam, mu
