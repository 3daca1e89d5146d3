"""Rotational (1-D) mechanical elements.

Sign conventions as in :mod:`netdyn.components.translational`, with angles
``theta_<node>``, torques and angular velocities: a ``Torque(name, node, tau)``
turns ``node`` in the positive sense; ``Gear(name, a, b, ratio)`` imposes
``omega_b = ratio * omega_a`` (a flow constraint, power conserving).

>>> from netdyn.components.rotational import Inertia
>>> Inertia("J1", "shaft", J=0.01).values["J"]
0.0100000000000000
"""
from __future__ import annotations

from ._mechanical import make_domain
from .friction import CoulombFriction

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # names for the hints only (annotations are not evaluated)
    from typing import Any

_c = make_domain("rotational", {"inertia": ("Inertia", "J"), "spring": ("TorsionSpring", "k"),
                                "damper": ("RotationalDamper", "c")})


class Inertia(_c["Inertia"]):
    """A rotational inertia ``J`` at ``node``.

    >>> from netdyn import Network
    >>> from netdyn.components.rotational import Inertia, TorsionSpring
    >>> net = Network("torsion pendulum")
    >>> _ = net.add(Inertia("J", "s", J=0.5), TorsionSpring("k", "s", "0", k=2.0))
    >>> net.model(symbolic=True).equations()
    [J*Derivative(theta_s(t), (t, 2)) + k*theta_s(t)]
    """


class TorsionSpring(_c["Spring"]):
    """A torsion spring ``k`` between ``a`` and ``b``; or ``energy=lambda angle: ...``.

    >>> from netdyn.components.rotational import TorsionSpring
    >>> TorsionSpring("k", "shaft", "0", k=2.0).values
    {'k': 2.00000000000000}
    """


class RotationalDamper(_c["Damper"]):
    """A rotational damper ``c`` between ``a`` and ``b``; or ``dissipation=lambda omega: ...``.

    >>> from netdyn import Network
    >>> from netdyn.components.rotational import Inertia, RotationalDamper, Torque
    >>> net = Network("flywheel")
    >>> _ = net.add(Inertia("J", "s", J=0.5), RotationalDamper("c", "s", "0", c=0.1), Torque("tau", "s", 1.0))
    >>> net.model(symbolic=True).equations()
    [J*Derivative(theta_s(t), (t, 2)) + c*Derivative(theta_s(t), t) - tau]
    """


class Torque(_c["EffortSource"]):
    """An applied torque ``tau`` on ``node`` (number or expression of ``t``).

    >>> import netdyn
    >>> from netdyn.components.rotational import Inertia, Torque
    >>> net = netdyn.Network("spun up")
    >>> _ = net.add(Inertia("J", "s", J=0.5), Torque("tau", "s", 1.0))
    >>> round(float(netdyn.simulate(net, (0, 1))["theta_s_dot"][-1]), 6)     # tau t / J
    2.0
    """


class AngularVelocitySource(_c["FlowSource"]):
    """Prescribes the angular velocity of ``node`` relative to ``reference``.

    >>> from netdyn import Network
    >>> from netdyn.components.rotational import Inertia, TorsionSpring, AngularVelocitySource
    >>> net = Network("driven shaft")
    >>> _ = net.add(Inertia("J", "s", J=0.5), TorsionSpring("k", "s", "d", k=2.0), AngularVelocitySource("w", "d", 3.0))
    >>> net.model(symbolic=True).flow_constraints
    [w - Derivative(theta_d(t), t)]
    """


class AngleSource(_c["PositionSource"]):
    """Prescribes the angle of ``node`` relative to ``reference``.

    >>> import sympy as sp
    >>> from netdyn import Network, t
    >>> from netdyn.components.rotational import Inertia, TorsionSpring, AngleSource
    >>> net = Network("twisted")
    >>> _ = net.add(Inertia("J", "s", J=0.5), TorsionSpring("k", "s", "d", k=2.0), AngleSource("a", "d", sp.sin(t)))
    >>> net.model().constraints
    [-theta_d(t) + sin(t)]
    """


class Gear(_c["Transformer"]):
    """An ideal gear pair: ``omega_b = ratio * omega_a``.

    >>> from netdyn import Network
    >>> from netdyn.components.rotational import Inertia, Gear
    >>> net = Network("gearbox")
    >>> _ = net.add(Inertia("J1", "a", J=0.5), Inertia("J2", "b", J=0.1), Gear("G", "a", "b", 3))
    >>> net.model().flow_constraints
    [-3*Derivative(theta_a(t), t) + Derivative(theta_b(t), t)]
    """


class RotationalFriction(CoulombFriction):
    """Coulomb friction torque between ``a`` and ``b`` (``b = "0"``: a bearing's friction against the frame):
    kinetic torque ``torque`` (or ``mu_k * normal * radius``), static ``static_torque`` (or ``mu_s * normal *
    radius``; default the kinetic one); levels may be expressions of ``t``. Sticking and sliding switch at
    events as :class:`~netdyn.components.translational.Friction` does; ``regularization=ε`` (rad/s) gives the
    smooth law instead.

    >>> RotationalFriction("B1", "s", "0", torque=0.2, static_torque=0.3).levels()
    (0.200000000000000, 0.300000000000000)
    """

    domain = "rotational"
    level_names = ("T", "Ts")

    def __init__(self, name: str, a: str | int, b: str | int, torque: Any = None, static_torque: Any = None, *,
                 mu_k: Any = None, mu_s: Any = None, normal: Any = None, radius: Any = None, state: Any = None,
                 regularization: Any = None) -> None:
        super().__init__(name, a, b, torque, static_torque, mu_k=mu_k, mu_s=mu_s, normal=normal, radius=radius,
                         state=state, regularization=regularization)


class Clutch(RotationalFriction):
    """A friction clutch between the inertias at ``a`` and ``b``: it slips, transmitting its capacity
    ``torque`` (or ``mu_k * normal * radius``: a pressure plate's force, which may be an input of ``t``)
    against the slip, until the speeds match; then it locks (``ω_a = ω_b``) while the torque it must carry
    stays within ``static_torque``.

    >>> import netdyn
    >>> from netdyn.components.rotational import Inertia, Clutch
    >>> net = netdyn.Network("clutch")
    >>> _ = net.add(Inertia("J1", "a", J=1.0), Inertia("J2", "b", J=3.0), Clutch("C", "a", "b", torque=2.0))
    >>> sol = netdyn.simulate(net, (0, 3), f0={"theta_a": 4.0})
    >>> ev = sol.events[0]
    >>> ev.name, round(ev.t, 9), round(float(sol["theta_b_dot"][-1]), 9)     # 4 J1 J2 / ((J1 + J2) T), 4 J1 / (J1 + J2)
    ('C sticks', 1.5, 1.0)
    """
