"""Kinematics of constrained models: assembly from a rough guess; position, velocity and
acceleration analysis for prescribed driver motions over a time grid.

Drivers map a joint name (its first joint coordinate: ``theta_b − theta_a`` for a
revolute, the slide ``s`` for a prismatic joint) or a coordinate name to a motion:
a number, a sympy expression of ``netdyn.t``, a callable of ``t`` (converted
with :func:`netdyn.symbols.as_expr`) or a string such as ``"0.5*sin(2*t)"``, read by the
restricted parser :func:`netdyn.lagrange.exprtext.parse_expression` in ``t`` and the model's
parameters, never evaluated (:func:`driver_motions`). With the drivers the mechanism must have no
degree of freedom left. A crank driven at 2 rad/s is the example of :func:`kinematics`.
"""
from __future__ import annotations

import numpy as np

import sympy as sp

from netdyn.errors import InitialConditionError, ModelError, SingularSystemError
from netdyn.lagrange.exprtext import parse_expression, symbol_table
from netdyn.symbols import as_expr, t as T_SYMBOL
from netdyn.validate import NUMBER
from netdyn.numerics.dae.structure import with_constraints
from netdyn.numerics.dae.initial import consistent_initial_conditions
from netdyn.numerics.functions.compiled import compile_model
from netdyn.graph.network import as_model
from netdyn.graph.assembly import fill as stored_assembly
from netdyn.numerics.dae.structure import redundant_constraints, without_constraints
from netdyn.numerics.results.solution import Solution
from netdyn.numerics.results.trajectory import Trajectory
from netdyn.graph.spatial import driver_constraint

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # names for the hints only (annotations are not evaluated)
    from netdyn.graph.network import Network
    from netdyn.lagrange.model import LagrangianModel
    from netdyn.hints import ArrayLike, Initial, Params
    from collections.abc import Mapping
    from typing import Any


def driver_motions(system, drivers, params=None):
    """``drivers`` with every motion given as text parsed into an expression of ``t`` and the parameters.

    The text is read by :func:`~netdyn.lagrange.exprtext.parse_expression` with ``t``, the model's
    parameters and the names in ``params`` declared (``strict``): anything else — an undeclared name, a
    call of a function that is not a math function, attribute access, ``__import__`` — is a
    :class:`~netdyn.errors.ParseError` naming the driver. SPICE numbers (``"1k"``) stay numbers.

    >>> from netdyn import LagrangianModel, coordinates, t
    >>> x, = coordinates("x,")
    >>> driver_motions(LagrangianModel([x], T=x.diff(t)**2/2), {"x": "0.5*sin(2*t)", "y": 1.0})
    {'x': 0.5*sin(2*t), 'y': 1.0}
    >>> driver_motions(LagrangianModel([x], T=x.diff(t)**2/2), {"x": "__import__('os').getcwd()"})
    Traceback (most recent call last):
    ...
    netdyn.errors.ParseError: driver x: '__import__' is not allowed in an expression (names starting with an underscore are refused)
    """
    drivers = dict(drivers)
    text = {k: v for k, v in drivers.items() if isinstance(v, str) and not NUMBER.match(v.strip())}
    if not text:
        return drivers
    model = as_model(system)
    declared = [T_SYMBOL] + [sp.Symbol(k) if isinstance(k, str) else k for k in model.parameters] + \
        [sp.Symbol(k) if isinstance(k, str) else k for k in (params or {})]
    table = symbol_table(*declared)
    names = {str(s) for s in declared}
    for k, v in text.items():
        e = parse_expression(v, table, where=f"driver {k}", names=names, strict=True)
        drivers[k] = e.xreplace({s: T_SYMBOL for s in e.free_symbols if str(s) == "t"})
    return drivers


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


def assemble_configuration(system: Network | LagrangianModel, guess: Initial | None = None, q0: Initial | None = None,
                           t: float = 0.0, params: Params | None = None) -> dict[str, float]:
    """Coordinates satisfying the constraints, by damped Newton from a rough ``guess``; ``q0`` values are held.

    Returns a dict name -> value; an :class:`~netdyn.errors.InitialConditionError` names the constraint
    that cannot be met. ``guess`` and ``q0`` not given are the network's stored ones (``net.assembly``).

    >>> from netdyn import Network
    >>> from netdyn.components.planar import RigidBody, Revolute
    >>> net = Network()
    >>> _ = net.add(RigidBody("crank", 1, 0.1), Revolute("O", "ground", (0, 0), "crank", (-0.5, 0)))
    >>> q = assemble_configuration(net.model(), guess={"x_crank": 0.4, "y_crank": 0.1}, q0={"theta_crank": 0.0})
    >>> {name: round(float(value), 6) for name, value in q.items()}
    {'x_crank': 0.5, 'y_crank': 0.0, 'theta_crank': 0.0}
    """

    q0, _, guess = stored_assembly(system, q0, None, guess)
    model = as_model(system)
    cm = compile_model(model)
    q, _ = consistent_initial_conditions(cm, t, q0, {}, cm.parameter_vector(params), guess=guess)
    return dict(zip(model.coordinate_names, q))


def kinematics(system: Network | LagrangianModel, drivers: Mapping[str, Any], t: ArrayLike,
               guess: Initial | None = None, params: Params | None = None, tol: float = 1e-12) -> Solution:
    """Position, velocity and acceleration analysis for the given driver motions at the times ``t``.

    Returns a :class:`~netdyn.solution.Solution` (``method="kinematics"``, multipliers zero). Positions are solved by Newton from the previous time (the first
    from ``guess``, by default the network's stored one, ``net.assembly``), flows from ``Φ_q f = −Φ_t`` and
    accelerations from ``Φ_q q̈ = −γ``.

    >>> import numpy as np
    >>> from netdyn import Network, t
    >>> from netdyn.components.planar import RigidBody, Revolute
    >>> net = Network()
    >>> _ = net.add(RigidBody("crank", 1, 0.1), Revolute("O", "ground", (0, 0), "crank", (-0.5, 0)))
    >>> k = kinematics(net.model(), {"O": 2 * t}, np.array([0.0, np.pi / 4]))
    >>> np.round(k["y_crank"], 6).tolist(), np.round(k["theta_crank_dot"], 6).tolist()
    ([0.0, 0.5], [2.0, 2.0])
    """
    guess = stored_assembly(system, guess=guess)[2]
    drivers = driver_motions(system, drivers, params)
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

