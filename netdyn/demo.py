"""``netdyn demo``: a circuit, a mechanical network and a linkage, from graph to plots.

1. The book's Example 4.4 RLC network (branch charges + KCL flow constraints):
   prints the derived DAE, simulates it with a 50 Hz source, checks it in
   the loop and node formulations and the energy balance.
2. A mass–spring–damper, the force–voltage analogue of a series RLC.
3. The book's Example 4.2 slider-crank built from bodies and joints
   (absolute coordinates, loop closure found from the graph), driven by a torque.

Writes PNG plots into the folder it names (default ``netdyn-demo``).

>>> import tempfile
>>> report = run(tempfile.mkdtemp(), quiet=True)
>>> sorted(report["plots"])[0].endswith(".png")
True
"""
from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import sympy as sp

import netdyn
from netdyn.graph import topology
from netdyn.components.electrical import Capacitor, Inductor, Resistor, VoltageSource
from netdyn.components.translational import Damper, Force, Mass, Spring
from netdyn.linkages import slider_crank
from netdyn.viz.plotting import plot_mechanism


def example_4_4(v=None, values=None):
    """The book's Example 4.4 network: source v(t) on branch 1 (ground → A), L1 (A → B),
    C1 (ground → B), L2 (B → C), C2 (ground → C), R1 (ground → C)."""
    values = values or {"L1": 0.1, "L2": 0.2, "C1": 1e-4, "C2": 2e-4, "R1": 10.0}
    v = sp.sin(2 * sp.pi * 50 * netdyn.t) if v is None else v
    net = netdyn.Network("Example 4.4")
    net.add(VoltageSource("v", "A", "0", v), Inductor("L1", "A", "B", values["L1"]),
            Capacitor("C1", "0", "B", values["C1"]), Inductor("L2", "B", "C", values["L2"]),
            Capacitor("C2", "0", "C", values["C2"]), Resistor("R1", "0", "C", values["R1"]))
    return net


def mass_spring_damper(m=0.1, k=1e4, c=2.0, F=1.0):
    """Mass m on spring k and damper c to ground, pushed by a constant force F."""
    net = netdyn.Network("mass-spring-damper")
    net.add(Mass("m", "x", m), Spring("k", "x", "0", k), Damper("c", "x", "0", c), Force("F", "x", F))
    return net


def run(outdir="netdyn-demo", quiet=False):
    """Build, derive, simulate and plot the three systems; returns a small report dict."""
    say = (lambda *a: None) if quiet else print
    out = Path(outdir)
    out.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    report = {"plots": []}

    # 1. the RLC network of the book's Example 4.4
    net = example_4_4()
    symbolic = net.model(formulation="branch", symbolic=True)
    say("== Example 4.4: RLC network, branch charges and KCL flow constraints ==")
    say(f"{len(symbolic.coordinates)} charges, {len(symbolic.flow_constraints)} KCL constraints, "
        f"n = B - N + 1 = {topology.independent_loop_count(net.graph)} independent flows")
    for eq in symbolic.equations():
        say("   0 =", sp.sstr(eq))
    te = np.linspace(0, 0.1, 1001)
    sols = {form: netdyn.simulate(net.model(formulation=form), (0, 0.1), t_eval=te)
            for form in ("branch", "loop", "node")}
    ref = sols["branch"].current("R1")
    for form, s in sols.items():
        dev = np.max(np.abs(s.current("R1") - ref)) / np.max(np.abs(ref))
        say(f"   {form:6s}: {len(s.model.coordinates)} coordinates, integrator {s.method}, "
            f"i(R1) vs branch {dev:.1e}, energy balance {s.power_balance()['relative']:.1e}")
    path = out / "example_4_4.png"
    sols["loop"].plot("i(L1)", "i(L2)", "i(R1)", path=path, title="Example 4.4: branch currents")
    report["plots"].append(str(path))

    # 2. a mass-spring-damper
    say("\n== Mass-spring-damper (node positions) ==")
    msd = mass_spring_damper().model()
    for eq in msd.equations():
        say("   0 =", sp.sstr(eq))
    s = netdyn.simulate(msd, (0, 0.5), t_eval=np.linspace(0, 0.5, 1001))
    say(f"   final position {s['x_x'][-1]:.6g} m (static F/k = {1.0 / 1e4:.6g} m), "
        f"energy balance {s.power_balance()['relative']:.1e}")
    path = out / "mass_spring_damper.png"
    s.plot("x_x", path=path, title="mass-spring-damper")
    report["plots"].append(str(path))

    # 3. the slider-crank of the book's Example 4.2, from bodies and joints
    say("\n== Slider-crank (Example 4.2) from bodies and joints ==")
    model = slider_crank().model()
    mob = netdyn.mobility(model, q0={"theta_crank": 0.3})
    say(f"   {len(model.coordinates)} absolute coordinates, {len(model.constraints)} joint constraints, "
        f"Grübler {mob.gruebler}, degrees of freedom {mob.dof}")
    for eq in model.equations()[:3]:
        say("   0 =", sp.sstr(eq))
    say("   ...")
    s = netdyn.simulate(model, (0, 3), q0={"theta_crank": 0.3}, t_eval=np.linspace(0, 3, 601))
    res = s.constraint_residual()
    say(f"   constraint residual {res['position']:.1e} (position), {res['velocity']:.1e} (velocity); "
        f"energy balance {s.power_balance()['relative']:.1e}")
    path = out / "slider_crank_angles.png"
    s.plot("theta_crank", "theta_rod", "x_block", path=path, title="slider-crank: crank and rod angles, block position")
    report["plots"].append(str(path))
    path = out / "slider_crank.png"
    plot_mechanism(model, s.q[:, -1], path=path, title="slider-crank at t = 3 s")
    report["plots"].append(str(path))

    report["seconds"] = time.perf_counter() - start
    say(f"\nplots written to {out.resolve()}: {', '.join(Path(p).name for p in report['plots'])} "
        f"({report['seconds']:.1f} s)")
    return report
