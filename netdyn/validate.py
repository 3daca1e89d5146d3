"""Checked input values: one place that says what a parameter, a time span or a name may be.

Used by the element constructors (through :func:`netdyn.symbols.as_expr` and
``require_positive``), by ``params=`` overrides and initial values at simulation
time. Every refusal is a
:class:`~netdyn.errors.InvalidValueError` (an ``ElementError`` and a
``ParameterError``) naming the element and the parameter and saying what to give.

Numbers may be Python or numpy numbers, sympy numbers, or strings holding a
SPICE number with a scale factor and an optional unit (``"1k"``, ``"10uF"``,
``"2.2meg"``); a string that is a plain name (``"R_load"``) is a symbolic
parameter. Anything else — NaN, ±inf, complex values, booleans, lists, other
strings — is refused:

>>> value("1k", "R1", "R")
1000.00000000000
>>> value(float("nan"), "L1", "L")
Traceback (most recent call last):
...
netdyn.errors.InvalidValueError: L1: L = nan is not a finite number; give a finite real value
"""
from __future__ import annotations

import math
import numbers
import re

import numpy as np
import sympy as sp

from netdyn.errors import InvalidValueError, ParseError
from netdyn.units import NUMBER, SCALE, UNIT_WORDS, parse_value  # noqa: F401 - re-exported

__all__ = ["format_version", "parse_value", "value", "real", "positive", "parameter_values", "requirements", "SCALE", "UNIT_WORDS"]

_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")


_FLOATS = {}


def _float(x):
    """``sympy.Float(x)``, shared for repeated values (netlists repeat theirs: 1k, 100n, ...)."""
    f = _FLOATS.get(x) if x != 0 else None  # 0.0 == -0.0: keep the sign of zero
    if f is None:
        if len(_FLOATS) > 4096:
            _FLOATS.clear()
        f = _FLOATS[x] = sp.Float(x)
    return f


def _who(element, parameter):
    if element and parameter:
        return f"{element}: {parameter} = "
    if parameter:
        return f"{parameter} = "
    return f"{element}: value " if element else "value "


def value(x, element=None, parameter=None):
    """``x`` as a sympy expression, refused with a clear error when it cannot be a parameter value.

    Sympy expressions of symbols pass (their values are checked when they are
    given); number-valued ones must be finite and real.
    """
    if type(x) is float:  # the common case first
        if math.isfinite(x):
            return _float(x)
    elif type(x) is int:
        return sp.Integer(x)
    who = _who(element, parameter)
    if isinstance(x, sp.Basic):
        if isinstance(x, sp.logic.boolalg.Boolean) and not isinstance(x, sp.Expr):
            raise InvalidValueError(f"{who}{x} is a condition, not a value; give a number or an expression")
        if x.has(sp.nan, sp.zoo, sp.oo, -sp.oo):
            raise InvalidValueError(f"{who}{x} is not a finite number; give a finite real value")
        if x.is_number:
            if x.is_real is False or (x.is_real is None and x.is_extended_real is False):
                raise InvalidValueError(f"{who}{x} is not real; give a real value")
        return x
    if isinstance(x, (bool, np.bool_)):
        raise InvalidValueError(f"{who}{x!r} is a boolean, not a number; give a number")
    if isinstance(x, str):
        text = x.strip()
        if NUMBER.match(text):
            try:
                return sp.Float(parse_value(text))
            except ParseError as exc:
                raise InvalidValueError(f"{who}{x!r}: {exc}") from None
        if _NAME.match(text):
            return sp.Symbol(text)
        raise InvalidValueError(f"{who}{x!r} is not a number; give a number, a SPICE number such as '1k' or "
                                "'10u', a parameter name, or a sympy expression")
    if isinstance(x, numbers.Number) or isinstance(x, np.generic):
        if isinstance(x, (complex, np.complexfloating)):
            if x.imag != 0:
                raise InvalidValueError(f"{who}{x!r} is complex; give a real value")
            x = x.real
        if isinstance(x, numbers.Integral):
            return sp.Integer(int(x))
        return sp.Float(_finite_float(x, who))
    if isinstance(x, (list, tuple, set, dict, np.ndarray)):
        raise InvalidValueError(f"{who}{x!r:.60} is a {type(x).__name__}, not a single number; give one value")
    try:
        return value(sp.sympify(x, strict=True), element, parameter)
    except (sp.SympifyError, TypeError, ValueError, AttributeError):
        raise InvalidValueError(f"{who}{x!r:.60} ({type(x).__name__}) is not a number or a sympy expression") \
            from None


def real(x, element=None, parameter=None):
    """A finite real float (numbers, numpy scalars, number-valued sympy expressions, SPICE strings).

    >>> real("2.2k", "R1", "R")
    2200.0
    """
    e = value(x, element, parameter)
    if not e.is_number:
        raise InvalidValueError(f"{_who(element, parameter)}{x!r} is not a number; give a numeric value")
    return _finite_float(e, _who(element, parameter), shown=x)


def _finite_float(x, who, shown=None):
    """``float(x)``, or an :class:`InvalidValueError` (``who`` names the element and parameter) when it is not a
    real number or not finite; ``shown`` is the value as the user gave it (default ``x``)."""
    shown = x if shown is None else shown
    try:
        f = float(x)
    except (TypeError, ValueError, OverflowError):
        raise InvalidValueError(f"{who}{shown!r} is not a real number") from None
    if not math.isfinite(f):
        raise InvalidValueError(f"{who}{shown!r} is not a finite number; give a finite real value")
    return f


def positive(x, element, parameter, allow_zero=False):
    """Refuse a number that is negative (or zero unless ``allow_zero``); symbols pass.

    >>> positive(-1, "L1", "L")
    Traceback (most recent call last):
    ...
    netdyn.errors.InvalidValueError: L1: L = -1 is not physical; give a positive value
    """
    if type(x) in (float, int):  # the common case, without sympy's assumption machinery
        if x < 0 or (x == 0 and not allow_zero):
            raise InvalidValueError(f"{element}: {parameter} = {x} is not physical; give a positive value")
        return value(x, element, parameter)
    e = value(x, element, parameter)
    if e.is_number and e.is_real:
        if e.is_negative or (e.is_zero and not allow_zero):
            raise InvalidValueError(f"{element}: {parameter} = {x} is not physical; give a positive value")
    return e


def parameter_values(params, requirements):
    """Check ``params=`` overrides: finite real numbers, and the sign rules the elements declare.

    ``requirements`` is ``[(element, parameter, expression, allow_zero)]`` (what element constructors
    recorded for symbolic values, see ``components.base.require_positive``); each expression is
    evaluated with the given values and must be positive (or non-negative).

    >>> import sympy as sp
    >>> R = sp.Symbol("R")
    >>> parameter_values({"R": -1e3}, [("R1", "R", R, False)])
    Traceback (most recent call last):
    ...
    netdyn.errors.InvalidValueError: R1: R = -1000.0 (params={'R': -1000.0}) is not physical; give a positive value
    """
    if not params:
        return
    if not isinstance(params, dict):
        raise InvalidValueError(f"params must be a dict of parameter names to values, got {type(params).__name__}")
    numeric = {}
    for k, v in params.items():
        if callable(v) and not isinstance(v, sp.Basic):
            continue  # an input function of t
        e = value(v, parameter=f"params[{str(k)!r}]")
        if e.is_number:
            numeric[str(k)] = float(e)
    for element, parameter, expr, allow_zero in requirements:
        if not isinstance(expr, sp.Basic):
            continue
        names = {str(s) for s in expr.free_symbols}
        if not names or not names & set(numeric):
            continue
        sub = expr.subs({s: numeric[str(s)] for s in expr.free_symbols if str(s) in numeric})
        if not sub.is_number:
            continue
        x = complex(sub)
        given = {n: numeric[n] for n in sorted(names & set(numeric))}
        if x.imag != 0 or not math.isfinite(x.real):
            raise InvalidValueError(f"{element}: {parameter} = {sub} (params={given}) is not a finite real value")
        if x.real < 0 or (x.real == 0 and not allow_zero):
            raise InvalidValueError(f"{element}: {parameter} = {x.real!r} (params={given}) is not physical; "
                                    "give a positive value")


def requirements(model):
    """The sign rules the elements of a model's network recorded for their symbolic values."""
    net = (getattr(model, "metadata", None) or {}).get("network")
    out = []
    for group in ("elements", "bodies"):
        for obj in (getattr(net, group, None) or {}).values():
            out.extend(getattr(obj, "requirements", ()))
    return out


def extreme_values(model, decades=15):
    """``[(element, parameter, value)]``: numeric element values beyond ``10**±decades`` in SI units
    (``model``: a model assembled from a network, or the network).

    Such a value (``R = 1e-30``) makes a time constant far below any step an integrator can take, or
    far beyond the span; when an integration fails, the message names these elements.

    >>> extreme_values(None)
    []
    """
    net = model if hasattr(model, "elements") else (getattr(model, "metadata", None) or {}).get("network")
    out = []
    for group in ("elements", "bodies"):
        for obj in (getattr(net, group, None) or {}).values():
            for parameter, v in (getattr(obj, "values", None) or {}).items():
                if isinstance(v, sp.Basic) and v.is_number and v.is_real and not v.is_zero:
                    x = abs(float(v))
                    if x < 10.0 ** -decades or x > 10.0 ** decades:
                        out.append((obj.name, parameter, float(v)))
    return out


def conditioning_hint(model):
    """A sentence naming the elements with extreme values (see :func:`extreme_values`), or ``""``."""
    found = extreme_values(model)
    if not found:
        return ""
    listed = ", ".join(f"{name}: {parameter} = {value:g}" for name, parameter, value in found[:5])
    return (f"; the problem is badly conditioned by {listed} (values beyond 1e±15 in SI units make time "
            "constants no integrator can resolve); check the units or replace the element by an ideal one "
            "(a short, an open circuit, a rigid link)")


#: the key every netdyn file gives its format version under; bond-graph files before 0.3 said ``version``
VERSION_KEY, OLD_VERSION_KEY = "format_version", "version"


def format_version(doc, where, newest):
    """The format version of a file's content: ``format_version`` (every netdyn file writes it), or ``version``
    as bond-graph files written before 0.3 named it (a file giving both must give one number). A missing,
    non-integer or newer version is a :class:`~netdyn.errors.ParseError`.

    >>> format_version({"format_version": 2}, "f.yaml", 2), format_version({"version": 1}, "f.yaml", 2)
    (2, 1)
    >>> format_version({"format_version": 3}, "f.yaml", 2)
    Traceback (most recent call last):
    ...
    netdyn.errors.ParseError: f.yaml: format_version 3 is newer than this netdyn reads (2); upgrade netdyn
    """
    given = {key: doc[key] for key in (VERSION_KEY, OLD_VERSION_KEY) if key in doc}
    if not given or len(set(map(repr, given.values()))) > 1 or any(type(v) is not int for v in given.values()):
        shown = ", ".join(f"{k}: {v!r:.40}" for k, v in given.items()) or "none"
        raise ParseError(f"{where}: needs one integer {VERSION_KEY} (found {shown})")
    version = next(iter(given.values()))
    if version > newest:
        raise ParseError(f"{where}: {VERSION_KEY} {version} is newer than this netdyn reads ({newest}); upgrade netdyn")
    return version

