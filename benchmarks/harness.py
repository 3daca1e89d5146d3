"""Measurement plumbing shared by the peers and the netdyn cases.

* :func:`run_case` runs one case function in a fresh Python process under a time cap
  (CPU seconds, counted from when the process has done its imports), so a derivation that
  blows up cannot take the whole run with it, and every case starts from the same cold state
  (no sympy cache carried over).
* A case function returns a dict of numbers. It may :func:`report` partial results as it
  goes (derivation, then evaluation, then simulation): when the cap stops the process,
  what was reported before is kept and the unfinished stage shows as ``> cap``.
* A case that needs a feature netdyn does not have yet raises :class:`NotAvailable`;
  the table then says ``n/a (not implemented)`` instead of the run crashing.
* :func:`per_call` is the timing of one cheap call: a warm-up call, then ``timeit``
  repeats, the median per call.

Times are CPU seconds of the measuring process (``time.process_time``): the machine is shared
(two cores, other jobs), and CPU time is what contention inflates least. The cap is CPU time too.
"""
from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import threading
import time
import timeit
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
MARK = "BENCH_RESULT "
READY = "BENCH_READY"


class NotAvailable(Exception):
    """The case needs a netdyn feature that is missing (shown as 'n/a (not implemented)')."""


def report(**values):
    """Emit partial results of the running case (kept if the cap stops the process later)."""
    print(MARK + json.dumps({"partial": _plain(values)}), flush=True)


def _plain(obj):
    if isinstance(obj, dict):
        return {str(k): _plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_plain(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return _plain(obj.tolist())
    if isinstance(obj, (np.floating, np.integer)):
        return obj.item()
    return obj


def require(module, *names):
    """Import ``module`` and return the attributes ``names``; raise :class:`NotAvailable` if missing."""
    import importlib

    try:
        mod = importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if exc.name and (module == exc.name or module.startswith(exc.name + ".")):
            raise NotAvailable(f"{module} does not exist yet") from None
        raise
    out = []
    for name in names:
        if not hasattr(mod, name):
            raise NotAvailable(f"{module}.{name} does not exist yet")
        out.append(getattr(mod, name))
    return out[0] if len(out) == 1 else tuple(out)


def needs(*modules):
    """Decorator: the modules a case imports; the worker imports them before the time cap starts.

    A missing one is skipped here (the case then fails, or raises :class:`NotAvailable`, when it runs).
    """
    def mark(fn):
        fn.preload = modules
        return fn
    return mark


def preload(modules):
    import importlib

    for name in modules:
        try:
            importlib.import_module(name)
        except ImportError:
            pass


class Outcome(dict):
    """Result of one case: its values plus ``status`` ('ok', 'timeout', 'na', 'error'), ``message``,
    ``process_wall`` (seconds the worker process lived) and, on a timeout, ``cap``."""

    @property
    def status(self):
        return self["status"]


def _parse(stdout):
    values, final = {}, None
    for line in (stdout or "").splitlines():
        if line.startswith(MARK):
            msg = json.loads(line[len(MARK):])
            if "partial" in msg:
                values.update(msg["partial"])
            else:
                final = msg
    return values, final


def _cpu_seconds(pid):
    """User + system CPU seconds of a live process and its waited-for children (Linux /proc), or None."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return sum(int(v) for v in fields[11:15]) / os.sysconf("SC_CLK_TCK")  # utime stime cutime cstime


def run_case(target, kwargs=None, cap=60.0, startup_limit=180.0, wall_factor=5.0):
    """Run ``target`` ('module:function') with ``kwargs`` in a subprocess under a cap of ``cap`` seconds.

    The cap is CPU time of the worker (and the programs it waits for, like ngspice), counted from the
    moment it has done its imports (it prints a ready mark): the same measure as the times in the
    tables, so a loaded machine does not move a case over the cap. A wall-clock limit of
    ``wall_factor * cap`` stops a case that waits instead of computing; where ``/proc`` is missing
    the cap is wall-clock. Start-up gets ``startup_limit`` seconds of its own. Returns an
    :class:`Outcome` with the case's values (the partial ones too when the cap stopped it).
    """
    cmd = [sys.executable, "-m", "benchmarks.worker", target, json.dumps(_plain(kwargs or {}))]
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.setdefault("OMP_NUM_THREADS", "1")  # one core per case: the machine has two
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out, err, ready = [], [], threading.Event()

    def read_stdout():
        for line in proc.stdout:
            out.append(line)
            if line.startswith(READY):
                ready.set()
        ready.set()  # end of output: nothing more to wait for

    readers = [threading.Thread(target=read_stdout, daemon=True),
               threading.Thread(target=lambda: err.extend(proc.stderr), daemon=True)]
    for th in readers:
        th.start()
    timed_out = not ready.wait(startup_limit)
    if not timed_out:
        timed_out = _wait_capped(proc, cap, wall_factor * cap)
    if timed_out:
        proc.kill()
        proc.wait()
    for th in readers:
        th.join(timeout=10)
    wall = time.perf_counter() - start
    values, final = _parse("".join(out))
    if timed_out:
        return Outcome(values, status="timeout", process_wall=wall, cap=cap)
    if final is None:
        tail = "".join(err or out).strip().splitlines()[-3:]
        return Outcome(values, status="error", message=" | ".join(tail) or f"exit status {proc.returncode}",
                       process_wall=wall)
    values.update(final.get("values", {}))
    return Outcome(values, status=final["status"], message=final.get("message", ""), process_wall=wall)


def _wait_capped(proc, cpu_cap, wall_cap):
    """Wait for ``proc``; True if it used more than ``cpu_cap`` CPU seconds or ``wall_cap`` wall seconds."""
    cpu0, start = _cpu_seconds(proc.pid), time.perf_counter()
    if cpu0 is None:  # no /proc: wall-clock cap
        try:
            proc.wait(timeout=cpu_cap)
            return False
        except subprocess.TimeoutExpired:
            return True
    while True:
        try:
            proc.wait(timeout=0.1)
            return False
        except subprocess.TimeoutExpired:
            pass
        cpu = _cpu_seconds(proc.pid)
        if (cpu is not None and cpu - cpu0 > cpu_cap) or time.perf_counter() - start > wall_cap:
            return True


def per_call(fn, *args, repeat=7, target=0.05):
    """Median CPU seconds per call of ``fn(*args)``: one warm-up call, then ``repeat`` timeit runs.

    The loop count is chosen so one run lasts at least ``target`` seconds.
    """
    fn(*args)  # warm-up
    timer = timeit.Timer(lambda: fn(*args), timer=time.process_time)
    number, _ = timer.autorange()
    number = max(1, int(math.ceil(number * target / 0.2)))
    runs = timer.repeat(repeat=repeat, number=number)
    return float(np.median(runs)) / number


def stopwatch(fn, *args, **kwargs):
    """``(CPU seconds, result)`` of one call."""
    start = time.process_time()
    result = fn(*args, **kwargs)
    return time.process_time() - start, result


def growth_exponent(sizes, times):
    """Least-squares slope of log(time) against log(size); None with fewer than two points."""
    pts = [(s, v) for s, v in zip(sizes, times) if v is not None and v > 0 and np.isfinite(v)]
    if len(pts) < 2:
        return None
    x = np.log([p[0] for p in pts])
    y = np.log([p[1] for p in pts])
    return float(np.polyfit(x, y, 1)[0])
