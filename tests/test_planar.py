"""Planar linkages from bodies and joints, checked against the book's hand-typed examples, a second
formulation, Pinocchio, sympy.physics.mechanics, closed forms and energy balance."""
import numpy as np
import pytest
import sympy as sp
from scipy.interpolate import CubicSpline

import netdyn
from netdyn import t
from netdyn.components import rotational
from netdyn.components.planar import (Actuator, Damper, Force, Gravity, Prismatic, Revolute, RigidBody, Slider,
                                      Spring, Torque, Weld)
from netdyn.numerics.functions.compiled import compile_model
from references.pendulum import kane_pendulum, pinocchio_forward, pinocchio_pendulum
from netdyn.linkages import BOOK, FOUR_BAR_GUESS, pendulum_state
from netdyn.linkages import five_bar as five_bar_net, four_bar as four_bar_net, pendulum as pendulum_net
from netdyn.linkages import slider_crank as slider_crank_net, three_rrr as three_rrr_net
from test_book_examples import four_bar, slider_crank

TE = np.linspace(0, 2, 201)


def book_params(names):
    return {k: BOOK[k] for k in names.split()}


# ------------------------------------------------------------------------------ the book's examples

@pytest.mark.parametrize("formulation", ["absolute", "relative"])
def test_slider_crank_matches_book_example_4_2(formulation):
    book, *_ = slider_crank()
    ref = netdyn.simulate(book, (0, 2), q0={"theta1": 0.3}, params=book_params("m1 m2 m3 I1 I2 l1 l2 tau"),
                          t_eval=TE, rtol=1e-10)
    model = slider_crank_net().model(formulation=formulation)
    crank = "theta_crank" if formulation == "absolute" else "theta_O"
    sol = netdyn.simulate(model, (0, 2), q0={crank: 0.3}, t_eval=TE, rtol=1e-10)
    assert np.max(np.abs(sol[crank] - ref["theta1"])) < 1e-7
    poses = model.metadata["planar"].poses
    for mine, theirs in ((poses["rod"][2], "theta2"), (poses["block"][0], "x3"), (poses["rod"][0], "x2")):
        got = sol.evaluate(sol._internal(mine))
        assert np.max(np.abs(got - ref[theirs])) < 1e-7, theirs


@pytest.mark.parametrize("formulation", ["absolute", "relative"])
def test_four_bar_matches_book_example_4_3(formulation):
    book, *_ = four_bar()
    ref = netdyn.simulate(book, (0, 2), q0={"theta1": 0.4}, guess={"theta2": 0.9, "theta3": 1.9},
                          params=book_params("m1 m2 m3 I1 I2 I3 l1 l2 l3 l4 tau"), t_eval=TE, rtol=1e-10)
    model = four_bar_net().model(formulation=formulation)
    poses = model.metadata["planar"].poses
    if formulation == "absolute":
        q0, guess = {"theta_crank": 0.4}, FOUR_BAR_GUESS
    else:  # joint angles: rod relative to crank, rocker relative to ground
        q0, guess = {"theta_O": 0.4}, {"theta_A": 0.5, "theta_D": 1.9}
    sol = netdyn.simulate(model, (0, 2), q0=q0, guess=guess, t_eval=TE, rtol=1e-10)
    for body, theirs in (("crank", "theta1"), ("rod", "theta2"), ("rocker", "theta3")):
        got = sol.evaluate(sol._internal(poses[body][2]))
        assert np.max(np.abs(got - ref[theirs])) < 1e-7, theirs
    got = sol.evaluate(sol._internal(poses["rod"][1]))
    assert np.max(np.abs(got - ref["y2"])) < 1e-7


def test_four_bar_ten_seconds_residual_and_energy():
    model = four_bar_net(tau=False, gravity=True).model()
    sol = netdyn.simulate(model, (0, 10), q0={"theta_crank": 0.4}, f0={"theta_crank": 3.0}, guess=FOUR_BAR_GUESS,
                          t_eval=np.linspace(0, 10, 501))
    assert sol.constraint_residual()["position"] < 1e-8
    E = sol.energy()
    kinetic = E - sol.evaluate(sol._internal(model.V))
    assert np.max(np.abs(E - E[0])) / np.max(kinetic) < 1e-6
    assert np.ptp(sol["theta_crank"]) > 1.0  # it really moved


# ------------------------------------------------------------------------------ external engines

@pytest.mark.parametrize("n,formulation", [(2, "relative"), (2, "absolute"), (5, "absolute"), (10, "absolute")])
def test_pendulum_matches_pinocchio(n, formulation):
    rng = np.random.default_rng(n)
    m, l = rng.uniform(0.5, 2.0, n), rng.uniform(0.3, 1.2, n)
    pin_model = pinocchio_pendulum(n, m, l)
    aba = lambda q, u: pinocchio_forward(pin_model, q, u)
    cm = compile_model(pendulum_net(m, l).model(formulation=formulation))
    p = cm.parameter_vector()
    for _ in range(5):
        q, u = rng.uniform(-np.pi, np.pi, n), rng.uniform(-2, 2, n)
        ref = aba(q, u)
        if formulation == "relative":
            got = cm.accelerations(0.0, q, u, p)[0]
        else:
            Q, F = pendulum_state(q, u, l)
            thdd = cm.accelerations(0.0, Q, F, p)[0][2::3]
            got = np.diff(np.concatenate([[0.0], thdd]))
        assert np.max(np.abs(got - ref)) / np.max(np.abs(ref)) < 1e-9


def test_three_link_pendulum_matches_kanes_method():
    m, l, g = [1.0, 0.7, 1.3], [0.8, 0.5, 1.1], 9.81
    kane = kane_pendulum(3, m, l, g)
    cm = compile_model(pendulum_net(m, l, g).model(formulation="relative"))
    p = cm.parameter_vector()
    rng = np.random.default_rng(3)
    for _ in range(5):
        q, u = rng.uniform(-np.pi, np.pi, 3), rng.uniform(-2, 2, 3)
        ref = kane(q, u)
        got = cm.accelerations(0.0, q, u, p)[0]
        assert np.max(np.abs(got - ref)) / np.max(np.abs(ref)) < 1e-9


# ------------------------------------------------------------------------------ reactions

def test_reaction_of_a_hanging_bar_is_its_weight():
    net = netdyn.Network()
    net.add(RigidBody("bar", 2.0, 0.2), Gravity(g=9.81), Revolute("O", "ground", (0, 0), "bar", (0, 0.5)))
    sol = netdyn.simulate(net, (0, 1), guess={"y_bar": -0.5, "theta_bar": 0.0}, t_eval=np.linspace(0, 1, 11))
    R = sol.reaction("O")
    assert np.allclose(R[0], 0, atol=1e-9) and np.allclose(R[1], 2.0 * 9.81, rtol=1e-9)
    assert np.allclose(R[2], 0, atol=1e-9)


def test_reactions_satisfy_newton_euler_on_every_body():
    net = four_bar_net(tau=2.0, gravity=True)
    model = net.model()
    sol = netdyn.simulate(model, (0, 1), q0={"theta_crank": 0.4}, guess=FOUR_BAR_GUESS, t_eval=np.linspace(0, 1, 21))
    joints = model.metadata["planar"].joints
    R = {j: sol.reaction(j) for j in joints}
    for b in ("crank", "rod", "rocker"):
        m, I = BOOK[{"crank": "m1", "rod": "m2", "rocker": "m3"}[b]], BOOK[{"crank": "I1", "rod": "I2", "rocker": "I3"}[b]]
        F = np.zeros((2, sol.t.size))
        moment = np.zeros(sol.t.size)
        c = np.vstack([sol[f"x_{b}"], sol[f"y_{b}"]])
        for name, j in joints.items():
            if b not in j.bodies:
                continue
            assert np.max(np.abs(R[name][2])) < 1e-8  # a pin transmits no moment
            sign, s = (1, j.point_b) if j.bodies[1] == b else (-1, j.point_a)
            th = sol[f"theta_{b}"]
            arm = np.vstack([np.cos(th) * float(s[0]) - np.sin(th) * float(s[1]),
                             np.sin(th) * float(s[0]) + np.cos(th) * float(s[1])])
            F += sign * R[name][:2]
            moment += arm[0] * sign * R[name][1] - arm[1] * sign * R[name][0]
        assert np.allclose(m * sol[f"x_{b}_ddot"], F[0], atol=1e-7)
        assert np.allclose(m * sol[f"y_{b}_ddot"], F[1] - m * 9.81, atol=1e-7)
        applied = 2.0 if b == "crank" else 0.0
        assert np.allclose(I * sol[f"theta_{b}_ddot"], moment + applied, atol=1e-7)
        assert c.shape == F.shape


# ------------------------------------------------------------------------------ structure

def test_mobility_counts_and_redundant_parallelogram():
    mob = netdyn.mobility(four_bar_net().model(), q0={"theta_crank": 0.4}, guess=FOUR_BAR_GUESS)
    assert (mob.gruebler, mob.dof, mob.redundant) == (1, 1, [])
    p = dict(BOOK, l1=0.6, l3=0.6, l2=1.0, l4=1.0)  # parallelogram
    net = four_bar_net(p, tau=False, gravity=True)
    net.add(RigidBody("middle", 0.4, 0.01), Revolute("M1", "ground", (0.5, 0), "middle", (-0.3, 0)),
            Revolute("M2", "rod", (0, 0), "middle", (0.3, 0)))
    model = net.model()
    guess = {"theta_rod": 0.0, "theta_rocker": -1.2, "theta_middle": -1.2}
    mob = netdyn.mobility(model, q0={"theta_crank": -1.2}, guess=guess)
    assert mob.gruebler == 0 and mob.dof == 1 and len(mob.redundant) == 1
    sol = netdyn.simulate(model, (0, 2), q0={"theta_crank": -1.2}, guess=guess, t_eval=np.linspace(0, 2, 101))
    assert sol.model.metadata["redundant"] == mob.redundant
    cm = compile_model(model)  # every constraint, the redundant one included, still holds
    worst = max(np.max(np.abs(cm.constraints(tt, sol.q[:, k], sol.f[:, k], cm.parameter_vector()).phi))
                for k, tt in enumerate(sol.t))
    assert worst < 1e-8
    E = sol.energy()
    assert np.max(np.abs(E - E[0])) < 1e-7 * (np.ptp(E) + abs(E[0]) + 1)
    with pytest.raises(netdyn.SingularSystemError, match="indeterminate"):
        sol.reaction(mob.redundant[0].split("[")[0])


def test_singular_configuration_is_reported_with_its_time():
    p = dict(BOOK, l1=0.6, l3=0.6, l2=1.0, l4=1.0)  # a parallelogram falling onto its flat change point
    with pytest.raises(netdyn.SingularSystemError, match="singular configuration at t = ") as err:
        netdyn.simulate(four_bar_net(p, tau=False, gravity=True), (0, 2), q0={"theta_crank": 1.2},
                        guess={"theta_rod": 0.0, "theta_rocker": 1.2})
    reported = float(str(err.value).split("t = ")[1].split(":")[0])
    # until then it moves as one compound pendulum (the rod translates on a circle of radius l1)
    th, = netdyn.coordinates("th,")
    l1, g = 0.6, 9.81
    inertia = p["I1"] + p["m1"] * l1 ** 2 / 4 + p["I3"] + p["m3"] * l1 ** 2 / 4 + p["m2"] * l1 ** 2
    weight = (p["m1"] / 2 + p["m3"] / 2 + p["m2"]) * l1 * g
    ref = netdyn.simulate(netdyn.LagrangianModel([th], T=inertia * th.diff(t) ** 2 / 2, V=weight * sp.sin(th)),
                          (0, 1), q0={"th": 1.2}, t_eval=np.linspace(0, 1, 10001))
    crossing = ref.t[np.argmax(ref["th"] < 0)]
    assert abs(reported - crossing) < 2e-3


def test_change_point_stepped_over_is_reported_not_silently_passed():
    p = dict(BOOK, l1=0.6, l2=0.6)  # isosceles slider-crank: rod folds onto the crank at theta = pi/2
    with pytest.raises(netdyn.SingularSystemError, match="change point") as err:
        netdyn.simulate(slider_crank_net(p, tau=2.0), (0, 3), q0={"theta_crank": 0.5},
                        guess={"x_block": 1.0, "theta_rod": -0.5})
    assert abs(err.value.q["theta_crank"] - np.pi / 2) < 1e-4
    assert abs(err.value.q["x_block"]) < 1e-4 and 0 < err.value.time < 3


def test_doubled_joint_is_dropped_and_motion_unchanged():
    plain = netdyn.simulate(four_bar_net(), (0, 1), q0={"theta_crank": 0.4}, guess=FOUR_BAR_GUESS,
                            t_eval=np.linspace(0, 1, 51))
    net = four_bar_net()
    net.add(Revolute("D2", "ground", (BOOK["l4"], 0), "rocker", (-BOOK["l3"] / 2, 0)))
    sol = netdyn.simulate(net, (0, 1), q0={"theta_crank": 0.4}, guess=FOUR_BAR_GUESS, t_eval=np.linspace(0, 1, 51))
    assert sol.model.metadata["redundant"] == ["D2[x]", "D2[y]"]
    assert np.max(np.abs(sol.q - plain.q)) < 1e-9


def test_over_constrained_and_bad_input_errors():
    net = four_bar_net()  # a diagonal link makes the four-bar a rigid truss
    guess = dict(FOUR_BAR_GUESS)
    q = netdyn.assemble_configuration(net.model(), q0={"theta_crank": 0.4}, guess=guess)
    tip = np.array([q["x_rod"], q["y_rod"]]) + 0.6 * np.array([np.cos(q["theta_rod"]), np.sin(q["theta_rod"])])
    length = float(np.linalg.norm(tip))
    net.add(RigidBody("diag", 0.3, 0.01), Revolute("G1", "ground", (0, 0), "diag", (-length / 2, 0)),
            Revolute("G2", "rod", (0.6, 0), "diag", (length / 2, 0)))
    guess.update(theta_diag=float(np.arctan2(tip[1], tip[0])), x_diag=tip[0] / 2, y_diag=tip[1] / 2)
    with pytest.raises(netdyn.SingularSystemError, match="cannot move"):
        netdyn.simulate(net, (0, 1), q0={"theta_crank": 0.4}, guess=guess)
    floating = netdyn.Network()
    floating.add(RigidBody("a", 1, 1), RigidBody("lost", 1, 1), Revolute("O", "ground", (0, 0), "a", (0, 0)))
    with pytest.raises(netdyn.TopologyError, match="'lost' is floating"):
        floating.model()
    unknown = netdyn.Network()
    unknown.add(RigidBody("a", 1, 1), Revolute("O", "ground", (0, 0), "a", (0, 0)),
                Revolute("X", "a", (1, 0), "nobody", (0, 0)))
    with pytest.raises(netdyn.TopologyError, match="X names body 'nobody'"):
        unknown.model()
    misfit = four_bar_net(dict(BOOK, l4=3.0))  # l1 + l2 + l3 < l4: the loop cannot close
    with pytest.raises(netdyn.InitialConditionError, match="constraint (C|D)\\["):
        netdyn.simulate(misfit, (0, 1), q0={"theta_crank": 0.4}, guess=FOUR_BAR_GUESS)
    with pytest.raises(netdyn.ElementError, match="shorted"):
        Revolute("S", "a", (0, 0), "a", (1, 0))
    with pytest.raises(netdyn.TopologyError, match="joint 'Q'"):
        bad = four_bar_net()
        bad.add(Actuator("m", "Q", 1.0))
        bad.model()


# ------------------------------------------------------------------------------ kinematics

def test_slider_crank_kinematics_closed_form():
    l1, l2 = BOOK["l1"], BOOK["l2"]
    tt = np.linspace(0, 2, 41)
    w = 1.5
    k = netdyn.kinematics(slider_crank_net().model(), {"O": 0.2 + w * t}, tt, guess={"x_block": 1.5})
    th = 0.2 + w * tt
    root = np.sqrt(l2 ** 2 - (l1 * np.sin(th)) ** 2)
    x = l1 * np.cos(th) + root
    v = -l1 * np.sin(th) * w - l1 ** 2 * np.sin(th) * np.cos(th) * w / root
    assert np.max(np.abs(k["x_block"] - x)) < 1e-10
    assert np.max(np.abs(k["x_block_dot"] - v)) < 1e-10
    acc_fd = np.gradient(k["x_block_dot"], tt, edge_order=2)
    assert np.max(np.abs(k["x_block_ddot"] - acc_fd)[2:-2]) < 1e-2
    assert np.allclose(k["theta_crank_ddot"], 0, atol=1e-10)


# ------------------------------------------------------------------------------ inverse dynamics

def _feed_back(net, guess, drivers, T, coordinates):
    """Inverse dynamics, then forward dynamics with the efforts as actuator inputs: same motion?"""
    tt = np.linspace(0, T, 401)
    inv = netdyn.inverse_dynamics(net.model(), drivers, tt, guess=guess)
    for j in drivers:
        net.add(Actuator(f"act_{j}", j, sp.Function(f"u_{j}")(t)))
    inputs = {f"u_{j}": CubicSpline(tt, inv.efforts[j]) for j in drivers}
    names = inv.model.coordinate_names
    sol = netdyn.simulate(net, (0, T), q0=dict(zip(names, inv.q[:, 0])), f0=dict(zip(names, inv.f[:, 0])),
                          params=inputs, t_eval=tt, rtol=1e-10)
    for c in coordinates:
        assert np.max(np.abs(sol[c] - inv[c])) < 1e-6, c
    return inv, sol


def test_five_bar_inverse_dynamics_fed_back_and_power_balance():
    net, guess = five_bar_net()
    drivers = {"J1": 1.9 + 0.3 * sp.sin(2 * t), "J2": 1.2 - 0.2 * sp.sin(3 * t)}
    inv, sol = _feed_back(net, guess, drivers, 1.0, ["theta_c1", "theta_c2", "x_k1", "y_k2"])
    power = inv.efforts["J1"] * inv["theta_c1_dot"] + inv.efforts["J2"] * inv["theta_c2_dot"]
    from scipy.integrate import cumulative_trapezoid
    work = cumulative_trapezoid(power, inv.t, initial=0)
    E = inv.energy()
    assert np.max(np.abs(E - E[0] - work)) < 1e-5 * np.max(np.abs(work))
    assert inv.reaction("P").shape == (3, inv.t.size)


def test_three_rrr_inverse_dynamics_fed_back():
    net, guess = three_rrr_net()
    th0 = {i: guess[f"theta_p{i}"] for i in (1, 2, 3)}
    drivers = {f"A{i}": th0[i] + 0.05 * sp.sin((i + 1) * t) for i in (1, 2, 3)}
    inv, sol = _feed_back(net, guess, drivers, 0.5, ["x_platform", "y_platform", "theta_platform", "theta_p2"])
    assert np.ptp(inv["x_platform"]) > 1e-3
    # the platform's Newton law from the reactions of its three pins
    F = sum(inv.reaction(f"B{i}")[:2] for i in (1, 2, 3))
    assert np.allclose(1.5 * inv["x_platform_ddot"], F[0], atol=1e-8)
    assert np.allclose(1.5 * inv["y_platform_ddot"], F[1] - 1.5 * 9.81, atol=1e-8)


# ------------------------------------------------------------------------------ mixing with 1-D libraries

def test_torsion_spring_and_motor_torque_from_rotational_library():
    m, l, k, g, tau = 1.2, 0.8, 5.0, 9.81, 0.7
    net = netdyn.Network()
    net.add(RigidBody("bar", m, m * l ** 2 / 12), Gravity(g=g), Revolute("O", "ground", (0, 0), "bar", (-l / 2, 0)),
            rotational.TorsionSpring("ks", "bar", "ground", k=k), rotational.Torque("motor", "bar", tau))
    th, = netdyn.coordinates("th,")
    ref_model = netdyn.LagrangianModel([th], T=(m * l ** 2 / 3) * th.diff(t) ** 2 / 2,
                                       V=k * th ** 2 / 2 + m * g * l / 2 * sp.sin(th), efforts={th: tau})
    ref = netdyn.simulate(ref_model, (0, 2), q0={"th": 0.3}, t_eval=TE, rtol=1e-10)
    for form, name in (("absolute", "theta_bar"), ("relative", "theta_O")):
        sol = netdyn.simulate(net.model(formulation=form), (0, 2), q0={name: 0.3}, t_eval=TE, rtol=1e-10)
        assert np.max(np.abs(sol[name] - ref["th"])) < 1e-7, form


def test_spring_damper_force_slider_weld_energy_balance():
    net = netdyn.Network()
    net.add(RigidBody("cart", 2.0, 0.1), RigidBody("arm", 0.5, 0.05), RigidBody("tip", 0.2, 0.01), Gravity(),
            Prismatic("rail", "ground", (0, 0), "cart", (0, 0), axis=(1, 0)),
            Revolute("hinge", "cart", (0, 0), "arm", (-0.4, 0)), Weld("glue", "arm", (0.4, 0), "tip", (0, 0)),
            Spring("k", "ground", (-1, 0), "cart", (0, 0), k=40, length=0.8), Damper("c", "ground", (-1, 0), "cart",
                                                                                      (0, 0), c=0.5),
            Force("push", "tip", (0, 0), 0.3, 0.0), Torque("twist", "arm", 0.1, reaction="cart"))
    guesses = {"absolute": {"theta_arm": -1.0, "theta_tip": -1.0, "x_cart": 0.1},
               "relative": {"theta_hinge": -1.0, "s_rail": 0.1}}
    for form, guess in guesses.items():
        sol = netdyn.simulate(net.model(formulation=form), (0, 2), guess=guess, t_eval=np.linspace(0, 2, 401))
        bal = sol.power_balance()
        assert bal["relative"] < 1e-6, form
        assert bal["dissipated"][-1] > 0


def test_slider_keeps_point_on_line():
    net = netdyn.Network()
    net.add(RigidBody("bar", 1.0, 0.1), Gravity(), Slider("S", "ground", (0, 0), "bar", (-0.5, 0), axis=(1, 1)))
    sol = netdyn.simulate(net, (0, 1), guess={"theta_bar": -0.5}, t_eval=np.linspace(0, 1, 21))
    th = sol["theta_bar"]
    px, py = sol["x_bar"] - 0.5 * np.cos(th), sol["y_bar"] - 0.5 * np.sin(th)
    assert np.max(np.abs(px - py)) < 1e-9 and np.ptp(px) > 1e-2


# ------------------------------------------------------------------------------ pictures

def test_plot_mechanism_draws_bodies_at_their_joints(tmp_path):
    import matplotlib
    matplotlib.use("Agg")
    model = slider_crank_net().model()
    q = netdyn.assemble_configuration(model, q0={"theta_crank": 0.7}, guess={"x_block": 1.5})
    ax = netdyn.plot_mechanism(model, q)
    crank = ax.lines[0].get_xydata()  # first body drawn: the crank, through its two pins
    tip = BOOK["l1"] * np.array([np.cos(0.7), np.sin(0.7)])
    assert np.allclose(sorted(map(tuple, crank)), sorted([(0.0, 0.0), tuple(tip)]), atol=1e-9)
    netdyn.plot_mechanism(model, q, path=tmp_path / "crank.png")
    assert (tmp_path / "crank.png").stat().st_size > 1000
    with pytest.raises(netdyn.ModelError, match="unknown coordinate"):
        netdyn.plot_mechanism(model, {"theta_nothing": 1.0})


def test_animation_gif_has_one_frame_per_step(tmp_path):
    from PIL import Image
    sol = netdyn.simulate(four_bar_net(tau=False, gravity=True), (0, 1), q0={"theta_crank": 0.4},
                          guess=FOUR_BAR_GUESS, t_eval=np.linspace(0, 1, 41))
    n = netdyn.animate_mechanism(sol, tmp_path / "four_bar.gif", frames=12)
    img = Image.open(tmp_path / "four_bar.gif")
    assert n == 12 and img.n_frames == 12
    def plot_area(k):  # below the title (which shows the time)
        img.seek(k)
        a = np.asarray(img.convert("L"), dtype=float)
        return a[a.shape[0] // 6:]
    assert np.abs(plot_area(11) - plot_area(0)).sum() > 0  # the linkage moved
    assert np.abs(plot_area(0) - plot_area(0)).sum() == 0


def test_tree_joint_reactions_of_the_relative_formulation_match_the_absolute_ones():
    net = four_bar_net(tau=2.0, gravity=True)
    te = np.linspace(0, 1, 11)
    ab = netdyn.simulate(net.model(), (0, 1), q0={"theta_crank": 0.4}, guess=FOUR_BAR_GUESS, t_eval=te, rtol=1e-10)
    rel = netdyn.simulate(net.model(formulation="relative"), (0, 1), q0={"theta_O": 0.4},
                          guess={"theta_A": 0.5, "theta_D": 1.9}, t_eval=te, rtol=1e-10)
    assert rel.model.metadata["planar"].cuts == ["C"]
    for joint in ("O", "A", "C", "D"):  # O, A, D on the tree; C the cut joint with its own multipliers
        assert np.max(np.abs(rel.reaction(joint) - ab.reaction(joint))) < 1e-6, joint


def test_sign_conventions_of_force_spring_damper_and_prismatic_coordinate():
    m, k, c, L0, F = 2.0, 40.0, 3.0, 0.5, 10.0
    net = netdyn.Network()
    net.add(RigidBody("block", m, 0.1), Prismatic("rail", "ground", (0, 0), "block", (0, 0), axis=(1, 0)),
            Spring("k", "ground", (-1, 0), "block", (0, 0), k=k, length=L0),
            Damper("c", "ground", (-1, 0), "block", (0, 0), c=c), Force("F", "block", (0, 0.2), F, 0.0))
    cm = compile_model(net.model())
    x, v = 0.3, 0.4
    q = np.array([x, 0.0, 0.0])
    qdd = cm.accelerations(0.0, q, np.array([v, 0.0, 0.0]), cm.parameter_vector())[0]
    assert qdd[0] == pytest.approx((F - k * (x + 1 - L0) - c * v) / m, rel=1e-12)
    k_ = netdyn.kinematics(net.model(), {"rail": 0.1 + 0.2 * t}, [0.0, 1.0])
    assert np.allclose(k_["x_block"], [0.1, 0.3]) and np.allclose(k_["x_block_dot"], 0.2)
    body_frame = netdyn.Network()  # a body-frame force turns with the body
    body_frame.add(RigidBody("bar", 1.0, 0.1), Revolute("O", "ground", (0, 0), "bar", (0, 0)),
                   Force("F", "bar", (1, 0), 0.0, 1.0, frame="body"))
    cm = compile_model(body_frame.model())
    acc = cm.accelerations(0.0, np.array([0.0, 0.0, 0.3]), np.zeros(3), cm.parameter_vector())[0]
    assert acc[2] == pytest.approx(1.0 / 0.1, rel=1e-12)  # lever arm 1, counter-clockwise


def test_driver_element_in_forward_dynamics_matches_inverse_dynamics():
    from netdyn.components.planar import Driver
    motion = 0.3 + 2 * t + 0.2 * sp.sin(3 * t)
    net = slider_crank_net(tau=0.0)
    net.add(Gravity(), Driver("drive", "O", motion))
    te = np.linspace(0, 1, 51)
    sol = netdyn.simulate(net, (0, 1), guess={"x_block": 1.5}, t_eval=te)
    assert np.max(np.abs(sol["theta_crank"] - sp.lambdify(t, motion)(te))) < 1e-9
    assert sol.power_balance()["relative"] < 1e-6  # the driver's power λ Φ_t is what goes in
    effort = -sol.multipliers[sol.model.lambdas[sol.model.constraint_labels.index("drive")].func.__name__]
    free = slider_crank_net(tau=0.0)
    free.add(Gravity())
    inv = netdyn.inverse_dynamics(free.model(), {"O": motion}, te, guess={"x_block": 1.5})
    assert np.max(np.abs(effort - inv.efforts["O"])) < 1e-6 * np.max(np.abs(effort))


def test_dc_motor_from_a_circuit_drives_the_crank():
    from netdyn.components.electrical import VoltageSource
    from netdyn.components.transducers import DCMotor
    R, L, K, V = 2.0, 0.01, 0.5, 12.0
    net = four_bar_net(tau=False, gravity=True)
    net.add(VoltageSource("V", "p", "0", V), DCMotor("M", "p", "0", "crank", R=R, L=L, K=K))
    te = np.linspace(0, 1, 2001)
    sol = netdyn.simulate(net, (0, 1), q0={"theta_crank": 0.4}, guess=FOUR_BAR_GUESS, t_eval=te)
    assert sol.power_balance()["relative"] < 1e-6
    i, w = sol.current("M"), sol["theta_crank_dot"]
    di = np.gradient(i, te, edge_order=2)
    late = (te > 0.02) & (te < 0.99)  # after the 5 ms electrical transient, where differences resolve di/dt
    assert np.max(np.abs(L * di + R * i + K * w - V)[late]) < 1e-3 * V  # armature: V = R i + L di/dt + K ω
    assert np.ptp(sol["theta_crank"]) > 0.5


def test_symbolic_body_parameters_can_be_overridden_at_simulation():
    model = slider_crank_net().model(symbolic=True)
    assert {"crank_m", "crank_I", "rod_m", "tau"} <= {str(s) for s in model.parameters}
    te = np.linspace(0, 1, 11)
    swept = netdyn.simulate(model, (0, 1), q0={"theta_crank": 0.3}, params={"crank_m": 2.0, "tau": 1.5}, t_eval=te)
    rebuilt = netdyn.simulate(slider_crank_net(dict(BOOK, m1=2.0), tau=1.5), (0, 1), q0={"theta_crank": 0.3},
                              t_eval=te)
    assert np.max(np.abs(swept.q - rebuilt.q)) < 1e-9
    assert np.max(np.abs(swept.q - netdyn.simulate(model, (0, 1), q0={"theta_crank": 0.3}, t_eval=te).q)) > 1e-3
