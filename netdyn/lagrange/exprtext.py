"""Sympy expressions to text and back, exactly (for JSON equations and model files).

:func:`to_text` writes a string ``sympy.sympify`` reads, with every double
printed by ``repr`` (shortest exact form); :func:`symbol_table` records each
symbol's assumptions (``positive=True``, ...) and the names of undefined
functions, which a string cannot carry; :func:`from_text` reads the string back
with that table, so the result equals the original expression.

>>> import sympy as sp
>>> R = sp.Symbol("R", positive=True)
>>> e = R * sp.sin(sp.Symbol("t")) / 3 + 0.1 + sp.Symbol("gamma")
>>> text, table = to_text(e), symbol_table(e)
>>> text, table
('R*sin(t)/3 + gamma + 0.1', {'R': {'positive': True}, 'gamma': {}})
>>> from_text(text, table) == e
True
"""
from __future__ import annotations

import sympy as sp
from sympy.printing.str import StrPrinter

from netdyn.errors import ParseError
from netdyn.lagrange.sources import Sawtooth


class _ExactPrinter(StrPrinter):
    def _print_Float(self, expr):
        return repr(float(expr))


def to_text(expr):
    """The expression as a string that :func:`from_text` (and ``sympy.sympify``) read back."""
    return _ExactPrinter().doprint(sp.sympify(expr))


def _plain(name):
    """Whether sympify reads ``name`` as a plain symbol (``x``) rather than something else (``gamma``, ``E``)."""
    try:
        return sp.sympify(name) == sp.Symbol(name)
    except (sp.SympifyError, SyntaxError, TypeError, ValueError):
        return False


def symbol_table(*exprs):
    """What a string cannot carry: ``{name: assumptions}`` for symbols with assumptions or names sympy
    reads otherwise (``gamma``, ``E``), ``{"name()": {}}`` for such undefined functions."""
    out = {}
    for e in exprs:
        e = sp.sympify(e)
        for s in sorted(e.free_symbols, key=str):
            if isinstance(s, sp.Symbol):
                assumptions = dict(getattr(s, "_assumptions_orig", {}) or {})
                if assumptions or not _plain(s.name):
                    out[s.name] = assumptions
        for u in e.atoms(sp.core.function.AppliedUndef):
            if not _plain(u.func.__name__):
                out[u.func.__name__ + "()"] = {}
    return dict(sorted(out.items()))


def namespace(table=None):
    """The sympify ``locals`` for a symbol table (plus netdyn's own functions such as ``Sawtooth``)."""
    ns = {"Sawtooth": Sawtooth}
    for name, assumptions in (table or {}).items():
        if name.endswith("()"):
            ns[name[:-2]] = sp.Function(name[:-2])
        else:
            ns[name] = sp.Symbol(name, **{k: bool(v) for k, v in (assumptions or {}).items()})
    return ns


def from_text(text, table=None, where=None):
    """Parse a string written by :func:`to_text`; doubles come back bit for bit.

    A string that is not an expression is a :class:`~netdyn.errors.ParseError` naming ``where``.
    """
    try:
        expr = sp.sympify(text, locals=namespace(table))
    except (sp.SympifyError, SyntaxError, TypeError, ValueError) as exc:
        raise ParseError(f"{where or 'expression'}: cannot read {text!r} as a sympy expression ({exc})") from None
    floats = expr.atoms(sp.Float) if isinstance(expr, sp.Basic) else ()
    return expr.xreplace({x: sp.Float(float(x)) for x in floats}) if floats else expr
