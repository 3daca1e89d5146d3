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
        out = {}
        for k in range(self.t.size):
            forward_kinematics(m, d, self.q[:, k], self.f[:, k])
            P, V, _ = com_motion(m, d)
            for b, i in self.tree.body_index.items():
                R = d.R[i]
                vals = {"x": (P[i, 0], V[i, 0]), "y": (P[i, 1], V[i, 1])}
                if m.planar:
                    vals["theta"] = (np.arctan2(R[1, 0], R[0, 0]), d.omega[i, 2])
                else:
                    vals["z"] = (P[i, 2], V[i, 2])
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
        m = self.tree.model
        return np.array([sum(energy(m, self._data, self.q[:, k], self.f[:, k])) for k in range(self.t.size)])


def _given(tree, values):
    """Tree-coordinate values named in ``values`` (relative names, or body angles both sides of a revolute)."""
    values = dict(values or {})
    out = {}
    for j in tree.network.elements.values():
        k = tree.joint_coordinate.get(j.name)
        if k is None:
            continue
        name = tree.coordinate_names[k]
        a, b = j.bodies
        ang = {"0": 0.0, **{bb: values[f"theta_{bb}"] for bb in tree.body_index if f"theta_{bb}" in values}}
        if name in values:
            out[k] = float(values[name])
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
