"""Sparse polynomials over sympy atoms, in plain Python: the arithmetic of the recursive form's program.

A customized Newton–Euler program is thousands of small sums of products of named quantities. Written with
sympy's own ``Add``/``Mul`` every one of them pays for canonicalization and assumption queries (about 100 µs
for ``a·b − c·d``); here a polynomial is a ``dict`` from a monomial (a tuple of ``(variable index, exponent)``,
sorted) to a Python number (``int``, ``Fraction`` or ``float``), so the same product costs a few µs, zero terms
vanish as they are made, and sympy objects are built once, for the lines the program keeps (:meth:`Ring.to_sympy`,
in sympy's canonical argument order, so they equal what sympy itself would build).

A variable is any sympy object the ring was handed: a symbol, a coordinate ``q(t)`` or its derivatives, or an
*opaque* sub-expression that is not a polynomial (``sin(q(t))``, ``sqrt(2)``, ``1/(a + b)``), registered once and
numbered in the order met (so a program built twice names and orders its lines identically). Time derivatives
(:meth:`Ring.rate`) follow the chain rule through ``q → q̇ → q̈``, with ``sin``/``cos`` of a coordinate in closed
form and any other opaque variable differentiated by sympy.

>>> import sympy as sp
>>> from netdyn import coordinates, t
>>> th, = coordinates("theta,")
>>> ring = Ring()
>>> p = ring.from_sympy(sp.cos(th) ** 2 * sp.Symbol("l") / 2)
>>> ring.to_sympy(ring.rate(p))
-l*sin(theta(t))*cos(theta(t))*Derivative(theta(t), t)
"""
from __future__ import annotations

from fractions import Fraction
from functools import cmp_to_key
from typing import Any

import sympy as sp
from sympy.core.function import AppliedUndef

from netdyn.symbols import t

_SORT = cmp_to_key(sp.Basic.compare)  # sympy's own order of the arguments of Add and Mul


def _number(x):
    """A sympy number as a Python number, or None (irrational numbers are opaque variables)."""
    if x.is_Integer:
        return int(x)
    if x.is_Rational:
        return Fraction(int(x.p), int(x.q))
    if x.is_Float:
        f = float(x)
        return int(f) if f.is_integer() else f
    return None


def _to_sympy_number(c):
    if isinstance(c, int):
        return sp.Integer(c)
    if isinstance(c, Fraction):
        return sp.Integer(c.numerator) if c.denominator == 1 else sp.Rational(c.numerator, c.denominator)
    return sp.Integer(int(c)) if float(c).is_integer() else sp.Float(c)


def add(p: dict, q: dict) -> dict:
    """``p + q`` (zero terms dropped).

    >>> add({((0, 1),): 2}, {((0, 1),): -2, (): 1})
    {(): 1}
    """
    return total(p, q)


def scale(p: dict, c: Any) -> dict:
    """``c · p`` for a Python number ``c``.

    >>> scale({((0, 1),): 3}, 2)
    {((0, 1),): 6}
    """
    if c == 0:
        return {}
    return {m: v * c for m, v in p.items()} if c != 1 else dict(p)


def _mono_mul(a, b):
    if not a:
        return b
    if not b:
        return a
    d = dict(a)
    for k, e in b:
        e2 = d.get(k, 0) + e
        if e2:
            d[k] = e2
        else:
            del d[k]
    return tuple(sorted(d.items()))


def mul(p: dict, q: dict) -> dict:
    """``p · q``, expanded.

    >>> mul({((0, 1),): 1, (): 1}, {((0, 1),): 1, (): -1})
    {((0, 2),): 1, (): -1}
    """
    out = {}
    for ma, ca in p.items():
        for mb, cb in q.items():
            m = _mono_mul(ma, mb)
            v = out.get(m, 0) + ca * cb
            if v == 0:
                out.pop(m, None)
            else:
                out[m] = v
    return out


def total(*ps: dict) -> dict:
    """The sum of polynomials.

    >>> total({(): 1}, {(): 2}, {((0, 1),): 1})
    {(): 3, ((0, 1),): 1}
    """
    out = {}
    for p in ps:
        for m, c in p.items():
            v = out.get(m, 0) + c
            if v == 0:
                out.pop(m, None)
            else:
                out[m] = v
    return out


def variables(p: dict) -> set:
    """The indices of the variables ``p`` holds.

    >>> sorted(variables({((0, 1), (2, 2)): 1, ((1, 1),): 3}))
    [0, 1, 2]
    """
    return {k for m in p for k, _ in m}


def rate_of_coordinate(q: Any) -> Any:
    """``dq/dt`` of a coordinate ``q(t)`` or of one of its derivatives, built directly (``q.diff(t)`` takes
    sympy's general derivative route, about 1.5 ms).

    >>> from netdyn import coordinates
    >>> th, = coordinates("theta,")
    >>> rate_of_coordinate(rate_of_coordinate(th)) == th.diff(t, 2)
    True
    """
    if isinstance(q, sp.Derivative):
        (var, k), = q.variable_count
        return sp.Derivative(q.expr, (var, k + 1))
    return sp.Derivative(q, t)


def time_derivative(e: Any) -> Any:
    """``de/dt`` of an expression of coordinates by the chain rule (:meth:`Ring.rate`).

    >>> from netdyn import coordinates
    >>> th, = coordinates("theta,")
    >>> time_derivative(th + sp.pi / 2)
    Derivative(theta(t), t)
    """
    ring = Ring()
    return ring.to_sympy(ring.rate(ring.from_sympy(e)))


class Ring:
    """The variables of a set of polynomials (:mod:`netdyn.lagrange.sparsepoly`): their sympy objects,
    their time derivatives, and the conversions from and to sympy."""

    def __init__(self) -> None:
        self.objects = []          # index -> sympy object
        self.index = {}            # sympy object -> index
        self.rates = {}            # index -> polynomial d/dt
        self.partials = {}         # (opaque index, variable index) -> polynomial partial derivative
        self.plain = set()         # indices that are Symbols, coordinates or their derivatives (fast output)

    def var(self, obj: Any) -> int:
        """The index of ``obj`` as a variable (registered on first sight)."""
        k = self.index.get(obj)
        if k is None:
            k = self.index[obj] = len(self.objects)
            self.objects.append(obj)
            if isinstance(obj, (sp.Symbol, AppliedUndef, sp.Derivative)):
                self.plain.add(k)
        return k

    def symbol(self, obj: Any) -> dict:
        """The polynomial of one variable."""
        return {((self.var(obj), 1),): 1}

    def from_sympy(self, e: Any) -> dict:
        """A sympy expression as a polynomial; what is not a polynomial becomes an opaque variable."""
        e = sp.sympify(e)
        if e.is_Number:
            c = _number(e)
            if c is not None:
                return {(): c} if c != 0 else {}
            return self.symbol(e)
        if e.is_Add:
            return total(*(self.from_sympy(a) for a in e.args))
        if e.is_Mul:
            out = {(): 1}
            for a in e.args:
                out = mul(out, self.from_sympy(a))
            return out
        if e.is_Pow and e.exp.is_Integer:
            k = int(e.exp)
            if k >= 0:
                base, out = self.from_sympy(e.base), {(): 1}
                for _ in range(k):
                    out = mul(out, base)
                return out
            if e.base.is_Symbol:
                return {((self.var(e.base), k),): 1}
        return self.symbol(e)

    def to_sympy(self, p: dict, objects: Any = None) -> Any:
        """The sympy expression of ``p`` (``objects``: index -> sympy object to use instead of the ring's own),
        built in sympy's canonical order without re-evaluation when every variable is plain."""
        objs = objects or self.objects
        terms, fast = [], True
        for m, c in p.items():
            factors = []
            for k, e in m:
                o = objs[k]
                factors.append(o if e == 1 else sp.Pow(o, e))
                fast = fast and k in self.plain and isinstance(o, (sp.Symbol, AppliedUndef, sp.Derivative))
            terms.append((_to_sympy_number(c), factors))
        if not fast:
            return sp.Add(*[sp.Mul(c, *f) for c, f in terms])
        built, coeff = [], None
        for c, f in terms:
            if not f:
                coeff = c
                continue
            f.sort(key=_SORT)
            if c == 1 and len(f) == 1:
                built.append(f[0])
            else:
                built.append(sp.Mul._from_args(tuple(f) if c == 1 else (c, *f)))
        if coeff is None and len(built) == 1:
            return built[0]
        if not built:
            return coeff if coeff is not None else sp.S.Zero
        built.sort(key=_SORT)
        return sp.Add._from_args(tuple(built) if coeff is None else (coeff, *built))

    def diff(self, p: dict, k: int) -> dict:
        """``∂p/∂x_k``: the partial derivative by variable ``k``, the others held (opaque variables that
        depend on ``x_k`` differentiated by sympy)."""
        out = {}
        for m, c in p.items():
            for i, (j, e) in enumerate(m):
                if j == k:
                    rest = m[:i] + ((j, e - 1),) + m[i + 1:] if e != 1 else m[:i] + m[i + 1:]
                    out = add(out, {rest: c * e})
                elif j not in self.plain:
                    d = self._partial(j, k)
                    if d:
                        rest = m[:i] + ((j, e - 1),) + m[i + 1:] if e != 1 else m[:i] + m[i + 1:]
                        out = add(out, mul({rest: c * e}, d))
        return out

    def _partial(self, j, k):
        """∂x_j/∂x_k of an opaque variable ``x_j`` (cached; sine and cosine of a coordinate in closed form)."""
        key = (j, k)
        d = self.partials.get(key)
        if d is None:
            o, x = self.objects[j], self.objects[k]
            if isinstance(o, (sp.sin, sp.cos)) and isinstance(o.args[0], AppliedUndef):
                q = o.args[0]
                d = {} if q != x else (self.symbol(sp.cos(q)) if isinstance(o, sp.sin)
                                       else scale(self.symbol(sp.sin(q)), -1))
            else:
                d = self.from_sympy(sp.diff(o, x)) if o.has(x) else {}
            self.partials[key] = d
        return d

    def pythagoras(self, p: dict) -> dict:
        """``p`` with ``sin²x = 1 − cos²x`` for every sine of a coordinate (what makes ``Lᵀ ∂ρ/∂q`` of a
        revolute constant).

        >>> from netdyn import coordinates
        >>> th, = coordinates("theta,")
        >>> ring = Ring()
        >>> ring.to_sympy(ring.pythagoras(ring.from_sympy(sp.cos(th)**2 / 4 + sp.sin(th)**2 / 4)))
        1/4
        """
        out = {}
        for m, c in p.items():
            term = {m: c}
            for j, e in m:
                o = self.objects[j]
                if e >= 2 and isinstance(o, sp.sin) and isinstance(o.args[0], AppliedUndef):
                    rest = tuple((a, b) if a != j else (a, b - 2) for a, b in m if a != j or b != 2)
                    cos2 = {((self.var(sp.cos(o.args[0])), 2),): -1, (): 1}
                    term = self.pythagoras(mul({rest: c}, cos2))
                    break
            out = add(out, term)
        return out

    def rate(self, p: dict) -> dict:
        """``dp/dt`` by the chain rule (a coordinate's rate is its derivative; parameters are constant)."""
        out = {}
        for m, c in p.items():
            for i, (j, e) in enumerate(m):
                d = self._rate_of(j)
                if d:
                    rest = m[:i] + ((j, e - 1),) + m[i + 1:] if e != 1 else m[:i] + m[i + 1:]
                    out = add(out, mul({rest: c * e}, d))
        return out

    def _rate_of(self, k):
        d = self.rates.get(k)
        if d is None:
            o = self.objects[k]
            if isinstance(o, sp.Symbol) or o.is_Number or not o.has(t):
                d = {}
            elif isinstance(o, (AppliedUndef, sp.Derivative)):
                d = self.symbol(rate_of_coordinate(o))
            elif isinstance(o, (sp.sin, sp.cos)) and isinstance(o.args[0], AppliedUndef):
                q = o.args[0]
                d = mul(self.symbol(sp.cos(q)) if isinstance(o, sp.sin) else scale(self.symbol(sp.sin(q)), -1),
                        self.symbol(rate_of_coordinate(q)))
            else:
                d = self.from_sympy(o.diff(t))
            self.rates[k] = d
        return d
