"""The linear path's output rates from the last Radau stage (issue 10, RC ladder at N = 10,000).

Where every component of the DAE is differential (an RC ladder in loop charges), the flows at the output times
are the collocation polynomial's derivative at the last stage of the step that ends there — where the DAE holds
exactly — instead of one multi-right-hand-side solve over every output. Checked against that solve (the
consistent-rates solver, independent of the steps) through source corners, where the solve is kept.
"""
import numpy as np

from netdyn import Network
from netdyn.components.electrical import Capacitor, Resistor, VoltageSource
from netdyn.lagrange.sources import pulse
from netdyn.numerics.circuit.linear import LinearRadau
from netdyn.numerics.circuit.linearsim import simulate_linear
from netdyn.numerics.circuit.stamp import linear_network


def _ladder(n, source):
    net = Network(f"ladder {n}")
    net.add(VoltageSource("V1", "n0", "0", source))
    for k in range(1, n + 1):
        net.add(Resistor(f"R{k}", f"n{k - 1}", f"n{k}", 1e3), Capacitor(f"C{k}", f"n{k}", "0", 1e-9))
    return net


def _check(net, t_eval, rtol):
    lin = linear_network(net)
    sol = simulate_linear(net, (0.0, t_eval[-1]), t_eval=t_eval, rtol=rtol, lin=lin)
    integ = LinearRadau(lin)
    assert integ.differential.all()  # loop charges of an RC ladder: no algebraic component
    Y = np.vstack([sol.q])  # y = q here (no inertial flows, no multipliers)
    rates, _ = integ.solve(sol.t, Y)
    scale = np.max(np.abs(rates))
    assert scale > 0
    assert np.max(np.abs(sol.f - rates)) <= 1e-9 * scale
    return sol


def test_end_rates_equal_the_solve_on_a_dc_ladder():
    sol = _check(_ladder(60, 1.0), np.linspace(0, 1e-5, 101), 1e-6)
    assert sol.method == "linear"


def test_end_rates_equal_the_solve_through_pulse_corners():
    """Corners at output times (rates there: the solve, right limits) and between them (steps stop there)."""
    src = pulse(0, 1, 1e-6, 2e-7, 3e-7, 2e-6, 5e-6)
    t_eval = np.union1d(np.linspace(0, 1.2e-5, 61), [1e-6, 1.2e-6])
    _check(_ladder(40, src), t_eval, 1e-8)


def test_small_ladders_batched_steps_fall_back_to_the_solve():
    """Below 33 unknowns equal steps run in batches (no stage kept per step): those outputs use the solve."""
    _check(_ladder(5, 1.0), np.linspace(0, 1e-5, 41), 1e-8)
