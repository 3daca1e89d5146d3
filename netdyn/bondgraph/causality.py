"""Sequential causality assignment (SCAP, Karnopp–Rosenberg) as a pure graph function.

Every bond gets a causal stroke: the end that *sets its effort* (the other end
sets its flow). The procedure:

1. sources: ``Se`` sets its effort, ``Sf`` its flow; implications spread
   through junctions and two-ports (a 0-junction takes its effort from exactly
   one bond, a 1-junction its flow from exactly one bond, a TF passes effort
   through, a GY turns effort into flow). Two sources imposing the same
   variable is a causal conflict: an error naming them.
2. storage: each ``C``/``I`` still free gets integral causality (C sets
   effort, I sets flow), spread; one already forced the other way has
   *derivative* causality: it is a dependent storage element, reported with the
   independent storage and sources it depends on.
3. resistors still free get an arbitrary causality, spread: the signal paths
   closed through them are *algebraic loops*, reported with their R elements.
4. bonds still free (zero-order loops among junctions) are chosen arbitrarily.

The result informs; it does not limit: every case converts to a
``LagrangianModel`` and simulates (derivative causality and algebraic loops
end up as multipliers and algebraic variables of the DAE).

>>> from netdyn import BondGraph
>>> bg = BondGraph()
>>> for k, n, p in [("Se", "u", {"effort": 1}), ("1", "J", {}), ("R", "R1", {"R": 1}),
...                 ("0", "N", {}), ("C", "C1", {"C": 1}), ("C", "C2", {"C": 2})]:
...     bg.add(k, n, **p)
>>> _ = bg.chain("u", "J", "N", "C1"); _ = bg.bond("J", "R1"); _ = bg.bond("N", "C2")
>>> c = bg.causality()
>>> c.integral, c.derivative
(['C1'], {'C2': ['C1']})
"""
from __future__ import annotations

from dataclasses import dataclass, field

import networkx as nx

from netdyn.errors import TopologyError

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # names for the hints only (annotations are not evaluated)
    from netdyn.bondgraph.graph import BondGraph


class CausalConflict(TopologyError):
    """Two elements impose the same variable (two effort sources on one 0-junction, ...).

    >>> from netdyn import BondGraph
    >>> bg = BondGraph("two sources")
    >>> bg.add("Se", "u1", effort=1.0); bg.add("Se", "u2", effort=2.0); bg.add("0", "N")
    >>> _ = bg.bond("u1", "N"); _ = bg.bond("u2", "N")
    >>> try:
    ...     assign_causality(bg)
    ... except CausalConflict as err:
    ...     print(type(err).__name__)
    CausalConflict
    """


@dataclass
class Causality:
    """What SCAP found.

    ``effort_setter``: bond -> the element that sets its effort (the causal
    stroke is at the other end); ``integral``: storage elements with integral
    causality (independent states); ``derivative``: dependent storage ->
    the independent storage elements and sources it depends on;
    ``algebraic_loops``: lists of R elements whose signal paths close a loop;
    ``arbitrary``: elements (R) or bonds whose causality was chosen freely;
    ``signals``: the signal-flow graph (nodes ``("e"|"f", bond)`` and
    ``("state", element)``), edges from inputs to outputs.

    >>> from netdyn import BondGraph
    >>> bg = BondGraph("RC")
    >>> bg.add("Se", "u", effort=1.0); bg.add("1", "J"); bg.add("C", "C1", C=1.0); bg.add("R", "R1", R=1.0)
    >>> _ = bg.chain("u", "J", "C1"); _ = bg.bond("J", "R1")
    >>> c = assign_causality(bg)
    >>> c.integral, c.derivative, c.algebraic_loops
    (['C1'], {}, [])
    """

    effort_setter: dict
    integral: list
    derivative: dict
    algebraic_loops: list
    arbitrary: list
    signals: nx.DiGraph = field(repr=False)
    #: the graph it was found on (for the report's rows)
    graph: object = field(default=None, repr=False, compare=False)
    #: each algebraic loop: ``{"elements": [...], "bonds": [...], "signals": n}`` (its size)
    loops: list = field(default_factory=list, repr=False)

    @property
    def integral_causality(self):
        """True when every storage element has integral causality."""
        return not self.derivative

    def sets_effort(self, element, bond):
        return self.effort_setter[bond] == element

    def rows(self):
        """One record a bond, as a textbook tabulates causality: ``bond``, ``tail``, ``head`` (the half-arrow
        points tail -> head), ``stroke`` (the end whose element is given the effort: the causal stroke),
        ``effort_by`` and ``flow_by`` (the elements that set them) and ``role`` — ``integral``/``derivative``
        at a storage element, ``resistance``/``conductance`` at a resistor (given its flow / its effort),
        ``source``, ``field``, or ``junction`` — with ``loop`` the number of its algebraic loop (or None)."""
        bg = self.graph
        in_loop = {b: k + 1 for k, loop in enumerate(self.loops) for b in loop["bonds"]}
        out = []
        for b in bg.bond_names:
            tail, head = bg.ends(b)
            effort_by = self.effort_setter[b]
            stroke = head if effort_by == tail else tail
            role = "junction"
            for end in (tail, head):
                kind = bg.kind(end)
                if kind in ("Se", "Sf"):
                    role = "source"
                elif kind in ("C", "I"):
                    role = "derivative" if end in self.derivative else "integral"
                elif kind == "R":
                    role = "resistance" if effort_by == end else "conductance"
                elif kind == "field":
                    role = "field"
            out.append({"bond": b, "tail": tail, "head": head, "stroke": stroke, "effort_by": effort_by,
                        "flow_by": stroke, "role": role, "loop": in_loop.get(b)})
        return out

    def report(self):
        """The causality as a textbook tabulates it: one row a bond (its ends, the causal stroke's end, who sets
        its effort and its flow, integral or derivative causality at storage, resistance or conductance causality
        at resistors, the algebraic loop it closes), then the storage elements and the loops with their sizes.

        >>> from netdyn import BondGraph
        >>> bg = BondGraph("RC")
        >>> bg.add("Se", "u", effort=1.0); bg.add("1", "J"); bg.add("C", "C1", C=1.0); bg.add("R", "R1", R=1.0)
        >>> _ = bg.chain("u", "J", "C1"); _ = bg.bond("J", "R1")
        >>> print(assign_causality(bg).report())
        causality of 'RC' (SCAP): 3 bonds
          #  bond  half-arrow  stroke at  effort by  flow by  causality
          1  u     u -> J      J          u          J        source
          2  C1    J -> C1     J          C1         J        integral
          3  R1    J -> R1     R1         J          R1       conductance
        storage: integral C1 (q_C1); derivative none
        algebraic loops: none
        integral causality: C1
        """
        if self.graph is None:
            return self._summary()
        rows = self.rows()
        header = ["#", "bond", "half-arrow", "stroke at", "effort by", "flow by", "causality"]
        table = [[str(k + 1), r["bond"], f"{r['tail']} -> {r['head']}", r["stroke"], r["effort_by"], r["flow_by"],
                  r["role"] + (f", loop {r['loop']}" if r["loop"] else "")] for k, r in enumerate(rows)]
        widths = [max(len(x[i]) for x in [header] + table) for i in range(len(header))]
        fmt = lambda cells: "  " + "  ".join(c.rjust(w) if i == 0 else c.ljust(w)
                                             for i, (c, w) in enumerate(zip(cells, widths))).rstrip()
        bg = self.graph
        var = lambda n: ("q_" if bg.kind(n) == "C" else "p_") + n
        lines = [f"causality of {bg.name!r} (SCAP): {len(rows)} bond{'s' if len(rows) != 1 else ''}", fmt(header)]
        lines += [fmt(r) for r in table]
        integral = ", ".join(f"{n} ({var(n)})" for n in self.integral) or "none"
        derivative = ", ".join(f"{n} (depends on {', '.join(v) or 'nothing'})" for n, v in self.derivative.items())
        lines.append(f"storage: integral {integral}; derivative {derivative or 'none'}")
        if self.loops:
            lines += [f"algebraic loop {k + 1}: {', '.join(loop['elements'])} — size {len(loop['elements'])} "
                      f"element{'s' if len(loop['elements']) != 1 else ''}, {len(loop['bonds'])} bonds, "
                      f"{loop['signals']} signals" for k, loop in enumerate(self.loops)]
        else:
            lines.append("algebraic loops: none")
        return "\n".join(lines + [self._summary()])

    def _summary(self):
        lines = [f"integral causality: {', '.join(self.integral) or 'none'}"]
        for k, v in self.derivative.items():
            lines.append(f"derivative causality: {k} (depends on {', '.join(v) or 'nothing'})")
        for loop in self.algebraic_loops:
            lines.append(f"algebraic loop through {', '.join(loop)}")
        return "\n".join(lines)

    def __str__(self):
        return self.report()


def assign_causality(bg: BondGraph) -> Causality:
    """SCAP on a :class:`~netdyn.bondgraph.graph.BondGraph`; returns a :class:`Causality`.

    Raises :class:`CausalConflict` when sources conflict (two ``Se`` on one
    0-junction, two ``Sf`` on one 1-junction, ...).

    >>> from netdyn import BondGraph
    >>> bg = BondGraph("two masses, one junction")
    >>> bg.add("Se", "F", effort=1.0); bg.add("1", "J"); bg.add("I", "m1", I=1.0); bg.add("I", "m2", I=2.0)
    >>> _ = bg.bond("F", "J"); _ = bg.bond("J", "m1"); _ = bg.bond("J", "m2")
    >>> assign_causality(bg).derivative          # one momentum fixes the other
    {'m2': ['m1']}
    """
    bg.check(allow_open_ports=True)
    setter = {}   # bond -> element setting its effort
    origin = {}   # bond -> the element whose choice forced it
    kinds = {n: bg.kind(n) for n in bg.graph.nodes}

    def assign(bond, effort_by, why, queue):
        if bond in setter:
            if setter[bond] != effort_by:
                raise _conflict(bg, bond, why, origin[bond])
            return
        setter[bond] = effort_by
        origin[bond] = why
        queue.extend(bg.ends(bond))

    def spread(queue, why):
        while queue:
            n = queue.pop()
            _rules(bg, n, kinds[n], setter, lambda b, by: assign(b, by, why, queue))

    # 1. sources
    for n in bg.graph.nodes:
        if kinds[n] in ("Se", "Sf"):
            b = bg.bond_of(n)
            q = []
            assign(b, n if kinds[n] == "Se" else bg.other_end(n, b), n, q)
            spread(q, n)
    # 2. storage
    integral, dependent = [], []
    for n in bg.graph.nodes:
        if kinds[n] not in ("C", "I"):
            continue
        forced_other_way = False
        for b in bg.bonds_of(n):   # a field: every port in integral causality unless forced otherwise
            preferred = n if kinds[n] == "C" else bg.other_end(n, b)
            if b in setter:
                forced_other_way |= setter[b] != preferred
                continue
            q = []
            assign(b, preferred, n, q)
            spread(q, n)
        (dependent if forced_other_way else integral).append(n)
    # 3. resistors and fields with free bonds, then 4. any free bond
    arbitrary = []
    for n in bg.graph.nodes:
        if kinds[n] in ("R", "field"):
            for b in bg.bonds_of(n):
                if b not in setter:
                    q = []
                    assign(b, n if kinds[n] == "R" else bg.other_end(n, b), n, q)
                    spread(q, n)
                    arbitrary.append(n)
    for b in bg.bond_names:
        if b not in setter:
            q = []
            tail, head = bg.ends(b)
            assign(b, tail, b, q)
            spread(q, b)
            arbitrary.append(b)
    for n in bg.graph.nodes:
        _check_complete(bg, n, kinds[n], setter)
    signals = signal_graph(bg, setter, set(integral))
    derivative = {n: _depends_on(bg, signals, n, setter, kinds) for n in dependent}
    loops = algebraic_loops(bg, signals, kinds)
    return Causality(setter, integral, derivative, loops, arbitrary, signals, bg, loop_details(bg, signals))


def _rules(bg, n, kind, setter, assign):
    """Apply the causal rule of element ``n`` to its bonds as far as it is forced."""
    bonds = bg.bonds_of(n)
    sets = {b: (setter[b] == n) for b in bonds if b in setter}
    free = [b for b in bonds if b not in setter]
    if not free:
        return
    other = lambda b: bg.other_end(n, b)
    if kind in ("0", "port"):   # exactly one bond brings the effort in
        inbound = [b for b in bonds if b in sets and not sets[b]]
        if inbound:
            for b in free:
                assign(b, n)
        elif len(free) == 1:
            assign(free[0], other(free[0]))
    elif kind == "1":           # exactly one bond brings the flow in (the junction sets its effort)
        outbound = [b for b in bonds if b in sets and sets[b]]
        if outbound:
            for b in free:
                assign(b, other(b))
        elif len(free) == 1:
            assign(free[0], n)
    elif kind in ("TF", "MTF"):  # effort passes through: exactly one side set by the TF
        known, = [b for b in bonds if b in sets] or [None]
        if known is not None:
            b = free[0]
            assign(b, other(b) if sets[known] else n)
    elif kind in ("GY", "MGY"):  # both set by the GY or neither
        known, = [b for b in bonds if b in sets] or [None]
        if known is not None:
            b = free[0]
            assign(b, n if sets[known] else other(b))


def _check_complete(bg, n, kind, setter):
    bonds = bg.bonds_of(n)
    sets = [setter[b] == n for b in bonds]
    bad = None
    if kind in ("0", "port") and sum(not s for s in sets) != 1:
        bad = "a 0-junction takes its effort from exactly one bond"
    elif kind == "1" and sum(sets) != 1:
        bad = "a 1-junction takes its flow from exactly one bond"
    elif kind in ("TF", "MTF") and sum(sets) != 1:
        bad = "a transformer passes effort through (one side in, the other out)"
    elif kind in ("GY", "MGY") and sum(sets) not in (0, 2):
        bad = "a gyrator sets both efforts or both flows"
    if bad:
        raise CausalConflict(f"causal conflict at {n}: {bad}; check the sources and two-ports around it")


def _conflict(bg, bond, why, earlier):
    tail, head = bg.ends(bond)
    names = [x for x in (earlier, why) if x is not None]
    for end in (tail, head):
        kind = bg.kind(end)
        if kind in ("0", "1"):
            var = "effort" if kind == "0" else "flow"
            return CausalConflict(
                f"causal conflict at {kind}-junction {end}: {' and '.join(names)} both impose its {var} "
                f"(through bond {bond!r}); remove one source or put an element between them")
    return CausalConflict(f"causal conflict on bond {bond!r} ({tail} -> {head}): {' and '.join(names)} both "
                          "impose its causality; remove one source or put an element between them")


def signal_graph(bg, setter, integral):
    """The signal-flow graph of a causal assignment: an edge from each input variable to each output."""
    g = nx.DiGraph()
    var = lambda which, b: (which, b)
    for n in bg.graph.nodes:
        kind = bg.kind(n)
        bonds = bg.bonds_of(n)
        out = {b: var("e" if setter[b] == n else "f", b) for b in bonds}
        inp = {b: var("f" if setter[b] == n else "e", b) for b in bonds}
        for v in list(out.values()) + list(inp.values()):
            g.add_node(v)
        if kind in ("Se", "Sf"):
            g.add_edge(("source", n), out[bonds[0]])
        elif kind in ("C", "I"):
            for b in bonds:
                if n in integral:
                    g.add_edge(("state", n), out[b])
                else:   # dependent: its outputs follow from its inputs (all of them, for a field)
                    for a in bonds:
                        g.add_edge(inp[a], out[b])
        elif kind == "R" and len(bonds) > 1:
            for a in bonds:
                for b in bonds:
                    g.add_edge(inp[a], out[b])
        elif kind == "R":
            g.add_edge(inp[bonds[0]], out[bonds[0]])
        elif kind in ("0", "1", "port"):
            strong = [b for b in bonds if (setter[b] != n) == (kind != "1")]
            s = strong[0]
            for b in bonds:
                if b != s:
                    g.add_edge(inp[s], out[b])
                    g.add_edge(inp[b], out[s])
        elif kind in ("TF", "MTF", "GY", "MGY"):
            b1, b2 = bonds
            g.add_edge(inp[b1], out[b2])
            g.add_edge(inp[b2], out[b1])
        else:  # fields: every output from every input
            for a in bonds:
                for b in bonds:
                    g.add_edge(inp[a], out[b])
    return g


def _depends_on(bg, signals, n, setter, kinds):
    """Independent storage elements and sources upstream of a dependent storage element's input."""
    found = set()
    ancestors = set()
    for b in bg.bonds_of(n):
        ancestors |= nx.ancestors(signals, ("f" if setter[b] == n else "e", b))
    for v in ancestors:
        if v[0] in ("state", "source"):
            found.add(v[1])
    return sorted(found)


def loop_details(bg, signals):
    """Each algebraic loop (strongly connected part of the signal graph): its R elements (or bonds), its bonds
    and its number of signals, sorted as :func:`algebraic_loops`."""
    out = []
    for comp in nx.strongly_connected_components(signals):
        if len(comp) < 2:
            continue
        bonds = sorted({v[1] for v in comp if v[0] in ("e", "f")})
        rs = sorted({e for b in bonds for e in bg.ends(b) if bg.kind(e) in ("R", "field")})
        out.append({"elements": rs or bonds, "bonds": bonds, "signals": sum(1 for v in comp if v[0] in ("e", "f"))})
    return sorted(out, key=lambda d: d["elements"])


def algebraic_loops(bg, signals, kinds=None):
    """Strongly connected parts of the signal graph (cycles of instantaneous signals), as their R elements."""
    loops = []
    for comp in nx.strongly_connected_components(signals):
        if len(comp) < 2:
            continue
        bonds = {v[1] for v in comp if v[0] in ("e", "f")}
        rs = sorted({e for b in bonds for e in bg.ends(b) if bg.kind(e) in ("R", "field")})
        loops.append(rs or sorted(bonds))
    return sorted(loops)
