"""Bond graphs in the rest of the engine: analysis entry points on a BondGraph, multiport fields,
the linear fast path, and the command line on bond-graph files.

References: closed forms (series RLC poles and transfer function, coupled inductors, a two-port
capacitance), the equivalent networks (linearized and simulated), and energy balance.
"""
import json
import subprocess
import sys

import numpy as np
import pytest
import sympy as sp

import netdyn
from netdyn import t
from netdyn.components.electrical import Capacitor, Inductor, Resistor, VoltageSource
from netdyn.errors import ModelError


def rlc(R=2.0, L=0.5, C=0.1, v=1.0):
    net = netdyn.Network("series RLC")
    net.add(VoltageSource("V1", "in", "0", v), Resistor("R1", "in", "a", R),
            Inductor("L1", "a", "b", L), Capacitor("C1", "b", "0", C))
    return net


# ------------------------------------------------------------------------------------------ analysis entry points
@pytest.mark.parametrize("formulation", [None, "bond"])
def test_linearize_a_bond_graph_directly_against_closed_form_and_network(formulation):
    R, L, C = 2.0, 0.5, 0.1
    net = rlc(R, L, C)
    bg = netdyn.to_bond_graph(net)
    lin = netdyn.linearize(bg, inputs=["V1"], outputs=["e(C1)", "f(L1)", "p(L1)", "e(R1)"], u={"V1": 0},
                           formulation=formulation)
    ref = netdyn.linearize(net, inputs=["V1"], outputs=["v(C1)", "i(L1)"], u={"V1": 0})
    closed = np.roots([1, R / L, 1 / (L * C)])
    assert np.allclose(np.sort_complex(lin.poles()), np.sort_complex(closed), atol=1e-10)
    assert np.allclose(np.sort_complex(ref.poles()), np.sort_complex(closed), atol=1e-10)
    w = np.logspace(-1, 2, 7)
    s = 1j * w
    G_vc = (1 / (L * C)) / (s**2 + R / L * s + 1 / (L * C))       # V1 -> v_C
    G_i = (s / L) / (s**2 + R / L * s + 1 / (L * C))              # V1 -> i_L
    assert np.allclose(lin.frequency_response(w, "e(C1)"), G_vc, rtol=1e-10)
    assert np.allclose(lin.frequency_response(w, "f(L1)"), G_i, rtol=1e-10)
    assert np.allclose(lin.frequency_response(w, "p(L1)"), L * G_i, rtol=1e-10)
    assert np.allclose(lin.frequency_response(w, "e(R1)"), R * G_i, rtol=1e-10)
    assert np.allclose(ref.frequency_response(w, "v(C1)"), G_vc, rtol=1e-10)


def test_equilibrium_compare_export_simulate_take_a_bond_graph():
    from netdyn.export import export
    net = rlc(v=3.0)
    bg = netdyn.to_bond_graph(net)
    op = netdyn.equilibrium(bg, inputs=["V1"])                    # nominal V1 = 3: the capacitor holds 3 V
    assert op.u == {"V1": 3.0} and abs(op.as_dict()["q_L1"] - 0.3) < 1e-12
    lin = netdyn.linearize(op, outputs=["e(C1)"])
    assert abs(lin.output_values[0] - 3.0) < 1e-12
    report = netdyn.compare(bg, net)
    rows = {line.split("  ")[0]: line.split()[-2:] for line in str(report).splitlines() if "  " in line}
    assert rows["natural frequencies [rad/s]"][0] == rows["natural frequencies [rad/s]"][1]
    assert rows["peak of step response"][0] == rows["peak of step response"][1]
    assert rows["stored-energy elements"] == ["L1,", "C1"] or "L1, C1" in str(report)
    assert report.analogy.analogous
    assert "q_{L1}" in export(bg, "latex", formulation="reduced").replace("_{1}", "1")
    sol = netdyn.simulate(bg, (0, 2), t_eval=np.linspace(0, 2, 41))
    ref = netdyn.simulate(net, (0, 2), t_eval=np.linspace(0, 2, 41))
    assert np.max(np.abs(sol["q_C1"] - ref.voltage("C1") * 0.1)) < 1e-7


def test_analysis_inputs_and_outputs_are_checked_by_name():
    bg = netdyn.to_bond_graph(rlc())
    with pytest.raises(ModelError, match="'R1' is not a source of bond graph"):
        netdyn.linearize(bg, inputs=["R1"])
    with pytest.raises(ModelError, match="has 4 bonds; name one of them"):
        netdyn.linearize(bg, inputs=["V1"], u={"V1": 0}, outputs=["e(" + bg.of_kind("1")[0] + ")"])
    two = netdyn.BondGraph("Se-1-0-C")
    for kind, name, p in [("Se", "u", {"effort": 1.0}), ("1", "J", {}), ("R", "R1", {"R": 1.0}), ("0", "N", {}),
                          ("C", "C1", {"C": 1.0})]:
        two.add(kind, name, **p)
    two.chain("u", "J", "N", "C1"), two.bond("J", "R1")
    assert "J_N" in two.bond_names
    assert abs(netdyn.linearize(two, inputs=["u"], u={"u": 0}, outputs=["f(J_N)"]).static_gain()[0, 0]) < 1e-12
    with pytest.raises(ModelError, match="effort of bond J_N is a multiplier"):
        netdyn.linearize(two, inputs=["u"], u={"u": 0}, outputs=["e(J_N)"])
    with pytest.raises(ModelError, match="momentum belongs to an I element"):
        netdyn.linearize(bg, inputs=["V1"], u={"V1": 0}, outputs=["p(C1)"])
