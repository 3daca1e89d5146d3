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
from __future__ import annotations

from ._mechanical import make_domain
from .friction import CoulombFriction

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # names for the hints only (annotations are not evaluated)
    from typing import Any

_c = make_domain("translational", {"inertia": ("Mass", "m"), "spring": ("Spring", "k"), "damper": ("Damper", "c")})


class Mass(_c["Inertia"]):
    """A point mass ``m`` at ``node`` (kinetic coenergy ``m v²/2``).

    >>> from netdyn import Network
    >>> from netdyn.components.translational import Mass, Spring
    >>> net = Network("oscillator")
    >>> _ = net.add(Mass("m", "x", m=2.0), Spring("k", "x", "0", k=8.0))
    >>> net.model(symbolic=True).equations()
    [k*x_x(t) + m*Derivative(x_x(t), (t, 2))]
    """


class Spring(_c["Spring"]):
    """A linear spring ``k`` between ``a`` and ``b``; or ``energy=lambda x: ...`` for a nonlinear one.

    >>> from netdyn import Network
    >>> from netdyn.components.translational import Mass, Spring
    >>> net = Network("hardening")
    >>> _ = net.add(Mass("m", "x", m=1.0), Spring("k", "x", "0", energy=lambda x: x**4 / 4))
    >>> net.model().equations()
    [x_x(t)**3 + 1.0*Derivative(x_x(t), (t, 2))]
    """


class Damper(_c["Damper"]):
    """A linear damper ``c`` between ``a`` and ``b``; or ``dissipation=lambda v: ...``.

    >>> from netdyn import Network
    >>> from netdyn.components.translational import Mass, Damper, Force
    >>> net = Network("mass-damper")
    >>> _ = net.add(Mass("m", "x", m=2.0), Damper("c", "x", "0", c=0.5), Force("F", "x", 1.0))
    >>> net.model(symbolic=True).equations()
    [-F + c*Derivative(x_x(t), t) + m*Derivative(x_x(t), (t, 2))]
    """


class Force(_c["EffortSource"]):
    """An applied force ``F`` (number or expression of ``t``) pushing ``node`` in ``+x``.

    >>> import netdyn
    >>> from netdyn.components.translational import Mass, Force
    >>> net = netdyn.Network("pushed mass")
    >>> _ = net.add(Mass("m", "x", m=2.0), Force("F", "x", 4.0))
    >>> sol = netdyn.simulate(net, (0, 1))
    >>> round(float(sol["x_x"][-1]), 6)          # F t^2 / (2 m)
    1.0
    """


class VelocitySource(_c["FlowSource"]):
    """Prescribes the velocity of ``node`` relative to ``reference``.

    >>> from netdyn import Network
    >>> from netdyn.components.translational import Mass, Spring, VelocitySource
    >>> net = Network("dragged")
    >>> _ = net.add(Mass("m", "x", m=1.0), Spring("k", "x", "y", k=4.0), VelocitySource("v", "y", 0.5))
    >>> net.model(symbolic=True).flow_constraints
    [v - Derivative(x_y(t), t)]
    """


class PositionSource(_c["PositionSource"]):
    """Prescribes the position of ``node`` relative to ``reference`` (a rheonomic constraint).

    >>> import sympy as sp
    >>> from netdyn import Network, t
    >>> from netdyn.components.translational import Mass, Spring, PositionSource
    >>> net = Network("shaken")
    >>> _ = net.add(Mass("m", "x", m=1.0), Spring("k", "x", "y", k=4.0), PositionSource("p", "y", sp.sin(t)))
    >>> net.model().constraints
    [-x_y(t) + sin(t)]
    """


class Lever(_c["Transformer"]):
    """An ideal lever: ``v_b = ratio * v_a`` (a flow constraint).

    >>> from netdyn import Network
    >>> from netdyn.components.translational import Mass, Lever
    >>> net = Network("lever")
    >>> _ = net.add(Mass("m1", "x", m=2.0), Mass("m2", "y", m=1.0), Lever("lev", "x", "y", 2))
    >>> net.model().flow_constraints
    [-2*Derivative(x_x(t), t) + Derivative(x_y(t), t)]
    """


class Friction(CoulombFriction):
    """Coulomb friction between ``a`` and ``b`` (``b = "0"``: against the frame; a belt's node to ride on a
    belt): kinetic force ``force`` (or ``mu_k * normal``), static ``static_force`` (or ``mu_s * normal``;
    default the kinetic one). ``simulate`` switches it between sliding (``∓F_k``, booked as dissipated) and
    sticking (``v(a) = v(b)``, its force ``f(name)`` the one needed) at events; ``regularization=ε`` makes it
    the smooth law ``F_k v / √(v² + ε²)`` instead (:mod:`netdyn.components.friction`).

    >>> import netdyn
    >>> from netdyn.components.translational import Mass, Friction
    >>> net = netdyn.Network("sliding to rest")
    >>> _ = net.add(Mass("m", "x", m=1.0), Friction("F1", "x", "0", mu_k=0.5, normal=9.81))
    >>> sol = netdyn.simulate(net, (0, 1), f0={"x_x": 2.0})
    >>> [(e.name, round(e.t, 9)) for e in sol.events], round(2.0 / (0.5 * 9.81), 9)    # stops at v0/(mu g)
    ([('F1 sticks', 0.407747197)], 0.407747197)
    """

    domain = "translational"
    level_names = ("F", "Fs")

    def __init__(self, name: str, a: str | int, b: str | int, force: Any = None, static_force: Any = None, *,
                 mu_k: Any = None, mu_s: Any = None, normal: Any = None, state: Any = None,
                 regularization: Any = None) -> None:
        super().__init__(name, a, b, force, static_force, mu_k=mu_k, mu_s=mu_s, normal=normal, state=state,
                         regularization=regularization)
