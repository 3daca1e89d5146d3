"""Derivation: from T*, V, D, efforts and constraints to the structured DAE.

The Lagrange equations are written as

    M(q, f, t) q̈ + h(q, f, t) + Φ_qᵀ λ + Aᵀ μ = 0
    φ(q, t) = 0,            φ̈ = Φ_q q̈ + γ_φ(q, f, t)
    A(q, t) f + a(q, t) = 0, ψ̇ = A q̈ + γ_ψ(q, f, t)

with ``M = ∂²T*/∂f²`` and ``h = (∂²T*/∂f∂q) f + ∂²T*/∂f∂t − ∂T*/∂q + ∂D/∂f + ∂V/∂q − e^s``.
Every piece is assembled term by term (one term per element) and only with
respect to the coordinates a term contains, so the work grows with the number
of terms, not with the square of the number of coordinates; nothing is
simplified.

>>> import sympy as sp
>>> from netdyn import LagrangianModel, coordinates, t
>>> x, = coordinates("x,")
>>> m, k = sp.symbols("m k")
>>> eq = LagrangianModel([x], T=m*x.diff(t)**2/2, V=k*x**2/2).derive()
>>> eq.matrix("M"), eq.h
(Matrix([[m]]), [k*x])
"""
from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

from netdyn.errors import ModelError
from netdyn.lagrange.fastdiff import Differentiator, rate
from netdyn.symbols import t


@dataclass
class Equations:
    """The derived DAE in internal symbols (plain sympy Symbols for q, f, q̈, λ, μ)."""

    coordinates: list  # q(t) functions
    q: list
    f: list
    a: list
    lam: list
    mu: list
    M: dict  # (i, j) -> expr (sparse)
    h: list
    phi: list
    Phi_q: dict  # (j, i) -> expr
    Phi_t: list
    gamma_phi: list
    A: dict  # (k, i) -> expr
    a0: list
    gamma_psi: list
    parameters: list  # free parameter symbols, sorted by name
    to_time: dict  # internal symbol -> time function form
    lambdas_t: list
    mus_t: list
    inputs: list  # symbols standing for input functions u(t)
    R: dict = None  # (k, i) -> expr: where μ_k acts when not along its own row of A (servo constraints)

    @property
    def reaction(self):
        """The sparse matrix whose transpose multiplies μ in the Lagrange rows (``A`` unless a servo
        constraint acts elsewhere)."""
        return self.A if self.R is None else self.R

    @property
    def n(self):
        return len(self.q)

    def matrix(self, which):
        """``M``, ``Phi_q`` or ``A`` as a sympy ``SparseMatrix``."""
        rows = {"M": self.n, "Phi_q": len(self.phi), "A": len(self.a0)}[which]
        return sp.SparseMatrix(rows, self.n, getattr(self, which))

    def lagrange_rows(self):
        """The N Lagrange equations (internal symbols)."""
        rows = [sp.S.Zero] * self.n
        for (i, j), v in self.M.items():
            rows[i] += v * self.a[j]
        for i in range(self.n):
            rows[i] += self.h[i]
        for (j, i), v in self.Phi_q.items():
            rows[i] += self.lam[j] * v
        for (k, i), v in self.reaction.items():
            rows[i] += self.mu[k] * v
        return rows

    def flow_constraint_rows(self):
        rows = list(self.a0)
        for (k, i), v in self.A.items():
            rows[k] += v * self.f[i]
        return rows

    def as_time_functions(self):
        """All equations with coordinates as functions of t (``q(t)``, ``q'(t)``, ``q''(t)``)."""
        rows = self.lagrange_rows() + list(self.phi) + self.flow_constraint_rows()
        return [sp.sympify(r).xreplace(self.to_time) for r in rows]


def internal_symbols(coordinates):
    """Plain symbols standing for q, dq/dt and d²q/dt² of each coordinate."""
    names = [c.func.__name__ for c in coordinates]
    q = [sp.Symbol(n) for n in names]
    f = [sp.Symbol(n + "_dot") for n in names]
    a = [sp.Symbol(n + "_ddot") for n in names]
    return q, f, a


def derive(model, fast=True) -> Equations:
    """Derive the structured equations of a :class:`~netdyn.model.LagrangianModel`.

    ``fast=False`` differentiates in sympy only (the reference the symengine path is tested against).
    """
    coords = model.coordinates
    n = len(coords)
    q, f, a = internal_symbols(coords)
    lam = [sp.Symbol(str(m.func.__name__)) for m in model.lambdas]
    mu = [sp.Symbol(str(m.func.__name__)) for m in model.mus]
    sub = {}
    for c, qs, fs, as_ in zip(coords, q, f, a):
        sub[rate(c, 2)] = as_
        sub[rate(c)] = fs
    to_internal_second = dict(sub)
    for c, qs in zip(coords, q):
        sub[c] = qs
    index_q = {s: i for i, s in enumerate(q)}
    index_f = {s: i for i, s in enumerate(f)}
    acc_set = set(a)
    inputs = {}  # undefined functions of t that are not coordinates: inputs given at simulation

    def internal(expr, what):
        e = _replace(expr, to_internal_second, sub)
        if e.free_symbols & acc_set:
            raise ModelError(f"{what} contains an acceleration; T*, V, D, efforts and constraints "
                             "may depend on displacements, flows and time only")
        if e.has(sp.Derivative):
            raise ModelError(f"{what} contains a derivative of something that is not a coordinate: {e}; "
                             "inputs (functions of t) may appear, their derivatives may not")
        for u in e.atoms(sp.core.function.AppliedUndef):
            if u.args != (t,):
                raise ModelError(f"{what} contains {u}; functions must be of netdyn.t alone")
            if u not in inputs:
                inputs[u] = sp.Symbol(u.func.__name__)
        return e.xreplace(inputs) if inputs else e

    dv = Differentiator(enabled=fast)
    f_set = set(f)
    M_parts, h_parts = {}, [[] for _ in range(n)]

    def put(parts, key, v):
        if not dv.is_zero(v):
            parts.setdefault(key, []).append(v)

    for term in model.T_terms:
        e = dv.term(internal(term, "T*"))
        syms = dv.free(e)
        for fi in (s for s in syms if s in index_f):
            i = index_f[fi]
            p = dv.diff(e, fi)
            psyms = dv.free(p)
            for fj in (s for s in psyms if s in index_f):
                put(M_parts, (i, index_f[fj]), dv.diff(p, fj))
            for qk in (s for s in psyms if s in index_q):
                h_parts[i].append(dv.times(dv.diff(p, qk), f[index_q[qk]]))
            if t in psyms:
                h_parts[i].append(dv.diff(p, t))
        for qi in (s for s in syms if s in index_q):
            h_parts[index_q[qi]].append(-dv.diff(e, qi))
    for term in model.D_terms:
        e = dv.term(internal(term, "D"))
        for fi in (s for s in dv.free(e) if s in index_f):
            h_parts[index_f[fi]].append(dv.diff(e, fi))
    for term in model.V_terms:
        e = internal(term, "V")
        if e.free_symbols & f_set:
            raise ModelError(f"V depends on a flow: {term}; flows belong in T* or D")
        e = dv.term(e)
        for qi in (s for s in dv.free(e) if s in index_q):
            h_parts[index_q[qi]].append(dv.diff(e, qi))
    coord_index = {c: i for i, c in enumerate(coords)}
    for c, e in model.efforts.items():
        h_parts[coord_index[c]].append(-internal(e, f"effort on {c}"))
    M = {}
    for key, parts in M_parts.items():
        v = dv.sympy(parts)
        if v != 0:
            M[key] = v
    h = [dv.sympy(parts) for parts in h_parts]

    phi, Phi_q, Phi_t, gamma_phi = [], {}, [], []
    for j, c in enumerate(model.constraints):
        e = internal(c, f"constraint {model.constraint_labels[j]}")
        if e.free_symbols & f_set:
            raise ModelError(f"displacement constraint {model.constraint_labels[j]} depends on a flow; "
                             "give it as a flow constraint instead")
        phi.append(e)
        e = dv.term(e)
        vel = []
        for qi in (s for s in dv.free(e) if s in index_q):
            d = dv.diff(e, qi)
            Phi_q[(j, index_q[qi])] = dv.sympy(d)
            vel.append(dv.times(d, f[index_q[qi]]))
        pt = dv.diff(e, t)
        Phi_t.append(dv.sympy(pt))
        gamma_phi.append(dv.sympy(_time_derivative(dv.total(vel + [pt]), index_q, f, dv)))
    A, a0, gamma_psi = {}, [], []
    coord_index_of = {c: i for i, c in enumerate(coords)}
    for k, c in enumerate(model.flow_constraints):
        label = model.flow_constraint_labels[k]
        e = dv.term(internal(c, f"flow constraint {label}"))
        flows = [s for s in dv.free(e) if s in index_f]
        for fi in flows:
            coeff = dv.diff(e, fi)
            if dv.free(coeff) & f_set:
                raise ModelError(f"flow constraint {label} is not Pfaffian (not linear in the flows): {c}")
            A[(k, index_f[fi])] = dv.sympy(coeff)
        a0.append(dv.sympy(dv.at_zero(e, flows) if flows else e))
        gamma_psi.append(dv.sympy(_time_derivative(e, index_q, f, dv)))
    servo = (model.metadata or {}).get("flow_reactions") or {}
    R = None
    if servo:
        R = {key: v for key, v in A.items() if model.flow_constraint_labels[key[0]] not in servo}
        for k, label in enumerate(model.flow_constraint_labels):
            for c, v in servo.get(label, {}).items():
                v = internal(v, f"reaction of {label}")
                if v != 0:
                    R[(k, coord_index_of[c])] = v

    exprs = list(M.values()) + h + phi + list(Phi_q.values()) + list(A.values()) + a0 + list((R or {}).values())
    input_syms = list(inputs.values())
    reserved = set(q) | set(f) | set(a) | {t} | set(input_syms)
    params = set()
    for e in exprs:
        params |= sp.sympify(e).free_symbols - reserved
    clash = params & set(lam + mu)
    if clash:
        raise ModelError(f"parameter name(s) {sorted(map(str, clash))} clash with multiplier names; rename them")
    to_time = {}
    for c, qs, fs, as_ in zip(coords, q, f, a):
        to_time[qs] = c
        to_time[fs] = rate(c)
        to_time[as_] = rate(c, 2)
    for s, m in zip(lam + mu, model.lambdas + model.mus):
        to_time[s] = m
    for fn, s in inputs.items():
        to_time[s] = fn
    return Equations(coords, q, f, a, lam, mu, M, h, phi, Phi_q, Phi_t, gamma_phi, A, a0, gamma_psi,
                     sorted(params, key=str), to_time, list(model.lambdas), list(model.mus),
                     sorted(input_syms, key=str), R)


def _replace(expr, second, first):
    e = sp.sympify(expr)
    if not e.has(sp.Derivative) and not e.atoms(sp.core.function.AppliedUndef):
        return e
    return e.xreplace(second).xreplace(first)


def _time_derivative(expr, index_q, f, dv=None):
    """Total time derivative of an expression in q, f, t, *without* the acceleration terms.

    For a velocity-level constraint Φ_q f + Φ_t this is γ in φ̈ = Φ_q q̈ + γ; for a
    flow constraint ψ = A f + a it is γ in ψ̇ = A q̈ + γ. ``dv`` is the
    :class:`~netdyn.fastdiff.Differentiator` that made ``expr`` (sympy if omitted).
    """
    if dv is None:
        dv, expr = Differentiator(enabled=False), sp.sympify(expr)
    free = dv.free(expr)
    out = [dv.times(dv.diff(expr, qi), f[index_q[qi]]) for qi in free if qi in index_q]
    if t in free:
        out.append(dv.diff(expr, t))
    return dv.total(out)


def internalize(model, expr):
    """An expression in coordinate functions of t rewritten in the internal symbols.

    The four substitution maps are made once per derivation (kept on the :class:`Equations`), so a call
    costs the size of ``expr``, not of the model: a solution reads one element's quantity in O(1).
    """
    eq = model.derive()
    maps = eq.__dict__.get("_internal_maps")
    if maps is None:
        second, first, zero = {}, {}, {}
        for c, qs, fs, as_ in zip(eq.coordinates, eq.q, eq.f, eq.a):
            second[rate(c, 2)] = as_
            first[rate(c)] = fs
            zero[c] = qs
        mult = dict(zip(model.lambdas + model.mus, eq.lam + eq.mu))
        inputs = set(eq.inputs)
        mult.update({fn: s for s, fn in eq.to_time.items() if s in inputs})
        maps = eq._internal_maps = (second, first, zero, mult)
    second, first, zero, mult = maps
    return sp.sympify(expr).xreplace(second).xreplace(first).xreplace(zero).xreplace(mult)
