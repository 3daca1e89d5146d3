"""``netdyn.simulate(..., method="recursive")``: a planar network integrated in joint coordinates.

The network is read into a tree with cut joints (:func:`~netdyn.recursive.planar.tree_from_network`),
the initial state is completed on the constraints, and :func:`~netdyn.recursive.integrate.integrate`
runs the O(n) right-hand side (ABA for a tree; CRBA + RNEA + cut-joint KKT for closed chains). The
result, a :class:`JointSpaceSolution`, names the tree coordinates as the relative formulation does
(``theta_<joint>``, ``s_<joint>``) and the body poses as the absolute one (``x_<body>``…).

>>> import numpy as np
>>> from netdyn.linkages import pendulum
>>> sol = simulate_network(pendulum([1.0, 1.0], [1.0, 1.0]), (0, 1), q0={"theta_J1": -1.0})
>>> sol.coordinate_names, bool(np.ptp(sol.energy()) < 1e-6)
(['theta_J1', 'theta_J2'], True)
"""
from __future__ import annotations

import numpy as np

from netdyn.errors import InitialConditionError, ModelError

from .algorithms import com_motion, energy, forward_kinematics
from .closed import constraint_terms, solve_positions
from .integrate import integrate
from .inverse import _network, initial_guess
from .model import TreeData
from .planar import tree_from_network


class JointSpaceSolution:
    """Motion of a network integrated in joint coordinates (``method = "recursive"``).

    ``t``, ``q`` and ``f`` (tree coordinates × times, order of ``coordinate_names``), ``tree``,
    ``sol[name]`` for a tree coordinate or a body's centre of mass (``x_``, ``y_``, and ``theta_`` in the
plane or ``z_`` in space, with ``_dot``; every body's pose is computed in one pass on the first such read),
    ``energy()`` (T + V), ``to_pandas()``.
    """

    method = "recursive"

    def __init__(self, tree, t, q, f, nfev=None, trajectory=None):
        self.tree, self.t, self.q, self.f, self.nfev = tree, t, q, f, nfev
        self.trajectory = trajectory  # the integrator's record (accelerations, cut reactions) when given
        self.coordinate_names = list(tree.coordinate_names)
        self._rows = {name: i for i, name in enumerate(self.coordinate_names)}  # name -> row: O(1) reads
        self._data = TreeData(tree.model)
        self._poses = None

    def _pose_values(self):
        m, d = self.tree.model, self._data
        out, previous = {}, {}
        spatial = hasattr(self.tree, "frames")  # a spatial network: body-frame origins and Euler parameters
        for k in range(self.t.size):
            forward_kinematics(m, d, self.q[:, k], self.f[:, k])
            P, V, _ = com_motion(m, d)
            for b, i in self.tree.body_index.items():
                R = d.R[i]
                vals = {"x": (P[i, 0], V[i, 0]), "y": (P[i, 1], V[i, 1])}
                if m.planar and not spatial:
                    vals["theta"] = (np.arctan2(R[1, 0], R[0, 0]), d.omega[i, 2])
                else:
                    vals = _body_frame(self.tree.frames[b], d, i, previous.get(b))
                    previous[b] = vals["e"]
                    vals = {**{a: (vals["r"][k], vals["v"][k]) for k, a in enumerate("xyz")},
                            **{f"e{k}": (vals["e"][k], vals["ed"][k]) for k in range(4)}}
                for c, (x, v) in vals.items():
                    out.setdefault(f"{c}_{b}", np.zeros(self.t.size))[k] = x
                    out.setdefault(f"{c}_{b}_dot", np.zeros(self.t.size))[k] = v
        for b in self.tree.body_index:
            if f"theta_{b}" in out:
                out[f"theta_{b}"] = np.unwrap(out[f"theta_{b}"])
        return out

    def __getitem__(self, name):
        for suffix, arr in (("_dot", self.f), ("", self.q)):
            if name.endswith(suffix) and name[:len(name) - len(suffix)] in self._rows:
                return arr[self._rows[name[:len(name) - len(suffix)]]]
        if self._poses is None:  # every body's pose at every output time, in one pass of the kinematics
            self._poses = self._pose_values()
        if name in self._poses:
            return self._poses[name]
        raise KeyError(f"{name!r}: neither a tree coordinate ({self.coordinate_names}) nor a body pose "
                       f"(x_/y_/theta_ of {sorted(self.tree.body_index)}, with _dot)")

    def __getattr__(self, name):
        if name.startswith("_") or name in ("tree", "trajectory"):
            raise AttributeError(name)
        raise AttributeError(f"{name!r}: this solution comes from the recursive path (joint coordinates, "
                             f"{type(self).__name__}: coordinates, body poses, energy(), to_pandas(), the cut "
                             "joints' multipliers in .trajectory.lam); pass method='projection' for the symbolic "
                             "solution's multipliers, reactions and energy balance")

    def series(self, name):
        """The series called ``name`` (as ``sol[name]``)."""
        return self[name]

    def series_names(self):
        """The tree coordinates, their rates (``_dot``), then every body's pose and its rates (``x_``, ``y_``,
        ``theta_`` in the plane, ``z_`` in space): the columns of :meth:`to_pandas`."""
        if self._poses is None:
            self._poses = self._pose_values()
        return self.coordinate_names + [f"{c}_dot" for c in self.coordinate_names] + \
            [n for n in self._poses if n not in self._rows]

    def to_pandas(self, names=None):
        """The motion as a pandas ``DataFrame`` indexed by time, one column per series (``names``, default
        :meth:`series_names`), SI units in ``df.attrs["units"]`` (see :mod:`netdyn.frames`;
        ``pip install netdyn[frames]``)."""
        from netdyn.frames import displacement_quantity, require_pandas, time_frame
        from netdyn.graph.gcpause import paused_gc
        require_pandas()
        names = self.series_names() if names is None else list(names)
        with paused_gc():
            return time_frame(self.t, names, self.__getitem__, {n: displacement_quantity(n) for n in names},
                              name=getattr(self.tree.network, "name", None))

    def energy(self):
        """Kinetic plus gravitational energy over time."""
        m, loads = self.tree.model, getattr(self.tree, "loads", None)
        return np.array([sum(energy(m, self._data, self.q[:, k], self.f[:, k]))
                         + (0.0 if loads is None else loads.potential(self.q[:, k])) for k in range(self.t.size)])


def _body_frame(frame, d, i, previous):
    """Origin, velocity, Euler parameters (sign continued from ``previous``) and their rates of a spatial
    body's frame from its tree frame ``i`` in ``d``; ``frame``: the tree frame in the body frame."""
    o, Rt = frame
    R = d.R[i] @ Rt.T
    r = d.p[i] - R @ o
    v = d.v[i] + np.cross(d.omega[i], r - d.p[i])
    e = _quaternion(R)
    if previous is not None and e @ previous < 0:
        e = -e
    w, wd = R.T @ d.omega[i], R.T @ d.alpha[i]  # body-frame angular velocity and its rate: ė = G(e)ᵀ ω / 2
    rho = r - d.p[i]
    a = d.acc[i] + np.cross(d.alpha[i], rho) + np.cross(d.omega[i], np.cross(d.omega[i], rho))
    ed = _G(e).T @ w / 2
    return {"r": r, "v": v, "a": a, "e": e, "ed": ed, "edd": (_G(e).T @ wd + _G(ed).T @ w) / 2}


def _G(e):
    e0, e1, e2, e3 = e
    return np.array([[-e1, e0, e3, -e2], [-e2, -e3, e0, e1], [-e3, e2, -e1, e0]])


def _quaternion(R):
    """Euler parameters of a rotation matrix (Shepperd's method), e0 ≥ 0 where it is largest."""
    tr = np.trace(R)
    k = int(np.argmax([tr, R[0, 0], R[1, 1], R[2, 2]]))
    if k == 0:
        s = 2 * np.sqrt(1 + tr)
        e = [s / 4, (R[2, 1] - R[1, 2]) / s, (R[0, 2] - R[2, 0]) / s, (R[1, 0] - R[0, 1]) / s]
    else:
        a, b, c = [(k - 1 + j) % 3 for j in range(3)]
        s = 2 * np.sqrt(1 + R[a, a] - R[b, b] - R[c, c])
        e = [0.0] * 4
        e[0] = (R[c, b] - R[b, c]) / s
        e[1 + a], e[1 + b], e[1 + c] = s / 4, (R[a, b] + R[b, a]) / s, (R[a, c] + R[c, a]) / s
    e = np.array(e)
    return e if e[0] >= 0 else -e


def _given(tree, values):
    """Tree-coordinate values named in ``values`` (relative names, or body angles both sides of a revolute)."""
    values = dict(values or {})
    out = {k: float(values[n]) for k, n in enumerate(tree.coordinate_names) if n in values}
    for j in tree.network.elements.values():
        k = tree.joint_coordinate.get(j.name)
        if k is None:
            continue
        name = tree.coordinate_names[k]
        a, b = j.bodies
        ang = {"0": 0.0, **{bb: values[f"theta_{bb}"] for bb in tree.body_index if f"theta_{bb}" in values}}
        if name in values:
            continue
        elif name.startswith("theta_") and a in ang and b in ang:
            out[k] = float(ang[b] - ang[a])
    unknown = [n for n in values if n not in tree.coordinate_names and not any(
        n == f"{c}_{b}" for b in tree.body_index for c in ("x", "y", "theta"))]
    if unknown:
        raise ModelError(f"unknown coordinate(s) {unknown}; the tree coordinates are {tree.coordinate_names}")
    return out


def initial_state(tree, q0=None, f0=None, guess=None):
    """Tree coordinates and rates from ``q0``/``f0`` (tree-coordinate names or body angles, held) and a
    ``guess``, completed on the cut joints' constraints."""
    m = tree.model
    data = TreeData(m)
    held = _given(tree, q0)
    q = initial_guess(tree, {**dict(guess or {}), **dict(q0 or {})})
    for k, v in held.items():
        q[k] = v
    if m.m:
        try:
            q = solve_positions(m, data, q, fixed=list(held))
        except InitialConditionError as err:
            raise InitialConditionError(f"{err}; the values held were {[tree.coordinate_names[k] for k in held]}") from None
    rates = _given(tree, f0)
    qd = np.zeros(m.nq)
    for k, v in rates.items():
        qd[k] = v
    if m.m:
        _, J, _ = constraint_terms(m, data, q)
        free = np.array([k for k in range(m.nq) if k not in rates], dtype=int)
        fixed = np.array(list(rates), dtype=int)
        qd[free] = np.linalg.lstsq(J[:, free], -J[:, fixed] @ qd[fixed], rcond=None)[0]
    return q, qd


def simulate_network(system, t_span, q0=None, f0=None, params=None, t_eval=None, rtol=1e-8, atol=None,
                     guess=None, max_step=np.inf):
    """Integrate a planar network in joint coordinates (see the module docstring); q0/f0 map tree
    coordinate names (or body angles) to values, the rest is completed on the constraints."""
    net, _ = _network(system)
    tree = tree_from_network(net, params)
    m = tree.model
    data = TreeData(m)
    q, qd = initial_state(tree, q0, f0, guess)
    t_eval = None if t_eval is None else np.asarray(t_eval, dtype=float)
    out = integrate(m, t_span, q, qd, t_eval=t_eval, rtol=rtol, atol=rtol if atol is None else atol,
                    max_step=max_step, data=data)
    return JointSpaceSolution(tree, out["t"], out["q"], out["qd"], out["nfev"])
