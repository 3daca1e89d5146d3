"""The relative (spanning-tree) formulation of a planar open tree, evaluated by the recursive path.

The symbolic relative formulation writes every body's pose as an expression of the joint coordinates
of all joints between it and ground, so its mass matrix and forces grow like n³ in symbols: the 20-link
chain took 6 s to derive and 17 s to compile. For a network of bodies on Revolute, Prismatic and Weld
joints under Gravity, with no cut joint, the same equations ``M(q) q̈ + h(q, q̇) = 0`` are the
joint-space dynamics of the tree that :func:`netdyn.recursive.planar.tree_from_network` builds (its
coordinates are the relative formulation's ``theta_<joint>``/``s_<joint>``, with the same signs):
``M`` by the composite-rigid-body algorithm, ``h`` by recursive Newton–Euler with zero accelerations,
compiled once per process (numba), O(n) and O(n²) a call.

:func:`tree_dynamics` returns a :class:`TreeDynamics` for such a model from :data:`MIN_BODIES` bodies on
(below, the symbolic path is cheap and stays the reference) and None otherwise;
:class:`~netdyn.numerics.compiled.CompiledModel` then evaluates through it and derives the symbolic
equations only when something asks for them (``model.equations()``, an export, a linearization).
``tests/test_treedynamics.py`` checks it against the symbolic path to 1e-9.

>>> import numpy as np
>>> from netdyn.linkages import pendulum
>>> model = pendulum(np.ones(8), np.ones(8)).model(formulation="relative")
>>> td = tree_dynamics(model)
>>> M, h = td.dynamics(np.zeros(8), np.zeros(8), np.zeros(0))
>>> M.shape, round(float(h[-1]), 6)      # the last link, horizontal: m g l / 2
((8, 8), 4.905)
"""
from __future__ import annotations

import numpy as np
import sympy as sp

from netdyn.symbols import t

MIN_BODIES = 8  # from this many bodies on the recursive evaluator; smaller trees keep the symbolic path


def tree_dynamics(model, min_bodies=MIN_BODIES):
    """A :class:`TreeDynamics` for a relative-formulation planar open tree of at least ``min_bodies``
    bodies built from bodies, Revolute/Prismatic/Weld joints and Gravity only; else None."""
    meta = (model.metadata or {}).get("planar")
    net = (model.metadata or {}).get("network")
    if not meta or meta.formulation != "relative" or net is None or meta.cuts:
        return None
    if len(meta.bodies or ()) < min_bodies or model.constraints or model.flow_constraints:
        return None
    if any(not getattr(el, "planar", False) for el in net.elements.values()):
        return None
    try:
        return TreeDynamics(model, net)
    except (ValueError, TypeError):
        return None


class TreeDynamics:
    """``M(q)`` and ``h(q, q̇)`` of a relative-formulation planar tree by the recursive algorithms.

    ``parameters`` are the model's free symbols (sorted by name, as the symbolic derivation sorts them);
    each parameter vector gets its own numeric :class:`~netdyn.recursive.model.TreeModel`, built once.
    """

    def __init__(self, model, net):
        from netdyn.recursive.planar import NotRecursive, tree_from_network

        self.model, self.net = model, net
        params = set()
        for e in list(model.T_terms) + list(model.V_terms) + list(model.D_terms) + list(model.efforts.values()):
            params |= sp.sympify(e).free_symbols
        params.discard(t)
        self.parameters = sorted(params, key=str)
        self.names = [str(s) for s in self.parameters]
        self._trees = {}
        try:
            tree = self._tree(np.array([_probe(s) for s in self.parameters]))
        except NotRecursive as exc:
            raise ValueError(str(exc)) from None
        if tree.coordinate_names != list(model.coordinate_names):
            raise ValueError("the tree's coordinates are not the model's")
        self.n = len(tree.coordinate_names)

    def _tree(self, vector):
        from netdyn.recursive import TreeData
        from netdyn.recursive.planar import tree_from_network

        key = vector.tobytes()
        entry = self._trees.get(key)
        if entry is None:
            tree = tree_from_network(self.net, dict(zip(self.names, vector.tolist())))
            entry = self._trees[key] = (tree, TreeData(tree.model))
        return entry[0]

    def dynamics(self, q, f, vector):
        """``(M, h)`` at ``(q, q̇)`` for the parameter values ``vector`` (in :attr:`parameters` order)."""
        from netdyn.recursive import bias_forces, crba

        self._tree(vector)
        tree, data = self._trees[vector.tobytes()]
        return crba(tree.model, data, q), bias_forces(tree.model, data, q, f)


def _probe(symbol):
    """A value for building the probe tree: the model default where there is one, else 1 (positive)."""
    return 1.0
