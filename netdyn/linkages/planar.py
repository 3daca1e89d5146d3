"""Ready-made planar linkages as ``Network`` builders: slider-crank, four-bar, five-bar,
3-RRR parallel manipulator and n-link pendulum (bodies are uniform bars unless stated).

Angles follow :mod:`netdyn.components.planar`. ``BOOK`` holds the parameters used for the
book's Examples 4.2 and 4.3 (the book prints none).

>>> net = four_bar()
>>> m = net.model()
>>> m.metadata["planar"].gruebler, len(m.constraints)
(1, 8)
>>> four_bar().model(formulation="relative").coordinate_names
['theta_O', 'theta_D', 'theta_A']
"""
from __future__ import annotations
import numpy as np

from netdyn.components.planar import Gravity, Prismatic, Revolute, RigidBody, Torque
from netdyn.graph.network import Network

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # names for the hints only (annotations are not evaluated)
    from collections.abc import Mapping, Sequence
    from typing import Any
    from netdyn.hints import ArrayLike, Value

# parameters of the book's Examples 4.2 (slider-crank) and 4.3 (four-bar); the book gives none
BOOK = dict(m1=1.0, m2=2.0, m3=0.5, I1=0.1, I2=0.3, I3=0.2, l1=0.5, l2=1.2, l3=0.9, l4=1.0, tau=1.0)


def slider_crank(p: Mapping[str, float] = BOOK, tau: Value | None = None) -> Network:
    """The book's Example 4.2 from bodies and joints: crank pinned at the origin, rod, block on the x axis,
    torque ``tau`` on the crank. The network stores the assembly with the crank at 0 and the block to the
    right (:func:`slider_crank_pose`).

    >>> net = slider_crank()
    >>> sorted(net.bodies), net.model().metadata["planar"].gruebler
    (['block', 'crank', 'rod'], 1)
    """
    l1, l2 = p["l1"], p["l2"]
    net = Network("slider-crank")
    net.add(RigidBody("crank", p["m1"], p["I1"]), RigidBody("rod", p["m2"], p["I2"]), RigidBody("block", p["m3"], 0.05),
            Revolute("O", "ground", (0, 0), "crank", (-l1 / 2, 0)),
            Revolute("A", "crank", (l1 / 2, 0), "rod", (-l2 / 2, 0)),
            Revolute("B", "rod", (l2 / 2, 0), "block", (0, 0)),
            Prismatic("P", "ground", (0, 0), "block", (0, 0), axis=(1, 0)),
            Torque("tau", "crank", p["tau"] if tau is None else tau))
    net.set_assembly(guess=slider_crank_pose(p))
    return net


def _bar(name, P0, P1):
    """Coordinates of a bar whose frame is at its middle, from its end points."""
    c, d = (P0 + P1) / 2, P1 - P0
    return {f"x_{name}": float(c[0]), f"y_{name}": float(c[1]), f"theta_{name}": float(np.arctan2(d[1], d[0]))}


def slider_crank_pose(p: Mapping[str, float] = BOOK, angle: float = 0.0) -> dict[str, float]:
    """Every coordinate of :func:`slider_crank` with the crank at ``angle`` and the block to the right of the
    crank pin (the branch the linkage stores as its assembly guess).

    >>> {k: round(v, 6) for k, v in slider_crank_pose().items() if k.startswith("x_")}
    {'x_crank': 0.25, 'x_rod': 1.1, 'x_block': 1.7}
    """
    l1, l2 = float(p["l1"]), float(p["l2"])
    A = l1 * np.array([np.cos(angle), np.sin(angle)])
    if abs(A[1]) > l2:
        raise ValueError(f"the rod ({l2}) cannot reach the slide from the crank at {angle} rad")
    B = np.array([A[0] + np.sqrt(l2 ** 2 - A[1] ** 2), 0.0])
    return {**_bar("crank", np.zeros(2), A), **_bar("rod", A, B), "x_block": float(B[0]), "y_block": 0.0,
            "theta_block": 0.0}


def four_bar(p: Mapping[str, float] = BOOK, tau: Value | None = None, gravity: bool = False) -> Network:
    """The book's Example 4.3: crank pinned at the origin, rod, rocker pinned at ``(l4, 0)``;
    ``tau=False`` leaves out the crank torque. The network stores the elbow-up assembly with the crank at 0
    (``net.assembly.guess``, :func:`four_bar_pose`), so ``netdyn.simulate(four_bar(), (0, 1))`` starts on it;
    ``FOUR_BAR_GUESS``, a rough guess of the same branch, still works as ``guess=``.

    >>> import netdyn
    >>> q = netdyn.assemble_configuration(four_bar().model(), guess=FOUR_BAR_GUESS, q0={"theta_crank": 0.4})
    >>> round(float(q["theta_rod"]), 4), round(float(q["theta_rocker"]), 4)
    (0.4537, 0.9285)
    """
    l1, l2, l3, l4 = p["l1"], p["l2"], p["l3"], p["l4"]
    net = Network("four-bar")
    net.add(RigidBody("crank", p["m1"], p["I1"]), RigidBody("rod", p["m2"], p["I2"]),
            RigidBody("rocker", p["m3"], p["I3"]),
            Revolute("O", "ground", (0, 0), "crank", (-l1 / 2, 0)),
            Revolute("A", "crank", (l1 / 2, 0), "rod", (-l2 / 2, 0)),
            Revolute("C", "rod", (l2 / 2, 0), "rocker", (l3 / 2, 0)),
            Revolute("D", "ground", (l4, 0), "rocker", (-l3 / 2, 0)))
    if tau is not False:
        net.add(Torque("tau", "crank", p["tau"] if tau is None else tau))
    if gravity:
        net.add(Gravity())
    net.set_assembly(guess=four_bar_pose(p))
    return net


#: a rough guess of the elbow-up branch (the linkage's own assembly, ``four_bar().assembly``, is exact; this
#: constant is kept for code that passes ``guess=FOUR_BAR_GUESS``)
FOUR_BAR_GUESS = {"theta_rod": 0.9, "theta_rocker": 1.9}


def four_bar_pose(p: Mapping[str, float] = BOOK, angle: float | None = None) -> dict[str, float]:
    """Every coordinate of :func:`four_bar` on the elbow-up branch (the coupler pin above the line from the
    crank pin to the rocker pivot) with the crank at ``angle``; by default the first of 0, π/2, π, 3π/2 at
    which the loop closes (``FOUR_BAR_GUESS`` only where it closes at none of them).

    >>> {k: round(v, 4) for k, v in four_bar_pose().items() if k.startswith("theta")}
    {'theta_crank': 0.0, 'theta_rod': 0.7476, 'theta_rocker': 1.1349}
    """
    l1, l2, l3, l4 = (float(p[k]) for k in ("l1", "l2", "l3", "l4"))
    D = np.array([l4, 0.0])
    for a in ([angle] if angle is not None else [0.0, np.pi / 2, np.pi, 3 * np.pi / 2]):
        A = l1 * np.array([np.cos(a), np.sin(a)])
        v = D - A
        d = float(np.hypot(*v))
        if d == 0 or d > l2 + l3 or d < abs(l2 - l3):
            continue
        along = (l2 ** 2 - l3 ** 2 + d ** 2) / (2 * d)
        C = A + along * v / d + np.sqrt(max(l2 ** 2 - along ** 2, 0.0)) * np.array([-v[1], v[0]]) / d
        return {**_bar("crank", np.zeros(2), A), **_bar("rod", A, C), **_bar("rocker", D, C)}
    if angle is not None:
        raise ValueError(f"the four-bar's loop does not close with the crank at {angle} rad")
    return dict(FOUR_BAR_GUESS)


def pendulum(masses: Sequence[float], lengths: Sequence[float], g: float = 9.81) -> Network:
    """n-link pendulum: link i pinned at its left end to the right end of link i-1 (first to the origin).
    An open chain assembles from any start, so it stores no assembly (``net.assembly`` is empty): it starts
    from zero angles unless ``q0`` says otherwise.

    >>> net = pendulum(masses=[1.0, 1.0], lengths=[1.0, 0.5])
    >>> net.model(formulation="relative").coordinate_names
    ['theta_J1', 'theta_J2']
    """
    net = Network(f"pendulum-{len(masses)}")
    net.add(Gravity(g=g))
    prev, at = "ground", (0, 0)
    for i, (m, l) in enumerate(zip(masses, lengths)):
        b = f"link{i + 1}"
        net.add(RigidBody(b, m, m * l ** 2 / 12), Revolute(f"J{i + 1}", prev, at, b, (-l / 2, 0)))
        prev, at = b, (l / 2, 0)
    return net


def pendulum_state(q: ArrayLike, u: ArrayLike, lengths: Sequence[float]) -> tuple[Any, Any]:
    """Absolute coordinates (x, y, theta per link) and their rates from relative joint angles and rates.

    >>> Q, F = pendulum_state(np.array([0.0, np.pi / 2]), np.array([1.0, 0.0]), [1.0, 0.5])
    >>> np.round(Q, 6).tolist()      # x, y, theta of link 1, then of link 2
    [0.5, 0.0, 0.0, 1.0, 0.25, 1.570796]
    """
    th, w = np.cumsum(q), np.cumsum(u)
    pos, vel, Q, F = np.zeros(2), np.zeros(2), [], []
    for i, l in enumerate(lengths):
        e = np.array([np.cos(th[i]), np.sin(th[i])])
        de = np.array([-np.sin(th[i]), np.cos(th[i])]) * w[i]
        Q += [*(pos + l / 2 * e), th[i]]
        F += [*(vel + l / 2 * de), w[i]]
        pos, vel = pos + l * e, vel + l * de
    return np.array(Q), np.array(F)


def five_bar() -> tuple[Network, dict[str, float]]:
    """Planar five-bar: cranks pinned at (0, 0) and (1, 0), couplers meeting at the end point P.

    Returns ``(network, guess)``; ``guess`` assembles the elbow-up configuration, and the network stores it
    (``net.assembly.guess``).

    >>> net, guess = five_bar()
    >>> sorted(net.bodies), net.model().metadata["planar"].gruebler
    (['c1', 'c2', 'k1', 'k2'], 2)
    """
    net = Network("five-bar")
    L = dict(c1=0.6, c2=0.6, k1=0.9, k2=0.9)
    for b, l in L.items():
        net.add(RigidBody(b, 1.0 * l, l ** 3 / 12))
    net.add(Gravity(),
            Revolute("J1", "ground", (0, 0), "c1", (-0.3, 0)), Revolute("J2", "ground", (1, 0), "c2", (-0.3, 0)),
            Revolute("E1", "c1", (0.3, 0), "k1", (-0.45, 0)), Revolute("E2", "c2", (0.3, 0), "k2", (-0.45, 0)),
            Revolute("P", "k1", (0.45, 0), "k2", (0.45, 0)))
    guess = {"theta_c1": 1.9, "theta_c2": 1.2, "theta_k1": 0.67, "theta_k2": 2.47,
             "x_c1": -0.1, "y_c1": 0.28, "x_c2": 1.1, "y_c2": 0.28, "x_k1": 0.16, "y_k1": 0.85,
             "x_k2": 0.86, "y_k2": 0.84}
    net.set_assembly(guess=guess)
    return net, guess


def three_rrr(R: float = 1.0, r: float = 0.25, L1: float = 0.6, L2: float = 0.6) -> tuple[Network, dict[str, float]]:
    """3-RRR parallel manipulator: three legs (actuated ground pin A_i, elbow E_i, platform pin B_i) on a base
    circle of radius ``R``, platform pins on radius ``r``. Returns ``(network, guess)``: the assembly with
    the platform at the centre, which the network also stores (``net.assembly.guess``).

    >>> net, guess = three_rrr()
    >>> len(net.bodies), net.model().metadata["planar"].gruebler
    (7, 3)
    """
    net = Network("3-RRR")
    net.add(Gravity(), RigidBody("platform", 1.5, 0.02))
    guess = {"x_platform": 0.0, "y_platform": 0.0, "theta_platform": 0.0}
    for i, a in enumerate(np.deg2rad([90.0, 210.0, 330.0]), start=1):
        A = R * np.array([np.cos(a), np.sin(a)])
        sB = r * np.array([np.cos(a), np.sin(a)])
        d = np.linalg.norm(A - sB)
        h = np.sqrt(L1 ** 2 - (d / 2) ** 2)
        E = (A + sB) / 2 + h * np.array([np.sin(a), -np.cos(a)])
        net.add(RigidBody(f"p{i}", 0.6, 0.6 * L1 ** 2 / 12), RigidBody(f"d{i}", 0.5, 0.5 * L2 ** 2 / 12),
                Revolute(f"A{i}", "ground", tuple(A), f"p{i}", (-L1 / 2, 0)),
                Revolute(f"E{i}", f"p{i}", (L1 / 2, 0), f"d{i}", (-L2 / 2, 0)),
                Revolute(f"B{i}", f"d{i}", (L2 / 2, 0), "platform", tuple(sB)))
        for b, (P0, P1) in ((f"p{i}", (A, E)), (f"d{i}", (E, sB))):
            c, v = (P0 + P1) / 2, P1 - P0
            guess.update({f"x_{b}": float(c[0]), f"y_{b}": float(c[1]), f"theta_{b}": float(np.arctan2(v[1], v[0]))})
    net.set_assembly(guess=guess)
    return net, guess

