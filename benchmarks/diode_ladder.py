"""Diode ladder beside ngspice: ``python -m benchmarks.diode_ladder [N ...]`` (default 10 100 1000).

N sections, each a series R = 1 kOhm then a diode and a C = 1 nF from the node to ground
(``.model dm D(IS=1e-14 N=1.5 RS=1)``), driven by ``SIN(0 5 100k)``; a 20 us transient from the DC
operating point, output at 1001 points. ngspice runs the same deck (``.tran 20n 20u 0 20n``, its own
defaults otherwise); netdyn reads the deck and simulates it on its circuit path (sparse stamp, Newton
with junction limiting, variable-step BDF; the step loop one compiled call, a banded LU). Times are CPU seconds: netdyn's in-process solve after a
warm-up (parse + simulate, the netlist read included), ngspice's whole process (user + system from
rusage, median of up to three runs); the ratio is netdyn / ngspice. Δv is the largest difference of
v(n1) and v(nN) from ngspice's, over the peak of v(n1).
"""
from __future__ import annotations

import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.peers import _ngspice, read_raw  # noqa: E402


def deck(N):
    lines = [f"* diode ladder, {N} sections", "V1 n0 0 SIN(0 5 100k)"]
    for k in range(1, N + 1):
        lines += [f"R{k} n{k - 1} n{k} 1k", f"D{k} n{k} 0 dm", f"C{k} n{k} 0 1n"]
    lines += [".model dm D(IS=1e-14 N=1.5 RS=1)", ".tran 20n 20u 0 20n", ".end", ""]
    return "\n".join(lines)


def run_netdyn(N):
    import netdyn
    times = np.linspace(0, 20e-6, 1001)
    netdyn.simulate(netdyn.read_netlist(deck(2)), None, t_eval=times)  # warm-up of the whole path
    cpu = time.process_time()
    net = netdyn.read_netlist(deck(N))
    sol = netdyn.simulate(net, None, t_eval=times)
    cpu = time.process_time() - cpu
    return cpu, sol.method, times, sol.port_flow("D1", 1) if "D1#a" in net.graph else None, sol


def run_ngspice(N, repeats=3):
    with tempfile.TemporaryDirectory(prefix="netdyn-bench-") as tmp:
        tmp = Path(tmp)
        path = tmp / "ladder.cir"
        path.write_text(deck(N))
        _ngspice(path, tmp / "warm.raw", 600)
        cpus = []
        for k in range(repeats):
            wall, cpu, _ = _ngspice(path, tmp / f"r{k}.raw", 600)
            cpus.append(cpu)
            if wall > 2.0:
                break
        data = read_raw(tmp / f"r{len(cpus) - 1}.raw")
    return float(np.median(cpus)), data


def main(argv=None):
    sizes = [int(x) for x in (argv if argv is not None else sys.argv[1:])] or [10, 100, 1000]
    if shutil.which("ngspice") is None:
        raise SystemExit("ngspice is not installed (apt-get install ngspice)")
    print("| diode ladder, 20 µs, 1001 points | ngspice process CPU | netdyn read + simulate CPU | ratio | Δv vs ngspice |")
    print("|---|---|---|---|---|")
    for N in sizes:
        ng_cpu, data = run_ngspice(N)
        cpu, method, times, _, sol = run_netdyn(N)
        worst = 0.0
        peak = float(np.max(np.abs(data["v(n1)"])))  # the ladder attenuates: v(nN) is tiny for large N
        for node in ("n1", f"n{N}"):
            ref = np.interp(times, data["time"], data[f"v({node})"])
            worst = max(worst, float(np.max(np.abs(sol.voltage(node) - ref))) / peak)
        print(f"| N = {N:,} | {ng_cpu:.3f} | {cpu:.3f} ({method}) | {cpu / ng_cpu:.1f} | {worst:.1e} of peak |",
              flush=True)


if __name__ == "__main__":
    main()
