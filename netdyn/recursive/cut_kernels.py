"""Compiled (numba) kernel of the cut-joint constraint terms: φ, J = ∂φ/∂q and b = φ̈ − J q̈.

Works on the packed cut rows of a :class:`~netdyn.recursive.model.TreeModel` (``cut_ints``: kind,
body_a, body_b, spatial flag; ``cut_geom``: points, axes, angle, normals, relative rotation) after the
tree's world kinematics (:func:`netdyn.recursive.kernels.world_kinematics`). The numpy version is
:func:`netdyn.recursive.constraints.constraint_terms_reference`.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

#: numba caches on disk only under the package name: a cache written by a bare-name import of this file
#: (``python -m doctest path/to/it.py``) is found by the package import and fails to load there
CACHE = __name__.startswith("netdyn.")

from netdyn.recursive.kernels import FIX, REV, world_kinematics

CUT_REVOLUTE, CUT_PRISMATIC, CUT_WELD, CUT_SPHERICAL = 0, 1, 2, 3


@njit(cache=CACHE, inline="always")
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


@njit(cache=CACHE, inline="always")
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


@njit(cache=CACHE, inline="always")
def _rotate(R, body, v, out):
    """out = R_body v (the ground: v)."""
    if body < 0:
        out[0], out[1], out[2] = v[0], v[1], v[2]
        return
    for a in range(3):
        out[a] = R[body, a, 0] * v[0] + R[body, a, 1] * v[1] + R[body, a, 2] * v[2]


@njit(cache=CACHE)
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


@njit(cache=CACHE)
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
