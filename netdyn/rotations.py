"""Rotations of rigid bodies: Euler parameters (unit quaternions), rotation matrices and rotation vectors.

The spatial elements (:mod:`netdyn.components.spatial`) and the code above them share these; they know no
element. ``(e0, e1, e2, e3)`` is a unit quaternion with scalar part ``e0``.

>>> quat_mul(axis_quat(2, sp.pi / 2), axis_quat(2, sp.pi / 2)) == axis_quat(2, sp.pi)
True
"""
from __future__ import annotations

from typing import Any

import numpy as np
import sympy as sp

from netdyn.errors import ElementError

def quat_matrix(e: Any) -> Any:
    """Rotation matrix of Euler parameters ``(e0, e1, e2, e3)`` (homogeneous quadratic form).

    >>> quat_matrix((1, 0, 0, 0))
    Matrix([
    [1, 0, 0],
    [0, 1, 0],
    [0, 0, 1]])
    """
    e0, e1, e2, e3 = e
    return sp.Matrix([
        [e0**2 + e1**2 - e2**2 - e3**2, 2 * (e1 * e2 - e0 * e3), 2 * (e1 * e3 + e0 * e2)],
        [2 * (e1 * e2 + e0 * e3), e0**2 - e1**2 + e2**2 - e3**2, 2 * (e2 * e3 - e0 * e1)],
        [2 * (e1 * e3 - e0 * e2), 2 * (e2 * e3 + e0 * e1), e0**2 - e1**2 - e2**2 + e3**2]])


def quat_mul(p, q):
    """Hamilton product ``p ⊗ q`` (rotation ``R(p) R(q)``).

    >>> quat_mul((0, 1, 0, 0), (0, 0, 1, 0))
    (0, 0, 0, 1)
    """
    p0, p1, p2, p3 = p
    q0, q1, q2, q3 = q
    return (p0 * q0 - p1 * q1 - p2 * q2 - p3 * q3,
            p0 * q1 + p1 * q0 + p2 * q3 - p3 * q2,
            p0 * q2 - p1 * q3 + p2 * q0 + p3 * q1,
            p0 * q3 + p1 * q2 - p2 * q1 + p3 * q0)


def quat_conj(q):
    """Conjugate (inverse rotation) of a unit quaternion.

    >>> quat_conj((1, 2, 3, 4))
    (1, -2, -3, -4)
    """
    return (q[0], -q[1], -q[2], -q[3])


def axis_quat(k, angle):
    """Euler parameters of a rotation by ``angle`` about coordinate axis ``k`` (0, 1, 2).

    >>> axis_quat(2, sp.pi)
    (0, 0, 0, 1)
    """
    q = [sp.cos(angle / 2), sp.S.Zero, sp.S.Zero, sp.S.Zero]
    q[k + 1] = sp.sin(angle / 2)
    return tuple(q)


def quat_from_matrix(R):
    """Euler parameters (``e0 ≥ 0``) of a numeric rotation matrix (Shepperd's method), as sympy numbers.

    >>> quat_from_matrix(np.eye(3))
    (1, 0, 0, 0)
    """
    R = np.asarray(R, dtype=float)
    tr = np.trace(R)
    cands = [tr, R[0, 0], R[1, 1], R[2, 2]]
    i = int(np.argmax(cands))
    if i == 0:
        w = np.sqrt(1 + tr) / 2
        q = [w, (R[2, 1] - R[1, 2]) / (4 * w), (R[0, 2] - R[2, 0]) / (4 * w), (R[1, 0] - R[0, 1]) / (4 * w)]
    elif i == 1:
        x = np.sqrt(1 + 2 * R[0, 0] - tr) / 2
        q = [(R[2, 1] - R[1, 2]) / (4 * x), x, (R[0, 1] + R[1, 0]) / (4 * x), (R[0, 2] + R[2, 0]) / (4 * x)]
    elif i == 2:
        y = np.sqrt(1 + 2 * R[1, 1] - tr) / 2
        q = [(R[0, 2] - R[2, 0]) / (4 * y), (R[0, 1] + R[1, 0]) / (4 * y), y, (R[1, 2] + R[2, 1]) / (4 * y)]
    else:
        z = np.sqrt(1 + 2 * R[2, 2] - tr) / 2
        q = [(R[1, 0] - R[0, 1]) / (4 * z), (R[0, 2] + R[2, 0]) / (4 * z), (R[1, 2] + R[2, 1]) / (4 * z), z]
    if q[0] < 0:
        q = [-v for v in q]
    return tuple(_clean(v) for v in q)


def _clean(v):
    """A float as a sympy number, exact when it is (nearly) an integer."""
    r = round(v)
    return sp.Integer(r) if abs(v - r) < 1e-14 else sp.Float(v)


def rotation_vector(R: Any, previous: Any = None) -> Any:
    """Euler (rotation) vector of a numeric rotation matrix; with ``previous`` (the vector at the last
    step) it is unwrapped past π: the representative ``(φ + 2πk) n`` closest to ``previous``.

    >>> np.round(rotation_vector(np.diag([1.0, -1.0, -1.0])), 9).tolist()
    [3.141592654, 0.0, 0.0]
    """
    R = np.asarray(R, dtype=float)
    q = np.array([float(v) for v in quat_from_matrix(R)])
    s = np.linalg.norm(q[1:])
    if s < 1e-300:
        v = np.zeros(3)
        n = None
    else:
        n = q[1:] / s
        v = 2 * np.arctan2(s, q[0]) * n
    if previous is None:
        return v
    previous = np.asarray(previous, dtype=float)
    if n is None:
        n0 = np.linalg.norm(previous)
        if n0 == 0:
            return v
        n = previous / n0
    phi = float(v @ n)
    best = min((phi + 2 * np.pi * k for k in range(-50, 51)), key=lambda a: np.linalg.norm(a * n - previous))
    best_flip = min((-phi + 2 * np.pi * k for k in range(-50, 51)), key=lambda a: np.linalg.norm(-a * n - previous))
    cands = [best * n, -best_flip * n]
    return min(cands, key=lambda c: np.linalg.norm(c - previous))


def frame_from_axis(axis):
    """A rotation matrix whose third column is the unit ``axis`` (the minimal rotation from z).

    >>> np.round(frame_from_axis((1, 0, 0)), 12).tolist()
    [[0.0, 0.0, 1.0], [0.0, 1.0, 0.0], [-1.0, 0.0, 0.0]]
    """
    a = np.asarray(axis, dtype=float)
    a = a / np.linalg.norm(a)
    z = np.array([0.0, 0.0, 1.0])
    c = float(a @ z)
    if c > 1 - 1e-15:
        return np.eye(3)
    if c < -1 + 1e-15:
        return np.diag([1.0, -1.0, -1.0])
    v = np.cross(z, a)
    K = np.array([[0, -v[2], v[1]], [v[2], 0, -v[0]], [-v[1], v[0], 0]])
    return np.eye(3) + K + K @ K / (1 + c)


def checked_rotation(name, what, R):
    """``R`` as a numeric 3×3 rotation matrix, checked (orthonormal, det +1); an :class:`ElementError` naming
    ``name`` and ``what`` otherwise.

    >>> checked_rotation("J1", "frame", np.eye(3)).shape
    (3, 3)
    """
    try:
        M = np.array(R, dtype=float)
    except (TypeError, ValueError):
        raise ElementError(f"{name}: {what} must be a numeric 3×3 rotation matrix, got {R!r}") from None
    if M.shape != (3, 3):
        raise ElementError(f"{name}: {what} must be a 3×3 rotation matrix, got shape {M.shape}")
    err = np.max(np.abs(M.T @ M - np.eye(3)))
    if err > 1e-9 or np.linalg.det(M) < 0:
        raise ElementError(f"{name}: {what} is not a rotation matrix (‖RᵀR − I‖ = {err:.3g}, det = "
                           f"{np.linalg.det(M):.3g}); give orthonormal columns forming a right-handed frame")
    return M
