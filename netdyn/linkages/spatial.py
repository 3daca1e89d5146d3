"""Ready-made spatial mechanisms as ``Network`` builders: spherical pendulum, heavy top, spatial four-bar
(RSSR), an n-link chain of mixed revolute axes, and a Stewart–Gough platform.

Conventions follow :mod:`netdyn.components.spatial` (gravity along −z unless said otherwise).

>>> net = spherical_pendulum()
>>> net.model().metadata["spatial"].gruebler
3

The Stewart–Gough platform's model takes a few seconds to build (13 bodies in Euler parameters):

>>> stewart_platform().model().metadata["spatial"].gruebler
6
"""
from __future__ import annotations

import numpy as np
import sympy as sp

from netdyn.components.spatial import Gravity, Prismatic, Revolute, RigidBody, Spherical, Universal
from netdyn.graph.network import Network
from scipy.optimize import brentq
from netdyn.components.spatial import frame_from_axis, quat_from_matrix
from netdyn.symbols import as_expr

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # names for the hints only (annotations are not evaluated)
    from collections.abc import Mapping, Sequence
    from typing import Any
    from netdyn.hints import Value

#: the heavy symmetric top of the issue: mass, inertia about the centre of mass, centre of mass, body rate
HEAVY_TOP: dict[str, Any] = {"m": 15.0, "J": (0.234375, 0.46875, 0.234375), "com": (0.0, 1.0, 0.0), "omega": (0.0, 150.0, -4.61538),
             "g": 9.81}


def spherical_pendulum(length: float = 1.0, mass: float = 1.0, radius: float = 0.05, g: float = 9.81) -> Network:
    """A ball of ``radius`` (solid sphere inertia) on a massless rod of ``length`` from a ball joint at the origin.

    >>> spherical_pendulum().model().coordinate_names[:3]
    ['x_bob', 'y_bob', 'z_bob']
    """
    J = 2 * mass * radius ** 2 / 5
    net = Network("spherical pendulum")
    net.add(RigidBody("bob", mass, (J, J, J)), Gravity(vector=(0, 0, -g)),
            Spherical("S", "ground", (0, 0, 0), "bob", (0, 0, length)))
    net.set_assembly(guess=_home("bob", (0.0, 0.0, -float(length))))
    return net


def _home(body, position):
    """A spatial body's coordinates at ``position`` with its frame parallel to the global axes."""
    return {**{f"{a}_{body}": float(v) for a, v in zip("xyz", position)}, f"e0_{body}": 1.0, f"e1_{body}": 0.0,
            f"e2_{body}": 0.0, f"e3_{body}": 0.0}


def heavy_top(m: float = HEAVY_TOP["m"], J: Sequence[float] = HEAVY_TOP["J"], com: Sequence[float] = HEAVY_TOP["com"],
              g: float = HEAVY_TOP["g"]) -> Network:
    """A top on a fixed point: body frame origin at the fixed point, centre of mass at ``com``.

    >>> heavy_top().model().metadata["spatial"].gruebler
    3
    """
    net = Network("heavy top")
    net.add(RigidBody("top", m, J, com=com), Gravity(vector=(0, 0, -g)),
            Spherical("O", "ground", (0, 0, 0), "top", (0, 0, 0)))
    net.set_assembly(guess=_home("top", (0.0, 0.0, 0.0)))
    return net


def rssr(crank: float = 0.2, coupler: float = 1.0, rocker: float = 0.7, ground: Sequence[float] = (0.6, 0.0, 0.3),
         g: float = 9.81, drive: Value | None = None) -> Network:
    """A spatial four-bar: crank on a revolute about z at the origin, rocker on a revolute about x at
    ``ground``, coupled by a rod with ball joints at both ends (RSSR). The rod's spin about its own axis is
    an idle freedom, held by a ``Universal`` instead of the second ball (so the mobility is 1).
    ``drive=`` prescribes the crank angle. The network stores :func:`rssr_guess` (crank at 0) as its assembly.

    >>> rssr().model().metadata["spatial"].gruebler
    1
    """
    net = Network("RSSR four-bar")
    net.add(RigidBody("crank", 0.5, (1e-3, 2e-3, 2e-3), com=(crank / 2, 0, 0)),
            RigidBody("rod", 1.0, (0.08, 0.08, 1e-3), com=(0, 0, coupler / 2)),
            RigidBody("rocker", 0.8, (0.03, 0.03, 1e-3), com=(0, 0, rocker / 2)),
            Revolute("R1", "ground", (0, 0, 0), "crank", (0, 0, 0), axis=(0, 0, 1), motion=drive),
            Spherical("S1", "crank", (crank, 0, 0), "rod", (0, 0, 0)),
            Universal("U2", "rod", (0, 0, coupler), "rocker", (0, 0, rocker), axis_a=(1, 0, 0), axis_b=(0, 1, 0)),
            Revolute("R2", "ground", ground, "rocker", (0, 0, 0), axis=(1, 0, 0)))
    if g:
        net.add(Gravity(vector=(0, 0, -g)))
    net.set_assembly(guess=rssr_guess(crank, coupler, rocker, ground, formulation=None))
    return net


def rssr_guess(crank: float = 0.2, coupler: float = 1.0, rocker: float = 0.7,
               ground: Sequence[float] = (0.6, 0.0, 0.3), angle: float = 0.0,
               formulation: str | None = "absolute") -> dict[str, float]:
    """The assembly of :func:`rssr` at crank angle ``angle`` (exact: the rocker angle from the rod length, a
    scalar root; the rod from the crank pin to the rocker pin, turned about its axis as the universal joint
    needs), a dict for ``guess=``: body coordinates (``formulation="absolute"``), the relative formulation's
    joint coordinates (``"relative"``: ``thetaz_R1``, ``thetaz_R2``, ``e0_S1`` …, with U2 cut) or both
    (``None``: what :func:`rssr` stores as its assembly, which serves either formulation).

    >>> round(rssr_guess()["e0_rocker"], 6)
    0.899735
    """


    g = np.asarray(ground, dtype=float)
    A = crank * np.array([np.cos(angle), np.sin(angle), 0.0])
    tip = lambda phi: g + rocker * np.array([0.0, -np.sin(phi), np.cos(phi)])
    f = lambda phi: np.linalg.norm(tip(phi) - A) - coupler
    grid = np.linspace(0, np.pi, 181)
    vals = np.array([f(x) for x in grid])
    k = int(np.argmax(np.sign(vals[:-1]) != np.sign(vals[1:])))
    phi = brentq(f, grid[k], grid[k + 1])
    d = (tip(phi) - A) / coupler
    F = np.array(frame_from_axis(d).tolist(), dtype=float)
    w = np.array([0.0, np.cos(phi), np.sin(phi)])  # the rocker's y axis, which the universal joint keeps
    x = np.cross(w, d)                             # perpendicular to the rod's x axis: the rod's spin
    if np.linalg.norm(x) > 1e-12:                  # about d is then exact
        x = x / np.linalg.norm(x) * (1.0 if x @ F[:, 0] >= 0 else -1.0)
        F = np.column_stack([x, np.cross(d, x), d])
    e_rod = [float(v) for v in quat_from_matrix(F)]
    out = {"e0_crank": np.cos(angle / 2), "e3_crank": np.sin(angle / 2),
           "e0_rocker": np.cos(phi / 2), "e1_rocker": np.sin(phi / 2),
           "x_rod": A[0], "y_rod": A[1], "z_rod": A[2], "x_rocker": g[0], "y_rocker": g[1], "z_rocker": g[2]}
    out.update({f"e{i}_rod": e_rod[i] for i in range(4)})
    # the same configuration in joint coordinates (relative formulation: R1, R2 and S1 on the tree, U2 cut)
    c, s_ = np.cos(angle / 2), np.sin(angle / 2)
    r0, r1, r2, r3 = e_rod  # the rod's turn relative to the crank: conj(e_crank) * e_rod, e_crank a turn about z
    joint = {"thetaz_R1": angle, "thetaz_R2": phi, "e0_S1": c * r0 + s_ * r3, "e1_S1": c * r1 + s_ * r2,
             "e2_S1": c * r2 - s_ * r1, "e3_S1": c * r3 - s_ * r0}
    if formulation not in ("absolute", "relative", None):
        raise ValueError(f"formulation must be 'absolute', 'relative' or None, got {formulation!r}")
    out = {"absolute": out, "relative": joint, None: {**out, **joint}}[formulation]
    return {k: float(v) for k, v in out.items()}


def chain_parameters(n: int, seed: int = 0) -> dict[str, Any]:
    """Random but reproducible link data of :func:`spatial_chain`: masses, joint offsets on the parent,
    centres of mass, inertia tensors (symmetric positive definite, triangle inequality) and axes x, y, z, ...

    >>> p = chain_parameters(3); p["offsets"].shape, p["axes"]
    ((3, 3), ['x', 'y', 'z'])
    """
    rng = np.random.default_rng(seed)
    out: dict[str, Any] = {"masses": rng.uniform(0.5, 2.0, n), "offsets": np.zeros((n, 3)), "coms": np.zeros((n, 3)),
           "inertias": [], "axes": [("x", "y", "z")[k % 3] for k in range(n)]}
    for k in range(n):
        out["offsets"][k] = (0.0, 0.0, 0.0) if k == 0 else rng.uniform(-0.2, 0.2, 3) + (0, 0, -0.6)
        out["coms"][k] = rng.uniform(-0.1, 0.1, 3) + (0, 0, -0.3)
        w = np.sort(rng.uniform(0.02, 0.1, 3))
        w[2] = min(w[2], w[0] + w[1] - 1e-3)
        A = np.linalg.qr(rng.normal(size=(3, 3)))[0]
        out["inertias"].append(A @ np.diag(w) @ A.T)
    return out


def spatial_chain(n: int, params: Mapping[str, Any] | None = None, g: float = 9.81) -> Network:
    """An n-link chain: link k hangs from link k−1 (ground for k = 0) by a revolute about the k-th axis of
    ``params["axes"]`` at ``offsets[k]`` on the parent (body frames are the joint frames, aligned when all
    angles are zero). Joint ``J<k>``, body ``L<k>``. The network stores that home pose (all angles zero) as its
    assembly guess, in body coordinates (the relative formulation starts from zero angles anyway).

    >>> spatial_chain(3).model(formulation="relative").coordinate_names
    ['thetaz_J0', 'thetaz_J1', 'thetaz_J2']
    """
    p = params or chain_parameters(n)
    unit = {"x": (1, 0, 0), "y": (0, 1, 0), "z": (0, 0, 1)}
    net = Network(f"{n}-link spatial chain")
    for k in range(n):
        J = np.asarray(p["inertias"][k])
        net.add(RigidBody(f"L{k}", float(p["masses"][k]), J.tolist(), com=tuple(p["coms"][k])))
        parent = "ground" if k == 0 else f"L{k - 1}"
        net.add(Revolute(f"J{k}", parent, tuple(p["offsets"][k]), f"L{k}", (0, 0, 0), axis=unit[p["axes"][k]]))
    if g:
        net.add(Gravity(vector=(0, 0, -g)))
    origins = np.cumsum(np.asarray(p["offsets"], dtype=float)[:n], axis=0)
    net.set_assembly(guess={k: v for i in range(n) for k, v in _home(f"L{i}", origins[i]).items()})
    return net


def _stewart_geometry(base_radius, top_radius, height):
    """Base points, platform points (platform frame) and home leg frames of the Stewart–Gough platform."""
    base, top, frames, lengths = [], [], [], []
    for k in range(6):
        a = 2 * np.pi * (k // 2) / 3 + (-1) ** k * 0.25
        b = 2 * np.pi * ((k + 1) // 2) / 3 + (-1) ** (k + 1) * 0.35 - np.pi / 3
        base.append(np.array([base_radius * np.cos(a), base_radius * np.sin(a), 0.0]))
        top.append(np.array([top_radius * np.cos(b), top_radius * np.sin(b), 0.0]))
        d = top[k] + (0, 0, height) - base[k]
        lengths.append(float(np.linalg.norm(d)))
        u = d / lengths[k]
        x = np.cross(u, (0, 0, 1.0))
        x = x / np.linalg.norm(x)
        frames.append(np.column_stack([x, np.cross(u, x), u]))  # leg frame: z along the leg
    return base, top, frames, lengths


def stewart_platform(base_radius: float = 1.0, top_radius: float = 0.6, height: float = 1.2, mass: float = 10.0,
                     leg_mass: float = 1.0, g: float = 9.81) -> Network:
    """A Stewart–Gough platform: six UPS legs, each a universal joint ``U<k>`` on the base, a prismatic joint
    ``P<k>`` (the actuator: cylinder ``cyl<k>`` and rod ``rod<k>``) and a ball joint ``S<k>`` on the platform.
    Body frames are parallel to the global axes at the home pose (platform origin at height ``height``); the
    legs' slides are zero there; the network stores the home pose as its assembly guess. :func:`stewart_leg_motions` turns a platform trajectory into the six leg
    motions that :func:`netdyn.inverse_dynamics` takes as drivers.

    >>> net = stewart_platform()
    >>> len(net.bodies), [type(net[j]).__name__ for j in ("U1", "P1", "S1")]
    (13, ['Universal', 'Prismatic', 'Spherical'])
    """
    base, top, frames, lengths = _stewart_geometry(base_radius, top_radius, height)
    net = Network("Stewart-Gough platform")
    Jp = mass * top_radius ** 2
    net.add(RigidBody("platform", mass, (Jp / 4, Jp / 4, Jp / 2)))
    if g:
        net.add(Gravity(vector=(0, 0, -g)))
    for k in range(6):
        R, L = frames[k], lengths[k]
        Jl = leg_mass * L ** 2 / 48
        net.add(RigidBody(f"cyl{k}", leg_mass, (Jl, Jl, 1e-3 * leg_mass), com=tuple(R @ (0, 0, L / 4)), frame=R),
                RigidBody(f"rod{k}", leg_mass, (Jl, Jl, 1e-3 * leg_mass), com=tuple(R @ (0, 0, -L / 4)), frame=R),
                Universal(f"U{k}", "ground", tuple(base[k]), f"cyl{k}", (0, 0, 0), axis_a=tuple(R[:, 0]),
                          axis_b=tuple(R[:, 1])),
                Prismatic(f"P{k}", f"cyl{k}", tuple(R @ (0, 0, L / 2)), f"rod{k}", tuple(R @ (0, 0, -L / 2)),
                          axis=tuple(R[:, 2])),
                Spherical(f"S{k}", f"rod{k}", (0, 0, 0), "platform", tuple(top[k])))
    guess = _home("platform", (0.0, 0.0, height))
    for k in range(6):
        guess.update(_home(f"cyl{k}", base[k]))
        guess.update(_home(f"rod{k}", top[k] + (0.0, 0.0, height)))
    net.set_assembly(guess=guess)
    return net


def stewart_leg_motions(motion: Mapping[str, Any], base_radius: float = 1.0, top_radius: float = 0.6,
                        height: float = 1.2) -> dict[str, Any]:
    """Leg slides ``{"P<k>": s_k(t)}`` (inverse kinematics, closed form) that move the platform of
    :func:`stewart_platform` through ``motion``: components ``"x"``, ``"y"``, ``"z"`` of its origin
    from home and the angles ``"rx"``, ``"ry"``, ``"rz"`` of successive rotations about x, y, z (functions of t).

    >>> from netdyn import t
    >>> m = stewart_leg_motions({"z": 0.1 * t}); sorted(m)[:2], round(float(m["P0"].subs(t, 0)), 12)
    (['P0', 'P1'], 0.0)
    """

    base, top, _, lengths = _stewart_geometry(base_radius, top_radius, height)
    p = sp.Matrix([as_expr(motion.get(a, 0)) for a in ("x", "y", "z")]) + sp.Matrix([0, 0, height])
    rx, ry, rz = (as_expr(motion.get(a, 0)) for a in ("rx", "ry", "rz"))
    R = sp.rot_axis3(-rz) * sp.rot_axis2(-ry) * sp.rot_axis1(-rx)  # sympy's rot_axis is the passive rotation
    out = {}
    for k in range(6):
        d = p + R * sp.Matrix(top[k]) - sp.Matrix(base[k])
        out[f"P{k}"] = sp.sqrt((d.T * d)[0]) - lengths[k]
    return out


#: Clavel's Delta robot with the geometry of the ABB FlexPicker IRB 360 as R. L. Williams II gives it ("The Delta
#: Parallel Robot: Kinematics Solutions", Ohio University, 2015, the example of section 2): base triangle side
#: ``sB``, platform triangle side ``sP``, upper arm ``L``, forearm (parallelogram) length ``l`` and width ``h``,
#: metres. Williams gives no masses; the masses here are assumed (upper arm, each forearm rod, platform, kg).
DELTA_FLEXPICKER: dict[str, float] = {"sB": 0.567, "sP": 0.076, "L": 0.524, "l": 1.244, "h": 0.131,
                                      "m_arm": 1.5, "m_rod": 0.15, "m_platform": 1.0, "g": 9.81}


def _delta_legs(sB, sP):
    """Per leg: the outward unit vector, the arm's axis (tangential) and the base and platform points."""
    wB, wP = sB * np.sqrt(3) / 6, sP * np.sqrt(3) / 6
    legs = []
    for phi in (-np.pi / 2, np.pi / 6, 5 * np.pi / 6):  # Williams' legs 1, 2, 3 (leg 1 along −y)
        rho = np.array([np.cos(phi), np.sin(phi), 0.0])
        legs.append((rho, np.array([-np.sin(phi), np.cos(phi), 0.0]), wB * rho, wP * rho))
    return legs


def delta_inverse_kinematics(position: Sequence[float], data: Mapping[str, float] | None = None) -> np.ndarray:
    """The three arm angles (rad, about each arm's tangential axis: positive turns the arm down) that put the
    platform origin of :func:`delta_robot` at ``position`` (elbows out; closed form).

    >>> np.round(np.degrees(delta_inverse_kinematics((0.0, 0.0, -1.0))), 3).tolist()   # arms just above level
    [-5.754, -5.754, -5.754]
    """
    d = {**DELTA_FLEXPICKER, **(data or {})}
    p = np.asarray(position, dtype=float)
    out = []
    for rho, _, B, P in _delta_legs(d["sB"], d["sP"]):
        D = p + P - B
        a, b = D @ rho, -D[2]
        k = (d["L"] ** 2 + D @ D - d["l"] ** 2) / (2 * d["L"])
        r = np.hypot(a, b)
        if abs(k) > r:
            raise ValueError(f"position {tuple(p)} is out of the Delta robot's reach")
        out.append(np.arctan2(b, a) - np.arccos(k / r))
    return np.array(out)


def delta_robot(data: Mapping[str, float] | None = None, home: Sequence[float] = (0.0, 0.0, -1.0)) -> Network:
    """Clavel's Delta robot, three R-(SS)₂ legs: an upper arm ``arm<i>`` on a revolute ``A<i>`` (the actuator;
    axis tangential to the base, positive turns the arm down) and a parallelogram of two thin rods
    ``rod<i>a``/``rod<i>b``, each with a ball joint on the arm (``E<i>a``, ``E<i>b``) and one on the
    ``platform`` (``P<i>a``, ``P<i>b``). Geometry and masses: :data:`DELTA_FLEXPICKER` (``data`` overrides
    entries); z up, the base in z = 0, gravity −z. The rods' spins about their own lines are idle (thin rods:
    no axial inertia); the recursive tree holds them (an :class:`~netdyn.errors.IdleFreedomWarning` names
    each). The network stores the pose with the platform origin at ``home`` as its assembly. Drive it by
    the platform's position: ``netdyn.inverse_dynamics(net, {"platform": delta_circle()}, t,
    actuated=["A1", "A2", "A3"])``.

    >>> net = delta_robot()
    >>> len(net.bodies), sorted(type(net[j]).__name__ for j in ("A1", "E1a", "P1a"))
    (10, ['Revolute', 'Spherical', 'Spherical'])
    """
    d = {**DELTA_FLEXPICKER, **(data or {})}
    L, l, h = d["L"], d["l"], d["h"]
    theta = delta_inverse_kinematics(home, d)
    p0 = np.asarray(home, dtype=float)
    net = Network("Delta robot (Clavel; ABB FlexPicker IRB 360 geometry after Williams 2015)")
    Jp = d["m_platform"] * (d["sP"] * np.sqrt(3) / 3) ** 2 / 2  # a disc through the ball pairs
    net.add(RigidBody("platform", d["m_platform"], (Jp / 2, Jp / 2, Jp)))
    if d["g"]:
        net.add(Gravity(vector=(0, 0, -d["g"])))
    guess = _home("platform", p0)
    for i, (rho, axis, B, P) in enumerate(_delta_legs(d["sB"], d["sP"]), start=1):
        arm = L * (np.cos(theta[i - 1]) * rho - np.sin(theta[i - 1]) * np.array([0.0, 0.0, 1.0]))  # B -> elbow
        Ja = d["m_arm"] * L ** 2 / 12
        net.add(RigidBody(f"arm{i}", d["m_arm"], (Ja, Ja, 0.0), com=tuple(arm / 2), frame=frame_from_axis(arm)),
                Revolute(f"A{i}", "ground", tuple(B), f"arm{i}", (0, 0, 0), axis=tuple(axis)))
        guess.update(_home(f"arm{i}", B))
        for side, sign in (("a", 1.0), ("b", -1.0)):
            e = B + arm + sign * h / 2 * axis               # the ball on the arm
            f = p0 + P + sign * h / 2 * axis                # the ball on the platform
            u = (f - e) / l
            Jr = d["m_rod"] * l ** 2 / 12
            rod = f"rod{i}{side}"
            net.add(RigidBody(rod, d["m_rod"], (Jr, Jr, 0.0), frame=frame_from_axis(u)),
                    Spherical(f"E{i}{side}", f"arm{i}", tuple(e - B), rod, tuple(-l / 2 * u)),
                    Spherical(f"P{i}{side}", rod, tuple(l / 2 * u), "platform", tuple(P + sign * h / 2 * axis)))
            guess.update(_home(rod, (e + f) / 2))
    net.set_assembly(guess=guess)
    return net


def delta_circle(radius: float = 0.2, depth: float = -1.0, omega: float = 2 * np.pi, lift: float = 0.05) -> Any:
    """A platform trajectory for :func:`delta_robot`: a circle of ``radius`` through ``(0, 0, depth)`` (centre
    ``(0, radius)``), ``omega`` rad/s, bobbing up by ``lift`` twice a turn; ``t -> (P, V, A)``, arrays
    ``(3, times)``.

    >>> P, V, A = delta_circle()(np.array([0.0]))
    >>> P[:, 0].tolist(), np.round(V[:, 0], 6).tolist()
    ([0.0, 0.0, -1.0], [1.256637, 0.0, 0.0])
    """
    def pose(times):
        s = np.asarray(times, dtype=float)
        r, w = radius, omega
        c, sn, c2, s2 = np.cos(w * s), np.sin(w * s), np.cos(2 * w * s), np.sin(2 * w * s)
        P = np.array([r * sn, r * (1 - c), depth + lift * (1 - c2) / 2])
        V = np.array([r * w * c, r * w * sn, lift * w * s2])
        A = np.array([-r * w * w * sn, r * w * w * c, 2 * lift * w * w * c2])
        return P, V, A
    return pose


__all__ = ["HEAVY_TOP", "spherical_pendulum", "heavy_top", "rssr", "rssr_guess", "chain_parameters", "spatial_chain",
           "stewart_platform", "stewart_leg_motions", "DELTA_FLEXPICKER", "delta_inverse_kinematics", "delta_robot",
           "delta_circle"]
