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


def test_ccvs_in_node_formulation_equals_its_rewrite_as_cccs_into_a_resistor():
    # H in node coordinates (its internal node) against the same law built from F (gain 1) into r to ground,
    # read by E (gain 1), and against H in branch charges, where its output voltage is an effort
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
    for sol in (run(amplifier(False), "node", times), run(amplifier(True), "node", times)):
        for probe in ("out", "x"):
            assert rel_err(sol.voltage(probe), ref.voltage(probe)) < 1e-8, probe
        assert rel_err(sol.voltage("out"), 2e3 * ref.current("Vs")) < 1e-8  # v_out = r i(Vs)


# a current-feedback (transresistance) op-amp macro-model in a non-inverting stage of gain 1 + Rf/Rg: a unity
# buffer E1 drives the inverting input through its output resistance Ri; the error current out of the buffer
# (through the 0 V ammeter Vs) is turned into a voltage by the transresistance H1, filtered by Rz-Cz (the
# dominant pole) and buffered by E2 onto a capacitive load
CFA = """current-feedback amplifier
V1 in 0 SIN(0 0.1 20k) AC 1
E1 buf 0 in 0 1
Ri buf nb 50
Vs nb inv 0
Rf out inv 1k
Rg inv 0 500
H1 z 0 Vs 10k
Rz z zc 1k
Cz zc 0 1n
E2 out 0 zc 0 1
RL out 0 1k
CL out 0 10n
"""
CFA_T = 2e-4


def cfa(form, times, method="auto", atol=1e-12):
    # atol: the sensed current is ~30 µA, its charge ~1e-10 C and r = 10 kΩ multiplies its error; in charge
    # coordinates the charges' atol is taken in amperes (netdyn.numerics.integrators.sensed; it was atol=1e-20 here before)
    return netdyn.simulate(netdyn.io.read_netlist(CFA), (0.0, float(times[-1])), t_eval=times, formulation=form,
                           method=method, rtol=1e-10, atol=atol)


def test_transresistance_amplifier_in_node_equals_branch_and_loop():
    times = np.linspace(0, CFA_T, 201)
    sols = {form: cfa(form, times) for form in ("branch", "loop", "node")}
    ref = sols["branch"]
    for form in ("loop", "node"):
        assert sols[form].method == "linear"
        for probe in ("out", "z", "zc", "inv", "H1#r"):
            assert rel_err(sols[form].voltage(probe), ref.voltage(probe)) < 1e-8, (form, probe)
        for name in ("H1", "Vs", "E2"):
            assert rel_err(sols[form].current(name), ref.current(name)) < 1e-8, (form, name)
    for form, sol in sols.items():
        assert rel_err(sol.voltage("z"), 1e4 * sol.current("Vs")) < 1e-10, form  # v(z) = r i(Vs)
        assert rel_err(sol.voltage("H1#r"), sol.voltage("z")) < 1e-10, form  # the internal node reads r i(Vs)
        # H1's own current (SPICE sign, plus -> minus inside it) is minus what it drives into Rz
        assert rel_err(sol.current("H1"), -sol.current("Rz")) < 1e-10, form
        assert sol.power_balance()["relative"] < 1e-6, form
    # the symbolic path (assembled DAE, IDA) in node coordinates, to IDA's own accuracy
    ida = cfa("node", times, method="ida", atol=1e-14)
    for probe in ("out", "z"):
        assert rel_err(ida.voltage(probe), ref.voltage(probe)) < 1e-6, probe
    assert ida.power_balance()["relative"] < 1e-6


@pytest.mark.skipif(NGSPICE is None, reason="ngspice is not installed")
def test_transresistance_amplifier_in_node_agrees_with_ngspice():
    ng = run_ngspice(CFA, ["v(out)", "v(z)", "i(Vs)"], tstop=CFA_T, tstep=CFA_T / 1000, tmax=CFA_T / 20000)
    times = np.linspace(0, CFA_T, 401)[1:]  # ngspice's 10 ns steps, interpolated onto our samples
    sol = cfa("node", np.concatenate([[0.0], times]), atol=1e-12)
    for probe, ours in (("v(out)", sol.voltage("out")), ("v(z)", sol.voltage("z")), ("i(Vs)", sol.current("Vs"))):
        assert rel_err(ours[1:], np.interp(times, ng["time"], ng[probe])) < 1e-4, probe


@pytest.mark.skipif(NGSPICE is None, reason="ngspice is not installed")
def test_transresistance_amplifier_ac_and_linearization():
    ng = run_ngspice_ac(CFA, ["v(out)", "v(z)"], "dec", 10, 1e3, 1e8)
    f = ng["frequency"]
    for form in ("node", "branch", "loop"):
        ours = netdyn.ac(netdyn.io.read_netlist(CFA), f, input="V1", outputs=["v(out)", "v(z)"], formulation=form)
        for probe in ("v(out)", "v(z)"):
            assert np.max(np.abs(ours[probe] - ng[probe]) / np.abs(ng[probe])) < 1e-4, (form, probe)
        # the linearization (the controlled sources' reactions act where they push) gives the same response
        lin = netdyn.linearize(netdyn.io.read_netlist(CFA), inputs=["V1"], outputs=["v(CL)", "i(H1)"],
                               formulation=form)
        gi = netdyn.ac(netdyn.io.read_netlist(CFA), f, input="V1", outputs=["i(H1)"], formulation=form)["i(H1)"]
        assert rel_err(lin.frequency_response(2 * np.pi * f, "v(CL)", "V1"), ours["v(out)"]) < 1e-8, form
        assert rel_err(lin.frequency_response(2 * np.pi * f, "i(H1)", "V1"), gi) < 1e-8, form


@pytest.mark.skipif(NGSPICE is None, reason="ngspice is not installed")
def test_ccvs_into_a_diode_rectifier_agrees_with_ngspice():
    # a diode takes the node formulation; before H worked there, this circuit had no formulation at all
    deck = MIRROR.replace("F1 0 out Vs 2\nR2 out 0 500\nC1 out 0 1u\n",
                          "H1 h 0 Vs 3k\nD1 h k DX\nR2 k 0 500\nC1 k 0 1u\n.model DX D(IS=1e-14 N=1 RS=2)\n")
    ng = run_ngspice(deck, ["v(k)", "v(h)", "i(H1)"], tstop=TSTOP, tstep=TSTOP / 1000, tmax=TSTOP / 20000)
    times = np.concatenate([[0.0], ng["time"]])
    sol = netdyn.simulate(netdyn.io.read_netlist(deck), (0.0, float(times[-1])), t_eval=times, rtol=1e-9, atol=1e-12)
    assert sol.method == "circuit"
    for probe in ("v(k)", "v(h)"):
        assert rel_err(sol.voltage(probe[2:-1])[1:], ng[probe]) < 1e-4, probe
    assert rel_err(sol.current("H1")[1:], ng["i(H1)"]) < 1e-4
    # (node voltages are BDF differences of node fluxes: at rtol 1e-9 the steps are short enough that they keep
    # ~8 digits; 5e-11 at rtol 1e-6)
    assert rel_err(sol.voltage("h"), 3e3 * sol.current("Vs")) < 3e-7
    # the symbolic path (assembled DAE with the diode's co-content, IDA): the same waveform, and the energy
    times = np.linspace(0, TSTOP / 2, 101)
    ida = netdyn.simulate(netdyn.io.read_netlist(deck), (0.0, TSTOP / 2), t_eval=times, method="ida", rtol=1e-9,
                          atol=1e-12)
    assert rel_err(ida.voltage("k"), np.interp(times, sol.t, sol.voltage("k"))) < 1e-4
    assert ida.power_balance()["relative"] < 1e-6


def test_ccvs_biasing_a_diode_operating_point_and_ac_equal_the_equivalent_source():
    # H1 = 2 kΩ × i(Vs), i(Vs) = V1 / 1 kΩ: the diode sees the source 2 V1 (DC and small signal alike); the
    # operating point (Newton on the diode, node coordinates) and the small-signal response (the diode's
    # conductance and junction capacitance there) must equal those of that plain source
    load = "D1 h k DX\nR2 k 0 1k\nC2 k 0 1u\n.model DX D(IS=1e-14 N=1 RS=2 CJO=10p TT=5n)\n"
    with_h = netdyn.io.read_netlist("h\nV1 in 0 1 AC 1\nR1 in s 1k\nVs s 0 0\nH1 h 0 Vs 2k\n" + load)
    plain = netdyn.io.read_netlist("plain\nV1 h 0 2 AC 2\n" + load)
    op_h, op_p = netdyn.operating_point(with_h), netdyn.operating_point(plain)
    for node in ("h", "k", "D1#a"):
        assert op_h.voltages[node] == pytest.approx(op_p.voltages[node], rel=1e-10), node
    assert op_h.voltages["H1#r"] == pytest.approx(2.0, rel=1e-12)
    assert op_h.currents["H1"] == pytest.approx(-op_p.currents["D1"], rel=1e-10)   # H1 delivers the diode current
    f = np.logspace(1, 8, 29)
    a = netdyn.ac(with_h, f, input="V1", outputs=["v(k)", "i(D1)"])
    b = netdyn.ac(plain, f, input="V1", outputs=["v(k)", "i(D1)"])
    for probe in ("v(k)", "i(D1)"):
        assert np.max(np.abs(a[probe] - b[probe]) / np.abs(b[probe])) < 1e-9, probe
