"""Kinematics of constrained models: assembly from a rough guess; position, velocity and
acceleration analysis for prescribed driver motions over a time grid.

Drivers map a joint name (its first joint coordinate: ``theta_b − theta_a`` for a
revolute, the slide ``s`` for a prismatic joint) or a coordinate name to a motion:
a number, a sympy expression of ``netdyn.t``, a callable ``t -> (q, q̇, q̈)``, three arrays
``(q, q̇, q̈)`` sampled at the times, or a string such as ``"0.5*sin(2*t)"``, read by the
restricted parser :func:`netdyn.lagrange.exprtext.parse_expression` in ``t`` and the model's
parameters, never evaluated (:func:`driver_motions`; :mod:`netdyn.analysis.drivers`). With the
drivers the mechanism must have no degree of freedom left. A crank driven at 2 rad/s is the example
of :func:`kinematics`.

Positions follow the motion by continuation: the times are visited in increasing order whatever
order they are given in, each position solve starts from the last one, and a step whose Newton
iteration fails, or lands on the wrong branch of a prescribed rotation (the row ``2 w_E v_E`` of an
orientation error vanishes at an error of π as well as at 0; the cosine ``w_E² − v_E²`` of the error
must be positive), is split in halves with the drivers' values in between, until every step is
small enough. The first position starts from ``guess`` and, when it lands on a wrong branch, is
continued from the prescribed values it did reach to the ones asked for.
"""
from __future__ import annotations

import numpy as np

from netdyn.errors import InitialConditionError, ModelError, SingularSystemError
from netdyn.numerics.dae.initial import consistent_initial_conditions
from netdyn.numerics.functions.compiled import compile_model
from netdyn.graph.network import as_model
from netdyn.graph.assembly import fill as stored_assembly
from netdyn.numerics.dae.structure import redundant_constraints
from netdyn.numerics.results.trajectory import Trajectory
from netdyn.lagrange.motion import sample_motions
from netdyn.analysis.drivers import DrivenSolution, driven_model, driver_constraints, driver_motions, with_drivers

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # names for the hints only (annotations are not evaluated)
    from netdyn.graph.network import Network
    from netdyn.lagrange.model import LagrangianModel
    from netdyn.hints import ArrayLike, Initial, Params
    from collections.abc import Mapping
    from typing import Any


__all__ = ["assemble_configuration", "kinematics", "driver_motions", "driver_constraints", "with_drivers"]

MAX_SPLITS = 40  # halvings of one step before the continuation gives up


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
               guess: Initial | None = None, params: Params | None = None, tol: float = 1e-12) -> DrivenSolution:
    """Position, velocity and acceleration analysis for the given driver motions at the times ``t``.

    Returns a :class:`~netdyn.solution.Solution` (``method="kinematics"``, multipliers zero). Positions are
    solved by Newton along the motion (times in increasing order, each solve from the last; the first from
    ``guess``, by default the network's stored one, ``net.assembly``), continued in smaller steps where a step
    fails or a prescribed rotation would land on its wrong branch; flows from ``Φ_q f = −Φ_t`` and
    accelerations from ``Φ_q q̈ = −γ``. Motions may be expressions, callables ``t -> (q, q̇, q̈)`` or arrays
    (:mod:`netdyn.analysis.drivers`); the driven model is compiled once per model and set of driver names.
    In the solution's model the drivers' rows hold their motions as parameters ``_drv<k>_q``/``_v``/``_a``/``_t``,
    given their values at each time (``sol.params_at(k)``; :class:`~netdyn.analysis.drivers.DrivenSolution`).

    >>> import numpy as np
    >>> from netdyn import Network, t
    >>> from netdyn.components.planar import RigidBody, Revolute
    >>> net = Network()
    >>> _ = net.add(RigidBody("crank", 1, 0.1), Revolute("O", "ground", (0, 0), "crank", (-0.5, 0)))
    >>> k = kinematics(net.model(), {"O": 2 * t}, np.array([0.0, np.pi / 4]))
    >>> np.round(k["y_crank"], 6).tolist(), np.round(k["theta_crank_dot"], 6).tolist()
    ([0.0, 0.5], [2.0, 2.0])
    """
    return _Tracker(system, drivers, t, guess, params, tol).solution()


class _Tracker:
    """The continuation of the position solve along the driver motions (see the module docstring)."""

    def __init__(self, system, drivers, t, guess, params, tol):
        self.guess = stored_assembly(system, guess=guess)[2]
        drivers = driver_motions(system, drivers, params)
        self.base = as_model(system)
        self.t = np.atleast_1d(np.asarray(t, dtype=float))
        self.samples = sample_motions(drivers, self.t, self._numbers(params))
        self.driven = driven_model(self.base, list(drivers), params)
        self.params, self.tol = params, tol
        self.names = list(drivers)

    def _numbers(self, params):
        values = {str(k): v for k, v in self.base.parameters.items()}
        values.update({str(k): v for k, v in (params or {}).items()})
        return values

    # ------------------------------------------------------------------ one position solve
    def _newton(self, cm, tt, q, p, maxiter=30):
        zero = np.zeros(cm.n)
        for _ in range(maxiter):
            c = cm.constraints(tt, q, zero, p)
            if not np.all(np.isfinite(c.phi)):
                return None, c
            if np.max(np.abs(c.phi), initial=0.0) < self.tol * (1 + np.max(np.abs(q))):
                return q, c
            q = q - np.linalg.lstsq(c.Phi_q, c.phi, rcond=None)[0]
        return None, c

    def _wrong_branch(self, tt, q, p):
        labels, g = self.branch
        if not labels:
            return []
        cos = g(tt, q, p)
        return [(labels[i], float(cos[i])) for i in np.flatnonzero(cos <= 0.0)]

    def _advance(self, q, start, end, depth=0):
        """Positions at ``end`` (driver values, time) continued from ``q`` solved at ``start``."""
        (v0, t0), (v1, t1) = start, end
        p = self.driven.params_with(self.p0, v1, t1)
        out, c = self._newton(self.cm, t1, q.copy(), p)
        if out is not None and not self._wrong_branch(t1, out, p):
            return out
        if depth >= MAX_SPLITS:
            self._fail(t1, out, c, p)
        mid = ((v0 + v1) / 2, (t0 + t1) / 2)
        q = self._advance(q, start, mid, depth + 1)
        return self._advance(q, mid, end, depth + 1)

    def _fail(self, tt, q, c, p):
        if q is not None:
            name, cos = self._wrong_branch(tt, q, p)[0]
            raise InitialConditionError(
                f"driver {name}: at t = {tt:.6g} the position solve reaches the prescribed rotation only on its "
                f"wrong branch (error angle with cosine {cos:.3g}, π away) even in small steps; check the motion "
                "or pass a guess= near the prescribed pose")
        worst = int(np.argmax(np.abs(c.phi)))
        raise InitialConditionError(f"the mechanism cannot be assembled at t = {tt:.6g}: constraint "
                                    f"{self.cm.model.constraint_labels[worst]} stays at {c.phi[worst]:.3g}; the "
                                    "driver motion leaves the workspace or passes a singular position")

    def _first(self, k):
        """Positions at the first time: from the guess, continued onto the right branch when needed."""
        cm, tt = self.cm, self.t[k]
        p = self.driven.params_at(self.samples, self.t, k, self.p0)
        q, _ = consistent_initial_conditions(cm, tt, None, {}, p, guess=self.guess)
        if not self._wrong_branch(tt, q, p):
            return q, p
        # from the prescribed values reached (π off on some rotation) to the ones asked for
        reached = self.driven.driver_values(p)
        labels, _ = self.branch
        for name, _cos in self._wrong_branch(tt, q, p):
            reached[self.names.index(name)] += np.pi
        return self._advance(q, (reached, tt), (self.driven.driver_values(p), tt)), p

    # ------------------------------------------------------------------ the whole grid
    def solution(self):
        t = self.t
        order = np.argsort(t, kind="stable")
        first = int(order[0])
        self.cm = cm = self.driven.compiled
        self.p0 = self.driven.parameter_vector(self.params)
        p = self.driven.params_at(self.samples, t, first, self.p0)
        q, _ = consistent_initial_conditions(cm, t[first], None, {}, p, guess=self.guess)
        drop = redundant_constraints(cm, t[first], q, p)
        if drop:
            self.driven = self.driven.without(drop)
            self.cm = cm = self.driven.compiled
            self.p0 = self.driven.parameter_vector(self.params)
        self.branch = self.driven.branch_function()
        if cm.m1 < cm.n:
            raise ModelError(f"the drivers {sorted(self.names)} leave {cm.n - cm.m1} degree(s) of freedom of "
                             f"{self.base.name!r} free; drive {cm.n - cm.m1} more joint(s) or coordinate(s)")
        Q, F, A = (np.zeros((cm.n, t.size)) for _ in range(3))
        previous = None
        for k in order:
            tt = t[k]
            p = self.driven.params_at(self.samples, t, k, self.p0)
            if previous is None:
                q, p = self._first(k)
            else:
                q = self._advance(previous[1], previous[0], (self.driven.driver_values(p), tt))
            previous = ((self.driven.driver_values(p), tt), q)
            c = cm.constraints(tt, q, np.zeros(cm.n), p)
            J = c.Phi_q
            if np.linalg.matrix_rank(J) < cm.n:
                raise SingularSystemError(f"singular configuration at t = {tt:.6g}: the drivers do not determine "
                                          "the motion there (a dead centre or a locked position)")
            f = np.linalg.solve(J, -c.Phi_t)
            gamma = cm.constraints(tt, q, f, p).gamma_phi
            Q[:, k], F[:, k], A[:, k] = q, f, np.linalg.solve(J, -gamma)
        trajectory = Trajectory(t, Q, F, A, np.zeros((cm.m1, t.size)), np.zeros((cm.m2, t.size)))
        return DrivenSolution(self.driven, self.samples, self.p0, trajectory, method="kinematics")
