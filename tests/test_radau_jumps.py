"""Radau on a linear DAE whose input jumps at a corner (issue 27's event speed): the step after the jump starts
from the right limit, so the step size does not collapse there, and the solution keeps the closed form."""
import numpy as np
import pytest
import scipy.sparse as sps

from netdyn.numerics.integrators.radau import LinearDAE, radau


def _step(tt):
    return np.where(np.asarray(tt) > 0.5, 1.0, 0.0)  # at the corner itself: the left value, as a PWM's


def _closed(t):
    return np.where(t > 0.5, 1 - np.exp(-(t - 0.5)), 0.0)


@pytest.mark.parametrize("algebraic", [False, True], ids=["ode", "dae"])
@pytest.mark.parametrize("rtol", [1e-8, 1e-10])
def test_a_jump_at_a_corner_costs_few_steps(algebraic, rtol):
    if algebraic:  # y1' = -y1 + y2, 0 = -y2 + u: the algebraic y2 jumps with the input
        dae = LinearDAE(sps.csr_array(np.diag([1.0, 0.0])), sps.csr_array([[-1.0, 1.0], [0.0, -1.0]]),
                        sps.csr_array([[0.0], [1.0]]), [_step])
        y0 = np.zeros(2)
    else:  # y' = -y + u
        dae = LinearDAE(sps.eye(1, format="csr"), sps.csr_array([[-1.0]]), sps.csr_array([[1.0]]), [_step])
        y0 = np.zeros(1)
    dae.corners = np.array([0.5])
    t = np.union1d(np.linspace(0, 1, 21), [0.5])
    stats = {}
    T, Y = radau(dae, t, y0, rtol=rtol, atol=1e-12, stats=stats)
    assert np.max(np.abs(Y[0] - _closed(T))) < 100 * rtol
    # the old estimate took the corner's left value as the start rate: ~40 halvings, thousands of steps
    assert stats["nrejected"] <= 12 and stats["nsteps"] < 400


def test_a_run_starting_on_the_jump():
    """A run that starts on the corner (an event's restart, an Illinois trial from a corner column)."""
    dae = LinearDAE(sps.eye(1, format="csr"), sps.csr_array([[-1.0]]), sps.csr_array([[1.0]]), [_step])
    stats = {}
    T, Y = radau(dae, np.linspace(0.5, 1.0, 11), np.zeros(1), rtol=1e-10, atol=1e-12, stats=stats)
    assert np.max(np.abs(Y[0] - _closed(T))) < 1e-8
    assert stats["nrejected"] <= 12 and stats["nsteps"] < 400
