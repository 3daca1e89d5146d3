"""Writing ngspice decks from a :class:`~netdyn.Network`, and running ngspice.

:func:`write_netlist` turns a network of electrical elements (R, L, C,
voltage and current sources, mutual inductances, coupled inductors, ideal
transformers) into an ngspice deck.  Waveforms built with
:mod:`netdyn.sources` come back as their ``SIN``/``PULSE``/``PWL`` cards; any
other expression of time becomes a behavioral ``B`` source.  Names are made
legal for SPICE (an element's name gets its type letter in front when it does
not start with it); :func:`spice_names` gives the mapping, for probes.

:func:`run_ngspice` runs a deck through ``ngspice -b`` and returns the probed
waveforms as numpy arrays.

>>> from netdyn import Network
>>> from netdyn.components.electrical import VoltageSource, Resistor, Capacitor
>>> from netdyn.lagrange.sources import pulse
>>> net = Network("rc")
>>> _ = net.add(VoltageSource("V1", "in", "0", pulse(0, 1, 0, 1e-6, 1e-6, 1e-3)),
...             Resistor("R1", "in", "out", 1e3), Capacitor("C1", "out", "0", 1e-6))
>>> print(write_netlist(net))
rc
V1 in 0 PULSE(0 1 0 1e-06 1e-06 0.001)
R1 in out 1000
C1 out 0 1e-06
.end
<BLANKLINE>
"""
from __future__ import annotations

import math
import os
import re
import shutil
import subprocess
import tempfile

import numpy as np
import sympy as sp

from netdyn.errors import NetdynError
from netdyn.io.cards import TranCard
from netdyn.symbols import t
from netdyn.components import controlled as ctl
from netdyn.components import electrical as el
from netdyn.components.diode import Diode
from netdyn.components.switch import CurrentSwitch, Switch, VoltageSwitch
from netdyn.lagrange.sources import spice_form

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # names for the hints only (annotations are not evaluated)
    from netdyn.graph.network import Network
    from collections.abc import Mapping, Sequence
    from typing import Any

__all__ = ["write_netlist", "spice_names", "run_ngspice", "ngspice_expression"]

_SAFE = re.compile(r"[^A-Za-z0-9_.:\-+]")


# --- expressions for B sources ----------------------------------------------------------------

class _NgspicePrinter(sp.printing.str.StrPrinter):
    """sympy expressions in ngspice's B-source syntax (``time``, ``pow``, ternaries)."""

    def _print_Symbol(self, expr):
        if expr == t:
            return "time"
        raise NetdynError(f"the expression has the free symbol {expr}; give its value in params=")

    def _print_Function(self, expr):
        name = type(expr).__name__
        if name == "Sawtooth":
            x, p = expr.args
            return "((%s) - (%s)*floor((%s)/(%s)))" % (self._print(x), self._print(p), self._print(x),
                                                         self._print(p))
        known = {"sin", "cos", "tan", "exp", "sinh", "cosh", "tanh", "asin", "acos", "atan", "floor", "ceiling"}
        if name in known:
            fname = {"ceiling": "ceil"}.get(name, name)
            return "%s(%s)" % (fname, ", ".join(self._print(a) for a in expr.args))
        if expr == t:
            return "time"
        raise NetdynError(f"cannot write {name}(...) for ngspice; use sin, cos, exp, Piecewise, ...")

    def _print_log(self, expr):
        return "ln(%s)" % self._print(expr.args[0])

    def _print_Abs(self, expr):
        return "abs(%s)" % self._print(expr.args[0])

    def _print_Pow(self, expr, rational=False):
        b, e = expr.args
        if e == sp.S.Half:
            return "sqrt(%s)" % self._print(b)
        if e == -1:
            return "(1/(%s))" % self._print(b)
        return "pow(%s, %s)" % (self._print(b), self._print(e))

    def _print_Float(self, expr):
        return repr(float(expr))

    def _print_Rational(self, expr):
        return repr(float(expr))

    def _print_Integer(self, expr):
        return str(int(expr))

    def _print_Pi(self, expr):
        return repr(math.pi)

    def _print_Exp1(self, expr):
        return repr(math.e)

    def _print_Piecewise(self, expr):
        out = None
        for value, cond in reversed(expr.args):
            v = "(%s)" % self._print(value)
            if cond == sp.true:
                out = v
            else:
                out = "((%s) ? %s : %s)" % (self._print(cond), v, out if out is not None else "0")
        return out

    def _print_Relational(self, expr):
        op = {"<": "<", "<=": "<=", ">": ">", ">=": ">=", "==": "==", "!=": "!="}[expr.rel_op]
        return "(%s %s %s)" % (self._print(expr.lhs), op, self._print(expr.rhs))

    def _print_And(self, expr):
        return "(" + " && ".join(self._print(a) for a in expr.args) + ")"

    def _print_Or(self, expr):
        return "(" + " || ".join(self._print(a) for a in expr.args) + ")"

    def _print_Not(self, expr):
        return "!(%s)" % self._print(expr.args[0])

    def _print_Heaviside(self, expr):
        return "u(%s)" % self._print(expr.args[0])


def ngspice_expression(expr):
    """A sympy expression of ``t`` in ngspice's B-source syntax.

    >>> from netdyn.symbols import t
    >>> import sympy as sp
    >>> ngspice_expression(2*sp.exp(-t/3)*sp.sin(t))
    '2*exp(-0.3333333333333333*time)*sin(time)'
    >>> ngspice_expression(sp.Piecewise((0, t < 1), (t - 1, True)))
    '(((time < 1)) ? (0) : (time - 1))'
    """
    expr = sp.sympify(expr)
    expr = expr.xreplace({r: sp.Float(r) for r in expr.atoms(sp.Rational) if not r.is_Integer})
    return _NgspicePrinter().doprint(expr)


# --- names ------------------------------------------------------------------------------------

def _element_kind(element):
    if isinstance(element, Switch):
        return None  # an ideal switch (a 0 V / 0 A source by state) has no SPICE card
    for cls, letter in ((VoltageSwitch, "S"), (CurrentSwitch, "W"), (ctl.VCVS, "E"), (ctl.VCCS, "G"), (ctl.CCCS, "F"), (ctl.CCVS, "H"), (Diode, "D"),
                        (el.Resistor, "R"), (el.Inductor, "L"), (el.Capacitor, "C"),
                        (el.VoltageSource, "V"), (el.CurrentSource, "I"), (el.MutualInductance, "K"),
                        (el.CoupledInductors, "LL"), (el.IdealTransformer, "XFMR")):
        if isinstance(element, cls):
            return letter
    return None


def _spice_name(letter, name):
    clean = _SAFE.sub("_", str(name))
    if not clean.lower().startswith(letter.lower()):
        clean = letter + clean
    return clean


def spice_names(net):
    """How the elements and nodes of ``net`` are named in the deck of :func:`write_netlist`.

    Returns ``{"elements": {name: spice name}, "nodes": {node: spice node}}``;
    a coupled-inductor element maps to its two windings ``(L..._1, L..._2)``.
    Use it to build probes: ``f"i({names['elements']['V1']})"``.

    >>> from netdyn import Network
    >>> from netdyn.components.electrical import Resistor, VoltageSource
    >>> net = Network()
    >>> _ = net.add(VoltageSource("supply", "in", "gnd", 1.0), Resistor("load", "in", "gnd", 10))
    >>> spice_names(net)
    {'elements': {'supply': 'Vsupply', 'load': 'Rload'}, 'nodes': {'in': 'in', '0': '0'}}
    """
    elements, nodes = {}, {}
    taken, taken_nodes = {}, {}
    for name, element in net.elements.items():
        kind = _element_kind(element)
        if kind is None:
            raise NetdynError(f"{name}: {type(element).__name__} has no SPICE equivalent; write_netlist handles "
                              "resistors, inductors, capacitors, voltage and current sources, controlled sources, "
                              "diodes, S/W switches, mutual inductances, coupled inductors and ideal transformers (an ideal "
                              "Switch has no card: a VoltageSwitch with a small RON is the SPICE one)")
        if kind == "LL":
            base = _spice_name("L", name)
            spice = (base + "_1", base + "_2")
            extra = [_spice_name("K", name)]
        elif kind == "XFMR":
            spice = _spice_name("E", name)
            extra = [_spice_name("F", name), _spice_name("V", name) + "_sense"]
        else:
            spice = _spice_name(kind, name)
            extra = []
        for s in (spice if isinstance(spice, tuple) else (spice,)) + tuple(extra):
            if s.lower() in taken:
                raise NetdynError(f"elements {taken[s.lower()]!r} and {name!r} both become {s!r} in SPICE "
                                  "(SPICE names are case-insensitive); rename one")
            taken[s.lower()] = name
        elements[name] = spice
        for node in element.terminals if kind not in ("K",) else ():
            if node in nodes:
                continue
            sn = "0" if node == "0" else _SAFE.sub("_", str(node))
            if sn.lower() in taken_nodes and taken_nodes[sn.lower()] != node:
                raise NetdynError(f"nodes {taken_nodes[sn.lower()]!r} and {node!r} both become {sn!r} in SPICE "
                                  "(SPICE node names are case-insensitive); rename one")
            taken_nodes[sn.lower()] = node
            nodes[node] = sn
    return {"elements": elements, "nodes": nodes}


# --- values -----------------------------------------------------------------------------------

def _number(value, what, params):
    expr = sp.sympify(value)
    if params:
        expr = expr.subs({(sp.Symbol(k) if isinstance(k, str) else k): v for k, v in params.items()})
        # symbols with assumptions (positive=True) differ from plain Symbol(name): match by name too
        by_name = {str(k): v for k, v in params.items()}
        expr = expr.subs({s: by_name[s.name] for s in expr.free_symbols if s.name in by_name})
    free = expr.free_symbols
    if free:
        raise NetdynError(f"{what} = {expr} has no numeric value ({', '.join(sorted(map(str, free)))}); "
                          "give the values in params=")
    val = complex(expr.evalf())
    if val.imag:
        raise NetdynError(f"{what} = {expr} is not real")
    return val.real


def _fmt(x):
    x = float(x)
    if x == int(x) and abs(x) < 1e15:
        return str(int(x))
    return repr(x)


def _source_text(expr, what, params):
    expr = sp.sympify(expr)
    if params:
        by_name = {str(k): v for k, v in params.items()}
        expr = expr.subs({s: by_name[s.name] for s in expr.free_symbols if s.name in by_name})
    if t not in expr.free_symbols:
        return "DC " + _fmt(_number(expr, what, params)), None
    free = expr.free_symbols - {t}
    if free:
        raise NetdynError(f"{what} = {expr} has no numeric value ({', '.join(sorted(map(str, free)))}); "
                          "give the values in params=")
    form = spice_form(expr)
    if form is not None and "{" not in form:
        return form, None
    return None, ngspice_expression(expr)


def _as_tran(tran):
    if tran is None:
        return None
    if isinstance(tran, TranCard):
        tstep, tstop, tstart, tmax, uic = tran.tstep, tran.tstop, tran.tstart or 0.0, tran.tmax, tran.uic
    else:
        vals = list(tran)
        if len(vals) < 2:
            raise NetdynError("tran needs (tstep, tstop[, tstart[, tmax]])")
        tstep, tstop = vals[0], vals[1]
        tstart = vals[2] if len(vals) > 2 else 0.0
        tmax = vals[3] if len(vals) > 3 else None
        uic = False
    card = f".tran {_fmt(tstep)} {_fmt(tstop)}"
    if tstart or tmax is not None:
        card += f" {_fmt(tstart)}"
    if tmax is not None:
        card += f" {_fmt(tmax)}"
    if uic:
        card += " uic"
    return card


def write_netlist(net: Network, tran: TranCard | None = None, params: Mapping[Any, float] | None = None,
                  title: str | None = None) -> str:
    """The network as an ngspice deck (text).

    ``tran`` (a :class:`~netdyn.io.cards.TranCard` like ``net.tran`` from :func:`~netdyn.io.read_netlist`,
    or ``(tstep, tstop[, tstart[, tmax]])``) adds a ``.tran`` card; by default
    the network's own ``tran`` is used when it has one.  ``params`` gives
    values for symbolic element values.  ``net.initial_voltages`` become a
    ``.ic`` card, ``net.element_ic`` the ``ic=`` of capacitors and inductors, ``net.ac_sources`` the
    ``AC mag phase`` of sources, ``net.temp``/``net.tnom`` the ``.temp`` and ``.options tnom=`` cards,
    ``net.analyses``/``net.ac`` the ``.op`` and ``.ac`` cards; a diode's ``.model`` holds every parameter
    it models (temperature coefficients included), its line the ``TEMP=``/``DTEMP=`` it was read with (or
    ``TEMP=`` where its temperature is not the circuit's).
    Raises :class:`~netdyn.errors.NetdynError` for elements SPICE cannot
    express or values without a number.

    >>> from netdyn import read_netlist
    >>> deck = write_netlist(read_netlist("t\\nV1 a 0 SIN(0 1 1k)\\nR1 a b 1k\\nL1 b 0 1m\\n"), tran=(1e-6, 1e-3))
    >>> print(deck.strip())
    t
    V1 a 0 SIN(0 1 1000 0 0 0)
    R1 a b 1000
    L1 b 0 0.001
    .tran 1e-06 0.001
    .end
    """
    names = spice_names(net)
    el_names, nodes = names["elements"], names["nodes"]
    element_ic = getattr(net, "element_ic", None) or {}
    lines = [title if title is not None else (getattr(net, "title", None) or net.name)]
    for name, element in net.elements.items():
        kind = _element_kind(element)
        spice = el_names[name]
        if kind in ("R", "L", "C"):
            a, b = (nodes[n] for n in element.terminals)
            key = {"R": "R", "L": "L", "C": "C"}[kind]
            line = f"{spice} {a} {b} {_fmt(_number(element.values[key], f'{name}: {key}', params))}"
            if kind in ("L", "C") and name in element_ic:
                line += f" ic={_fmt(element_ic[name])}"
            lines.append(line)
        elif kind in ("V", "I"):
            a, b = (nodes[n] for n in element.terminals)
            card, bexpr = _source_text(element.values["value"], f"{name}: value", params)
            ac = (getattr(net, "ac_sources", None) or {}).get(name)
            if card is not None:
                if ac is not None:
                    card += f" AC {_fmt(ac[0])} {_fmt(ac[1])}"
                lines.append(f"{spice} {a} {b} {card}")
            elif ac is not None:
                raise NetdynError(f"{name}: an AC value on a source whose waveform SPICE writes as a B source "
                                  "(a behavioural expression) has no card; drop it from net.ac_sources")
            else:
                lines.append(f"B{spice} {a} {b} {'V' if kind == 'V' else 'I'}={{{bexpr}}}")
        elif kind == "K":
            l1, l2 = (net.elements[n] for n in element.couples)
            L1 = _number(l1.values["L"], f"{l1.name}: L", params)
            L2 = _number(l2.values["L"], f"{l2.name}: L", params)
            if "k" in element.values:
                k = _number(element.values["k"], f"{name}: k", params)
            else:
                k = _number(element.values["M"], f"{name}: M", params) / math.sqrt(L1 * L2)
            if not -1 <= k <= 1:
                raise NetdynError(f"{name}: coupling k = {k} outside [-1, 1]")
            lines.append(f"{spice} {el_names[l1.name]} {el_names[l2.name]} {_fmt(k)}")
        elif kind == "LL":
            a1, b1, a2, b2 = (nodes[n] for n in element.terminals)
            L1 = _number(element.values["L1"], f"{name}: L1", params)
            L2 = _number(element.values["L2"], f"{name}: L2", params)
            M = _number(element.values["M"], f"{name}: M", params)
            k = M / math.sqrt(L1 * L2)
            lines += [f"{spice[0]} {a1} {b1} {_fmt(L1)}", f"{spice[1]} {a2} {b2} {_fmt(L2)}",
                      f"{_spice_name('K', name)} {spice[0]} {spice[1]} {_fmt(k)}"]
        elif kind == "XFMR":
            # v2 = n v1 (E), i1 = -n i2 (F, sensing port 2's current with a 0 V source)
            a1, b1, a2, b2 = (nodes[n] for n in element.terminals)
            n = _number(element.values["ratio"], f"{name}: n", params)
            sense = _spice_name("V", name) + "_sense"
            mid = f"{spice}_mid"
            if mid.lower() in {v.lower() for v in nodes.values()}:
                raise NetdynError(f"{name}: the internal node {mid!r} clashes with a node of the network")
            lines += [f"{sense} {a2} {mid} 0", f"{spice} {mid} {b2} {a1} {b1} {_fmt(n)}",
                      f"{_spice_name('F', name)} {a1} {b1} {sense} {_fmt(-n)}"]
    models = {}
    for name, element in net.elements.items():
        kind = _element_kind(element)
        spice = el_names[name]
        if kind in ("E", "G"):
            p, m, cp, cm = (nodes[n] for n in element.terminals)
            key = "gain" if kind == "E" else "gm"
            lines.append(f"{spice} {p} {m} {cp} {cm} {_fmt(_number(element.values[key], f'{name}: {key}', params))}")
        elif kind in ("F", "H"):
            p, m = (nodes[n] for n in element.terminals)
            sense = element.couples[0]
            if sense not in el_names or _element_kind(net.elements[sense]) != "V":
                raise NetdynError(f"{name} senses {sense!r}, which is not a voltage source of the network")
            key = "gain" if kind == "F" else "r"
            lines.append(f"{spice} {p} {m} {el_names[sense]} "
                         f"{_fmt(_number(element.values[key], f'{name}: {key}', params))}")
        elif kind == "D":
            a, k = (nodes[n] for n in element.terminals)
            card = "D(" + " ".join(f"{k}={_fmt(v)}" for k, v in element.model_parameters.items()) + ")"
            model = models.setdefault(card, f"dmod{len(models) + 1}")
            lines.append(f"{spice} {a} {k} {model}{_diode_temperature(net, element)}")
        elif kind in ("S", "W"):
            a, b = (nodes[n] for n in element.terminals)
            t, h = ("VT", "VH") if kind == "S" else ("IT", "IH")
            card = (f"{'SW' if kind == 'S' else 'CSW'}({t}={_fmt(element.threshold)} {h}={_fmt(element.hysteresis)} "
                    f"RON={_fmt(element.RON)} ROFF={_fmt(element.ROFF)})")
            model = models.setdefault(card, f"swmod{len(models) + 1}")
            if kind == "S":
                control = " ".join(nodes.get(n, n) for n in element.control_nodes)
            else:
                if element.sense not in el_names or _element_kind(net.elements[element.sense]) != "V":
                    raise NetdynError(f"{name} senses {element.sense!r}, which is not a voltage source of the network")
                control = el_names[element.sense]
            lines.append(f"{spice} {a} {b} {control} {model}{' ON' if element.closed else ''}")
    lines += [f".model {model} {card}" for card, model in models.items()]
    ics = getattr(net, "initial_voltages", None) or {}
    if ics:
        lines.append(".ic " + " ".join(f"v({nodes.get(n, n)})={_fmt(v)}" for n, v in ics.items()))
    lines += _circuit_cards(net)
    tran_card = _as_tran(tran if tran is not None else getattr(net, "tran", None))
    if tran_card:
        lines.append(tran_card)
    lines.append(".end")
    return "\n".join(lines) + "\n"


def _diode_temperature(net, element):
    """A D line's ``TEMP=``/``DTEMP=``: as its netlist gave them, else ``TEMP=`` where the diode's
    temperature is not the circuit's (``net.temp``, else 27 °C)."""
    inst = getattr(element, "spice_instance", None) or {}
    if "temp" in inst:
        return f" TEMP={_fmt(inst['temp'])}"
    if "dtemp" in inst:
        return f" DTEMP={_fmt(inst['dtemp'])}"
    circuit = getattr(net, "temp", None)
    own = element.temperature
    if own is not None and own != (27.0 if circuit is None else circuit):
        return f" TEMP={_fmt(own)}"
    return ""


def _circuit_cards(net):
    """``.temp``, ``.options tnom=``, ``.op`` and ``.ac`` of a network read from a netlist (``net.temp``,
    ``net.tnom``, ``net.analyses``, ``net.ac``)."""
    out = []
    if getattr(net, "temp", None) is not None:
        out.append(f".temp {_fmt(net.temp)}")
    if getattr(net, "tnom", None) is not None:
        out.append(f".options tnom={_fmt(net.tnom)}")
    ac = getattr(net, "ac", None)
    analyses = list(getattr(net, "analyses", None) or [])
    if ac is not None and ".ac" not in analyses:
        analyses.append(".ac")
    for card in analyses:
        if card == ".op":
            out.append(".op")
        elif card == ".ac" and ac is not None:
            out.append(f".ac {ac['sweep']} {ac['points']} {_fmt(ac['fstart'])} {_fmt(ac['fstop'])}")
    return out


# --- running ngspice --------------------------------------------------------------------------

def _tail(text, n=20):
    return "\n".join((text or "").strip().splitlines()[-n:])


def _ngspice(executable):
    """The ngspice executable to run: ``executable`` or the one on PATH."""
    exe = executable or shutil.which("ngspice")
    if exe is None:
        raise NetdynError("ngspice is not installed (no 'ngspice' on PATH); install it, e.g. apt-get install ngspice")
    return exe


def _deck_body(deck_text):
    """The deck's lines without its analysis cards (``.tran``, ``.ac``, ``.op``), ``.control`` block and
    ``.end``: the runner writes its own."""
    body, in_control = [], False
    for line in deck_text.splitlines():
        head = line.strip().split()[0].lower() if line.strip() else ""
        if head == ".control":
            in_control = True
            continue
        if head == ".endc":
            in_control = False
            continue
        if in_control or head in (".tran", ".ac", ".op", ".end"):
            continue
        body.append(line)
    if not body:
        raise NetdynError("the deck is empty")
    return body


def _run_batch(exe, deck_text, analysis, columns, options=None, timeout=600):
    """Run ``analysis`` (an ngspice control command, e.g. ``tran 1u 1m 0``) on the deck with ``ngspice -b``
    and return the table ``wrdata`` writes: the sweep variable, then one column a vector of ``columns``.

    The data file is read, not the exit status (ngspice exits 1 in batch mode when the analysis runs
    from a control block); ``options`` (a dict) adds an ``.options`` card.
    """
    deck = _deck_body(deck_text)
    if options:
        deck.append(".options " + " ".join(f"{k}={v}" for k, v in options.items()))
    deck += [".control", "set wr_singlescale", "set wr_vecnames", "set numdgt=15", analysis,
             "wrdata out.txt " + " ".join(columns), ".endc", ".end", ""]
    with tempfile.TemporaryDirectory(prefix="netdyn-ngspice-") as tmp:
        out_path = os.path.join(tmp, "out.txt")
        deck_path = os.path.join(tmp, "deck.cir")
        with open(deck_path, "w") as fh:
            fh.write("\n".join(deck))
        try:
            proc = subprocess.run([exe, "-b", deck_path], cwd=tmp, capture_output=True, text=True,
                                  timeout=timeout)
        except subprocess.TimeoutExpired as exc:
            raise NetdynError(f"ngspice did not finish within {timeout} s") from exc
        except OSError as exc:
            raise NetdynError(f"cannot run ngspice ({exe}): {exc}") from exc
        report = _tail(proc.stderr) or _tail(proc.stdout)
        if not os.path.exists(out_path) or os.path.getsize(out_path) == 0:
            raise NetdynError(f"ngspice produced no data for {analysis.split()[0]} (exit status "
                              f"{proc.returncode}); its output ends:\n{report}")
        with open(out_path) as fh:
            header = fh.readline().split()
            try:
                data = np.loadtxt(fh, ndmin=2)
            except ValueError as exc:
                raise NetdynError(f"cannot read ngspice's data: {exc}; its output ends:\n{report}") from exc
    if data.size == 0 or data.shape[1] != len(columns) + 1 or len(header) != len(columns) + 1:
        raise NetdynError(f"ngspice wrote {data.shape[1] if data.size else 0} column(s) for {len(columns)} "
                          f"vector(s) ({' '.join(header)}); its output ends:\n{report}")
    return data


def run_ngspice(deck_text: str, probes: Sequence[str], tstop: float, tstep: float, tmax: float | None = None,
                uic: bool = True, options: Mapping[str, Any] | None = None, timeout: float = 600,
                executable: str | None = None) -> dict[str, np.ndarray]:
    """Run a transient analysis of ``deck_text`` with ``ngspice -b`` and return the probes.

    ``probes`` are ngspice vectors such as ``"v(2)"``, ``"v(a,b)"``, ``"i(V1)"``.
    The deck's own ``.tran``, ``.control`` and ``.end`` cards are replaced by a
    control block running ``tran tstep tstop 0 tmax [uic]`` and writing the
    probes with ``wrdata``; ``options`` (a dict, e.g. ``{"reltol": 1e-6}``) adds an
    ``.options`` card.  Returns ``{"time": array, probe: array, ...}``.

    The data file is read, not the exit status (ngspice exits 1 in batch mode
    when the analysis runs from a control block).  With ``uic`` ngspice's first
    saved point is not t = 0 but its first step.

    >>> import shutil
    >>> if shutil.which("ngspice"):
    ...     out = run_ngspice("rc\\nV1 1 0 1\\nR1 1 2 1k\\nC1 2 0 1u\\n", ["v(2)"], tstop=5e-3, tstep=1e-5)
    ...     print(round(float(out["v(2)"][-1]), 3))
    ... else:
    ...     print(0.993)
    0.993
    """
    exe = _ngspice(executable)
    probes = list(probes)
    if not probes:
        raise NetdynError("run_ngspice needs at least one probe, e.g. 'v(out)' or 'i(V1)'")
    for p in probes:
        if not re.fullmatch(r"\s*[A-Za-z]\w*\s*\([^()\s]+(\s*,\s*[^()\s]+)?\s*\)\s*", p):
            raise NetdynError(f"probe {p!r} is not an ngspice vector like v(node), v(a,b) or i(Vname)")
    if not (tstop > 0 and tstep > 0):
        raise NetdynError(f"tstop and tstep must be positive (got {tstop}, {tstep})")
    tran = f"tran {_fmt(tstep)} {_fmt(tstop)} 0"
    if tmax is not None:
        tran += f" {_fmt(tmax)}"
    if uic:
        tran += " uic"
    data = _run_batch(exe, deck_text, tran, [p.strip() for p in probes], options, timeout)
    out = {"time": data[:, 0].copy()}
    for k, p in enumerate(probes):
        out[p] = data[:, k + 1].copy()
    return out


def run_ngspice_ac(deck_text, probes, sweep, points, fstart, fstop, timeout=600, executable=None):
    """Run an AC analysis of ``deck_text`` with ``ngspice -b``; returns ``{"frequency": f, probe: complex}``.

    The deck's own analysis and control cards are replaced by ``ac sweep points fstart fstop``; each probe
    (``v(out)``, ``v(a,b)``, ``i(V1)``) is written as its real and imaginary parts.

    >>> import shutil
    >>> if shutil.which("ngspice"):
    ...     out = run_ngspice_ac("rc\\nV1 1 0 AC 1\\nR1 1 2 1k\\nC1 2 0 1u\\n", ["v(2)"], "lin", 1, 159.1549, 159.1549)
    ...     print(round(abs(out["v(2)"][0]), 4))
    ... else:
    ...     print(0.7071)
    0.7071
    """
    exe = _ngspice(executable)
    probes = list(probes)
    for p in probes:
        if not re.fullmatch(r"\s*[vVIi]\s*\([^()\s]+(\s*,\s*[^()\s]+)?\s*\)\s*", p):
            raise NetdynError(f"probe {p!r} is not an ngspice vector like v(node), v(a,b) or i(Vname)")
    cols = []
    for p in probes:
        inner = p.strip()[1:].strip()
        kind = p.strip()[0].lower()
        cols += [f"real({kind}{inner})", f"imag({kind}{inner})"]
    data = _run_batch(exe, deck_text, f"ac {sweep} {int(points)} {_fmt(fstart)} {_fmt(fstop)}", cols,
                      timeout=timeout)
    out = {"frequency": data[:, 0].copy()}
    for k, p in enumerate(probes):
        out[p] = data[:, 1 + 2 * k] + 1j * data[:, 2 + 2 * k]
    return out
