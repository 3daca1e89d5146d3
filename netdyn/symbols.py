"""Time, coordinates and parameters as sympy objects.

``t`` is the same symbol ``sympy.physics.mechanics.dynamicsymbols`` uses, so
models typed with either library mix freely.

>>> from netdyn.symbols import t, coordinates
>>> x, y = coordinates("x y")
>>> x.diff(t)
Derivative(x(t), t)
"""
from __future__ import annotations

import re

import sympy as sp
from sympy.physics.mechanics import dynamicsymbols
from netdyn.validate import value as checked

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # names for the hints only (annotations are not evaluated)
    from typing import Any

t = dynamicsymbols._t


def coordinates(names: str) -> Any:
    """Coordinates as sympy functions of time, like ``dynamicsymbols``.

    >>> coordinates("q1")
    q1(t)
    >>> [str(c) for c in coordinates("a, b")]
    ['a(t)', 'b(t)']
    """
    return dynamicsymbols(names)


def symbols(names: str, **assumptions: Any) -> Any:
    """Parameter symbols (positive real by default): ``m, k = symbols("m k")``.

    >>> symbols("m").is_positive
    True
    """
    assumptions.setdefault("positive", True)
    return sp.symbols(names, **assumptions)


def as_expr(value, element=None, parameter=None):
    """A number, sympy expression or callable of t as a sympy expression, checked.

    Strings are SPICE numbers (``"1k"``) or parameter names, never evaluated;
    NaN, infinities, complex numbers, booleans and lists are an
    :class:`~netdyn.errors.InvalidValueError` naming ``element`` and ``parameter``
    (see :mod:`netdyn.validate`).

    >>> as_expr(2)
    2
    >>> as_expr(lambda tt: 3*tt)
    3*t
    >>> as_expr("4.7k")
    4700.00000000000
    """
    if callable(value) and not isinstance(value, sp.Basic):
        return checked(sp.sympify(value(t)), element, parameter)
    return checked(value, element, parameter)


def identifier(text):
    """A node or element name made safe for a symbol name.

    >>> identifier("n1.out"), identifier("3")
    ('n1_out', '3')
    """
    return re.sub(r"\W", "_", str(text))


def engineering(x):
    """A number as an engineer writes it: six significant digits, an exponent outside [1e-3, 1e4).

    >>> [engineering(v) for v in (1e6, 1e-3, 0.5, 10.0, 2.5e-9, 123456789.0, -4.7e3)]
    ['1.0e6', '0.001', '0.5', '10', '2.5e-9', '1.23457e8', '-4700']
    """
    x = float(x)
    if x == 0 or 1e-3 <= abs(x) < 1e4:
        return f"{x:.6g}"
    mantissa, exponent = f"{x:.6g}".split("e") if "e" in f"{x:.6g}" else (f"{x:.6g}", "0")
    if "." not in mantissa:
        mantissa += ".0"
    return f"{mantissa}e{int(exponent)}"
