"""Explicit state equations of a bond graph, by its causal signal paths — derivative causality reduced.

States are the energy variables of the storage elements with integral
causality: ``q_<C>`` (displacement) of each ``C``, ``p_<I>`` (momentum) of each
``I``, one per port of a storage field, and ``x_<element>`` for a displacement
that modulates an ``MTF``/``MGY`` and is not a state already. Every element's
law is used in the causality SCAP assigns (:mod:`netdyn.bondgraph.laws`: a
conductance law where an ``R`` receives an effort, a resistance law where it
receives a flow; closed-form inverses where sympy finds them, numeric ones —
Newton with the analytic derivative — where not).

*Derivative causality* is reduced as 20-sim does: a dependent storage element
(a ``C`` given its effort, an ``I`` its flow) outputs the time derivative of
its law, ``f = d/dt G(e)`` or ``e = d/dt G(f)``, written with the unknown rates
of the independent states; the state equations are then linear in those rates
and solved for them (two rigidly geared inertias: one state and the equivalent
inertia ``J1 + n² J2``). The eliminated element's energy is still reported, in
the independent states (``energies``).

*Algebraic loops* are solved symbolically when linear; a nonlinear one stays
implicit: its signals become algebraic unknowns ``algebraic`` with residuals
``residuals`` (0 = g), a semi-explicit system ẋ = f(x, z, u), 0 = g(x, z, u).

>>> import netdyn
>>> bg = netdyn.BondGraph("two geared inertias")
>>> for k, n, p in [("Se", "tau", {"effort": 1.0}), ("1", "w1", {}), ("I", "J1", {"I": 2.0}),
...                 ("TF", "gear", {"ratio": 3.0}), ("1", "w2", {}), ("I", "J2", {"I": 0.5})]:
...     bg.add(k, n, **p)
>>> _ = bg.chain("tau", "w1", "gear", "w2", "J2"); _ = bg.bond("w1", "J1")
>>> se = bg.state_equations()
>>> se.states, se.rhs, se.dependent          # dp1/dt = tau J1 / (J1 + n² J2) = 2/6.5
([p_J1], Matrix([[0.307692307692308]]), {'J2': 'p_J2 = 0.75*p_J1'})
"""
from __future__ import annotations

from dataclasses import dataclass, field

import networkx as nx
import sympy as sp

from netdyn.bondgraph.causality import assign_causality
from netdyn.bondgraph.kinds import X, element_values, field_cofunction, field_function
from netdyn.bondgraph.laws.forms import NumericFunction, element_law, realify
from netdyn.errors import ModelError
from netdyn.symbols import t

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # names for the hints only (annotations are not evaluated)
    from netdyn.bondgraph.graph import BondGraph


@dataclass
class StateEquations:
    """ẋ = f(x, z, u), 0 = g(x, z, u) of a bond graph.

    ``states`` (plain symbols q_<C>, p_<I>, x_<modulating>), ``rhs`` (sympy
    Matrix), ``inputs`` (source name -> value), ``parameters`` (symbol -> default
    when ``symbolic``); ``algebraic`` and ``residuals``: the unknowns of nonlinear
    algebraic loops and their equations 0 = g (empty when explicit);
    ``energies``: every storage element (dependent ones too) -> its stored energy
    in the states; ``dependent``: each element in derivative causality -> its
    energy variable in the states (as text); ``signals``: ``("e"|"f", bond)`` ->
    expression, every effort and flow.

    >>> from netdyn import BondGraph
    >>> bg = BondGraph("mass")
    >>> bg.add("Se", "F", effort=2.0); bg.add("I", "m", I=4.0); _ = bg.bond("F", "m")
    >>> eqs = state_equations(bg)
    >>> eqs.states, eqs.rhs, eqs.energies
    ([p_m], Matrix([[2.0]]), {'m': 0.125*p_m**2})
    """

    states: list
    rhs: sp.Matrix
    inputs: dict
    parameters: dict
    algebraic: list = field(default_factory=list)
    residuals: list = field(default_factory=list)
    energies: dict = field(default_factory=dict)
    dependent: dict = field(default_factory=dict)
    signals: dict = field(default_factory=dict, repr=False)
    variables: dict = field(default_factory=dict, repr=False)

    def equations(self):
        """``[Eq(dx/dt, f), ..., Eq(0, g), ...]`` with the states (and algebraic unknowns) as functions of t."""
        fun = {s: sp.Function(s.name)(t) for s in list(self.states) + list(self.algebraic)}
        out = [sp.Eq(fun[s].diff(t), e.xreplace(fun)) for s, e in zip(self.states, self.rhs)]
        out += [sp.Eq(sp.S.Zero, g.xreplace(fun), evaluate=False) for g in self.residuals]
        return out

    def text(self):
        """The equations as lines ``d(q_C1)/dt = ...`` (``0 = ...`` for algebraic ones), and the energies."""
        lines = [f"d({s})/dt = {e}" for s, e in zip(self.states, self.rhs)]
        lines += [f"0 = {g}" for g in self.residuals]
        lines += [f"{k}: {v}" for k, v in self.dependent.items()]
        return "\n".join(lines)

    def __getitem__(self, name):
        for s, e in zip(self.states, self.rhs):
            if s.name == name:
                return e
        raise KeyError(f"no state {name!r}; states are {[s.name for s in self.states]}")


def state_equations(bg: BondGraph, symbolic: bool = False) -> StateEquations:
    """Explicit (or semi-explicit) state equations of a bond graph in its energy variables.

    Derivative causality is reduced (the dependent storage eliminated into the
    independent states); a nonlinear algebraic loop is kept as algebraic
    equations. See :class:`StateEquations` and the module docstring.

    >>> from netdyn import BondGraph
    >>> bg = BondGraph("RC")
    >>> bg.add("Se", "u", effort=1.0); bg.add("1", "J"); bg.add("C", "C1", C=2.0); bg.add("R", "R1", R=0.5)
    >>> _ = bg.chain("u", "J", "C1"); _ = bg.bond("J", "R1")
    >>> state_equations(bg).rhs
    Matrix([[2.0 - 1.0*q_C1]])
    """
    return CausalSystem(bg, symbolic).equations()


class CausalSystem:
    """The causal evaluation of a bond graph: every effort and flow in the states (see :func:`state_equations`)."""

    def __init__(self, bg, symbolic=False):
        bg.check()
        self.bg = bg
        self.caus = assign_causality(bg)
        self.parameters = {}
        self.vals = {n: element_values(bg, n, symbolic, self.parameters) for n in bg.graph.nodes}
        self.laws = {n: element_law(bg, n, self.vals[n]) for n in bg.of_kind("C", "I", "R") if not bg.is_field(n)}
        self.setter = self.caus.effort_setter
        self.state_of = {}
        self.states = []
        self.rates = {}   # state -> symbol of its (unknown) rate, for derivative causality
        self._build_states()

    # ----------------------------------------------------------------------------- states
    def _build_states(self):
        bg, caus = self.bg, self.caus
        for n in caus.integral:
            prefix = "q_" if bg.kind(n) == "C" else "p_"
            if bg.is_field(n):   # one state per port: q_<field>_1, ... / p_<field>_1, ...
                for k, b in enumerate(bg.bonds_of(n)):
                    self.state_of[("field", n, b)] = sp.Symbol(f"{prefix}{n}_{k + 1}")
                    self.states.append(self.state_of[("field", n, b)])
                continue
            sym = sp.Symbol(prefix + n)
            self.state_of[n] = sym
            self.states.append(sym)
        for n in bg.of_kind("MTF", "MGY"):
            for which, target in bg.modulating(n).values():
                if which == "p":
                    if not (target in self.state_of and bg.kind(target) == "I"):
                        raise ModelError(f"{n}: its modulus reads the momentum of {target}, which is no state here "
                                         f"({target} is in derivative causality); simulate bg.model() instead")
                    continue
                if not (target in self.state_of and bg.kind(target) == "C") and ("x", target) not in self.state_of:
                    self.state_of[("x", target)] = sp.Symbol(f"x_{target}")
                    self.states.append(self.state_of[("x", target)])
        self.rates = {s: sp.Dummy(f"d{s.name}") for s in self.states}

    def modulus(self, n):
        sub = {}
        for sym, (which, target) in self.bg.modulating(n).items():
            if which == "p" or (target in self.state_of and self.bg.kind(target) == "C"):
                sub[sym] = self.state_of[target]
            else:
                sub[sym] = self.state_of[("x", target)]
        return self.vals[n]["ratio"].xreplace(sub)

    def rate_of(self, expr):
        """d/dt of an expression of the states, t and inputs: Σ ∂/∂x · (rate of x) + ∂/∂t."""
        expr = sp.sympify(expr)
        if self._algebraic and expr.free_symbols & set(self._algebraic):
            raise ModelError("a storage element in derivative causality is driven through a nonlinear algebraic "
                             "loop; its rate has no explicit form here (simulate bg.model() instead)")
        out = sp.diff(expr, t)
        for s in expr.free_symbols & set(self.rates):
            out += sp.diff(expr, s) * self.rates[s]
        return out

    # ----------------------------------------------------------------------------- the walk
    def signals(self):
        """``{("e"|"f", bond): expression}`` in the states, the rates (derivative causality), t and algebraic
        unknowns; sets ``self.algebraic`` and ``self.residuals``."""
        if hasattr(self, "_known"):
            return self._known
        known = {}
        self._algebraic, self.residuals = [], []
        sig = self.caus.signals
        cond = nx.condensation(sig)
        for c in nx.topological_sort(cond):
            members = sorted((v for v in cond.nodes[c]["members"] if v[0] in ("e", "f")), key=str)
            if not members:
                continue
            if len(members) == 1 and not sig.has_edge(members[0], members[0]):
                v = members[0]
                known[v] = self.output(v, known)
                continue
            syms = {v: sp.Dummy(f"{v[0]}_{v[1]}") for v in members}
            look = dict(known)
            look.update(syms)
            eqs = [syms[v] - self.output(v, look) for v in members]
            sol = _solve_linear(eqs, list(syms.values()))
            if sol is not None:
                for v in members:
                    known[v] = sol[syms[v]]
                continue
            # a nonlinear loop: its signals stay unknowns of the equations 0 = g
            named = {v: sp.Symbol(f"{v[0]}_{_ident(v[1])}") for v in members}
            for v in members:
                self._algebraic.append(named[v])
                self.residuals.append(realify(eqs[members.index(v)].xreplace(
                    {syms[w]: named[w] for w in members})))
                known[v] = named[v]
        self._known = known
        return known

    def output(self, v, known):
        """The expression of signal ``v = ("e"|"f", bond)`` computed by the element that outputs it."""
        bg, setter = self.bg, self.setter
        which, b = v
        n = setter[b] if which == "e" else bg.other_end(setter[b], b)
        kind = bg.kind(n)
        p = self.vals[n]
        s = bg.sign(n, b)
        val = lambda w, bb: known[(w, bb)]
        if kind == "Se":
            return p["effort"]
        if kind == "Sf":
            return p["flow"]
        if kind in ("C", "I", "R") and bg.is_field(n):
            return _field_output(bg, n, kind, p, b, which, self.state_of, known)
        if kind in ("C", "I", "R"):
            law = self.laws[n]
            if kind == "C":
                if n in self.state_of:            # integral causality: e = F(q)
                    return law.F(self.state_of[n])
                e_in = val("e", b)                # derivative causality: f = d/dt G(e)
                return s * self.rate_of(law.G(e_in))
            if kind == "I":
                if n in self.state_of:            # integral causality: f = F(p)
                    return s * law.F(self.state_of[n])
                f_in = s * val("f", b)            # derivative causality: e = d/dt G(f)
                return self.rate_of(law.G(f_in))
            if which == "e":                      # R given its flow: the resistance law
                return law.F(s * val("f", b))
            return s * law.G(val("e", b))         # R given its effort: the conductance law
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
            r = p["ratio"] if kind in ("TF", "GY") else self.modulus(n)
            k = sg[b1] * sg[b2]
            if kind in ("TF", "MTF"):   # f2 = r f1, e1 = -k r e2
                return {("e", b1): lambda: -k * r * val("e", b2), ("f", b2): lambda: r * val("f", b1),
                        ("e", b2): lambda: -k * val("e", b1) / r, ("f", b1): lambda: val("f", b2) / r}[v]()
            # e1 = r f2, e2 = -k r f1
            return {("e", b1): lambda: r * val("f", b2), ("e", b2): lambda: -k * r * val("f", b1),
                    ("f", b2): lambda: val("e", b1) / r, ("f", b1): lambda: -k * val("e", b2) / r}[v]()
        raise ModelError(f"{n}: a {kind} element has no explicit state-equation form; simulate bg.model() instead")

    # ----------------------------------------------------------------------------- the equations
    def equations(self):
        """The :class:`StateEquations` (made once)."""
        if getattr(self, "_equations", None) is None:
            self._equations = self._make_equations()
        return self._equations

    def _make_equations(self):
        bg, caus = self.bg, self.caus
        known = self.signals()
        derivs = []
        for n in caus.integral:
            if bg.is_field(n):
                for b in bg.bonds_of(n):
                    derivs.append(bg.sign(n, b) * known[("f", b)] if bg.kind(n) == "C" else known[("e", b)])
                continue
            b = bg.bond_of(n)
            derivs.append(bg.sign(n, b) * known[("f", b)] if bg.kind(n) == "C" else known[("e", b)])
        for key in self.state_of:
            if isinstance(key, tuple) and key[0] == "x":
                by = key[1]
                b = bg.bond_of(by)
                derivs.append((bg.sign(by, b) if by in bg.graph else 1) * known[("f", b)])
        rates = [self.rates[s] for s in self.states]
        solved = {}
        if any(e.has(*rates) for e in derivs if isinstance(e, sp.Basic)):
            solved = _solve_rates(self.states, rates, derivs, caus)
            derivs = [solved[r] for r in rates]
        signals = {k: (v.xreplace(solved) if solved and isinstance(v, sp.Basic) else v) for k, v in known.items()}
        self.solved_rates = solved
        inputs = {n: self.vals[n]["effort" if bg.kind(n) == "Se" else "flow"] for n in bg.of_kind("Se", "Sf")}
        energies, dependent = self._energies(signals)
        return StateEquations(list(self.states), sp.Matrix([realify(d) for d in derivs]), inputs, self.parameters,
                              list(self._algebraic), list(self.residuals), energies, dependent, signals,
                              {"rates": dict(zip(self.states, rates)), "state_of": dict(self.state_of)})

    def _energies(self, signals):
        """Stored energy of every storage element in the states; the dependent elements' energy variables."""
        bg, caus = self.bg, self.caus
        energies, dependent = {}, {}
        for n in bg.of_kind("C", "I"):
            if bg.is_field(n):
                if n in caus.integral:
                    xs = [self.state_of[("field", n, b)] for b in bg.bonds_of(n)]
                    if bg.kind(n) == "C":
                        energies[n] = field_function("C", self.vals[n], xs)
                continue
            law = self.laws[n]
            if n in self.state_of:
                energies[n] = law.E(self.state_of[n])
                continue
            b = bg.bond_of(n)
            s = bg.sign(n, b)
            if bg.kind(n) == "C":
                x = law.G(signals[("e", b)])
                name = f"q_{n}"
            else:
                x = law.G(s * signals[("f", b)])
                name = f"p_{n}"
            energies[n] = law.E(x)
            dependent[n] = f"{name} = {x}"
        return energies, dependent


def _solve_linear(eqs, syms):
    """The unique solution of equations linear in ``syms`` (None when not linear, not unique or not closed)."""
    opaque = {}   # numeric laws of other signals: constants of this solve
    for e in eqs:
        for a in e.atoms(NumericFunction):
            if a.has(*syms):
                return None
            opaque.setdefault(a, sp.Dummy("n"))
    if opaque:
        back = {d: a for a, d in opaque.items()}
        sol = _solve_linear([e.xreplace(opaque) for e in eqs], syms)
        return None if sol is None else {k: v.xreplace(back) for k, v in sol.items()}
    try:
        A, rhs = sp.linear_eq_to_matrix([sp.expand(e) for e in eqs], syms)
    except (sp.polys.polyerrors.PolynomialError, ValueError, NotImplementedError):
        return None
    if any(a.has(*syms) for a in A):
        return None
    try:
        x = A.LUsolve(rhs)
    except (ValueError, ZeroDivisionError, NotImplementedError):
        return None
    if any(v.has(sp.nan, sp.zoo, sp.oo) for v in x):
        return None
    return {s: _tidy(v) for s, v in zip(syms, x)}


def _solve_rates(states, rates, derivs, caus):
    """The rates from ``rate_i = derivs_i(rates)`` (linear in the rates: derivative causality)."""
    eqs = [r - d for r, d in zip(rates, derivs)]
    sol = _solve_linear(eqs, rates)
    if sol is None:
        dep = "; ".join(f"{k} depends on {', '.join(v)}" for k, v in caus.derivative.items())
        raise ModelError(f"derivative causality ({dep}): the state equations are not linear in the rates of "
                         "the independent states here (a dependent element behind a numeric law); simulate "
                         "bg.model() instead, the DAE integrators take dependent storage as it is")
    return sol


def _tidy(expr):
    expr = sp.sympify(expr)
    if expr.is_number or sp.count_ops(expr) > 60 or expr.has(NumericFunction):
        return expr
    try:
        return sp.cancel(expr) if expr.is_rational_function() else expr
    except (sp.polys.polyerrors.PolynomialError, NotImplementedError):
        return expr


def _ident(name):
    return "".join(c if c.isalnum() else "_" for c in str(name))


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
    if kind == "R" and which == "f" and all(known.get(("e", bb)) is not None for bb in bonds):
        dummies = [sp.Dummy() for _ in bonds]   # conductance causality: f_k = ∂D*/∂e_k
        Dstar = field_cofunction(kind, p, dummies)
        if Dstar is not None:
            es = [known[("e", bb)] for bb in bonds]
            return sg[k] * sp.diff(Dstar, dummies[k]).xreplace(dict(zip(dummies, es)))
    raise ModelError(f"{n}: a {kind} field in mixed causality has no explicit state equations here; "
                     "simulate bg.model() instead (the DAE takes it as it is)")


__all__ = ["StateEquations", "state_equations", "CausalSystem"]
