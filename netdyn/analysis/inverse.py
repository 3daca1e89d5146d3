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

from netdyn.analysis.drivers import DrivenSolution, driven_model, driver_motions
from netdyn.analysis.kinematics import kinematics
from netdyn.analysis.taskspace import task_space_inverse, tree_motion
from netdyn.lagrange.motion import Samples, sample_motions
from netdyn.numerics.dae.structure import redundant_constraints
from netdyn.numerics.results.trajectory import Trajectory
from netdyn.errors import ModelError
from netdyn.numerics.results.reactions import motion_multipliers
from netdyn.numerics.results.solution import Solution
from netdyn.recursive.inverse import RecursiveInverse, recursive_inverse_dynamics
from netdyn.recursive.spatial.inverse import spatial_inverse_dynamics
from netdyn.recursive.spatial.inverse import spatial_task_inverse
from netdyn.recursive.planar import NotRecursive
from netdyn.graph.network import as_model
from netdyn.graph.assembly import fill as stored_assembly

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # names for the hints only (annotations are not evaluated)
    from netdyn.graph.network import Network
    from netdyn.lagrange.model import LagrangianModel
    from netdyn.hints import ArrayLike, Initial, Params
    from collections.abc import Mapping, Sequence
    from typing import Any


def inverse_dynamics(system: Network | LagrangianModel, drivers: Mapping[str, Any], t: ArrayLike,
                     guess: Initial | None = None, params: Params | None = None,
                     method: str = "auto", actuated: Sequence[str] | None = None) -> Solution | RecursiveInverse:
    """Actuator efforts and joint reactions for the prescribed driver motions at times ``t``.

    ``method="least-squares"`` returns a :class:`~netdyn.numerics.results.solution.Solution`
    (``method="inverse"``) with the motion, the multipliers, ``efforts`` (driver name -> effort on its
    joint coordinate) and ``reaction(joint)``. ``method="recursive"`` uses the O(n) DeNOC path of
    :mod:`netdyn.recursive` (a :class:`~netdyn.recursive.inverse.RecursiveInverse` with the same
    ``efforts``, ``reaction``, ``t`` and ``sol[name]``; anything else is answered by the least-squares
    solution of the same motion). ``"auto"`` (default) takes the recursive path when the network holds
    only planar bodies, Revolute, Prismatic and Weld joints and Gravity, with numeric values and drivers
    on spanning-tree joints; otherwise the least-squares path. ``guess`` (where the position solve starts:
    which assembly) is by default the network's stored one (``net.assembly``).

    Motions are expressions of ``t``, text, callables ``t -> (q, q̇, q̈)`` or three arrays over ``t``
    (:mod:`netdyn.analysis.drivers`). A **task-space** motion names a planar body (a parallel manipulator's
    platform) with its trajectory — ``pose(t) -> (P, V, A)``, a callable or three arrays ``(3, times)`` of
    ``x, y, theta`` and their rates — and ``actuated`` lists the joints whose efforts are sought: numeric
    inverse kinematics on the loop-closure Newton (:mod:`netdyn.analysis.taskspace`) gives their motions,
    which then drive the joint-space inverse dynamics. In a spatial network the trajectory is the platform's
    position (``t -> (P, V, A)`` or three arrays ``(3, times)``: a Delta robot, :mod:`netdyn.recursive.spatial.inverse`).

    >>> import numpy as np
    >>> from netdyn import Network
    >>> from netdyn.components.planar import RigidBody, Revolute, Gravity
    >>> net = Network()
    >>> _ = net.add(RigidBody("bar", 2.0, 1/6), Gravity(g=10), Revolute("O", "ground", (0, 0), "bar", (-0.5, 0)))
    >>> res = inverse_dynamics(net, {"O": 0}, [0.0])   # held horizontal: torque m g l/2
    >>> round(float(res.efforts["O"][0]), 9)
    10.0
    """
    if method not in ("auto", "recursive", "least-squares"):
        raise ModelError(f"unknown method {method!r}; use 'auto', 'recursive' or 'least-squares'")
    guess = stored_assembly(system, guess=guess)[2]
    task = _task_space(system, dict(drivers), t, actuated, guess, params)
    if isinstance(task, RecursiveInverse):  # a spatial platform's position: solved on the tree already
        return task
    if task is not None:  # the whole tree's motion is known: DeNOC directly
        drivers = task.drivers(actuated)
        return task_space_inverse(task, list(actuated or ()), getattr(system, "derive", None) and system,
                                  lambda res: _least_squares_of(system, drivers, res, params))
    drivers = driver_motions(system, drivers, params)  # motions as text: the restricted parser, never eval
    if method != "least-squares":
        try:
            if _spatial(system):
                return spatial_inverse_dynamics(system, drivers, t, guess=guess, params=params,
                                                reference=lambda res: _least_squares_of(system, drivers, res, params))
            return recursive_inverse_dynamics(system, _sampled(drivers, t, params), t, guess=guess, params=params,
                                              reference=lambda res: _least_squares_of(system, drivers, res, params))
        except NotRecursive:
            if method == "recursive":
                raise
    motion = kinematics(system, drivers, t, guess=guess, params=params)
    return _inverse_solution(motion.driven, motion.driver_samples, motion.t, motion.q, motion.f, motion.acc,
                             params)


def _task_space(system, drivers, t, actuated, guess, params):
    """Joint-space drivers of the ``actuated`` joints for a driver that names a body (its trajectory)."""
    net = getattr(system, "bodies", None) is not None and system or getattr(system, "metadata", {}).get("network")
    bodies = [k for k in drivers if net is not None and k in getattr(net, "bodies", {})]
    if not bodies:
        if actuated is not None:
            raise ModelError("actuated= goes with a task-space motion: a driver naming a body (the platform)")
        return None
    if len(bodies) > 1 or len(drivers) > 1:
        raise ModelError(f"a task-space motion prescribes one body and nothing else; got the drivers {sorted(drivers)}")
    if not actuated:
        raise ModelError(f"the motion of body {bodies[0]!r} is a task-space trajectory: name the actuated joints "
                         "whose efforts are sought, actuated=[...]")
    try:
        if _spatial(net):  # a spatial platform (a Delta robot): its position prescribed, numeric IK on the tree
            return spatial_task_inverse(net, bodies[0], drivers[bodies[0]], t, list(actuated), guess=guess,
                                        params=params, reference=lambda res: _least_squares_of(
                                            system, _actuated_motions(res, actuated), res, params))
        return tree_motion(net, bodies[0], drivers[bodies[0]], t, list(actuated), guess=guess, params=params)
    except NotRecursive as e:
        raise ModelError(f"task-space motions are solved on the recursive tree of a planar network, or of a "
                         f"spatial one whose platform hangs on its legs: {e}") from None


def _actuated_motions(res, actuated):
    """``{joint: Samples}`` of the actuated joints along a spatial task-space result (their tree coordinates)."""
    comps = res.tree.components
    out = {}
    for j in actuated:
        k = next(k for (jn, c), k in comps.items() if jn == j)
        out[j] = Samples(res.joint_q[k], res.joint_qd[k], res.joint_qdd[k])
    return out


def _sampled(drivers, t, params):
    """The drivers as :class:`~netdyn.lagrange.motion.Samples` at ``t`` (every expression compiled in one go);
    as given when an expression holds a parameter that only the model knows."""
    try:
        values = sample_motions(drivers, t, params)
    except ModelError:
        return drivers
    return {name: Samples(*v) for name, v in values.items()}


def _spatial(system):
    from netdyn.graph.spatial import is_spatial
    from netdyn.recursive.inverse import _network
    try:
        return is_spatial(_network(system)[0])
    except NotRecursive:
        return False


def _least_squares_of(system, drivers, res, params):
    """The least-squares inverse-dynamics Solution of the motion of a recursive result."""

    base = as_model(system)
    driven = driven_model(base, list(drivers), params)
    samples = sample_motions(drivers, res.t, {**{str(k): v for k, v in base.parameters.items()}, **(params or {})})
    q, f, acc = res.model_motion(driven.model.coordinate_names)
    return _inverse_solution(driven, samples, res.t, q, f, acc, params)


def _inverse_solution(driven, samples, t, q, f, acc, params):
    """Multipliers of the driven motion, ``Φ_qᵀ λ + Aᵀ μ = −(M q̈ + h)`` by least squares at each time with the
    drivers' values there; the efforts are ``−λ`` of the driver rows."""
    cm = driven.compiled
    p0 = driven.parameter_vector(params)
    if cm.m1 + cm.m2:
        first = driven.params_at(samples, t, 0, p0)
        drop = redundant_constraints(cm, t[0], q[:, 0], first)
        if drop:
            driven = driven.without(drop)
            cm = driven.compiled
            p0 = driven.parameter_vector(params)
    z = np.zeros((cm.m1 + cm.m2, t.size))
    for k, tt in enumerate(t):
        p = driven.params_at(samples, t, k, p0)
        M, h = cm.dynamics(tt, q[:, k], f[:, k], p)
        c = cm.constraints(tt, q[:, k], f[:, k], p)
        z[:, k] = np.linalg.lstsq(c.reaction_jacobian.T, -(M @ acc[:, k] + h), rcond=None)[0]
    trajectory = Trajectory(t, q, f, acc, z[:cm.m1], z[cm.m1:], nsteps=0)
    sol = DrivenSolution(driven, samples, p0, trajectory, method="inverse")
    labels = sol.model.constraint_labels
    sol.efforts = {name: -sol.lam[labels.index(f"driver {name}")] for name in driven.names}
    return sol


def multipliers_from_motion(model, t, q, f, acc, params=None):
    """The motion ``(t, q, f, acc)`` of a model as a :class:`~netdyn.numerics.results.solution.Solution` whose
    multipliers solve ``Φ_qᵀ λ + Aᵀ μ = −(M q̈ + h)`` by least squares (redundant constraints left out)."""
    return Solution(*motion_multipliers(model, t, q, f, acc, params=params), method="multipliers")
