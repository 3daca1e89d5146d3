"""AC analysis (``.ac``, :func:`netdyn.ac`) against ngspice's ``.ac`` and closed forms."""
import os
import shutil

import numpy as np
import pytest

import netdyn
from netdyn.analysis.ac import ac, frequencies_of
from netdyn.cli import main
from netdyn.components.electrical import Capacitor, Resistor, VoltageSource
from netdyn.errors import ModelError
from netdyn.io.spice import run_ngspice_ac

ngspice = pytest.mark.skipif(shutil.which("ngspice") is None, reason="ngspice is not installed")

DECKS = {
    "RLC filter": ("rlc\nV1 in 0 DC 0 AC 1\nR1 in a 50\nL1 a out 10m\nC1 out 0 1u\nR2 out 0 1k\n"
                   ".ac dec 10 1 100k\n", ["v(out)", "v(a)", "i(L1)", "i(V1)"]),
    "op-amp integrator (E source)": ("int\nV1 in 0 DC 0 AC 1\nR1 in m 10k\nC1 m out 10n\nE1 out 0 0 m 1e5\n"
                                     "RL out 0 10k\n.ac dec 10 1 100k\n", ["v(out)", "v(m)", "i(E1)"]),
    "two-stage RC": ("rc2\nV1 in 0 DC 1 AC 2 30\nR1 in a 1k\nC1 a 0 100n\nR2 a b 10k\nC2 b 0 10n\n"
                     ".ac dec 10 1 100k\n", ["v(b)", "v(a)", "v(a,b)", "i(V1)"]),
}


@ngspice
@pytest.mark.parametrize("name", list(DECKS))
def test_ac_equals_ngspice(name):
    deck, probes = DECKS[name]
    net = netdyn.read_netlist(deck)
    spec = net.ac
    f = frequencies_of(spec["sweep"], spec["points"], spec["fstart"], spec["fstop"])
    assert f.size == 51
    ng = run_ngspice_ac(deck, probes, spec["sweep"], spec["points"], spec["fstart"], spec["fstop"])
    np.testing.assert_allclose(ng["frequency"], f, rtol=1e-12)
    for formulation in (None, "branch", "node"):
        res = ac(net, f, outputs=probes, formulation=formulation)
        for p in probes:
            ratio = res[p] / ng[p]
            assert np.max(np.abs(np.abs(ratio) - 1)) < 1e-4, (name, formulation, p)      # magnitude
            assert np.max(np.abs(np.angle(ratio))) < 1e-4 * np.pi, (name, formulation, p)  # phase
            np.testing.assert_allclose(res.phase(p), np.degrees(np.angle(ng[p])), atol=0.018)


@ngspice
def test_ac_about_a_diode_operating_point():
    deck = ("dio\nV1 in 0 DC 5 AC 1\nR1 in d 1k\nD1 d 0 dm\nC1 d 0 1u\n.model dm D(IS=1e-14 N=1.5 RS=2)\n"
            ".ac dec 5 10 1meg\n")
    net = netdyn.read_netlist(deck)
    f = frequencies_of("dec", 5, 10, 1e6)
    res = ac(net, f, outputs=["v(d)"])
    ng = run_ngspice_ac(deck, ["v(d)"], "dec", 5, 10, 1e6)
    assert np.max(np.abs(res["v(d)"] / ng["v(d)"] - 1)) < 1e-4   # ngspice's own op tolerance sets the floor


def test_rc_low_pass_closed_form_in_every_formulation():
    net = netdyn.Network()
    net.add(VoltageSource("V1", "in", "0", 0.0), Resistor("R1", "in", "out", 1e3), Capacitor("C1", "out", "0", 1e-6))
    f = np.logspace(0, 5, 11)
    H = 1 / (1 + 2j * np.pi * f * 1e-3)
    for formulation in ("loop", "branch", "node"):
        res = ac(net, f, input="V1", outputs=["v(out)", "i(C1)"], formulation=formulation)
        np.testing.assert_allclose(res["v(out)"], H, rtol=1e-12)
        np.testing.assert_allclose(res["i(C1)"], 2j * np.pi * f * 1e-6 * H, rtol=1e-12)
        np.testing.assert_allclose(res.db("v(out)"), 20 * np.log10(np.abs(H)), atol=1e-10)


def test_sweeps_and_errors():
    assert frequencies_of("oct", 1, 1, 8).tolist() == [1, 2, 4, 8]
    assert frequencies_of("lin", 5, 0.5, 2.5).tolist() == [0.5, 1.0, 1.5, 2.0, 2.5]
    net = netdyn.Network()
    net.add(VoltageSource("V1", "in", "0", 0.0), VoltageSource("V2", "x", "0", 1.0), Resistor("R1", "in", "x", 1.0))
    with pytest.raises(ModelError, match="say which source"):
        ac(net, [1.0])
    with pytest.raises(ModelError, match="'R1' is not a source"):
        ac(net, [1.0], input="R1")
    with pytest.raises(ModelError, match="v\\(node\\)"):
        ac(net, [1.0], input="V1", outputs=["x(in)"])


def test_bode_plot_and_cli(tmp_path, capsys):
    deck, probes = DECKS["two-stage RC"]
    path = tmp_path / "rc2.cir"
    path.write_text(deck + ".tran 1u 10u\n")
    net = netdyn.read_netlist(path)
    res = ac(net, frequencies_of("dec", 3, 10, 1e5), outputs=["v(b)"])
    fig = res.plot(tmp_path / "bode.png")
    assert os.path.getsize(tmp_path / "bode.png") > 10_000
    mag, ph = fig.axes
    assert mag.get_ylabel().startswith("magnitude (dB") and ph.get_ylabel() == "phase (degrees)"
    assert ph.get_xlabel() == "frequency (Hz)" and mag.get_xscale() == "log"
    assert main(["ac", str(path), "--outputs", "v(b);i(V1)", "--csv", str(tmp_path / "ac.csv")]) == 0
    rows = (tmp_path / "ac.csv").read_text().splitlines()
    assert rows[0] == "frequency,mag(v(b)),phase(v(b)),mag(i(V1)),phase(i(V1))" and len(rows) == 52
    first = [float(x) for x in rows[1].split(",")]
    assert first[1] == pytest.approx(2.0, rel=1e-5) and first[2] == pytest.approx(30.0, abs=0.1)   # AC 2 30
    assert main(["ac", str(path), "--sweep", "lin", "--points", "3", "--fstart", "1k", "--fstop", "3k"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 4 and out[0].split()[0] == "frequency"
    # netdyn simulate runs the netlist's .ac before its .tran
    assert main(["simulate", str(path)]) == 0
    out = capsys.readouterr().out
    assert "# ac analysis: response to V1" in out and "# transient" in out


@ngspice
def test_ac_with_junction_capacitance():
    """A forward-biased diode (diffusion charge TT) and a reverse-biased one (depletion CJO): the small-signal
    capacitance is the second derivative of the junction's co-energy at the operating point, as ngspice's."""
    deck = ("dio\nV1 in 0 DC 5 AC 1\nR1 in d 1k\nD1 d 0 dm\nD2 d2 d dm\nR2 d2 0 10k\n"
            ".model dm D(IS=1e-14 N=1.5 RS=2 CJO=20p TT=50n BV=10)\n.ac dec 5 10 100meg\n")
    net = netdyn.read_netlist(deck)
    f = frequencies_of("dec", 5, 10, 1e8)
    res = ac(net, f, outputs=["v(d)", "v(d2)"])
    ng = run_ngspice_ac(deck, ["v(d)", "v(d2)"], "dec", 5, 10, 1e8)
    for p in ("v(d)", "v(d2)"):
        assert np.max(np.abs(res[p] / ng[p] - 1)) < 1e-4, p
    assert abs(ng["v(d)"][-1]) < 0.2 * abs(ng["v(d)"][0])      # the capacitances matter at the top
