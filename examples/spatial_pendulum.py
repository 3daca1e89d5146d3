"""Spherical pendulum (a ball on a rod from a ball joint): a conical orbit against its closed form.

A conical pendulum at angle α from the vertical turns at Ω² = g / (L cos α) (for a point mass; the ball's own
inertia shifts it slightly, so the ball here is small). netdyn's orbit stays at the cone to the integrator's
tolerance and its period matches.

    python examples/spatial_pendulum.py [output-folder]
"""
import sys
from pathlib import Path

import matplotlib
import numpy as np

import netdyn
from netdyn.linkages.spatial import spherical_pendulum

matplotlib.use("Agg")
out = Path(sys.argv[1] if len(sys.argv) > 1 else "examples/output")
out.mkdir(parents=True, exist_ok=True)
L, alpha, g = 1.0, 0.5, 9.81
model = spherical_pendulum(length=L, radius=1e-3, g=g).model()
W = np.sqrt(g / (L * np.cos(alpha)))
# the bob's frame origin is the ball; the joint point is L above it in the body frame (body frame = global here)
r0 = L * np.array([np.sin(alpha), 0.0, -np.cos(alpha)])
q0 = {"x_bob": r0[0], "y_bob": r0[1], "z_bob": r0[2]}
# the body turns with the orbit: e = rotation about the rod axis; here only the translation matters (tiny ball)
f0 = {"x_bob": 0.0, "y_bob": W * r0[0], "z_bob": 0.0}
period = 2 * np.pi / W
sol = netdyn.simulate(model, (0, period), q0=q0, f0=f0, t_eval=np.linspace(0, period, 201), rtol=1e-10)
cone = np.arccos(-sol["z_bob"] / L)
print("cone angle drift:", np.max(np.abs(cone - alpha)), "| back to start after one period:",
      np.hypot(sol["x_bob"][-1] - r0[0], sol["y_bob"][-1]))
netdyn.plot_spatial(model, sol.q[:, 50], path=out / "spherical_pendulum.png")
print("animation:", netdyn.animate_spatial(sol, out / "spherical_pendulum.gif", frames=40))
