"""Motions as data (issue 25, item 3): ``netdyn.inverse_dynamics`` from the front door, first call on the
network included, with Pinocchio's ``rnea`` loop over the same states measured in the same run.

    python -m benchmarks.motions [--repeats N]

Cases (each a fresh network built inside the timed call's process; the numba caches and the first imports
warmed on a smaller network first, as a user's session would have them):

* 20-link planar pendulum, every joint driven, 201 times: array drivers ``(q, q̇, q̈)`` and sympy
  expressions of t. Peer: Pinocchio's ``rnea`` on the same 201 states, a Python loop over them
  (targets of the issue: ≤ 5× with arrays, ≤ 20× with expressions).
* 3-RRR of issue 14 from its platform trajectory (task space, numeric inverse kinematics on the loop
  closure), 201 times (target < 50 ms). Peer in the same run: the closed-form inverse kinematics + DeNOC of
  :mod:`netdyn.linkages.parallel` (the tree path the issue measured), and Pinocchio's ``rnea`` loop on the
  same chain length.
* Clavel's Delta robot (:func:`netdyn.linkages.spatial.delta_robot`, FlexPicker geometry) from its platform's
  position over 201 times (target < 0.5 s). Peer in the same run: the independent reference of
  ``tests/test_delta.py`` (closed-form inverse kinematics + virtual power in the platform coordinates, numpy
  with sympy-made gradients and Hessians of the arm angles).

Medians of ``--repeats`` runs (default 5) of CPU time (``time.process_time``: the shared machine's load
inflates wall times several-fold and unevenly; CPU seconds, as the other benchmarks report); the peer is
timed the same way in the same run, so read the ratios.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

N, POINTS = 20, 201


def _median(fn, repeats):
    out = []
    for _ in range(repeats):
        t0 = time.process_time()
        fn()
        out.append(time.process_time() - t0)
    return float(np.median(out))


def chain_drivers(n, times, kind, shift=0.0):
    import sympy as sp
    from netdyn import t

    if kind == "sympy":
        return {f"J{k + 1}": 0.3 * sp.sin(2 * t + k + shift) for k in range(n)}
    return {f"J{k + 1}": (0.3 * np.sin(2 * times + k), 0.6 * np.cos(2 * times + k), -1.2 * np.sin(2 * times + k))
            for k in range(n)}


def netdyn_chain(kind, repeats):
    """Seconds of ``inverse_dynamics`` on a fresh 20-link network (first call on it), of the network's building
    plus that call, and the efforts. The drivers are the user's data, made before the clock starts (new
    expressions each run: no cached lambdify helps a first call; making 20 sympy expressions costs sympy
    about 40 ms, which is not netdyn's work)."""
    import netdyn

    times = np.linspace(0, 2, POINTS)
    netdyn.inverse_dynamics(netdyn.linkages.pendulum([1.0] * 3, [0.5] * 3), chain_drivers(3, times, kind), times)
    call, whole = [], []
    res = None
    for k in range(repeats + 1):
        drivers = chain_drivers(N, times, kind, shift=1e-3 * k)
        t0 = time.process_time()
        net = netdyn.linkages.pendulum([1.0] * N, [0.5] * N)
        t1 = time.process_time()
        out = netdyn.inverse_dynamics(net, drivers, times)
        t2 = time.process_time()
        res = out if k == 0 else res  # the unshifted motion: compared with Pinocchio's
        if k:  # the first run warms what the smaller network did not
            call.append(t2 - t1)
            whole.append(t2 - t0)
    return float(np.median(call)), float(np.median(whole)), res


def pinocchio_chain(repeats):
    """Seconds of Pinocchio's ``rnea`` loop over the 201 states of the same motion, and its efforts."""
    import pinocchio as pin

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
    from references.pendulum import pinocchio_pendulum

    model = pinocchio_pendulum(N, [1.0] * N, [0.5] * N, 9.81)
    data = model.createData()
    times = np.linspace(0, 2, POINTS)
    k = np.arange(N)[:, None]
    Q, V, A = 0.3 * np.sin(2 * times + k), 0.6 * np.cos(2 * times + k), -1.2 * np.sin(2 * times + k)
    out = np.zeros((N, POINTS))

    def loop():
        for j in range(POINTS):
            out[:, j] = pin.rnea(model, data, Q[:, j], V[:, j], A[:, j])

    loop()
    return _median(loop, repeats), out.copy()


def netdyn_rrr(repeats):
    import netdyn
    from netdyn.linkages.parallel import circle, three_rrr

    mech = three_rrr()
    times = np.linspace(0, 2, POINTS)
    act = ["A1", "A2", "A3"]
    netdyn.inverse_dynamics(mech.network(), {"platform": circle()}, times[:3], actuated=act)

    def front_door():
        return netdyn.inverse_dynamics(mech.network(), {"platform": circle()}, times, actuated=act)

    res = front_door()
    ref = mech.inverse_dynamics(times, circle())
    agree = float(np.max(np.abs(np.array([res.efforts[j] for j in act]) - ref.efforts)))
    return _median(front_door, repeats), _median(lambda: mech.inverse_dynamics(times, circle()), repeats), agree


def netdyn_delta(repeats):
    """CPU seconds of ``inverse_dynamics`` of the Delta robot from its platform trajectory (a fresh network each
    run, first call on it), of the independent reference (closed-form IK + virtual power in platform
    coordinates, ``tests/test_delta.py``; its sympy functions made before the clock), and their largest gap."""
    import warnings
    import netdyn
    from netdyn.errors import IdleFreedomWarning
    from netdyn.linkages.spatial import delta_circle, delta_robot

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
    from test_delta import reference_efforts

    times = np.linspace(0, 1, POINTS)
    act = ["A1", "A2", "A3"]
    warnings.simplefilter("ignore", IdleFreedomWarning)
    netdyn.inverse_dynamics(delta_robot(), {"platform": delta_circle()}, times[:3], actuated=act)
    nets = [delta_robot() for _ in range(repeats + 1)]
    res = netdyn.inverse_dynamics(nets.pop(), {"platform": delta_circle()}, times, actuated=act)
    s = _median(lambda: netdyn.inverse_dynamics(nets.pop(), {"platform": delta_circle()}, times, actuated=act),
                repeats)
    reference_efforts(times[:2], delta_circle())  # sympy's functions made once, before the clock (cached)
    ref_s = _median(lambda: reference_efforts(times, delta_circle()), repeats)
    ref = reference_efforts(times, delta_circle())
    agree = float(np.max(np.abs(np.array([res.efforts[j] for j in act]) - ref)))
    return s, ref_s, agree


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m benchmarks.motions", description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    pin_s, pin_tau = pinocchio_chain(args.repeats)
    rows = []
    for kind in ("arrays", "sympy"):
        s, whole, res = netdyn_chain(kind, args.repeats)
        agree = max(float(np.max(np.abs(res.efforts[f"J{k + 1}"] - pin_tau[k]))) for k in range(N))
        rows.append((f"20-link chain, {POINTS} times, {kind} drivers", s, whole, "Pinocchio rnea loop", pin_s, agree,
                     "≤ 5×" if kind == "arrays" else "≤ 20×"))
    s, tree_s, agree = netdyn_rrr(args.repeats)
    rows.append((f"3-RRR platform trajectory, {POINTS} times", s, float("nan"), "closed-form IK + DeNOC (tree)",
                 tree_s, agree, "< 50 ms"))
    s, ref_s, agree = netdyn_delta(args.repeats)
    rows.append((f"Delta robot platform trajectory, {POINTS} times", s, float("nan"),
                 "closed-form IK + virtual power (test reference)", ref_s, agree, "< 500 ms"))
    print("| case | netdyn call (ms) | network + call (ms) | peer | peer (ms) | ratio call (network + call) "
          "| max |Δ effort| | target |")
    print("|---|---|---|---|---|---|---|---|")
    for case, s, whole, peer, ps, agree, target in rows:
        both = f"{s / ps:.1f}×" + (f" ({whole / ps:.1f}×)" if whole == whole else "")
        print(f"| {case} | {1e3 * s:.1f} | {1e3 * whole:.1f} | {peer} | {1e3 * ps:.2f} | {both} | {agree:.2g} "
              f"| {target} |")
    print(f"\nPinocchio rnea loop, {POINTS} states of the 20-link chain: {1e3 * pin_s:.2f} ms "
          f"(the 3-RRR and Delta ratios are to their closed-form peers; their absolute times are the targets)")


if __name__ == "__main__":
    main()
