"""Spatial mechanisms from the front door on the recursive engine (issue 25), Pinocchio in the same run.

    python -m benchmarks.recursive_spatial [--cap SECONDS] [--symbolic]

The case of the issue: a 5-body spatial chain with oblique revolute and prismatic joints and a Universal
joint, full inertias, gravity, a spring and a damper, in relative coordinates. Columns (CPU seconds, each
case in a fresh process, first call on the network included — numba's compiled kernels are cached on disk):

* ``inverse_dynamics`` at 5 states (``method="auto"`` takes the recursive DeNOC path) against a Pinocchio
  ``rnea`` loop over the same states, model built from the same numbers;
* forward dynamics: ``simulate`` over 1 s with 201 output times (``method="auto"``: the recursive path)
  against scipy DOP853 driven by Pinocchio ``aba`` at the same tolerances; and one right-hand side call;
* ``--symbolic``: the symbolic paths the issue measured (least squares at 5 states and the projection
  path), under the cap.

Each row prints the ratio netdyn / Pinocchio and the largest difference of the answers.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.harness import needs, per_call, report, run_case, stopwatch  # noqa: E402

TIMES = 5
RTOL = 1e-9


def issue_chain():
    """The 5-body chain: oblique revolute, oblique prismatic, Universal, revolute, prismatic."""
    import numpy as np

    from netdyn import Network
    from netdyn.components.spatial import Damper, Gravity, Prismatic, Revolute, RigidBody, Spring, Universal

    rng = np.random.default_rng(25)
    net = Network("issue-25 chain")
    for k in range(5):
        s = rng.uniform(0.02, 0.2, size=3)
        A = np.linalg.qr(rng.normal(size=(3, 3)))[0]
        J = A @ np.diag([s[1] + s[2], s[0] + s[2], s[0] + s[1]]) @ A.T
        net.add(RigidBody(f"L{k}", float(rng.uniform(0.5, 2.0)), J.tolist(), com=(0.05, 0.02, -0.2)))
    net.add(Gravity(),
            Revolute("R0", "ground", (0, 0, 0), "L0", (0, 0, 0), axis=(0.3, 0.2, 1.0)),
            Prismatic("P1", "L0", (0.1, 0.0, -0.4), "L1", (0, 0, 0), axis=(1.0, 0.5, -0.3)),
            Universal("U2", "L1", (0.0, 0.1, -0.4), "L2", (0, 0, 0)),
            Revolute("R3", "L2", (0.0, 0.0, -0.4), "L3", (0, 0, 0), axis=(1.0, -0.4, 0.2)),
            Prismatic("P4", "L3", (0.1, 0.1, -0.3), "L4", (0, 0, 0), axis=(0.2, 1.0, 0.6)),
            Spring("k", "ground", (0.5, 0.5, 0.0), "L4", (0, 0, 0), k=20.0, length=0.5),
            Damper("c", "ground", (0.5, 0.5, 0.0), "L2", (0, 0, 0), c=0.5))
    return net


def drivers():
    import sympy as sp

    from netdyn import t
    return {"R0": 0.3 * sp.sin(t), "P1": 0.1 * t, "U2[rx]": 0.2 * sp.sin(2 * t), "U2[ry]": -0.1 * t,
            "R3": 0.4 * t ** 2, "P4": 0.05 * sp.cos(t)}


Q0 = {"thetaz_R0": 0.2, "sz_P1": 0.05, "alpha_U2": 0.3, "beta_U2": -0.2, "thetaz_R3": 0.4, "sz_P4": 0.1}


def pinocchio_of(tree):
    """A Pinocchio model of the recursive tree's numbers (each one-freedom joint an unaligned joint)."""
    import numpy as np
    import pinocchio as pin

    m = tree.model
    model = pin.Model()
    model.gravity.linear = m.gravity
    ids = []
    for i in range(m.n):
        parent = 0 if m.parent[i] < 0 else ids[m.parent[i]]
        jm = (pin.JointModelRevoluteUnaligned(m.axis[i]) if m.jtype[i] == 0
              else pin.JointModelPrismaticUnaligned(m.axis[i]))
        jid = model.addJoint(parent, jm, pin.SE3(m.rotation[i], m.translation[i]), m.body_names[i])
        model.appendBodyToJoint(jid, pin.Inertia(m.mass[i], m.com[i], m.inertia[i]), pin.SE3.Identity())
        ids.append(jid)
    assert np.all(m.jtype != 2)
    return model


@needs("netdyn", "pinocchio")
def inverse_case(symbolic=False):
    import numpy as np
    import pinocchio as pin

    import netdyn
    from netdyn.recursive.spatial import tree_from_spatial_network

    te = np.linspace(0, 1, TIMES)
    net = issue_chain()
    seconds, res = stopwatch(netdyn.inverse_dynamics, net, drivers(), te)
    out = {"netdyn": seconds, "method": res.method}
    tree = tree_from_spatial_network(net)
    loads = tree.loads

    def peer():
        model = pinocchio_of(tree)
        data = model.createData()
        tau = np.zeros((model.nq, TIMES))
        for k, tt in enumerate(te):
            q, v, a = res.joint_q[:, k], res.joint_qd[:, k], res.joint_qdd[:, k]
            tau[:, k] = pin.rnea(model, data, q, v, a) - loads.generalized(tt, q, v)
        return tau
    out["pinocchio"], tau = stopwatch(peer)
    idx = [tree.components[("R0", "rz")], tree.components[("U2", "rx")]]
    out["difference"] = float(max(np.max(np.abs(tau[idx[0]] - res.efforts["R0"])),
                                  np.max(np.abs(tau[idx[1]] - res.efforts["U2[rx]"]))))
    report(**out)  # kept if the cap stops the symbolic stage
    if symbolic:
        out["symbolic"], _ = stopwatch(netdyn.inverse_dynamics, net.model(formulation="relative"), drivers(), te,
                                       method="least-squares")
    return out


@needs("netdyn", "pinocchio", "scipy.integrate")
def forward_case(symbolic=False):
    import numpy as np
    import pinocchio as pin
    from scipy.integrate import solve_ivp

    import netdyn
    from netdyn.recursive import TreeData, aba
    from netdyn.recursive.spatial import tree_from_spatial_network

    te = np.linspace(0, 1, 201)
    net = issue_chain()
    seconds, sol = stopwatch(netdyn.simulate, net, (0, 1), q0=Q0, t_eval=te, rtol=RTOL, atol=RTOL)
    out = {"netdyn": seconds, "method": str(sol.method)}
    tree = tree_from_spatial_network(net)
    loads, nq = tree.loads, tree.model.nq
    q0 = np.array([Q0[n] for n in tree.coordinate_names])

    def peer():
        model = pinocchio_of(tree)
        data = model.createData()

        def rhs(t, y):
            q, v = y[:nq], y[nq:]
            return np.concatenate([v, pin.aba(model, data, q, v, loads.generalized(t, q, v))])
        return solve_ivp(rhs, (0, 1), np.concatenate([q0, np.zeros(nq)]), method="DOP853", t_eval=te,
                         rtol=RTOL, atol=RTOL), rhs
    out["pinocchio"], (ref, rhs) = stopwatch(peer)
    out["difference"] = float(np.max(np.abs(ref.y[:nq] - sol.q)))
    data = TreeData(tree.model)
    y = np.concatenate([q0, np.full(nq, 0.1)])
    out["rhs_netdyn"] = per_call(lambda: aba(tree.model, data, y[:nq], y[nq:],
                                             loads.generalized(0.0, y[:nq], y[nq:])))
    out["rhs_pinocchio"] = per_call(rhs, 0.0, y)
    report(**out)
    if symbolic:
        out["symbolic"], _ = stopwatch(netdyn.simulate, net, (0, 1), q0=Q0, t_eval=te, rtol=RTOL, atol=RTOL,
                                       method="projection", formulation="relative")
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cap", type=float, default=300.0)
    ap.add_argument("--symbolic", action="store_true", help="also the symbolic paths (slow; under the cap)")
    args = ap.parse_args(argv)
    rows = []
    print("5-body spatial chain (oblique R and P, Universal, spring, damper), CPU seconds, first call included\n")
    print("| case | netdyn (path) | Pinocchio | ratio | max difference | symbolic path |")
    print("|---|---|---|---|---|---|", flush=True)
    for label, target in (("inverse dynamics, 5 states", "benchmarks.recursive_spatial:inverse_case"),
                          ("forward dynamics, 1 s, 201 times", "benchmarks.recursive_spatial:forward_case")):
        res = run_case(target, {"symbolic": args.symbolic}, cap=args.cap)
        v = dict(res)
        if res.status == "error":
            print(f"{label}: {res.get('message')}", file=sys.stderr)
        fmt = lambda x: f"{x:.3g}" if isinstance(x, (int, float)) else ("> cap" if res.status == "timeout" else "—")  # noqa: E731
        ratio = v["netdyn"] / v["pinocchio"] if "netdyn" in v and "pinocchio" in v else None
        rows.append(f"| {label} | {fmt(v.get('netdyn'))} ({v.get('method', '?')}) | {fmt(v.get('pinocchio'))} | "
                    f"{fmt(ratio)} | {fmt(v.get('difference'))} | "
                    f"{fmt(v.get('symbolic')) if args.symbolic else 'not run'} |")
        print(rows[-1], flush=True)
        if "rhs_netdyn" in v:
            rows.append(f"| one right-hand side (µs) | {v['rhs_netdyn'] * 1e6:.3g} | {v['rhs_pinocchio'] * 1e6:.3g} | "
                        f"{v['rhs_netdyn'] / v['rhs_pinocchio']:.3g} | | |")
            print(rows[-1], flush=True)


if __name__ == "__main__":
    main()
