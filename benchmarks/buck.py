"""Buck converter beside ngspice: ``python -m benchmarks.buck [microseconds ...]`` (default 200; the full run
of issue 27 is ``2000``).

The deck is ``examples/netlists/buck_converter.cir``: 12 V in, an S switch (``.model SW(VT=2.5 VH=0.5
RON=0.05 ROFF=1meg)``) driven by a 100 kHz PULSE gate, a freewheeling diode, 100 µH and 10 µF into 5 Ω, run
from the DC operating point, output at 2001 points. ngspice runs the same deck twice: at its default
tolerances and at reltol 1e-6 (abstol 1e-12, vntol 1e-9), both with a largest step of span/20000. netdyn
reads the deck and simulates it: the circuit path (diode: Newton, BDF, one compiled call a segment), every
switching located by :mod:`netdyn.numerics.events` (Illinois on the path's own integration) and the run
restarted there. Times are CPU seconds: netdyn's in-process read + simulate after a warm-up, ngspice's whole
process (user + system, median of up to three runs); ratio = netdyn / ngspice (tight). Δ is the largest
difference of v(out) and i(L1) from the tight ngspice run over each one's peak, at netdyn's output times away
from ngspice's step across a switching (it resolves a switching only to its step); ngspice's spread is the
same difference between its two runs.
"""
from __future__ import annotations

import re
import shutil
import sys
import time
import warnings
from pathlib import Path

import numpy as np

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.peers import ngspice_deck  # noqa: E402

DECK = Path(__file__).resolve().parents[1] / "examples" / "netlists" / "buck_converter.cir"
TIGHT = ".options reltol=1e-6 abstol=1e-12 vntol=1e-9"


def deck(tstop, options=""):
    text = DECK.read_text()
    text = re.sub(r"(?im)^\.tran .*$", f".tran 10n {tstop!r} 0 {tstop / 20000!r}", text)
    return text.replace(".end", (options + "\n" if options else "") + ".end")


def run_netdyn(tstop):
    import netdyn
    times = np.linspace(0, tstop, 2001)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        netdyn.simulate(netdyn.read_netlist(deck(12e-6)), None)  # warm-up of the whole path
        cpu = time.process_time()
        sol = netdyn.simulate(netdyn.read_netlist(deck(tstop)), None, t_eval=times)
        cpu = time.process_time() - cpu
    return cpu, sol


def differences(sol, ref, other):
    """Largest |netdyn − ref| and |other − ref| over each probe's peak, away from ref's steps across events."""
    t = sol.t
    keep = np.r_[True, np.diff(t) > 0]
    tn = ref["time"]
    for e in sol.events:
        k = np.searchsorted(tn, e.t)
        keep &= ~((t >= tn[max(k - 1, 0)]) & (t <= tn[min(k + 1, tn.size - 1)]))
    ours_worst = spread = 0.0
    for probe, key in (("v(out)", "v(out)"), ("i(L1)", "i(l1)")):
        r = np.interp(t[keep], tn, ref[key])
        peak = float(np.max(np.abs(ref[key])))
        ours_worst = max(ours_worst, float(np.max(np.abs(sol.series(probe)[keep] - r))) / peak)
        spread = max(spread, float(np.max(np.abs(np.interp(t[keep], other["time"], other[key]) - r))) / peak)
    return ours_worst, spread


def main(argv=None):
    spans = [float(x) * 1e-6 for x in (argv if argv is not None else sys.argv[1:])] or [200e-6]
    if shutil.which("ngspice") is None:
        raise SystemExit("ngspice is not installed (apt-get install ngspice)")
    print("| buck converter, 100 kHz | switchings | ngspice CPU (default / reltol 1e-6) | netdyn read + simulate CPU "
          "| ratio (tight) | Δ vs ngspice 1e-6 | ngspice's spread |")
    print("|---|---|---|---|---|---|---|")
    for tstop in spans:
        ng_loose, loose = ngspice_deck(deck(tstop), timeout=1800)
        ng_tight, tight = ngspice_deck(deck(tstop, TIGHT), timeout=1800)
        tight = dict(tight, **{"i(l1)": tight.get("i(l1)", tight.get("l1#branch"))})
        loose = dict(loose, **{"i(l1)": loose.get("i(l1)", loose.get("l1#branch"))})
        cpu, sol = run_netdyn(tstop)
        worst, spread = differences(sol, tight, loose)
        print(f"| {tstop * 1e6:g} µs | {len(sol.events)} | {ng_loose:.3f} / {ng_tight:.3f} | {cpu:.2f} ({sol.method}) | "
              f"{cpu / ng_tight:.0f} | {worst:.1e} of peak | {spread:.1e} |", flush=True)


if __name__ == "__main__":
    main()
