"""Piecewise-linear functions of time evaluated by table lookup, in time independent of their length.

``sympy.lambdify`` turns a ``Piecewise`` into ``numpy.select`` over every piece,
so one evaluation of a PWL source with ``n`` corners costs ``O(n)`` and a
simulation, whose steps grow with ``n`` too, ``O(n²)``. :func:`tabulate` finds
each ``Piecewise`` of the form ``(a₀ + b₀ t, t < c₀), (a₁ + b₁ t, t < c₁), …,
(a_n + b_n t, True)`` (numbers ``a``, ``b``, increasing ``c``: PWL sources and their
derivatives), replaces it by a call of a generated function and returns that
function for the lambdify namespace: ``numpy.searchsorted`` then picks the piece
in ``O(log n)``.

>>> import numpy as np, sympy as sp
>>> from netdyn.symbols import t
>>> from netdyn.lagrange.sources import pwl
>>> v = pwl([(0, 0), (1, 2), (3, -2)])
>>> [e], ns = tabulate([2 * v + t])
>>> f = sp.lambdify(t, e, modules=[ns, "numpy"])
>>> f(np.array([-1.0, 0.5, 2.0, 3.0, 10.0])).tolist()
[-1.0, 2.5, 2.0, -1.0, 6.0]
"""
from __future__ import annotations

import itertools

import numpy as np
import sympy as sp

from netdyn.symbols import t

__all__ = ["tabulate"]

_COUNTER = itertools.count()


class _Table:
    """``a[k] + b[k] * x`` on the piece ``k = #{breaks <= x}``."""

    def __init__(self, breaks, a, b):
        self.breaks, self.a, self.b = np.asarray(breaks, float), np.asarray(a, float), np.asarray(b, float)

    def __call__(self, x):
        k = np.searchsorted(self.breaks, x, side="right")
        return self.a[k] + self.b[k] * x


def _as_table(pw, var):
    """The :class:`_Table` of a Piecewise linear in ``var`` with breaks ``var < c`` increasing, else None."""
    args = pw.args
    if len(args) < 3 or args[-1][1] is not sp.true:
        return None
    breaks, a, b = [], [], []
    for k, (expr, cond) in enumerate(args):
        if k < len(args) - 1:
            if not (isinstance(cond, sp.StrictLessThan) and cond.lhs == var and cond.rhs.is_Number):
                return None
            c = float(cond.rhs)
            if breaks and not c > breaks[-1]:
                return None
            breaks.append(c)
        if expr.free_symbols - {var}:
            return None
        if var in expr.free_symbols:  # a0 + b1*var, read off the terms (Poly is slow on thousands of pieces)
            a0, rest = expr.as_independent(var, as_Add=True)
            b1, rest = rest.as_independent(var, as_Add=False)
            if rest != var:
                return None
        else:
            a0, b1 = expr, 0
        try:
            a.append(float(a0))
            b.append(float(b1))
        except TypeError:
            return None
    return _Table(breaks, a, b)


def tabulate(exprs, var=t):
    """``(exprs', namespace)``: every tabulable ``Piecewise`` in ``exprs`` replaced by a function call
    whose numpy implementation is in ``namespace`` (pass it first in lambdify's ``modules``)."""
    namespace = {}
    replace = {}
    for e in exprs:
        if not isinstance(e, sp.Basic) or not e.has(sp.Piecewise):
            continue
        for pw in e.atoms(sp.Piecewise):
            if pw in replace:
                continue
            table = _as_table(pw, var)
            if table is None:
                continue
            name = f"netdyn_pwl_table_{next(_COUNTER)}"
            namespace[name] = table
            replace[pw] = sp.Function(name)(var)
    if not replace:
        return list(exprs), namespace
    return [e.xreplace(replace) if isinstance(e, sp.Basic) else e for e in exprs], namespace
