"""Memory beside time, whole processes, ngspice in the same run (issue 30; group ``memory``).

Every case is one fresh process measured by ``os.wait4``: CPU seconds (user + system) and peak resident set
(GNU ``time``'s ``%M``), imports included, so the figures are what a user's run costs. Cases:

* ``rc``: the RC ladder deck of :func:`benchmarks.problems.rc_ladder_deck` (``.tran 10n 10u``: 1001 output
  times), through ``read_netlist`` + ``simulate``: ``all`` keeps every quantity (streamed to an HDF5 file
  above ``NETDYN_OUTPUT_LIMIT``), ``save`` keeps ``v(nN)`` and ``i(V1)`` (``save=``, SPICE's ``.save``); beside
  ``ngspice -b -r out.raw`` on the same deck (every node voltage written to its raw file);
* ``api``: the same ladder built in Python (``Network.add``), every quantity kept;
* ``mesh``: a random RLC mesh (a square grid, a resistor or an inductor on each edge, a capacitor to ground
  at each node, driven at a corner; :func:`mesh_deck`) of about N elements, netdyn (``all``) beside ngspice;
* ``nl``: the nonlinear ladder (:func:`benchmarks.cases_netdyn.nonlinear_ladder_network`, IDA) beside
  ngspice's B-source deck (:func:`benchmarks.problems.nonlinear_ladder_deck`).

Also the bytes and allocated blocks per element of a numeric network (tracemalloc, a small ladder scaled up,
as ``tests/test_memory.py`` checks them). ``python -m benchmarks --only memory --sizes 10000,100000``;
``python -m benchmarks.memory rc 1000000`` runs one case. The machine is shared: CPU seconds, not wall.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

from benchmarks.harness import ROOT
from benchmarks.problems import nonlinear_ladder_deck, rc_ladder_deck

TIME = "/usr/bin/time"  # GNU time (apt: time)

RUN_DECK = r"""
import sys, numpy as np
from netdyn import read_netlist, simulate
deck, save = sys.argv[1], sys.argv[2]
net = read_netlist(deck, max_elements=10**8)
sol = simulate(net, None, save=None if save == "all" else save.split(";"))
print("sections", len(net.elements), float(sol.voltage(sys.argv[3])[-1]))
"""

RUN_API = r"""
import sys
import netdyn
from netdyn.components.electrical import VoltageSource, Resistor, Capacitor
N = int(sys.argv[1])
net = netdyn.Network()
net.add(VoltageSource("V1", "n0", "0", 1.0))
for k in range(1, N + 1):
    net.add(Resistor(f"R{k}", f"n{k - 1}", f"n{k}", 1e3), Capacitor(f"C{k}", f"n{k}", "0", 1e-9))
sol = netdyn.simulate(net, (0.0, 1e-5))
print("last", float(sol.voltage(f"n{N}")[-1]))
"""

RUN_NL = r"""
import sys, numpy as np
import netdyn
from benchmarks.cases_netdyn import nonlinear_ladder_network
from benchmarks.problems import NLRC
N = int(sys.argv[1])
sol = netdyn.simulate(nonlinear_ladder_network(N, "voltage").model(), (0.0, NLRC["t_stop"]),
                      t_eval=np.linspace(0.0, NLRC["t_stop"], NLRC["points"]), rtol=1e-6, atol=1e-16)
print("last", float(sol.voltage(f"C{N}")[-1]))
"""


def mesh_deck(elements, seed=30):
    """A random RLC mesh of about ``elements`` elements (``tests/test_memory.py``'s :func:`mesh_deck`: an s × s
    grid, s = √(elements / 3)), a 1 V step at the corner node, ``.tran 10n 10u``; returns the deck and the far
    corner node."""
    sys.path.insert(0, str(ROOT / "tests"))
    from test_memory import mesh_deck as deck
    s = max(2, int(round(np.sqrt(elements / 3))))
    return deck(s, seed, "DC 1", (".options acct", ".tran 10n 10u 0 10n")), f"m{s - 1}_{s - 1}"


def run_process(cmd, timeout=7200):
    """``(cpu, rss_mb, wall, stdout)`` of one process, measured by ``/usr/bin/time`` (GNU time: user + system
    CPU and peak resident set of the command alone). Not ``os.wait4`` from here: Linux starts a child's
    ``ru_maxrss`` at its parent's peak (kept across ``exec``), so a child of this Python process would report
    at least this process's own size."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    with tempfile.TemporaryDirectory(prefix="netdyn-time-") as tmp:
        stats = Path(tmp) / "time.txt"
        start = time.perf_counter()
        proc = subprocess.run([TIME, "-f", "%U %S %M %x", "-o", str(stats), *map(str, cmd)], capture_output=True,
                              text=True, env=env, timeout=timeout)
        wall = time.perf_counter() - start
        user, system, rss_kb, code = stats.read_text().split()[-4:]
    code = int(code)
    if code != 0 and not (cmd[0] == "ngspice" and code == 1):  # (ngspice -b may exit 1 after a good run)
        raise RuntimeError(f"{' '.join(map(str, cmd[:4]))} exited {code}: {proc.stderr.strip()[-500:]}")
    return float(user) + float(system), int(rss_kb) / 1024.0, wall, proc.stdout


def _ngspice(deck, tmp, save=None):
    """ngspice on ``deck``: every node voltage written to its raw file, or (``save``, SPICE names) only those
    (a ``.save`` card added to a copy of the deck: the same outputs as netdyn's ``save=``)."""
    if shutil.which("ngspice") is None:
        return None
    if save:
        text = deck.read_text().replace(".end\n", f".save {' '.join(save)}\n.end\n")
        deck = tmp / f"saved-{deck.name}"
        deck.write_text(text)
    raw = tmp / "out.raw"
    cpu, rss, wall, _ = run_process(["ngspice", "-b", "-r", str(raw), str(deck)])
    if not raw.exists() or raw.stat().st_size == 0:
        raise RuntimeError("ngspice wrote no data")
    return {"cpu": cpu, "rss": rss, "wall": wall}


def rc_case(N, modes=("all", "save"), ngspice=True, parallel=False):
    """The RC ladder of N sections: netdyn's processes (``modes``) and ngspice's, each beside ngspice keeping the
    same outputs (``all``: every node voltage; ``save``: ``v(nN)`` and ``i(V1)``). ``python -m benchmarks.memory
    rc-save N`` runs the ``save`` pair only (10^6 sections: every quantity would be about 24 GB of HDF5), the two
    processes at once (``parallel``: on a shared machine the pair ends sooner; each one's CPU seconds and peak
    memory are its own)."""
    out = {"N": N}
    with tempfile.TemporaryDirectory(prefix="netdyn-mem-") as tmp:
        tmp = Path(tmp)
        deck = tmp / "ladder.cir"
        deck.write_text(rc_ladder_deck(N))
        small = tmp / "small.cir"
        small.write_text(rc_ladder_deck(2))
        run_process([sys.executable, "-c", RUN_DECK, str(small), "all", "n2"])  # warm caches
        jobs = {}
        if ngspice:
            if "all" in modes:
                jobs["ngspice"] = lambda: _ngspice(deck, tmp / "all")
            if "save" in modes:
                jobs["ngspice_save"] = lambda: _ngspice(deck, tmp / "save", save=[f"v(n{N})", "i(v1)"])
        for mode in modes:
            save = "all" if mode == "all" else f"v(n{N});i(V1)"
            jobs[mode] = lambda save=save: dict(zip(("cpu", "rss", "wall"), run_process(
                [sys.executable, "-c", RUN_DECK, str(deck), save, f"n{N}"])[:3]))
        for d in ("all", "save"):
            (tmp / d).mkdir()
        if parallel:  # every process at once (CPU seconds and peak memory are each process's own)
            with ThreadPoolExecutor(len(jobs)) as pool:
                futures = {k: pool.submit(job) for k, job in jobs.items()}
                out.update({k: f.result() for k, f in futures.items()})
        else:
            out.update({k: job() for k, job in jobs.items()})
    return out


def api_case(N):
    cpu, rss, wall, _ = run_process([sys.executable, "-c", RUN_API, str(N)])
    return {"N": N, "api": {"cpu": cpu, "rss": rss, "wall": wall}}


def mesh_case(elements):
    out = {"N": elements}
    with tempfile.TemporaryDirectory(prefix="netdyn-mem-") as tmp:
        tmp = Path(tmp)
        text, corner = mesh_deck(elements)
        deck = tmp / "mesh.cir"
        deck.write_text(text)
        out["ngspice"] = _ngspice(deck, tmp)
        cpu, rss, wall, _ = run_process([sys.executable, "-c", RUN_DECK, str(deck), "all", corner])
        out["all"] = {"cpu": cpu, "rss": rss, "wall": wall}
    return out


def nl_case(N):
    out = {"N": N}
    with tempfile.TemporaryDirectory(prefix="netdyn-mem-") as tmp:
        tmp = Path(tmp)
        deck = tmp / "nl.cir"
        deck.write_text(nonlinear_ladder_deck(N))
        out["ngspice"] = _ngspice(deck, tmp)
        cpu, rss, wall, _ = run_process([sys.executable, "-c", RUN_NL, str(N)])
        out["all"] = {"cpu": cpu, "rss": rss, "wall": wall}
    return out


def per_element():
    """Bytes and blocks per element (tracemalloc; ladders of 200 and 400 sections): read from a netlist,
    built in Python, and what stamping adds."""
    sys.path.insert(0, str(ROOT / "tests"))
    from test_memory import ladder, ladder_deck, per_element as measure
    import netdyn
    from netdyn.numerics.circuit.linearsim import try_linear
    netdyn.read_netlist(ladder_deck(3))
    try_linear(ladder(3))
    read = measure(lambda N: netdyn.read_netlist(ladder_deck(N)))
    api = measure(ladder)
    lin = measure(lambda N: (lambda net: (net, try_linear(net)))(ladder(N)))
    return {"read": read, "api": api, "stamp": (lin[0] - api[0], lin[1] - api[1])}


def _cell(d):
    return "—" if not d else f"{d['cpu']:.2f} s / {d['rss']:.0f} MB"


def table(results):
    """The Markdown of the memory group."""
    out = ["## Memory beside time: whole processes, ngspice in the same run (issue 30)", "",
           "CPU seconds / peak resident set of each process, imports included (GNU `time`). `all`: every "
           "quantity kept (netdyn: streamed to an HDF5 file above `NETDYN_OUTPUT_LIMIT`, 256 MB; ngspice: every "
           "node voltage in its raw file); `save`: `v(nN)` and `i(V1)` only (netdyn's `save=`, ngspice's `.save`).",
           "", "| case | N | netdyn all | ngspice all | netdyn save | ngspice save | memory all / save vs ngspice "
           "| time all / save vs ngspice |", "|---|---|---|---|---|---|---|---|"]
    for case in ("rc", "rc-save", "api", "mesh", "nl"):
        for r in results.get(case, []):
            if "error" in r:
                out.append(f"| {case} | {r['N']:,} | did not run: {r['error']} | | | | | |")
                continue
            a, s = r.get("all") or r.get("api"), r.get("save")
            ng, ngs = r.get("ngspice"), r.get("ngspice_save")
            pairs = [(x, y) for x, y in ((a, ng), (s, ngs)) if x and y]
            mem = " / ".join(f"{x['rss'] / y['rss']:.2f}×" for x, y in pairs)
            cpu = " / ".join(f"{x['cpu'] / y['cpu']:.2f}×" for x, y in pairs)
            out.append(f"| {case} | {r['N']:,} | {_cell(a)} | {_cell(ng)} | {_cell(s)} | {_cell(ngs)} | {mem} | {cpu} |")
    pe = results.get("per_element")
    if pe:
        out += ["", "Per element of a numeric RC ladder (tracemalloc, growth from 400 to 800 elements): "
                + "; ".join(f"{k} {b:.0f} B in {c:.1f} blocks" for k, (b, c) in pe.items())]
    return "\n".join(out) + "\n"


def run(sizes, cases=("rc", "api", "mesh", "nl"), log=print):
    results = {"per_element": per_element()}
    log(f"  per element: {results['per_element']}")
    for case in cases:
        fn = {"rc": rc_case, "rc-save": lambda N: rc_case(N, modes=("save",), parallel=True), "api": api_case, "mesh": mesh_case,
              "nl": nl_case}[case]
        results[case] = []
        for N in sizes.get(case, ()):
            try:
                r = fn(N)
            except Exception as exc:  # a case that cannot run (memory, time) is reported, not hidden
                r = {"N": N, "error": str(exc)[-300:]}
            log(f"  {case} N={N}: {r}")
            results[case].append(r)
    return results


SIZES = {"rc": (10_000, 100_000), "api": (100_000,), "mesh": (100_000,), "nl": (1_000,)}


if __name__ == "__main__":  # python -m benchmarks.memory CASE N [N ...]
    case, *ns = sys.argv[1:] or ["rc", "10000"]
    res = run({case: [int(n) for n in ns]}, cases=(case,))
    print(table(res))
