"""Nonholonomic (Pfaffian) contacts of a body moving in the plane: flow constraints of eq. (4.6).

:class:`Blade` is a network element on a planar rigid body. Otherwise each
contact is given the body's coordinates as functions of t — the position
``(x, y)`` of a body point ``O`` and the heading ``theta`` — and yields
``flow_constraints`` linear in the flows, for ``LagrangianModel(...,
flow_constraints=...)``; their multipliers μ are the contact forces.
Ready-made systems: :func:`netdyn.models.chaplygin_sleigh`,
:func:`netdyn.models.rolling_disk`.

Sign conventions: ``theta`` is counter-clockwise from +x; a body point
``(px, py)`` is given in body axes (``px`` along the heading).

>>> from netdyn import coordinates
>>> x, y, th = coordinates("x y theta")
>>> KnifeEdge(x, y, th).flow_constraints
[-sin(theta(t))*Derivative(x(t), t) + cos(theta(t))*Derivative(y(t), t)]
"""
from __future__ import annotations

import sympy as sp

from netdyn.errors import ElementError
from netdyn.symbols import as_expr, t

from .planar import PlanarContribution, PlanarElement, _vector, point

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # names for the hints only (annotations are not evaluated)
    from typing import Any


def _coordinate(value, what):
    if not (isinstance(value, sp.core.function.AppliedUndef) and value.args == (t,)):
        raise ElementError(f"{what} must be a coordinate, a function of netdyn.t (netdyn.coordinates), got {value!r}")
    return value


def across_velocity(position, direction):
    """Velocity of a moving point ``position`` (pair of expressions of t) across the direction angle ``direction``.

    >>> from netdyn import coordinates
    >>> x, y = coordinates("x y")
    >>> across_velocity((x, y), 0)
    Derivative(y(t), t)
    """
    vx, vy = (sp.sympify(c).diff(t) for c in position)
    return -sp.sin(direction) * vx + sp.cos(direction) * vy


class KnifeEdge:
    """A blade (or a wheel that cannot skid sideways) at body point ``point``, along body angle ``angle``.

    The velocity of the contact point across the blade is zero:
    ``-sin(θ+β) v_Px + cos(θ+β) v_Py = 0``.

    >>> from netdyn import coordinates
    >>> x, y, th = coordinates("x y theta")
    >>> KnifeEdge(x, y, th).flow_constraints
    [-sin(theta(t))*Derivative(x(t), t) + cos(theta(t))*Derivative(y(t), t)]
    """

    def __init__(self, x: Any, y: Any, theta: Any, point: Any = (0, 0), angle: Any = 0,
                 name: str = "knife edge") -> None:
        self.x, self.y, self.theta = (_coordinate(c, n) for c, n in ((x, "x"), (y, "y"), (theta, "theta")))
        self.point = tuple(as_expr(p) for p in point)
        self.angle = as_expr(angle)
        self.name = name

    @property
    def flow_constraints(self):
        return [across_velocity(point((self.x, self.y, self.theta), self.point), self.theta + self.angle)]

    @property
    def labels(self):
        return [self.name]


class Blade(PlanarElement):
    """A knife edge on a planar :class:`~netdyn.components.planar.RigidBody`: at body point ``point``
    (body frame, from its origin) the velocity across the blade (body angle ``angle``) is zero.

    A network element, one flow constraint (multiplier μ = the lateral contact force).

    >>> from netdyn import Network
    >>> from netdyn.components.planar import RigidBody
    >>> net = Network()
    >>> _ = net.add(RigidBody("sleigh", mass=1.0, inertia=0.1), Blade("blade", "sleigh", point=(-0.5, 0)))
    >>> net.model().flow_constraint_labels
    ['blade']
    """

    contacts_ground = True  # holds its body without a joint (netdyn.planar.check_structure)

    def __init__(self, name: str, body: str, point: Any = (0, 0), angle: Any = 0) -> None:
        super().__init__(name, (body,), {"angle": angle}, edge=False)
        self.point = _vector(name, "point", point)

    def planar_contribution(self, ctx, values):
        pose = ctx.pose(self.bodies[0])
        return PlanarContribution(flow_constraints=[across_velocity(point(pose, self.point), pose[2] + values["angle"])],
                                  flow_labels=[self.name])


class RollingDisk:
    """A vertical disk of radius ``R`` rolling without slipping: contact ``(x, y)``, heading ``theta``, spin ``phi``.

    ``ẋ = R cos θ φ̇`` and ``ẏ = R sin θ φ̇`` (two flow constraints).

    >>> from netdyn import coordinates
    >>> x, y, th, ph = coordinates("x y theta phi")
    >>> len(RollingDisk(x, y, th, ph, R=0.3).flow_constraints)
    2
    """

    def __init__(self, x: Any, y: Any, theta: Any, phi: Any, R: Any, name: str = "rolling disk") -> None:
        self.x, self.y, self.theta, self.phi = (
            _coordinate(c, n) for c, n in ((x, "x"), (y, "y"), (theta, "theta"), (phi, "phi")))
        self.R = as_expr(R)
        if self.R.is_number and not self.R > 0:
            raise ElementError(f"{name}: radius R = {R} must be positive")
        self.name = name

    @property
    def flow_constraints(self):
        spin = self.R * self.phi.diff(t)
        return [self.x.diff(t) - spin * sp.cos(self.theta), self.y.diff(t) - spin * sp.sin(self.theta)]

    @property
    def labels(self):
        return [f"{self.name} (along x)", f"{self.name} (along y)"]
