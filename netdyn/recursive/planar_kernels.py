"""Compiled (numba) articulated-body algorithm for planar trees: 3-D spatial algebra in the plane.

A planar tree (``TreeModel.planar``: revolute joints about ±z, slides and offsets in the x–y plane,
gravity in the plane) moves with ``[ω_z, v_x, v_y]`` only; its motion needs the mass, the centre of
mass in the plane and ``I_zz`` of each body, and 3×3 articulated inertias instead of 6×6 (about a
third of the arithmetic). Same algorithm and workspace discipline as :mod:`netdyn.recursive.kernels`;
the tests hold the two to each other and to Pinocchio. :func:`chain_rhs`, the ODE right-hand side of
a tree, runs either.

Packed per body (``pgeom``): cos and sin of the placement angle, placement x, y, the motion subspace
``S = [s_ω, s_x, s_y]``, the planar spatial inertia (3×3, row-major) about the body origin.
Workspace per body: cos, sin 0:2, r 2:4, v 4:7, a 7:10, c 10:13, IA 13:22, pA 22:25, U 25:28, D 28, u 29.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

#: numba caches on disk only under the package name: a cache written by a bare-name import of this file
#: (``python -m doctest path/to/it.py``) is found by the package import and fails to load there
CACHE = __name__.startswith("netdyn.")

from netdyn.recursive.kernels import FIX, PRI, REV, aba

PWORK = 30


def pack(model):
    """The ``(n, 16)`` planar geometry of a planar :class:`~netdyn.recursive.model.TreeModel`."""
    n = model.n
    out = np.zeros((n, 16))
    for i in range(n):
        R = model.rotation[i]
        out[i, 0], out[i, 1] = R[0, 0], R[1, 0]
        out[i, 2:4] = model.translation[i, :2]
        if model.jtype[i] == REV:
            out[i, 4] = model.axis[i, 2]
        elif model.jtype[i] == PRI:
            out[i, 5:7] = model.axis[i, :2]
        m, (cx, cy) = model.mass[i], model.com[i, :2]
        izz = model.inertia[i, 2, 2]
        out[i, 7:16] = [izz + m * (cx * cx + cy * cy), -m * cy, m * cx, -m * cy, m, 0.0, m * cx, 0.0, m]
    return np.ascontiguousarray(out)


@njit(cache=CACHE, inline="always")
def _to_child(w, i, src0, src1, src2, dst, col):
    """dst[col:col+3] = X_i src (a parent motion vector in the child frame)."""
    c, s, rx, ry = w[i, 0], w[i, 1], w[i, 2], w[i, 3]
    vx = src1 - src0 * ry
    vy = src2 + src0 * rx
    dst[col] = src0
    dst[col + 1] = c * vx + s * vy
    dst[col + 2] = -s * vx + c * vy


@njit(cache=CACHE, inline="always")
def _place(g, jt, qk, w, i):
    """w[i, 0:4] = cos, sin of the body's angle in its parent and its origin there, at joint value ``qk``."""
    c0, s0 = g[0], g[1]
    if jt == REV:
        th = g[4] * qk
        ct, st = math.cos(th), math.sin(th)
        w[i, 0], w[i, 1] = c0 * ct - s0 * st, s0 * ct + c0 * st
        w[i, 2], w[i, 3] = g[2], g[3]
    else:
        w[i, 0], w[i, 1] = c0, s0
        if jt == PRI:
            w[i, 2] = g[2] + (c0 * g[5] - s0 * g[6]) * qk
            w[i, 3] = g[3] + (s0 * g[5] + c0 * g[6]) * qk
        else:
            w[i, 2], w[i, 3] = g[2], g[3]


@njit(cache=CACHE, inline="always")
def _twist(g, u, w, i, p):
    """w[i, 4:7] = the body's twist, its parent's carried over plus ``S u``; returns ``S u``."""
    if p >= 0:
        _to_child(w, i, w[p, 4], w[p, 5], w[p, 6], w[i], 4)
    else:
        w[i, 4], w[i, 5], w[i, 6] = 0.0, 0.0, 0.0
    s_w, s_x, s_y = g[4] * u, g[5] * u, g[6] * u
    w[i, 4] += s_w
    w[i, 5] += s_x
    w[i, 6] += s_y
    return s_w, s_x, s_y


@njit(cache=CACHE)
def aba_planar(ints, pgeom, gravity, q, qd, tau, fext, w, qdd):
    """Joint accelerations of a planar tree (fext: the same (n, 6) body wrenches as the spatial kernel)."""
    n = ints.shape[0]
    for i in range(n):
        jt, k, p = ints[i, 1], ints[i, 2], ints[i, 0]
        g = pgeom[i]
        _place(g, jt, q[k] if jt != FIX else 0.0, w, i)
        s_w, s_x, s_y = _twist(g, qd[k] if jt != FIX else 0.0, w, i, p)
        om, vx, vy = w[i, 4], w[i, 5], w[i, 6]
        # c = v × (S qd): [0, vy s_w − om s_y, om s_x − vx s_w]
        w[i, 10] = 0.0
        w[i, 11] = vy * s_w - om * s_y
        w[i, 12] = om * s_x - vx * s_w
        for a in range(9):
            w[i, 13 + a] = g[7 + a]
        h1 = g[10] * om + g[11] * vx + g[12] * vy
        h2 = g[13] * om + g[14] * vx + g[15] * vy
        # pA = v ×* (I v) − fext: [vx h2 − vy h1, −om h2, om h1]
        w[i, 22] = vx * h2 - vy * h1 - fext[i, 2]
        w[i, 23] = -om * h2 - fext[i, 3]
        w[i, 24] = om * h1 - fext[i, 4]
    Ia = np.zeros(9)
    pa = np.zeros(3)
    T = np.zeros(9)
    for i in range(n - 1, -1, -1):
        jt, k, p = ints[i, 1], ints[i, 2], ints[i, 0]
        g = pgeom[i]
        for a in range(9):
            Ia[a] = w[i, 13 + a]
        if jt != FIX:
            for a in range(3):
                w[i, 25 + a] = w[i, 13 + 3 * a] * g[4] + w[i, 14 + 3 * a] * g[5] + w[i, 15 + 3 * a] * g[6]
            D = w[i, 25] * g[4] + w[i, 26] * g[5] + w[i, 27] * g[6]
            uu = tau[k] - (w[i, 22] * g[4] + w[i, 23] * g[5] + w[i, 24] * g[6])
            w[i, 28], w[i, 29] = D, uu
            for a in range(3):
                for b in range(3):
                    Ia[3 * a + b] -= w[i, 25 + a] * w[i, 25 + b] / D
        if p < 0:
            continue
        for a in range(3):
            s = w[i, 22 + a] + Ia[3 * a] * w[i, 10] + Ia[3 * a + 1] * w[i, 11] + Ia[3 * a + 2] * w[i, 12]
            if jt != FIX:
                s += w[i, 25 + a] * w[i, 29] / w[i, 28]
            pa[a] = s
        c, s_, rx, ry = w[i, 0], w[i, 1], w[i, 2], w[i, 3]
        # X = [[1, 0, 0], [s rx − c ry, c, s], [c rx + s ry, −s, c]]; IA_p += Xᵀ Ia X
        x10, x20 = s_ * rx - c * ry, c * rx + s_ * ry
        for a in range(3):  # T = Ia X
            i0, i1, i2 = Ia[3 * a], Ia[3 * a + 1], Ia[3 * a + 2]
            T[3 * a] = i0 + i1 * x10 + i2 * x20
            T[3 * a + 1] = i1 * c - i2 * s_
            T[3 * a + 2] = i1 * s_ + i2 * c
        for b in range(3):
            t0, t1, t2 = T[b], T[3 + b], T[6 + b]
            w[p, 13 + b] += t0 + x10 * t1 + x20 * t2
            w[p, 16 + b] += c * t1 - s_ * t2
            w[p, 19 + b] += s_ * t1 + c * t2
        # pA_p += Xᵀ pa: force to the parent: F = E f, n_p = n + r × F
        fx, fy = c * pa[1] - s_ * pa[2], s_ * pa[1] + c * pa[2]
        w[p, 22] += pa[0] + rx * fy - ry * fx
        w[p, 23] += fx
        w[p, 24] += fy
    for i in range(n):
        jt, k, p = ints[i, 1], ints[i, 2], ints[i, 0]
        g = pgeom[i]
        if p >= 0:
            _to_child(w, i, w[p, 7], w[p, 8], w[p, 9], w[i], 7)
        else:
            _to_child(w, i, 0.0, -gravity[0], -gravity[1], w[i], 7)
        w[i, 7] += w[i, 10]
        w[i, 8] += w[i, 11]
        w[i, 9] += w[i, 12]
        if jt != FIX:
            acc = (w[i, 29] - (w[i, 25] * w[i, 7] + w[i, 26] * w[i, 8] + w[i, 27] * w[i, 9])) / w[i, 28]
            qdd[k] = acc
            w[i, 7] += g[4] * acc
            w[i, 8] += g[5] * acc
            w[i, 9] += g[6] * acc
    return qdd


@njit(cache=CACHE)
def rnea_planar(ints, pgeom, gravity, q, qd, qdd, fext, w, tau):
    """Joint efforts of a planar tree, ``tau = M qdd + h − Jᵀ fext`` (recursive Newton–Euler in the plane; the
    body wrenches ``[n_z, f_x, f_y]`` stay in w[:, 22:25], body frame)."""
    n = ints.shape[0]
    for i in range(n):
        jt, k, p = ints[i, 1], ints[i, 2], ints[i, 0]
        g = pgeom[i]
        _place(g, jt, q[k] if jt != FIX else 0.0, w, i)
        s_w, s_x, s_y = _twist(g, qd[k] if jt != FIX else 0.0, w, i, p)
        if p >= 0:
            _to_child(w, i, w[p, 7], w[p, 8], w[p, 9], w[i], 7)
        else:
            _to_child(w, i, 0.0, -gravity[0], -gravity[1], w[i], 7)  # the base accelerates against gravity
        ua = qdd[k] if jt != FIX else 0.0
        om, vx, vy = w[i, 4], w[i, 5], w[i, 6]
        # a = X a_p + S qdd + v × (S qd), v × m = [0, vy m_w − om m_y, om m_x − vx m_w]
        w[i, 7] += g[4] * ua
        w[i, 8] += g[5] * ua + vy * s_w - om * s_y
        w[i, 9] += g[6] * ua + om * s_x - vx * s_w
        aw, ax, ay = w[i, 7], w[i, 8], w[i, 9]
        h1 = g[10] * om + g[11] * vx + g[12] * vy
        h2 = g[13] * om + g[14] * vx + g[15] * vy
        # f = I a + v ×* (I v) − fext, v ×* h = [vx h2 − vy h1, −om h2, om h1]
        w[i, 22] = g[7] * aw + g[8] * ax + g[9] * ay + vx * h2 - vy * h1 - fext[i, 2]
        w[i, 23] = g[10] * aw + g[11] * ax + g[12] * ay - om * h2 - fext[i, 3]
        w[i, 24] = g[13] * aw + g[14] * ax + g[15] * ay + om * h1 - fext[i, 4]
    for i in range(n - 1, -1, -1):
        jt, k, p = ints[i, 1], ints[i, 2], ints[i, 0]
        g = pgeom[i]
        if jt != FIX:
            tau[k] = g[4] * w[i, 22] + g[5] * w[i, 23] + g[6] * w[i, 24]
        if p >= 0:  # to the parent: F = E f, n_p = n + r × F
            c, s_, rx, ry = w[i, 0], w[i, 1], w[i, 2], w[i, 3]
            fx, fy = c * w[i, 23] - s_ * w[i, 24], s_ * w[i, 23] + c * w[i, 24]
            w[p, 22] += w[i, 22] + rx * fy - ry * fx
            w[p, 23] += fx
            w[p, 24] += fy
    return tau


@njit(cache=CACHE)
def rnea_planar_many(ints, pgeom, gravity, Q, QD, QDD, fext, w, TAU):
    """:func:`rnea_planar` at every row of ``Q, QD, QDD`` (times × nq) into the rows of ``TAU``."""
    for k in range(Q.shape[0]):
        rnea_planar(ints, pgeom, gravity, Q[k], QD[k], QDD[k], fext, w, TAU[k])
    return TAU


@njit(cache=CACHE)
def chain_rhs(ints, geom, gravity, y, tau, fext, w, out, planar):
    """``dy/dt`` of ``y = [q, qd]`` for a tree, one compiled call: this module's ABA on a planar tree
    (``geom`` from :func:`pack`, ``w`` the planar workspace), the 6-D one of
    :mod:`netdyn.recursive.kernels` otherwise (``geom``, ``w``: the model's and its data's)."""
    nq = tau.size
    for a in range(nq):
        out[a] = y[nq + a]
    if planar:
        aba_planar(ints, geom, gravity, y[:nq], y[nq:], tau, fext, w, out[nq:])
    else:
        aba(ints, geom, gravity, y[:nq], y[nq:], tau, fext, w, out[nq:])
    return out
