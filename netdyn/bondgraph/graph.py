"""``BondGraph``: elements as nodes, bonds as directed edges of a networkx graph.

A bond carries an effort ``e`` and a flow ``f``; its direction is the power
half-arrow: ``e * f`` flows from the bond's tail to its head. Element kinds:

========  ======  ==============================================================
kind      bonds   parameters
========  ======  ==============================================================
``Se``    1       ``effort`` — number, sympy expression or callable of ``netdyn.t``
``Sf``    1       ``flow`` — the flow of its bond (same forms)
``C``     1       one of ``C`` (linear: e = q / C), ``energy`` V(q) (e = dV/dq),
                  ``coenergy`` V*(e) (q = dV*/de) or ``law`` — ``"e = ..."`` (in q)
                  or ``"q = ..."`` (in e)
``I``     1       one of ``I`` (linear: f = p / I), ``energy`` H(p) (f = dH/dp),
                  ``coenergy`` T*(f) (p = dT*/df) or ``law`` — ``"f = ..."`` (in p)
                  or ``"p = ..."`` (in f)
``R``     1       one of ``R`` (linear: e = R f), ``content`` D(f) (e = dD/df),
                  ``cocontent`` D*(e) (f = dD*/de) or ``law`` — ``"e = ..."``
                  (resistance law, in f) or ``"f = ..."`` (conductance law, in e);
                  functions are callables or expressions in their variable, laws
                  text, a sympy ``Eq`` or a pair ``("f", expression or callable)``
                  (:mod:`netdyn.bondgraph.laws`: each law is used in the causality
                  the graph assigns, inverted in closed form or numerically)
                  ``C``/``I``/``R`` with ``ports=n``: a multiport field of n
                  bonds, its function of ``q1..qn`` / ``f1..fn`` or an n x n
                  symmetric matrix (V = ½ qᵀC⁻¹q, T* = ½ fᵀIf, D = ½ fᵀRf)
``TF``    2       ``ratio`` r: f2 = r f1 (e1 = r e2 with bond 1 in, bond 2 out)
``GY``    2       ``ratio`` r: e1 = r f2, e2 = r f1 (bond 1 in, bond 2 out)
``MTF``   2       ``ratio`` — callable or expression in ``x``; ``by`` — the
                  element (or bond) whose displacement is ``x``
``MGY``   2       as ``MTF``
``0``     >= 2    common effort, flows sum to zero (in − out)
``1``     >= 2    common flow, efforts sum to zero (in − out)
``port``  2       a connection point of a sub-model (see :meth:`BondGraph.add_submodel`)
========  ======  ==============================================================

Port 1 of a two-port is the first bond connected to it. Each bond owns a
displacement ``q_<bond>`` (the integral of its flow); a 1-port element sees its
bond's variables with the sign of the half-arrow (``+`` when the bond points
into it), so ``C``'s displacement is its charge, ``I``'s flow its current.

>>> import netdyn
>>> bg = netdyn.BondGraph("RC")
>>> bg.add("Se", "u", effort=1.0); bg.add("1", "J"); bg.add("C", "C1", C=1.0); bg.add("R", "R1", R=1.0)
>>> bg.chain("u", "J", "C1"), bg.bond("J", "R1")
(['u', 'C1'], 'R1')
>>> sorted(bg.graph.nodes)
['C1', 'J', 'R1', 'u']
"""
from __future__ import annotations

import re

import networkx as nx
import numpy as np
import sympy as sp

from netdyn.errors import ElementError, InvalidValueError, NetdynError, ParameterError, TopologyError
from netdyn.lagrange.exprtext import from_text
from netdyn.symbols import as_expr, t

from netdyn.bondgraph.kinds import (FIELDS, FIELD_DUAL, FIELD_MAIN, FIELD_PARAMETERS, FUNCTION_VARIABLE,  # noqa: F401
                                    JUNCTIONS, KINDS, SOURCES, STORAGE, TWO_PORTS, F, Q, X, ALIASES as _ALIASES,
                                    field_variables, function_variable, quadratic_form)
from netdyn.bondgraph.laws import element_law, parse_relation
from netdyn.bondgraph.causality import assign_causality
from netdyn.bondgraph.convert import state_equations, to_model
from netdyn.bondgraph.draw import draw
from netdyn.bondgraph.linear import linear_form, linear_start
from netdyn.bondgraph.system import storage_names, with_inputs

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # names for the hints only (annotations are not evaluated)
    from netdyn.hints import PathArg, Value
    from collections.abc import Mapping, Sequence
    from typing import IO, Any
    from netdyn.bondgraph.causality import Causality
    from netdyn.bondgraph.laws.equations import StateEquations
    from netdyn.lagrange.model import LagrangianModel


def _function_expr(name, pname, value, var):
    """A function-valued parameter as an expression in ``var`` (callables are called on it; a list of
    variables: a field's function of several)."""
    if callable(value) and not isinstance(value, sp.Basic):
        try:
            return sp.sympify(value(*var) if isinstance(var, list) else value(var))
        except Exception as exc:  # noqa: BLE001 - report the user's function failing
            raise ElementError(f"{name}: {pname} must be a function of one variable; calling it on {var} "
                               f"failed ({exc})") from None
    expr = sp.sympify(value)
    return expr


def _field_parameter(name, kind, p, v, n):
    """A field's parameter: a function of ``q1..qn``/``f1..fn``, or a symmetric n x n matrix (C, I, R)."""
    if p in ("energy", "coenergy", "content", "cocontent"):
        variables = field_variables(p, n, kind)
        expr = _function_expr(name, p, v, variables)
        extra = {s for s in expr.free_symbols if s.name[:1] in "qfep" and s.name[1:].isdigit()} - set(variables)
        if extra:
            raise ParameterError(f"{name}: its {p} uses {sorted(map(str, extra))}; a {n}-port {kind} field's {p} "
                                 f"is a function of {[str(x) for x in variables]}")
        if p == FIELD_DUAL[kind]:
            H = quadratic_form(expr, variables)
            main = field_variables(FIELD_MAIN[kind], n, kind)
            if H is None:
                raise ElementError(
                    f"{name}: a {kind} field's {p} must be a quadratic form ½ xᵀHx of {[str(x) for x in variables]} "
                    f"(then its {FIELD_MAIN[kind]} is ½ yᵀH⁻¹y); a nonlinear one would need the inverse of its "
                    f"gradient map, n equations in n unknowns with no closed form, solved inside every residual "
                    f"(a one-port's law is inverted by a scalar Newton iteration; a field's is not built): give its "
                    f"{FIELD_MAIN[kind]} as a function of {[str(x) for x in main]} instead")
            _check_matrix(name, kind, p, sp.ImmutableMatrix(H))
        return expr
    try:
        mat = sp.ImmutableMatrix([[as_expr(x) for x in row] for row in v])
    except (TypeError, ValueError):
        mat = None
    if mat is None or mat.shape != (n, n):
        raise ParameterError(f"{name}: a {n}-port {kind} field takes {p} as an {n} x {n} matrix (list of rows), "
                             f"or its {FIELD_FUNCTION[kind]} as a function of {n} variables")
    return _check_matrix(name, kind, p, mat)


def _check_matrix(name, kind, p, mat):
    """A field's matrix (or a quadratic form's): symmetric, and positive definite when numeric."""
    if mat != mat.T:
        raise ElementError(f"{name}: the {p} matrix is not symmetric; a field that stores or dissipates energy "
                           "from one function has a symmetric matrix")
    if all(x.is_number for x in mat):
        if np.min(np.linalg.eigvalsh(np.array(mat, dtype=float))) <= 0:
            raise ElementError(f"{name}: the {p} matrix is not positive definite; give a physical (positive "
                               "definite) matrix")
    return mat


FIELD_FUNCTION = {"C": "energy", "I": "coenergy", "R": "content"}


def _value(name, p, v):
    """A parameter value: a number, SPICE number, symbol or sympy expression, or an expression as text
    (``"A/(rho*g)"``, read without ``eval``; ``t`` is time)."""
    try:
        return as_expr(v)
    except InvalidValueError:
        if not isinstance(v, str):
            raise
        return from_text(v, where=f"{name}.{p}").xreplace({sp.Symbol("t"): t})


class BondGraph:
    """A bond graph on a ``networkx.MultiDiGraph``: node = element, edge = bond (tail -> head = power).

    Node data: ``kind``, ``params`` (sympy values), ``bonds`` (bond names in port
    order). Edge key = bond name. ``effort``/``flow`` name the domain's variables
    (``"pressure"``, ``"volume flow"``) for drawings and files.

    >>> bg = BondGraph("mass")
    >>> bg.add("Se", "F", effort=2.0); bg.add("I", "m", I=4.0)
    >>> bg.bond("F", "m")
    'm'
    >>> bg.kind("m"), bg.bonds_of("m")
    ('I', ['m'])
    """

    def __init__(self, name: str = "bond graph", effort: str = "effort", flow: str = "flow",
                 units: Mapping[str, str] | None = None) -> None:
        self.name = name
        #: what the efforts and flows are called in this graph's domain (labels and reports only)
        self.effort_name, self.flow_name = effort, flow
        #: their units, ``{"effort": "Pa", "flow": "m^3/s"}`` (reports, plots and files)
        self.units = dict(units or {})
        unknown = sorted(set(self.units) - {"effort", "flow"})
        if unknown:
            raise ParameterError(f"units: {unknown[0]!r} is not a bond variable; give units for 'effort' and 'flow'")
        #: named parameters: name -> {"value", "unit", "description"} (the defaults of the symbols they name)
        self.parameters = {}
        self.graph = nx.MultiDiGraph(name=name)
        self._bond_ends = {}  # bond name -> (tail, head)

    def parameter(self, name: str, value: Value, unit: str | None = None,
                  description: str | None = None) -> sp.Symbol:
        """A named parameter: a symbol that element values may use (``C="A/(rho*g)"``), with its default
        value, unit and description — kept by files and given to every model as its default.

        >>> bg = BondGraph("tank", effort="pressure", flow="volume flow", units={"effort": "Pa", "flow": "m^3/s"})
        >>> A = bg.parameter("A", 0.5, "m^2", "tank area"); _ = bg.parameter("rho", 1000.0, "kg/m^3")
        >>> bg.add("C", "tank", C="A/(rho*9.81)"); bg.add("Sf", "pump", flow=1e-3); _ = bg.bond("pump", "tank")
        >>> bg.model().parameters[A], bg.params("tank")["C"]
        (0.5, 0.101936799184506*A/rho)
        """
        if not isinstance(name, str) or not name.isidentifier() or name.startswith("_"):
            raise ParameterError(f"parameter name {name!r} is not an identifier")
        v = as_expr(value)
        if not (v.is_number and v.is_real):
            raise ParameterError(f"parameter {name}: its value {value!r} is not a real number")
        if name in self.graph:
            raise ParameterError(f"parameter {name}: an element has that name; name the parameter otherwise")
        self.parameters[name] = {"value": v, "unit": None if unit is None else str(unit),
                                 "description": None if description is None else str(description)}
        return sp.Symbol(name)

    def parameter_values(self) -> dict[sp.Symbol, Any]:
        """``{Symbol: value}`` of the named parameters (the models' defaults)."""
        return {sp.Symbol(k): v["value"] for k, v in self.parameters.items()}

    # ----------------------------------------------------------------- building
    def add(self, kind: str, name: str, **params: Any) -> None:
        """Add an element of ``kind`` (see the module table) called ``name``; unknown parameters are errors.

        ``value=`` (BondGraphTools' spelling) stands for the kind's main parameter:
        ``C``, ``I``, ``R``, ``effort``, ``flow`` or ``ratio``.

        >>> bg = BondGraph()
        >>> bg.add("C", "C1", value=2.0); bg.add("Se", "u", value=1.0)
        >>> bg.params("C1"), bg.params("u")
        ({'C': 2.00000000000000}, {'effort': 1.00000000000000})
        """
        kind = _ALIASES.get(kind, kind)
        if kind not in KINDS:
            raise ElementError(f"{name}: unknown bond-graph element kind {kind!r}; use one of {sorted(KINDS)}")
        if "value" in params:
            groups = KINDS[kind][1]
            if not groups:
                raise ParameterError(f"{name}: a {kind} element has no value; its parameters are none")
            main = groups[0][0]
            if params.get(main) is not None:
                raise ParameterError(f"{name}: give {main}= or value=, not both")
            params[main] = params.pop("value")
        if not isinstance(name, str) or not name:
            raise ElementError(f"element name must be a non-empty string, got {name!r}")
        if name in self.graph:
            raise ElementError(f"duplicate element name {name!r}: every element needs its own name")
        if name in getattr(self, "parameters", {}):
            raise ElementError(f"{name}: a parameter has that name; name the element otherwise")
        _, groups, optional = KINDS[kind]
        allowed = {p for g in groups for p in g} | set(optional)
        unknown = sorted(set(params) - allowed)
        if unknown:
            raise ParameterError(f"{name}: unknown parameter {unknown[0]!r} for a {kind} element; "
                                 f"its parameters are {sorted(allowed) or 'none'}")
        for group in groups:
            given = [p for p in group if params.get(p) is not None]
            if len(given) != 1:
                what = " or ".join(repr(p) for p in group)
                raise ParameterError(f"{name}: a {kind} element needs exactly one of {what}"
                                     + (f", got {given}" if given else ""))
        values = {}
        ports = params.get("ports")
        port_names = None
        if isinstance(ports, (list, tuple)):   # named ports, in port order
            port_names = [str(x) for x in ports]
            if len(set(port_names)) != len(port_names) or not all(port_names):
                raise ParameterError(f"{name}: port names {list(ports)} must be distinct and non-empty")
            if kind in TWO_PORTS and len(port_names) != 2:
                raise ParameterError(f"{name}: a {kind} has two ports; name both (ports=('in', 'out')), got {port_names}")
            ports = len(port_names) if kind in FIELDS else None
        if ports is not None and (isinstance(ports, bool) or not isinstance(ports, int) or ports < 1):
            raise ParameterError(f"{name}: ports = {ports!r}; a field has a whole number of ports, 1 or more, or a "
                                 "list of port names")
        field = bool(ports and ports > 1 and kind in FIELDS)
        for p, v in params.items():
            if v is None or p == "ports":
                continue
            if field and p not in FIELD_PARAMETERS[kind]:
                raise ParameterError(f"{name}: a {ports}-port {kind} field takes {' or '.join(FIELD_PARAMETERS[kind])}"
                                     f" (a matrix or a function of {ports} variables), not {p}")
            if field:
                values[p] = _field_parameter(name, kind, p, v, ports)
            elif p == "law":
                lhs, rhs = parse_relation(name, kind, v)
                values[p] = sp.Eq(lhs, rhs, evaluate=False)
            elif p in ("energy", "coenergy", "content", "cocontent"):
                values[p] = _function_expr(name, p, v, function_variable(kind, p))
            elif p == "ratio" and kind in ("MTF", "MGY"):
                values[p] = _function_expr(name, p, v, X)
            elif p in ("by", "label", "kinds", "element"):
                values[p] = v
            else:
                values[p] = _value(name, p, v)
                if kind in ("C", "I", "R") and values[p].is_number and values[p].is_real and not values[p] > 0:
                    raise ElementError(f"{name}: {p} = {v} is not physical; give a positive value")
                if kind in TWO_PORTS and values[p].is_zero:
                    raise ElementError(f"{name}: ratio 0 disconnects the two bonds; give a non-zero ratio")
        self.graph.add_node(name, kind=kind, params=values, bonds=[])
        texts = {p: v.strip() for p, v in params.items() if isinstance(v, str) and p not in ("by", "label")}
        if texts:   # the values as the user wrote them (files keep them when they read back the same)
            self.graph.nodes[name]["text"] = texts
        if port_names is not None:
            self.graph.nodes[name]["port_names"] = port_names
        if field:
            self.graph.nodes[name]["ports"] = ports
        elif kind in ("C", "I", "R"):
            try:
                element_law(self, name)
            except NetdynError:
                self.graph.remove_node(name)
                raise

    def ports(self, name: str) -> int | None:
        """How many bonds element ``name`` takes (``None``: any number from its kind's minimum)."""
        n = self.graph.nodes[name].get("ports")
        if n is not None:
            return n
        need = KINDS[self.kind(name)][0]
        return need if isinstance(need, int) else None

    def is_field(self, name: str) -> bool:
        """Whether ``name`` is a multiport C, I or R field (``ports`` > 1)."""
        return self.graph.nodes[name].get("ports", 1) > 1

    def add_port(self, name: str) -> None:
        """A connection point for using this graph as a sub-model (one bond inside, one outside)."""
        self.add("port", name)

    def modulating(self, name: str) -> dict[sp.Symbol, tuple[str, str]]:
        """What the modulus of an ``MTF``/``MGY`` reads: ``{symbol: (which, target)}`` with ``("x", by)`` for
        ``x`` (the displacement of the element or bond ``by=``), ``("q", X)`` for a symbol ``q_<X>`` (the
        displacement of element or bond X: a C's charge, an I's position) and ``("p", I)`` for ``p_<I>`` (the
        momentum of I element ``I``); other symbols are parameters.

        >>> bg = BondGraph()
        >>> bg.add("I", "m", I=1.0); bg.add("MTF", "lever", ratio="2*cos(q_m)")
        >>> bg.modulating("lever")
        {q_m: ('q', 'm')}
        """
        expr = sp.sympify(self.params(name).get("ratio", 0))
        out = {}
        if X in expr.free_symbols:
            by = self.params(name).get("by")
            if by is None:
                raise TopologyError(f"{name}: its ratio uses x but no element gives x: pass by=<element or bond>, "
                                    "or write the variable by name (q_<element>, p_<I element>)")
            out[X] = ("x", by)
        names = {}
        ident = lambda x: re.sub(r"\W", "_", x)
        for b in self._bond_ends:
            names["q_" + ident(b)] = ("q", b)
        for el, d in self.graph.nodes(data=True):
            if d["kind"] in ("C", "I", "R", "Se", "Sf") and d.get("ports", 1) == 1:
                names["q_" + ident(el)] = ("q", el)
                if d["kind"] == "I":
                    names["p_" + ident(el)] = ("p", el)
        for sym in sorted(expr.free_symbols - {X, t}, key=str):
            if sym.name in names:
                out[sym] = names[sym.name]
        return out

    def port_names(self, name: str) -> list[str] | None:
        """The names of the ports of a two-port or field (``None`` where they are numbered only)."""
        names = self.graph.nodes[name].get("port_names")
        return list(names) if names else None

    def _port_index(self, element, port):
        """0-based index of ``port`` (1-based number or name) of ``element``."""
        names = self.port_names(element) or []
        k = self.ports(element) or 2
        if isinstance(port, str) and port in names:
            return names.index(port)
        if isinstance(port, int) and not isinstance(port, bool) and 1 <= port <= k:
            return port - 1
        if isinstance(port, str) and port.isdigit() and 1 <= int(port) <= k:
            return int(port) - 1
        raise TopologyError(f"{element} has no port {port!r}; its ports are "
                            f"{names or list(range(1, k + 1))} (a name or a number from 1)")

    def bond(self, tail: str | tuple[str, str | int], head: str | tuple[str, str | int],
             name: str | None = None) -> str:
        """A bond from ``tail`` to ``head`` (power positive tail -> head); returns the bond's name.

        An end may name a port of a two-port or field: ``(element, port)`` with
        ``port`` a number from 1 or one of the names given by ``ports=``; without one,
        a bond takes the first free port.

        >>> bg = BondGraph()
        >>> bg.add("TF", "gear", ratio=3, ports=("motor", "load")); bg.add("Se", "u", effort=1); bg.add("I", "J", I=1)
        >>> _ = bg.bond("gear", "J"); _ = bg.bond("u", ("gear", "motor"))    # connected load side first
        >>> bg.bonds_of("gear")
        ['u', 'J']
        """
        slots = {}
        if isinstance(tail, tuple):
            tail, tp = tail
            slots[tail] = tp
        if isinstance(head, tuple):
            head, hp = head
            slots[head] = hp
        for end in (tail, head):
            if end not in self.graph:
                raise TopologyError(f"bond {tail!r} -> {head!r}: there is no element {end!r}; add it first "
                                    f"(elements: {sorted(self.graph.nodes)})")
        if tail == head:
            raise TopologyError(f"bond {tail!r} -> {head!r} joins an element to itself")
        for end in (tail, head):
            n, _, _ = KINDS[self.kind(end)]
            hi = self.graph.nodes[end].get("ports") or (n if isinstance(n, int) else n[1])
            if hi is not None and len(self.bonds_of(end)) >= hi:
                raise TopologyError(f"bond {tail!r} -> {head!r}: {end} is a {self.kind(end)} element and "
                                    f"takes {hi} bond{'s' if hi > 1 else ''}; it already has {self.bonds_of(end)}")
        for end, port in slots.items():
            if self.kind(end) not in TWO_PORTS and not self.is_field(end):
                raise TopologyError(f"bond {tail!r} -> {head!r}: {end} is a {self.kind(end)} element; only two-ports "
                                    "and fields have ports to choose")
            k = self._port_index(end, port)
            taken = self.graph.nodes[end].setdefault("slots", {})
            if k in taken.values():
                held = next(b for b, i in taken.items() if i == k)
                raise TopologyError(f"bond {tail!r} -> {head!r}: port {port!r} of {end} already has bond {held!r}")
            slots[end] = k
        if name is None:
            name = self._default_bond_name(tail, head)
        if name in self._bond_ends:
            raise TopologyError(f"duplicate bond name {name!r}")
        self.graph.add_edge(tail, head, key=name)
        self._bond_ends[name] = (tail, head)
        for end in (tail, head):
            node = self.graph.nodes[end]
            if end in slots:
                node["slots"][name] = slots[end]
            node["bonds"].append(name)
            if node.get("slots"):
                self._order_ports(end)
        return name

    def _order_ports(self, end):
        """The bonds of a two-port or field in port order: those given a port first at theirs, the others in the
        free ports in the order they were connected."""
        node = self.graph.nodes[end]
        slots = node["slots"]
        k = self.ports(end) or 2
        order = [None] * max(k, len(node["bonds"]))
        for b, i in slots.items():
            order[i] = b
        rest = iter(b for b in node["bonds"] if b not in slots)
        node["bonds"] = [b for b in (b if b is not None else next(rest, None) for b in order) if b is not None]

    def connect(self, tail: str | tuple[str, str | int], head: str | tuple[str, str | int],
                name: str | None = None) -> str:
        """:meth:`bond` under BondGraphTools' name: ``connect(a, b)`` bonds ``a`` to ``b`` (power a -> b)."""
        return self.bond(tail, head, name=name)

    def chain(self, *names: str) -> list[str]:
        """Bonds along a path: ``chain("u", "J", "C1")`` is ``bond("u", "J"); bond("J", "C1")``."""
        return [self.bond(a, b) for a, b in zip(names[:-1], names[1:])]

    def _default_bond_name(self, tail, head):
        ones = [n for n in (head, tail) if KINDS[self.kind(n)][0] == 1 and self.kind(n) != "port"]
        named = [n for n in ones if self.kind(n) not in SOURCES] or ones
        base = named[0] if named else f"{tail}_{head}"
        name, k = base, 2
        while name in self._bond_ends or (name != base and name in self.graph):
            name, k = f"{base}_{k}", k + 1
        return name

    def add_submodel(self, sub: BondGraph, prefix: str) -> dict[str, str]:
        """Copy the bond graph ``sub`` into this one, every name prefixed ``"<prefix>."``.

        Its ``port`` elements become connection points: bond them to this graph's
        elements (``bond("u", "motor.p_el")``); each port then joins one bond inside
        to one outside.
        """
        if not isinstance(sub, BondGraph):
            raise TypeError(f"add_submodel takes a BondGraph, got {type(sub).__name__}")
        ren = {n: f"{prefix}.{n}" for n in sub.graph.nodes}
        for k, v in sub.parameters.items():
            if k in self.parameters and self.parameters[k]["value"] != v["value"]:
                raise ParameterError(f"sub-model {prefix!r}: parameter {k} = {v['value']} differs from this graph's "
                                     f"{k} = {self.parameters[k]['value']}; rename one of them")
            self.parameters.setdefault(k, dict(v))
        for n in sub.graph.nodes:
            d = sub.graph.nodes[n]
            if ren[n] in self.graph:
                raise ElementError(f"duplicate element name {ren[n]!r} from sub-model {prefix!r}")
            params = dict(d["params"])
            if "by" in params:
                params["by"] = f"{prefix}.{params['by']}"
            if d["kind"] in ("MTF", "MGY"):   # q_<X>, p_<X> of the sub-model's own elements: renamed with them
                sub_names = {sym: sp.Symbol(sym.name[:2] + re.sub(r"\W", "_", f"{prefix}.{target}"))
                             for sym, (which, target) in sub.modulating(n).items() if which != "x"}
                params["ratio"] = sp.sympify(params["ratio"]).xreplace(sub_names)
            self.graph.add_node(ren[n], kind=d["kind"], params=params, bonds=[])
            for key in ("ports", "port_names"):
                if key in d:
                    self.graph.nodes[ren[n]][key] = d[key]
        for b in sub.bond_names:
            a, h = sub.ends(b)
            self.bond(ren[a], ren[h], name=f"{prefix}.{b}")
        for n in sub.graph.nodes:   # port order as in the sub-model
            self.graph.nodes[ren[n]]["bonds"] = [f"{prefix}.{b}" for b in sub.bonds_of(n)]
            if "slots" in sub.graph.nodes[n]:
                self.graph.nodes[ren[n]]["slots"] = {f"{prefix}.{b}": i for b, i in sub.graph.nodes[n]["slots"].items()}
        return ren

    # ----------------------------------------------------------------- queries
    def kind(self, name: str) -> str:
        """The kind of element ``name``."""
        if name not in self.graph:
            raise ElementError(f"no element {name!r} in bond graph {self.name!r}")
        return self.graph.nodes[name]["kind"]

    def params(self, name: str) -> dict[str, Any]:
        """The parameter values of element ``name``."""
        self.kind(name)
        return self.graph.nodes[name]["params"]

    def bonds_of(self, name: str) -> list[str]:
        """The bonds of element ``name`` in port order."""
        self.kind(name)
        return list(self.graph.nodes[name]["bonds"])

    def ends(self, bond: str) -> tuple[str, str]:
        """``(tail, head)`` of a bond."""
        try:
            return self._bond_ends[bond]
        except KeyError:
            raise TopologyError(f"no bond {bond!r}; bonds are {sorted(self._bond_ends)}") from None

    @property
    def bond_names(self) -> list[str]:
        return list(self._bond_ends)

    @property
    def elements(self) -> list[str]:
        return list(self.graph.nodes)

    def sign(self, element: str, bond: str) -> int:
        """+1 when ``bond`` points into ``element``, -1 when out of it."""
        tail, head = self.ends(bond)
        if element == head:
            return 1
        if element == tail:
            return -1
        raise TopologyError(f"bond {bond!r} does not touch {element!r}")

    def other_end(self, element: str, bond: str) -> str:
        tail, head = self.ends(bond)
        return head if element == tail else tail

    def of_kind(self, *kinds: str) -> list[str]:
        return [n for n in self.graph.nodes if self.graph.nodes[n]["kind"] in kinds]

    def coordinate_name(self, bond: str) -> str:
        """The model coordinate of a bond (or of the one bond of an element): see :meth:`coordinate_names`.

        >>> bg = BondGraph()
        >>> bg.add("Se", "u", effort=1.0); bg.add("C", "Cs", C=1.0); _ = bg.bond("u", "Cs", name="b4")
        >>> bg.coordinate_name("b4"), bg.coordinate_name("Cs")
        ('q_Cs', 'q_Cs')
        """
        if bond not in self._bond_ends and bond in self.graph:
            bond = self.bond_of(bond)
        return self.coordinate_names()[bond]

    def coordinate_names(self) -> dict[str, str]:
        """``{bond: coordinate name}``: a bond into a one-port ``C`` or ``I`` is named after that element
        (``q_<element>``, its displacement: the storage element's energy variable or the integral of its
        flow), every other bond ``q_<bond>``; non-identifier characters become ``_``."""
        names, count = {}, {}
        for b, (tail, head) in self._bond_ends.items():
            own = self.graph.nodes[head]["kind"] in STORAGE and not self.is_field(head)
            names[b] = "q_" + re.sub(r"\W", "_", head if own else b)
            count[names[b]] = count.get(names[b], 0) + 1
        for b, name in names.items():   # two bonds on one name (a bond named like another's element): bond names
            if count[name] > 1:
                names[b] = "q_" + re.sub(r"\W", "_", b)
        return names

    def bond_of(self, element: str) -> str:
        """The one bond of a 1-port element (or a bond named ``element``)."""
        if element in self._bond_ends and element not in self.graph:
            return element
        bonds = self.bonds_of(element)
        if len(bonds) != 1:
            raise TopologyError(f"{element} has {len(bonds)} bonds; name one of them: {bonds}")
        return bonds[0]

    # ----------------------------------------------------------------- checks
    def check(self, allow_open_ports: bool = False) -> bool:
        """Structural checks: bond counts per element kind, modulating elements exist.

        Raises :class:`~netdyn.errors.TopologyError` naming the element.
        """
        if self.graph.number_of_nodes() == 0:
            raise TopologyError(f"bond graph {self.name!r} is empty; add elements and bonds")
        for n in self.graph.nodes:
            kind = self.kind(n)
            count = len(self.bonds_of(n))
            need = self.graph.nodes[n].get("ports") or KINDS[kind][0]
            if kind == "port" and allow_open_ports and count == 1:
                continue
            if kind in JUNCTIONS and count < 2:
                raise TopologyError(f"{kind}-junction {n} has {count} bond{'s' if count != 1 else ''}; a junction "
                                    "joins two or more bonds: bond it to more elements or remove it")
            if isinstance(need, int) and count != need:
                what = "a port of a sub-model joins one bond inside to one outside" if kind == "port" else \
                    f"a {kind} element has exactly {need} bond{'s' if need > 1 else ''}"
                raise TopologyError(f"{n} has {count} bond{'s' if count != 1 else ''} ({self.bonds_of(n)}); "
                                    f"{what}")
            if isinstance(need, tuple) and count < need[0]:
                raise TopologyError(f"{n} has {count} bonds; a {kind} element needs at least {need[0]}")
            by = self.params(n).get("by")
            if by is not None and by not in self.graph and by not in self._bond_ends:
                raise TopologyError(f"{n} is modulated by {by!r}, which is neither an element nor a bond of the graph")
            if kind in ("MTF", "MGY"):
                self.modulating(n)   # x without by=: said here
        return True

    # ----------------------------------------------------------------- downstream
    def causality(self) -> Causality:
        """Sequential causality assignment (:func:`netdyn.bondgraph.causality.assign_causality`)."""
        return assign_causality(self)

    def model(self, formulation: str | None = None, symbolic: bool = False, check: bool = True) -> LagrangianModel:
        """The :class:`~netdyn.model.LagrangianModel` (:func:`netdyn.bondgraph.convert.to_model`)."""
        return to_model(self, formulation=formulation, symbolic=symbolic)

    def state_equations(self, symbolic: bool = False) -> StateEquations:
        """Explicit ẋ = f(x, u) in the energy variables (:func:`netdyn.bondgraph.convert.state_equations`)."""
        return state_equations(self, symbolic=symbolic)

    def copy(self) -> BondGraph:
        """An independent copy (elements, parameters and bonds; parameter values are shared, they are immutable)."""
        out = BondGraph(self.name, effort=self.effort_name, flow=self.flow_name, units=self.units)
        out.parameters = {k: dict(v) for k, v in self.parameters.items()}
        out.graph = self.graph.copy()
        for n in out.graph.nodes:
            d = out.graph.nodes[n]
            d["params"], d["bonds"] = dict(d["params"]), list(d["bonds"])
            if "slots" in d:
                d["slots"] = dict(d["slots"])
        out._bond_ends = dict(self._bond_ends)
        return out

    # the system protocol of the analysis tools (netdyn.linearize, equilibrium, compare): see bondgraph/system.py
    #: the formulation netdyn.compare reads (the analogy's coordinates: junctions eliminated, as a network's loops)
    compare_formulation = "reduced"

    def with_inputs(self, inputs: Sequence[str] | None,
                    formulation: str | None = None) -> tuple[LagrangianModel, dict[str, Any]]:
        """``(model, nominal)`` with the named sources as input functions (:func:`netdyn.bondgraph.system.with_inputs`)."""
        return with_inputs(self, inputs, formulation)

    def source_names(self) -> list[str]:
        """The ``Se`` and ``Sf`` elements."""
        return self.of_kind("Se", "Sf")

    def storage_names(self) -> list[str]:
        """The energy-storing elements (``C``, ``I``, storage fields)."""
        return storage_names(self)

    def linear_form(self, formulation: str | None = None) -> tuple[Any, str | None]:
        """``(matrices, None)`` of the linear fast path, or ``(None, why)`` (:func:`netdyn.bondgraph.linear.linear_form`)."""
        return linear_form(self, formulation)

    def linear_start(self, q0: Mapping[str, float] | None, f0: Mapping[str, float] | None
                     ) -> tuple[dict[str, float] | None, dict[str, float] | None]:
        """``(q0, f0)`` for the linear path, momenta ``p_<I>`` as flows (:func:`netdyn.bondgraph.linear.linear_start`)."""
        return linear_start(self, q0, f0)

    def draw(self, path: PathArg | IO[bytes] | None = None, ax: Any = None, causality: bool = True,
             layout: Mapping[str, Sequence[float]] | None = None) -> Any:
        """Draw the bond graph (:func:`netdyn.bondgraph.draw.draw`)."""
        return draw(self, path=path, ax=ax, causality=causality, layout=layout)

    def __repr__(self):
        return f"BondGraph({self.name!r}: {self.graph.number_of_nodes()} elements, {len(self._bond_ends)} bonds)"


__all__ = ["BondGraph", "KINDS", "JUNCTIONS", "STORAGE", "SOURCES", "TWO_PORTS", "NetdynError"]
