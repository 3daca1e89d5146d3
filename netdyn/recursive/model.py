"""The constant description of a kinematic tree (``TreeModel``) and its reusable workspace (``TreeData``).

Pinocchio's Model/Data split: a :class:`TreeModel` holds numbers only (parent of each body,
joint type and axis, joint placement in the parent frame, mass, centre of mass and inertia in
the body frame, gravity, the cut joints that close loops); a :class:`TreeData` is made once per
model and reused by every call of the recursive algorithms (:mod:`netdyn.recursive.algorithms`).

Conventions (6-D spatial algebra, the plane being the special case ``z`` = normal):

* Bodies are numbered ``0 … n−1`` with ``parent[i] < i`` (``−1``: the ground). Body ``i``'s frame
  moves with joint ``i``: at ``q = 0`` it sits at ``translation[i]`` with orientation
  ``rotation[i]`` in the parent's frame; a revolute joint then turns it by ``q`` about ``axis[i]``
  (child-frame components, through the body-frame origin), a prismatic joint slides its origin by
  ``q`` along ``axis[i]``, a fixed joint holds it.
* Spatial vectors are ``[angular; linear]`` (twists ``[ω; v]``, wrenches ``[n; f]``), in body
  coordinates, about the body-frame origin. ``com[i]`` is the centre of mass in the body frame,
  ``inertia[i]`` the 3×3 inertia about the centre of mass in body axes.
* ``gravity`` is the acceleration of gravity in the world frame (``(0, −9.81, 0)``: along −y).

>>> import numpy as np
>>> m = TreeModel.chain([1.0, 1.0], [1.0, 1.0])          # a planar double pendulum
>>> m.n, m.nq, m.planar, m.parent.tolist()
(2, 2, True, [-1, 0])
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from netdyn.errors import ModelError

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # names for the hints only (annotations are not evaluated)
    from typing import Any

REVOLUTE, PRISMATIC, FIXED = 0, 1, 2
JOINT_TYPES = {"revolute": REVOLUTE, "prismatic": PRISMATIC, "fixed": FIXED}
CUT_KINDS = ("revolute", "prismatic", "weld", "spherical")


def skew(v):
    """The matrix ``[v]`` with ``[v] w = v × w``."""
    return np.array([[0.0, -v[2], v[1]], [v[2], 0.0, -v[0]], [-v[1], v[0], 0.0]])


def rot_z(angle):
    """Rotation by ``angle`` about z."""
    c, s = np.cos(angle), np.sin(angle)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def spatial_inertia(mass, com, inertia):
    """6×6 spatial inertia about the body-frame origin (``[angular; linear]`` order)."""
    c = skew(com)
    return np.block([[inertia - mass * c @ c, mass * c], [-mass * c, mass * np.eye(3)]])


def spatial_inertias(mass: np.ndarray, com: np.ndarray, inertia: np.ndarray) -> np.ndarray:
    """:func:`spatial_inertia` of n bodies at once: ``mass (n,)``, ``com (n, 3)``, ``inertia (n, 3, 3)`` → ``(n, 6, 6)``.

    >>> one = (np.array([2.0]), np.array([[0.1, 0.2, 0.3]]), np.eye(3)[None])
    >>> bool(np.allclose(spatial_inertias(*one)[0], spatial_inertia(2.0, one[1][0], np.eye(3))))
    True
    """
    n = len(mass)
    c = np.zeros((n, 3, 3))
    c[:, 0, 1], c[:, 0, 2], c[:, 1, 2] = -com[:, 2], com[:, 1], -com[:, 0]
    c[:, 1, 0], c[:, 2, 0], c[:, 2, 1] = com[:, 2], -com[:, 1], com[:, 0]
    m = np.asarray(mass, dtype=float)[:, None, None]
    out = np.zeros((n, 6, 6))
    out[:, :3, :3] = inertia - m * (c @ c)
    out[:, :3, 3:] = m * c
    out[:, 3:, :3] = -m * c
    out[:, 3:, 3:] = m * np.eye(3)
    return out


@dataclass
class CutJoint:
    """A joint left out of the spanning tree; it closes a loop with constraint equations.

    ``body_a``/``body_b`` are body indices (``−1``: ground); ``point_a``/``point_b`` the joint
    points in those body frames. ``kind``: ``"revolute"`` (the points coincide — planar: 2 rows;
    spatial: 3 rows, and ``axis`` (in body a) stays aligned with ``axis_b`` (in body b), 2 more rows),
    ``"spherical"`` (the points coincide, 3 rows), ``"prismatic"`` (planar only: ``point_b`` stays on
    the line of ``body_a`` through ``point_a`` along ``axis`` and the relative angle stays ``angle``,
    2 rows), ``"weld"`` (points coincide and the relative orientation is fixed — planar: relative angle
    ``angle``, 3 rows; spatial: body b's axes at ``rotation`` in body a's, 6 rows). Spatial angular
    rows hold dot products of body-fixed unit vectors at zero.

    >>> import numpy as np
    >>> pin = CutJoint("D", "revolute", 2, np.array([0.5, 0, 0]), -1, np.array([1.0, 0, 0]))
    >>> pin.rows                         # a planar pin closing a loop to the ground: x and y coincide
    2
    """

    name: str
    kind: str
    body_a: int
    point_a: np.ndarray
    body_b: int
    point_b: np.ndarray
    axis: np.ndarray = field(default_factory=lambda: np.array([1.0, 0.0, 0.0]))
    angle: float = 0.0
    axis_b: np.ndarray = None
    rotation: np.ndarray = None
    spatial: bool = False

    @property
    def rows(self):
        if self.spatial:
            return {"revolute": 5, "weld": 6, "spherical": 3}[self.kind]
        return {"revolute": 2, "prismatic": 2, "weld": 3, "spherical": 3}[self.kind]

    def packed(self):
        """``(ints, floats)`` rows for the compiled kernel: kind, bodies, spatial flag; points, axes,
        angle, axis_b, two unit vectors normal to the axis, the relative rotation (row-major)."""
        axis = np.asarray(self.axis, dtype=float)
        axis = axis / np.linalg.norm(axis)
        axis_b = axis if self.axis_b is None else np.asarray(self.axis_b, dtype=float)
        axis_b = axis_b / np.linalg.norm(axis_b)
        helper = np.eye(3)[int(np.argmin(np.abs(axis)))]
        u1 = np.cross(axis, helper)
        u1 /= np.linalg.norm(u1)
        u2 = np.cross(axis, u1)
        R0 = np.eye(3) if self.rotation is None else np.asarray(self.rotation, dtype=float)
        ints = [CUT_KINDS.index(self.kind), self.body_a, self.body_b, int(self.spatial)]
        return ints, [*self.point_a, *self.point_b, *axis, self.angle, *axis_b, *u1, *u2, *R0.ravel()]


class TreeModel:
    """A numeric kinematic tree with optional cut joints; see the module docstring for the conventions.

    Build one with :meth:`from_bodies` (a direct description), :meth:`chain` (an n-link planar
    pendulum) or :func:`netdyn.recursive.planar.tree_from_network` (a planar network).

    >>> import numpy as np
    >>> m = TreeModel.from_bodies([
    ...     dict(name="arm", parent=None, joint="revolute", axis=(0, 0, 1), mass=2.0, com=(0.5, 0, 0),
    ...          inertia=np.diag([0, 1/6, 1/6]))], gravity=(0, -9.81, 0))
    >>> m.nq, m.body_names
    (1, ['arm'])
    """

    def __init__(self, parent: Any, jtype: Any, axis: Any, rotation: Any, translation: Any, mass: Any, com: Any,
                 inertia: Any, gravity: Any = (0, 0, -9.81), body_names: Any = None, joint_names: Any = None,
                 cuts: Any = ()) -> None:
        self.parent = np.asarray(parent, dtype=np.int64)
        n = self.n = self.parent.size
        self.jtype = np.asarray(jtype, dtype=np.int64).reshape(n)
        self.axis = np.asarray(axis, dtype=float).reshape(n, 3)
        self.rotation = np.asarray(rotation, dtype=float).reshape(n, 3, 3)
        self.translation = np.asarray(translation, dtype=float).reshape(n, 3)
        self.mass = np.asarray(mass, dtype=float).reshape(n)
        self.com = np.asarray(com, dtype=float).reshape(n, 3)
        self.inertia = np.asarray(inertia, dtype=float).reshape(n, 3, 3)
        self.gravity = np.asarray(gravity, dtype=float).reshape(3)
        self.body_names = list(body_names) if body_names is not None else [f"body{i}" for i in range(n)]
        self.joint_names = list(joint_names) if joint_names is not None else [f"joint{i}" for i in range(n)]
        self.cuts = list(cuts)
        self._check()
        self.qindex = np.full(n, -1, dtype=np.int64)
        moving = np.flatnonzero(self.jtype != FIXED)
        self.qindex[moving] = np.arange(moving.size)
        self.nq = int(moving.size)
        self.coordinate_joints = [self.joint_names[i] for i in moving]
        self.ancestors = np.zeros((n, n), dtype=bool)  # ancestors[b, i]: joint i moves body b
        for i in range(n):
            if self.parent[i] >= 0:
                self.ancestors[i] = self.ancestors[self.parent[i]]
            self.ancestors[i, i] = True
        self.planar = self._is_planar()
        for c in self.cuts:
            c.spatial = not self.planar
            if c.kind == "prismatic" and c.spatial:
                raise ModelError(f"cut joint {c.name!r}: a prismatic cut joint is offered for planar trees only; "
                                 "this tree moves in space (keep the slide in the tree and cut another joint)")
        self.spatial_inertias = spatial_inertias(self.mass, self.com, self.inertia)
        self.ints = np.ascontiguousarray(np.column_stack([self.parent, self.jtype, self.qindex]).astype(np.int64))
        self.geom = np.ascontiguousarray(np.column_stack([
            self.rotation.reshape(n, 9), self.translation, self.axis, self.spatial_inertias.reshape(n, 36)]))
        self.m = int(sum(c.rows for c in self.cuts))
        packed = [c.packed() for c in self.cuts]
        self.cut_ints = np.array([p[0] for p in packed], dtype=np.int64).reshape(-1, 4)
        self.cut_geom = np.array([p[1] for p in packed], dtype=float).reshape(-1, 28)

    # ---------------------------------------------------------------- validation
    def _check(self):
        n = self.n
        R, moving = self.rotation, self.jtype != FIXED
        norms = np.linalg.norm(self.axis, axis=1)
        sym = (self.inertia + np.swapaxes(self.inertia, 1, 2)) / 2
        bad = ((self.parent < -1) | (self.parent >= np.arange(n)) | ~np.isin(self.jtype, (REVOLUTE, PRISMATIC, FIXED))
               | (moving & (np.abs(norms - 1) > 1e-12))
               | (np.max(np.abs(R @ np.swapaxes(R, 1, 2) - np.eye(3)), axis=(1, 2), initial=0.0) > 1e-9)
               | (np.linalg.det(R) < 0) | (self.mass < 0)
               | (np.min(np.linalg.eigvalsh(sym), axis=1, initial=0.0) < -1e-12)) if n else np.zeros(0, bool)
        for i in np.flatnonzero(bad):  # the bodies the vectorised test flags, one by one for the message
            name = self.body_names[i] if i < len(self.body_names) else i
            if not -1 <= self.parent[i] < i:
                raise ModelError(f"body {name!r}: its parent index {self.parent[i]} must come before it "
                                 f"(−1 for the ground); number the bodies from the root outwards")
            if self.jtype[i] not in (REVOLUTE, PRISMATIC, FIXED):
                raise ModelError(f"joint of body {name!r}: unknown joint type {self.jtype[i]}; use "
                                 "'revolute', 'prismatic' or 'fixed'")
            if self.jtype[i] != FIXED and abs(np.linalg.norm(self.axis[i]) - 1) > 1e-12:
                norm = np.linalg.norm(self.axis[i])
                if norm == 0:
                    raise ModelError(f"joint of body {name!r}: the axis is the zero vector; give a direction")
                self.axis[i] = self.axis[i] / norm
            R = self.rotation[i]
            if np.max(np.abs(R @ R.T - np.eye(3))) > 1e-9 or np.linalg.det(R) < 0:
                raise ModelError(f"joint of body {name!r}: the placement rotation is not a rotation matrix")
            if self.mass[i] < 0:
                raise ModelError(f"body {name!r}: negative mass {self.mass[i]}; give a mass >= 0")
            if np.min(np.linalg.eigvalsh((self.inertia[i] + self.inertia[i].T) / 2)) < -1e-12:
                raise ModelError(f"body {name!r}: the inertia matrix is not positive semi-definite")
        for c in self.cuts:
            if c.kind not in CUT_KINDS:
                raise ModelError(f"cut joint {c.name!r}: unknown kind {c.kind!r}; use one of {CUT_KINDS}")
            for b in (c.body_a, c.body_b):
                if not -1 <= b < n:
                    raise ModelError(f"cut joint {c.name!r}: body index {b} is not in the tree (0 … {n - 1}, −1 ground)")

    def _is_planar(self):
        """True when every body moves in the x-y plane (revolute about z, in-plane slides and offsets)."""
        ez = np.array([0.0, 0.0, 1.0])
        for i in range(self.n):
            R = self.rotation[i]
            if abs(R[2, 2] - 1) > 1e-12 or abs(self.translation[i, 2]) > 1e-12:
                return False
            if self.jtype[i] == REVOLUTE and abs(abs(self.axis[i] @ ez) - 1) > 1e-12:
                return False
            if self.jtype[i] == PRISMATIC and abs(self.axis[i, 2]) > 1e-12:
                return False
        return bool(abs(self.gravity[2]) < 1e-15)

    # ---------------------------------------------------------------- constructors
    @classmethod
    def from_bodies(cls, bodies, gravity=(0, 0, -9.81), cuts=()):
        """A tree from a list of dicts, one per body, parents before children.

        Keys: ``name``; ``parent`` (a name, or ``None`` for the ground); ``joint`` (``"revolute"``,
        ``"prismatic"``, ``"fixed"``; default revolute); ``axis`` (child frame; default z);
        ``translation`` and ``rotation`` (placement of the body frame in the parent frame at
        ``q = 0``; a number for ``rotation`` is an angle about z); ``mass``; ``com``; ``inertia``
        (3×3, or a number: the z component of a planar body). ``cuts`` lists dicts with ``name``,
        ``kind``, ``body_a``, ``point_a``, ``body_b``, ``point_b`` (bodies by name, ``None`` for the
        ground), optional ``axis``, ``angle``, ``axis_b`` and ``rotation`` (see :class:`CutJoint`).

        >>> m = TreeModel.from_bodies([dict(name="a", parent=None, mass=1, com=(0.5, 0, 0), inertia=0.1)])
        >>> m.inertia[0].diagonal().tolist()
        [0.0, 0.0, 0.1]
        """
        index = {}
        cols = {k: [] for k in ("parent", "jtype", "axis", "rotation", "translation", "mass", "com", "inertia")}
        names, jnames = [], []
        for k, b in enumerate(bodies):
            name = b.get("name", f"body{k}")
            if name in index:
                raise ModelError(f"body {name!r} appears twice; give every body its own name")
            parent = b.get("parent")
            if parent is not None and parent not in index:
                raise ModelError(f"body {name!r}: parent {parent!r} is not an earlier body; list parents first "
                                 f"(the bodies so far: {sorted(index)})")
            joint = b.get("joint", "revolute")
            if joint not in JOINT_TYPES:
                raise ModelError(f"body {name!r}: unknown joint {joint!r}; use one of {sorted(JOINT_TYPES)}")
            index[name] = k
            names.append(name)
            jnames.append(b.get("joint_name", name))
            cols["parent"].append(-1 if parent is None else index[parent])
            cols["jtype"].append(JOINT_TYPES[joint])
            cols["axis"].append(np.asarray(b.get("axis", (0, 0, 1)), dtype=float))
            rot = b.get("rotation", np.eye(3))
            cols["rotation"].append(rot_z(rot) if np.ndim(rot) == 0 else np.asarray(rot, dtype=float))
            cols["translation"].append(np.asarray(b.get("translation", (0, 0, 0)), dtype=float))
            cols["mass"].append(float(b.get("mass", 0.0)))
            cols["com"].append(np.asarray(b.get("com", (0, 0, 0)), dtype=float))
            inertia = b.get("inertia", 0.0)
            cols["inertia"].append(np.diag([0.0, 0.0, float(inertia)]) if np.ndim(inertia) == 0
                                   else np.asarray(inertia, dtype=float))

        cut_list = cut_joints(cuts, index)
        return cls(cols["parent"], cols["jtype"], np.array(cols["axis"]), np.array(cols["rotation"]),
                   np.array(cols["translation"]), cols["mass"], np.array(cols["com"]), np.array(cols["inertia"]),
                   gravity=gravity, body_names=names, joint_names=jnames, cuts=cut_list)

    @classmethod
    def chain(cls, masses, lengths, g=9.81):
        """The planar n-link pendulum of the benchmarks (relative angles, slender links, gravity −y).

        >>> TreeModel.chain([1.0] * 3, [0.5] * 3).translation[:, 0].tolist()
        [0.0, 0.5, 0.5]
        """
        masses, lengths = np.asarray(masses, dtype=float), np.asarray(lengths, dtype=float)
        bodies = []
        for i, (m, l) in enumerate(zip(masses, lengths)):
            bodies.append(dict(name=f"link{i + 1}", parent=f"link{i}" if i else None,
                               translation=(lengths[i - 1] if i else 0.0, 0, 0), mass=m, com=(l / 2, 0, 0),
                               inertia=np.diag([0.0, m * l * l / 12, m * l * l / 12])))
        return cls.from_bodies(bodies, gravity=(0, -g, 0))

    def __repr__(self):
        kind = "planar" if self.planar else "spatial"
        return f"TreeModel({self.n} bodies, {self.nq} coordinates, {len(self.cuts)} cut joint(s), {kind})"


def cut_joints(cuts: Any, index: dict[str, int]) -> list[CutJoint]:
    """:class:`CutJoint` records from the dicts :meth:`TreeModel.from_bodies` takes (bodies by name, ``index``:
    name -> tree index).

    >>> cut_joints([dict(name="C", kind="revolute", body_a="b", point_a=(1, 0), body_b=None, point_b=(2, 0))],
    ...            {"b": 0})[0].body_b
    -1
    """
    def body(ref, cut):
        if ref is None:
            return -1
        if ref not in index:
            raise ModelError(f"cut joint {cut!r} names body {ref!r}, which is not in the tree")
        return index[ref]

    return [CutJoint(c["name"], c["kind"], body(c.get("body_a"), c["name"]), _vec3(c["point_a"]),
                     body(c.get("body_b"), c["name"]), _vec3(c["point_b"]),
                     _vec3(c.get("axis", (1, 0, 0))), float(c.get("angle", 0.0)),
                     None if c.get("axis_b") is None else _vec3(c["axis_b"]),
                     None if c.get("rotation") is None else np.asarray(c["rotation"], dtype=float))
            for c in cuts]


def _vec3(v):
    v = np.asarray(v, dtype=float).ravel()
    return np.concatenate([v, np.zeros(3 - v.size)]) if v.size < 3 else v


class TreeData:
    """The workspace of a :class:`TreeModel`: arrays made once, overwritten by every call.

    >>> d = TreeData(TreeModel.chain([1.0], [1.0]))
    >>> d.work.shape, d.fext.shape
    ((1, 90), (1, 6))
    """

    WORK = 90  # per body: E 9, r 3, v 6, a 6, c 6, f 6, IA 36, pA 6, U 6, D 1, u 1, spare 3

    def __init__(self, model: TreeModel) -> None:
        n = model.n
        self.work = np.zeros((n, self.WORK))
        self.fext = np.zeros((n, 6))
        self.pwork = np.zeros((n, 30))  # the planar kernels' workspace (netdyn.recursive.planar_kernels)
        self.tau = np.zeros(model.nq)
        self.qdd = np.zeros(model.nq)
        self.M = np.zeros((model.nq, model.nq))
        self.R = np.zeros((n, 3, 3))
        self.p = np.zeros((n, 3))
        self.omega = np.zeros((n, 3))
        self.v = np.zeros((n, 3))
        self.alpha = np.zeros((n, 3))
        self.acc = np.zeros((n, 3))
