"""The circuit path's per-element energy report from the stamp, the devices' laws and the integrated work:
equal to the symbolic report, built without the symbolic model."""
import numpy as np
import pytest

import netdyn
from netdyn.components.diode import Diode
from netdyn.components.electrical import Capacitor, CurrentSource, Inductor, Resistor, VoltageSource
from netdyn.lagrange.sources import pulse
from netdyn.numerics import circuit_report


def _circuit():
    net = netdyn.Network()
    net.add(VoltageSource("V1", "a", "0", 5.0), Resistor("R1", "a", "d", 1e3),
            Diode("D1", "d", "0", IS=1e-14, N=1.2, CJO=1e-9, TT=1e-6, BV=8.0),
            Capacitor("C1", "d", "0", 1e-6), Inductor("L1", "d", "e", 1e-3), Resistor("R2", "e", "0", 100.0),
            CurrentSource("I1", "0", "d", pulse(0, 2e-3, 5e-4, 1e-5, 1e-5, 5e-4)))
    return net


@pytest.fixture(scope="module")
def reports():
    times = np.linspace(0, 2e-3, 801)
    fast_sol = netdyn.simulate(_circuit(), (0, 2e-3), t_eval=times)
    assert fast_sol.method == "circuit" and fast_sol.element_work is not None
    net = fast_sol.net
    original = type(net).model

    def refuse(self, *a, **k):
        raise AssertionError("the circuit-path report built the symbolic model")
    type(net).model = refuse
    try:
        fast = fast_sol.energy_report()
    finally:
        type(net).model = original
    slow_sol = netdyn.simulate(_circuit(), (0, 2e-3), t_eval=times)
    takes = circuit_report.takes
    circuit_report.takes = lambda sol: False
    try:
        slow = slow_sol.energy_report()      # the symbolic model's report of the same transient
    finally:
        circuit_report.takes = takes
    return fast, slow


def test_circuit_report_equals_the_symbolic_one(reports):
    fast, slow = reports
    assert "(rest)" not in fast.kinds
    assert fast.kinds == {n: k for n, k in slow.kinds.items() if n != "(rest)"}
    scale = max(abs(w) for w in slow.absorbed.values())
    pscale = max(np.max(np.abs(p)) for p in slow.power.values())
    for n in fast.kinds:
        assert np.max(np.abs((fast.stored[n] - fast.stored[n][0]) - (slow.stored[n] - slow.stored[n][0]))) \
            < 1e-6 * scale, n
        assert np.max(np.abs(fast.dissipated_power[n] - slow.dissipated_power[n])) < 1e-9 * pscale, n
        assert np.max(np.abs(fast.power[n] - slow.power[n])) < 1e-6 * pscale, n
        assert fast.dissipated[n] == pytest.approx(slow.dissipated[n], abs=1e-6 * scale), n
        assert fast.absorbed[n] == pytest.approx(slow.absorbed[n], abs=1e-6 * scale), n
    assert fast.relative < 1e-6 and fast.tellegen < 1e-6
    # the sources' delivered energy is the integrator's work: its sum is the model's supplied total
    assert fast.delivered["V1"] + fast.delivered["I1"] == pytest.approx(fast.totals["supplied"][-1], rel=1e-12)
    table = fast.table()
    assert table.splitlines()[0] == slow.table().splitlines()[0] and "Tellegen" in table


def test_controlled_sources_keep_the_symbolic_report():
    from netdyn.components.controlled import VCVS
    net = netdyn.Network()
    net.add(VoltageSource("V1", "a", "0", 1.0), Resistor("R1", "a", "b", 1e3), Diode("D1", "b", "0"),
            VCVS("E1", "c", "0", "b", "0", 2.0), Resistor("R2", "c", "0", 1e3))
    sol = netdyn.simulate(net, (0, 1e-3), t_eval=np.linspace(0, 1e-3, 21))
    assert sol.method == "circuit" and not circuit_report.takes(sol)
