"""Time, coordinates and parameters as sympy objects.

``t`` is the same symbol ``sympy.physics.mechanics.dynamicsymbols`` uses, so
models typed with either library mix freely.

>>> from netdyn.symbols import t, coordinates
>>> x, y = coordinates("x y")
>>> x.diff(t)
Derivative(x(t), t)
"""
import sympy as sp
from sympy.physics.mechanics import dynamicsymbols

t = dynamicsymbols._t


def coordinates(names):
    """Coordinates as sympy functions of time, like ``dynamicsymbols``.

    >>> coordinates("q1")
    q1(t)
    >>> [str(c) for c in coordinates("a, b")]
    ['a(t)', 'b(t)']
    """
    return dynamicsymbols(names)


def symbols(names, **assumptions):
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
    from netdyn.validate import value as checked
    if callable(value) and not isinstance(value, sp.Basic):
        return checked(sp.sympify(value(t)), element, parameter)
    return checked(value, element, parameter)
