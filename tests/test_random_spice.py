"""Random SPICE decks as users write them: start-up semantics, ``.op`` and ``.ac`` against ngspice.

The circuits are those of :func:`test_random_circuits.random_circuit` (R, L, C, V and I sources with V–C
loops and I–L cut-sets on purpose; optionally E/G/F/H controlled sources or diodes with random ``.model``
cards), written here as the text of a deck the way people type them — SPICE suffixes (``4.7k``, ``10u``,
``2meg``), upper and lower case, ``+`` continuation lines, comments — and read back by
:func:`netdyn.read_netlist`. ngspice runs the same text. Four checks per deck:

(a) ``.tran`` without ``uic``: the transient from the DC operating point; node voltages at 100 times
    against ngspice's to 1e-4 of each node's peak;
(b) ``.tran ... uic`` with random ``ic=`` on some capacitors and inductors and a ``.ic`` on some nodes;
    ngspice's semantics (its manual: with ``uic`` the ``.ic`` node voltages give the initial voltages of the
    capacitors, an ``ic=`` on the element takes precedence; unlisted nodes count as 0 V), same tolerance;
(c) ``netdyn op`` (the CLI) against ngspice's operating point, node voltages to 1e-6 relative;
(d) ``.ac`` with a random ``AC mag phase`` on one source, 51 frequencies: :func:`netdyn.ac` and
    ``netdyn ac`` (the CLI's CSV) against ngspice's ``.ac``, magnitude and phase to 1e-4 relative where
    the response is not tiny (above 1e-6 of the largest response of the deck).

ngspice is run at tight tolerances (``reltol=1e-6``) with a maximum step of 1/20000 of the span; where
its default-tolerance answer differs from its tight one by more than the tolerance of the check the deck
is counted apart ("ngspice unconverged"), not as a netdyn failure.

Run ``python tests/test_random_spice.py 60 [plain|controlled|diodes]`` for the statistics.
"""
import contextlib
import io
import os
import re
import shutil
import tempfile

import numpy as np
import pytest

import netdyn
from netdyn.analysis.ac import frequencies_of
from netdyn.cli import main
from netdyn.io.spice import run_ngspice, run_ngspice_ac
from test_random_circuits import TSTOP, drawn_status, mna, mna_exact, random_circuit, waveform_value

NGSPICE = shutil.which("ngspice")
TIGHT = {"reltol": 1e-6, "vntol": 1e-9, "abstol": 1e-15}
SUFFIX = (("t", 1e12), ("g", 1e9), ("meg", 1e6), ("k", 1e3), ("m", 1e-3), ("u", 1e-6), ("n", 1e-9),
          ("p", 1e-12), ("f", 1e-15))
AC_SWEEP = ("dec", 10, 1.0, 1e5)   # 51 frequencies


# ------------------------------------------------------------------------------------------ deck writer

class Deck:
    """The text of a random deck for one drawn circuit, and what it asks for."""

    def __init__(self, drawn, mode, seed):
        self.drawn, self.mode = drawn, mode
        self.rng = np.random.default_rng([seed, {"tran": 1, "uic": 2, "op": 3, "ac": 4}[mode]])
        self.ic, self.element_ic, self.ac_source = {}, {}, None
        self.text = self._write()

    def num(self, x):
        """``x`` as a user writes it: plain, exponent or with a SPICE suffix (any case)."""
        x = float(x)
        style = self.rng.integers(3)
        if x == 0 or style == 0:
            return repr(x)
        if style == 1:
            return f"{x:.17e}"
        for suffix, scale in SUFFIX:
            if abs(x) >= scale:
                break
        return repr(x / scale) + (suffix.upper() if self.rng.uniform() < 0.3 else suffix)

    def kw(self, word):
        return word.upper() if self.rng.uniform() < 0.5 else word.lower()

    def _wave(self, wave):
        if wave[0] == "dc":
            return f"{self.kw('dc')} {self.num(wave[1])}" if self.rng.uniform() < 0.7 else self.num(wave[1])
        if wave[0] == "sin":
            return f"{self.kw('sin')}({' '.join(self.num(v) for v in wave[1:])})"
        return f"{self.kw('pulse')}({' '.join(self.num(v) for v in wave[1:])})"

    def _write(self):
        d, rng = self.drawn, self.rng
        lines = [f"random deck {d.seed} ({self.mode})", "* written by tests/test_random_spice.py"]
        models = []
        sources = [it[1] for it in d.items if it[0] in "VI"]
        if self.mode == "ac":
            self.ac_source = sources[int(rng.integers(len(sources)))]
        for kind, name, a, b, value, wave in d.items:
            if kind in "RLC":
                line = f"{name} {a} {b} {self.num(value)}"
                if self.mode == "uic" and kind in "LC" and rng.uniform() < 0.4:
                    ic = float(rng.uniform(-3, 3) if kind == "C" else rng.uniform(-5e-3, 5e-3))
                    self.element_ic[name] = ic
                    line += f" {self.kw('ic')}={self.num(ic)}"
            elif kind in "VI":
                line = f"{name} {a} {b} {self._wave(wave)}"
                if name == self.ac_source:
                    mag, ph = float(10 ** rng.uniform(-1, 1)), float(rng.uniform(-180, 180))
                    self.ac_mag = (mag, ph)
                    line += f" {self.kw('ac')} {self.num(mag)} {self.num(ph)}"
            elif kind in "EG":
                line = f"{name} {a} {b} {wave[0]} {wave[1]} {self.num(value)}"
            elif kind in "FH":
                line = f"{name} {a} {b} {wave} {self.num(value)}"
            else:  # a diode: value is its .model parameters
                model = f"dm{len(models) + 1}"
                models.append(f".model {model} D(" + " ".join(f"{k}={self.num(v)}" for k, v in value.items()) + ")")
                line = f"{name} {a} {b} {model}"
            if rng.uniform() < 0.15:  # a continuation line
                head, _, tail = line.rpartition(" ")
                line = f"{head}\n+ {tail}"
            if rng.uniform() < 0.1:
                line += f" ; {name} drawn"
            lines.append(line)
        lines += models
        nodes = [n for n in d.nodes if n != "0"]
        if self.mode == "uic":
            picked = [n for n in nodes if rng.uniform() < 0.4]
            self.ic = {n: float(rng.uniform(-4, 4)) for n in picked}
            if self.ic:
                lines.append(".ic " + " ".join(f"v({n})={self.num(v)}" for n, v in self.ic.items()))
        if self.mode == "ac":
            sweep, points, f0, f1 = AC_SWEEP
            lines.append(f".ac {sweep} {points} {self.num(f0)} {self.num(f1)}")
        elif self.mode == "op":
            lines.append(".op")
        tran = f".tran {self.num(TSTOP / 100)} {self.num(TSTOP)}"
        lines.append(tran + (f" {self.kw('uic')}" if self.mode == "uic" else ""))
        lines.append(self.kw(".end"))
        return "\n".join(lines) + "\n"

    @property
    def nodes(self):
        return [n for n in self.drawn.nodes if n != "0"]


# ------------------------------------------------------------------------------------------ checks

def _node_errors(ours, ref, nodes):
    """Per node max |ours − ref| over the peak of ``ref`` (floor: 1e-5 of the largest peak)."""
    peaks = {n: float(np.max(np.abs(ref[n]))) for n in nodes}
    floor = 1e-5 * max(peaks.values(), default=0.0) + 1e-300
    return max(float(np.max(np.abs(ours[n] - ref[n]))) / max(peaks[n], floor) for n in nodes)


def _ngspice_tran(deck, probes, uic, options):
    out = run_ngspice(deck.text, probes, tstop=TSTOP, tstep=TSTOP / 1000, tmax=TSTOP / 20000, uic=uic,
                      options=options, timeout=30)
    return out


def exact_transient(deck, times):
    """The exact node voltages of a linear deck's transient (:func:`test_random_circuits.mna_exact`), from
    the DC operating point (no ``uic``: ``A x = −B u(0)``) or from the deck's ``uic`` state (capacitors at
    their ``ic=``, else the ``.ic`` voltages of their nodes with unlisted nodes at 0 V; inductors at their
    ``ic=``, else 0), with the jump at ``t = 0`` that keeps the stored charges and fluxes ``E x``."""
    drawn = deck.drawn
    E, A, B, srcs, nodes, Ls = mna(drawn)
    if deck.mode == "uic":
        idx = {n: i for i, n in enumerate(nodes)}
        ex0 = np.zeros(E.shape[0])
        for kind, name, a, b, value, _ in drawn.items:
            if kind == "C":
                vc = deck.element_ic.get(name, deck.ic.get(a, 0.0) - deck.ic.get(b, 0.0))
                for node, sign in ((a, 1.0), (b, -1.0)):
                    if node in idx:
                        ex0[idx[node]] += sign * value * vc
        for k, name in enumerate(Ls):
            ex0[len(nodes) + k] = E[len(nodes) + k, len(nodes) + k] * deck.element_ic.get(name, 0.0)
    else:
        u0 = np.array([float(waveform_value(s[5], np.array([0.0]))[0]) for s in srcs])
        ex0 = E @ np.linalg.solve(A, -(B @ u0))
    return mna_exact(drawn, times, ex0=ex0)


def no_dc_point(drawn):
    """True when the drawn circuit has no DC operating point: its MNA at DC (``A``, diodes as resistors) is
    singular — a loop of inductors and voltage sources, a cut-set of capacitors and current sources."""
    from test_random_circuits import Drawn
    plain = Drawn(drawn.seed)
    plain.nodes = drawn.nodes
    plain.items = [("R",) + it[1:4] + (1e3, None) if it[0] == "D" else it for it in drawn.items]
    A = mna(plain)[1]
    return bool(A.size) and np.linalg.matrix_rank(A) < A.shape[0]


def refused_by_name(exc):
    """A refusal of a circuit without a DC operating point that names the elements at fault."""
    return isinstance(exc, netdyn.SingularSystemError) and "DC operating point is singular: a loop" in str(exc) \
        or isinstance(exc, netdyn.SingularSystemError) and "cut-set of capacitors" in str(exc)


def check_tran(seed, devices=None, uic=False, ngspice=True):
    """(a) or (b): netdyn's transient of the deck against the exact solution (linear decks) and ngspice.

    The reference of a linear deck is the exact solution (``ngspice_vs_exact`` records how far ngspice is
    from it); of a diode deck, ngspice at tight tolerances (``ngspice_spread``: how far its default ones are)."""
    drawn = random_circuit(seed, devices)
    deck = Deck(drawn, "uic" if uic else "tran", seed)
    report = {"seed": seed, "devices": devices, "check": "uic" if uic else "tran"}
    linear = devices != "diodes"
    status, growth = drawn_status(drawn) if linear else ("ok", None)
    if status == "singular":
        report["singular"] = True
        return report
    if growth is not None and growth > 10.0:  # grows by more than e^10 over the run: no reference holds
        report["unstable"] = growth
        return report
    probes = [f"v({n})" for n in deck.nodes]
    times = np.linspace(0.0, TSTOP, 101)
    if not uic and no_dc_point(drawn):  # netdyn must refuse it, naming the loop or cut-set
        report["no_dc_point"] = True
        try:
            netdyn.simulate(netdyn.read_netlist(deck.text), None, t_eval=times)
            report["error"] = "simulated a circuit without a DC operating point"
        except Exception as exc:  # noqa: BLE001
            if not refused_by_name(exc):
                report["error"] = f"{type(exc).__name__}: {str(exc).splitlines()[0][:200]}"
        return report
    ref = ng = None
    if linear:
        exact = exact_transient(deck, times[1:])
        ref = {n: exact[f"v({n})"] for n in deck.nodes}
    if ngspice and NGSPICE:
        try:
            loose = _ngspice_tran(deck, probes, uic, None)
            ng = {n: np.interp(times[1:], loose["time"], loose[f"v({n})"]) for n in deck.nodes}
            if ref is None:
                tight = _ngspice_tran(deck, probes, uic, TIGHT)
                ref = {n: np.interp(times[1:], tight["time"], tight[f"v({n})"]) for n in deck.nodes}
                report["ngspice_spread"] = _node_errors(ng, ref, deck.nodes)
            else:
                report["ngspice_vs_exact"] = _node_errors(ng, ref, deck.nodes)
        except netdyn.NetdynError as exc:
            report["ngspice_failed"] = str(exc).splitlines()[0][:120]
    if ref is None:
        return report
    try:
        net = netdyn.read_netlist(deck.text)
        sol = netdyn.simulate(net, None, t_eval=times)
    except Exception as exc:  # noqa: BLE001 - recorded: the statistics count it
        report["error"] = f"{type(exc).__name__}: {str(exc).splitlines()[0][:200]}"
        return report
    ours = {n: sol.voltage(n)[1:] for n in deck.nodes}
    report["vs_reference"] = _node_errors(ours, ref, deck.nodes)
    if ng is not None:
        report["vs_ngspice"] = _node_errors(ours, ng, deck.nodes)
    if not uic and ng is not None:  # t = 0: ngspice's first point is its operating point
        report["t0"] = _node_errors({n: sol.voltage(n)[:1] for n in deck.nodes},
                                    {n: loose[f"v({n})"][:1] for n in deck.nodes}, deck.nodes)
    return report


def cli(argv):
    """Run the ``netdyn`` command; returns (exit code, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue(), err.getvalue()


def check_op(seed, devices=None):
    """(c): ``netdyn op deck`` against ngspice's operating point (the first point of a transient without uic)."""
    drawn = random_circuit(seed, devices)
    deck = Deck(drawn, "op", seed)
    report = {"seed": seed, "devices": devices, "check": "op"}
    probes = [f"v({n})" for n in deck.nodes]
    if no_dc_point(drawn):  # the CLI must refuse it with one line naming the loop or cut-set
        report["no_dc_point"] = True
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "deck.cir")
            with open(path, "w") as fh:
                fh.write(deck.text)
            code, out, err = cli(["op", path])
        if code != 2 or "DC operating point is singular: a loop" not in err and "cut-set of capacitors" not in err:
            report["error"] = f"exit {code}: {err.strip()[:200]}"
        return report
    try:
        ng = run_ngspice(deck.text, probes, tstop=TSTOP / 1000, tstep=TSTOP / 1e5, uic=False, options=TIGHT,
                         timeout=30)
    except netdyn.NetdynError as exc:
        report["ngspice_failed"] = str(exc).splitlines()[0][:120]
        return report
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "deck.cir")
        with open(path, "w") as fh:
            fh.write(deck.text)
        code, out, err = cli(["op", path])
    if code:
        report["error"] = err.strip()[:200]
        return report
    ours = {m.group(1): float(m.group(2)) for m in re.finditer(r"^v\((\S+)\)\s+(\S+)$", out, re.M)}
    ref = {n: float(ng[f"v({n})"][0]) for n in deck.nodes}
    scale = max(max(abs(v) for v in ref.values()), 1.0)  # near zero: absolute, 1e-3 V
    report["vs_ngspice"] = max(abs(ours[n] - ref[n]) / max(abs(ref[n]), 1e-3 * scale) for n in deck.nodes)
    return report


def check_ac(seed, devices=None, use_cli=True):
    """(d): :func:`netdyn.ac` (and ``netdyn ac``) against ngspice's ``.ac``."""
    drawn = random_circuit(seed, devices)
    deck = Deck(drawn, "ac", seed)
    report = {"seed": seed, "devices": devices, "check": "ac", "input": deck.ac_source}
    probes = [f"v({n})" for n in deck.nodes]
    sweep, points, f0, f1 = AC_SWEEP
    try:
        ng = run_ngspice_ac(deck.text + ".options reltol=1e-6 vntol=1e-9 abstol=1e-15\n", probes,
                            sweep, points, f0, f1, timeout=30)
    except netdyn.NetdynError as exc:  # ngspice's .ac needs its operating point
        report["ngspice_failed"] = str(exc).splitlines()[0][:120]
        report["no_dc_point"] = no_dc_point(drawn)
        return report
    freqs = frequencies_of(sweep, points, f0, f1)
    try:
        net = netdyn.read_netlist(deck.text)
        res = netdyn.ac(net, freqs, outputs=probes)
    except Exception as exc:  # noqa: BLE001
        if devices == "diodes" and no_dc_point(drawn) and refused_by_name(exc):
            report["no_dc_point"] = True  # a diode's small-signal law needs the operating point
        else:
            report["error"] = f"{type(exc).__name__}: {str(exc).splitlines()[0][:200]}"
        return report
    # not tiny: above 1e-6 of the deck's largest response and 1e-12 of the drive (all zero: a source fixes it)
    big = max(max(float(np.max(np.abs(ng[p]))) for p in probes), 1e-6 * deck.ac_mag[0])
    worst = 0.0
    for p in probes:
        keep = np.abs(ng[p]) > 1e-6 * big
        if keep.any():
            worst = max(worst, float(np.max(np.abs(res[p][keep] / ng[p][keep] - 1))))
    report["vs_ngspice"] = worst
    if use_cli:
        with tempfile.TemporaryDirectory() as tmp:
            path, csv = os.path.join(tmp, "deck.cir"), os.path.join(tmp, "ac.csv")
            with open(path, "w") as fh:
                fh.write(deck.text)
            code, out, err = cli(["ac", path, "--csv", csv])
            if code:
                report["cli_error"] = err.strip()[:200]
                return report
            with open(csv) as fh:
                header = fh.readline().strip().split(",")
            rows = np.loadtxt(csv, delimiter=",", skiprows=1, ndmin=2)
        cli_worst = 0.0
        for p in probes:
            k = header.index(f"mag({p})")
            z = rows[:, k] * np.exp(1j * np.radians(rows[:, k + 1]))
            keep = np.abs(ng[p]) > 1e-6 * big
            if keep.any():
                cli_worst = max(cli_worst, float(np.max(np.abs(z[keep] / ng[p][keep] - 1))))
        report["cli_vs_ngspice"] = cli_worst
    return report


CHECKS = {"tran": lambda s, dev: check_tran(s, dev, uic=False), "uic": lambda s, dev: check_tran(s, dev, uic=True),
          "op": check_op, "ac": check_ac}
LIMITS = {"tran": 1e-4, "uic": 1e-4, "op": 1e-6, "ac": 1e-4}


def verdict(r):
    """``"pass"``, ``"fail"`` (netdyn off ngspice), ``"error"`` (netdyn raised), or ngspice's own trouble."""
    if "ngspice_failed" in r and "vs_reference" not in r and "error" not in r:
        return "ngspice failed"
    if "error" in r or "cli_error" in r:
        return "error"
    if "singular" in r:
        return "singular"
    if "unstable" in r:
        return "unstable (no reference)"
    if r.get("no_dc_point"):
        return "no DC point, refused by name"
    if r.get("ngspice_spread", 0.0) > (1e-3 if r.get("devices") == "diodes" else LIMITS[r["check"]]):
        return "ngspice unconverged"
    if r["check"] in ("tran", "uic"):
        worst = r["vs_reference"]
        if r.get("devices") == "diodes":  # the criterion for diode transients: 1e-3 of peak
            return "pass" if worst < 1e-3 else "fail"
    else:
        worst = max(r.get("vs_ngspice", 0.0), r.get("cli_vs_ngspice", 0.0))
    return "pass" if worst < LIMITS[r["check"]] else "fail"


if __name__ == "__main__":  # statistics: python tests/test_random_spice.py 60 [plain|controlled|diodes] [checks]
    import sys
    import time
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 30
    devices = {"plain": None}.get(sys.argv[2], sys.argv[2]) if len(sys.argv) > 2 else None
    checks = sys.argv[3].split(",") if len(sys.argv) > 3 else list(CHECKS)
    t0 = time.time()
    tally = {}
    for s in range(count):
        for c in checks:
            try:
                r = CHECKS[c](s, devices)
            except Exception as exc:  # noqa: BLE001 - a crash of the check itself
                r = {"seed": s, "check": c, "error": f"check crashed: {type(exc).__name__}: {exc}"[:200]}
            v = verdict(r)
            tally.setdefault(c, {}).setdefault(v, []).append(s)
            print(v, r, flush=True)
    for c, row in tally.items():
        print(c, {k: (len(v), v[:20]) for k, v in row.items()})
    print(f"{count} seeds in {time.time() - t0:.0f} s")


# ------------------------------------------------------------------------------------------ the test run

SEEDS = {  # (check, family, seed): a fast subset of the offline run, each chosen for what it exercises
    ("tran", None, 0): "a capacitor across a SIN supply and an I-L cut-set: the DC start and its rates",
    ("tran", None, 2): "loops of inductors and voltage sources: no DC point, refused by name",
    ("uic", None, 0): "ic= on a capacitor across a supply and .ic on its nodes: the jump",
    ("uic", None, 3): "ic= and .ic with inductors in series (flux conserved) and parallel capacitors",
    ("uic", "controlled", 5): "ic= and .ic next to E, F, G, H",
    ("op", None, 1): "netdyn op against ngspice's operating point",
    ("op", None, 16): "an operating point of zeros (every source shorted at DC)",
    ("ac", None, 4): "AC on a voltage source",
    ("ac", None, 0): "AC on a current source",
    ("ac", "controlled", 5): "AC through E, F, G, H",
    ("ac", "diodes", 20): "AC about a diode operating point",
    ("op", "diodes", 20): "netdyn op of a diode circuit",
}


@pytest.mark.skipif(NGSPICE is None, reason="ngspice is not installed")
@pytest.mark.parametrize("check, family, seed", list(SEEDS))
def test_random_deck_agrees_with_ngspice(check, family, seed):
    """The linear transients against the exact solution only (ngspice's own distance from it is what the
    offline run reports); everything else against ngspice."""
    r = check_tran(seed, family, check == "uic", ngspice=family == "diodes") if check in ("tran", "uic") \
        else CHECKS[check](seed, family)
    print(SEEDS[(check, family, seed)], r)
    assert verdict(r) in ("pass", "no DC point, refused by name"), r


# ------------------------------------------------------------------------------------------ the reader, fuzzed

from hypothesis import HealthCheck, given, settings, strategies as st  # noqa: E402

JUNK = ["", "-1", "0", "nan", "1e999", "abc", "(", ")", "=", "ic=", "ic=x", "AC", "DC", "PULSE(", "SIN(1",
        "1k)", "{", "}", "{1/0}", "v(", "v(n1)=", "v(zz)=1", ".ic", ".tran", "uic", "+", "D(IS=1", "dm1", "1meg",
        "2.5Meg", "1e-3", "n1", "0", "V1", "R1", "Q1", ".model", "dmx D(XX=1)", "E1", "F1 n1 0 R1 2", ";", "*"]


@st.composite
def mutated_deck(draw):
    seed = draw(st.integers(0, 40))
    family = draw(st.sampled_from([None, "controlled", "diodes"]))
    mode = draw(st.sampled_from(["tran", "uic", "op", "ac"]))
    lines = Deck(random_circuit(seed, family), mode, seed).text.splitlines()
    for _ in range(draw(st.integers(1, 3))):
        k = draw(st.integers(1, len(lines) - 1))
        toks = lines[k].split(" ")
        op = draw(st.sampled_from(["drop", "replace", "insert", "truncate", "swap", "line"]))
        i = draw(st.integers(0, len(toks) - 1))
        word = draw(st.sampled_from(JUNK))
        if op == "drop" and len(toks) > 1:
            del toks[i]
        elif op == "replace":
            toks[i] = word
        elif op == "insert":
            toks.insert(i, word)
        elif op == "truncate":
            toks = [" ".join(toks)[:draw(st.integers(0, max(len(lines[k]) - 1, 0)))]]
        elif op == "swap":
            j = draw(st.integers(0, len(toks) - 1))
            toks[i], toks[j] = toks[j], toks[i]
        else:
            lines.insert(k, " ".join(draw(st.lists(st.sampled_from(JUNK), min_size=1, max_size=5))))
            continue
        lines[k] = " ".join(toks)
    return "\n".join(lines) + "\n"


@settings(max_examples=50, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(text=mutated_deck())
def test_a_mangled_deck_reads_or_is_a_parse_error_with_its_line(text):
    """Random decks with one to three cards damaged (a token dropped, replaced, inserted, swapped, a card cut
    short, a junk card): the reader returns a network or raises a ParseError that names the line — never
    another exception."""
    try:
        netdyn.read_netlist(text)
    except netdyn.ParseError as exc:
        assert exc.line is not None, str(exc)
