"""Task-space motions of planar parallel manipulators: a body's (the platform's) pose prescribed over time,
solved by numeric inverse kinematics on the recursive tree's loop-closure Newton.

The network's spanning tree (:func:`netdyn.recursive.planar.tree_from_network`, the relative formulation's)
gets one more cut joint: a weld between the ground and the platform whose pose on the ground is the
trajectory's at each time. Newton on all tree coordinates closes the loops and the weld together, started
from the last time's solution (times in increasing order, the first from the network's stored assembly or
``guess``); rates and accelerations solve ``J q̇ = [0; V]`` and ``J q̈ = [0; A] − b``. The actuated joints'
motions then drive the ordinary joint-space inverse dynamics (:func:`netdyn.inverse_dynamics`), as arrays.

A trajectory is a :class:`netdyn.linkages.parallel.Trajectory` (``pose(t) -> (P, V, A)``), a callable
``t -> (P, V, A)`` or a tuple of three arrays ``(3, times)``: the platform's ``x``, ``y``, ``theta`` (its
centre of mass and angle, the body's own coordinates), their rates and accelerations.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg

from netdyn.errors import InitialConditionError, ModelError, SingularSystemError
from netdyn.lagrange.motion import Samples
from netdyn.recursive import TreeData, TreeModel
from netdyn.recursive.constraints import constraint_terms
from netdyn.recursive.closed import denoc_inverse_dynamics
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # names for the hints only
    from collections.abc import Mapping, Sequence
from netdyn.recursive.inverse import RecursiveInverse, initial_guess
from netdyn.recursive.model import CutJoint
from netdyn.recursive.planar import tree_from_network


def pose_samples(trajectory, times):
    """``(P, V, A)`` arrays ``(3, times)`` of a platform trajectory (see the module docstring for the forms).

    >>> import numpy as np
    >>> P, V, A = pose_samples(lambda s: ((s, 0 * s, 0 * s), (1 + 0 * s, 0 * s, 0 * s), (0 * s,) * 3), np.zeros(2))
    >>> P.shape, V[0].tolist()
    ((3, 2), [1.0, 1.0])
    """
    fn = getattr(trajectory, "pose", trajectory)
    out = fn(times) if callable(fn) else trajectory
    try:
        arrays = [np.broadcast_to(np.asarray(a, dtype=float).reshape(3, -1), (3, times.size)).copy() for a in out]
    except ValueError:
        raise ModelError(f"a platform trajectory gives x, y, theta and their rates and accelerations: three "
                         f"arrays (3, {times.size}) for {times.size} times") from None
    if len(arrays) != 3:
        raise ModelError("a platform trajectory is (pose, twist, twist rate): three arrays (3, times)")
    if not all(np.all(np.isfinite(a)) for a in arrays):
        raise ModelError("the platform trajectory has values that are not finite (NaN or inf)")
    return tuple(arrays)


def _with_weld(m, body):
    weld = CutJoint("task", "weld", -1, np.zeros(3), body, m.com[body].copy())
    return TreeModel(m.parent, m.jtype, m.axis, m.rotation, m.translation, m.mass, m.com, m.inertia, m.gravity,
                     m.body_names, m.joint_names, cuts=[*m.cuts, weld])


def task_space_motion(net: Any, body: str, trajectory: Any, t: Any, actuated: Sequence[str], guess: Any = None,
                      params: Mapping[Any, Any] | None = None, tol: float = 1e-12) -> dict[str, Any]:
    """``{joint: Samples(q, q̇, q̈)}`` of the ``actuated`` joints while ``body`` follows ``trajectory`` at ``t``.

    >>> import numpy as np
    >>> from netdyn.linkages.parallel import three_rrr, circle
    >>> net = three_rrr().network()
    >>> drv = task_space_motion(net, "platform", circle(), np.linspace(0, 1, 5), ["A1", "A2", "A3"])
    >>> sorted(drv), drv["A1"].q.shape
    (['A1', 'A2', 'A3'], (5,))
    """
    return tree_motion(net, body, trajectory, t, actuated, guess, params, tol).drivers(actuated)


@dataclass
class TreeMotion:
    """Every tree coordinate of a network along a task-space motion: ``q``, ``qd``, ``qdd`` (tree coordinates
    × times) of ``tree`` (a :class:`~netdyn.recursive.planar.PlanarTree`)."""

    tree: object
    t: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    qdd: np.ndarray

    def drivers(self, joints):
        """``{joint: Samples}`` of tree joints' motions."""
        k = self.tree.joint_coordinate
        return {j: Samples(self.q[k[j]], self.qd[k[j]], self.qdd[k[j]]) for j in joints}


def tree_motion(net, body, trajectory, t, actuated, guess=None, params=None, tol=1e-12):
    """The :class:`TreeMotion` of a network whose ``body`` follows ``trajectory`` (the module docstring)."""
    tree = tree_from_network(net, params)
    if body not in tree.body_index:
        raise ModelError(f"no planar body named {body!r} to prescribe; the bodies are {sorted(tree.body_index)}")
    missing = [j for j in actuated if j not in tree.joint_coordinate]
    if missing:
        raise ModelError(f"actuated joint(s) {missing} are not moving joints of the spanning tree "
                         f"{sorted(tree.joint_coordinate)}; name tree joints (the cut ones: "
                         f"{[c.name for c in tree.model.cuts]})")
    times = np.atleast_1d(np.asarray(t, dtype=float))
    P, V, A = pose_samples(trajectory, times)
    m = _with_weld(tree.model, tree.body_index[body])
    if m.m != m.nq:
        raise ModelError(f"with {body!r} prescribed the mechanism keeps {m.nq - m.m} degree(s) of freedom "
                         f"({m.nq} coordinates, {m.m} closure rows); prescribe a platform whose pose fixes every "
                         "leg" if m.m < m.nq else f"the pose of {body!r} over-constrains the loops")
    data = TreeData(m)
    Q, QD, QDD = (np.zeros((m.nq, times.size)) for _ in range(3))
    q = initial_guess(tree, guess)
    rhs = np.zeros(m.m)
    for k in np.argsort(times, kind="stable"):
        m.cut_geom[-1, 0:2], m.cut_geom[-1, 9] = P[:2, k], P[2, k]
        for _ in range(40):
            phi, J, _ = constraint_terms(m, data, q)
            if np.max(np.abs(phi)) < tol * (1 + np.max(np.abs(q))):
                break
            try:
                q = q - np.linalg.solve(J, phi)
            except np.linalg.LinAlgError:
                q = q - np.linalg.lstsq(J, phi, rcond=None)[0]
        else:
            raise InitialConditionError(f"the platform pose at t = {times[k]:.6g} cannot be reached (closure "
                                        f"residual {np.max(np.abs(phi)):.3g}); keep the trajectory in the workspace")
        try:
            lu = scipy.linalg.lu_factor(J, check_finite=False)
        except (ValueError, np.linalg.LinAlgError):
            lu = None
        if lu is None or np.min(np.abs(np.diag(lu[0]))) < 1e-10 * np.max(np.abs(J)):
            raise SingularSystemError(f"singular configuration at t = {times[k]:.6g}: the platform pose does not "
                                      "determine the legs there")
        rhs[-3:] = V[:, k]
        qd = scipy.linalg.lu_solve(lu, rhs, check_finite=False)
        _, _, b = constraint_terms(m, data, q, qd)
        rhs[-3:] = A[:, k]
        Q[:, k], QD[:, k], QDD[:, k] = q, qd, scipy.linalg.lu_solve(lu, rhs - b, check_finite=False)
        rhs[:] = 0.0
    return TreeMotion(tree, times, Q, QD, QDD)


def task_space_inverse(motion, actuated, model=None, reference=None):
    """The :class:`~netdyn.recursive.inverse.RecursiveInverse` of a :class:`TreeMotion`: DeNOC inverse dynamics
    with the ``actuated`` joints' efforts."""
    tree = motion.tree
    data = TreeData(tree.model)
    result = denoc_inverse_dynamics(tree.model, data, motion.q, motion.qd, motion.qdd,
                                    [tree.joint_coordinate[j] for j in actuated])
    return RecursiveInverse(tree, data, motion.t, result, list(actuated), model, reference)
