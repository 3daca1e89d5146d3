"""Applied loads of a planar tree as the recursive algorithms take them: body wrenches and joint efforts.

The relative formulation's generalised efforts of a load are the virtual work of its forces through the
tree's Jacobians (``Q = Σ Jᵢᵀ wᵢ``). :class:`TreeLoads` computes the wrenches ``wᵢ`` (body frame, about
the body's tree-frame origin: :func:`netdyn.recursive.rnea`'s ``fext``) from the world positions and
velocities of the load points (:func:`netdyn.recursive.forward_kinematics`), and the efforts on joint
coordinates directly, so that ``rnea(q, q̇, 0, fext) − τ`` is the relative formulation's ``h`` and
``aba(q, q̇, τ, fext)`` its accelerations. Offered, with values that are numbers, parameters or functions
of time (not of the state):

* :class:`~netdyn.components.planar.Actuator` on a tree joint's coordinate (``τ``);
* :class:`~netdyn.components.planar.Torque` on a body (and its reaction body);
* :class:`~netdyn.components.planar.Force` at a body point, global or body frame;
* :class:`~netdyn.components.planar.Spring` and :class:`~netdyn.components.planar.Damper` between two
  body points (or a body and ground).

:meth:`TreeLoads.power` gives the dissipated and supplied power (``f·∂D/∂f`` and ``Σ e f``) the energy
balance integrates. Anything else raises :class:`~netdyn.recursive.planar.NotRecursive`.

>>> import numpy as np
>>> from netdyn import Network
>>> from netdyn.components.planar import RigidBody, Revolute, Spring
>>> from netdyn.recursive import TreeData
>>> from netdyn.recursive.planar import tree_from_network
>>> net = Network()
>>> _ = net.add(RigidBody("bar", 1, 0.1), Revolute("A", "ground", (0, 0), "bar", (-0.5, 0)),
...             Spring("k", "ground", (1, 0), "bar", (0.5, 0), k=10))
>>> tree = tree_from_network(net, ignore=LOADS)
>>> loads = TreeLoads(net, tree, [])
>>> fext, tau = loads.efforts(tree, 0.0, np.array([0.0]), np.zeros(1), np.zeros(0), TreeData(tree.model))
>>> fext[0, 2:4].round(9).tolist()   # the spring at rest: no torque about A, no force along x
[0.0, 0.0]
"""
from __future__ import annotations

import numpy as np
import sympy as sp

from netdyn.components.planar import Actuator, Damper, Force, Spring, Torque
from netdyn.recursive import forward_kinematics
from netdyn.recursive.planar import NotRecursive
from netdyn.symbols import t

LOADS = (Actuator, Torque, Force, Spring, Damper)


def is_load(el):
    """Whether :class:`TreeLoads` evaluates this element."""
    return isinstance(el, LOADS)


def value_expressions(el):
    """The numbers of a load, in the order :class:`TreeLoads` reads them (points in body coordinates)."""
    v = el.values
    if isinstance(el, Actuator):
        return [v["effort"]]
    if isinstance(el, Torque):
        return [v["tau"]]
    if isinstance(el, Force):
        return [*el.point, v["fx"], v["fy"]]
    if isinstance(el, Spring):
        return [*el.point_a, *el.point_b, v["k"], v["length"]]
    return [*el.point_a, *el.point_b, v["c"]]


class _Load:
    """One load: its kind, the tree indices it acts on and a function ``values(t, p)``."""

    def __init__(self, el, parameters, tree):
        exprs = [sp.sympify(e) for e in value_expressions(el)]
        allowed = set(parameters) | {t}
        for e in exprs:
            bad = (e.free_symbols - allowed) | e.atoms(sp.core.function.AppliedUndef)
            if bad:
                raise NotRecursive(f"{el.name}: {e} depends on {sorted(map(str, bad))}; the recursive path takes "
                                   "loads whose values are numbers, parameters or functions of time")
        self.name, self.kind = el.name, type(el).__name__
        self.timed = any(t in e.free_symbols for e in exprs)
        self._fn = sp.lambdify([t, list(parameters)], exprs, modules="numpy")
        self._cache = {}
        self.expressions = exprs
        body = lambda b: -1 if b == "0" else tree.body_index[b]  # noqa: E731
        self.body_names = list(getattr(el, "bodies", ()))
        if isinstance(el, Actuator):
            if el.joint not in tree.joint_coordinate or el.coordinate != 0:
                raise NotRecursive(f"{el.name} acts on {el.joint!r}, not a coordinate of the tree")
            self.index = tree.joint_coordinate[el.joint]
        else:
            self.bodies = [body(b) for b in el.bodies]
            self.body_frame = getattr(el, "frame", "global") == "body"
            self.free_length = isinstance(el, Spring) and sp.sympify(el.values["length"]) == 0

    def values(self, tt, vector):
        if self.timed:
            return np.asarray(self._fn(tt, vector), dtype=float)
        key = vector.tobytes()
        v = self._cache.get(key)
        if v is None:
            v = self._cache[key] = np.asarray(self._fn(0.0, vector), dtype=float)
        return v


class TreeLoads:
    """The applied loads of a planar network on its tree (see the module)."""

    def __init__(self, net, tree, parameters):
        self.loads = [_Load(el, parameters, tree) for el in net.elements.values() if is_load(el)]
        self.bodies_loaded = any(ld.kind != "Actuator" for ld in self.loads)

    def __bool__(self):
        return bool(self.loads)

    def time_expressions(self):
        """The values that are functions of time (their corners are the integrator's breakpoints)."""
        return [e for ld in self.loads if ld.timed for e in ld.expressions]

    # ----------------------------------------------------------------- geometry of a point
    @staticmethod
    def _point(data, i, local):
        """World position and velocity of the point at ``local`` (tree-frame coordinates) of body ``i``."""
        if i < 0:
            return local.copy(), np.zeros(2)
        r = data.R[i, :2, :2] @ local
        w = data.omega[i, 2]
        return data.p[i, :2] + r, data.v[i, :2] + w * np.array([-r[1], r[0]])

    @staticmethod
    def _push(fext, data, i, x, F):
        """Add the world force ``F`` at world point ``x`` to body ``i``'s wrench (body frame, about its origin)."""
        if i < 0:
            return
        R = data.R[i, :2, :2]
        r = x - data.p[i, :2]
        fext[i, 2] += r[0] * F[1] - r[1] * F[0]
        fext[i, 3:5] += R.T @ F

    @staticmethod
    def _local(tree, ld, k, point):
        """A point in body coordinates in the tree frame of the load's ``k``-th body (ground: as given)."""
        b = ld.body_names[k]
        return point if b == "0" else point - tree.offsets[b]

    def _pair(self, tree, ld, vals, data):
        pa = self._point(data, ld.bodies[0], self._local(tree, ld, 0, vals[0:2]))
        pb = self._point(data, ld.bodies[1], self._local(tree, ld, 1, vals[2:4]))
        d, dd = pb[0] - pa[0], pb[1] - pa[1]
        return pa[0], pb[0], d, dd, float(np.hypot(d[0], d[1]))

    # ----------------------------------------------------------------- efforts and power
    def efforts(self, tree, tt, q, f, vector, data):
        """``(fext, τ)``: body wrenches ``(n, 6)`` and joint efforts ``(nq,)`` at one state of ``tree`` (the
        :class:`~netdyn.recursive.planar.PlanarTree` of the parameter values ``vector``)."""
        model = tree.model
        fext, tau = np.zeros((model.n, 6)), np.zeros(model.nq)
        if self.bodies_loaded:
            forward_kinematics(model, data, q, f)
        for ld in self.loads:
            v = ld.values(tt, vector)
            if ld.kind == "Actuator":
                tau[ld.index] += v[0]
            elif ld.kind == "Torque":
                fext[ld.bodies[0], 2] += v[0] if ld.bodies[0] >= 0 else 0.0
                if len(ld.bodies) > 1 and ld.bodies[1] >= 0:
                    fext[ld.bodies[1], 2] -= v[0]
            elif ld.kind == "Force":
                x, _ = self._point(data, ld.bodies[0], self._local(tree, ld, 0, v[0:2]))
                F = v[2:4] if not ld.body_frame else data.R[ld.bodies[0], :2, :2] @ v[2:4]
                self._push(fext, data, ld.bodies[0], x, F)
            else:
                xa, xb, d, dd, L = self._pair(tree, ld, v, data)
                if ld.kind == "Spring":
                    Fb = -v[4] * d if ld.free_length else -v[4] * (L - v[5]) * d / L
                else:  # damper: D = c (d·ḋ / L)² / 2
                    Fb = -v[4] * (d @ dd) / L ** 2 * d
                self._push(fext, data, ld.bodies[1], xb, Fb)
                self._push(fext, data, ld.bodies[0], xa, -Fb)
        return fext, tau

    def potential(self, tree, tt, vector, data):
        """The springs' potential energy at the state whose forward kinematics ``data`` holds."""
        V = 0.0
        for ld in self.loads:
            if ld.kind == "Spring":
                v = ld.values(tt, vector)
                _, _, d, _, L = self._pair(tree, ld, v, data)
                V += v[4] * (d @ d if ld.free_length else (L - v[5]) ** 2) / 2
        return V

    def power(self, tree, tt, q, f, vector, data):
        """``(dissipated, supplied)`` power at one state (dampers; actuators, torques, forces)."""
        pd = ps = 0.0
        if self.bodies_loaded:
            forward_kinematics(tree.model, data, q, f)
        for ld in self.loads:
            v = ld.values(tt, vector)
            if ld.kind == "Actuator":
                ps += v[0] * f[ld.index]
            elif ld.kind == "Torque":
                w = [data.omega[i, 2] if i >= 0 else 0.0 for i in ld.bodies]
                ps += v[0] * (w[0] - (w[1] if len(w) > 1 else 0.0))
            elif ld.kind == "Force":
                _, vel = self._point(data, ld.bodies[0], self._local(tree, ld, 0, v[0:2]))
                F = v[2:4] if not ld.body_frame else data.R[ld.bodies[0], :2, :2] @ v[2:4]
                ps += float(F @ vel)
            elif ld.kind == "Damper":
                _, _, d, dd, L = self._pair(tree, ld, v, data)
                pd += v[4] * (d @ dd / L) ** 2
        return pd, ps
