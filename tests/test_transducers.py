"""Transducers: DC motor against its closed-form step response, power balance, connection checks."""
import numpy as np
import pytest

import netdyn
from netdyn.components.electrical import Resistor, VoltageSource
from netdyn.components.rotational import Inertia, RotationalDamper
from netdyn.components.transducers import DCMotor, ElectrostaticTransducer, MovingCoil, Solenoid
from netdyn.components.translational import Damper, Mass, Spring

R, L, K, J, B, V = 2.0, 0.05, 0.1, 0.01, 0.001, 12.0


def motor_network(with_parts=False):
    net = netdyn.Network("motor")
    if with_parts:  # rotor inertia and friction inside the motor element
        net.add(VoltageSource("V1", "p", "0", V), DCMotor("M1", "p", "0", "shaft", R=R, L=L, K=K, J=J, B=B))
    else:
        net.add(VoltageSource("V1", "p", "0", V), DCMotor("M1", "p", "0", "shaft", R=R, L=L, K=K),
                Inertia("J1", "shaft", J=J), RotationalDamper("B1", "shaft", "0", c=B))
    return net


def closed_form(tt):
    """L i' = V - R i - K w, J w' = K i - B w from rest: two real poles p1, p2."""
    a, b, c = L * J, R * J + L * B, R * B + K * K
    disc = np.sqrt(b * b - 4 * a * c)
    p1, p2 = (-b + disc) / (2 * a), (-b - disc) / (2 * a)
    w_inf = K * V / c
    w = w_inf * (1 + (p2 * np.exp(p1 * tt) - p1 * np.exp(p2 * tt)) / (p1 - p2))
    dw = w_inf * p1 * p2 * (np.exp(p1 * tt) - np.exp(p2 * tt)) / (p1 - p2)
    i = (J * dw + B * w) / K
    return w, i


@pytest.mark.parametrize("with_parts", [False, True])
def test_dc_motor_step_response_matches_closed_form(with_parts):
    sol = netdyn.simulate(motor_network(with_parts), (0, 1.0))
    w, i = closed_form(sol.t)
    assert np.max(np.abs(sol.angular_velocity("shaft") - w)) < 1e-6 * np.max(w)
    assert np.max(np.abs(sol.current("M1") - i)) < 1e-6 * np.max(np.abs(i))
    assert sol.power_balance()["relative"] < 1e-7


def test_moving_coil_force_and_back_emf_signs():
    # a coil on a mass, driven by a voltage through R: force = Bl i pushes the mass to +x,
    # steady velocity u = V/Bl when nothing resists the motion (back-emf cancels V)
    Bl, m = 2.0, 0.1
    net = netdyn.Network()
    net.add(VoltageSource("V1", "p", "0", 4.0), Resistor("R1", "p", "c", 1.0), MovingCoil("coil", "c", "0", "x", Bl=Bl),
            Mass("m", "x", m=m))
    sol = netdyn.simulate(net, (0, 1.0))
    tau = m * 1.0 / Bl**2
    u = sol.velocity("x")
    assert np.max(np.abs(u - 4.0 / Bl * (1 - np.exp(-sol.t / tau)))) < 1e-6
    assert np.allclose(sol.current("coil"), (4.0 - Bl * u) / 1.0, atol=1e-6)


def test_electrostatic_and_solenoid_forces_from_energy():
    # static check of the forces: a clamped charge / current, force = derivative of the (co)energy
    import sympy as sp
    from netdyn.components.base import ACROSS, THROUGH, PortVariables
    q, i, x, u = sp.symbols("q i x u")
    es = ElectrostaticTransducer("E", "a", "0", "n", C=lambda x: 3 / (2 - x))
    c = es.contribute([PortVariables(THROUGH, q, i), PortVariables(ACROSS, x, u)], {})
    assert sp.simplify(-sp.diff(c.V, x) - q**2 / 6) == 0  # q² C'/(2C²): pulls towards larger C (x -> 2)
    so = Solenoid("S", "a", "0", "n", L=lambda x: 1 + x**2)
    c = so.contribute([PortVariables(THROUGH, q, i), PortVariables(ACROSS, x, u)], {})
    assert sp.simplify(sp.diff(c.T, x) - i**2 * x) == 0


def test_unconnected_transducer_port_is_an_error():
    net = netdyn.Network()
    net.add(VoltageSource("V1", "p", "0", 1.0), Resistor("R1", "p", "c", 1.0), MovingCoil("coil", "c", "0", "cone", Bl=1))
    with pytest.raises(netdyn.TopologyError, match=r"coil: its translational port is unconnected.*'cone'"):
        net.model()
    net2 = netdyn.Network()
    net2.add(DCMotor("M1", "p", "0", "shaft", R=1, L=1, K=1), Inertia("J1", "shaft", J=1))
    with pytest.raises(netdyn.TopologyError, match=r"M1: its electrical port is unconnected"):
        net2.model()


def test_motor_needs_charge_coordinates():
    with pytest.raises(netdyn.ElementError, match="M1: the armature needs charge coordinates"):
        motor_network().model(formulation={"electrical": "node"})


def test_motor_through_a_gear_reaches_the_closed_form_speed():
    from netdyn.components.rotational import Gear
    n, BL = 0.25, 0.02
    net = netdyn.Network()
    net.add(VoltageSource("V1", "p", "0", V), DCMotor("M1", "p", "0", "shaft", R=R, L=L, K=K, J=J),
            Gear("G1", "shaft", "load", n), Inertia("JL", "load", J=0.05), RotationalDamper("BL", "load", "0", c=BL))
    lin = netdyn.linearize(net, inputs=["V1"], outputs=["v(JL)"], u={"V1": 0})
    w_motor = K * V / (R * n * n * BL + K * K)  # K i = n² B_L ω, V = R i + K ω
    assert float(lin.static_gain()[0, 0]) * V == pytest.approx(n * w_motor, rel=1e-10)
    sol = netdyn.simulate(net, (0, 2.0))
    assert np.allclose(sol.angular_velocity("load"), n * sol.angular_velocity("shaft"), atol=1e-9)


@pytest.mark.parametrize("element", ["electrostatic", "solenoid"])
def test_modulated_storage_in_charge_and_flux_coordinates_agree(element):
    def build():
        net = netdyn.Network()
        if element == "electrostatic":
            tr = ElectrostaticTransducer("T1", "p", "0", "x", C=lambda x: 1.0 / (2.0 - x))
        else:
            tr = Solenoid("T1", "p", "0", "x", L=lambda x: 1.0 + 0.5 * x**2)
        net.add(VoltageSource("V1", "s", "0", 1.0), Resistor("R1", "s", "p", 0.5), tr, Mass("m", "x", m=1.0),
                Spring("k", "x", "0", k=4.0), Damper("c", "x", "0", c=0.3))
        return net
    loop = netdyn.simulate(build(), (0, 3), q0={"x_x": 0.2})
    node = netdyn.simulate(build(), (0, 3), q0={"x_x": 0.2}, formulation={"electrical": "node"})
    assert np.max(np.abs(loop.velocity("x") - node.velocity("x"))) < 1e-6
    assert np.max(np.abs(loop.current("R1") - node.current("R1"))) < 1e-6
    assert np.ptp(loop.velocity("x")) > 0.01  # the coupling really moves the mass
