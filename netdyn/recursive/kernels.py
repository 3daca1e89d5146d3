"""Compiled (numba) kernels of the recursive algorithms: the fast path.

Every kernel works on the packed arrays of a :class:`~netdyn.recursive.model.TreeModel`
(``ints``: parent, joint type, coordinate index per body; ``geom``: placement rotation (9),
translation (3), axis (3), spatial inertia (36) per body) and a :class:`~netdyn.recursive.model.TreeData`
workspace (``work``: per body E 0:9, r 9:12, v 12:18, a 18:24, c 24:30, f 30:36, IA 36:72,
pA 72:78, U 78:84, D 84, u 85). The numpy reference (:mod:`netdyn.recursive.reference`) is
the same mathematics written with 6×6 matrices; the tests hold the two and Pinocchio together.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

#: numba caches on disk only under the package name: a cache written by a bare-name import of this file
#: (``python -m doctest path/to/it.py``) is found by the package import and fails to load there
CACHE = __name__.startswith("netdyn.")

REV, PRI, FIX = 0, 1, 2


@njit(cache=CACHE, inline="always")
def _joint(ints, geom, q, i, w):
    """Orientation E (body i in parent) and position r of body i's origin in the parent frame."""
    jt = ints[i, 1]
    k = ints[i, 2]
    g = geom[i]
    if jt == REV:
        ax, ay, az = g[12], g[13], g[14]
        th = q[k]
        c, s = math.cos(th), math.sin(th)
        t = 1.0 - c
        # Rodrigues' rotation about the axis, then E = Rp @ Rj
        r00, r01, r02 = c + t * ax * ax, t * ax * ay - s * az, t * ax * az + s * ay
        r10, r11, r12 = t * ax * ay + s * az, c + t * ay * ay, t * ay * az - s * ax
        r20, r21, r22 = t * ax * az - s * ay, t * ay * az + s * ax, c + t * az * az
        for a in range(3):
            p0, p1, p2 = g[3 * a], g[3 * a + 1], g[3 * a + 2]
            w[i, 3 * a] = p0 * r00 + p1 * r10 + p2 * r20
            w[i, 3 * a + 1] = p0 * r01 + p1 * r11 + p2 * r21
            w[i, 3 * a + 2] = p0 * r02 + p1 * r12 + p2 * r22
        w[i, 9], w[i, 10], w[i, 11] = g[9], g[10], g[11]
    else:
        for a in range(9):
            w[i, a] = g[a]
        if jt == PRI:
            d = q[k]
            for a in range(3):
                w[i, 9 + a] = g[9 + a] + (g[3 * a] * g[12] + g[3 * a + 1] * g[13] + g[3 * a + 2] * g[14]) * d
        else:
            w[i, 9], w[i, 10], w[i, 11] = g[9], g[10], g[11]


@njit(cache=CACHE, inline="always")
def _motion_to_child(w, i, src, dst_row, dst_col, out_base):
    """dst = X_i src: src a parent motion vector (6), E and r of body i in w."""
    ox, oy, oz, vx, vy, vz = src[0], src[1], src[2], src[3], src[4], src[5]
    rx, ry, rz = w[i, 9], w[i, 10], w[i, 11]
    # v + ω × r
    ux = vx + oy * rz - oz * ry
    uy = vy + oz * rx - ox * rz
    uz = vz + ox * ry - oy * rx
    for a in range(3):  # E^T
        dst_row[dst_col + a] = w[i, a] * ox + w[i, 3 + a] * oy + w[i, 6 + a] * oz
        dst_row[dst_col + 3 + a] = w[i, a] * ux + w[i, 3 + a] * uy + w[i, 6 + a] * uz


@njit(cache=CACHE, inline="always")
def _force_to_parent_add(w, i, f, dst, col):
    """dst[col:col+6] += X_i^T f (a child wrench expressed in the parent frame about its origin)."""
    nx, ny, nz, fx, fy, fz = f[0], f[1], f[2], f[3], f[4], f[5]
    En0 = w[i, 0] * nx + w[i, 1] * ny + w[i, 2] * nz
    En1 = w[i, 3] * nx + w[i, 4] * ny + w[i, 5] * nz
    En2 = w[i, 6] * nx + w[i, 7] * ny + w[i, 8] * nz
    Ef0 = w[i, 0] * fx + w[i, 1] * fy + w[i, 2] * fz
    Ef1 = w[i, 3] * fx + w[i, 4] * fy + w[i, 5] * fz
    Ef2 = w[i, 6] * fx + w[i, 7] * fy + w[i, 8] * fz
    rx, ry, rz = w[i, 9], w[i, 10], w[i, 11]
    dst[col] += En0 + ry * Ef2 - rz * Ef1
    dst[col + 1] += En1 + rz * Ef0 - rx * Ef2
    dst[col + 2] += En2 + rx * Ef1 - ry * Ef0
    dst[col + 3] += Ef0
    dst[col + 4] += Ef1
    dst[col + 5] += Ef2


@njit(cache=CACHE)
def _forward_pass(ints, geom, gravity, q, qd, qdd, w, with_acc):
    """Poses, twists (w[:,12:18]), bias c (w[:,24:30]) and, if with_acc, accelerations (w[:,18:24])."""
    n = ints.shape[0]
    src = np.zeros(6)
    base = np.zeros(6)
    base[3], base[4], base[5] = -gravity[0], -gravity[1], -gravity[2]
    for i in range(n):
        _joint(ints, geom, q, i, w)
        p = ints[i, 0]
        jt = ints[i, 1]
        k = ints[i, 2]
        g = geom[i]
        if p >= 0:
            for a in range(6):
                src[a] = w[p, 12 + a]
            _motion_to_child(w, i, src, w[i], 12, 0)
        else:
            for a in range(6):
                w[i, 12 + a] = 0.0
        ox, oy, oz = w[i, 12], w[i, 13], w[i, 14]
        vx, vy, vz = w[i, 15], w[i, 16], w[i, 17]
        ax, ay, az = g[12], g[13], g[14]
        for a in range(6):
            w[i, 24 + a] = 0.0
        if jt == REV:
            u = qd[k]
            w[i, 12] += ax * u
            w[i, 13] += ay * u
            w[i, 14] += az * u
            # c = v × (S qd) with the new v
            ox, oy, oz = w[i, 12], w[i, 13], w[i, 14]
            sx, sy, sz = ax * u, ay * u, az * u
            w[i, 24] = oy * sz - oz * sy
            w[i, 25] = oz * sx - ox * sz
            w[i, 26] = ox * sy - oy * sx
            w[i, 27] = vy * sz - vz * sy
            w[i, 28] = vz * sx - vx * sz
            w[i, 29] = vx * sy - vy * sx
        elif jt == PRI:
            u = qd[k]
            w[i, 15] += ax * u
            w[i, 16] += ay * u
            w[i, 17] += az * u
            sx, sy, sz = ax * u, ay * u, az * u
            w[i, 27] = oy * sz - oz * sy
            w[i, 28] = oz * sx - ox * sz
            w[i, 29] = ox * sy - oy * sx
        if with_acc:
            if p >= 0:
                for a in range(6):
                    src[a] = w[p, 18 + a]
                _motion_to_child(w, i, src, w[i], 18, 0)
            else:
                _motion_to_child(w, i, base, w[i], 18, 0)
            for a in range(6):
                w[i, 18 + a] += w[i, 24 + a]
            if jt == REV:
                w[i, 18] += ax * qdd[k]
                w[i, 19] += ay * qdd[k]
                w[i, 20] += az * qdd[k]
            elif jt == PRI:
                w[i, 21] += ax * qdd[k]
                w[i, 22] += ay * qdd[k]
                w[i, 23] += az * qdd[k]


@njit(cache=CACHE, inline="always")
def _inertia_times(g, x, out, col):
    """out[col:col+6] = I6 x (I6 stored row-major in g[15:51])."""
    for a in range(6):
        s = 0.0
        for b in range(6):
            s += g[15 + 6 * a + b] * x[b]
        out[col + a] = s


@njit(cache=CACHE, inline="always")
def _cross_force_add(v, h, out, col):
    """out[col:col+6] += v ×* h."""
    ox, oy, oz, vx, vy, vz = v[0], v[1], v[2], v[3], v[4], v[5]
    hn0, hn1, hn2, hf0, hf1, hf2 = h[0], h[1], h[2], h[3], h[4], h[5]
    out[col] += oy * hn2 - oz * hn1 + vy * hf2 - vz * hf1
    out[col + 1] += oz * hn0 - ox * hn2 + vz * hf0 - vx * hf2
    out[col + 2] += ox * hn1 - oy * hn0 + vx * hf1 - vy * hf0
    out[col + 3] += oy * hf2 - oz * hf1
    out[col + 4] += oz * hf0 - ox * hf2
    out[col + 5] += ox * hf1 - oy * hf0


@njit(cache=CACHE, inline="always")
def _add_bias_wrench(w, i, g, fext, h, col):
    """w[i, col:col+6] += v ×* (I v) − fext_i, v body i's twist (w[i, 12:18]); h: 6 of scratch."""
    _inertia_times(g, w[i, 12:18], h, 0)
    _cross_force_add(w[i, 12:18], h, w[i], col)
    for a in range(6):
        w[i, col + a] -= fext[i, a]


@njit(cache=CACHE)
def rnea(ints, geom, gravity, q, qd, qdd, fext, w, tau):
    """Inverse dynamics: ``tau = M(q) qdd + h(q, qd) − Jᵀ fext``; the joint wrenches stay in w[:, 30:36]."""
    n = ints.shape[0]
    _forward_pass(ints, geom, gravity, q, qd, qdd, w, True)
    h = np.zeros(6)
    for i in range(n):
        g = geom[i]
        _inertia_times(g, w[i, 18:24], w[i], 30)
        _add_bias_wrench(w, i, g, fext, h, 30)
    for i in range(n - 1, -1, -1):
        jt = ints[i, 1]
        k = ints[i, 2]
        g = geom[i]
        if jt == REV:
            tau[k] = g[12] * w[i, 30] + g[13] * w[i, 31] + g[14] * w[i, 32]
        elif jt == PRI:
            tau[k] = g[12] * w[i, 33] + g[13] * w[i, 34] + g[14] * w[i, 35]
        p = ints[i, 0]
        if p >= 0:
            _force_to_parent_add(w, i, w[i, 30:36], w[p], 30)
    return tau


@njit(cache=CACHE)
def rnea_many(ints, geom, gravity, Q, QD, QDD, fext, w, TAU):
    """:func:`rnea` at every row of ``Q, QD, QDD`` (times × nq, C order) into the rows of ``TAU``: one call for a
    whole motion, no Python between the times."""
    tau = np.zeros(Q.shape[1])
    for k in range(Q.shape[0]):
        rnea(ints, geom, gravity, Q[k], QD[k], QDD[k], fext, w, tau)
        for j in range(tau.size):
            TAU[k, j] = tau[j]
    return TAU


@njit(cache=CACHE, inline="always")
def _transform_inertia_add(w, i, Ia, dst, col, X, T):
    """dst[col:col+36] += X_i^T Ia X_i (Ia row-major 6×6, X_i the motion transform parent → child);
    X and T are 6×6 scratch arrays (X must hold zeros in its upper-right block)."""
    for a in range(3):
        for b in range(3):
            X[a, b] = w[i, 3 * b + a]          # E^T
            X[3 + a, 3 + b] = w[i, 3 * b + a]
    rx, ry, rz = w[i, 9], w[i, 10], w[i, 11]
    # lower-left: -E^T [r]
    for a in range(3):
        e0, e1, e2 = w[i, a], w[i, 3 + a], w[i, 6 + a]  # row a of E^T
        X[3 + a, 0] = -(e1 * rz - e2 * ry)
        X[3 + a, 1] = -(e2 * rx - e0 * rz)
        X[3 + a, 2] = -(e0 * ry - e1 * rx)
    for a in range(6):
        for b in range(6):
            s = 0.0
            for c in range(6):
                s += Ia[6 * a + c] * X[c, b]
            T[a, b] = s
    for a in range(6):
        for b in range(6):
            s = 0.0
            for c in range(6):
                s += X[c, a] * T[c, b]
            dst[col + 6 * a + b] += s


@njit(cache=CACHE)
def aba(ints, geom, gravity, q, qd, tau, fext, w, qdd):
    """Forward dynamics by the articulated-body algorithm: ``qdd`` from ``tau`` and ``fext``."""
    n = ints.shape[0]
    _forward_pass(ints, geom, gravity, q, qd, qdd, w, False)
    h = np.zeros(6)
    for i in range(n):
        g = geom[i]
        for a in range(36):
            w[i, 36 + a] = g[15 + a]
        for a in range(6):
            w[i, 72 + a] = 0.0
        _add_bias_wrench(w, i, g, fext, h, 72)
    Ia = np.zeros(36)
    pa = np.zeros(6)
    X = np.zeros((6, 6))
    T = np.zeros((6, 6))
    for i in range(n - 1, -1, -1):
        jt = ints[i, 1]
        k = ints[i, 2]
        g = geom[i]
        for a in range(36):
            Ia[a] = w[i, 36 + a]
        if jt != FIX:
            off = 0 if jt == REV else 3
            ax, ay, az = g[12], g[13], g[14]
            for a in range(6):
                w[i, 78 + a] = w[i, 36 + 6 * a + off] * ax + w[i, 36 + 6 * a + off + 1] * ay \
                    + w[i, 36 + 6 * a + off + 2] * az
            D = w[i, 78 + off] * ax + w[i, 78 + off + 1] * ay + w[i, 78 + off + 2] * az
            u = tau[k] - (w[i, 72 + off] * ax + w[i, 72 + off + 1] * ay + w[i, 72 + off + 2] * az)
            w[i, 84] = D
            w[i, 85] = u
            for a in range(6):
                for b in range(6):
                    Ia[6 * a + b] -= w[i, 78 + a] * w[i, 78 + b] / D
        p = ints[i, 0]
        if p >= 0:
            for a in range(6):
                s = w[i, 72 + a]
                for b in range(6):
                    s += Ia[6 * a + b] * w[i, 24 + b]
                if jt != FIX:
                    s += w[i, 78 + a] * w[i, 85] / w[i, 84]
                pa[a] = s
            _transform_inertia_add(w, i, Ia, w[p], 36, X, T)
            _force_to_parent_add(w, i, pa, w[p], 72)
    base = np.zeros(6)
    base[3], base[4], base[5] = -gravity[0], -gravity[1], -gravity[2]
    src = np.zeros(6)
    for i in range(n):
        p = ints[i, 0]
        jt = ints[i, 1]
        k = ints[i, 2]
        g = geom[i]
        if p >= 0:
            for a in range(6):
                src[a] = w[p, 18 + a]
            _motion_to_child(w, i, src, w[i], 18, 0)
        else:
            _motion_to_child(w, i, base, w[i], 18, 0)
        for a in range(6):
            w[i, 18 + a] += w[i, 24 + a]
        if jt != FIX:
            off = 0 if jt == REV else 3
            s = 0.0
            for a in range(6):
                s += w[i, 78 + a] * w[i, 18 + a]
            acc = (w[i, 85] - s) / w[i, 84]
            qdd[k] = acc
            w[i, 18 + off] += g[12] * acc
            w[i, 19 + off] += g[13] * acc
            w[i, 20 + off] += g[14] * acc
    return qdd


@njit(cache=CACHE)
def crba(ints, geom, q, w, M):
    """The joint-space mass matrix by the composite-rigid-body algorithm (composites in w[:, 36:72])."""
    n = ints.shape[0]
    for i in range(n):
        _joint(ints, geom, q, i, w)
        for a in range(36):
            w[i, 36 + a] = geom[i, 15 + a]
    X = np.zeros((6, 6))
    T = np.zeros((6, 6))
    for i in range(n - 1, -1, -1):
        p = ints[i, 0]
        if p >= 0:
            _transform_inertia_add(w, i, w[i, 36:72], w[p], 36, X, T)
    F = np.zeros(6)
    G = np.zeros(6)
    for i in range(n):
        jt = ints[i, 1]
        if jt == FIX:
            continue
        k = ints[i, 2]
        off = 0 if jt == REV else 3
        ax, ay, az = geom[i, 12], geom[i, 13], geom[i, 14]
        for a in range(6):
            F[a] = w[i, 36 + 6 * a + off] * ax + w[i, 36 + 6 * a + off + 1] * ay + w[i, 36 + 6 * a + off + 2] * az
        M[k, k] = F[off] * ax + F[off + 1] * ay + F[off + 2] * az
        j = i
        while ints[j, 0] >= 0:
            for a in range(6):
                G[a] = 0.0
            _force_to_parent_add(w, j, F, G, 0)
            for a in range(6):
                F[a] = G[a]
            j = ints[j, 0]
            jtj = ints[j, 1]
            if jtj != FIX:
                o = 0 if jtj == REV else 3
                val = F[o] * geom[j, 12] + F[o + 1] * geom[j, 13] + F[o + 2] * geom[j, 14]
                M[k, ints[j, 2]] = val
                M[ints[j, 2], k] = val
    return M


@njit(cache=CACHE)
def world_kinematics(ints, geom, q, qd, qdd, w, R, pos, omega, vel, alpha, acc):
    """World-frame pose (R, pos), angular velocity and acceleration, and classical velocity and
    acceleration of every body-frame origin (no gravity)."""
    n = ints.shape[0]
    zero = np.zeros(3)
    _forward_pass(ints, geom, zero, q, qd, qdd, w, True)
    for i in range(n):
        p = ints[i, 0]
        for a in range(3):
            for b in range(3):
                if p >= 0:
                    s = 0.0
                    for c in range(3):
                        s += R[p, a, c] * w[i, 3 * c + b]
                    R[i, a, b] = s
                else:
                    R[i, a, b] = w[i, 3 * a + b]
        for a in range(3):
            if p >= 0:
                s = pos[p, a]
                for c in range(3):
                    s += R[p, a, c] * w[i, 9 + c]
                pos[i, a] = s
            else:
                pos[i, a] = w[i, 9 + a]
        ox, oy, oz, vx, vy, vz = w[i, 12], w[i, 13], w[i, 14], w[i, 15], w[i, 16], w[i, 17]
        # classical acceleration of the origin = spatial linear acceleration + ω × v
        cx = w[i, 21] + oy * vz - oz * vy
        cy = w[i, 22] + oz * vx - ox * vz
        cz = w[i, 23] + ox * vy - oy * vx
        for a in range(3):
            omega[i, a] = R[i, a, 0] * ox + R[i, a, 1] * oy + R[i, a, 2] * oz
            vel[i, a] = R[i, a, 0] * vx + R[i, a, 1] * vy + R[i, a, 2] * vz
            alpha[i, a] = R[i, a, 0] * w[i, 18] + R[i, a, 1] * w[i, 19] + R[i, a, 2] * w[i, 20]
            acc[i, a] = R[i, a, 0] * cx + R[i, a, 1] * cy + R[i, a, 2] * cz
