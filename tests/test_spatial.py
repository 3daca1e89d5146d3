"""Spatial mechanisms from 3-D bodies and relative-pose joints, checked against Pinocchio's ``aba``, an
independent scipy integration of Euler's equations (heavy top), the planar engine (the book's four-bar),
numerical null spaces of the constraint Jacobians, prescribed motions, energy balance and closed forms."""
import numpy as np
import pytest
import sympy as sp
from scipy.integrate import cumulative_simpson, solve_ivp

import netdyn
from netdyn import t
from netdyn.components import spatial as S
from netdyn.components.spatial import (ConstantVelocity, Cylindrical, Driver, Fixed, Gravity, Joint, JointActuator,
                                       Planar, Prismatic, Revolute, RigidBody, Spherical, Universal, quat_matrix,
                                       rotation_vector)
from netdyn.errors import ElementError, InitialConditionError, NetdynError, SingularSystemError
from netdyn.linkages import BOOK, FOUR_BAR_GUESS, four_bar as planar_four_bar
from netdyn.linkages.spatial import HEAVY_TOP, chain_parameters, heavy_top, spatial_chain
from netdyn.numerics.functions.compiled import compile_model
from references.spatial_chain import pinocchio_chain, pinocchio_state

UNIT = {"x": np.array([1.0, 0, 0]), "y": np.array([0, 1.0, 0]), "z": np.array([0, 0, 1.0])}


def G(e):
    e0, e1, e2, e3 = e
    return np.array([[-e1, e0, e3, -e2], [-e2, -e3, e0, e1], [-e3, e2, -e1, e0]])


def R(e):
    return np.array(quat_matrix(e).tolist(), dtype=float)


# ------------------------------------------------------------------------------ Pinocchio

_CHAINS = {}


def chain_model(n, formulation):
    key = (n, formulation)
    if key not in _CHAINS:
        p = chain_parameters(n, seed=n)
        model = spatial_chain(n, p).model(formulation=formulation)
        _CHAINS[key] = (p, model, compile_model(model))
    return _CHAINS[key]


def joint_accelerations(p, Q, acc, n):
    """θ̈ of every revolute from absolute accelerations: θ̈_k = a_k·(ω̇_k − R_kᵀ R_{k−1} ω̇_{k−1}), body frames."""
    out, prev_wd, prev_R = [], np.zeros(3), np.eye(3)
    for k in range(n):
        e, edd = Q[7 * k + 3:7 * k + 7], acc[7 * k + 3:7 * k + 7]
        wd, Rk = 2 * G(e) @ edd, R(e)
        out.append(UNIT[p["axes"][k]] @ (wd - Rk.T @ prev_R @ prev_wd))
        prev_wd, prev_R = wd, Rk
    return np.array(out)


@pytest.mark.parametrize("n,formulation", [(3, "absolute"), (3, "relative"), (6, "absolute"), (12, "absolute")])
def test_chain_of_mixed_axes_matches_pinocchio_aba(n, formulation):
    import pinocchio as pin

    p, model, cm = chain_model(n, formulation)
    pm = pinocchio_chain(p)
    data = pm.createData()
    pv = cm.parameter_vector()
    rng = np.random.default_rng(n)
    for _ in range(4):
        q, v = rng.uniform(-np.pi, np.pi, n), rng.uniform(-2, 2, n)
        ref = pin.aba(pm, data, q, v, np.zeros(n))
        if formulation == "relative":
            got = cm.accelerations(0.0, q, v, pv)[0]
        else:
            Q, F = pinocchio_state(pm, q, v)
            got = joint_accelerations(p, Q, cm.accelerations(0.0, Q, F, pv)[0], n)
        assert np.max(np.abs(got - ref)) / np.max(np.abs(ref)) < 1e-9


def test_chain_absolute_and_relative_give_the_same_motion():
    n = 3
    p, rel, _ = chain_model(n, "relative")
    _, ab, _ = chain_model(n, "absolute")
    q0, v0 = np.array([0.4, -0.3, 1.1]), np.array([0.5, -1.0, 2.0])
    te = np.linspace(0, 0.5, 11)
    sr = netdyn.simulate(rel, (0, 0.5), q0=dict(zip(rel.coordinate_names, q0)),
                         f0=dict(zip(rel.coordinate_names, v0)), t_eval=te, rtol=1e-11)
    Q, F = pinocchio_state(pinocchio_chain(p), q0, v0)
    sa = netdyn.simulate(ab, (0, 0.5), q0=dict(zip(ab.coordinate_names, Q)), f0=dict(zip(ab.coordinate_names, F)),
                         t_eval=te, rtol=1e-11)
    poses = rel.metadata["spatial"].poses
    for k in range(n):
        for a, expr in zip("xyz", poses[f"L{k}"].r):
            got = sr.evaluate(sr._internal(expr))
            assert np.max(np.abs(got - sa[f"{a}_L{k}"])) < 1e-8
    assert np.ptp(sa["x_L2"]) > 0.05  # it really moved


# ------------------------------------------------------------------------------ heavy top

def top_reference(tf):
    """Euler's equations about the fixed point with quaternion kinematics, scipy DOP853 at 1e-13."""
    J, m, c = np.diag(HEAVY_TOP["J"]), HEAVY_TOP["m"], np.array(HEAVY_TOP["com"])
    J0 = J + m * (c @ c * np.eye(3) - np.outer(c, c))

    def rhs(_, y):
        e, w = y[:4], y[4:]
        tau = np.cross(c, m * R(e).T @ np.array([0, 0, -HEAVY_TOP["g"]]))
        return np.concatenate([0.5 * G(e).T @ w, np.linalg.solve(J0, tau - np.cross(w, J0 @ w))])

    y0 = np.concatenate([[1.0, 0, 0, 0], HEAVY_TOP["omega"]])
    return solve_ivp(rhs, (0, tf), y0, method="DOP853", rtol=1e-13, atol=1e-14, t_eval=[tf]).y[:4, -1], J0


def test_heavy_top_matches_euler_equations_and_conserves_energy_and_vertical_momentum():
    model = heavy_top().model()
    edot = 0.5 * G([1.0, 0, 0, 0]).T @ np.array(HEAVY_TOP["omega"])
    q0 = {"x_top": 0, "y_top": 0, "z_top": 0, "e0_top": 1, "e1_top": 0, "e2_top": 0, "e3_top": 0}
    f0 = {"x_top": 0, "y_top": 0, "z_top": 0, **{f"e{k}_top": edot[k] for k in range(4)}}
    sol = netdyn.simulate(model, (0, 0.2), q0=q0, f0=f0, rtol=1e-12, atol=1e-14, t_eval=np.linspace(0, 0.2, 41))
    eref, J0 = top_reference(0.2)
    got = sol.q[3:7, -1]
    assert np.max(np.abs(R(got) - R(eref))) < 1e-8
    E = sol.energy()
    assert np.max(np.abs(E - E[0])) / abs(E[0]) < 1e-8
    Lz = []
    for k in range(sol.t.size):
        e, ed = sol.q[3:7, k], sol.f[3:7, k]
        Lz.append((R(e) @ J0 @ (2 * G(e) @ ed))[2])
    Lz = np.array(Lz)
    assert np.max(np.abs(Lz - Lz[0])) / np.max(np.abs(J0 @ HEAVY_TOP["omega"])) < 1e-8
    assert abs(np.linalg.norm(sol.q[3:7, -1]) - 1) < 1e-12


# ------------------------------------------------------------------------------ the book's four-bar in 3-D

def spatial_four_bar(p=BOOK):
    l1, l2, l3, l4 = p["l1"], p["l2"], p["l3"], p["l4"]
    net = netdyn.Network("spatial four-bar")
    for b, m, I in (("crank", p["m1"], p["I1"]), ("rod", p["m2"], p["I2"]), ("rocker", p["m3"], p["I3"])):
        net.add(RigidBody(b, m, (I, I, I)))
    net.add(Revolute("O", "ground", (0, 0, 0), "crank", (-l1 / 2, 0, 0)),
            Revolute("A", "crank", (l1 / 2, 0, 0), "rod", (-l2 / 2, 0, 0)),
            Revolute("C", "rod", (l2 / 2, 0, 0), "rocker", (l3 / 2, 0, 0)),
            Revolute("D", "ground", (l4, 0, 0), "rocker", (-l3 / 2, 0, 0)),
            Gravity(vector=(0, -9.81, 0)))
    return net


def planar_to_spatial(q, f, names):
    """Absolute spatial coordinates of planar poses (x, y, θ per body; rotation about z)."""
    Q, F = {}, {}
    for b in names:
        x, y, th = q[f"x_{b}"], q[f"y_{b}"], q[f"theta_{b}"]
        vx, vy, w = f[f"x_{b}"], f[f"y_{b}"], f[f"theta_{b}"]
        Q.update({f"x_{b}": x, f"y_{b}": y, f"z_{b}": 0.0, f"e0_{b}": np.cos(th / 2), f"e1_{b}": 0.0,
                  f"e2_{b}": 0.0, f"e3_{b}": np.sin(th / 2)})
        F.update({f"x_{b}": vx, f"y_{b}": vy, f"z_{b}": 0.0, f"e0_{b}": -np.sin(th / 2) * w / 2, f"e1_{b}": 0.0,
                  f"e2_{b}": 0.0, f"e3_{b}": np.cos(th / 2) * w / 2})
    return Q, F


def test_book_four_bar_built_in_space_reproduces_the_planar_result():
    te = np.linspace(0, 1, 11)
    planar = netdyn.simulate(planar_four_bar(tau=False, gravity=True), (0, 1), q0={"theta_crank": 0.4},
                             f0={"theta_crank": 3.0}, guess=FOUR_BAR_GUESS, t_eval=te, rtol=1e-12)
    names = ["crank", "rod", "rocker"]
    q = {n: planar[n][0] for n in planar.model.coordinate_names}
    f = {n: planar.f[i, 0] for i, n in enumerate(planar.model.coordinate_names)}
    Q, F = planar_to_spatial(q, f, names)
    model = spatial_four_bar().model()
    mob = netdyn.mobility(model, q0=Q)
    assert (mob.gruebler, mob.dof, len(mob.redundant)) == (-2, 1, 3)   # a planar loop in space: 3 redundant rows
    sol = netdyn.simulate(model, (0, 1), q0=Q, f0=F, t_eval=te, rtol=1e-12)
    assert len(sol.model.metadata["redundant"]) == 3
    for b in names:
        assert np.max(np.abs(sol[f"x_{b}"] - planar[f"x_{b}"])) < 1e-9
        assert np.max(np.abs(sol[f"y_{b}"] - planar[f"y_{b}"])) < 1e-9
        th = 2 * np.arctan2(sol[f"e3_{b}"], sol[f"e0_{b}"])
        assert np.max(np.abs(np.angle(np.exp(1j * (th - planar[f"theta_{b}"]))))) < 1e-9
        assert np.max(np.abs(sol[f"z_{b}"])) < 1e-12


# ------------------------------------------------------------------------------ every joint type

PA, PB = (0.1, 0.2, 0.3), (-0.2, 0.1, 0.0)
JOINTS = {
    # name: (joint, constraint count, motions of b it allows: v|w, axis, frame (a or b); None: count only)
    "Revolute": (lambda: Revolute("J", "a", PA, "b", PB, axis=(0, 1, 1)), 5, ["wz@a"]),
    "Prismatic": (lambda: Prismatic("J", "a", PA, "b", PB, axis=(1, 0, 1)), 5, ["vz@a"]),
    "Cylindrical": (lambda: Cylindrical("J", "a", PA, "b", PB), 4, ["vz@a", "wz@a"]),
    "Spherical": (lambda: Spherical("J", "a", PA, "b", PB), 3, ["wx@a", "wy@a", "wz@a"]),
    "Planar": (lambda: Planar("J", "a", PA, "b", PB), 3, ["vx@a", "vy@a", "wz@a"]),
    "Fixed": (lambda: Fixed("J", "a", PA, "b", PB), 6, []),
    "ConstantVelocity": (lambda: ConstantVelocity("J", "a", PA, "b", PB), 4, None),
    "Universal": (lambda: Universal("J", "a", PA, "b", PB), 4, ["wx@a", "wy@b"]),
    "Joint(position='x', rotation='')": (
        lambda: Joint("J", "a", PA, "b", PB, position="x", rotation=""), 1, ["vy@a", "vz@a", "wx@a", "wy@a", "wz@a"]),
    "Joint(position='', rotation='xz')": (
        lambda: Joint("J", "a", PA, "b", PB, position="", rotation="xz"), 2, ["vx@a", "vy@a", "vz@a", "wy@a"]),
}


@pytest.mark.parametrize("kind", sorted(JOINTS))
def test_joint_constraint_count_and_allowed_motion(kind):
    make, count, allowed = JOINTS[kind]
    assert len(make().components) == count
    rng = np.random.default_rng(len(kind))
    net = netdyn.Network()   # body a on a free joint (no constraint): its pose is whatever the guess says
    net.add(RigidBody("a", 1.0, (1, 1, 1)), RigidBody("b", 1.0, (1, 1, 1)),
            Joint("free", "ground", (0, 0, 0), "a", (0, 0, 0), position="", rotation=""), make())
    model = net.model()
    cm = compile_model(model)
    for _ in range(3):  # body a at a random pose, body b assembled from a random guess
        e_a = rng.normal(size=4)
        e_a /= np.linalg.norm(e_a)
        Ra, ra = R(e_a), rng.normal(size=3)
        e_b = e_a + 0.3 * rng.normal(size=4)
        guess = {**{f"{c}_b": v for c, v in zip("xyz", ra + rng.normal(size=3))},
                 **{f"e{k}_b": e_b[k] / np.linalg.norm(e_b) for k in range(4)}}
        held = {"x_a": ra[0], "y_a": ra[1], "z_a": ra[2], **{f"e{k}_a": e_a[k] for k in range(4)}}
        conf = netdyn.assemble_configuration(model, q0=held, guess=guess)
        q = np.array([conf[n] for n in model.coordinate_names])
        c = cm.constraints(0.0, q, np.zeros(cm.n), cm.parameter_vector())
        assert np.max(np.abs(c.phi)) < 1e-9
        rows = [i for i, lab in enumerate(model.constraint_labels) if lab.startswith("J[")]
        assert len(rows) == count
        rb, e_b = q[7:10], q[10:14]
        T = np.zeros((7, 6))                      # (v, ω_body) of b -> (ṙ_b, ė_b)
        T[:3, :3] = np.eye(3)
        T[3:, 3:] = 0.5 * G(e_b).T
        JT = c.Phi_q[np.ix_(rows, range(7, 14))] @ T
        assert np.linalg.matrix_rank(JT, tol=1e-9) == count     # independent rows: null space of dim 6 − count
        if allowed is None:
            continue
        j, Rb = make(), R(e_b)
        Pb = rb + Rb @ np.array(PB)
        for name in allowed:
            kind_, a, frame = name[0], name[1], name[3]
            axis = (Ra @ j.R_a if frame == "a" else Rb @ j.R_b) @ UNIT[a]
            v, w = (axis, np.zeros(3)) if kind_ == "v" else (np.cross(axis, rb - Pb), axis)
            assert np.max(np.abs(JT @ np.concatenate([v, Rb.T @ w]))) < 1e-9, name


# ------------------------------------------------------------------------------ prescribed motion, motors

def driven_arm(motion, formulation="absolute", axis=(1, 0, 0), driver=False):
    net = netdyn.Network("driven arm")
    net.add(RigidBody("arm", 2.0, (0.05, 0.04, 0.02), com=(0.0, 0.3, 0.1)), Gravity(),
            Revolute("A", "ground", (0, 0, 0), "arm", (0, 0, 0), axis=axis, motion=None if driver else motion))
    if driver:
        net.add(Driver("motor", "A", "rz", motion=motion))
    return net.model(formulation=formulation)


def test_prescribed_rotation_follows_its_function_and_its_reaction_does_the_work():
    motion = 0.8 * t + 0.5 * sp.sin(3 * t)
    model = driven_arm(motion)
    te = np.linspace(0, 2, 801)
    sol = netdyn.simulate(model, (0, 2), t_eval=te, rtol=1e-9)
    th = np.unwrap(2 * np.arctan2(sol["e1_arm"], sol["e0_arm"]))
    ref = sp.lambdify(t, motion)(te)
    assert np.max(np.abs(th - ref)) < 1e-10
    # the driver's multiplier: effort −λ on the angle; its work is the change of energy
    lam = sol.lam[sol.model.constraint_labels.index("A[rz]")]
    rate = sp.lambdify(t, motion.diff(t))(te)
    work = cumulative_simpson(-lam * rate, x=te, initial=0)
    E = sol.energy()
    assert np.max(np.abs(E - E[0] - work)) / np.max(np.abs(work)) < 1e-7


def test_motor_ten_turns_stays_on_its_angle_and_gives_the_static_torque():
    omega = 2 * np.pi * 5            # ten turns in 2 s at constant speed: torque = gravity moment about x
    model = driven_arm(omega * t)
    te = np.linspace(0, 2, 401)
    sol = netdyn.simulate(model, (0, 2), t_eval=te, rtol=1e-8)
    prev, angle = None, []
    for k in range(te.size):
        prev = rotation_vector(R(sol.q[3:7, k]), prev)
        angle.append(prev[0])
    assert abs(angle[-1] - 20 * np.pi) < 1e-8
    assert np.max(np.abs(np.array(angle) - omega * te)) < 1e-10
    lam = sol.lam[sol.model.constraint_labels.index("A[rz]")]
    c = np.array([0.0, 0.3, 0.1])
    th = omega * te
    # the torque that holds a constant speed balances gravity: τ = −(r_c × m g)·x
    rc = np.stack([np.zeros_like(th), c[1] * np.cos(th) - c[2] * np.sin(th), c[1] * np.sin(th) + c[2] * np.cos(th)])
    tau = rc[1] * 2.0 * 9.81
    assert np.max(np.abs(-lam - tau)) < 1e-6 * np.max(np.abs(tau))


@pytest.mark.parametrize("driver", [True, False])
def test_relative_formulation_motor_ten_turns(driver):
    omega = 2 * np.pi * 5
    model = driven_arm(omega * t, formulation="relative", driver=driver)
    assert model.coordinate_names == ["thetaz_A"]
    te = np.linspace(0, 2, 101)
    sol = netdyn.simulate(model, (0, 2), t_eval=te, rtol=1e-8)
    assert np.max(np.abs(sol["thetaz_A"] - omega * te)) < 1e-10
    th = omega * te
    tau = 2.0 * 9.81 * (0.3 * np.cos(th) - 0.1 * np.sin(th))
    label = "motor" if driver else "A[rz]"
    assert np.max(np.abs(-sol.lam[sol.model.constraint_labels.index(label)] - tau)) < 1e-6 * np.max(np.abs(tau))


def test_driver_element_and_inverse_dynamics_on_a_spatial_joint():
    net = netdyn.Network()
    net.add(RigidBody("arm", 2.0, (0.05, 0.04, 0.02), com=(0.0, 0.3, 0.1)), Gravity(),
            Revolute("A", "ground", (0, 0, 0), "arm", (0, 0, 0), axis=(1, 0, 0)))
    te = np.linspace(0, 1, 11)
    inv = netdyn.inverse_dynamics(net.model(), {"A": 2 * t}, te)
    th = 2 * te
    tau = 2.0 * 9.81 * (0.3 * np.cos(th) - 0.1 * np.sin(th))
    assert np.max(np.abs(inv.efforts["A"] - tau)) < 1e-9
    # the same as a Driver element in the network
    net.add(Driver("motor", "A", "rz", speed=2))
    sol = netdyn.simulate(net, (0, 1), t_eval=te, rtol=1e-8)
    lam = sol.lam[sol.model.constraint_labels.index("motor")]
    assert np.max(np.abs(-lam - tau)) < 1e-6


def test_reaction_of_a_hanging_body_is_its_weight_in_frame_a():
    net = netdyn.Network()
    net.add(RigidBody("bob", 3.0, (0.1, 0.1, 0.1), com=(0, 0, -0.5)), Gravity(),
            Spherical("S", "ground", (0, 0, 0), "bob", (0, 0, 0)))
    sol = netdyn.simulate(net, (0, 0.5), t_eval=np.linspace(0, 0.5, 6))
    F = sol.reaction("S")
    assert F.shape == (6, 6)
    assert np.allclose(F[:2], 0, atol=1e-9) and np.allclose(F[2], 3.0 * 9.81, rtol=1e-9)
    assert np.allclose(F[3:], 0, atol=1e-9)


# ------------------------------------------------------------------------------ bad input

def test_bad_inertia_is_an_error_naming_the_body():
    with pytest.raises(ElementError, match="'wheel'.*positive definite"):
        RigidBody("wheel", 1.0, (1.0, -0.1, 1.0))
    with pytest.raises(ElementError, match="'wheel'.*triangle"):
        RigidBody("wheel", 1.0, (1.0, 1.0, 3.0))
    with pytest.raises(ElementError, match="'wheel'.*symmetric"):
        RigidBody("wheel", 1.0, [[1, 0.1, 0], [0, 1, 0], [0, 0, 1]])


def test_joint_frame_that_is_not_a_rotation_names_the_joint():
    with pytest.raises(ElementError, match="hinge: frame_a rotation is not a rotation"):
        Joint("hinge", "ground", ((0, 0, 0), [[1, 0, 0], [0, 2, 0], [0, 0, 1]]), "b", (0, 0, 0))
    with pytest.raises(ElementError, match="hinge: frame_b rotation is not a rotation"):
        Joint("hinge", "ground", (0, 0, 0), "b", ((0, 0, 0), -np.eye(3)))


def test_component_both_prescribed_and_held_or_malformed_names_the_joint():
    net = netdyn.Network()
    net.add(RigidBody("arm", 1.0, (1, 1, 1)), Revolute("A", "ground", (0, 0, 0), "arm", (0, 0, 0)),
            Driver("motor", "A", "rx", motion=t))
    with pytest.raises(ElementError, match="motor prescribes component rx of joint A"):
        net.model()
    with pytest.raises(ElementError, match="J: rotation component y"):
        Joint("J", "ground", (0, 0, 0), "b", (0, 0, 0), rotation=(0, "loose", None))
    with pytest.raises(ElementError, match="motion"):
        Driver("d", "A", "rz", motion=t, speed=1)


def test_unassemblable_and_locked_mechanisms_are_errors():
    net = netdyn.Network("too short")
    net.add(RigidBody("bar", 1.0, (1, 1, 0.1)), Spherical("S1", "ground", (0, 0, 0), "bar", (0, 0, 0)),
            Spherical("S2", "ground", (5, 0, 0), "bar", (1, 0, 0)))
    with pytest.raises(InitialConditionError, match=r"constraint S[12]\["):
        netdyn.simulate(net, (0, 1))
    locked = netdyn.Network("locked")
    locked.add(RigidBody("bar", 1.0, (1, 1, 1)), Fixed("W", "ground", (0, 0, 0), "bar", (0, 0, 0)),
               Revolute("A", "ground", (0, 0, 0), "bar", (0, 0, 0), axis=(1, 0, 0)))
    with pytest.raises(SingularSystemError, match=r"'locked' cannot move.*joints: A, W"):
        netdyn.simulate(locked, (0, 1))


def test_floating_body_and_unknown_names_are_errors():
    net = netdyn.Network()
    net.add(RigidBody("a", 1.0, (1, 1, 1)), RigidBody("b", 1.0, (1, 1, 1)),
            Spherical("S", "ground", (0, 0, 0), "a", (0, 0, 0)))
    with pytest.raises(NetdynError, match="'b' is floating"):
        net.model()
    net.add(Spherical("S2", "a", (1, 0, 0), "c", (0, 0, 0)))
    with pytest.raises(NetdynError, match="S2 names body 'c'"):
        net.model()


def test_rotation_vector_unwraps_past_pi():
    prev = None
    for k in range(0, 800):
        ang = 0.01 * k
        Rz = np.array([[np.cos(ang), -np.sin(ang), 0], [np.sin(ang), np.cos(ang), 0], [0, 0, 1.0]])
        prev = rotation_vector(Rz, prev)
        assert abs(prev[2] - ang) < 1e-9
    assert isinstance(S.frame_from_axis((0, 1, 0)), np.ndarray)


# ------------------------------------------------------------------------------ loads, 1-D elements, formulations

def loaded_pair():
    from netdyn.components.spatial import Damper, Force, JointDamper, JointSpring, Spring, Torque

    net = netdyn.Network("loads")
    net.add(RigidBody("a", 1.0, (0.02, 0.03, 0.04), com=(0.1, 0, 0)), RigidBody("b", 0.5, (0.01, 0.01, 0.015)),
            Revolute("A", "ground", (0, 0, 0), "a", (0, 0, 0), axis=(0, 0, 1)),
            Spherical("S", "a", (0.3, 0, 0), "b", (0, 0, 0.2)), Gravity(),
            Force("F", "b", (0, 0, -0.2), (0.5, 0, 0.2), frame="body"), Torque("T", "b", (0, 0.1, 0)),
            Spring("k", "ground", (0.3, 0.3, 0.5), "b", (0, 0, -0.2), k=20, length=0.1),
            Damper("c", "ground", (0.3, 0.3, 0.5), "b", (0, 0, -0.2), c=0.3),
            JointSpring("kA", "A", 2.0, rest=0.2), JointDamper("cA", "A", 0.05), JointActuator("uA", "A", 0.3))
    return net


def test_loads_close_the_energy_balance_and_reactions_carry_no_moment_about_free_axes():
    net = loaded_pair()
    te = np.linspace(0, 0.6, 31)
    sol = netdyn.simulate(net, (0, 0.6), q0={"e3_a": 0.1}, guess={"z_b": -0.2, "x_b": 0.3}, t_eval=te)
    assert sol.power_balance()["relative"] < 1e-7
    assert np.ptp(sol["x_b"]) > 1e-3
    # the reaction of A has no moment about the hinge axis (frame a z), that of S no moment at all
    assert np.max(np.abs(sol.reaction("A")[5])) < 1e-9
    assert np.max(np.abs(sol.reaction("S")[3:])) < 1e-9


def test_dc_motor_drives_a_spatial_joint_in_both_formulations():
    from netdyn.components.electrical import VoltageSource
    from netdyn.components.transducers import DCMotor

    net = netdyn.Network("motor")
    net.add(RigidBody("a", 1.0, (0.02, 0.03, 0.04), com=(0.1, 0, 0)), Gravity(),
            Revolute("A", "ground", (0, 0, 0), "a", (0, 0, 0), axis=(0, 0, 1)),
            VoltageSource("V1", "p", "0", 6.0), DCMotor("M", "p", "0", "A", R=1, L=0.01, K=0.05, J=2e-4))
    te = np.linspace(0, 1, 21)
    sa = netdyn.simulate(net.model(), (0, 1), t_eval=te, rtol=1e-10)
    sr = netdyn.simulate(net.model(formulation="relative"), (0, 1), t_eval=te, rtol=1e-10)
    assert sr.model.coordinate_names == ["thetaz_A", "q_M_0"]
    angle = np.unwrap(2 * np.arctan2(sa["e3_a"], sa["e0_a"]))
    assert np.max(np.abs(angle - sr["thetaz_A"])) < 1e-8
    assert sr["thetaz_A"][-1] > 1.0
    assert sa.power_balance()["relative"] < 1e-7 and sr.power_balance()["relative"] < 1e-7
    # the tree joint's reaction in the relative formulation equals the absolute one
    assert np.max(np.abs(sr.reaction("A") - sa.reaction("A"))) < 1e-6


# ------------------------------------------------------------------------------ a closed spatial loop, drawing

def test_rssr_inverse_dynamics_same_in_both_formulations_and_torque_work_is_energy():
    from netdyn.linkages.spatial import rssr, rssr_guess

    net = rssr()
    te = np.linspace(0, 0.5, 101)
    drive = {"R1": 2 * np.pi * t}
    ab = netdyn.inverse_dynamics(net.model(), drive, te, guess=rssr_guess())
    rel_model = net.model(formulation="relative")
    assert rel_model.metadata["spatial"].cuts == ["U2"]
    rel = netdyn.inverse_dynamics(rel_model, drive, te, guess={"e0_S1": 1.0, "thetaz_R2": 1.4})
    assert np.max(np.abs(ab.efforts["R1"] - rel.efforts["R1"])) < 1e-8 * np.max(np.abs(ab.efforts["R1"]))
    work = cumulative_simpson(ab.efforts["R1"] * 2 * np.pi, x=te, initial=0)
    E = ab.energy()
    assert np.max(np.abs(E - E[0] - work)) < 1e-5 * np.max(np.abs(work))
    assert np.max(np.abs(ab.reaction("U2") - rel.reaction("U2"))) < 1e-7 * np.max(np.abs(ab.reaction("U2")))


def test_drawing_and_animation_of_a_spatial_mechanism(tmp_path):
    import matplotlib
    matplotlib.use("Agg")
    from netdyn.linkages.spatial import spherical_pendulum

    model = spherical_pendulum().model()
    sol = netdyn.simulate(model, (0, 0.3), q0={"x_bob": 0.3}, t_eval=np.linspace(0, 0.3, 7))
    ax = netdyn.plot_spatial(model, sol.q[:, -1], path=tmp_path / "p.png")
    assert (tmp_path / "p.png").stat().st_size > 5000
    assert ax.get_zlabel() == "z [m]"
    netdyn.animate_spatial(sol, tmp_path / "p.gif", frames=4)
    assert (tmp_path / "p.gif").stat().st_size > 5000
    with pytest.raises(NetdynError, match="no spatial bodies"):
        netdyn.plot_spatial(planar_four_bar().model(), np.zeros(9))


def test_prescribed_slide_follows_its_function_with_the_closed_form_force():
    net = netdyn.Network("driven slider")
    axis = np.array([1.0, 0.0, 1.0]) / np.sqrt(2)
    motion = 0.1 * sp.sin(2 * t)
    net.add(RigidBody("block", 3.0, (0.1, 0.1, 0.1), com=(0.05, 0.0, 0.0)), Gravity(),
            Prismatic("P", "ground", (0, 0, 0), "block", (0, 0, 0), axis=tuple(axis), motion=motion))
    te = np.linspace(0, 2, 41)
    sol = netdyn.simulate(net, (0, 2), t_eval=te, rtol=1e-9)
    s = sol["x_block"] * axis[0] + sol["z_block"] * axis[2]
    assert np.max(np.abs(s - 0.1 * np.sin(2 * te))) < 1e-10
    force = -sol.lam[sol.model.constraint_labels.index("P[z]")]
    assert np.max(np.abs(force - 3.0 * (-0.4 * np.sin(2 * te) + 9.81 * axis[2]))) < 1e-6


def test_spatial_networks_round_trip_through_model_files(tmp_path):
    from netdyn.linkages.spatial import rssr

    net = rssr()
    netdyn.save_model(net, tmp_path / "rssr.yaml")
    same = netdyn.load_model(tmp_path / "rssr.yaml")
    assert sorted(same.elements) == sorted(net.elements) and sorted(same.bodies) == sorted(net.bodies)
    a, b = net.model(), same.model()
    assert a.coordinate_names == b.coordinate_names and a.constraint_labels == b.constraint_labels


def test_heavy_top_in_joint_coordinates_of_a_ball_joint_matches_absolute():
    """The relative formulation's Euler parameters of a three-rotation joint (the ball joint of the top)."""
    model = heavy_top().model(formulation="relative")
    assert model.coordinate_names == ["e0_O", "e1_O", "e2_O", "e3_O"]
    edot = 0.5 * G([1.0, 0, 0, 0]).T @ np.array(HEAVY_TOP["omega"])
    sol = netdyn.simulate(model, (0, 0.2), q0={"e0_O": 1, "e1_O": 0, "e2_O": 0, "e3_O": 0},
                          f0={f"e{k}_O": edot[k] for k in range(4)}, rtol=1e-12, atol=1e-14,
                          t_eval=np.linspace(0, 0.2, 11))
    eref, _ = top_reference(0.2)
    assert np.max(np.abs(R(sol.q[:, -1]) - R(eref))) < 1e-8


def test_reaction_force_is_newtons_second_law_for_a_swinging_body():
    net = netdyn.Network()
    net.add(RigidBody("bob", 3.0, (0.1, 0.2, 0.15), com=(0.1, 0.05, -0.5)), Gravity(),
            Spherical("S", "ground", (0, 0, 0), "bob", (0, 0, 0)))
    te = np.linspace(0, 0.5, 11)
    sol = netdyn.simulate(net, (0, 0.5), q0={"e0_bob": np.cos(0.3), "e1_bob": np.sin(0.3)},
                          f0={"e3_bob": 0.5}, t_eval=te, rtol=1e-10)
    pose = sol.model.metadata["spatial"].poses["bob"]
    rc = pose.r + pose.R * sp.Matrix([0.1, 0.05, -0.5])
    acc = np.array([sol.evaluate(sol._internal(e.diff(t, 2))) for e in rc])
    F = sol.reaction("S")[:3]                     # frame a of a ball joint about z is the global frame
    assert np.max(np.abs(3.0 * acc - F - 3.0 * np.array([[0], [0], [-9.81]]))) < 1e-7 * np.max(np.abs(F))
    assert np.ptp(acc[0]) > 0.1


@pytest.mark.parametrize("formulation", ["absolute", "relative"])
def test_cardan_joint_follows_the_closed_form_transmission(formulation):
    """Two shafts at an angle β joined by a Universal joint: tan φ_out = tan φ_in / cos β. In the relative
    formulation the Universal joint is a tree joint (coordinates alpha_U, beta_U) and the output bearing the cut."""
    beta = 0.5
    u = (np.cos(beta), np.sin(beta), 0.0)
    net = netdyn.Network("Cardan shaft")
    net.add(RigidBody("in", 1.0, (0.01, 0.02, 0.02)), RigidBody("out", 1.0, (0.01, 0.02, 0.02)),
            RigidBody("bracket", 1.0, (1, 1, 1)),
            Revolute("R_in", "ground", (0, 0, 0), "in", (0, 0, 0), axis=(1, 0, 0)),
            Universal("U", "in", (0, 0, 0), "out", (0, 0, 0), axis_a=(0, 1, 0), axis_b=(0, 0, 1)),
            Fixed("W", "ground", (0, 0, 0), "bracket", (0, 0, 0)),
            Revolute("R_out", "bracket", (0, 0, 0), "out", (0, 0, 0), axis=u))
    # the tree rule would cut U (a tie in depth, broken by name): choose the cut the docstring describes
    model = net.model(formulation=formulation, **({"cut": ["R_out"]} if formulation == "relative" else {}))
    if formulation == "relative":
        assert model.metadata["spatial"].cuts == ["R_out"]
        assert {"alpha_U", "beta_U"} <= set(model.coordinate_names)
    te = np.linspace(0, 1.2, 13)
    guess = {"e0_in": 1.0, "e0_out": 1.0, "e0_bracket": 1.0}
    k = netdyn.kinematics(model, {"R_in": t}, te, guess=guess if formulation == "absolute" else None)
    pose = model.metadata["spatial"].poses["out"]
    e = np.array([k.evaluate(k._internal(sp.sympify(v))) for v in pose.q])
    phi_out = 2 * np.arctan2(e[1:].T @ np.array(u), e[0])
    assert np.max(np.abs(np.tan(phi_out) - np.tan(te) / np.cos(beta))) < 1e-9
