"""Andrews' squeezing mechanism (Schiehlen 1990; Hairer & Wanner, Solving ODEs II, §VII.7; problem
``andrews`` of the IVP test set of Mazzia, Magherini & Iavernaro), built from the paper's data with the
body frames at the pivots.

>>> len(ANDREWS_Q0), ANDREWS["mom"]
(7, 0.033)
"""
from __future__ import annotations
from netdyn.components.planar import Revolute, RigidBody, Spring, Torque
from netdyn.graph.network import Network

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # names for the hints only (annotations are not evaluated)
    from collections.abc import Mapping

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


def andrews_squeezer(p: Mapping[str, float] = ANDREWS) -> Network:
    """Andrews' squeezing mechanism (7 bodies, 10 revolute joints, a spring, a driving torque; no gravity),
    built from the data as the paper gives it: each body frame at a pivot, the centre of mass offset.

    Bodies ``K1`` … ``K7`` and joints: ``O`` (ground–K1, the paper's β), ``F`` (K1–K2, Θ), ``B``
    (ground–K3, γ), ``A5`` (ground–K5, δ), ``G`` (K5–K4, Φ), ``A7`` (ground–K7, ε), ``H`` (K7–K6, Ω), and
    ``E3``, ``E4``, ``E6`` where K3, K4 and K6 meet the end E of the rod K2. A joint's coordinate is the
    paper's angle, so ``ANDREWS_Q0`` (the test set's initial values) can be given directly, and
    ``model(formulation="relative", cut=["E3", "E4", "E6"])`` has the paper's seven coordinates.
    For K3, K5 and K7, which turn about fixed pivots with no gravity, only the distance of the centre of
    mass from the pivot enters the equations (``sqrt(sa² + sb²)`` etc.); it is placed at ``(sa, sb)``.
    With the paper's data the network stores the test set's initial state as its assembly: ``q0`` holds β
    (``theta_O``), ``guess`` the other angles (``ANDREWS_Q0``), so ``netdyn.simulate(andrews_squeezer(),
    (0, 0.03))`` starts where the test set does.

    >>> m = andrews_squeezer().model()
    >>> len(m.coordinates), len(m.constraints), m.metadata["planar"].gruebler
    (21, 20, 1)
    """
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
    if p == ANDREWS:  # the test set's initial state (its angles are those of the paper's data only)
        net.set_assembly(q0={"theta_O": ANDREWS_Q0["O"]}, guess={f"theta_{j}": v for j, v in ANDREWS_Q0.items()})
    return net
