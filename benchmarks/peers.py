"""The peers netdyn is measured against; each function is one case run by :mod:`benchmarks.worker`.

* :func:`kane_derive`, :func:`lagrange_derive` -- sympy.physics.mechanics KanesMethod and
  LagrangesMethod deriving the planar n-link pendulum of ``tests/references/pendulum.py``
  (frames, points, bodies, loads, then ``kanes_equations`` / ``form_lagranges_equations``).
* :func:`pinocchio_chain` -- Pinocchio ``aba`` per call, and a 10 s simulation with
  scipy's DOP853 driven by ``aba``.
* :func:`ngspice_rc_ladder` -- ngspice in batch mode on the RC ladder: process wall time and
  its own 'Transient analysis time' (``.options acct``).

Every case gets a warm-up before it is timed (a one-link derivation; an ``aba`` call; a short
simulation; a small ngspice deck), so imports and first-call costs are not counted.
"""
from __future__ import annotations

import re
import resource
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np

from benchmarks.harness import needs, report, stopwatch
from benchmarks.problems import (PENDULUM, chain_initial_state, pendulum_parameters, random_chain_state,
                                 rc_ladder_deck, nonlinear_ladder_deck)


# --------------------------------------------------------------------------- sympy.physics.mechanics
@needs("sympy.physics.mechanics")
def kane_derive(n):
    """Seconds for KanesMethod to derive the n-link pendulum (after a one-link warm-up)."""
    from tests.references.pendulum import kane_system

    kane_system(1)
    seconds, _ = stopwatch(kane_system, n)
    return {"derive": seconds}


@needs("sympy.physics.mechanics")
def lagrange_derive(n):
    """Seconds for LagrangesMethod to derive the n-link pendulum (after a one-link warm-up)."""
    from tests.references.pendulum import lagrange_system

    lagrange_system(1)
    seconds, _ = stopwatch(lagrange_system, n)
    return {"derive": seconds}


# --------------------------------------------------------------------------- Pinocchio
@needs("pinocchio", "scipy.integrate")
def pinocchio_chain(n, simulate=True):
    """``aba`` seconds per call at a random state; then 10 s of motion with DOP853 + ``aba``."""
    import pinocchio as pin
    from scipy.integrate import solve_ivp

    from benchmarks.harness import per_call
    from tests.references.pendulum import pinocchio_pendulum

    masses, lengths, g = pendulum_parameters(n)
    model = pinocchio_pendulum(n, masses, lengths, g)
    data = model.createData()
    q, v = random_chain_state(n)
    tau = np.zeros(n)
    report(rhs=per_call(pin.aba, model, data, q, v, tau))
    if not simulate:
        return {}

    def rhs(_t, y):
        return np.concatenate([y[n:], pin.aba(model, data, y[:n], y[n:], tau)])

    q0, v0 = chain_initial_state(n)
    y0 = np.concatenate([q0, v0])
    opts = dict(method="DOP853", rtol=PENDULUM["rtol"], atol=PENDULUM["atol"])
    solve_ivp(rhs, (0.0, PENDULUM["warmup_time"]), y0, **opts)  # warm-up
    t_eval = np.linspace(0.0, PENDULUM["time"], PENDULUM["points"])
    seconds, sol = stopwatch(solve_ivp, rhs, (0.0, PENDULUM["time"]), y0, t_eval=t_eval, **opts)
    if not sol.success:
        raise RuntimeError(f"DOP853 failed: {sol.message}")
    energy = [pin.computeMechanicalEnergy(model, data, y[:n], y[n:]) for y in sol.y.T]
    return {"simulate": seconds, "nfev": int(sol.nfev),
            "energy_drift": float(np.max(np.abs(np.asarray(energy) - energy[0])))}


# --------------------------------------------------------------------------- ngspice
_ACCT = {
    "transient": r"Transient analysis time\s*=\s*([-+0-9.eE]+)",
    "analysis": r"Total analysis time \(seconds\)\s*=\s*([-+0-9.eE]+)",
    "elapsed": r"Total elapsed time \(seconds\)\s*=\s*([-+0-9.eE]+)",
    "timepoints": r"Transient timepoints\s*=\s*([0-9]+)",
    "accepted": r"Accepted timepoints\s*=\s*([0-9]+)",
    "rejected": r"Rejected timepoints\s*=\s*([0-9]+)",
}


def parse_acct(text):
    """The numbers of ngspice's ``.options acct`` report (missing lines are left out).

    >>> parse_acct("Transient analysis time = 0.084\\nTransient timepoints = 1012\\n")
    {'transient': 0.084, 'timepoints': 1012}
    """
    out = {}
    for key, pattern in _ACCT.items():
        found = re.findall(pattern, text)
        if found:  # the last one: a deck with several analyses reports each
            out[key] = int(found[-1]) if key in ("timepoints", "accepted", "rejected") else float(found[-1])
    return out


def read_raw(path):
    """Variables of an ngspice binary (or ASCII) raw file of one real plot: ``{name: array}``."""
    data = Path(path).read_bytes()
    names, npoints, nvars = [], None, None
    pos = 0
    while True:
        end = data.index(b"\n", pos)
        line = data[pos:end].decode("latin-1")
        pos = end + 1
        if line.startswith("No. Variables:"):
            nvars = int(line.split(":")[1])
        elif line.startswith("No. Points:"):
            npoints = int(line.split(":")[1])
        elif line.startswith("Flags:") and "complex" in line:
            raise ValueError(f"{path}: complex raw files are not handled")
        elif line.startswith("Variables:"):
            for _ in range(nvars):
                end = data.index(b"\n", pos)
                names.append(data[pos:end].decode("latin-1").split()[1].lower())
                pos = end + 1
        elif line.startswith("Binary:"):
            values = np.frombuffer(data, dtype="<f8", count=npoints * nvars, offset=pos)
            break
        elif line.startswith("Values:"):
            values = np.array([float(tok) for i, tok in enumerate(data[pos:].split()) if i % (nvars + 1)])
            values = values[: npoints * nvars]
            break
    values = values.reshape(npoints, nvars)
    return {name: values[:, k].copy() for k, name in enumerate(names)}


def _children_cpu():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _ngspice(deck_path, raw_path, timeout):
    """Run ngspice once: ``(wall seconds, CPU seconds of the process, its printed output)``."""
    cpu0, start = _children_cpu(), time.perf_counter()
    proc = subprocess.run(["ngspice", "-b", "-r", str(raw_path), str(deck_path)], capture_output=True, text=True,
                          timeout=timeout)
    wall, cpu = time.perf_counter() - start, _children_cpu() - cpu0
    text = proc.stdout + "\n" + proc.stderr
    # `ngspice -b` may exit 1 after a successful run; judge by the data file (see shared NUMERICS notes)
    if not Path(raw_path).exists() or Path(raw_path).stat().st_size == 0:
        raise RuntimeError(f"ngspice wrote no data (exit {proc.returncode}): {text.strip()[-300:]}")
    return wall, cpu, text


def ngspice_deck(text, repeats=3, timeout=600):
    """ngspice on a deck's text: ``(median process CPU seconds over up to ``repeats`` runs — one if a run
    takes over 2 s —, the last run's raw data)``."""
    with tempfile.TemporaryDirectory(prefix="netdyn-bench-") as tmp:
        tmp = Path(tmp)
        path = tmp / "deck.cir"
        path.write_text(text)
        cpus = []
        for k in range(repeats):
            wall, cpu, _ = _ngspice(path, tmp / f"r{k}.raw", timeout)
            cpus.append(cpu)
            if wall > 2.0:
                break
        data = read_raw(tmp / f"r{len(cpus) - 1}.raw")
    return float(np.median(cpus)), data


def ngspice_rc_ladder(N, repeats=3, timeout=600, deck=rc_ladder_deck):
    """ngspice on the N-section RC ladder; medians over ``repeats`` runs (one if a run takes over 2 s).

    * ``wall``, ``cpu``: the whole ngspice process (wall clock; user + system CPU from rusage);
    * ``transient``: ngspice's own 'Transient analysis time' (``.options acct``); it is measured
      with a wall clock (it exceeds the process CPU time on a loaded machine);
    * ``transient_cpu``: CPU of the transient alone, the process CPU minus that of the same deck with
      only ``.op`` (reading, set-up and output);
    * ``t``, ``v_first``, ``v_last``: v(n1) and v(nN) at ngspice's time points, for the comparison.
    """
    if shutil.which("ngspice") is None:
        raise RuntimeError("ngspice is not installed (apt-get install ngspice)")
    with tempfile.TemporaryDirectory(prefix="netdyn-bench-") as tmp:
        tmp = Path(tmp)
        (tmp / "warm.cir").write_text(deck(2))
        _ngspice(tmp / "warm.cir", tmp / "warm.raw", timeout)  # warm-up: binary and libraries in cache
        runs = {}
        for analysis in ("tran", "op"):
            path = tmp / f"ladder_{analysis}.cir"
            path.write_text(deck(N, analysis))
            walls, cpus, accts = [], [], []
            for k in range(repeats):
                raw = tmp / f"ladder_{analysis}{k}.raw"
                wall, cpu, text = _ngspice(path, raw, timeout)
                walls.append(wall)
                cpus.append(cpu)
                accts.append(parse_acct(text))
                if wall > 2.0:  # a long run needs no repeat to be stable
                    break
            runs[analysis] = (walls, cpus, accts, raw)
        walls, cpus, accts, raw = runs["tran"]
        data = read_raw(raw)
    solve = [a["transient"] for a in accts if "transient" in a]
    cpu = float(np.median(cpus))
    out = {"wall": float(np.median(walls)), "cpu": cpu, "runs": len(walls),
           "transient": float(np.median(solve)) if solve else None,
           "transient_cpu": max(cpu - float(np.median(runs["op"][1])), 0.0),
           "timepoints": accts[-1].get("timepoints"), "rejected": accts[-1].get("rejected"),
           "t": data["time"], "v_first": data["v(n1)"], "v_last": data[f"v(n{N})"]}
    if not solve:
        out["note"] = "no 'Transient analysis time' line in ngspice's output"
    return out


def ngspice_nonlinear_ladder(N, repeats=3, timeout=600):
    """ngspice on the nonlinear ladder's B-source deck (:func:`benchmarks.problems.nonlinear_ladder_deck`);
    the same figures as :func:`ngspice_rc_ladder`."""
    import resource
    out = ngspice_rc_ladder(N, repeats, timeout, deck=nonlinear_ladder_deck)
    out["peak_mb"] = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024  # the largest ngspice run
    return out


def ngspice_nonlinear_ladder_current(N, repeats=3, timeout=600):
    """ngspice on the current-driven nonlinear ladder (``nonlinear_ladder_deck(..., drive="current")``)."""
    return ngspice_rc_ladder(N, repeats, timeout,
                             deck=lambda n, analysis="tran": nonlinear_ladder_deck(n, analysis, drive="current"))


__all__ = ["kane_derive", "lagrange_derive", "pinocchio_chain", "ngspice_rc_ladder", "ngspice_nonlinear_ladder", "ngspice_nonlinear_ladder_current",
           "parse_acct", "read_raw"]


def ngspice_read(n, repeats=3, timeout=600):
    """``ngspice -b`` reading the deck of :func:`benchmarks.problems.netlist_deck` (parse and set-up, no
    analysis): CPU seconds of the process (user + system), median over ``repeats``, minus an empty
    deck's (start-up)."""
    from benchmarks.problems import netlist_deck
    if shutil.which("ngspice") is None:
        raise RuntimeError("ngspice is not installed (apt-get install ngspice)")

    def once(path):
        cpu0 = _children_cpu()
        subprocess.run(["ngspice", "-b", str(path)], capture_output=True, text=True, timeout=timeout)
        return _children_cpu() - cpu0

    with tempfile.TemporaryDirectory(prefix="netdyn-bench-") as tmp:
        tmp = Path(tmp)
        empty, deck = tmp / "empty.cir", tmp / "deck.cir"
        empty.write_text(netlist_deck(2))
        deck.write_text(netlist_deck(n))
        once(empty)  # warm-up
        base = float(np.median([once(empty) for _ in range(repeats)]))
        cpus = []
        for _ in range(repeats):
            cpus.append(once(deck))
            if cpus[-1] > 2.0:
                break
    cpu = float(np.median(cpus))
    return {"cpu": cpu, "read": max(cpu - base, 1e-6), "startup": base}
