"""The relative (spanning-tree) formulation of a planar open tree, evaluated by the recursive path.

The symbolic relative formulation writes every body's pose as an expression of the joint coordinates
of all joints between it and ground, so its mass matrix and forces grow like n³ in symbols: the 20-link
chain took 6 s to derive and 17 s to compile. For a network of bodies on Revolute, Prismatic and Weld
joints under Gravity, with no cut joint, the same equations ``M(q) q̈ + h(q, q̇) = 0`` are the
joint-space dynamics of the tree that :func:`netdyn.recursive.planar.tree_from_network` builds (its
coordinates are the relative formulation's ``theta_<joint>``/``s_<joint>``, with the same signs):
``M`` by the composite-rigid-body algorithm, ``h`` by recursive Newton–Euler with zero accelerations,
``q̈`` by the articulated-body algorithm, compiled once per process (numba), O(n) a call (``M``: O(n²)).
Actuators, torques, forces, springs and dampers enter as joint efforts and body wrenches
(:mod:`netdyn.numerics.functions.treeloads`). Cut joints (closed loops) give their constraint rows, Jacobian and
acceleration bias through the tree's kinematics (:mod:`netdyn.recursive.constraints`), checked once
against the symbolic rows; the KKT system ``[[M, Φ_qᵀ], [Φ_q, 0]]`` is then solved and projected as
for any constrained model.

:func:`tree_dynamics` returns a :class:`TreeDynamics` for such a model from :data:`MIN_BODIES` bodies on
(below, the symbolic path is cheap and stays the reference) and None otherwise;
:class:`~netdyn.numerics.functions.compiled.CompiledModel` then evaluates through it, and neither the bodies'
kinetic terms (:mod:`netdyn.graph.deferred`) nor the symbolic equations are written until something
asks for them (``model.equations()``, an export, a linearization).
``tests/test_treedynamics.py`` checks it against the symbolic path to 1e-9.

>>> import numpy as np
>>> from netdyn.linkages import pendulum
>>> model = pendulum(np.ones(8), np.ones(8)).model(formulation="relative")
>>> td = tree_dynamics(model)
>>> M, h = td.dynamics(0.0, np.zeros(8), np.zeros(8), np.zeros(0))
>>> M.shape, round(float(h[-1]), 6)      # the last link, horizontal: m g l / 2
((8, 8), 4.905)
"""
from __future__ import annotations

import numpy as np
import sympy as sp

from netdyn.numerics.functions.treeloads import LOADS, TreeLoads
from netdyn.symbols import t

MIN_BODIES = 8  # from this many bodies on the recursive evaluator; smaller trees keep the symbolic path


def tree_dynamics(model, min_bodies=MIN_BODIES):
    """A :class:`TreeDynamics` for a relative-formulation planar open tree of at least ``min_bodies``
    bodies built from bodies, Revolute/Prismatic/Weld joints, Gravity and the loads of
    :mod:`netdyn.numerics.functions.treeloads`; else None."""
    from netdyn.recursive.planar import NotRecursive

    meta = (model.metadata or {}).get("planar")
    net = (model.metadata or {}).get("network")
    if not meta or meta.formulation != "relative" or net is None:
        return None
    if len(meta.bodies or ()) < min_bodies or model.flow_constraints:
        return None
    if len(model.constraints) != sum(len(meta.constraints.get(j, ())) for j in meta.cuts):
        return None  # constraints other than the cut joints' (a driver)
    if any(not getattr(el, "planar", False) for el in net.elements.values()):
        return None
    try:
        return TreeDynamics(model, net)
    except (ValueError, TypeError, NotRecursive):
        return None


def _parameters(model, meta, net):
    """The model's free symbols, sorted by name (as the symbolic derivation sorts them), from the values of
    the elements (bodies, joints: the poses; gravity; the loads) and the symbols ``symbolic=True`` made,
    without scanning the model's expressions (n² symbols for a chain)."""
    from netdyn.numerics.functions.treeloads import is_load, value_expressions

    exprs = [v for values in meta.body_values.values() for v in values.values()]
    for el in net.elements.values():
        if getattr(el, "is_joint", False):
            exprs += [*el.point_a, *el.point_b, *getattr(el, "axis", ()), *el.values.values()]
        elif is_load(el):
            exprs += value_expressions(el)
        else:
            exprs += list(el.values.values())
    exprs += list(model.parameters)
    params = set()
    for e in exprs:
        params |= sp.sympify(e).free_symbols
    params.discard(t)
    return sorted(params, key=str)


class TreeDynamics:
    """``M(q)``, ``h(t, q, q̇)`` and ``q̈`` of a relative-formulation planar tree by the recursive algorithms.

    ``parameters`` are the model's free symbols (sorted by name, as the symbolic derivation sorts them);
    each parameter vector gets its own numeric :class:`~netdyn.recursive.model.TreeModel`, built once.
    """

    def __init__(self, model, net):
        from netdyn.recursive.planar import NotRecursive

        self.model, self.net = model, net
        self.parameters = _parameters(model, model.metadata["planar"], net)
        self.names = [str(s) for s in self.parameters]
        self._trees = {}
        try:
            tree, _ = self._tree(np.ones(len(self.parameters)))  # a probe: the structure, not the numbers
        except NotRecursive as exc:
            raise ValueError(str(exc)) from None
        if tree.coordinate_names != list(model.coordinate_names):
            raise ValueError("the tree's coordinates are not the model's")
        self.n = len(tree.coordinate_names)
        self.m = int(tree.model.m)  # cut-joint constraint rows
        if self.m != len(model.constraints):
            raise ValueError("the tree's cut-joint rows are not the model's constraints")
        if self.m:
            self._check_rows(model)
        self.loads = TreeLoads(net, tree, self.parameters)  # NotRecursive for a load it does not take

    def _check_rows(self, model):
        """The cut joints' rows must be the symbolic constraints, row by row up to a sign each (taken
        over, so that the multipliers and their labels mean the same): compared at a random state."""
        qs = sp.symbols(f"_q0:{self.n}")
        sub = dict(zip(model.coordinates, qs))
        fn = sp.lambdify([qs, self.parameters], [sp.sympify(c).xreplace(sub) for c in model.constraints], "numpy")
        vector = np.linspace(0.8, 1.3, len(self.parameters))
        q = np.random.default_rng(3).uniform(-1, 1, self.n)
        self._sign = np.ones(self.m)
        phi = self.constraints(0.0, q, np.zeros(self.n), vector)[0]
        ref = np.asarray(fn(q, vector), dtype=float)
        tol = 1e-9 * (1 + np.max(np.abs(ref)))
        flip = np.abs(phi + ref) <= tol  # the assembly writes P_a − P_b where the tree writes P_b − P_a
        if np.any(np.abs(ref) <= tol) or np.any(~flip & (np.abs(phi - ref) > tol)):
            raise ValueError("the tree's cut-joint rows differ from the symbolic constraints")
        self._sign = np.where(flip, -1.0, 1.0)

    def constraints(self, tt, q, f, vector):
        """``(φ, Φ_q, γ)`` of the cut joints: residuals, Jacobian through the tree's kinematic map and
        ``γ = φ̈ − Φ_q q̈`` (:func:`netdyn.recursive.constraints.constraint_terms`)."""
        from netdyn.recursive.constraints import constraint_terms

        tree, data = self._tree(vector)
        phi, J, gamma = constraint_terms(tree.model, data, q, f)
        return self._sign * phi, self._sign[:, None] * J, self._sign * gamma

    def _tree(self, vector):
        from netdyn.recursive import TreeData
        from netdyn.recursive.planar import tree_from_network

        key = vector.tobytes()
        entry = self._trees.get(key)
        if entry is None:
            tree = tree_from_network(self.net, dict(zip(self.names, vector.tolist())), ignore=LOADS)
            entry = self._trees[key] = (tree, TreeData(tree.model))
        return entry

    def _efforts(self, tree, tt, q, f, vector, data):
        if not self.loads:
            return None, None
        return self.loads.efforts(tree, tt, q, f, vector, data)

    def dynamics(self, tt, q, f, vector):
        """``(M, h)`` at ``(t, q, q̇)`` for the parameter values ``vector`` (in :attr:`parameters` order)."""
        from netdyn.recursive import crba, rnea

        tree, data = self._tree(vector)
        fext, tau = self._efforts(tree, tt, q, f, vector, data)
        h = rnea(tree.model, data, q, f, np.zeros(self.n), fext)
        return crba(tree.model, data, q), h if tau is None else h - tau

    def accelerations(self, tt, q, f, vector):
        """``q̈`` at ``(t, q, q̇)`` by the articulated-body algorithm (O(n))."""
        from netdyn.recursive import aba

        tree, data = self._tree(vector)
        fext, tau = self._efforts(tree, tt, q, f, vector, data)
        return aba(tree.model, data, q, f, np.zeros(self.n) if tau is None else tau, fext)

    def power(self, tt, q, f, vector):
        """``(dissipated, supplied)`` power at one state."""
        if not self.loads:
            return 0.0, 0.0
        tree, data = self._tree(vector)
        return self.loads.power(tree, tt, q, f, vector, data)

    def energy(self, tt, q, f, vector):
        """Stored energy ``T + V`` at one state: the bodies' kinetic and gravitational energy
        (:func:`netdyn.recursive.energy`, zero height at the ground's origin) and the springs'."""
        from netdyn.recursive import energy

        tree, data = self._tree(vector)
        T, V = energy(tree.model, data, q, f)
        return T + V + (self.loads.potential(tree, tt, vector, data) if self.loads else 0.0)

    def time_expressions(self):
        """The load values that are functions of time (for the integrator's breakpoints)."""
        return self.loads.time_expressions()

    def kernel(self, p):
        """What the projection integrator calls in place of the KKT solve (:class:`TreeKernel`); None for
        a closed tree (the KKT system of ``M`` and the cut rows, solved and projected as any other)."""
        return None if self.m else TreeKernel(self, p)


class TreeKernel:
    """The projection integrator's right-hand side for an open tree: ``q̈`` by the articulated-body
    algorithm, no multipliers, nothing to project (the interface of
    :class:`~netdyn.numerics.mechanics.fastkkt.FastKKT` the integrator uses)."""

    structured = True

    def __init__(self, td, p):
        self.td, self.p = td, p
        self._none = np.zeros(0)

    def solve(self, tt, q, f, v=None):
        return self.td.accelerations(tt, q, f, self.p.vector), self._none, self._none

    def power(self, tt, q, f, lam, mu):
        return self.td.power(tt, q, f, self.p.vector)

    def project(self, tt, q, f, iterations=8):
        return q, f, None
