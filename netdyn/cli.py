"""The ``netdyn`` command line: ``demo``, ``simulate``, ``op``, ``ac``, ``equations``, ``info`` and ``fmu``.

FILE is a SPICE netlist (``.cir``, ``.sp``, ``.net``, ``.spice``, ``.ckt``), a
model file (``.json``, ``.yaml``, ``.yml``) or a bond-graph file (the same
extensions; recognised by its ``format: netdyn-bondgraph``). Bad input (a missing file, a parse
error, an unsupported card, an unknown option) ends with exit code 2 and one
line on stderr.

>>> import contextlib, io
>>> err = io.StringIO()
>>> with contextlib.redirect_stderr(err):
...     code = main(["info", "no-such-file.cir"])
>>> code, err.getvalue().strip()
(2, 'netdyn: error: no-such-file.cir: no such file')
"""
from __future__ import annotations

import argparse
import fnmatch
import os
import sys
import time

from netdyn import __version__
from netdyn.errors import NetdynError, ParseError
from netdyn.units import parse_value

# Imports are made where a command needs them: `netdyn --help`, `--version` and an argument error load
# neither numpy nor sympy (tests/test_cli_fast.py counts the modules).

NETLIST_EXTENSIONS = (".cir", ".sp", ".net", ".spice", ".ckt")
MODEL_EXTENSIONS = (".json", ".yaml", ".yml")
FORMATS = ("latex", "python", "c", "json", "sympy")
MAX_POINTS = 2_000_000  # simulate: output times (rows), unless --max-points
MAX_CELLS = 50_000_000  # simulate: rows x columns of the table (~1 GB of CSV), unless --max-cells
MAX_FREQUENCIES = 1_000_000  # ac: frequencies, unless --max-points
DERIVE_UP_TO = 200  # info derives the model by itself up to this many elements


class UsageError(Exception):
    """Bad command-line input: reported as one line, exit code 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line instead of usage + message
        raise UsageError(f"{message} (see {self.prog} --help)")


# ------------------------------------------------------------------------------------------ input

def load_network(path):
    """A ``Network`` (or ``BondGraph``) from a netlist, model or bond-graph file, chosen by the extension."""
    path = os.fspath(path)
    ext = os.path.splitext(path)[1].lower()
    if not os.path.exists(path):
        raise UsageError(f"{path}: no such file")
    if os.path.isdir(path):
        raise UsageError(f"{path}: is a directory, not a netlist or model file")
    if ext in NETLIST_EXTENSIONS:
        from netdyn.io.netlist import read_netlist
        return read_netlist(path)
    if ext in MODEL_EXTENSIONS:
        if _is_bond_graph_file(path):
            from netdyn.bondgraph.fileformat import load_bond_graph
            return load_bond_graph(path)
        from netdyn.io.modelfile import load_model
        return load_model(path)
    raise UsageError(f"{path}: unknown file type {ext or '(none)'!r}; give a SPICE netlist "
                     f"({', '.join(NETLIST_EXTENSIONS)}) or a model file ({', '.join(MODEL_EXTENSIONS)})")


def _is_bond_graph_file(path):
    """Whether a JSON/YAML file holds a bond graph (``format: netdyn-bondgraph``), by its content."""
    import re
    from netdyn.bondgraph.fileformat import FORMAT
    with open(path, encoding="utf-8", errors="replace") as fh:
        head = fh.read(1 << 16)
    return re.search(r"""["']?format["']?\s*:\s*["']?""" + FORMAT + r"""\b""", head) is not None


def _is_bond_graph(system):
    return hasattr(system, "bond_names")


def _formulation(text):
    """``loop`` or ``electrical=branch,translational=node`` -> a formulation for ``Network.model``."""
    if text is None or "=" not in text:
        return text
    out = {}
    for part in text.split(","):
        domain, _, form = part.partition("=")
        if not domain.strip() or not form.strip():
            raise UsageError(f"--formulation {text!r}: give FORM or DOMAIN=FORM,DOMAIN=FORM "
                             "(e.g. electrical=branch,translational=node)")
        out[domain.strip()] = form.strip()
    return out


def _listing(items, limit=8):
    """``"5001: in, n1, n2, n3, ..., n4999, out"``: a count and at most ``limit`` names, for a terminal line.

    >>> _listing(["in"] + [f"n{k}" for k in range(1, 5000)] + ["out"])
    '5001: in, n1, n2, n3, n4, n5, ..., n4999, out'
    >>> _listing(["a", "b"])
    '2: a, b'
    """
    items = [str(x) for x in items]
    if len(items) <= limit:
        return f"{len(items)}: {', '.join(items)}" if items else "0"
    head = items[:limit - 2]
    return f"{len(items)}: {', '.join(head)}, ..., {', '.join(items[-2:])}"


def _names(items, limit=8, sep=", "):
    """At most ``limit`` of the items, the first and the last two, joined: ``"a, b, c, ..., y, z"``."""
    items = [str(x) for x in items]
    if len(items) > limit:
        items = items[:limit - 2] + ["..."] + items[-2:]
    return sep.join(items)


def _counts(names):
    """``"Capacitor 5000, Resistor 5000, VoltageSource 1"``: how many of each kind."""
    counts = {}
    for n in names:
        counts[n] = counts.get(n, 0) + 1
    return ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))


# ------------------------------------------------------------------------------------------ progress

class ProgressBar:
    """A progress bar on a stream for ``netdyn.simulate(progress=...)``.

    ``mode``: ``"auto"`` draws once the run has taken more than ``delay`` seconds and only when the
    stream is a terminal, ``"always"`` from the start, ``"never"`` not at all. The symbolic paths call
    :meth:`stage` before each pass over the span (``"first pass"``: the coarse one that scales atol,
    ``"refining"``: the one at the requested tolerance); the bar restarts and shows the label.

    >>> import io
    >>> out = io.StringIO()
    >>> bar = ProgressBar(0.0, 2.0, out, mode="always")
    >>> bar(1.0); bar.close()
    >>> out.getvalue().splitlines()[-1].strip()
    '[########################################] 100%  t = 2'
    >>> bar = ProgressBar(0.0, 2.0, out, mode="always")
    >>> bar.stage("first pass"); bar(0.5); bar.close(stopped=True)   # Ctrl-C: the bar stays where it was
    >>> out.getvalue().splitlines()[-1].strip()
    '[##########..............................]  25%  t = 0.5  first pass: interrupted'
    """

    width = 40

    def __init__(self, t0, t1, stream=None, mode="auto", delay=1.0):
        self.t0, self.t1, self.stream, self.mode, self.delay = t0, t1, stream or sys.stderr, mode, delay
        if mode == "auto" and not getattr(self.stream, "isatty", lambda: False)():
            self.mode = "never"  # a log file or a pipe gets no bar
        self.start = time.monotonic()
        self.last_draw = None
        self.reached = t0
        self.label = ""

    def stage(self, label):
        """A new pass over the span: the bar starts again from ``t0`` under ``label``."""
        if self.last_draw is not None and self.mode != "never":
            self._draw(self.reached)  # the previous pass's end, then a fresh line for this one
            self.stream.write("\n")
        self.label, self.reached = label, self.t0
        if self.last_draw is not None:
            self.last_draw = 0.0  # draw the new pass at the next report

    def __call__(self, tt):
        self.reached = max(self.reached, min(float(tt), self.t1))
        if self.mode == "never":
            return
        now = time.monotonic()
        if self.mode == "auto" and now - self.start < self.delay:
            return
        if self.last_draw is not None and now - self.last_draw < 0.1:
            return
        self._draw(self.reached)
        self.last_draw = now

    def _draw(self, tt, note=""):
        frac = (tt - self.t0) / (self.t1 - self.t0) if self.t1 > self.t0 else 1.0
        filled = int(round(self.width * frac))
        label = f"  {self.label}" if self.label else ""
        tail = f"{label}:{note}" if label and note else (label or (f"  {note.strip()}" if note else ""))
        self.stream.write(f"\r[{'#' * filled}{'.' * (self.width - filled)}] {100 * frac:3.0f}%  t = {tt:.6g}{tail}")
        self.stream.flush()

    def close(self, stopped=False):
        """Finish the bar if it was drawn: at 100 %, or where the run stopped (``stopped``: a Ctrl-C)."""
        if self.mode == "always" or (self.mode != "never" and self.last_draw is not None):
            if stopped:
                self._draw(self.reached, " interrupted")
            else:
                self._draw(self.t1)
            self.stream.write("\n")
            self.stream.flush()


# ------------------------------------------------------------------------------------------ the table

def _table_headers(net):
    """The table's columns known before simulating: ``v(node)`` of every node (not ground, not a body),
    ``i(element)`` of every element with a port of its own."""
    nodes = [f"v({n})" for n in net.graph.nodes if n != "0" and n not in net.bodies]
    elements = [f"i({name})" for name, el in net.elements.items() if el.ports]
    return nodes + elements


def _wants_coordinates(net):
    return bool(net.bodies or set(net.domains) - {"electrical"})


def _selection(text, option="--outputs"):
    """``--outputs`` as a list of patterns (``v(out); i(R*)``); None for the whole table (``--save``: names)."""
    if text is None:
        return None
    specs = [x.strip() for x in text.split(";") if x.strip()]
    if not specs:
        raise UsageError(f"{option} is empty; give ';'-separated columns such as 'v(out);i(R1)'"
                         + (" or patterns such as 'v(*)'" if option == "--outputs" else ""))
    if option == "--save" and any(c in x for x in specs for c in "*?["):
        raise UsageError("--save takes names such as 'v(out);i(R1)', not patterns; --outputs picks columns by "
                         "pattern from what is kept")
    return specs


def _select(headers, specs, later=()):
    """The headers each pattern picks (in the table's order), and the patterns that picked none."""
    if specs is None:
        return list(headers), []
    picked, unmatched = set(), []
    for spec in specs:
        hits = fnmatch.filter(headers, spec) if any(c in spec for c in "*?[") else \
            ([spec] if spec in set(headers) else [])
        if not hits:
            unmatched.append(spec)
        picked.update(hits)
    return [h for h in headers if h in picked], unmatched


class _PortAcross:
    """Across variables of element ports, read in bulk where the solution allows: on the linear path one
    set of sparse products for all ports asked for (:func:`netdyn.numerics.circuit.stamp.port_efforts`), else
    the solution's own reading, port by port."""

    def __init__(self, net, sol):
        self.net, self.sol = net, sol
        self.port_of = {}
        from netdyn.components.base import port_key
        for name, el in net.elements.items():
            for k in range(len(el.ports)):
                self.port_of[port_key(el, k)] = (name, k)

    def _bulk(self):
        lin = getattr(self.sol, "linear", None)
        ok = lin is not None and lin.R is None and hasattr(lin.ports, "keys_of") and hasattr(lin.ports, "ports")
        return lin if ok else None

    def values(self, keys):
        """``{port key: array over time}``."""
        lin, sol = self._bulk(), self.sol
        if lin is None or not keys:
            return {key: sol._port_quantity(*self.port_of[key], "across") for key in keys}
        import numpy as np
        from netdyn.components.base import THROUGH
        from netdyn.numerics.circuit.stamp import port_efforts
        out = {}
        effort_keys, flow_keys = [], []
        for key in keys:
            name, k = self.port_of[key]
            if name in lin.skipped or name not in lin.stamps:  # a device the stamps leave out (a diode): its own law
                out[key] = sol._port_quantity(name, k, "across")
                continue
            (effort_keys if lin.stamps[name]["kinds"][k] == THROUGH else flow_keys).append(key)
        if flow_keys:  # across-kind ports (node formulation): the across variable is the port's flow
            pc = lin.ports.ports
            rows = np.array([pc.row[key] for key in flow_keys], dtype=np.int64)
            out.update(zip(flow_keys, pc.P[rows] @ sol.f))
        if effort_keys:
            out.update(zip(effort_keys, port_efforts(lin, effort_keys, sol.q, sol.f, sol.acc, sol.mu,
                                                     _inputs_at(lin, sol.t))))
        return out


def _inputs_at(lin, times):
    import numpy as np
    from netdyn.numerics.functions.compiled import time_function
    rows = [np.broadcast_to(np.asarray(time_function(u)(times), dtype=float), times.shape) for u in lin.inputs]
    return np.vstack(rows) if rows else np.zeros((0, times.size))


def _node_values(net, sol, nodes):
    """``{node: across variable against ground}`` of the nodes asked for: ports read once, in bulk, and each
    node's value its parent's minus the branch between them (a ladder's 10^4 nodes in one pass)."""
    if not hasattr(sol, "_port_quantity"):  # a run cut by events (a PiecewiseSolution) reads through its pieces
        return {node: sol.across(node) for node in nodes}
    from netdyn.components.base import DOMAINS
    from netdyn.graph.topology import tree_paths
    trees = [tree_paths(net.domain_graph(d)) for d in net.domains if d in DOMAINS]
    where, keys, seen = {}, set(), set()
    for node in nodes:
        tree = next((tr for tr in trees if node in tr), None)
        if tree is None:
            continue
        where[node] = tree
        x = node
        while tree.up[x] is not None and x not in seen:  # the branches up to ground (or to a path already taken)
            seen.add(x)
            parent, key, _ = tree.up[x]
            keys.add(key)
            x = parent
    reader = _PortAcross(net, sol)
    across = reader.values([k for k in keys if k in reader.port_of])
    memo = {}

    def down(value, key, sign):
        return value - sign * across[key]

    import numpy as np
    out = {}
    for node, tree in where.items():
        v = tree.fold(node, memo, 0.0, down)
        out[node] = v if isinstance(v, np.ndarray) else np.zeros_like(sol.t, dtype=float)
    return out


def _columns(net, sol, headers):
    """``[(header, values)]`` for the headers asked for (``time`` first): node across variables in bulk, element
    through variables, and coordinates by name."""
    cols = [("time", sol.t)]
    nodes = [h[2:-1] for h in headers if h.startswith("v(") and h[2:-1] in net.graph]
    nodes = [n for n in nodes if n not in net.elements]
    if getattr(sol, "_saved", None) is not None:  # --save / .save: the series kept, read by name
        values = {n: sol.across(n) for n in nodes}
    else:
        values = _node_values(net, sol, nodes)
    for h in headers:
        try:
            if h.startswith("v(") and h[2:-1] in values:
                cols.append((h, values[h[2:-1]]))
            elif h.startswith("v(") and h[2:-1] in net.elements:
                cols.append((h, sol.across(h[2:-1])))
            elif h.startswith("i(") and h[2:-1] in net.elements:
                cols.append((h, sol.through(h[2:-1])))
            elif not h.startswith(("v(", "i(")):
                cols.append((h, sol[h]))
        except (KeyError, ValueError, AttributeError):  # AttributeError: a joint-space (recursive) solution
            continue
    return cols


def _bond_graph_columns(bg, sol, specs=None):
    """``[(header, values)]`` of a bond graph: the energy variables q(C), p(I), then e(X) and f(X) of each
    one-port element (sources, storage, resistors)."""
    from netdyn.lagrange.equations import internalize
    signal = sol.model.metadata["signal"]
    names = [f"{'q' if bg.kind(n) == 'C' else 'p'}({n})" for n in bg.of_kind("C", "I")]
    for n in bg.elements:
        kind = bg.kind(n)
        if kind in ("Se", "C", "I", "R"):
            names += [f"e({n})", f"f({n})"]
        elif kind == "Sf":
            names.append(f"f({n})")
    names, unmatched = _select(names, specs)
    if unmatched:
        raise UsageError(f"--outputs: no column {unmatched[0]!r} in this bond graph; its columns are q(C), p(I), "
                         "e(X) and f(X) of its elements")
    return [("time", sol.t)] + [(spec, sol.evaluate(internalize(sol.model, signal(spec)))) for spec in names]


def _bond_graph_quantity(bg):
    """Axis of a bond-graph series: the graph's effort and flow names, displacement, momentum."""
    names = {"e": bg.effort_name, "f": bg.flow_name, "q": "displacement", "p": "momentum"}
    return lambda model, spec: (names.get(spec[0], spec), "")


def _write_table(cols, stream, sep=None, chunk=256):
    """The columns as rows: CSV (``sep``; shortest round-trip numbers) or aligned text. Rows are formatted
    in blocks (one ``%`` per row), so a table of 10^7 numbers takes seconds."""
    import numpy as np
    names = [c[0] for c in cols]
    nrows = len(cols[0][1]) if cols else 0
    if sep:
        stream.write(sep.join(names) + "\n")
        fmt = sep.join(["%r"] * len(cols)) + "\n"
    else:
        width = max(16, max(len(n) for n in names))
        stream.write(" ".join(f"{n:>{width}}" for n in names) + "\n")
        fmt = " ".join([f"%{width}.9e"] * len(cols)) + "\n"
    block = np.empty((min(chunk, max(nrows, 1)), len(cols)))
    for r0 in range(0, nrows, chunk):
        r1 = min(r0 + chunk, nrows)
        for j, (_, values) in enumerate(cols):
            block[:r1 - r0, j] = values[r0:r1]
        stream.write("".join(fmt % tuple(row) for row in block[:r1 - r0].tolist()))


def _plot(cols, path, title, model, quantity_of=None):
    """The table's columns against time: one axis per quantity, SI units, at most 10 curves an axis."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from netdyn.numerics.results.timeplot import time_plot
    if quantity_of is None:
        from netdyn.numerics.results.quantities import quantity as quantity_of
    groups = {}
    for name, values in cols[1:]:
        groups.setdefault(quantity_of(model, name), []).append((name, values))
    fig = time_plot(cols[0][1], groups, title=title, width=8)[0].figure
    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)


# ------------------------------------------------------------------------------------------ arguments

def spice_number(text):
    """A command-line number with SPICE scale factors: ``5m``, ``10u``, ``2.2meg``, ``1e-3``.

    >>> spice_number("5m"), spice_number("2.2meg")
    (0.005, 2200000.0)
    """
    try:
        return parse_value(text.strip())
    except ParseError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def count(text):
    """A whole number of at least 1, SPICE suffixes and exponents allowed (``1e6``, ``10k``)."""
    x = spice_number(text)
    if x != int(x) or x < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of at least 1")
    return int(x)


def _writable(path, option, create=False):
    """An output path whose folder exists, or with ``create`` is made (checked before the work, not after it)."""
    if path is None:
        return
    folder = os.path.dirname(os.path.abspath(path))
    if create and not os.path.exists(folder):
        try:
            os.makedirs(folder)
        except OSError as exc:
            raise UsageError(f"{option} {path}: cannot make the folder {folder} ({exc.strerror})") from None
    if not os.path.isdir(folder):
        raise UsageError(f"{option} {path}: no folder {folder}")
    if os.path.isdir(path):
        raise UsageError(f"{option} {path}: is a directory; give a file name")


def _warn_notes(net):
    """One warning line on stderr for each card read and not acted on (and each default the reader chose)."""
    for note in getattr(net, "netlist_notes", None) or []:
        print(f"netdyn: warning: {note}", file=sys.stderr)


# ------------------------------------------------------------------------------------------ commands

def cmd_op(args):
    from netdyn.numerics.circuit.operating_point import operating_point
    net = load_network(args.file)
    _warn_notes(net)
    print(operating_point(net, formulation=_formulation(args.formulation)).table())
    return 0


def _ac_spec(args, net):
    """The sweep of ``netdyn ac`` (the options over the netlist's ``.ac``), checked: one line for each fault."""
    spec = dict(getattr(net, "ac", None) or {})
    for key in ("sweep", "points", "fstart", "fstop"):
        if getattr(args, key, None) is not None:
            spec[key] = getattr(args, key)
    missing = [k for k in ("sweep", "points", "fstart", "fstop") if k not in spec]
    if missing:
        raise UsageError(f"{args.file}: no .ac card and no --{' --'.join(missing)}; give them "
                         "(e.g. --sweep dec --points 10 --fstart 10 --fstop 1meg)")
    sweep, points, fstart, fstop = str(spec["sweep"]).lower(), spec["points"], spec["fstart"], spec["fstop"]
    if sweep not in ("dec", "oct", "lin"):
        raise UsageError(f"sweep {sweep!r}: use dec, oct or lin")
    try:
        points, fstart, fstop = float(points), float(fstart), float(fstop)
    except (TypeError, ValueError):
        raise UsageError(f".ac {sweep} {points} {fstart} {fstop}: give numbers") from None
    if not (points >= 1 and points == int(points)):
        raise UsageError(f"--points {points:g}: give a whole number of at least 1")
    lowest = 0.0 if sweep == "lin" else None
    for name, f in (("--fstart", fstart), ("--fstop", fstop)):
        if not (f == f and abs(f) != float("inf")) or f < 0 or (lowest is None and f == 0):
            raise UsageError(f"{name} {f:g}: a frequency must be finite and "
                             f"{'at least 0' if lowest == 0.0 else 'positive (a ' + sweep + ' sweep is logarithmic)'}")
    if fstop < fstart:
        raise UsageError(f"--fstop {fstop:g} is below --fstart {fstart:g}; the sweep goes up")
    import math
    n = int(points) if sweep == "lin" else \
        int(math.floor(math.log(fstop / fstart) / math.log(10.0 if sweep == "dec" else 2.0) * points + 1e-9)) + 1
    cap = getattr(args, "max_points", None) or MAX_FREQUENCIES
    if n > cap:
        raise UsageError(f"the sweep has {n:,} frequencies, over the cap of {cap:,}; give fewer --points or a "
                         f"narrower range, or raise the cap with --max-points {n}")
    return sweep, int(points), fstart, fstop


def cmd_ac(args, net=None, header=False):
    from netdyn.analysis.ac import ac, frequencies_of
    quiet = net is not None
    if not quiet:
        _writable(getattr(args, "csv", None), "--csv")
        _writable(getattr(args, "plot", None), "--plot")
        if all(getattr(args, k, None) is not None for k in ("sweep", "points", "fstart", "fstop")):
            _ac_spec(args, None)  # the whole sweep on the command line: checked before reading the file
    net = net or load_network(args.file)
    if not quiet:
        _warn_notes(net)
    freqs = frequencies_of(*_ac_spec(args, net))
    outputs = [o.strip() for o in args.outputs.split(";") if o.strip()] if getattr(args, "outputs", None) else None
    res = ac(net, freqs, input=getattr(args, "input", None), outputs=outputs,
             formulation=_formulation(args.formulation))
    if header:
        print(f"# ac analysis: response to {res.input}")
    if getattr(args, "csv", None) and not header:
        with open(args.csv, "w") as fh:
            cols = ["frequency"] + [f"{w}({o})" for o in res.values for w in ("mag", "phase")]
            fh.write(",".join(cols) + "\n")
            for k, f in enumerate(res.frequencies):
                row = [f] + [x for o in res.values for x in (res.magnitude(o)[k], res.phase(o)[k])]
                fh.write(",".join(repr(float(x)) for x in row) + "\n")
    else:
        print(res.table())
    plot = getattr(args, "bode", None) or (getattr(args, "plot", None) if not header else None)
    if plot:
        res.plot(plot, title=f"{net.name} ({os.path.basename(args.file)})")
    return 0


def cmd_simulate(args):
    _writable(args.csv, "--csv")
    _writable(args.plot, "--plot")
    specs = _selection(args.outputs)
    net = load_network(args.file)
    _warn_notes(net)
    tran = getattr(net, "tran", None)
    analyses = list(getattr(net, "analyses", None) or [])
    several = bool(analyses) and (bool(tran) or args.tstop is not None or len(analyses) > 1)
    if ".op" in analyses:
        from netdyn.numerics.circuit.operating_point import operating_point
        if several:
            print("# operating point")
        print(operating_point(net, formulation=_formulation(args.formulation)).table())
    if ".ac" in analyses:
        cmd_ac(args, net=net, header=several)
    if analyses and not tran and args.tstop is None:
        return 0
    if several:
        print("# transient")
    tstop = args.tstop if args.tstop is not None else (tran.tstop if tran else None)
    if tstop is None:
        raise UsageError(f"{args.file}: no --tstop given and the file has no .tran; pass --tstop T")
    if not tstop > 0:
        raise UsageError(f"--tstop must be positive, got {tstop:g}")
    step = args.step if args.step is not None else ((tran and tran.tstep) or tstop / 1000)
    if not step > 0:
        raise UsageError(f"--step must be positive, got {step:g}")
    points = int(round(tstop / step))
    if points > args.max_points:
        raise UsageError(f"--step {step:g} gives {points:,} output points over {tstop:g} s, over the cap of "
                         f"{args.max_points:,}; give a larger --step or raise the cap with --max-points {points}")
    bond = _is_bond_graph(net)
    save = _selection(args.save, "--save") if getattr(args, "save", None) is not None else None
    kept = save or getattr(net, "save", None)  # --save, else the netlist's .save cards
    if kept and specs is None and not bond:  # the table holds what is kept
        spelled = {h.lower(): h for h in _table_headers(net)}
        specs = [spelled.get(k.lower(), k) for k in kept]
    if not bond:  # the columns, and the table's size, known before any work
        headers, pending = _select(_table_headers(net), specs)
        if pending and not _wants_coordinates(net):
            raise UsageError(f"--outputs: no column {pending[0]!r}; columns are v(node) and i(element), "
                             "e.g. 'v(out);i(R1)' or 'v(*)'")
        cells = (points + 1) * (len(headers) + 1)
        if cells > args.max_cells:
            raise UsageError(f"the table would hold {len(headers) + 1:,} columns x {points + 1:,} rows = {cells:.3g} "
                             f"numbers, over the cap of {args.max_cells:.3g}; pick columns with --outputs "
                             "(e.g. 'v(out);i(V1)' or 'v(n*)'), give a larger --step, or raise the cap with "
                             f"--max-cells {cells}")
    import numpy as np
    from netdyn.numerics.simulate import simulate
    t_eval = np.linspace(0.0, tstop, max(points, 1) + 1)
    initial = _initial_values(args, net)
    bar = ProgressBar(0.0, tstop, sys.stderr, mode=args.progress)
    sol = None
    try:
        sol = simulate(net, (0.0, tstop), t_eval=t_eval, formulation=_formulation(args.formulation),
                       progress=bar, compiled_loop=_compiled_loop(), save=save, **initial)
    finally:
        bar.close(stopped=sol is None or getattr(sol, "status", 0) == -2)
    tstart = (tran and tran.tstart) or 0.0
    if bond:
        cols = _bond_graph_columns(net, sol, specs)
    else:
        if _wants_coordinates(net):
            coordinates = list(sol.coordinate_names)
            every = _table_headers(net) + coordinates
            headers, pending = _select(every, specs)
            if specs is None:  # the whole table: nodes, elements, then the coordinates
                headers = every
            if pending:
                raise UsageError(f"--outputs: no column {pending[0]!r}; columns are v(node), i(element) and the "
                                 f"coordinates ({_listing(coordinates)})")
        cols = _columns(net, sol, headers)
    if tstart > 0:
        keep = sol.t >= tstart
        cols = [(n, v[keep]) for n, v in cols]
    if args.csv:
        with open(args.csv, "w") as fh:
            _write_table(cols, fh, sep=",")
    else:
        _write_table(cols, sys.stdout)
    if args.plot:
        from netdyn.numerics.results.quantities import quantity
        _plot(cols, args.plot, f"{net.name} ({os.path.basename(args.file)})", None,
              _bond_graph_quantity(net) if bond else
              (lambda _, spec: quantity(None, spec, sol.result_index)))  # O(1) a column, no symbolic model
    if getattr(sol, "status", 0) == -2:  # Ctrl-C: the table holds the times reached
        print(f"netdyn: {sol.message}", file=sys.stderr)
        return 130
    return 0


def _initial_values(args, net):
    """``q0``/``f0``/``guess`` of ``simulate`` from ``--q0``/``--f0``/``--guess NAME=VALUE`` (repeatable; a
    multi-coordinate joint ``NAME=V1,V2``), names checked against the network. What is not given comes
    from the file's assembly (``netdyn.graph.assembly``), as in ``netdyn.simulate``.

    >>> from netdyn.linkages import four_bar
    >>> args = build_parser().parse_args(["simulate", "f.yaml", "--q0", "O=0.4", "--guess", "theta_rod=0.9"])
    >>> _initial_values(args, four_bar())
    {'q0': {'O': 0.4}, 'guess': {'theta_rod': 0.9}}
    """
    from netdyn.graph.assembly import checked
    out = {}
    for part in ("q0", "f0", "guess"):
        given = getattr(args, part, None)
        if not given:
            continue
        values = {}
        for item in given:
            name, sep, text = item.partition("=")
            name = name.strip()
            if not sep or not name or not text.strip():
                raise UsageError(f"--{part} expects NAME=VALUE (e.g. --{part} theta_crank=0.4), got {item!r}")
            try:
                numbers = [parse_value(v.strip()) for v in text.split(",")]
            except ParseError:
                raise UsageError(f"--{part} {item}: {text!r} is not a number") from None
            values[name] = numbers[0] if len(numbers) == 1 else numbers
        if hasattr(net, "bodies"):  # a network: names checked here; a bond graph's by simulate
            try:
                values = checked(net, part, values, where=f"--{part}")
            except NetdynError as exc:
                raise UsageError(str(exc)) from None
        out[part] = values
    return out


def cmd_equations(args):
    from netdyn.export import export
    _writable(args.output, "--output", create=True)  # generated code goes where the build wants it
    net = load_network(args.file)
    if args.format == "state":
        if not _is_bond_graph(net):
            raise UsageError(f"{args.file}: --format state is for bond-graph files; this is a network")
        text = "\n".join(f"{eq.lhs} = {eq.rhs}" for eq in net.state_equations().equations()) + "\n"
        return _emit(text, args.output)
    from netdyn.graph.network import as_model
    model = as_model(net, _formulation(args.formulation))  # a netlist's .param names stay parameters
    options = {}
    if args.format == "latex":
        options = {"standalone": args.standalone, "efforts": args.efforts}
    if args.format == "c" and args.output:
        directory, base = os.path.split(args.output)
        export(model, "c", name=os.path.splitext(base)[0]).write(directory or ".")
        return 0
    out = export(model, args.format, **options)
    if args.format == "c":
        text = str(out)
    elif args.format == "sympy":
        text = "\n".join(f"{k} = {getattr(out, k)}" for k in ("q", "M", "F", "Phi_q", "phi", "A", "a",
                                                               "lambdas", "mus"))
        text += "\n# M*q'' = F - Phi_q.T*lambdas - A.T*mus\n"
    else:
        text = out if out.endswith("\n") else out + "\n"
    return _emit(text, args.output)


def _emit(text, output=None):
    """Write ``text`` to the file ``output``, or to stdout; the command's exit code (0)."""
    if output:
        with open(output, "w") as fh:
            fh.write(text)
    else:
        sys.stdout.write(text)
    return 0


def _bond_graph_info(bg, path, warnings, p=print):
    """The bond-graph lines of ``netdyn info``: elements by kind, bonds, causality."""
    p(f"bond graph: {bg.name} ({path}); efforts: {bg.effort_name}, flows: {bg.flow_name}")
    p(f"elements: {len(bg.elements)} ({_counts(bg.kind(n) for n in bg.elements)})")
    p(f"bonds: {len(bg.bond_names)}")
    try:
        for line in bg.causality().report().splitlines():
            p(f"causality: {line}")
    except NetdynError as exc:
        warnings.append(str(exc))


def cmd_info(args):
    """What a file holds, cheaply: elements by kind, nodes, structural faults; with ``--derive`` (by itself
    up to :data:`DERIVE_UP_TO` elements) the model too: coordinates, constraints, degrees of freedom and the
    integrator ``simulate`` would pick."""
    net = load_network(args.file)
    warnings = list(getattr(net, "netlist_notes", None) or [])
    p = print
    bond = _is_bond_graph(net)
    if bond:
        _bond_graph_info(net, args.file, warnings)
        size = len(net.elements)
    else:
        from netdyn.graph.assemble import structural_check
        try:
            structural_check(net)
        except NetdynError as exc:
            warnings.append(str(exc))
        size = len(net.elements)
        p(f"network: {net.name} ({args.file})")
        p(f"elements: {size} ({_counts(type(el).__name__ for el in net.elements.values())})")
        if net.bodies:
            p(f"bodies: {len(net.bodies)} ({_names(net.bodies)})")
        nodes = [n for n in net.graph.nodes if n not in net.bodies and n != "0"]
        ground = "0" in net.graph
        p(f"nodes: {_listing(nodes)}{' + ground' if ground else ''}" if nodes else
          f"nodes: {'ground only' if ground else 'none'}")
    derive = args.derive if args.derive is not None else size <= DERIVE_UP_TO
    if derive:
        _model_info(args, net, warnings, p)
    else:
        p(f"model: not derived ({size:,} elements); --derive adds the coordinates, constraints, degrees of "
          "freedom and the integrator")
    p(f"warnings ({len(warnings)}):" + ("" if warnings else " none"))
    for w in warnings:
        p(f"  - {w}")
    return 0


def cmd_fmu(args):
    from netdyn.export.fmu import save_fmu
    fmu = save_fmu(load_network(args.file), args.output, outputs=[o for o in (args.outputs or "").split(";") if o],
                   inputs=[i for i in (args.inputs or "").split(",") if i], kind=args.kind,
                   formulation=_formulation(args.formulation), stop_time=args.tstop,
                   dynamic_states=args.dynamic_states)
    print(f"{fmu.path}: FMI 2.0 {fmu.kind}, states {', '.join(fmu.states) or 'none'}"
          + (" at the start (dynamic state selection)" if fmu.dynamic_states else ""))
    return 0


def _model_info(args, net, warnings, p):
    """The lines of ``netdyn info --derive``: the model assembled and derived, checked numerically at t = 0."""
    import numpy as np
    try:
        cut = [c.strip() for c in args.cut.split(",") if c.strip()] if getattr(args, "cut", None) else None
        model = net.model(formulation=args.formulation) if _is_bond_graph(net) else \
            net.model(formulation=_formulation(args.formulation), check=False, cut=cut)
    except NetdynError as exc:
        warnings.append(f"cannot assemble the model: {exc}")
        return
    forms = model.metadata.get("formulation", {})
    if isinstance(forms, str):
        p(f"formulation: {forms}")
    elif forms:
        p(f"formulation: {', '.join(f'{d} {f}' for d, f in forms.items())}")
    planar = model.metadata.get("planar")
    if planar and planar.joints:
        tree = [f"{j} ({'ground' if a == '0' else a}-{b})" for j, a, b in planar.tree_edges]
        p(f"joint tree ({len(planar.tree)}, relative coordinates): {_names(tree, 12) or 'none'}")
        cuts = [f"{c} (closes {' '.join(planar.loops[c])})" for c in planar.cuts]
        p(f"cut joints ({len(planar.cuts)}): {_names(cuts, 6, '; ') or 'none'}")
    n, m1, m2 = len(model.coordinates), len(model.constraints), len(model.flow_constraints)
    p(f"coordinates ({n}): {_names(model.coordinate_names, 12)}")
    for what, mults, labels in (("displacement", model.lambdas, model.constraint_labels),
                                ("flow", model.mus, model.flow_constraint_labels)):
        listed = [f"{m.func.__name__}: {lab}" for m, lab in zip(mults, labels)]
        p(f"{what} constraints ({len(mults)}): {_names(listed, 6, '; ') or 'none'}")
    eq = model.derive()
    inertial = {j for (_, j) in eq.M}
    algebraic = [name for j, name in enumerate(model.coordinate_names) if j not in inertial]
    try:
        from netdyn.numerics.dae.initial import consistent_initial_conditions
        from netdyn.numerics.functions.compiled import compile_model
        from netdyn.numerics.paths import method_for
        from netdyn.graph.assembly import fill
        cm = compile_model(model)
        pv = cm.parameter_vector()
        q0, f0, guess = fill(model)  # the file's stored assembly, as `netdyn simulate FILE` starts from it
        q, f = consistent_initial_conditions(cm, 0.0, q0, f0, pv, guess=guess)
        c = cm.constraints(0.0, q, f, pv)
        C = c.jacobian
        rank = int(np.linalg.matrix_rank(C)) if C.size else 0
        p(f"degrees of freedom: {n - rank} ({n} coordinates - {rank} independent constraints)")
        tran = getattr(net, "tran", None)
        choice = method_for(net, (0.0, float(tran.tstop if tran else 1.0)), _formulation(args.formulation))
        p(f"integrator: {choice.name} ({choice.reason})")
        for name, why in choice.declined:
            p(f"  not {name}: {why}")
        if rank < m1 + m2:
            warnings.append(f"{m1 + m2 - rank} redundant constraint(s) at t = 0")
    except NetdynError as exc:
        p(f"degrees of freedom: {n - m1 - m2} ({n} coordinates - {m1 + m2} constraints)")
        warnings.append(f"no numeric check at t = 0: {exc}")
    if algebraic:
        p(f"flows without inertia (algebraic): {_names(algebraic, 12)}")


def cmd_demo(args):
    import importlib
    import importlib.util
    if importlib.util.find_spec("netdyn.demo") is None:
        raise UsageError("the demo is not part of this installation (netdyn.demo is missing)")
    demo = importlib.import_module("netdyn.demo")
    demo.run(args.outdir)
    print(f"netdyn demo: figures in {args.outdir}")
    return 0


def _compiled_loop():
    """``netdyn simulate``'s loop: NETDYN_COMPILED_LOOP when set, else the compiled loop when numba's cache
    holds it (``netdyn warmup``), in chunks that draw the progress bar and honour Ctrl-C."""
    return None if os.environ.get("NETDYN_COMPILED_LOOP", "").strip() else "auto"


def cmd_warmup(args):
    from netdyn.numerics.mechanics.compiled_projection import loop_cached, warm_up
    was = loop_cached()
    seconds = warm_up()
    print(f"netdyn warmup: the compiled projection loop {'was already' if was else 'is now'} in numba's cache "
          f"({seconds:.1f} s); simulate(..., compiled_loop='auto') or NETDYN_COMPILED_LOOP=auto uses it")
    from netdyn.numerics.circuit.nonlinearsim import warm_up as warm_circuit
    print(f"netdyn warmup: the circuit path's compiled BDF loop is in numba's cache ({warm_circuit():.1f} s)")
    return 0


# ------------------------------------------------------------------------------------------ parser

def build_parser():
    """The ``argparse`` parser of the ``netdyn`` command."""
    parser = _Parser(prog="netdyn", description="Physical systems as networks: equations of motion from energy.")
    parser.add_argument("--version", action="version", version=f"netdyn {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True

    def add(name, func, help_text):
        sp = sub.add_parser(name, help=help_text, description=help_text)
        sp.set_defaults(func=func)
        return sp

    files = (f"a SPICE netlist ({', '.join(NETLIST_EXTENSIONS)}), a model file or a bond-graph file "
             f"({', '.join(MODEL_EXTENSIONS)})")
    d = add("demo", cmd_demo, "run the demonstration and write its figures")
    d.add_argument("outdir", nargs="?", default="netdyn-demo", help="output directory (default: netdyn-demo)")
    s = add("simulate", cmd_simulate, "simulate a netlist or model file; print time, node voltages and currents "
            "(v(node): the node's across variable - voltage, velocity; i(element): its through variable - current, "
            "force, torque; SPICE signs)")
    s.add_argument("file", metavar="FILE", help=files)
    s.add_argument("--tstop", type=spice_number, help="end time in seconds, SPICE suffixes allowed: 5m, 20u "
                   "(default: the netlist's .tran)")
    s.add_argument("--step", type=spice_number, help="output step in seconds (default: .tran's step or tstop/1000)")
    s.add_argument("--csv", metavar="OUT", help="write the table as CSV to OUT instead of printing it")
    s.add_argument("--plot", metavar="OUT.png", help="plot the voltages and currents to a PNG file")
    s.add_argument("--formulation", metavar="F",
                   help="loop, branch or node (or per domain: electrical=branch,translational=node); "
                   "bond graphs: bond or reduced")
    s.add_argument("--progress", choices=("auto", "always", "never"), default="auto",
                   help="progress bar on stderr (auto: on a terminal, for runs over a second); each pass over the "
                   "span is labelled (first pass, refining), and a Ctrl-C leaves it where the run stopped")
    s.add_argument("--outputs", metavar="LIST", help="';'-separated columns to write, names or patterns: "
                   "'v(out);i(R1)', 'v(*)', 'i(C*)' (default: every node and element)")
    s.add_argument("--save", metavar="LIST", help="';'-separated quantities to keep, as SPICE's .save: "
                   "'v(out);i(V1)' (default: the netlist's .save cards, else everything; outputs above "
                   "NETDYN_OUTPUT_LIMIT bytes stream to an HDF5 file)")
    s.add_argument("--max-points", type=count, default=MAX_POINTS, metavar="N",
                   help=f"refuse more than N output times (default {MAX_POINTS:,})")
    s.add_argument("--max-cells", type=count, default=MAX_CELLS, metavar="N",
                   help=f"refuse a table of more than N numbers, rows x columns (default {MAX_CELLS:.0e}: about "
                   "1 GB of CSV)")
    s.add_argument("--q0", action="append", metavar="NAME=VALUE",
                   help="initial value of a coordinate or joint (theta_crank=0.4, O=0.4), repeatable; replaces "
                   "the file's stored q0")
    s.add_argument("--f0", action="append", metavar="NAME=VALUE",
                   help="initial rate (theta_crank=2, O_dot=2), repeatable; replaces the file's stored f0")
    s.add_argument("--guess", action="append", metavar="NAME=VALUE",
                   help="where the position solve starts (which assembly branch: theta_rod=0.9), repeatable; "
                   "replaces the file's stored guess")
    e = add("equations", cmd_equations, "print the derived equations of motion")
    e.add_argument("file", metavar="FILE", help=files)
    e.add_argument("--format", choices=FORMATS + ("state",), default="latex",
                   help="output format (default: latex; state: a bond graph's explicit state equations)")
    e.add_argument("-o", "--output", metavar="OUT", help="write to OUT (for c: OUT.c and OUT.h)")
    e.add_argument("--formulation", metavar="F", help="loop, branch or node (or per domain); bond graphs: bond "
                   "or reduced")
    e.add_argument("--standalone", action="store_true", help="latex: a complete .tex document")
    e.add_argument("--efforts", choices=("left", "right"), default="left",
                   help="latex: equations = 0 (left) or applied efforts on the right")
    o = add("op", cmd_op, "print the DC operating point (node voltages, element currents) as SPICE's .op does")
    o.add_argument("file", metavar="FILE", help=files)
    o.add_argument("--formulation", metavar="F", help="loop, branch or node (the answer does not depend on it)")
    a = add("ac", cmd_ac, "small-signal AC analysis about the operating point: magnitude and phase per frequency")
    a.add_argument("file", metavar="FILE", help=files)
    a.add_argument("--input", metavar="SOURCE", help="the source driven (default: the one with an AC value)")
    a.add_argument("--outputs", metavar="LIST", help="';'-separated v(node), v(a,b), i(element) (default: all "
                   "node voltages)")
    a.add_argument("--sweep", choices=("dec", "oct", "lin"), help="sweep type (default: the netlist's .ac)")
    a.add_argument("--points", type=count, help="points per decade/octave, or in all for lin")
    a.add_argument("--fstart", type=spice_number, help="first frequency in Hz (SPICE suffixes allowed)")
    a.add_argument("--fstop", type=spice_number, help="last frequency in Hz")
    a.add_argument("--csv", metavar="OUT", help="write the table as CSV to OUT instead of printing it")
    a.add_argument("--plot", metavar="OUT.png", help="Bode plot (dB and degrees against Hz) to a PNG file")
    a.add_argument("--formulation", metavar="F", help="loop, branch or node")
    a.add_argument("--max-points", type=count, default=MAX_FREQUENCIES, metavar="N",
                   help=f"refuse a sweep of more than N frequencies (default {MAX_FREQUENCIES:,})")
    f = add("fmu", cmd_fmu, "export an FMI 2.0 FMU (Model Exchange and/or Co-Simulation), compiled with gcc or clang")
    f.add_argument("file", metavar="FILE", help=files)
    f.add_argument("-o", "--output", metavar="OUT.fmu", required=True, help="the FMU to write")
    f.add_argument("--kind", choices=("me", "cs", "both"), default="me", help="me (default), cs or both")
    f.add_argument("--outputs", metavar="LIST", help="';'-separated outputs: v(node), i(element), coordinates")
    f.add_argument("--inputs", metavar="V1,I2", help="sources that become FMU inputs")
    f.add_argument("--tstop", type=spice_number, help="the default experiment's stop time (nominals, state choice)")
    f.add_argument("--formulation", metavar="F", help="loop, branch or node (default: the first that works)")
    f.add_argument("--dynamic-states", action="store_true", help="Model Exchange re-selects its states when the "
                   "coordinate partition degrades (abstract states state_k; docs/fmi.md)")
    add("warmup", cmd_warmup, "compile the numba kernels once (~10 s of CPU each: the projection path's stepping "
        "loop, the circuit path's BDF loop) into numba's on-disk cache; every later run loads them (docs/cli.md)")
    i = add("info", cmd_info, "what a file holds: elements by kind, nodes, structural warnings; with --derive the "
            "coordinates, constraints, degrees of freedom and integrator")
    i.add_argument("file", metavar="FILE", help=files)
    i.add_argument("--formulation", metavar="F", help="loop, branch or node (or per domain); linkages: relative; "
                   "bond graphs: bond or reduced")
    i.add_argument("--cut", metavar="J1,J2", help="linkages: the joints the relative formulation cuts")
    i.add_argument("--derive", action=argparse.BooleanOptionalAction, default=None,
                   help=f"assemble and derive the model: coordinates, constraints, degrees of freedom, integrator "
                   f"(default: only for files of at most {DERIVE_UP_TO} elements)")
    return parser


def main(argv=None):
    """Run the command line; returns the exit code (0, or 2 on bad input)."""
    args = None
    try:
        args = build_parser().parse_args(argv)
        return args.func(args)
    except (UsageError, NetdynError) as exc:
        where = getattr(args, "file", None)
        text = str(exc)
        if isinstance(exc, NetdynError) and where and not text.startswith(where):
            text = f"{where}: {text}"
        print("netdyn: error: " + " ".join(text.split()), file=sys.stderr)
        return 2
    except BrokenPipeError:  # the reader (head, less) stopped early
        sys.stderr.close()
        return 0
    except OSError as exc:
        print(f"netdyn: error: {exc.filename or ''}: {exc.strerror}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("netdyn: interrupted", file=sys.stderr)
        return 130
    except RecursionError:
        print(f"netdyn: error: {getattr(args, 'file', '')}: the input is nested too deeply to process", file=sys.stderr)
        return 2
    except Exception as exc:  # noqa: BLE001 - the promise: one line and exit code 2, never a traceback
        where = getattr(args, "file", None)
        text = " ".join(str(exc).split())[:300]
        print(f"netdyn: error: {where + ': ' if where else ''}{type(exc).__name__}: {text} (netdyn could not "
              "process this input; please report it with the file)", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
