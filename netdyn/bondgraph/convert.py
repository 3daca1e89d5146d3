"""A bond graph into netdyn's energy engine, and its explicit state equations.

:func:`to_model` gives every bond a displacement ``q_<bond>`` (the integral of
its flow) and writes each element's share of the book's energy model:

* ``C`` -> potential energy V(q), ``I`` -> kinetic coenergy T*(f), ``R`` -> dissipation D(f)
  (linear, or the element's own energy / coenergy / content function);
* ``Se`` -> an applied effort on its bond, ``Sf`` -> a flow constraint f − f_s(t) = 0;
* 0-junction -> one flow constraint Σ ±f = 0 (its multiplier is the common effort),
  1-junction -> flow constraints f_1 = f_k (the multipliers are its efforts);
* ``TF``/``MTF`` -> a flow constraint f2 − r f1 = 0 (r may depend on a displacement),
  ``GY``/``MGY`` -> a pair of gyroscopic efforts.

So derivative causality and algebraic loops need nothing special: they are
constraints with multipliers and flows without inertia, which the DAE
integrators take as they come. ``formulation="reduced"`` eliminates the
constant junction and TF constraints exactly (fewer coordinates; an
unconstrained model when there are no modulated two-ports and flow sources).

:func:`state_equations` gives ẋ = f(x, u) in the energy variables (``q_C`` of
each C, ``p_I`` of each I) for graphs with integral causality throughout, by
following the causal signal paths (algebraic loops solved symbolically).

>>> import netdyn
>>> bg = netdyn.BondGraph("RC")
>>> for k, n, p in [("Se", "u", {"effort": 1.0}), ("1", "J", {}), ("C", "C1", {"C": 1.0}), ("R", "R1", {"R": 1.0})]:
...     bg.add(k, n, **p)
>>> _ = bg.chain("u", "J", "C1"); _ = bg.bond("J", "R1")
>>> bg.state_equations().rhs
Matrix([[1.0 - 1.0*q_C1]])
>>> sol = netdyn.simulate(bg, (0, 1))
>>> round(float(sol["q_C1"][-1]), 6)     # 1 - exp(-1)
0.632121
"""
from __future__ import annotations

from dataclasses import dataclass

import networkx as nx
import sympy as sp
from sympy.physics.mechanics import dynamicsymbols
from sympy.polys.matrices import DomainMatrix

from netdyn.bondgraph.causality import assign_causality
from netdyn.bondgraph.kinds import FUNCTION_VARIABLE, F, Q, X, field_function
from netdyn.bondgraph.system import signal_function
from netdyn.components.base import PortVariables
from netdyn.errors import ModelError
from netdyn.lagrange.model import LagrangianModel
from netdyn.symbols import t


# ----------------------------------------------------------------------------------- values
def element_values(bg, n, symbolic=False, parameters=None):
    """The element's parameters; with ``symbolic`` numeric ones become symbols (named after the element)."""
    values = dict(bg.params(n))
    numeric = [p for p, v in values.items() if isinstance(v, sp.Basic) and not isinstance(v, sp.MatrixBase)
               and v.is_number and p not in FUNCTION_VARIABLE]
    if symbolic:
        for p, v in values.items():   # a field's matrix: one symbol per independent numeric entry
            if isinstance(v, sp.MatrixBase):
                entry = lambda i, j: v[i, j] if not v[i, j].is_number else sp.Symbol(f"{n}_{min(i, j) + 1}{max(i, j) + 1}")
                values[p] = sp.ImmutableMatrix(v.rows, v.cols, entry)
                if parameters is not None:
                    for i in range(v.rows):
                        for j in range(i, v.cols):
                            if v[i, j].is_number:
                                parameters[values[p][i, j]] = v[i, j]
        for p in numeric:
            sym = sp.Symbol(n if len(numeric) == 1 else f"{n}_{p}")
            if parameters is not None:
                parameters[sym] = values[p]
            values[p] = sym
    return values


def _port_displacement(bg, q, by):
    """The displacement a modulated two-port reads: of an element's one bond (its sign), or of a bond."""
    if by in bg.graph:
        b = bg.bond_of(by)
        return bg.sign(by, b) * q[b]
    return q[by]


# ----------------------------------------------------------------------------------- the model
def to_model(bg, formulation=None, symbolic=False):
    """The :class:`~netdyn.model.LagrangianModel` of a bond graph.

    ``formulation``: ``"bond"`` (default: one displacement per bond, junctions as
    flow constraints; every storage element's initial state can be given) or
    ``"reduced"`` (constant junction/TF constraints eliminated exactly; the
    network formulation names ``"loop"``/``"node"``/``"branch"`` select it too, so
    :func:`netdyn.compare` and friends find an unconstrained form). ``symbolic=True`` writes numeric parameters as symbols named
    after their elements (defaults in ``model.parameters``). Runs SCAP first, so a
    causal conflict is an error naming the sources; the causality found is in
    ``model.metadata["causality"]``.

    >>> import netdyn
    >>> bg = netdyn.BondGraph("mass")
    >>> bg.add("Se", "F", effort=2.0); bg.add("I", "m", I=4.0); _ = bg.bond("F", "m")
    >>> to_model(bg).equations()
    [4.0*Derivative(q_m(t), (t, 2)) - 2.0]
    """
    formulation = formulation or "bond"
    if formulation in ("loop", "node", "branch"):  # network names: tools that try them get the reduced form
        formulation = "reduced"
    if formulation not in ("bond", "reduced"):
        raise ModelError(f"unknown bond-graph formulation {formulation!r}; use 'bond' or 'reduced'")
    bg.check()
    causality = assign_causality(bg)
    bonds = bg.bond_names
    q = {b: dynamicsymbols(bg.coordinate_name(b)) for b in bonds}
    f = {b: q[b].diff(t) for b in bonds}
    parameters = {}
    T, V, D = [], [], []
    efforts = {}
    flow_constraints, labels = [], []
    reducible = []  # indices of constant homogeneous flow constraints
    reactions = {}  # servo flow constraint label -> {coordinate: coefficient} (controlled sources' fields)

    def effort(b, e):
        efforts[q[b]] = efforts.get(q[b], 0) + e

    for n in bg.graph.nodes:
        kind = bg.kind(n)
        vals = element_values(bg, n, symbolic, parameters)
        bl = bg.bonds_of(n)
        s = {b: bg.sign(n, b) for b in bl}
        if kind in ("C", "I", "R") and bg.is_field(n):
            _user_field(n, kind, vals, bl, s, q, f, T, V, D)
        elif kind == "C":
            b, = bl
            qp = s[b] * q[b]
            V.append(qp**2 / (2 * vals["C"]) if "C" in vals else vals["energy"].xreplace({Q: qp}))
        elif kind == "I":
            b, = bl
            fp = s[b] * f[b]
            T.append(vals["I"] * fp**2 / 2 if "I" in vals else vals["coenergy"].xreplace({F: fp}))
        elif kind == "R":
            b, = bl
            fp = s[b] * f[b]
            D.append(vals["R"] * fp**2 / 2 if "R" in vals else vals["content"].xreplace({F: fp}))
        elif kind == "Se":
            b, = bl
            effort(b, -s[b] * vals["effort"])
        elif kind == "Sf":
            b, = bl
            flow_constraints.append(f[b] - vals["flow"])
            labels.append(f"{n} (flow source)")
        elif kind in ("0", "port"):
            flow_constraints.append(sp.Add(*[s[b] * f[b] for b in bl]))
            labels.append(f"{n} (0-junction)")
            reducible.append(len(flow_constraints) - 1)
        elif kind == "1":
            for b in bl[1:]:
                flow_constraints.append(f[bl[0]] - f[b])
                labels.append(f"{n} (1-junction: {bl[0]} = {b})")
                reducible.append(len(flow_constraints) - 1)
        elif kind in ("TF", "MTF"):
            b1, b2 = bl
            r = vals["ratio"] if kind == "TF" else vals["ratio"].xreplace({X: _port_displacement(bg, q, vals["by"])})
            flow_constraints.append(f[b2] - r * f[b1])
            labels.append(f"{n} (transformer)")
            if kind == "TF":
                reducible.append(len(flow_constraints) - 1)
        elif kind in ("GY", "MGY"):
            b1, b2 = bl
            r = vals["ratio"] if kind == "GY" else vals["ratio"].xreplace({X: _port_displacement(bg, q, vals["by"])})
            effort(b1, -s[b1] * r * f[b2])
            effort(b2, s[b1] * r * f[b1])
        elif kind == "field":
            field_terms(bg, n, vals, bl, s, q, f, T, V, D, efforts, flow_constraints, labels, parameters, symbolic,
                   reactions)
        else:  # pragma: no cover - KINDS and this switch are kept together
            raise ModelError(f"{n}: no conversion for kind {kind!r}")
    coords = [q[b] for b in bonds]
    meta = {"bond_graph": bg, "causality": causality, "bonds": {b: bg.coordinate_name(b) for b in bonds},
            "formulation": formulation}
    if formulation == "reduced":
        coords, T, V, D, efforts, flow_constraints, labels, sub = _reduce(
            bg, bonds, q, T, V, D, efforts, flow_constraints, labels, reducible)
        meta["dependent"] = sub
        reactions = _reduce_reactions(bg, q, reactions, sub)
    if reactions:
        meta["flow_reactions"] = reactions
    meta["signal"] = signal_function(bg, q, meta.get("dependent", {}))
    return LagrangianModel(coords, T=T, V=V, D=D, efforts=efforts, flow_constraints=flow_constraints,
                           flow_constraint_labels=labels, parameters=parameters, name=bg.name, metadata=meta)


def _user_field(n, kind, vals, bl, s, q, f, T, V, D):
    """A C, I or R field of several ports: one V(q1..qn), T*(f1..fn) or D(f1..fn) in the element's port variables."""
    if kind == "C":
        V.append(field_function(kind, vals, [s[b] * q[b] for b in bl]))
    else:
        (T if kind == "I" else D).append(field_function(kind, vals, [s[b] * f[b] for b in bl]))


def field_terms(bg, n, vals, bl, s, q, f, T, V, D, efforts, flow_constraints, labels, parameters, symbolic, reactions):
    """A wrapped network element (or a group of them): its own contribution in its bonds' variables."""
    group = vals["element"]
    kinds = vals["kinds"]
    port_of = {}  # (element name, port index) -> bond
    for b in bl:
        port_of[bg.graph.edges[(*bg.ends(b), b)]["port"]] = b
    for el in group:
        evals = {}
        for p, v in el.values.items():
            if symbolic and v.is_number:
                sym = sp.Symbol(el.name if len(el.values) == 1 else f"{el.name}_{p}")
                parameters[sym] = v
                v = sym
            evals[p] = v
        # its own ports, then the ports of the elements it couples (a mutual inductance's inductors, the
        # voltage source a current-controlled source senses), as in the network's assembly
        coupled = [next(x for x in group if x.name == c) for c in el.couples]
        owner = ([el] if el.ports else []) + coupled
        pvs, port_bonds = [], []
        for o in owner:
            for k in range(len(o.ports)):
                b = port_of.get((o.name, k))
                if b is None:  # a port to the element's internal node (see to_bond_graph): no flow, no bond
                    pvs.append(PortVariables(kinds[o.ports[k].domain], sp.S.Zero, sp.S.Zero))
                else:
                    pvs.append(PortVariables(kinds[o.ports[k].domain], s[b] * q[b], s[b] * f[b]))
                port_bonds.append(b)
        if el.couples and getattr(el, "couples_need_inductance", True):
            for i, c in enumerate(coupled):
                L = c.values.get("L")
                evals[f"L_{i + 1}"] = sp.Symbol(c.name) if symbolic and L.is_number else L
        con = el.contribute(pvs, evals)
        if con.constraints or con.sensed_reactions:
            raise ModelError(f"{el.name}: elements with displacement constraints or sensed reactions have no "
                             "bond-graph form here")
        T.append(con.T)
        V.append(con.V)
        D.append(con.D)
        for k, e in con.efforts.items():
            b = port_bonds[k]
            if b is not None:
                efforts[q[b]] = efforts.get(q[b], 0) + s[b] * e
        for j, c in enumerate(con.flow_constraints):
            flow_constraints.append(c)
            labels.append(f"{el.name} ({n})" if len(con.flow_constraints) == 1 else f"{el.name}[{j}] ({n})")
            if j in con.reactions:  # a servo constraint (controlled source): its multiplier acts on these bonds
                react = reactions.setdefault(labels[-1], {})
                for k, coef in con.reactions[j].items():
                    b = port_bonds[k]
                    if b is not None:
                        react[q[b]] = react.get(q[b], 0) + s[b] * coef


def _reduce(bg, bonds, q, T, V, D, efforts, flow_constraints, labels, reducible):
    """Eliminate the constant homogeneous flow constraints: q_dep = N q_free (exact for linear junctions)."""
    order = {"C": 5, "I": 6}
    rank = lambda b: max(order.get(bg.kind(e), 1 if bg.kind(e) in ("0", "1", "port") else 3) for e in bg.ends(b))
    cols = sorted(bonds, key=lambda b: (rank(b), bonds.index(b)))
    rows = []
    col_of = {q[b].diff(t): j for j, b in enumerate(cols)}
    for k in reducible:
        row = [sp.S.Zero] * len(cols)
        for term in sp.Add.make_args(flow_constraints[k]):
            coef, flow = term.as_independent(sp.Derivative, as_Add=False)
            row[col_of[flow]] += coef
        rows.append(row)
    sub, free = {}, list(cols)
    if rows:
        dm = DomainMatrix.from_Matrix(sp.Matrix(rows))
        if dm.domain.is_Field is False and dm.domain.has_assoc_Field:
            dm = dm.to_field()
        R, pivots = dm.rref()
        R = R.to_Matrix()
        free = [b for j, b in enumerate(cols) if j not in pivots]
        for i, j in enumerate(pivots):
            sub[cols[j]] = {cols[k]: -R[i, k] for k in range(len(cols)) if k not in pivots and R[i, k] != 0}
    rep = {}
    for b, comb in sub.items():
        rep[q[b].diff(t)] = sp.Add(*[c * q[k].diff(t) for k, c in comb.items()])
        rep[q[b]] = sp.Add(*[c * q[k] for k, c in comb.items()])
    x = lambda e: sp.sympify(e).xreplace(rep)
    new_eff = {}
    for b in free:
        new_eff[q[b]] = x(efforts.get(q[b], 0))
    for b, comb in sub.items():  # virtual work: Q_free += dq_dep/dq_free * Q_dep
        e = efforts.get(q[b])
        if e is not None:
            for k, c in comb.items():
                new_eff[q[k]] = new_eff[q[k]] + c * x(e)
    keep = [k for k in range(len(flow_constraints)) if k not in set(reducible)]
    return ([q[b] for b in free], [x(e) for e in T], [x(e) for e in V], [x(e) for e in D],
            {k: v for k, v in new_eff.items() if v != 0}, [x(flow_constraints[k]) for k in keep],
            [labels[k] for k in keep], {bg.coordinate_name(b): {bg.coordinate_name(k): c for k, c in comb.items()}
                                       for b, comb in sub.items()})


def _reduce_reactions(bg, q, reactions, sub):
    """Servo reactions in the free coordinates: a force on ``q_dep = Σ c q_free`` acts on each ``q_free`` times c."""
    by_name = {bg.coordinate_name(b): b for b in bg.bond_names}
    dep = {q[by_name[d]]: {q[by_name[k]]: c for k, c in comb.items()} for d, comb in sub.items()}
    out = {}
    for label, react in reactions.items():
        row = {}
        for coord, coef in react.items():
            for k, c in dep.get(coord, {coord: 1}).items():
                row[k] = row.get(k, 0) + c * coef
        out[label] = {k: v for k, v in row.items() if v != 0}
    return out


# ----------------------------------------------------------------------------------- state equations
@dataclass
class StateEquations:
    """ẋ = f(x, u): ``states`` (plain symbols q_<C>, p_<I>, x_<modulating>), ``rhs`` (sympy Matrix),
    ``inputs`` (source name -> value), ``parameters`` (symbol -> default when ``symbolic``).

    >>> from netdyn import BondGraph
    >>> bg = BondGraph("mass")
    >>> bg.add("Se", "F", effort=2.0); bg.add("I", "m", I=4.0); _ = bg.bond("F", "m")
    >>> eqs = state_equations(bg)
    >>> eqs.states, eqs.rhs
    ([p_m], Matrix([[2.0]]))
    """

    states: list
    rhs: sp.Matrix
    inputs: dict
    parameters: dict

    def equations(self):
        """``[Eq(dx/dt, f), ...]`` with the states as functions of t."""
        fun = {s: sp.Function(s.name)(t) for s in self.states}
        return [sp.Eq(fun[s].diff(t), e.xreplace(fun)) for s, e in zip(self.states, self.rhs)]

    def __getitem__(self, name):
        for s, e in zip(self.states, self.rhs):
            if s.name == name:
                return e
        raise KeyError(f"no state {name!r}; states are {[s.name for s in self.states]}")


def state_equations(bg, symbolic=False):
    """Explicit state equations of a bond graph with integral causality throughout.

    States: ``q_<C>`` (displacement of each C), ``p_<I>`` (momentum of each I),
    and ``x_<element>`` for displacements that modulate an MTF/MGY and are not
    a C's. Derivative causality is a :class:`~netdyn.errors.ModelError` naming the
    dependent elements (simulate ``bg.model()`` instead: the DAE handles it).

    >>> from netdyn import BondGraph
    >>> bg = BondGraph("RC")
    >>> bg.add("Se", "u", effort=1.0); bg.add("1", "J"); bg.add("C", "C1", C=2.0); bg.add("R", "R1", R=0.5)
    >>> _ = bg.chain("u", "J", "C1"); _ = bg.bond("J", "R1")
    >>> state_equations(bg).rhs
    Matrix([[2.0 - 1.0*q_C1]])
    """
    bg.check()
    caus = assign_causality(bg)
    if caus.derivative:
        dep = "; ".join(f"{k} depends on {', '.join(v)}" for k, v in caus.derivative.items())
        raise ModelError(f"no explicit state equations: derivative causality ({dep}); "
                         "simulate bg.model() instead, the DAE integrators handle dependent storage")
    parameters = {}
    vals = {n: element_values(bg, n, symbolic, parameters) for n in bg.graph.nodes}
    setter = caus.effort_setter
    states, derivs, inputs = [], [], {}
    state_of = {}
    for n in caus.integral:
        prefix = "q_" if bg.kind(n) == "C" else "p_"
        if bg.is_field(n):   # one state per port: q_<field>_1, ... / p_<field>_1, ...
            for k, b in enumerate(bg.bonds_of(n)):
                state_of[("field", n, b)] = sp.Symbol(f"{prefix}{n}_{k + 1}")
                states.append(state_of[("field", n, b)])
            continue
        sym = sp.Symbol(prefix + n)
        state_of[n] = sym
        states.append(sym)
    for n in bg.of_kind("MTF", "MGY"):
        by = vals[n]["by"]
        if by not in state_of or bg.kind(by) != "C":
            if ("x", by) not in state_of:
                state_of[("x", by)] = sp.Symbol(f"x_{by}")
                states.append(state_of[("x", by)])

    def modulus(n):
        by = vals[n]["by"]
        x = state_of[by] if (by in state_of and bg.kind(by) == "C") else state_of[("x", by)]
        return vals[n]["ratio"].xreplace({X: x})

    known = {}
    sig = caus.signals
    cond = nx.condensation(sig)
    for c in nx.topological_sort(cond):
        members = [v for v in cond.nodes[c]["members"] if v[0] in ("e", "f")]
        if not members:
            continue
        if len(members) == 1 and not sig.has_edge(members[0], members[0]):
            v = members[0]
            known[v] = _output(bg, vals, setter, state_of, modulus, v, known)
            continue
        syms = {v: sp.Dummy(f"{v[0]}_{v[1]}") for v in members}
        look = dict(known)
        look.update(syms)
        eqs = [syms[v] - _output(bg, vals, setter, state_of, modulus, v, look) for v in members]
        sol = sp.solve(eqs, list(syms.values()), dict=True)
        if len(sol) != 1:
            loop = next((l for l in caus.algebraic_loops if set(l) & {e for v in members for e in bg.ends(v[1])}),
                        members)
            raise ModelError(f"the algebraic loop through {', '.join(loop)} has {len(sol)} solutions; "
                             "explicit state equations need exactly one (simulate bg.model() instead)")
        for v in members:
            known[v] = sol[0][syms[v]]
    for n in caus.integral:
        if bg.is_field(n):
            for b in bg.bonds_of(n):
                derivs.append(bg.sign(n, b) * known[("f", b)] if bg.kind(n) == "C" else known[("e", b)])
            continue
        b = bg.bond_of(n)
        derivs.append(bg.sign(n, b) * known[("f", b)] if bg.kind(n) == "C" else known[("e", b)])
    for key, sym in state_of.items():
        if isinstance(key, tuple) and key[0] == "x":
            by = key[1]
            b = bg.bond_of(by)
            derivs.append((bg.sign(by, b) if by in bg.graph else 1) * known[("f", b)])
    for n in bg.of_kind("Se", "Sf"):
        inputs[n] = vals[n]["effort" if bg.kind(n) == "Se" else "flow"]
    return StateEquations(states, sp.Matrix(derivs), inputs, parameters)


def _field_output(bg, n, kind, p, b, which, state_of, known):
    """A field's output on bond ``b``: C effort = ∂V/∂q_k, I flow from ∂T*/∂f = p, R effort = ∂D/∂f_k."""
    bonds = bg.bonds_of(n)
    k = bonds.index(b)
    sg = [bg.sign(n, bb) for bb in bonds]
    if kind == "C" and which == "e":
        x = [state_of[("field", n, bb)] for bb in bonds]
        return sp.diff(field_function(kind, p, x), x[k])
    if kind == "I" and which == "f":
        fs = [sp.Dummy(f"f{j + 1}") for j in range(len(bonds))]
        T = field_function(kind, p, fs)
        eqs = [sp.diff(T, fj) - state_of[("field", n, bb)] for fj, bb in zip(fs, bonds)]
        sol = sp.solve(eqs, fs, dict=True)
        if len(sol) != 1:
            raise ModelError(f"{n}: cannot invert its coenergy for the flows ({len(sol)} solutions); "
                             "simulate bg.model() instead")
        return sg[k] * sol[0][fs[k]]
    if kind == "R" and which == "e" and all(bg.sign(n, bb) and known.get(("f", bb)) is not None for bb in bonds):
        fs = [sg[j] * known[("f", bb)] for j, bb in enumerate(bonds)]
        dummies = [sp.Dummy() for _ in bonds]
        D = field_function(kind, p, dummies)
        return sp.diff(D, dummies[k]).xreplace(dict(zip(dummies, fs)))
    raise ModelError(f"{n}: a {kind} field in mixed causality has no explicit state equations here; "
                     "simulate bg.model() instead (the DAE takes it as it is)")


def _solve_for(expr_of_var, var, target, where):
    """x with expr_of_var(x) = target (linear or sympy-solvable)."""
    sol = sp.solve(sp.Eq(expr_of_var, target), var)
    if len(sol) != 1:
        raise ModelError(f"{where}: cannot invert its constitutive law for this causality ({len(sol)} solutions); "
                         "simulate bg.model() instead")
    return sol[0]


def _output(bg, vals, setter, state_of, modulus, v, known):
    """The expression of signal ``v = ("e"|"f", bond)`` computed by the element that outputs it."""
    which, b = v
    n = setter[b] if which == "e" else bg.other_end(setter[b], b)
    kind = bg.kind(n)
    p = vals[n]
    s = bg.sign(n, b)
    val = lambda w, bb: known[(w, bb)]
    if kind == "Se":
        return p["effort"]
    if kind == "Sf":
        return p["flow"]
    if kind in ("C", "I", "R") and bg.is_field(n):
        return _field_output(bg, n, kind, p, b, which, state_of, known)
    if kind == "C":
        x = state_of[n]
        return x / p["C"] if "C" in p else sp.diff(p["energy"], Q).xreplace({Q: x})
    if kind == "I":
        x = state_of[n]
        fp = x / p["I"] if "I" in p else _solve_for(sp.diff(p["coenergy"], F), F, x, n)
        return s * fp
    if kind == "R":
        if which == "e":
            fp = s * val("f", b)
            return p["R"] * fp if "R" in p else sp.diff(p["content"], F).xreplace({F: fp})
        e = val("e", b)
        fp = e / p["R"] if "R" in p else _solve_for(sp.diff(p["content"], F), F, e, n)
        return s * fp
    bl = bg.bonds_of(n)
    sg = {bb: bg.sign(n, bb) for bb in bl}
    if kind in ("0", "port"):
        strong = next(bb for bb in bl if setter[bb] != n)
        if which == "e":
            return val("e", strong)
        return -sg[b] * sp.Add(*[sg[bb] * val("f", bb) for bb in bl if bb != b])
    if kind == "1":
        strong = next(bb for bb in bl if setter[bb] == n)
        if which == "f":
            return val("f", strong)
        return -sg[b] * sp.Add(*[sg[bb] * val("e", bb) for bb in bl if bb != b])
    if kind in ("TF", "MTF", "GY", "MGY"):
        b1, b2 = bl
        r = p["ratio"] if kind in ("TF", "GY") else modulus(n)
        k = sg[b1] * sg[b2]
        if kind in ("TF", "MTF"):   # f2 = r f1, e1 = -k r e2
            return {("e", b1): lambda: -k * r * val("e", b2), ("f", b2): lambda: r * val("f", b1),
                    ("e", b2): lambda: -k * val("e", b1) / r, ("f", b1): lambda: val("f", b2) / r}[v]()
        # e1 = r f2, e2 = -k r f1
        return {("e", b1): lambda: r * val("f", b2), ("e", b2): lambda: -k * r * val("f", b1),
                ("f", b2): lambda: val("e", b1) / r, ("f", b1): lambda: -k * val("e", b2) / r}[v]()
    raise ModelError(f"{n}: a {kind} element has no explicit state-equation form; simulate bg.model() instead")
