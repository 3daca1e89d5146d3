"""The circuit path's per-element energy report from the stamp, the devices' laws and the integrated work:
equal to the symbolic report, built without the symbolic model."""
import numpy as np
import pytest

import netdyn
from netdyn.components.diode import Diode
from netdyn.components.electrical import Capacitor, CurrentSource, Inductor, Resistor, VoltageSource
from netdyn.lagrange.sources import pulse
from netdyn.numerics.circuit.energy import circuit_report


def _circuit():
    net = netdyn.Network()
    net.add(VoltageSource("V1", "a", "0", 5.0), Resistor("R1", "a", "d", 1e3),
            Diode("D1", "d", "0", IS=1e-14, N=1.2, CJO=1e-9, TT=1e-6, BV=8.0),
            Capacitor("C1", "d", "0", 1e-6), Inductor("L1", "d", "e", 1e-3), Resistor("R2", "e", "0", 100.0),
            CurrentSource("I1", "0", "d", pulse(0, 2e-3, 5e-4, 1e-5, 1e-5, 5e-4)))
    return net


def _numeric_and_symbolic(sol):
    """The report of a circuit-path solution from numbers (the symbolic model refused while it is made) and
    the symbolic model's report of the same transient."""
    net = sol.net
    original = type(net).model

    def refuse(self, *a, **k):
        raise AssertionError("the circuit-path report built the symbolic model")
    type(net).model = refuse
    try:
        fast = sol.energy_report()
    finally:
        type(net).model = original
    takes = circuit_report.takes
    circuit_report.takes = lambda s: False
    try:
        slow = sol.energy_report()      # the symbolic model's report of the same transient
    finally:
        circuit_report.takes = takes
    return fast, slow


@pytest.fixture(scope="module")
def reports():
    sol = netdyn.simulate(_circuit(), (0, 2e-3), t_eval=np.linspace(0, 2e-3, 801))
    assert sol.method == "circuit" and sol.element_work is not None
    return _numeric_and_symbolic(sol)


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


#: a diode behind a 0 V ammeter Vs, and each controlled source driving its own load: E and G from the diode's
#: voltage, F and H from the ammeter's current
CONTROLLED = """controlled sources and a diode
V1 in 0 SIN(0 2 1k)
R1 in m 1k
Vs m a 0
D1 a 0 DX
C1 a 0 1u
E1 e 0 a 0 3
R3 e 0 1k
G1 0 g a 0 1m
R4 g 0 1k
C3 g 0 1u
F1 0 f Vs 2
R5 f 0 500
H1 h 0 Vs 2k
R6 h x 1k
C4 x 0 1u
.model DX D(IS=1e-14 RS=2 CJO=1p)
"""


def test_controlled_sources_on_the_circuit_path_report_without_the_model():
    """E, G, F and H are sources in the report, each delivering what its load takes; a sensing 0 V source
    absorbs nothing; every row equals the symbolic report's (before: the symbolic model was built whenever a
    controlled source was in the circuit, and it called them transducers whose balance was their whole work;
    the sensed ammeter's work channel held F's output power and the totals counted H's internal 1/r load as
    dissipation)."""
    net = netdyn.read_netlist(CONTROLLED)
    sol = netdyn.simulate(net, (0, 2e-3), t_eval=np.linspace(0, 2e-3, 401))
    assert sol.method == "circuit" and sol.linear.R is not None and circuit_report.takes(sol)
    fast, slow = _numeric_and_symbolic(sol)
    assert fast.kinds == {n: k for n, k in slow.kinds.items() if n != "(rest)"}
    assert all(fast.kinds[n] == "source" for n in ("E1", "G1", "F1", "H1", "V1", "Vs"))
    scale = max(abs(w) for w in slow.absorbed.values())
    pscale = max(np.max(np.abs(p)) for p in slow.power.values())
    for n in fast.kinds:
        assert np.max(np.abs(fast.power[n] - slow.power[n])) < 1e-6 * pscale, n
        assert np.max(np.abs(fast.dissipated_power[n] - slow.dissipated_power[n])) < 1e-9 * pscale, n
        assert fast.dissipated[n] == pytest.approx(slow.dissipated[n], abs=1e-6 * scale), n
        assert fast.absorbed[n] == pytest.approx(slow.absorbed[n], abs=1e-6 * scale), n
    assert abs(fast.absorbed["Vs"]) < 1e-12 * scale
    # each controlled source delivers what its own load takes (R3; R4 and C3; R5; R6 and C4)
    loads = {"E1": ("R3",), "G1": ("R4", "C3"), "F1": ("R5",), "H1": ("R6", "C4")}
    for src, names in loads.items():
        taken = sum(fast.dissipated[n] + fast.stored[n][-1] - fast.stored[n][0] for n in names)
        assert fast.delivered[src] == pytest.approx(taken, rel=1e-6), src
    # the work integrated with the state, element by element: the same (1e-9 of it, not a quadrature's 1e-6)
    work = sol.element_work
    assert set(work["E1"]) == set(work["F1"]) == set(work["G1"]) == set(work["H1"]) == {"supplied"}
    assert abs(work["Vs"]["supplied"][-1]) < 1e-15 * scale
    assert work["E1"]["supplied"][-1] == pytest.approx(work["R3"]["dissipated"][-1], rel=1e-9)
    assert work["F1"]["supplied"][-1] == pytest.approx(work["R5"]["dissipated"][-1], rel=1e-9)
    assert sum(work[n]["supplied"][-1] for n in ("V1", "E1", "G1", "F1", "H1")) == \
        pytest.approx(fast.totals["supplied"][-1], rel=1e-12)
    # Tellegen over the elements: what the sources deliver is what the others dissipate and store
    sources = [n for n, k in fast.kinds.items() if k == "source"]
    passive = sum(fast.dissipated[n] + fast.stored[n][-1] - fast.stored[n][0] for n in fast.kinds if n not in sources)
    assert sum(fast.delivered[n] for n in sources) == pytest.approx(passive, rel=1e-6)
    assert fast.relative < 1e-6 and fast.tellegen < 1e-6 and slow.relative < 1e-6
