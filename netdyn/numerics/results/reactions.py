"""Joint reactions from the multipliers: planar joints' forces and moments along a solution.

A joint's reaction is ``−Φ_qᵀ λ`` restricted to its own constraints, expressed as the force its
``body_a`` exerts on its ``body_b`` and the moment about ``point_b``. A tree joint of the relative
formulation has no multipliers: its reaction is solved from the same motion in absolute coordinates.

>>> import numpy as np, sympy as sp
>>> from netdyn import Network, simulate
>>> from netdyn.components.planar import RigidBody, Revolute, Gravity
>>> net = Network()
>>> _ = net.add(RigidBody("bar", 2.0, 1/6), Gravity(g=10), Revolute("O", "ground", (0, 0), "bar", (-0.5, 0)))
>>> sol = simulate(net, (0, 0.01), q0={"theta_bar": -np.pi / 2})
>>> Fx, Fy, M = reaction(sol, "O")[:, 0]       # hanging at rest: the pin carries the weight
>>> round(float(Fy), 6)
20.0
"""
from __future__ import annotations

import numpy as np
import sympy as sp

from netdyn.components.planar import GROUND_POSE, point
from netdyn.errors import ModelError
from netdyn.graph.mechanism import joint_multipliers
from netdyn.numerics.functions.compiled import compile_model
from netdyn.numerics.dae.structure import redundant_constraints, without_constraints
from netdyn.numerics.results.trajectory import Trajectory
from netdyn.symbols import identifier
from netdyn.symbols import t as T


def _cross(r, F):
    return r[0] * F[1] - r[1] * F[0]


def reaction_expressions(model, joint):
    """``[Fx, Fy, M]`` of a joint's reaction as expressions of the coordinates and multipliers."""
    if model.metadata.get("spatial"):
        from netdyn.graph.spatial import reaction_expressions as spatial_reaction
        return spatial_reaction(model, joint)
    planar = model.metadata.get("planar")
    if not planar or joint not in planar.joints:
        raise ModelError(f"no planar joint named {joint!r}; the joints are {sorted(planar.joints if planar else {})}")
    j = planar.joints[joint]
    labels = j.constraint_labels()
    lam = joint_multipliers(model, joint, labels, planar.formulation)
    pa_s, pb_s = sp.symbols("xa ya tha"), sp.symbols("xb yb thb")
    values = {k: v for k, v in j.values.items()}
    phi = j.constraint_equations(pa_s, pb_s, values)
    poses = {b: (GROUND_POSE if b == "0" else planar.poses[b]) for b in j.bodies}
    sub = dict(zip(pa_s + pb_s, poses[j.bodies[0]] + poses[j.bodies[1]]))
    on = 1 if j.bodies[1] != "0" else 0
    own = (pa_s, pb_s)[on]
    wrench = [-sp.Add(*[sp.diff(ph, s) * lm for ph, lm in zip(phi, lam)]) for s in own]
    wrench = [w.xreplace(sub) for w in wrench]
    centre = poses[j.bodies[on]][:2]
    Pb = point(poses[j.bodies[1]], j.point_b)
    F = wrench[:2]
    M = wrench[2] + _cross((centre[0] - Pb[0], centre[1] - Pb[1]), F)
    if on == 0:  # body_b is ground: action and reaction
        F, M = [-F[0], -F[1]], -M
    return [F[0], F[1], M]


def motion_multipliers(model, t, q, f, acc, params=None):
    """The multipliers of a given motion ``(t, q, f, acc)``: ``Φ_qᵀ λ + Aᵀ μ = −(M q̈ + h)`` by least
    squares, redundant constraints left out. Returns ``(model, compiled, p, trajectory)`` (the model
    without the redundant constraints)."""
    cm = compile_model(model)
    p = cm.parameter_vector(params)
    drop = redundant_constraints(cm, t[0], q[:, 0], p)
    if drop:
        model = without_constraints(model, drop)
        cm = compile_model(model)
        p = cm.parameter_vector(params)
    z = np.zeros((cm.m1 + cm.m2, t.size))
    for k, tt in enumerate(t):
        M, h = cm.dynamics(tt, q[:, k], f[:, k], p)
        c = cm.constraints(tt, q[:, k], f[:, k], p)
        z[:, k] = np.linalg.lstsq(c.reaction_jacobian.T, -(M @ acc[:, k] + h), rcond=None)[0]
    return model, cm, p, Trajectory(t, q, f, acc, z[:cm.m1], z[cm.m1:], nsteps=0)


def absolute_motion(solution):
    """A relative-formulation solution re-expressed in absolute body coordinates, with its multipliers."""
    model = solution.model
    net = model.metadata["network"]
    absolute = net.model(formulation={"planar": "absolute", **model.metadata["formulation"]})
    if model.metadata.get("spatial"):
        from netdyn.graph.spatial import absolute_expressions
        poses = absolute_expressions(model)
    else:
        planar = model.metadata["planar"]
        poses = {f"{n}_{identifier(b)}": sp.sympify(e) for b in planar.bodies
                 for n, e in zip(("x", "y", "theta"), planar.poses[b])}
    rows = []
    for name in absolute.coordinate_names:
        e = poses[name] if name in poses else model.coordinate(name)
        rows.append([solution.evaluate(solution._internal(e.diff(T, order) if order else e)) for order in (0, 1, 2)])
    q, f, acc = (np.array([r[k] for r in rows]) for k in range(3))
    known = {str(s) for s in compile_model(absolute).parameters + compile_model(absolute).inputs}
    params = {k: v for k, v in _params(solution).items() if k in known}
    return type(solution)(*motion_multipliers(absolute, solution.t, q, f, acc, params=params), method="multipliers")


def _params(solution):
    cm = solution.compiled
    out = {str(s): v for s, v in zip(cm.parameters, solution.p.vector)}
    out.update({str(s): fn for s, fn in zip(cm.inputs, solution.p.input_functions)})
    return out


def reaction(solution, joint):
    """Reaction of a planar joint along a solution (see :meth:`netdyn.solution.Solution.reaction`);
    a tree joint of the relative formulation is solved in absolute coordinates."""
    model = solution.model
    planar = model.metadata.get("planar") or model.metadata.get("spatial")
    if planar and planar.formulation == "relative" and joint in planar.tree:
        companion = solution._cache.get("absolute")
        if companion is None:
            companion = solution._cache["absolute"] = absolute_motion(solution)
        return companion.reaction(joint)
    return np.vstack([solution.evaluate(solution._internal(e)) for e in reaction_expressions(model, joint)])
