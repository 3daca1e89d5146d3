"""Switches (issue 27, item 2): SPICE S and W switches as ngspice defines them (RON/ROFF, VT/VH hysteresis),
checked against ngspice at two tolerances on a relay, a buck converter and a charge pump; the ideal Switch
against closed forms, charge and flux conservation and the energy balance with the jump losses."""
import pathlib
import shutil
import warnings

import numpy as np
import pytest

import netdyn
from netdyn import Event
from netdyn.components.electrical import Capacitor, Inductor, Resistor, VoltageSource
from netdyn.components.switch import CurrentSwitch, Switch, VoltageSwitch
from netdyn.errors import ElementError, ParseError
from netdyn.io import read_netlist, run_ngspice
from netdyn.lagrange.sources import pwm
from netdyn.numerics.events import JumpWarning

NETLISTS = pathlib.Path(__file__).resolve().parent.parent / "examples" / "netlists"
needs_ngspice = pytest.mark.skipif(shutil.which("ngspice") is None, reason="ngspice is not installed")
#: ngspice at two tolerances: the tight one is the reference, the loose one shows its own spread
NGSPICE_TOLERANCES = ({"reltol": 1e-6, "abstol": 1e-12, "vntol": 1e-9}, {"reltol": 1e-4})


# --- the netlist cards -------------------------------------------------------------------------------

SWITCH_DECK = """switches
V1 in 0 5
Vs s 0 0
S1 in a c 0 SMOD ON
W1 a s Vs WMOD
Vc c 0 1
R1 a 0 1k
.model SMOD SW(VT=2.5 VH=0.5 RON=0.1)
.model WMOD CSW(IT=1m IH=0.2m ROFF=1e9)
"""


def test_s_and_w_cards_with_their_models():
    net = read_netlist(SWITCH_DECK)
    s, w = net["S1"], net["W1"]
    assert isinstance(s, VoltageSwitch) and isinstance(w, CurrentSwitch)
    assert s.closed and (s.RON, s.ROFF, s.threshold, s.hysteresis) == (0.1, 1e12, 2.5, 0.5)  # ngspice's ROFF
    assert not w.closed and (w.RON, w.ROFF, w.threshold, w.hysteresis) == (1.0, 1e9, 1e-3, 2e-4)
    assert w.switching() == [(f"i(Vs) - {1e-3 + 2e-4!r}", 1, True)]
    assert s.switching() == [("v(c) - 2.0", -1, False)]


@pytest.mark.parametrize("deck,match", [
    ("S1 a 0 c 0 NOPE\n", "no switch model 'NOPE' of type SW"),
    ("S1 a 0 c 0\n", "a switch card is"),
    ("S1 a 0 c 0 M\n.model M SW(VT=1 XX=2)\n", "XX is not a SW parameter"),
    ("S1 a 0 c 0 M\n.model M CSW(IT=1)\n", "no switch model 'M' of type SW"),
    ("S1 a 0 c 0 M\n.model M SW(VH=-1)\n", "smooth switch"),
])
def test_bad_switch_cards(deck, match):
    with pytest.raises(ParseError, match=match):
        read_netlist("bad\nV1 a 0 1\nVc c 0 1\n" + deck)


def test_bad_switch_values():
    with pytest.raises(ElementError, match="RON"):
        VoltageSwitch("S1", "a", "b", "c", "0", RON=-1)


# --- against closed forms ----------------------------------------------------------------------------

def test_relay_switching_times_closed_form():
    """The control ramps 0 → 5 V over 1 ms and back: closes at 3.5 V (0.7 ms), opens at 1.5 V (1.7 ms)."""
    net = read_netlist((NETLISTS / "relay_hysteresis.cir").read_text())
    sol = netdyn.simulate(net, None, t_eval=np.linspace(0, 2e-3, 401))
    assert [(e.name, e.direction) for e in sol.events] == [("S1 closes", 1), ("S1 opens", -1)]
    assert abs(sol.events[0].t - 0.7e-3) < 1e-15 and abs(sol.events[1].t - 1.7e-3) < 1e-15
    # closed: v = 5·1k/1.01k (1 − exp(−(t − 0.7 ms)/τ)), τ = (10 Ω ∥ 1 kΩ)·10 µF
    t, v = sol.t, sol.series("v(out)")
    on = (t > 0.7e-3) & (t <= 1.7e-3)
    tau = (10 * 1e3 / 1010) * 10e-6
    v0 = 5 * 1e3 / (1e6 + 1e3)  # the DC start (a .tran deck): ROFF and R1 divide, and stay so while open
    vinf = 5 * 1e3 / 1010
    exact = vinf + (v0 - vinf) * np.exp(-(t[on] - 0.7e-3) / tau)
    assert np.max(np.abs(v[t <= 0.7e-3] - v0)) < 1e-9 * vinf
    assert np.max(np.abs(v[on] - exact)) < 1e-6 * vinf


def test_current_switch_closed_form():
    """A W switch on the current of an RL branch: closes when i(VS) passes 10 mA (t = τ ln(i∞/(i∞ − IT − IH)))."""
    net = netdyn.Network("w")
    net.add(VoltageSource("V1", "in", "0", 1.0), Resistor("R1", "in", "a", 50.0), Inductor("L1", "a", "s", 1e-3),
            VoltageSource("VS", "s", "0", 0.0),
            CurrentSwitch("W1", "in", "b", "VS", RON=1.0, ROFF=1e9, IT=0.01, IH=0.002), Resistor("R2", "b", "0", 99.0))
    sol = netdyn.simulate(net, (0, 1e-4), rtol=1e-10)
    (ev,) = sol.events
    tau, i_inf = 1e-3 / 50, 1 / 50
    assert ev.t == pytest.approx(tau * np.log(i_inf / (i_inf - 0.012)), rel=1e-9)
    assert sol.series("v(b)")[-1] == pytest.approx(0.99, rel=1e-9)


# --- against ngspice ---------------------------------------------------------------------------------

def _compare(deck, tstop, probes, div=2e4, ngspice_probe_extra=()):
    net = read_netlist(deck)
    times = np.linspace(0, tstop, 2001)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", JumpWarning)
        sol = netdyn.simulate(net, (0, tstop), t_eval=times)
    runs = [run_ngspice(deck, list(probes) + list(ngspice_probe_extra), tstop=tstop, tstep=tstop / 2000,
                        tmax=tstop / div, options=o, uic=False) for o in NGSPICE_TOLERANCES]
    t = sol.t
    keep = np.r_[True, np.diff(t) > 0]
    # ngspice resolves a switching only to its step: the output times inside its step across one of the
    # events are not compared (the piecewise-linear reading of its samples straddles the jump there)
    tn = runs[0]["time"]
    for e in sol.events:
        k = np.searchsorted(tn, e.t)
        keep &= ~((t >= tn[max(k - 1, 0)]) & (t <= tn[min(k + 1, tn.size - 1)]))
    errors = {}
    for p in probes:
        ours = sol.series(p)[keep]
        ref = [np.interp(t[keep], r["time"], r[p]) for r in runs]
        peak = np.max(np.abs(runs[0][p]))
        errors[p] = (np.max(np.abs(ours - ref[0])) / peak, np.max(np.abs(ref[1] - ref[0])) / peak)
        print(f"{p}: netdyn − ngspice {errors[p][0]:.2e} of peak (ngspice's own spread {errors[p][1]:.2e})")
    return sol, runs, errors


@needs_ngspice
def test_relay_against_ngspice():
    deck = (NETLISTS / "relay_hysteresis.cir").read_text()
    sol, runs, errors = _compare(deck, 2e-3, ["v(out)"], div=1e5, ngspice_probe_extra=["v(c)"])
    assert errors["v(out)"][0] < 1e-3
    # ngspice switches at its first time point past VT ± VH: our event lies inside that step, in both runs
    for r in runs:
        tn, vc = r["time"], r["v(c)"]
        k = np.argmax(vc > 3.5)
        assert tn[k - 1] <= sol.events[0].t <= tn[k]
        k2 = k + np.argmax(vc[k:] < 1.5)
        assert tn[k2 - 1] <= sol.events[1].t <= tn[k2]


@needs_ngspice
def test_buck_converter_against_ngspice():
    """100 kHz PULSE gate on an S switch, freewheeling diode, LC output filter (the first 50 µs: ten
    switchings; the 2 ms run is the benchmark)."""
    deck = (NETLISTS / "buck_converter.cir").read_text()
    sol, runs, errors = _compare(deck, 50e-6, ["v(out)", "i(L1)"])
    assert sol.method == "circuit" and len(sol.events) == 10
    for p in ("v(out)", "i(L1)"):
        assert errors[p][0] < 1e-3
    # the gate crosses VT + VH = 3 V 6 ns into each 10 ns rise, VT − VH = 2 V 6 ns into each fall
    closes = [e.t for e in sol.events if e.name == "S1 closes"]
    assert np.max(np.abs(np.array(closes) - (6e-9 + 1e-5 * np.arange(5)))) < 1e-15


@needs_ngspice
def test_charge_pump_against_ngspice():
    deck = (NETLISTS / "charge_pump.cir").read_text()
    sol, runs, errors = _compare(deck, 20e-6, ["v(out)", "v(a)"])
    assert sol.method == "linear"
    assert errors["v(out)"][0] < 1e-3 and errors["v(a)"][0] < 1e-3


# --- the ideal switch: constraint sets, impulse rule, energy ------------------------------------------

def _two_capacitors():
    net = netdyn.Network("share")
    net.add(VoltageSource("V1", "in", "0", 2.0), Switch("S0", "in", "a", closed=True), Capacitor("C1", "a", "0", 1e-6),
            Resistor("R1", "a", "0", 1e6), Switch("S1", "a", "b"), Capacitor("C2", "b", "0", 3e-6),
            Resistor("R2", "b", "0", 1e6), Switch("S2", "in", "b"))
    return net


@pytest.mark.parametrize("method", ["linear", "ida"])
def test_capacitors_paralleled_share_charge(method):
    """C1 at 2 V meets C2 at 0 V: charge conserved, both at 2·C1/(C1 + C2), ½ C1C2/(C1 + C2) ΔV² lost; then
    S2 closes them onto the 2 V source: ½ (C1 + C2) ΔV² lost, V·ΔQ supplied; the balance closes."""
    with pytest.warns(JumpWarning, match="C1, C2 changed voltage"):
        sol = netdyn.simulate(_two_capacitors(), (0, 2e-3), method=method,
                              events=[Event("t - 1e-3", action={"S1": True, "S0": False}),
                                      Event("t - 1.5e-3", action={"S2": True})])
    share, onto = sol.events
    va = share.before["phi_a_dot"]
    q_before = 1e-6 * va + 3e-6 * share.before["phi_b_dot"]
    assert share.after["phi_a_dot"] == pytest.approx(share.after["phi_b_dot"], rel=1e-12)
    assert 1e-6 * share.after["phi_a_dot"] + 3e-6 * share.after["phi_b_dot"] == pytest.approx(q_before, rel=1e-12)
    assert share.energy_lost == pytest.approx(0.5 * 0.75e-6 * va ** 2, rel=1e-9)
    dv = 2.0 - onto.before["phi_b_dot"]
    assert onto.energy_lost == pytest.approx(0.5 * 4e-6 * dv ** 2, rel=1e-9)
    assert onto.energy_supplied == pytest.approx(2.0 * 4e-6 * dv, rel=1e-9)
    assert sol.power_balance()["relative"] < 1e-7
    assert sol.energy_lost == pytest.approx(share.energy_lost + onto.energy_lost)


@pytest.mark.parametrize("method", ["linear", "ida"])
def test_inductor_current_cut_and_rl_closed_form(method):
    """An RL charging through a closed switch; the switch opens at 0.25 s (the inductor's ½ L i² lost, its
    current 0), closes at 0.6 s (no jump): i = i∞ (1 − exp(−(t − 0.6)/τ)) again."""
    net = netdyn.Network("rl")
    net.add(VoltageSource("V1", "in", "0", 1.0), Resistor("R1", "in", "a", 2.0), Inductor("L1", "a", "b", 0.5),
            Switch("S1", "b", "0", closed=True))
    with pytest.warns(JumpWarning, match="L1 had its current cut|inductors L1"):
        sol = netdyn.simulate(net, (0, 1.0), method=method, rtol=1e-10,
                              events=[Event("t - 0.25", action={"S1": False}), Event("t - 0.6", action={"S1": True})])
    cut, close = sol.events
    tau, i_inf = 0.25, 0.5
    i_cut = i_inf * (1 - np.exp(-1))
    assert cut.energy_lost == pytest.approx(0.5 * 0.5 * i_cut ** 2, rel=1e-8)
    assert close.jump is None and close.energy_lost == 0.0
    t, i = sol.t, sol.series("i(L1)")
    open_ = (t > 0.25) & (t < 0.6)
    assert np.max(np.abs(i[open_])) < 1e-9
    after = t > 0.6
    assert np.max(np.abs(i[after] - i_inf * (1 - np.exp(-(t[after] - 0.6) / tau)))) < 1e-8
    assert sol.power_balance()["relative"] < 1e-7


def test_rc_switched_by_a_pwm_source_closed_form():
    """An ideal switch closed while a PWM gate is high (close_when/open_when on its voltage): the capacitor
    charges through R in the on-times and holds in the off-times — the charge at the end is closed form."""
    f, duty = 1e3, 0.3
    net = netdyn.Network("pwm rc")
    net.add(VoltageSource("VG", "g", "0", pwm(0, 1, f, duty)), Resistor("RG", "g", "0", 1.0),
            VoltageSource("V1", "in", "0", 1.0), Switch("S1", "in", "m", closed=True, close_when="v(g) - 0.5",
                                                        open_when="0.5 - v(g)"),
            Resistor("R1", "m", "out", 1e3), Capacitor("C1", "out", "0", 1e-6))
    sol = netdyn.simulate(net, (0, 3.5e-3), rtol=1e-10)
    on_time = 4 * duty / f  # four on-times (the run ends inside the fourth off-time)
    v = sol.series("v(C1)")
    assert v[-1] == pytest.approx(1 - np.exp(-on_time / 1e-3), rel=1e-8)
    assert [round(e.t, 12) for e in sol.events] == [0.3e-3, 1e-3, 1.3e-3, 2e-3, 2.3e-3, 3e-3, 3.3e-3]


def test_ideal_switches_refuse_a_charge_formulation():
    from netdyn.numerics.circuit.jumps import SwitchFormulationError
    with pytest.raises(SwitchFormulationError, match="node formulation"):
        netdyn.simulate(_two_capacitors(), (0, 1e-3), formulation="loop")


def test_ideal_switch_buck_matches_a_tiny_ron_switch():
    """A buck converter with an ideal switch (circuit path, a diode beside it: the diode carries the inductor's
    current when it opens, so no jump) against the same with a VoltageSwitch of RON 1 µΩ, ROFF 1e12 Ω."""
    from netdyn.components.diode import Diode

    def buck(switch):
        net = netdyn.Network("buck")
        net.add(VoltageSource("Vin", "in", "0", 12.0), VoltageSource("VG", "g", "0", pwm(0, 5, 100e3, 0.5, edge=10e-9)),
                Resistor("RG", "g", "0", 1e3), switch, Diode("D1", "0", "sw", IS=1e-14),
                Inductor("L1", "sw", "out", 100e-6), Capacitor("C1", "out", "0", 10e-6), Resistor("RL", "out", "0", 5.0))
        return net

    times = np.linspace(0, 20e-6, 401)
    ideal = netdyn.simulate(buck(Switch("S1", "in", "sw", close_when="v(g) - 3", open_when="2 - v(g)")), (0, 20e-6),
                            t_eval=times)
    ron = netdyn.simulate(buck(VoltageSwitch("S1", "in", "sw", "g", "0", RON=1e-6, ROFF=1e12, VT=2.5, VH=0.5)),
                          (0, 20e-6), t_eval=times)
    assert ideal.method == ron.method == "circuit"
    assert [round(e.t, 15) for e in ideal.events] == [round(e.t, 15) for e in ron.events]
    assert all(e.jump is None for e in ideal.events)
    for probe in ("v(out)", "i(L1)"):
        a, b = ideal.series(probe), ron.series(probe)
        keep = np.r_[True, np.diff(ideal.t) > 0]
        keep_b = np.r_[True, np.diff(ron.t) > 0]
        assert np.max(np.abs(a[keep] - b[keep_b])) < 1e-4 * np.max(np.abs(b))


def test_switch_cards_written_back():
    """write_netlist writes S/W cards and their .model; read back, the same switches (an ideal Switch has no
    card: refused by name)."""
    from netdyn.io import write_netlist
    deck = SWITCH_DECK
    again = read_netlist(write_netlist(read_netlist(deck)))
    for name in ("S1", "W1"):
        a, b = read_netlist(deck)[name], again[name]
        assert type(a) is type(b) and a.closed == b.closed
        assert (a.RON, a.ROFF, a.threshold, a.hysteresis) == (b.RON, b.ROFF, b.threshold, b.hysteresis)
    net = netdyn.Network()
    net.add(Switch("S1", "a", "0"), Resistor("R1", "a", "0", 1.0))
    with pytest.raises(netdyn.NetdynError, match="ideal Switch has no card"):
        write_netlist(net)
