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
function of the values (a :class:`_Template`). Elements that share a template
are stamped together: one vectorised call gives every member's entries, which
are scattered as ``(port, port, value)`` triplets and mapped to coordinates by
``Pᵀ S P`` (``P``: each port's coordinate combination). A 10,000-section ladder
costs three templates, three vectorised calls and one sparse product per matrix.

>>> from netdyn import Network
>>> from netdyn.components.electrical import VoltageSource, Resistor, Capacitor
>>> net = Network()
>>> _ = net.add(VoltageSource("V1", "a", "0", 1.0), Resistor("R1", "a", "b", 2.0), Capacitor("C1", "b", "0", 0.5))
>>> lin = linear_network(net)
>>> lin.names, lin.D.toarray().tolist(), lin.K.toarray().tolist()
(['q_R1'], [[2.0]], [[2.0]])
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sps
import sympy as sp

from netdyn.components.base import _PLAIN, ACROSS, DOMAINS, THROUGH, Element, PortVariables, numeric_values
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
    ports: dict = field(default_factory=dict)  # element name -> [(port key, combination {index: coeff})] (a mapping)
    stamps: dict = field(default_factory=dict)  # element name -> its own entries (see ``port_effort``)
    R: sps.csr_array = None  # n x m: where μ acts, when a servo constraint (controlled source) is not along Aᵀ
    skipped: tuple = ()  # elements left out (linear_network(skip=...)): their ports are in `ports`, no stamp
    #: ``(dae, I, solve, differential)`` of :func:`~netdyn.numerics.circuit.linear.prepared_dae`, once made
    prepared: tuple = field(default=None, repr=False, compare=False)

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
    vector: object = None  # the entries of many elements at once: values as arrays -> one array (or scalar) each


def template_key(el, kinds, value_names):
    """What an element's stamp depends on besides its values: elements with one key share a template.

    An energy-law element's own function is part of it: two capacitors given by different energy
    functions have different stamps, nor do a friction contact sticking and sliding (its ``state``).
    """
    return (type(el), kinds, value_names, getattr(el, "law", None), getattr(el, "coupling", None),
            getattr(el, "role", None), getattr(el, "function", None),  # (the object: kept alive, no reused id)
            getattr(el, "state", None), getattr(el, "regularization", None))


def linear_network(net, formulation=None, check=True, skip=()):
    """The :class:`LinearNetwork` of a network, or :class:`NotLinear` naming the element in the way.

    Elements named in ``skip`` keep their ports (coordinates are those of the
    whole network) but are not stamped: a caller adds them itself (the
    nonlinear devices of :func:`netdyn.operating_point`).

    Elements are grouped by template (:func:`template_key`). A group's entries
    come from one vectorised call of its template and are scattered as
    ``(port, port, value)`` triplets; the matrices are then ``Pᵀ S P``, ``P``
    the ports' coordinate combinations. Sources, servo and sensed reactions
    are added element by element, in network order.
    """
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
    combos, kcl, _ = coordinate_plan(net, domains, forms, coords, paths=False)
    ports = _PortCombinations(coords.list, combos)
    port_of = {}
    for name, el in net.elements.items():
        for k in range(len(el.ports)):
            port_of[_key(el, k)] = (name, k)
    stamper = _Stamper(ports)
    for label, row in kcl:
        stamper.kcl_row(label, [(ports.single(k), float(sign)) for k, sign in row])
    groups = {}  # template key -> (template, members in network order)
    element_ports_of = _ElementPorts(ports)
    for order, (name, el) in enumerate(net.elements.items()):
        keys, eports = element_ports(net, el, port_of)
        element_ports_of.keys_of[name] = keys
        if name in skip:
            continue
        values = _resolve_values(el, False, {}, net) if el.couples else numeric_values(el)  # (not modified here)
        pk = tuple(kinds[p.domain] for p in eports)
        tkey = template_key(el, pk, tuple(values))
        group = groups.get(tkey)
        if group is None:
            group = groups[tkey] = (_template(el, pk, tuple(values)), [])
        group[1].append((name, el, keys, values, stamper.rows(len(group[0].flows)), pk, order))
    for tpl, members in groups.values():
        stamper.group(tpl, members)
    return stamper.finish(coords.list, forms, element_ports_of, net, tuple(skip))


class _PortCombinations:
    """Each port's displacement as a combination of coordinates: the sparse matrix ``P`` (ports × coordinates)."""

    def __init__(self, names, combos):
        index = {name: i for i, name in enumerate(names)}
        self.n = len(names)
        self.row = {}
        indptr, cols, vals = [0], [], []
        for k, cmb in combos.items():
            self.row[k] = len(self.row)
            for c, v in cmb.items():
                cols.append(index[c])
                vals.append(float(v))
            indptr.append(len(cols))
        # kept as arrays (8 bytes an entry, not a Python int or float and a list slot), apart from P's own
        self.indptr, self.cols, self.vals = (np.array(indptr, dtype=np.int64), np.array(cols, dtype=np.int64),
                                             np.array(vals, dtype=float))
        self.P = sps.csr_array((self.vals.copy(), self.cols.copy(), self.indptr.copy()), shape=(len(self.row), self.n))

    def pairs(self, key):
        """``[(coordinate index, coefficient), ...]`` of a port."""
        r = self.row[key]
        a, b = self.indptr[r], self.indptr[r + 1]
        return list(zip(self.cols[a:b].tolist(), self.vals[a:b].tolist()))

    def combo(self, key):
        """``{coordinate index: coefficient}`` of a port."""
        r = self.row[key]
        a, b = self.indptr[r], self.indptr[r + 1]
        return dict(zip(self.cols[a:b].tolist(), self.vals[a:b].tolist()))

    def single(self, key):
        """The coordinate of a port that has one of its own (the branch formulation)."""
        return int(self.cols[self.indptr[self.row[key]]])


class _ElementPorts(Mapping):
    """``{element name: [(port key, {coordinate index: coefficient}), ...]}``, each entry made when asked for
    (a large network's solution is asked about a few elements)."""

    def __init__(self, ports):
        self.ports = ports
        self.keys_of = {}
        self.made = {}

    def __getitem__(self, name):
        out = self.made.get(name)
        if out is None:
            out = self.made[name] = [(k, self.ports.combo(k)) for k in self.keys_of[name]]
        return out

    def __iter__(self):
        return iter(self.keys_of)

    def __len__(self):
        return len(self.keys_of)


class Stamps(Mapping):
    """``{element name: {"entries", "efforts", "rows0", "kinds", "reactions"}}``, each element's dict made when
    asked for from its template group's arrays (a group: the elements of one template, their values as one
    array). A large network keeps one array a group and one small int a name, not a dict of lists an
    element; a dict asked for is kept (the stamper adds sources' efforts and reactions to it), one iterated
    over is made afresh.

    >>> st = Stamps()
    >>> st.add_group(["R1", "R2"], np.array([[1.0, 0.0]]), (("D", 0, 0),), np.array([5, 6]), ("through",))
    >>> st["R1"]["entries"], st["R2"]["entries"], st["R2"]["rows0"], len(st)
    ([('D', 0, 0, 1.0)], [], 6, 2)
    """

    def __init__(self):
        self.groups = []  # (names, values (entries × members), layout, first rows, port kinds)
        self.where = {}  # name -> group index · 2^32 + position in the group
        self.made = {}

    def add_group(self, names, nums, layout, rows0, kinds):
        g = len(self.groups) << 32
        self.groups.append((names, nums, tuple(layout), np.asarray(rows0, dtype=np.int64), tuple(kinds)))
        for e, name in enumerate(names):
            self.where[name] = g | e

    def _make(self, name):
        w = self.where[name]
        names, nums, layout, rows0, kinds = self.groups[w >> 32]
        e = w & 0xFFFFFFFF
        vals = nums[:, e].tolist() if nums.shape[0] else []
        return {"entries": [(wh, i, j, x) for x, (wh, i, j) in zip(vals, layout) if x != 0], "efforts": [],
                "rows0": int(rows0[e]), "kinds": kinds, "reactions": []}

    def __getitem__(self, name):
        out = self.made.get(name)
        if out is None:
            out = self.made[name] = self._make(name)
        return out

    def __contains__(self, name):
        return name in self.where

    def __iter__(self):
        return iter(self.where)

    def __len__(self):
        return len(self.where)

    def items(self):
        for name in self.where:
            yield name, self.made.get(name) or self._make(name)

    def values(self):
        return (st for _, st in self.items())


class _Stamper:
    """The stamps of a network's elements, one template group at a time, gathered into sparse matrices.

    Entries are kept in port space (``S[port i, port j] = value``; flow-constraint rows against
    ports) as arrays per group; :meth:`finish` maps them to coordinates with ``Pᵀ S P`` and
    ``A_ports P``. Elements with time-dependent remainders (sources) or reactions are finished
    one by one, in network order, so inputs are numbered as the elements come.
    """

    def __init__(self, ports):
        self.ports = ports
        self.triplets = {"M": [], "D": [], "K": [], "A": []}  # (rows, columns, values) arrays
        self.stamps = Stamps()
        self.kcl = []  # (row, coordinate, sign): the branch formulation's KCL rows
        self.labels = []  # one per flow-constraint row (KCL rows first, then the elements' in network order)
        self.pending = []  # (position in the network, ...) of the elements finished one by one
        self.inputs, self.input_index = [], {}
        self.be, self.ba = [], []

    def kcl_row(self, label, entries):
        r = len(self.labels)
        self.kcl.extend((r, c, s) for c, s in entries)
        self.labels.append(label)

    def rows(self, count):
        """Reserve ``count`` flow-constraint rows for the next element in network order; returns the first."""
        r0 = len(self.labels)
        self.labels.extend([None] * count)
        return r0

    def group(self, tpl, members):
        """Stamp every element of one template; ``members`` are ``(name, element, port keys, values,
        first flow-constraint row, port kinds, position in the network)``."""
        ne = len(members)
        X = np.empty((len(tpl.names), ne))
        floats = {}  # elements share their value objects (validate caches them): convert each once
        for e, (name, el, keys, values, *_) in enumerate(members):
            for i, vname in enumerate(tpl.names):
                v = values[vname]
                if type(v) in _PLAIN:  # an element that kept its numbers (numeric_values)
                    X[i, e] = v
                    continue
                x = floats.get(id(v))  # (by identity: hashing a sympy Float costs more than converting it)
                if x is None:
                    if not v.is_number:
                        raise NotLinear(f"{el.name}: {vname} = {v} is not a number; the numeric path needs "
                                        "numeric values (time-varying or symbolic elements take the symbolic path)")
                    x = floats[id(v)] = float(v)
                X[i, e] = x
        nums = np.array([np.broadcast_to(np.asarray(x, dtype=float), (ne,)) for x in tpl.vector(*X)]) \
            if tpl.layout else np.zeros((0, ne))
        row = self.ports.row
        prow = np.array([[row[k] for k in m[2]] for m in members], dtype=np.int64).reshape(ne, -1)
        rows0 = np.array([m[4] for m in members], dtype=np.int64)
        nz_all = nums != 0
        for idx, (which, i, j) in enumerate(tpl.layout):
            nz = nz_all[idx]
            r = rows0[nz] + i if which == "A" else prow[nz, i]
            self.triplets[which].append((r, prow[nz, j], nums[idx][nz]))
        self._labels(tpl, members, nums)
        one_by_one = any(r != 0 for r in tpl.efforts) or any(r != 0 for r in tpl.flows) or tpl.reactions \
            or tpl.sensed
        self.stamps.add_group([m[0] for m in members], nums, tpl.layout, rows0, members[0][5] if members else ())
        for e, (name, el, keys, values, r0, pk, order) in enumerate(members):
            if one_by_one:
                self.pending.append((order, r0, name, el, tpl, keys, values))

    def _labels(self, tpl, members, nums):
        nflows = len(tpl.flows)
        if nflows == 1:
            for m in members:
                self.labels[m[4]] = m[0]
        elif nflows > 1:  # rows up to the last one with an entry are numbered, the rest carry the bare name
            a_entries = [(idx, i) for idx, (which, i, _) in enumerate(tpl.layout) if which == "A"]
            for e, m in enumerate(members):
                last = max((i for idx, i in a_entries if nums[idx, e] != 0), default=-1)
                for k in range(nflows):
                    self.labels[m[4] + k] = f"{m[0]}[{k}]" if k <= last else m[0]

    def input_of(self, expr):
        key = sp.srepr(expr)
        if key not in self.input_index:
            self.input_index[key] = len(self.inputs)
            self.inputs.append(expr)
        return self.input_index[key]

    def finish(self, names, forms, element_ports_of, net, skipped):
        ports = self.ports
        n, m = ports.n, len(self.labels)
        P = ports.P
        np_ = P.shape[0]
        mats = {w: _port_matrix(self.triplets[w], (np_, np_)) for w in ("M", "D", "K")}
        mats = {w: _clean(P.T @ (S @ P)) if S is not None else sps.csr_array((n, n)) for w, S in mats.items()}
        A_ports = _port_matrix(self.triplets["A"], (m, np_))
        A = _coo(self.kcl, (m, n))
        if A_ports is not None:
            A = _clean(A + A_ports @ P)
        servo, sensed = {}, []
        for _, r0, name, el, tpl, keys, values in sorted(self.pending, key=lambda p: p[0]):
            cs = [ports.pairs(k) for k in keys]
            subs = {tpl.symbols[v]: sp.sympify(values[v]) for v in tpl.symbols}  # (kept numbers: as values has them)
            stamp = self.stamps[name]
            for s, coeffs in tpl.sensed.items():
                sensed.append((name, keys[s], cs,
                               {i: float(sp.sympify(c).xreplace(subs)) for i, c in coeffs.items()}))
            for k, coeffs in tpl.reactions.items():
                col = servo.setdefault(r0 + k, {})
                for i, c in coeffs.items():
                    c = float(sp.sympify(c).xreplace(subs))
                    stamp["reactions"].append((r0 + k, i, c))  # μ_row c acts on the element's port i
                    for b, cb in cs[i]:
                        col[b] = col.get(b, 0.0) + c * cb
            for i, r in enumerate(tpl.efforts):
                if r != 0:
                    u = self.input_of(_time_function(el, r.xreplace(subs)))
                    self.be.extend((a, u, ca) for a, ca in cs[i])
                    stamp["efforts"].append((i, u))
            for k, r in enumerate(tpl.flows):
                if r != 0:
                    self.ba.append((r0 + k, self.input_of(_time_function(el, r.xreplace(subs))), 1.0))
        port_of = {_key(el, k): (name, k) for name, el in net.elements.items() for k in range(len(el.ports))} \
            if sensed else {}
        A_rows = A.tocsr()
        for name, key, cs, coeffs in sensed:  # a sensed source's multiplier also acts on a controlled source's ports
            row, g = _sensed_row(net, name, port_of[key], self.stamps)
            col = servo.setdefault(row, _row_dict(A_rows, row))
            for i, c in coeffs.items():
                self.stamps[name]["reactions"].append((row, i, c * g))
                for b, cb in cs[i]:
                    col[b] = col.get(b, 0.0) + c * g * cb
        R = None
        if servo:
            keep = np.ones(m)
            keep[list(servo)] = 0.0
            R = _clean(sps.csr_array(A_rows.T @ sps.diags_array(keep))
                       + _coo([(c, r, v) for r, col in servo.items() for c, v in col.items()], (n, m)))
        nu = len(self.inputs)
        return LinearNetwork(list(names), mats["M"], mats["D"], mats["K"], A, _coo(self.be, (n, nu)),
                             _coo(self.ba, (m, nu)), self.inputs, self.labels, forms, element_ports_of,
                             self.stamps, R, skipped)


def _port_matrix(triplets, shape):
    """A COO matrix (duplicates summed) from a list of ``(rows, columns, values)`` arrays, or None."""
    if not triplets:
        return None
    r, c, v = (np.concatenate(x) for x in zip(*triplets))
    return sps.coo_array((v, (r, c)), shape=shape).tocsr()


def _clean(mat):
    out = sps.csr_array(mat)
    out.sum_duplicates()
    out.eliminate_zeros()
    return out


def _row_dict(A, r):
    a, b = A.indptr[r], A.indptr[r + 1]
    return dict(zip(A.indices[a:b].tolist(), A.data[a:b].tolist()))


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


def port_effort(lin, name, i, q, f, acc, mu, u, sharing=None):
    """The effort element ``name`` absorbs on its port ``i`` (voltage in charge coordinates, current in
    node ones), from the stamped entries of every element acting on that port (its own, and a mutual
    inductance's): ``Σ M a + D f + K q − e(t) + Σ_k μ_k ∂ψ_k/∂f_i``.

    ``q``, ``f``, ``acc`` are coordinate trajectories (rows), ``mu`` the multipliers, ``u`` the inputs'
    values (rows of ``lin.inputs``); returns one value per column. ``sharing`` lists the
    ``(element, slot)`` acting on the port in the order of ``lin.ports`` (found here when not given).
    """
    if sharing is None:
        key = lin.ports[name][i][0]
        sharing = [(other, slot) for other, ports in lin.ports.items() for slot, (k, _) in enumerate(ports)
                   if k == key]
    blocks = {"q": q, "f": f, "acc": acc, "mu": mu, "u": u}
    return evaluate_port(port_terms(lin, sharing), blocks.__getitem__, q.shape[1])


def port_efforts(lin, keys, q, f, acc, mu, u):
    """:func:`port_effort` of many ports at once, one row per port key in ``keys`` (in that order): the
    stamped entries of every element gathered once into port-space matrices, ``S_M P a + S_D P f + S_K P q +
    G μ − E u`` restricted to the rows asked for (a table of a whole network in a few sparse products, where
    one :func:`port_effort` per port scans every element)."""
    pc = lin.ports.ports  # the _PortCombinations behind lin.ports: P and the port rows
    row, P = pc.row, pc.P
    nports, m, nu = P.shape[0], mu.shape[0], u.shape[0]
    want = np.array([row[k] for k in keys], dtype=np.int64)
    trip = {w: ([], [], []) for w in ("M", "D", "K", "A", "E")}
    keys_of = lin.ports.keys_of
    for name, st in lin.stamps.items():
        ks = keys_of[name]
        r0 = st["rows0"]
        for which, a, b, v in st["entries"]:
            r, c, x = trip[which]
            if which == "A":  # μ_(r0 + a) acts on the element's port b
                r.append(row[ks[b]]), c.append(r0 + a), x.append(v)
            else:
                r.append(row[ks[a]]), c.append(row[ks[b]]), x.append(v)
        for j, k in st["efforts"]:
            r, c, x = trip["E"]
            r.append(row[ks[j]]), c.append(k), x.append(1.0)
    out = np.zeros((want.size, q.shape[1]))

    def rows_of(which, ncols):
        r, c, x = trip[which]
        if not r:
            return None
        S = sps.csr_array((np.array(x, dtype=float), (np.array(r, dtype=np.int64), np.array(c, dtype=np.int64))),
                          shape=(nports, ncols))[want]
        return S if S.nnz else None

    for which, X in (("M", acc), ("D", f), ("K", q)):
        S = rows_of(which, nports)
        if S is not None:
            used = np.unique(S.indices)
            out += S[:, used] @ (P[used] @ X)
    G = rows_of("A", m)
    if G is not None:
        out += G @ mu
    E = rows_of("E", nu)
    if E is not None:
        out -= E @ u
    return out


def _slot_effort(lin, name, i, q, f, acc, mu, u):
    blocks = {"q": q, "f": f, "acc": acc, "mu": mu, "u": u}
    return evaluate_terms(slot_terms(lin, name, i), blocks.__getitem__, q.shape[1])


def slot_terms(lin, name, i):
    """The effort element ``name`` itself puts on its port ``i``, as terms over the trajectory's blocks
    (``"q"``, ``"f"``, ``"acc"``, ``"mu"``, ``"u"``) for :func:`evaluate_terms`: ``("combo", v, block,
    {row: c})`` adds ``v · Σ c X[row]``, ``("row", v, block, row)`` adds ``v · X[row]``, ``("minus", 1.0,
    block, row)`` subtracts ``X[row]``. Its size is that of the element's own stamp."""
    st = lin.stamps[name]
    combos = [c for _, c in lin.ports[name]]
    source = {"M": "acc", "D": "f", "K": "q"}
    terms = []
    for which, a, b, v in st["entries"]:
        if which == "A":
            if b == i:
                terms.append(("row", v, "mu", st["rows0"] + a))
        elif a == i:
            terms.append(("combo", v, source[which], combos[b]))
    for j, k in st["efforts"]:
        if j == i:
            terms.append(("minus", 1.0, "u", k))
    return tuple(terms)


def port_terms(lin, sharing):
    """The effort on one port: the :func:`slot_terms` of every ``(element, slot)`` acting on it."""
    return tuple(slot_terms(lin, other, slot) for other, slot in sharing)


def flow_terms(lin, name, i):
    """The flow of port ``i`` of element ``name`` (its combination of coordinate flows) as one slot of terms."""
    return ((("combo", 1.0, "f", lin.ports[name][i][1]),),)


def evaluate_terms(terms, block, K):
    """The values of :func:`slot_terms` over ``K`` output times; ``block(name)`` gives a block's rows
    (read only when a term needs it: the accelerations of a solution may be computed on demand).

    The sums run in the order of the terms, each combination's in its own order, as ``0 + a + b + ...``
    did before without the zero arrays (adding 0 is exact), so a read costs a few array operations."""
    out = None
    for kind, v, name, what in terms:
        X = block(name)
        if kind == "combo":
            inner = None
            for k, c in what.items():
                if inner is None:
                    inner = c * X[k]
                else:
                    inner += c * X[k]
            value = v * inner if inner is not None else np.zeros(K)
        elif kind == "row":
            value = v * X[what]
        else:
            value = -X[what]
        if out is None:
            out = value
        else:
            out += value
    return np.zeros(K) if out is None else out


def evaluate_port(slots, block, K):
    """The values of :func:`port_terms` (or :func:`flow_terms`): the slots' values summed in order."""
    out = None
    for terms in slots:
        value = evaluate_terms(terms, block, K)
        if out is None:
            out = value
        else:
            out += value
    return np.zeros(K) if out is None else out


def _coo(entries, shape):
    if not entries:
        return sps.csr_array(shape)
    r, c, v = (np.array(x) for x in zip(*entries))
    out = sps.csr_array((v.astype(float), (r.astype(int), c.astype(int))), shape=shape)
    out.sum_duplicates()
    out.eliminate_zeros()
    return out


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
    args = [P[v] for v in names]
    fn = sp.lambdify(args, entries, modules="math") if entries else None
    vector = sp.lambdify(args, entries, modules="numpy") if entries else None
    for k, coeffs in getattr(c, "reactions", {}).items():
        for coeff in coeffs.values():
            if sp.sympify(coeff).free_symbols & state:
                raise NotLinear(f"{el.name}: the reaction of its constraint {k} depends on its port variables")
    return _Template(names, fn, layout, efforts, flows, P, dict(getattr(c, "reactions", {})),
                     dict(getattr(c, "sensed_reactions", {})), vector)


def _remainder(el, expr, variables):
    r = sp.sympify(expr.xreplace({v: 0 for v in variables}))
    if t in r.free_symbols:
        raise NotLinear(f"{el.name}: its contribution depends on time other than through its values")
    return r


#: the last stamp the SPICE start made, kept for the next caller on the same network (the DC operating point,
#: then the transient's circuit): ``[key, (lin, info, skip)]`` (:func:`netdyn.numerics.circuit.operating_point._stamped`)
LAST_STAMP = [None, None]


def release_stamp():
    """Forget the last stamp (:data:`LAST_STAMP`): a caller that will not ask for it again (the linear path, which
    stamps its own) frees its memory, about a kilobyte an element, before making its own."""
    LAST_STAMP[0] = LAST_STAMP[1] = None
