"""Kinematics of constrained models: assembly from a rough guess; position, velocity and
acceleration analysis for prescribed driver motions over a time grid.

Drivers map a joint name (its first joint coordinate: ``theta_b − theta_a`` for a
revolute, the slide ``s`` for a prismatic joint) or a coordinate name to a motion:
a number, a sympy expression of ``netdyn.t`` or a callable of ``t`` (converted
with :func:`netdyn.symbols.as_expr`). With the drivers the mechanism must have no
degree of freedom left.

>>> import numpy as np
>>> from netdyn import Network, t
>>> from netdyn.components.planar import RigidBody, Revolute
>>> net = Network()
>>> _ = net.add(RigidBody("crank", 1, 0.1), Revolute("O", "ground", (0, 0), "crank", (-0.5, 0)))
>>> k = kinematics(net.model(), {"O": 2 * t}, np.array([0.0, np.pi / 4]))
>>> np.round(k["x_crank"], 6).tolist(), np.round(k["theta_crank_dot"], 6).tolist()
([0.5, 0.0], [2.0, 2.0])
"""
from __future__ import annotations

import numpy as np

from netdyn.errors import InitialConditionError, ModelError, SingularSystemError
from netdyn.symbols import as_expr
from netdyn.numerics.structure import with_constraints
from netdyn.numerics.initial import consistent_initial_conditions
from netdyn.numerics.compiled import compile_model
from netdyn.graph.network import as_model
from netdyn.numerics.structure import redundant_constraints, without_constraints
from netdyn.numerics.solution import Solution
from netdyn.numerics.trajectory import Trajectory
from netdyn.graph.spatial import driver_constraint


def driver_constraints(model, drivers):
    """``(expressions, labels)`` of the constraints ``coordinate(joint) − motion(t) = 0``."""
    planar = model.metadata.get("planar")
    jc = planar.joint_coordinates if planar else {}
    exprs, labels = [], []
    spatial = model.metadata.get("spatial")
    for name, motion in dict(drivers).items():
        if spatial and name.split("[")[0] in spatial.joints:
            exprs.append(driver_constraint(model, name, motion))
            labels.append(f"driver {name}")
            continue
        if name in jc:
            if not jc[name]:
                raise ModelError(f"joint {name!r} has no coordinate to drive (a weld); drive another joint")
            coordinate = jc[name][0]
        elif name in model.coordinate_names:
            coordinate = model.coordinate(name)
        else:
            raise ModelError(f"driver {name!r} names neither a joint nor a coordinate; the joints are "
                             f"{sorted(jc)}, the coordinates {model.coordinate_names}")
        exprs.append(coordinate - as_expr(motion))
        labels.append(f"driver {name}")
    return exprs, labels


def with_drivers(model, drivers):
    """A copy of ``model`` with the driver constraints appended (labels ``"driver <name>"``)."""

    exprs, labels = driver_constraints(model, drivers)
    return with_constraints(model, list(model.constraints) + exprs, list(model.constraint_labels) + labels)


def assemble_configuration(system, guess=None, q0=None, t=0.0, params=None):
    """Coordinates satisfying the constraints, by damped Newton from a rough ``guess``; ``q0`` values are held.

    Returns a dict name -> value; an :class:`~netdyn.errors.InitialConditionError` names the constraint
    that cannot be met.
    """

    model = as_model(system)
    cm = compile_model(model)
    q, _ = consistent_initial_conditions(cm, t, q0, {}, cm.parameter_vector(params), guess=guess)
    return dict(zip(model.coordinate_names, q))


def kinematics(system, drivers, t, guess=None, params=None, tol=1e-12):
    """Position, velocity and acceleration analysis for the given driver motions at the times ``t``.

    Returns a :class:`~netdyn.solution.Solution` (``method="kinematics"``, multipliers zero). Positions are solved by Newton from the previous time (the first
    from ``guess``), flows from ``Φ_q f = −Φ_t`` and accelerations from ``Φ_q q̈ = −γ``.
    """

    model = with_drivers(as_model(system), drivers)
    cm = compile_model(model)
    p = cm.parameter_vector(params)
    t = np.atleast_1d(np.asarray(t, dtype=float))
    q, _ = consistent_initial_conditions(cm, t[0], None, {}, p, guess=guess)
    drop = redundant_constraints(cm, t[0], q, p)
    if drop:
        model = without_constraints(model, drop)
        cm = compile_model(model)
        p = cm.parameter_vector(params)
    if cm.m1 < cm.n:
        raise ModelError(f"the drivers {sorted(dict(drivers))} leave {cm.n - cm.m1} degree(s) of freedom of "
                         f"{model.name!r} free; drive {cm.n - cm.m1} more joint(s) or coordinate(s)")
    Q, F, A = (np.zeros((cm.n, t.size)) for _ in range(3))
    zero = np.zeros(cm.n)
    for k, tt in enumerate(t):
        for _ in range(30):
            c = cm.constraints(tt, q, zero, p)
            if np.max(np.abs(c.phi)) < tol * (1 + np.max(np.abs(q))):
                break
            q = q - np.linalg.lstsq(c.Phi_q, c.phi, rcond=None)[0]
        else:
            worst = int(np.argmax(np.abs(c.phi)))
            raise InitialConditionError(f"the mechanism cannot be assembled at t = {tt:.6g}: constraint "
                                        f"{model.constraint_labels[worst]} stays at {c['phi'][worst]:.3g}; the "
                                        "driver motion leaves the workspace or passes a singular position")
        J = c.Phi_q
        if np.linalg.matrix_rank(J) < cm.n:
            raise SingularSystemError(f"singular configuration at t = {tt:.6g}: the drivers do not determine "
                                      "the motion there (a dead centre or a locked position)")
        f = np.linalg.solve(J, -c.Phi_t)
        gamma = cm.constraints(tt, q, f, p).gamma_phi
        Q[:, k], F[:, k], A[:, k] = q, f, np.linalg.solve(J, -gamma)
    trajectory = Trajectory(t, Q, F, A, np.zeros((cm.m1, t.size)), np.zeros((cm.m2, t.size)))
    return Solution(model, cm, p, trajectory, method="kinematics")

