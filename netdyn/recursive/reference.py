"""Pure numpy reference of the recursive algorithms (6×6 Plücker matrices, Featherstone's notation).

Slow (interpreter-bound) and written for reading: the tests hold the compiled kernels of
:mod:`netdyn.recursive.kernels` to it and both to Pinocchio.

>>> import numpy as np
>>> from netdyn.recursive.model import TreeModel
>>> m = TreeModel.chain([2.0], [1.0])
>>> float(np.round(rnea(m, [0.0], [0.0], [0.0])[0], 9))   # holding the bar horizontal: m g l / 2
9.81
"""
from __future__ import annotations

import numpy as np

from .model import FIXED, PRISMATIC, REVOLUTE, skew


def rotation(axis, angle):
    """Rodrigues' rotation matrix about a unit ``axis``."""
    K = skew(axis)
    return np.eye(3) + np.sin(angle) * K + (1 - np.cos(angle)) * K @ K


def motion_subspace(model, i):
    """The 6-vector S of joint i (zero for a fixed joint)."""
    S = np.zeros(6)
    if model.jtype[i] == REVOLUTE:
        S[:3] = model.axis[i]
    elif model.jtype[i] == PRISMATIC:
        S[3:] = model.axis[i]
    return S


def joint_transform(model, i, q):
    """``(X, E, r)``: the motion transform parent → body i, the orientation and the origin of body i."""
    E, r = model.rotation[i].copy(), model.translation[i].copy()
    k = model.qindex[i]
    if model.jtype[i] == REVOLUTE:
        E = E @ rotation(model.axis[i], q[k])
    elif model.jtype[i] == PRISMATIC:
        r = r + model.rotation[i] @ model.axis[i] * q[k]
    X = np.zeros((6, 6))
    X[:3, :3] = X[3:, 3:] = E.T
    X[3:, :3] = -E.T @ skew(r)
    return X, E, r


def crm(v):
    """Motion cross-product matrix ``v×``."""
    out = np.zeros((6, 6))
    out[:3, :3] = out[3:, 3:] = skew(v[:3])
    out[3:, :3] = skew(v[3:])
    return out


def crf(v):
    """Force cross-product matrix ``v×* = −(v×)ᵀ``."""
    return -crm(v).T


def _qd(model, i, x):
    k = model.qindex[i]
    return 0.0 if k < 0 else x[k]


def rnea(model, q, qd, qdd, fext=None):
    """Joint efforts ``M qdd + h − Jᵀ fext`` by the recursive Newton–Euler algorithm."""
    q, qd, qdd = (np.asarray(x, dtype=float) for x in (q, qd, qdd))
    n = model.n
    fext = np.zeros((n, 6)) if fext is None else np.asarray(fext, dtype=float)
    a0 = np.concatenate([np.zeros(3), -model.gravity])
    X, v, a, f = [None] * n, [None] * n, [None] * n, [None] * n
    for i in range(n):
        X[i], _, _ = joint_transform(model, i, q)
        S = motion_subspace(model, i)
        p = model.parent[i]
        vp, ap = (np.zeros(6), a0) if p < 0 else (v[p], a[p])
        v[i] = X[i] @ vp + S * _qd(model, i, qd)
        a[i] = X[i] @ ap + S * _qd(model, i, qdd) + crm(v[i]) @ S * _qd(model, i, qd)
        I = model.spatial_inertias[i]
        f[i] = I @ a[i] + crf(v[i]) @ I @ v[i] - fext[i]
    tau = np.zeros(model.nq)
    for i in range(n - 1, -1, -1):
        if model.jtype[i] != FIXED:
            tau[model.qindex[i]] = motion_subspace(model, i) @ f[i]
        if model.parent[i] >= 0:
            f[model.parent[i]] = f[model.parent[i]] + X[i].T @ f[i]
    return tau


def aba(model, q, qd, tau, fext=None):
    """Joint accelerations by the articulated-body algorithm."""
    q, qd, tau = (np.asarray(x, dtype=float) for x in (q, qd, tau))
    n = model.n
    fext = np.zeros((n, 6)) if fext is None else np.asarray(fext, dtype=float)
    X, v, c, IA, pA = [None] * n, [None] * n, [None] * n, [None] * n, [None] * n
    U, D, u = [None] * n, [None] * n, [None] * n
    for i in range(n):
        X[i], _, _ = joint_transform(model, i, q)
        S = motion_subspace(model, i)
        p = model.parent[i]
        v[i] = (0 if p < 0 else X[i] @ v[p]) + S * _qd(model, i, qd)
        c[i] = crm(v[i]) @ S * _qd(model, i, qd)
        IA[i] = model.spatial_inertias[i].copy()
        pA[i] = crf(v[i]) @ IA[i] @ v[i] - fext[i]
    for i in range(n - 1, -1, -1):
        S = motion_subspace(model, i)
        Ia, pa = IA[i], pA[i] + IA[i] @ c[i]
        if model.jtype[i] != FIXED:
            U[i] = IA[i] @ S
            D[i] = S @ U[i]
            u[i] = tau[model.qindex[i]] - S @ pA[i]
            Ia = IA[i] - np.outer(U[i], U[i]) / D[i]
            pa = pA[i] + Ia @ c[i] + U[i] * u[i] / D[i]
        p = model.parent[i]
        if p >= 0:
            IA[p] = IA[p] + X[i].T @ Ia @ X[i]
            pA[p] = pA[p] + X[i].T @ pa
    qdd = np.zeros(model.nq)
    a = [None] * n
    a0 = np.concatenate([np.zeros(3), -model.gravity])
    for i in range(n):
        p = model.parent[i]
        a[i] = X[i] @ (a0 if p < 0 else a[p]) + c[i]
        if model.jtype[i] != FIXED:
            k = model.qindex[i]
            qdd[k] = (u[i] - U[i] @ a[i]) / D[i]
            a[i] = a[i] + motion_subspace(model, i) * qdd[k]
    return qdd


def crba(model, q):
    """The joint-space mass matrix (composite rigid bodies)."""
    q = np.asarray(q, dtype=float)
    n = model.n
    X = [joint_transform(model, i, q)[0] for i in range(n)]
    Ic = [model.spatial_inertias[i].copy() for i in range(n)]
    for i in range(n - 1, -1, -1):
        if model.parent[i] >= 0:
            Ic[model.parent[i]] = Ic[model.parent[i]] + X[i].T @ Ic[i] @ X[i]
    M = np.zeros((model.nq, model.nq))
    for i in range(n):
        if model.jtype[i] == FIXED:
            continue
        F = Ic[i] @ motion_subspace(model, i)
        ki = model.qindex[i]
        M[ki, ki] = motion_subspace(model, i) @ F
        j = i
        while model.parent[j] >= 0:
            F = X[j].T @ F
            j = model.parent[j]
            if model.jtype[j] != FIXED:
                M[ki, model.qindex[j]] = M[model.qindex[j], ki] = motion_subspace(model, j) @ F
    return M


def world_poses(model, q):
    """World rotation and origin of every body: ``(R (n,3,3), p (n,3))``."""
    n = model.n
    R, p = np.zeros((n, 3, 3)), np.zeros((n, 3))
    for i in range(n):
        _, E, r = joint_transform(model, i, q)
        par = model.parent[i]
        R[i] = E if par < 0 else R[par] @ E
        p[i] = r if par < 0 else p[par] + R[par] @ r
    return R, p
