"""Saving and loading bond graphs as JSON or YAML, with safe expression parsing.

The file lists the elements (kind, name, parameters), the bonds (name, from,
to) and the symbols the expressions use::

    format: netdyn-bondgraph
    version: 1
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
netdyn.errors.ParseError: C1.energy: '__import__' is not an allowed function (allowed: Abs, Heaviside, Max, Min, Piecewise, acos, asin, atan, atan2, cos, cosh, exp, log, sign, sin, sinh, sqrt, tan, tanh)
"""
from __future__ import annotations

import ast
import json
from pathlib import Path

import sympy as sp

from netdyn.bondgraph.graph import BondGraph
from netdyn.bondgraph.kinds import FUNCTION_VARIABLE, KINDS
from netdyn.errors import ModelError, ParseError
from netdyn.lagrange.exprtext import symbol_table, to_text
from netdyn.symbols import t

FORMAT, VERSION = "netdyn-bondgraph", 1
FUNCTIONS = {name: getattr(sp, name) for name in (
    "sin", "cos", "tan", "exp", "log", "sqrt", "sinh", "cosh", "tanh", "asin", "acos", "atan", "atan2", "Abs",
    "sign", "Heaviside", "Min", "Max", "Piecewise")}
CONSTANTS = {"pi": sp.pi, "E": sp.E, "oo": sp.oo, "True": sp.true, "False": sp.false}
_BINOPS = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
           ast.Div: lambda a, b: a / b, ast.Pow: lambda a, b: a ** b, ast.BitAnd: sp.And, ast.BitOr: sp.Or}
_COMPARE = {ast.Lt: sp.Lt, ast.LtE: sp.Le, ast.Gt: sp.Gt, ast.GtE: sp.Ge, ast.Eq: sp.Eq, ast.NotEq: sp.Ne}
_EXPRESSIONS = ("effort", "flow", "C", "I", "R", "ratio", "energy", "coenergy", "content")


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
    for n in bg.elements:
        kind = bg.kind(n)
        if kind == "field":
            raise ModelError(f"{n}: a field element wraps network elements and has no bond-graph file form; "
                             "save the network with netdyn.save_model instead")
        entry = {"kind": kind, "name": n}
        for p, v in bg.params(n).items():
            if p == "by":
                entry[p] = v
            elif isinstance(v, sp.MatrixBase):   # a field's matrix: rows of expressions
                entry[p] = [[to_text(x) for x in v.row(i)] for i in range(v.rows)]
                exprs.extend(v)
            else:
                entry[p] = to_text(v)
                exprs.append(v)
        if kind in ("TF", "GY", "MTF", "MGY") or bg.is_field(n):
            entry["ports"] = bg.bonds_of(n)
        domain = bg.graph.nodes[n].get("domain")
        if domain:
            entry["domain"] = domain
        elements.append(entry)
    table = symbol_table(*exprs) if exprs else {}
    symbols = {k: v for k, v in table.items() if not k.endswith("()")}
    inputs = sorted({u.func.__name__ for e in exprs for u in sp.sympify(e).atoms(sp.core.function.AppliedUndef)})
    bonds = [{"name": b, "from": bg.ends(b)[0], "to": bg.ends(b)[1]} for b in bg.bond_names]
    return {"format": FORMAT, "version": VERSION, "name": bg.name, "effort": bg.effort_name, "flow": bg.flow_name,
            "symbols": symbols, "inputs": inputs, "elements": elements, "bonds": bonds}


def from_dict(data, where="bond graph file"):
    """Build a :class:`~netdyn.bondgraph.graph.BondGraph` from :func:`to_dict` data."""
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ParseError(f"{where}: not a netdyn bond graph (expected format: {FORMAT})")
    if not isinstance(data.get("version"), int) or data["version"] > VERSION:
        raise ParseError(f"{where}: format version {data.get('version')!r} is newer than this netdyn reads ({VERSION})")
    unknown = set(data) - {"format", "version", "name", "effort", "flow", "symbols", "inputs", "elements", "bonds"}
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
    bg = BondGraph(data.get("name") or "bond graph", effort=str(data.get("effort") or "effort"),
                   flow=str(data.get("flow") or "flow"))
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
        for p, v in e.items():
            if p in ("kind", "name", "ports", "domain"):
                continue
            if p == "by":
                params[p] = str(v)
            elif field and isinstance(v, list):   # a field's matrix, row by row
                if not all(isinstance(row, list) for row in v):
                    raise ParseError(f"{where}: {name}.{p}: a field's matrix is a list of rows")
                params[p] = [[parse(x, names, f"{name}.{p}") for x in row] for row in v]
            elif field and p in ("energy", "coenergy", "content"):   # variables q1..qn / f1..fn
                params[p] = parse(v, names, f"{name}.{p}")
            elif p in _EXPRESSIONS:
                var = FUNCTION_VARIABLE.get(p) if p in ("energy", "coenergy", "content") else (
                    FUNCTION_VARIABLE["ratio_modulated"] if p == "ratio" and kind in ("MTF", "MGY") else None)
                params[p] = parse(v, names, f"{name}.{p}", var)
            else:
                params[p] = v  # unknown parameter: BondGraph.add says so, naming the element
        bg.add(kind, name, **params)
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
    return bg


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


def save_bond_graph(bg, path):
    """Write ``bg`` to ``path`` (``.json``, or ``.yaml``/``.yml``); read it back with :func:`load_bond_graph`.

    >>> import netdyn
    >>> bg = netdyn.BondGraph("mass")
    >>> bg.add("Se", "F", effort=2.0); bg.add("I", "m", I=4.0); _ = bg.bond("F", "m")
    >>> import os, tempfile
    >>> netdyn.save_bond_graph(bg, os.path.join(tempfile.mkdtemp(), "mass.bg.yaml")).name
    'mass.bg.yaml'
    """
    path = Path(path)
    fmt = "yaml" if path.suffix in (".yaml", ".yml") else "json"
    path.write_text(dumps(bg, fmt))
    return path


def load_bond_graph(path):
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
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:  # a missing file is a ParseError, as for load_model
        raise ParseError(f"{path}: cannot read the bond-graph file "
                         f"({getattr(exc, 'strerror', None) or exc})") from None
    return loads(text, "yaml" if path.suffix in (".yaml", ".yml") else "json", where=str(path))
