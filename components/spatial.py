"""Spatial (3-D) rigid bodies, the general relative-pose joint, its named cases, drivers and loads.

A :class:`RigidBody` is a graph node. Its coordinates locate the *origin of the
body frame* (``x_<b>``, ``y_<b>``, ``z_<b>``, global frame) and its orientation by
Euler parameters (a unit quaternion) ``e0_<b>, e1_<b>, e2_<b>, e3_<b>`` with the
norm constraint ``e·e − 1 = 0`` (label ``"<b>[norm]"``). The centre of mass is
at ``com`` in the body frame (default: the origin), the inertia tensor is about
the centre of mass in body axes. Every point (joint frames, force points) is
given in the body frame. ``"ground"`` (alias ``"0"``) is the fixed frame.

Why Euler parameters: they are the only singularity-free description of
orientation by so few coordinates (4, one constraint), the rotation matrix is
*quadratic* in them (no trigonometric functions, so the derivation stays
polynomial and fast) and so is every joint measure below.

The general :class:`Joint` (Masarati & Morandini's relative-pose joint, MBDyn's
``total joint``) measures, between frame ``a`` (on ``body_a``) and frame ``b``
(on ``body_b``):

* the relative position ``d = R_aᵀ (P_b − P_a)`` of the origin of frame b in frame a;
* the orientation error ``E = R_rel R_p(t)ᵀ``, ``R_rel = R_aᵀ R_b``, by its Euler
  vector. In the constraint it enters through ``2 vec(q_E)`` (twice the vector
  part of the Euler parameters of ``E``): it vanishes exactly where the Euler
  vector does, has the same Jacobian on the constraint manifold (so the same
  reactions), is polynomial in the coordinates, and — being 4π-periodic in the
  rotation angle and continuous in the coordinates — needs no unwrapping when a
  prescribed rotation passes π or turns many times (MBDyn unwraps the Euler vector
  of ``R_Δ`` for the same purpose). A prescribed component uses ``2 w_E vec(q_E)``
  (insensitive to the sign of the quaternion, unit gain, so the effort is ``−λ``).

Each of the six components is free (``None``), held at zero (``0``) or
prescribed (a number, a sympy expression of :data:`netdyn.t` or a callable of t).
The named joints (:class:`Revolute`, :class:`Prismatic`, :class:`Cylindrical`,
:class:`Spherical`, :class:`Planar`, :class:`Fixed`, :class:`ConstantVelocity`)
are the general joint with a mask; :class:`Universal` (a Cardan joint) is the one
that is not a mask of the Euler vector and holds one dot product instead.

Sign conventions
----------------
* A joint's axis is the z axis of its frames; ``axis=`` builds both frames so that
  the joint coordinate is zero when the two bodies are aligned.
* A joint's reaction is the force and moment (about the origin of frame b) that
  ``body_a`` exerts on ``body_b``, in frame a.
* Efforts (forces, torques, joint actuators) do positive work on their own displacement.

>>> from netdyn import Network
>>> from netdyn.components.spatial import RigidBody, Spherical, Gravity
>>> net = Network()
>>> _ = net.add(RigidBody("bob", mass=1.0, inertia=(1e-3, 1e-3, 1e-3)), Gravity(),
...             Spherical("S", "ground", (0, 0, 0), "bob", (0, 0, 1)))
>>> net.model().coordinate_names
['x_bob', 'y_bob', 'z_bob', 'e0_bob', 'e1_bob', 'e2_bob', 'e3_bob']
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import sympy as sp

from netdyn.errors import ElementError
from netdyn.symbols import as_expr, t

from netdyn import rotations
from netdyn.rotations import axis_quat, frame_from_axis, quat_conj, quat_from_matrix, quat_matrix, quat_mul
from netdyn.rotations import checked_rotation as _rotation

from .base import Element, Port, Recorded, node_name, require_positive

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # names for the hints only (annotations are not evaluated)
    from typing import Any

rotation_vector = rotations.rotation_vector  # its home until 0.3 (tests and users import it from here)

AXES = ("x", "y", "z")
COMPONENTS = ("x", "y", "z", "rx", "ry", "rz")
IDENTITY_QUAT = (sp.S.One, sp.S.Zero, sp.S.Zero, sp.S.Zero)


def _vector3(name, what, v):
    try:
        out = tuple(as_expr(x, name, f"{what}[{k}]") for k, x in enumerate(v))
    except TypeError:
        raise ElementError(f"{name}: {what} must be a 3-vector (x, y, z), got {v!r}") from None
    if len(out) != 3:
        raise ElementError(f"{name}: {what} must be a 3-vector (x, y, z), got {v!r}")
    return out


def _frame(name, what, spec):
    """``(point, rotation matrix)`` from a point or a pair ``(point, rotation)``."""
    if isinstance(spec, (tuple, list)) and len(spec) == 2 and np.ndim(spec[1]) == 2:
        return _vector3(name, f"{what} point", spec[0]), _rotation(name, f"{what} rotation", spec[1])
    return _vector3(name, what, spec), np.eye(3)


# ------------------------------------------------------------------------------------------ bodies

@dataclass
class SpatialContribution:
    """An element's share of a spatial model.

    ``power`` lists ``(velocity, effort)`` pairs whose products ``effort · velocity`` are the power the
    element delivers; ``velocity`` is linear in the coordinate rates (a point velocity, an angular
    velocity), so the generalized efforts are ``∂(power)/∂q̇``.
    """

    T: sp.Expr = sp.S.Zero
    V: sp.Expr = sp.S.Zero
    D: sp.Expr = sp.S.Zero
    power: list = field(default_factory=list)
    constraints: list = field(default_factory=list)
    labels: list = field(default_factory=list)


def _inertia_values(name, inertia, frame):
    """``(J as 3×3 list of sympy numbers)``, checked symmetric positive semi-definite (one zero moment: a thin
    rod, whose spin about its axis must be idle) with the triangle inequality."""
    arr = np.array(inertia, dtype=object)
    if arr.shape == (3,):
        J = sp.diag(*[as_expr(v) for v in arr])
    elif arr.shape == (3, 3):
        J = sp.Matrix(3, 3, [as_expr(v) for v in arr.ravel()])
    else:
        raise ElementError(f"body {name!r}: inertia must be 3 principal moments or a 3×3 tensor, got {inertia!r}")
    if frame is not None:
        F = sp.Matrix(_rotation(f"body {name!r}", "inertia frame", frame).tolist())
        J = F * J * F.T
    if all(v.is_number for v in J):
        Jn = np.array(J.tolist(), dtype=float)
        if np.max(np.abs(Jn - Jn.T)) > 1e-12 * max(1.0, np.max(np.abs(Jn))):
            raise ElementError(f"body {name!r}: the inertia tensor is not symmetric; give J with J[i][j] = J[j][i]")
        w = np.linalg.eigvalsh(Jn)
        if w[0] < -1e-12 * max(1.0, w[-1]) or w[1] <= 0:
            raise ElementError(f"body {name!r}: the inertia tensor is not positive definite (principal moments "
                               f"{np.round(w, 12).tolist()}); every principal moment must be positive, but for one "
                               "zero moment about a thin rod's axis")
        tol = 1e-12 * w[-1]
        if w[0] + w[1] < w[2] - tol:
            raise ElementError(f"body {name!r}: principal moments {np.round(w, 12).tolist()} violate the triangle "
                               "inequality J1 + J2 ≥ J3, which every real mass distribution satisfies; check the values")
    return J


class RigidBody(Recorded):
    """A rigid body in space: ``mass``, ``inertia`` about its centre of mass (3 principal moments or a 3×3
    tensor in body axes; with ``frame`` the principal axes as columns of a rotation matrix; one moment may be
    zero — a thin rod, whose spin about its axis the joints must hold or leave idle between two ball joints)
    and the centre of mass ``com`` in the body frame.

    >>> RigidBody("top", mass=15.0, inertia=(0.234375, 0.46875, 0.234375), com=(0, 1, 0)).values["m"]
    15.0000000000000
    """

    is_body = True
    spatial = True
    domain = "spatial"
    couples = ()

    def __init__(self, name: str, mass: Any, inertia: Any, com: Any = (0, 0, 0), frame: str | None = None) -> None:
        if not isinstance(name, str) or not name:
            raise ElementError(f"body name must be a non-empty string, got {name!r}")
        if node_name(name) == "0":
            raise ElementError(f"{name!r} is the name of the fixed frame; give the body another name")
        require_positive(f"body {name!r}", "mass", mass)
        J = _inertia_values(name, inertia, frame)
        c = _vector3(f"body {name!r}", "com", com)
        self.name = name
        self.values = {"m": as_expr(mass)}
        for i, a in enumerate(AXES):
            for j, b in enumerate(AXES):
                if j >= i:
                    self.values[f"J{a}{b}"] = J[i, j]
        for a, v in zip(AXES, c):
            self.values[f"c{a}"] = v

    @staticmethod
    def inertia_matrix(values):
        """The 3×3 inertia tensor from a body's (resolved) values."""
        g = lambda a, b: values[f"J{a}{b}"] if f"J{a}{b}" in values else values[f"J{b}{a}"]
        return sp.Matrix(3, 3, [g(a, b) for a in AXES for b in AXES])

    @staticmethod
    def com(values):
        return sp.Matrix([values[f"c{a}"] for a in AXES])

    def contribute(self, pose, values):
        """Kinetic coenergy ``½ m v_c·v_c + ½ ωᵀ J ω`` at ``pose`` (a :class:`Pose`)."""
        c = self.com(values)
        rc = pose.r + pose.R * c if any(v != 0 for v in c) else pose.r
        v = rc.diff(t)
        w = pose.omega
        J = self.inertia_matrix(values)
        return SpatialContribution(T=values["m"] * (v.T * v)[0] / 2 + (w.T * J * w)[0] / 2)

    def __repr__(self):
        return f"RigidBody({self.name!r}, mass={self.values['m']})"


@dataclass
class Pose:
    """A body's (or ground's) pose as expressions: origin ``r``, Euler parameters ``q``, rotation ``R``,
    body-frame angular velocity ``omega``."""

    r: sp.Matrix
    q: tuple
    R: sp.Matrix
    omega: sp.Matrix

    def point(self, s):
        return self.r + self.R * sp.Matrix(s)


GROUND = Pose(sp.zeros(3, 1), IDENTITY_QUAT, sp.eye(3), sp.zeros(3, 1))


def body_omega(e):
    """Body-frame angular velocity ``2 G(e) ė`` of Euler parameters that are functions of t."""
    e0, e1, e2, e3 = e
    d = [x.diff(t) for x in e]
    G = sp.Matrix([[-e1, e0, e3, -e2], [-e2, -e3, e0, e1], [-e3, e2, -e1, e0]])
    return 2 * G * sp.Matrix(d)


# ------------------------------------------------------------------------------------------ elements

class SpatialElement(Element):
    """Base of the spatial elements: assembled from body poses by :mod:`netdyn.graph.spatial`."""

    spatial = True
    bodies: tuple = ()

    def __init__(self, name, bodies, values=None, edge=True):
        bodies = tuple(node_name(b) for b in bodies)
        ports = [Port("spatial", bodies[0], bodies[1])] if edge else []
        super().__init__(name, ports, values, terminals=bodies)
        self.bodies = bodies

    def contribute(self, ports, values):
        raise ElementError(f"{self.name} is a spatial element; it is assembled from body poses by netdyn.spatial")

    def spatial_contribution(self, ctx, values):  # pragma: no cover - interface
        raise NotImplementedError


FREE, HELD, PRESCRIBED = "free", "held", "prescribed"


def _mask(name, what, spec):
    """Three entries ``(kind, value)`` from a mask: a string of held axes ("xy"), a dict, or a 3-sequence."""
    if spec is None:
        spec = ""
    if isinstance(spec, str):
        bad = set(spec) - set("xyz")
        if bad:
            raise ElementError(f"{name}: {what}={spec!r}: a string lists the held axes, letters x, y, z only")
        return [(HELD, sp.S.Zero) if a in spec else (FREE, None) for a in AXES]
    if isinstance(spec, dict):
        unknown = set(spec) - set(AXES)
        if unknown:
            raise ElementError(f"{name}: {what} has unknown component(s) {sorted(unknown)}; use 'x', 'y', 'z'")
        spec = [spec.get(a, None) for a in AXES]
    try:
        items = list(spec)
    except TypeError:
        raise ElementError(f"{name}: {what} must be a string of held axes or 3 entries, got {spec!r}") from None
    if len(items) != 3:
        raise ElementError(f"{name}: {what} needs 3 entries (free None, held 0, or a function of t), got {spec!r}")
    out = []
    for a, v in zip(AXES, items):
        if v is None or (isinstance(v, str) and v == FREE):
            out.append((FREE, None))
        elif isinstance(v, str) and v == HELD:
            out.append((HELD, sp.S.Zero))
        elif isinstance(v, str):
            raise ElementError(f"{name}: {what} component {a} = {v!r}; use None/'free', 0/'held' or a function of t")
        else:
            e = as_expr(v)
            out.append((HELD, e) if e == 0 else (PRESCRIBED, e))
    return out


class Joint(SpatialElement):
    """The general relative-pose joint between frame ``a`` of ``body_a`` and frame ``b`` of ``body_b``.

    ``frame_a``/``frame_b``: a point in the body frame, or ``(point, R)`` with ``R`` the rotation of the joint
    frame in the body frame. ``position`` and ``rotation``: per component free (``None``), held (``0``) or
    prescribed (a function of ``t``); a string lists the held axes (``"xyz"`` all held, ``""`` all free).

    >>> j = Joint("J", "ground", (0, 0, 0), "b", (0, 0, 0), position="xyz", rotation="xy")
    >>> j.components, j.free
    (('x', 'y', 'z', 'rx', 'ry'), ('rz',))
    """

    is_joint = True

    def __init__(self, name: str, body_a: str, frame_a: Any, body_b: str, frame_b: Any, position: str = "xyz",
                 rotation: str = "xyz") -> None:
        super().__init__(name, (body_a, body_b))
        if self.bodies[0] == self.bodies[1]:
            raise ElementError(f"joint {name}: body_a and body_b are both {self.bodies[0]!r}; join two different bodies")
        self.point_a, self.R_a = _frame(name, "frame_a", frame_a)
        self.point_b, self.R_b = _frame(name, "frame_b", frame_b)
        self.q_a, self.q_b = quat_from_matrix(self.R_a), quat_from_matrix(self.R_b)
        self.spec = {}
        for prefix, mask in (("", _mask(name, "position", position)), ("r", _mask(name, "rotation", rotation))):
            for a, (kind, value) in zip(AXES, mask):
                self.spec[prefix + a] = (kind, value)
        for c, (kind, value) in self.spec.items():
            if kind == PRESCRIBED:
                self.values[f"{c}_p"] = value

    @property
    def components(self):
        """The constrained components (held or prescribed), in order x y z rx ry rz."""
        return tuple(c for c in COMPONENTS if self.spec[c][0] != FREE)

    @property
    def free(self):
        """The free components: the joint's relative coordinates."""
        return tuple(c for c in COMPONENTS if self.spec[c][0] == FREE)

    def constraint_labels(self, spec=None):
        spec = spec or self.spec
        return [f"{self.name}[{c}]" for c in COMPONENTS if spec[c][0] != FREE]

    # ---- measures
    def frames(self, pa, pb):
        """Global origins and rotations of frames a and b."""
        Ra = pa.R * sp.Matrix(self.R_a.tolist()) if not np.allclose(self.R_a, np.eye(3)) else pa.R
        Rb = pb.R * sp.Matrix(self.R_b.tolist()) if not np.allclose(self.R_b, np.eye(3)) else pb.R
        return pa.point(self.point_a), Ra, pb.point(self.point_b), Rb

    def relative_quat(self, pa, pb):
        """Euler parameters of ``R_rel = R_aᵀ R_b`` (frame b in frame a)."""
        return quat_mul(quat_mul(quat_conj(self.q_a), quat_mul(quat_conj(pa.q), pb.q)), self.q_b)

    def relative_position(self, pa, pb):
        Pa, Ra, Pb, _ = self.frames(pa, pb)
        return list(Ra.T * (Pb - Pa))

    def prescribed_quat(self, spec):
        """``q_p(t)`` of the prescribed rotation components (identity when none)."""
        comps = [(k, spec["r" + a][1]) for k, a in enumerate(AXES) if spec["r" + a][0] == PRESCRIBED]
        if not comps:
            return IDENTITY_QUAT
        if len(comps) == 1:
            return axis_quat(comps[0][0], comps[0][1])
        vec = [sp.S.Zero] * 3
        for k, v in comps:
            vec[k] = v
        phi = sp.sqrt(sum(v ** 2 for v in vec))
        return (sp.cos(phi / 2),) + tuple(v * sp.sinc(phi / 2) / 2 for v in vec)

    def error_quat(self, pa, pb, spec=None):
        return quat_mul(self.relative_quat(pa, pb), quat_conj(self.prescribed_quat(spec or self.spec)))

    def constraint_equations(self, pa, pb, spec=None):
        """The joint's constraints ``[position rows..., rotation rows...]`` at poses ``pa``, ``pb``."""
        spec = spec or self.spec
        rows = []
        if all(spec[a] == (HELD, 0) for a in AXES):  # coincident points: the same rows in global components
            Pa, _, Pb, _ = self.frames(pa, pb)
            rows.extend(Pb - Pa)
        elif any(spec[a][0] != FREE for a in AXES):
            d = self.relative_position(pa, pb)
            for k, a in enumerate(AXES):
                kind, value = spec[a]
                if kind != FREE:
                    rows.append(d[k] - value)
        rows.extend(self.rotation_equations(pa, pb, spec))
        return rows

    def rotation_equations(self, pa, pb, spec):
        if all(spec["r" + a][0] == FREE for a in AXES):
            return []
        qE = self.error_quat(pa, pb, spec)
        rows = []
        for k, a in enumerate(AXES):
            kind, _ = spec["r" + a]
            if kind == HELD:
                rows.append(2 * qE[k + 1])
            elif kind == PRESCRIBED:
                rows.append(2 * qE[0] * qE[k + 1])
        return rows

    def coordinate(self, pa, pb, component):
        """The measure of a free component: relative position, or for a single free rotation its angle
        ``2 atan2(q_k, q_0)`` of the orientation error (valid for |angle| < 2π)."""
        if component in AXES:
            return self.relative_position(pa, pb)[AXES.index(component)]
        free_rot = [c for c in self.free if c.startswith("r")]
        if free_rot != [component]:
            raise ElementError(f"joint {self.name}: component {component!r} is not its single free rotation "
                               f"(free components: {self.free}); a torsion element needs one free rotation")
        qE = self.error_quat(pa, pb)
        k = AXES.index(component[1]) + 1
        return 2 * sp.atan2(qE[k], qE[0])

    # ---- relative (joint-coordinate) formulation
    def relative_names(self, spec=None):
        """Names of the joint coordinates on a spanning tree (suffixes of ``<name>_<joint>``)."""
        spec = spec or self.spec
        names = [f"s{a}" for a in AXES if spec[a][0] == FREE]
        rot = [a for a in AXES if spec["r" + a][0] == FREE]
        if len(rot) == 1:
            names.append(f"theta{rot[0]}")
        elif rot:
            names.extend(["e0"] + [f"e{AXES.index(a) + 1}" for a in rot])
        return names

    def relative_parts(self, qs, spec=None):
        """``(d, q_rel, omega_rel, norm constraints)`` of the joint coordinates ``qs``: relative position in
        frame a, relative Euler parameters, relative angular velocity in frame a."""
        spec = spec or self.spec
        qs = list(qs)
        d = []
        for a in AXES:
            kind, value = spec[a]
            d.append(qs.pop(0) if kind == FREE else value)
        rot = [k for k, a in enumerate(AXES) if spec["r" + a][0] == FREE]
        qp = self.prescribed_quat(spec)
        norms = []
        if len(rot) == 1:
            theta = qs.pop(0)
            qE = axis_quat(rot[0], theta)
        elif rot:
            e0 = qs.pop(0)
            v = [sp.S.Zero] * 3
            for k in rot:
                v[k] = qs.pop(0)
            qE = (e0, *v)
            norms.append(e0 ** 2 + sum(x ** 2 for x in v) - 1)
        else:
            qE = IDENTITY_QUAT
        q_rel = quat_mul(qE, qp) if qp != IDENTITY_QUAT else qE
        if len(rot) == 1 and qp == IDENTITY_QUAT:
            w = [sp.S.Zero] * 3
            w[rot[0]] = theta.diff(t)
            omega = sp.Matrix(w)
        else:
            Rr = quat_matrix(q_rel)
            W = Rr.diff(t) * Rr.T
            omega = sp.Matrix([W[2, 1], W[0, 2], W[1, 0]])
        return sp.Matrix(d), q_rel, omega, norms


def _axis_frames(name, axis, axis_b=None):
    a = _vector3(name, "axis", axis)
    an = np.array([float(v) for v in a])
    if np.linalg.norm(an) == 0:
        raise ElementError(f"{name}: the axis is the zero vector; give a direction such as (0, 0, 1)")
    Fa = frame_from_axis(an)
    if axis_b is None:
        return Fa, Fa
    bn = np.array([float(v) for v in _vector3(name, "axis_b", axis_b)])
    if np.linalg.norm(bn) == 0:
        raise ElementError(f"{name}: axis_b is the zero vector")
    return Fa, frame_from_axis(bn)


class _Named(Joint):
    """A named joint: the general joint with a fixed mask and frames built from ``axis``."""

    position_mask = "xyz"
    rotation_mask = "xyz"
    drives = None  # the free component a ``motion=`` prescribes

    def __init__(self, name: str, body_a: str, point_a: Any, body_b: str, point_b: Any, axis: Any = (0, 0, 1),
                 axis_b: Any = None, motion: Any = None) -> None:
        Fa, Fb = _axis_frames(name, axis, axis_b)
        point_a, Fa = _given_frame(point_a, Fa)
        point_b, Fb = _given_frame(point_b, Fb)
        pos, rot = self.position_mask, self.rotation_mask
        if motion is not None:
            if self.drives is None:
                raise ElementError(f"{name}: a {type(self).__name__} joint has no single free motion to prescribe")
            pos, rot = _with_motion(pos, rot, self.drives, motion)
        super().__init__(name, body_a, (point_a, Fa), body_b, (point_b, Fb), position=pos, rotation=rot)


def _given_frame(point, default):
    """``(point, R)`` as given (a joint frame: its z is the joint axis), or ``(point, default)``."""
    if isinstance(point, (tuple, list)) and len(point) == 2 and np.ndim(point[1]) == 2:
        return point[0], point[1]
    return point, default


def _with_motion(pos, rot, component, motion):
    p = [0 if a in pos else None for a in AXES]
    r = [0 if a in rot else None for a in AXES]
    if component.startswith("r"):
        r[AXES.index(component[1])] = motion
    else:
        p[AXES.index(component)] = motion
    return p, r


class Revolute(_Named):
    """A hinge about ``axis`` (in both body frames; ``axis_b`` for body b) through ``point_a``/``point_b``:
    5 constraints, joint coordinate the angle ``theta`` about the axis. ``motion=`` prescribes the angle.

    >>> Revolute("A", "ground", (0, 0, 0), "arm", (0, 0, 0), axis=(1, 0, 0)).components
    ('x', 'y', 'z', 'rx', 'ry')
    """

    rotation_mask = "xy"
    drives = "rz"


class Prismatic(_Named):
    """A slider along ``axis``: 5 constraints, joint coordinate the slide ``s`` along the axis.

    >>> Prismatic("P", "ground", (0, 0, 0), "block", (0, 0, 0), axis=(1, 0, 0)).free
    ('z',)
    """

    position_mask = "xy"
    drives = "z"


class Cylindrical(_Named):
    """Slide along and turn about ``axis``: 4 constraints.

    >>> Cylindrical("C", "ground", (0, 0, 0), "rod", (0, 0, 0)).free
    ('z', 'rz')
    """

    position_mask = "xy"
    rotation_mask = "xy"


class Spherical(_Named):
    """A ball joint: the points coincide, rotation free (3 constraints).

    >>> Spherical("S", "ground", (0, 0, 0), "bob", (0, 0, 1)).components
    ('x', 'y', 'z')
    """

    rotation_mask = ""


class Planar(_Named):
    """Frame b moves in the plane of frame a normal to ``axis``, turning about it: 3 constraints.

    >>> Planar("Pl", "ground", (0, 0, 0), "puck", (0, 0, 0)).components
    ('z', 'rx', 'ry')
    """

    position_mask = "z"
    rotation_mask = "xy"


class Fixed(_Named):
    """A weld: 6 constraints.

    >>> len(Fixed("W", "ground", (0, 0, 0), "post", (0, 0, -1)).components)
    6
    """


class ConstantVelocity(_Named):
    """A homokinetic (constant-velocity) joint: points coincide, the Euler-vector component along
    ``axis`` is held (4 constraints) — Masarati & Morandini's ideal homokinetic joint.

    >>> ConstantVelocity("CV", "ground", (0, 0, 0), "shaft", (0, 0, 0)).free
    ('rx', 'ry')
    """

    rotation_mask = "z"


class Universal(Joint):
    """A Cardan joint: the points coincide and the fork axes ``axis_a`` (of body a) and ``axis_b`` (of
    body b), perpendicular in the reference configuration, stay perpendicular (4 constraints). Not a mask
    of the Euler vector (the Cardan rotation ``Rx(α) Ry(β)`` has a z component), so the rotation
    constraint is the dot product ``(R_a x̂)·(R_b ŷ) = 0`` of the joint frames (x = axis_a, y = axis_b).
    ``point_a``/``point_b`` may be ``(point, R)`` frames instead (x of frame a: the fork axis of body a,
    y of frame b: that of body b; the two need not be aligned at the start). Its two angles, components
    ``"rx"`` (α, about the fork of a) and ``"ry"`` (β, about the fork of b) with ``R_aᵀ R_b = Rx(α) Ry(β)``,
    take drivers and actuators.

    >>> Universal("U", "ground", (0, 0, 0), "shaft", (0, 0, 0)).components
    ('x', 'y', 'z', 'rz')
    """

    def __init__(self, name: str, body_a: str, point_a: Any, body_b: str, point_b: Any, axis_a: Any = (1, 0, 0),
                 axis_b: Any = (0, 1, 0)) -> None:
        xa = np.array([float(v) for v in _vector3(name, "axis_a", axis_a)])
        yb = np.array([float(v) for v in _vector3(name, "axis_b", axis_b)])
        if np.linalg.norm(xa) == 0 or np.linalg.norm(yb) == 0 or abs(xa @ yb) > 1e-9 * np.linalg.norm(xa) * np.linalg.norm(yb):
            raise ElementError(f"{name}: axis_a and axis_b must be non-zero and perpendicular, got {axis_a}, {axis_b}")
        xa, yb = xa / np.linalg.norm(xa), yb / np.linalg.norm(yb)
        F = np.column_stack([xa, yb, np.cross(xa, yb)])
        point_a, Fa = _given_frame(point_a, F)
        point_b, Fb = _given_frame(point_b, F)
        super().__init__(name, body_a, (point_a, Fa), body_b, (point_b, Fb), position="xyz", rotation="z")

    def rotation_equations(self, pa, pb, spec):
        _, Ra, _, Rb = self.frames(pa, pb)
        rows = [self.coordinate(pa, pb, c) - spec[c][1] for c in ("rx", "ry") if spec[c][0] == PRESCRIBED]
        return rows + [(Ra[:, 0].T * Rb[:, 1])[0]]

    def relative_names(self, spec=None):
        return ["alpha", "beta"]

    def relative_parts(self, qs, spec=None):
        alpha, beta = qs
        q_rel = quat_mul(axis_quat(0, alpha), axis_quat(1, beta))
        omega = sp.Matrix([alpha.diff(t), 0, 0]) + quat_matrix(axis_quat(0, alpha)) * sp.Matrix([0, beta.diff(t), 0])
        return sp.zeros(3, 1), q_rel, omega, []

    def coordinate(self, pa, pb, component):
        """The Cardan angle α (``"rx"``) or β (``"ry"``) of ``R_rel = R_aᵀ R_b = Rx(α) Ry(β)``."""
        if component not in ("rx", "ry"):
            raise ElementError(f"joint {self.name}: a Universal joint's free components are 'rx' (alpha) and "
                               f"'ry' (beta), not {component!r}")
        _, Ra, _, Rb = self.frames(pa, pb)
        R = Ra.T * Rb
        if component == "rx":
            return sp.atan2(-R[1, 2], R[2, 2])
        return sp.atan2(R[0, 2], R[0, 0])


# ------------------------------------------------------------------------------------------ drivers

class Driver(SpatialElement):
    """Prescribes a free ``component`` (``"x"``..``"z"``, ``"rx"``..``"rz"``) of a joint in time: ``motion``
    (a function of t), or ``speed`` (its rate, integrated from 0). The effort on the component is ``−λ``.

    >>> from netdyn import t
    >>> Driver("motor", "A", "rz", speed=2 * t).values["motion"]
    t**2
    """

    is_driver = True

    def __init__(self, name: str, joint: str, component: Any = "rz", motion: Any = None, speed: Any = None) -> None:
        if (motion is None) == (speed is None):
            raise ElementError(f"{name}: give exactly one of motion= (a function of t) or speed=")
        if component not in COMPONENTS:
            raise ElementError(f"{name}: component {component!r} is not one of {COMPONENTS}")
        if not isinstance(joint, str):
            raise ElementError(f"{name}: name the joint it drives (a string), got {joint!r}")
        if speed is not None:
            s = sp.Symbol("s_")
            motion = sp.integrate(as_expr(speed).subs(t, s), (s, 0, t))
        super().__init__(name, (), {"motion": motion}, edge=False)
        self.joint, self.component = joint, component


# ------------------------------------------------------------------------------------------ loads

class Gravity(SpatialElement):
    """Uniform gravity ``vector`` (default ``(0, 0, −9.81)``) on every body: ``V = −Σ m g·r_c``.

    >>> Gravity(vector=(0, 0, -9.81)).values["gz"]
    -9.81000000000000
    """

    def __init__(self, name: str = "gravity", vector: Any = (0, 0, -9.81)) -> None:
        g = _vector3(name, "vector", vector)
        super().__init__(name, (), {f"g{a}": v for a, v in zip(AXES, g)}, edge=False)

    def spatial_contribution(self, ctx, values):
        g = sp.Matrix([values[f"g{a}"] for a in AXES])
        V = []
        for b in ctx.bodies:
            bv = ctx.body_values(b)
            pose = ctx.pose(b)
            c = RigidBody.com(bv)
            rc = pose.r + pose.R * c if any(v != 0 for v in c) else pose.r
            V.append(-bv["m"] * (g.T * rc)[0])
        return SpatialContribution(V=sp.Add(*V))


class Force(SpatialElement):
    """A force ``F`` (3-vector) at ``point`` of ``body``, global frame (``frame="body"``: body frame).

    >>> Force("push", "block", (0, 0, 0), (10, 0, 0)).values["Fx"]
    10
    """

    def __init__(self, name: str, body: str, point: Any, F: Any, frame: str = "global") -> None:
        if frame not in ("global", "body"):
            raise ElementError(f"{name}: frame must be 'global' or 'body', got {frame!r}")
        F = _vector3(name, "F", F)
        super().__init__(name, (body,), {f"F{a}": v for a, v in zip(AXES, F)}, edge=False)
        self.point, self.frame = _vector3(name, "point", point), frame

    def spatial_contribution(self, ctx, values):
        pose = ctx.pose(self.bodies[0])
        F = sp.Matrix([values[f"F{a}"] for a in AXES])
        if self.frame == "body":
            F = pose.R * F
        v = pose.point(self.point).diff(t)
        return SpatialContribution(power=[(v[k], F[k]) for k in range(3)])


class Torque(SpatialElement):
    """A torque ``tau`` (3-vector) on ``body``, global frame (``frame="body"``: body frame); with
    ``reaction=`` the opposite torque acts on that body.

    >>> Torque("tau", "top", (0, 0, 1)).values["Tz"]
    1
    """

    def __init__(self, name: str, body: str, tau: Any, frame: str = "global", reaction: Any = None) -> None:
        if frame not in ("global", "body"):
            raise ElementError(f"{name}: frame must be 'global' or 'body', got {frame!r}")
        bodies = (body,) if reaction is None else (body, reaction)
        super().__init__(name, bodies, {f"T{a}": v for a, v in zip(AXES, _vector3(name, "tau", tau))}, edge=False)
        self.frame = frame

    def spatial_contribution(self, ctx, values):
        p0 = ctx.pose(self.bodies[0])
        T = sp.Matrix([values[f"T{a}"] for a in AXES])
        if self.frame == "body":
            T = p0.R * T
        power = []
        for b, sign in zip(self.bodies, (1, -1)):
            pose = ctx.pose(b)
            w = pose.R * pose.omega  # global angular velocity
            power.extend((w[k], sign * T[k]) for k in range(3))
        return SpatialContribution(power=power)


class _PointPair(SpatialElement):
    def __init__(self, name, body_a, point_a, body_b, point_b, values):
        super().__init__(name, (body_a, body_b), values)
        self.point_a = _vector3(name, "point_a", point_a)
        self.point_b = _vector3(name, "point_b", point_b)

    def _d(self, ctx):
        return ctx.pose(self.bodies[1]).point(self.point_b) - ctx.pose(self.bodies[0]).point(self.point_a)


class Spring(_PointPair):
    """A linear spring ``k`` of free length ``length`` between two body points: ``V = k (|d| − length)²/2``.

    >>> Spring("k1", "ground", (0, 0, 0), "bob", (0, 0, 0), k=100).values["k"]
    100
    """

    def __init__(self, name: str, body_a: str, point_a: Any, body_b: str, point_b: Any, k: Any,
                 length: Any = 0) -> None:
        require_positive(name, "k", k)
        require_positive(name, "length", length, allow_zero=True)
        super().__init__(name, body_a, point_a, body_b, point_b, {"k": k, "length": length})

    def spatial_contribution(self, ctx, values):
        d = self._d(ctx)
        d2 = (d.T * d)[0]
        if values["length"] == 0:
            return SpatialContribution(V=values["k"] * d2 / 2)
        return SpatialContribution(V=values["k"] * (sp.sqrt(d2) - values["length"]) ** 2 / 2)


class Damper(_PointPair):
    """A linear damper ``c`` on the rate of change of the distance between two body points.

    >>> Damper("c1", "ground", (0, 0, 0), "bob", (0, 0, 0), c=2).values["c"]
    2
    """

    def __init__(self, name: str, body_a: str, point_a: Any, body_b: str, point_b: Any, c: Any) -> None:
        require_positive(name, "c", c)
        super().__init__(name, body_a, point_a, body_b, point_b, {"c": c})

    def spatial_contribution(self, ctx, values):
        d = self._d(ctx)
        rate = (d.T * d.diff(t))[0] / sp.sqrt((d.T * d)[0])
        return SpatialContribution(D=values["c"] * rate ** 2 / 2)


class _OnJoint(SpatialElement):
    def __init__(self, name, joint, values, component=None):
        super().__init__(name, (), values, edge=False)
        if not isinstance(joint, str):
            raise ElementError(f"{name}: name the joint it acts on (a string), got {joint!r}")
        if component is not None and component not in COMPONENTS:
            raise ElementError(f"{name}: component {component!r} is not one of {COMPONENTS}")
        self.joint, self.component = joint, component


class JointActuator(_OnJoint):
    """An effort on a free component of a joint (a torque on a revolute's angle, a force on a slide);
    ``component=None``: the joint's first free rotation, else its first free component.

    >>> JointActuator("motor", "A", 1.5).values["effort"]
    1.50000000000000
    """

    def __init__(self, name: str, joint: str, effort: Any, component: Any = None) -> None:
        super().__init__(name, joint, {"effort": effort}, component)

    def spatial_contribution(self, ctx, values):
        q = ctx.joint_coordinate(self.joint, self.component, self.name)
        return SpatialContribution(power=[(q.diff(t), values["effort"])])


class JointSpring(_OnJoint):
    """A linear spring ``k`` on a free component of a joint, at rest at ``rest``: ``V = k (q − rest)²/2``.

    >>> JointSpring("k", "A", 2.0).values["k"]
    2.00000000000000
    """

    def __init__(self, name: str, joint: str, k: Any, rest: Any = 0, component: Any = None) -> None:
        require_positive(name, "k", k)
        super().__init__(name, joint, {"k": k, "rest": rest}, component)

    def spatial_contribution(self, ctx, values):
        q = ctx.joint_coordinate(self.joint, self.component, self.name)
        return SpatialContribution(V=values["k"] * (q - values["rest"]) ** 2 / 2)


class JointDamper(_OnJoint):
    """A linear damper ``c`` on the rate of a free component of a joint: ``D = c q̇²/2``.

    >>> JointDamper("c", "A", 0.1).values["c"]
    0.100000000000000
    """

    def __init__(self, name: str, joint: str, c: Any, component: Any = None) -> None:
        require_positive(name, "c", c)
        super().__init__(name, joint, {"c": c}, component)

    def spatial_contribution(self, ctx, values):
        q = ctx.joint_coordinate(self.joint, self.component, self.name)
        return SpatialContribution(D=values["c"] * q.diff(t) ** 2 / 2)
