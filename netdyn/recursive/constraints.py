"""Cut-joint constraints of a tree: residuals, Jacobian and acceleration bias; reactions as body wrenches.

A cut joint between ``body_a`` and ``body_b`` (see :class:`~netdyn.recursive.model.CutJoint`) gives
constraint rows ``φ(q) = 0``; :func:`constraint_terms` returns ``φ``, ``J = ∂φ/∂q`` and
``b = φ̈ − J q̈`` from one pass of the tree's kinematics (compiled; :func:`constraint_terms_reference`
is the numpy version), :func:`cut_wrenches` the body wrenches of multipliers ``λ`` (the reaction on
``body_b``; ``−λ`` on ``body_a``), whose generalized work is ``Jᵀ λ``.

>>> import numpy as np
>>> from netdyn.recursive import TreeModel, TreeData
>>> m = TreeModel.from_bodies([dict(name="bar", parent=None, mass=1, com=(0.5, 0, 0), inertia=0.1)],
...     cuts=[dict(name="C", kind="revolute", body_a=None, point_a=(0, 1), body_b="bar", point_b=(1, 0))],
...     gravity=(0, -9.81, 0))
>>> phi, J, b = constraint_terms(m, TreeData(m), [np.pi / 2])     # the bar's tip at (0, 1): closed
>>> np.round(phi, 12).tolist(), row_labels(m)
([0.0, 0.0], ['C[x]', 'C[y]'])
"""
from __future__ import annotations

import numpy as np

import netdyn.recursive.cut_kernels as CK

from .algorithms import forward_kinematics
from .model import REVOLUTE

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
    CK.cut_terms(model.ints, model.geom, model.ancestors, q, qd, data.work, data.R, data.p, data.omega, data.v,
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
