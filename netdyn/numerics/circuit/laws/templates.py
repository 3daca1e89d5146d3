"""Law templates: an element's energy or dissipation function compiled once per law, its numbers as parameters.

An element given by its own function (``Resistor("R1", a, b, dissipation=lambda i: R*i**2/2 + A*i**4/4)``,
``Capacitor(..., energy=lambda q: ...)``) is read once as a sympy expression of its port variable. The numbers
in that expression (not the exponents) become parameters ``_p0, _p1, ...``: what is left is the element's
*law*, and every element of one law — whatever its numbers — shares one compiled function of
``(x, p0, p1, ...)`` giving the energy, its derivative and its second derivative, evaluated for all of them in
one vectorised call. A 1,000-section ladder of one resistor law and one capacitor law compiles two functions.
The user's function itself is called once per distinct closure (its code and the values it closes over), so a
ladder built in a loop from one ``lambda`` is read once too.

>>> import numpy as np
>>> from netdyn.components.electrical import Capacitor
>>> law1, p1 = law_of(Capacitor("C1", "a", "0", energy=lambda q: q**2 / 2e-9 + 1e26 * q**4 / 4))
>>> law2, p2 = law_of(Capacitor("C2", "b", "0", energy=lambda q: q**2 / 4e-9 + 3e25 * q**4 / 4))
>>> law1 is law2, law1.role, len(p1)
(True, 'V', 2)
>>> E, dE, d2E = law1.evaluate(np.array([1e-9, 2e-9]), np.array([p1, p2]).T)
>>> bool(np.isclose(dE[0], 1e-9 / 1e-9 + 1e26 * 1e-27))   # the capacitor's voltage q/C + B q^3
True
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import sympy as sp

from netdyn.errors import ElementError

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # names for the hints only (annotations are not evaluated)
    from collections.abc import Callable
    from typing import Any

__all__ = ["LawTemplate", "law_of", "canonical", "template_count"]

#: the port variable of every template
X = sp.Symbol("_x")
_TEMPLATES: dict = {}  # (role, canonical expression) -> LawTemplate
_READ: dict = {}  # the user's function, by code and closure -> (canonical expression, parameter values)
_LIMIT = 4096  # entries kept before the caches start again (a long session of ever new laws)


@dataclass(frozen=True, eq=False)
class LawTemplate:
    """One law: ``role`` (``"D"`` dissipation of the flow, ``"V"`` energy of the displacement, ``"T"`` coenergy
    of the flow), its ``expr`` in :data:`X` and the parameter symbols ``params``; ``fn`` (its first and second
    derivative) and ``energy`` compiled from it."""

    role: str
    expr: sp.Expr
    params: tuple
    fn: Callable[..., list]
    energy: Callable[..., Any]

    def evaluate(self, x: np.ndarray, p: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The law's function, first and second derivative at the port variables ``x`` (elements,) of elements
        whose parameters are the rows of ``p`` (parameters × elements)."""
        return (_full(self.energy(x, *p), x),) + self.slopes(x, p)

    def slopes(self, x: np.ndarray, p: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The first and second derivative alone (what a Newton iteration needs)."""
        d1, d2 = self.fn(x, *p)
        return _full(d1, x), _full(d2, x)


def _full(v, x):
    v = np.asarray(v, dtype=float)
    return v if v.shape == np.shape(x) else np.broadcast_to(v, np.shape(x))


def canonical(expr: sp.Expr) -> tuple[sp.Expr, list[float]]:
    """``(template, values)``: ``expr`` with each number that is not an exponent replaced by a parameter
    ``_p0, _p1, ...``, and those numbers. The terms of sums and products are put in the order of their shapes
    (numbers left out), so laws that differ only in their numbers get one template whatever order sympy gave
    their terms.

    >>> canonical(sp.sympify("3*_x**2/2 + 0.5*_x**4"))
    (_p0*_x**2 + _p1*_x**4, [1.5, 0.5])
    >>> canonical(sp.sympify("3*_x**2/2 + 1e9*_x**4"))[0] == canonical(sp.sympify("1e9*_x**2 + 2*_x**4"))[0]
    True
    """
    values: list[float] = []

    def shape(e):
        if e.is_Number:
            return "#"
        if e.is_Atom:
            return sp.srepr(e)
        if e.is_Pow and e.args[1].is_Number:
            return f"Pow({shape(e.args[0])},{sp.srepr(e.args[1])})"
        parts = [shape(a) for a in e.args]
        return f"{e.func.__name__}({','.join(sorted(parts) if e.is_Add or e.is_Mul else parts)})"

    def walk(e):
        if e.is_Number:
            values.append(float(e))
            return sp.Symbol(f"_p{len(values) - 1}")
        if e.is_Atom:
            return e
        if e.is_Pow and e.args[1].is_Number:
            return sp.Pow(walk(e.args[0]), e.args[1], evaluate=False)
        args = sorted(e.args, key=shape) if e.is_Add or e.is_Mul else e.args
        return e.func(*[walk(a) for a in args], evaluate=False)

    return walk(sp.sympify(expr)), values


def _closure_key(fn):
    """A hashable key of a plain Python function's code and everything it closes over, or ``None``."""
    code = getattr(fn, "__code__", None)
    if code is None:
        return None
    try:
        cells = tuple(c.cell_contents for c in (fn.__closure__ or ()))
        key = (code, cells, fn.__defaults__, id(fn.__globals__))
        hash(key)
    except (TypeError, ValueError):  # an unhashable value closed over, or an empty cell
        return None
    return key


def _read(el):
    """The canonical expression of an energy-law element and its parameter values (cached by closure)."""
    key = _closure_key(el.function)
    if key is not None and key in _READ:
        return _READ[key]
    try:
        expr = sp.sympify(el.function(X))
    except Exception as exc:  # noqa: BLE001 - any failure of the user's function is named with the element
        raise ElementError(f"{el.name}: its {el.role} function could not be read as an expression "
                           f"({type(exc).__name__}: {exc})") from None
    if expr.free_symbols - {X}:
        raise ElementError(f"{el.name}: its {el.role} function has symbols other than its port variable "
                           f"({', '.join(sorted(map(str, expr.free_symbols - {X})))}); give numbers")
    out = canonical(expr)
    if key is not None:
        if len(_READ) > _LIMIT:
            _READ.clear()
        _READ[key] = out
    return out


def law_of(el) -> tuple[LawTemplate, np.ndarray]:
    """The :class:`LawTemplate` of an energy-law element (made and compiled on its first use, then shared by
    every element of the same law) and the element's own parameter values."""
    expr, values = _read(el)
    key = (el.role, expr)
    law = _TEMPLATES.get(key)
    if law is None:
        if len(_TEMPLATES) > _LIMIT:
            _TEMPLATES.clear()
        params = tuple(sp.Symbol(f"_p{k}") for k in range(len(values)))
        d1 = sp.diff(expr, X)
        fn = sp.lambdify([X, *params], [d1, sp.diff(d1, X)], modules="numpy", cse=True)
        energy = sp.lambdify([X, *params], expr, modules="numpy")
        law = _TEMPLATES[key] = LawTemplate(el.role, expr, params, fn, energy)
    return law, np.array(values, dtype=float)


def template_count() -> int:
    """How many laws have been compiled in this process (each once)."""
    return len(_TEMPLATES)
