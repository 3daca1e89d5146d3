"""The ``netdyn`` command beside the Python calls it wraps, and beside ngspice's process (issue 26, group ``cli``).

For the N-section RC ladder deck of :func:`benchmarks.problems.rc_ladder_deck` (``.tran 10n 10u``: 1001 output
times), three whole processes, each timed by its CPU (user + system, from rusage), imports included:

* ``cli``: ``python -m netdyn simulate deck.cir --csv out.csv`` (``columns="few"``: ``--outputs`` of four
  columns, v(n1), v(n N/2), v(nN), i(V1));
* ``api``: ``read_netlist`` + ``simulate`` + ``np.savetxt`` of the same output times into a CSV of the same
  number format (``%r``); with ``columns="all"`` it writes the state ``[t, q, f]`` (2N + 1 columns, where the
  command's table has 3N + 1: every node voltage and element current), with ``"few"`` the same four columns
  through the public accessors ``sol.voltage`` and ``sol.current``;
* ``ngspice``: ``ngspice -b -r out.raw`` on the same deck (all node voltages into its binary raw file).
"""
from __future__ import annotations

import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.harness import ROOT, report
from benchmarks.problems import rc_ladder_deck

API = r"""
import sys
import numpy as np
from netdyn import read_netlist, simulate
deck, out, columns = sys.argv[1:4]
net = read_netlist(deck)
tran = net.tran
t_eval = np.linspace(0.0, tran.tstop, int(round(tran.tstop / tran.tstep)) + 1)
sol = simulate(net, (0.0, tran.tstop), t_eval=t_eval)
if columns == "all":
    names = ["time"] + list(sol.coordinate_names) + [f"{c}_dot" for c in sol.coordinate_names]
    table = np.vstack([sol.t, sol.q, sol.f]).T
else:
    names = ["time"] + columns.split(";")
    table = np.column_stack([sol.t] + [sol.voltage(c[2:-1]) if c[0] == "v" else sol.current(c[2:-1])
                                       for c in names[1:]])
np.savetxt(out, table, delimiter=",", fmt="%r", header=",".join(names), comments="")
"""


def _children_cpu():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _timed(cmd, timeout=3600):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    cpu0, wall0 = _children_cpu(), time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
    cpu, wall = _children_cpu() - cpu0, time.perf_counter() - wall0
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(map(str, cmd[:4]))} ... exited {proc.returncode}: {proc.stderr.strip()[-400:]}")
    return cpu, wall


def few_columns(N):
    return f"v(n1);v(n{N // 2});v(n{N});i(V1)"


def cli_vs_api(N, columns="all", ngspice=True):
    """CPU seconds of the three processes on the N-section ladder, and the ratios cli / api, cli / ngspice."""
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        deck = tmp / "ladder.cir"
        deck.write_text(rc_ladder_deck(N))
        small = tmp / "small.cir"
        small.write_text(rc_ladder_deck(2))
        _timed([sys.executable, "-m", "netdyn", "simulate", str(small), "--csv", str(tmp / "w.csv")])  # warm caches
        sel = few_columns(N) if columns == "few" else "all"
        cmd = [sys.executable, "-m", "netdyn", "simulate", str(deck), "--csv", str(tmp / "cli.csv")]
        if columns == "few":
            cmd += ["--outputs", sel]
        cli, cli_wall = _timed(cmd)
        size = (tmp / "cli.csv").stat().st_size
        (tmp / "cli.csv").unlink()
        report(cli=cli, cli_wall=cli_wall, cli_mb=size / 1e6)
        api, api_wall = _timed([sys.executable, "-c", API, str(deck), str(tmp / "api.csv"), sel])
        api_size = (tmp / "api.csv").stat().st_size
        (tmp / "api.csv").unlink()
        out = {"cli": cli, "cli_wall": cli_wall, "cli_mb": size / 1e6, "api": api, "api_wall": api_wall,
               "api_mb": api_size / 1e6, "cli_over_api": cli / api}
        report(**out)
        if ngspice and shutil.which("ngspice"):
            from benchmarks.peers import _ngspice
            _ngspice(small, tmp / "w.raw", 600)
            wall, cpu, _ = _ngspice(deck, tmp / "out.raw", 3600)
            out.update(ngspice=cpu, ngspice_wall=wall, ngspice_mb=(tmp / "out.raw").stat().st_size / 1e6,
                       cli_over_ngspice=cli / cpu)
        return out


def cli_vs_api_few(N):
    """:func:`cli_vs_api` with four columns (``--outputs``), the size a 10^5-element table can be written at."""
    return cli_vs_api(N, columns="few")
