"""Sympy expressions to text and back, exactly and safely (for JSON equations and model files).

:func:`to_text` writes a string with every double printed by ``repr`` (shortest
exact form); :func:`symbol_table` records each symbol's assumptions
(``positive=True``, ...) and the names of undefined functions, which a string
cannot carry; :func:`from_text` reads the string back with that table, so the
result equals the original expression.

>>> import sympy as sp
>>> R = sp.Symbol("R", positive=True)
>>> e = R * sp.sin(sp.Symbol("t")) / 3 + 0.1 + sp.Symbol("gamma")
>>> text, table = to_text(e), symbol_table(e)
>>> text, table
('R*sin(t)/3 + gamma + 0.1', {'R': {'positive': True}, 'gamma': {}})
>>> from_text(text, table) == e
True

Reading never evaluates the text: :func:`parse_expression` parses it with
Python's :mod:`ast` and builds the sympy object node by node from a whitelist —
numbers, names, ``+ - * / ** %``, comparisons, ``& | ~`` (And, Or, Not) and
calls of the functions in :data:`FUNCTIONS` (the math functions, ``Piecewise``,
``Heaviside``, ``Sawtooth``, ...) or of undefined functions the table declares
(``"v()": {}``). Attribute access, any other call, names with underscores at
both ends or at the start, strings, lambdas, subscripts and comprehensions are a
:class:`~netdyn.errors.ParseError` naming the offending token:

>>> from_text("__import__('os').system('echo hacked')", where="R1 argument R")
Traceback (most recent call last):
...
netdyn.errors.ParseError: R1 argument R: '__import__' is not allowed in an expression (names starting with an underscore are refused)

Text longer than :data:`LIMITS` ``.max_length`` characters or nested deeper than
``.max_depth`` is refused before it is built (raise them with
``netdyn.lagrange.exprtext.LIMITS.max_length = ...``), and an exact power whose result
would have more than ``.max_digits`` digits (``9**9**9``) is refused instead of
computed.
"""
from __future__ import annotations

import ast
import math
import re
from dataclasses import dataclass

import sympy as sp
from sympy.printing.str import StrPrinter

from netdyn.errors import ParseError
from netdyn.lagrange.sources import Sawtooth

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # names for the hints only (annotations are not evaluated)
    from typing import Any

__all__ = ["to_text", "symbol_table", "from_text", "parse_expression", "LIMITS", "FUNCTIONS", "CONSTANTS"]


@dataclass
class Limits:
    """Bounds on the text :func:`parse_expression` accepts (module-wide, in :data:`LIMITS`)."""

    max_length: int = 1_000_000     # characters of one expression
    max_depth: int = 200            # nesting of the syntax tree
    max_digits: int = 4300          # digits of an exact integer or rational built from the text


#: the limits in force; change the attributes to raise them
LIMITS = Limits()

#: functions an expression may call (name in the text -> sympy callable)
FUNCTIONS = {name: getattr(sp, name) for name in (
    "sin", "cos", "tan", "cot", "sec", "csc", "asin", "acos", "atan", "acot", "atan2",
    "sinh", "cosh", "tanh", "coth", "asinh", "acosh", "atanh", "exp", "log", "sqrt", "cbrt", "root",
    "Abs", "sign", "floor", "ceiling", "Min", "Max", "Mod", "Heaviside", "DiracDelta", "Piecewise",
    "re", "im", "conjugate", "arg", "Eq", "Ne", "Lt", "Le", "Gt", "Ge", "And", "Or", "Not",
    "Rational", "Integer", "Float")}
FUNCTIONS["Sawtooth"] = Sawtooth
FUNCTIONS["abs"] = sp.Abs
FUNCTIONS["ln"] = sp.log

#: names that are constants rather than symbols (unless the table declares a symbol of that name)
CONSTANTS = {"pi": sp.pi, "E": sp.E, "I": sp.I, "oo": sp.oo, "zoo": sp.zoo, "nan": sp.nan,
             "EulerGamma": sp.EulerGamma, "GoldenRatio": sp.GoldenRatio}

_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")
from sympy.core.assumptions import _assume_defined  # noqa: E402
_ASSUMPTIONS = frozenset(_assume_defined)


class _ExactPrinter(StrPrinter):
    def _print_Float(self, expr):
        return repr(float(expr))


def to_text(expr):
    """The expression as a string that :func:`from_text` reads back."""
    return _ExactPrinter().doprint(sp.sympify(expr))


def _plain(name):
    """Whether ``name`` reads back as a plain symbol (``x``) rather than a constant (``E``, ``pi``) or
    a function name (``gamma``, ``sin``)."""
    return (bool(_NAME.match(name)) and name not in CONSTANTS and name not in FUNCTIONS
            and not hasattr(sp, name))


def symbol_table(*exprs):
    """What a string cannot carry: ``{name: assumptions}`` for symbols with assumptions or names sympy
    reads otherwise (``gamma``, ``E``), ``{"name()": {}}`` for every undefined function."""
    out = {}
    for e in exprs:
        e = sp.sympify(e)
        for s in sorted(e.free_symbols, key=str):
            if isinstance(s, sp.Symbol):
                assumptions = dict(getattr(s, "_assumptions_orig", {}) or {})
                if assumptions or not _plain(s.name):
                    out[s.name] = assumptions
        for u in e.atoms(sp.core.function.AppliedUndef):
            out[u.func.__name__ + "()"] = {}
    return dict(sorted(out.items()))


def _table(table, where):
    """Checked symbol table: ``(symbols, functions)`` dicts of sympy objects."""
    symbols, functions = {}, {}
    if table is None:
        return symbols, functions
    if not isinstance(table, dict):
        raise ParseError(f"{where}: the symbol table must be a mapping of names to assumptions, got "
                         f"{type(table).__name__}")
    for name, assumptions in table.items():
        if not isinstance(name, str):
            raise ParseError(f"{where}: symbol name {name!r} is not a string")
        base = name[:-2] if name.endswith("()") else name
        if not _NAME.match(base):
            raise ParseError(f"{where}: {name!r} is not a valid symbol name (letters, digits and "
                             "underscores, starting with a letter)")
        assumptions = assumptions or {}
        if not isinstance(assumptions, dict):
            raise ParseError(f"{where}: the assumptions of {name!r} must be a mapping, got {assumptions!r}")
        for key, value in assumptions.items():
            if key not in _ASSUMPTIONS or not isinstance(value, (bool, type(None))):
                raise ParseError(f"{where}: {name!r} has the unknown assumption {key!r}: {value!r}; use sympy "
                                 "assumptions such as positive: true")
        clean = {k: v for k, v in assumptions.items() if v is not None}
        try:
            if name.endswith("()"):
                functions[base] = sp.Function(base, **clean)
            else:
                symbols[base] = sp.Symbol(base, **clean)
        except (ValueError, TypeError, sp.core.assumptions.InconsistentAssumptions) as exc:
            raise ParseError(f"{where}: inconsistent assumptions for {name!r}: {exc}") from None
    return symbols, functions


_BINOPS = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
           ast.Div: lambda a, b: a / b, ast.Mod: lambda a, b: sp.Mod(a, b),
           ast.BitAnd: lambda a, b: sp.And(a, b), ast.BitOr: lambda a, b: sp.Or(a, b)}
_COMPARE = {ast.Lt: sp.Lt, ast.LtE: sp.Le, ast.Gt: sp.Gt, ast.GtE: sp.Ge, ast.Eq: sp.Eq, ast.NotEq: sp.Ne}


def _depth(tree, limit, fail):
    """Nesting depth of an ast tree (iterative: no recursion on hostile input)."""
    stack = [(tree, 1)]
    while stack:
        node, d = stack.pop()
        if d > limit:
            fail(f"nested deeper than {limit} levels (netdyn.lagrange.exprtext.LIMITS.max_depth)")
        stack.extend((child, d + 1) for child in ast.iter_child_nodes(node))
    for node in ast.walk(tree):  # the most telling refusal first: hidden names
        name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else None
        if name is not None and name.startswith("_"):
            fail(f"{name!r} is not allowed in an expression (names starting with an underscore are refused)")


def _token(node):
    try:
        return ast.unparse(node)[:60]
    except Exception:  # noqa: BLE001 - only for the message
        return type(node).__name__


def parse_expression(text: str, symbols: Any = None, where: str | None = None, names: Any = None,
                     strict: bool = False) -> Any:
    """A sympy expression from ``text``, built node by node from a whitelist; never ``eval``.

    ``symbols`` is a symbol table (see :func:`symbol_table`); ``names`` extra
    declared symbol names (plain symbols). With ``strict=True`` every name must
    be declared (in the table or ``names``) or be a constant (``pi``, ``E``, ``I``,
    ``oo``); otherwise an undeclared name is a plain symbol. Errors are
    :class:`~netdyn.errors.ParseError` naming ``where``.

    >>> parse_expression("Piecewise((0, t < 1), (2*x**2, True))", names={"t", "x"}, strict=True)
    Piecewise((0, t < 1), (2*x**2, True))
    >>> parse_expression("y.real", where="h[0]")
    Traceback (most recent call last):
    ...
    netdyn.errors.ParseError: h[0]: attribute access 'y.real' is not allowed in an expression
    """
    where = where or "expression"

    def fail(message):
        raise ParseError(f"{where}: {message}")

    if not isinstance(text, str):
        if isinstance(text, bool) or not isinstance(text, (int, float)):
            fail(f"expected an expression as a string, got {type(text).__name__} {text!r:.60}")
        if isinstance(text, float) and not math.isfinite(text):
            fail(f"{text!r} is not a finite number")
        return sp.Integer(text) if isinstance(text, int) else sp.Float(text)
    if len(text) > LIMITS.max_length:
        fail(f"the expression is {len(text)} characters long, more than the limit of {LIMITS.max_length} "
             "(raise netdyn.lagrange.exprtext.LIMITS.max_length to read it)")
    declared, functions = _table(symbols, where)
    for n in names or ():
        declared.setdefault(str(n), sp.Symbol(str(n)))
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError as exc:
        fail(f"cannot read {text[:80]!r} as an expression ({exc.msg})")
    except (RecursionError, MemoryError, ValueError):
        fail(f"the expression is nested too deeply to read (limit {LIMITS.max_depth} levels)")
    _depth(tree, LIMITS.max_depth, fail)

    def number(value):
        if isinstance(value, sp.Rational) and not isinstance(value, sp.Integer):
            size = max(abs(value.p), value.q)
        elif isinstance(value, sp.Integer):
            size = abs(int(value))
        else:
            return value
        if size.bit_length() > LIMITS.max_digits * 3.33:
            fail(f"a number in the expression has more than {LIMITS.max_digits} digits")
        return value

    def power(a, b):
        if isinstance(a, sp.Rational) and isinstance(b, sp.Integer) and abs(a) != 1 and a != 0:
            bits = max(abs(a.p), a.q).bit_length()
            if bits * abs(int(b)) > LIMITS.max_digits * 3.33:
                fail(f"the power {a}**{b} has more than {LIMITS.max_digits} digits; write it as a float")
        return a ** b

    def build(node):
        if isinstance(node, ast.Expression):
            return build(node.body)
        if isinstance(node, ast.Constant):
            v = node.value
            if isinstance(v, bool):
                return sp.true if v else sp.false
            if isinstance(v, int):
                return number(sp.Integer(v))
            if isinstance(v, float):
                return sp.Float(v)
            fail(f"the constant {_token(node)} is not allowed in an expression (numbers only)")
        if isinstance(node, ast.Name):
            name = node.id
            if name.startswith("_"):
                fail(f"{name!r} is not allowed in an expression (names starting with an underscore are refused)")
            if name in declared:
                return declared[name]
            if name in CONSTANTS:
                return CONSTANTS[name]
            if name in functions or name in FUNCTIONS:
                fail(f"{name!r} is a function; call it with arguments")
            if strict:
                fail(f"unknown name {name!r}; declare it in the file's symbols")
            return sp.Symbol(name)
        if isinstance(node, ast.UnaryOp):
            v = build(node.operand)
            if isinstance(node.op, ast.USub):
                return -v
            if isinstance(node.op, ast.UAdd):
                return v
            if isinstance(node.op, (ast.Invert, ast.Not)):
                return sp.Not(v)
            fail(f"the operator in {_token(node)!r} is not allowed")
        if isinstance(node, ast.BinOp):
            a, b = build(node.left), build(node.right)
            if isinstance(node.op, ast.Pow):
                return number(power(a, b))
            op = _BINOPS.get(type(node.op))
            if op is None:
                fail(f"the operator in {_token(node)!r} is not allowed")
            return number(op(a, b))
        if isinstance(node, ast.BoolOp):
            args = [build(v) for v in node.values]
            return sp.And(*args) if isinstance(node.op, ast.And) else sp.Or(*args)
        if isinstance(node, ast.Compare):
            if len(node.ops) != 1:
                fail(f"chained comparison {_token(node)!r}; write (a < b) & (b < c)")
            rel = _COMPARE.get(type(node.ops[0]))
            if rel is None:
                fail(f"the comparison in {_token(node)!r} is not allowed")
            return rel(build(node.left), build(node.comparators[0]))
        if isinstance(node, ast.Tuple):
            return sp.Tuple(*[build(e) for e in node.elts])
        if isinstance(node, ast.Call):
            if not isinstance(node.func, ast.Name):
                if isinstance(node.func, ast.Attribute):
                    fail(f"attribute access {_token(node.func)!r} is not allowed in an expression")
                fail(f"the call {_token(node)!r} is not allowed in an expression")
            name = node.func.id
            if name.startswith("_"):
                fail(f"{name!r} is not allowed in an expression (names starting with an underscore are refused)")
            if node.keywords:
                fail(f"keyword arguments in {_token(node)!r} are not allowed")
            fn = functions.get(name) or FUNCTIONS.get(name)
            if fn is None:
                fail(f"unknown function {name!r}; allowed are {', '.join(sorted(FUNCTIONS))} and undefined "
                     "functions the file declares as 'name()'")
            args = [build(a) for a in node.args]
            if fn in (sp.Rational, sp.Integer, sp.Float) and not all(isinstance(a, sp.Number) for a in args):
                fail(f"{name} takes numbers only, in {_token(node)!r}")
            return number(fn(*args))
        if isinstance(node, ast.Attribute):
            fail(f"attribute access {_token(node)!r} is not allowed in an expression")
        if isinstance(node, ast.Lambda):
            fail(f"lambda {_token(node)!r} is not allowed in an expression")
        fail(f"{type(node).__name__} {_token(node)!r} is not allowed in an expression")

    try:
        return build(tree)
    except ParseError:
        raise
    except RecursionError:
        fail(f"the expression is nested too deeply to build (limit {LIMITS.max_depth} levels)")
    except (TypeError, ValueError, ArithmeticError, AttributeError, IndexError, sp.SympifyError) as exc:
        fail(f"cannot build {text[:80]!r}: {type(exc).__name__}: {exc}")


def from_text(text, table=None, where=None, names=None, strict=False):
    """Parse a string written by :func:`to_text`; doubles come back bit for bit.

    Never evaluates the text (see :func:`parse_expression`); a string that is
    not an allowed expression is a :class:`~netdyn.errors.ParseError` naming ``where``.
    """
    expr = parse_expression(text, table, where, names, strict)
    floats = expr.atoms(sp.Float) if isinstance(expr, sp.Basic) else ()
    return expr.xreplace({x: sp.Float(float(x)) for x in floats}) if floats else expr
