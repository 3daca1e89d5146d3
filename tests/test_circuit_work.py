"""The circuit path's work integrals, carried with the BDF steps element by element (netdyn.numerics.circuit.energy.circuit_work)."""
import numpy as np
import pytest
import sympy as sp
from scipy.integrate import cumulative_simpson

import netdyn
from netdyn.components.diode import Diode, junction_charge, junction_coenergy
from netdyn.components.electrical import Capacitor, Resistor, VoltageSource
from netdyn.lagrange.sources import sine
from netdyn.numerics.circuit.nonlinearsim import simulate_circuit
from netdyn.numerics.circuit.operating_point import spice_initial_state

from test_controlled_node import MIRROR
from test_devices import RECTIFIERS, diode_ladder

# a current-controlled voltage source (H, sensing the 0 V ammeter Vs) driving a diode rectifier
H_RECTIFIER = MIRROR.replace("F1 0 out Vs 2\nR2 out 0 500\nC1 out 0 1u\n",
                             "H1 h 0 Vs 3k\nD1 h k DX\nR2 k 0 500\nC1 k 0 1u\n.model DX D(IS=1e-14 N=1 RS=2)\n"
                             ) + ".tran 10u 2m\n"


def _rectifier(**diode):
    net = netdyn.Network()
    net.add(VoltageSource("V1", "a", "0", sine(0, 5, 1e3)), Resistor("R1", "a", "b", 100.0),
            Diode("D1", "b", "d", **diode), Capacitor("C1", "d", "0", 10e-6), Resistor("RL", "d", "0", 1e3))
    return net


@pytest.mark.parametrize("deck, rtol", [(RECTIFIERS["half-wave rectifier"][0], 1e-12), (diode_ladder(6), 1e-10),
                                        (H_RECTIFIER, 1e-12)], ids=["half-wave", "ladder", "H-into-diode"])
def test_power_balance_closes_with_201_outputs(deck, rtol):
    """Stored energy change + dissipated = supplied to 1e-6 of the energies at 201 output times: the work is
    integrated on every step, not over the outputs (the residual is the BDF's own error)."""
    net = netdyn.read_netlist(deck)
    tstop = net.tran.tstop
    q0, f0 = spice_initial_state(net)  # from the DC operating point, as netdyn.simulate starts a netlist
    # netdyn.simulate runs the circuit path at rtol 1e-7 by default (CIRCUIT_RTOL), where the half-wave's balance is 3.0e-6
    # (4.8e-4 while the diode's internal node took its voltage from the states' interpolant; docs/spice.md)
    sol = simulate_circuit(net, (0, tstop), q0, f0, t_eval=np.linspace(0, tstop, 201), rtol=rtol)
    assert sol.work is not None
    pb = sol.power_balance()
    assert pb["relative"] < 1e-6
    E = sol.energy()
    assert np.allclose(E - E[0] + pb["dissipated"], pb["supplied"], rtol=0, atol=1e-6 * np.max(pb["supplied"]))
    # the totals are the elements' channels summed; every resistor and diode dissipates, only V1 supplies
    per = sol.element_work
    assert sum(d["dissipated"][-1] for d in per.values() if "dissipated" in d) == pytest.approx(pb["dissipated"][-1], rel=1e-12)
    assert all(d["dissipated"][-1] > 0 for k, d in per.items() if k[0] in "RD")
    if "H1" not in per:  # independent sources only: V1 is the one that supplies
        assert set(k for k, d in per.items() if "supplied" in d) == {"V1"}


def test_resistor_work_equals_the_dense_quadrature_of_its_power():
    """A resistor's carried dissipation against Simpson's rule over 20,001 output times of its v²/R."""
    T = np.linspace(0, 2e-3, 20001)
    sol = simulate_circuit(_rectifier(RS=2.0), (0, 2e-3), t_eval=T, rtol=1e-9)
    vd = sol.voltage("d")
    assert sol.element_work["RL"]["dissipated"][-1] == pytest.approx(cumulative_simpson(vd ** 2 / 1e3, x=T)[-1],
                                                                      rel=1e-7)
    i = sol.current("R1")
    assert sol.element_work["V1"]["supplied"][-1] == pytest.approx(
        cumulative_simpson(sol.voltage("a") * i, x=T)[-1], rel=1e-7)


def test_every_stepper_carries_the_same_work():
    """The compiled loop, the compiled step by step, numpy's chord Newton and the reference path: the same
    steps, the same work (junction charge included) to 1e-7 of the energy that went through (the Newton
    iterations differ: 1e-10)."""
    net = _rectifier(RS=2.0, CJO=1e-11, TT=1e-9)
    T = np.linspace(0, 1e-3, 21)
    runs = [simulate_circuit(net, (0, 1e-3), t_eval=T, **kw)
            for kw in ({}, {"progress": lambda tt: None}, {"compiled": False}, {"reference": True})]
    assert [r.circuit_stepper for r in runs] == ["compiled loop", "compiled", "numpy", "reference"]
    base = runs[0].element_work
    scale = np.max(base["V1"]["supplied"])  # the energy that went through: the junction stores 1e-6 of it
    assert set(base) == {"V1", "R1", "D1", "RL"} and "junction" in base["D1"]
    for r in runs[1:]:
        for name, kinds in base.items():
            for kind, w in kinds.items():
                assert np.allclose(r.element_work[name][kind], w, rtol=1e-7, atol=1e-7 * scale), \
                    (r.circuit_stepper, name, kind)


def test_work_counts_from_the_first_output_and_can_be_switched_off():
    net = _rectifier()
    full = simulate_circuit(net, (0, 1e-3), t_eval=np.linspace(0, 1e-3, 11))
    late = simulate_circuit(net, (0, 1e-3), t_eval=np.linspace(0.5e-3, 1e-3, 6))
    assert late.work["supplied"][0] == 0.0
    assert late.work["supplied"][-1] == pytest.approx(full.work["supplied"][-1] - full.work["supplied"][5], rel=1e-9)
    off = simulate_circuit(net, (0, 1e-3), t_eval=np.linspace(0, 1e-3, 11), work=False)
    assert off.work is None and off.element_work is None


def test_balance_does_not_depend_on_the_output_times():
    """The same tolerance, 201 or 2,001 output times: the same balance (a quadrature over the outputs would
    gain two orders of magnitude with ten times the points)."""
    net = netdyn.read_netlist(RECTIFIERS["half-wave rectifier"][0])
    q0, f0 = spice_initial_state(net)
    rel = [simulate_circuit(net, (0, 3e-3), q0, f0, t_eval=np.linspace(0, 3e-3, n), rtol=1e-10)
           .power_balance()["relative"] for n in (201, 2001)]
    assert rel[0] < 1e-5 and rel[1] < 1e-5 and rel[1] / rel[0] > 0.5


def test_junction_work_behind_a_series_resistance_is_the_junction_energy():
    """A diode with RS, CJO and TT rectifying a SIN through R: its junction sits on an internal node without
    capacitance, whose voltage is the rate of its flux. The junction work the transient carries equals, at
    every output time, the closed-form change of the junction's energy ``v Q(v) − T*(v)`` (Legendre, from
    the diode's co-energy) and a trapezoid quadrature of ``∫ v dQ`` over 4,001 outputs (the rates of the
    states' interpolant, not of the steps' rates, made it 11 % high here)."""
    T = np.linspace(0, 2e-3, 4001)
    net = _rectifier(RS=2.0, CJO=1e-11, TT=1e-9)
    sol = simulate_circuit(net, (0, 2e-3), t_eval=T, rtol=1e-9)
    combo = sol.linear.ports["D1"][-1][1]                   # the junction: the diode's last port
    vj = sum(c * sol.f[i] for i, c in combo.items())
    values = net.elements["D1"].numeric_values()
    Q, _ = junction_charge(vj, values)
    v = sp.Symbol("v")
    coenergy = np.vectorize(sp.lambdify(v, junction_coenergy(v, values), "numpy"))
    closed = vj * Q - coenergy(vj)
    closed -= closed[0]
    quad = np.r_[0.0, np.cumsum(0.5 * (vj[1:] + vj[:-1]) * np.diff(Q))]
    W = sol.element_work["D1"]["junction"]
    scale = np.max(np.abs(closed))
    assert scale > 1e-12                                   # pJ: the junction does store energy
    assert np.max(np.abs(W - closed)) < 1e-8 * scale
    assert np.max(np.abs(W - quad)) < 1e-5 * scale
    assert sol.power_balance()["relative"] < 1e-6


def test_simulate_honours_a_given_rtol_on_the_circuit_path():
    """``netdyn.simulate`` hands the circuit path its own default (1e-7) only when no ``rtol`` is given: a given
    one is honoured both ways (a floor once dropped a user's 1e-9 silently), and tighter means closer to the
    converged answer."""
    T = np.linspace(0, 2e-3, 201)
    ref = simulate_circuit(_rectifier(RS=2.0), (0, 2e-3), t_eval=T, rtol=1e-11).voltage("d")
    err = {rtol: np.max(np.abs(netdyn.simulate(_rectifier(RS=2.0), (0, 2e-3), t_eval=T, rtol=rtol).voltage("d") - ref))
           for rtol in (None, 1e-6, 1e-9)}
    assert err[1e-9] < 0.1 * err[None] < 0.1 * err[1e-6]
