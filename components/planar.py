"""Planar rigid bodies, joints, drivers and loads.

A :class:`RigidBody` is a graph node with the pose ``(x, y, theta)`` of its
body frame: the position of the frame's origin and its angle (absolute
coordinates ``x_<name>``, ``y_<name>``, ``theta_<name>``). The centre of mass is
at ``com`` in that frame — by default the origin, so the pose is the centre of
mass's; give ``com`` to use the frame a paper or drawing uses (a pivot, say). ``"ground"`` (alias ``"0"``) is the fixed
frame: its points are global coordinates. Joints are graph edges from
``body_a`` to ``body_b``; every other element names the bodies it acts on.

Sign conventions
----------------
* Angles are counter-clockwise from the global x axis; gravity acts along −y.
* Body points (of joints, springs, dampers, forces, blades, and ``com``) are given
  in the body's own frame, from its origin. A point ``s`` of body ``(x, y, theta)``
  is at ``(x, y) + R(theta) s``. ``inertia`` is about the centre of mass. (The
  spatial bodies use the same convention.)
* Joint coordinates: a :class:`Revolute` has ``theta_b − theta_a``; a
  :class:`Prismatic` or :class:`Slider` has ``s = u·(P_b − P_a)``, the distance of
  ``point_b`` from ``point_a`` along the axis ``u`` of ``body_a`` (global direction
  ``R(theta_a) u``); a slider's second coordinate is ``theta_b − theta_a``.
* A joint's reaction is the force (and moment about ``point_b``) that
  ``body_a`` exerts on ``body_b``, in the global frame.
* A :class:`Force`, :class:`Torque` or :class:`Actuator` effort does positive
  work on its own displacement (the point's position, the body angle, the joint
  coordinate).

>>> from netdyn import Network
>>> from netdyn.components.planar import RigidBody, Gravity, Revolute
>>> net = Network()
>>> _ = net.add(RigidBody("bar", mass=1.0, inertia=1/12), Gravity(),
...             Revolute("A", "ground", (0, 0), "bar", (-0.5, 0)))
>>> net.model().coordinate_names
['x_bar', 'y_bar', 'theta_bar']
"""
from __future__ import annotations

from dataclasses import dataclass, field

import sympy as sp

from netdyn.errors import ElementError
from netdyn.symbols import as_expr, t

from .base import Element, Port, Recorded, node_name, require_positive

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # names for the hints only (annotations are not evaluated)
    from typing import Any

GROUND_POSE = (sp.S.Zero, sp.S.Zero, sp.S.Zero)


def rotate(theta, s):
    """``R(theta) s`` for a 2-vector ``s``.

    >>> rotate(sp.pi / 2, (1, 0))
    (0, 1)
    """
    c, si = sp.cos(theta), sp.sin(theta)
    return (c * s[0] - si * s[1], si * s[0] + c * s[1])


def point(pose, s):
    """Global position of the body point ``s`` of a body at ``pose``."""
    r = rotate(pose[2], s)
    return (pose[0] + r[0], pose[1] + r[1])


def _vector(name, what, v):
    try:
        x, y = v
    except (TypeError, ValueError):
        raise ElementError(f"{name}: {what} must be a pair (x, y), got {v!r}") from None
    return (as_expr(x, name, f"{what} x"), as_expr(y, name, f"{what} y"))


@dataclass
class PlanarContribution:
    """An element's share of a planar model, in the poses of its bodies.

    ``work`` lists ``(displacement, effort)`` pairs: the effort does virtual work
    ``effort · δ(displacement)`` (a force component on a point coordinate, a torque on an angle).
    """

    T: sp.Expr = sp.S.Zero
    V: sp.Expr = sp.S.Zero
    D: sp.Expr = sp.S.Zero
    work: list = field(default_factory=list)
    constraints: list = field(default_factory=list)
    labels: list = field(default_factory=list)
    flow_constraints: list = field(default_factory=list)  # Pfaffian (nonholonomic) constraints, eq. (4.6)
    flow_labels: list = field(default_factory=list)


def centre_of_mass(pose, values):
    """Global position of a body's centre of mass: ``point(pose, com)`` (``com`` = origin by default).

    >>> centre_of_mass((1, 2, sp.pi / 2), {"m": 1, "I": 1, "cx": sp.Rational(1, 2), "cy": 0})
    (1, 5/2)
    """
    return point(pose, (values.get("cx", sp.S.Zero), values.get("cy", sp.S.Zero)))


class RigidBody(Recorded):
    """A rigid body in the plane: ``mass``, ``inertia`` about its centre of mass, and the centre of
    mass ``com`` in the body frame (default the frame's origin).

    The body's coordinates locate its frame's origin; every point of it (joints,
    springs, forces) is given in that frame. With ``com`` the frame can be the
    one a paper uses — a pivot or a drawing's origin — with no hand shifting.

    >>> RigidBody("crank", mass=1.0, inertia=0.1).values["m"]
    1.00000000000000
    >>> sorted(RigidBody("arm", 1.0, 0.1, com=(0.2, 0)).values)
    ['I', 'cx', 'cy', 'm']
    """

    is_body = True
    couples = ()  # like an element: it acts on no other element's ports

    def __init__(self, name: str, mass: Any, inertia: Any, com: Any = (0, 0)) -> None:
        if not isinstance(name, str) or not name:
            raise ElementError(f"body name must be a non-empty string, got {name!r}")
        if node_name(name) == "0":
            raise ElementError(f"{name!r} is the name of the fixed frame; give the body another name")
        require_positive(name, "mass", mass)
        require_positive(name, "inertia", inertia, allow_zero=True)
        self.name = name
        self.values = {"m": as_expr(mass), "I": as_expr(inertia)}
        cx, cy = _vector(name, "com", com)
        if cx != 0 or cy != 0:  # only then: models without com keep their parameters
            self.values.update(cx=cx, cy=cy)

    @property
    def com(self):
        """The centre of mass in the body frame."""
        return (self.values.get("cx", sp.S.Zero), self.values.get("cy", sp.S.Zero))

    def contribute(self, pose, values):
        """Kinetic coenergy of the body at ``pose`` (expressions of t): ``m|v_c|²/2 + I θ̇²/2``."""
        xc, yc = centre_of_mass(pose, values)
        return PlanarContribution(T=values["m"] * (xc.diff(t) ** 2 + yc.diff(t) ** 2) / 2
                                  + values["I"] * pose[2].diff(t) ** 2 / 2)

    def __repr__(self):
        extra = f", com=({self.com[0]}, {self.com[1]})" if "cx" in self.values else ""
        return f"RigidBody({self.name!r}, mass={self.values['m']}, inertia={self.values['I']}{extra})"


class PlanarElement(Element):
    """Base of the planar elements: assembled from body poses by :mod:`netdyn.planar`."""

    planar = True
    bodies: tuple = ()

    def __init__(self, name, bodies, values=None, edge=True):
        bodies = tuple(node_name(b) for b in bodies)
        ports = [Port("planar", bodies[0], bodies[1])] if edge else []
        super().__init__(name, ports, values, terminals=bodies)
        self.bodies = bodies

    def contribute(self, ports, values):
        raise ElementError(f"{self.name} is a planar element; it is assembled from body poses by netdyn.planar")

    def planar_contribution(self, ctx, values):  # pragma: no cover - interface
        """Return the :class:`PlanarContribution` given the assembly context (poses, bodies, joints)."""
        raise NotImplementedError


# ------------------------------------------------------------------------------------------ joints

class Joint(PlanarElement):
    """A joint between ``point_a`` of ``body_a`` and ``point_b`` of ``body_b`` (a graph edge).

    Subclasses give ``constraint_equations`` (absolute form), ``coordinates``
    (joint coordinates in the absolute poses), ``relative`` (names of the joint
    coordinates kept on a spanning tree) and ``child_pose`` (the pose of one body
    from the other and the joint coordinates).
    """

    is_joint = True
    relative = ()

    def __init__(self, name: str, body_a: str, point_a: Any, body_b: str, point_b: Any, values: Any = None) -> None:
        super().__init__(name, (body_a, body_b), values)
        self.point_a = _vector(name, "point_a", point_a)
        self.point_b = _vector(name, "point_b", point_b)

    def planar_contribution(self, ctx, values):
        pa, pb = ctx.pose(self.bodies[0]), ctx.pose(self.bodies[1])
        cons = self.constraint_equations(pa, pb, values)
        return PlanarContribution(constraints=cons, labels=self.constraint_labels())

    def constraint_labels(self):
        return [f"{self.name}[{c}]" for c in self.components]

    def points(self, pa, pb):
        return point(pa, self.point_a), point(pb, self.point_b)


class Revolute(Joint):
    """A pin: ``point_a`` of ``body_a`` and ``point_b`` of ``body_b`` coincide (2 constraints).

    >>> j = Revolute("A", "ground", (0, 0), "crank", (-0.5, 0))
    >>> j.bodies, j.components
    (('0', 'crank'), ('x', 'y'))
    """

    components = ("x", "y")
    relative = ("theta",)

    def constraint_equations(self, pa, pb, values):
        Pa, Pb = self.points(pa, pb)
        return [Pa[0] - Pb[0], Pa[1] - Pb[1]]

    def coordinates(self, pa, pb, values):
        return [pb[2] - pa[2]]

    def child_pose(self, parent, qs, values, parent_is_a):
        (q,) = qs
        if parent_is_a:
            Pa = point(parent, self.point_a)
            th = parent[2] + q
            r = rotate(th, self.point_b)
            return (Pa[0] - r[0], Pa[1] - r[1], th)
        Pb = point(parent, self.point_b)
        th = parent[2] - q
        r = rotate(th, self.point_a)
        return (Pb[0] - r[0], Pb[1] - r[1], th)


class _Sliding(Joint):
    """Shared geometry of joints where ``point_b`` moves on the line of ``body_a`` through ``point_a``."""

    def __init__(self, name, body_a, point_a, body_b, point_b, axis=(1, 0), values=None):
        super().__init__(name, body_a, point_a, body_b, point_b, values)
        ux, uy = _vector(name, "axis", axis)
        norm = sp.sqrt(ux ** 2 + uy ** 2)
        if norm == 0:
            raise ElementError(f"{name}: the axis is the zero vector; give a direction such as (1, 0)")
        self.axis = (ux / norm, uy / norm)

    def _frame(self, pa):
        u = rotate(pa[2], self.axis)
        return u, (-u[1], u[0])

    def _offset(self, pa, pb):
        Pa, Pb = self.points(pa, pb)
        return Pb[0] - Pa[0], Pb[1] - Pa[1]

    def _slide(self, parent, s, th_b, parent_is_a, values):
        """Pose of the other body given the parent's pose, the slide ``s`` and ``theta_b``."""
        if parent_is_a:
            u, _ = self._frame(parent)
            Pa = point(parent, self.point_a)
            r = rotate(th_b, self.point_b)
            return (Pa[0] + s * u[0] - r[0], Pa[1] + s * u[1] - r[1], th_b)
        th_a = th_b
        u, _ = self._frame((0, 0, th_a))
        Pb = point(parent, self.point_b)
        r = rotate(th_a, self.point_a)
        return (Pb[0] - s * u[0] - r[0], Pb[1] - s * u[1] - r[1], th_a)

    def coordinates(self, pa, pb, values):
        u, _ = self._frame(pa)
        d = self._offset(pa, pb)
        return [u[0] * d[0] + u[1] * d[1]] + ([pb[2] - pa[2]] if len(self.relative) > 1 else [])


class Prismatic(_Sliding):
    """``point_b`` slides on the axis of ``body_a`` through ``point_a``; no relative rotation
    (``theta_b − theta_a = angle``). 2 constraints; joint coordinate ``s``.

    >>> Prismatic("P", "ground", (0, 0), "block", (0, 0), axis=(1, 0)).components
    ('normal', 'angle')
    """

    components = ("normal", "angle")
    relative = ("s",)

    def __init__(self, name: str, body_a: str, point_a: Any, body_b: str, point_b: Any, axis: Any = (1, 0),
                 angle: Any = 0) -> None:
        super().__init__(name, body_a, point_a, body_b, point_b, axis, {"angle": angle})

    def constraint_equations(self, pa, pb, values):
        _, n = self._frame(pa)
        d = self._offset(pa, pb)
        return [n[0] * d[0] + n[1] * d[1], pb[2] - pa[2] - values["angle"]]

    def child_pose(self, parent, qs, values, parent_is_a):
        (s,) = qs
        if parent_is_a:
            return self._slide(parent, s, parent[2] + values["angle"], True, values)
        return self._slide(parent, s, parent[2] - values["angle"], False, values)


class Slider(_Sliding):
    """A pin in a slot: ``point_b`` stays on the axis of ``body_a`` through ``point_a``, rotation
    free. 1 constraint; joint coordinates ``s`` and ``theta_b − theta_a``.

    >>> Slider("S", "guide", (0, 0), "pin", (0, 0)).relative
    ('s', 'theta')
    """

    components = ("normal",)
    relative = ("s", "theta")

    def __init__(self, name: str, body_a: str, point_a: Any, body_b: str, point_b: Any, axis: Any = (1, 0)) -> None:
        super().__init__(name, body_a, point_a, body_b, point_b, axis)

    def constraint_equations(self, pa, pb, values):
        _, n = self._frame(pa)
        d = self._offset(pa, pb)
        return [n[0] * d[0] + n[1] * d[1]]

    def child_pose(self, parent, qs, values, parent_is_a):
        s, phi = qs
        if parent_is_a:
            return self._slide(parent, s, parent[2] + phi, True, values)
        return self._slide(parent, s, parent[2] - phi, False, values)


class Weld(Joint):
    """A rigid connection: points coincide and ``theta_b − theta_a = angle`` (3 constraints).

    >>> Weld("W", "ground", (0, 0), "post", (0, -1)).components
    ('x', 'y', 'angle')
    """

    components = ("x", "y", "angle")

    def __init__(self, name: str, body_a: str, point_a: Any, body_b: str, point_b: Any, angle: Any = 0) -> None:
        super().__init__(name, body_a, point_a, body_b, point_b, {"angle": angle})

    def constraint_equations(self, pa, pb, values):
        Pa, Pb = self.points(pa, pb)
        return [Pa[0] - Pb[0], Pa[1] - Pb[1], pb[2] - pa[2] - values["angle"]]

    def coordinates(self, pa, pb, values):
        return []

    def child_pose(self, parent, qs, values, parent_is_a):
        rev = Revolute.child_pose
        q = values["angle"]
        return rev(self, parent, (q,), values, parent_is_a)


# ------------------------------------------------------------------------------------------ drivers

class _OnJoint(PlanarElement):
    """An element acting on a coordinate of a named joint."""

    def __init__(self, name, joint, values, coordinate=0):
        super().__init__(name, (), values, edge=False)
        if not isinstance(joint, str):
            raise ElementError(f"{name}: name the joint it acts on (a string), got {joint!r}")
        self.joint, self.coordinate = joint, int(coordinate)


class Driver(_OnJoint):
    """Prescribes a joint coordinate in time: ``coordinate(joint) = motion(t)`` (a rheonomic constraint).

    Its multiplier gives the actuator effort: the effort on the joint coordinate is ``−λ``.

    >>> from netdyn import t
    >>> Driver("drive", "A", 2 * t).values["motion"]
    2*t
    """

    is_driver = True

    def __init__(self, name: str, joint: str, motion: Any, coordinate: Any = 0) -> None:
        super().__init__(name, joint, {"motion": motion}, coordinate)

    def planar_contribution(self, ctx, values):
        return PlanarContribution(constraints=[ctx.joint_coordinate(self.joint, self.coordinate) - values["motion"]],
                                  labels=[self.name])


class Actuator(_OnJoint):
    """An effort (torque for a revolute, force for a prismatic joint) on a joint coordinate.

    >>> Actuator("motor", "A", 1.5).values["effort"]
    1.50000000000000
    """

    def __init__(self, name: str, joint: str, effort: Any, coordinate: Any = 0) -> None:
        super().__init__(name, joint, {"effort": effort}, coordinate)

    def planar_contribution(self, ctx, values):
        return PlanarContribution(work=[(ctx.joint_coordinate(self.joint, self.coordinate), values["effort"])])


# ------------------------------------------------------------------------------------------ force elements

class _PointPair(PlanarElement):
    def __init__(self, name, body_a, point_a, body_b, point_b, values):
        super().__init__(name, (body_a, body_b), values)
        self.point_a = _vector(name, "point_a", point_a)
        self.point_b = _vector(name, "point_b", point_b)

    def _geometry(self, ctx):
        Pa = point(ctx.pose(self.bodies[0]), self.point_a)
        Pb = point(ctx.pose(self.bodies[1]), self.point_b)
        d = (Pb[0] - Pa[0], Pb[1] - Pa[1])
        return sp.sqrt(d[0] ** 2 + d[1] ** 2), d


class Spring(_PointPair):
    """A linear spring of stiffness ``k`` and free length ``length`` between two body points:
    ``V = k (|P_b − P_a| − length)² / 2``.

    >>> Spring("k1", "ground", (0, 0), "bar", (0.5, 0), k=100, length=0.3).values["k"]
    100
    """

    def __init__(self, name: str, body_a: str, point_a: Any, body_b: str, point_b: Any, k: Any,
                 length: Any = 0) -> None:
        require_positive(name, "k", k)
        require_positive(name, "length", length, allow_zero=True)
        super().__init__(name, body_a, point_a, body_b, point_b, {"k": k, "length": length})

    def planar_contribution(self, ctx, values):
        L, d = self._geometry(ctx)
        if values["length"] == 0:
            return PlanarContribution(V=values["k"] * (d[0] ** 2 + d[1] ** 2) / 2)
        return PlanarContribution(V=values["k"] * (L - values["length"]) ** 2 / 2)


class Damper(_PointPair):
    """A linear damper ``c`` on the rate of change of the distance between two body points:
    ``D = c (d|P_b − P_a|/dt)² / 2``.

    >>> Damper("c1", "ground", (0, 0), "bar", (0.5, 0), c=2).values["c"]
    2
    """

    def __init__(self, name: str, body_a: str, point_a: Any, body_b: str, point_b: Any, c: Any) -> None:
        require_positive(name, "c", c)
        super().__init__(name, body_a, point_a, body_b, point_b, {"c": c})

    def planar_contribution(self, ctx, values):
        L, d = self._geometry(ctx)
        rate = (d[0] * d[0].diff(t) + d[1] * d[1].diff(t)) / L
        return PlanarContribution(D=values["c"] * rate ** 2 / 2)


class Force(PlanarElement):
    """A force ``(fx, fy)`` at ``point`` of ``body``, global frame (``frame="body"``: body frame).

    >>> Force("push", "block", (0, 0), 10, 0).values["fx"]
    10
    """

    def __init__(self, name: str, body: str, point: Any, fx: Any, fy: Any, frame: str = "global") -> None:
        if frame not in ("global", "body"):
            raise ElementError(f"{name}: frame must be 'global' or 'body', got {frame!r}")
        super().__init__(name, (body,), {"fx": fx, "fy": fy}, edge=False)
        self.point, self.frame = _vector(name, "point", point), frame

    def planar_contribution(self, ctx, values):
        pose = ctx.pose(self.bodies[0])
        F = (values["fx"], values["fy"])
        if self.frame == "body":
            F = rotate(pose[2], F)
        P = point(pose, self.point)
        return PlanarContribution(work=[(P[0], F[0]), (P[1], F[1])])


class Torque(PlanarElement):
    """A torque ``tau`` on ``body`` (counter-clockwise positive); with ``reaction=`` the
    opposite torque acts on that body.

    >>> Torque("tau", "crank", 2.0).values["tau"]
    2.00000000000000
    """

    def __init__(self, name: str, body: str, tau: Any, reaction: Any = None) -> None:
        bodies = (body,) if reaction is None else (body, reaction)
        super().__init__(name, bodies, {"tau": tau}, edge=False)

    def planar_contribution(self, ctx, values):
        work = [(ctx.pose(self.bodies[0])[2], values["tau"])]
        if len(self.bodies) > 1:
            work.append((ctx.pose(self.bodies[1])[2], -values["tau"]))
        return PlanarContribution(work=work)


class Gravity(PlanarElement):
    """Uniform gravity ``g`` along −y on every body: ``V = Σ m g y``.

    >>> Gravity(g=9.81).values["g"]
    9.81000000000000
    """

    def __init__(self, name: str = "gravity", g: Any = 9.81) -> None:
        require_positive(name, "g", g, allow_zero=True)
        super().__init__(name, (), {"g": g}, edge=False)

    def planar_contribution(self, ctx, values):
        V = [ctx.body_values(b)["m"] * values["g"] * centre_of_mass(ctx.pose(b), ctx.body_values(b))[1]
             for b in ctx.bodies]
        return PlanarContribution(V=sp.Add(*V))
