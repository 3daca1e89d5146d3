"""Inverse dynamics and joint reactions of planar mechanisms.

Given the motion of the actuated joints (drivers), the kinematics fix q, q̇, q̈;
the Lagrange equations ``M q̈ + h + Φ_qᵀ λ = 0`` then give every multiplier by
least squares, the driver multipliers are the actuator efforts (``effort = −λ``
on the driven joint coordinate) and the joint multipliers the reactions.

A joint's reaction is the force that ``body_a`` exerts on ``body_b`` and its
moment about ``point_b``, global frame, from the joint's constraint equations
``φ(pose_a, pose_b)``: the constraint wrench on body b is ``−(∂φ/∂pose_b)ᵀ λ``.

>>> import numpy as np, sympy as sp
>>> from netdyn import Network, t
>>> from netdyn.components.planar import RigidBody, Revolute, Gravity
>>> net = Network()
>>> _ = net.add(RigidBody("bar", 2.0, 1/6), Gravity(g=10), Revolute("O", "ground", (0, 0), "bar", (-0.5, 0)))
>>> res = inverse_dynamics(net.model(), {"O": 0}, [0.0])   # held horizontal: torque m g l/2
>>> float(np.round(res.efforts["O"][0], 9)), np.round(res.reaction("O")[:, 0], 9).tolist()
(10.0, [0.0, 20.0, 0.0])
"""
from __future__ import annotations

import numpy as np
import sympy as sp

from netdyn.components.planar import GROUND_POSE, point
from netdyn.errors import ModelError, SingularSystemError


def _cross(r, F):
    return r[0] * F[1] - r[1] * F[0]


def reaction_expressions(model, joint):
    """``[Fx, Fy, M]`` of a joint's reaction as expressions of the coordinates and multipliers."""
    planar = model.metadata.get("planar")
    if not planar or joint not in planar["joints"]:
        raise ModelError(f"no planar joint named {joint!r}; the joints are {sorted((planar or {}).get('joints', {}))}")
    j = planar["joints"][joint]
    labels = j.constraint_labels()
    missing = [lab for lab in labels if lab not in model.constraint_labels]
    if missing and len(missing) == len(labels) and planar["formulation"] == "relative":
        raise ModelError(f"{joint} is a tree joint of the relative formulation: it has no multipliers; "
                         "use reaction(solution, joint), which solves for them in absolute coordinates")
    if missing:
        raise SingularSystemError(f"the reaction of {joint} is statically indeterminate: its constraint(s) "
                                  f"{missing} are redundant and were left out of the solve")
    lam = [model.lambdas[model.constraint_labels.index(lab)] for lab in labels]
    pa_s, pb_s = sp.symbols("xa ya tha"), sp.symbols("xb yb thb")
    values = {k: v for k, v in j.values.items()}
    phi = j.constraint_equations(pa_s, pb_s, values)
    poses = {b: (GROUND_POSE if b == "0" else planar["poses"][b]) for b in j.bodies}
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


def inverse_dynamics(system, drivers, t, guess=None, params=None, method="auto"):
    """Actuator efforts and joint reactions for the prescribed driver motions at times ``t``.

    ``method="least-squares"`` returns a :class:`~netdyn.solution.Solution` (``method="inverse"``) with
    the motion, the multipliers, ``efforts`` (driver name -> effort on its joint coordinate) and
    ``reaction(joint)``. ``method="recursive"`` uses the O(n) DeNOC path of :mod:`netdyn.recursive`
    (a :class:`~netdyn.recursive.inverse.RecursiveInverse` with the same ``efforts``, ``reaction``, ``t``
    and ``sol[name]``; anything else is answered by the least-squares solution of the same motion).
    ``"auto"`` (default) takes the recursive path when the network holds only planar bodies, Revolute,
    Prismatic and Weld joints and Gravity, with numeric values and drivers on spanning-tree joints;
    otherwise the least-squares path.
    """
    if method not in ("auto", "recursive", "least-squares"):
        raise ModelError(f"unknown method {method!r}; use 'auto', 'recursive' or 'least-squares'")
    if method != "least-squares":
        from netdyn.recursive.inverse import recursive_inverse_dynamics
        from netdyn.recursive.planar import NotRecursive
        try:
            return recursive_inverse_dynamics(system, drivers, t, guess=guess, params=params,
                                              reference=lambda res: _least_squares_of(system, drivers, res, params))
        except NotRecursive:
            if method == "recursive":
                raise
    from netdyn.kinematics import kinematics

    motion = kinematics(system, drivers, t, guess=guess, params=params)
    sol = multipliers_from_motion(motion.model, motion.t, motion.q, motion.f, motion.acc, params=params)
    sol.method = "inverse"
    labels = sol.model.constraint_labels
    sol.efforts = {name: -sol.lam[labels.index(f"driver {name}")] for name in dict(drivers)}
    return sol


def _least_squares_of(system, drivers, res, params):
    """The least-squares inverse-dynamics Solution of the motion of a recursive result."""
    from netdyn.kinematics import with_drivers
    from netdyn.simulate import as_model

    model = with_drivers(as_model(system), drivers)
    q, f, acc = res.model_motion(model.coordinate_names)
    sol = multipliers_from_motion(model, res.t, q, f, acc, params=params)
    sol.method = "inverse"
    labels = sol.model.constraint_labels
    sol.efforts = {name: -sol.lam[labels.index(f"driver {name}")] for name in dict(drivers)}
    return sol


def multipliers_from_motion(model, t, q, f, acc, params=None):
    """The motion ``(t, q, f, acc)`` of a model as a :class:`~netdyn.solution.Solution` whose
    multipliers solve ``Φ_qᵀ λ + Aᵀ μ = −(M q̈ + h)`` by least squares (redundant constraints left out)."""
    from netdyn.numeric import compile_model
    from netdyn.solution import Solution
    from netdyn.structure import redundant_constraints, without_constraints

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
        C = np.vstack([c["Phi_q"], c["A"]])
        z[:, k] = np.linalg.lstsq(C.T, -(M @ acc[:, k] + h), rcond=None)[0]
    res = {"t": t, "q": q, "f": f, "acc": acc, "lam": z[:cm.m1], "mu": z[cm.m1:]}
    return Solution(model, cm, p, res, method="multipliers")


def absolute_motion(solution):
    """A relative-formulation solution re-expressed in absolute body coordinates, with its multipliers."""
    from netdyn.assemble import identifier
    from netdyn.numeric import compile_model
    from netdyn.symbols import t as T

    model = solution.model
    planar = model.metadata["planar"]
    net = model.metadata["network"]
    absolute = net.model(formulation={"planar": "absolute", **model.metadata["formulation"]})
    poses = {f"{n}_{identifier(b)}": sp.sympify(e) for b in planar["bodies"]
             for n, e in zip(("x", "y", "theta"), planar["poses"][b])}
    rows = []
    for name in absolute.coordinate_names:
        e = poses[name] if name in poses else model.coordinate(name)
        rows.append([solution.evaluate(solution._internal(e.diff(T, order) if order else e)) for order in (0, 1, 2)])
    q, f, acc = (np.array([r[k] for r in rows]) for k in range(3))
    known = {str(s) for s in compile_model(absolute).parameters + compile_model(absolute).inputs}
    params = {k: v for k, v in _params(solution).items() if k in known}
    return multipliers_from_motion(absolute, solution.t, q, f, acc, params=params)


def _params(solution):
    cm = solution.compiled
    out = {str(s): v for s, v in zip(cm.parameters, solution.p.vector)}
    out.update({str(s): fn for s, fn in zip(cm.inputs, solution.p.input_functions)})
    return out


def reaction(solution, joint):
    """Reaction of a planar joint along a solution (see :meth:`netdyn.solution.Solution.reaction`);
    a tree joint of the relative formulation is solved in absolute coordinates."""
    model = solution.model
    planar = model.metadata.get("planar") or {}
    if planar.get("formulation") == "relative" and joint in planar.get("tree", []):
        companion = solution._cache.get("absolute")
        if companion is None:
            companion = solution._cache["absolute"] = absolute_motion(solution)
        return companion.reaction(joint)
    return np.vstack([solution.evaluate(solution._internal(e)) for e in reaction_expressions(model, joint)])
