"""Circuits that are DAEs of index two in some formulation, in every formulation, against closed forms.

Loops of voltage sources and capacitors, cut-sets of current sources and
inductors, parallel capacitors, series inductors and a source driving a node
nothing else touches are valid circuits; each is simulated in the default
formulation and in ``branch``, ``loop`` and ``node`` and held against its
closed form, including the instant jump onto a consistent state at t = 0
(charge conserved at every node) and currents that need the sources'
derivatives (a capacitor across a sine supply carries ``C v'(t)``). Only truly
singular circuits — a loop of voltage sources alone, a cut-set of current
sources alone — are errors, and they name the elements.
"""
import numpy as np
import pytest

import netdyn
from netdyn.components.electrical import Capacitor, CurrentSource, Inductor, Resistor, VoltageSource
from netdyn.errors import TopologyError
from netdyn.lagrange.sources import sine

FORMS = (None, "branch", "loop", "node")
TOL = 1e-6


def run(elements, tstop, form, n=201):
    net = netdyn.Network("case")
    net.add(*elements)
    sol = netdyn.simulate(net, (0.0, tstop), t_eval=np.linspace(0.0, tstop, n), formulation=form)
    assert sol.method == "linear"
    return sol


def close(a, b, tol=TOL):
    a, b = np.asarray(a, float), np.asarray(b, float)
    err = np.max(np.abs(a - b)) / max(np.max(np.abs(b)), 1e-300)
    assert err < tol, err


@pytest.mark.parametrize("form", FORMS)
def test_decoupling_capacitor_across_a_sine_supply(form):
    A, w, R, C1, C2 = 2.0, 2 * np.pi * 500, 100.0, 1e-6, 2e-6
    tau = R * C2
    sol = run([VoltageSource("V1", "a", "0", sine(0, A, w / (2 * np.pi))), Capacitor("C1", "a", "0", C1),
               Resistor("R1", "a", "b", R), Capacitor("C2", "b", "0", C2)], 4e-3, form)
    t = sol.t
    vb = A / (1 + (w * tau) ** 2) * (np.sin(w * t) - w * tau * np.cos(w * t) + w * tau * np.exp(-t / tau))
    close(sol.voltage("b"), vb)
    close(sol.current("C1"), C1 * A * w * np.cos(w * t))  # the source's derivative, not differences
    close(sol.current("V1"), -(C1 * A * w * np.cos(w * t) + (A * np.sin(w * t) - vb) / R))
    assert sol.power_balance()["relative"] < 1e-7


@pytest.mark.parametrize("form", FORMS)
def test_source_in_series_with_a_capacitor_loop(form):
    V, C1, C2, R1, R2 = 3.0, 1e-6, 3e-6, 200.0, 500.0
    sol = run([VoltageSource("V1", "a", "b", V), Capacitor("C1", "a", "0", C1), Capacitor("C2", "b", "0", C2),
               Resistor("R1", "a", "0", R1), Resistor("R2", "b", "0", R2)], 2e-3, form)
    v0 = -V * C1 / (C1 + C2)  # charge Q = V C1 C2/(C1 + C2) moved through the source at t = 0
    vinf = -V * R2 / (R1 + R2)
    tau = (C1 + C2) * R1 * R2 / (R1 + R2)
    vb = vinf + (v0 - vinf) * np.exp(-sol.t / tau)
    close(sol.voltage("b"), vb)
    close(sol.voltage("a"), vb + V)
    assert abs(C1 * sol.voltage("a")[0] + C2 * sol.voltage("b")[0]) < 1e-12  # charge conserved at t = 0
    assert sol.power_balance()["relative"] < 1e-7


@pytest.mark.parametrize("form", FORMS)
def test_parallel_capacitors(form):
    V, R, C1, C2 = 1.0, 10.0, 1e-3, 2e-3
    sol = run([VoltageSource("V1", "a", "0", V), Resistor("R1", "a", "b", R), Capacitor("C1", "b", "0", C1),
               Capacitor("C2", "b", "0", C2)], 0.1, form)
    tau = R * (C1 + C2)
    close(sol.voltage("b"), V * (1 - np.exp(-sol.t / tau)))
    close(sol.current("C1"), C1 / tau * V * np.exp(-sol.t / tau))
    close(sol.current("C2"), C2 / tau * V * np.exp(-sol.t / tau))


@pytest.mark.parametrize("form", FORMS)
def test_series_inductors(form):
    V, L1, L2, R = 1.0, 1e-2, 2e-2, 10.0
    sol = run([VoltageSource("V1", "a", "0", V), Inductor("L1", "a", "b", L1), Inductor("L2", "b", "c", L2),
               Resistor("R1", "c", "0", R)], 0.01, form)
    tau = (L1 + L2) / R
    i = V / R * (1 - np.exp(-sol.t / tau))
    close(sol.current("L1"), i)
    close(sol.current("L2"), i)
    close(sol.voltage("b"), V - L1 * V / (L1 + L2) * np.exp(-sol.t / tau))  # node between the inductors


@pytest.mark.parametrize("form", FORMS)
def test_current_source_in_series_with_an_inductor(form):
    I0, f, L, R = 0.5, 200.0, 1e-2, 10.0
    w = 2 * np.pi * f
    sol = run([CurrentSource("I1", "0", "a", sine(0, I0, f)), Inductor("L1", "a", "b", L), Resistor("R1", "b", "0", R)],
              0.01, form)
    t = sol.t
    close(sol.current("L1"), I0 * np.sin(w * t))
    close(sol.voltage("b"), R * I0 * np.sin(w * t))
    close(sol.voltage("a"), R * I0 * np.sin(w * t) + L * I0 * w * np.cos(w * t))


@pytest.mark.parametrize("form", FORMS)
def test_series_inductors_with_a_current_source_conserve_flux(form):
    """Inductors whose currents a current source fixes jump onto it at t = 0 (here from rest: both carry I)."""
    I, L1, L2, R = 0.2, 1e-3, 4e-3, 50.0
    sol = run([CurrentSource("I1", "0", "a", I), Inductor("L1", "a", "b", L1), Inductor("L2", "b", "c", L2),
               Resistor("R1", "c", "0", R), Resistor("R2", "a", "0", 1e3)], 1e-3, form)
    i = I * 1e3 / (1e3 + R) * (1 - np.exp(-sol.t * (1e3 + R) / (L1 + L2)))
    close(sol.current("L2"), i)
    close(sol.current("L1"), i)


@pytest.mark.parametrize("form", FORMS)
def test_source_driving_a_node_nothing_else_touches(form):
    sol = run([VoltageSource("V1", "a", "0", 2.0), VoltageSource("V2", "b", "0", sine(1, 1, 100)),
               Resistor("R1", "b", "0", 5.0)], 0.01, form)
    close(sol.voltage("a"), np.full(sol.t.size, 2.0))
    assert np.max(np.abs(sol.current("V1"))) < 1e-12
    close(sol.current("V2"), -(1 + np.sin(2 * np.pi * 100 * sol.t)) / 5.0)


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("elements, names", [
    ([VoltageSource("V1", "a", "0", 1.0), VoltageSource("V2", "a", "0", 2.0), Resistor("R1", "a", "0", 1.0)],
     ("V1", "V2")),
    ([VoltageSource("V1", "a", "0", 1.0), VoltageSource("V2", "a", "0", 1.0), Resistor("R1", "a", "0", 1.0)],
     ("V1", "V2")),
    ([CurrentSource("I1", "0", "a", 1.0), CurrentSource("I2", "a", "b", 1.0), Resistor("R1", "b", "0", 1.0)],
     ("I1",)),
])
def test_truly_singular_circuits_name_the_elements(form, elements, names):
    net = netdyn.Network("singular")
    net.add(*elements)
    with pytest.raises(TopologyError) as err:
        netdyn.simulate(net, (0, 1e-3), formulation=form)
    for nm in names:
        assert nm in str(err.value)


@pytest.mark.parametrize("form", FORMS)
def test_power_balance_is_integrated_with_the_solution(form):
    """The fast path carries the dissipated and supplied energy (Radau stage quadrature): the balance closes
    to the integrator's accuracy, where a quadrature over the 201 output points left ~1e-5."""
    from netdyn.lagrange.sources import pulse
    net = netdyn.Network("rlc")
    net.add(VoltageSource("V1", "in", "0", pulse(0, 1, 1e-4, 1e-5, 1e-5, 3e-4, 1e-3)), Resistor("R1", "in", "a", 10.0),
            Inductor("L1", "a", "out", 1e-3), Capacitor("C1", "out", "0", 1e-6), Capacitor("C2", "in", "0", 1e-6))
    sol = netdyn.simulate(net, (0, 2e-3), t_eval=np.linspace(0, 2e-3, 201), formulation=form)
    assert sol.method == "linear" and sol.work is not None
    pb = sol.power_balance()
    assert pb["relative"] < 1e-9
    # the dissipated energy equals the resistor's ∫ R i² (output-point quadrature, to its own accuracy)
    i = sol.current("R1")
    from scipy.integrate import simpson
    assert abs(pb["dissipated"][-1] - simpson(10.0 * i**2, x=sol.t)) < 1e-2 * pb["dissipated"][-1]
