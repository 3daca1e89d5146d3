"""Current-controlled sources in the node (flux) formulation.

There the sensed voltage source's current is its flow constraint's multiplier; a ``F`` source makes that
multiplier act on its output port as well (``Contribution.sensed_reactions``). Checked against the branch and
loop formulations (1e-8), ngspice (1e-4 of peak), the energy balance, and ``netdyn.ac``.
"""
import shutil

import numpy as np
import pytest

import netdyn
import netdyn.io
from netdyn.components.controlled import CCCS, CCVS
from netdyn.components.electrical import Capacitor, Inductor, Resistor, VoltageSource
from netdyn.io.spice import run_ngspice, run_ngspice_ac
from netdyn.lagrange.sources import sine

NGSPICE = shutil.which("ngspice")
TSTOP = 2e-3

# a current mirror: the input current (through the 0 V ammeter Vs) is mirrored, times 2, into an RC load,
# with an inductor on the input side so that the sensed current is itself dynamic
MIRROR = """mirror
V1 in 0 SIN(0 1 1k) AC 1
R1 in m 1k
L1 m a 10m
Vs a 0 0
F1 0 out Vs 2
R2 out 0 500
C1 out 0 1u
"""


def mirror(v1=None):
    net = netdyn.Network("mirror")
    net.add(VoltageSource("V1", "in", "0", sine(0, 1.0, 1e3) if v1 is None else v1), Resistor("R1", "in", "m", 1e3),
            Inductor("L1", "m", "a", 10e-3), VoltageSource("Vs", "a", "0", 0.0),
            CCCS("F1", "0", "out", "Vs", gain=2), Resistor("R2", "out", "0", 500), Capacitor("C1", "out", "0", 1e-6))
    return net


def rel_err(a, b):
    return float(np.max(np.abs(np.asarray(a) - np.asarray(b))) / np.max(np.abs(b)))


def run(net, form, times, method="auto"):
    return netdyn.simulate(net, (0.0, float(times[-1])), t_eval=times, formulation=form, method=method,
                           rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("method", ["auto", "ida"])
def test_current_mirror_node_agrees_with_branch_and_loop(method):
    times = np.linspace(0, TSTOP, 201)
    sols = {form: run(mirror(), form, times, method) for form in ("branch", "loop", "node")}
    ref = sols["branch"]
    tol = 1e-8 if method == "auto" else 1e-6  # IDA's own error at rtol 1e-10: 1.5e-8 (loop), 1e-7 (node)
    for form in ("loop", "node"):
        for probe in ("out", "m"):
            assert rel_err(sols[form].voltage(probe), ref.voltage(probe)) < tol, (form, probe)
        assert rel_err(sols[form].current("Vs"), ref.current("Vs")) < tol, form
    for form, sol in sols.items():  # F1's own current (SPICE sign, plus -> minus inside) is 2 i(Vs)
        assert rel_err(sol.current("F1"), 2 * sol.current("Vs")) < 1e-9, form
    # the mirror: the load takes twice the sensed current (R2 and C1 in parallel)
    node = sols["node"]
    load = node.voltage("out") / 500 + node.current("C1")
    assert rel_err(load, 2 * node.current("Vs")) < 1e-6  # 2 i(Vs) flows 0 -> out through F1, into "out"
    assert node.power_balance()["relative"] < 1e-6  # F1's supplied power is its reaction's work


def test_current_mirror_operating_point_in_every_formulation():
    net = mirror(1.0)  # a DC input: 1 mA through R1, L1 and Vs; 2 mA into R2
    for form in ("branch", "loop", "node"):
        op = netdyn.operating_point(net, formulation=form)
        assert op.currents["Vs"] == pytest.approx(1e-3, rel=1e-12), form
        assert op.currents["F1"] == pytest.approx(2e-3, rel=1e-12), form
        assert op.voltages["out"] == pytest.approx(1.0, rel=1e-12), form


@pytest.mark.skipif(NGSPICE is None, reason="ngspice is not installed")
def test_current_mirror_node_agrees_with_ngspice():
    ng = run_ngspice(MIRROR, ["v(out)", "i(Vs)"], tstop=TSTOP, tstep=TSTOP / 1000, tmax=TSTOP / 20000)
    times = np.concatenate([[0.0], ng["time"]])
    sol = run(mirror(), "node", times)
    assert rel_err(sol.voltage("out")[1:], ng["v(out)"]) < 1e-4
    assert rel_err(sol.current("Vs")[1:], ng["i(Vs)"]) < 1e-4


@pytest.mark.skipif(NGSPICE is None, reason="ngspice is not installed")
def test_current_mirror_ac_in_node_formulation():
    ng = run_ngspice_ac(MIRROR, ["v(out)"], "dec", 10, 10.0, 1e5)
    f = ng["frequency"]
    ours = {form: netdyn.ac(mirror(), f, input="V1", outputs=["v(out)"], formulation=form)["v(out)"]
            for form in ("node", "branch")}
    assert np.max(np.abs(ours["node"] - ours["branch"]) / np.abs(ours["branch"])) < 1e-8
    assert np.max(np.abs(ours["node"] - ng["v(out)"]) / np.abs(ng["v(out)"])) < 1e-4


@pytest.mark.skipif(NGSPICE is None, reason="ngspice is not installed")
def test_current_mirror_into_a_diode_rectifier_agrees_with_ngspice():
    # diodes take the node formulation; before F worked there, this circuit had no formulation at all
    deck = MIRROR.replace("R2 out 0 500\nC1 out 0 1u\n", "D1 out k DX\nR2 k 0 500\nC1 k 0 1u\n.model DX D(IS=1e-14 N=1)\n")
    ng = run_ngspice(deck, ["v(k)"], tstop=TSTOP, tstep=TSTOP / 1000, tmax=TSTOP / 20000)
    times = np.concatenate([[0.0], ng["time"]])
    sol = netdyn.simulate(netdyn.io.read_netlist(deck), (0.0, float(times[-1])), t_eval=times, rtol=1e-9, atol=1e-12)
    assert rel_err(sol.voltage("k")[1:], ng["v(k)"]) < 1e-4


def test_ccvs_written_as_cccs_into_a_resistor_works_in_node_formulation():
    # the workaround docs/spice.md gives for H in node coordinates: F (gain 1) into r to ground, read by E
    from netdyn.components.controlled import VCVS

    def amplifier(h):
        net = netdyn.Network()
        net.add(VoltageSource("V1", "in", "0", sine(0, 1.0, 1e3)), Resistor("R1", "in", "m", 1e3),
                Inductor("L1", "m", "a", 10e-3), VoltageSource("Vs", "a", "0", 0.0),
                Resistor("R2", "out", "x", 1e3), Capacitor("C1", "x", "0", 1e-7))
        if h:
            net.add(CCVS("H1", "out", "0", "Vs", r=2e3))
        else:
            net.add(CCCS("Fh", "0", "h", "Vs", gain=1), Resistor("Rh", "h", "0", 2e3), VCVS("Eh", "out", "0", "h", "0", 1))
        return net

    times = np.linspace(0, TSTOP, 101)
    ref = run(amplifier(True), "branch", times)
    sol = run(amplifier(False), "node", times)
    for probe in ("out", "x"):
        assert rel_err(sol.voltage(probe), ref.voltage(probe)) < 1e-8, probe
    assert rel_err(sol.voltage("out"), 2e3 * ref.current("Vs")) < 1e-8  # v_out = r i(Vs)
