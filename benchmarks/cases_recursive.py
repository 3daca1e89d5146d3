"""netdyn's recursive (O(n), compiled) path on the benchmark problems (run by :mod:`benchmarks.worker`).

* :func:`recursive_chain` -- the n-link pendulum of :mod:`benchmarks.problems` as a
  ``netdyn.recursive.TreeModel``: one joint-space right-hand side ``[q̇, aba(q, q̇, 0)]`` per call
  (the function handed to the ODE solver, ``netdyn.recursive.integrate.tree_rhs``: the planar kernel
  for this planar chain), its agreement
  with Pinocchio at the same random state, then 10 s of motion by ``netdyn.recursive.integrate``
  (scipy DOP853, same tolerances as the Pinocchio peer), energy drift by netdyn's own energy.
* :func:`rrr_inverse` -- DeNOC inverse dynamics of issue 14's 3-RRR over 201 time points of its
  circular trajectory (loop-closure kinematics included), median of repeats.
"""
from __future__ import annotations

import numpy as np

from benchmarks.harness import needs, per_call, report, stopwatch
from benchmarks.problems import PENDULUM, chain_initial_state, pendulum_parameters, random_chain_state


@needs("netdyn.recursive", "pinocchio", "scipy.integrate")
def recursive_chain(n, simulate=True):
    """RHS seconds per call and agreement with Pinocchio; then 10 s of motion with DOP853."""
    from netdyn.recursive import TreeData, TreeModel, energy
    from netdyn.recursive.integrate import integrate, tree_rhs
    from tests.references.pendulum import pinocchio_forward, pinocchio_pendulum

    masses, lengths, g = pendulum_parameters(n)
    model = TreeModel.chain(masses, lengths, g)
    data = TreeData(model)
    rhs = tree_rhs(model, data)
    q, v = random_chain_state(n)
    y = np.concatenate([q, v])
    ref = pinocchio_forward(pinocchio_pendulum(n, masses, lengths, g), q, v)
    acc = rhs(0.0, y)[n:]
    report(rhs=per_call(rhs, 0.0, y), rhs_agree=float(np.max(np.abs(acc - ref)) / np.max(np.abs(ref))))
    if not simulate:
        return {}
    q0, v0 = chain_initial_state(n)
    opts = dict(rtol=PENDULUM["rtol"], atol=PENDULUM["atol"])
    integrate(model, (0.0, PENDULUM["warmup_time"]), q0, v0, data=data, **opts)  # warm-up
    t_eval = np.linspace(0.0, PENDULUM["time"], PENDULUM["points"])
    seconds, out = stopwatch(integrate, model, (0.0, PENDULUM["time"]), q0, v0, t_eval=t_eval, data=data, **opts)
    E = [sum(energy(model, data, out["q"][:, k], out["qd"][:, k])) for k in range(t_eval.size)]
    return {"simulate": seconds, "nfev": out["nfev"], "energy_drift": float(np.max(np.abs(np.array(E) - E[0])))}


@needs("netdyn.linkages.parallel")
def rrr_inverse(points=201):
    """Seconds for the 3-RRR's inverse dynamics over ``points`` times (kinematics + DeNOC)."""
    from netdyn.linkages.parallel import circle, three_rrr

    mech, traj = three_rrr(), circle()
    t = np.linspace(0.0, 2.0, points)
    res = mech.inverse_dynamics(t, traj)  # warm-up (JIT caches, first calls)
    times = [stopwatch(mech.inverse_dynamics, t, traj)[0] for _ in range(7)]
    return {"inverse": float(np.median(times)), "max_effort": float(np.max(np.abs(res.efforts)))}
