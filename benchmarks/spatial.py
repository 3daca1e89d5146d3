"""Derivation cost of the spatial chain of mixed revolute axes: netdyn (absolute Euler-parameter coordinates,
``netdyn.linkages.spatial.spatial_chain``) against sympy.physics.mechanics' joints API (``PinJoint`` +
``System.form_eoms``, Kane's method) on the same chain, symbolic parameters in both.

    python -m benchmarks.spatial [--quick] [--cap SECONDS]

Each case runs in its own process under the CPU cap (:func:`benchmarks.harness.run_case`); the table gives CPU
seconds, the ratio netdyn / peer and, under it, the growth exponent k of time ∝ n^k. netdyn's column is
assembly + derivation (M, h, Φ_q, γ; not the lambdify compile of the numeric layer).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.harness import growth_exponent, needs, run_case, stopwatch  # noqa: E402

FULL, QUICK = [2, 4, 8, 16, 32], [2, 4, 8]


@needs("sympy", "netdyn")
def netdyn_spatial_derive(n):
    """CPU seconds for netdyn to assemble and derive the n-link spatial chain (symbolic parameters)."""
    from netdyn.linkages.spatial import chain_parameters, spatial_chain

    def derive(k):
        model = spatial_chain(k, chain_parameters(k, seed=k)).model(symbolic=True)
        return model.derive()

    derive(1)
    seconds, _ = stopwatch(derive, n)
    return {"derive": seconds}


def mechanics_chain(n):
    """The same chain through sympy.physics.mechanics' joints API; returns the equations of motion."""
    import sympy as sp
    import sympy.physics.mechanics as me

    from netdyn.linkages.spatial import chain_parameters

    p = chain_parameters(n, seed=n)
    ground = me.RigidBody("ground")
    system = me.System.from_newtonian(ground)
    parent, parent_com = ground, (0, 0, 0)
    g = sp.Symbol("g")
    for k in range(n):
        frame = me.ReferenceFrame(f"F{k}")
        mass = sp.Symbol(f"m{k}")
        J = [sp.Symbol(f"J{k}_{ij}") for ij in ("xx", "yy", "zz", "xy", "yz", "zx")]
        c = [sp.Symbol(f"c{k}_{a}") for a in "xyz"]
        o = [sp.Symbol(f"o{k}_{a}") for a in "xyz"]
        mc = me.Point(f"L{k}_mc")
        body = me.RigidBody(f"L{k}", masscenter=mc, frame=frame, mass=mass, inertia=(me.inertia(frame, *J), mc))
        q, u = me.dynamicsymbols(f"q{k} u{k}")
        pf = parent.frame
        parent_point = sum((o[i] - parent_com[i]) * v for i, v in enumerate((pf.x, pf.y, pf.z)))
        child_point = -sum(c[i] * v for i, v in enumerate((frame.x, frame.y, frame.z)))
        axis = {"x": pf.x, "y": pf.y, "z": pf.z}[p["axes"][k]]
        system.add_joints(me.PinJoint(f"J{k}", parent, body, q, u, parent_point=parent_point,
                                      child_point=child_point, joint_axis=axis, child_interframe=None))
        parent, parent_com = body, c
    system.apply_uniform_gravity(-g * ground.frame.z)
    system.validate_system()
    return system.form_eoms()


@needs("sympy.physics.mechanics", "netdyn")
def mechanics_joints_derive(n):
    """CPU seconds for sympy.physics.mechanics (joints API, Kane) to derive the n-link spatial chain."""
    mechanics_chain(1)
    seconds, _ = stopwatch(mechanics_chain, n)
    return {"derive": seconds}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--cap", type=float, default=None)
    args = ap.parse_args(argv)
    sizes = QUICK if args.quick else FULL
    cap = args.cap or (30.0 if args.quick else 300.0)
    rows, stop = {}, {"netdyn": False, "peer": False}
    for n in sizes:
        row = {}
        for key, target in (("netdyn", "benchmarks.spatial:netdyn_spatial_derive"),
                            ("peer", "benchmarks.spatial:mechanics_joints_derive")):
            if stop[key]:
                row[key] = None
                continue
            res = run_case(target, {"n": n}, cap=cap)
            row[key] = res.get("derive") if res.get("status") == "ok" else None
            stop[key] = row[key] is None
            print(f"  n={n} {key}: {res.get('status')} {row[key]}", file=sys.stderr, flush=True)
        rows[n] = row
    fmt = lambda v: f"{v:.3g}" if v is not None else f"> {cap:g}"
    lines = [f"| n | netdyn derive [s] | sympy.physics.mechanics joints (Kane) [s] | ratio |", "|---|---|---|---|"]
    for n, r in rows.items():
        ratio = f"{r['netdyn'] / r['peer']:.3g}" if r["netdyn"] and r["peer"] else "—"
        lines.append(f"| {n} | {fmt(r['netdyn'])} | {fmt(r['peer'])} | {ratio} |")
    for key, label in (("netdyn", "netdyn"), ("peer", "sympy.physics.mechanics")):
        pts = [(n, r[key]) for n, r in rows.items() if r[key]]
        k = growth_exponent([a for a, _ in pts], [b for _, b in pts]) if len(pts) > 1 else None
        lines.append(f"\ngrowth exponent, {label}: {k:.2f}" if k is not None else f"\ngrowth exponent, {label}: —")
    text = "\n".join(lines)
    print(text)
    out = Path(__file__).resolve().parent / ("results-spatial-quick.md" if args.quick else "results-spatial.md")
    out.write_text("# Spatial chain: derivation cost\n\n" + text + "\n")
    return text


if __name__ == "__main__":
    main()
