"""Inverse dynamics of a spatial network by recursion: ``netdyn.inverse_dynamics`` on a spatial tree.

The network is read into a tree with its loads and drivers (:func:`~netdyn.recursive.spatial.tree.
tree_from_spatial_network` with ``drivers=True``); the driver motions (a joint ``"A"``, a component
``"U[rx]"``, Driver elements, joints' ``motion=``) fix their coordinates, the loop-closure Newton of
:func:`~netdyn.recursive.closed.closed_kinematics` the others, and
:func:`~netdyn.recursive.closed.denoc_inverse_dynamics` the efforts, with the loads' generalised efforts
taken out. :class:`SpatialInverse` answers ``efforts``, ``t``, ``sol[name]`` (tree coordinates; body
poses by the absolute formulation's names ``x_<b>`` … ``e3_<b>``, with ``_dot``/``_ddot``), ``cut_lam``;
anything else (``reaction``, …) comes from the least-squares solution of the same motion (``reference``).

**Task space** (:func:`spatial_task_inverse`): a spatial parallel manipulator on the recursive tree, the platform's
position prescribed over time, the actuated joints' efforts sought (a Delta robot, ``netdyn.inverse_dynamics``
with ``{"platform": trajectory}`` and ``actuated=[...]``).

The platform hangs on ball joints only, so the tree gives it a virtual free joint from the ground
(:func:`~netdyn.recursive.spatial.tree.floating_joint`: slides x, y, z, then turns z, y, x). The
trajectory prescribes the three slides (the position of the platform's body-frame origin, global frame);
the loop-closure Newton of :func:`~netdyn.recursive.closed.closed_kinematics` finds every other coordinate
— the platform's three angles among them — time after time, warm-started along the path (from the
network's stored assembly or ``guess`` at the first time), and the rates and accelerations from
``J q̇ = 0``, ``J q̈ = −b``. :func:`~netdyn.recursive.closed.denoc_inverse_dynamics` then gives the
efforts of the ``actuated`` joints; the virtual joint is passive (no effort), as the real platform is free.
A trajectory is a callable ``t -> (P, V, A)`` or a tuple of three arrays ``(3, times)``: position,
velocity and acceleration.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from netdyn.errors import ModelError
from netdyn.symbols import identifier

from ..algorithms import forward_kinematics
from ..closed import closed_kinematics, denoc_inverse_dynamics
from ..inverse import RecursiveInverse, _motion, _network
from ..joint_space import _body_frame
from ..model import TreeData
from ..planar import NotRecursive
from .tree import coordinates_from_poses, tree_from_spatial_network
from netdyn.graph.assembly import fill


def driver_coordinate(tree, name):
    """The coordinate index a driver name (``"A"``: the joint's first free component; ``"A[rz]"``) drives."""
    joint, comp = (name[:-1].split("[", 1) if name.endswith("]") and "[" in name else (name, None))
    comps = [c for (jn, c) in tree.components if jn == joint]
    if not comps:
        raise NotRecursive(f"driver {name!r} is not a moving joint of the recursive tree")
    order = ("x", "y", "z", "rx", "ry", "rz")
    comp = comp or min(comps, key=order.index)
    if (joint, comp) not in tree.components:
        raise NotRecursive(f"driver {name!r}: component {comp} of {joint} is not free (free: {comps})")
    return tree.components[(joint, comp)]


def spatial_inverse_dynamics(system: Any, drivers: Any, t: Any, guess: Any = None, params: Any = None,
                             reference: Any = None) -> Any:
    """Actuator efforts for driver motions on a spatial network, or a model assembled from one (see the
    module docstring).

    >>> import numpy as np
    >>> from netdyn import Network
    >>> from netdyn.components.spatial import RigidBody, Revolute, Gravity
    >>> net = Network()
    >>> _ = net.add(RigidBody("arm", 2.0, (0.05, 0.04, 0.02), com=(0.0, 0.3, 0.0)), Gravity(),
    ...             Revolute("A", "ground", (0, 0, 0), "arm", (0, 0, 0), axis=(1, 0, 0)))
    >>> res = spatial_inverse_dynamics(net, {"A": 0}, [0.0])     # held horizontal: m g l
    >>> round(float(res.efforts["A"][0]), 9)
    5.886
    """
    net, model = _network(system)
    tree = tree_from_spatial_network(net, params, drivers=True)
    times = np.atleast_1d(np.asarray(t, dtype=float))
    prescribed, labels, act = {}, [], []
    items = [(name, driver_coordinate(tree, name), motion) for name, motion in dict(drivers).items()]
    items += [(label, k, motion) for label, (k, motion) in tree.prescribed.items()]
    for label, k, motion in items:
        if k in prescribed:
            raise ModelError(f"driver {label!r} drives coordinate {tree.coordinate_names[k]}, which another "
                             "driver drives already")
        prescribed[k] = _motion(motion, times)
        labels.append(label)
        act.append(k)
    guess = dict(guess or {})
    poses = {f"{a}_{identifier(b)}" for b in net.bodies for a in ("x", "y", "z", "e0", "e1", "e2", "e3")}
    unknown = sorted(k for k in guess if k not in tree.coordinate_names and k not in poses)
    if unknown:
        raise NotRecursive(f"guess names {unknown}, neither joint coordinates of the recursive tree nor body poses")
    start = {**coordinates_from_poses(tree, guess), **{k: v for k, v in guess.items() if k in tree.coordinate_names}}
    q0 = np.array([float(start.get(n, 0.0)) for n in tree.coordinate_names])
    data = TreeData(tree.model)
    Q, QD, QDD = closed_kinematics(tree.model, data, prescribed, q0)
    loads = None
    if tree.loads is not None:
        loads = np.column_stack([tree.loads.generalized(tt, Q[:, k], QD[:, k]) for k, tt in enumerate(times)])
    result = denoc_inverse_dynamics(tree.model, data, Q, QD, QDD, act, loads=loads)
    return SpatialInverse(tree, times, result, labels, model, reference)


class SpatialInverse(RecursiveInverse):
    """Result of :func:`spatial_inverse_dynamics` (``method = "recursive"``); see the module docstring. Motion
    by name, ``model_motion``, ``reference`` and what it answers as :class:`~netdyn.recursive.inverse.RecursiveInverse`."""

    def __init__(self, tree, t, result, labels, model=None, reference=None):
        self.tree, self.t = tree, t
        self.joint_q, self.joint_qd, self.joint_qdd = result.q, result.qd, result.qdd
        self.cut_lam, self.redundant = result.lam, result.redundant
        self.efforts = {name: result.efforts[k] for k, name in enumerate(labels)}
        self._model, self._reference, self._ref, self._vals = model, reference, None, None
        self._data = TreeData(tree.model)

    def energy(self):
        """Kinetic, gravitational and spring energy along the motion."""
        E = super().energy()
        loads = self.tree.loads
        if loads is not None:
            E = E + np.array([loads.potential(self.joint_q[:, k]) for k in range(self.t.size)])
        return E

    @property
    def _values(self):
        if self._vals is None:
            tree, m = self.tree, self.tree.model
            data, nt = TreeData(m), self.t.size
            out = {}
            for k, name in enumerate(tree.coordinate_names):
                out[name], out[name + "_dot"], out[name + "_ddot"] = self.joint_q[k], self.joint_qd[k], self.joint_qdd[k]
            previous = {}
            for k in range(nt):
                forward_kinematics(m, data, self.joint_q[:, k], self.joint_qd[:, k], self.joint_qdd[:, k])
                for b, i in tree.body_index.items():
                    f = _body_frame(tree.frames[b], data, i, previous.get(b))
                    previous[b] = f["e"]
                    rows = [(a, f["r"][c], f["v"][c], f["a"][c]) for c, a in enumerate("xyz")]
                    rows += [(f"e{c}", f["e"][c], f["ed"][c], f["edd"][c]) for c in range(4)]
                    for a, x, v, acc in rows:
                        for suffix, val in (("", x), ("_dot", v), ("_ddot", acc)):
                            out.setdefault(f"{a}_{b}{suffix}", np.zeros(nt))[k] = val
            self._vals = out
        return self._vals

    def reaction(self, joint):
        """The joint's reaction, from the least-squares solution of the same motion (the spatial convention)."""
        return self.reference.reaction(joint)


def position_samples(trajectory: Any, times: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(P, V, A)``, arrays ``(3, times)``, of a platform position trajectory (a callable or three arrays).

    >>> import numpy as np
    >>> P, V, A = position_samples(lambda s: (np.array([s, 0 * s, 0 * s]), np.ones((3, s.size)), np.zeros((3, s.size))),
    ...                            np.array([0.0, 1.0]))
    >>> P[0].tolist(), V.shape
    ([0.0, 1.0], (3, 2))
    """
    out = trajectory(times) if callable(trajectory) else trajectory
    try:
        arrays = [np.broadcast_to(np.asarray(a, dtype=float).reshape(3, -1), (3, times.size)).copy() for a in out]
    except (TypeError, ValueError):
        raise ModelError(f"a platform trajectory in space gives its position, velocity and acceleration: three "
                         f"arrays (3, {times.size}) for {times.size} times") from None
    if len(arrays) != 3:
        raise ModelError("a platform trajectory is (position, velocity, acceleration): three arrays (3, times)")
    if not all(np.isfinite(a).all() for a in arrays):
        raise ModelError("the platform trajectory has values that are not finite (NaN or inf)")
    return arrays[0], arrays[1], arrays[2]


def spatial_task_inverse(net: Any, body: str, trajectory: Any, t: Any, actuated: Any, guess: Any = None,
                         params: Any = None, reference: Any = None) -> SpatialInverse:
    """Efforts of the ``actuated`` joints while ``body``'s origin follows ``trajectory`` (module docstring).

    >>> import numpy as np
    >>> from netdyn.linkages.spatial import delta_robot, delta_circle
    >>> res = spatial_task_inverse(delta_robot(), "platform", delta_circle(), np.linspace(0, 1, 5), ["A1", "A2", "A3"])
    >>> sorted(res.efforts), res.efforts["A1"].shape
    (['A1', 'A2', 'A3'], (5,))
    """
    if body not in net.bodies:
        raise ModelError(f"no body named {body!r} to prescribe; the bodies are {sorted(net.bodies)}")
    tree = tree_from_spatial_network(net, params, floating=(body,))
    act = [driver_coordinate(tree, name) for name in actuated]
    times = np.atleast_1d(np.asarray(t, dtype=float))
    P, V, A = position_samples(trajectory, times)
    ident = identifier(f"{body}@free")
    slides = [tree.coordinate_names.index(f"s{a}_{ident}") for a in "xyz"]
    if tree.model.m != tree.model.nq - 3:
        raise ModelError(f"with the position of {body!r} prescribed the mechanism keeps {tree.model.nq - 3 - tree.model.m} "
                         f"degree(s) of freedom ({tree.model.nq} tree coordinates, 3 prescribed, {tree.model.m} closure "
                         "rows); a task-space position fixes a mechanism of three degrees of freedom (a Delta robot)")
    order = np.argsort(times, kind="stable")  # the loops closed along the path, whatever the given order
    prescribed = {k: (P[r, order], V[r, order], A[r, order]) for r, k in enumerate(slides)}
    given = dict(guess) if guess is not None else dict(_stored(net))  # body poses and/or tree coordinates
    start = {**coordinates_from_poses(tree, given), **{k: v for k, v in given.items() if k in tree.coordinate_names}}
    q0 = np.array([float(start.get(n, 0.0)) for n in tree.coordinate_names])
    data = TreeData(tree.model)
    Q, QD, QDD = (np.empty((tree.model.nq, times.size)) for _ in range(3))
    Q[:, order], QD[:, order], QDD[:, order] = closed_kinematics(tree.model, data, prescribed, q0)
    loads = None
    if tree.loads is not None:
        loads = np.column_stack([tree.loads.generalized(tt, Q[:, k], QD[:, k]) for k, tt in enumerate(times)])
    result = denoc_inverse_dynamics(tree.model, data, Q, QD, QDD, act, loads=loads)
    return SpatialInverse(tree, times, result, list(actuated), None, reference)


def _stored(net):
    return fill(net)[2] or {}
