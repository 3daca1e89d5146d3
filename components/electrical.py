"""Electrical elements.

Sign conventions (stated once, tested in ``tests/test_conventions.py``):

* current flows from an element's first terminal to its second, through it;
  its voltage is ``v(first) - v(second)``; the absorbed power is ``v * i``;
* ``VoltageSource(name, plus, minus, v)``: ``v(plus) - v(minus) = v``. In
  charge coordinates its displacement is the charge it *delivers* (current out
  of ``plus``), on which its effort ``v`` does positive work, as in the book's
  Example 4.4; ``sol.current`` reports the SPICE current, plus to minus inside;
* ``CurrentSource(name, a, b, i)``: ``i`` flows from ``a`` to ``b`` through the
  source, i.e. into node ``b``;
* ground is node ``"0"`` (aliases ``"gnd"``, ``"ground"``).

>>> from netdyn.components.electrical import Resistor
>>> Resistor("R1", "a", "gnd", R=100).terminals
('a', '0')
"""
from __future__ import annotations
import sympy as sp

from netdyn.errors import ElementError
from netdyn.symbols import as_expr

from .base import (THROUGH, AcrossSource, Contribution, Element, EnergyLaw, LinearLaw, Port, ThroughSource,
                   TwoPort, node_name, require_positive)

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # names for the hints only (annotations are not evaluated)
    from collections.abc import Callable
    from typing import Any

DOMAIN = "electrical"


class Resistor(LinearLaw):
    """``v = R i``; or a nonlinear resistor from its dissipation function ``D(i)``.

    >>> Resistor("R1", 1, 0, R=10).values["R"]
    10
    """

    domain, law = DOMAIN, "dissipator"

    def __new__(cls, name, a, b, R=None, dissipation=None):
        if dissipation is not None:
            return EnergyLaw(name, a, b, "D", dissipation, THROUGH, domain=DOMAIN)
        return super().__new__(cls)

    def __init__(self, name: str, a: str | int, b: str | int, R: Any = None,
                 dissipation: Callable[..., Any] | None = None) -> None:
        if R is None:
            raise ElementError(f"{name}: give R (ohms) or a dissipation function")
        require_positive(name, "R", R)
        super().__init__(name, a, b, {"R": R})

    def coefficient(self, values):
        return values["R"]


class Inductor(LinearLaw):
    """``v = L di/dt``; or a nonlinear inductor from its magnetic coenergy ``T*(i)``.

    >>> from netdyn import Network
    >>> from netdyn.components.electrical import VoltageSource, Inductor, Resistor
    >>> net = Network("RL")
    >>> _ = net.add(VoltageSource("V1", "a", "0", 1.0), Inductor("L1", "a", "b", 0.1), Resistor("R1", "b", "0", 1.0))
    >>> net.model(symbolic=True).equations()
    [L1*Derivative(q_L1(t), (t, 2)) + R1*Derivative(q_L1(t), t) - V1]
    """

    domain, law = DOMAIN, "across_storage"

    def __new__(cls, name, a, b, L=None, coenergy=None):
        if coenergy is not None:
            return EnergyLaw(name, a, b, "T", coenergy, THROUGH, domain=DOMAIN)
        return super().__new__(cls)

    def __init__(self, name: str, a: str | int, b: str | int, L: Any = None,
                 coenergy: Callable[..., Any] | None = None) -> None:
        if L is None:
            raise ElementError(f"{name}: give L (henries) or a coenergy function")
        require_positive(name, "L", L)
        super().__init__(name, a, b, {"L": L})

    def coefficient(self, values):
        return values["L"]


class Capacitor(LinearLaw):
    """``i = C dv/dt``; or a nonlinear capacitor from its electric energy ``V(q)``.

    >>> from netdyn import Network
    >>> from netdyn.components.electrical import VoltageSource, Resistor, Capacitor
    >>> net = Network("RC")
    >>> _ = net.add(VoltageSource("V1", "a", "0", 1.0), Resistor("R1", "a", "b", 1.0), Capacitor("C1", "b", "0", 1e-3))
    >>> net.model(symbolic=True).equations()
    [R1*Derivative(q_R1(t), t) - V1 + q_R1(t)/C1]
    >>> Capacitor("C2", "b", "0", energy=lambda q: q**4).values     # nonlinear: V(q) = q^4
    {}
    """

    domain, law = DOMAIN, "through_storage"

    def __new__(cls, name, a, b, C=None, energy=None):
        if energy is not None:
            return EnergyLaw(name, a, b, "V", energy, THROUGH, domain=DOMAIN)
        return super().__new__(cls)

    def __init__(self, name: str, a: str | int, b: str | int, C: Any = None,
                 energy: Callable[..., Any] | None = None) -> None:
        if C is None:
            raise ElementError(f"{name}: give C (farads) or an energy function")
        require_positive(name, "C", C)
        super().__init__(name, a, b, {"C": C})

    def coefficient(self, values):
        return values["C"]


class VoltageSource(AcrossSource):
    """An ideal voltage source, ``v(plus) - v(minus) = v`` (number or expression of ``t``).

    >>> import sympy as sp
    >>> from netdyn import t
    >>> from netdyn.components.electrical import VoltageSource
    >>> VoltageSource("V1", "in", "0", 5 * sp.sin(100 * t)).values
    {'value': 5*sin(100*t)}
    """

    def __init__(self, name: str, plus: str | int, minus: str | int, v: Any) -> None:
        super().__init__(name, minus, plus, v, domain=DOMAIN, swap=False)
        # the port runs minus -> plus (delivered charge); report in the user's order plus, minus
        self.terminals = (node_name(plus), node_name(minus))
        self.report_signs = (-1,)


class CurrentSource(ThroughSource):
    """An ideal current source: ``i`` flows from ``a`` to ``b`` through it (into node ``b``).

    >>> from netdyn import Network
    >>> from netdyn.components.electrical import CurrentSource, Resistor, Capacitor
    >>> net = Network("parallel RC")
    >>> _ = net.add(CurrentSource("I1", "0", "a", 1e-3), Resistor("R1", "a", "0", 1e3), Capacitor("C1", "a", "0", 1e-6))
    >>> net.model(symbolic=True, formulation="node").equations()     # node fluxes: KCL at a
    [C1*Derivative(phi_a(t), (t, 2)) - I1 + Derivative(phi_a(t), t)/R1]
    """

    def __init__(self, name: str, a: str | int, b: str | int, i: Any) -> None:
        super().__init__(name, a, b, i, domain=DOMAIN)


class CoupledInductors(Element):
    """Two magnetically coupled inductors (a two-port): ``T* = L1 i1²/2 + M i1 i2 + L2 i2²/2``.

    Give the mutual inductance ``M`` or the coupling coefficient ``k``
    (``M = k sqrt(L1 L2)``, ``|k| <= 1``). Dotted ends are ``a1`` and ``a2``.

    >>> from netdyn.components.electrical import CoupledInductors
    >>> CoupledInductors("T1", "a", "0", "b", "0", L1=1.0, L2=4.0, k=0.5).values
    {'L1': 1.00000000000000, 'L2': 4.00000000000000, 'M': 1.00000000000000}
    """

    def __init__(self, name: str, a1: str | int, b1: str | int, a2: str | int, b2: str | int, L1: Any, L2: Any,
                 M: Any = None, k: Any = None) -> None:
        require_positive(name, "L1", L1)
        require_positive(name, "L2", L2)
        M = _mutual(name, L1, L2, M, k)
        ports = [Port(DOMAIN, node_name(a1), node_name(b1)), Port(DOMAIN, node_name(a2), node_name(b2))]
        super().__init__(name, ports, {"L1": L1, "L2": L2, "M": M})

    def contribute(self, ports, values):
        p1, p2 = ports
        L1, L2, M = values["L1"], values["L2"], values["M"]
        if p1.kind == THROUGH and p2.kind == THROUGH:
            return Contribution(T=L1 * p1.f**2 / 2 + M * p1.f * p2.f + L2 * p2.f**2 / 2)
        if p1.kind != p2.kind:
            raise ElementError(f"{self.name}: both windings must be in the same formulation")
        det = L1 * L2 - M**2  # flux form: V = 1/2 [phi]^T L^-1 [phi]
        return Contribution(V=(L2 * p1.q**2 - 2 * M * p1.q * p2.q + L1 * p2.q**2) / (2 * det))


class MutualInductance(Element):
    """Magnetic coupling of two :class:`Inductor` elements of the network (SPICE ``K`` card).

    Adds ``T* = M i1 i2`` on the inductors' own ports, ``M = k sqrt(L1 L2)``.
    The first-named terminal of each inductor is its dotted end.

    >>> from netdyn import Network
    >>> from netdyn.components.electrical import VoltageSource, Inductor, Resistor, MutualInductance
    >>> net = Network("coupled")
    >>> _ = net.add(VoltageSource("V1", "a", "0", 1.0), Inductor("L1", "a", "0", 1.0), Inductor("L2", "b", "0", 4.0),
    ...             Resistor("R2", "b", "0", 1.0), MutualInductance("K1", "L1", "L2", k=0.5))
    >>> net.model().coordinate_names
    ['q_L1', 'q_L2']
    """

    def __init__(self, name: str, inductor1: str, inductor2: str, k: Any = None, M: Any = None) -> None:
        if (k is None) == (M is None):
            raise ElementError(f"{name}: give exactly one of k (coupling coefficient) or M (henries)")
        if k is not None:
            kk = as_expr(k)
            if kk.is_number and not (-1 <= kk <= 1):
                raise ElementError(f"{name}: coupling coefficient k = {k} must lie in [-1, 1]")
        super().__init__(name, [], {"k": k} if k is not None else {"M": M}, terminals=(inductor1, inductor2))
        self.couples = (inductor1, inductor2)

    def contribute(self, ports, values):
        p1, p2 = ports
        if p1.kind != THROUGH or p2.kind != THROUGH:
            raise ElementError(
                f"{self.name}: mutual inductance between separate inductors needs charge coordinates; "
                "use formulation 'loop' or 'branch', or a CoupledInductors element")
        M = values["M"] if "M" in values else values["k"] * sp.sqrt(values["L_1"] * values["L_2"])
        return Contribution(T=M * p1.f * p2.f)


class IdealTransformer(TwoPort):
    """Ideal transformer of turns ratio ``n = N2/N1``: ``v2 = n v1``, ``i1 = -n i2`` (a flow constraint).

    >>> from netdyn import Network
    >>> from netdyn.components.electrical import VoltageSource, IdealTransformer, Resistor
    >>> net = Network("step-up")
    >>> _ = net.add(VoltageSource("V1", "a", "0", 1.0), IdealTransformer("T1", "a", "0", "b", "0", 2),
    ...             Resistor("R2", "b", "0", 4.0))
    >>> net.model(symbolic=True).flow_constraints
    [-T1*Derivative(q_R2(t), t) + Derivative(q_T1_0(t), t)]
    """

    def __init__(self, name: str, a1: str | int, b1: str | int, a2: str | int, b2: str | int, n: Any) -> None:
        ports = (Port(DOMAIN, node_name(a1), node_name(b1)), Port(DOMAIN, node_name(a2), node_name(b2)))
        super().__init__(name, ports[0], ports[1], "transformer", n)


def _mutual(name, L1, L2, M, k):
    if (M is None) == (k is None):
        raise ElementError(f"{name}: give exactly one of M (henries) or k (coupling coefficient)")
    if k is not None:
        kk = as_expr(k)
        if kk.is_number and not (-1 <= kk <= 1):
            raise ElementError(f"{name}: coupling coefficient k = {k} must lie in [-1, 1]")
        return as_expr(k) * sp.sqrt(as_expr(L1) * as_expr(L2))
    return M
