"""Fast differentiation for the derivation: symengine underneath, sympy in and out.

sympy's ``diff`` spends most of its time in the assumptions system (about 10 ms
for ``d/dx 5e8*(x - y)**2``); symengine does the same in microseconds. A
:class:`Differentiator` converts each term once, differentiates and sums in
symengine, and converts the finished entries back to sympy with the user's own
symbols (assumptions included). A term symengine cannot represent faithfully
(a user-defined sympy function, two symbols of one name) stays in sympy, so the
result is always the sympy one.

>>> import sympy as sp
>>> x, m = sp.Symbol("x"), sp.Symbol("m", positive=True)
>>> d = Differentiator()
>>> e = d.term(m * sp.sin(x) ** 2 / 2)
>>> d.free(e) == {x, m}
True
>>> r = d.sympy(d.diff(e, x))
>>> r == m * sp.sin(x) * sp.cos(x), r.free_symbols == {x, m}
(True, True)
"""
from __future__ import annotations

import sympy as sp
from netdyn.symbols import t
from sympy.core.add import _addsort
from sympy.core.mul import _mulsort

try:  # symengine is optional: without it everything stays in sympy
    import symengine as se
except ImportError:  # pragma: no cover - depends on the installation
    se = None

__all__ = ["Differentiator", "rate"]


def rate(coordinate, order=1):
    """``d^order coordinate / dt^order`` of a coordinate function, without sympy's slow evaluation.

    >>> from netdyn import coordinates, t
    >>> x, = coordinates("x,")
    >>> rate(x) == x.diff(t), rate(x, 2) == x.diff(t, 2)
    (True, True)
    """
    return sp.Derivative(coordinate, (t, order))


def _is_se(expr):
    return se is not None and isinstance(expr, se.Basic)


class Differentiator:
    """Differentiate and sum expressions in symengine when that is exact, else in sympy.

    ``term(expr)`` converts a sympy expression (or returns it unchanged when it
    must stay in sympy); ``diff``, ``free`` and ``add`` work on either kind;
    ``sympy(expr)`` gives the sympy expression back.
    """

    def __init__(self, enabled=True):
        self.enabled = enabled and se is not None
        self.by_name = {}  # symbol name -> the sympy symbol it stands for
        self._se_of = {}  # sympy symbol -> symengine symbol

    def term(self, expr):
        expr = sp.sympify(expr)
        if not self.enabled or not self._convertible(expr):
            return expr
        try:
            return se.sympify(expr)
        except Exception:  # pragma: no cover - symengine lacks a construct: stay in sympy
            return expr

    def _convertible(self, expr):
        for f in expr.atoms(sp.Function):
            if not isinstance(f, sp.core.function.AppliedUndef) and not type(f).__module__.startswith("sympy."):
                return False
        if expr.atoms(sp.Dummy, sp.Wild):
            return False
        for s in expr.free_symbols:
            known = self.by_name.get(s.name)
            if known is not None and known != s:
                return False
        for s in expr.free_symbols:
            if s.name not in self.by_name:
                self.by_name[s.name] = s
        return True

    def symbol(self, sym):
        """The symbol to differentiate by, for an expression of either kind."""
        out = self._se_of.get(sym)
        if out is None and self.enabled:
            out = self._se_of[sym] = se.Symbol(sym.name)
            self.by_name.setdefault(sym.name, sym)
        return out

    def diff(self, expr, sym):
        if _is_se(expr):
            s = self.symbol(sym)
            return expr.diff(s) if s in expr.free_symbols else se.Integer(0)
        return sp.diff(expr, sym)

    def at_zero(self, expr, syms):
        """``expr`` with the given symbols set to zero."""
        if _is_se(expr):
            return expr.xreplace({self.symbol(s): se.Integer(0) for s in syms})
        return expr.xreplace({s: 0 for s in syms})

    def times(self, expr, sym):
        """``expr * sym`` in the kind of ``expr``."""
        return expr * self.symbol(sym) if _is_se(expr) else expr * sym

    def total(self, pieces):
        """The sum of pieces, in symengine when every piece is, else in sympy."""
        if pieces and all(_is_se(p) for p in pieces):
            return se.Add(*pieces)
        return sp.Add(*[self.sympy(p) for p in pieces])

    def free(self, expr):
        """Free symbols as sympy symbols."""
        if _is_se(expr):
            return {self.by_name[s.name] for s in expr.free_symbols}
        return expr.free_symbols

    def is_zero(self, expr):
        return expr == 0

    def sympy(self, expr):
        """A sympy expression for a sum of pieces (a list) or for one expression of either kind."""
        if isinstance(expr, list):
            fast = [e for e in expr if _is_se(e)]
            slow = [e for e in expr if not _is_se(e)]
            out = self.sympy(se.Add(*fast)) if fast else sp.S.Zero
            return out + sp.Add(*slow) if slow else out
        if not _is_se(expr):
            return sp.sympify(expr)
        return _Converter(self.by_name).convert(expr)


_FUNCTIONS = {name: getattr(sp, name) for name in (
    "sin", "cos", "tan", "cot", "sec", "csc", "asin", "acos", "atan", "exp", "log", "sinh", "cosh", "tanh",
    "asinh", "acosh", "atanh")}
_INTEGERS = ("Integer", "Zero", "One", "NegativeOne")


class _Converter:
    """symengine to sympy, building sympy's canonical form directly (no re-evaluation).

    symengine's result is already simplified; sympy's evaluating constructors
    would spend milliseconds per node re-deriving assumptions. Nodes are built
    with sympy's own argument order and its one automatic rewrite (a number
    times a sum is distributed), so the result equals what sympy would build.
    Anything unusual is handed to symengine's own converter.
    """

    def __init__(self, by_name):
        self.by_name = by_name
        self.memo = {}

    def convert(self, e):
        out = self.memo.get(e)
        if out is None:
            out = self.memo[e] = self._convert(e)
        return out

    def _convert(self, e):
        kind = type(e).__name__
        if kind == "Symbol":
            return self.by_name.get(e.name) or sp.Symbol(e.name)
        if kind in _INTEGERS:
            return sp.Integer(int(e))
        if kind == "RealDouble":
            return sp.Float(float(e))
        if kind == "Add":
            return _add([self.convert(a) for a in e.args])
        if kind == "Mul":
            return _mul([self.convert(a) for a in e.args])
        if kind == "Pow":
            if type(e.args[0]).__name__ == "Exp1":
                return sp.exp(self.convert(e.args[1]))
            b, x = (self.convert(a) for a in e.args)
            return sp.Pow(b, x, evaluate=False)
        fn = _FUNCTIONS.get(kind)
        if fn is not None:
            return fn(*(self.convert(a) for a in e.args), evaluate=False)
        out = e._sympy_()
        restore = {s: self.by_name[s.name] for s in out.free_symbols if s.name in self.by_name}
        return out.xreplace(restore) if restore else out


def _add(args):
    if any(a.is_Add for a in args):  # a distributed product: let sympy collect the terms
        return sp.Add(*args)
    numbers = [a for a in args if a.is_Number]
    terms = [a for a in args if not a.is_Number]
    coeff = sp.Add(*numbers) if numbers else sp.S.Zero
    _addsort(terms)
    if coeff != 0:
        terms.insert(0, coeff)
    if len(terms) == 1:
        return terms[0]
    return sp.Add._from_args(terms)


def _mul(args):
    numbers = [a for a in args if a.is_Number]
    rest = [a for a in args if not a.is_Number]
    coeff = sp.Mul(*numbers) if numbers else sp.S.One
    if coeff == 0:
        return sp.S.Zero
    if len(rest) == 1 and rest[0].is_Add and coeff != 1:  # sympy distributes a number over a sum
        return _add([_scaled(coeff, term) for term in rest[0].args])
    _mulsort(rest)
    if coeff != 1:
        rest.insert(0, coeff)
    if len(rest) == 1:
        return rest[0]
    return sp.Mul._from_args(rest)


def _scaled(c, term):
    if term.is_Number:
        return c * term
    if term.is_Mul and term.args[0].is_Number:
        k = c * term.args[0]
        rest = list(term.args[1:])
        if k == 1:
            return rest[0] if len(rest) == 1 else sp.Mul._from_args(rest)
        return sp.Mul._from_args([k] + rest)
    return sp.Mul._from_args([c, term])
