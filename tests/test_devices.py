"""Controlled sources (E, G, F, H) and the diode (D): closed forms, every formulation, ngspice."""
import shutil

import numpy as np
import pytest
import sympy as sp

import netdyn
from netdyn.components.base import ACROSS, THROUGH, PortVariables
from netdyn.components.controlled import CCCS, CCVS, VCCS, VCVS
from netdyn.components.diode import VT, XMAX, Diode, co_content, junction_current
from netdyn.components.electrical import Capacitor, Resistor, VoltageSource
from netdyn.errors import ElementError, ParseError
from netdyn.io.spice import run_ngspice, write_netlist

ngspice = pytest.mark.skipif(shutil.which("ngspice") is None, reason="ngspice is not installed")


def amplifier(kind):
    """A 1 V source into a controlled source; the output drives RL and an RC; the closed-form gain."""
    net = netdyn.Network(kind)
    net.add(VoltageSource("V1", "in", "0", 1.0))
    if kind == "E":
        net.add(Resistor("Rin", "in", "0", 1e3), VCVS("X", "out", "0", "in", "0", gain=10))
        gain = 10.0
    elif kind == "G":
        net.add(Resistor("Rin", "in", "0", 1e3), VCCS("X", "0", "out", "in", "0", gm=2e-3))
        gain = 2e-3 * 1e3   # 2 mA, through RL alone once the capacitor is charged
    elif kind == "F":
        net.add(Resistor("Rin", "in", "s", 1e3), VoltageSource("Vs", "s", "0", 0.0), CCCS("X", "0", "out", "Vs", gain=3))
        gain = 3.0
    else:
        net.add(Resistor("Rin", "in", "s", 1e3), VoltageSource("Vs", "s", "0", 0.0), CCVS("X", "out", "0", "Vs", r=500))
        gain = 0.5
    net.add(Resistor("RL", "out", "0", 1e3), Resistor("Rx", "out", "x", 1e3), Capacitor("C1", "x", "0", 1e-9))
    return net, gain


@pytest.mark.parametrize("kind", ["E", "G", "F", "H"])
def test_controlled_sources_closed_form_in_every_formulation(kind):
    net, gain = amplifier(kind)
    for form in ("loop", "branch", "node"):
        for method in ("auto", "ida"):
            sol = netdyn.simulate(net, (0, 2e-5), formulation=form, method=method, t_eval=np.linspace(0, 2e-5, 5))
            t = sol.t
            if kind in "EH":  # a voltage output: the capacitor charges through Rx (1 µs)
                out, x = gain * np.ones_like(t), gain * (1 - np.exp(-t / 1e-6))
            else:  # a current output into RL || (Rx + C): 2 µs, the output voltage rises from half
                out, x = gain * (1 - np.exp(-t / 2e-6) / 2), gain * (1 - np.exp(-t / 2e-6))
            assert np.max(np.abs(sol.voltage("out") - out)) < 1e-7 * gain, (form, method)
            assert np.max(np.abs(sol.voltage("x") - x)) < 1e-7 * gain, (form, method)


@pytest.mark.parametrize("kind", ["E", "G", "F", "H"])
def test_controlled_sources_linearize_in_every_formulation(kind):
    # the servo reactions act only where the source pushes: the projection of the linearization follows them
    net, gain = amplifier(kind)
    pole = -1e6 if kind in "EH" else -5e5   # Rx C1, or (RL + Rx) C1 behind a current output
    for form in ("loop", "branch", "node"):
        lin = netdyn.linearize(net, inputs=["V1"], outputs=["v(RL)", "v(C1)"], u={"V1": 0.0}, formulation=form)
        assert lin.n == 1 and lin.poles()[0].real == pytest.approx(pole, rel=1e-10), form
        assert lin.static_gain()[:, 0] == pytest.approx([gain, gain], rel=1e-10), form


def test_controlled_sources_keep_the_energy_balance():
    net, _ = amplifier("E")
    sol = netdyn.simulate(net, (0, 5e-6), method="ida")
    assert sol.power_balance()["relative"] < 1e-6   # the servo constraint's work is the supplied power
    # SPICE sign (plus to minus inside): the source delivers RL's 10 mA and the charging current of C1
    assert sol.current("X")[-1] == pytest.approx(-(10 / 1e3 + 10 / 1e3 * np.exp(-5)), rel=1e-6)


def test_zero_transconductance_is_refused():
    with pytest.raises(ElementError, match="gm = 0"):
        VCCS("G1", "a", "0", "b", "0", gm=0)


@ngspice
def test_controlled_sources_transient_equals_ngspice():
    deck = ("ctl\nV1 in 0 SIN(0 1 2k)\nR1 in s 1k\nVs s 0 0\nF1 0 a Vs 3\nRa a 0 1k\nCa a 0 100n\n"
            "H1 b 0 Vs 200\nRb b c 100\nCb c 0 1u\nE1 e 0 a c 2\nRe e f 1k\nCf f 0 220n\nG1 0 g f 0 1m\n"
            "Rg g 0 2k\nCg g 0 47n\n.tran 5u 2m uic\n")
    net = netdyn.read_netlist(deck)
    times = np.linspace(0, 2e-3, 101)
    sol = netdyn.simulate(net, None, t_eval=times)
    ng = run_ngspice(write_netlist(net), ["v(a)", "v(c)", "v(f)", "v(g)"], tstop=2e-3, tstep=2e-5, tmax=1e-7)
    for node in "acfg":
        ref = np.interp(times[1:], ng["time"], ng[f"v({node})"])
        assert np.max(np.abs(sol.voltage(node)[1:] - ref)) < 1e-4 * np.max(np.abs(ref)), node


def test_netlist_cards_for_controlled_sources_and_diodes():
    net = netdyn.read_netlist("c\nV1 1 0 1\nvsense 1 2 0\nR1 2 0 1k\nE1 3 0 1 0 2\nG1 3 0 1 0 1m\n"
                              "F1 4 0 VSENSE 2\nH1 5 0 Vsense 1k\nD1 5 6 dm 2\nR2 6 0 1k\n"
                              ".model DM D(is=1e-15 n=1.2 rs=4)\n")
    assert isinstance(net.elements["E1"], VCVS) and float(net.elements["G1"].values["gm"]) == 1e-3
    assert net.elements["F1"].couples == ("vsense",) and net.elements["H1"].couples == ("vsense",)
    d = net.elements["D1"].numeric_values()
    assert (d["IS"], d["N"], d["RS"]) == (2e-15, 1.2, 2.0)   # area 2: IS doubled, RS halved
    deck = write_netlist(net)
    assert "E1 3 0 1 0 2" in deck and "F1 4 0 vsense 2" in deck and ".model dmod1 D(IS=2e-15 N=1.2 RS=2)" in deck
    for card, message in (("Q1 1 2 0 npn", "bipolar transistor elements are not supported"),
                          ("M1 1 2 0 0 nmos", "MOSFET"), (".include models.lib", "file inclusion"),
                          ("D2 1 0 nomodel", "no .model named 'nomodel'"),
                          (".model qq NPN(BF=50)", "type NPN are not supported"),
                          (".model d2 D(IS=1e-14 BVV=50)", "BVV is not a diode parameter"),
                          ("F2 1 0 R1 2", "'R1' is not a voltage source")):
        with pytest.raises(ParseError, match=message) as err:
            netdyn.read_netlist(f"t\nV1 1 0 1\nR1 1 0 1k\n{card}\n")
        assert err.value.line == 4


def test_diode_law_is_its_co_content():
    v = sp.Symbol("v")
    J = co_content(v, 1e-14, 1.3, 1e-12, VT)
    i = sp.lambdify(v, sp.diff(J, v))
    for x in (-5.0, -0.1, 0.0, 0.3, 0.7, 0.9):
        assert i(x) == pytest.approx(1e-14 * (np.exp(x / (1.3 * VT)) - 1) + 1e-12 * x, rel=1e-12, abs=1e-25)
        assert float(junction_current(x, 1e-14, 1.3)) == pytest.approx(i(x), rel=1e-12, abs=1e-25)
    vmax = XMAX * 1.3 * VT
    g = sp.lambdify(v, sp.diff(J, v, 2))
    assert g(vmax * (1 - 1e-12)) == pytest.approx(g(vmax * (1 + 1e-12)), rel=1e-9)   # C1 at the continuation
    assert np.isfinite(i(100.0)) and np.isfinite(float(junction_current(1e3)))       # no overflow
    with pytest.raises(ElementError, match="voltage-controlled"):
        Diode("D1", "a", "0").contribute([PortVariables(THROUGH, sp.Symbol("q"), sp.Symbol("f"))],
                                         Diode("D1", "a", "0").numeric_values())
    d = Diode("D1", "a", "k", RS=5)
    assert d.internal_node == "D1#a" and [p.b for p in d.ports] == ["D1#a", "k"]
    assert Diode("D2", "a", "k").contribute([PortVariables(ACROSS, 0, v)], Diode("D2", "a", "k").numeric_values()).D != 0


RECTIFIERS = {
    "half-wave rectifier": ("hw\nV1 in 0 SIN(0 5 1k)\nD1 in out dm\nRL out 0 1k\nC1 out 0 2u\n"
                            ".model dm D(IS=1e-14 N=1 RS=1)\n.tran 10u 3m\n", ["v(out)"]),
    "diode clamp": ("clamp\nV1 in 0 SIN(0 3 1k)\nC1 in out 1u\nD1 0 out dm\nRL out 0 10k\n"
                    ".model dm D(IS=2n N=1.8 RS=0.5)\n.tran 10u 3m\n", ["v(out)"]),
    "bridge rectifier with smoothing capacitor": (
        "bridge\nV1 a b SIN(0 10 50)\nRg b 0 1meg\nD1 a p dm\nD2 b p dm\nD3 n a dm\nD4 n b dm\nC1 p n 100u\n"
        "RL p n 1k\nRn n 0 1meg\n.model dm D(IS=1e-12 N=1.5 RS=0.1)\n.tran 100u 40m\n", ["v(p,n)", "v(a)"]),
}


@ngspice
@pytest.mark.parametrize("name", list(RECTIFIERS))
def test_rectifiers_equal_ngspice(name):
    deck, probes = RECTIFIERS[name]
    net = netdyn.read_netlist(deck)
    tstop = net.tran.tstop
    times = np.linspace(0, tstop, 201)
    sol = netdyn.simulate(net, None, t_eval=times)
    assert sol.method == "circuit"
    ng = run_ngspice(write_netlist(net), probes, tstop=tstop, tstep=tstop / 1000, tmax=tstop / 20000, uic=False)
    for p in probes:
        nodes = p[2:-1].split(",")
        ours = sol.voltage(nodes[0]) - (sol.voltage(nodes[1]) if len(nodes) > 1 else 0.0)
        ref = np.interp(times, ng["time"], ng[p])
        assert np.max(np.abs(ours - ref)) < 1e-3 * np.max(np.abs(ref)), p


def test_circuit_path_equals_the_symbolic_path():
    """The stamp + Newton + BDF path and IDA on the derived DAE (the diode's co-content differentiated)."""
    net = netdyn.read_netlist(RECTIFIERS["half-wave rectifier"][0].replace(".tran 10u 3m", ".tran 10u 2m"))
    times = np.linspace(0, 2e-3, 41)
    fast = netdyn.simulate(net, None, t_eval=times)
    slow = netdyn.simulate(net, None, t_eval=times, method="ida")
    assert fast.method == "circuit" and slow.method == "ida"
    assert np.max(np.abs(fast.voltage("out") - slow.voltage("out"))) < 1e-4 * np.max(np.abs(slow.voltage("out")))


def diode_ladder(N):
    """The benchmark's diode ladder (benchmarks/diode_ladder.py): R, then a diode and a C to ground, N times."""
    lines = [f"ladder {N}", "V1 n0 0 SIN(0 5 100k)"]
    for k in range(1, N + 1):
        lines += [f"R{k} n{k - 1} n{k} 1k", f"D{k} n{k} 0 dm", f"C{k} n{k} 0 1n"]
    return "\n".join(lines + [".model dm D(IS=1e-14 N=1.5 RS=1)", ".tran 20n 4u", ""])


def test_newton_matrix_equals_the_reference_assembly():
    """The scattered Newton matrix and the devices' closed form against the lambdified laws and sparse
    products of the reference path, at random states on both sides of the exponential's continuation."""
    from netdyn.numerics.circuit.kernels.newton_matrix import NewtonMatrix
    from netdyn.numerics.circuit.nonlinearsim import try_circuit
    c = try_circuit(netdyn.read_netlist(diode_ladder(7)))
    nm = NewtonMatrix(c)
    rng = np.random.default_rng(1)
    colmap, factor = np.arange(c.n), np.ones(c.n)
    colmap[c.I] = c.n + np.arange(c.nI)
    for scale, alpha in ((0.3, 1e6), (1.0, 5e7), (8.0, 3e9)):   # 8 V: beyond XMAX N Vt = 1.94 V
        f = rng.normal(size=c.n) * scale
        g, h = nm.devices(f, 0.0)
        g_ref, Jn = c.nonlinear(f, 0.0)
        assert np.max(np.abs(g - g_ref)) <= 1e-12 * np.max(np.abs(g_ref))
        ref = alpha * c.dae.E.toarray() - c.dae.J.toarray()
        factor[:] = alpha
        factor[c.I] = 1.0
        ref[c.nI:c.nI + c.n][:, colmap] += np.asarray(Jn.toarray() if hasattr(Jn, "toarray") else Jn) * factor
        assert np.max(np.abs(nm.matrix(alpha, h).toarray() - ref)) <= 1e-12 * np.max(np.abs(ref))


@pytest.mark.parametrize("deck", [diode_ladder(12), RECTIFIERS["bridge rectifier with smoothing capacitor"][0]],
                         ids=["ladder", "bridge"])
def test_fast_circuit_path_equals_the_reference_path(deck):
    """Kept factorisations and scattered devices (default) against fresh factorisations and the lambdified
    laws every iteration (``reference=True``): the same trajectory to 1e-9 of the peak."""
    from netdyn.numerics.circuit.nonlinearsim import simulate_circuit
    from netdyn.numerics.circuit.operating_point import spice_initial_state
    net = netdyn.read_netlist(deck)
    t1 = net.tran.tstop / (2 if "ladder" in deck else 20)
    q0, f0 = spice_initial_state(net, None)
    times = np.linspace(0, t1, 51)
    fast = simulate_circuit(net, (0, t1), q0, f0, times)
    slow = simulate_circuit(net, (0, t1), q0, f0, times, reference=True)
    V = lambda sol: np.array([sol.voltage(n) for n in net.graph.nodes if n != "0" and "#" not in str(n)])
    a, b = V(fast), V(slow)
    assert np.max(np.abs(a - b)) <= 1e-9 * np.max(np.abs(b))


ZENER = ("zener clamp\nV1 in 0 SIN(0 10 1k)\nR1 in out 1k\nD1 0 out dz\nRL out 0 10k\nC1 out 0 10n\n"
         ".model dz D(IS=1e-14 N=1.2 RS=2 BV=5.1 IBV=1m NBV=1.5)\n.tran 10u 2m\n")


def test_breakdown_law():
    """The breakdown term: its co-content's derivative is the law, the closed form agrees, the law passes
    −IBV at −BV (ngspice's knee iteration), and the netlist round-trips the card."""
    from netdyn.components.diode import breakdown_voltage
    d = netdyn.read_netlist(ZENER).elements["D1"]
    vals = d.numeric_values()
    xbv = breakdown_voltage(5.1, 1e-3, 1e-14, 1.5)
    assert vals["BV"] == xbv and 4 < xbv < 5.1
    v = sp.Symbol("v")
    i = sp.lambdify(v, sp.diff(co_content(v, 1e-14, 1.2, 1e-12, VT, xbv, 1.5), v))
    for x in (-12.0, -5.3, -5.1, -4.0, -1.0, 0.0, 0.6, 3.0):
        ref = float(junction_current(x, 1e-14, 1.2, 1e-12, VT, xbv, 1.5))
        assert i(x) == pytest.approx(ref, rel=1e-12, abs=1e-25)
        g, _ = Diode.dissipation_batch({k: np.array([w]) for k, w in vals.items()}, np.array([[0.0, x]]))
        assert g[0, 1] == pytest.approx(ref, rel=1e-12, abs=1e-25)
    assert float(junction_current(-5.1, 1e-14, 1.2, 1e-12, VT, xbv, 1.5)) == pytest.approx(-1e-3, rel=2e-3)
    assert ".model dmod1 D(IS=1e-14 N=1.2 RS=2 BV=5.1 IBV=0.001 NBV=1.5)" in write_netlist(netdyn.read_netlist(ZENER))


@ngspice
def test_zener_clamp_equals_ngspice():
    net = netdyn.read_netlist(ZENER)
    times = np.linspace(0, 2e-3, 201)
    sol = netdyn.simulate(net, None, t_eval=times)
    ng = run_ngspice(write_netlist(net), ["v(out)"], tstop=2e-3, tstep=2e-6, tmax=1e-7, uic=False)
    ref = np.interp(times, ng["time"], ng["v(out)"])
    assert sol.method == "circuit" and ref.max() == pytest.approx(5.17, abs=0.05)   # clamped near BV
    assert np.max(np.abs(sol.voltage("out") - ref)) < 1e-3 * np.max(np.abs(ref))


def test_parameters_not_modelled_warn_once():
    deck = ("w\nV1 1 0 1\nR1 1 2 1k\nD1 2 0 da\nD2 2 0 db\n.model da D(IS=1e-14 KF=1e-16 ISR=3e-9)\n"
            ".model db D(IS=2e-14 KF=1e-15 AF=1.1)\n")
    with pytest.warns(UserWarning) as record:
        net = netdyn.read_netlist(deck)
    texts = [str(w.message) for w in record if "not modelled" in str(w.message)]
    assert len(texts) == 3 and sum("KF" in t for t in texts) == 1      # once per parameter name
    assert len([n for n in net.netlist_notes if "not modelled" in n]) == 3
    assert net.elements["D2"].numeric_values()["IS"] == 2e-14


HF_RECTIFIER = ("hf rectifier\nV1 in 0 SIN(0 5 10Meg)\nD1 in out dm\nRL out 0 1k\nC1 out 0 20p\n"
                ".model dm D(IS=1e-14 N=1 RS=5 CJO=5p VJ=0.7 M=0.4 FC=0.5 TT=10n)\n.tran 1n 300n\n")


def test_junction_charge_is_the_derivative_of_its_coenergy():
    from netdyn.components.diode import junction_charge, junction_coenergy
    vals = dict(IS=1e-14, N=1.3, vt=VT, CJO=2e-12, VJ=0.7, M=0.4, FC=0.5, TT=5e-9, BV=4.4, NBV=1.2)
    v = sp.Symbol("v")
    W = junction_coenergy(v, vals)
    q, c = sp.lambdify(v, sp.diff(W, v)), sp.lambdify(v, sp.diff(W, v, 2))
    for x in (-6.0, -1.0, 0.2, 0.349, 0.351, 0.8):      # FC VJ = 0.35: both sides of the linear continuation
        Q, C = junction_charge(x, vals)
        assert q(x) == pytest.approx(float(Q), rel=1e-11) and c(x) == pytest.approx(float(C), rel=1e-11)
    Q0, C0 = junction_charge(0.0, {**vals, "TT": 0.0})
    assert float(Q0) == 0 and float(C0) == pytest.approx(2e-12)       # CJO is the zero-bias capacitance


@ngspice
def test_rectifier_with_junction_charge_equals_ngspice_and_the_symbolic_path():
    """10 MHz: CJO and TT move v(out) by 21 % of its peak; the circuit path's BDF on the junction charge, ngspice
    and IDA on the DAE derived from the junction's co-energy T*(v) agree."""
    net = netdyn.read_netlist(HF_RECTIFIER)
    times = np.linspace(0, 150e-9, 151)
    sol = netdyn.simulate(net, (0, 150e-9), t_eval=times)
    ng = run_ngspice(write_netlist(net), ["v(out)"], tstop=150e-9, tstep=0.15e-9, tmax=0.01e-9, uic=False)
    ref = np.interp(times, ng["time"], ng["v(out)"])
    assert sol.method == "circuit"
    assert np.max(np.abs(sol.voltage("out") - ref)) < 1e-4 * np.max(np.abs(ref))   # 2.0e-5 measured
    from netdyn.numerics.circuit.nonlinearsim import simulate_circuit
    from netdyn.numerics.circuit.operating_point import spice_initial_state
    q0, f0 = spice_initial_state(net, None)
    te = np.linspace(0, 60e-9, 31)
    runs = {(ce, path): simulate_circuit(net, (0, 60e-9), q0, f0, te, charge_error=ce, **kw)
            for ce in (False, True) for path, kw in (("compiled", {}), ("reference", dict(reference=True)))}
    assert {s.circuit_stepper for (ce, path), s in runs.items()} == {"compiled loop", "reference"}
    for ce, tol in ((False, 1e-9), (True, 1e-6)):
        # the voltages' error test: both paths take the same steps, the trajectories agree to Newton's
        # tolerance; with the junction charges in it (exponential in the voltage) the error estimate, and so
        # the step sizes, move with the last digits of Newton's solution: the paths agree to the local error
        b = runs[ce, "reference"].voltage("out")
        assert np.max(np.abs(runs[ce, "compiled"].voltage("out") - b)) <= tol * np.max(np.abs(b))
    # the charges in the error test take steps of their own where the junction's charge moves
    assert runs[True, "compiled"].trajectory.nsteps > runs[False, "compiled"].trajectory.nsteps
    slow = netdyn.simulate(net, (0, 30e-9), t_eval=te[:16], method="ida", rtol=1e-6)   # the derived DAE
    a = runs[True, "compiled"].voltage("out")
    assert np.max(np.abs(slow.voltage("out") - a[:16])) < 1e-3 * np.max(np.abs(ref))
