"""The diode's temperature law (ngspice's DIOtemp: IS via EG and XTI, VJ and CJO via the band gap) and the
netlist cards that set the temperature (.temp, .options temp= tnom=, a model's TNOM)."""
import math
import shutil
import warnings

import numpy as np
import pytest

import netdyn
from netdyn.components.diode import VT, Diode, DiodeModel, temperature_adjusted
from netdyn.errors import ElementError, ParseError
from netdyn.io.spice import run_ngspice

ngspice = pytest.mark.skipif(shutil.which("ngspice") is None, reason="ngspice is not installed")

RECTIFIER = ("rectifier\nV1 in 0 SIN(0 5 1Meg)\nD1 in out dm\nRL out 0 1k\nC1 out 0 1n\nD2 0 out dz\n"
             ".model dm D(IS=1e-14 N=1.2 RS=5 CJO=5p VJ=0.7 M=0.4 FC=0.5 TT=5n EG=1.11 XTI=3)\n"
             ".model dz D(IS=1e-15 N=1 BV=3.3 IBV=1m NBV=1.3 TNOM=20)\n"
             "{temp}.tran 2n 2u\n")


def test_saturation_current_law_and_nominal_temperature():
    """IS(T) in closed form, nothing moves at the nominal temperature, Vt scales with T."""
    m = DiodeModel(IS=2e-14, N=1.5, EG=1.2, XTI=2.0, CJO=1e-12, VJ=0.8).as_dict()
    same, vt = temperature_adjusted(m, 27.0)
    assert same == m and vt == VT
    hot, vt = temperature_adjusted(m, 100.0, tnom=50.0)
    T, Tn = 373.15, 323.15
    assert vt == pytest.approx(VT * T / 300.15, rel=1e-14)
    assert hot["IS"] == pytest.approx(2e-14 * math.exp((T / Tn - 1) * 1.2 / (1.5 * vt) + 2.0 / 1.5 * math.log(T / Tn)),
                                      rel=1e-13)
    assert hot["VJ"] < 0.8 and hot["CJO"] > 1e-12        # the junction potential falls, the capacitance rises
    d = Diode("D1", "a", "k", IS=2e-14, temp=27.0)
    assert d.numeric_values() == Diode("D1", "a", "k", IS=2e-14).numeric_values()
    assert Diode("D1", "a", "k", temp=75.0).numeric_values()["vt"] == pytest.approx(VT * 348.15 / 300.15)
    with pytest.raises(ElementError, match="D9.*absolute zero"):
        Diode("D9", "a", "k", temp=-300.0)


def test_temperature_cards_are_read_and_not_warned():
    with warnings.catch_warnings():
        warnings.simplefilter("error")      # EG, XTI and TNOM are modelled now: no "not modelled" warning
        net = netdyn.read_netlist(RECTIFIER.format(temp=".temp 75\n"))
    d1, d2 = net.elements["D1"], net.elements["D2"]
    assert d1.temperature == 75.0 and d1.numeric_values()["IS"] == pytest.approx(
        temperature_adjusted(dict(DiodeModel().as_dict(), IS=1e-14, N=1.2, CJO=5e-12, VJ=0.7, M=0.4), 75.0)[0]["IS"])
    assert d2.model_parameters["TNOM"] == 20.0
    opt = netdyn.read_netlist(RECTIFIER.format(temp=".options reltol=1e-3 temp=75 tnom=40\n"))
    v = opt.elements["D1"].numeric_values()
    ref = Diode("D1", "a", "k", IS=1e-14, N=1.2, RS=5, CJO=5e-12, VJ=0.7, M=0.4, TT=5e-9, TNOM=40, temp=75)
    assert v == ref.numeric_values()
    assert opt.elements["D2"].model_parameters["TNOM"] == 20.0     # the model's own TNOM beats .options tnom
    with pytest.raises(ParseError, match="one temperature"):
        netdyn.read_netlist(RECTIFIER.format(temp=".temp 27 75\n"))


@ngspice
def test_rectifier_at_75_and_minus_20_degrees_equals_ngspice():
    """Junction charge, breakdown with its own TNOM, .temp: netdyn and ngspice agree to 1e-4 of the peak at
    27, 75 and −20 °C, where the temperature moves v(out) by more than 1 % of it."""
    times = np.linspace(0, 2e-6, 201)
    out = {}
    for temp in ("", ".temp 75\n", ".temp -20\n"):
        deck = RECTIFIER.format(temp=temp)
        sol = netdyn.simulate(netdyn.read_netlist(deck), None, t_eval=times)
        ng = run_ngspice(deck, ["v(out)"], tstop=2e-6, tstep=2e-9, tmax=1e-9, uic=False,
                         options=dict(reltol=1e-6, abstol=1e-15, vntol=1e-9))
        ref = np.interp(times, ng["time"], ng["v(out)"])
        assert sol.method == "circuit"
        assert np.max(np.abs(sol.voltage("out") - ref)) < 1e-4 * np.max(np.abs(ref))
        out[temp] = ref
    peak = np.max(np.abs(out[""]))
    assert np.max(np.abs(out[".temp 75\n"] - out[""])) > 1e-2 * peak
    assert np.max(np.abs(out[".temp -20\n"] - out[""])) > 1e-2 * peak


COEFFICIENTS = ("coefficients\nV1 in 0 SIN(0 5 1Meg)\nD1 in out dm\nRL out 0 1k\nC1 out 0 1n\nR2 in mid 2k\n"
                "D3 mid 0 dn DTEMP=10\nD4 0 mid dv TEMP=60\n"
                ".model dm D(IS=1e-14 N=1.2 RS=20 TRS=4e-3 TRS2=2e-5 CJO=5p VJ=0.7 M=0.4 TM1=2e-3 TM2=1e-5 TT=5n "
                "TTT1=5e-3 TTT2=2e-5 TLEVC=1 CTA=3e-3 TPB=2e-3)\n"
                ".model dn D(IS=1e-15 BV=2.5 IBV=1m TLEV=1 TCV=2e-3 CJO=2p)\n"
                ".model dv D(IS=1e-15 N=1.1 BV=3.3 IBV=1m NBV=1.3 TCV=-3e-3 TNOM=20)\n"
                "{temp}.tran 2n 2u\n")


def test_every_temperature_coefficient_moves_its_parameter():
    """Each of ngspice's coefficients in closed form at 75 °C (dT = 48 K), and none moves anything at TNOM."""
    base = dict(IS=1e-14, RS=10.0, CJO=1e-12, VJ=0.7, M=0.4, TT=1e-9, BV=5.0, IBV=1e-3)
    ref = Diode("D", "a", "k", **base, temp=75).numeric_values()
    dt = 48.0
    for kw, key, expect in [(dict(TRS=4e-3, TRS2=2e-5), "RS", 10 * (1 + 4e-3 * dt + 2e-5 * dt * dt)),
                            (dict(TTT1=5e-3, TTT2=2e-5), "TT", 1e-9 * (1 + 5e-3 * dt + 2e-5 * dt * dt)),
                            (dict(TM1=2e-3, TM2=1e-5), "M", 0.4 * (1 + 2e-3 * dt + 1e-5 * dt * dt)),
                            (dict(TLEVC=1, TPB=2e-3), "VJ", 0.7 - 2e-3 * dt),
                            (dict(TLEVC=1, CTA=3e-3), "CJO", 1e-12 * (1 + 3e-3 * dt))]:
        v = Diode("D", "a", "k", **base, **kw, temp=75).numeric_values()
        assert v[key] == pytest.approx(expect, rel=1e-13) and v[key] != ref[key], kw
        assert Diode("D", "a", "k", **base, **kw).numeric_values() == Diode("D", "a", "k", **base).numeric_values()
    from netdyn.components.diode import breakdown_voltage
    for kw, bv in [(dict(TCV=-3e-3), 5.0 + 3e-3 * dt), (dict(TLEV=1, TCV=2e-3), 5.0 * (1 - 2e-3 * dt))]:
        v = Diode("D", "a", "k", **base, **kw, temp=75).numeric_values()
        assert v["BV"] == pytest.approx(breakdown_voltage(bv, 1e-3, ref["IS"], 1.0, v["vt"]), rel=1e-13)
    with pytest.raises(ElementError, match="D9.*TLEVC = 2"):
        Diode("D9", "a", "k", TLEVC=2, temp=50)
    with pytest.raises(ElementError, match="D9.*breakdown voltage at 75"):
        Diode("D9", "a", "k", BV=1.0, TCV=0.1, temp=75)


def test_instance_temperatures_and_parameters_ngspice_does_not_have():
    net = netdyn.read_netlist(COEFFICIENTS.format(temp=".temp 40\n"))
    assert net.elements["D3"].temperature == 50.0 and net.elements["D4"].temperature == 60.0
    assert net.elements["D1"].temperature == 40.0
    assert net.elements["D1"].model_parameters["TRS"] == 4e-3
    for bad, what in [("TT1=1e-3", "TTT1 and TTT2"), ("TEMP=50", "instance parameter"), ("TLEVC=2", "laws 0 and 1"),
                      ("XYZ=1", "not a diode parameter")]:
        with pytest.raises(ParseError, match=what):
            netdyn.read_netlist("t\nV1 a 0 1\nD1 a 0 d1\n.model d1 D(IS=1e-14 " + bad + ")\n.tran 1u 1m\n")
    for line, what in [("D1 a 0 d1 TEMP=50 DTEMP=3", "give one"), ("D1 a 0 d1 OFF=1", "not taken"),
                       ("D1 a 0 d1 TEMP=-300", "absolute zero")]:
        with pytest.raises(ParseError, match=what):
            netdyn.read_netlist("t\nV1 a 0 1\n" + line + "\n.model d1 D(IS=1e-14)\n.tran 1u 1m\n")


@ngspice
def test_temperature_coefficients_equal_ngspice_at_two_temperatures():
    """TRS/TRS2, TM1/TM2, TTT1/TTT2, TLEVC=1 with CTA and TPB, TCV under TLEV 0 and 1, instance TEMP= and
    DTEMP=: v(out) and v(mid) equal a tight ngspice run's to 1e-4 of the peak at 75 and −20 °C
    (each coefficient alone moves a waveform by 2e-3 to 0.1 of its peak; netdyn's error is ~1e-5)."""
    for temp in (".temp 75\n", ".temp -20\n"):
        deck = COEFFICIENTS.format(temp=temp)
        # ngspice at reltol 1e-6 and 1e-7 differ by 9.5e-5 of peak on v(mid): the reference is the tighter run
        ng = run_ngspice(deck, ["v(out)", "v(mid)"], tstop=2e-6, tstep=2e-9, tmax=2e-10, uic=False,
                         options=dict(reltol=1e-7, abstol=1e-16, vntol=1e-10))
        times = np.linspace(0.0, 2e-6, 1001)
        with warnings.catch_warnings():
            warnings.simplefilter("error")      # every coefficient is modelled: no "not modelled" warning
            net = netdyn.read_netlist(deck)
        sol = netdyn.simulate(net, None, t_eval=times)
        assert sol.method == "circuit"
        # the deck write_netlist makes of it means the same to ngspice (.temp, TEMP=, DTEMP=, coefficients)
        ng2 = run_ngspice(netdyn.write_netlist(net), ["v(out)", "v(mid)"], tstop=2e-6, tstep=2e-9, tmax=2e-10,
                          uic=False, options=dict(reltol=1e-7, abstol=1e-16, vntol=1e-10))
        for node in ("out", "mid"):
            ref = np.interp(times, ng["time"], ng[f"v({node})"])
            assert np.max(np.abs(sol.voltage(node) - ref)) < 1e-4 * np.max(np.abs(ref)), (temp, node)
            again = np.interp(times, ng2["time"], ng2[f"v({node})"])
            assert np.max(np.abs(again - ref)) < 1e-9 * np.max(np.abs(ref)), (temp, node)
