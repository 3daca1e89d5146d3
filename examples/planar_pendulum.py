"""n-link pendulum from bodies and revolute joints (relative joint angles), released from horizontal.

    python examples/planar_pendulum.py [output-folder] [n]
"""
import sys
from pathlib import Path

import numpy as np

import netdyn
from netdyn.linkages import pendulum

out = Path(sys.argv[1] if len(sys.argv) > 1 else "examples/output")
n = int(sys.argv[2]) if len(sys.argv) > 2 else 4
out.mkdir(parents=True, exist_ok=True)
model = pendulum([1.0] * n, [0.5] * n).model()
print(model, "| degrees of freedom:", netdyn.mobility(model).dof)
sol = netdyn.simulate(model, (0, 4), t_eval=np.linspace(0, 4, 201))
E = sol.energy()
kinetic = E - sol.evaluate(sol._internal(model.V))
print("energy drift / peak kinetic energy:", float(np.max(np.abs(E - E[0])) / np.max(kinetic)),
      "| residual:", sol.constraint_residual())
print("frames:", netdyn.animate_mechanism(sol, out / f"pendulum_{n}.gif", frames=80))
