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

from netdyn.errors import SingularSystemError
from netdyn.model import LagrangianModel


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
    return dependent_rows(c["Phi_q"])


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


def mobility(system, q0=None, guess=None, t=0.0, params=None):
    """Degrees of freedom at a configuration assembled from ``q0``/``guess`` (see :func:`netdyn.simulate`)."""
    from netdyn.initial import consistent_initial_conditions
    from netdyn.numeric import compile_model
    from netdyn.simulate import as_model

    model = as_model(system)
    cm = compile_model(model)
    p = cm.parameter_vector(params)
    q, _ = consistent_initial_conditions(cm, t, q0, {}, p, guess=guess)
    drop = redundant_constraints(cm, t, q, p)
    rank = cm.m1 - len(drop)
    planar = model.metadata.get("planar")
    return Mobility(dof=cm.n - rank - _flow_rank(cm, t, q, p), rank=rank,
                    gruebler=planar["gruebler"] if planar else None,
                    redundant=[model.constraint_labels[j] for j in drop], q=q)


def _flow_rank(cm, tt, q, p):
    if not cm.m2:
        return 0
    return int(np.linalg.matrix_rank(cm.constraints(tt, q, np.zeros(cm.n), p)["A"]))


def prepare(model, cm, tt, q, p, params=None):
    """Leave out redundant constraints found at ``q`` (recompiling); refuse a planar linkage that cannot move.

    Returns ``(model, cm, p)``; unchanged when nothing is redundant.
    """
    from netdyn.numeric import compile_model

    drop = redundant_constraints(cm, tt, q, p)
    if drop:
        model = without_constraints(model, drop)
        cm = compile_model(model)
        p = cm.parameter_vector(params)
    planar = model.metadata.get("planar")
    if planar and cm.m1 >= cm.n:
        rheonomic = any(bool(e != 0) for e in cm.eq.Phi_t)
        if not rheonomic:
            raise SingularSystemError(
                f"the mechanism {model.name!r} cannot move: its {cm.m1} independent constraints fix all "
                f"{cm.n} coordinates (Grübler count {planar['gruebler']}); it is over-constrained — remove a "
                "joint or free one")
    return model, cm, p


def integration_failure(cm, tt, q, p, message, tol=1e-3):
    """The error for a failed step at ``(tt, q)``: a :class:`SingularSystemError` naming the time when the
    constraint Jacobian has (nearly) lost rank there, else an :class:`~netdyn.errors.IntegrationError`."""
    from netdyn.errors import IntegrationError

    if cm.m1 + cm.m2:
        c = cm.constraints(tt, q, np.zeros(cm.n), p)
        s = np.linalg.svd(np.vstack([c["Phi_q"], c["A"]]), compute_uv=False)
        if s.size and s[-1] < tol * s[0]:
            return SingularSystemError(
                f"singular configuration at t = {tt:.6g}: the constraint Jacobian has nearly lost rank "
                f"(smallest/largest singular value {s[-1] / s[0]:.2g}), as at a dead centre or a change point "
                "where links align; the motion cannot be continued through it — stop before it or change the "
                "loads or the geometry")
    return IntegrationError(f"integration failed at t = {tt:.6g}: {message}")
