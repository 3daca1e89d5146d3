"""``Recursive``: joint-coordinate dynamics with the O(n) right-hand side of :mod:`netdyn.recursive`.

For a planar network of bodies, Revolute/Prismatic/Weld joints and Gravity read into a tree with
cut joints (:func:`netdyn.recursive.planar.tree_from_network`). The state is the tree's joint
coordinates and rates; a tree runs scipy's DOP853 on the compiled articulated-body right-hand side,
a closed chain DOP853 on the cut-joint KKT right-hand side with projection onto the constraints
after every step (:func:`netdyn.recursive.integrate.integrate`). The multipliers at the output
times are the cut joints' reactions (force of ``body_a`` on ``body_b``; see
:mod:`netdyn.recursive.closed`). ``simulate(..., method="recursive")`` names it; ``method="auto"`` takes it for
a spatial network the tree reads whole (:func:`auto_verdict`).

>>> import numpy as np
>>> from netdyn.recursive import TreeModel
>>> tr = Recursive(TreeModel.chain([1.0], [1.0])).integrate(0, 1, np.array([-np.pi / 2]), np.array([0.0]),
...                                                          np.array([1.0]), 1e-10, 1e-10)
>>> round(float(tr.q[0, -1]), 8), tr.lam.shape          # hanging straight down: at rest
(-1.57079633, (0, 1))
"""
from __future__ import annotations

from typing import Any

import numpy as np

from netdyn.numerics.integrators.base import Integrator, split_atol
from netdyn.numerics.results.trajectory import Trajectory
from netdyn.recursive.closed import forward_dynamics
from netdyn.recursive.integrate import integrate
from netdyn.recursive.model import TreeData


class Recursive(Integrator):
    """DOP853 on the joint-space dynamics of a :class:`~netdyn.recursive.model.TreeModel`."""

    name = "recursive"
    carries_work = False

    def __init__(self, model, max_step=np.inf, tau=None):
        self.model, self.max_step, self.tau = model, max_step, tau
        self.data = TreeData(model)

    def integrate(self, t0, t1, q0, f0, t_eval, rtol, atol, progress=None):
        m = self.model
        atol = split_atol(atol, m.nq)
        out = integrate(m, (t0, t1), q0, f0, tau=self.tau, t_eval=t_eval, rtol=rtol, atol=atol,
                        max_step=self.max_step, data=self.data)
        T = out["t"]
        acc, lam = np.zeros((m.nq, T.size)), np.zeros((m.m, T.size))
        for k, tt in enumerate(T):
            tau = np.zeros(m.nq) if self.tau is None else (
                self.tau(tt, out["q"][:, k], out["qd"][:, k]) if callable(self.tau) else self.tau)
            acc[:, k], lam[:, k] = forward_dynamics(m, self.data, out["q"][:, k], out["qd"][:, k], tau)
        if progress is not None:
            progress(t1)
        return Trajectory(T, out["q"], out["qd"], acc, lam, np.zeros((0, T.size)), nsteps=out["nsteps"])


def simulate_recursive(system, t_span, q0=None, f0=None, params=None, t_eval=None, rtol=1e-8, atol=None,
                       guess=None, max_step=np.inf, progress=None):
    """``simulate(..., method="recursive")``: a planar network in joint coordinates; returns a
    :class:`~netdyn.recursive.joint_space.JointSpaceSolution`."""
    from netdyn.recursive.joint_space import JointSpaceSolution, initial_state
    from netdyn.recursive.planar import tree_from_network

    net = system if hasattr(system, "bodies") else getattr(system, "metadata", {}).get("network")
    if net is None:
        from netdyn.recursive.planar import NotRecursive
        raise NotRecursive("method='recursive' needs a planar network (or a model assembled from one)")
    from netdyn.graph.spatial import is_spatial
    if is_spatial(net):
        from netdyn.recursive.spatial import coordinates_from_poses, tree_from_spatial_network
        tree = tree_from_spatial_network(net, params)
        if guess:  # absolute body poses (a stored assembly) as joint coordinates
            guess = {**coordinates_from_poses(tree, guess),
                     **{k: v for k, v in dict(guess).items() if k in tree.coordinate_names}}
    else:
        tree = tree_from_network(net, params)
    t0, t1 = t_span
    q, qd = initial_state(tree, q0, f0, guess)
    t_eval = np.linspace(t0, t1, 1001) if t_eval is None else np.asarray(t_eval, dtype=float)
    loads = getattr(tree, "loads", None)
    tau = None if loads is None else loads.generalized
    tr = Recursive(tree.model, max_step, tau).integrate(t0, t1, q, qd, t_eval, rtol, rtol if atol is None else atol,
                                                   progress)
    return JointSpaceSolution(tree, tr.t, tr.q, tr.f, trajectory=tr)


#: what ``method="auto"`` says when it takes the recursive path
AUTO_REASON = ("a spatial network the recursive tree reads whole: joint coordinates, O(n) articulated-body "
               "right-hand side (CRBA + cut-joint KKT for closed chains)")


def auto_verdict(problem: Any) -> tuple[bool, str]:
    """``(ok, reason)``: whether ``method="auto"`` takes the recursive path for ``problem``, and why (not).

    It does for a spatial :class:`~netdyn.Network` whose every element the tree evaluates
    (:func:`netdyn.recursive.spatial.tree_from_spatial_network`), with no ``formulation`` other than
    ``"relative"``, no option only the projection path honours, and ``q0``/``f0``/``guess`` naming tree
    coordinates only. A planar network keeps the symbolic paths, whose relative form is itself evaluated by
    the recursive algorithms (:mod:`netdyn.numerics.functions.treedynamics`) and whose solution answers
    more (multipliers, reactions, the energy balance); ``method="recursive"`` integrates it in joint
    coordinates.

    >>> from netdyn.numerics.problem import Problem
    >>> from netdyn.linkages.spatial import spatial_chain
    >>> auto_verdict(Problem.from_call(spatial_chain(2), (0, 1)))[0]
    True
    """
    from netdyn.graph.spatial import is_spatial
    from netdyn.recursive.planar import NotRecursive
    from netdyn.recursive.spatial import tree_from_spatial_network
    from netdyn.symbols import identifier

    net = problem.system
    if not (hasattr(net, "bodies") and hasattr(net, "elements")):
        return False, "a model keeps the coordinates it was built with; the recursive path reads a Network"
    if not is_spatial(net):
        return False, ("a planar network: the symbolic paths evaluate its relative form by the recursive "
                       "algorithms and answer more (reactions, energy balance); method='recursive' integrates "
                       "it in joint coordinates")
    forms = problem.formulation
    forms = set(forms.values()) if isinstance(forms, dict) else {forms}
    if forms - {None, "relative"}:
        return False, f"formulation={problem.formulation!r} asks for the symbolic path's coordinates"
    asked = {k: v for k, v in (problem.asked or {}).items() if k != "guess" and v is not None}
    if asked.get("solver", "DOP853") != "DOP853" or asked.get("watch_singularities") or \
            asked.get("compiled_loop") is True:
        return False, f"options only the projection path honours were given ({asked})"
    try:
        tree = tree_from_spatial_network(net, problem.params)
    except NotRecursive as err:
        return False, f"not on the recursive tree: {err}"
    names = set(tree.coordinate_names)
    poses = {f"{a}_{identifier(b)}" for b in net.bodies for a in ("x", "y", "z", "e0", "e1", "e2", "e3")}
    for what in ("q0", "f0", "guess"):
        given = getattr(problem, what) or {}
        bad = sorted(str(n) for n in given if str(n) not in names and (what != "guess" or str(n) not in poses))
        if bad:
            return False, f"{what} names {bad}, not joint coordinates of the recursive tree ({sorted(names)})"
    if tree.model.m:  # a closed chain: it must assemble, move, and hold no redundant cut-joint row
        import numpy as np
        from netdyn.recursive.closed import constraint_terms
        from netdyn.recursive.joint_space import initial_state
        from netdyn.recursive.model import TreeData
        from netdyn.recursive.spatial import coordinates_from_poses
        guess = dict(problem.guess or {})
        guess = {**coordinates_from_poses(tree, guess), **{k: v for k, v in guess.items() if k in names}}
        try:
            q, _ = initial_state(tree, problem.q0, problem.f0, guess)
        except Exception as err:  # noqa: BLE001 - the symbolic start names the cause
            return False, f"the closed chain does not assemble on the recursive tree ({type(err).__name__})"
        _, J, _ = constraint_terms(tree.model, TreeData(tree.model), q)
        rank = np.linalg.matrix_rank(J, tol=1e-9 * max(1.0, np.max(np.abs(J), initial=0.0)))
        if rank < J.shape[0]:
            return False, (f"the cut joints' {J.shape[0]} rows have rank {rank} (overconstrained): the symbolic "
                           "path handles redundant constraints")
        if rank >= tree.model.nq:
            return False, "the closed chain cannot move (locked): the symbolic path names its joints"
    return True, AUTO_REASON
