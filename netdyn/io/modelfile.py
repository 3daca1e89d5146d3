"""Model files: a ``Network`` saved to and loaded from JSON or YAML (chosen by the file extension).

A model file lists the network's bodies and elements in the order they were
added, each as its class and the arguments it was constructed with (every
element records them, see :class:`netdyn.components.base.Recorded`), so any
element class — including ones written after this module — saves and loads
without code of its own::

    format: netdyn-model
    format_version: 1
    name: rlc
    tran: {tstep: 1.0e-05, tstop: 0.01}      # optional: a netlist's title, tran, initial_voltages,
                                             # element_ic and params are kept
    bodies: []
    elements:
    - class: netdyn.components.electrical.Resistor
      args: {name: R1, a: in, b: out, R: 1000.0}
    - class: netdyn.components.electrical.VoltageSource
      args: {name: V1, plus: in, minus: '0', v: {expr: 5*sin(100*pi*t), symbols: {t: {}}}}

Argument values are plain numbers and strings, or tagged objects:
``{expr: <sympy string>, symbols: {name: assumptions}}`` (sources as
expressions of ``t``, symbolic parameters), ``{function: <expr in arg>}`` (an
energy function such as ``Resistor(dissipation=...)``), ``{tuple: [...]}``,
``{port: [domain, a, b]}`` and ``{ref: name}`` (another element or body of the
network). ``class`` may be shortened to the class name when it is unique
(``Resistor``; ``translational.Spring``).

Units are SI throughout, as everywhere in netdyn: ohm, henry, farad, volt,
ampere, coulomb, weber, second; kilogram, metre, newton, N/m (springs),
N·s/m (dampers); kg·m², radian, N·m, N·m/rad, N·m·s/rad. Numbers are stored
exactly (shortest ``repr`` of each double), so a round trip gives the same
elements, the same values and the same derived equations.

>>> import netdyn, os, tempfile
>>> from netdyn.components.electrical import VoltageSource, Resistor, Capacitor
>>> net = netdyn.Network("rc")
>>> _ = net.add(VoltageSource("V1", "in", "0", 1.0), Resistor("R1", "in", "out", 1e3),
...             Capacitor("C1", "out", "0", 1e-6))
>>> path = os.path.join(tempfile.mkdtemp(), "rc.yaml")
>>> save_model(net, path)
>>> back = load_model(path)
>>> sorted(back.elements), back["R1"].values == net["R1"].values
(['C1', 'R1', 'V1'], True)
"""
from __future__ import annotations

import inspect
import json
import os
import numbers

import numpy as np
import sympy as sp

from netdyn.components.base import REGISTRY, Port
from netdyn.errors import NetdynError, ParseError
from netdyn.lagrange.exprtext import from_text, symbol_table, to_text
from netdyn.graph.network import Network

FORMAT = "netdyn-model"
FORMAT_VERSION = 1
_ARG = sp.Symbol("arg")
#: network attributes kept in the file (a netlist's title, .tran, .ic, ic= values and .param values)
ATTRIBUTES = ("title", "tran", "initial_voltages", "element_ic", "params")


class ExpressionFunction:
    """A one-argument function given by an expression in ``arg`` (an energy function read from a file).

    >>> ExpressionFunction(sp.Symbol("arg")**2)(3)
    9
    """

    def __init__(self, expr):
        self.expr = expr

    def __call__(self, value):
        return self.expr.xreplace({_ARG: sp.sympify(value)})


# ------------------------------------------------------------------------------------------ encoding

def _encode(value, where, names):
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, numbers.Integral) and not isinstance(value, sp.Basic):
        return int(value)
    if isinstance(value, numbers.Real) and not isinstance(value, sp.Basic):
        return float(value)
    if isinstance(value, sp.Basic):
        return {"expr": to_text(value), "symbols": symbol_table(value)}
    if isinstance(value, ExpressionFunction):
        return {"function": to_text(value.expr), "symbols": symbol_table(value.expr)}
    if isinstance(value, Port):
        return {"port": [value.domain, value.a, value.b]}
    if isinstance(value, tuple):
        return {"tuple": [_encode(v, where, names) for v in value]}
    if isinstance(value, (list, np.ndarray)):
        return [_encode(v, where, names) for v in list(value)]
    if isinstance(value, dict):
        return {"dict": {str(k): _encode(v, where, names) for k, v in value.items()}}
    name = getattr(value, "name", None)
    if isinstance(name, str) and name in names and names[name] is value:
        return {"ref": name}
    if callable(value):
        try:
            expr = sp.sympify(value(_ARG))
        except Exception as exc:  # noqa: BLE001 - any failure of user code means: not symbolic
            raise NetdynError(f"{where}: the function {value!r} does not accept a sympy symbol ({exc}); "
                              "write it with sympy functions so it can be saved") from None
        return {"function": to_text(expr), "symbols": symbol_table(expr)}
    raise NetdynError(f"{where}: cannot save a value of type {type(value).__name__} ({value!r}); "
                      "use numbers, strings or sympy expressions")


def _decode(value, where, built):
    if isinstance(value, list):
        return [_decode(v, where, built) for v in value]
    if not isinstance(value, dict):
        return value
    if "expr" in value and set(value) <= {"expr", "symbols"}:
        return from_text(value["expr"], value.get("symbols"), where)
    if "function" in value and set(value) <= {"function", "symbols"}:
        table = dict(value.get("symbols") or {})
        table.setdefault("arg", {})
        return ExpressionFunction(from_text(value["function"], table, where))
    if list(value) == ["tuple"]:
        return tuple(_decode(v, where, built) for v in value["tuple"])
    if list(value) == ["port"]:
        return Port(*value["port"])
    if list(value) == ["dict"]:
        return {k: _decode(v, where, built) for k, v in value["dict"].items()}
    if list(value) == ["ref"]:
        if value["ref"] not in built:
            raise ParseError(f"{where}: refers to {value['ref']!r}, which is not defined before it in the file")
        return built[value["ref"]]
    raise ParseError(f"{where}: unknown value {value!r}; tagged values are expr, function, tuple, port, "
                     "dict or ref")


def _plain(value, where):
    """A network attribute as JSON-able plain data (numbers, strings, None, dicts and lists of them)."""
    if isinstance(value, dict):
        return {str(k): _plain(v, where) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v, where) for v in value]
    if value is None or isinstance(value, (bool, str)):
        return value
    try:
        return float(value)
    except (TypeError, ValueError):
        raise NetdynError(f"network attribute {where}: cannot save {value!r}") from None


def _class_name(cls):
    return f"{cls.__module__}.{cls.__qualname__}"


def _parameters(cls):
    return list(inspect.signature(cls.__init__).parameters.values())[1:]


def _entry(obj, names):
    """``{"class": ..., "args": {...}}`` for one element or body."""
    record = obj.__dict__.get("_constructor")
    if record is None:
        raise NetdynError(f"{obj.name}: its class {type(obj).__name__} does not record its constructor "
                          "arguments; derive it from netdyn.components.base.Recorded to save it")
    cls, args, kwargs = record
    if "<locals>" in cls.__qualname__:
        raise NetdynError(f"{obj.name}: class {cls.__qualname__} is defined inside a function; "
                          "define it at module level to save it")
    bound = inspect.signature(cls.__init__).bind(obj, *args, **kwargs).arguments
    bound.pop(next(iter(bound)))  # self
    fields = {}
    for p in _parameters(cls):
        if p.name not in bound:
            continue
        if p.kind is p.VAR_KEYWORD:
            fields.update(bound[p.name])
        else:
            fields[p.name] = bound[p.name]
    where = f"{obj.name} ({cls.__name__})"
    return {"class": _class_name(cls), "args": {k: _encode(v, f"{where} argument {k}", names)
                                                for k, v in fields.items()}}


def model_to_dict(net):
    """The model-file content of a network as plain dicts and lists (what :func:`save_model` writes)."""
    names = {**net.bodies, **net.elements}
    doc = {"format": FORMAT, "format_version": FORMAT_VERSION, "name": net.name}
    for key in ATTRIBUTES:
        value = getattr(net, key, None)
        if value is not None:
            doc[key] = _plain(value, key)
    doc["bodies"] = [_entry(b, names) for b in net.bodies.values()]
    doc["elements"] = [_entry(e, names) for e in net.elements.values()]
    return doc


# ------------------------------------------------------------------------------------------ decoding

def _lookup_class(name, where):
    cls = REGISTRY.get(name)
    if cls is None and name.startswith("netdyn.") and "." in name:
        import importlib
        try:
            importlib.import_module(name.rsplit(".", 1)[0])
        except ImportError:
            pass
        cls = REGISTRY.get(name)
    if cls is None:
        matches = [k for k in REGISTRY if k == name or k.endswith("." + name)]
        if len(matches) == 1:
            cls = REGISTRY[matches[0]]
        elif matches:
            raise ParseError(f"{where}: class {name!r} is ambiguous: {sorted(matches)}; give the full name")
    if cls is None:
        raise ParseError(f"{where}: unknown element class {name!r}; import the module that defines it before "
                         "loading, or check the spelling")
    return cls


def _build(entry, index, built):
    where = f"{'element' if 'class' in entry else 'entry'} {index + 1}"
    if not isinstance(entry, dict) or "class" not in entry:
        raise ParseError(f"{where}: expected a mapping with 'class' and 'args', got {entry!r}")
    args = entry.get("args") or {}
    if not isinstance(args, dict):
        raise ParseError(f"{where}: 'args' must be a mapping of argument names to values")
    if isinstance(args.get("name"), str):
        where = f"{where} ({args['name']})"
    cls = _lookup_class(str(entry["class"]), where)
    fields = {k: _decode(v, f"{where} argument {k}", built) for k, v in args.items()}
    params = _parameters(cls)
    positional = []
    star = next((p for p in params if p.kind is p.VAR_POSITIONAL), None)
    if star is not None:
        for p in params:
            if p is star:
                positional += list(fields.pop(p.name, []))
                break
            positional.append(fields.pop(p.name))
    try:
        return cls(*positional, **fields)
    except TypeError as exc:
        raise ParseError(f"{where}: wrong arguments for {cls.__name__}: {exc}") from None


def model_from_dict(doc):
    """A ``Network`` from model-file content (see :func:`model_to_dict`)."""
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise ParseError(f"not a netdyn model file: expected 'format: {FORMAT}' at the top")
    version = doc.get("format_version")
    if not isinstance(version, int):
        raise ParseError("the model file has no integer 'format_version'")
    if version > FORMAT_VERSION:
        raise ParseError(f"model file format_version {version} is newer than this netdyn reads "
                         f"({FORMAT_VERSION}); upgrade netdyn")
    net = Network(doc.get("name") or "network")
    for key in ATTRIBUTES:
        if doc.get(key) is not None:
            setattr(net, key, doc[key])
    built = {}
    entries = list(doc.get("bodies") or []) + list(doc.get("elements") or [])
    for i, entry in enumerate(entries):
        obj = _build(entry, i, built)
        net.add(obj)
        built[obj.name] = obj
    return net


def _kind(path):
    ext = os.path.splitext(str(path))[1].lower()
    if ext == ".json":
        return "json"
    if ext in (".yaml", ".yml"):
        return "yaml"
    raise ParseError(f"{path}: unknown model-file extension {ext!r}; use .json, .yaml or .yml")


def save_model(net, path):
    """Save a network to ``path`` (JSON for ``.json``, YAML for ``.yaml``/``.yml``)."""
    kind = _kind(path)
    doc = model_to_dict(net)
    with open(path, "w") as fh:
        if kind == "json":
            json.dump(doc, fh, indent=2)
            fh.write("\n")
        else:
            import yaml
            yaml.safe_dump(doc, fh, sort_keys=False, default_flow_style=None, width=110)


def load_model(path):
    """Load a network saved by :func:`save_model`; syntax errors name the line."""
    kind = _kind(path)
    try:
        with open(path) as fh:
            text = fh.read()
    except OSError as exc:
        raise ParseError(f"{path}: cannot read the model file ({exc.strerror})") from None
    if kind == "json":
        try:
            doc = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ParseError(f"not valid JSON: {exc.msg}", line=exc.lineno) from None
    else:
        import yaml
        try:
            doc = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            raise ParseError(f"not valid YAML: {getattr(exc, 'problem', None) or exc}",
                             line=mark.line + 1 if mark is not None else None) from None
    return model_from_dict(doc)
