"""Slider-crank (the book's Example 4.2) from bodies and joints: simulate, check, draw, animate.

    python examples/planar_slider_crank.py [output-folder]
"""
import sys
from pathlib import Path

import numpy as np

import netdyn
from netdyn.linkages import slider_crank

out = Path(sys.argv[1] if len(sys.argv) > 1 else "examples/output")
out.mkdir(parents=True, exist_ok=True)
model = slider_crank().model()
mob = netdyn.mobility(model, q0={"theta_crank": 0.3})
print(model, "| Grübler:", mob.gruebler, "| degrees of freedom:", mob.dof)
sol = netdyn.simulate(model, (0, 3), q0={"theta_crank": 0.3}, t_eval=np.linspace(0, 3, 151))
print("constraint residual:", sol.constraint_residual())
print("power balance (relative):", sol.power_balance()["relative"])
print("crank pin reaction at t=3:", sol.reaction("O")[:, -1])
netdyn.plot_mechanism(model, sol.q[:, 0], path=out / "slider_crank.png", title="slider-crank")
print("frames:", netdyn.animate_mechanism(sol, out / "slider_crank.gif", frames=60))
