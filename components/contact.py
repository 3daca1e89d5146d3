"""Unilateral contacts in the plane: a gap between two body points that may close but never goes negative.

A :class:`Contact` measures a gap ``g(q)`` between ``point_a`` of ``body_a`` and ``point_b`` of ``body_b``
(``"ground"`` for the fixed frame):

* with a ``normal`` (a direction fixed in ``body_a``'s frame; on the ground, a global direction):
  ``g = n·(P_b − P_a) − clearance`` — a body point above a ground line, a slider against an end stop;
* with ``normal=None``: ``g = |P_b − P_a| − clearance`` — two discs (``clearance`` = the sum of the radii),
  a ball on a ball.

It has a state: *open* (``closed=False``: no force, the gap free) or *closed* (persistent contact: ``g = 0``
is a bilateral constraint whose multiplier is the normal force). The element knows only this and its
restitution ``e`` (Newton's law: the normal velocity after an impact is ``−e`` times the one before);
:mod:`netdyn.numerics.nonsmooth` finds the impacts, solves the impulse problem over the contacts closing
together, decides which stay closed and when a closed one lets go (its normal force would pull).

Sign conventions: ``g > 0`` is separation; the normal force of a closed contact pushes the points apart
(along ``+∂g/∂q``); the constraint's multiplier ``λ`` enters the Lagrange rows as ``Φ_qᵀ λ``, so the normal
force is ``N = −λ``.

>>> c = Contact("floor", "ground", (0, 0), "ball", (0, 0), normal=(0, 1), clearance=0.1, e=0.8)
>>> c.closed, c.e, c.normal, c.with_state(True).closed
(False, 0.8, (0, 1), True)
"""
from __future__ import annotations

from typing import Any

import sympy as sp

from netdyn.errors import ElementError

from .base import require_positive
from .planar import PlanarContribution, PlanarElement, _vector, point, rotate

__all__ = ["Contact", "contact_label", "is_contact_label"]

_LABEL = "[gap]"


def contact_label(name: str) -> str:
    """The constraint label of a closed contact: ``name[gap]``.

    >>> contact_label("floor"), is_contact_label("floor[gap]"), is_contact_label("P[normal]")
    ('floor[gap]', True, False)
    """
    return f"{name}{_LABEL}"


def is_contact_label(label: str) -> bool:
    """Whether a constraint label is a closed contact's (a mechanism held still by its contacts rests; it is
    not locked)."""
    return str(label).endswith(_LABEL)


class Contact(PlanarElement):
    """A unilateral contact between ``point_a`` of ``body_a`` and ``point_b`` of ``body_b`` with restitution
    ``e`` (0: plastic, 1: elastic). ``normal``: the contact normal in ``body_a``'s frame (gap
    ``n·(P_b − P_a) − clearance``), or ``None`` for the distance of the points (gap
    ``|P_b − P_a| − clearance``: two discs). ``closed``: the state at the start (open by default).

    ``simulate`` handles it with no extra call: impacts with Newton's law over every contact closing at that
    instant (the joints kept), persistent contact as a constraint, lift-off where its force would pull, and
    the kinetic energy lost booked on ``sol.events``.

    >>> import netdyn
    >>> from netdyn.components.planar import RigidBody, Gravity
    >>> net = netdyn.Network("ball")
    >>> _ = net.add(RigidBody("ball", mass=1.0, inertia=0.01), Gravity(g=10.0),
    ...             Contact("floor", "ground", (0, 0), "ball", (0, 0), normal=(0, 1), e=0.5))
    >>> sol = netdyn.simulate(net, (0, 0.6), q0={"y_ball": 0.8})   # falls 0.4 s, bounces at 2 m/s
    >>> ev = sol.events[0]
    >>> round(ev.t, 9), [round(i.velocity_before, 6) for i in ev.impacts], [round(i.velocity_after, 6) for i in ev.impacts]
    (0.4, [-4.0], [2.0])
    >>> round(ev.energy_lost, 6)                                   # ½·1·(4² − 2²)
    6.0
    """

    is_contact = True
    contacts_ground = True  # a body held only by contacts (a ball on the floor) is no floating body

    def __init__(self, name: str, body_a: str, point_a: Any, body_b: str, point_b: Any, normal: Any = (0, 1),
                 clearance: Any = 0, e: float = 0.0, closed: bool = False) -> None:
        require_positive(name, "clearance", clearance, allow_zero=True)
        try:
            e = float(e)
        except (TypeError, ValueError):
            raise ElementError(f"{name}: the restitution e must be a number in [0, 1], got {e!r}") from None
        if not 0.0 <= e <= 1.0:
            raise ElementError(f"{name}: the restitution e = {e:g} is not in [0, 1] (0: plastic, 1: elastic)")
        super().__init__(name, (body_a, body_b), {"clearance": clearance}, edge=False)
        if self.bodies[0] == self.bodies[1]:
            raise ElementError(f"{name}: a contact joins two different bodies (or a body and 'ground'); "
                               f"both sides are {body_a!r}")
        self.point_a = _vector(name, "point_a", point_a)
        self.point_b = _vector(name, "point_b", point_b)
        if normal is None:
            self.normal = None
        else:
            nx, ny = _vector(name, "normal", normal)
            norm = sp.sqrt(nx ** 2 + ny ** 2)
            if norm == 0:
                raise ElementError(f"{name}: the normal is the zero vector; give a direction such as (0, 1), "
                                   "or None for the distance of the two points")
            self.normal = (nx / norm, ny / norm)
        self.e = e
        self.closed = bool(closed)

    def gap(self, pa: Any, pb: Any, values: Any) -> Any:
        """The gap ``g`` at the poses ``pa`` of ``body_a`` and ``pb`` of ``body_b`` (expressions)."""
        Pa, Pb = point(pa, self.point_a), point(pb, self.point_b)
        d = (Pb[0] - Pa[0], Pb[1] - Pa[1])
        if self.normal is None:
            return sp.sqrt(d[0] ** 2 + d[1] ** 2) - values["clearance"]
        n = rotate(pa[2], self.normal)
        return n[0] * d[0] + n[1] * d[1] - values["clearance"]

    def planar_contribution(self, ctx: Any, values: Any) -> PlanarContribution:
        """Closed: the constraint ``g = 0`` (label ``name[gap]``); open: nothing."""
        if not self.closed:
            return PlanarContribution()
        g = self.gap(ctx.pose(self.bodies[0]), ctx.pose(self.bodies[1]), values)
        return PlanarContribution(constraints=[g], labels=[contact_label(self.name)])

    def with_state(self, closed: bool) -> "Contact":
        """The same contact, closed (persistent) or open."""
        cls, args, kw = getattr(self, "_constructor")  # recorded by the element metaclass
        return cls(*args[:8], **dict(kw, closed=bool(closed)))  # (closed is the 9th argument)

    def switching(self) -> list:
        """No crossings of its own: :mod:`netdyn.numerics.nonsmooth` makes a contact's events (they need the
        model's mass matrix and the other contacts)."""
        return []
