"""Run the benchmark suite: ``python -m benchmarks [--quick] [--cap SECONDS]`` (or ``python benchmarks/run.py``).

Prints Markdown tables and writes them to ``benchmarks/results.md`` (``results-quick.md`` with ``--quick``).
Every netdyn column sits next to a peer measured in the same run, with the ratio netdyn / peer (below 1:
netdyn is faster):

* n-link pendulum, derivation: sympy.physics.mechanics KanesMethod and LagrangesMethod;
* n-link pendulum, one right-hand side evaluation: Pinocchio ``aba``;
* n-link pendulum, 10 s of motion: scipy DOP853 driven by Pinocchio ``aba``, same tolerances;
* RC ladder, 10 us transient: ngspice (whole process, and its own transient analysis time);
* four-bar and slider-crank, 10 s: constraint residual and energy drift (no external peer);
* a DC motor on a circuit driving the four-bar, 5 s (group ``mixed``), beside the four-bar alone under a torque of
  about the same motion; the four-bar under 1 N·m for 100 s;
* recursive path (``netdyn.recursive``): n-link chain RHS and 10 s of motion vs Pinocchio ``aba`` (+ DOP853),
  n = 5 … 200 with the growth exponent; DeNOC inverse dynamics of the 3-RRR over 201 points.
* the ``netdyn`` command (group ``cli``): ``netdyn simulate`` on RC-ladder decks of 10^4 and 10^5 sections beside
  the Python calls it wraps (``read_netlist`` + ``simulate`` + writing the CSV) and ngspice's process
  (:mod:`benchmarks.cli_cases`; the cap of this group is at least 1800 CPU seconds);
* netlist reading (group ``safety``): ``read_netlist`` of 10^3..10^5 elements beside ``ngspice -b``
  reading the same deck; PWL sources of 10..1000 corners (growth exponent, linear is 1).
* reading results (group ``read``): every node voltage of a 10^4- and 10^5-section RC ladder, and its
  ``to_pandas()`` table, against simulating it (the ratio read / simulate; issue 26: reading all < simulating).

Every case runs in its own process under ``--cap`` CPU seconds (default 60; 10 with
``--quick``), counted once its imports are done; a case over the cap shows ``> cap`` and the larger
sizes of that column are skipped. Times in the tables are CPU seconds (see :mod:`benchmarks.harness`).
Under each table: the growth exponent k of time ~ size^k (log-log least squares) per column.
"""
from __future__ import annotations

import argparse
import datetime
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

if __package__ in (None, ""):  # `python benchmarks/run.py`
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

from benchmarks.harness import ROOT, growth_exponent, run_case  # noqa: E402

FULL = {"chain": [2, 5, 10, 20, 50, 100, 200], "rc": [10, 100, 1000, 10000], "recursive": [5, 10, 20, 50, 100, 200],
        "netlist": [1000, 10000, 100000], "pwl": [10, 100, 1000], "nl": [10, 100, 1000, 10000],
        "nli": [10, 100, 1000], "read": [10000, 100000], "cli": [10000, 100000]}
QUICK = {"chain": [2, 5], "rc": [10, 100, 1000], "recursive": [5, 10], "netlist": [1000, 10000], "pwl": [10, 100],
         "nl": [10, 100], "nli": [10, 100], "read": [1000, 10000], "cli": [1000, 10000]}
SKIP, NA = "skip", "n/a (not implemented)"


CHAIN_SERIES = {  # --series name: (results key, log label, case, stage the cap may cut)
    "kane": ("kane", "kane", "benchmarks.peers:kane_derive", None),
    "lagrange": ("lagrange", "lagrange", "benchmarks.peers:lagrange_derive", None),
    "pinocchio": ("pinocchio", "pinocchio", "benchmarks.peers:pinocchio_chain", "simulate"),
    "joint": ("nd_joint", "netdyn joint angles", "benchmarks.cases_netdyn:pendulum_joint_angles", "simulate"),
    "planar": ("nd_planar", "netdyn planar", "benchmarks.cases_netdyn:pendulum_planar", "simulate"),
    "relative": ("nd_planar_rel", "netdyn planar relative", "benchmarks.cases_netdyn:pendulum_planar_relative",
                 "simulate"),
    "recursive": ("nd_chain_recursive", "netdyn recursive", "benchmarks.cases_recursive:recursive_chain", "simulate"),
}


def log(msg):
    print(msg, file=sys.stderr, flush=True)


# --------------------------------------------------------------------------- running
def sweep(name, target, sizes, cap, size_arg="n", optional_stage=None):
    """Run ``target`` at each size; after a size over the cap (or failing), skip the larger ones.

    If the cap cut the case after its RHS timing (in ``optional_stage``, the simulation, or its
    checks), the larger sizes still run without it (``simulate=False``), so the derivation and RHS columns go on.
    """
    out, stop, extra = {}, None, {}
    for size in sizes:
        if stop:
            out[size] = {"status": SKIP}
            continue
        res = run_case(target, {size_arg: size, **extra}, cap=cap)
        out[size] = res
        summary = ", ".join(f"{k}={_short(v)}" for k, v in res.items() if not isinstance(v, list))
        log(f"  {name} {size_arg}={size}: {summary}")
        if res["status"] == "ok":
            continue
        if res["status"] == "timeout" and optional_stage and "rhs" in res:
            extra = {optional_stage: False}
            continue
        stop = True
    return out


def _short(v):
    if isinstance(v, float):
        return f"{v:.3g}"
    if isinstance(v, str) and len(v) > 80:
        return v[:77] + "..."
    return v


# --------------------------------------------------------------------------- formatting
def _fmt(x, scale=1.0):
    if x is None:
        return "—"
    if isinstance(x, str):
        return x
    if isinstance(x, int) and scale == 1:
        return str(x)
    v = x * scale
    if v == 0:
        return "0"
    if abs(v) >= 1000 or abs(v) < 0.01:
        return f"{v:.2e}"
    return f"{v:.3g}"


def cell(res, key, scale=1.0, notes=None):
    """The text of one cell: value, '> cap', 'skip', 'n/a (not implemented)' or 'error [k]'."""
    if res is None:
        return "—"
    if key in res:
        return "n/a" if res[key] is None else _fmt(res[key], scale)
    status = res.get("status")
    if status == "timeout":
        return "> cap"
    if status == SKIP:
        return SKIP
    if status == "na":
        return NA
    if status == "error":
        if notes is not None:
            msg = res.get("message", "")
            if msg not in notes:
                notes.append(msg)
            return f"error [{notes.index(msg) + 1}]"
        return "error"
    return SKIP if status == "ok" else "—"  # ok without the key: a stage not run (simulate=False)


def value(res, key):
    if res is None:
        return None
    v = res.get(key)
    return v if isinstance(v, (int, float)) else None


def ratio(num_res, num_key, den_res, den_key):
    """netdyn / peer when both were measured.

    No bound is given when one side hit the cap: the cap covers the whole case (warm-up and the
    stages before), so it is no bound on the time of the stage that was cut.
    """
    a, b = value(num_res, num_key), value(den_res, den_key)
    return _fmt(a / b) if a is not None and b is not None and b > 0 else "—"


def table(sizes, size_label, columns, ratios, results, notes):
    """Markdown table. ``columns``: (label, series, key, scale); ``ratios``: (label, (series, key), (series, key))."""
    head = [size_label] + [c[0] for c in columns] + [r[0] for r in ratios]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for size in sizes:
        row = [str(size)]
        for _, series, key, scale in columns:
            row.append(cell(results.get(series, {}).get(size), key, scale, notes))
        for _, (s1, k1), (s2, k2) in ratios:
            row.append(ratio(results.get(s1, {}).get(size), k1, results.get(s2, {}).get(size), k2))
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)


def exponents(sizes, columns, results, symbol):
    parts = []
    for label, series, key, _ in columns:
        pts = [(s, value(results.get(series, {}).get(s), key)) for s in sizes]
        pts = [(s, v) for s, v in pts if v is not None]
        k = growth_exponent([p[0] for p in pts], [p[1] for p in pts])
        if k is not None:
            parts.append(f"{label}: {k:.2f} ({symbol} = {pts[0][0]}–{pts[-1][0]})")
    if not parts:
        return "Growth exponent k (time ∝ size^k, log-log least squares): too few measured sizes."
    return "Growth exponent k (time ∝ size^k, log-log least squares): " + "; ".join(parts) + "."


def rc_agreement(results, sizes, peer="ngspice", ours="nd_rc"):
    """Max |v_netdyn − v_ngspice| at nodes n1 and nN (ngspice interpolated to netdyn's times); arrays dropped."""
    for N in sizes:
        ng, nd = results.get(peer, {}).get(N), results.get(ours, {}).get(N)
        arrays = ("t", "v_first", "v_last")
        if ng and nd and all(k in ng for k in arrays) and all(k in nd for k in arrays):
            tn, tt = np.asarray(ng["t"]), np.asarray(nd["t"])
            inside = tt >= tn[0]
            err = 0.0
            for key in ("v_first", "v_last"):
                ref = np.interp(tt[inside], tn, np.asarray(ng[key]))
                err = max(err, float(np.max(np.abs(np.asarray(nd[key])[inside] - ref))))
            nd["dv"] = err
        for res in (ng, nd):
            for k in arrays:
                if res:
                    res.pop(k, None)


# --------------------------------------------------------------------------- the report
def _versions():
    out = {"python": platform.python_version()}
    for mod in ("numpy", "scipy", "sympy", "pinocchio"):
        try:
            out[mod] = __import__(mod).__version__
        except Exception:  # a missing peer is reported in its cells
            out[mod] = "missing"
    try:
        first = subprocess.run(["ngspice", "-v"], capture_output=True, text=True, timeout=10).stdout
        out["ngspice"] = next((ln.strip("* ").split(":")[0] for ln in first.splitlines() if "ngspice-" in ln), "?")
    except (OSError, subprocess.SubprocessError):
        out["ngspice"] = "missing"
    return out


def _commit():
    try:
        return subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, timeout=10).stdout.strip() or "?"
    except (OSError, subprocess.SubprocessError):
        return "?"


def build_report(results, plan, cap, quick, started, load0, groups=("chain", "rc", "nl", "closed", "recursive")):
    notes = []
    chain, rc = plan["chain"], plan["rc"]
    versions = ", ".join(f"{k} {v}" for k, v in _versions().items())
    out = [
        f"# netdyn benchmarks{' (quick)' if quick else ''}",
        "",
        f"`python -m benchmarks{' --quick' if quick else ''} --cap {cap:g}` on {datetime.date.today()}, "
        f"commit {_commit()}; {os.cpu_count()} cores, load average {load0:.1f} at the start and "
        f"{os.getloadavg()[0]:.1f} at the end; {versions}.",
        "",
        "Times are CPU seconds of the measuring process (the machine is shared; CPU time is what the load "
        "inflates least), each case in a fresh process after a warm-up; the cap is CPU time of the whole case, "
        "after its imports. Ratios are "
        "netdyn / peer: below 1, netdyn is faster.",
        "",
    ]
    if "chain" in groups:
        out += _chain_tables(results, chain, notes)
    if "rc" in groups:
        out += _rc_table(results, rc, notes)
    if "nl" in groups:
        out += _rc_table(results, plan["nl"], notes, nonlinear=True)
    if "nli" in groups:
        out += _rc_table(results, plan["nli"], notes, nonlinear=True, series=("ngspice_nli", "nd_nli"))
    if "closed" in groups:
        out += _closed_table(results, notes)
    if "mixed" in groups:
        out += _mixed_table(results, notes)
    if "recursive" in groups:
        out += _recursive_tables(results, plan["recursive"], notes)
    if notes:
        out += ["## Errors", ""] + [f"{i + 1}. {msg}" for i, msg in enumerate(notes)] + [""]
    out.append(f"Run time of the suite: {time.perf_counter() - started:.0f} s (wall).")
    return "\n".join(out) + "\n"


def _chain_tables(results, chain, notes):
    out = [
        "## n-link pendulum: derivation of the equations of motion (s)",
        "",
        "Kane/Lagrange: frames, points, bodies, loads and `kanes_equations` / `form_lagranges_equations` "
        "(`tests/references/pendulum.py`). netdyn: building the model and `model.derive()`, the structured "
        "derivation behind `model.equations()` — 'joint angles': a `LagrangianModel` typed by hand in the "
        "relative angles (T and V one term per link); 'planar abs.': the network of "
        "`netdyn.components.planar` bodies and revolute joints, absolute coordinates with joint constraints; "
        "'planar rel.': the same network in its relative (spanning-tree) formulation; from 8 links netdyn "
        "evaluates it by the recursive algorithms (`netdyn.numerics.functions.treedynamics`) and derives its symbolic equations "
        "only on demand, so the column is the model building alone (its compile step below includes the first "
        "evaluation). All symbolic in m_i, l_i, g.",
        "",
    ]
    nd = [("joint angles", "nd_joint"), ("planar abs.", "nd_planar"), ("planar rel.", "nd_planar_rel")]
    cols = [("Kane", "kane", "derive", 1), ("Lagrange", "lagrange", "derive", 1)] + \
        [(f"netdyn {label}", s, "derive", 1) for label, s in nd]
    rats = [(f"{label} / Kane", (s, "derive"), ("kane", "derive")) for label, s in nd] + \
        [("joint angles / Lagrange", ("nd_joint", "derive"), ("lagrange", "derive"))]
    out += [table(chain, "n", cols, rats, results, notes), "", exponents(chain, cols, results, "n"), "",
            "netdyn's compile step (compiling the derived equations, or building the recursive evaluator, and the "
            "first evaluation), not in the ratios: "
            + _inline(chain, nd, "compile", results), ""]

    out += ["## n-link pendulum: one right-hand side evaluation (µs)", "",
            "Pinocchio `aba(model, data, q, v, tau)`; netdyn: the compiled model's `accelerations(t, q, f, p)` "
            "(mass matrix, forces and, with constraints, the KKT solve). Median of timeit repeats after a "
            "warm-up call, at the same random state; 'agree' is max |netdyn − Pinocchio| / max |Pinocchio| "
            "of the angular accelerations there (absolute ones for 'planar abs.').", ""]
    nd = nd + [("recursive", "nd_chain_recursive")]
    cols = [("Pinocchio aba", "pinocchio", "rhs", 1e6)] + [(f"netdyn {label}", s, "rhs", 1e6) for label, s in nd]
    rats = [(f"{label} / Pinocchio", (s, "rhs"), ("pinocchio", "rhs")) for label, s in nd]
    extra = [(f"agree, {label}", s, "rhs_agree", 1) for label, s in nd]
    out += [table(chain, "n", cols + extra, rats, results, notes), "",
            exponents(chain, cols, results, "n"), ""]

    out += ["## n-link pendulum: 10 s of motion (s)", "",
            "Released from rest, first link 45° below +x, the rest straight; 1001 output points; rtol = 1e-8 "
            "(peer: scipy `solve_ivp` DOP853 on Pinocchio `aba`, atol = 1e-8; netdyn: `netdyn.simulate`, its "
            "default scaled atol; 'recursive': `netdyn.recursive.integrate`, DOP853 on the compiled articulated-body "
            "right-hand side in joint coordinates, atol = 1e-8). After a 0.1 s warm-up run; compilation not included. "
            "Energy drift = "
            "max |E(t) − E(0)| in J (links of 1 kg and 1 m), the energy computed outside netdyn (Pinocchio's for "
            "the peer); residual = max |φ| or |Φ_q q̇| of the planar abs. model.", ""]
    cols = [("Pinocchio + DOP853", "pinocchio", "simulate", 1)] + \
        [(f"netdyn {label}", s, "simulate", 1) for label, s in nd]
    rats = [(f"{label} / peer", (s, "simulate"), ("pinocchio", "simulate")) for label, s in nd]
    extra = [("drift, peer", "pinocchio", "energy_drift", 1)] + \
        [(f"drift, {label}", s, "energy_drift", 1) for label, s in nd] + \
        [("residual, planar abs.", "nd_planar", "residual", 1)]
    out += [table(chain, "n", cols + extra, rats, results, notes), "",
            exponents(chain, cols, results, "n"), ""]
    return out


def _rc_table(results, rc, notes, nonlinear=False, series=("ngspice_nl", "nd_nl")):
    if nonlinear and series[0] == "ngspice_nli":
        ng, nd = series
        out = ["## Nonlinear RC ladder driven by a current source: 10 µs transient after a 1 mA step (s)", "",
               "The nonlinear ladder below fed by a 1 mA current source with a 1 kΩ shunt at its head "
               "(`benchmarks.problems.NLRC_CURRENT`): in loop charges the source is a flow constraint with a "
               "multiplier, so the law path's DAE carries the constraint row and its multiplier. "
               "ngspice: `nonlinear_ladder_deck(N, drive=\"current\")`, same options; netdyn as below.", ""]
        cols = [("ngspice process, CPU", ng, "cpu", 1), ("ngspice transient CPU", ng, "transient_cpu", 1),
                ("netdyn total", nd, "total", 1), ("netdyn solve", nd, "solve", 1)]
        rats = [("total / ngspice process CPU", (nd, "total"), (ng, "cpu")),
                ("solve / ngspice transient CPU", (nd, "solve"), (ng, "transient_cpu"))]
        extra = [("ngspice time points", ng, "timepoints", 1), ("Δv (V)", nd, "dv", 1)]
        return out + [table(rc, "N", cols + extra, rats, results, notes), "", exponents(rc, cols, results, "N"), ""]
    if nonlinear:
        out = ["## Nonlinear RC ladder: 10 µs transient after a 1 V step (s)", "",
               "The RC ladder with nonlinear resistors, v = R i + A i³, and nonlinear (charge-controlled) "
               "capacitors, v = q/C + B q³ (A = 1e8, B = 1e26: the cubic terms are about a tenth at 1 V). "
               "ngspice: B-sources (`benchmarks.problems.nonlinear_ladder_deck`: a sensing 0 V source for each "
               "current-controlled element and the capacitor charge integrated on an auxiliary node, four "
               "nodes per section), the same `.tran 10n 10u 0 10n uic`. netdyn: the network built in Python → "
               "`netdyn.simulate` on the circuit path's law templates (`netdyn.numerics.circuit.laws`: each law "
               "compiled once, elements stamped as numbers, Newton + variable-step BDF; 'total'), then "
               "`netdyn.simulate` again on the same network ('solve'); rtol = 1e-6. 'symbolic': the previous path, "
               "`net.model()` → `netdyn.simulate` (IDA), up to N = 200, and 'Δ symbolic' its largest difference "
               "from the law path at nodes 1 and N. Peak memory: the largest resident set of ngspice's runs, and "
               "netdyn's whole measuring process (imports and warm-up included).", ""]
        cols = [("ngspice process, CPU", "ngspice_nl", "cpu", 1), ("ngspice transient CPU", "ngspice_nl",
                                                                     "transient_cpu", 1),
                ("netdyn total", "nd_nl", "total", 1), ("netdyn solve", "nd_nl", "solve", 1),
                ("netdyn symbolic (old path)", "nd_nl", "symbolic", 1)]
        rats = [("total / ngspice process CPU", ("nd_nl", "total"), ("ngspice_nl", "cpu")),
                ("solve / ngspice transient CPU", ("nd_nl", "solve"), ("ngspice_nl", "transient_cpu"))]
        extra = [("ngspice time points", "ngspice_nl", "timepoints", 1), ("netdyn steps", "nd_nl", "steps", 1),
                 ("Δv vs ngspice (V)", "nd_nl", "dv", 1), ("Δ symbolic (V)", "nd_nl", "dsym", 1),
                 ("ngspice peak MB", "ngspice_nl", "peak_mb", 1), ("netdyn peak MB", "nd_nl", "peak_mb", 1)]
        return out + [table(rc, "N", cols + extra, rats, results, notes), "", exponents(rc, cols[:4], results, "N"),
                      ""]
    out = ["## RC ladder: 10 µs transient after a 1 V step (s)", "",
            "N sections of series 1 kΩ and shunt 1 nF. ngspice: `ngspice -b -r out.raw` with "
            "`.tran 10n 10u 0 10n uic` and `.options acct` (all node voltages written); 'process' is the "
            "whole ngspice run (wall, and CPU from rusage); 'acct' is its own 'Transient analysis time' "
            "(a wall clock: above the process CPU on a loaded machine); 'transient CPU' is the process CPU "
            "minus that of the same deck with only `.op` (reading, set-up, output). "
            "netdyn: description → `net.model()` → `netdyn.simulate` with 1001 output points ('total', "
            "includes derivation and compilation), then the same simulation again ('solve'). Δv = max "
            "|v_netdyn − v_ngspice| at nodes 1 and N (ngspice interpolated linearly to netdyn's times).", ""]
    cols = [("ngspice process, wall", "ngspice", "wall", 1), ("ngspice process, CPU", "ngspice", "cpu", 1),
            ("ngspice acct", "ngspice", "transient", 1), ("ngspice transient CPU", "ngspice", "transient_cpu", 1),
            ("netdyn total", "nd_rc", "total", 1), ("netdyn solve", "nd_rc", "solve", 1)]
    rats = [("total / ngspice process CPU", ("nd_rc", "total"), ("ngspice", "cpu")),
            ("solve / ngspice transient CPU", ("nd_rc", "solve"), ("ngspice", "transient_cpu"))]
    extra = [("ngspice time points", "ngspice", "timepoints", 1), ("Δv (V)", "nd_rc", "dv", 1)]
    out += [table(rc, "N", cols + extra, rats, results, notes), "", exponents(rc, cols, results, "N"), ""]
    return out


def _closed_table(results, notes):
    out = ["## Closed chains: 10 s of motion under gravity (netdyn only)", "",
            "The book's Examples 4.3 (four-bar, 5 coordinates, 4 constraints) and 4.2 (slider-crank, 7 and 6) "
            "typed in as `LagrangianModel`s, plus gravity, no torque; the crank starts at 60° turning at 1 rev/s. "
            "No external peer is measured for these: the checks are the constraint residual (max |φ| and "
            "max |Φ_q q̇| over the 1001 output points) and the energy drift against the largest energy.", "",
            "| case | derive (s) | simulate 10 s (s) | max abs(phi) | max abs(Phi_q qdot) | energy drift / max E "
            "| crank turns |", "|---|---|---|---|---|---|---|"]
    for name in ("four_bar", "slider_crank"):
        res = results.get(name)
        drift = None
        if res and value(res, "energy_drift") is not None and value(res, "energy_scale"):
            drift = res["energy_drift"] / res["energy_scale"]
        out.append(f"| {name.replace('_', '-')} | {cell(res, 'derive', 1, notes)} | {cell(res, 'simulate', 1, notes)} "
                   f"| {cell(res, 'residual', 1, notes)} | {cell(res, 'velocity_residual', 1, notes)} | "
                   f"{_fmt(drift)} | {cell(res, 'turns', 1, notes)} |")
    return out + [""]


MIXED = [("motor_four_bar", "motor_four_bar", {}),
         ("motor_four_bar_projection", "motor_four_bar", {"method": "projection"}),
         ("four_bar_alone", "four_bar_alone", {}),
         ("four_bar_100s", "four_bar_alone", {"tau": 1.0, "span": 100.0}),
         ("four_bar_100s_compiled", "four_bar_alone", {"tau": 1.0, "span": 100.0, "compiled_loop": True})]


def _mixed_table(results, notes):
    out = ["## A DC motor on a circuit driving the four-bar (netdyn only)", "",
           "`netdyn.linkages.motor_four_bar()`: source 12 V, armature 1 Ω and 1 mH, coupling K = 0.5 N·m/A "
           "on the crank of the book's four-bar; 5 s from rest, 1001 output points, rtol = 1e-8, description "
           "to solution (CPU s). Electrical time constant 1 ms against a mechanism of ~1 s: stiff. The peer is "
           "the same four-bar alone under a constant torque of about the same motion (4 N·m), and the long "
           "run is the four-bar under 1 N·m for 100 s. 'power balance' is `sol.power_balance()['relative']`.",
           "", "| case | method | total (s) | / four-bar alone | crank turns | power balance | max abs(phi) |",
           "|---|---|---|---|---|---|---|"]
    alone = results.get("four_bar_alone")
    labels = {"motor_four_bar": "motor + four-bar, 5 s (auto)",
              "motor_four_bar_projection": "motor + four-bar, 5 s (method='projection')",
              "four_bar_alone": "four-bar alone, 4 N·m, 5 s", "four_bar_100s": "four-bar alone, 1 N·m, 100 s",
              "four_bar_100s_compiled": "four-bar alone, 1 N·m, 100 s (compiled_loop=True)"}
    for key, _, _ in MIXED:
        res = results.get(key)
        rel = ratio(res, "total", alone, "total") if key.startswith("motor") else "—"
        out.append(f"| {labels[key]} | {cell(res, 'method', 1, notes)} | {cell(res, 'total', 1, notes)} | {rel} | "
                   f"{cell(res, 'turns', 1, notes)} | {cell(res, 'power_balance', 1, notes)} | "
                   f"{cell(res, 'residual', 1, notes)} |")
    return out + [""]


def _recursive_tables(results, sizes, notes):
    out = ["## Recursive path: n-link chain in joint coordinates (netdyn.recursive)", "",
           "RHS (µs): one call of the function handed to the ODE solver — netdyn `tree_rhs(model)(t, y)` "
           "(compiled ABA, numba) against Pinocchio `aba(model, data, q, v, tau)` at the same random state; "
           "'agree' as above. 10 s (s): `netdyn.recursive.integrate` (DOP853) against Pinocchio `aba` + scipy "
           "DOP853, same tolerances (rtol = atol = 1e-8), after a 0.1 s warm-up; drift in J. Targets of issue 14: "
           "RHS within 5× at n = 10 and 3× at n = 100, 10 s within 3×.", ""]
    cols = [("Pinocchio aba (µs)", "pinocchio_rec", "rhs", 1e6), ("netdyn recursive RHS (µs)", "nd_recursive", "rhs", 1e6),
            ("Pinocchio + DOP853 10 s", "pinocchio_rec", "simulate", 1),
            ("netdyn recursive 10 s", "nd_recursive", "simulate", 1)]
    rats = [("RHS / Pinocchio", ("nd_recursive", "rhs"), ("pinocchio_rec", "rhs")),
            ("10 s / peer", ("nd_recursive", "simulate"), ("pinocchio_rec", "simulate"))]
    extra = [("agree", "nd_recursive", "rhs_agree", 1), ("drift, peer", "pinocchio_rec", "energy_drift", 1),
             ("drift, netdyn", "nd_recursive", "energy_drift", 1)]
    out += [table(sizes, "n", cols + extra, rats, results, notes), "", exponents(sizes, cols, results, "n"), ""]
    res = results.get("rrr_inverse")
    out += ["3-RRR of issue 14, DeNOC inverse dynamics over 201 time points of the circle (loop-closure "
            f"kinematics included; target < 50 ms): {cell(res, 'inverse', 1e3, notes)} ms "
            f"(max actuator effort {cell(res, 'max_effort', 1, notes)} N·m).", ""]
    return out


def _inline(sizes, series, key, results):
    parts = []
    for label, s in series:
        vals = [(n, value(results.get(s, {}).get(n), key)) for n in sizes]
        vals = [f"n={n} {v:.3g} s" for n, v in vals if v is not None]
        parts.append(f"{label} " + (", ".join(vals) if vals else "—"))
    return "; ".join(parts) + "."


# --------------------------------------------------------------------------- entry
def _safety_tables(results, plan):
    """Netlist reading beside ngspice, and PWL sources by corner count (issue 11: bounded work)."""
    notes = []
    read_cols = [("ngspice -b read (s)", "ng_read", "read", 1.0), ("netdyn read_netlist (s)", "nd_read", "read", 1.0)]
    pwl_cols = [("netdyn simulate (s)", "nd_pwl", "simulate", 1.0)]
    return "\n\n".join([
        "## Netlist reading (elements of an RC ladder deck)",
        table(plan["netlist"], "elements", read_cols, [("netdyn / ngspice", ("nd_read", "read"), ("ng_read", "read"))],
              results, notes),
        exponents(plan["netlist"], read_cols, results, "elements"),
        "## PWL source into an RC (corners of a square wave, simulated over the whole wave)",
        table(plan["pwl"], "corners", pwl_cols, [], results, notes),
        exponents(plan["pwl"], pwl_cols, results, "corners") + " Linear in the corners is 1; the target is ≤ 1.1.",
    ] + notes) + "\n"


def _read_table(results, plan):
    """Reading every node voltage of the RC ladder, and its whole table, against simulating it (issue 26)."""
    notes = []
    cols = [("simulate (s)", "nd_read_results", "simulate", 1.0),
            ("read all node voltages (s)", "nd_read_results", "read", 1.0),
            ("of which first read (s)", "nd_read_results", "first", 1.0),
            ("per read (µs)", "nd_read_results", "per_read", 1e6), ("to_pandas (s)", "nd_read_results", "to_pandas", 1.0),
            ("columns", "nd_read_results", "columns", 1)]
    rats = [("read all / simulate", ("nd_read_results", "read"), ("nd_read_results", "simulate")),
            ("to_pandas / simulate", ("nd_read_results", "to_pandas"), ("nd_read_results", "simulate"))]
    return "\n\n".join([
        "## Reading results: every node voltage of the RC ladder against simulating it (CPU s)",
        "`netdyn.simulate` of the built ladder (linear path, 101 output times), then `sol.voltage(node)` for each "
        "of the N + 1 nodes of the fresh solution (the first read builds the solution's index once, included; "
        "timed alone in the next column), then `sol.to_pandas()` (every coordinate and flow, node voltage, "
        "element voltage and current). "
        "Target of issue 26: reading everything costs less than simulating (ratio below 1).",
        table(plan["read"], "N", cols, rats, results, notes),
        exponents(plan["read"], cols[:3], results, "N"),
    ] + notes) + "\n"


def _cli_table(results, plan):
    """``netdyn simulate`` beside the Python API and ngspice (issue 26)."""
    notes = []
    cols = [("netdyn simulate (process CPU, s)", "{s}", "cli", 1.0), ("API: read_netlist + simulate + savetxt "
            "(process CPU, s)", "{s}", "api", 1.0), ("ngspice -b -r (process CPU, s)", "{s}", "ngspice", 1.0),
            ("CSV written by the command (MB)", "{s}", "cli_mb", 1.0)]
    rats = [("command / API", ("{s}", "cli"), ("{s}", "api")), ("command / ngspice", ("{s}", "cli"), ("{s}", "ngspice"))]
    out = ["## The `netdyn` command beside the Python API and ngspice (RC ladder, 10 µs, 1001 output times)", "",
           "Whole processes, CPU seconds (user + system), imports included (`benchmarks/cli_cases.py`). 'every "
           "column': the command's default table (3N + 1 columns: every node voltage and element current); the "
           "API writes the state `[t, q, f]` (2N + 1 columns) with `np.savetxt(fmt='%r')`. 'four columns': "
           "`--outputs 'v(n1);v(nN/2);v(nN);i(V1)'`, and the API the same four through `sol.voltage`/`sol.current`. "
           "ngspice writes every node voltage to its binary raw file.", ""]
    for label, series in (("every column", "cli_all"), ("four columns", "cli_few")):
        sizes = sorted(results.get(series, {}))
        if not sizes:
            continue
        fill = lambda x: x.replace("{s}", series)
        out += [f"### {label}", "", table(sizes, "N", [(c[0], fill(c[1]), c[2], c[3]) for c in cols],
                                          [(r[0], (fill(r[1][0]), r[1][1]), (fill(r[2][0]), r[2][1])) for r in rats],
                                          results, notes), ""]
    return "\n".join(out + [f"{i + 1}. {m}" for i, m in enumerate(notes)]) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (under 2 minutes)")
    parser.add_argument("--cap", type=float, default=None,
                        help="cap per case in CPU seconds (default 60; 10 with --quick)")
    parser.add_argument("--only", default="chain,rc,nl,nli,closed,mixed,recursive,safety,read,cli",
                        help="comma-separated groups to run: chain, rc, nl (nonlinear ladder), nli (the same, driven "
                             "by a current source), closed, mixed (motor "
                             "and four-bar), recursive, safety, read (reading results), cli (default: all), memory "
                             "(peak memory beside time, whole processes; only when named)")
    parser.add_argument("--sizes", default=None,
                        help="override the sizes of the groups run, e.g. 10,100,1000")
    parser.add_argument("--series", default=",".join(CHAIN_SERIES),
                        help="comma-separated series of the chain group: " + ", ".join(CHAIN_SERIES)
                             + " (default: all; e.g. pinocchio,relative for the relative formulation beside its peer)")
    parser.add_argument("--output", default=None,
                        help="where to write the Markdown (default benchmarks/results.md; "
                             "benchmarks/results-quick.md with --quick, so a quick run keeps the full results)")
    args = parser.parse_args(argv)
    cap = args.cap if args.cap is not None else (10.0 if args.quick else 60.0)
    plan = dict(QUICK if args.quick else FULL)
    if args.sizes:
        sizes = [int(x) for x in args.sizes.split(",") if x.strip()]
        plan = {k: sizes for k in plan}
    groups = {g.strip() for g in args.only.split(",") if g.strip()}
    started, load0 = time.perf_counter(), os.getloadavg()[0]
    results = {}
    if "chain" in groups:
        sizes = plan["chain"]
        log("pendulum derivation, RHS and simulation")
        series = {x.strip() for x in args.series.split(",") if x.strip()}
        unknown = series - set(CHAIN_SERIES)
        if unknown:
            parser.error(f"unknown chain series {sorted(unknown)}; choose from {', '.join(CHAIN_SERIES)}")
        for name in CHAIN_SERIES:
            key, label, target, stage = CHAIN_SERIES[name]
            results[key] = sweep(label, target, sizes, cap, optional_stage=stage) if name in series else \
                {n: {"status": SKIP} for n in sizes}
    if "rc" in groups:
        log("RC ladder")
        results["ngspice"] = sweep("ngspice", "benchmarks.peers:ngspice_rc_ladder", plan["rc"], cap, size_arg="N")
        results["nd_rc"] = sweep("netdyn", "benchmarks.cases_netdyn:rc_ladder", plan["rc"], cap, size_arg="N")
        rc_agreement(results, plan["rc"])
    if "nl" in groups:
        log("nonlinear RC ladder")
        results["ngspice_nl"] = sweep("ngspice", "benchmarks.peers:ngspice_nonlinear_ladder", plan["nl"], cap,
                                      size_arg="N")
        results["nd_nl"] = sweep("netdyn", "benchmarks.cases_netdyn:nonlinear_ladder", plan["nl"], cap, size_arg="N")
        rc_agreement(results, plan["nl"], "ngspice_nl", "nd_nl")
    if "nli" in groups:
        log("nonlinear RC ladder, current drive")
        results["ngspice_nli"] = sweep("ngspice", "benchmarks.peers:ngspice_nonlinear_ladder_current", plan["nli"],
                                       cap, size_arg="N")
        results["nd_nli"] = sweep("netdyn", "benchmarks.cases_netdyn:nonlinear_ladder_current", plan["nli"], cap,
                                  size_arg="N")
        rc_agreement(results, plan["nli"], "ngspice_nli", "nd_nli")
    if "closed" in groups:
        log("closed chains")
        for name in ("four_bar", "slider_crank"):
            results[name] = run_case(f"benchmarks.cases_netdyn:{name}", {}, cap=cap)
            log(f"  {name}: " + ", ".join(f"{k}={_short(v)}" for k, v in results[name].items()))
    if "mixed" in groups:
        log("motor and four-bar")
        for key, target, kw in MIXED:
            results[key] = run_case(f"benchmarks.cases_netdyn:{target}", kw, cap=cap)
            log(f"  {key}: " + ", ".join(f"{k}={_short(v)}" for k, v in results[key].items()))
    if "recursive" in groups:
        log("recursive path")
        sizes = plan["recursive"]
        results["pinocchio_rec"] = sweep("pinocchio", "benchmarks.peers:pinocchio_chain", sizes, cap,
                                         optional_stage="simulate")
        results["nd_recursive"] = sweep("netdyn recursive", "benchmarks.cases_recursive:recursive_chain", sizes, cap,
                                        optional_stage="simulate")
        results["rrr_inverse"] = run_case("benchmarks.cases_recursive:rrr_inverse", {}, cap=cap)
    if "safety" in groups:
        log("netlist reading and PWL sources")
        results["ng_read"] = sweep("ngspice read", "benchmarks.peers:ngspice_read", plan["netlist"], cap)
        results["nd_read"] = sweep("netdyn read", "benchmarks.cases_netdyn:netlist_read", plan["netlist"], cap)
        results["nd_pwl"] = sweep("netdyn PWL", "benchmarks.cases_netdyn:pwl_source", plan["pwl"], cap)
    if "read" in groups:
        log("reading results")
        results["nd_read_results"] = sweep("netdyn read", "benchmarks.cases_netdyn:rc_ladder_read", plan["read"], cap,
                                           size_arg="N")
    if "cli" in groups:
        log("the netdyn command beside the API and ngspice")
        cli_cap = max(cap, 1800.0)
        results["cli_all"] = sweep("command, every column", "benchmarks.cli_cases:cli_vs_api",
                                   [n for n in plan["cli"] if n <= 10000], cli_cap, size_arg="N")
        results["cli_few"] = sweep("command, four columns", "benchmarks.cli_cases:cli_vs_api_few", plan["cli"],
                                   cli_cap, size_arg="N")
    if "memory" in groups:
        from benchmarks import memory
        log("memory beside time (whole processes)")
        sizes = {k: v for k, v in memory.SIZES.items()}
        if args.sizes:
            sizes = {k: [int(x) for x in args.sizes.split(",") if x.strip()] for k in sizes}
        results["memory"] = memory.run(sizes, log=log)
        if groups == {"memory"}:
            text = memory.table(results["memory"])
            print(text)
            output = Path(args.output or ROOT / "benchmarks" / "results-memory.md")
            output.write_text(text)
            log(f"written to {output}")
            return 0
    text = build_report(results, plan, cap, args.quick, started, load0, groups)
    if "memory" in groups:
        from benchmarks import memory
        text += "\n" + memory.table(results["memory"])
    if "cli" in groups:
        text += "\n" + _cli_table(results, plan)
    if "safety" in groups:
        text += "\n" + _safety_tables(results, plan)
    if "read" in groups:
        text += "\n" + _read_table(results, plan)
    print(text)
    output = Path(args.output or ROOT / "benchmarks" / ("results-quick.md" if args.quick else "results.md"))
    output.write_text(text)
    log(f"written to {output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
