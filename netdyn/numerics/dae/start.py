"""The symbolic paths' common start: the model compiled, its parameters, a consistent state — made once.

``projection`` and ``ida`` (and ``netdyn info``) start from the same numbers: the network's model in the
asked formulation, compiled; the parameter vector with ``params`` applied; initial conditions completed to
satisfy the constraints; redundant constraints removed (:func:`~netdyn.numerics.dae.structure.prepare`).
:class:`SymbolicStart` computes each once, when a path first asks, and also answers the two questions that
decide between those paths: is the index-1 (KKT) matrix regular, and how stiff is the index-1 ODE.

>>> from types import SimpleNamespace
>>> from netdyn import LagrangianModel, coordinates, t
>>> x, = coordinates("x,")
>>> call = SimpleNamespace(system=LagrangianModel([x], T=x.diff(t)**2/2, V=x**2/2), formulation=None,
...                        params=None, q0={"x": 1.0}, f0=None, guess=None, t_span=(0.0, 1.0), rtol=None, atol=None)
>>> start = SymbolicStart(call)
>>> start.q.tolist(), start.kkt_regular, start.stiffness < 1e3
([1.0], True, True)
"""
from __future__ import annotations

from functools import cached_property

import numpy as np

from netdyn.errors import LockedMechanismError
from netdyn.graph.network import as_model
from netdyn.numerics.dae.initial import consistent_initial_conditions, integrator_tolerance
from netdyn.numerics.dae.structure import prepare
from netdyn.numerics.functions.compiled import compile_model
from netdyn.validate import parameter_values, requirements

#: the relative tolerance of the symbolic paths when ``rtol`` is not given
DEFAULT_RTOL = 1e-8
#: fastest decay rate × span above which the index-1 ODE counts as stiff (IDA takes it)
STIFFNESS_RATIO = 1e3


class SymbolicStart:
    """What the symbolic paths share, computed on first use from a problem record (``system``,
    ``formulation``, ``params``, ``q0``, ``f0``, ``guess``, ``t_span``, ``rtol``, ``atol``).

    ``model``, ``cm`` and ``p`` are those left after :func:`~netdyn.numerics.dae.structure.prepare` (redundant
    constraints out); with ``tolerate_locked`` a locked mechanism keeps the model as given (``netdyn info``
    describes it; ``simulate`` refuses it).
    """

    def __init__(self, problem, tolerate_locked=False):
        self.problem = problem
        self._tolerate_locked = tolerate_locked

    @cached_property
    def _prepared(self):
        pb = self.problem
        model = as_model(pb.system, pb.formulation)
        cm = compile_model(model)
        parameter_values(pb.params, requirements(model))  # params= overrides get the constructors' sign checks
        params = formulation_parameters(model, cm, pb.params)
        p = cm.parameter_vector(params)
        rtol = DEFAULT_RTOL if pb.rtol is None else pb.rtol
        q, f = consistent_initial_conditions(cm, pb.t_span[0], pb.q0, pb.f0, p, guess=pb.guess,
                                             tol=integrator_tolerance(rtol, pb.atol))
        try:
            model, cm, p = prepare(model, cm, pb.t_span[0], q, p, params)
        except LockedMechanismError:
            if not self._tolerate_locked:
                raise
        return model, cm, p, q, f

    model = property(lambda self: self._prepared[0], doc="the model integrated (redundant constraints out)")
    cm = property(lambda self: self._prepared[1], doc="its :class:`~netdyn.numerics.functions.compiled.CompiledModel`")
    p = property(lambda self: self._prepared[2], doc="its parameter vector")
    q = property(lambda self: self._prepared[3], doc="consistent initial displacements")
    f = property(lambda self: self._prepared[4], doc="consistent initial flows")

    @cached_property
    def kkt_regular(self):
        """Whether the index-1 matrix is regular at the start (:func:`kkt_regular`)."""
        return bool(kkt_regular(self.cm, self.problem.t_span[0], self.q, self.f, self.p))

    @cached_property
    def stiffness(self):
        """Fastest decay rate × span at the start (:func:`stiffness`; ``None`` above 400 states)."""
        t0, t1 = self.problem.t_span
        return stiffness(self.cm, t0, t1, self.q, self.f, self.p)

    @property
    def stiff(self):
        """Whether :attr:`stiffness` exceeds :data:`STIFFNESS_RATIO`."""
        return self.stiffness is not None and self.stiffness > STIFFNESS_RATIO


def formulation_parameters(model, cm, params):
    """``params`` without the network's symbols that the formulation left out of the model.

    A resistor alone in a cut-set (a bridge to a sub-circuit) carries no loop current: the loop
    formulation has no variable through it and no term with its value, so its symbol is a parameter of
    the network but not of the model. Such a value changes nothing and is dropped; a name that is no
    symbol of the network at all stays an error (``ParameterError`` from ``parameter_vector``).

    >>> from netdyn import LagrangianModel, coordinates, t
    >>> x, = coordinates("x,")
    >>> m = LagrangianModel([x], T=x.diff(t)**2/2)
    >>> formulation_parameters(m, compile_model(m), {"k": 1.0})    # not the network's: kept (and refused later)
    {'k': 1.0}
    """
    net = (getattr(model, "metadata", None) or {}).get("network")
    if not params or net is None:
        return params
    known = {str(s) for s in cm.parameters} | {str(s) for s in cm.inputs}
    of_network = set()
    for group in ("elements", "bodies"):
        for obj in (getattr(net, group, None) or {}).values():
            for v in (getattr(obj, "values", None) or {}).values():
                of_network |= {str(s) for s in getattr(v, "free_symbols", ())}
    return {k: v for k, v in params.items() if str(k) in known or str(k) not in of_network}


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
