"""Five-bar parallel linkage: inverse dynamics of a prescribed crank motion, efforts fed back to
forward dynamics, the end point recovered.

    python examples/planar_five_bar.py [output-folder]
"""
import sys
from pathlib import Path

import numpy as np
import sympy as sp
from scipy.interpolate import CubicSpline

import netdyn
from netdyn import t
from netdyn.components.planar import Actuator
from netdyn.linkages import five_bar

out = Path(sys.argv[1] if len(sys.argv) > 1 else "examples/output")
out.mkdir(parents=True, exist_ok=True)
net, guess = five_bar()
drivers = {"J1": 1.9 + 0.3 * sp.sin(2 * t), "J2": 1.2 - 0.2 * sp.sin(3 * t)}
tt = np.linspace(0, 2, 401)
inv = netdyn.inverse_dynamics(net.model(), drivers, tt, guess=guess)
print("peak actuator torques:", {j: float(np.max(np.abs(e))) for j, e in inv.efforts.items()})
print("peak end-point pin force:", float(np.max(np.hypot(*inv.reaction("P")[:2]))))
for j in drivers:
    net.add(Actuator(f"act_{j}", j, sp.Function(f"u_{j}")(t)))
names = inv.model.coordinate_names
sol = netdyn.simulate(net, (0, 2), q0=dict(zip(names, inv.q[:, 0])), f0=dict(zip(names, inv.f[:, 0])),
                      params={f"u_{j}": CubicSpline(tt, inv.efforts[j]) for j in drivers}, t_eval=tt)
print("forward vs prescribed crank angle:", float(np.max(np.abs(sol["theta_c1"] - inv["theta_c1"]))))
print("frames:", netdyn.animate_mechanism(sol, out / "five_bar.gif", frames=60))
