"""Issue 25, items 3, 4 and 6: prescribed rotations on the right branch on any grid; motions as data;
joint terms in every formulation; body motion by name; accelerations at one state.

References: closed forms (a rotor about a fixed axis: τ = I_axis θ̈ + gravity moment), Pinocchio's ``aba``,
a second formulation of the same network, the symbolic path against the recursive one.
"""
import sys
from pathlib import Path

import numpy as np
import pytest
import sympy as sp
from hypothesis import HealthCheck, given, settings, strategies as st

import netdyn
from netdyn import t
from netdyn.components import planar as P
from netdyn.components import spatial as S
from netdyn.errors import ModelError

sys.path.insert(0, str(Path(__file__).parent))
from references.spatial_chain import pinocchio_chain  # noqa: E402

M, IXX, D, G = 2.0, 0.1, 0.3, 9.81   # rotor mass, inertia about its axis through the centre of mass, offset, g


def rotor_network():
    """A rotor on a revolute about global x; its centre of mass 0.3 m off the axis, gravity along −z."""
    net = netdyn.Network()
    net.add(S.RigidBody("rotor", M, (IXX, 0.2, 0.25), com=(0, D, 0)), S.Gravity(),
            S.Revolute("R", "ground", (0, 0, 0), "rotor", (0, 0, 0), axis=(1, 0, 0)))
    return net


def rotor_torque(theta, theta_dd):
    """τ = (I + m d²) θ̈ + m g d cos θ: the centre of mass at d (cos θ, sin θ) in the y-z plane."""
    return (IXX + M * D ** 2) * theta_dd + M * G * D * np.cos(theta)


MOTION = 3 * t + 0.5 * t ** 2   # several turns over 4 s
_MODELS = {}


def rotor_model(formulation):
    if formulation not in _MODELS:
        _MODELS[formulation] = rotor_network().model(formulation=formulation)
    return _MODELS[formulation]


@pytest.mark.parametrize("formulation", ["absolute", "relative"])
@pytest.mark.parametrize("order", ["sorted", "reversed", "shuffled"])
@pytest.mark.parametrize("guess", [None, {"R": 2.5}])
def test_prescribed_rotation_keeps_its_branch_on_a_coarse_grid(formulation, order, guess):
    times = np.linspace(0, 4, 9)   # up to 5.5 rad between samples
    if order == "reversed":
        times = times[::-1].copy()
    elif order == "shuffled":
        times = np.random.default_rng(3).permutation(times)
    res = netdyn.inverse_dynamics(rotor_model(formulation), {"R": MOTION}, times, guess=guess)
    theta, theta_dd = 3 * times + 0.5 * times ** 2, np.ones_like(times)
    assert np.max(np.abs(res.efforts["R"] - rotor_torque(theta, theta_dd))) < 1e-8
    R = res.pose("rotor")[1]
    assert np.max(np.abs(R[1, 1] - np.cos(theta))) < 1e-8 and np.max(np.abs(R[2, 1] - np.sin(theta))) < 1e-8


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(times=st.lists(st.floats(0, 6, allow_nan=False), min_size=1, max_size=7, unique=True),
       start=st.floats(-10, 10), use_guess=st.booleans())
def test_prescribed_rotation_any_grid_hypothesis(times, start, use_guess):
    times = np.array(times)
    motion = start + 2.7 * t + 0.4 * t ** 2
    guess = {"R": float(np.random.default_rng(len(times)).uniform(-3, 3))} if use_guess else None
    res = netdyn.inverse_dynamics(rotor_model("absolute"), {"R": motion}, times, guess=guess)
    theta = start + 2.7 * times + 0.4 * times ** 2
    assert np.max(np.abs(res.efforts["R"] - rotor_torque(theta, 0.8))) < 1e-7


def test_planar_crank_on_a_coarse_unsorted_grid():
    net = netdyn.Network()
    net.add(P.RigidBody("crank", 1.0, 0.1), P.Gravity(g=10), P.Revolute("O", "ground", (0, 0), "crank", (-0.5, 0)))
    times = np.random.default_rng(0).permutation(np.linspace(0, 4, 7))
    for method in ("least-squares", "recursive"):
        res = netdyn.inverse_dynamics(net.model(), {"O": 4 * t + t ** 2}, times, method=method)
        theta = 4 * times + times ** 2
        ref = (0.1 + 0.25) * 2 + 1.0 * 10 * 0.5 * np.cos(theta)
        assert np.max(np.abs(res.efforts["O"] - ref)) < 1e-9, method


def test_a_spatial_four_bar_keeps_its_assembly_and_branch_unsorted():
    """A spatial RSSR driven through several crank turns on a coarse shuffled grid: the same efforts as on a
    fine sorted grid (the fine grid's values at the coarse times)."""
    net = netdyn.linkages.rssr()
    model = net.model()
    name = "R1"
    fine = np.linspace(0, 3, 61)
    motion = 4 * t
    ref = netdyn.inverse_dynamics(model, {name: motion}, fine)
    pick = np.arange(0, 61, 10)
    coarse = np.random.default_rng(1).permutation(fine[pick])
    res = netdyn.inverse_dynamics(model, {name: motion}, coarse)
    back = {v: k for k, v in enumerate(fine)}
    rows = [back[v] for v in coarse]
    assert np.max(np.abs(res.efforts[name] - ref.efforts[name][rows])) < 1e-8


# ------------------------------------------------------------------------------ motions as data
@pytest.mark.parametrize("formulation", ["absolute", "relative"])
def test_motion_forms_agree(formulation):
    times = np.linspace(0, 2, 21)
    q, qd, qdd = 0.5 * np.sin(2 * times), np.cos(2 * times), -2 * np.sin(2 * times)
    model = rotor_model(formulation)
    forms = {"expression": 0.5 * sp.sin(2 * t), "text": "0.5*sin(2*t)", "arrays": (q, qd, qdd),
             "callable": lambda s: (0.5 * np.sin(2 * s), np.cos(2 * s), -2 * np.sin(2 * s))}
    ref = rotor_torque(q, qdd)
    for label, motion in forms.items():
        res = netdyn.inverse_dynamics(model, {"R": motion}, times)
        assert np.max(np.abs(res.efforts["R"] - ref)) < 1e-9, label
        k = netdyn.kinematics(model, {"R": motion}, times)
        assert np.max(np.abs(k["R_dot"] - qd)) < 1e-9, label


def test_array_drivers_on_the_recursive_path_equal_the_expression_and_the_least_squares():
    n = 4
    net = netdyn.linkages.pendulum([1.0] * n, [0.5] * n)
    joints = [j for j, el in net.elements.items() if getattr(el, "is_joint", False)]
    times = np.linspace(0, 1, 11)
    expr = {j: 0.3 * sp.sin(2 * t + k) for k, j in enumerate(joints)}
    data = {j: (0.3 * np.sin(2 * times + k), 0.6 * np.cos(2 * times + k), -1.2 * np.sin(2 * times + k))
            for k, j in enumerate(joints)}
    a = netdyn.inverse_dynamics(net, expr, times)
    b = netdyn.inverse_dynamics(net, data, times)
    c = netdyn.inverse_dynamics(net, data, times, method="least-squares")
    assert a.method == b.method == "recursive"
    for j in joints:
        assert np.max(np.abs(a.efforts[j] - b.efforts[j])) < 1e-12
        assert np.max(np.abs(b.efforts[j] - c.efforts[j])) < 1e-8


def test_bad_motion_data_is_an_error_naming_the_driver():
    with pytest.raises(ModelError, match="driver R: q has 3 samples but there are 4 times"):
        netdyn.kinematics(rotor_model("relative"), {"R": (np.zeros(3), np.zeros(3), np.zeros(3))}, np.arange(4.0))
    with pytest.raises(ModelError, match="not finite"):
        netdyn.kinematics(rotor_model("relative"), {"R": (np.full(2, np.nan), np.zeros(2), np.zeros(2))},
                          np.arange(2.0))


# ------------------------------------------------------------------------------ joint terms, bodies, accelerations
def two_link_network():
    net = netdyn.Network()
    net.add(S.RigidBody("l1", 1, (0.1, 0.12, 0.05), com=(0, 0.1, -0.5)),
            S.RigidBody("l2", 1.5, (0.1, 0.11, 0.03), com=(0.1, 0, -0.5)), S.Gravity(),
            S.Revolute("A", "ground", (0, 0, 0), "l1", (0, 0, 0), axis=(1, 0, 0)),
            S.Universal("U1", "l1", (0, 0, -1), "l2", (0, 0, 0)))
    return net


def test_joint_terms_and_body_motion_agree_in_both_spatial_formulations():
    net = two_link_network()
    te = np.linspace(0, 0.5, 6)
    out = {}
    for form in ("absolute", "relative"):
        sol = netdyn.simulate(net.model(formulation=form), (0, 0.5), q0={"A": 0.3, "U1": (0.1, -0.2)},
                              f0={"theta_A_dot": 1.0, "U1": (1.0, 0.5)}, t_eval=te, rtol=1e-11)
        assert abs(sol["A"][0] - 0.3) < 1e-10 and abs(sol["alpha_U1"][0] - 0.1) < 1e-10
        assert abs(sol["beta_U1_dot"][0] - 0.5) < 1e-8 and abs(sol["A_dot"][0] - 1.0) < 1e-8
        out[form] = [*sol.pose("l2"), sol.angular_velocity("l2"), *sol.acceleration("l2")]
    for a, b in zip(out["absolute"], out["relative"]):
        assert np.max(np.abs(a - b)) < 1e-7


def test_guess_in_joint_terms_picks_the_assembly_in_absolute_spatial():
    net = two_link_network()
    q = netdyn.assemble_configuration(net.model(), guess={"A": 2.0, "U1": (0.3, 0.1)}, q0={"A": 2.0})
    R = np.array(S.quat_matrix([q[f"e{k}_l1"] for k in range(4)]).tolist(), dtype=float)
    assert abs(R[1, 1] - np.cos(2.0)) < 1e-9 and abs(R[2, 1] - np.sin(2.0)) < 1e-9


def test_planar_body_accessors_match_coordinates():
    sol = netdyn.simulate(netdyn.linkages.four_bar(gravity=True), (0, 0.2), t_eval=[0.0, 0.2])
    pos, R = sol.pose("crank")
    assert np.allclose(pos[0], sol["x_crank"]) and np.allclose(R[1, 0], np.sin(sol["theta_crank"]))
    assert np.allclose(sol.angular_velocity("crank"), sol["theta_crank_dot"])
    lin, ang = sol.acceleration("crank")
    assert np.allclose(lin[1], sol["y_crank_ddot"]) and np.allclose(ang, sol["theta_crank_ddot"])
    with pytest.raises(ModelError, match="no body named 'nope'"):
        sol.pose("nope")


@pytest.mark.parametrize("n", [3, 8])
def test_accelerations_match_pinocchio_aba_on_a_random_spatial_tree(n):
    import pinocchio as pin

    p = netdyn.linkages.spatial.chain_parameters(n, seed=n + 10)
    net = netdyn.linkages.spatial.spatial_chain(n, p)
    pm = pinocchio_chain(p)
    data = pm.createData()
    rng = np.random.default_rng(n)
    rel = net.model(formulation="relative") if n <= 3 else None  # the symbolic relative model grows like n^4
    for _ in range(3):
        q, v, tau = rng.uniform(-3, 3, n), rng.uniform(-2, 2, n), rng.uniform(-1, 1, n)
        ref = pin.aba(pm, data, q, v, tau)
        assert np.max(np.abs(netdyn.accelerations(net, q, v, tau) - ref)) < 1e-10 * (1 + np.max(np.abs(ref)))
        if rel is not None:
            assert np.max(np.abs(netdyn.accelerations(rel, q, v, tau) - ref)) < 1e-10 * (1 + np.max(np.abs(ref)))


def test_accelerations_of_a_planar_four_bar_recursive_equal_symbolic():
    net = netdyn.linkages.four_bar(gravity=True)
    rel = net.model(formulation="relative")
    sol = netdyn.simulate(rel, (0, 0.3), t_eval=[0.3])
    names = rel.coordinate_names
    q, v = sol.q[:, -1], sol.f[:, -1]
    tau = {"theta_O": 0.7}
    rec = netdyn.accelerations(net, dict(zip(names, q)), dict(zip(names, v)), tau)
    sym = netdyn.accelerations(rel, q, v, {"O": 0.7})
    assert max(abs(rec[n] - s) for n, s in zip(names, sym)) < 1e-9
    free = netdyn.accelerations(rel, q, v)
    assert np.max(np.abs(free - sol.acc[:, -1])) < 1e-8
    absolute = net.model()
    qa = netdyn.assemble_configuration(absolute, q0={"O": q[names.index("theta_O")]})
    assert set(qa) == set(absolute.coordinate_names)


# ------------------------------------------------------------------------------ task-space trajectories
def test_task_space_trajectory_equals_joint_space_driving_and_the_closed_form_tree():
    from netdyn.linkages.parallel import circle, three_rrr

    mech = three_rrr()
    times = np.random.default_rng(2).permutation(np.linspace(0, 1.5, 31))   # unsorted on purpose
    act = ["A1", "A2", "A3"]
    task = netdyn.inverse_dynamics(mech.network(), {"platform": circle()}, times, actuated=act)
    P, V, A = circle().pose(times)
    assert np.max(np.abs(task["x_platform"] - P[0])) < 1e-10 and np.max(np.abs(task["y_platform_ddot"] - A[1])) < 1e-8
    ref = mech.inverse_dynamics(times, circle())   # closed-form inverse kinematics on the DeNOC tree
    assert np.max(np.abs(np.array([task.efforts[j] for j in act]) - ref.efforts)) < 1e-9
    # the same motion expressed in joint space, as arrays: the same efforts
    joint = {j: (ref.q[mech.coordinate[j]], ref.qd[mech.coordinate[j]], ref.qdd[mech.coordinate[j]]) for j in act}
    js = netdyn.inverse_dynamics(mech.network(), joint, times)
    assert max(np.max(np.abs(js.efforts[j] - task.efforts[j])) for j in act) < 1e-9
    # arrays and a callable for the trajectory: the same
    arrays = netdyn.inverse_dynamics(mech.network(), {"platform": (P, V, A)}, times, actuated=act)
    assert max(np.max(np.abs(arrays.efforts[j] - task.efforts[j])) for j in act) < 1e-12
    assert np.max(np.abs(task.reaction("B2") - js.reaction("B2"))) < 1e-8


def test_task_space_mistakes_are_errors():
    from netdyn.linkages.parallel import circle, three_rrr

    net = three_rrr().network()
    with pytest.raises(ModelError, match="actuated="):
        netdyn.inverse_dynamics(net, {"platform": circle()}, [0.0])
    with pytest.raises(ModelError, match="not moving joints"):
        netdyn.inverse_dynamics(net, {"platform": circle()}, [0.0], actuated=["B2"])
    with pytest.raises(ModelError, match="goes with a task-space motion"):
        netdyn.inverse_dynamics(net, {"A1": 0.1}, [0.0], actuated=["A1"])


def test_driven_solutions_evaluate_the_drivers_at_every_time():
    """The drivers' rows hold their motions as parameters: the residual and expressions see each time's values."""
    net = netdyn.linkages.four_bar()
    times = np.linspace(0, 2, 11)
    for motion in (1 + 2 * t, (1 + 2 * times, np.full(11, 2.0), np.zeros(11))):
        k = netdyn.kinematics(net.model(), {"O": motion}, times)
        r = k.constraint_residual()
        assert r["position"] < 1e-12 and r["velocity"] < 1e-12
        assert np.max(np.abs(k["O"] - (1 + 2 * times))) < 1e-12
