"""Rotational (1-D) mechanical elements.

Sign conventions as in :mod:`netdyn.components.translational`, with angles
``theta_<node>``, torques and angular velocities: a ``Torque(name, node, tau)``
turns ``node`` in the positive sense; ``Gear(name, a, b, ratio)`` imposes
``omega_b = ratio * omega_a`` (a flow constraint, power conserving).

>>> from netdyn.components.rotational import Inertia
>>> Inertia("J1", "shaft", J=0.01).values["J"]
0.0100000000000000
"""
from ._mechanical import make_domain

_c = make_domain("rotational", {"inertia": ("Inertia", "J"), "spring": ("TorsionSpring", "k"),
                                "damper": ("RotationalDamper", "c")})


class Inertia(_c["Inertia"]):
    """A rotational inertia ``J`` at ``node``."""


class TorsionSpring(_c["Spring"]):
    """A torsion spring ``k`` between ``a`` and ``b``; or ``energy=lambda angle: ...``."""


class RotationalDamper(_c["Damper"]):
    """A rotational damper ``c`` between ``a`` and ``b``; or ``dissipation=lambda omega: ...``."""


class Torque(_c["EffortSource"]):
    """An applied torque ``tau`` on ``node``."""


class AngularVelocitySource(_c["FlowSource"]):
    """Prescribes the angular velocity of ``node`` relative to ``reference``."""


class AngleSource(_c["PositionSource"]):
    """Prescribes the angle of ``node`` relative to ``reference``."""


class Gear(_c["Transformer"]):
    """An ideal gear pair: ``omega_b = ratio * omega_a``."""
