"""Four-bar (the book's Example 4.3) under gravity, in both formulations: the same motion.

    python examples/planar_four_bar.py [output-folder]
"""
import sys
from pathlib import Path

import numpy as np

import netdyn
from netdyn.linkages import FOUR_BAR_GUESS, four_bar

out = Path(sys.argv[1] if len(sys.argv) > 1 else "examples/output")
out.mkdir(parents=True, exist_ok=True)
net = four_bar(tau=False, gravity=True)
te = np.linspace(0, 10, 501)
absolute = netdyn.simulate(net.model(), (0, 10), q0={"theta_crank": 0.4}, guess=FOUR_BAR_GUESS, t_eval=te)
relative = netdyn.simulate(net.model(formulation="relative"), (0, 10), q0={"theta_O": 0.4},
                           guess={"theta_A": 0.5, "theta_D": 1.9}, t_eval=te)
print("max |crank angle difference|:", np.max(np.abs(absolute["theta_crank"] - relative["theta_O"])))
E = absolute.energy()
print("energy drift:", np.max(np.abs(E - E[0])) / abs(E[0]), "| residual:", absolute.constraint_residual())
print("frames:", netdyn.animate_mechanism(absolute, out / "four_bar.gif", frames=80))
