"""Planar parallel manipulators with recursive (DeNOC) inverse dynamics: 3-RRR, 3-RPR, five-bar.

Each mechanism is built twice from the same numbers:

* as a :class:`~netdyn.recursive.model.TreeModel` in the DeNOC view of a parallel manipulator —
  the platform (or the five-bar's end point, a massless pin) on virtual joints from the ground
  (``x``, ``y`` slides and, for a platform, a turn ``phi``), each leg a serial chain from its base
  pin, the leg-platform pins cut (two constraint rows each). The platform pose is then a set of
  tree coordinates: prescribing it and closing the legs by closed-form inverse kinematics gives
  ``(q, q̇, q̈)``, and :func:`~netdyn.recursive.closed.denoc_inverse_dynamics` the actuator
  efforts and the pin reactions.
* as a :class:`~netdyn.network.Network` of planar bodies and joints (:meth:`ParallelManipulator.network`)
  for netdyn's symbolic path and for the least-squares reference.

``three_rrr()`` has the data of issue 14: base vertices (0, 0), (1, 0), (0.5, 0.866) m; platform
side 0.4 m; proximal links 0.4 m, 3 kg; distal links 0.6 m, 4 kg; platform 8 kg, 0.16 kg·m²; link
inertia m l²/12; gravity 9.81 m/s² along −y; the base joints actuated. ``circle()`` is the issue's
trajectory: the platform centre on a circle of radius 0.10825 m about (0.5, 0.2887) at 4 rad/s,
orientation fixed.

>>> import numpy as np
>>> mech = three_rrr()
>>> res = mech.inverse_dynamics(np.linspace(0, 2, 201), circle())
>>> res.efforts.shape, mech.actuated
((3, 201), ['A1', 'A2', 'A3'])
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from netdyn.components.planar import Gravity, Prismatic, Revolute, RigidBody
from netdyn.errors import InitialConditionError, ModelError
from netdyn.graph.network import Network
from netdyn.recursive import TreeData, TreeModel, com_motion, energy, forward_kinematics
from netdyn.recursive.closed import closed_kinematics, denoc_inverse_dynamics

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # names for the hints only (annotations are not evaluated)
    from typing import Any

ISSUE_BASE = ((0.0, 0.0), (1.0, 0.0), (0.5, 0.866))


@dataclass
class Trajectory:
    """A platform motion: ``pose(t)`` returns ``(P, V, A)``, arrays ``(3, times)`` of ``x, y, phi``
    and their first and second derivatives."""

    pose: callable
    description: str = ""


def circle(centre: Any = (0.5, 0.2887), radius: Any = 0.10825, omega: Any = 4.0, phi: Any = 0.0) -> Any:
    """The platform centre on a circle at a constant rate, orientation fixed (issue 14's trajectory).

    >>> P, V, A = circle().pose(np.array([0.0]))
    >>> np.round(P[:, 0], 5).tolist(), np.round(V[:, 0], 4).tolist()[1]
    ([0.60825, 0.2887, 0.0], 0.433)
    """
    cx, cy = centre

    def pose(t):
        t = np.atleast_1d(np.asarray(t, dtype=float))
        c, s = np.cos(omega * t), np.sin(omega * t)
        z = np.zeros_like(t)
        P = np.array([cx + radius * c, cy + radius * s, z + phi])
        V = np.array([-radius * omega * s, radius * omega * c, z])
        A = np.array([-radius * omega ** 2 * c, -radius * omega ** 2 * s, z])
        return P, V, A

    return Trajectory(pose, f"circle r={radius} about {centre} at {omega} rad/s, phi={phi}")


@dataclass
class ParallelResult:
    """Inverse dynamics along a trajectory: ``efforts`` (actuators × times, order of ``actuated``),
    ``lam`` (pin reactions: force of the leg on the platform, x and y per pin), the joint motion."""

    t: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    qdd: np.ndarray
    efforts: np.ndarray
    lam: np.ndarray
    actuated: list
    redundant: bool
    mechanism: "ParallelManipulator" = field(repr=False, default=None)

    def effort(self, joint):
        """Effort of one actuated joint over time."""
        return self.efforts[self.actuated.index(joint)]

    def power(self):
        """Power of the actuators, ``Σ τ_a q̇_a``, over time."""
        idx = [self.mechanism.coordinate[j] for j in self.actuated]
        return np.sum(self.efforts * self.qd[idx], axis=0)

    def plot(self, ax=None):
        """Actuator efforts over time (matplotlib); returns the axes."""
        import matplotlib.pyplot as plt  # lazy: matplotlib stays out of `import netdyn` (tests/test_layers.py)

        ax = ax or plt.subplots(figsize=(7, 4))[1]
        unit = {"revolute": "N·m", "prismatic": "N"}
        for k, j in enumerate(self.actuated):
            ax.plot(self.t, self.efforts[k], label=f"{j} ({unit[self.mechanism.joint_kind[j]]})")
        ax.set_xlabel("t [s]")
        ax.set_ylabel("actuator effort")
        ax.set_title(f"{self.mechanism.name}: actuator efforts")
        ax.legend()
        ax.grid(True, alpha=0.3)
        return ax


class ParallelManipulator:
    """A planar parallel manipulator: tree (DeNOC view), actuated joints, inverse kinematics.

    Built by :func:`three_rrr`, :func:`three_rpr`, :func:`five_bar` or :func:`stewart_gough`;
    ``platform_coords`` names the prescribed platform coordinates (x, y, phi; x, y for the five-bar's end
    point; x, y, z, yaw, pitch, roll for the Stewart–Gough platform), ``platform`` counts them.
    """

    def __init__(self, name, bodies, cuts, actuated, legs, platform_points, gravity, network_builder, ik,
                 platform_coords=None, gravity_vector=None, home=None):
        self.name = name
        self.tree = TreeModel.from_bodies(bodies, gravity=(0.0, -gravity, 0.0) if gravity_vector is None
                                          else gravity_vector, cuts=cuts)
        self.data = TreeData(self.tree)
        self.coordinate = {j: k for k, j in enumerate(self.tree.coordinate_joints)}
        self.joint_kind = {self.tree.joint_names[i]: ("revolute" if self.tree.jtype[i] == 0 else "prismatic")
                           for i in range(self.tree.n) if self.tree.jtype[i] != 2}
        self.actuated = list(actuated)
        self.legs, self.platform_points, self.gravity = legs, platform_points, gravity
        self._network_builder, self._ik = network_builder, ik
        self.platform_coords = platform_coords or (["x", "y", "phi"] if "phi" in self.coordinate else ["x", "y"])
        self.platform = len(self.platform_coords)
        self.home = None if home is None else np.asarray(home, dtype=float)  # the pose its network assembles at

    def inverse_kinematics(self, pose):
        """Every tree coordinate (closed form, the mechanism's assembly branch) for platform poses
        ``(3 or 2, times)``; raises :class:`InitialConditionError` outside the workspace."""
        pose = np.asarray(pose, dtype=float).reshape(self.platform, -1)
        return self._ik(self, pose)

    def kinematics(self, t, trajectory):
        """``(q, q̇, q̈)`` of the tree along a trajectory (closed-form positions, rates and
        accelerations from the loop-closure equations)."""
        t = np.atleast_1d(np.asarray(t, dtype=float))
        P, V, A = trajectory.pose(t)
        prescribed = {self.coordinate[n]: (P[k], V[k], A[k]) for k, n in enumerate(self.platform_coords)}
        return closed_kinematics(self.tree, self.data, prescribed, self.inverse_kinematics(P[:self.platform]))

    def inverse_dynamics(self, t, trajectory):
        """Actuator efforts and pin reactions along a prescribed platform trajectory (DeNOC)."""
        t = np.atleast_1d(np.asarray(t, dtype=float))
        q, qd, qdd = self.kinematics(t, trajectory)
        res = denoc_inverse_dynamics(self.tree, self.data, q, qd, qdd, [self.coordinate[j] for j in self.actuated])
        return ParallelResult(t, q, qd, qdd, res.efforts, res.lam, list(self.actuated), res.redundant, self)

    def energy(self, q, qd):
        """``T + V`` of the mechanism at one state."""
        T, V = energy(self.tree, self.data, q, qd)
        return T + V

    def network(self):
        """The same mechanism as a netdyn planar network (no virtual joints), for the symbolic path; it stores
        the assembly with the platform at ``home`` (:meth:`home_configuration`) as its guess."""
        if self._network_builder is None:
            raise ModelError(f"{self.name} is built as a tree only; netdyn.linkages.spatial.stewart_platform is "
                             "netdyn's symbolic Stewart-Gough platform (netdyn.components.spatial bodies and joints)")
        net = self._network_builder(self)
        if self.home is not None:
            net.set_assembly(guess=self.home_configuration(net))
        return net

    def home_configuration(self, net):
        """Every body coordinate of ``net`` (this mechanism's :meth:`network`) with the platform at ``home``,
        from the closed-form inverse kinematics: the network's assembly guess.

        >>> mech = three_rrr()
        >>> g = mech.home_configuration(mech.network())
        >>> [round(g[k], 4) for k in ("x_platform", "y_platform", "theta_platform")]
        [0.5, 0.2887, 0.0]
        """
        q = self.inverse_kinematics(self.home[:, None])
        zero = np.zeros_like(q)
        names = [f"{c}_{b}" for b in net.bodies for c in ("x", "y", "theta")]
        at = absolute_motion(self, _Motion(np.zeros(1), q, zero, zero), names)[0][:, 0]
        return {n: float(v) for n, v in zip(names, at)}

    def __repr__(self):
        return f"ParallelManipulator({self.name!r}, {self.tree}, actuated={self.actuated})"


@dataclass
class _Motion:
    """A motion of the tree at some times (what :func:`absolute_motion` reads)."""

    t: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    qdd: np.ndarray


# ------------------------------------------------------------------------------ helpers
def _platform(bodies, mass, inertia, turn=True):
    """Virtual slides x, y (massless bodies) and, with ``turn``, the platform turning about z."""
    bodies.append(dict(name="slide_x", parent=None, joint="prismatic", axis=(1, 0, 0), joint_name="x"))
    last = "slide_y" if turn else "platform"
    bodies.append(dict(name=last, parent="slide_x", joint="prismatic", axis=(0, 1, 0), joint_name="y",
                       **({} if turn else dict(mass=mass, inertia=inertia))))
    if turn:
        bodies.append(dict(name="platform", parent="slide_y", joint="revolute", joint_name="phi", mass=mass,
                           inertia=inertia))


def _elbow(A, B, l1, l2, branch, leg):
    """Proximal angle and relative distal angle of a two-link leg from its base A to its tip B."""
    A = np.asarray(A, dtype=float).reshape(2, 1)
    d = B - A
    L = np.hypot(d[0], d[1])
    c = (l1 ** 2 + L ** 2 - l2 ** 2) / (2 * l1 * L)
    if np.any(np.abs(c) > 1):
        raise InitialConditionError(f"leg {leg}: the platform pose is out of reach (|A B| = {np.max(L):.4g} m "
                                    f"outside [{abs(l1 - l2):.4g}, {l1 + l2:.4g}]); keep the trajectory in the workspace")
    th1 = np.arctan2(d[1], d[0]) + branch * np.arccos(c)
    E = A + l1 * np.array([np.cos(th1), np.sin(th1)])
    th2 = np.arctan2(B[1] - E[1], B[0] - E[0]) - th1
    return th1, np.angle(np.exp(1j * th2))


def _platform_points(pose, local):
    c, s = np.cos(pose[2]), np.sin(pose[2])
    return np.array([pose[0] + c * local[0] - s * local[1], pose[1] + s * local[0] + c * local[1]])


def _platform_pins(base, side):
    """Platform pins of a 3-leg manipulator: an equilateral triangle of ``side`` whose vertices point
    like the base triangle's, in the platform frame."""
    centroid = base.mean(axis=0)
    rp = side / np.sqrt(3)
    return [rp * (b - centroid) / np.linalg.norm(b - centroid) for b in base]


@dataclass(frozen=True)
class _RRLeg:
    """A two-link revolute leg from a ground pin ``base``: proximal link ``links[0]`` (length ``l1``, mass
    ``m1``) on joint ``joints[0]``, distal link ``links[1]`` (``l2``, ``m2``) on the elbow ``joints[1]``;
    links are uniform bars (inertia m l²/12), the tip at the distal link's far end."""

    base: np.ndarray
    l1: float
    l2: float
    m1: float
    m2: float
    links: tuple
    joints: tuple

    def tree_bodies(self):
        """The leg's bodies of a :class:`TreeModel` (DeNOC view)."""
        (p, d), (ja, je) = self.links, self.joints
        return [dict(name=p, parent=None, joint_name=ja, translation=(*self.base, 0), mass=self.m1,
                     com=(self.l1 / 2, 0, 0), inertia=self.m1 * self.l1 ** 2 / 12),
                dict(name=d, parent=p, joint_name=je, translation=(self.l1, 0, 0), mass=self.m2,
                     com=(self.l2 / 2, 0, 0), inertia=self.m2 * self.l2 ** 2 / 12)]

    def network_elements(self):
        """The leg's planar bodies and pins of a netdyn network (link frames at the centres of mass)."""
        (p, d), (ja, je) = self.links, self.joints
        return (RigidBody(p, self.m1, self.m1 * self.l1 ** 2 / 12), RigidBody(d, self.m2, self.m2 * self.l2 ** 2 / 12),
                Revolute(ja, "ground", tuple(self.base), p, (-self.l1 / 2, 0)),
                Revolute(je, p, (self.l1 / 2, 0), d, (-self.l2 / 2, 0)))

    def close(self, q, mech, tip, branch):
        """Write the leg's two joint angles into ``q`` (coordinates × times) for tip points ``(2, times)``."""
        th1, th2 = _elbow(self.base, tip, self.l1, self.l2, branch, self.joints[0])
        q[mech.coordinate[self.joints[0]]], q[mech.coordinate[self.joints[1]]] = th1, th2


# ------------------------------------------------------------------------------ 3-RRR
def three_rrr(base: Any = ISSUE_BASE, side: Any = 0.4, l1: Any = 0.4, l2: Any = 0.6, m1: Any = 3.0, m2: Any = 4.0,
              mp: Any = 8.0, Ip: Any = 0.16, g: Any = 9.81, branch: Any = (1, 1, 1)) -> Any:
    """The 3-RRR manipulator of issue 14 (defaults): legs ``A_i`` (actuated base pin), ``E_i``
    (elbow), pin ``B_i`` on the platform, whose vertices point like the base triangle's.

    ``branch`` picks each leg's elbow (+1: counter-clockwise of the base-tip line).

    >>> three_rrr().tree
    TreeModel(9 bodies, 9 coordinates, 3 cut joint(s), planar)
    """
    base = np.asarray(base, dtype=float)
    local = _platform_pins(base, side)
    legs = [_RRLeg(base[i], l1, l2, m1, m2, (f"p{i + 1}", f"d{i + 1}"), (f"A{i + 1}", f"E{i + 1}")) for i in range(3)]
    bodies, cuts = [], []
    _platform(bodies, mp, Ip)
    for k, leg in enumerate(legs, start=1):
        bodies += leg.tree_bodies()
        cuts.append(dict(name=f"B{k}", kind="revolute", body_a=f"d{k}", point_a=(l2, 0), body_b="platform",
                         point_b=local[k - 1]))

    def ik(mech, pose):
        q = np.zeros((mech.tree.nq, pose.shape[1]))
        q[mech.coordinate["x"]], q[mech.coordinate["y"]], q[mech.coordinate["phi"]] = pose
        for i, leg in enumerate(legs):
            leg.close(q, mech, _platform_points(pose, local[i]), branch[i])
        return q

    def network(mech):
        net = Network("3-RRR (issue 14)")
        net.add(Gravity(g=g), RigidBody("platform", mp, Ip))
        for k, leg in enumerate(legs, start=1):
            net.add(*leg.network_elements(), Revolute(f"B{k}", f"d{k}", (l2 / 2, 0), "platform", tuple(local[k - 1])))
        return net

    return ParallelManipulator("3-RRR", bodies, cuts, ["A1", "A2", "A3"], 3, local, g, network, ik,
                               home=(*base.mean(axis=0), 0.0))


# ------------------------------------------------------------------------------ 3-RPR
def three_rpr(base: Any = ISSUE_BASE, side: Any = 0.4, lc: Any = 0.5, lp: Any = 0.5, mc: Any = 2.0, mpist: Any = 1.0,
              mp: Any = 8.0, Ip: Any = 0.16, g: Any = 9.81) -> Any:
    """3-RPR manipulator: a passive base pin ``A_i``, an actuated slide ``P_i`` (the leg length, from
    ``A_i`` to the platform pin), a passive platform pin ``B_i``. Each leg: a cylinder (length ``lc``,
    mass ``mc``, from the base pin) and a piston (length ``lp``, mass ``mpist``, ending at the pin).
    With the default base and the platform turned like it (``phi = 0``) the three leg lines meet at the
    centre of the workspace, a singular configuration (efforts grow without bound near it): prescribe a
    turned platform, e.g. ``circle(phi=0.6)``.

    >>> three_rpr().actuated
    ['P1', 'P2', 'P3']
    """
    base = np.asarray(base, dtype=float)
    local = _platform_pins(base, side)
    bodies, cuts = [], []
    _platform(bodies, mp, Ip)
    for i in range(3):
        k = i + 1
        bodies.append(dict(name=f"c{k}", parent=None, joint_name=f"R{k}", translation=(*base[i], 0),
                           mass=mc, com=(lc / 2, 0, 0), inertia=mc * lc ** 2 / 12))
        bodies.append(dict(name=f"s{k}", parent=f"c{k}", joint="prismatic", axis=(1, 0, 0), joint_name=f"P{k}",
                           mass=mpist, com=(-lp / 2, 0, 0), inertia=mpist * lp ** 2 / 12))
        cuts.append(dict(name=f"B{k}", kind="revolute", body_a=f"s{k}", point_a=(0, 0), body_b="platform",
                         point_b=local[i]))

    def ik(mech, pose):
        q = np.zeros((mech.tree.nq, pose.shape[1]))
        q[mech.coordinate["x"]], q[mech.coordinate["y"]], q[mech.coordinate["phi"]] = pose
        for i in range(3):
            d = _platform_points(pose, local[i]) - base[i][:, None]
            q[mech.coordinate[f"R{i + 1}"]] = np.arctan2(d[1], d[0])
            q[mech.coordinate[f"P{i + 1}"]] = np.hypot(d[0], d[1])
        return q

    def network(mech):
        net = Network("3-RPR")
        net.add(Gravity(g=g), RigidBody("platform", mp, Ip))
        for i in range(3):
            k = i + 1
            net.add(RigidBody(f"c{k}", mc, mc * lc ** 2 / 12), RigidBody(f"s{k}", mpist, mpist * lp ** 2 / 12),
                    Revolute(f"R{k}", "ground", tuple(base[i]), f"c{k}", (-lc / 2, 0)),
                    Prismatic(f"P{k}", f"c{k}", (-lc / 2, 0), f"s{k}", (lp / 2, 0), axis=(1, 0)),
                    Revolute(f"B{k}", f"s{k}", (lp / 2, 0), "platform", tuple(local[i])))
        return net

    return ParallelManipulator("3-RPR", bodies, cuts, ["P1", "P2", "P3"], 3, local, g, network, ik,
                               home=(*base.mean(axis=0), 0.6))  # turned: at phi = 0 the legs meet (singular)


# ------------------------------------------------------------------------------ five-bar
def five_bar(base: Any = ((0.0, 0.0), (0.5, 0.0)), l1: Any = 0.4, l2: Any = 0.6, m1: Any = 1.0, m2: Any = 1.5,
             g: Any = 9.81, branch: Any = (-1, 1)) -> Any:
    """Five-bar: cranks ``J1``, ``J2`` (actuated) pinned to the ground at ``base``, couplers ``K1``,
    ``K2`` meeting at the end point, a massless pin on virtual slides ``x``, ``y`` (cut pins ``P1``,
    ``P2``). The end point's trajectory is prescribed (``x``, ``y``; a :class:`Trajectory`'s ``phi`` row
    is ignored).

    >>> five_bar().tree.nq, five_bar().platform
    (6, 2)
    """
    base = np.asarray(base, dtype=float)
    legs = [_RRLeg(base[i], l1, l2, m1, m2, (f"c{i + 1}", f"k{i + 1}"), (f"J{i + 1}", f"K{i + 1}")) for i in range(2)]
    bodies, cuts = [], []
    _platform(bodies, 0.0, 0.0, turn=False)
    bodies[-1]["name"] = "pin"
    for k, leg in enumerate(legs, start=1):
        bodies += leg.tree_bodies()
        cuts.append(dict(name=f"P{k}", kind="revolute", body_a=f"k{k}", point_a=(l2, 0), body_b="pin", point_b=(0, 0)))

    def ik(mech, pose):
        q = np.zeros((mech.tree.nq, pose.shape[1]))
        q[mech.coordinate["x"]], q[mech.coordinate["y"]] = pose
        for i, leg in enumerate(legs):
            leg.close(q, mech, pose[:2], branch[i])
        return q

    def network(mech):
        net = Network("five-bar")
        net.add(Gravity(g=g))
        for leg in legs:
            net.add(*leg.network_elements())
        net.add(Revolute("P", "k1", (l2 / 2, 0), "k2", (l2 / 2, 0)))
        return net

    return ParallelManipulator("five-bar", bodies, cuts, ["J1", "J2"], 2, [], g, network, ik,
                               home=(base[:, 0].mean(), 0.6 * (l1 + l2)))


def absolute_motion(mech, result, names):
    """``(q, f, acc)`` of a network's absolute coordinates (``x_<body>``, ``y_<body>``, ``theta_<body>``)
    along a result, from the tree's forward kinematics (for the least-squares reference)."""
    m, data = mech.tree, mech.data
    nt = result.t.size
    out = {}
    for k in range(nt):
        forward_kinematics(m, data, result.q[:, k], result.qd[:, k], result.qdd[:, k])
        P, V, A = com_motion(m, data)
        for i, b in enumerate(m.body_names):
            R = data.R[i]
            for c, val in (("x", (P[i, 0], V[i, 0], A[i, 0])), ("y", (P[i, 1], V[i, 1], A[i, 1])),
                           ("theta", (np.arctan2(R[1, 0], R[0, 0]), data.omega[i, 2], data.alpha[i, 2]))):
                out.setdefault(f"{c}_{b}", np.zeros((3, nt)))[:, k] = val
    missing = [n for n in names if n not in out]
    if missing:
        raise ModelError(f"no body of {mech.name} gives the coordinates {missing}")
    q, f, acc = (np.array([np.unwrap(out[n][j]) if n.startswith("theta") and j == 0 else out[n][j] for n in names])
                 for j in range(3))
    return q, f, acc


# ------------------------------------------------------------------------------ Stewart–Gough (6-UPS)
def _rot(axis, angle):
    c, s = np.cos(angle), np.sin(angle)
    if axis == 0:
        return np.array([[1, 0, 0], [0, c, -s], [0, s, c]])
    if axis == 1:
        return np.array([[c, 0, s], [0, 1, 0], [-s, 0, c]])
    return np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]])


def stewart_gough(base_radius: Any = 1.0, platform_radius: Any = 0.5, spread: Any = np.deg2rad(15.0), lc: Any = 0.6,
                  lp: Any = 0.6, mc: Any = 2.0, mpist: Any = 1.0, mp: Any = 10.0, Ip: Any = (0.6, 0.6, 1.2),
                  g: Any = 9.81) -> Any:
    """Stewart–Gough platform, 6-UPS: each leg a universal joint on the base (``U<i>x`` then ``U<i>y``), an
    actuated slide ``P<i>`` (the leg length) and a ball joint on the platform (cut ``S<i>``). Base pins at
    ``base_radius``, angles 120°k ± ``spread``; platform balls at ``platform_radius``, 120°k + 60° ∓
    ``spread`` (the two legs from a pair of base pins go to neighbouring pairs of balls). Each leg: a cylinder (length ``lc``, mass ``mc``, from the base
    pin along the leg) and a piston (length ``lp``, mass ``mpist``, ending at the ball). The platform (mass
    ``mp``, principal inertias ``Ip``) is on virtual joints ``x, y, z`` (slides) and ``yaw, pitch, roll``
    (turns about z, then y, then x); gravity along −z. Built on the tree only (``network()`` is not
    offered; :func:`netdyn.linkages.spatial.stewart_platform` is the symbolic counterpart).

    >>> sg = stewart_gough()
    >>> sg.tree.nq, sg.tree.m, sg.actuated[:2]
    (24, 18, ['P1', 'P2'])
    """
    angles_b = np.deg2rad(np.array([0, 120, 120, 240, 240, 360], dtype=float)) + np.array([1, -1] * 3) * spread
    angles_p = np.deg2rad(np.array([60, 60, 180, 180, 300, 300], dtype=float)) + np.array([-1, 1] * 3) * spread
    # leg i: base pin i to platform ball i, so the two legs from a base pair go to neighbouring platform pairs
    base = [base_radius * np.array([np.cos(a), np.sin(a), 0.0]) for a in angles_b]
    local = [platform_radius * np.array([np.cos(a), np.sin(a), 0.0]) for a in angles_p]
    bodies = [dict(name="slide_x", parent=None, joint="prismatic", axis=(1, 0, 0), joint_name="x"),
              dict(name="slide_y", parent="slide_x", joint="prismatic", axis=(0, 1, 0), joint_name="y"),
              dict(name="slide_z", parent="slide_y", joint="prismatic", axis=(0, 0, 1), joint_name="z"),
              dict(name="turn_yaw", parent="slide_z", axis=(0, 0, 1), joint_name="yaw"),
              dict(name="turn_pitch", parent="turn_yaw", axis=(0, 1, 0), joint_name="pitch"),
              dict(name="platform", parent="turn_pitch", axis=(1, 0, 0), joint_name="roll", mass=mp,
                   inertia=np.diag(Ip))]
    cuts = []
    for i in range(6):
        k = i + 1
        Ic = mc * lc ** 2 / 12
        Iq = mpist * lp ** 2 / 12
        bodies += [dict(name=f"u{k}", parent=None, axis=(1, 0, 0), joint_name=f"U{k}x", translation=base[i]),
                   dict(name=f"c{k}", parent=f"u{k}", axis=(0, 1, 0), joint_name=f"U{k}y", mass=mc,
                        com=(0, 0, lc / 2), inertia=np.diag([Ic, Ic, 0.01 * Ic])),
                   dict(name=f"s{k}", parent=f"c{k}", joint="prismatic", axis=(0, 0, 1), joint_name=f"P{k}",
                        mass=mpist, com=(0, 0, -lp / 2), inertia=np.diag([Iq, Iq, 0.01 * Iq]))]
        cuts.append(dict(name=f"S{k}", kind="spherical", body_a=f"s{k}", point_a=(0, 0, 0), body_b="platform",
                         point_b=local[i]))

    def ik(mech, pose):
        q = np.zeros((mech.tree.nq, pose.shape[1]))
        for k, name in enumerate(mech.platform_coords):
            q[mech.coordinate[name]] = pose[k]
        for j in range(pose.shape[1]):
            x, y, z, yaw, pitch, roll = pose[:, j]
            R = _rot(2, yaw) @ _rot(1, pitch) @ _rot(0, roll)
            for i in range(6):
                d = np.array([x, y, z]) + R @ local[i] - base[i]
                L = np.linalg.norm(d)
                u = d / L  # = R_x(a) R_y(b) e_z = (sin b, −sin a cos b, cos a cos b)
                q[mech.coordinate[f"U{i + 1}y"], j] = np.arcsin(u[0])
                q[mech.coordinate[f"U{i + 1}x"], j] = np.arctan2(-u[1], u[2])
                q[mech.coordinate[f"P{i + 1}"], j] = L
        return q

    return ParallelManipulator("Stewart-Gough", bodies, cuts, [f"P{k}" for k in range(1, 7)], 6, local, g, None,
                               ik, platform_coords=["x", "y", "z", "yaw", "pitch", "roll"],
                               gravity_vector=(0.0, 0.0, -g))


def hover(height: Any = 1.0, amplitude: Any = (0.05, 0.04, 0.03), tilt: Any = (0.05, 0.08, 0.06),
          omega: Any = 2.0) -> Any:
    """A 6-D platform motion about ``(0, 0, height)``: sinusoidal x, y, z and yaw, pitch, roll.

    >>> P, V, A = hover().pose(np.array([0.0]))
    >>> P.shape, float(P[2, 0])
    ((6, 1), 1.0)
    """
    amp = np.array([*amplitude, *tilt])
    freq = omega * np.array([1.0, 1.3, 2.0, 0.7, 1.1, 1.7])
    phase = np.array([0.0, 0.5, 0.0, 0.3, 0.0, 0.9])
    offset = np.array([0.0, 0.0, height, 0.0, 0.0, 0.0])

    def pose(t):
        t = np.atleast_1d(np.asarray(t, dtype=float))
        arg = freq[:, None] * t + phase[:, None]
        P = offset[:, None] + amp[:, None] * (np.sin(arg) - np.sin(phase)[:, None])
        V = amp[:, None] * freq[:, None] * np.cos(arg)
        A = -amp[:, None] * freq[:, None] ** 2 * np.sin(arg)
        return P, V, A

    return Trajectory(pose, f"hover about height {height}")
