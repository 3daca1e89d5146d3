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
from .algorithms import aba, crba, forward_kinematics, rnea
from .model import PRISMATIC, REVOLUTE

EZ = np.array([0.0, 0.0, 1.0])


def _columns(model, data):
    """World joint columns after forward kinematics: ``(axis e (nq,3), origin o (nq,3), is_revolute (nq,))``."""
    moving = model.qindex >= 0
    e = np.einsum("nij,nj->ni", data.R[moving], model.axis[moving])
    return e, data.p[moving], model.jtype[moving] == REVOLUTE


def _point(model, data, body, s):
    """World position, velocity and bias acceleration of body point ``s`` (body frame)."""
    if body < 0:
        return s.copy(), np.zeros(3), np.zeros(3)
    r = data.R[body] @ s
    w, al = data.omega[body], data.alpha[body]
    return data.p[body] + r, data.v[body] + np.cross(w, r), data.acc[body] + np.cross(al, r) + np.cross(w, np.cross(w, r))


def _point_jacobian(model, cols, body, P):
    """``(Jv (3,nq), Jw (3,nq))`` of a point ``P`` (world) moving with ``body``."""
    e, o, rev = cols
    if body < 0:
        return np.zeros((3, model.nq)), np.zeros((3, model.nq))
    mask = model.ancestors[body][model.qindex >= 0]
    Jv = np.where(rev[:, None], np.cross(e, P - o), e) * mask[:, None]
    Jw = np.where(rev[:, None], e, 0.0) * mask[:, None]
    return Jv.T, Jw.T


def _angle(data, body):
    if body < 0:
        return 0.0, np.zeros(3), np.zeros(3)
    R = data.R[body]
    return np.arctan2(R[1, 0], R[0, 0]), data.omega[body], data.alpha[body]


def constraint_terms(model, data, q, qd=None):
    """``(φ, J, b)`` of the cut joints at ``(q, q̇)``: residuals, Jacobian ``∂φ/∂q`` and ``b = φ̈ − J q̈``.

    Compiled (:func:`netdyn.recursive.kernels.cut_terms`); :func:`constraint_terms_reference` is
    the numpy version. Leaves the tree's world kinematics (``q̈ = 0``) in ``data``.
    """
    q = np.ascontiguousarray(q, dtype=float)
    qd = np.zeros(model.nq) if qd is None else np.ascontiguousarray(qd, dtype=float)
    phi, J, b = np.zeros(model.m), np.zeros((model.m, model.nq)), np.zeros(model.m)
    K.cut_terms(model.ints, model.geom, model.ancestors, q, qd, data.work, data.R, data.p, data.omega, data.v,
                data.alpha, data.acc, model.cut_ints, model.cut_geom, phi, J, b)
    return phi, J, b


def constraint_terms_reference(model, data, q, qd=None):
    """``(φ, J, b)`` of the cut joints at ``(q, q̇)``: residuals, Jacobian ``∂φ/∂q`` and ``b = φ̈ − J q̈``.

    Runs the tree's forward kinematics with ``q̈ = 0`` (so the accelerations in ``data`` are the biases).
    """
    forward_kinematics(model, data, q, qd)
    cols = _columns(model, data)
    phi, J, b = np.zeros(model.m), np.zeros((model.m, model.nq)), np.zeros(model.m)
    k = 0
    for c in model.cuts:
        Pa, va, aa = _point(model, data, c.body_a, c.point_a)
        Pb, vb, ab = _point(model, data, c.body_b, c.point_b)
        Jva, Jwa = _point_jacobian(model, cols, c.body_a, Pb if c.kind == "prismatic" else Pa)
        Jvb, Jwb = _point_jacobian(model, cols, c.body_b, Pb)
        if c.kind in ("revolute", "weld", "spherical"):
            rows = 3 if c.kind == "spherical" or c.spatial else 2
            phi[k:k + rows] = (Pb - Pa)[:rows]
            J[k:k + rows] = (Jvb - Jva)[:rows]
            b[k:k + rows] = (ab - aa)[:rows]
            k += rows
        if c.kind == "prismatic":
            Ra = np.eye(3) if c.body_a < 0 else data.R[c.body_a]
            wa = np.zeros(3) if c.body_a < 0 else data.omega[c.body_a]
            ala = np.zeros(3) if c.body_a < 0 else data.alpha[c.body_a]
            u = Ra @ c.axis
            nrm = np.cross(EZ, u)
            d, dd, ddd = Pb - Pa, vb - va, ab - aa
            nd = np.cross(wa, nrm)
            ndd = np.cross(ala, nrm) + np.cross(wa, nd)
            phi[k] = nrm @ d
            # Jva was taken at Pb: body a's material point under Pb; d/dt(n·d) = n·(v_b − v_a(Pb))
            J[k] = nrm @ (Jvb - Jva)
            b[k] = ndd @ d + 2 * nd @ dd + nrm @ ddd
            k += 1
        if c.spatial and c.kind in ("revolute", "weld"):
            for xloc, yloc in _dot_pairs(c):
                x, y, wa, wb, ala, alb = _dot_vectors(data, c, xloc, yloc)
                v = np.cross(y, x)
                phi[k] = x @ y
                J[k] = v @ (Jwb - Jwa)
                b[k] = (alb - ala) @ v + (wb - wa) @ (np.cross(np.cross(wb, y), x) + np.cross(y, np.cross(wa, x)))
                k += 1
        elif c.kind in ("prismatic", "weld"):
            tha, wa, ala = _angle(data, c.body_a)
            thb, wb, alb = _angle(data, c.body_b)
            phi[k] = np.angle(np.exp(1j * (thb - tha - c.angle)))
            J[k] = (Jwb - Jwa)[2]
            b[k] = (alb - ala)[2]
            k += 1
    return phi, J, b


def _dot_pairs(c):
    """Body-fixed unit vectors ``(x in a, y in b)`` whose dot products a spatial cut holds at zero."""
    ints, g = c.packed()
    g = np.asarray(g)
    if c.kind == "revolute":
        return [(g[13:16], g[10:13]), (g[16:19], g[10:13])]
    R0 = g[19:28].reshape(3, 3)
    return [(R0[:, i], np.eye(3)[j]) for i, j in ((0, 1), (1, 2), (2, 0))]


def _dot_vectors(data, c, xloc, yloc):
    def frame(body):
        if body < 0:
            return np.eye(3), np.zeros(3), np.zeros(3)
        return data.R[body], data.omega[body], data.alpha[body]
    Ra, wa, ala = frame(c.body_a)
    Rb, wb, alb = frame(c.body_b)
    return Ra @ xloc, Rb @ yloc, wa, wb, ala, alb


def cut_wrenches(model, data, lam):
    """Body-frame external wrenches ``[n; f]`` (about each body origin) of the cut reactions ``λ``.

    Uses the poses in ``data`` (call :func:`constraint_terms` first). Feeding them to ``rnea`` as
    ``fext`` gives the tree joints' transmitted wrenches with the loops closed.
    """
    fext = np.zeros((model.n, 6))
    k = 0

    def add(body, P, F, M):
        if body < 0:
            return
        r = P - data.p[body]
        world = np.concatenate([M + np.cross(r, F), F])
        fext[body, :3] += data.R[body].T @ world[:3]
        fext[body, 3:] += data.R[body].T @ world[3:]

    for c in model.cuts:
        # body a takes −F where J measures it: at point_a for coincidence rows, under point_b for a slide
        Pa, _, _ = _point(model, data, c.body_a, c.point_a)
        Pb, _, _ = _point(model, data, c.body_b, c.point_b)
        F, M = np.zeros(3), np.zeros(3)
        if c.kind in ("revolute", "weld", "spherical"):
            rows = 3 if c.kind == "spherical" or c.spatial else 2
            F[:rows] = lam[k:k + rows]
            k += rows
        if c.spatial and c.kind in ("revolute", "weld"):
            for xloc, yloc in _dot_pairs(c):
                x, y, *_ = _dot_vectors(data, c, xloc, yloc)
                M += lam[k] * np.cross(y, x)
                k += 1
        else:
            if c.kind == "prismatic":
                Ra = np.eye(3) if c.body_a < 0 else data.R[c.body_a]
                F += lam[k] * np.cross(EZ, Ra @ c.axis)
                k += 1
                Pa = Pb
            if c.kind in ("prismatic", "weld"):
                M[2] = lam[k]
                k += 1
        add(c.body_b, Pb, F, M)
        add(c.body_a, Pa, -F, -M)
    return fext


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
        phi, J, _ = constraint_terms(model, data, q)
        if model.m == 0 or np.max(np.abs(phi)) < tol * (1 + np.max(np.abs(q))):
            return q
        q[free] -= _solve(J[:, free], phi)
    worst = int(np.argmax(np.abs(phi)))
    raise InitialConditionError(f"the loops cannot be closed: constraint row {worst} of the cut joints "
                                f"({row_labels(model)[worst]}) stays at {phi[worst]:.3g}; start from a closer guess "
                                "or keep the prescribed motion inside the workspace")


def row_labels(model):
    """A label per constraint row: ``"<cut>[x]"``, ``"<cut>[normal]"``, ``"<cut>[angle]"``…"""
    out = []
    for c in model.cuts:
        comps = {"revolute": ("x", "y"), "spherical": ("x", "y", "z"), "weld": ("x", "y", "angle"),
                 "prismatic": ("normal", "angle")}[c.kind]
        if c.spatial:
            comps = {"revolute": ("x", "y", "z", "r1", "r2"), "weld": ("x", "y", "z", "rx", "ry", "rz"),
                     "spherical": comps}[c.kind]
        out += [f"{c.name}[{s}]" for s in comps]
    return out


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
    P = np.array([np.broadcast_to(prescribed[i][0], (T,)) for i in idx]).reshape(idx.size, T)
    PD = np.array([np.broadcast_to(prescribed[i][1], (T,)) for i in idx]).reshape(idx.size, T)
    PDD = np.array([np.broadcast_to(prescribed[i][2], (T,)) for i in idx]).reshape(idx.size, T)
    free = np.setdiff1d(np.arange(model.nq), idx)
    if model.m < free.size:
        raise ModelError(f"the prescribed coordinates leave {free.size - model.m} degree(s) of freedom free; "
                         f"prescribe {free.size - model.m} more of {[model.coordinate_joints[i] for i in free]}")
    Q, QD, QDD = (np.zeros((model.nq, T)) for _ in range(3))
    q = (guesses[:, 0] if guesses.ndim == 2 else guesses).copy()
    for k in range(T):
        if guesses.ndim == 2:
            q = guesses[:, k].copy()
        q[idx] = P[:, k]
        q = solve_positions(model, data, q, fixed=idx, tol=tol)
        qd = np.zeros(model.nq)
        qd[idx] = PD[:, k]
        _, J, _ = constraint_terms(model, data, q)
        Jf = J[:, free]
        if free.size == 0:  # everything prescribed (a tree driven at every joint)
            qdd = np.zeros(model.nq)
            qdd[idx] = PDD[:, k]
            Q[:, k], QD[:, k], QDD[:, k] = q, qd, qdd
            continue
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


def denoc_inverse_dynamics(model, data, q, qd, qdd, actuated, tol=1e-9):
    """Actuator efforts and cut-joint reactions for a motion ``(q, q̇, q̈)`` (arrays ``(nq,)`` or ``(nq, times)``).

    ``actuated``: indices of the actuated joint coordinates. See the module docstring for the method.
    Raises :class:`~netdyn.errors.SingularSystemError` when the actuators cannot produce the motion.
    """
    q, qd, qdd = (np.asarray(x, dtype=float) for x in (q, qd, qdd))
    single = q.ndim == 1
    q, qd, qdd = (x.reshape(model.nq, -1) for x in (q, qd, qdd))
    act = np.asarray(actuated, dtype=int)
    T = q.shape[1]
    eff, lam = np.zeros((act.size, T)), np.zeros((model.m, T))
    redundant = False
    for k in range(T):
        tau = rnea(model, data, q[:, k], qd[:, k], qdd[:, k])
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
