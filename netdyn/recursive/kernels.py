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

REV, PRI, FIX = 0, 1, 2


@njit(cache=True, inline="always")
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


@njit(cache=True, inline="always")
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


@njit(cache=True, inline="always")
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


@njit(cache=True)
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


@njit(cache=True, inline="always")
def _inertia_times(g, x, out, col):
    """out[col:col+6] = I6 x (I6 stored row-major in g[15:51])."""
    for a in range(6):
        s = 0.0
        for b in range(6):
            s += g[15 + 6 * a + b] * x[b]
        out[col + a] = s


@njit(cache=True, inline="always")
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


@njit(cache=True)
def rnea(ints, geom, gravity, q, qd, qdd, fext, w, tau):
    """Inverse dynamics: ``tau = M(q) qdd + h(q, qd) − Jᵀ fext``; the joint wrenches stay in w[:, 30:36]."""
    n = ints.shape[0]
    _forward_pass(ints, geom, gravity, q, qd, qdd, w, True)
    h = np.zeros(6)
    for i in range(n):
        g = geom[i]
        _inertia_times(g, w[i, 18:24], w[i], 30)
        _inertia_times(g, w[i, 12:18], h, 0)
        _cross_force_add(w[i, 12:18], h, w[i], 30)
        for a in range(6):
            w[i, 30 + a] -= fext[i, a]
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


@njit(cache=True, inline="always")
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


@njit(cache=True)
def aba(ints, geom, gravity, q, qd, tau, fext, w, qdd):
    """Forward dynamics by the articulated-body algorithm: ``qdd`` from ``tau`` and ``fext``."""
    n = ints.shape[0]
    _forward_pass(ints, geom, gravity, q, qd, qdd, w, False)
    h = np.zeros(6)
    for i in range(n):
        g = geom[i]
        for a in range(36):
            w[i, 36 + a] = g[15 + a]
        _inertia_times(g, w[i, 12:18], h, 0)
        for a in range(6):
            w[i, 72 + a] = -fext[i, a]
        _cross_force_add(w[i, 12:18], h, w[i], 72)
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


@njit(cache=True)
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


@njit(cache=True)
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


@njit(cache=True)
def chain_rhs(ints, geom, gravity, y, tau, fext, w, out):
    """``dy/dt`` of ``y = [q, qd]`` for a tree (the ODE right-hand side, one compiled call)."""
    nq = tau.size
    for a in range(nq):
        out[a] = y[nq + a]
    aba(ints, geom, gravity, y[:nq], y[nq:], tau, fext, w, out[nq:])
    return out


CUT_REVOLUTE, CUT_PRISMATIC, CUT_WELD, CUT_SPHERICAL = 0, 1, 2, 3


@njit(cache=True, inline="always")
def _pt(R, pos, omega, vel, alpha, acc, body, s, out):
    """out[0:3] position, [3:6] velocity, [6:9] bias acceleration of body point s (world)."""
    if body < 0:
        for a in range(3):
            out[a] = s[a]
            out[3 + a] = 0.0
            out[6 + a] = 0.0
        return
    r0 = R[body, 0, 0] * s[0] + R[body, 0, 1] * s[1] + R[body, 0, 2] * s[2]
    r1 = R[body, 1, 0] * s[0] + R[body, 1, 1] * s[1] + R[body, 1, 2] * s[2]
    r2 = R[body, 2, 0] * s[0] + R[body, 2, 1] * s[1] + R[body, 2, 2] * s[2]
    wx, wy, wz = omega[body, 0], omega[body, 1], omega[body, 2]
    ax, ay, az = alpha[body, 0], alpha[body, 1], alpha[body, 2]
    out[0], out[1], out[2] = pos[body, 0] + r0, pos[body, 1] + r1, pos[body, 2] + r2
    c0, c1, c2 = wy * r2 - wz * r1, wz * r0 - wx * r2, wx * r1 - wy * r0
    out[3], out[4], out[5] = vel[body, 0] + c0, vel[body, 1] + c1, vel[body, 2] + c2
    out[6] = acc[body, 0] + ay * r2 - az * r1 + wy * c2 - wz * c1
    out[7] = acc[body, 1] + az * r0 - ax * r2 + wz * c0 - wx * c2
    out[8] = acc[body, 2] + ax * r1 - ay * r0 + wx * c1 - wy * c0


@njit(cache=True, inline="always")
def _jac_add(ints, geom, anc, R, pos, body, P, sign, nvec, rowJ, kind):
    """rowJ += sign * (n · Jv(P)) (kind 0) or sign * (Jw)_z... (kind 1: n · Jw) for the joints moving body."""
    if body < 0:
        return
    n = ints.shape[0]
    for i in range(n):
        if not anc[body, i]:
            continue
        jt = ints[i, 1]
        if jt == FIX:
            continue
        k = ints[i, 2]
        ax, ay, az = geom[i, 12], geom[i, 13], geom[i, 14]
        ex = R[i, 0, 0] * ax + R[i, 0, 1] * ay + R[i, 0, 2] * az
        ey = R[i, 1, 0] * ax + R[i, 1, 1] * ay + R[i, 1, 2] * az
        ez = R[i, 2, 0] * ax + R[i, 2, 1] * ay + R[i, 2, 2] * az
        if kind == 0:
            if jt == REV:
                dx, dy, dz = P[0] - pos[i, 0], P[1] - pos[i, 1], P[2] - pos[i, 2]
                cx, cy, cz = ey * dz - ez * dy, ez * dx - ex * dz, ex * dy - ey * dx
            else:
                cx, cy, cz = ex, ey, ez
        else:
            if jt == REV:
                cx, cy, cz = ex, ey, ez
            else:
                cx, cy, cz = 0.0, 0.0, 0.0
        rowJ[k] += sign * (nvec[0] * cx + nvec[1] * cy + nvec[2] * cz)


@njit(cache=True, inline="always")
def _rotate(R, body, v, out):
    """out = R_body v (the ground: v)."""
    if body < 0:
        out[0], out[1], out[2] = v[0], v[1], v[2]
        return
    for a in range(3):
        out[a] = R[body, a, 0] * v[0] + R[body, a, 1] * v[1] + R[body, a, 2] * v[2]


@njit(cache=True)
def _dot_row(ints, geom, anc, R, pos, omega, alpha, ba, bb, xloc, yloc, k, phi, J, b, scratch):
    """Row k: φ = x·y with x = R_a xloc, y = R_b yloc (body-fixed unit vectors held at right angles)."""
    x, y, v, P = scratch[0], scratch[1], scratch[2], scratch[3]
    _rotate(R, ba, xloc, x)
    _rotate(R, bb, yloc, y)
    wa0 = omega[ba, 0] if ba >= 0 else 0.0
    wa1 = omega[ba, 1] if ba >= 0 else 0.0
    wa2 = omega[ba, 2] if ba >= 0 else 0.0
    wb0 = omega[bb, 0] if bb >= 0 else 0.0
    wb1 = omega[bb, 1] if bb >= 0 else 0.0
    wb2 = omega[bb, 2] if bb >= 0 else 0.0
    aa0 = alpha[ba, 0] if ba >= 0 else 0.0
    aa1 = alpha[ba, 1] if ba >= 0 else 0.0
    aa2 = alpha[ba, 2] if ba >= 0 else 0.0
    ab0 = alpha[bb, 0] if bb >= 0 else 0.0
    ab1 = alpha[bb, 1] if bb >= 0 else 0.0
    ab2 = alpha[bb, 2] if bb >= 0 else 0.0
    v[0] = y[1] * x[2] - y[2] * x[1]  # y × x
    v[1] = y[2] * x[0] - y[0] * x[2]
    v[2] = y[0] * x[1] - y[1] * x[0]
    phi[k] = x[0] * y[0] + x[1] * y[1] + x[2] * y[2]
    # ẋ = ω_a × x, ẏ = ω_b × y; b = (α_b − α_a)·(y × x) + (ω_b − ω_a)·(ẏ × x + y × ẋ)
    xd0, xd1, xd2 = wa1 * x[2] - wa2 * x[1], wa2 * x[0] - wa0 * x[2], wa0 * x[1] - wa1 * x[0]
    yd0, yd1, yd2 = wb1 * y[2] - wb2 * y[1], wb2 * y[0] - wb0 * y[2], wb0 * y[1] - wb1 * y[0]
    c0 = (yd1 * x[2] - yd2 * x[1]) + (y[1] * xd2 - y[2] * xd1)
    c1 = (yd2 * x[0] - yd0 * x[2]) + (y[2] * xd0 - y[0] * xd2)
    c2 = (yd0 * x[1] - yd1 * x[0]) + (y[0] * xd1 - y[1] * xd0)
    b[k] = (ab0 - aa0) * v[0] + (ab1 - aa1) * v[1] + (ab2 - aa2) * v[2] \
        + (wb0 - wa0) * c0 + (wb1 - wa1) * c1 + (wb2 - wa2) * c2
    _jac_add(ints, geom, anc, R, pos, bb, P, 1.0, v, J[k], 1)
    _jac_add(ints, geom, anc, R, pos, ba, P, -1.0, v, J[k], 1)


@njit(cache=True)
def cut_terms(ints, geom, anc, q, qd, w, R, pos, omega, vel, alpha, acc, cint, cgeom, phi, J, b):
    """φ, J = ∂φ/∂q and b = φ̈ − J q̈ of the cut joints (see :func:`netdyn.recursive.closed.constraint_terms`).

    cint rows: kind, body_a, body_b, spatial; cgeom rows: point_a 3, point_b 3, axis 3, angle, axis_b 3,
    u1 3, u2 3 (normal to the axis), relative rotation 9.
    """
    nq = q.size
    qdd = np.zeros(nq)
    world_kinematics(ints, geom, q, qd, qdd, w, R, pos, omega, vel, alpha, acc)
    Pa = np.zeros(9)
    Pb = np.zeros(9)
    e = np.zeros(3)
    scratch = np.zeros((4, 3))
    ej = np.zeros(3)
    for a in range(J.shape[0]):
        for c in range(nq):
            J[a, c] = 0.0
    k = 0
    for c in range(cint.shape[0]):
        kind, ba, bb, spatial = cint[c, 0], cint[c, 1], cint[c, 2], cint[c, 3]
        g = cgeom[c]
        _pt(R, pos, omega, vel, alpha, acc, ba, g[0:3], Pa)
        _pt(R, pos, omega, vel, alpha, acc, bb, g[3:6], Pb)
        if kind != CUT_PRISMATIC:
            rows = 3 if (kind == CUT_SPHERICAL or spatial == 1) else 2
            for r in range(rows):
                for a in range(3):
                    e[a] = 0.0
                e[r] = 1.0
                phi[k] = Pb[r] - Pa[r]
                b[k] = Pb[6 + r] - Pa[6 + r]
                _jac_add(ints, geom, anc, R, pos, bb, Pb, 1.0, e, J[k], 0)
                _jac_add(ints, geom, anc, R, pos, ba, Pa, -1.0, e, J[k], 0)
                k += 1
        else:
            if ba >= 0:
                ux = R[ba, 0, 0] * g[6] + R[ba, 0, 1] * g[7] + R[ba, 0, 2] * g[8]
                uy = R[ba, 1, 0] * g[6] + R[ba, 1, 1] * g[7] + R[ba, 1, 2] * g[8]
                wz, alz = omega[ba, 2], alpha[ba, 2]
            else:
                ux, uy, wz, alz = g[6], g[7], 0.0, 0.0
            e[0], e[1], e[2] = -uy, ux, 0.0  # normal n = ez × u
            # ṅ = ω × n, n̈ = α × n + ω × (ω × n) (planar: ω along z)
            ndx, ndy = -wz * e[1], wz * e[0]
            nddx, nddy = -alz * e[1] - wz * ndy, alz * e[0] + wz * ndx
            dx, dy = Pb[0] - Pa[0], Pb[1] - Pa[1]
            vx, vy = Pb[3] - Pa[3], Pb[4] - Pa[4]
            axx, ayy = Pb[6] - Pa[6], Pb[7] - Pa[7]
            phi[k] = e[0] * dx + e[1] * dy
            b[k] = nddx * dx + nddy * dy + 2 * (ndx * vx + ndy * vy) + e[0] * axx + e[1] * ayy
            _jac_add(ints, geom, anc, R, pos, bb, Pb, 1.0, e, J[k], 0)
            _jac_add(ints, geom, anc, R, pos, ba, Pb, -1.0, e, J[k], 0)  # body a's material point under Pb
            k += 1
        if spatial == 1 and kind == CUT_REVOLUTE:
            _dot_row(ints, geom, anc, R, pos, omega, alpha, ba, bb, g[13:16], g[10:13], k, phi, J, b, scratch)
            _dot_row(ints, geom, anc, R, pos, omega, alpha, ba, bb, g[16:19], g[10:13], k + 1, phi, J, b, scratch)
            k += 2
        elif spatial == 1 and kind == CUT_WELD:
            for i, j in ((0, 1), (1, 2), (2, 0)):
                for a in range(3):
                    e[a] = g[19 + 3 * a + i]  # column i of the relative rotation
                    ej[a] = 0.0
                ej[j] = 1.0
                _dot_row(ints, geom, anc, R, pos, omega, alpha, ba, bb, e, ej, k, phi, J, b, scratch)
                k += 1
        elif kind == CUT_PRISMATIC or kind == CUT_WELD:
            tha = 0.0 if ba < 0 else math.atan2(R[ba, 1, 0], R[ba, 0, 0])
            thb = 0.0 if bb < 0 else math.atan2(R[bb, 1, 0], R[bb, 0, 0])
            d = thb - tha - g[9]
            phi[k] = math.atan2(math.sin(d), math.cos(d))
            b[k] = (0.0 if bb < 0 else alpha[bb, 2]) - (0.0 if ba < 0 else alpha[ba, 2])
            e[0], e[1], e[2] = 0.0, 0.0, 1.0
            _jac_add(ints, geom, anc, R, pos, bb, Pb, 1.0, e, J[k], 1)
            _jac_add(ints, geom, anc, R, pos, ba, Pa, -1.0, e, J[k], 1)
            k += 1
