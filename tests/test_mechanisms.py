"""Mechanisms as their papers give them: consistent initial conditions to the integrator's tolerance,
joint-coordinate initial conditions, body frames apart from the centre of mass, predictable relative
coordinates (issue 18)."""
import numpy as np
import pytest

import netdyn
from netdyn.linkages import FOUR_BAR_GUESS, four_bar
from netdyn.numeric import compile_model


def test_four_bar_ida_starts_from_converged_positions():
    """The issue's case: IDA failed at t = 0 because the position solve stopped at 4.8e-11."""
    model = four_bar(tau=100.0).model()
    kw = dict(q0={"theta_crank": 0.4}, guess=FOUR_BAR_GUESS)
    ref = netdyn.simulate(model, (0, 0.1), **kw)
    ida = netdyn.simulate(model, (0, 0.1), method="ida", **kw)
    assert ida.method == "ida"
    assert np.max(np.abs(ida.q - ref.q)) < 1e-6
    cm = compile_model(model)
    phi = cm.constraints(0.0, ida.q[:, 0], ida.f[:, 0], cm.parameter_vector())["phi"]
    assert np.max(np.abs(phi)) < 1e-14  # Newton to the rounding level, not to a fixed 1e-10


def test_initial_positions_converge_to_rounding_level():
    from netdyn.initial import consistent_initial_conditions
    cm = compile_model(four_bar().model())
    q, _ = consistent_initial_conditions(cm, 0.0, {"theta_crank": 0.4}, None, guess=FOUR_BAR_GUESS)
    assert np.max(np.abs(cm.constraints(0.0, q, 0 * q, cm.parameter_vector())["phi"])) < 1e-15


def test_impossible_initial_positions_name_the_constraints():
    from netdyn.linkages import BOOK
    misfit = four_bar(dict(BOOK, l4=3.0))
    with pytest.raises(netdyn.InitialConditionError, match=r"constraint [ACD]\[.*also unmet"):
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
