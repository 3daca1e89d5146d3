"""Every spatial joint kind and every load on the recursive engine = the symbolic relative formulation.

``simulate`` (the recursive path that ``method="auto"`` picks, against ``method="projection"``),
``inverse_dynamics`` (DeNOC against least squares) and ``linearize`` (numeric derivatives of ABA against
the symbolic Jacobians) agree to 1e-9 on small systems over short spans; what the recursive path does not
take is declined with a reason.
"""
import os

import numpy as np
import pytest
import sympy as sp

import netdyn
from netdyn import Network, t
from netdyn.components.spatial import (Cylindrical, Damper, Fixed, Force, Gravity, Joint, JointActuator, JointDamper,
                                       JointSpring, Planar, Prismatic, RigidBody, Revolute, Spherical, Spring, Torque,
                                       Universal)
from netdyn.numerics.paths import method_for

R1 = np.array([[0.0, -0.6, 0.8], [1.0, 0.0, 0.0], [0.0, 0.8, 0.6]])      # frames with no axis aligned
R2 = np.array([[0.6, 0.0, 0.8], [0.0, 1.0, 0.0], [-0.8, 0.0, 0.6]])
INERTIA = [[0.12, 0.01, -0.02], [0.01, 0.09, 0.015], [-0.02, 0.015, 0.07]]


def joint(kind):
    """A joint of ``kind`` from the ground to body b, with its free components."""
    a, b = ((0.1, 0.0, 0.2), R1), ((0.0, 0.05, -0.1), R2)
    return {"revolute": (Revolute("J", "ground", (0.1, 0, 0.2), "b", (0, 0.05, -0.1), axis=(0.3, -0.2, 1.0)), ["rz"]),
            "prismatic": (Prismatic("J", "ground", a, "b", b), ["z"]),
            "cylindrical": (Cylindrical("J", "ground", a, "b", b), ["z", "rz"]),
            "universal": (Universal("J", "ground", a, "b", b), ["rx", "ry"]),
            "planar": (Planar("J", "ground", a, "b", b), ["x", "y", "rz"]),
            "joint": (Joint("J", "ground", a, "b", b, position=(None, 0, 0.1), rotation=(0, 0, None)), ["x", "rz"]),
            }[kind]


def body(name="b", m=1.3):
    return RigidBody(name, m, INERTIA, com=(0.1, -0.05, 0.3))


def network(kind, loads=("gravity", "spring", "jdamper")):
    net = Network(kind)
    j, free = joint(kind)
    net.add(body(), j)
    for ld in loads:
        net.add({"gravity": lambda: Gravity(vector=(0.5, -1.0, -9.81)),
                 "spring": lambda: Spring("k", "ground", (0.3, 0.2, 0.5), "b", (0.1, 0, 0), k=20.0, length=0.2),
                 "jdamper": lambda: JointDamper("c", "J", 0.3, component=free[0])}[ld]())
    return net, free


def coordinate(free, kind):
    if kind == "universal":
        return ["alpha_J" if c == "rx" else "beta_J" for c in free]
    return [f"s{c}_J" if len(c) == 1 else f"theta{c[-1]}_J" for c in free]


JOINTS = ["revolute", "prismatic", "cylindrical", "universal", "planar", "joint"]


@pytest.mark.parametrize("kind", JOINTS)
def test_every_joint_kind_simulates_as_the_symbolic_path(kind):
    net, free = network(kind)
    names = coordinate(free, kind)
    q0 = {n: 0.1 * (k + 1) for k, n in enumerate(names)}
    te = np.linspace(0, 0.2, 3)
    choice = method_for(net)
    assert choice.name == "recursive", choice.declined
    rec = netdyn.simulate(net, (0, 0.2), q0=q0, t_eval=te, rtol=1e-12, atol=1e-12)
    ref = netdyn.simulate(net, (0, 0.2), q0=q0, t_eval=te, rtol=1e-12, atol=1e-12, method="projection",
                          formulation="relative")
    assert rec.method == "recursive" and ref.method == "projection"
    for n in names:
        assert np.max(np.abs(rec[n] - ref[n])) < 1e-9, n


@pytest.mark.parametrize("kind", JOINTS)
def test_every_free_component_is_driven_by_inverse_dynamics_as_least_squares(kind):
    net, free = network(kind)
    drivers = {f"J[{c}]": 0.1 * (k + 1) + 0.2 * sp.sin((k + 2) * t) for k, c in enumerate(free)}
    te = np.linspace(0, 0.4, 3)
    rec = netdyn.inverse_dynamics(net, drivers, te)
    ref = netdyn.inverse_dynamics(net.model(formulation="relative"), drivers, te, method="least-squares")
    assert rec.method == "recursive"
    for d in drivers:
        assert np.max(np.abs(rec.efforts[d] - ref.efforts[d])) < 1e-9 * (1 + np.max(np.abs(ref.efforts[d]))), d


SLOW = pytest.mark.skipif(os.environ.get("NETDYN_SLOW_TESTS") != "1",
                          reason="the symbolic linearization of a Universal joint takes about 100 s: NETDYN_SLOW_TESTS=1")


@pytest.mark.parametrize("kind", [k if k != "universal" else pytest.param(k, marks=SLOW) for k in JOINTS])
def test_every_joint_kind_linearizes_as_the_symbolic_path(kind):
    net = Network(kind)
    j, free = joint(kind)
    net.add(body(), j, *[JointSpring(f"k{c}", "J", 5.0 + k, component=c) for k, c in enumerate(free)],
            JointDamper("c", "J", 0.2, component=free[0]), JointActuator("u", "J", 0.0, component=free[-1]))
    names = coordinate(free, kind)
    rec = netdyn.linearize(net, inputs=["u"], outputs=[names[0]])
    assert rec.method == "recursive"
    net.elements["u"].values["effort"] = sp.Function("u")(t)
    ref = netdyn.linearize(net.model(formulation="relative"), inputs=["u"], outputs=[names[0]])
    assert np.max(np.abs(np.sort_complex(rec.poles()) - np.sort_complex(ref.poles()))) < 1e-9
    for w in (0.5, 3.0):
        assert abs(rec.frequency_response([w])[0] - ref.frequency_response([w])[0]) < 1e-9


LOADS = {
    "gravity": lambda: [Gravity(vector=(1.0, 0.5, -9.81))],
    "force_global": lambda: [Force("F", "c", (0.1, 0.2, 0.0), (1.0, -2.0, 0.5))],
    "force_body": lambda: [Force("F", "b", (0.0, 0.1, 0.3), (0.5, 1.0, -1.0), frame="body")],
    "torque": lambda: [Torque("T", "c", (0.2, -0.1, 0.4), frame="body"),
                       Torque("T2", "b", (0.1, 0.3, -0.2), reaction="ground")],
    "spring": lambda: [Spring("k", "ground", (0.3, 0.2, 0.5), "c", (0.1, 0, 0), k=30.0, length=0.3)],
    "spring_zero_length": lambda: [Spring("k", "b", (0.0, 0.3, 0.0), "c", (0.1, 0, 0), k=10.0)],
    "damper": lambda: [Damper("d", "ground", (0.3, 0.2, 0.5), "c", (0.1, 0, 0), c=2.0)],
    "actuator_in_time": lambda: [JointActuator("u", "P", 2.0 * sp.sin(3 * t))],
    "joint_spring_damper": lambda: [JointSpring("kA", "A", 4.0, rest=0.2), JointDamper("cP", "P", 0.5)],
}


def loaded(load):
    net = Network(load)
    net.add(body("b", 1.0), body("c", 0.6),
            Revolute("A", "ground", (0, 0, 0), "b", (0, 0, 0), axis=(0.2, 0.3, 1.0)),
            Prismatic("P", "b", ((0.3, 0.1, 0.0), R1), "c", ((0.0, 0.0, 0.1), R2)), *LOADS[load]())
    return net


@pytest.mark.parametrize("load", sorted(LOADS))
def test_every_load_simulates_and_inverts_as_the_symbolic_path(load):
    net = loaded(load)
    q0, f0 = {"thetaz_A": 0.3, "sz_P": 0.1}, {"thetaz_A": -0.5, "sz_P": 0.2}
    te = np.linspace(0, 0.2, 3)
    rec = netdyn.simulate(net, (0, 0.2), q0=q0, f0=f0, t_eval=te, rtol=1e-12, atol=1e-12)
    ref = netdyn.simulate(net, (0, 0.2), q0=q0, f0=f0, t_eval=te, rtol=1e-12, atol=1e-12, method="projection",
                          formulation="relative")
    assert rec.method == "recursive"
    for n in ("thetaz_A", "sz_P", "thetaz_A_dot", "sz_P_dot"):
        assert np.max(np.abs(rec[n] - ref[n])) < 1e-9, n
    drivers = {"A": 0.3 * sp.sin(2 * t), "P": 0.1 + 0.05 * t ** 2}
    inv = netdyn.inverse_dynamics(net, drivers, te)
    lsq = netdyn.inverse_dynamics(net.model(formulation="relative"), drivers, te, method="least-squares")
    for d in drivers:
        assert np.max(np.abs(inv.efforts[d] - lsq.efforts[d])) < 1e-9 * (1 + np.max(np.abs(lsq.efforts[d])))


def test_what_the_tree_does_not_take_is_declined_with_the_reason():
    ball = Network("ball")
    ball.add(body(), Gravity(), Spherical("S", "ground", (0, 0, 0), "b", (0, 0, 0.5)))
    choice = method_for(ball)
    assert choice.name != "recursive"
    assert "ball joints" in dict(choice.declined)["recursive"]
    floating = Network("floating")
    floating.add(body(), Joint("free", "ground", (0, 0, 0), "b", (0, 0, 0), position="", rotation=""))
    assert "free rotations" in dict(method_for(floating).declined)["recursive"]
    planar = netdyn.linkages.pendulum([1.0], [1.0])
    assert "recursive" not in dict(method_for(planar).declined)     # never a candidate: no news
    from netdyn.numerics.mechanics.recursive import auto_verdict
    from netdyn.numerics.problem import Problem
    assert "planar network" in auto_verdict(Problem.from_call(planar, (0, 1)))[1]


def test_a_fixed_joint_carries_its_body_with_the_parent():
    net = Network("welded")
    net.add(body("b", 1.0), body("c", 0.5), Gravity(),
            Revolute("A", "ground", (0, 0, 0), "b", (0, 0, 0), axis=(1.0, 0.2, 0.1)),
            Fixed("W", "b", ((0.4, 0.0, 0.1), R1), "c", ((0.0, 0.1, 0.0), R2)))
    te = np.linspace(0, 0.3, 4)
    rec = netdyn.simulate(net, (0, 0.3), q0={"thetaz_A": 0.4}, t_eval=te, rtol=1e-12, atol=1e-12)
    ref = netdyn.simulate(net, (0, 0.3), q0={"thetaz_A": 0.4}, t_eval=te, rtol=1e-12, atol=1e-12,
                          method="projection", formulation="relative")
    assert rec.method == "recursive"
    assert np.max(np.abs(rec["thetaz_A"] - ref["thetaz_A"])) < 1e-9


def test_body_poses_by_absolute_names_match_the_absolute_formulation():
    from netdyn.linkages.spatial import spatial_chain
    net = spatial_chain(2)
    te = np.linspace(0, 0.3, 4)
    rec = netdyn.simulate(net, (0, 0.3), t_eval=te, rtol=1e-12, atol=1e-12)
    ref = netdyn.simulate(net, (0, 0.3), t_eval=te, rtol=1e-12, atol=1e-12, method="projection")
    assert rec.method == "recursive" and ref.model.metadata["spatial"].formulation == "absolute"
    for n in ref.model.coordinate_names:
        assert np.max(np.abs(rec[n] - ref[n])) < 1e-9, n
        assert np.max(np.abs(rec[n + "_dot"] - ref[n + "_dot"])) < 1e-9, n


def test_universal_angles_are_driven_and_read_in_the_absolute_formulation():
    net, free = network("universal")
    drivers = {"J[rx]": 0.1 + 0.2 * sp.sin(2 * t), "J[ry]": -0.2 + 0.3 * t}
    te = np.linspace(0, 0.4, 3)
    rec = netdyn.inverse_dynamics(net, drivers, te)
    start = {f"{c}_b": float(rec[f"{c}_b"][0]) for c in ("x", "y", "z", "e0", "e1", "e2", "e3")}
    ref = netdyn.inverse_dynamics(net.model(), drivers, te, method="least-squares", guess=start)
    assert ref.model.metadata["spatial"].formulation == "absolute"
    for d in drivers:
        assert np.max(np.abs(rec.efforts[d] - ref.efforts[d])) < 1e-8 * (1 + np.max(np.abs(ref.efforts[d]))), d
    # the Cardan angles measured on the absolute motion are the driven ones
    joint = net.elements["J"]
    md = ref.model.metadata["spatial"]
    alpha = joint.coordinate(netdyn.components.spatial.GROUND, md.poses["b"], "rx")
    assert np.max(np.abs(ref.evaluate(ref._internal(alpha)) - rec["alpha_J"])) < 1e-9


def rssr_network(coupling):
    """The RSSR four-bar of ``netdyn.linkages.spatial.rssr`` with a thin-rod coupler (no axial inertia),
    its far end on a ball joint (``"S"``: the rod's spin idle) or on a Universal joint (``"U"``)."""
    from netdyn.linkages.spatial import rssr_guess
    net = Network(f"RSS{coupling}")
    far = (Spherical("J2", "rod", (0, 0, 1.0), "rocker", (0, 0, 0.7)) if coupling == "S" else
           Universal("J2", "rod", (0, 0, 1.0), "rocker", (0, 0, 0.7), axis_a=(1, 0, 0), axis_b=(0, 1, 0)))
    net.add(RigidBody("crank", 0.5, (1e-3, 2e-3, 2e-3), com=(0.1, 0, 0)),
            RigidBody("rod", 1.0, (0.08, 0.08, 0.0), com=(0, 0, 0.5)),
            RigidBody("rocker", 0.8, (0.03, 0.03, 1e-3), com=(0, 0, 0.35)), Gravity(),
            Revolute("R1", "ground", (0, 0, 0), "crank", (0, 0, 0), axis=(0, 0, 1)),
            Spherical("J1", "crank", (0.2, 0, 0), "rod", (0, 0, 0)), far,
            Revolute("R2", "ground", (0.6, 0.0, 0.3), "rocker", (0, 0, 0), axis=(1, 0, 0)))
    net.set_assembly(guess=rssr_guess(formulation="absolute"))
    return net


def test_spatial_four_bar_with_an_idle_coupler_spin_matches_its_universal_twin_and_the_closed_form():
    from netdyn.errors import IdleFreedomWarning
    from netdyn.linkages.spatial import rssr_guess
    te = np.linspace(0, 0.5, 26)
    drive = {"R1": 2 * np.pi * t}
    with pytest.warns(IdleFreedomWarning, match="rod: its spin about the line of ball joints J1 and J2 is idle"):
        rec = netdyn.inverse_dynamics(rssr_network("S"), drive, te)
    assert rec.method == "recursive"
    ref = netdyn.inverse_dynamics(rssr_network("U").model(), drive, te, method="least-squares",
                                  guess=rssr_guess(formulation="absolute"))
    assert np.max(np.abs(rec.efforts["R1"] - ref.efforts["R1"])) < 1e-8 * np.max(np.abs(ref.efforts["R1"]))
    # the rocker follows the closed-form input-output relation (rod length kept), at every sample
    for k in (0, 7, 19):
        g = rssr_guess(angle=2 * np.pi * te[k], formulation="absolute")
        assert abs(rec["e1_rocker"][k] - g["e1_rocker"]) < 1e-9 and abs(rec["e0_rocker"][k] - g["e0_rocker"]) < 1e-9


def test_a_thin_rod_turned_about_its_own_axis_is_refused_by_name():
    net = Network("spun rod")
    net.add(RigidBody("rod", 1.0, (0.1, 0.1, 0.0)), Revolute("A", "ground", (0, 0, 0), "rod", (0, 0, 0)))
    assert "move no inertia" in dict(method_for(net).declined)["recursive"]


def test_mobility_on_the_tree_counts_the_idle_spin_out():
    from netdyn.errors import IdleFreedomWarning
    with pytest.warns(IdleFreedomWarning):
        m = netdyn.mobility(rssr_network("S"))
    assert (m.dof, m.gruebler, m.redundant) == (1, 2, [])      # Grübler counts the coupler's idle spin
    twin = netdyn.mobility(rssr_network("U"))
    assert twin.dof == 1


def bricard():
    """The orthogonal Bricard 6R loop (Bricard 1897; Baker 1980): six equal links of length a, every twist
    90°, no offsets — in DH terms joint k+1 sits at (a, 0, 0) of link k turned by Rx(90°). Grübler counts 0
    freedoms, the loop moves with one (a redundant row). Built through the public API with (point, R) frames."""
    Rx = np.array([[1.0, 0, 0], [0, 0, -1], [0, 1, 0]])
    net = Network("orthogonal Bricard")
    for k in range(1, 6):
        net.add(RigidBody(f"B{k}", 1.0, (0.1, 0.1, 0.05), com=(0.5, 0, 0)))
    net.add(Gravity(), Revolute("J1", "ground", ((0, 0, 0), np.eye(3)), "B1", ((0, 0, 0), np.eye(3))),
            *[Revolute(f"J{k}", f"B{k - 1}", ((1.0, 0, 0), Rx), f"B{k}", ((0, 0, 0), np.eye(3))) for k in range(2, 6)],
            Revolute("J6", "B5", ((1.0, 0, 0), Rx), "ground", ((-1.0, 0, 0), Rx.T)))
    return net


def test_overconstrained_bricard_loop_moves_and_its_drive_power_is_the_energy_rate():
    net = bricard()
    # an assembly on the one-freedom branch (θ1 = −θ5 = −θ3, θ2 = −θ6: the loop's symmetry)
    a, b = 1.189202845777101, 1.845591040474703
    guess = {"thetaz_J1": a, "thetaz_J2": b, "thetaz_J3": -a, "thetaz_J5": -a, "thetaz_J6": -b}
    m = netdyn.mobility(net, guess=guess)
    assert (m.dof, m.gruebler, len(m.redundant)) == (1, 0, 1)
    h, centres = 1e-4, np.array([0.1, 0.3])
    te = np.sort(np.concatenate([centres - h, centres, centres + h]))
    res = netdyn.inverse_dynamics(net, {"J1": a + 0.4 * t}, te, guess=guess)
    assert res.method == "recursive" and np.ptp(res["thetaz_J2"]) > 0.04
    E = res.energy()                                   # kinetic + gravitational; nothing dissipates
    for k in (1, 4):
        dE = (E[k + 1] - E[k - 1]) / (2 * h)
        assert abs(res.efforts["J1"][k] * 0.4 - dE) < 1e-6 * (1 + abs(dE))
