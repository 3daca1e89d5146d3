"""Model files: a ``Network`` saved to and loaded from JSON or YAML (chosen by the file extension).

A model file lists the network's bodies and elements in the order they were
added, each as its class and the arguments it was constructed with (every
element records them, see :class:`netdyn.components.base.Recorded`), so any
element class — including ones written after this module — saves and loads
without code of its own::

    format: netdyn-model
    format_version: 1                        # 2 when the file holds an assembly (below)
    name: rlc
    tran: {tstep: 1.0e-05, tstop: 0.01}      # optional: a netlist's title, tran, initial_voltages,
                                             # element_ic and params are kept
    bodies: []
    elements:
    - class: netdyn.components.electrical.Resistor
      args: {name: R1, a: in, b: out, R: 1000.0}
    - class: netdyn.components.electrical.VoltageSource
      args: {name: V1, plus: in, minus: '0', v: {expr: 5*sin(100*pi*t), symbols: {t: {}}}}

A network that knows how it assembles (``net.assembly``: every ready-made linkage of
:mod:`netdyn.linkages`, or one given ``net.set_assembly(...)``) is saved with it, after the elements, as
``format_version: 2``::

    assembly:
      guess: {x_crank: 0.25, y_crank: 0.0, theta_crank: 0.0, x_rod: 0.94, ...}   # where the position solve starts
      q0: {O: 0.4}                                                                # initial values held
      f0: {O_dot: 2.0}

``netdyn.simulate`` and ``netdyn simulate FILE`` start from it where the caller gives no ``guess``/``q0``/``f0``
(:mod:`netdyn.graph.assembly`). Each part maps a coordinate or joint-coordinate name of the network to a
number (a multi-coordinate joint: a list of numbers); a name that is none of the network's, a value that is
not a finite number, or an ``assembly`` in a version-1 file is a :class:`~netdyn.errors.ParseError`.
Files without an assembly are written as version 1, so older netdyn versions read them; every version-1
file loads unchanged.

Argument values are plain numbers and strings, or tagged objects:
``{expr: <expression>, symbols: {name: assumptions}}`` (sources as
expressions of ``t``, symbolic parameters), ``{function: <expr in arg>}`` (an
energy function such as ``Resistor(dissipation=...)``), ``{tuple: [...]}``,
``{port: [domain, a, b]}`` and ``{ref: name}`` (another element or body of the
network). ``class`` may be shortened to the class name when it is unique
(``Resistor``; ``translational.Spring``).

Loading never runs code from the file: YAML is read with PyYAML's safe loader
(aliases refused too), expressions are parsed by the restricted reader of
:mod:`netdyn.lagrange.exprtext` (a whitelist of operators and functions, never ``eval``),
energy functions are expressions in ``arg``, never Python source, plain string
values are SPICE numbers (``"1k"``) or parameter names, and ``class`` must name a
registered element class. Anything else is a :class:`~netdyn.errors.ParseError`
naming the entry, the argument and the offending token.

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

import dataclasses
import importlib
import inspect
import json
import numbers
import os
import re

import numpy as np
import sympy as sp

from netdyn.components.base import REGISTRY, Port
from netdyn.errors import NetdynError, ParseError
from netdyn.lagrange.exprtext import from_text, symbol_table, to_text
from netdyn.graph.network import Network
from netdyn.graph.assembly import PARTS as ASSEMBLY_PARTS, Assembly
from netdyn.io.cards import TranCard
from netdyn.files import write_text
from netdyn.validate import format_version

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # names for the hints only (annotations are not evaluated)
    from netdyn.hints import PathArg

FORMAT = "netdyn-model"
_CLASS_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]*(\.[A-Za-z][A-Za-z0-9_]*)*$")
#: the newest model-file version this netdyn reads and writes (2: the optional ``assembly``)
FORMAT_VERSION = 2
#: the version of a file without an assembly (what netdyn 0.2 and earlier read)
FORMAT_VERSION_PLAIN = 1
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
        table = value.get("symbols") or {}
        if not isinstance(table, dict):
            raise ParseError(f"{where}: 'symbols' must be a mapping of names to assumptions")
        table = {"arg": {}, **table}
        return ExpressionFunction(from_text(value["function"], table, where))
    tag = list(value)
    inner = value[tag[0]] if len(tag) == 1 else None
    if tag == ["tuple"] and isinstance(inner, list):
        return tuple(_decode(v, where, built) for v in inner)
    if tag == ["port"] and isinstance(inner, list) and len(inner) == 3 and all(isinstance(x, str) for x in inner):
        return Port(*inner)
    if tag == ["dict"] and isinstance(inner, dict):
        return {k: _decode(v, where, built) for k, v in inner.items()}
    if tag == ["ref"] and isinstance(inner, str):
        if value["ref"] not in built:
            raise ParseError(f"{where}: refers to {value['ref']!r}, which is not defined before it in the file")
        return built[value["ref"]]
    raise ParseError(f"{where}: unknown value {value!r:.100}; tagged values are {{expr: text}}, "
                     "{function: text}, {tuple: [...]}, {port: [domain, a, b]}, {dict: {...}} or {ref: name}")


def _plain(value, where):
    """A network attribute as JSON-able plain data (numbers, strings, None, dicts and lists of them)."""
    if isinstance(value, TranCard):
        value = dataclasses.asdict(value)
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
    assembly = getattr(net, "assembly", None)
    doc = {"format": FORMAT, "format_version": FORMAT_VERSION if assembly else FORMAT_VERSION_PLAIN, "name": net.name}
    for key in ATTRIBUTES:
        value = getattr(net, key, None)
        if value is not None:
            doc[key] = _plain(value, key)
    doc["bodies"] = [_entry(b, names) for b in net.bodies.values()]
    doc["elements"] = [_entry(e, names) for e in net.elements.values()]
    if assembly:
        doc["assembly"] = assembly.as_dict()
    return doc


# ------------------------------------------------------------------------------------------ decoding

def _lookup_class(name, where):
    if not _CLASS_NAME.match(name):
        raise ParseError(f"{where}: {name[:80]!r} is not a class name (dotted identifiers, e.g. "
                         "netdyn.components.electrical.Resistor)")
    cls = REGISTRY.get(name)
    if cls is None and name.startswith("netdyn.") and "." in name:
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
    where = f"{'element' if isinstance(entry, dict) and 'class' in entry else 'entry'} {index + 1}"
    if not isinstance(entry, dict) or "class" not in entry:
        raise ParseError(f"{where}: expected a mapping with 'class' and 'args', got {entry!r}")
    args = entry.get("args") or {}
    if not isinstance(args, dict):
        raise ParseError(f"{where}: 'args' must be a mapping of argument names to values")
    if isinstance(args.get("name"), str):
        where = f"{where} ({args['name']})"
    cls = _lookup_class(str(entry["class"]), where)
    bad = [k for k in args if not isinstance(k, str) or not k.isidentifier() or k.startswith("_")]
    if bad:
        raise ParseError(f"{where}: {bad[0]!r} is not an argument name")
    fields = {k: _decode(v, f"{where} argument {k}", built) for k, v in args.items()}
    params = _parameters(cls)
    positional = []
    star = next((p for p in params if p.kind is p.VAR_POSITIONAL), None)
    if star is not None:
        for p in params:
            if p is star:
                rest = fields.pop(p.name, [])
                if not isinstance(rest, (list, tuple)):
                    raise ParseError(f"{where}: argument {p.name} must be a list")
                positional += list(rest)
                break
            if p.name not in fields:
                raise ParseError(f"{where}: {cls.__name__} needs the argument {p.name!r}")
            positional.append(fields.pop(p.name))
    try:
        return cls(*positional, **fields)
    except (TypeError, ValueError, ArithmeticError, KeyError, IndexError, AttributeError) as exc:
        raise ParseError(f"{where}: wrong arguments for {cls.__name__}: {type(exc).__name__}: {exc}") from None


def model_from_dict(doc):
    """A ``Network`` from model-file content (see :func:`model_to_dict`)."""
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise ParseError(f"not a netdyn model file: expected 'format: {FORMAT}' at the top")
    version = format_version(doc, "model file", FORMAT_VERSION)
    name = doc.get("name") or "network"
    if not isinstance(name, str):
        raise ParseError(f"the model file's 'name' must be a string, got {name!r:.80}")
    net = Network(name)
    for key in ATTRIBUTES:
        if doc.get(key) is not None:
            setattr(net, key, _attribute(key, doc[key]))
    built = {}
    for key in ("bodies", "elements"):
        if not isinstance(doc.get(key) or [], list):
            raise ParseError(f"the model file's {key!r} must be a list of entries")
    entries = list(doc.get("bodies") or []) + list(doc.get("elements") or [])
    for i, entry in enumerate(entries):
        try:
            obj = _build(entry, i, built)
        except RecursionError:
            raise ParseError(f"entry {i + 1}: nested too deeply") from None
        net.add(obj)
        built[obj.name] = obj
    if doc.get("assembly") is not None:
        if version < 2:
            raise ParseError(f"the model file has an 'assembly' but format_version {version}; an assembly needs "
                             "format_version 2")
        net.assembly = _assembly(net, doc["assembly"])
    return net


def _assembly(net, value):
    """The file's ``assembly`` checked: parts guess/q0/f0, each names -> numbers (or lists of numbers), every
    name a coordinate or joint coordinate of the network."""
    if not isinstance(value, dict) or not set(value) <= set(ASSEMBLY_PARTS):
        extra = sorted(map(str, set(value) - set(ASSEMBLY_PARTS))) if isinstance(value, dict) else None
        raise ParseError(f"the model file's 'assembly' must be a mapping with {', '.join(ASSEMBLY_PARTS)}"
                         + (f"; {extra[0][:40]!r} is none of them" if extra else f", got {value!r:.80}"))
    parts = {}
    for part, values in value.items():
        if values is None:
            continue
        if not isinstance(values, dict):
            raise ParseError(f"the model file's assembly {part} must be a mapping of names to numbers, "
                             f"got {values!r:.80}")
        for k, v in values.items():
            ok = _number(v) or (isinstance(v, list) and 0 < len(v) <= 6 and all(_number(x) for x in v))
            if not isinstance(k, str) or not ok:
                raise ParseError(f"the model file's assembly {part}[{str(k)[:60]!r}]: {v!r:.60} is not a number "
                                 "(or a list of numbers for a multi-coordinate joint)")
        parts[part] = values
    try:
        net.assembly = Assembly(**parts)  # names checked against the network, values finite
    except NetdynError as exc:
        raise ParseError(f"the model file's {exc}") from None
    return net.assembly


def _number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _attribute(key, value):
    """A network attribute from the file, checked: the shapes netdyn itself writes."""
    ok = True
    if key == "title":
        ok = isinstance(value, str)
    elif key == "tran":
        ok = isinstance(value, dict) and all(
            isinstance(k, str) and (v is None or _number(v) or (k == "uic" and isinstance(v, bool)))
            for k, v in value.items()) and _number(value.get("tstop")) and \
            set(value) <= {f.name for f in dataclasses.fields(TranCard)}
        if ok:
            return TranCard(**{"tstep": None, **value})
    else:
        ok = isinstance(value, dict) and all(isinstance(k, str) and _number(v) for k, v in value.items())
    if not ok:
        raise ParseError(f"the model file's {key!r} has the wrong shape ({value!r:.80}); see "
                         "netdyn.io.modelfile for what it holds")
    return value


def _kind(path):
    path = os.fspath(path) if isinstance(path, os.PathLike) else str(path)
    ext = os.path.splitext(path)[1].lower()
    if ext == ".json":
        return "json"
    if ext in (".yaml", ".yml"):
        return "yaml"
    raise ParseError(f"{path}: unknown model-file extension {ext!r}; use .json, .yaml or .yml")


def save_model(net: Network, path: PathArg) -> None:
    """Save a network to ``path`` (JSON for ``.json``, YAML for ``.yaml``/``.yml``); :func:`load_model` reads it.

    ``path`` is a ``str`` or ``os.PathLike``; a missing folder is made (:mod:`netdyn.files`), a path that
    cannot be written is an :class:`~netdyn.errors.ExportError`.

    >>> import netdyn
    >>> from netdyn.components.electrical import Resistor, Capacitor
    >>> net = netdyn.Network("rc")
    >>> _ = net.add(Resistor("R1", "a", "0", 2.0), Capacitor("C1", "a", "0", 1e-6))
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "rc.yaml")
    >>> netdyn.save_model(net, path)
    >>> print(open(path).read().splitlines()[0])
    format: netdyn-model
    """
    kind = _kind(path)
    doc = model_to_dict(net)
    if kind == "json":
        text = json.dumps(doc, indent=2) + "\n"
    else:
        import yaml
        text = yaml.safe_dump(doc, sort_keys=False, default_flow_style=None, width=110)
    write_text(path, text, "model file")


def _loader():
    """PyYAML's SafeLoader (plain data only, no Python objects) refusing anchors and aliases, whose
    references would let a small file stand for an exponentially large tree (a "billion laughs")."""
    import yaml

    class NoAliasSafeLoader(yaml.SafeLoader):
        def compose_node(self, parent, index):
            if self.check_event(yaml.AliasEvent):
                event = self.peek_event()
                raise ParseError("YAML aliases (*name) are not allowed in a model file; write the value out",
                                 line=event.start_mark.line + 1)
            return super().compose_node(parent, index)

    return NoAliasSafeLoader


def load_model(path: PathArg) -> Network:
    """Load a network saved by :func:`save_model`; syntax errors name the line.

    >>> import netdyn
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "four_bar.json")
    >>> netdyn.save_model(netdyn.linkages.four_bar(), path)
    >>> same = netdyn.load_model(path)
    >>> same.name, sorted(same.bodies)
    ('four-bar', ['crank', 'rocker', 'rod'])
    """
    if not isinstance(path, (str, os.PathLike)):
        raise ParseError(f"load_model needs a path (str or os.PathLike), not {type(path).__name__}")
    path = os.fspath(path)
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
        except RecursionError:
            raise ParseError(f"{path}: the JSON is nested too deeply") from None
    else:
        import yaml
        try:
            doc = yaml.load(text, Loader=_loader())  # a SafeLoader that also refuses aliases
        except RecursionError:
            raise ParseError(f"{path}: the YAML is nested too deeply") from None
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            raise ParseError(f"not valid YAML: {getattr(exc, 'problem', None) or exc}",
                             line=mark.line + 1 if mark is not None else None) from None
    return model_from_dict(doc)
