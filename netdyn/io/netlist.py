"""Reading SPICE netlists into a :class:`~netdyn.Network`.

:func:`read_netlist` reads the subset of the SPICE (ngspice) netlist language
that maps onto netdyn's linear circuit elements:

* the first line is the title (SPICE never reads it as a card);
* ``*`` comment lines, inline comments after ``;``, `` $`` or ``//``;
  ``+`` continuation lines; names, keywords and suffixes are case-insensitive;
* numbers with SPICE scale factors ``f p n u m k meg g t mil`` (``µ`` for
  ``u``), optionally followed by a unit name: ``10uF``, ``1kOhm``, ``2.2mH``.
  As in SPICE the scale factor wins: ``1F`` is one femtofarad, ``1Mohm`` is a
  milliohm (write ``1meg``).  An unknown suffix (``10x``) is an error;
* ``R``, ``L`` and ``C`` (``L``/``C`` with an optional ``ic=``), ``V`` and
  ``I`` sources (a DC value, ``DC x``, ``SIN(...)``, ``PULSE(...)``,
  ``PWL(...)``; an ``AC`` part is ignored with a note), ``K`` couplings and
  ``X`` subcircuit instances;
* ``.param`` with ``{expr}`` (or ``'expr'``) expressions, ``.subckt`` /
  ``.ends`` (nested definitions and instances, ``params:`` defaults and
  per-instance overrides), ``.tran``, ``.ic``, ``.end``; ``.temp T`` and the
  ``temp=``/``tnom=`` of ``.options`` (°C, the diodes' temperature); the rest of
  ``.options``, ``.control`` blocks, output and other-analysis cards are skipped with a note.

Controlled sources ``E``/``G`` (``n+ n- nc+ nc- value``) and ``F``/``H``
(``n+ n- Vname value``), diodes ``D name a k model [area] [TEMP=°C] [DTEMP=°C]`` with
``.model NAME D(IS= N= RS= ...)`` (the temperature coefficients of :data:`DIODE_PARAMETERS` included), and ``.op`` / ``.ac DEC|OCT|LIN n f1 f2``
(``net.analyses``, ``net.ac``; a source's ``AC mag [phase]`` goes to
``net.ac_sources``) are read too, and switches: ``S n+ n- nc+ nc- model [ON|OFF]`` with ``.model NAME
SW(VT= VH= RON= ROFF=)`` and ``W n+ n- Vname model [ON|OFF]`` with ``.model NAME CSW(IT= IH= RON= ROFF=)``
(ngspice's hysteretic switch, :mod:`netdyn.components.switch`; ``simulate`` locates their switchings). Anything else (transistors, other model
types or diode parameters, ``.include``, unknown dot-cards) raises
:class:`~netdyn.errors.ParseError` with the line number: nothing is dropped silently.

The network is named after the file (its stem: ``rc_filter.cir`` gives ``rc_filter``; text or a file
object without a name gives ``netlist``), which exports make identifiers of; the title line is kept as
``net.title``. What the netlist says beyond its elements is kept on the returned network: ``net.title``, ``net.tran`` (a :class:`~netdyn.io.cards.TranCard`: ``tstep``, ``tstop``, ``tstart``,
``tmax``, ``uic``; or None), ``net.initial_voltages`` (``.ic``: node -> volts),
``net.element_ic`` (``ic=`` of capacitors, volts, and inductors, amperes),
``net.params`` (the evaluated top-level ``.param`` values; R, L and C values written as ``{expressions}`` of
them are also kept as sympy expressions of those names in ``net.value_expressions``, so exports write
``rload`` with its default rather than ``1000``), ``net.temp`` and ``net.tnom`` (°C, ``.temp``
and ``.options temp= tnom=``; None where not given) and
``net.netlist_notes`` (what was skipped or defaulted, one string a note).

>>> net = read_netlist('''RC low-pass
... V1 in 0 PULSE(0 1 0 1u 1u 1m)   ; a 1 ms pulse
... R1 in out {2*rval}
... C1 out 0 100nF ic=0
... .param rval=500
... .tran 1u 2m
... .end
... ''')
>>> sorted(net.elements)
['C1', 'R1', 'V1']
>>> float(net.elements["R1"].values["R"]), float(net.elements["C1"].values["C"])
(1000.0, 1e-07)
>>> net.tran.tstop
0.002
"""
from __future__ import annotations

import warnings

import ast
import gc
import io
import math
import os
import pathlib
import re
from dataclasses import dataclass, field

import sympy as sp

from netdyn.errors import NetdynError, ParseError
from netdyn.validate import NUMBER, SCALE, UNIT_WORDS, parse_value  # noqa: F401 - re-exported
from netdyn.lagrange import sources
from netdyn.components import electrical as el
from netdyn.graph.network import Network
from netdyn.io.cards import TranCard
from netdyn.components import controlled as ctl
from netdyn.components.diode import Diode
from netdyn.components.switch import CurrentSwitch, VoltageSwitch

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # names for the hints only (annotations are not evaluated)
    from netdyn.hints import PathArg
    from typing import IO

__all__ = ["read_netlist", "parse_value"]

GROUND_NAMES = frozenset({"0", "gnd", "ground"})

# SPICE numbers are read by netdyn.validate (the Python API accepts "1k" too)
_NUMBER = NUMBER

UNSUPPORTED_DEVICES = {
    "a": "XSPICE code model", "b": "behavioral source", "j": "JFET", "m": "MOSFET", "n": "device model (OSDI)",
    "o": "lossy transmission line", "p": "coupled transmission line", "q": "bipolar transistor",
    "t": "transmission line", "u": "uniform RC line", "y": "transmission line", "z": "MESFET",
}
SKIPPED_CARDS = {
    ".options": "simulator options", ".option": "simulator options", ".opt": "simulator options",
    ".print": "output directive", ".plot": "output directive",
    ".probe": "output directive", ".meas": "output directive", ".measure": "output directive",
    ".four": "output directive", ".width": "output directive", ".dc": "analysis (netdyn runs transients)",
    ".noise": "analysis (netdyn runs transients)", ".tf": "analysis (netdyn runs transients)",
    ".sens": "analysis (netdyn runs transients)", ".pz": "analysis (netdyn runs transients)",
    ".disto": "analysis (netdyn runs transients)",
}
#: .model parameters netdyn's diode takes
DIODE_PARAMETERS = ("is", "n", "rs", "bv", "ibv", "nbv", "cjo", "vj", "m", "fc", "tt", "eg", "xti", "tnom",
                    "tlev", "tlevc", "cta", "tpb", "tcv", "trs", "trs2", "ttt1", "ttt2", "tm1", "tm2")
#: ngspice's other spellings of them
DIODE_ALIASES = {"cj0": "cjo", "cj": "cjo", "pb": "vj", "mj": "m", "js": "is", "ib": "ibv", "tref": "tnom",
                 "trs1": "trs", "ctc": "cta", "tvj": "tpb"}
#: names that are no ngspice diode model parameter, with what to write instead
DIODE_HINTS = {"tt1": "the transit time's temperature coefficients are TTT1 and TTT2",
               "tt2": "the transit time's temperature coefficients are TTT1 and TTT2",
               "temp": "the device temperature is an instance parameter: D1 a k model TEMP=75 (or .temp 75)",
               "dtemp": "the temperature offset is an instance parameter: D1 a k model DTEMP=10"}
#: instance parameters of a D line: the area factor and the device's own temperature (°C) or offset from the
#: circuit's
DIODE_INSTANCE = ("area", "temp", "dtemp")
#: ngspice diode parameters netdyn reads but does not model (charge storage, temperature, noise, high
#: injection, sidewall and tunnel currents): each is reported once per netlist (a note and a warning) and
#: left out; a name that is no diode parameter at all is refused
DIODE_NOT_MODELLED = (
    "kf", "af", "ikf", "ik", "ikr",
    "isr", "nr", "cjsw", "cjp", "vjsw", "php", "mjsw", "fcs", "jsw", "ns", "ctp", "tphp", "level", "area", "pj",
    "lm", "lp", "wm", "wp", "xom", "xoi", "xm", "xp", "jtun", "jtunsw", "ntun", "xtitun", "keg", "isw", "rth0",
    "cth0", "bv_max", "fv_max", "id_max", "pd_max", "te_max", "gap1", "gap2", "d", "expli",
    "explir", "vp", "bvj", "bvdc",
)
UNSUPPORTED_CARDS = {
    ".include": "file inclusion is not supported; paste the included netlist in",
    ".inc": "file inclusion is not supported; paste the included netlist in",
    ".lib": "libraries are not supported; paste the needed subcircuits in",
    ".func": "user functions are not supported; use .param expressions",
    ".global": "global nodes are not supported; pass the node through the subcircuit's ports",
    ".nodeset": "node sets are not supported; use .ic with .tran ... uic",
    ".if": "conditional netlists are not supported",
    ".csparam": "control-section parameters are not supported",
}


@dataclass
class Limits:
    """Bounds on the work one netlist may ask for (module-wide in :data:`LIMITS`; per call through
    ``read_netlist(..., max_elements=..., max_depth=...)``)."""

    max_elements: int = 250_000     # elements after subcircuit expansion
    max_depth: int = 64             # subcircuit nesting (definitions inside definitions, instances inside instances)


#: the limits in force; raise ``LIMITS.max_elements`` to read larger netlists
LIMITS = Limits()


# --- numbers and expressions ------------------------------------------------------------------

_FUNCTIONS = {
    "sqrt": math.sqrt, "exp": math.exp, "ln": math.log, "log": math.log, "log10": math.log10,
    "sin": math.sin, "cos": math.cos, "tan": math.tan, "asin": math.asin, "acos": math.acos,
    "atan": math.atan, "atan2": math.atan2, "sinh": math.sinh, "cosh": math.cosh, "tanh": math.tanh,
    "abs": abs, "min": min, "max": max, "pow": math.pow, "pwr": math.pow, "floor": math.floor,
    "ceil": math.ceil, "int": lambda x: float(int(x)), "sgn": lambda x: float((x > 0) - (x < 0)),
}
_CONSTANTS = {"pi": math.pi, "e": math.e}
_EXPR_NUMBER = re.compile(r"(?<![\w.])((?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)([A-Za-zµμ]+)?")


#: the functions of ``{expressions}`` as sympy writes them (``symbolic=True``; ``%`` and ``int`` have none)
_SYMPY_FUNCTIONS = {
    "sqrt": sp.sqrt, "exp": sp.exp, "ln": sp.log, "log": sp.log, "log10": lambda x: sp.log(x, 10),
    "sin": sp.sin, "cos": sp.cos, "tan": sp.tan, "asin": sp.asin, "acos": sp.acos, "atan": sp.atan,
    "atan2": sp.atan2, "sinh": sp.sinh, "cosh": sp.cosh, "tanh": sp.tanh, "abs": sp.Abs, "min": sp.Min,
    "max": sp.Max, "pow": lambda a, b: a ** b, "pwr": lambda a, b: a ** b, "floor": sp.floor, "ceil": sp.ceiling,
    "sgn": sp.sign,
}


class _NoSymbolicForm(Exception):
    """An expression part with no sympy form here (``%``, ``int``): the caller keeps the number."""


def _sympy_number(x):
    return sp.Integer(int(x)) if float(x).is_integer() and abs(x) < 1e15 else sp.Float(x)


def evaluate(expr, params, line=None, symbolic=False):
    """Evaluate a SPICE ``{expression}`` with the given parameters (lower-case names).

    Numbers may carry scale factors; ``^`` and ``**`` are powers. ``symbolic=True`` builds the sympy
    expression instead (``params`` then maps names to symbols): how exports keep a ``.param`` a parameter.

    >>> evaluate("2*rval + 1k", {"rval": 500.0})
    2000.0
    >>> evaluate("pow(2, 10) + 2^3 - sqrt(l/c)", {"l": 4.0, "c": 1.0})
    1030.0
    >>> evaluate("2*rval + 1k", {"rval": sp.Symbol("rval")}, symbolic=True)
    2*rval + 1000
    """
    text = expr.strip()

    def number(m):
        mant, suffix = m.group(1), m.group(2) or ""
        return repr(parse_value(mant + suffix, line))

    try:
        py = _EXPR_NUMBER.sub(number, text).replace("^", "**")
        if len(py) > 100_000:
            raise ParseError(f"the expression {{{expr[:40]}...}} is longer than 100000 characters", line)
        tree = ast.parse(py, mode="eval")
    except SyntaxError as exc:
        raise ParseError(f"cannot read the expression {{{expr[:80]}}}: {exc.msg}", line) from None
    except (RecursionError, MemoryError, ValueError):
        raise ParseError(f"the expression {{{expr[:40]}...}} is nested too deeply", line) from None

    def ev(node):
        if isinstance(node, ast.Expression):
            return ev(node.body)
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(
                node.value, bool):
            return _sympy_number(node.value) if symbolic else float(node.value)
        if isinstance(node, ast.Name):
            name = node.id.lower()
            if name in params:
                return params[name]
            if name in _CONSTANTS:
                return {"pi": sp.pi, "e": sp.E}[name] if symbolic else _CONSTANTS[name]
            raise ParseError(f"unknown parameter {node.id!r} in {{{expr}}}; define it with .param", line)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.UAdd, ast.USub)):
            v = ev(node.operand)
            return v if isinstance(node.op, ast.UAdd) else -v
        if isinstance(node, ast.BinOp):
            a, b = ev(node.left), ev(node.right)
            ops = {ast.Add: lambda: a + b, ast.Sub: lambda: a - b, ast.Mult: lambda: a * b,
                   ast.Div: lambda: a / b, ast.Pow: lambda: a ** b, ast.Mod: lambda: math.fmod(a, b)}
            for op, fn in ops.items():
                if isinstance(node.op, op):
                    if symbolic:
                        if op is ast.Mod:
                            raise _NoSymbolicForm
                        return fn()
                    try:
                        return float(fn())
                    except (ZeroDivisionError, OverflowError, ValueError) as exc:
                        raise ParseError(f"{{{expr}}}: {exc}", line) from None
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not node.keywords:
            fname = node.func.id.lower()
            if symbolic and fname in _FUNCTIONS:
                if fname not in _SYMPY_FUNCTIONS:
                    raise _NoSymbolicForm
                return _SYMPY_FUNCTIONS[fname](*[ev(a) for a in node.args])
            if fname in _FUNCTIONS:
                args = [ev(a) for a in node.args]
                try:
                    return float(_FUNCTIONS[fname](*args))
                except (TypeError, ValueError, OverflowError) as exc:
                    raise ParseError(f"{{{expr}}}: {fname}: {exc}", line) from None
            raise ParseError(f"unknown function {node.func.id!r} in {{{expr}}}", line)
        raise ParseError(f"unsupported syntax in the expression {{{expr}}}", line)

    try:
        result = ev(tree)
    except RecursionError:
        raise ParseError(f"the expression {{{expr[:40]}...}} is nested too deeply", line) from None
    if symbolic:
        return result
    if isinstance(result, complex) or math.isnan(result):
        raise ParseError(f"{{{expr}}} is not a real number", line)
    return result


# --- cards ------------------------------------------------------------------------------------

@dataclass(slots=True)
class Card:
    """One logical netlist line (continuations joined, comments removed); ``__slots__``: a 10^5-line deck
    holds 10^5 of them while it is read."""

    line: int
    text: str | None  # dot cards only (their readers parse the text again); an element card has its tokens
    tokens: list = field(default_factory=list)

    @property
    def key(self):
        return self.tokens[0].lower() if self.tokens else ""


def _strip_comment(raw):
    if not any(c in raw for c in ";$/{"):  # the common line: nothing to strip
        return raw
    out = []
    i = 0
    depth = 0
    while i < len(raw):
        ch = raw[i]
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth = max(0, depth - 1)
        if depth == 0:
            if ch == ";":
                break
            if ch == "$" and (i == 0 or raw[i - 1].isspace()):
                break
            if raw.startswith("//", i):
                break
        out.append(ch)
        i += 1
    return "".join(out)


def tokenize(text, line=None):
    """Split a card into tokens: words, ``(``, ``)``, ``=``; ``{...}`` and ``'...'`` stay whole.

    >>> tokenize("V1 in 0 SIN(0, 1 {f0*2}) ac=1")
    ['V1', 'in', '0', 'SIN', '(', '0', '1', '{f0*2}', ')', 'ac', '=', '1']
    """
    if not any(c in text for c in "{}'()=,"):  # the common card: words only
        return text.split()
    tokens, cur = [], []
    i, n = 0, len(text)

    def flush():
        if cur:
            tokens.append("".join(cur))
            cur.clear()

    while i < n:
        ch = text[i]
        if ch == "{":
            flush()
            depth, j = 0, i
            while j < n:
                if text[j] == "{":
                    depth += 1
                elif text[j] == "}":
                    depth -= 1
                    if depth == 0:
                        break
                j += 1
            if j >= n:
                raise ParseError(f"unbalanced '{{' in {text.strip()!r}", line)
            tokens.append(text[i:j + 1])
            i = j + 1
            continue
        if ch == "'":
            flush()
            j = text.find("'", i + 1)
            if j < 0:
                raise ParseError(f"unbalanced quote in {text.strip()!r}", line)
            tokens.append("{" + text[i + 1:j] + "}")
            i = j + 1
            continue
        if ch == "}":
            raise ParseError(f"unbalanced '}}' in {text.strip()!r}", line)
        if ch in "()=":
            flush()
            tokens.append(ch)
        elif ch.isspace() or ch == ",":
            flush()
        else:
            cur.append(ch)
        i += 1
    flush()
    return tokens


def _lines(source):
    """The lines of a netlist, one at a time: a file object's own iteration, or the lines of a text (no
    list of copies of every line)."""
    if isinstance(source, str):
        return io.StringIO(source, newline=None)  # universal newlines, as str.splitlines for \r\n and \r
    return source


def split_cards(source):
    """The title and the logical cards of a netlist (``.control`` blocks and what follows ``.end`` removed).

    ``source`` is the text or an iterable of its lines (an open file): read in one pass, a line at a time,
    keeping only the cards' tokens (and the text of dot cards, which their readers parse again).
    Returns ``(title, cards, notes)``.
    """
    title, notes, cards = "", [], []
    state = {"control": None, "end": None, "after": 0}
    pending = None  # [line number, text] of the logical card being read (continuations join it)

    def emit(number, s):
        head = s.split(None, 1)[0].lower()
        if state["control"] is not None:
            if head == ".endc":
                notes.append(f"line {state['control']}: .control ... .endc block skipped (netdyn does not run "
                             "ngspice scripts)")
                state["control"] = None
            return
        if head == ".control":
            state["control"] = number
            return
        if head == ".endc":
            raise ParseError(".endc without .control", number)
        if head == ".end":
            state["end"] = number
            return
        tokens = tokenize(s, number)
        if tokens:  # a line of separators only (",", "=") is blank, as in SPICE
            cards.append(Card(number, s if tokens[0].startswith(".") else None, tokens))

    for number, raw in enumerate(_lines(source), start=1):
        if number == 1:
            title = raw.strip()
            continue
        s = _strip_comment(raw.rstrip("\r\n")).strip()
        if not s or s.startswith("*"):
            continue
        if s.startswith("+"):
            if pending is None and state["end"] is None:
                raise ParseError("continuation line '+' with no card before it", number)
            if pending is not None:
                pending[1] += " " + s[1:]
            continue
        if state["end"] is not None:
            state["after"] += 1
            continue
        if pending is not None:
            emit(*pending)
            if state["end"] is not None:
                state["after"] += 1
                pending = None
                continue
        pending = [number, s]
    if pending is not None:
        emit(*pending)
    if state["end"] is not None and state["after"]:
        notes.append(f"line {state['end']}: .end; the {state['after']} card(s) after it are ignored (as SPICE does)")
    if state["control"] is not None:
        raise ParseError(".control block without .endc", state["control"])
    return title, cards, notes


# --- subcircuit definitions -------------------------------------------------------------------

@dataclass
class Subckt:
    name: str
    ports: list
    defaults: list            # [(name, raw value token)]
    line: int
    body: list = field(default_factory=list)
    children: dict = field(default_factory=dict)
    parent: "Subckt | None" = None


def _keyvals(tokens, line, what):
    """Split ``[a, b, 'x', '=', '1', ...]`` into positional tokens and (key, value) pairs."""
    positional, pairs = [], []
    i = 0
    while i < len(tokens):
        if i + 1 < len(tokens) and tokens[i + 1] == "=":
            if i + 2 >= len(tokens) or tokens[i + 2] in "()=":
                raise ParseError(f"{what}: {tokens[i]}= needs a value", line)
            pairs.append((tokens[i], tokens[i + 2]))
            i += 3
            continue
        if tokens[i] == "=":
            raise ParseError(f"{what}: '=' without a name before it", line)
        if pairs and tokens[i].lower() != "params:":
            raise ParseError(f"{what}: {tokens[i]!r} after name=value parameters", line)
        positional.append(tokens[i])
        i += 1
    return positional, pairs


def _structure(cards, max_depth=None):
    """Split cards into the top-level body and the (nested) subcircuit definitions."""
    max_depth = LIMITS.max_depth if max_depth is None else max_depth
    top = Subckt("<top>", [], [], 0)
    cur = top
    for card in cards:
        key = card.key
        if key == ".subckt":
            pos, pairs = _keyvals(card.tokens[1:], card.line, ".subckt")
            pos = [p for p in pos if p.lower() != "params:"]
            if not pos:
                raise ParseError(".subckt needs a name and its port nodes", card.line)
            name = pos[0].lower()
            if name in cur.children:
                raise ParseError(f"subcircuit {pos[0]!r} defined twice (first at line "
                                 f"{cur.children[name].line})", card.line)
            ports = pos[1:]
            if len({p.lower() for p in ports}) != len(ports):
                raise ParseError(f"subcircuit {pos[0]!r} names a port node twice", card.line)
            for p in ports:
                if p.lower() in GROUND_NAMES:
                    raise ParseError(f"subcircuit {pos[0]!r}: ground {p!r} cannot be a port node", card.line)
            sub = Subckt(pos[0], ports, pairs, card.line, parent=cur)
            depth = 1
            s_ = cur
            while s_.parent is not None:
                depth += 1
                s_ = s_.parent
            if depth > max_depth:
                raise ParseError(f"subcircuit definitions nested more than {max_depth} deep; raise "
                                 "read_netlist(..., max_depth=...) if this is intended", card.line)
            cur.children[name] = sub
            cur = sub
        elif key == ".ends":
            if cur is top:
                raise ParseError(".ends without .subckt", card.line)
            if len(card.tokens) > 1 and card.tokens[1].lower() != cur.name.lower():
                raise ParseError(f".ends {card.tokens[1]} closes subcircuit {cur.name!r} "
                                 f"(opened at line {cur.line})", card.line)
            cur = cur.parent
        else:
            cur.body.append(card)
    if cur is not top:
        raise ParseError(f"subcircuit {cur.name!r} has no .ends", cur.line)
    return top


# --- the reader -------------------------------------------------------------------------------

def _read_source(source):
    if isinstance(source, os.PathLike):
        path = pathlib.Path(source)
        try:
            return path.open(), str(path)  # read a line at a time (split_cards), closed by read_netlist
        except FileNotFoundError:  # as for a str path: a ParseError, not an OSError
            raise ParseError(f"netlist file {str(path)!r} not found") from None
        except OSError as exc:
            raise ParseError(f"netlist file {str(path)!r} cannot be read ({exc.strerror or exc})") from None
    if isinstance(source, str):
        if "\n" not in source.strip("\r\n"):
            path = pathlib.Path(source.strip())
            try:
                if path.is_file():
                    return path.open(), str(path)
            except OSError:
                pass
            # one line of text would be only a title: it must have been meant as a file name
            raise ParseError(f"netlist file {source.strip()!r} not found (netlist text has a title line "
                             "and cards on the lines after it)")
        return source, None
    if hasattr(source, "read"):  # the caller's file: read a line at a time (not closed here)
        return (source if hasattr(source, "__iter__") else source.read()), getattr(source, "name", None)
    raise ParseError(f"read_netlist needs a path or the netlist text, not {type(source).__name__}")


class _Reader:
    def __init__(self, text, max_elements=None, max_depth=None, name="netlist"):
        self.name = name
        self.max_elements = LIMITS.max_elements if max_elements is None else max_elements
        self.max_depth = LIMITS.max_depth if max_depth is None else max_depth
        self.title, self.cards, self.notes = split_cards(text)
        self.tran = None
        self.element_specs = []     # (line number, kind, name, nodes, extra) in order
        self.names = {}             # lower-case element name -> (name, line)
        self.nodes = {}             # lower-case node name -> spelling
        self.couplings = []         # (card, name, L1, L2, value)
        self.element_ic = {}
        self.value_expressions = {}  # element -> {value name: sympy expression of .param symbols}
        self.initial_voltages = {}
        self.models = {}            # lower-case .model name -> (type, {parameter: value}, line)
        self.temp = self.tnom = None  # °C: the circuit's temperature (.temp, .options temp=) and nominal one
        self.analyses = []          # ".op", ".ac" in the order given
        self.save, self.save_all = [], False  # .save cards: the series a simulation keeps
        self.ac = None              # {"sweep", "points", "fstart", "fstop"}
        self.ac_sources = {}        # source name -> (magnitude, phase in degrees)

    # names
    def node(self, token, prefix, portmap):
        low = token.lower()
        if low in GROUND_NAMES:
            return "0"
        if low in portmap:
            return portmap[low]
        full = prefix + token
        return self.nodes.setdefault(full.lower(), full)

    def element_name(self, token, prefix, line):
        full = prefix + token
        if full.lower() in self.names:
            first, first_line = self.names[full.lower()]
            raise ParseError(f"duplicate element name {full!r}: {first!r} is on line {first_line} "
                             "(names are case-insensitive)", line)
        self.names[full.lower()] = (full, line)
        return full

    def value(self, token, params, line):
        if token.startswith("{"):
            return evaluate(token[1:-1], params, line)
        return parse_value(token, line)

    def keep_expression(self, element, value_name, token, prefix, line):
        """Record a top-level R, L, C or controlled-source value written as a ``{expression}`` of ``.param``
        names, as a sympy expression of those names (``net.value_expressions``): exports write it instead of
        its number. Values inside subcircuits (their own parameters) and expressions without a sympy form keep
        numbers."""
        if prefix or not token.startswith("{"):
            return
        names = {n: self.param_symbol(n) for n in self.params}
        try:
            expr = evaluate(token[1:-1], names, line, symbolic=True)
        except (_NoSymbolicForm, ParseError, TypeError, ValueError):
            return
        if isinstance(expr, sp.Basic) and expr.free_symbols:
            self.value_expressions.setdefault(element, {})[value_name] = expr

    def param_symbol(self, name):
        """The sympy symbol of a ``.param`` (positive when its value is; never the time symbol's name)."""
        value = self.params[name]
        return sp.Symbol(name if name != "t" else "t_param", **({"positive": True} if value > 0 else {"real": True}))

    # top level
    def read(self):
        top = _structure(self.cards, self.max_depth)
        self._count(top)
        self._find_tran(top)
        params = {}
        self._params(top.body, params, top_level=True)
        self.params = dict(params)
        self._models(top, params)
        self._expand(top, top.body, params, "", {}, [])
        # the element cards are read: only their records (element_specs) are needed to build the network
        self.cards = None
        top.body[:] = [card for card in top.body if card.key.startswith(".")]
        top.children.clear()
        self._ic(top.body)
        return self._build()

    def _count(self, top):
        """Count the elements the expansion would create, before creating any: a fan-out bomb
        (10 instances of 10 instances of ...) and recursive subcircuits are refused up front."""
        memo = {}

        def count(scope, body, stack):
            n = 0
            for card in body:
                key = card.key
                if not key or key.startswith(".") or key[0] != "x":
                    n += 0 if key.startswith(".") else 1
                    continue
                pos = [p for p in _keyvals(card.tokens[1:], card.line, card.tokens[0])[0] if p.lower() != "params:"]
                sub = self._lookup(scope, pos[-1]) if pos else None
                if sub is None:
                    continue  # reported with its line by the expansion
                if sub in stack:
                    chain = " -> ".join(s.name for s in stack[stack.index(sub):] + [sub])
                    raise ParseError(f"{card.tokens[0]}: subcircuit {sub.name!r} instantiates itself "
                                     f"({chain})", card.line)
                if len(stack) >= self.max_depth:
                    raise ParseError(f"{card.tokens[0]}: subcircuit instances nested more than {self.max_depth} "
                                     "deep; raise read_netlist(..., max_depth=...) if this is intended", card.line)
                if id(sub) not in memo:
                    memo[id(sub)] = count(sub, sub.body, stack + [sub])
                n += memo[id(sub)]
                if n > self.max_elements:
                    raise ParseError(
                        f"the netlist expands to more than {self.max_elements} elements (at {card.tokens[0]}, "
                        f"an instance of {sub.name!r} with {memo[id(sub)]}); raise "
                        "read_netlist(..., max_elements=N) or netdyn.io.netlist.LIMITS.max_elements to read it",
                        card.line)
            if n > self.max_elements:
                raise ParseError(f"the netlist has more than {self.max_elements} elements; raise "
                                 "read_netlist(..., max_elements=N) or netdyn.io.netlist.LIMITS.max_elements "
                                 "to read it")
            return n

        return count(top, top.body, [])

    def _find_tran(self, top):
        for card in top.body:
            if card.key == ".tran":
                if self.tran is not None:
                    self.notes.append(f"line {card.line}: a second .tran replaces the first")
                self.tran_card = card
                self.tran = "pending"

        def inside(sub):
            for child in sub.children.values():
                for card in child.body:
                    if card.key in (".tran", ".ic", ".end"):
                        raise ParseError(f"{card.tokens[0]} inside subcircuit {child.name!r} "
                                         f"(opened at line {child.line}); put it at the top level", card.line)
                inside(child)
        inside(top)

    def _tran(self, params):
        card = self.tran_card
        toks = [x for x in card.tokens[1:]]
        uic = False
        if toks and toks[-1].lower() == "uic":
            uic = True
            toks = toks[:-1]
        if len(toks) < 2 or len(toks) > 4:
            raise ParseError(".tran needs tstep tstop [tstart [tmax]] [uic]", card.line)
        vals = [self.value(x, params, card.line) for x in toks]
        tstep, tstop = vals[0], vals[1]
        tstart = vals[2] if len(vals) > 2 else 0.0
        tmax = vals[3] if len(vals) > 3 else None
        if tstep <= 0 or tstop <= 0:
            raise ParseError(f".tran: tstep and tstop must be positive (got {tstep}, {tstop})", card.line)
        if not 0 <= tstart < tstop:
            raise ParseError(f".tran: tstart = {tstart} must lie in [0, tstop)", card.line)
        if tmax is not None and tmax <= 0:
            raise ParseError(f".tran: tmax must be positive (got {tmax})", card.line)
        self.tran = TranCard(tstep=tstep, tstop=tstop, tstart=tstart, tmax=tmax, uic=uic)

    def _params(self, body, params, top_level=False):
        for card in body:
            if card.key != ".param":
                continue
            pos, pairs = _keyvals(card.tokens[1:], card.line, ".param")
            if pos or not pairs:
                raise ParseError(".param needs name=value assignments (expressions in braces)", card.line)
            for name, raw in pairs:
                if not re.match(r"^[A-Za-z_]\w*$", name):
                    raise ParseError(f".param: {name!r} is not a valid parameter name", card.line)
                if name.lower() in _FUNCTIONS:
                    raise ParseError(f".param: {name!r} is the name of a function", card.line)
                if raw.startswith("{") or _NUMBER.match(raw):
                    params[name.lower()] = self.value(raw, params, card.line)
                else:
                    params[name.lower()] = evaluate(raw, params, card.line)
        if top_level and self.tran == "pending":
            self._tran(params)

    def _ic(self, body):
        for card in body:
            if card.key != ".ic":
                continue
            toks = card.tokens[1:]
            i = 0
            if not toks:
                raise ParseError(".ic needs v(node)=value entries", card.line)
            while i < len(toks):
                if (i + 5 < len(toks) and toks[i].lower() == "v" and toks[i + 1] == "("
                        and toks[i + 3] == ")" and toks[i + 4] == "="):
                    node_tok = toks[i + 2]
                    low = node_tok.lower()
                    if low in GROUND_NAMES:
                        raise ParseError(".ic: the ground node's voltage is 0 by definition", card.line)
                    if low not in self.nodes:
                        raise ParseError(f".ic: no node named {node_tok!r} in the circuit", card.line)
                    self.initial_voltages[self.nodes[low]] = self.value(toks[i + 5], self.params, card.line)
                    i += 6
                else:
                    raise ParseError(".ic entries look like v(node)=value", card.line)

    def _lookup(self, scope, name):
        s = scope
        while s is not None:
            if name.lower() in s.children:
                return s.children[name.lower()]
            s = s.parent
        return None

    def _expand(self, scope, body, params, prefix, portmap, stack):
        for card in body:
            key = card.key
            if key.startswith("."):
                self._dot_card(card, scope)
                continue
            letter = key[0]
            if not letter.isalpha():
                raise ParseError(f"cannot read the card {' '.join(card.tokens)!r}", card.line)
            if letter in "rlc":
                self._passive(card, letter, params, prefix, portmap)
            elif letter in "vi":
                self._source(card, letter, params, prefix, portmap)
            elif letter in "efgh":
                self._controlled(card, letter, params, prefix, portmap)
            elif letter == "d":
                self._diode(card, params, prefix, portmap)
            elif letter in "sw":
                self._switch(card, letter, params, prefix, portmap)
            elif letter == "k":
                self._coupling(card, params, prefix)
            elif letter == "x":
                self._instance(card, scope, params, prefix, portmap, stack)
            elif letter in UNSUPPORTED_DEVICES:
                raise ParseError(f"{card.tokens[0]}: {UNSUPPORTED_DEVICES[letter]} elements are not supported "
                                 "(netdyn reads R, L, C, V, I, E, F, G, H, D, S, W, K and X)", card.line)
            else:
                raise ParseError(f"{card.tokens[0]}: unknown element type {card.tokens[0][0]!r}", card.line)

    def _dot_card(self, card, scope):
        key = card.key
        if key in (".param", ".tran", ".ic", ".model"):
            return  # handled in their own passes
        if key == ".op":
            self.analyses.append(".op")
            return
        if key == ".ac":
            self._ac_card(card)
            return
        if key == ".title":
            self.title = card.text[len(".title"):].strip()
            return
        if key == ".temp":
            self._temperature(card, [("temp", t) for t in card.tokens[1:]])
            return
        if key in (".options", ".option", ".opt"):
            pos, pairs = _keyvals(card.tokens[1:], card.line, card.tokens[0])
            temps = [(k.lower(), v) for k, v in pairs if k.lower() in ("temp", "tnom")]
            self._temperature(card, temps)
            if temps and len(temps) == len(pairs) + len(pos):
                return  # nothing else on the card
        if key == ".save":
            self._save_card(card)
            return
        if key in SKIPPED_CARDS:
            self.notes.append(f"line {card.line}: {card.tokens[0]} skipped ({SKIPPED_CARDS[key]})")
            return
        if key in UNSUPPORTED_CARDS:
            raise ParseError(f"{card.tokens[0]}: {UNSUPPORTED_CARDS[key]}", card.line)
        raise ParseError(f"unknown control card {card.tokens[0]!r}", card.line)

    def _save_card(self, card):
        """``.save v(out) i(V1) ...``: the series a simulation keeps (``net.save``); ``.save all`` keeps all."""
        words = re.findall(r"[A-Za-z]\s*\([^)]*\)|[^\s,()]+", card.text.split(None, 1)[1] if len(card.tokens) > 1 else "")
        if not words:
            raise ParseError(".save needs the quantities to keep: .save v(out) i(V1) (or .save all)", card.line)
        for word in words:
            w = re.sub(r"\s+", "", word)
            if w.lower() == "all":
                self.save_all = True
                continue
            if w.startswith("@") or ("," in w and w[0].lower() == "v"):
                raise ParseError(f".save {w}: device parameters and differential voltages are not supported; "
                                 "save v(node), v(element), i(element) and subtract in Python", card.line)
            if "(" in w and w[0].lower() not in "vi":
                raise ParseError(f".save {w}: save v(node), v(element) or i(element)", card.line)
            self.save.append(w)

    def _passive(self, card, letter, params, prefix, portmap):
        toks = card.tokens
        pos, pairs = _keyvals(toks[1:], card.line, toks[0])
        kind = {"r": "resistor", "l": "inductor", "c": "capacitor"}[letter]
        if len(pos) != 3:
            raise ParseError(f"{toks[0]}: a {kind} card is '{toks[0]} node1 node2 value'", card.line)
        name = self.element_name(toks[0], prefix, card.line)
        a, b = self.node(pos[0], prefix, portmap), self.node(pos[1], prefix, portmap)
        value = self.value(pos[2], params, card.line)
        if value <= 0:
            raise ParseError(f"{name}: {letter.upper()} = {value:g} is not physical; give a positive value", card.line)
        self.keep_expression(name, letter.upper(), pos[2], prefix, card.line)
        for k, v in pairs:
            if k.lower() == "ic" and letter in "lc":
                self.element_ic[name] = self.value(v, params, card.line)
            else:
                raise ParseError(f"{toks[0]}: unsupported {kind} parameter {k!r}", card.line)
        self.element_specs.append((card.line, letter, name, (a, b), value))

    def _source(self, card, letter, params, prefix, portmap):
        toks = card.tokens
        if len(toks) < 3:
            raise ParseError(f"{toks[0]}: a source card is '{toks[0]} node+ node- [DC value] [waveform]'", card.line)
        name = self.element_name(toks[0], prefix, card.line)
        a, b = self.node(toks[1], prefix, portmap), self.node(toks[2], prefix, portmap)
        self._last_ac = None
        value = self._waveform(card, toks[0], toks[3:], params)
        if self._last_ac is not None:
            self.ac_sources[name] = self._last_ac
        self.element_specs.append((card.line, letter, name, (a, b), value))

    def _waveform(self, card, who, toks, params):
        line = card.line
        dc = None
        tran = None
        i = 0

        def args_of(j):
            # waveform arguments, in parentheses or bare up to the next keyword
            out = []
            if j < len(toks) and toks[j] == "(":
                k = j + 1
                while k < len(toks) and toks[k] != ")":
                    if toks[k] in "(=":
                        raise ParseError(f"{who}: unexpected {toks[k]!r} in {toks[j - 1].upper()}(...)", line)
                    out.append(toks[k])
                    k += 1
                if k >= len(toks):
                    raise ParseError(f"{who}: missing ')' after {toks[j - 1].upper()}(", line)
                return out, k + 1
            k = j
            while k < len(toks) and toks[k].lower() not in ("dc", "ac", "sin", "pulse", "pwl") and toks[k] not in "()=":
                out.append(toks[k])
                k += 1
            return out, k

        while i < len(toks):
            tok = toks[i]
            low = tok.lower()
            if low == "dc":
                if i + 1 >= len(toks):
                    raise ParseError(f"{who}: DC needs a value", line)
                dc = self.value(toks[i + 1], params, line)
                i += 2
            elif low == "ac":
                vals, j = [], i + 1
                while j < len(toks) and len(vals) < 2 and (_NUMBER.match(toks[j]) or toks[j].startswith("{")):
                    vals.append(toks[j])
                    j += 1
                nums = [self.value(x, params, line) for x in vals]
                self._last_ac = (nums[0] if nums else 1.0, nums[1] if len(nums) > 1 else 0.0)
                i = j
            elif low in ("sin", "pulse", "pwl"):
                if tran is not None:
                    raise ParseError(f"{who}: more than one transient waveform", line)
                raw, i = args_of(i + 1)
                vals = [self.value(x, params, line) for x in raw]
                try:
                    tran = self._make_waveform(low, vals, who, line, sources)
                except NetdynError as exc:
                    if isinstance(exc, ParseError):
                        raise
                    raise ParseError(f"{who}: {low.upper()}: {exc}", line) from None
            elif low in ("exp", "sffm", "am", "trnoise", "trrandom", "distof1", "distof2", "external"):
                raise ParseError(f"{who}: the {tok.upper()} waveform is not supported (use SIN, PULSE or PWL)", line)
            elif _NUMBER.match(tok) or tok.startswith("{"):
                if dc is not None or i != 0:
                    raise ParseError(f"{who}: unexpected value {tok!r}", line)
                dc = self.value(tok, params, line)
                i += 1
            else:
                raise ParseError(f"{who}: cannot read {tok!r} (expected DC, AC, SIN, PULSE or PWL)", line)

        if tran is not None:
            if dc is not None:
                self.notes.append(f"line {line}: {who}: the transient uses the {who} waveform; its DC value "
                                  f"{dc:g} applies to operating points only")
            return tran
        if dc is None:
            self.notes.append(f"line {line}: {who} has no value; 0 assumed (as SPICE does)")
            dc = 0.0
        return dc

    def _make_waveform(self, kind, vals, who, line, sources):
        tran = self.tran if isinstance(self.tran, TranCard) else None
        if kind == "sin":
            if not 2 <= len(vals) <= 6:
                raise ParseError(f"{who}: SIN(VO VA [FREQ [TD [THETA [PHASE]]]]) takes 2 to 6 values, "
                                 f"got {len(vals)}", line)
            vals = vals + [0.0] * (6 - len(vals))
            if vals[2] == 0:
                if tran is None:
                    raise ParseError(f"{who}: SIN without a frequency needs a .tran card (SPICE uses 1/tstop)",
                                     line)
                vals[2] = 1.0 / tran.tstop
                self.notes.append(f"line {line}: {who}: SIN frequency 1/tstop = {vals[2]:g} Hz (SPICE default)")
            return sources.sine(*vals)
        if kind == "pulse":
            if not 2 <= len(vals) <= 7:
                raise ParseError(f"{who}: PULSE(V1 V2 [TD [TR [TF [PW [PER]]]]]) takes 2 to 7 values, "
                                 f"got {len(vals)}", line)
            vals = vals + [0.0] * (7 - len(vals))
            v1, v2, td, tr, tf, pw, per = vals
            for idx, label in ((3, "rise"), (4, "fall")):
                if vals[idx] == 0:
                    if tran is not None:
                        vals[idx] = tran.tstep
                        self.notes.append(f"line {line}: {who}: PULSE {label} time = tstep = {tran.tstep:g} s "
                                          "(SPICE default for 0)")
                    else:
                        self.notes.append(f"line {line}: {who}: PULSE {label} time 0 is an ideal edge here "
                                          "(SPICE would use tstep; there is no .tran)")
            tr, tf = vals[3], vals[4]
            return sources.pulse(v1, v2, td, tr, tf, pw if pw != 0 else None, per if per != 0 else None)
        # pwl
        if len(vals) < 2 or len(vals) % 2:
            raise ParseError(f"{who}: PWL needs time-value pairs, got {len(vals)} value(s)", line)
        return sources.pwl(list(zip(vals[0::2], vals[1::2])))

    # controlled sources, diodes, .model and .ac
    # the four controlled sources: kind, the card's node fields, the name of its value, what is unsupported
    _CONTROLLED = {"e": ("VCVS", "n+ n- nc+ nc-", "gain", "POLY, VALUE= and TABLE forms"),
                   "g": ("VCCS", "n+ n- nc+ nc-", "transconductance", "POLY, VALUE= and TABLE forms"),
                   "f": ("CCCS", "n+ n- Vname", "gain", "POLY forms"),
                   "h": ("CCVS", "n+ n- Vname", "transresistance", "POLY forms")}

    _GAIN_NAMES = {"e": "gain", "g": "gm", "f": "gain", "h": "r"}   # the element's value (components/controlled.py)

    def _controlled(self, card, letter, params, prefix, portmap):
        """An E, G (voltage-controlled: four nodes) or F, H (current-controlled: two nodes and the sensing
        voltage source) card."""
        toks = card.tokens
        pos, pairs = _keyvals(toks[1:], card.line, toks[0])
        kind, fields, what, unsupported = self._CONTROLLED[letter]
        nfields = len(fields.split())
        if pairs or len(pos) != nfields + 1:
            raise ParseError(f"{toks[0]}: a {kind} card is '{toks[0]} {fields} {what}' ({unsupported} are not "
                             "supported)", card.line)
        name = self.element_name(toks[0], prefix, card.line)
        nnodes = 4 if letter in "eg" else 2
        nodes = tuple(self.node(x, prefix, portmap) for x in pos[:nnodes])
        if letter in "fh":
            nodes += (prefix + pos[2],)  # the sensing voltage source, by its (expanded) name
        self.element_specs.append((card.line, letter, name, nodes, self.value(pos[nfields], params, card.line)))
        self.keep_expression(name, self._GAIN_NAMES[letter], pos[nfields], prefix, card.line)

    #: the switch models: card letter -> (.model type, control parameter names, ngspice's defaults)
    _SWITCH = {"s": ("sw", "n+ n- nc+ nc- model [ON|OFF]", {"vt": 0.0, "vh": 0.0, "ron": 1.0, "roff": 1e12}),
               "w": ("csw", "n+ n- Vname model [ON|OFF]", {"it": 0.0, "ih": 0.0, "ron": 1.0, "roff": 1e12})}

    def _switch(self, card, letter, params, prefix, portmap):
        """An S (voltage-controlled: four nodes) or W (current-controlled: two nodes and the sensing voltage
        source) switch card with its .model SW / CSW."""
        toks = card.tokens
        mtype, fields, defaults = self._SWITCH[letter]
        pos, pairs = _keyvals(toks[1:], card.line, toks[0])
        state = [p.lower() for p in pos if p.lower() in ("on", "off")]
        pos = [p for p in pos if p.lower() not in ("on", "off")]
        nfields = len(fields.split()) - 1
        if pairs or len(pos) != nfields or len(state) > 1:
            raise ParseError(f"{toks[0]}: a switch card is '{toks[0]} {fields}'", card.line)
        name = self.element_name(toks[0], prefix, card.line)
        model = self.models.get(pos[-1].lower())
        if model is None or model[0] != mtype:
            raise ParseError(f"{toks[0]}: no switch model {pos[-1]!r} of type {mtype.upper()} (define it: .model "
                             f"{pos[-1]} {mtype.upper()}({' '.join(k.upper() + '=' for k in defaults)}))", card.line)
        values = dict(defaults, **model[1])
        nnodes = 4 if letter == "s" else 2
        nodes = tuple(self.node(x, prefix, portmap) for x in pos[:nnodes])
        if letter == "w":
            nodes += (prefix + pos[2],)
        self.element_specs.append((card.line, letter, name, nodes, (values, state == ["on"])))

    def _diode(self, card, params, prefix, portmap):
        toks = card.tokens
        pos, pairs = _keyvals(toks[1:], card.line, toks[0])
        inst = {}
        for k, v in pairs:
            if k.lower() not in DIODE_INSTANCE or k.lower() in inst:
                raise ParseError(f"{toks[0]}: {k.upper()}= is not taken on a diode card ('{toks[0]} anode cathode "
                                 "model [area] [AREA=a] [TEMP=°C] [DTEMP=°C]', each once; OFF, IC=, M=, PJ= are "
                                 "not supported)", card.line)
            inst[k.lower()] = self.value(v, params, card.line)
        if len(pos) not in (3, 4) or (len(pos) == 4 and "area" in inst):
            raise ParseError(f"{toks[0]}: a diode card is '{toks[0]} anode cathode model [area] [TEMP=°C] "
                             "[DTEMP=°C]' (OFF and IC= are not supported)", card.line)
        if "temp" in inst and "dtemp" in inst:
            raise ParseError(f"{toks[0]}: TEMP= sets the device's temperature, DTEMP= its offset from the "
                             "circuit's: give one", card.line)
        if inst.get("temp", 0.0) <= -273.15:
            raise ParseError(f"{toks[0]}: TEMP = {inst['temp']:g} °C is below absolute zero", card.line)
        name = self.element_name(toks[0], prefix, card.line)
        model = self.models.get(pos[2].lower())
        if model is None:
            raise ParseError(f"{toks[0]}: no .model named {pos[2]!r} (define it with .model {pos[2]} D(IS=... "
                             "N=... RS=...))", card.line)
        mtype, mparams, mline = model
        if mtype != "d":
            raise ParseError(f"{toks[0]}: model {pos[2]!r} (line {mline}) is of type {mtype.upper()}, not D",
                             card.line)
        area = self.value(pos[3], params, card.line) if len(pos) == 4 else inst.get("area", 1.0)
        if area <= 0:
            raise ParseError(f"{toks[0]}: area {area:g} must be positive", card.line)
        values = {"IS": mparams.get("is", 1e-14) * area, "N": mparams.get("n", 1.0),
                  "RS": mparams.get("rs", 0.0) / area}
        if "bv" in mparams:  # ngspice (level 1): the breakdown current IBV is not scaled by the area
            values.update(BV=mparams["bv"], IBV=mparams.get("ibv", 1e-3), NBV=mparams.get("nbv"))
        values.update({k.upper(): mparams[k] for k in DIODE_PARAMETERS[11:] if k in mparams})
        if mparams.get("cjo", 0.0) > 0 or mparams.get("tt", 0.0) > 0:  # the depletion capacitance scales with area
            values.update(CJO=mparams.get("cjo", 0.0) * area, VJ=mparams.get("vj", 1.0), M=mparams.get("m", 0.5),
                          FC=mparams.get("fc", 0.5), TT=mparams.get("tt", 0.0))
        nodes = (self.node(pos[0], prefix, portmap), self.node(pos[1], prefix, portmap))
        self.element_specs.append((card.line, "d", name, nodes, (pos[2], values, area, inst)))

    def _models(self, top, params):
        """All .model cards (anywhere: SPICE reads them before the elements)."""
        def walk(sub):
            for card in sub.body:
                if card.key == ".model":
                    self._model_card(card, params)
            for child in sub.children.values():
                walk(child)
        walk(top)

    def _model_card(self, card, params):
        toks = card.tokens[1:]
        if len(toks) < 2:
            raise ParseError(".model needs a name and a type: .model NAME D(IS=... N=... RS=...)", card.line)
        name, mtype = toks[0], toks[1].lower()
        if mtype not in ("d", "sw", "csw"):
            raise ParseError(f".model {name}: device models of type {toks[1].upper()} are not supported (netdyn "
                             "has the diode, type D, and the switches, SW and CSW)", card.line)
        rest = [x for x in toks[2:] if x not in "()"]
        pos, pairs = _keyvals(rest, card.line, ".model")
        if pos:
            raise ParseError(f".model {name}: cannot read {pos[0]!r} (parameters are NAME=value)", card.line)
        values = {}
        if mtype != "d":
            known = self._SWITCH["s" if mtype == "sw" else "w"][2]
            for k, v in pairs:
                if k.lower() not in known:
                    raise ParseError(f".model {name}: {k.upper()} is not a {mtype.upper()} parameter (netdyn's "
                                     f"switch takes {', '.join(x.upper() for x in known)})", card.line)
                values[k.lower()] = self.value(v, params, card.line)
            pairs = ()
        for k, v in pairs:
            key = DIODE_ALIASES.get(k.lower(), k.lower())
            if key in DIODE_NOT_MODELLED:
                self._not_modelled(key, name, card.line)
                continue
            if key not in DIODE_PARAMETERS:
                hint = f"{DIODE_HINTS[key]}; " if key in DIODE_HINTS else ""
                raise ParseError(f".model {name}: {k.upper()} is not a diode parameter ({hint}netdyn's diode takes "
                                 f"{', '.join(x.upper() for x in DIODE_PARAMETERS)})", card.line)
            values[key] = self.value(v, params, card.line)
            if key in ("tlev", "tlevc") and values[key] not in (0.0, 1.0):
                raise ParseError(f".model {name}: {k.upper()} = {values[key]:g}: netdyn has ngspice's temperature "
                                 "laws 0 and 1", card.line)
        if name.lower() in self.models:
            raise ParseError(f".model {name} defined twice (first at line {self.models[name.lower()][2]})", card.line)
        self.models[name.lower()] = (mtype, values, card.line)

    def _temperature(self, card, pairs):
        """``.temp T`` and ``.options temp=T tnom=T`` (°C): the diodes' temperature law takes them."""
        if card.key == ".temp" and len(pairs) != 1:
            raise ParseError(".temp takes one temperature in °C (netdyn runs one temperature, not a sweep)",
                             card.line)
        for key, tok in pairs:
            value = self.value(tok, self.params, card.line)
            if value <= -273.15:
                raise ParseError(f"{card.tokens[0]}: {key} = {value:g} °C is below absolute zero", card.line)
            setattr(self, key, float(value))

    def _not_modelled(self, key, model, line):
        """Report a diode parameter that is read and not modelled: once per parameter name and netlist."""
        seen = self.__dict__.setdefault("_reported", set())
        if key in seen:
            return
        seen.add(key)
        text = (f"line {line}: .model {model}: diode parameter {key.upper()} is not modelled by netdyn and is left "
                f"out (netdyn's diode takes {', '.join(x.upper() for x in DIODE_PARAMETERS)}); the results differ "
                "from SPICE's where it matters")
        self.notes.append(text)
        warnings.warn(text, UserWarning, stacklevel=2)

    def _ac_card(self, card):
        toks = card.tokens[1:]
        if len(toks) != 4 or toks[0].lower() not in ("dec", "oct", "lin"):
            raise ParseError(".ac needs DEC|OCT|LIN points fstart fstop", card.line)
        points = self.value(toks[1], self.params, card.line)
        fstart, fstop = (self.value(x, self.params, card.line) for x in toks[2:])
        if points < 1 or points != int(points):
            raise ParseError(f".ac: the number of points must be a positive integer (got {points:g})", card.line)
        if not 0 < fstart <= fstop:
            raise ParseError(f".ac: need 0 < fstart <= fstop (got {fstart:g}, {fstop:g})", card.line)
        self.ac = {"sweep": toks[0].lower(), "points": int(points), "fstart": fstart, "fstop": fstop}
        self.analyses.append(".ac")

    def _coupling(self, card, params, prefix):
        toks = card.tokens
        pos, pairs = _keyvals(toks[1:], card.line, toks[0])
        if pairs or len(pos) != 3:
            raise ParseError(f"{toks[0]}: a coupling card is '{toks[0]} Lname1 Lname2 k'", card.line)
        name = self.element_name(toks[0], prefix, card.line)
        k = self.value(pos[2], params, card.line)
        self.couplings.append((card, name, prefix + pos[0], prefix + pos[1], k))

    def _instance(self, card, scope, params, prefix, portmap, stack):
        toks = card.tokens
        pos, pairs = _keyvals(toks[1:], card.line, toks[0])
        pos = [p for p in pos if p.lower() != "params:"]
        if not pos:
            raise ParseError(f"{toks[0]}: an instance card is '{toks[0]} nodes... subckt_name'", card.line)
        subname, nodes = pos[-1], pos[:-1]
        sub = self._lookup(scope, subname)
        if sub is None:
            raise ParseError(f"{toks[0]}: no subcircuit named {subname!r}", card.line)
        if sub in stack:
            raise ParseError(f"{toks[0]}: subcircuit {sub.name!r} instantiates itself", card.line)
        if len(nodes) != len(sub.ports):
            raise ParseError(f"{toks[0]}: subcircuit {sub.name!r} (line {sub.line}) has {len(sub.ports)} port "
                             f"node(s) ({' '.join(sub.ports)}), the instance gives {len(nodes)}", card.line)
        inst_name = self.element_name(toks[0], prefix, card.line)  # unique like an element name
        outer = [self.node(n, prefix, portmap) for n in nodes]
        inner_portmap = {p.lower(): o for p, o in zip(sub.ports, outer)}

        # parameters: global ones, the definition's defaults, the instance's overrides, local .params
        local = dict(self.params)
        defaults = {k.lower(): (k, v) for k, v in sub.defaults}
        overrides = {}
        for k, v in pairs:
            if k.lower() not in defaults:
                raise ParseError(f"{toks[0]}: subcircuit {sub.name!r} has no parameter {k!r}", card.line)
            overrides[k.lower()] = self.value(v, params, card.line)
        for low, (k, raw) in defaults.items():
            local[low] = overrides[low] if low in overrides else self.value(raw, local, sub.line)
        self._params(sub.body, local)
        self._expand(sub, sub.body, local, inst_name + ".", inner_portmap, stack + [sub])

    # build the network
    def _build(self):

        net = Network(self.name)  # the file's name (its stem), or "netlist": the title line is net.title
        made = {}
        if not self.element_specs:
            raise ParseError("the netlist has no elements (the first line is the title; cards follow it)")

        for line, letter, name, nodes, value in self.element_specs:
            try:
                if letter in "eg":
                    element = (ctl.VCVS if letter == "e" else ctl.VCCS)(name, *nodes, value)
                elif letter in "fh":
                    sense = nodes[2]
                    if sense.lower() not in made or made[sense.lower()][0] != "v":
                        later = [s for s in self.element_specs if s[2].lower() == sense.lower()]
                        if not later or later[0][1] != "v":
                            raise ParseError(f"{name}: {sense!r} is not a voltage source (F and H sense the current "
                                             "of a V source; add a 0 V one as an ammeter)", line)
                    element = (ctl.CCCS if letter == "f" else ctl.CCVS)(name, nodes[0], nodes[1],
                                                                        _spelled(self.element_specs, sense), value)
                elif letter == "d":
                    kw = dict(value[1])
                    inst = value[3]
                    if "temp" in inst:          # the device's own temperature, else the circuit's plus DTEMP
                        kw["temp"] = inst["temp"]
                    elif self.temp is not None or "dtemp" in inst:
                        kw["temp"] = (27.0 if self.temp is None else self.temp) + inst.get("dtemp", 0.0)
                    if self.tnom is not None and "TNOM" not in kw:  # a model's own TNOM comes first
                        kw["TNOM"] = self.tnom
                    element = Diode(name, *nodes, **kw)
                    element.spice_model = value[0]
                    element.spice_instance = dict(inst, area=value[2])  # as written on the card (write_netlist)
                elif letter in "sw":
                    mv, on = value
                    if letter == "s":
                        element = VoltageSwitch(name, *nodes, RON=mv["ron"], ROFF=mv["roff"], VT=mv["vt"],
                                                VH=mv["vh"], on=on)
                    else:
                        element = CurrentSwitch(name, nodes[0], nodes[1], _spelled(self.element_specs, nodes[2]),
                                                RON=mv["ron"], ROFF=mv["roff"], IT=mv["it"], IH=mv["ih"], on=on)
                else:
                    cls = {"r": el.Resistor, "l": el.Inductor, "c": el.Capacitor,
                           "v": el.VoltageSource, "i": el.CurrentSource}[letter]
                    element = cls(name, *nodes, value)
                net.add(element)
            except ParseError:
                raise
            except NetdynError as exc:
                raise ParseError(f"{name}: {exc}", line) from None
            if letter in "vl":  # (what F, H and K look up; other names are in self.names)
                made[name.lower()] = (letter, element)
        for card, name, l1, l2, k in self.couplings:
            # ngspice spells an inductor of a subcircuit instance "L.X1.L1"; netdyn says "X1.L1"
            l1, l2 = (re.sub(r"^[lL]\.(?=[xX])", "", x) if x.lower() not in made else x for x in (l1, l2))
            for ind in (l1, l2):
                if ind.lower() not in made and ind.lower() not in self.names:
                    raise ParseError(f"{name}: no inductor named {ind!r}", card.line)
                if ind.lower() not in made or made[ind.lower()][0] != "l":
                    raise ParseError(f"{name}: {self.names[ind.lower()][0]!r} is not an inductor", card.line)
            n1, n2 = made[l1.lower()][1].name, made[l2.lower()][1].name
            if n1 == n2:
                raise ParseError(f"{name}: couples {n1!r} with itself", card.line)
            try:
                net.add(el.MutualInductance(name, n1, n2, k=k))
            except NetdynError as exc:
                raise ParseError(f"{name}: {exc}", card.line) from None
        net.title = self.title
        net.tran = self.tran if isinstance(self.tran, TranCard) else None
        net.initial_voltages = dict(self.initial_voltages)
        net.element_ic = dict(self.element_ic)
        net.params = dict(self.params)
        net.value_expressions = {n: dict(v) for n, v in self.value_expressions.items()}
        net.netlist_notes = list(self.notes)
        net.analyses = list(self.analyses)
        net.ac = self.ac
        net.ac_sources = dict(self.ac_sources)
        net.save = None if self.save_all or not self.save else tuple(dict.fromkeys(self.save))  # .save cards
        net.temp, net.tnom = self.temp, self.tnom  # °C (.temp, .options temp= tnom=), None where not given
        return net


def _spelled(specs, name):
    """The element name as spelled on its own card (names are case-insensitive)."""
    for spec in specs:
        if spec[2].lower() == name.lower():
            return spec[2]
    return name


def _title_note(title):
    """A note when the title line reads like an element or dot card (SPICE still takes it as the title)."""
    try:
        toks = tokenize(title)
    except ParseError:
        return None
    looks_like_card = title.startswith(".")
    if 4 <= len(toks) <= 8 and toks[0][:1].lower() in "rlcvi":
        v = toks[3]
        looks_like_card = bool(_NUMBER.match(v)) or v.startswith("{") or v.lower() in ("dc", "sin", "pulse", "pwl")
    if looks_like_card:
        return (f"line 1: {title!r} is read as the title (SPICE never reads the first line as a card); "
                "start the netlist with a title line")
    return None


def read_netlist(source: PathArg | IO[str], max_elements: int | None = None, max_depth: int | None = None) -> Network:
    """Read a SPICE netlist (a path, a file object or the text itself) into a :class:`~netdyn.Network`.

    See the module documentation for the supported language.  Errors are
    :class:`~netdyn.errors.ParseError` with the line number. The work is bounded:
    more than ``max_elements`` elements after subcircuit expansion (default
    :data:`LIMITS` ``.max_elements``, 250,000), subcircuits nested more than
    ``max_depth`` deep (64) and recursive subcircuits are refused before anything is built.

    >>> read_netlist("title\\nR1 1 0 1k\\nQ1 1 2 0 npn\\n")
    Traceback (most recent call last):
    ...
    netdyn.errors.ParseError: line 3: Q1: bipolar transistor elements are not supported (netdyn reads R, L, C, V, I, E, F, G, H, D, S, W, K and X)
    """
    text, origin = _read_source(source)  # (a file opened here is read a line at a time, then closed)
    name = pathlib.Path(str(origin)).stem if origin else ""
    # the reader allocates many small objects that all stay alive: the cyclic garbage collector's
    # full passes make reading superlinear (100,000 elements: 3.7 s with them, 2.0 s without, here)
    paused = gc.isenabled()
    gc.disable()
    try:
        try:
            reader = _Reader(text, max_elements, max_depth, name=name if name and not name.startswith("<") else "netlist")
        except UnicodeDecodeError as exc:
            raise ParseError(f"netlist file {origin!r} cannot be read ({exc})") from None
        finally:
            if text is not source and hasattr(text, "close"):
                text.close()
        note = _title_note(reader.title)
        if note:
            reader.notes.insert(0, note)
        return reader.read()
    finally:
        if paused:
            gc.enable()
