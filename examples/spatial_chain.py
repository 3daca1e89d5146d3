"""A 6-link chain of revolute joints about mixed axes (x, y, z, x, y, z): netdyn's accelerations against
Pinocchio's articulated-body algorithm, then a short swing drawn in 3-D.

    python examples/spatial_chain.py [output-folder]
"""
import sys
from pathlib import Path

import matplotlib
import numpy as np

import netdyn
from netdyn.linkages.spatial import chain_parameters, spatial_chain
from netdyn.numerics.functions.compiled import compile_model

matplotlib.use("Agg")
out = Path(sys.argv[1] if len(sys.argv) > 1 else "examples/output")
out.mkdir(parents=True, exist_ok=True)
n = 6
params = chain_parameters(n, seed=1)
model = spatial_chain(n, params).model(formulation="relative")   # joint angles thetaz_J0 .. thetaz_J5
try:
    import pinocchio as pin
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
    from references.spatial_chain import pinocchio_chain

    pm = pinocchio_chain(params)
    cm = compile_model(model)
    q, v = np.linspace(-1, 1, n), np.linspace(0.5, -0.5, n)
    ref = pin.aba(pm, pm.createData(), q, v, np.zeros(n))
    got = cm.accelerations(0.0, q, v, cm.parameter_vector())[0]
    print("max relative difference to Pinocchio aba:", np.max(np.abs(got - ref)) / np.max(np.abs(ref)))
except ImportError:
    print("pinocchio not installed: skipping the comparison")
sol = netdyn.simulate(model, (0, 1), q0=dict(zip(model.coordinate_names, np.full(n, 0.3))), t_eval=np.linspace(0, 1, 41))
netdyn.plot_spatial(model, sol.q[:, -1], path=out / "chain.png")
print("saved", out / "chain.png")
