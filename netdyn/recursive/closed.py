"""Closed chains on a spanning tree: cut-joint constraints, loop-closure kinematics, DeNOC inverse
dynamics and the KKT forward dynamics.

The tree's equations in joint coordinates are ``M(q) q̈ + h(q, q̇) = τ + Jᵀ λ`` with the cut joints'
constraints ``φ(q) = 0`` (``J = ∂φ/∂q``, ``φ̈ = J q̈ + b(q, q̇)``). ``λ`` is the cut joint's reaction
on ``body_b`` (the force at the joint point, global frame, and for angle rows the torque), ``−λ`` acts
on ``body_a``.

* **Kinematics**: the prescribed coordinates fix the others through ``φ = 0`` (Newton), then
  ``J q̇ = 0`` and ``J q̈ = −b``; the twists and twist rates come from the tree's recursion.
* **Inverse dynamics (DeNOC)**: the tree's efforts ``τ_tree = rnea(q, q̇, q̈)`` (O(n)) must be
  produced by the actuators and the cut reactions, ``S_a τ_a + Jᵀ λ = τ_tree``. Projected on the
  natural orthogonal complement ``N`` of the constraints (``J N = 0``, the velocity transformation
  ``q̇ = N ν``), the reactions drop out: ``Nᵀ S_a τ_a = Nᵀ τ_tree`` gives the actuator efforts, then
  ``Jᵀ λ = τ_tree − S_a τ_a`` the reactions. With more actuators than degrees of freedom (redundant
  actuation) the efforts are the least-norm solution, ``min ‖τ_a‖``.
* **Forward dynamics**: ``[M −Jᵀ; J 0] [q̈; λ] = [τ − h; −b]`` (M by CRBA, h by RNEA), or ABA
  alone for a tree without cut joints.

>>> import numpy as np
>>> from netdyn.recursive import TreeModel, TreeData
>>> # a four-bar: crank (1) and rocker (3) on the ground, coupler (2) pinned to the crank; cut: coupler-rocker
>>> m = TreeModel.from_bodies([
...     dict(name="crank", parent=None, mass=1, com=(0.5, 0, 0), inertia=0.1),
...     dict(name="coupler", parent="crank", translation=(1, 0, 0), mass=1, com=(1, 0, 0), inertia=0.3),
...     dict(name="rocker", parent=None, translation=(2, 0, 0), mass=1, com=(0.5, 0, 0), inertia=0.1)],
...     gravity=(0, -9.81, 0), cuts=[dict(name="C", kind="revolute", body_a="coupler", point_a=(2, 0),
...                                      body_b="rocker", point_b=(1, 0))])
>>> q = solve_positions(m, TreeData(m), [np.pi / 2, -np.pi / 2, np.pi / 2], fixed=[0])
>>> np.round(q, 9).tolist()
[1.570796327, -1.570796327, 1.570796327]
"""
from __future__ import annotations

from dataclasses import dataclass

import scipy.linalg

import numpy as np

from netdyn.errors import InitialConditionError, ModelError, SingularSystemError

import netdyn.recursive.kernels as K

from .algorithms import aba, crba, rnea, rnea_motion
from .constraints import constraint_terms, constraint_terms_reference, cut_wrenches, row_labels  # noqa: F401
from .model import REVOLUTE

def _solve(A, b):
    """``A x = b``: LU when square and regular, else least squares (minimum norm)."""
    if A.shape[0] == A.shape[1]:
        try:
            return np.linalg.solve(A, b)
        except np.linalg.LinAlgError:
            pass
    return np.linalg.lstsq(A, b, rcond=None)[0]


def solve_positions(model, data, q, fixed=(), tol=1e-12, maxiter=30):
    """Close the loops: Newton (least squares) on ``φ(q) = 0`` moving only the coordinates not in ``fixed``."""
    q = np.array(q, dtype=float)
    free = np.ones(model.nq, dtype=bool)
    free[np.asarray(fixed, dtype=int)] = False
    for _ in range(maxiter):
        if model.m == 0:  # an open tree: nothing to close
            return q
        phi, J, _ = constraint_terms(model, data, q)
        if np.max(np.abs(phi)) < tol * (1 + np.max(np.abs(q))):
            return q
        q[free] -= _solve(J[:, free], phi)
    worst = int(np.argmax(np.abs(phi)))
    raise InitialConditionError(f"the loops cannot be closed: constraint row {worst} of the cut joints "
                                f"({row_labels(model)[worst]}) stays at {phi[worst]:.3g}; start from a closer guess "
                                "or keep the prescribed motion inside the workspace")


def closed_kinematics(model, data, prescribed, guess, tol=1e-12):
    """Positions, rates and accelerations of every joint coordinate for prescribed coordinates.

    ``prescribed`` maps a coordinate index to ``(values, rates, accelerations)``, arrays over time;
    ``guess`` is a rough configuration for the first time (the others start from the previous one),
    or an array ``(nq, times)`` of guesses, one per time (a closed-form inverse kinematics).
    Returns ``(Q, QD, QDD)``, arrays ``(nq, times)``.
    """
    guesses = np.asarray(guess, dtype=float)
    idx = np.array(sorted(prescribed), dtype=int)
    T = len(np.atleast_1d(prescribed[idx[0]][0])) if idx.size else 1
    P, PD, PDD = (np.empty((idx.size, T)) for _ in range(3))
    for r, i in enumerate(idx):  # rows assigned (a constant broadcasts over the times)
        P[r], PD[r], PDD[r] = prescribed[i][0], prescribed[i][1], prescribed[i][2]
    free = np.setdiff1d(np.arange(model.nq), idx)
    if model.m < free.size:
        raise ModelError(f"the prescribed coordinates leave {free.size - model.m} degree(s) of freedom free; "
                         f"prescribe {free.size - model.m} more of {[model.coordinate_joints[i] for i in free]}")
    Q, QD, QDD = (np.zeros((model.nq, T)) for _ in range(3))
    if model.m == 0:  # an open tree with every coordinate prescribed: nothing to solve
        Q[idx], QD[idx], QDD[idx] = P, PD, PDD
        return Q, QD, QDD
    q = (guesses[:, 0] if guesses.ndim == 2 else guesses).copy()
    for k in range(T):
        if guesses.ndim == 2:
            q = guesses[:, k].copy()
        q[idx] = P[:, k]
        q = solve_positions(model, data, q, fixed=idx, tol=tol)
        qd = np.zeros(model.nq)
        qd[idx] = PD[:, k]
        if free.size == 0:  # everything prescribed (a tree driven at every joint)
            qdd = np.zeros(model.nq)
            qdd[idx] = PDD[:, k]
            Q[:, k], QD[:, k], QDD[:, k] = q, qd, qdd
            continue
        _, J, _ = constraint_terms(model, data, q)
        Jf = J[:, free]
        if Jf.shape[0] == Jf.shape[1]:
            try:
                lu = scipy.linalg.lu_factor(Jf, check_finite=False)
                if np.min(np.abs(np.diag(lu[0]))) < 1e-10 * np.max(np.abs(Jf)):
                    raise np.linalg.LinAlgError
            except np.linalg.LinAlgError:
                lu = None
            solve = None if lu is None else (lambda rhs: scipy.linalg.lu_solve(lu, rhs, check_finite=False))
        else:
            solve = None if np.linalg.matrix_rank(Jf) < free.size else (
                lambda rhs: np.linalg.lstsq(Jf, rhs, rcond=None)[0])
        if solve is None:
            raise SingularSystemError(f"singular configuration at sample {k}: the prescribed coordinates do not "
                                      "determine the others there (a dead centre or a locked position)")
        qd[free] = solve(-J[:, idx] @ qd[idx])
        _, _, b = constraint_terms(model, data, q, qd)
        qdd = np.zeros(model.nq)
        qdd[idx] = PDD[:, k]
        qdd[free] = solve(-J[:, idx] @ qdd[idx] - b)
        Q[:, k], QD[:, k], QDD[:, k] = q, qd, qdd
    return Q, QD, QDD


@dataclass
class InverseDynamics:
    """Result of :func:`denoc_inverse_dynamics`: actuator ``efforts`` (na, times) in the order of
    ``actuated``, cut-joint multipliers ``lam`` (m, times), the motion, ``redundant`` (more actuators
    than degrees of freedom: least-norm efforts)."""

    q: np.ndarray
    qd: np.ndarray
    qdd: np.ndarray
    actuated: list
    efforts: np.ndarray
    lam: np.ndarray
    redundant: bool

    def generalized(self, model):
        """Effort on every joint coordinate (zero on the passive ones)."""
        out = np.zeros((model.nq, self.q.shape[1]))
        out[self.actuated] = self.efforts
        return out


def denoc_inverse_dynamics(model, data, q, qd, qdd, actuated, tol=1e-9, loads=None):
    """Actuator efforts and cut-joint reactions for a motion ``(q, q̇, q̈)`` (arrays ``(nq,)`` or ``(nq, times)``).

    ``actuated``: indices of the actuated joint coordinates; ``loads``: the applied loads' generalised
    efforts ``(nq, times)`` (taken out of the efforts the motion needs). See the module docstring.
    Raises :class:`~netdyn.errors.SingularSystemError` when the actuators cannot produce the motion.
    """
    q, qd, qdd = (np.asarray(x, dtype=float) for x in (q, qd, qdd))
    single = q.ndim == 1
    q, qd, qdd = (x.reshape(model.nq, -1) for x in (q, qd, qdd))
    act = np.asarray(actuated, dtype=int)
    T = q.shape[1]
    eff, lam = np.zeros((act.size, T)), np.zeros((model.m, T))
    redundant = False
    every = not model.m and np.array_equal(np.sort(act), np.arange(model.nq))  # an open tree driven everywhere
    taus = rnea_motion(model, data, q, qd, qdd)  # the tree's efforts at every time in one compiled call
    if loads is not None:
        taus = taus - np.asarray(loads, dtype=float).reshape(model.nq, -1)
    if every:
        eff[:] = taus[act]
        T = 0
    for k in range(T):
        tau = taus[:, k]
        if model.m:
            _, J, _ = constraint_terms(model, data, q[:, k])
        if model.m and act.size + model.m == model.nq:  # square: [S_a Jᵀ] is regular away from singularities
            A = np.zeros((model.nq, model.nq))
            A[act, np.arange(act.size)] = 1.0
            A[:, act.size:] = J.T
            try:
                x = np.linalg.solve(A, tau)
                if np.all(np.isfinite(x)) and np.linalg.norm(A @ x - tau) <= tol * (1 + np.linalg.norm(tau)):
                    eff[:, k], lam[:, k] = x[:act.size], x[act.size:]
                    continue
            except np.linalg.LinAlgError:
                pass
        if model.m:
            _, s, Vt = np.linalg.svd(J)
            rank = int(np.sum(s > 1e-10 * max(1.0, s[0] if s.size else 1.0)))
            N = Vt[rank:].T  # natural orthogonal complement: J N = 0
        else:
            J, rank, N = np.zeros((0, model.nq)), 0, np.eye(model.nq)
        A = N[act].T  # Nᵀ S_a
        rhs = N.T @ tau
        x, *_ = np.linalg.lstsq(A, rhs, rcond=None)
        if np.linalg.norm(A @ x - rhs) > tol * (1 + np.linalg.norm(rhs)):
            raise SingularSystemError(
                f"the actuated joints {[model.coordinate_joints[i] for i in act]} cannot produce the motion at "
                f"sample {k}: they do not span the mechanism's {N.shape[1]} degree(s) of freedom there "
                "(too few actuators or a singular configuration); actuate other joints")
        redundant = redundant or act.size > N.shape[1]
        eff[:, k] = x
        if model.m:
            resid = tau.copy()
            resid[act] -= x
            lam[:, k] = np.linalg.lstsq(J.T, resid, rcond=None)[0]
    if single:
        return InverseDynamics(q[:, 0], qd[:, 0], qdd[:, 0], list(act), eff[:, 0], lam[:, 0], redundant)
    return InverseDynamics(q, qd, qdd, list(act), eff, lam, redundant)


def joint_wrenches(model, data, q, qd, qdd, lam, tau=None):
    """Reaction wrench of every tree joint at one instant, global frame: ``(n, 6)`` rows
    ``[Mx, My, Mz, Fx, Fy, Fz]``, the parent's action on the child, moment about the child's origin.

    ``tau`` (efforts on the joint coordinates) is taken out: what remains is the joint's reaction.
    """
    constraint_terms(model, data, q, qd)
    fext = cut_wrenches(model, data, lam) if model.m else None
    rnea(model, data, q, qd, qdd, fext)
    f = data.work[:, 30:36].copy()
    if tau is not None:
        for i in range(model.n):
            k = model.qindex[i]
            if k >= 0:
                f[i, (0 if model.jtype[i] == REVOLUTE else 3) + np.arange(3)] -= model.axis[i] * tau[k]
    out = np.zeros((model.n, 6))
    for i in range(model.n):
        out[i, :3] = data.R[i] @ f[i, :3]
        out[i, 3:] = data.R[i] @ f[i, 3:]
    return out


DENSE_LIMIT = 40  # up to this many coordinates the KKT system is formed (CRBA) and solved densely


def forward_dynamics(model, data, q, qd, tau, method=None):
    """``(q̈, λ)``: ABA for a tree; with cut joints ``[M −Jᵀ; J 0][q̈; λ] = [τ − h; −b]``.

    ``method="dense"`` forms M by CRBA and solves the KKT matrix (the default up to ``DENSE_LIMIT``
    coordinates, or with many constraint rows); ``"aba"`` never forms M: ``q̈ = q̈₀ + M⁻¹Jᵀλ`` with ``q̈₀`` the tree's ABA and the
    columns of ``M⁻¹Jᵀ`` from m more ABA solves (no gravity, no velocity), then ``(J M⁻¹Jᵀ) λ = −b − J q̈₀``
    — O(n·m) instead of O(n²) + O(n³).
    """
    if model.m == 0:
        return aba(model, data, q, qd, tau), np.zeros(0)
    if method is None:  # measured: dense wins for the 3-RRR (110 vs 140 µs) and the Stewart platform (160 vs
        # 510 µs, m = 18), the ABA solves for a 200-link loop (0.54 vs 21 ms)
        method = "aba" if model.nq > DENSE_LIMIT and 2 * model.m < model.nq else "dense"
    if method == "aba":
        _, J, b = constraint_terms(model, data, q, qd)
        q = np.ascontiguousarray(q, dtype=float)
        qdd0 = aba(model, data, q, qd, tau)
        zero_g, zero_v = np.zeros(3), np.zeros(model.nq)
        G = np.empty((model.nq, model.m))
        out = np.empty(model.nq)
        for j in range(model.m):
            G[:, j] = K.aba(model.ints, model.geom, zero_g, q, zero_v, np.ascontiguousarray(J[j]), data.fext,
                            data.work, out)
        lam = np.linalg.solve(J @ G, -b - J @ qdd0)
        return qdd0 + G @ lam, lam
    M = crba(model, data, q)
    h = rnea(model, data, q, qd, np.zeros(model.nq))
    _, J, b = constraint_terms(model, data, q, qd)
    kkt = np.block([[M, -J.T], [J, np.zeros((model.m, model.m))]])
    sol = np.linalg.solve(kkt, np.concatenate([np.asarray(tau, dtype=float) - h, -b]))
    return sol[:model.nq], sol[model.nq:]
