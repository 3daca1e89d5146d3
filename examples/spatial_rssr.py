"""A spatial four-bar (RSSR): the crank turns about z, the rocker about x; kinematics over a full crank turn,
the inverse dynamics torque, and an animation.

    python examples/spatial_rssr.py [output-folder]
"""
import sys
from pathlib import Path

import matplotlib
import numpy as np

import netdyn
from netdyn import t
from netdyn.linkages.spatial import rssr, rssr_guess

matplotlib.use("Agg")
out = Path(sys.argv[1] if len(sys.argv) > 1 else "examples/output")
out.mkdir(parents=True, exist_ok=True)
model = rssr().model()
mob = netdyn.mobility(model, q0={"e0_crank": 1.0, "e3_crank": 0.0}, guess=rssr_guess())
print(f"Grübler {mob.gruebler}, degrees of freedom {mob.dof}, redundant {mob.redundant}")
te = np.linspace(0, 1, 61)
inv = netdyn.inverse_dynamics(model, {"R1": 2 * np.pi * t}, te, guess=rssr_guess())   # one turn per second
print("crank torque over the turn [N m]: min %.3f, max %.3f" % (inv.efforts["R1"].min(), inv.efforts["R1"].max()))
netdyn.plot_spatial(model, inv.q[:, 0], path=out / "rssr.png")
print("animation:", netdyn.animate_spatial(inv, out / "rssr.gif", frames=30))
