"""Branch, loop and node formulations of the same network give the same trajectories,
and the network-built Example 4.4 matches the book's hand-typed model."""
import numpy as np
import pytest
import sympy as sp

import netdyn
from netdyn.graph import topology
from netdyn.components.electrical import Capacitor, Inductor, Resistor, VoltageSource
from netdyn.components.translational import Damper, Force, Mass, Spring

from test_book_examples import rlc_network_by_hand

SOURCE = sp.sin(2 * sp.pi * 50 * netdyn.t)
VALUES = {"L1": 0.1, "L2": 0.2, "C1": 1e-4, "C2": 2e-4, "R1": 10.0}


def example_4_4_network():
    """The book's Example 4.4 drawn as a network, oriented as its branch charges q1..q6."""
    net = netdyn.Network("example 4.4")
    net.add(VoltageSource("V", "A", "0", SOURCE), Inductor("L1", "A", "B", VALUES["L1"]),
            Capacitor("C1", "0", "B", VALUES["C1"]), Inductor("L2", "B", "C", VALUES["L2"]),
            Capacitor("C2", "0", "C", VALUES["C2"]), Resistor("R1", "0", "C", VALUES["R1"]))
    return net


TE = np.linspace(0, 0.1, 401)


@pytest.fixture(scope="module")
def solutions():
    return {form: netdyn.simulate(example_4_4_network().model(formulation=form), (0, 0.1), t_eval=TE, rtol=1e-10)
            for form in ("branch", "loop", "node")}


def test_branch_formulation_has_the_books_structure():
    model = example_4_4_network().model(formulation="branch")
    assert len(model.coordinates) == 6 and len(model.flow_constraints) == 3 and not model.constraints
    assert topology.independent_loop_count(example_4_4_network().graph) == 3  # n = B - N + 1


def test_branch_model_equals_hand_typed_equations():
    """Same equations symbolically, once element values are symbols named as in the book."""
    model = example_4_4_network().model(formulation="branch", symbolic=True)
    hand, q, (L1, L2, C1, C2, R1), v = rlc_network_by_hand()
    rename = {sp.Symbol(k): s for k, s in zip(["L1", "L2", "C1", "C2", "R1"], [L1, L2, C1, C2, R1])}
    coords = dict(zip(model.coordinates, q))
    sub = {**{c.diff(netdyn.t, 2): h.diff(netdyn.t, 2) for c, h in coords.items()},
           **{c.diff(netdyn.t): h.diff(netdyn.t) for c, h in coords.items()}}
    mult = dict(zip(model.multipliers, hand.multipliers))
    derived = [e.xreplace(sub).xreplace(coords).xreplace(mult).xreplace(rename).subs(sp.Symbol("V"), 1)
               for e in model.equations()]
    printed = [e.subs(sp.Function("v")(netdyn.t), SOURCE) for e in hand.equations()]
    for k, (d, p) in enumerate(zip(derived, printed)):
        assert sp.simplify(d - p) == 0, (k, d, p)


def test_network_matches_hand_typed_trajectories(solutions):
    hand, q, syms, v = rlc_network_by_hand()
    params = {str(s): VALUES[str(s)] for s in syms}
    params["v"] = SOURCE
    ref = netdyn.simulate(hand, (0, 0.1), t_eval=TE, params=params, rtol=1e-10)
    sol = solutions["branch"]
    for mine, theirs in [("q_L1", "q2"), ("q_C1", "q3"), ("q_L2", "q4"), ("q_C2", "q5"), ("q_R1", "q6")]:
        a, b = sol[mine], ref[theirs]
        assert np.max(np.abs(a - b)) <= 1e-7 * np.max(np.abs(b)), mine


@pytest.mark.parametrize("form", ["loop", "node"])
def test_three_formulations_agree(solutions, form):
    ref, sol = solutions["branch"], solutions[form]
    for name in ["L1", "L2", "C1", "C2", "R1", "V"]:
        for quantity in (sol.current, sol.voltage):
            a, b = quantity(name), (ref.current if quantity == sol.current else ref.voltage)(name)
            assert np.max(np.abs(a - b)) <= 1e-6 * np.max(np.abs(b)) + 1e-12, (form, name)


@pytest.mark.parametrize("form", ["branch", "loop", "node"])
def test_energy_balance(solutions, form):
    assert solutions[form].power_balance()["relative"] < 1e-6


def mass_spring_damper(m=2.0, k=50.0, c=1.5, F=1.0):
    net = netdyn.Network("msd")
    net.add(Mass("m", "x", m), Spring("k", "x", "0", k), Damper("c", "x", "0", c), Force("F", "x", F))
    return net


@pytest.mark.parametrize("form", ["node", "branch", "loop"])
def test_mechanical_network_in_every_formulation(form):
    """Force-driven mass-spring-damper: node positions, or the dual impulse formulations."""
    m, k, c, F = 2.0, 50.0, 1.5, 1.0
    te = np.linspace(0, 3, 301)
    sol = netdyn.simulate(mass_spring_damper(m, k, c, F).model(formulation=form), (0, 3), t_eval=te)
    wn, z = np.sqrt(k / m), c / (2 * np.sqrt(k * m))
    wd = wn * np.sqrt(1 - z**2)
    x = F / k * (1 - np.exp(-z * wn * te) * (np.cos(wd * te) + z / np.sqrt(1 - z**2) * np.sin(wd * te)))
    v = F / k * np.exp(-z * wn * te) * wn / np.sqrt(1 - z**2) * np.sin(wd * te)
    assert np.max(np.abs(sol.velocity("m") - v)) < 1e-6 * np.max(np.abs(v))
    assert np.max(np.abs(sol.force("k") - k * x)) < 1e-6 * F
    assert np.allclose(sol.force("F"), F) and np.allclose(sol.velocity("F"), v, atol=1e-6 * np.max(np.abs(v)))
    assert sol.power_balance()["relative"] < 1e-6
