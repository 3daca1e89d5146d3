"""Accelerations at one state, as Pinocchio's ``aba(model, data, q, v, tau)``: :func:`accelerations`.

For a network the coordinates are its joint coordinates (the relative formulation's, on the same
spanning tree): the recursive engine answers when it evaluates every element of the network
(:mod:`netdyn.recursive`: the articulated-body algorithm for an open tree, the KKT system of CRBA and
RNEA with the cut joints' constraints for closed loops); otherwise the relative formulation's symbolic
model does. For a model (any formulation, any domain) its own coordinates and the index-1 (KKT) form
``[M Φ_qᵀ; Φ_q 0] [q̈; λ] = [e − h; −γ]`` of its compiled functions.
"""
from __future__ import annotations

import numpy as np

from netdyn.errors import ModelError
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # names for the hints only
    from collections.abc import Mapping
from netdyn.numerics.functions.compiled import compile_model
from netdyn.recursive import TreeData
from netdyn.recursive.closed import forward_dynamics
from netdyn.recursive.planar import NotRecursive, tree_from_network
from netdyn.recursive.spatial import tree_from_spatial_network


def accelerations(system: Any, q: Any, v: Any, efforts: Any = None, t: float = 0.0,
                  params: Mapping[Any, Any] | None = None) -> np.ndarray:
    """``q̈`` at the state ``(q, v)`` with generalized ``efforts`` on the coordinates (doing positive work on
    them), like Pinocchio's ``aba``.

    ``system``: a network (joint coordinates: the relative formulation's ``theta_<joint>``/``thetaz_<joint>``
    … in its order) or a :class:`~netdyn.lagrange.model.LagrangianModel` (its own coordinates). ``q``, ``v`` and
    ``efforts``: arrays in that order, or dicts by coordinate name (a joint's name stands for its coordinate);
    an array in gives an array out, a dict a dict. Constrained models must be given a consistent state.

    >>> import numpy as np, netdyn
    >>> from netdyn.components.planar import RigidBody, Revolute, Gravity
    >>> net = netdyn.Network()
    >>> _ = net.add(RigidBody("bar", 2.0, 1/6), Gravity(g=10), Revolute("O", "ground", (0, 0), "bar", (-0.5, 0)))
    >>> acc = accelerations(net, {"O": 0.0}, {"O": 0.0})     # horizontal bar: -m g l/2 / (I + m l²/4)
    >>> round(float(acc["theta_O"]), 9)
    -15.0
    """
    if not (hasattr(system, "derive") or hasattr(system, "elements")):
        raise ModelError(f"accelerations() takes a network or a model, got {type(system).__name__}")
    if hasattr(system, "elements"):
        try:
            return _recursive(system, q, v, efforts, params)
        except NotRecursive:
            system = system.model(formulation={"planar": "relative"})  # planar and spatial mechanisms alike
    return _symbolic(system, q, v, efforts, t, params)


def _vector(names, values, what, aliases=None):
    if values is None:
        return np.zeros(len(names))
    if isinstance(values, dict):
        index = {n: i for i, n in enumerate(names)}
        out = np.zeros(len(names))
        for k, x in values.items():
            key = str(k)
            key = key if key in index else (aliases or {}).get(key, key)
            if key not in index:
                raise ModelError(f"unknown coordinate {str(k)!r} in {what}; the coordinates are {names}")
            out[index[key]] = float(x)
        return out
    out = np.asarray(values, dtype=float).reshape(-1)
    if out.size != len(names):
        raise ModelError(f"{what} has {out.size} values; the coordinates are {len(names)}: {names}")
    return out


def _answer(names, qdd, like):
    return dict(zip(names, qdd.tolist())) if isinstance(like, dict) else qdd


def _recursive(net, q, v, efforts, params):
    from netdyn.graph.spatial import is_spatial

    tree = tree_from_spatial_network(net, params) if is_spatial(net) else tree_from_network(net, params)
    names = list(tree.coordinate_names)
    aliases = {j: names[k] for j, k in tree.joint_coordinate.items()}
    qv, vv = _vector(names, q, "q", aliases), _vector(names, v, "v", aliases)
    tau = _vector(names, efforts, "efforts", aliases)
    m = tree.model
    qdd = forward_dynamics(m, TreeData(m), qv, vv, tau)
    qdd = qdd[0] if isinstance(qdd, tuple) else qdd
    return _answer(names, np.asarray(qdd, dtype=float), q)


def _symbolic(model, q, v, efforts, t, params):
    from netdyn.numerics.dae.initial import joint_table

    cm = compile_model(model)
    names = model.coordinate_names
    aliases = {}
    try:
        table = joint_table(model)
        by_expr = {str(c): n for c, n in zip(model.coordinates, names)}
        aliases = {k: by_expr[str(e)] for k, (_, _, e) in table.items()
                   if not k.endswith("]") and str(e) in by_expr}
    except (KeyError, AttributeError):  # not a mechanism
        pass
    qv, vv = _vector(names, q, "q", aliases), _vector(names, v, "v", aliases)
    tau = _vector(names, efforts, "efforts", aliases)
    p = cm.parameter_vector(params)
    kkt = cm.kkt(float(t), qv, vv, p)
    r = np.array(kkt.r, dtype=float)
    r[:cm.n] += tau
    z = np.linalg.lstsq(kkt.K, r, rcond=None)[0] if kkt.c is not None else np.linalg.solve(kkt.K, r)
    return _answer(names, z[:cm.n], q)
