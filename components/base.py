"""The element protocol: what every element of the library gives the engine.

An element knows only its own physics. It owns one or more *ports*; a port is
an oriented pair of terminals ``(a, b)`` in one domain and is an edge of the
network graph. Every port carries two physical variables whose product is the
power the element absorbs:

* the *through* variable ``i`` flowing from ``a`` to ``b`` inside the element
  (current, force, torque), and
* the *across* variable ``v = value(a) - value(b)`` (voltage, velocity,
  angular velocity).

The engine picks, per domain, which of the two integrates to the port's
displacement (its *kind*):

* ``THROUGH``: displacement ``q = integral of i`` (charge, impulse), flow ``f = i``,
  conjugate effort ``v``. Circuits in branch or loop charges, as the book does.
* ``ACROSS``: displacement ``q = integral of v`` (flux linkage, position, angle),
  flow ``f = v``, conjugate effort ``i``. Mechanical networks in node positions.

Given each port's kind and its ``q``/``f`` as sympy expressions, an element
returns a :class:`Contribution`: kinetic coenergy ``T``, potential ``V``,
dissipation ``D``, applied efforts on its ports (positive when they do positive
work on the port displacement), displacement constraints and flow (Pfaffian)
constraints.

>>> import sympy as sp
>>> from netdyn.components.electrical import Inductor
>>> q, f = sp.symbols("q f")
>>> Inductor("L1", "a", "b", L=2).contribute([PortVariables(THROUGH, q, f)], {"L": 2}).T
f**2
"""
from __future__ import annotations

import contextvars
import math
from dataclasses import dataclass, field

import sympy as sp

from netdyn.errors import ElementError
from netdyn.symbols import as_expr, engineering, t
from netdyn.validate import positive

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # names for the hints only (annotations are not evaluated)
    from typing import Any

#: sign rules of symbolic values, collected while an element is constructed (see :func:`require_positive`)
_REQUIREMENTS = contextvars.ContextVar("netdyn_requirements", default=None)

THROUGH = "through"
ACROSS = "across"
GROUND = "0"
GROUND_ALIASES = frozenset({"0", "gnd", "ground", "GND"})

#: physical names of the port variables per domain: (through, across, displacement prefix in node form)
DOMAINS = {
    "electrical": {"through": "current", "across": "voltage", "node_prefix": "phi", "branch_prefix": "q"},
    "translational": {"through": "force", "across": "velocity", "node_prefix": "x", "branch_prefix": "p"},
    "rotational": {"through": "torque", "across": "angular_velocity", "node_prefix": "theta", "branch_prefix": "p"},
}

#: domains whose edges join bodies (assembled from body poses by ``netdyn.planar``, not as 1-D ports)
BODY_DOMAINS = ("planar", "spatial")


def node_name(node):
    """The canonical name of a terminal: every ground alias becomes ``"0"``.

    >>> node_name("gnd"), node_name("A"), node_name(3)
    ('0', 'A', '3')
    """
    node = str(node)
    return GROUND if node in GROUND_ALIASES else node


def port_key(element, k):
    """The graph edge key of port ``k`` of an element."""
    return element.name if len(element.ports) == 1 else f"{element.name}:{k}"


@dataclass(frozen=True, slots=True)
class Port:
    """An oriented two-terminal port of an element in one domain (a graph edge).

    >>> from netdyn.components.electrical import Resistor
    >>> Resistor("R1", "a", "gnd", 10.0).ports
    (Port(domain='electrical', a='a', b='0'),)
    """

    domain: str
    a: str
    b: str


@dataclass
class PortVariables:
    """What the engine hands an element for one port: its kind, displacement and flow."""

    kind: str
    q: sp.Expr
    f: sp.Expr


@dataclass
class Contribution:
    """An element's share of the energy model, in its port variables.

    >>> import sympy as sp
    >>> from netdyn.components.electrical import Capacitor
    >>> q, f = sp.symbols("q f")
    >>> c = Capacitor("C1", "a", "0", 2.0).contribute([PortVariables(THROUGH, q, f)], {"C": 2})
    >>> c.V, c.T, c.constraints
    (q**2/4, 0, [])
    """

    T: sp.Expr = sp.S.Zero
    V: sp.Expr = sp.S.Zero
    D: sp.Expr = sp.S.Zero
    efforts: dict = field(default_factory=dict)  # port index -> effort on that port's displacement
    constraints: list = field(default_factory=list)  # phi(q_ports, t) = 0
    flow_constraints: list = field(default_factory=list)  # linear in the port flows
    #: flow constraint index -> {port index: coefficient}: where that constraint's multiplier acts, when not
    #: along its own gradient (a controlled source's servo constraint: it fixes the output, not the control)
    reactions: dict = field(default_factory=dict)
    #: port index of a *coupled* element (a sensed voltage source) -> {port index: coefficient}: the coupled
    #: element's flow-constraint multiplier also acts on these ports, ``coefficient`` times the current that
    #: multiplier makes the coupled port absorb (a current-controlled source in flux coordinates)
    sensed_reactions: dict = field(default_factory=dict)


#: the keyword arguments recorded for a constructor called without any (one shared, read-only, empty mapping)
class _NoKeywords(dict):
    """An empty mapping nobody may fill (shared by every record); it pickles as a plain empty dict."""

    def _read_only(self, *args, **kwargs):
        raise TypeError("a constructor record's keywords are read-only")

    __setitem__ = __delitem__ = update = setdefault = pop = popitem = clear = _read_only  # type: ignore[assignment]

    def __reduce__(self):
        return (dict, ())


_NO_KEYWORDS = _NoKeywords()

#: every element (or body) class defined at module level, by ``"module.QualName"`` (see :class:`Recorded`)
REGISTRY = {}


class _Recording(type):
    """Metaclass of :class:`Recorded`: one call records the arguments and collects the sign rules.

    Recording at the class call (not in every ``__init__`` of the hierarchy) costs one
    step per element, whatever the depth of its classes.
    """

    def __call__(cls, *args, **kw):
        record = (cls, args, kw or _NO_KEYWORDS)  # (a shared empty mapping: most elements take none)
        if _REQUIREMENTS.get() is not None:  # made inside another element's constructor: its rules go there
            obj = super().__call__(*args, **kw)
            if getattr(obj, "_constructor", None) is None:
                obj._constructor = record
            return obj
        token = _REQUIREMENTS.set([])
        try:
            obj = super().__call__(*args, **kw)
            # attributes set, not obj.__dict__ read: reading it would make each instance a dict of its own
            if getattr(obj, "_constructor", None) is None:  # a __new__ that made another class's object keeps its own
                obj._constructor = record
            # symbolic values that must be positive once numbers are given (checked at simulation)
            obj.requirements = tuple(_REQUIREMENTS.get())
        finally:
            _REQUIREMENTS.reset(token)
        return obj


class Recorded(metaclass=_Recording):
    """Instances remember the class and the arguments they were made with (model files rebuild them).

    Calling a subclass stores ``(class, args, kwargs)`` in ``_constructor`` (the
    outermost call: an element made inside another's constructor keeps its
    own). Subclasses defined at module level are entered in :data:`REGISTRY`.
    New element classes (and bodies that derive from ``Recorded``) therefore
    save and load with no code of their own.

    >>> class Knob(Recorded):
    ...     def __init__(self, name, turns=1):
    ...         self.name = name
    >>> Knob("k", turns=3)._constructor[1:]
    (('k',), {'turns': 3})
    """

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "<locals>" not in cls.__qualname__:
            REGISTRY[f"{cls.__module__}.{cls.__qualname__}"] = cls


class Element(Recorded):
    """Base class of every element.

    Subclasses set ``ports`` (a tuple of :class:`Port`), ``values`` (parameter
    name -> number, symbol or expression of ``t``) and implement
    :meth:`contribute`. ``report_signs`` maps each port to the user's terminal
    order (+1 when the port runs from the first named terminal to the second).
    ``couples`` names other elements whose ports this one acts on (mutual
    inductance) instead of owning ports of its own.

    >>> import sympy as sp
    >>> from netdyn.components.base import Element, PortVariables, THROUGH
    >>> from netdyn.components.electrical import Resistor
    >>> r = Resistor("R1", "a", "0", 10.0)
    >>> isinstance(r, Element), r.values
    (True, {'R': 10.0000000000000})
    >>> q, f = sp.symbols("q f")
    >>> r.contribute([PortVariables(THROUGH, q, f)], r.values).D      # charge coordinates: D = R i²/2
    5.0*f**2
    """

    is_source = False
    couples: tuple = ()

    def __init__(self, name: str, ports: Any, values: Any = None, report_signs: Any = None,
                 terminals: Any = None) -> None:
        if not isinstance(name, str) or not name:
            raise ElementError(f"element name must be a non-empty string, got {name!r}")
        self.name = name
        self.ports = tuple(ports)
        values = values or {}
        if all(type(v) in _PLAIN and math.isfinite(v) for v in values.values()):  # numbers: kept as they are
            keys = tuple(values)
            self._keys, self._raw = _KEYS.setdefault(keys, keys), tuple(values.values())
        else:
            self.values = {k: as_expr(v, name, k) for k, v in values.items()}
        self.report_signs = _SIGNS.setdefault(signs := tuple(report_signs or (1,) * len(self.ports)), signs)
        self.terminals = tuple(terminals) if terminals is not None else tuple(
            n for p in self.ports for n in (p.a, p.b))
        for port in self.ports:
            if port.domain not in DOMAINS and port.domain not in BODY_DOMAINS:
                raise ElementError(f"{self.name}: unknown domain {port.domain!r}; "
                                   f"use one of {sorted(DOMAINS) + list(BODY_DOMAINS)}")
            if port.a == port.b:
                raise ElementError(
                    f"{self.name} is shorted to itself: both terminals are node {port.a!r}; "
                    "connect its terminals to two different nodes")

    @property
    def values(self) -> dict:
        """Parameter name -> sympy number, symbol or expression of ``t``. An element made with plain numbers
        keeps those numbers (and shares its tuple of names) until this is first read: the numeric paths read
        them through :func:`numeric_values` and never build these sympy objects.

        >>> from netdyn.components.electrical import Resistor
        >>> r = Resistor("R1", "a", "0", 2.5)
        >>> r._raw, r.values, r._raw
        ((2.5,), {'R': 2.50000000000000}, None)
        """
        try:
            return self._values
        except AttributeError:  # (attributes, not self.__dict__: reading that would give the instance a dict)
            pass
        raw = getattr(self, "_raw", None)
        d = {} if raw is None else {k: as_expr(v, self.name, k) for k, v in zip(self._keys, raw)}
        self.values = d
        return d

    @values.setter
    def values(self, values: dict) -> None:
        if getattr(self, "_raw", None) is not None:
            self._raw = None
        self._values = values

    def contribute(self, ports, values):  # pragma: no cover - interface
        """Return the :class:`Contribution` of this element for the given port variables."""
        raise NotImplementedError

    def __repr__(self):
        vals = ", ".join(f"{k}={engineering(v) if _is_number(v) else v}" for k, v in self.values.items())
        return f"{type(self).__name__}({self.name!r}, {', '.join(map(repr, self.terminals))}, {vals})"


#: value types an element keeps as they are (not as sympy numbers) until its ``values`` are read
_PLAIN = (float, int)
_KEYS = {}  # the shared tuples of value names (("R",), ("C",), ...)
_SIGNS = {}  # the shared report_signs tuples


def numeric_values(el: Element) -> dict[str, Any]:
    """An element's values without making sympy objects: the plain numbers it was made with (floats and
    ints, by name) while its :attr:`Element.values` were never read, else those values. The numeric paths
    (stamps, the SPICE start) read values through this; what they do with a number is the same either way
    (``float`` of the sympy number is the number).

    >>> from netdyn.components.electrical import Capacitor
    >>> c = Capacitor("C1", "a", "0", 1e-9)
    >>> numeric_values(c), hasattr(c, "_values")
    ({'C': 1e-09}, False)
    """
    raw = getattr(el, "_raw", None)
    if raw is not None:
        return dict(zip(el._keys, raw))
    return el.values


def _is_number(v):
    try:
        float(v)
        return not isinstance(v, bool)
    except (TypeError, ValueError):
        return False


def require_positive(element_name, parameter, value, allow_zero=False):
    """Reject non-physical numeric values (and NaN, inf, complex, non-numbers); symbols pass and are
    recorded on the element (``element.requirements``), so ``params=`` overrides are checked at simulation.

    >>> require_positive("R1", "R", 10)
    >>> require_positive("L1", "L", -1)
    Traceback (most recent call last):
    ...
    netdyn.errors.InvalidValueError: L1: L = -1 is not physical; give a positive value
    """
    if type(value) in _PLAIN and math.isfinite(value) and (value > 0 or (allow_zero and value == 0)):
        return  # a plain positive number: nothing to record, no sympy number made
    if callable(value) and not isinstance(value, sp.Basic):
        value = as_expr(value, element_name, parameter)
    v = positive(value, element_name, parameter, allow_zero)
    pending = _REQUIREMENTS.get()
    if not v.is_number and pending is not None:
        pending.append((element_name, parameter, v, allow_zero))


# --- linear and user-energy two-terminal laws --------------------------------------------------

class TwoTerminal(Element):
    """A one-port element between terminals ``a`` and ``b`` of one domain."""

    domain = None

    def __init__(self, name, a, b, values=None, domain=None, swap=False):
        a, b = node_name(a), node_name(b)
        port = Port(domain or self.domain, b, a) if swap else Port(domain or self.domain, a, b)
        super().__init__(name, [port], values, report_signs=(-1,) if swap else (1,), terminals=(a, b))


class LinearLaw(TwoTerminal):
    """A linear storage or dissipation law, usable in both port kinds.

    ``law`` is one of

    * ``"across_storage"``: ``v = L di/dt`` (inductor; a spring has L = 1/k),
    * ``"through_storage"``: ``i = C dv/dt`` (capacitor; a mass has C = m),
    * ``"dissipator"``: ``v = R i`` (resistor; a damper has R = 1/c).

    ``natural`` gives the element's coefficient (L, C or R) from its values.
    """

    law = None

    def coefficient(self, values):
        raise NotImplementedError

    def contribute(self, ports, values):
        (pv,) = ports
        return linear_law(self.name, self.law, pv, self.coefficient(values))


def linear_law(name, law, pv, c):
    """The :class:`Contribution` of a linear law of coefficient ``c`` (L, C or R) on one port, in either kind.

    >>> import sympy as sp
    >>> q, f = sp.symbols("q f")
    >>> linear_law("C1", "through_storage", PortVariables(THROUGH, q, f), 2).V
    q**2/4
    """
    through = pv.kind == THROUGH
    if law == "across_storage":
        return Contribution(T=c * pv.f**2 / 2) if through else Contribution(V=pv.q**2 / (2 * c))
    if law == "through_storage":
        return Contribution(V=pv.q**2 / (2 * c)) if through else Contribution(T=c * pv.f**2 / 2)
    if law == "dissipator":
        return Contribution(D=c * pv.f**2 / 2) if through else Contribution(D=pv.f**2 / (2 * c))
    raise ElementError(f"{name}: unknown law {law!r}")


class EnergyLaw(TwoTerminal):
    """A (possibly nonlinear) element given by its energy function in its natural kind.

    ``role`` is ``"T"``, ``"V"`` or ``"D"``; ``function`` maps the port
    displacement (for ``V``) or flow (for ``T`` and ``D``) to the energy.
    """

    def __init__(self, name, a, b, role, function, natural_kind, domain=None):
        super().__init__(name, a, b, {}, domain=domain)
        if role not in ("T", "V", "D"):
            raise ElementError(f"{name}: energy role must be 'T', 'V' or 'D', got {role!r}")
        self.role, self.function, self.natural_kind = role, function, natural_kind

    def contribute(self, ports, values):
        (pv,) = ports
        if pv.kind != self.natural_kind:
            raise ElementError(
                f"{self.name} is given by its {self.role} function in {self.natural_kind} variables and has no "
                f"closed-form dual; use a formulation that keeps this domain in {self.natural_kind} coordinates")
        arg = pv.q if self.role == "V" else pv.f
        expr = sp.sympify(self.function(arg))
        return Contribution(**{self.role: expr})


# --- sources -----------------------------------------------------------------------------------

class Source(TwoTerminal):
    """A two-terminal source of one prescribed ``value`` (number or expression of ``t``)."""

    is_source = True

    def __init__(self, name, a, b, value, domain=None, swap=False):
        super().__init__(name, a, b, {"value": value}, domain=domain, swap=swap)


class ThroughSource(Source):
    """Prescribes the through variable: ``value`` flows from ``a`` to ``b`` (into node ``b``)."""

    def contribute(self, ports, values):
        (pv,) = ports
        s = values["value"]
        if pv.kind == THROUGH:
            return Contribution(flow_constraints=[pv.f - s])
        return Contribution(efforts={0: -s})


class AcrossSource(Source):
    """Prescribes the across rate: ``value(b) - value(a) = value`` (the port runs a -> b)."""

    def contribute(self, ports, values):
        (pv,) = ports
        s = values["value"]
        if pv.kind == THROUGH:
            return Contribution(efforts={0: s})
        return Contribution(flow_constraints=[pv.f + s])


class DisplacementSource(Source):
    """Prescribes the across displacement: ``x(b) - x(a) = value(t)`` (a rheonomic constraint)."""

    def contribute(self, ports, values):
        (pv,) = ports
        s = values["value"]
        if pv.kind == THROUGH:
            return Contribution(efforts={0: sp.diff(s, t)})
        return Contribution(constraints=[pv.q + s])


# --- ideal two-ports ---------------------------------------------------------------------------

class TwoPort(Element):
    """An ideal power-conserving two-port between port 1 ``(a1, b1)`` and port 2 ``(a2, b2)``.

    ``coupling="transformer"``: ``v2 = n v1`` and ``i1 = -n i2``.
    ``coupling="gyrator"``: ``v1 = r i2`` and ``v2 = -r i1``.
    Both absorb no power. Depending on the kinds of the two ports the coupling
    is a flow (Pfaffian) constraint or a pair of applied efforts.

    >>> import sympy as sp
    >>> q1, f1, q2, f2 = sp.symbols("q1 f1 q2 f2")
    >>> g = TwoPort("G1", Port("electrical", "a", "0"), Port("electrical", "b", "0"), "gyrator", 2)
    >>> g.contribute([PortVariables(THROUGH, q1, f1), PortVariables(THROUGH, q2, f2)], g.values).efforts
    {0: -2*f2, 1: 2*f1}
    """

    def __init__(self, name: str, port1: Any, port2: Any, coupling: Any, ratio: Any, terminals: Any = None) -> None:
        if coupling not in ("transformer", "gyrator"):
            raise ElementError(f"{name}: coupling must be 'transformer' or 'gyrator'")
        super().__init__(name, [port1, port2], {"ratio": ratio}, terminals=terminals)
        self.coupling = coupling
        r = as_expr(ratio)
        if r.is_zero:
            raise ElementError(f"{name}: ratio 0 disconnects the two ports; give a non-zero ratio")

    def contribute(self, ports, values):
        p1, p2 = ports
        n = values["ratio"]
        k1, k2 = p1.kind, p2.kind
        f1, f2 = p1.f, p2.f
        if self.coupling == "transformer":
            if k1 == ACROSS and k2 == ACROSS:
                return Contribution(flow_constraints=[f2 - n * f1])
            if k1 == THROUGH and k2 == THROUGH:
                return Contribution(flow_constraints=[f1 + n * f2])
            if k1 == THROUGH:  # f1 = i1, f2 = v2
                return Contribution(efforts={0: -f2 / n, 1: f1 / n})
            return Contribution(efforts={0: n * f2, 1: -n * f1})  # f1 = v1, f2 = i2
        # gyrator
        if k1 == THROUGH and k2 == THROUGH:
            return Contribution(efforts={0: -n * f2, 1: n * f1})
        if k1 == ACROSS and k2 == ACROSS:
            return Contribution(efforts={0: f2 / n, 1: -f1 / n})
        if k1 == THROUGH:  # f1 = i1, f2 = v2 = -r i1
            return Contribution(flow_constraints=[f2 + n * f1])
        return Contribution(flow_constraints=[f1 - n * f2])  # f1 = v1 = r i2
