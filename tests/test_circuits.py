"""Circuits and 1-D mechanical networks against closed forms, energy balance and each other."""
import numpy as np
import pytest
import sympy as sp

import netdyn
from netdyn.components.electrical import (Capacitor, CoupledInductors, CurrentSource, IdealTransformer, Inductor,
                                          MutualInductance, Resistor, VoltageSource)
from netdyn.components.rotational import Gear, Inertia, RotationalDamper, Torque
from netdyn.components.translational import Damper, Force, Mass, Spring

from systems import series_rlc


def rlc_step_current(tt, R, L, C, V):
    a, w0 = R / (2 * L), 1 / np.sqrt(L * C)
    wd = np.sqrt(w0**2 - a**2)
    return V / (wd * L) * np.exp(-a * tt) * np.sin(wd * tt)


@pytest.mark.parametrize("form", ["loop", "branch", "node"])
def test_series_rlc_step_response_closed_form(form):
    R, L, C, V = 2.0, 0.5, 0.02, 1.0
    te = np.linspace(0, 2, 401)
    sol = netdyn.simulate(series_rlc(R, L, C, V).model(formulation=form), (0, 2), t_eval=te)
    i = rlc_step_current(te, R, L, C, V)
    assert np.max(np.abs(sol.current("L1") - i)) < 1e-6 * np.max(np.abs(i))
    assert np.max(np.abs(sol.current("V1") + i)) < 1e-6 * np.max(np.abs(i))  # SPICE sign: plus to minus inside
    assert np.max(np.abs(sol.voltage("R1") - R * i)) < 1e-6 * R * np.max(np.abs(i))
    assert sol.power_balance()["relative"] < 1e-6


def test_rc_charging_uses_the_dae_integrator():
    net = netdyn.Network("RC")
    net.add(VoltageSource("V1", "in", "0", 5.0), Resistor("R1", "in", "out", 1e3), Capacitor("C1", "out", "0", 1e-6))
    te = np.linspace(0, 5e-3, 201)
    sol = netdyn.simulate(net, (0, 5e-3), t_eval=te, method="ida")  # auto would take the linear fast path
    assert sol.method == "ida"
    v = 5.0 * (1 - np.exp(-te / 1e-3))
    assert np.max(np.abs(sol.voltage("C1") - v)) < 1e-6 * 5.0
    assert np.max(np.abs(sol.voltage("out") - v)) < 1e-6 * 5.0  # node voltage vs ground
    assert sol.power_balance()["relative"] < 1e-6


def test_sign_conventions():
    """Current source pushes into its second node; voltage source sets v(plus) - v(minus)."""
    net = netdyn.Network()
    net.add(CurrentSource("I1", "0", "a", 2e-3), Resistor("R1", "a", "0", 1e3), Capacitor("C1", "a", "0", 1e-9))
    sol = netdyn.simulate(net, (0, 1e-4))
    assert abs(sol.voltage("a")[-1] - 2.0) < 1e-6 and abs(sol.current("R1")[-1] - 2e-3) < 1e-9
    assert abs(sol.current("I1")[-1] - 2e-3) < 1e-12
    net = netdyn.Network()
    net.add(VoltageSource("V1", "0", "b", 3.0), Resistor("R1", "b", "0", 1.0), Capacitor("C1", "b", "0", 1e-3))
    sol = netdyn.simulate(net, (0, 0.05), formulation="node")
    assert abs(sol.voltage("b")[-1] + 3.0) < 1e-8  # v(0) - v(b) = 3
    net = netdyn.Network()
    net.add(Mass("m", "x", 1.0), Damper("c", "x", "0", 10.0), Force("F", "x", 5.0))
    sol = netdyn.simulate(net, (0, 5))
    assert abs(sol.velocity("m")[-1] - 0.5) < 1e-6  # the force pushes +x; terminal velocity F/c


def test_rlc_and_mass_spring_damper_are_the_same_equation():
    """Force-voltage analogy: L <-> m, R <-> c, 1/C <-> k, V <-> F; charge q(t) equals position x(t)."""
    m, c, k, F = 0.5, 2.0, 50.0, 1.0
    te = np.linspace(0, 2, 201)
    rlc = netdyn.simulate(series_rlc(R=c, L=m, C=1 / k, V=F), (0, 2), t_eval=te)
    msd = netdyn.Network()
    msd.add(Mass("m", "x", m), Spring("k", "x", "0", k), Damper("c", "x", "0", c), Force("F", "x", F))
    mech = netdyn.simulate(msd, (0, 2), t_eval=te)
    q = rlc.voltage("C1") / k  # q = C v
    assert np.max(np.abs(q - mech["x_x"])) < 1e-7 * np.max(np.abs(q))
    assert np.max(np.abs(rlc.current("L1") - mech.velocity("m"))) < 1e-7


@pytest.mark.parametrize("form", ["loop", "branch"])
def test_mutual_inductance_equals_coupled_inductors(form):
    def build(coupled):
        net = netdyn.Network()
        net.add(VoltageSource("V1", "p", "0", sp.sin(1000 * netdyn.t)), Resistor("R1", "p", "a", 5.0))
        if coupled:
            net.add(CoupledInductors("T1", "a", "0", "s", "0", L1=1e-2, L2=4e-2, k=0.9))
        else:
            net.add(Inductor("L1", "a", "0", 1e-2), Inductor("L2", "s", "0", 4e-2), MutualInductance("K1", "L1", "L2", k=0.9))
        net.add(Resistor("R2", "s", "0", 50.0))
        return net
    te = np.linspace(0, 0.02, 201)
    a = netdyn.simulate(build(False).model(formulation=form), (0, 0.02), t_eval=te)
    b = netdyn.simulate(build(True).model(formulation=form), (0, 0.02), t_eval=te)
    i2 = a.current("R2")
    assert np.max(np.abs(i2 - b.current("R2"))) < 1e-7 * np.max(np.abs(i2))
    assert a.power_balance()["relative"] < 1e-6
    # L2 and R2 are in parallel: v(L2) must include the mutual term M di1/dt to equal v(R2)
    assert np.max(np.abs(a.voltage("L2") - a.voltage("R2"))) < 1e-6 * np.max(np.abs(a.voltage("R2")))


def test_coupled_inductors_in_flux_coordinates():
    def build():
        net = netdyn.Network()
        net.add(VoltageSource("V1", "p", "0", sp.sin(1000 * netdyn.t)), Resistor("R1", "p", "a", 5.0),
                CoupledInductors("T1", "a", "0", "s", "0", L1=1e-2, L2=4e-2, k=0.9), Resistor("R2", "s", "0", 50.0),
                Capacitor("Cs", "s", "0", 1e-7), Capacitor("Ca", "a", "0", 1e-7))
        return net
    te = np.linspace(0, 0.02, 201)
    node = netdyn.simulate(build().model(formulation="node"), (0, 0.02), t_eval=te)
    loop = netdyn.simulate(build().model(formulation="loop"), (0, 0.02), t_eval=te, rtol=1e-9)
    assert np.max(np.abs(node.voltage("s") - loop.voltage("s"))) < 1e-5 * np.max(np.abs(loop.voltage("s")))


def test_ideal_transformer_reflects_the_load():
    n, R = 3.0, 90.0
    net = netdyn.Network()
    net.add(VoltageSource("V1", "p", "0", 1.0), Resistor("Rs", "p", "a", 10.0), IdealTransformer("T", "a", "0", "s", "0", n),
            Resistor("RL", "s", "0", R), Capacitor("C", "a", "0", 1e-6))
    sol = netdyn.simulate(net, (0, 1e-3), method="ida")  # integrates the work with the state (power balance to 1e-6)
    # the load seen from the primary is R/n^2 = 10 ohm: a 1 V source over 10 + 10 ohm
    assert abs(sol.voltage("a")[-1] - 0.5) < 1e-6
    assert abs(sol.voltage("s")[-1] - n * 0.5) < 1e-6
    assert abs(sol.power_balance()["relative"]) < 1e-6


def test_gear_train_reflected_inertia():
    J1, J2, r, tau = 0.1, 0.4, 2.0, 1.0
    net = netdyn.Network()
    net.add(Inertia("J1", "a", J1), Inertia("J2", "b", J2), Gear("G", "a", "b", r), Torque("T", "a", tau),
            RotationalDamper("c", "b", "0", 1e-9))
    sol = netdyn.simulate(net, (0, 1))
    alpha = tau / (J1 + r**2 * J2)
    assert abs(sol["theta_a"][-1] - alpha / 2) < 1e-6
    assert abs(sol["theta_b"][-1] - r * alpha / 2) < 1e-6


def test_nonlinear_energy_elements_conserve_energy():
    net = netdyn.Network()
    net.add(Mass("m", "x", 1.0), Spring("k", "x", "0", energy=lambda x: x**4 / 4 + x**2 / 2))
    sol = netdyn.simulate(net, (0, 10), q0={"x_x": 1.5})
    E = sol.energy()
    assert np.max(np.abs(E - E[0])) < 1e-7 * E[0] and abs(E[0] - (1.5**4 / 4 + 1.5**2 / 2)) < 1e-12
    net = netdyn.Network()
    net.add(VoltageSource("V", "a", "0", sp.sin(netdyn.t)), Resistor("D1", "a", "b", dissipation=lambda i: i**4 / 4),
            Inductor("L", "b", "0", 1.0))
    sol = netdyn.simulate(net, (0, 5))
    assert sol.power_balance()["relative"] < 1e-6
    assert np.allclose(sol.voltage("D1"), sol.current("D1")**3, atol=1e-7)
