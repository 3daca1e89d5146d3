"""Translational (1-D) mechanical elements.

Sign conventions: node coordinates are positions ``x_<node>`` along one axis;
a two-terminal element's deflection is ``x(a) - x(b)`` and its force is the
through variable from ``a`` to ``b`` (a spring pushes ``a`` back with
``k (x(a) - x(b))``); a ``Force(name, node, F)`` pushes ``node`` in ``+x``;
``Mass(name, node, m)`` sits between the node and the inertial reference
``"0"``. For sources, ``sol.force(name)`` is the force applied on the node and
``sol.velocity(name)`` the node's velocity relative to the reference. Elements of this domain are the force-current analogues of the
electrical ones: mass ↔ capacitor (C = m), spring ↔ inductor (L = 1/k),
damper ↔ resistor (R = 1/c).

>>> from netdyn.components.translational import Mass, Spring
>>> Spring("k1", "a", "b", k=100).values["k"]
100
"""
from ._mechanical import make_domain

_c = make_domain("translational", {"inertia": ("Mass", "m"), "spring": ("Spring", "k"), "damper": ("Damper", "c")})


class Mass(_c["Inertia"]):
    """A point mass ``m`` at ``node`` (kinetic coenergy ``m v²/2``)."""


class Spring(_c["Spring"]):
    """A linear spring ``k`` between ``a`` and ``b``; or ``energy=lambda x: ...`` for a nonlinear one."""


class Damper(_c["Damper"]):
    """A linear damper ``c`` between ``a`` and ``b``; or ``dissipation=lambda v: ...``."""


class Force(_c["EffortSource"]):
    """An applied force ``F`` (number or expression of ``t``) pushing ``node`` in ``+x``."""


class VelocitySource(_c["FlowSource"]):
    """Prescribes the velocity of ``node`` relative to ``reference``."""


class PositionSource(_c["PositionSource"]):
    """Prescribes the position of ``node`` relative to ``reference`` (a rheonomic constraint)."""


class Lever(_c["Transformer"]):
    """An ideal lever: ``v_b = ratio * v_a`` (a flow constraint)."""
