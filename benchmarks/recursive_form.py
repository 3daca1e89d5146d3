"""Equations in recursive form: size and time of ``net.model(formulation="relative").equations()`` for the
n-link planar pendulum chain, beside sympy.physics.mechanics' joints API (``PinJoint`` + ``System.form_eoms``,
Kane's method) on the same chain, symbolic in both, and the expanded M(q) form netdyn wrote before; and the same
for the n-link spatial chain (``netdyn.linkages.spatial.spatial_chain``: revolutes about x, y, z in turn).

    python -m benchmarks.recursive_form [--quick] [--cap SECONDS] [--sizes 5,10,...]

Each case runs in its own process under the CPU cap (:func:`benchmarks.harness.run_case`); a series stops at
its first size over the cap. Columns: CPU seconds of building the model and writing its recursive equations,
their operation count (``sympy.count_ops`` of the named intermediates and the equations), the C export's time
and source size (its mass matrix and h by calls of the two Newton–Euler functions: linear in n), the expanded
form's time, the peer's time, and the ratio peer / netdyn at every size the peer finished.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.harness import growth_exponent, needs, run_case, stopwatch  # noqa: E402

FULL, QUICK = [5, 8, 12, 25, 50, 100, 200], [5, 8, 12, 25]
PEER_MAX = 12  # the peer grows like n^4 (70 s at n = 12 here); larger sizes only burn the cap


def _chain(n):
    import numpy as np

    from netdyn.linkages.planar import pendulum
    return pendulum(np.ones(n), np.ones(n))


@needs("sympy", "netdyn")
def netdyn_recursive(n):
    """CPU seconds to build the relative model and write its recursive equations; their size; the C export."""
    from netdyn.export import export

    def equations(k):
        return _chain(k).model(formulation="relative", symbolic=True).equations()

    equations(2)
    seconds, eqs = stopwatch(equations, n)
    c_seconds, code = stopwatch(lambda: export(_chain(n).model(formulation="relative", symbolic=True), "c"))
    return {"derive": seconds, "operations": eqs.operations, "definitions": len(eqs.definitions),
            "c_export": c_seconds, "c_bytes": len(code.source)}


def _spatial_chain(n):
    from netdyn.linkages.spatial import spatial_chain
    return spatial_chain(n)


@needs("sympy", "netdyn")
def netdyn_spatial(n):
    """The same for the n-link spatial chain (revolutes about x, y, z in turn, full inertias; numbers)."""
    from netdyn.export import export

    def equations(k):
        return _spatial_chain(k).model(formulation="relative").equations()

    equations(2)
    seconds, eqs = stopwatch(equations, n)
    c_seconds, code = stopwatch(lambda: export(_spatial_chain(n).model(formulation="relative"), "c"))
    return {"derive": seconds, "operations": eqs.operations, "definitions": len(eqs.definitions),
            "c_export": c_seconds, "c_bytes": len(code.source)}


@needs("sympy", "netdyn")
def netdyn_expanded(n):
    """CPU seconds of the expanded M(q) form (``equations(form="expanded")``), the former default."""
    def equations(k):
        return _chain(k).model(formulation="relative", symbolic=True).equations(form="expanded")

    equations(2)
    seconds, _ = stopwatch(equations, n)
    return {"derive": seconds}


def mechanics_chain(n):
    """The same chain through sympy.physics.mechanics' joints API: PinJoints about z, gravity along −y."""
    import sympy as sp
    import sympy.physics.mechanics as me

    ground = me.RigidBody("ground")
    system = me.System.from_newtonian(ground)
    parent, g = ground, sp.Symbol("g")
    for k in range(n):
        frame = me.ReferenceFrame(f"F{k}")
        m, inertia, length = sp.symbols(f"m{k} I{k} l{k}")
        mc = me.Point(f"L{k}_mc")
        body = me.RigidBody(f"L{k}", masscenter=mc, frame=frame, mass=m,
                            inertia=(me.inertia(frame, 0, 0, inertia), mc))
        q, u = me.dynamicsymbols(f"q{k} u{k}")
        at = parent.masscenter if k == 0 else sp.Symbol(f"l{k - 1}") / 2 * parent.frame.x
        system.add_joints(me.PinJoint(f"J{k}", parent, body, q, u, parent_point=at, child_point=-length / 2 * frame.x,
                                      joint_axis=parent.frame.z))
        parent = body
    system.apply_uniform_gravity(-g * ground.frame.y)
    system.validate_system()
    return system.form_eoms()


@needs("sympy.physics.mechanics")
def mechanics_joints(n):
    """CPU seconds for sympy.physics.mechanics (joints API, Kane) to form the chain's equations (after a
    one-link warm-up, as netdyn's cases)."""
    return {"derive": stopwatch(mechanics_chain, n)[0] if mechanics_chain(1) is not None else None}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default=None, help="comma-separated chain lengths")
    ap.add_argument("--cap", type=float, default=None, help="CPU seconds a case may take")
    ap.add_argument("--quick", action="store_true", help="n = 5 … 25")
    args = ap.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")] if args.sizes else (QUICK if args.quick else FULL)
    cap = args.cap or (60.0 if args.quick else 300.0)
    series = (("recursive", "benchmarks.recursive_form:netdyn_recursive"),
              ("spatial", "benchmarks.recursive_form:netdyn_spatial"),
              ("expanded", "benchmarks.recursive_form:netdyn_expanded"),
              ("peer", "benchmarks.recursive_form:mechanics_joints"))
    rows, stop = {}, {key: False for key, _ in series}
    for n in sizes:
        row = {}
        for key, target in series:
            if stop[key] or (key not in ("recursive", "spatial") and n > PEER_MAX):
                row[key] = None
                continue
            res = run_case(target, {"n": n}, cap=cap)
            row[key] = res if res.get("status") == "ok" else None
            stop[key] = row[key] is None
            print(f"  n={n} {key}: {res.get('status')} {res.get('derive')}", file=sys.stderr, flush=True)
        rows[n] = row
    sec = lambda r: f"{r['derive']:.3g}" if r else "—"  # noqa: E731
    lines = ["| n | recursive equations [s] | operations | named intermediates | C export [s] | C source [kB] | "
             "expanded M(q) form [s] | sympy.physics.mechanics joints (Kane) [s] | peer / recursive | "
             "spatial chain: recursive equations [s] | operations | C source [kB] |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for n, r in rows.items():
        rec, sp3 = r["recursive"], r["spatial"]
        ratio = f"{r['peer']['derive'] / rec['derive']:.0f}×" if rec and r["peer"] else "—"
        spatial = (f"{sec(sp3)} | {sp3['operations']} | {sp3['c_bytes'] / 1e3:.1f}" if sp3 else "over the cap | | ")
        lines.append(f"| {n} | {sec(rec)} | {rec['operations'] if rec else '—'} | {rec['definitions'] if rec else '—'} | "
                     f"{rec['c_export']:.3g} | {rec['c_bytes'] / 1e3:.1f} | {sec(r['expanded'])} | {sec(r['peer'])} | "
                     f"{ratio} | {spatial} |" if rec else f"| {n} | over the cap | | | | | | | | {spatial} |")
    for key, label, field in (("recursive", "recursive equations, time", "derive"),
                              ("recursive", "recursive equations, operations", "operations"),
                              ("recursive", "C source size", "c_bytes"),
                              ("spatial", "spatial chain, recursive equations, time", "derive"),
                              ("spatial", "spatial chain, recursive equations, operations", "operations"),
                              ("spatial", "spatial chain, C source size", "c_bytes"),
                              ("expanded", "expanded form, time", "derive"),
                              ("peer", "sympy.physics.mechanics, time", "derive")):
        pts = [(n, r[key][field]) for n, r in rows.items() if r[key]]
        k = growth_exponent([a for a, _ in pts], [b for _, b in pts]) if len(pts) > 1 else None
        lines.append(f"\ngrowth exponent, {label}: {k:.2f}" if k is not None else f"\ngrowth exponent, {label}: —")
    text = "\n".join(lines)
    print(text)
    out = Path(__file__).resolve().parent / ("results-recursive-form-quick.md" if args.quick
                                             else "results-recursive-form.md")
    out.write_text("# Relative-coordinate equations in recursive form: size and time\n\n" + text + "\n")
    return text


if __name__ == "__main__":
    main()
