"""Accuracy and energy bookkeeping of the circuit path on random diode circuits, against ngspice.

The seeds of :func:`test_random_circuits.random_circuit` (``devices="diodes"``) that were 1.1e-3 - 1.9e-3 of
peak off converged ngspice while ``netdyn.simulate`` floored the circuit path's ``rtol`` at 1e-6 (BDF2's
accumulated error); the default is 1e-7 now (``netdyn.numerics.circuit.nonlinearsim.CIRCUIT_RTOL``: 3.3e-4, 4.4e-4,
3.9e-4). Their power balance is BDF2's, ~1e-5 (docs/spice.md, "Energy on the circuit path"); seed 14's
closes to 5e-6. And the rate of a node voltage without capacitance comes from the solution next to a
PULSE corner, where a difference of output samples is wrong.
"""
from __future__ import annotations

import numpy as np
import pytest

import netdyn
from netdyn.components.diode import Diode
from netdyn.components.electrical import Capacitor, Resistor, VoltageSource
from netdyn.lagrange.sources import pulse
from test_random_circuits import NGSPICE, check_circuit

#: ngspice deviation at the rtol floor 1e-6 before: 3: 1.30e-3, 7: 1.93e-3, 24: 1.42e-3
FORMERLY_OFF = (3, 7, 24)
#: power balance below 5e-6 (measured 2.8e-6; 2.0e-7 while the work took a node voltage without capacitance from
#: the states' interpolant, whose jumps between steps made D1's junction channel read 1.8e-12 J where the
#: junction ends holding ~0: that error offset BDF2's own defect here; see docs/spice.md)
BALANCED = (14,)


@pytest.mark.skipif(NGSPICE is None, reason="ngspice is not installed (the only reference for diodes)")
@pytest.mark.parametrize("seed", FORMERLY_OFF + BALANCED)
def test_random_diode_circuit_against_converged_ngspice(seed):
    """Within 1e-3 of each waveform's peak of ngspice at tight tolerances (itself converged: default and tight
    agree to 1e-3); the power balance closes to 5e-6 on seed 14 and to 2e-5 on the others (measured 1.1e-5,
    1.3e-5, 2.1e-6: BDF2's defect between its collocation points, see docs/spice.md)."""
    r = check_circuit(seed, devices="diodes", formulations=(None,))
    print(r)
    assert r["method"] == "circuit" and not r["errors"], r
    assert r["ngspice_spread"] < 1e-3, r
    assert r["vs_ngspice"] < 1e-3, r
    assert r["power_balance"] < (5e-6 if seed in BALANCED else 2e-5), r


def test_node_rate_from_the_solution_next_to_a_pulse_corner():
    """A divider node without capacitance beside a diode sub-circuit (on the circuit path): its voltage is
    ``u(t) R2 / (R1 + R2)``, its rate ``u̇(t) R2 / (R1 + R2)`` exactly, on the PULSE's ramps and flat parts
    alike; at a corner it is the left side's, of the step that ends there (a central difference of the
    output samples mixes both sides: half the ramp's slope there)."""
    R1, R2, rise = 1e3, 3e3, 1e-4
    u = pulse(0.0, 4.0, 2e-4, rise, rise, 3e-4, 1e-3)
    net = netdyn.Network()
    net.add(VoltageSource("V1", "a", "0", u), Resistor("R1", "a", "d", R1), Resistor("R2", "d", "0", R2),
            VoltageSource("V2", "b", "0", 5.0), Resistor("R3", "b", "c", 1e3), Diode("D1", "c", "0"),
            Capacitor("C1", "c", "0", 1e-7))
    t = np.linspace(0.0, 1e-3, 201)  # the corners 2e-4, 3e-4, 6e-4, 7e-4 are outputs
    sol = netdyn.simulate(net, (0.0, 1e-3), t_eval=t)
    assert sol.method == "circuit"
    rate = sol["phi_d_ddot"]
    slope = np.where((t > 2e-4 + 1e-12) & (t <= 3e-4 + 1e-12), 4.0 / rise, 0.0)
    slope = np.where((t > 6e-4 + 1e-12) & (t <= 7e-4 + 1e-12), -4.0 / rise, slope) * R2 / (R1 + R2)
    peak = np.max(np.abs(slope))
    assert np.max(np.abs(rate - slope)) < 1e-6 * peak
    top = np.flatnonzero(np.isclose(t, 3e-4, rtol=0, atol=1e-12))[0]  # the end of the rise
    assert abs(rate[top] - peak) < 1e-6 * peak
    central = np.gradient(sol["phi_d_dot"], t)
    assert abs(central[top] - 0.5 * peak) < 1e-6 * peak  # what np.gradient of the outputs gave there
