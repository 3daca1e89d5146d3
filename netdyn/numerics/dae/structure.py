"""Mobility and redundant constraints of a constrained model.

The true number of degrees of freedom at a configuration is ``n − rank Φ_q``;
for a planar linkage the Grübler–Kutzbach count ``3 (bodies) − Σ joint
constraints`` is also given, and the two differ exactly when some constraints are
redundant (a parallelogram, a doubled joint). Redundant constraints are found
in model order (a constraint is redundant when its gradient lies in the span of
the earlier ones) and can be left out of the solve with :func:`without_constraints`.

>>> from netdyn import Network
>>> from netdyn.components.planar import RigidBody, Revolute
>>> net = Network()
>>> _ = net.add(RigidBody("bar", 1, 0.1), Revolute("A", "ground", (0, 0), "bar", (-0.5, 0)),
...             Revolute("A2", "ground", (0, 0), "bar", (-0.5, 0)))   # a doubled pin
>>> mob = mobility(net.model(), guess={"x_bar": 0.5})
>>> mob.gruebler, mob.dof, mob.redundant
(-1, 1, ['A2[x]', 'A2[y]'])
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg as sla

from netdyn.errors import LockedMechanismError, SingularSystemError
from netdyn.numerics.dae.closure import structure_text
from netdyn.lagrange.model import LagrangianModel
from netdyn.numerics.dae.initial import consistent_initial_conditions
from netdyn.numerics.functions.compiled import compile_model
from netdyn.graph.network import as_model
from netdyn.graph.assembly import fill as stored_assembly
from netdyn.errors import IntegrationError

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # names for the hints only (annotations are not evaluated)
    from netdyn.bondgraph.graph import BondGraph
    from netdyn.graph.network import Network
    from netdyn.hints import Initial, Params


@dataclass
class Mobility:
    """``dof = n − rank``; ``gruebler`` (planar models only, else None); ``redundant`` constraint labels."""

    dof: int
    rank: int
    gruebler: int | None
    redundant: list
    q: np.ndarray


def dependent_rows(J, tol=1e-9):
    """Indices of rows of ``J`` that lie in the span of the rows before them.

    >>> dependent_rows(np.array([[1.0, 0], [0, 1], [1, 1]]))
    [2]
    """
    basis, out = [], []
    scale = max(float(np.max(np.abs(J))) if J.size else 0.0, 1e-300)
    for i, row in enumerate(J):
        r = row.astype(float).copy()
        for b in basis:  # modified Gram-Schmidt, twice for stability
            r -= (b @ r) * b
        for b in basis:
            r -= (b @ r) * b
        norm = np.linalg.norm(r)
        if norm > tol * max(np.linalg.norm(row), scale):
            basis.append(r / norm)
        else:
            out.append(i)
    return out


def redundant_constraints(cm, tt, q, p):
    """Indices of the displacement constraints redundant at configuration ``q`` (model order)."""
    if not cm.m1:
        return []
    c = cm.constraints(tt, q, np.zeros(cm.n), p)
    return dependent_rows(c.Phi_q)


def with_constraints(model, constraints, labels, metadata=None):
    """A copy of ``model`` with other displacement constraints (everything else shared)."""
    return LagrangianModel(model.coordinates, T=model.T_terms, V=model.V_terms, D=model.D_terms,
                           efforts=model.efforts, constraints=constraints, flow_constraints=model.flow_constraints,
                           parameters=model.parameters, name=model.name,
                           metadata=model.metadata if metadata is None else metadata, constraint_labels=labels,
                           flow_constraint_labels=model.flow_constraint_labels)


def without_constraints(model, drop):
    """A copy of ``model`` without the displacement constraints at indices ``drop``.

    ``metadata["redundant"]`` lists the labels left out.
    """
    drop = set(drop)
    keep = [j for j in range(len(model.constraints)) if j not in drop]
    metadata = dict(model.metadata)
    metadata["redundant"] = list(metadata.get("redundant", [])) + [model.constraint_labels[j] for j in sorted(drop)]
    return with_constraints(model, [model.constraints[j] for j in keep], [model.constraint_labels[j] for j in keep],
                            metadata)


def mobility(system: Network | LagrangianModel | BondGraph, q0: Initial | None = None, guess: Initial | None = None,
             t: float = 0.0, params: Params | None = None) -> Mobility:
    """Degrees of freedom at a configuration assembled from ``q0``/``guess`` (see :func:`netdyn.simulate`; not
    given, the network's stored ones, ``net.assembly``). A spatial network the recursive tree reads is
    answered on the tree (``q`` its joint coordinates; an idle S–S spin held, so not counted).

    >>> import netdyn
    >>> from netdyn.components.planar import RigidBody, Revolute
    >>> pend = netdyn.Network("pendulum")
    >>> _ = pend.add(RigidBody("bar", 1, 0.1), Revolute("O", "ground", (0, 0), "bar", (-0.5, 0)))
    >>> m = netdyn.mobility(pend.model(), q0={"theta_bar": 0.0})
    >>> m.dof, m.redundant
    (1, [])
    """

    q0, _, guess = stored_assembly(system, q0, None, guess)
    fast = _tree_mobility(system, q0, guess, params)
    if fast is not None:
        return fast
    model = as_model(system)
    cm = compile_model(model)
    p = cm.parameter_vector(params)
    q, _ = consistent_initial_conditions(cm, t, q0, {}, p, guess=guess)
    drop = redundant_constraints(cm, t, q, p)
    rank = cm.m1 - len(drop)
    planar = model.metadata.get("planar") or model.metadata.get("spatial")
    return Mobility(dof=cm.n - rank - _flow_rank(cm, t, q, p), rank=rank,
                    gruebler=planar.gruebler if planar else None,
                    redundant=[model.constraint_labels[j] for j in drop], q=q)


def _tree_mobility(net, q0, guess, params):
    """The :class:`Mobility` of a spatial network on its recursive tree (``q``: the tree's joint coordinates;
    an idle spin held, so not counted), or None where the symbolic model must answer (a model, drivers, a
    network the tree does not read, ``q0`` not in tree coordinates)."""
    from netdyn.graph.spatial import is_spatial, joints
    from netdyn.recursive.closed import constraint_terms
    from netdyn.recursive.constraints import row_labels
    from netdyn.recursive.joint_space import initial_state
    from netdyn.recursive.model import TreeData
    from netdyn.recursive.planar import NotRecursive
    from netdyn.recursive.spatial import coordinates_from_poses, tree_from_spatial_network

    if not (hasattr(net, "bodies") and hasattr(net, "elements")) or not is_spatial(net):
        return None
    if any(getattr(el, "is_driver", False) for el in net.elements.values()):
        return None
    try:
        tree = tree_from_spatial_network(net, params)
    except NotRecursive:
        return None
    if any(k not in tree.coordinate_names for k in dict(q0 or {})):
        return None
    guess = dict(guess or {})
    guess = {**coordinates_from_poses(tree, guess), **{k: v for k, v in guess.items() if k in tree.coordinate_names}}
    q, _ = initial_state(tree, q0, None, guess)
    m = tree.model
    J = constraint_terms(m, TreeData(m), q)[1] if m.m else np.zeros((0, m.nq))
    drop = dependent_rows(J) if m.m else []
    labels = row_labels(m)
    gruebler = 6 * len(net.bodies) - sum(len(j.components) for j in joints(net))
    return Mobility(dof=m.nq - (J.shape[0] - len(drop)), rank=J.shape[0] - len(drop), gruebler=gruebler,
                    redundant=[labels[k] for k in drop], q=q)


def _flow_rank(cm, tt, q, p):
    if not cm.m2:
        return 0
    return int(np.linalg.matrix_rank(cm.constraints(tt, q, np.zeros(cm.n), p).A))


def prepare(model, cm, tt, q, p, params=None):
    """Leave out redundant constraints found at ``q`` (recompiling); refuse a planar linkage that cannot move.

    Returns ``(model, cm, p)``; unchanged when nothing is redundant.
    """

    drop = redundant_constraints(cm, tt, q, p)
    if drop:
        model = without_constraints(model, drop)
        cm = compile_model(model)
        p = cm.parameter_vector(params)
    planar = model.metadata.get("planar") or model.metadata.get("spatial")
    if planar and cm.m1 >= cm.n:
        rheonomic = any(bool(e != 0) for e in cm.eq.Phi_t)
        from netdyn.components.contact import is_contact_label
        if not rheonomic and not any(is_contact_label(label) for label in model.constraint_labels):
            # (held still by closed contacts it rests: a lift-off event frees it)
            raise LockedMechanismError(
                f"the mechanism {model.name!r} cannot move: its {cm.m1} independent constraints fix all "
                f"{cm.n} coordinates ({structure_text(model)}); it is locked — remove a joint or a link, or "
                "free a joint, to simulate it; its static reactions are netdyn.inverse_dynamics(system, {}, t)")
    return model, cm, p


def integration_failure(cm, tt, q, p, message, tol=1e-3):
    """The error for a failed step at ``(tt, q)``: a :class:`SingularSystemError` naming the time when the
    constraint Jacobian has (nearly) lost rank there, else an :class:`~netdyn.errors.IntegrationError`."""

    if cm.m1 + cm.m2:
        c = cm.constraints(tt, q, np.zeros(cm.n), p)
        s = np.linalg.svd(c.jacobian, compute_uv=False)
        if s.size and s[-1] < tol * s[0]:
            return SingularSystemError(
                f"singular configuration at t = {tt:.6g}: the constraint Jacobian has nearly lost rank "
                f"(smallest/largest singular value {s[-1] / s[0]:.2g}), as at a dead centre or a change point "
                "where links align; the motion cannot be continued through it — stop before it or change the "
                "loads or the geometry")
    return IntegrationError(f"integration failed at t = {tt:.6g}: {message}")


class SingularityWatch:
    """Watches ``σ_min/σ_max`` of the constraint Jacobian of a planar model at the accepted steps.

    A change point (links aligning, where two assembly branches cross) can be stepped over without
    the integrator failing; the silent result would then follow either branch. Each accepted step pays
    for a cheap test only: the ratio is estimated from ``Φ_q Φ_qᵀ`` by one warm-started step of inverse
    iteration (smallest eigenvalue) and of power iteration (largest), with the projection's own banded
    factorisation when there is one (:class:`~netdyn.numerics.mechanics.fastkkt.Gram`). Inverse iteration is exact
    in the limit that matters: near a lost rank the smallest eigenvalue separates from the others.
    The expensive test runs only when the estimate has a local minimum below ``suspect`` that falls
    steeply enough to reach zero between the steps (the straight lines through the neighbouring steps
    drop below half the minimum within half a step): the exact ratio (SVD) is then minimized over the
    neighbouring steps, the configuration between steps being the quintic Hermite interpolant of
    ``q, q̇, q̈`` at their ends. Below ``tol`` that is a :class:`SingularSystemError` with the time
    (``err.time``) and the configuration (``err.q``, a dict). ``checks`` counts the expensive tests.
    """

    def __init__(self, cm, p, tol=1e-6, suspect=0.5, fast=None):
        self.cm, self.p, self.tol, self.suspect, self.fast = cm, p, tol, suspect, fast
        self.active = bool(cm.model.metadata.get("planar")) and cm.m1 > 0
        self.history = []
        self.checks = 0
        self._vmin = self._vmax = None

    def _phi_q(self, tt, q):
        if self.fast is not None:
            return self.fast.constraint_values(self.fast.values(tt, q, np.zeros(self.cm.n))).Phi_q
        return self.cm.constraints(tt, q, np.zeros(self.cm.n), self.p).Phi_q

    def ratio(self, tt, q):
        """The exact ``σ_min/σ_max`` of ``Φ_q`` at ``(tt, q)`` (an SVD)."""
        s = np.linalg.svd(self._phi_q(tt, q), compute_uv=False)
        return s[-1] / s[0] if s.size and s[0] > 0 else 1.0

    def estimate(self, tt, q, gram=None):
        """The cheap estimate of :meth:`ratio`: one inverse- and one power-iteration step on ``Φ_q Φ_qᵀ``.

        ``gram``: a factorised :class:`~netdyn.numerics.mechanics.fastkkt.Gram` of ``Φ_q Φ_qᵀ`` at ``q`` (the
        projection's), else the matrix is formed and factorised densely here.
        """
        m = self.cm.m1
        if self._vmin is None:
            rng = np.random.default_rng(0)
            self._vmin, self._vmax = rng.standard_normal(m), np.ones(m)
        if gram is not None and gram.m == m:
            solve, matvec = gram.solve, gram.last_matvec
        else:
            P = self._phi_q(tt, q)
            S = P @ P.T
            try:
                lu = sla.lu_factor(S, check_finite=False)
            except (ValueError, np.linalg.LinAlgError):
                return 0.0
            solve, matvec = (lambda b: sla.lu_solve(lu, b, check_finite=False)), (lambda x: S @ x)
        x = solve(self._vmin)
        nx = np.linalg.norm(x)
        if not np.isfinite(nx) or nx == 0:
            return 0.0
        self._vmin = x / nx
        lo = float(self._vmin @ matvec(self._vmin))
        y = matvec(self._vmax)
        ny = np.linalg.norm(y)
        if ny == 0:
            return 1.0
        self._vmax = y / ny
        hi = float(self._vmax @ matvec(self._vmax))
        return float(np.sqrt(max(lo, 0.0) / hi)) if hi > 0 else 1.0

    def step(self, tt, q, f, acc, gram=None):
        """Call after every accepted (projected) step with the state, its accelerations and, if there
        is one, the projection's factorised Gram matrix at ``q``."""
        if not self.active:
            return
        r = self.estimate(tt, q, gram)
        self.history = (self.history + [(tt, r, q.copy(), f.copy(), acc.copy())])[-3:]
        if len(self.history) < 3:
            return
        (t0, r0, *s0), (t1, r1, *s1), (t2, r2, *s2) = self.history
        if not (r1 < self.suspect and r1 <= r0 and r1 <= r2):
            return
        slope = max((r0 - r1) / (t1 - t0), (r2 - r1) / (t2 - t1))
        if r1 - slope * max(t1 - t0, t2 - t1) / 2 > r1 / 2:  # a shallow minimum cannot reach zero between steps
            return
        self.checks += 1
        from scipy.optimize import minimize_scalar

        best = (self.ratio(t1, s1[0]), t1, s1[0])
        for (a, sa), (b, sb) in (((t0, s0), (t1, s1)), ((t1, s1), (t2, s2))):
            path = hermite(a, sa, b, sb)
            res = minimize_scalar(lambda tt: self.ratio(tt, path(tt)), bounds=(a, b), method="bounded",
                                  options={"xatol": 1e-10 * max(1.0, abs(b))})
            if res.fun < best[0]:
                best = (float(res.fun), float(res.x), path(float(res.x)))
        if best[0] < self.tol:
            tt, q = best[1], best[2]
            err = SingularSystemError(
                f"singular configuration at t = {tt:.6g}: the constraint Jacobian loses rank there (smallest/"
                f"largest singular value {best[0]:.2g}), a change point where assembly branches cross; the motion "
                "past it is not determined by the model — stop before it or change the geometry")
            err.time, err.q = tt, dict(zip(self.cm.model.coordinate_names, q))
            raise err


def hermite(ta, a, tb, b):
    """The quintic Hermite interpolant ``q(t)`` on ``[ta, tb]`` of ``a = (q, q̇, q̈)`` at ``ta`` and ``b`` at ``tb``.

    >>> path = hermite(0.0, (np.array([0.0]), np.array([0.0]), np.array([2.0])),
    ...                1.0, (np.array([1.0]), np.array([2.0]), np.array([2.0])))
    >>> float(path(0.5)[0])    # t² exactly
    0.25
    """
    h = tb - ta

    def path(tt):
        s = (tt - ta) / h
        s2, s3, s4, s5 = s * s, s ** 3, s ** 4, s ** 5
        return ((1 - 10 * s3 + 15 * s4 - 6 * s5) * a[0] + h * (s - 6 * s3 + 8 * s4 - 3 * s5) * a[1]
                + h * h * 0.5 * (s2 - 3 * s3 + 3 * s4 - s5) * a[2] + (10 * s3 - 15 * s4 + 6 * s5) * b[0]
                + h * (-4 * s3 + 7 * s4 - 3 * s5) * b[1] + h * h * 0.5 * (s3 - 2 * s4 + s5) * b[2])
    return path
