"""Saving and loading bond graphs as JSON or YAML, with safe expression parsing.

The file lists the elements (kind, name, parameters), the bonds (name, from,
to) and the symbols the expressions use::

    format: netdyn-bondgraph
    format_version: 2                # the key model files use too ("version" in files of netdyn before 0.3 reads)
    name: RC
    symbols: {R: {positive: true}}   # parameters with assumptions (plain names need no entry)
    inputs: [u]                      # undefined functions of t
    elements:
      - {kind: Se, name: src, effort: u(t)}
      - {kind: '1', name: J}
      - {kind: C, name: C1, energy: q**2/2}
      - {kind: R, name: R1, R: R}
    bonds:
      - {name: src, from: src, to: J}
      ...

Expressions are read without ``eval``: Python's ``ast`` parses the text, and
only numbers, the symbols ``t``, the element's own variable (``q`` for
``energy``, ``f`` for ``coenergy``/``content``, ``x`` for a modulated ratio;
``q1..qn``/``f1..fn`` for a multiport field, whose ``ports`` lists its bonds
and whose matrix parameter is a list of rows),
the declared symbols and inputs, other plain names (as parameters) and a fixed
list of functions are accepted; anything else is a
:class:`~netdyn.errors.ParseError` naming the element and field. Doubles are
written with ``repr`` and come back bit for bit.

>>> import netdyn, sympy as sp
>>> bg = netdyn.BondGraph("RC")
>>> bg.add("Se", "u", effort=sp.sin(3 * netdyn.t)); bg.add("1", "J"); bg.add("C", "C1", C=0.1)
>>> _ = bg.chain("u", "J", "C1")
>>> same = loads(dumps(bg))
>>> same.params("u")["effort"] == sp.sin(3 * netdyn.t), same.bonds_of("J")
(True, ['u', 'C1'])
>>> parse("__import__('os')", {}, "C1.energy")
Traceback (most recent call last):
...
netdyn.errors.ParseError: C1.energy: '__import__' is not an allowed function (allowed: Abs, Heaviside, Max, Min, Piecewise, acos, acosh, asin, asinh, atan, atan2, atanh, cos, cosh, erf, exp, log, sign, sin, sinh, sqrt, tan, tanh)
"""
from __future__ import annotations

import ast
import json
import os
from pathlib import Path

import sympy as sp

from netdyn.bondgraph.graph import BondGraph
from netdyn.bondgraph.kinds import KINDS, function_variable
from netdyn.bondgraph.laws import VARIABLES
from netdyn.errors import ModelError, ParseError
from netdyn.lagrange.exprtext import symbol_table, to_text
from netdyn.symbols import t
from netdyn.files import as_path, write_text
from netdyn.validate import format_version

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # names for the hints only (annotations are not evaluated)
    from netdyn.hints import PathArg

FORMAT, VERSION = "netdyn-bondgraph", 2   # 2: laws, co-energy forms, named parameters with units, port names
FUNCTIONS = {name: getattr(sp, name) for name in (
    "sin", "cos", "tan", "exp", "log", "sqrt", "sinh", "cosh", "tanh", "asin", "acos", "atan", "atan2", "asinh",
    "acosh", "atanh", "erf", "Abs", "sign", "Heaviside", "Min", "Max", "Piecewise")}
CONSTANTS = {"pi": sp.pi, "E": sp.E, "oo": sp.oo, "True": sp.true, "False": sp.false}
_BINOPS = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
           ast.Div: lambda a, b: a / b, ast.Pow: lambda a, b: a ** b, ast.BitAnd: sp.And, ast.BitOr: sp.Or}
_COMPARE = {ast.Lt: sp.Lt, ast.LtE: sp.Le, ast.Gt: sp.Gt, ast.GtE: sp.Ge, ast.Eq: sp.Eq, ast.NotEq: sp.Ne}
_EXPRESSIONS = ("effort", "flow", "C", "I", "R", "ratio", "energy", "coenergy", "content", "cocontent")


def parse(text, names, where, variable=None):
    """A sympy expression from ``text`` without ``eval``; ``names`` maps allowed names to sympy objects.

    Undeclared plain names become parameters (``sympy.Symbol``); ``variable`` is the
    element's own argument (``q``, ``f`` or ``x``).
    """
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        return sp.Float(text) if isinstance(text, float) else sp.Integer(text)
    if not isinstance(text, str):
        raise ParseError(f"{where}: expected an expression as text or a number, got {text!r}")
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError as exc:
        raise ParseError(f"{where}: cannot read {text!r} ({exc.msg})") from None
    scope = dict(CONSTANTS)
    scope["t"] = t
    if variable is not None:
        scope[variable.name] = variable
    scope.update(names.get("symbols", {}))
    inputs = names.get("inputs", {})

    def ev(node):
        if isinstance(node, ast.Expression):
            return ev(node.body)
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
            return sp.Integer(node.value) if isinstance(node.value, int) else sp.Float(node.value)
        if isinstance(node, ast.Constant) and isinstance(node.value, bool):  # Python reads True/False as constants
            return sp.true if node.value else sp.false
        if isinstance(node, ast.Name):
            if node.id in scope:
                return scope[node.id]
            if node.id in FUNCTIONS or node.id in inputs:
                raise ParseError(f"{where}: {node.id} is a function; call it")
            if not node.id.isidentifier() or node.id.startswith("_"):
                raise ParseError(f"{where}: {node.id!r} is not an allowed name")
            return sp.Symbol(node.id)
        if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
            return _BINOPS[type(node.op)](ev(node.left), ev(node.right))
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd, ast.Invert)):
            v = ev(node.operand)
            return -v if isinstance(node.op, ast.USub) else (sp.Not(v) if isinstance(node.op, ast.Invert) else v)
        if isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in _COMPARE:
            return _COMPARE[type(node.ops[0])](ev(node.left), ev(node.comparators[0]))
        if isinstance(node, ast.Tuple):
            return tuple(ev(e) for e in node.elts)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not node.keywords:
            name = node.func.id
            if name not in inputs and name not in FUNCTIONS:
                raise ParseError(f"{where}: {name!r} is not an allowed function "
                                 f"(allowed: {', '.join(sorted(FUNCTIONS))})")
            args = [ev(a) for a in node.args]
            if name in inputs:
                return inputs[name](*args)
            if name in FUNCTIONS:
                return FUNCTIONS[name](*args)
        raise ParseError(f"{where}: {ast.dump(node)[:60]}... is not allowed in an expression")

    return ev(tree)


def to_dict(bg):
    """The bond graph as plain data (what :func:`dumps` writes)."""
    elements, exprs = [], []
    names = _reading_names(bg)
    for n in bg.elements:
        kind = bg.kind(n)
        if kind == "field":
            raise ModelError(f"{n}: a field element wraps network elements and has no bond-graph file form; "
                             "save the network with netdyn.save_model instead")
        entry = {"kind": kind, "name": n}
        texts = bg.graph.nodes[n].get("text", {})
        for p, v in bg.params(n).items():
            if p == "by":
                entry[p] = v
            elif p in texts and _reads_back(texts[p], v, names, kind, p):   # as written: "A/(rho*g)"
                entry[p] = texts[p]
                exprs.append(v.rhs if p == "law" else v)
            elif isinstance(v, sp.MatrixBase):   # a field's matrix: rows of expressions
                entry[p] = [[to_text(x) for x in v.row(i)] for i in range(v.rows)]
                exprs.extend(v)
            elif p == "law":                     # a relation, as written: "f = k*sign(e)*sqrt(Abs(e))"
                entry[p] = f"{v.lhs} = {to_text(v.rhs)}"
                exprs.append(v.rhs)
            else:
                entry[p] = to_text(v)
                exprs.append(v)
        if kind in ("TF", "GY", "MTF", "MGY") or bg.is_field(n):
            entry["ports"] = bg.bonds_of(n)
        if bg.port_names(n):
            entry["port_names"] = bg.port_names(n)
        domain = bg.graph.nodes[n].get("domain")
        if domain:
            entry["domain"] = domain
        elements.append(entry)
    table = symbol_table(*exprs) if exprs else {}
    symbols = {k: v for k, v in table.items() if not k.endswith("()")}
    inputs = sorted({u.func.__name__ for e in exprs for u in sp.sympify(e).atoms(sp.core.function.AppliedUndef)})
    bonds = [{"name": b, "from": bg.ends(b)[0], "to": bg.ends(b)[1]} for b in bg.bond_names]
    out = {"format": FORMAT, "format_version": VERSION, "name": bg.name, "effort": bg.effort_name, "flow": bg.flow_name}
    if bg.units:
        out["units"] = dict(bg.units)
    if bg.parameters:
        out["parameters"] = {k: {key: (to_text(x) if key == "value" else x) for key, x in v.items() if x is not None}
                             for k, v in bg.parameters.items()}
    out.update({"symbols": symbols, "inputs": inputs, "elements": elements, "bonds": bonds})
    return out


def _reading_names(bg):
    """The symbols and inputs the reader would declare for ``bg``'s file (to test that a text reads back)."""
    exprs = []
    for n in bg.elements:
        for p, v in bg.params(n).items():
            if isinstance(v, sp.Equality):
                exprs.append(v.rhs)
            elif isinstance(v, sp.MatrixBase):
                exprs.extend(v)
            elif isinstance(v, sp.Basic):
                exprs.append(v)
    table = symbol_table(*exprs) if exprs else {}
    symbols = {k: sp.Symbol(k, **{a: bool(b) for a, b in v.items()}) for k, v in table.items() if not k.endswith("()")}
    inputs = {u.func.__name__: u.func for e in exprs for u in sp.sympify(e).atoms(sp.core.function.AppliedUndef)}
    return {"symbols": symbols, "inputs": inputs}


def _reads_back(text, value, names, kind, p):
    """Whether ``text`` (a value as the user wrote it) reads back to ``value`` through this file's reader."""
    try:
        if p == "law":
            lhs, rhs = _relation(text, names, kind, "law")
            return lhs == value.lhs and rhs == value.rhs
        return parse(text, names, p, function_variable(kind, p)) == value
    except Exception:  # noqa: BLE001 - text the reader does not take (a SPICE suffix, ...): write the expression
        return False


def from_dict(data, where="bond graph file"):
    """Build a :class:`~netdyn.bondgraph.graph.BondGraph` from :func:`to_dict` data."""
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ParseError(f"{where}: not a netdyn bond graph (expected format: {FORMAT})")
    format_version(data, where, VERSION)   # (1: read as well)
    unknown = set(data) - {"format", "format_version", "version", "name", "effort", "flow", "units", "parameters", "symbols", "inputs",
                           "elements", "bonds"}
    if unknown:
        raise ParseError(f"{where}: unknown key {sorted(unknown)[0]!r}")
    symbols = {}
    for name, assumptions in (data.get("symbols") or {}).items():
        if not str(name).isidentifier():
            raise ParseError(f"{where}: symbol name {name!r} is not an identifier")
        symbols[name] = sp.Symbol(name, **{k: bool(v) for k, v in (assumptions or {}).items()})
    inputs = {}
    for name in data.get("inputs") or []:
        if not str(name).isidentifier():
            raise ParseError(f"{where}: input name {name!r} is not an identifier")
        inputs[name] = sp.Function(name)
    names = {"symbols": symbols, "inputs": inputs}
    units = data.get("units") or {}
    if not isinstance(units, dict):
        raise ParseError(f"{where}: units must be a mapping {{effort: ..., flow: ...}}")
    bg = BondGraph(data.get("name") or "bond graph", effort=str(data.get("effort") or "effort"),
                   flow=str(data.get("flow") or "flow"), units={str(k): str(v) for k, v in units.items()})
    parameters = data.get("parameters") or {}
    if not isinstance(parameters, dict):
        raise ParseError(f"{where}: parameters must be a mapping of names to {{value, unit, description}}")
    for pname, spec in parameters.items():
        if not isinstance(spec, dict) or "value" not in spec or set(spec) - {"value", "unit", "description"}:
            raise ParseError(f"{where}: parameter {pname!r} needs a value (and may have a unit and a description)")
        bg.parameter(str(pname), parse(spec["value"], {}, f"parameter {pname}"), spec.get("unit"),
                     spec.get("description"))
    ports = {}
    for k, e in enumerate(data.get("elements") or []):
        if not isinstance(e, dict) or "kind" not in e or "name" not in e:
            raise ParseError(f"{where}: element {k + 1} needs a kind and a name")
        kind, name = str(e["kind"]), str(e["name"])
        if kind not in KINDS or kind == "field":
            raise ParseError(f"{where}: element {name}: unknown kind {kind!r}")
        params = {}
        field = kind in ("C", "I", "R") and isinstance(e.get("ports"), list) and len(e["ports"]) > 1
        if field:
            params["ports"] = len(e["ports"])
        if isinstance(e.get("port_names"), list):   # named ports (a two-port's or a field's)
            params["ports"] = [str(x) for x in e["port_names"]]
        for p, v in e.items():
            if p in ("kind", "name", "ports", "domain", "port_names"):
                continue
            if p == "by":
                params[p] = str(v)
            elif field and isinstance(v, list):   # a field's matrix, row by row
                if not all(isinstance(row, list) for row in v):
                    raise ParseError(f"{where}: {name}.{p}: a field's matrix is a list of rows")
                params[p] = [[parse(x, names, f"{name}.{p}") for x in row] for row in v]
            elif field and p in ("energy", "coenergy", "content", "cocontent"):   # q1..qn, f1..fn, e1..en, p1..pn
                params[p] = parse(v, names, f"{name}.{p}")
            elif p == "law" and kind in ("C", "I", "R"):
                params[p] = _relation(v, names, kind, f"{name}.law")
            elif p in _EXPRESSIONS:
                params[p] = parse(v, names, f"{name}.{p}", function_variable(kind, p))
            else:
                params[p] = v  # unknown parameter: BondGraph.add says so, naming the element
        bg.add(kind, name, **params)
        texts = {p: v for p, v in e.items() if (p in _EXPRESSIONS or p == "law") and isinstance(v, str)}
        if texts:   # as the file writes them: the next save writes them again
            bg.graph.nodes[name]["text"] = texts
        if e.get("domain"):
            bg.graph.nodes[name]["domain"] = str(e["domain"])
        if e.get("ports"):
            ports[name] = [str(b) for b in e["ports"]]
    for k, b in enumerate(data.get("bonds") or []):
        if not isinstance(b, dict) or "from" not in b or "to" not in b:
            raise ParseError(f"{where}: bond {k + 1} needs 'from' and 'to'")
        bg.bond(str(b["from"]), str(b["to"]), name=str(b["name"]) if b.get("name") else None)
    for name, order in ports.items():
        if sorted(order) != sorted(bg.bonds_of(name)):
            raise ParseError(f"{where}: {name}: ports {order} are not its bonds {bg.bonds_of(name)}")
        bg.graph.nodes[name]["bonds"] = list(order)
        bg.graph.nodes[name]["slots"] = {b: i for i, b in enumerate(order)}
    return bg


def _relation(text, names, kind, where):
    """A ``law`` entry ``"e = ..."`` as ``(lhs, rhs)``: the left side one of the element's two variables."""
    if not isinstance(text, str) or " = " not in text and text.count("=") != 1:
        raise ParseError(f"{where}: a law is one relation 'y = expression', got {text!r}")
    lhs, rhs = text.split(" = ", 1) if " = " in text else text.split("=", 1)
    x, y = VARIABLES[kind]
    lhs = lhs.strip()
    if lhs not in (str(x), str(y)):
        raise ParseError(f"{where}: the law of a {kind} element gives {y} or {x}, not {lhs!r}")
    other = x if lhs == str(y) else y
    return sp.Symbol(lhs), parse(rhs.strip(), names, where, other)


def dumps(bg, fmt="json"):
    """The file text (``"json"`` or ``"yaml"``)."""
    data = to_dict(bg)
    if fmt == "json":
        return json.dumps(data, indent=1)
    if fmt == "yaml":
        import yaml
        return yaml.safe_dump(data, sort_keys=False)
    raise ModelError(f"unknown bond-graph file format {fmt!r}; use 'json' or 'yaml'")


def loads(text, fmt=None, where="bond graph file"):
    """A bond graph from file text (JSON, or YAML read with ``yaml.safe_load``)."""
    if fmt is None:
        fmt = "json" if text.lstrip().startswith("{") else "yaml"
    try:
        if fmt == "json":
            data = json.loads(text)
        else:
            import yaml
            data = yaml.safe_load(text)
    except Exception as exc:  # noqa: BLE001 - any reader error is a parse error of this file
        raise ParseError(f"{where}: cannot read it as {fmt.upper()} ({exc})") from None
    return from_dict(data, where)


def save_bond_graph(bg: BondGraph, path: PathArg) -> Path:
    """Write ``bg`` to ``path`` (``.json``, or ``.yaml``/``.yml``); read it back with :func:`load_bond_graph`.

    >>> import netdyn
    >>> bg = netdyn.BondGraph("mass")
    >>> bg.add("Se", "F", effort=2.0); bg.add("I", "m", I=4.0); _ = bg.bond("F", "m")
    >>> import os, tempfile
    >>> netdyn.save_bond_graph(bg, os.path.join(tempfile.mkdtemp(), "mass.bg.yaml")).name
    'mass.bg.yaml'
    """
    path = as_path(path, "bond-graph file")
    fmt = "yaml" if path.suffix in (".yaml", ".yml") else "json"
    return write_text(path, dumps(bg, fmt), "bond-graph file")  # a missing folder made; OSError -> ExportError


def load_bond_graph(path: PathArg) -> BondGraph:
    """Read a bond graph written by :func:`save_bond_graph` (or by hand).

    >>> import netdyn
    >>> bg = netdyn.BondGraph("mass")
    >>> bg.add("Se", "F", effort=2.0); bg.add("I", "m", I=4.0); _ = bg.bond("F", "m")
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "mass.bg.json")
    >>> _ = netdyn.save_bond_graph(bg, path)
    >>> netdyn.load_bond_graph(path)
    BondGraph('mass': 2 elements, 1 bonds)
    """
    if not isinstance(path, (str, os.PathLike)):
        raise ParseError(f"load_bond_graph needs a path (str or os.PathLike), not {type(path).__name__}")
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:  # a missing file is a ParseError, as for load_model
        raise ParseError(f"{path}: cannot read the bond-graph file "
                         f"({getattr(exc, 'strerror', None) or exc})") from None
    return loads(text, "yaml" if path.suffix in (".yaml", ".yml") else "json", where=str(path))
