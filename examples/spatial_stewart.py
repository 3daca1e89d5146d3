"""A Stewart–Gough platform moved through a prescribed trajectory (heave, sway and a twist): the leg
slides come from the closed-form inverse kinematics, and inverse dynamics gives the six leg forces.
13 bodies, 91 coordinates: deriving and compiling takes a few minutes on a small machine.

    python examples/spatial_stewart.py [output-folder]
"""
import sys
from pathlib import Path

import matplotlib
import numpy as np
import sympy as sp

import netdyn
from netdyn import t
from netdyn.linkages.spatial import stewart_leg_motions, stewart_platform

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

out = Path(sys.argv[1] if len(sys.argv) > 1 else "examples/output")
out.mkdir(parents=True, exist_ok=True)
model = stewart_platform().model()
motion = {"z": 0.1 * sp.sin(2 * sp.pi * t), "x": 0.05 * sp.sin(sp.pi * t), "rz": 0.15 * sp.sin(2 * sp.pi * t)}
te = np.linspace(0, 1, 26)
inv = netdyn.inverse_dynamics(model, stewart_leg_motions(motion), te)
fig, ax = plt.subplots(figsize=(7, 4))
for k in range(6):
    ax.plot(te, inv.efforts[f"P{k}"], label=f"leg {k}")
ax.set(xlabel="t [s]", ylabel="leg force [N]", title="Stewart–Gough platform: actuator forces")
ax.legend(ncol=3)
fig.savefig(out / "stewart_forces.png", dpi=110, bbox_inches="tight")
netdyn.plot_spatial(model, inv.q[:, 5], path=out / "stewart.png")
print("leg forces at t = 0 [N]:", np.round([inv.efforts[f"P{k}"][0] for k in range(6)], 3))
