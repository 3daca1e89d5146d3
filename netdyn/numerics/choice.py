"""Which integrator a system gets: the choice rule, in one place.

``simulate(method="auto")`` and ``netdyn info`` both ask :func:`choose_method`:

1. a network whose elements are all linear with numeric values, of index one, with no
   ``params`` override → ``"linear"`` (stamped sparse matrices, Radau IIA);
2. otherwise, at the consistent initial state: if the KKT matrix ``[[M, Cᵀ], [C, 0]]`` is
   regular and the index-1 ODE is not stiff (fastest eigenvalue × span ≤ 1e3) → ``"projection"``;
3. otherwise (flows without inertia, or stiff) → ``"ida"``.

>>> import numpy as np
>>> from netdyn import LagrangianModel, coordinates, t
>>> from netdyn.numerics.compiled import compile_model
>>> x, = coordinates("x,")
>>> cm = compile_model(LagrangianModel([x], T=x.diff(t)**2/2, V=x**2/2))
>>> choose_method(cm, 0, 1, np.zeros(1), np.zeros(1), cm.parameter_vector()).name
'projection'
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from netdyn.errors import LockedMechanismError
from netdyn.graph.network import as_model
from netdyn.numerics.compiled import compile_model
from netdyn.numerics.initial import consistent_initial_conditions
from netdyn.numerics.linearsim import try_linear

STIFFNESS_RATIO = 1e3


@dataclass(frozen=True)
class Choice:
    """The integrator picked and why (``netdyn info`` prints ``reason``)."""

    name: str
    reason: str


def kkt_regular(cm, tt, q, f, p):
    """Whether the index-1 matrix is regular at a state (relative pivot size above 1e-11).

    Without constraints a coordinate whose column of M is empty (a flow without inertia) makes it
    singular whatever the state; with constraints, a structurally singular pattern of
    ``[[M, Cᵀ], [C, 0]]`` (a circuit driven by current sources: flows without inertia that no
    constraint fixes) does too. Both are decided from the pattern, with no evaluation (the SVD of a
    dense KKT matrix of a 1,000-section ladder took a second).
    """
    if not cm.has_constraints and len(cm.inertial_columns()) < cm.n:
        return False
    if cm.has_constraints and cm._tree is None and not kkt_structurally_regular(cm.eq):  # (a tree: M full)
        return False
    K, _, _ = cm.kkt(tt, q, f, p)
    s = np.linalg.svd(K, compute_uv=False)
    return s.size == 0 or s[-1] > 1e-11 * s[0]


def kkt_structurally_regular(eq):
    """Whether the pattern of ``[[M, Cᵀ], [C, 0]]`` (``C = [Φ_q; A]``) admits a regular matrix.

    >>> from netdyn import LagrangianModel, coordinates, t
    >>> x, y = coordinates("x, y")
    >>> kkt_structurally_regular(LagrangianModel([x, y], T=x.diff(t)**2/2, D=y.diff(t)**2/2,
    ...                                          flow_constraints=[x.diff(t) - 1]).derive())
    False
    """
    import scipy.sparse as sps
    from scipy.sparse.csgraph import structural_rank

    n, m1 = eq.n, len(eq.phi)
    keys = list(eq.M) + [(n + j, i) for (j, i) in eq.Phi_q] + [(i, n + j) for (j, i) in eq.Phi_q] \
        + [(n + m1 + k, i) for (k, i) in eq.A] + [(i, n + m1 + k) for (k, i) in eq.reaction]
    size = n + m1 + len(eq.a0)
    if not keys:
        return size == 0
    rows, cols = np.array(keys, dtype=np.intp).T
    return bool(structural_rank(sps.csr_matrix((np.ones(rows.size), (rows, cols)), shape=(size, size))) == size)


def stiffness(cm, t0, t1, q, f, p, max_states=400):
    """Fastest decay rate × span of the index-1 ODE at a state (None above ``max_states`` states).

    The Jacobian of the right-hand side is taken by finite differences.
    """
    n = cm.n
    if 2 * n > max_states:
        return None

    def rhs(y):
        if getattr(cm, "_tree", None) is not None and not cm.has_constraints:  # an open tree: O(n) ABA
            return np.concatenate([y[n:], cm.accelerations(t0, y[:n], y[n:], p)[0]])
        K, r, _ = cm.kkt(t0, y[:n], y[n:], p)
        return np.concatenate([y[n:], np.linalg.lstsq(K, r, rcond=None)[0][:n]])

    y = np.concatenate([q, f])
    r0 = rhs(y)
    J = np.empty((2 * n, 2 * n))
    for j in range(2 * n):
        h = 1e-7 * (1.0 + abs(y[j]))
        y2 = y.copy()
        y2[j] += h
        J[:, j] = (rhs(y2) - r0) / h
    lam = np.linalg.eigvals(J)
    return float(min(np.max(np.abs(lam)), np.max(-lam.real)) * (t1 - t0))


def choose_method(cm, t0, t1, q, f, p):
    """The symbolic path's integrator for a compiled model at its consistent initial state."""
    if not kkt_regular(cm, t0, q, f, p):
        return Choice("ida", "the constrained mass matrix is singular (flows without inertia): "
                             "a DAE for IDA")
    ratio = stiffness(cm, t0, t1, q, f, p)
    if ratio is not None and ratio > STIFFNESS_RATIO:
        return Choice("ida", f"stiff: fastest decay rate × span = {ratio:.3g} > {STIFFNESS_RATIO:g}")
    return Choice("projection", "regular constrained mass matrix, not stiff"
                  + ("" if ratio is not None else " (stiffness not tested above 400 states)"))


def method_for(system, t_span=(0.0, 1.0), formulation=None, guess=None):
    """The :class:`Choice` ``simulate(system, t_span)`` makes with ``method="auto"`` and no ``params``
    (the same steps in the same order: linear, circuit, then the rule on the model without redundant
    constraints)."""
    from netdyn.numerics.nonlinearsim import try_circuit
    from netdyn.numerics.structure import prepare
    if try_linear(system, formulation) is not None:
        return Choice("linear", "every element linear with numeric values and the DAE of index one: "
                                "stamped sparse matrices, Radau IIA")
    if try_circuit(system, formulation) is not None:
        return Choice("circuit", "linear except for nonlinear dissipators (diodes): Newton on the stamped "
                                 "matrices, variable-order BDF")
    model = as_model(system, formulation)
    cm = compile_model(model)
    p = cm.parameter_vector()
    q, f = consistent_initial_conditions(cm, t_span[0], None, None, p, guess=guess)
    try:
        _, cm, p = prepare(model, cm, t_span[0], q, p, None)
    except LockedMechanismError:  # simulate refuses it; the rule still describes the model as given
        pass
    return choose_method(cm, t_span[0], t_span[1], q, f, p)
