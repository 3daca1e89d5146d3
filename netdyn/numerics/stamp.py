"""Numeric assembly of linear networks: sparse matrices straight from the elements, no derivation.

When every element of a network is linear with numeric values (resistors,
capacitors, inductors, coupled inductors, transformers, gyrators, masses,
springs, dampers, levers, gears) and its sources are functions of time, the
Lagrange equations of the chosen formulation are

    M q̈ + D q̇ + K q + Aᵀ μ = B_e u(t),        A q̇ + B_a u(t) = 0

with constant sparse matrices. Each element still says what it contributes (its
own ``contribute``), but only once per element *type and port kinds*, with
symbols for its values: the second derivatives of T*, D and V and the
coefficients of its efforts and flow constraints become a small numeric
function of the values (a :class:`_Template`), evaluated per element and
scattered along its ports' coordinate combinations. A 10,000-section ladder
costs three templates and a loop over the elements.

>>> from netdyn import Network
>>> from netdyn.components.electrical import VoltageSource, Resistor, Capacitor
>>> net = Network()
>>> _ = net.add(VoltageSource("V1", "a", "0", 1.0), Resistor("R1", "a", "b", 2.0), Capacitor("C1", "b", "0", 0.5))
>>> lin = linear_network(net)
>>> lin.names, lin.D.toarray().tolist(), lin.K.toarray().tolist()
(['q_R1'], [[2.0]], [[2.0]])
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sps
import sympy as sp

from netdyn.components.base import ACROSS, DOMAINS, THROUGH, Element, PortVariables
from netdyn.errors import ModelError
from netdyn.symbols import t
from netdyn.graph.assemble import (_Coordinates, _key, _resolve_values, coordinate_plan, element_ports,
                                   resolve_formulation, structural_check)

__all__ = ["LinearNetwork", "linear_network", "NotLinear"]


class NotLinear(ModelError):
    """The network has an element the numeric path cannot stamp (it names the element and why)."""


@dataclass
class LinearNetwork:
    """``M q̈ + D q̇ + K q + Aᵀμ = B_e u(t)``, ``A q̇ + B_a u(t) = 0`` of a network, sparse and numeric."""

    names: list  # coordinate names, in the order of Network.model(formulation)
    M: sps.csr_array
    D: sps.csr_array
    K: sps.csr_array
    A: sps.csr_array
    B_e: sps.csr_array
    B_a: sps.csr_array
    inputs: list  # u_k(t): sympy expressions of t
    flow_labels: list
    formulation: dict
    ports: dict = field(default_factory=dict)  # element name -> [(port key, combination {index: coeff})]
    stamps: dict = field(default_factory=dict)  # element name -> its own entries (see ``port_effort``)
    R: sps.csr_array = None  # n x m: where μ acts, when a servo constraint (controlled source) is not along Aᵀ
    skipped: tuple = ()  # elements left out (linear_network(skip=...)): their ports are in `ports`, no stamp

    @property
    def reaction(self):
        """The n×m matrix multiplying μ in the Lagrange rows: ``Aᵀ`` unless servo constraints act elsewhere."""
        return self.A.T.tocsr() if self.R is None else self.R

    @property
    def n(self):
        return len(self.names)

    @property
    def m(self):
        return self.A.shape[0]


@dataclass
class _Template:
    """An element type's contribution as numbers per port, a function of the element's values."""

    names: tuple  # value names, in the order the compiled function takes them
    numbers: object  # values -> flat array of the entries below
    layout: list  # (matrix, port i, port j) per entry; matrix in "M", "D", "K", "A" (row k, port j)
    efforts: list  # per port: sympy remainder of the effort (in the value symbols)
    flows: list  # per flow constraint: sympy remainder
    symbols: dict  # value name -> symbol used in the remainders
    reactions: dict = field(default_factory=dict)  # flow constraint -> {port: coefficient (value symbols)}
    sensed: dict = field(default_factory=dict)  # coupled port -> {port: coefficient}: see Contribution.sensed_reactions


def linear_network(net, formulation=None, check=True, skip=()):
    """The :class:`LinearNetwork` of a network, or :class:`NotLinear` naming the element in the way.

    Elements named in ``skip`` keep their ports (coordinates are those of the
    whole network) but are not stamped: a caller adds them itself (the
    nonlinear devices of :func:`netdyn.operating_point`)."""
    if not net.elements or net.bodies:
        raise NotLinear("only networks of one-dimensional elements have a numeric linear form")
    domains = [d for d in net.domains if d in DOMAINS]
    forms = resolve_formulation(formulation, domains, net)
    kinds = {d: ACROSS if forms[d] == "node" else THROUGH for d in domains}
    for el in net.elements.values():
        if not isinstance(el, Element) or any(p.domain not in DOMAINS for p in el.ports):
            raise NotLinear(f"{el.name} is not a one-dimensional network element")
    if check:
        structural_check(net, kinds)
    coords = _Coordinates(make=str)
    combos, kcl, _ = coordinate_plan(net, domains, forms, coords)
    index = {name: i for i, name in enumerate(coords.list)}
    n = len(coords.list)
    combo = {k: [(index[c], float(v)) for c, v in cmb.items()] for k, cmb in combos.items()}
    port_of = {}
    for name, el in net.elements.items():
        for k in range(len(el.ports)):
            port_of[_key(el, k)] = (name, k)

    mats = {"M": [], "D": [], "K": []}
    a_rows, a_labels, be, ba = [], [], [], []  # a_rows: list of {index: coeff}
    inputs, input_index = [], {}

    def input_of(expr):
        key = sp.srepr(expr)
        if key not in input_index:
            input_index[key] = len(inputs)
            inputs.append(expr)
        return input_index[key]

    for label, row in kcl:
        a_rows.append({combo[k][0][0]: float(sign) for k, sign in row})
        a_labels.append(label)
    templates = {}
    element_ports_of = {}
    element_stamps = {}
    servo = {}  # constraint row -> {coordinate index: coefficient} of its reaction
    sensed = []  # (element, sensed port key, its port combinations, {port: coefficient}): Contribution.sensed_reactions
    for name, el in net.elements.items():
        if name in skip:
            keys, _ = element_ports(net, el, port_of)
            element_ports_of[name] = [(k, dict(combo[k])) for k in keys]
            continue
        values = _resolve_values(el, False, {}, net)
        keys, ports = element_ports(net, el, port_of)
        pk = tuple(kinds[p.domain] for p in ports)
        tkey = (type(el), pk, tuple(values), getattr(el, "law", None), getattr(el, "coupling", None))
        tpl = templates.get(tkey)
        if tpl is None:
            tpl = templates[tkey] = _template(el, pk, tuple(values))
        cs = [combo[k] for k in keys]
        element_ports_of[name] = list(zip(keys, [dict(c) for c in cs]))
        nums = _numbers(el, tpl, values)
        rows0 = len(a_rows)
        stamp = {"entries": [(which, i, j, float(v)) for v, (which, i, j) in zip(nums, tpl.layout) if v != 0],
                 "efforts": [], "rows0": rows0, "kinds": pk}
        element_stamps[name] = stamp
        for value, (which, i, j) in zip(nums, tpl.layout):
            if value == 0:
                continue
            if which == "A":
                while len(a_rows) <= rows0 + i:
                    a_rows.append({})
                    a_labels.append(name if len(tpl.flows) == 1 else f"{name}[{len(a_rows) - rows0 - 1}]")
                for b, cb in cs[j]:
                    a_rows[rows0 + i][b] = a_rows[rows0 + i].get(b, 0.0) + value * cb
            else:
                sink = mats[which]
                for a, ca in cs[i]:
                    for b, cb in cs[j]:
                        sink.append((a, b, value * ca * cb))
        while len(a_rows) < rows0 + len(tpl.flows):  # flow constraints with no flow coefficient left
            a_rows.append({})
            a_labels.append(name)
        subs = {tpl.symbols[v]: values[v] for v in tpl.symbols}
        for s, coeffs in tpl.sensed.items():
            sensed.append((name, keys[s], cs, {i: float(sp.sympify(c).xreplace(subs)) for i, c in coeffs.items()}))
        for k, coeffs in tpl.reactions.items():
            col = servo.setdefault(rows0 + k, {})
            for i, c in coeffs.items():
                c = float(sp.sympify(c).xreplace(subs))
                for b, cb in cs[i]:
                    col[b] = col.get(b, 0.0) + c * cb
        for i, r in enumerate(tpl.efforts):
            if r != 0:
                u = input_of(_time_function(el, r.xreplace(subs)))
                be.extend((a, u, ca) for a, ca in cs[i])
                stamp["efforts"].append((i, u))
        for k, r in enumerate(tpl.flows):
            if r != 0:
                ba.append((rows0 + k, input_of(_time_function(el, r.xreplace(subs))), 1.0))
    for name, key, cs, coeffs in sensed:  # a sensed source's multiplier also acts on a controlled source's ports
        row, g = _sensed_row(net, name, port_of[key], element_stamps)
        col = servo.setdefault(row, dict(a_rows[row]))
        for i, c in coeffs.items():
            for b, cb in cs[i]:
                col[b] = col.get(b, 0.0) + c * g * cb
    m = len(a_rows)
    nu = len(inputs)
    A = _coo([(r, c, v) for r, row in enumerate(a_rows) for c, v in row.items()], (m, n))
    R = None
    if servo:
        R = _coo([(c, r, v) for r, row in enumerate(a_rows) if r not in servo for c, v in row.items()]
                 + [(c, r, v) for r, col in servo.items() for c, v in col.items()], (n, m))
    return LinearNetwork(list(coords.list), _coo(mats["M"], (n, n)), _coo(mats["D"], (n, n)),
                         _coo(mats["K"], (n, n)), A, _coo(be, (n, nu)), _coo(ba, (m, nu)), inputs, a_labels,
                         forms, element_ports_of, element_stamps, R, tuple(skip))


def _sensed_row(net, name, port, element_stamps):
    """Row of the flow constraint of the element a controlled source senses, and the coefficient of the
    sensed port's flow in it (the current that port absorbs per unit multiplier)."""
    other, j = port
    st = element_stamps.get(other)
    entries = [(a, v) for which, a, b, v in (st or {}).get("entries", ()) if which == "A" and b == j]
    if len(entries) != 1:
        raise NotLinear(f"{name} senses the current of {other}, which is not a voltage source (one flow "
                        "constraint on its port) here; sense a voltage source (a 0 V one as an ammeter)")
    a, g = entries[0]
    return st["rows0"] + a, g


def port_effort(lin, name, i, q, f, acc, mu, u):
    """The effort element ``name`` absorbs on its port ``i`` (voltage in charge coordinates, current in
    node ones), from the stamped entries of every element acting on that port (its own, and a mutual
    inductance's): ``Σ M a + D f + K q − e(t) + Σ_k μ_k ∂ψ_k/∂f_i``.

    ``q``, ``f``, ``acc`` are coordinate trajectories (rows), ``mu`` the multipliers, ``u`` the inputs'
    values (rows of ``lin.inputs``); returns one value per column.
    """
    key = lin.ports[name][i][0]
    out = np.zeros(q.shape[1])
    for other, ports in lin.ports.items():
        for slot, (k, _) in enumerate(ports):
            if k == key:
                out += _slot_effort(lin, other, slot, q, f, acc, mu, u)
    return out


def _slot_effort(lin, name, i, q, f, acc, mu, u):
    st = lin.stamps[name]
    combos = [c for _, c in lin.ports[name]]

    def port(X, j):
        return sum((c * X[k] for k, c in combos[j].items()), np.zeros(X.shape[1]))

    out = np.zeros(q.shape[1])
    source = {"M": acc, "D": f, "K": q}
    for which, a, b, v in st["entries"]:
        if which == "A":
            if b == i:
                out += v * mu[st["rows0"] + a]
        elif a == i:
            out += v * port(source[which], b)
    for j, k in st["efforts"]:
        if j == i:
            out -= u[k]
    return out


def _coo(entries, shape):
    if not entries:
        return sps.csr_array(shape)
    r, c, v = (np.array(x) for x in zip(*entries))
    out = sps.csr_array((v.astype(float), (r.astype(int), c.astype(int))), shape=shape)
    out.sum_duplicates()
    out.eliminate_zeros()
    return out


def _numbers(el, tpl, values):
    args = []
    for name in tpl.names:
        v = values[name]
        if not v.is_number:
            raise NotLinear(f"{el.name}: {name} = {v} is not a number; the numeric path needs numeric values "
                            "(time-varying or symbolic elements take the symbolic path)")
        args.append(float(v))
    return tpl.numbers(*args) if tpl.layout else []


def _time_function(el, expr):
    extra = sp.sympify(expr).free_symbols - {t}
    if extra:
        raise NotLinear(f"{el.name}: its source value contains {sorted(map(str, extra))}; give numbers or "
                        "expressions of netdyn.t")
    return sp.sympify(expr)


def _template(el, kinds, value_names):
    """The numeric layout of an element type's contribution, from its own ``contribute``."""
    P = {v: sp.Symbol(f"_value_{v}") for v in value_names}
    Q = [sp.Symbol(f"_Q{i}") for i in range(len(kinds))]
    F = [sp.Symbol(f"_F{i}") for i in range(len(kinds))]
    c = el.contribute([PortVariables(k, Q[i], F[i]) for i, k in enumerate(kinds)], dict(P))
    if c.constraints:
        raise NotLinear(f"{el.name} imposes a displacement constraint; the numeric path handles flows only")
    state = set(Q) | set(F) | {t}
    entries, layout = [], []

    def quadratic(expr, variables, which):
        expr = sp.sympify(expr)
        H = [[sp.diff(expr, a, b) for b in variables] for a in variables]
        rest = sp.expand(expr - sum(H[i][j] * variables[i] * variables[j]
                                    for i in range(len(variables)) for j in range(len(variables))) / 2)
        if rest != 0 or any(e.free_symbols & state for row in H for e in row):
            raise NotLinear(f"{el.name}: its {which} is not a constant quadratic form of its port variables")
        for i in range(len(variables)):
            for j in range(len(variables)):
                if H[i][j] != 0:
                    entries.append(H[i][j])
                    layout.append((which, i, j))

    quadratic(c.T, F, "M")
    quadratic(c.D, F, "D")
    quadratic(c.V, Q, "K")
    efforts = [sp.S.Zero] * len(kinds)
    for i, e in c.efforts.items():
        e = sp.sympify(e)
        for var, which in [(v, "K") for v in Q] + [(v, "D") for v in F]:
            coeff = sp.diff(e, var)
            if coeff.free_symbols & state:
                raise NotLinear(f"{el.name}: its effort {e} is not linear in its port variables")
            if coeff != 0:  # h = ... - e: the effort enters with a minus sign
                entries.append(-coeff)
                layout.append((which, i, (Q if which == "K" else F).index(var)))
        efforts[i] = _remainder(el, e, Q + F)
    flows = []
    for k, psi in enumerate(c.flow_constraints):
        psi = sp.sympify(psi)
        if psi.free_symbols & set(Q):
            raise NotLinear(f"{el.name}: its flow constraint {psi} depends on a displacement")
        for j, var in enumerate(F):
            coeff = sp.diff(psi, var)
            if coeff.free_symbols & state:
                raise NotLinear(f"{el.name}: its flow constraint {psi} is not linear with constant coefficients")
            if coeff != 0:
                entries.append(coeff)
                layout.append(("A", k, j))
        flows.append(_remainder(el, psi, F))
    names = tuple(sorted({str(s)[len("_value_"):] for e in entries for s in sp.sympify(e).free_symbols}))
    fn = sp.lambdify([P[v] for v in names], entries, modules="math") if entries else None
    for k, coeffs in getattr(c, "reactions", {}).items():
        for coeff in coeffs.values():
            if sp.sympify(coeff).free_symbols & state:
                raise NotLinear(f"{el.name}: the reaction of its constraint {k} depends on its port variables")
    return _Template(names, fn, layout, efforts, flows, P, dict(getattr(c, "reactions", {})),
                     dict(getattr(c, "sensed_reactions", {})))


def _remainder(el, expr, variables):
    r = sp.sympify(expr.xreplace({v: 0 for v in variables}))
    if t in r.free_symbols:
        raise NotLinear(f"{el.name}: its contribution depends on time other than through its values")
    return r
