"""Mechanisms as their papers give them: consistent initial conditions to the integrator's tolerance,
joint-coordinate initial conditions, body frames apart from the centre of mass, predictable relative
coordinates (issue 18)."""
import numpy as np
import pytest

import netdyn
from netdyn.linkages import FOUR_BAR_GUESS, four_bar
from netdyn.numerics.functions.compiled import compile_model


def test_four_bar_ida_starts_from_converged_positions():
    """The issue's case: IDA failed at t = 0 because the position solve stopped at 4.8e-11."""
    model = four_bar(tau=100.0).model()
    kw = dict(q0={"theta_crank": 0.4}, guess=FOUR_BAR_GUESS)
    ref = netdyn.simulate(model, (0, 0.1), **kw)
    ida = netdyn.simulate(model, (0, 0.1), method="ida", **kw)
    assert ida.method == "ida"
    assert np.max(np.abs(ida.q - ref.q)) < 1e-6
    cm = compile_model(model)
    phi = cm.constraints(0.0, ida.q[:, 0], ida.f[:, 0], cm.parameter_vector()).phi
    assert np.max(np.abs(phi)) < 1e-14  # Newton to the rounding level, not to a fixed 1e-10


def test_initial_positions_converge_to_rounding_level():
    from netdyn.numerics.dae.initial import consistent_initial_conditions
    cm = compile_model(four_bar().model())
    q, _ = consistent_initial_conditions(cm, 0.0, {"theta_crank": 0.4}, None, guess=FOUR_BAR_GUESS)
    assert np.max(np.abs(cm.constraints(0.0, q, 0 * q, cm.parameter_vector()).phi)) < 1e-15


def test_impossible_initial_positions_name_the_constraints():
    from netdyn.linkages import BOOK
    misfit = four_bar(dict(BOOK, l4=3.0))
    with pytest.raises(netdyn.LoopClosureError, match=r"loop ground .* does not close .*constraint [ACD]\["):
        netdyn.simulate(misfit, (0, 0.1), q0={"theta_crank": 0.4}, guess=FOUR_BAR_GUESS)


def four_bar_pivot_frames(p=None, gravity=True):
    """The book's four-bar with every body frame at its first pivot (``com`` half-way along the link)."""
    from netdyn.components.planar import Gravity, Revolute, RigidBody, Torque
    from netdyn.linkages import BOOK
    p = p or BOOK
    l1, l2, l3, l4 = p["l1"], p["l2"], p["l3"], p["l4"]
    net = netdyn.Network("four-bar, pivot frames")
    net.add(RigidBody("crank", p["m1"], p["I1"], com=(l1 / 2, 0)), RigidBody("rod", p["m2"], p["I2"], com=(l2 / 2, 0)),
            RigidBody("rocker", p["m3"], p["I3"], com=(l3 / 2, 0)),
            Revolute("O", "ground", (0, 0), "crank", (0, 0)), Revolute("A", "crank", (l1, 0), "rod", (0, 0)),
            Revolute("C", "rod", (l2, 0), "rocker", (l3, 0)), Revolute("D", "ground", (l4, 0), "rocker", (0, 0)),
            Torque("tau", "crank", 1.0))
    if gravity:
        net.add(Gravity())
    return net


@pytest.mark.parametrize("formulation", ["absolute", "relative"])
def test_body_frames_apart_from_the_centre_of_mass(formulation):
    """Frames at the pivots with com offsets give the same motion as frames at the centres of mass."""
    from netdyn.linkages import BOOK
    guess = {"theta_rod": 0.9, "theta_rocker": 1.9, "theta_D": 1.9, "theta_A": 0.5}
    ref = netdyn.simulate(four_bar(gravity=True).model(formulation=formulation), (0, 1.0), q0={"O": 0.4},
                          guess=guess)
    piv = netdyn.simulate(four_bar_pivot_frames().model(formulation=formulation), (0, 1.0), q0={"O": 0.4},
                          guess=guess)
    names = ["theta_crank", "theta_rod", "theta_rocker"] if formulation == "absolute" else ["theta_O", "theta_A",
                                                                                               "theta_D"]
    for n in names:
        assert np.max(np.abs(ref[n] - piv[n])) < 1e-6, n
    if formulation == "absolute":  # the pivot frame's origin is half a link behind the centre of mass
        th = piv["theta_rod"]
        assert np.max(np.abs(piv["x_rod"] + BOOK["l2"] / 2 * np.cos(th) - ref["x_rod"])) < 1e-6
        assert np.max(np.abs(piv["y_rod"] + BOOK["l2"] / 2 * np.sin(th) - ref["y_rod"])) < 1e-6


def test_com_default_keeps_models_and_files():
    from netdyn.components.planar import RigidBody
    assert RigidBody("b", 1, 0.1).values.keys() == {"m", "I"}
    net = four_bar_pivot_frames()
    text_model = net.model(symbolic=True)
    assert "crank_cx" in {str(s) for s in text_model.parameters}


# Andrews' squeezing mechanism at t = 0.03 s: the reference solution of the IVP test set (Mazzia, Magherini,
# Iavernaro, "Test Set for Initial Value Problem Solvers", release 2.3, U. Bari 2006, problem "andrews";
# computed with PSIDE at rtol = atol = 1e-14), as in subroutine andsoln of its Fortran source, copied in
# R-Forge's deTestSet package (github.com/rforge/bvpsolve, pkg/deTestSet/src/Ex_andrews.f, y(1..7)).
# Joint names of netdyn.linkages.andrews_squeezer: O = beta, F = Theta, B = gamma, G = Phi, A5 = delta,
# H = Omega, A7 = epsilon.
ANDREWS_REF = {"O": 0.1581077119629904e2, "F": -0.1575637105984298e2, "B": 0.4082224013073101e-1,
               "G": -0.5347301163226948e0, "A5": 0.5244099658805304e0, "H": 0.5347301163226948e0,
               "A7": 0.1048080741042263e1}


@pytest.fixture(scope="module")
def andrews_models():
    from netdyn.linkages import andrews_squeezer
    net = andrews_squeezer()
    return {"absolute": net.model(), "relative": net.model(formulation="relative", cut=["E3", "E4", "E6"])}


@pytest.mark.parametrize("formulation", ["absolute", "relative"])
@pytest.mark.parametrize("method, solver", [("auto", None), ("projection", "DOP853"), ("projection", "RK45"),
                                            ("projection", "Radau"), ("ida", None)])
def test_andrews_squeezer_matches_the_test_set_reference(andrews_models, formulation, method, solver):
    from netdyn.linkages import ANDREWS_Q0
    model = andrews_models[formulation]
    if formulation == "relative":  # the cut joints leave the paper's seven angles as the coordinates
        assert sorted(model.coordinate_names) == sorted(f"theta_{j}" for j in ANDREWS_Q0)
    sol = netdyn.simulate(model, (0, 0.03), q0={"O": ANDREWS_Q0["O"]}, guess=ANDREWS_Q0, rtol=1e-8,
                          t_eval=np.linspace(0, 0.03, 7), method=method, solver=solver)
    for joint, q0 in ANDREWS_Q0.items():  # the test set's consistent initial values are met
        assert abs(sol[joint][0] - q0) < 1e-12, joint
    err = {joint: abs(sol[joint][-1] - ref) for joint, ref in ANDREWS_REF.items()}
    assert max(err.values()) < 1e-6, err


# ------------------------------------------------------------------------------------------ joint-coordinate ICs

@pytest.mark.parametrize("formulation", ["absolute", "relative"])
def test_joint_coordinates_as_initial_conditions(formulation):
    """q0/f0 by joint name give the same motion in both formulations (conditions of the position and
    velocity solves in absolute coordinates, the coordinates themselves in relative ones)."""
    model = four_bar(gravity=True).model(formulation=formulation)
    guess = {"theta_rod": 0.9, "theta_rocker": 1.9, "D": 1.9, "A": 0.5}
    sol = netdyn.simulate(model, (0, 0.5), q0={"A": -0.35}, f0={"O": 1.0}, guess=guess)
    assert abs(sol["A"][0] + 0.35) < 1e-12 and abs(sol["O_dot"][0] - 1.0) < 1e-12
    ref = netdyn.simulate(four_bar(gravity=True).model(), (0, 0.5), q0={"theta_crank": sol["O"][0]},
                          f0={"theta_crank": 1.0}, guess=FOUR_BAR_GUESS)
    assert np.max(np.abs(sol["theta_rocker"] - ref["theta_rocker"])) < 1e-6 if formulation == "absolute" else \
        np.max(np.abs(sol["D"] - ref["D"])) < 1e-6


def test_too_many_or_contradictory_joint_values_name_the_joints():
    model = four_bar().model()
    with pytest.raises(netdyn.InitialConditionError, match=r"joint A.*joint C|joint C.*joint A"):
        netdyn.simulate(model, (0, 0.1), q0={"A": 0.3, "C": 0.3}, guess=FOUR_BAR_GUESS)
    with pytest.raises(netdyn.InitialConditionError, match=r"joint D.*joint O|joint O.*joint D"):
        netdyn.simulate(model, (0, 0.1), q0={"O": 0.4, "D": 1.0}, guess=FOUR_BAR_GUESS)
    q = netdyn.simulate(model, (0, 0.01), q0={"O": 0.4}, guess=FOUR_BAR_GUESS)
    consistent = {"O": 0.4, "A": float(q["A"][0])}  # both hold, but fix more than the one freedom
    with pytest.raises(netdyn.InitialConditionError, match=r"joint A.*fix 1 freedom.*only 0"):
        netdyn.simulate(model, (0, 0.1), q0=consistent, guess=FOUR_BAR_GUESS)
    with pytest.raises(netdyn.ModelError, match="joint coordinates"):
        netdyn.simulate(model, (0, 0.1), q0={"J9": 0.3}, guess=FOUR_BAR_GUESS)


# ------------------------------------------------------------------------------------------ spanning tree

def _andrews_shuffled(seed):
    from netdyn.linkages import andrews_squeezer
    net = andrews_squeezer()
    items = list(net.bodies.values()) + list(net.elements.values())
    np.random.default_rng(seed).shuffle(items)
    out = netdyn.Network("shuffled")
    bodies = [x for x in items if getattr(x, "is_body", False)]
    out.add(*bodies, *[x for x in items if not getattr(x, "is_body", False)])
    return out


def test_relative_tree_does_not_depend_on_the_order_of_add():
    from netdyn.linkages import andrews_squeezer
    base = andrews_squeezer().model(formulation="relative")
    # K2 is two joints from ground through F (from K1) or E3 (from K3): E3 sorts first, so F is cut
    assert base.metadata["planar"].cuts == ["E4", "E6", "F"]
    for seed in range(3):
        m = _andrews_shuffled(seed).model(formulation="relative")
        assert m.metadata["planar"].cuts == ["E4", "E6", "F"]
        assert m.metadata["planar"].tree == base.metadata["planar"].tree
        assert m.coordinate_names == base.coordinate_names


def test_cut_joints_chosen_by_the_user():
    net = four_bar(gravity=True)
    m = net.model(formulation="relative", cut=["O"])
    assert m.metadata["planar"].cuts == ["O"] and sorted(m.coordinate_names) == ["theta_A", "theta_C", "theta_D"]
    # the guess in body angles (as for the absolute formulation) picks the branch in any tree
    sol = netdyn.simulate(m, (0, 0.5), q0={"O": 0.4}, guess=FOUR_BAR_GUESS)
    ref = netdyn.simulate(net.model(), (0, 0.5), q0={"O": 0.4}, guess=FOUR_BAR_GUESS)
    for name in ("O", "A", "C", "D", "theta_rod"):
        assert np.max(np.abs(sol[name] - ref[name])) < 1e-6, name
    with pytest.raises(netdyn.ModelError, match="not joints"):
        net.model(formulation="relative", cut=["X"])
    with pytest.raises(netdyn.TopologyError, match="crank.*no chain of joints"):
        net.model(formulation="relative", cut=["O", "A"])


def test_info_prints_the_tree_and_the_cut_joints(tmp_path, capsys):
    from netdyn.cli import main
    from netdyn.linkages import andrews_squeezer
    path = tmp_path / "andrews.yaml"
    netdyn.save_model(andrews_squeezer(), str(path))  # com offsets round-trip through the model file
    assert main(["info", str(path), "--formulation", "relative", "--cut", "E3,E4,E6"]) == 0
    out = capsys.readouterr().out
    assert "joint tree (7" in out and "F (K1-K2)" in out
    assert "cut joints (3): E3 (closes B O F E3); E4" in out
    assert "coordinates (7): theta_O, theta_B, theta_A5, theta_A7, theta_F, theta_G, theta_H" in out


def test_andrews_squeezer_on_the_recursive_path_is_refused_with_the_reason(andrews_models):
    """The opt-in O(n) path evaluates bodies, joints and gravity only: the spring and the torque are named."""
    from netdyn.linkages import ANDREWS_Q0, andrews_squeezer
    with pytest.raises(netdyn.NetdynError, match="spring|mom"):
        netdyn.simulate(andrews_squeezer(), (0, 0.03), q0={"theta_O": ANDREWS_Q0["O"]}, method="recursive")


@pytest.mark.parametrize("method", ["auto", "recursive"])
def test_pendulum_with_frames_at_the_pivots(method):
    """A double pendulum typed with frames at the pivots (com offsets) moves as the centre-of-mass one."""
    from netdyn.components.planar import Gravity, Revolute, RigidBody
    from netdyn.linkages import pendulum
    net = netdyn.Network("pivot frames")
    net.add(Gravity(), RigidBody("link1", 1.0, 0.5 ** 2 / 12, com=(0.25, 0)),
            RigidBody("link2", 1.0, 0.4 ** 2 / 12, com=(0.2, 0)),
            Revolute("J1", "ground", (0, 0), "link1", (0, 0)), Revolute("J2", "link1", (0.5, 0), "link2", (0, 0)))
    q0 = {"theta_J1": 0.5, "theta_J2": 0.3}
    sol = netdyn.simulate(net, (0, 1), q0=q0, method=method, t_eval=np.linspace(0, 1, 11))
    ref = netdyn.simulate(pendulum([1.0, 1.0], [0.5, 0.4]), (0, 1), q0=q0, t_eval=np.linspace(0, 1, 11))
    for name in ("theta_J1", "theta_J2"):
        assert np.max(np.abs(sol[name] - ref[name])) < 1e-6, name
