"""compare(), analogy() and analog(): analogous pairs, non-analogous pairs, poles of analogues."""
import numpy as np
import pytest
import sympy as sp

import netdyn
from netdyn.components.electrical import Capacitor, CurrentSource, Inductor, Resistor, VoltageSource
from netdyn.components.translational import Damper, Force, Mass, Spring


def rlc(R=1.0, L=0.5, C=0.02):
    net = netdyn.Network("RLC")
    net.add(VoltageSource("V1", "a", "0", 1), Resistor("R1", "a", "b", R), Inductor("L1", "b", "c", L),
            Capacitor("C1", "c", "0", C))
    return net


def msd(m=0.5, c=1.0, k=50.0):
    net = netdyn.Network("MSD")
    net.add(Mass("m", "x", m=m), Damper("c", "x", "0", c=c), Spring("k", "x", "0", k=k), Force("F", "x", 1))
    return net


def test_compare_series_rlc_with_mass_spring_damper():
    R, L, C = 1.0, 0.5, 0.02
    cmp = netdyn.compare(rlc(R, L, C), msd(L, R, 1 / C))
    assert cmp.analogy.analogous
    assert cmp.analogy.coordinates == {"q_L1": "x_x"}
    assert {k: str(v) for k, v in cmp.analogy.parameters.items()} == {"L1": "m", "R1": "c", "C1": "1/k", "V1": "F"}
    text = str(cmp)
    assert "C1 ↔ 1/k" in text and "natural frequencies" in text
    wn = 1 / np.sqrt(L * C)
    a, b = cmp.linear
    assert a.natural_frequencies() == pytest.approx([wn]) and b.natural_frequencies() == pytest.approx([wn])
    assert a.damping_ratios() == pytest.approx([R / 2 * np.sqrt(C / L)])
    # same input, same response: the charge of the RLC and the position of the mass (closed form C = 1/k)
    assert np.allclose(cmp.responses[0], cmp.responses[1], atol=1e-12)
    zeta = R / 2 * np.sqrt(C / L)
    wd = wn * np.sqrt(1 - zeta**2)
    tt = cmp.t
    closed = C * (1 - np.exp(-zeta * wn * tt) * (np.cos(wd * tt) + zeta / np.sqrt(1 - zeta**2) * np.sin(wd * tt)))
    assert np.allclose(cmp.responses[0], closed, atol=1e-9)


def test_compare_figure(tmp_path):
    path = tmp_path / "cmp.png"
    netdyn.compare(rlc(), msd()).plot(path)
    assert path.stat().st_size > 10_000


def test_not_analogous_pairs_say_why():
    ms = netdyn.Network("MS")
    ms.add(Mass("m", "x", m=0.5), Spring("k", "x", "0", k=50), Force("F", "x", 1))
    r = netdyn.analogy(rlc(), ms)
    assert not r and "damping matrices differ" in r.reason
    two = netdyn.Network("2 dof")
    two.add(Mass("m1", "x1", m=1), Spring("k1", "x1", "x2", k=1), Mass("m2", "x2", m=1), Damper("c", "x2", "0", c=1),
            Force("F", "x1", 1))
    r = netdyn.analogy(rlc(), two)
    assert not r and "degrees of freedom" in r.reason
    assert "not analogous" in str(netdyn.compare(rlc(), two, outputs=("q_L1", "x_x1")))


def test_parallel_rlc_is_the_force_current_analogue():
    par = netdyn.Network("parallel RLC")
    par.add(CurrentSource("I1", "0", "a", 1), Resistor("R1", "a", "0", 2), Inductor("L1", "a", "0", 0.1),
            Capacitor("C1", "a", "0", 0.5))
    r = netdyn.analogy(par, msd())
    assert r and {k: str(v) for k, v in r.parameters.items()} == {"C1": "m", "R1": "1/c", "L1": "1/k", "I1": "F"}


@pytest.mark.parametrize("kind", ["force-current", "force-voltage"])
def test_analog_networks_have_the_same_poles_and_convert_back(kind):
    mech = msd(2.0, 0.4, 8.0)
    elec = netdyn.analog(mech, kind)
    assert set(elec.domains) == {"electrical"}
    out = "v(m)" if kind == "force-current" else "i(m)"  # velocity of the mass ↔ voltage / current
    p_mech = netdyn.linearize(mech, inputs=["F"], outputs=["x_x_dot"], u={"F": 0}).poles()
    lin_e = netdyn.linearize(elec, inputs=["F"], outputs=[out], u={"F": 0})
    assert np.allclose(lin_e.poles(), p_mech, atol=1e-12)
    assert np.allclose(np.sort_complex(p_mech), np.sort_complex(np.roots([2.0, 0.4, 8.0])), atol=1e-12)
    # the same velocity response to the force, up to the sign of the port orientation
    tt = np.linspace(0, 5, 50)
    y_m = netdyn.linearize(mech, inputs=["F"], outputs=["x_x_dot"], u={"F": 0}).step(tt)[0]
    assert np.allclose(np.abs(lin_e.step(tt)[0]), np.abs(y_m), atol=1e-12)
    back = netdyn.analog(elec, kind)
    assert sorted(type(e).__name__ for e in back.elements.values()) == ["Damper", "Force", "Mass", "Spring"]
    assert float(back["k"].values["k"]) == pytest.approx(8.0) and float(back["c"].values["c"]) == pytest.approx(0.4)


def test_rlc_and_its_mechanical_analogue_have_the_same_poles():
    net = rlc()
    mech = netdyn.analog(net, "force-voltage")
    assert float(mech["L1"].values["m"]) == pytest.approx(0.5)
    p_e = netdyn.linearize(net, inputs=["V1"], outputs=["v(C1)"], u={"V1": 0}).poles()
    p_m = netdyn.linearize(mech, inputs=["V1"], outputs=[mech.model().coordinate_names[0]], u={"V1": 0}).poles()
    assert np.allclose(p_e, p_m, atol=1e-12)
    assert netdyn.analogy(net, mech)


def test_analog_bad_input():
    floating = netdyn.Network("floating C")
    floating.add(VoltageSource("V1", "a", "0", 1), Capacitor("C1", "a", "b", 1), Resistor("R1", "b", "0", 1))
    with pytest.raises(netdyn.ElementError, match="C1 lies between nodes 'a' and 'b'"):
        netdyn.analog(floating, "force-current")
    with pytest.raises(netdyn.ModelError, match="unknown analogy"):
        netdyn.analog(rlc(), "force-flux")
