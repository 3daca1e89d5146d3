"""A bond graph into netdyn's energy engine.

:func:`to_model` gives every bond a displacement (the integral of its flow),
named ``q_<element>`` when the bond points into a one-port storage element and
``q_<bond>`` otherwise, and writes each element's share of the book's energy
model:

* ``C`` -> potential energy V(q), ``I`` -> kinetic coenergy T*(f), ``R`` -> dissipation D(f),
  each from the element's law (:mod:`netdyn.bondgraph.laws`: linear, or given in any of its forms);
* ``Se`` -> an applied effort on its bond, ``Sf`` -> a flow constraint f − f_s(t) = 0;
* 0-junction -> one flow constraint Σ ±f = 0 (its multiplier is the common effort),
  1-junction -> flow constraints f_1 = f_k (the multipliers are its efforts);
* ``TF``/``MTF`` -> a flow constraint f2 − r f1 = 0 (r may depend on a displacement),
  ``GY``/``MGY`` -> a pair of gyroscopic efforts.

*Laws in the causality SCAP assigns.* The terms above use a nonlinear law in
one direction: V(q) needs ``e(q)`` (a ``C`` in integral causality), T*(f) needs
``p(f)`` (an ``I`` in derivative causality), D(f) needs ``e(f)`` (an ``R`` given
its flow). An element whose assigned causality is the other one — an ``I`` in
integral causality, a ``C`` given its effort, an ``R`` given its effort (an
orifice between two tanks: ``f = k·sign(e)·√|e|``) — is written through a unit
gyrator into its *dual* coordinate ``p_<element>`` (the integral of its effort,
so its rate is the effort): an ``I`` as the potential energy H(p) of its momentum
``p_<I>``, a ``C`` as the kinetic co-energy V*(ṗ), an ``R`` as the co-content
D*(ṗ); the bond's displacement stays and the gyrator's efforts tie its flow to
the law. Each law is thus used as the causality needs it, in closed form where
one exists; where the needed direction has none but the other has, the other
representation is used and the integrator's Newton iteration solves the law
(analytic Jacobian); where neither has, the law's numeric inverse
(:class:`~netdyn.bondgraph.laws.NumericFunction`). Linear elements keep the
first representation (the linear fast path writes the same matrices).

So derivative causality and algebraic loops need nothing special: they are
constraints with multipliers and flows without inertia, which the DAE
integrators take as they come. ``formulation="reduced"`` eliminates the
constant junction and TF constraints exactly (fewer coordinates; an
unconstrained model when there are no modulated two-ports and flow sources).
``formulation="state"`` is the model of the explicit state equations
(:mod:`netdyn.bondgraph.laws.equations`, derivative causality reduced) in the energy
variables ``q_<C>``, ``p_<I>``: see :func:`state_model`.

Consistent start: the model carries ``metadata["complete_start"]``, which the
start of every symbolic path calls (:func:`~netdyn.numerics.dae.initial.consistent_initial_conditions`):
from the storage states given (``q0``: ``q_<C>``, ``p_<I>`` or an inertia's flow in
``f0``) it evaluates every effort and flow of the graph causally — nonlinear
algebraic loops and resistive fields between junctions solved by Newton's
method — and gives the flows (and dual coordinates) that satisfy every element's law.

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

import sympy as sp
from sympy.physics.mechanics import dynamicsymbols
from sympy.polys.matrices import DomainMatrix

from netdyn.bondgraph.laws import CausalSystem, StateEquations, state_equations  # noqa: F401 (0.3 home)
from netdyn.bondgraph.causality import assign_causality
from netdyn.bondgraph.kinds import element_values, field_function  # noqa: F401 (element_values: 0.3 home)
from netdyn.bondgraph.laws import element_law, realify
from netdyn.bondgraph.system import (THROUGH_ACROSS, bond_signal_function, check_slopes, signal_names,
                                    state_series, state_signal_function)
from netdyn.components.base import PortVariables
from netdyn.errors import ModelError
from netdyn.lagrange.model import LagrangianModel
from netdyn.symbols import t

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # names for the hints only (annotations are not evaluated)
    from netdyn.bondgraph.graph import BondGraph


def _port_displacement(bg, q, by):
    """The displacement a modulated two-port reads: of an element's one bond (its sign), or of a bond."""
    if by in bg.graph:
        b = bg.bond_of(by)
        return bg.sign(by, b) * q[b]
    return q[by]


# ----------------------------------------------------------------------------------- the model
def to_model(bg: BondGraph, formulation: str | None = None, symbolic: bool = False) -> LagrangianModel:
    """The :class:`~netdyn.model.LagrangianModel` of a bond graph.

    ``formulation``: ``"bond"`` (default: one displacement per bond, junctions as
    flow constraints; every storage element's initial state can be given),
    ``"reduced"`` (constant junction/TF constraints eliminated exactly; the
    network formulation names ``"loop"``/``"node"``/``"branch"`` select it too, so
    :func:`netdyn.compare` and friends find an unconstrained form) or ``"state"``
    (the explicit state equations in ``q_<C>``, ``p_<I>``: :func:`state_model`).
    ``symbolic=True`` writes numeric parameters as symbols named
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
    if formulation not in ("bond", "reduced", "state"):
        raise ModelError(f"unknown bond-graph formulation {formulation!r}; use 'bond', 'reduced' or 'state'")
    if formulation == "state":
        return state_model(bg, symbolic=symbolic)
    bg.check()
    causality = assign_causality(bg)
    bonds = bg.bond_names
    names = bg.coordinate_names()
    q = {b: dynamicsymbols(names[b]) for b in bonds}
    f = {b: q[b].diff(t) for b in bonds}
    parameters = {}
    T, V, D = [], [], []
    efforts = {}
    flow_constraints, labels = [], []
    reducible = []  # indices of constant homogeneous flow constraints
    reactions = {}  # servo flow constraint label -> {coordinate: coefficient} (controlled sources' fields)
    duals, laws, reps = {}, {}, {}   # element -> its dual coordinate p_<element>; its law; "flow" | "effort"

    def effort(b, e):
        efforts[q[b]] = efforts.get(q[b], 0) + e

    values = {n: element_values(bg, n, symbolic, parameters) for n in bg.graph.nodes}
    for n in bg.of_kind("C", "I", "R"):   # laws and representations first: a modulus may read a momentum
        if not bg.is_field(n):
            laws[n] = element_law(bg, n, values[n])
            reps[n] = representation(bg, n, laws[n], causality)
            if reps[n] == "effort":
                duals[n] = dynamicsymbols(dual_name(n))

    def modulus(n):
        sub = {}
        for sym, (which, target) in bg.modulating(n).items():
            if which in ("x", "q"):
                sub[sym] = _port_displacement(bg, q, target)
            elif target in duals:
                sub[sym] = duals[target]
            else:
                b = bg.bond_of(target)
                sub[sym] = laws[target].G(bg.sign(target, b) * f[b])
        return values[n]["ratio"].xreplace(sub)

    for n in bg.graph.nodes:
        kind = bg.kind(n)
        vals = values[n]
        bl = bg.bonds_of(n)
        s = {b: bg.sign(n, b) for b in bl}
        if kind in ("C", "I", "R") and bg.is_field(n):
            _user_field(n, kind, vals, bl, s, q, f, T, V, D)
        elif kind in ("C", "I", "R"):
            b, = bl
            law, rep = laws[n], reps[n]
            if rep == "flow":
                if kind == "C":
                    V.append(law.E(s[b] * q[b]))
                elif kind == "I":
                    T.append(law.Estar(s[b] * f[b]))
                else:
                    D.append(law.E(s[b] * f[b]))
            else:   # through a unit gyrator into the dual coordinate P (its rate is the element's effort)
                P = duals[n]
                if kind == "C":
                    T.append(law.Estar(P.diff(t)))
                elif kind == "I":
                    V.append(law.E(P))
                else:
                    D.append(law.Estar(P.diff(t)))
                effort(b, -s[b] * P.diff(t))
                efforts[P] = efforts.get(P, 0) + s[b] * f[b]
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
            r = vals["ratio"] if kind == "TF" else modulus(n)
            flow_constraints.append(f[b2] - r * f[b1])
            labels.append(f"{n} (transformer)")
            if kind == "TF":
                reducible.append(len(flow_constraints) - 1)
        elif kind in ("GY", "MGY"):
            b1, b2 = bl
            r = vals["ratio"] if kind == "GY" else modulus(n)
            effort(b1, -s[b1] * r * f[b2])
            effort(b2, s[b1] * r * f[b1])
        elif kind == "field":
            field_terms(bg, n, vals, bl, s, q, f, T, V, D, efforts, flow_constraints, labels, parameters, symbolic,
                        reactions)
        else:  # pragma: no cover - KINDS and this switch are kept together
            raise ModelError(f"{n}: no conversion for kind {kind!r}")
    T, V, D = [realify(x) for x in T], [realify(x) for x in V], [realify(x) for x in D]
    efforts = {k: realify(v) for k, v in efforts.items()}
    coords = [q[b] for b in bonds]
    meta = {"bond_graph": bg, "causality": causality, "bonds": {b: names[b] for b in bonds},
            "formulation": formulation, "duals": {n: dual_name(n) for n in duals}, "representation": reps}
    if formulation == "reduced":
        coords, T, V, D, efforts, flow_constraints, labels, sub = _reduce(
            bg, bonds, q, T, V, D, efforts, flow_constraints, labels, reducible)
        meta["dependent"] = sub
        reactions = _reduce_reactions(bg, q, reactions, sub)
    coords = coords + list(duals.values())
    if reactions:
        meta["flow_reactions"] = reactions
    info = BondModelInfo(bg, causality, q, duals, laws, reps, meta.get("dependent", {}), symbolic)
    meta["signal"] = bond_signal_function(info)
    meta["signal_names"] = lambda: signal_names(bg)
    meta["state_series"] = state_series(bg)
    meta["through_across"] = THROUGH_ACROSS
    meta["complete_start"] = info.complete_start
    meta["bond_model"] = info
    parameters = {**{k: float(v) for k, v in bg.parameter_values().items()}, **parameters}
    return LagrangianModel(coords, T=T, V=V, D=D, efforts=efforts, flow_constraints=flow_constraints,
                           flow_constraint_labels=labels, parameters=parameters, name=bg.name, metadata=meta)


def dual_name(element):
    """The dual coordinate of an element (the integral of its effort): ``p_<element>``."""
    return "p_" + "".join(c if c.isalnum() or c == "_" else "_" for c in element)


#: which function of its law each representation of an element uses (laws.Law: F is y(x), G is x(y))
_NEEDS = {("C", "flow"): "F", ("C", "effort"): "G", ("I", "flow"): "G", ("I", "effort"): "F",
          ("R", "flow"): "F", ("R", "effort"): "G"}


def representation(bg, n, law, causality):
    """``"flow"`` (V(q), T*(f), D(f) of the bond's displacement) or ``"effort"`` (the dual coordinate) for
    one-port ``n``: the one its assigned causality uses, unless only the other has its law in closed form.

    >>> import netdyn
    >>> bg = netdyn.BondGraph("tanks")
    >>> for k, n, p in [("C", "T1", {"C": 1.0}), ("0", "p1", {}), ("1", "Q", {}),
    ...                 ("R", "orifice", {"law": "f = 2*sign(e)*sqrt(Abs(e))"}), ("0", "p2", {}), ("C", "T2", {"C": 1.0})]:
    ...     bg.add(k, n, **p)
    >>> _ = bg.chain("p1", "Q", "p2", "T2"); _ = bg.bond("p1", "T1"); _ = bg.bond("Q", "orifice")
    >>> from netdyn.bondgraph.laws import element_law
    >>> representation(bg, "orifice", element_law(bg, "orifice"), bg.causality())   # given Δp: f = g(Δp)
    'effort'
    """
    if law.is_linear():
        return "flow"
    kind = bg.kind(n)
    b = bg.bond_of(n)
    sets_effort = causality.effort_setter[b] == n
    preferred = {"C": "flow" if sets_effort else "effort", "I": "flow" if sets_effort else "effort",
                 "R": "flow" if sets_effort else "effort"}[kind]
    if law.closed(_NEEDS[(kind, preferred)]):
        return preferred
    other = "effort" if preferred == "flow" else "flow"
    if law.closed(_NEEDS[(kind, other)]):
        return other
    return preferred


def state_model(bg, symbolic=False):
    """The explicit state equations as a :class:`~netdyn.model.LagrangianModel` (``formulation="state"``).

    Coordinates: the states ``q_<C>``, ``p_<I>`` (and ``x_<element>``) of
    :func:`~netdyn.bondgraph.laws.equations.state_equations`, derivative causality reduced, plus
    one coordinate ``z_<signal>`` per unknown of a nonlinear algebraic loop
    (its rate is that unknown). The equations ẋ = f(x, ż, u), 0 = g(x, ż, u)
    are written with the unit Rayleigh function D = ½ Σ ẋ² and applied efforts
    ``f`` (on each state) and ``g`` (on each loop coordinate): Lagrange's rows are
    then exactly ``ẋ − f = 0`` and ``−g = 0``. So ``simulate``, ``linearize`` and
    ``export_equations`` see the graph in its energy variables, named after its
    elements. That D and those efforts are an embedding, not the graph's
    energies: ``power_balance()`` closes by construction and its split says
    nothing; each element's energy is the signal ``E(X)`` (``sol.series("E(C1)")``)
    and its power ``e(X)·f(X)``.

    >>> import netdyn
    >>> bg = netdyn.BondGraph("RC")
    >>> for k, n, p in [("Se", "u", {"effort": 1.0}), ("1", "J", {}), ("C", "C1", {"C": 1.0}), ("R", "R1", {"R": 1.0})]:
    ...     bg.add(k, n, **p)
    >>> _ = bg.chain("u", "J", "C1"); _ = bg.bond("J", "R1")
    >>> m = state_model(bg)
    >>> m.coordinate_names, m.equations()
    (['q_C1'], [1.0*q_C1(t) + Derivative(q_C1(t), t) - 1.0])
    """
    cs = CausalSystem(bg, symbolic)
    se = cs.equations()
    ident = lambda s: "".join(c if c.isalnum() or c == "_" else "_" for c in s)
    X = {s: dynamicsymbols(ident(s.name)) for s in se.states}
    Z = {z: dynamicsymbols("z_" + ident(z.name)) for z in se.algebraic}
    sub = {**X, **{z: Z[z].diff(t) for z in se.algebraic}}
    D = sp.Add(*[X[s].diff(t) ** 2 / 2 for s in se.states])
    efforts = {X[s]: realify(sp.sympify(r).xreplace(sub)) for s, r in zip(se.states, se.rhs)}
    for z, g in zip(se.algebraic, se.residuals):
        efforts[Z[z]] = realify(sp.sympify(g).xreplace(sub))
    meta = {"bond_graph": bg, "causality": cs.caus, "formulation": "state", "state_equations": se,
            "states": {s.name: X[s].func.__name__ for s in se.states}}
    meta["signal"] = state_signal_function(bg, se, cs.laws, sub)
    meta["signal_names"] = lambda: signal_names(bg)
    meta["state_series"] = state_series(bg)
    meta["through_across"] = THROUGH_ACROSS
    start = _StateStart(bg, cs, se, X, Z)
    meta["complete_start"] = start
    parameters = {**{k: float(v) for k, v in bg.parameter_values().items()}, **se.parameters}
    return LagrangianModel(list(X.values()) + list(Z.values()), D=D, efforts=efforts, parameters=parameters,
                           name=bg.name, metadata=meta)


class _StateStart:
    """The consistent start of the state formulation: the rates of the states and the loops' unknowns."""

    def __init__(self, bg, cs, se, X, Z):
        self.bg, self.cs, self.se, self.X, self.Z = bg, cs, se, X, Z
        self._start = None

    def __call__(self, cm, t0, q0, f0, p):
        from netdyn.bondgraph.system import CausalStart
        if self._start is None:
            self._start = CausalStart(self.bg, system=self.cs)
        start = self._start
        q0 = {_key(k): v for k, v in (q0 or {}).items()}
        f0 = {_key(k): v for k, v in (f0 or {}).items()}
        state = {s: float(q0.get(self.X[s].func.__name__, 0.0)) for s in self.se.states}
        values = start.evaluate(state, t0, cm, p)
        if values is None:
            return q0, f0
        check_slopes(self.bg, start.system, values, t0)
        for s in self.se.states:
            name = self.X[s].func.__name__
            if name not in f0 and ("rate", s) in values:
                f0[name] = values[("rate", s)]
        for z in self.se.algebraic:
            name = self.Z[z].func.__name__
            if name not in f0 and ("z", z) in values:
                f0[name] = values[("z", z)]
        return q0, f0


class BondModelInfo:
    """What a bond-graph model knows of its graph: bond displacements in its coordinates, each element's law
    and representation, its dual coordinates; named signals (``metadata["signal"]``) and the consistent
    start (``metadata["complete_start"]``)."""

    def __init__(self, bg, causality, q, duals, laws, reps, dependent, symbolic):
        self.bg, self.causality, self.q, self.duals = bg, causality, q, duals
        self.laws, self.reps, self.dependent, self.symbolic = laws, reps, dependent, symbolic
        self.names = {b: fn.func.__name__ for b, fn in q.items()}
        self._by_name = {self.names[b]: fn for b, fn in q.items()}
        self._vals = {}
        self._start = None

    def vals(self, n):
        if n not in self._vals:
            self._vals[n] = element_values(self.bg, n, self.symbolic)
        return self._vals[n]

    # --------------------------------------------------------------- bond variables in the model
    def disp(self, b):
        """The displacement of bond ``b`` in the model's coordinate functions (eliminated bonds through the rest)."""
        name = self.names[b]
        if name in self.dependent:
            return sp.Add(*[c * self._by_name[k] for k, c in self.dependent[name].items()])
        return self.q[b]

    def flow(self, b):
        return self.disp(b).diff(t)

    def modulus(self, n):
        bg, sub = self.bg, {}
        for sym, (which, target) in bg.modulating(n).items():
            if which in ("x", "q"):
                sub[sym] = bg.sign(target, bg.bond_of(target)) * self.disp(bg.bond_of(target)) \
                    if target in bg.graph else self.disp(target)
            else:
                sub[sym] = self._momentum(target, bg.bond_of(target), bg.sign(target, bg.bond_of(target)))
        return self.vals(n)["ratio"].xreplace(sub)

    def element_effort(self, n, b):
        """The effort on bond ``b`` from element ``n``'s own law, in the model's variables (None: not a law)."""
        bg = self.bg
        kind = bg.kind(n)
        if n in self.duals:
            return self.duals[n].diff(t)
        s = bg.sign(n, b)
        if kind in ("C", "I", "R") and bg.is_field(n):
            from netdyn.bondgraph.system import field_effort
            return field_effort(bg, n, b, "e", {bb: bg.sign(n, bb) * self.disp(bb) for bb in bg.bonds_of(n)},
                                f"e({b})", self.vals(n))
        if kind == "C":
            return self.laws[n].F(s * self.disp(b))
        if kind == "I":
            return self.laws[n].G(s * self.flow(b)).diff(t)
        if kind == "R":
            return self.laws[n].F(s * self.flow(b))
        if kind == "Se":
            return self.vals(n)["effort"]
        return None

    def effort(self, b, _seen=None):
        """The effort of any bond: the law of the element that sets it, carried through junctions and two-ports."""
        bg = self.bg
        seen = set() if _seen is None else _seen
        if b in seen:
            raise ModelError(f"the effort of bond {b!r} depends on itself through junctions (a zero-order "
                             "causal loop); ask for the effort of a C, I, R or Se element instead")
        seen.add(b)
        n = self.causality.effort_setter[b]
        kind = bg.kind(n)
        own = self.element_effort(n, b) if kind in ("C", "I", "R", "Se") else None
        if own is not None:
            return own
        bl = bg.bonds_of(n)
        sg = {bb: bg.sign(n, bb) for bb in bl}
        setter = self.causality.effort_setter
        if kind in ("0", "port"):
            strong = next(bb for bb in bl if setter[bb] != n)
            return self.effort(strong, seen)
        if kind == "1":
            return -sg[b] * sp.Add(*[sg[bb] * self.effort(bb, seen) for bb in bl if bb != b])
        if kind in ("TF", "MTF", "GY", "MGY"):
            b1, b2 = bl
            r = self.vals(n)["ratio"] if kind in ("TF", "GY") else self.modulus(n)
            k = sg[b1] * sg[b2]
            if kind in ("TF", "MTF"):
                return -k * r * self.effort(b2, seen) if b == b1 else -k * self.effort(b1, seen) / r
            return r * self.flow(b2) if b == b1 else -k * r * self.flow(b1)
        raise ModelError(f"the effort of bond {b!r} is set by {n} (a {kind} element), which has no law of its own "
                         "here; ask for the effort of a C, I, R or Se element on the same junction")

    # --------------------------------------------------------------- named signals
    def signal(self, spec):
        """``metadata["signal"]``: ``e(X)``, ``f(X)`` (power variables of the bond of element X, or of bond X),
        ``q(X)``, ``p(X)`` (the energy variables of an element, seen from it), ``E(X)`` (a storage element's
        energy) as an expression of the model's coordinate functions; None for other specs."""
        from netdyn.bondgraph.system import field_effort, parse_signal
        parsed = parse_signal(self.bg, spec)
        if parsed is None:
            return None
        which, target, b = parsed
        bg = self.bg
        if which == "f":
            return self.flow(b)
        if which == "e":
            return self.effort(b)
        n = target if target in bg.graph else None
        field = next((x for x in bg.ends(b) if bg.is_field(x)), None)
        if field is not None:
            return field_effort(bg, field, b, which, {bb: bg.sign(field, bb) * self.disp(bb)
                                                      for bb in bg.bonds_of(field)}, spec, self.vals(field))
        kind = bg.kind(n) if n is not None else None
        s = bg.sign(n, b) if n is not None else 1
        if which == "E":
            if kind not in ("C", "I"):
                raise ModelError(f"output {spec!r}: E(X) is the energy stored in a C or I element; {target} is "
                                 f"{'a ' + kind + ' element' if kind else 'a bond'}")
            law = self.laws[n]
            if kind == "C":
                return law.E(self._displacement(n, b, s))
            return law.E(self._momentum(n, b, s))
        if which == "q":
            return self._displacement(n, b, s) if kind == "C" else s * self.disp(b)
        if kind == "I" or n in self.duals:
            return self._momentum(n, b, s) if kind == "I" else self.duals[n]
        if kind == "R" and self.laws[n].is_linear():   # ∫e dt = R ∫f dt: the resistance times its displacement
            return self.laws[n].F(s * self.disp(b))
        raise ModelError(f"output {spec!r}: p(X), the integral of the effort (a momentum), is a state of an I element, the dual "
                         f"coordinate of an element in the other representation, or R q(X) of a linear R; "
                         f"{target} is {'a ' + kind + ' element' if kind else 'a bond'} with none of them")

    def _displacement(self, n, b, s):
        if n in self.duals:   # a C through its dual: q = G(e), e the dual's rate
            return self.laws[n].G(self.duals[n].diff(t))
        return s * self.disp(b)

    def _momentum(self, n, b, s):
        if n in self.duals:
            return self.duals[n]
        return self.laws[n].G(s * self.flow(b))

    # --------------------------------------------------------------- the consistent start
    def complete_start(self, cm, t0, q0, f0, p):
        """``(q0, f0)`` completed so every element's law holds at ``t0``: the flows of every bond and the dual
        coordinates from the storage states given, by the graph's causal evaluation (nonlinear algebraic
        loops by Newton's method). Values the caller gave are kept."""
        from netdyn.bondgraph.system import CausalStart
        if self._start is None:
            self._start = CausalStart(self.bg, self.symbolic)
        start = self._start
        if start.system is None:      # no causal evaluation (a field in mixed causality ...): as given
            return q0, f0
        bg = self.bg
        q0 = {_key(k): v for k, v in (q0 or {}).items()}
        f0 = {_key(k): v for k, v in (f0 or {}).items()}
        coords = set(cm.model.coordinate_names)
        state = {}
        for sym in start.states:   # the storage states: from q0 (displacements, momenta) or an inertia's flow
            key = start.state_key[sym]
            name = sym.name
            if key[0] == "x":
                by = key[1]
                b = bg.bond_of(by) if by in bg.graph else by
                sb = bg.sign(by, b) if by in bg.graph else 1
                v = q0.get(self.names[b])
                state[sym] = sb * float(v) if v is not None else 0.0
            elif key[0] == "field":
                n, b = key[1], key[2]
                sb = bg.sign(n, b)
                if bg.kind(n) == "C":
                    v = q0.get(self.names[b])
                    state[sym] = sb * float(v) if v is not None else 0.0
                else:
                    state[sym] = None   # from the flows below
            else:
                n = key[1]
                b = bg.bond_of(n)
                sb = bg.sign(n, b)
                law = start.system.laws[n]
                if bg.kind(n) == "C":
                    v = q0.get(self.names[b])
                    if v is None and n in self.duals and self.names[b] not in coords:
                        v = None
                    state[sym] = sb * float(v) if v is not None else 0.0
                else:
                    if name in q0:
                        state[sym] = float(q0[name])
                    elif self.names[b] in f0:
                        state[sym] = start.number(law.G(sb * sp.Float(float(f0[self.names[b]]))), t0, cm, p)
                    else:
                        state[sym] = 0.0
                    if n not in self.duals and name in q0 and name not in coords:
                        q0.pop(name)   # a momentum given for an inertia of the first representation: its flow below
        for sym in start.states:   # I fields: momenta from the flows given
            if state[sym] is None:
                n, b = start.state_key[sym][1], start.state_key[sym][2]
                state[sym] = start.field_momentum(n, b, f0, self.names, t0, cm, p)
        values = start.evaluate(state, t0, cm, p)
        if values is None:
            return q0, f0
        check_slopes(bg, start.system, values, t0)
        for b in bg.bond_names:
            name = self.names[b]
            if name in coords and name not in f0 and ("f", b) in values:
                f0[name] = values[("f", b)]
        for n, P in self.duals.items():
            dname = P.func.__name__
            b = bg.bond_of(n)
            if dname not in f0 and ("e", b) in values:
                f0[dname] = values[("e", b)]
            if dname not in q0 and bg.kind(n) == "I":
                q0[dname] = values[("p", n)] if ("p", n) in values else 0.0
        for n in self.causality.derivative:   # a dependent C: its displacement from its effort
            if bg.is_field(n) or bg.kind(n) != "C":
                continue
            b = bg.bond_of(n)
            name = self.names[b]
            if name in coords and name not in q0 and ("q", n) in values:
                q0[name] = bg.sign(n, b) * values[("q", n)]
        return self._eliminated(q0, coords), f0

    def _eliminated(self, q0, coords):
        """Displacements given for bonds the reduced formulation eliminated, moved onto the one coordinate
        not given of their combination (a C's charge onto its loop's coordinate)."""
        for name in [k for k in q0 if k not in coords and k in self.dependent]:
            comb = self.dependent[name]
            free = [k for k in comb if k not in q0]
            if len(free) == 1:
                rest = sum(float(c) * float(q0[k]) for k, c in comb.items() if k != free[0])
                q0[free[0]] = (float(q0.pop(name)) - rest) / float(comb[free[0]])
        return q0


def _key(k):
    return k if isinstance(k, str) else getattr(getattr(k, "func", None), "__name__", str(k))


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
    bond_coords = {q[b] for b in bonds}
    for k, v in efforts.items():   # efforts on coordinates of no bond (dual coordinates) keep their place
        if k not in bond_coords:
            new_eff[k] = x(v)
    keep = [k for k in range(len(flow_constraints)) if k not in set(reducible)]
    name = lambda b: q[b].func.__name__
    return ([q[b] for b in free], [x(e) for e in T], [x(e) for e in V], [x(e) for e in D],
            {k: v for k, v in new_eff.items() if v != 0}, [x(flow_constraints[k]) for k in keep],
            [labels[k] for k in keep], {name(b): {name(k): c for k, c in comb.items()} for b, comb in sub.items()})


def _reduce_reactions(bg, q, reactions, sub):
    """Servo reactions in the free coordinates: a force on ``q_dep = Σ c q_free`` acts on each ``q_free`` times c."""
    by_name = {q[b].func.__name__: b for b in bg.bond_names}
    dep = {q[by_name[d]]: {q[by_name[k]]: c for k, c in comb.items()} for d, comb in sub.items()}
    out = {}
    for label, react in reactions.items():
        row = {}
        for coord, coef in react.items():
            for k, c in dep.get(coord, {coord: 1}).items():
                row[k] = row.get(k, 0) + c * coef
        out[label] = {k: v for k, v in row.items() if v != 0}
    return out


