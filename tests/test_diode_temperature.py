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
