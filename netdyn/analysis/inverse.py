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

from netdyn.analysis.kinematics import driver_motions, kinematics
from netdyn.errors import ModelError
from netdyn.numerics.results.reactions import motion_multipliers
from netdyn.numerics.results.solution import Solution
from netdyn.recursive.inverse import recursive_inverse_dynamics
from netdyn.recursive.spatial.inverse import spatial_inverse_dynamics
from netdyn.recursive.planar import NotRecursive
from netdyn.analysis.kinematics import with_drivers
from netdyn.graph.network import as_model
from netdyn.graph.assembly import fill as stored_assembly


def inverse_dynamics(system, drivers, t, guess=None, params=None, method="auto"):
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
    drivers = driver_motions(system, drivers, params)  # motions as text: the restricted parser, never eval
    guess = stored_assembly(system, guess=guess)[2]
    if method != "least-squares":
        try:
            run = spatial_inverse_dynamics if _spatial(system) else recursive_inverse_dynamics
            return run(system, drivers, t, guess=guess, params=params,
                       reference=lambda res: _least_squares_of(system, drivers, res, params))
        except NotRecursive:
            if method == "recursive":
                raise
    motion = kinematics(system, drivers, t, guess=guess, params=params)
    sol = multipliers_from_motion(motion.model, motion.t, motion.q, motion.f, motion.acc, params=params)
    sol.method = "inverse"
    labels = sol.model.constraint_labels
    sol.efforts = {name: -sol.lam[labels.index(f"driver {name}")] for name in dict(drivers)}
    return sol


def _spatial(system):
    from netdyn.graph.spatial import is_spatial
    from netdyn.recursive.inverse import _network
    try:
        return is_spatial(_network(system)[0])
    except NotRecursive:
        return False


def _least_squares_of(system, drivers, res, params):
    """The least-squares inverse-dynamics Solution of the motion of a recursive result."""

    model = with_drivers(as_model(system), drivers)
    q, f, acc = res.model_motion(model.coordinate_names)
    sol = multipliers_from_motion(model, res.t, q, f, acc, params=params)
    sol.method = "inverse"
    labels = sol.model.constraint_labels
    sol.efforts = {name: -sol.lam[labels.index(f"driver {name}")] for name in dict(drivers)}
    return sol


def multipliers_from_motion(model, t, q, f, acc, params=None):
    """The motion ``(t, q, f, acc)`` of a model as a :class:`~netdyn.numerics.results.solution.Solution` whose
    multipliers solve ``Φ_qᵀ λ + Aᵀ μ = −(M q̈ + h)`` by least squares (redundant constraints left out)."""
    return Solution(*motion_multipliers(model, t, q, f, acc, params=params), method="multipliers")
