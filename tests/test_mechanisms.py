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
