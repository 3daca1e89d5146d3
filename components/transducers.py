"""Transducers: elements with ports in two domains, from their energy or a power-conserving coupling.

Sign conventions (on top of those of each domain's module):

* every transducer's electrical port is ``(a, b)``: current flows from ``a``
  to ``b`` through the element, its voltage is ``v(a) - v(b)``;
* its mechanical port is ``(node, reference)``: the displacement is
  ``x(node) - x(reference)`` (or the angle), and the element's force (torque)
  on ``node`` is reported as the through variable, ``node`` to ``reference``;
* a current ``i > 0`` in a :class:`MovingCoil` or :class:`DCMotor` pushes
  ``node`` in its positive sense with ``Bl i`` (``K i``); the back-emf
  ``Bl u`` (``K ω``) opposes the current.

With force and torque as *through* variables (the mobility convention this
library uses) an electromechanical coupling ``v = Bl u, F = Bl i`` relates
across to across: it is the ideal *transformer* of
:class:`~netdyn.components.base.TwoPort` (mechanical port first); in the
impedance (force-voltage) convention the same device is a gyrator.

Both ports of a transducer must be connected to something else; a dangling
port is a :class:`~netdyn.errors.TopologyError` at assembly.

>>> import sympy as sp
>>> from netdyn.components.base import PortVariables, THROUGH, ACROSS
>>> q, i, x, u = sp.symbols("q i x u")
>>> c = ElectrostaticTransducer("E1", "a", "0", "plate", C=lambda x: 2/(1 - x))
>>> sp.factor(c.contribute([PortVariables(THROUGH, q, i), PortVariables(ACROSS, x, u)], c.values).V)
-q**2*(x - 1)/4
"""
from __future__ import annotations

import sympy as sp

from netdyn.errors import ElementError
from netdyn.symbols import as_expr

from .base import ACROSS, THROUGH, Contribution, Element, Port, TwoPort, linear_law, node_name, require_positive
from .electrical import Inductor, Resistor
from .rotational import Inertia, RotationalDamper

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # names for the hints only (annotations are not evaluated)
    from typing import Any

ELECTRICAL = "electrical"


def _function_of(name, parameter, value):
    """A callable ``x -> expression`` from a callable, a number, or an expression of a symbol ``x``."""
    if callable(value) and not isinstance(value, sp.Basic):
        return value
    expr = as_expr(value)
    if expr.is_number:
        require_positive(name, parameter, expr)
        return lambda x: expr
    xs = sp.Symbol("x")
    if expr.free_symbols - {xs}:
        raise ElementError(f"{name}: {parameter} = {value} must be a callable of the displacement "
                           "(lambda x: ...), a number, or an expression of the symbol x")
    return lambda x: expr.xreplace({xs: x})


class _Transducer(Element):
    """An element with an electrical port and a mechanical port."""

    is_transducer = True

    def __init__(self, name, a, b, node, reference, domain, values):
        ports = [Port(ELECTRICAL, node_name(a), node_name(b)), Port(domain, node_name(node), node_name(reference))]
        super().__init__(name, ports, values)

    def _mechanical_kind(self, ports):
        if ports[1].kind != ACROSS:
            raise ElementError(f"{self.name}: the mechanical port needs position coordinates; "
                               f"use formulation 'node' for the {self.ports[1].domain} domain")


class MovingCoil(TwoPort):
    """A voice coil of force factor ``Bl`` in a magnetic gap: ``v = Bl u``, ``F = Bl i``.

    The electrical port is ``(a, b)``, the translational one ``(node, reference)``.

    >>> MovingCoil("coil", "p", "0", "cone", Bl=5.0).values["Bl"]
    5.00000000000000
    """

    is_transducer = True

    def __init__(self, name: str, a: str | int, b: str | int, node: str | int, Bl: Any, reference: str | int = "0",
                 domain: str = "translational") -> None:
        require_positive(name, "Bl", Bl)
        super().__init__(name, Port(ELECTRICAL, node_name(a), node_name(b)),
                         Port(domain, node_name(node), node_name(reference)), "transformer", Bl)
        self.values = {"Bl": as_expr(Bl)}

    def contribute(self, ports, values):
        # u = v / Bl: a transformer of ratio 1/Bl from the electrical to the mechanical port
        return super().contribute(ports, {"ratio": 1 / values["Bl"]})


class DCMotor(Element):
    """A permanent-magnet DC motor: armature ``R``, ``L`` in series with the coupling ``v = K ω``, ``τ = K i``.

    Composed of a :class:`~netdyn.components.electrical.Resistor`, an
    :class:`~netdyn.components.electrical.Inductor`, a :class:`MovingCoil`-type
    rotational coupling and, when given, the rotor inertia ``J`` and viscous
    friction ``B`` on the shaft, all acting on the same two ports: the
    electrical port ``(a, b)`` and the shaft ``(shaft, reference)``.
    Its electrical port must be in charge coordinates (formulation ``loop`` or
    ``branch``, the default for circuits).

    >>> m = DCMotor("M1", "p", "0", "shaft", R=1.0, L=0.5, K=0.1, J=0.01)
    >>> [type(p).__name__ for p, _ in m.parts]
    ['Resistor', 'Inductor', 'MovingCoil', 'Inertia']
    """

    is_transducer = True

    def __init__(self, name: str, a: str | int, b: str | int, shaft: str | int, R: Any, L: Any, K: Any, J: Any = None,
                 B: Any = None, reference: str | int = "0") -> None:
        a, b, shaft, reference = map(node_name, (a, b, shaft, reference))
        ports = [Port(ELECTRICAL, a, b), Port("rotational", shaft, reference)]
        parts = [("R", Resistor(f"{name}.R", a, b, R=R), (0,)), ("L", Inductor(f"{name}.L", a, b, L=L), (0,)),
                 ("K", MovingCoil(f"{name}.K", a, b, shaft, Bl=K, reference=reference, domain="rotational"), (0, 1))]
        if J is not None:
            parts.append(("J", Inertia(f"{name}.J", shaft, J=J, reference=reference), (1,)))
        if B is not None:
            parts.append(("B", RotationalDamper(f"{name}.B", shaft, reference, c=B), (1,)))
        super().__init__(name, ports, {key: next(iter(part.values.values())) for key, part, _ in parts})
        self.parts = [(part, slots) for _, part, slots in parts]
        self._keys = [key for key, _, _ in parts]
        self.loaded_ports = (1,) if J is not None else ()

    def contribute(self, ports, values):
        if ports[0].kind != THROUGH:
            raise ElementError(f"{self.name}: the armature needs charge coordinates; use formulation 'loop' or "
                               "'branch' for the electrical domain")
        total = Contribution()
        for key, (part, slots) in zip(self._keys, self.parts):
            c = part.contribute([ports[s] for s in slots], {next(iter(part.values)): values[key]})
            total.T += c.T
            total.V += c.V
            total.D += c.D
            for i, e in c.efforts.items():
                total.efforts[slots[i]] = total.efforts.get(slots[i], 0) + e
            total.constraints += c.constraints
            total.flow_constraints += c.flow_constraints
        return total


class _ModulatedStorage(_Transducer):
    """An electrical storage law whose coefficient is a function of the mechanical displacement."""

    law = parameter = None

    def __init__(self, name, a, b, node, coefficient, reference="0", domain="translational"):
        super().__init__(name, a, b, node, reference, domain, {})
        self.coefficient = _function_of(name, self.parameter, coefficient)

    def contribute(self, ports, values):
        self._mechanical_kind(ports)
        e, m = ports
        return linear_law(self.name, self.law, e, sp.sympify(self.coefficient(m.q)))


class ElectrostaticTransducer(_ModulatedStorage):
    """A capacitor whose capacitance depends on a displacement: ``V = q²/(2 C(x))``.

    ``C`` is a callable of the displacement ``x = x(node) - x(reference)``
    (``lambda x: eps*A/(d - x)``). In flux (node) coordinates of the circuit the
    element stores the coenergy ``C(x) v²/2`` instead. The force on ``node`` is
    ``q² C'(x) / (2 C²)``.

    >>> from netdyn import Network
    >>> from netdyn.components.electrical import VoltageSource, Resistor
    >>> from netdyn.components.transducers import ElectrostaticTransducer
    >>> from netdyn.components.translational import Mass, Spring
    >>> net = Network("microphone")
    >>> _ = net.add(VoltageSource("V1", "p", "0", 1.0), Resistor("R1", "p", "a", 1.0),
    ...             ElectrostaticTransducer("E", "a", "0", "m", C=lambda x: 1e-3 / (1 + x)),
    ...             Mass("mass", "m", m=0.1), Spring("k", "m", "0", k=10.0))
    >>> net.model().coordinate_names
    ['q_E_0', 'x_m']
    """

    law, parameter = "through_storage", "C"

    def __init__(self, name: str, a: str | int, b: str | int, node: str | int, C: Any, reference: str | int = "0",
                 domain: str = "translational") -> None:
        super().__init__(name, a, b, node, C, reference, domain)


class Solenoid(_ModulatedStorage):
    """An electromagnet whose inductance depends on a displacement: coenergy ``T* = L(x) i²/2``.

    ``L`` is a callable of ``x = x(node) - x(reference)``; the force on
    ``node`` is ``i² L'(x)/2``. In flux coordinates it stores ``λ²/(2 L(x))``.

    >>> from netdyn import Network
    >>> from netdyn.components.electrical import VoltageSource, Resistor
    >>> from netdyn.components.transducers import Solenoid
    >>> from netdyn.components.translational import Mass, Spring
    >>> net = Network("plunger")
    >>> _ = net.add(VoltageSource("V1", "p", "0", 1.0), Resistor("R1", "p", "a", 1.0),
    ...             Solenoid("S", "a", "0", "m", L=lambda x: 0.1 / (1 + x)),
    ...             Mass("mass", "m", m=0.1), Spring("k", "m", "0", k=10.0))
    >>> net.model().coordinate_names
    ['q_S_0', 'x_m']
    """

    law, parameter = "across_storage", "L"

    def __init__(self, name: str, a: str | int, b: str | int, node: str | int, L: Any, reference: str | int = "0",
                 domain: str = "translational") -> None:
        super().__init__(name, a, b, node, L, reference, domain)


Electromagnet = Solenoid
