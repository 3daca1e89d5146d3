"""Ready-made planar linkages as ``Network`` builders: slider-crank, four-bar, five-bar,
3-RRR parallel manipulator and n-link pendulum (bodies are uniform bars unless stated).

Angles follow :mod:`netdyn.components.planar`. ``BOOK`` holds the parameters used for the
book's Examples 4.2 and 4.3 (the book prints none).

>>> net = four_bar()
>>> m = net.model()
>>> m.metadata["planar"]["gruebler"], len(m.constraints)
(1, 8)
>>> four_bar().model(formulation="relative").coordinate_names
['theta_O', 'theta_D', 'theta_A']
"""
import numpy as np

from netdyn.components.planar import Gravity, Prismatic, Revolute, RigidBody, Torque
from netdyn.network import Network

# parameters of the book's Examples 4.2 (slider-crank) and 4.3 (four-bar); the book gives none
BOOK = dict(m1=1.0, m2=2.0, m3=0.5, I1=0.1, I2=0.3, I3=0.2, l1=0.5, l2=1.2, l3=0.9, l4=1.0, tau=1.0)


def slider_crank(p=BOOK, tau=None):
    """The book's Example 4.2 from bodies and joints: crank pinned at the origin, rod, block on the x axis,
    torque ``tau`` on the crank."""
    l1, l2 = p["l1"], p["l2"]
    net = Network("slider-crank")
    net.add(RigidBody("crank", p["m1"], p["I1"]), RigidBody("rod", p["m2"], p["I2"]), RigidBody("block", p["m3"], 0.05),
            Revolute("O", "ground", (0, 0), "crank", (-l1 / 2, 0)),
            Revolute("A", "crank", (l1 / 2, 0), "rod", (-l2 / 2, 0)),
            Revolute("B", "rod", (l2 / 2, 0), "block", (0, 0)),
            Prismatic("P", "ground", (0, 0), "block", (0, 0), axis=(1, 0)),
            Torque("tau", "crank", p["tau"] if tau is None else tau))
    return net


def four_bar(p=BOOK, tau=None, gravity=False):
    """The book's Example 4.3: crank pinned at the origin, rod, rocker pinned at ``(l4, 0)``;
    ``tau=False`` leaves out the crank torque. ``FOUR_BAR_GUESS`` selects the elbow-up branch."""
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
    return net


FOUR_BAR_GUESS = {"theta_rod": 0.9, "theta_rocker": 1.9}  # the elbow-up branch


def pendulum(masses, lengths, g=9.81):
    """n-link pendulum: link i pinned at its left end to the right end of link i-1 (first to the origin)."""
    net = Network(f"pendulum-{len(masses)}")
    net.add(Gravity(g=g))
    prev, at = "ground", (0, 0)
    for i, (m, l) in enumerate(zip(masses, lengths)):
        b = f"link{i + 1}"
        net.add(RigidBody(b, m, m * l ** 2 / 12), Revolute(f"J{i + 1}", prev, at, b, (-l / 2, 0)))
        prev, at = b, (l / 2, 0)
    return net


def pendulum_state(q, u, lengths):
    """Absolute coordinates (x, y, theta per link) and their rates from relative joint angles and rates."""
    th, w = np.cumsum(q), np.cumsum(u)
    pos, vel, Q, F = np.zeros(2), np.zeros(2), [], []
    for i, l in enumerate(lengths):
        e = np.array([np.cos(th[i]), np.sin(th[i])])
        de = np.array([-np.sin(th[i]), np.cos(th[i])]) * w[i]
        Q += [*(pos + l / 2 * e), th[i]]
        F += [*(vel + l / 2 * de), w[i]]
        pos, vel = pos + l * e, vel + l * de
    return np.array(Q), np.array(F)


def five_bar():
    """Planar five-bar: cranks pinned at (0, 0) and (1, 0), couplers meeting at the end point P.

    Returns ``(network, guess)``; ``guess`` assembles the elbow-up configuration."""
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
    return net, guess


def three_rrr(R=1.0, r=0.25, L1=0.6, L2=0.6):
    """3-RRR parallel manipulator: three legs (actuated ground pin A_i, elbow E_i, platform pin B_i) on a base
    circle of radius ``R``, platform pins on radius ``r``. Returns ``(network, guess)``."""
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
            guess.update({f"x_{b}": c[0], f"y_{b}": c[1], f"theta_{b}": np.arctan2(v[1], v[0])})
    return net, guess


# Andrews' squeezing mechanism: data of Schiehlen (1990) as printed in Hairer & Wanner, Solving ODEs II,
# §VII.7 (problem "andrews" of the IVP test set of Mazzia et al.): masses (kg), inertias about the centres
# of mass (kg m²), lengths (m), spring c0 (N/m) with free length l0, driving torque mom (N m).
ANDREWS = dict(m1=.04325, m2=.00365, m3=.02373, m4=.00706, m5=.07050, m6=.00706, m7=.05498,
               i1=2.194e-6, i2=4.410e-7, i3=5.255e-6, i4=5.667e-7, i5=1.169e-5, i6=5.667e-7, i7=1.912e-5,
               xa=-.06934, ya=-.00227, xb=-.03635, yb=.03273, xc=.014, yc=.072,
               d=28e-3, da=115e-4, e=2e-2, ea=1421e-5, rr=7e-3, ra=92e-5, ss=35e-3, sa=1874e-5, sb=1043e-5,
               sc=18e-3, sd=2e-2, ta=2308e-5, tb=916e-5, u=4e-2, ua=1228e-5, ub=449e-5, zf=2e-2, zt=4e-2,
               fa=1421e-5, c0=4530.0, l0=7785e-5, mom=33e-3)

# the consistent initial angles of the test set (beta, Theta, gamma, Phi, delta, Omega, epsilon) as joint angles
ANDREWS_Q0 = {"O": -0.0617138900142764496358948458001, "F": 0.0, "B": 0.455279819163070380255912382449,
              "G": 0.222668390165885884674473185609, "A5": 0.487364979543842550225598953530,
              "H": -0.222668390165885884674473185609, "A7": 1.23054744454982119249735015568}


def andrews_squeezer(p=ANDREWS):
    """Andrews' squeezing mechanism (7 bodies, 10 revolute joints, a spring, a driving torque; no gravity),
    built from the data as the paper gives it: each body frame at a pivot, the centre of mass offset.

    Bodies ``K1`` … ``K7`` and joints: ``O`` (ground–K1, the paper's β), ``F`` (K1–K2, Θ), ``B``
    (ground–K3, γ), ``A5`` (ground–K5, δ), ``G`` (K5–K4, Φ), ``A7`` (ground–K7, ε), ``H`` (K7–K6, Ω), and
    ``E3``, ``E4``, ``E6`` where K3, K4 and K6 meet the end E of the rod K2. A joint's coordinate is the
    paper's angle, so ``ANDREWS_Q0`` (the test set's initial values) can be given directly, and
    ``model(formulation="relative", cut=["E3", "E4", "E6"])`` has the paper's seven coordinates.
    For K3, K5 and K7, which turn about fixed pivots with no gravity, only the distance of the centre of
    mass from the pivot enters the equations (``sqrt(sa² + sb²)`` etc.); it is placed at ``(sa, sb)``.

    >>> m = andrews_squeezer().model()
    >>> len(m.coordinates), len(m.constraints), m.metadata["planar"]["gruebler"]
    (21, 20, 1)
    """
    from netdyn.components.planar import Spring
    q = p
    net = Network("Andrews' squeezing mechanism")
    net.add(RigidBody("K1", q["m1"], q["i1"], com=(q["ra"], 0)),            # crank O-F, frame at O
            RigidBody("K2", q["m2"], q["i2"], com=(-q["da"], 0)),           # rod F-E, frame at F, E at (-d, 0)
            RigidBody("K3", q["m3"], q["i3"], com=(q["sa"], q["sb"])),      # triangle B-E-D, frame at B
            RigidBody("K4", q["m4"], q["i4"], com=(0, -(q["e"] - q["ea"]))),  # link G-E, frame at G
            RigidBody("K5", q["m5"], q["i5"], com=(q["ta"], q["tb"])),      # arm A-G, frame at A
            RigidBody("K6", q["m6"], q["i6"], com=(q["zf"] - q["fa"], 0)),  # link H-E, frame at H
            RigidBody("K7", q["m7"], q["i7"], com=(q["ua"], q["ub"])),      # arm A-H, frame at A
            Revolute("O", "ground", (0, 0), "K1", (0, 0)),
            Revolute("F", "K1", (q["rr"], 0), "K2", (0, 0)),
            Revolute("B", "ground", (q["xb"], q["yb"]), "K3", (0, 0)),
            Revolute("A5", "ground", (q["xa"], q["ya"]), "K5", (0, 0)),
            Revolute("G", "K5", (q["zt"], 0), "K4", (0, 0)),
            Revolute("A7", "ground", (q["xa"], q["ya"]), "K7", (0, 0)),
            Revolute("H", "K7", (0, -q["u"]), "K6", (0, 0)),
            Revolute("E3", "K2", (-q["d"], 0), "K3", (0, -q["ss"])),
            Revolute("E4", "K2", (-q["d"], 0), "K4", (0, -q["e"])),
            Revolute("E6", "K2", (-q["d"], 0), "K6", (q["zf"], 0)),
            Spring("spring", "ground", (q["xc"], q["yc"]), "K3", (q["sd"], -q["sc"]), k=q["c0"], length=q["l0"]),
            Torque("mom", "K1", q["mom"]))
    return net
