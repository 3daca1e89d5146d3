"""Inverse dynamics of a planar network by recursion (DeNOC): the fast path of ``netdyn.inverse_dynamics``.

:func:`recursive_inverse_dynamics` reads the network into a tree with cut joints
(:func:`~netdyn.recursive.planar.tree_from_network`), solves the loop-closure kinematics for the
driver motions (Newton on the cut joints, rates and accelerations from the tree's recursion), then
the actuator efforts and every joint's reaction (:func:`~netdyn.recursive.closed.denoc_inverse_dynamics`).
The result answers the questions a least-squares :class:`~netdyn.solution.Solution` answers
(``efforts``, ``reaction(joint)``, ``sol["x_body"]``, ``t``); anything else is delegated to the
least-squares solution of the same motion, built on first use (``reference``).

>>> import numpy as np
>>> from netdyn import Network
>>> from netdyn.components.planar import RigidBody, Revolute, Gravity
>>> net = Network()
>>> _ = net.add(RigidBody("bar", 2.0, 1/6), Gravity(g=10), Revolute("O", "ground", (0, 0), "bar", (-0.5, 0)))
>>> res = recursive_inverse_dynamics(net, {"O": 0}, [0.0])
>>> float(np.round(res.efforts["O"][0], 9)), np.round(res.reaction("O")[:, 0], 9).tolist()
(10.0, [0.0, 20.0, 0.0])
"""
from __future__ import annotations

import numpy as np

from netdyn.errors import ModelError
from netdyn.lagrange.motion import Samples, sample_motion

from .algorithms import com_motion, forward_kinematics
from .closed import closed_kinematics, denoc_inverse_dynamics, joint_wrenches
from .model import TreeData
from .planar import NotRecursive, tree_from_network
from netdyn.graph.network import as_model
from .algorithms import energy


def _network(system):
    if hasattr(system, "bodies") and hasattr(system, "elements"):
        return system, None
    net = getattr(system, "metadata", {}).get("network")
    if net is None:
        raise NotRecursive("the model carries no network to read a tree from")
    return net, system


def _motion(expr, times, params=None):
    """Values, rates and accelerations of a driver motion at ``times`` (an expression of t, a callable
    ``t -> (q, q̇, q̈)`` or three arrays: :mod:`netdyn.lagrange.motion`)."""
    if isinstance(expr, Samples) and all(v.shape == times.shape for v in (expr.q, expr.qd, expr.qdd)):
        return [expr.q, expr.qd, expr.qdd]  # sampled already at these times (checked finite there)
    try:
        return list(sample_motion(expr, times, params=params))
    except ModelError as e:
        raise NotRecursive(str(e)) from None


def initial_guess(tree, guess):
    """Tree coordinates from a guess of relative names (``theta_<joint>``) or absolute body poses."""
    guess = dict(guess or {})
    q = np.array([float(guess.get(n, 0.0)) for n in tree.coordinate_names])
    theta = {"0": 0.0}
    pos = {"0": np.zeros(2)}
    for b in tree.body_index:
        if f"theta_{b}" in guess:
            theta[b] = float(guess[f"theta_{b}"])
        if f"x_{b}" in guess and f"y_{b}" in guess:
            pos[b] = np.array([guess[f"x_{b}"], guess[f"y_{b}"]], dtype=float)
    for j in tree.network.elements.values():
        if j.name not in tree.joint_coordinate:
            continue
        k = tree.joint_coordinate[j.name]
        name = tree.coordinate_names[k]
        a, b = j.bodies
        if name in guess:
            q[k] = float(guess[name])
        elif name.startswith("theta_") and a in theta and b in theta:
            q[k] = theta[b] - theta[a]
        elif name.startswith("s_") and all(x in pos and x in theta for x in (a, b)):
            def at(body, s):
                c, si = np.cos(theta[body]), np.sin(theta[body])
                s = np.array([float(s[0]), float(s[1])])
                return pos[body] + np.array([c * s[0] - si * s[1], si * s[0] + c * s[1]])
            c, si = np.cos(theta[a]), np.sin(theta[a])
            u = np.array([float(j.axis[0]), float(j.axis[1])])
            q[k] = np.array([c * u[0] - si * u[1], si * u[0] + c * u[1]]) @ (at(b, j.point_b) - at(a, j.point_a))
    return q


class RecursiveInverse:
    """Result of :func:`recursive_inverse_dynamics` (``method = "recursive"``).

    ``t``; ``efforts`` (driver -> effort on its joint coordinate); ``reaction(joint)`` (rows Fx, Fy, M:
    the force ``body_a`` exerts on ``body_b`` and its moment about ``point_b``, global frame, as in
    :mod:`netdyn.inverse`); ``sol[name]`` for ``x_<body>``, ``y_<body>``, ``theta_<body>``, the tree
    coordinates ``theta_<joint>``/``s_<joint>``, with ``_dot``/``_ddot``; ``joint_q``, ``joint_qd``,
    ``joint_qdd`` (tree coordinates × times); ``cut_lam`` (cut-joint reactions); ``redundant``; ``model``,
    ``q``, ``f``, ``acc`` (the model's coordinates) and ``energy()``.
    """

    method = "recursive"

    def __init__(self, tree, data, t, result, drivers, model=None, reference=None):
        self.tree, self._data, self.t = tree, data, t
        self.joint_q, self.joint_qd, self.joint_qdd = result.q, result.qd, result.qdd
        self.cut_lam, self.redundant = result.lam, result.redundant
        self.efforts = {name: result.efforts[k] for k, name in enumerate(drivers)}
        self._actuated, self._efforts = result.actuated, result.efforts
        self.drivers = drivers
        self._model, self._reference, self._ref = model, reference, None
        self._wrenches = None
        self._vals = None

    # ------------------------------------------------------------------ named values
    def _body_values(self):
        tree, data = self.tree, self._data
        m = tree.model
        out = {}
        for k, name in enumerate(tree.coordinate_names):
            out[name], out[name + "_dot"], out[name + "_ddot"] = self.joint_q[k], self.joint_qd[k], self.joint_qdd[k]
        nt = self.t.size
        P, V, A = (np.zeros((m.n, 3, nt)) for _ in range(3))
        W, AL = np.zeros((m.n, nt)), np.zeros((m.n, nt))
        for k in range(nt):
            forward_kinematics(m, data, self.joint_q[:, k], self.joint_qd[:, k], self.joint_qdd[:, k])
            P[:, :, k], V[:, :, k], A[:, :, k] = com_motion(m, data)
            W[:, k], AL[:, k] = data.omega[:, 2], data.alpha[:, 2]
        theta = np.zeros((m.n, nt))  # continuous angles: summed along the tree
        for i in range(m.n):
            base = theta[m.parent[i]] if m.parent[i] >= 0 else 0.0
            turn = np.arctan2(m.rotation[i, 1, 0], m.rotation[i, 0, 0])
            k = m.qindex[i]
            theta[i] = base + turn + (m.axis[i, 2] * self.joint_q[k] if m.jtype[i] == 0 else 0.0)
        for b, i in tree.body_index.items():
            for c, arr in (("x", 0), ("y", 1)):
                out[f"{c}_{b}"], out[f"{c}_{b}_dot"], out[f"{c}_{b}_ddot"] = P[i, arr], V[i, arr], A[i, arr]
            out[f"theta_{b}"], out[f"theta_{b}_dot"], out[f"theta_{b}_ddot"] = theta[i], W[i], AL[i]
        return out

    @property
    def _values(self):
        if self._vals is None:
            self._vals = self._body_values()
        return self._vals

    def __getitem__(self, name):
        if name in self._values:
            return self._values[name]
        return self.reference[name]

    # ------------------------------------------------------------------ reactions
    def _tree_wrenches(self):
        if self._wrenches is None:
            m = self.tree.model
            tau = np.zeros((m.nq, self.t.size))
            tau[self._actuated] = self._efforts
            self._wrenches = np.array([joint_wrenches(m, self._data, self.joint_q[:, k], self.joint_qd[:, k],
                                                      self.joint_qdd[:, k], self.cut_lam[:, k], tau[:, k])
                                       for k in range(self.t.size)])  # (times, n, 6)
        return self._wrenches

    def reaction(self, joint):
        """``[Fx, Fy, M]`` over time: the force ``body_a`` exerts on ``body_b``, moment about ``point_b``."""
        tree, m = self.tree, self.tree.model
        cuts = {c.name: k for k, c in enumerate(m.cuts)}
        if joint in cuts:
            return self._cut_reaction(cuts[joint])
        if joint not in m.joint_names:
            raise ModelError(f"no planar joint named {joint!r}; the joints are {sorted(m.joint_names + list(cuts))}")
        i = m.joint_names.index(joint)
        W = self._tree_wrenches()[:, i, :]  # parent on child, moment about the child's origin
        el = tree.network.elements[joint]
        parent_is_a = el.bodies[0] != m.body_names[i]
        F, Mz = W[:, 3:5].T, W[:, 2]
        if parent_is_a:
            return np.vstack([F, Mz])
        # the child is body a: its origin is point_a; the force of a on b is minus the parent's action
        Pa = self._point(i, m.com[i] * 0)             # child origin
        Pb = self._point_on(el.bodies[1], el.point_b)
        d = Pa - Pb
        moment_b = Mz + d[0] * F[1] - d[1] * F[0]
        return np.vstack([-F, -moment_b])

    def _point(self, i, s):
        out = np.zeros((2, self.t.size))
        m = self.tree.model
        for k in range(self.t.size):
            forward_kinematics(m, self._data, self.joint_q[:, k])
            out[:, k] = (self._data.p[i] + self._data.R[i] @ s)[:2]
        return out

    def _point_on(self, body, s):
        if body == "0":
            return np.array([float(s[0]), float(s[1])])[:, None] * np.ones(self.t.size)
        i = self.tree.body_index[body]
        local = np.array([float(s[0]), float(s[1]), 0.0]) - np.array([*self.tree.offsets[body], 0.0])
        return self._point(i, local)

    def _cut_reaction(self, k):
        m = self.tree.model
        c = m.cuts[k]
        start = sum(cc.rows for cc in m.cuts[:k])
        lam = self.cut_lam[start:start + c.rows]
        out = np.zeros((3, self.t.size))
        if c.kind in ("revolute", "weld"):
            out[:2] = lam[:2]
        if c.kind == "weld":
            out[2] = lam[2]
        if c.kind == "prismatic":
            for j in range(self.t.size):
                forward_kinematics(m, self._data, self.joint_q[:, j])
                R = np.eye(3) if c.body_a < 0 else self._data.R[c.body_a]
                u = R @ c.axis
                out[:2, j] = lam[0, j] * np.array([-u[1], u[0]])
            out[2] = lam[1]
        return out

    # ------------------------------------------------------------------ the model's view
    @property
    def model(self):
        """The netdyn model the drivers were given for (assembled from the network when a network was given)."""
        if self._model is None:
            self._model = as_model(self.tree.network)
        return self._model

    @property
    def q(self):
        """The model's coordinates along the motion (rows in ``model.coordinate_names`` order)."""
        return self.model_motion(self.model.coordinate_names)[0]

    @property
    def f(self):
        return self.model_motion(self.model.coordinate_names)[1]

    @property
    def acc(self):
        return self.model_motion(self.model.coordinate_names)[2]

    def energy(self):
        """Kinetic plus gravitational energy along the motion (the network holds nothing else)."""
        m = self.tree.model
        return np.array([sum(energy(m, self._data, self.joint_q[:, k], self.joint_qd[:, k]))
                         for k in range(self.t.size)])

    # ------------------------------------------------------------------ the reference solution
    @property
    def reference(self):
        """The least-squares :class:`~netdyn.solution.Solution` of the same motion (built on first use)."""
        if self._ref is None:
            if self._reference is None:
                raise ModelError("no least-squares reference was attached to this recursive result")
            self._ref = self._reference(self)
        return self._ref

    def model_motion(self, names):
        """``(q, f, acc)`` arrays of the named coordinates (model coordinates) along the motion."""
        missing = [n for n in names if n not in self._values]
        if missing:
            raise ModelError(f"the recursive motion does not give the coordinates {missing}")
        return tuple(np.array([self._values[n + suffix] for n in names]).reshape(len(names), -1)
                     for suffix in ("", "_dot", "_ddot"))

    def __getattr__(self, name):
        if name.startswith("_") or name in ("tree", "reference"):
            raise AttributeError(name)
        return getattr(self.reference, name)


def recursive_inverse_dynamics(system, drivers, t, guess=None, params=None, reference=None):
    """Actuator efforts and joint reactions by recursion for driver motions on tree joints.

    Raises :class:`~netdyn.recursive.planar.NotRecursive` when the network holds something the
    recursive path does not evaluate, or a driver names a cut joint or a coordinate.
    """
    net, model = _network(system)
    tree = tree_from_network(net, params)
    times = np.atleast_1d(np.asarray(t, dtype=float))
    drivers = dict(drivers)
    prescribed = {}
    order = np.argsort(times, kind="stable")  # the loops closed along the motion, whatever the given order
    for name, motion in drivers.items():
        if name not in tree.joint_coordinate:
            raise NotRecursive(f"driver {name!r} is not a moving joint of the spanning tree")
        prescribed[tree.joint_coordinate[name]] = [v[order] for v in _motion(motion, times, params)]
    data = TreeData(tree.model)
    Q, QD, QDD = (np.empty((tree.model.nq, times.size)) for _ in range(3))
    Q[:, order], QD[:, order], QDD[:, order] = closed_kinematics(tree.model, data, prescribed,
                                                                 initial_guess(tree, guess))
    act = [tree.joint_coordinate[name] for name in drivers]
    result = denoc_inverse_dynamics(tree.model, data, Q, QD, QDD, act)
    return RecursiveInverse(tree, data, times, result, list(drivers), model, reference)
