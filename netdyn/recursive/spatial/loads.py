"""Loads of a spatial network on its recursive tree: body wrenches and joint efforts.

The relative formulation's generalised efforts of a load are the virtual work of its forces through the
tree's Jacobians, ``Q = Σ Jᵢᵀ wᵢ``. :class:`SpatialLoads` computes the wrenches ``wᵢ`` (body frame, about
the tree-frame origin: :func:`netdyn.recursive.rnea`'s ``fext``) from the world poses and velocities of
:func:`netdyn.recursive.forward_kinematics`, and the efforts on joint coordinates directly:

* :class:`~netdyn.components.spatial.Force` (global or body frame) and
  :class:`~netdyn.components.spatial.Torque` (with its reaction body);
* :class:`~netdyn.components.spatial.Spring` and :class:`~netdyn.components.spatial.Damper` between two
  body points (or a body and the ground);
* :class:`~netdyn.components.spatial.JointActuator`, :class:`~netdyn.components.spatial.JointSpring` and
  :class:`~netdyn.components.spatial.JointDamper` on a free component of a tree joint.

Values are numbers, parameters or functions of time. :meth:`SpatialLoads.generalized` gives ``Q(t, q, q̇)``
(``rnea(q, q̇, 0) − rnea(q, q̇, 0, fext)`` plus the joint efforts), the right-hand side the integrator adds to
the actuators' efforts; :meth:`SpatialLoads.potential` the springs' energy.
"""
from __future__ import annotations

from typing import Any

import numpy as np
import sympy as sp

from netdyn.components.spatial import (Damper, Force, JointActuator, JointDamper, JointSpring, Spring,
                                       Torque)
from netdyn.symbols import t as T_SYMBOL

from ..algorithms import forward_kinematics, rnea
from ..model import TreeData
from ..planar import NotRecursive

BODY_LOADS = (Force, Torque, Spring, Damper)
JOINT_LOADS = (JointActuator, JointSpring, JointDamper)


def is_spatial_load(el):
    """Whether :class:`SpatialLoads` evaluates this element."""
    return isinstance(el, BODY_LOADS + JOINT_LOADS)


def _values(el, params):
    """``f(t) -> array`` of the load's numbers (points excluded), in the element's value order."""
    v = el.values
    keys = {Force: ["Fx", "Fy", "Fz"], Torque: ["Tx", "Ty", "Tz"], Spring: ["k", "length"], Damper: ["c"],
            JointActuator: ["effort"], JointSpring: ["k", "rest"], JointDamper: ["c"]}[type(el)]
    exprs = []
    for k in keys:
        e = sp.sympify(v[k])
        if params:
            e = e.subs({s: params[s.name] for s in e.free_symbols if s.name in params})
        if e.free_symbols - {T_SYMBOL}:
            raise NotRecursive(f"{el.name}: {k} = {e} depends on {sorted(map(str, e.free_symbols - {T_SYMBOL}))}; "
                               "the recursive path takes numbers, parameters (params=) or functions of time")
        exprs.append(e)
    if not any(T_SYMBOL in e.free_symbols for e in exprs):
        const = np.array([float(e) for e in exprs])
        return lambda tt: const
    fn = sp.lambdify(T_SYMBOL, exprs, "numpy")
    return lambda tt: np.asarray(fn(tt), dtype=float)


class SpatialLoads:
    """The loads of a spatial network on its :class:`~netdyn.recursive.spatial.SpatialTree`.

    >>> import numpy as np
    >>> from netdyn import Network
    >>> from netdyn.components.spatial import RigidBody, Prismatic, Force
    >>> from netdyn.recursive.spatial import tree_from_spatial_network
    >>> net = Network()
    >>> _ = net.add(RigidBody("block", 1.0, (0.1, 0.1, 0.1)), Prismatic("P", "ground", (0, 0, 0), "block", (0, 0, 0)),
    ...             Force("push", "block", (0, 0, 0), (1.0, 0.0, 3.0)))
    >>> loads = tree_from_spatial_network(net).loads
    >>> loads.generalized(0.0, np.zeros(1), np.zeros(1)).round(9).tolist()    # along the slide (z) only
    [3.0]
    """

    def __init__(self, tree: Any, elements: Any, params: Any = None) -> None:
        self.tree, self.model = tree, tree.model
        self.data = TreeData(tree.model)  # a workspace of its own: the integrator's stays untouched
        self.body, self.joint = [], []
        for el in elements:
            fn = _values(el, params)
            if isinstance(el, JOINT_LOADS):
                self.joint.append((el, self._coordinate(el), fn))
            else:
                pts = [np.array([float(x) for x in getattr(el, a)], dtype=float)
                       for a in ("point", "point_a", "point_b") if hasattr(el, a)]
                self.body.append((el, [self._local(b, p) for b, p in zip(el.bodies, pts)] if pts else None, fn))
        self.fext = np.zeros((tree.model.n, 6))

    def _coordinate(self, el):
        tree = self.tree
        comps = [c for (jn, c) in tree.components if jn == el.joint]
        if not comps:
            raise NotRecursive(f"{el.name} acts on joint {el.joint!r}, which is not a moving joint of the recursive "
                               "tree (a cut joint or a fixed one); act on a tree joint or use the symbolic path")
        comp = el.component
        if comp is None:
            rot = [c for c in comps if c.startswith("r")]
            comp = rot[0] if rot else comps[0]
        if (el.joint, comp) not in tree.components:
            raise NotRecursive(f"{el.name}: component {comp!r} of joint {el.joint} is not free "
                               f"(free: {comps}); act on a free component")
        return tree.components[(el.joint, comp)]

    def _local(self, body, point):
        """A body-frame point in the body's tree frame (``(-1, point)`` for the ground)."""
        if body == "0":
            return -1, point
        o, R = self.tree.frames[body]
        return self.tree.body_index[body], R.T @ (point - o)

    def _body_rotation(self, body):
        """World rotation of a body's own frame (not its tree frame)."""
        if body == "0":
            return np.eye(3)
        return self.data.R[self.tree.body_index[body]] @ self.tree.frames[body][1].T

    def _point(self, i, local):
        d = self.data
        if i < 0:
            return local, np.zeros(3)
        r = d.R[i] @ local
        return d.p[i] + r, d.v[i] + np.cross(d.omega[i], r)

    def _push(self, i, x, F):
        if i < 0:
            return
        d = self.data
        self.fext[i, :3] += d.R[i].T @ np.cross(x - d.p[i], F)
        self.fext[i, 3:] += d.R[i].T @ F

    def _torque(self, i, T):
        if i >= 0:
            self.fext[i, :3] += self.data.R[i].T @ T

    def wrenches(self, tt, q, qd):
        """The body wrenches ``fext`` (n × 6) at time ``tt`` and state ``(q, q̇)``."""
        self.fext[:] = 0.0
        if not self.body:
            return self.fext
        d = self.data
        forward_kinematics(self.model, d, q, qd)
        for el, pts, fn in self.body:
            val = fn(tt)
            if isinstance(el, Force):
                i, local = pts[0]
                x, _ = self._point(i, local)
                F = self._body_rotation(el.bodies[0]) @ val if el.frame == "body" else val
                self._push(i, x, F)
            elif isinstance(el, Torque):
                ids = [self._local(b, np.zeros(3))[0] for b in el.bodies]
                T = self._body_rotation(el.bodies[0]) @ val if el.frame == "body" else val
                for i, sign in zip(ids, (1.0, -1.0)):
                    self._torque(i, sign * T)
            else:
                (ia, la), (ib, lb) = pts
                xa, va = self._point(ia, la)
                xb, vb = self._point(ib, lb)
                dv = xb - xa
                L = np.linalg.norm(dv)
                if isinstance(el, Spring):
                    k, length = val
                    F = -k * dv if length == 0 else -k * (L - length) * dv / L
                else:
                    F = -val[0] * (dv @ (vb - va)) * dv / L ** 2
                self._push(ib, xb, F)
                self._push(ia, xa, -F)
        return self.fext

    def joint_efforts(self, tt, q, qd):
        """The efforts of the joint actuators, springs and dampers on the tree coordinates."""
        tau = np.zeros(self.model.nq)
        for el, k, fn in self.joint:
            val = fn(tt)
            if isinstance(el, JointActuator):
                tau[k] += val[0]
            elif isinstance(el, JointSpring):
                tau[k] -= val[0] * (q[k] - val[1])
            else:
                tau[k] -= val[0] * qd[k]
        return tau

    def generalized(self, tt, q, qd):
        """``Q(t, q, q̇)``: every load's generalised effort on the tree coordinates."""
        Q = self.joint_efforts(tt, q, qd)
        if self.body:
            fext = self.wrenches(tt, q, qd).copy()
            zero = np.zeros(self.model.nq)
            Q += rnea(self.model, self.data, q, qd, zero) - rnea(self.model, self.data, q, qd, zero, fext)
        return Q

    def potential(self, q):
        """The springs' potential energy at ``q``."""
        V = 0.0
        for el, k, fn in self.joint:
            if isinstance(el, JointSpring):
                kk, rest = fn(0.0)
                V += kk * (q[k] - rest) ** 2 / 2
        if any(isinstance(el, Spring) for el, _, _ in self.body):
            forward_kinematics(self.model, self.data, q)
            for el, pts, fn in self.body:
                if isinstance(el, Spring):
                    kk, length = fn(0.0)
                    (ia, la), (ib, lb) = pts
                    L = np.linalg.norm(self._point(ib, lb)[0] - self._point(ia, la)[0])
                    V += kk * (L - length) ** 2 / 2
        return V
