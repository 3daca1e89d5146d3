"""SPICE start-up semantics: ``.tran`` from the DC operating point, ``uic`` with ``ic=`` and ``.ic``, ``.op``.

Every case is checked against ngspice running the same deck: node voltages at 100 times to 1e-4 of
their peak (ngspice with a step 1/20000 of the span; its own error there is ~1e-8 of the peak).
"""
import shutil

import numpy as np
import pytest

import netdyn
from netdyn.cli import main
from netdyn.errors import ModelError, SingularSystemError
from netdyn.io.spice import run_ngspice, write_netlist
from netdyn.numerics.circuit.operating_point import operating_point, spice_initial_state

pytestmark = pytest.mark.skipif(shutil.which("ngspice") is None, reason="ngspice is not installed")

DECK = """start-up semantics
V1 in 0 PULSE(2 5 1m 10u 10u 2m 5m)
R1 in a 100
L1 a b 10m {lic}
C1 b 0 10u {cic}
R2 b c 1k
C2 c 0 1u
R3 c 0 2k
{ic}
.tran 10u 5m {uic}
"""
CASES = {
    "dc operating point": dict(lic="", cic="", ic="", uic=""),
    "uic from zero": dict(lic="", cic="", ic="", uic="uic"),
    "uic with ic=": dict(lic="ic=20m", cic="ic=1.5", ic="", uic="uic"),
    "uic with .ic": dict(lic="", cic="", ic=".ic v(c)=3 v(b)=1", uic="uic"),
    "uic with ic= and .ic": dict(lic="ic=-5m", cic="ic=2", ic=".ic v(c)=-1 v(b)=7", uic="uic"),
    ".ic without uic": dict(lic="", cic="", ic=".ic v(c)=3", uic=""),
}


@pytest.mark.parametrize("case", list(CASES))
def test_tran_starts_as_ngspice_starts(case):
    kw = CASES[case]
    net = netdyn.read_netlist(DECK.format(**kw))
    times = np.linspace(0, 5e-3, 101)
    sol = netdyn.simulate(net, None, t_eval=times)          # span from .tran, start as SPICE starts
    ng = run_ngspice(write_netlist(net), ["v(a)", "v(b)", "v(c)"], tstop=5e-3, tstep=5e-5, tmax=2.5e-7,
                     uic=bool(kw["uic"]))
    for node in "abc":
        ref = np.interp(times[1:], ng["time"], ng[f"v({node})"])
        peak = np.max(np.abs(ng[f"v({node})"]))
        assert np.max(np.abs(sol.voltage(node)[1:] - ref)) < 1e-4 * peak, (case, node)
        # t = 0: ngspice's first point is the operating point (without uic) or its first step (with uic)
        assert abs(sol.voltage(node)[0] - ng[f"v({node})"][0]) < 1e-4 * peak + (1e-3 * peak if kw["uic"] else 0)


@pytest.mark.parametrize("formulation", ["branch", "node"])
def test_every_formulation_starts_from_the_same_state(formulation):
    net = netdyn.read_netlist(DECK.format(**CASES["uic with ic= and .ic"]))
    times = np.linspace(0, 5e-3, 51)
    ref = netdyn.simulate(net, None, t_eval=times)
    sol = netdyn.simulate(net, None, t_eval=times, formulation=formulation)
    for node in "abc":
        assert np.max(np.abs(sol.voltage(node) - ref.voltage(node))) < 1e-7


def test_uic_values_are_the_initial_state():
    net = netdyn.read_netlist(DECK.format(**CASES["uic with ic="]))
    sol = netdyn.simulate(net, (0, 1e-4), t_eval=[0, 1e-4])
    assert sol.voltage("b")[0] == pytest.approx(1.5, abs=1e-12)       # C1's ic= (no .ic here)
    assert sol.current("L1")[0] == pytest.approx(20e-3, abs=1e-12)
    net = netdyn.read_netlist(DECK.format(**CASES["uic with ic="]).replace(".tran", ".ic v(c)=0.5\n.tran"))
    assert netdyn.simulate(net, (0, 1e-4), t_eval=[0, 1e-4]).voltage("c")[0] == pytest.approx(0.5, abs=1e-12)


def test_operating_point_of_a_diode_circuit_matches_ngspice():
    deck = ("bias\nV1 in 0 DC 5\nR1 in d 1k\nD1 d k dm\nR2 k 0 220\nD2 k 0 dm 2\nC1 d 0 1u\nL1 in x 1m\n"
            "R3 x 0 50\n.model dm D(IS=4n N=1.9 RS=0.7)\n.tran 1u 10u\n")
    net = netdyn.read_netlist(deck)
    op = operating_point(net)
    ng = run_ngspice(deck, ["v(d)", "v(k)", "v(x)", "i(V1)"], tstop=10e-6, tstep=1e-6, uic=False,
                     options={"reltol": 1e-9, "vntol": 1e-12, "abstol": 1e-16})   # ngspice converged tightly
    for node in "dkx":
        assert op.voltages[node] == pytest.approx(ng[f"v({node})"][0], rel=1e-6, abs=1e-9)
    assert op.currents["V1"] == pytest.approx(ng["i(V1)"][0], rel=1e-6)
    assert op.currents["L1"] == pytest.approx(op.voltages["x"] / 50, rel=1e-12)   # the inductor is a short
    assert op.currents["C1"] == 0.0                                                # the capacitor is open
    # the same answer in every formulation that can hold a diode
    assert operating_point(net, formulation="node").voltages["k"] == pytest.approx(op.voltages["k"], rel=1e-12)


def test_operating_point_with_controlled_sources_in_any_formulation():
    deck = ("ctl\nV1 in 0 2\nR1 in s 1k\nVs s 0 0\nF1 0 a Vs 3\nRa a 0 1k\nH1 b 0 Vs 500\nRb b 0 1k\n"
            "E1 c 0 a b 4\nRc c 0 100\nG1 0 g c 0 1m\nRg g 0 2k\n")
    net = netdyn.read_netlist(deck)
    i = 2 / 1e3
    expected = {"a": 3 * i * 1e3, "b": 500 * i}
    expected["c"] = 4 * (expected["a"] - expected["b"])
    expected["g"] = 1e-3 * expected["c"] * 2e3
    for form in ("loop", "branch", "node"):
        op = operating_point(net, formulation=form)
        for node, v in expected.items():
            assert op.voltages[node] == pytest.approx(v, rel=1e-12), (form, node)
        assert op.currents["E1"] == pytest.approx(-expected["c"] / 100, rel=1e-12)   # SPICE sign


def test_simulate_takes_the_span_from_tran_on_every_path():
    net = netdyn.read_netlist("rc\nV1 in 0 1\nR1 in out 1k\nC1 out 0 1u\n.tran 10u 2m uic\n")
    for method in ("auto", "linear", "ida"):
        sol = netdyn.simulate(net, None, method=method)
        assert sol.t[-1] == pytest.approx(2e-3)
        assert sol.voltage("out")[-1] == pytest.approx(1 - np.exp(-2), abs=1e-6)
    plain = netdyn.Network()
    plain.add(*net.elements.values())
    with pytest.raises(netdyn.IntegrationError, match="no .tran card"):
        netdyn.simulate(plain, None)
    # a network built in Python starts from zero (what it always did); operating_point gives the DC start
    assert netdyn.simulate(plain, (0, 1e-3)).voltage("out")[0] == 0.0
    q0, f0 = operating_point(plain).initial_conditions()
    assert netdyn.simulate(plain, (0, 1e-3), q0=q0, f0=f0).voltage("out")[0] == pytest.approx(1.0, abs=1e-12)


def test_operating_point_errors_name_the_problem():
    net = netdyn.read_netlist("float\nV1 in 0 1\nC1 in m 1u\nC2 m 0 1u\nR1 in 0 1k\n")
    with pytest.raises(SingularSystemError, match="no DC path to ground"):
        operating_point(net)
    with pytest.raises(ModelError, match="stores no energy"):
        operating_point(net, hold={"R1": 1.0})
    with pytest.raises(ModelError, match="no node named 'nowhere'"):
        operating_point(net, clamp={"nowhere": 1.0})


def test_spice_initial_state_is_reusable():
    net = netdyn.read_netlist("rc\nV1 in 0 5\nR1 in out 1k\nC1 out 0 1u\n.tran 1u 1m\n")
    q0, f0 = spice_initial_state(net, "node")
    assert f0["phi_out"] == pytest.approx(5.0) and f0["phi_in"] == pytest.approx(5.0)


def test_cli_prints_the_operating_point_and_warns_for_cards_not_acted_on(capsys):
    import tempfile, os
    deck = ("op\nV1 in 0 DC 3\nR1 in out 1k\nR2 out 0 2k\nC1 out 0 1u\n.options reltol=1e-6\n.print tran v(out)\n"
            ".meas tran vmax max v(out)\n.op\n.tran 10u 100u\n")
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "op.cir")
        with open(path, "w") as fh:
            fh.write(deck)
        assert main(["simulate", path, "--tstop", "50u", "--step", "10u"]) == 0
        out, err = capsys.readouterr()
        warnings = [line for line in err.splitlines() if line.startswith("netdyn: warning:")]
        assert len(warnings) == 3 and ".options" in warnings[0] and ".print" in warnings[1] and ".meas" in warnings[2]
        lines = out.splitlines()
        assert lines[0] == "# operating point"
        vout = [line for line in lines if line.startswith("v(out)")][0]
        assert float(vout.split()[1]) == pytest.approx(2.0, rel=1e-12)
        table = lines[lines.index("# transient") + 2:]
        assert len(table) == 6 and float(table[-1].split()[0]) == pytest.approx(50e-6)   # --tstop 50u
        assert main(["op", path]) == 0
        assert "v(out)" in capsys.readouterr().out
        assert main(["simulate", path, "--tstop", "5q"]) == 2
        assert "unknown unit suffix 'q'" in capsys.readouterr().err


def test_operating_point_of_a_model_is_refused_by_name():
    """A LagrangianModel has no element laws to take the DC point from: a ModelError saying what to use."""
    x = netdyn.coordinates("x")
    model = netdyn.LagrangianModel([x], T=x.diff(netdyn.t) ** 2 / 2)
    with pytest.raises(netdyn.ModelError, match="takes a Network .* not a LagrangianModel; .*equilibrium"):
        netdyn.operating_point(model)
