"""The heavy symmetric top of the issue (m = 15 kg, J = diag(0.234375, 0.46875, 0.234375) kg m², centre of
mass 1 m along the body y axis, spun at 150 rad/s): precession and nutation, with energy and the vertical
angular momentum conserved.

    python examples/spatial_heavy_top.py [output-folder]
"""
import sys
from pathlib import Path

import matplotlib
import numpy as np

import netdyn
from netdyn.components.spatial import quat_matrix
from netdyn.linkages.spatial import HEAVY_TOP, heavy_top

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

out = Path(sys.argv[1] if len(sys.argv) > 1 else "examples/output")
out.mkdir(parents=True, exist_ok=True)
model = heavy_top().model()
w = np.array(HEAVY_TOP["omega"])
G = np.array([[0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]], dtype=float)  # G(e) at e = (1, 0, 0, 0)
edot = 0.5 * G.T @ w
q0 = {"e0_top": 1.0, "e1_top": 0.0, "e2_top": 0.0, "e3_top": 0.0, "x_top": 0.0, "y_top": 0.0, "z_top": 0.0}
f0 = {"x_top": 0.0, "y_top": 0.0, "z_top": 0.0, **{f"e{k}_top": edot[k] for k in range(4)}}
te = np.linspace(0, 1, 401)
sol = netdyn.simulate(model, (0, 1), q0=q0, f0=f0, t_eval=te, rtol=1e-9)
axis = np.array([np.array(quat_matrix(sol.q[3:7, k]).tolist(), dtype=float)[:, 1] for k in range(te.size)])
E = sol.energy()
print("energy drift:", np.max(np.abs(E - E[0])) / abs(E[0]))
fig, ax = plt.subplots(1, 2, figsize=(10, 4))
ax[0].plot(axis[:, 0], axis[:, 1])
ax[0].set(xlabel="symmetry axis x [-]", ylabel="symmetry axis y [-]", title="precession (axis seen from above)")
ax[0].set_aspect("equal")
ax[1].plot(te, np.degrees(np.arcsin(axis[:, 2])))
ax[1].set(xlabel="t [s]", ylabel="elevation of the axis [deg]", title="nutation")
fig.tight_layout()
fig.savefig(out / "heavy_top.png", dpi=110)
print("saved", out / "heavy_top.png")
