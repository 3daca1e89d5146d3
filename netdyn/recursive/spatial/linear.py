"""Linearization of a spatial tree by numeric derivatives of the recursive algorithms.

``ẋ = f(x, u)`` with ``x = [q; q̇]`` (tree coordinates) and ``f = [q̇; aba(q, q̇, τ(u) + Q(t, q, q̇))]``:
the articulated-body algorithm with the loads' generalised efforts (:mod:`.loads`). ``A = ∂f/∂x`` by
**central differences with one Richardson extrapolation** (steps ``h`` and ``h/2``, ``h = 1e-3·(1 + |xᵢ|)``:
truncation error O(h⁴), round-off ≈ 1e-13·|f|/h; measured within 1e-10 of the symbolic linearization on
the tests' chains). The inputs are joint actuators (their efforts; ``B`` is exact, ``f`` being affine in
τ), the outputs tree coordinates and their rates. Positions no equation depends on (ignorable, a free
shaft's angle) are left out of the states, as :func:`netdyn.linearize` does. Closed chains are not
offered (their states need the constraint partitioning of the symbolic path).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from netdyn.errors import ModelError, OperatingPointError

from ..algorithms import aba
from ..model import TreeData
from ..planar import NotRecursive
from .tree import coordinates_from_poses, tree_from_spatial_network

STEP = 1e-3


def tree_linearization(net: Any, q_op: Any = None, f_op: Any = None, inputs: Any = (), outputs: Any = (),
                       params: Any = None, guess: Any = None, tol: float = 1e-7) -> tuple:
    """``(A, B, C, D, states, inputs, outputs)`` of a spatial open tree at ``(q_op, f_op)`` (tree-coordinate
    names; missing ones from ``guess``, absolute body poses allowed, else 0). Raises
    :class:`~netdyn.recursive.planar.NotRecursive` for what the symbolic path must do.

    >>> import numpy as np
    >>> from netdyn import Network
    >>> from netdyn.components.spatial import RigidBody, Revolute, Gravity
    >>> net = Network()
    >>> _ = net.add(RigidBody("arm", 1.0, (0.1, 0.1, 0.05), com=(0, 0, -1.0)), Gravity(),
    ...             Revolute("A", "ground", (0, 0, 0), "arm", (0, 0, 0), axis=(1, 0, 0)))
    >>> A, B, C, D, states, inputs, outputs = tree_linearization(net)
    >>> states, np.round(A, 8).tolist()                      # a pendulum: ω² = m g l / (I + m l²)
    (['thetaz_A', 'thetaz_A_dot'], [[0.0, 1.0], [-8.91818182, 0.0]])
    """
    tree = tree_from_spatial_network(net, params)
    m = tree.model
    if m.m:
        raise NotRecursive("a closed chain: the recursive linearization takes open trees")
    names = tree.coordinate_names
    start = {**coordinates_from_poses(tree, dict(guess or {})), **dict(guess or {}), **dict(q_op or {})}
    unknown = [k for k in {**dict(q_op or {}), **dict(f_op or {})} if k not in names]
    if unknown:
        raise NotRecursive(f"q_op/f_op name {unknown}, not joint coordinates of the recursive tree {names}")
    q = np.array([float(start.get(n, 0.0)) for n in names])
    qd = np.array([float(dict(f_op or {}).get(n, 0.0)) for n in names])
    acts = [_actuator(net, tree, name) for name in inputs]
    data, loads, nq = TreeData(m), tree.loads, m.nq

    def f(x):
        Q = np.zeros(nq) if loads is None else loads.generalized(0.0, x[:nq], x[nq:])
        return np.concatenate([x[nq:], aba(m, data, x[:nq], x[nq:], Q)])

    x0 = np.concatenate([q, qd])
    f0 = f(x0)
    if np.max(np.abs(f0), initial=0.0) > tol:
        raise OperatingPointError(f"the operating point is not an equilibrium: accelerations {f0[nq:].round(9)} "
                                  f"of {names} (tolerance {tol:g}); pick q_op where the loads balance")
    A = np.zeros((2 * nq, 2 * nq))
    for i in range(2 * nq):
        h = STEP * (1 + abs(x0[i]))
        d = [(f(x0 + s * np.eye(2 * nq)[i]) - f(x0 - s * np.eye(2 * nq)[i])) / (2 * s) for s in (h, h / 2)]
        A[:, i] = (4 * d[1] - d[0]) / 3
    B = np.zeros((2 * nq, len(acts)))
    for j, k in enumerate(acts):
        tau = np.zeros(nq)
        tau[k] = 1.0
        Q = np.zeros(nq) if loads is None else loads.generalized(0.0, q, qd)
        B[nq:, j] = aba(m, data, q, qd, Q + tau) - f0[nq:]
    states = names + [n + "_dot" for n in names]
    scale = max(1.0, np.max(np.abs(A)))
    keep = [i for i in range(2 * nq) if i >= nq or np.max(np.abs(A[:, i])) > 1e-9 * scale
            or states[i] in outputs]
    A, B = A[np.ix_(keep, keep)], B[keep]
    states = [states[i] for i in keep]
    C = np.zeros((len(outputs), len(keep)))
    for r, name in enumerate(outputs):
        if name not in states:
            raise NotRecursive(f"output {name!r} is not a tree coordinate or rate ({states})")
        C[r, states.index(name)] = 1.0
    return A, B, C, np.zeros((len(outputs), len(acts))), states, list(inputs), list(outputs)


def _actuator(net, tree, name):
    el = net.elements.get(name)
    if el is None or type(el).__name__ != "JointActuator":
        raise NotRecursive(f"input {name!r}: the recursive linearization takes joint actuators as inputs")
    for fn_el, k, _ in tree.loads.joint:
        if fn_el is el:
            return k
    raise ModelError(f"input {name!r} is not on the tree")  # pragma: no cover
