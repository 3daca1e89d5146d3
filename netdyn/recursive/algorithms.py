"""The recursive algorithms on a :class:`~netdyn.recursive.model.TreeModel`: free functions, O(n).

Each function takes the model and its :class:`~netdyn.recursive.model.TreeData` workspace and
runs the compiled kernel (:mod:`netdyn.recursive.kernels`); the numpy reference
(:mod:`netdyn.recursive.reference`) is the same mathematics, kept for the tests.

>>> import numpy as np
>>> from netdyn.recursive import TreeModel, TreeData, rnea, aba
>>> m = TreeModel.chain([1.0, 1.0], [1.0, 1.0]); d = TreeData(m)
>>> qdd = aba(m, d, [0.3, -0.2], [0.1, 0.5], [0.0, 0.0])
>>> bool(np.allclose(rnea(m, d, [0.3, -0.2], [0.1, 0.5], qdd), 0.0, atol=1e-12))
True
"""
from __future__ import annotations

import numpy as np

from netdyn.errors import ModelError

import netdyn.recursive.kernels as K
import netdyn.recursive.planar_kernels as P

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # names for the hints only (annotations are not evaluated)
    from typing import Any
    from netdyn.hints import ArrayLike
    from netdyn.recursive.model import TreeData, TreeModel


def _vec(model, x, what):
    x = np.ascontiguousarray(x, dtype=float).reshape(-1)
    if x.size != model.nq:
        raise ModelError(f"{what} has {x.size} entries; the tree has {model.nq} joint coordinates "
                         f"({model.coordinate_joints})")
    return x


def _fext(model, data, fext):
    if fext is None:
        if data.fext.any():
            data.fext[:] = 0.0
        return data.fext
    f = np.ascontiguousarray(fext, dtype=float)
    if f.shape != (model.n, 6):
        raise ModelError(f"fext must have shape ({model.n}, 6): a body-frame wrench [n; f] per body, got {f.shape}")
    return f


def rnea(model: TreeModel, data: TreeData, q: ArrayLike, qd: ArrayLike, qdd: ArrayLike,
         fext: Any = None) -> np.ndarray:
    """Joint efforts ``tau = M(q) qdd + h(q, qd) − Σ Jᵢᵀ fextᵢ`` (recursive Newton–Euler).

    ``fext``: optional external wrenches ``[n; f]`` per body, body frame, about the body origin.
    The transmitted joint wrenches stay in ``data.work[:, 30:36]`` (body frame of each child).

    >>> import numpy as np
    >>> from netdyn.recursive import TreeModel, TreeData
    >>> m = TreeModel.chain([1.0, 1.0], [1.0, 1.0])          # a planar double pendulum
    >>> data = TreeData(m)
    >>> q, qd = np.array([0.3, -0.2]), np.array([0.5, 1.0])
    >>> rnea(m, data, q, qd, np.zeros(2)).round(4)             # efforts for zero acceleration
    array([19.1369,  4.8557])
    """
    q, qd, qdd = _vec(model, q, "q"), _vec(model, qd, "qd"), _vec(model, qdd, "qdd")
    return K.rnea(model.ints, model.geom, model.gravity, q, qd, qdd, _fext(model, data, fext), data.work,
                  data.tau).copy()


def rnea_motion(model: TreeModel, data: TreeData, Q: ArrayLike, QD: ArrayLike, QDD: ArrayLike) -> np.ndarray:
    """:func:`rnea` (no external wrenches) at every time of a motion: ``Q, QD, QDD`` are ``(nq, times)``, the
    efforts too. One compiled call for all the times (no Python per time).

    >>> import numpy as np
    >>> from netdyn.recursive import TreeModel, TreeData
    >>> m = TreeModel.chain([1.0, 1.0], [1.0, 1.0]); d = TreeData(m)
    >>> Q = np.array([[0.3, 0.0], [-0.2, 0.1]]); V = np.zeros((2, 2))
    >>> bool(np.allclose(rnea_motion(m, d, Q, V, V)[:, 0], rnea(m, d, Q[:, 0], V[:, 0], V[:, 0])))
    True
    """
    arrays = []
    for what, X in (("Q", Q), ("QD", QD), ("QDD", QDD)):
        X = np.asarray(X, dtype=float)
        if X.ndim != 2 or X.shape[0] != model.nq:
            raise ModelError(f"{what} has shape {X.shape}; a motion of the tree is (nq, times) with nq = {model.nq} "
                             f"({model.coordinate_joints})")
        arrays.append(np.ascontiguousarray(X.T))
    if arrays[0].shape != arrays[1].shape or arrays[0].shape != arrays[2].shape:
        raise ModelError(f"Q, QD and QDD have different shapes: {[a.T.shape for a in arrays]}")
    TAU = np.empty_like(arrays[0])
    if model.planar:  # the 3-D algebra of the plane: about a third of the arithmetic
        P.rnea_planar_many(model.ints, planar_geometry(model), model.gravity, *arrays,  # type: ignore[call-arg]
                           _fext(model, data, None), data.pwork, TAU)
    else:
        K.rnea_many(model.ints, model.geom, model.gravity, *arrays,  # type: ignore[call-arg]  # a numba dispatcher
                    _fext(model, data, None), data.work, TAU)
    return TAU.T.copy()


def planar_geometry(model):
    """The packed geometry of a planar tree for :mod:`netdyn.recursive.planar_kernels` (cached on the model)."""
    pg = getattr(model, "_pgeom", None)
    if pg is None:
        pg = model._pgeom = P.pack(model)
    return pg


def aba(model: TreeModel, data: TreeData, q: ArrayLike, qd: ArrayLike, tau: ArrayLike,
        fext: Any = None) -> np.ndarray:
    """Joint accelerations from the joint efforts (articulated-body algorithm; the 3-D planar kernel
    for a planar tree, the 6-D one otherwise).

    >>> import numpy as np
    >>> from netdyn.recursive import TreeModel, TreeData
    >>> m = TreeModel.chain([1.0, 1.0], [1.0, 1.0])          # a planar double pendulum
    >>> data = TreeData(m)
    >>> q, qd = np.array([0.3, -0.2]), np.array([0.5, 1.0])
    >>> qdd = aba(m, data, q, qd, np.zeros(2))                  # falling freely
    >>> np.allclose(rnea(m, data, q, qd, qdd), 0)
    True
    """
    q, qd, tau = _vec(model, q, "q"), _vec(model, qd, "qd"), _vec(model, tau, "tau")
    f = _fext(model, data, fext)
    if model.planar:
        return P.aba_planar(model.ints, planar_geometry(model), model.gravity, q, qd, tau, f, data.pwork,
                            data.qdd).copy()
    return K.aba(model.ints, model.geom, model.gravity, q, qd, tau, f, data.work, data.qdd).copy()


def crba(model: TreeModel, data: TreeData, q: ArrayLike) -> np.ndarray:
    """The joint-space mass matrix ``M(q)`` (composite-rigid-body algorithm).

    >>> import numpy as np
    >>> from netdyn.recursive import TreeModel, TreeData
    >>> m = TreeModel.chain([1.0, 1.0], [1.0, 1.0])          # a planar double pendulum
    >>> data = TreeData(m)
    >>> q, qd = np.array([0.3, -0.2]), np.array([0.5, 1.0])
    >>> crba(m, data, q).round(4)
    array([[2.6467, 0.8234],
           [0.8234, 0.3333]])
    """
    q = _vec(model, q, "q")
    return K.crba(model.ints, model.geom, q, data.work, data.M).copy()


def bias_forces(model: TreeModel, data: TreeData, q: ArrayLike, qd: ArrayLike) -> np.ndarray:
    """``h(q, qd)``: Coriolis, centrifugal and gravity efforts (``rnea`` with zero accelerations).

    >>> import numpy as np
    >>> from netdyn.recursive import TreeModel, TreeData
    >>> m = TreeModel.chain([1.0, 1.0], [1.0, 1.0])          # a planar double pendulum
    >>> data = TreeData(m)
    >>> q, qd = np.array([0.3, -0.2]), np.array([0.5, 1.0])
    >>> bias_forces(m, data, q, np.zeros(2)).round(4)          # gravity alone
    array([18.9383,  4.8805])
    """
    return rnea(model, data, q, qd, np.zeros(model.nq))


def forward_kinematics(model: TreeModel, data: TreeData, q: ArrayLike, qd: ArrayLike | None = None,
                       qdd: ArrayLike | None = None) -> TreeData:
    """World poses, velocities and accelerations of every body-frame origin, into ``data``.

    Fills ``data.R`` (n,3,3), ``data.p``, ``data.omega``, ``data.v`` (velocity of the origin),
    ``data.alpha``, ``data.acc`` (classical acceleration of the origin, gravity not included).

    >>> import numpy as np
    >>> from netdyn.recursive import TreeModel, TreeData
    >>> m = TreeModel.chain([1.0, 1.0], [1.0, 1.0])          # a planar double pendulum
    >>> data = TreeData(m)
    >>> q, qd = np.array([0.3, -0.2]), np.array([0.5, 1.0])
    >>> forward_kinematics(m, data, q, qd).p.round(4)          # the joints: origin, then the elbow
    array([[0.    , 0.    , 0.    ],
           [0.9553, 0.2955, 0.    ]])
    """
    q = _vec(model, q, "q")
    qd = np.zeros(model.nq) if qd is None else _vec(model, qd, "qd")
    qdd = np.zeros(model.nq) if qdd is None else _vec(model, qdd, "qdd")
    K.world_kinematics(model.ints, model.geom, q, qd, qdd, data.work, data.R, data.p, data.omega, data.v,
                       data.alpha, data.acc)
    return data


def _cross(a, b):
    """Row-wise cross products of (n, 3) arrays (np.cross costs more than the arithmetic here)."""
    return np.column_stack([a[:, 1] * b[:, 2] - a[:, 2] * b[:, 1], a[:, 2] * b[:, 0] - a[:, 0] * b[:, 2],
                            a[:, 0] * b[:, 1] - a[:, 1] * b[:, 0]])


def com_motion(model: TreeModel, data: TreeData) -> Any:
    """World position, velocity and acceleration of every centre of mass (after :func:`forward_kinematics`).

    >>> import numpy as np
    >>> from netdyn.recursive import TreeModel, TreeData
    >>> m = TreeModel.chain([1.0, 1.0], [1.0, 1.0])          # a planar double pendulum
    >>> data = TreeData(m)
    >>> q, qd = np.array([0.3, -0.2]), np.array([0.5, 1.0])
    >>> position, velocity, acceleration = com_motion(m, forward_kinematics(m, data, q, qd))
    >>> position.round(4)
    array([[0.4777, 0.1478, 0.    ],
           [1.4528, 0.3454, 0.    ]])
    """
    c = np.einsum("nij,nj->ni", data.R, model.com)
    w, al = data.omega, data.alpha
    pos = data.p + c
    wc = _cross(w, c)
    vel = data.v + wc
    acc = data.acc + _cross(al, c) + _cross(w, wc)
    return pos, vel, acc


def energy(model: TreeModel, data: TreeData, q: ArrayLike, qd: ArrayLike) -> tuple[float, float]:
    """``(T, V)``: kinetic energy and gravitational potential energy (zero at the world origin).

    >>> import numpy as np
    >>> from netdyn.recursive import TreeModel, TreeData
    >>> m = TreeModel.chain([1.0, 1.0], [1.0, 1.0])          # a planar double pendulum
    >>> data = TreeData(m)
    >>> q, qd = np.array([0.3, -0.2]), np.array([0.5, 1.0])
    >>> [round(e, 4) for e in energy(m, data, q, qd)]
    [0.9092, 4.8383]
    """
    forward_kinematics(model, data, q, qd)
    pos, vel, _ = com_motion(model, data)
    wb = np.einsum("nji,nj->ni", data.R, data.omega)  # body-frame angular velocities
    T = 0.5 * np.sum(model.mass * np.sum(vel * vel, axis=1)) + 0.5 * np.einsum("ni,nij,nj->", wb, model.inertia, wb)
    V = -float(np.sum(model.mass * (pos @ model.gravity)))
    return float(T), V
