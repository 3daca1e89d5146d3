"""The circuit is stamped once: the DC operating point and the transient share it (operating_point._stamped)."""
import numpy as np

import netdyn
from netdyn.components.diode import Diode
from netdyn.components.electrical import Capacitor, Resistor, VoltageSource
from netdyn.numerics.circuit import operating_point as opm
from netdyn.numerics.circuit.nonlinearsim import try_circuit


def _net():
    net = netdyn.Network()
    net.add(VoltageSource("V1", "a", "0", 5.0), Resistor("R1", "a", "d", 1e3), Diode("D1", "d", "0"),
            Capacitor("C1", "d", "0", 1e-6))
    return net


def test_operating_point_then_transient_stamp_once(monkeypatch):
    calls = []
    real = opm._stamp
    monkeypatch.setattr(opm, "_stamp", lambda *a: calls.append(a) or real(*a))
    net = _net()
    op = netdyn.operating_point(net)
    c = try_circuit(net)
    assert len(calls) == 1 and c is not None
    sol = netdyn.simulate(net, (0, 1e-3), q0=op.initial_conditions()[0], f0=op.initial_conditions()[1])
    assert len(calls) == 1 and sol.method == "circuit"
    assert abs(sol.voltage("d")[-1] - op.voltages["d"]) < 1e-6  # it starts, and stays, at its operating point


def test_a_changed_network_is_stamped_again(monkeypatch):
    calls = []
    real = opm._stamp
    monkeypatch.setattr(opm, "_stamp", lambda *a: calls.append(a) or real(*a))
    net = _net()
    v1 = netdyn.operating_point(net).voltages["d"]
    net.elements["R1"].values["R"] = net.elements["R1"].values["R"] * 10  # a value changed in place
    v2 = netdyn.operating_point(net).voltages["d"]
    net.add(Resistor("R2", "d", "0", 10.0))  # an element added
    v3 = netdyn.operating_point(net).voltages["d"]
    assert len(calls) == 3 and v1 > v2 > v3
    netdyn.operating_point(net, t0=1.0)  # another time: the sources' values differ
    assert len(calls) == 4
    assert np.isfinite(v3)
