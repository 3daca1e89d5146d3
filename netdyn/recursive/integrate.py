"""Forward dynamics in joint coordinates: time integration of a tree or a closed chain.

:func:`integrate` takes a :class:`~netdyn.recursive.model.TreeModel`, a time span and the initial
joint coordinates and rates, and returns arrays. A tree is integrated by scipy's DOP853 on the
compiled O(n) articulated-body right-hand side (one numba call per evaluation); a closed chain by
DOP853 on the KKT right-hand side (CRBA mass matrix, RNEA bias, cut-joint constraints), stepped by
hand with the coordinates and rates projected onto ``φ = 0`` and ``J q̇ = 0`` after every accepted
step and at every output (the projection method of :mod:`netdyn.simulate`).

>>> import numpy as np
>>> from netdyn.recursive import TreeModel, TreeData, energy
>>> m = TreeModel.chain([1.0, 1.0], [1.0, 1.0])            # a double pendulum released from horizontal
>>> out = integrate(m, (0, 2), [0.0, 0.0], [0.0, 0.0], t_eval=[0, 2], rtol=1e-10, atol=1e-10)
>>> E = [sum(energy(m, TreeData(m), out["q"][:, k], out["qd"][:, k])) for k in (0, 1)]
>>> out["q"].shape, bool(abs(E[1] - E[0]) < 1e-7)
((2, 2), True)
"""
from __future__ import annotations

import numpy as np
from scipy.integrate import DOP853, solve_ivp

from netdyn.errors import IntegrationError, ModelError

import netdyn.recursive.planar_kernels as P

from .algorithms import planar_geometry
from .closed import constraint_terms, forward_dynamics
from .model import TreeData


def _efforts(model, tau):
    """``tau`` as a function ``(t, q, qd) -> efforts`` (None: zero; an array: constant)."""
    if tau is None:
        zero = np.zeros(model.nq)
        return None, zero
    if callable(tau):
        return tau, None
    arr = np.asarray(tau, dtype=float).reshape(-1)
    if arr.size != model.nq:
        raise ModelError(f"tau has {arr.size} entries; the tree has {model.nq} joint coordinates")
    return None, arr


def tree_rhs(model, data=None, tau=None):
    """The right-hand side ``f(t, y)`` of ``y = [q, q̇]`` for a tree (compiled ABA), for any ODE solver."""
    if model.m:
        raise ModelError(f"{model} has cut joints; use closed_rhs")
    data = data or TreeData(model)
    fn, const = _efforts(model, tau)
    ints, grav, fext = model.ints, model.gravity, data.fext
    planar = bool(model.planar)  # the 3-D planar kernel (netdyn.recursive.planar_kernels) or the 6-D one
    geom, work = (planar_geometry(model), data.pwork) if planar else (model.geom, data.work)
    kernel = P.chain_rhs
    nq = model.nq
    if fn is None:
        def rhs(t, y):
            return kernel(ints, geom, grav, y, const, fext, work, np.empty(2 * nq), planar)
    else:
        def rhs(t, y):
            return kernel(ints, geom, grav, y, np.ascontiguousarray(fn(t, y[:nq], y[nq:]), dtype=float),
                          fext, work, np.empty(2 * nq), planar)
    return rhs


def closed_rhs(model, data=None, tau=None):
    """The right-hand side ``f(t, y)`` of a closed chain (KKT with the cut joints' constraints)."""
    data = data or TreeData(model)
    fn, const = _efforts(model, tau)
    nq = model.nq

    def rhs(t, y):
        q, qd = y[:nq], y[nq:]
        tq = const if fn is None else fn(t, q, qd)
        qdd, _ = forward_dynamics(model, data, q, qd, tq)
        return np.concatenate([qd, qdd])

    return rhs


def project(model, data, y, tol=1e-14):
    """``y = [q, q̇]`` moved onto the constraints: Newton on ``φ(q) = 0`` (least-norm steps), then
    the least-norm change of ``q̇`` with ``J q̇ = 0``."""
    nq = model.nq
    q, qd = y[:nq].copy(), y[nq:].copy()
    for _ in range(10):
        phi, J, _ = constraint_terms(model, data, q)
        if np.max(np.abs(phi)) < tol * (1 + np.max(np.abs(q))):
            break
        q -= np.linalg.lstsq(J, phi, rcond=None)[0]
    qd -= np.linalg.lstsq(J, J @ qd, rcond=None)[0]
    return np.concatenate([q, qd])


def integrate(model, t_span, q0, qd0, tau=None, t_eval=None, rtol=1e-8, atol=1e-8, max_step=np.inf, data=None):
    """Integrate the joint-space dynamics of a tree or closed chain; returns a dict of arrays.

    ``tau``: efforts on the joint coordinates — None (zero), an array, or a callable
    ``tau(t, q, qd)``. With cut joints the initial state is projected onto the constraints first.
    Returns ``{"t", "q", "qd", "nfev", "nsteps"}`` (``q``, ``qd``: arrays ``(nq, times)``).
    """
    t0, t1 = map(float, t_span)
    data = data or TreeData(model)
    y0 = np.concatenate([np.asarray(q0, dtype=float).reshape(-1), np.asarray(qd0, dtype=float).reshape(-1)])
    if y0.size != 2 * model.nq:
        raise ModelError(f"q0 and qd0 need {model.nq} entries each ({model.coordinate_joints})")
    t_eval = np.linspace(t0, t1, 101) if t_eval is None else np.asarray(t_eval, dtype=float)
    nq = model.nq
    if model.m == 0:
        sol = solve_ivp(tree_rhs(model, data, tau), (t0, t1), y0, method="DOP853", t_eval=t_eval, rtol=rtol,
                        atol=atol, max_step=max_step)
        if not sol.success:
            raise IntegrationError(f"DOP853 failed at t = {sol.t[-1] if sol.t.size else t0:.6g}: {sol.message}")
        return {"t": sol.t, "q": sol.y[:nq], "qd": sol.y[nq:], "nfev": int(sol.nfev), "nsteps": None}
    rhs = closed_rhs(model, data, tau)
    y0 = project(model, data, y0)
    solver = DOP853(rhs, t0, y0, t1, rtol=rtol, atol=atol, max_step=max_step)
    ts, ys, i, nsteps = [], [], 0, 0
    if t_eval.size and t_eval[0] <= t0:
        ts.append(t0)
        ys.append(y0)
        i = int(np.searchsorted(t_eval, t0, side="right"))
    while solver.status == "running":
        msg = solver.step()
        nsteps += 1
        if solver.status == "failed":
            raise IntegrationError(f"DOP853 failed at t = {solver.t:.6g}: {msg}; a singular configuration "
                                   "(the constrained mass matrix losing rank) stops the closed-chain dynamics")
        j = int(np.searchsorted(t_eval, solver.t, side="right"))
        if j > i:
            dense = solver.dense_output()
            for tt in t_eval[i:j]:
                ys.append(project(model, data, dense(tt)))
                ts.append(tt)
            i = j
        solver.y = project(model, data, solver.y)
        solver.f = rhs(solver.t, solver.y)
    Y = np.array(ys).T
    return {"t": np.array(ts), "q": Y[:nq], "qd": Y[nq:], "nfev": int(solver.nfev), "nsteps": nsteps}
