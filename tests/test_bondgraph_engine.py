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
@pytest.mark.parametrize("formulation", [None, "state", "bond", "reduced"])
def test_linearize_a_bond_graph_directly_against_closed_form_and_network(formulation):
    R, L, C = 2.0, 0.5, 0.1
    net = rlc(R, L, C)
    bg = netdyn.to_bond_graph(net)
    lin = netdyn.linearize(bg, inputs=["V1"], outputs=["e(C1)", "f(L1)", "p(L1)", "e(R1)"], u={"V1": 0},
                           formulation=formulation)
    if formulation in (None, "state"):   # the states are the energy variables, named after the elements
        assert lin.states == ["p_L1", "q_C1"]
        assert np.allclose(lin.A, [[-R / L, -1 / C], [1 / L, 0]], rtol=1e-13)
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
    assert op.u == {"V1": 3.0} and abs(op.as_dict()["q_C1"] - 0.3) < 1e-12     # in the energy variables
    assert abs(op.as_dict()["p_L1"]) < 1e-12
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
    # a bond between junctions: its effort from the element that sets it (the 0-junction's C1), unit gain
    assert abs(netdyn.linearize(two, inputs=["u"], u={"u": 0}, outputs=["e(J_N)"]).static_gain()[0, 0] - 1) < 1e-12
    with pytest.raises(ModelError, match="momentum"):
        netdyn.linearize(bg, inputs=["V1"], u={"V1": 0}, outputs=["p(C1)"])


# ------------------------------------------------------------------------------------------ the command line
def rlc_closed_form(tt, R=2.0, L=0.5, C=0.1, V=1.0):
    """Step response of a series RLC from rest: capacitor voltage and loop current (underdamped)."""
    a, w = R / (2 * L), np.sqrt(1 / (L * C) - (R / (2 * L))**2)
    vc = V * (1 - np.exp(-a * tt) * (np.cos(w * tt) + a / w * np.sin(w * tt)))
    i = V / (L * w) * np.exp(-a * tt) * np.sin(w * tt)
    return vc, i


@pytest.fixture
def bg_files(tmp_path):
    bg = netdyn.to_bond_graph(rlc())
    netdyn.save_bond_graph(bg, tmp_path / "rlc.yaml")
    netdyn.save_bond_graph(bg, tmp_path / "rlc.json")
    netdyn.save_model(rlc(), tmp_path / "net.json")       # a network model file: not taken for a bond graph
    return tmp_path


def test_cli_simulate_bond_graph_file_against_closed_form(bg_files, capsys):
    from netdyn.cli import main
    out = bg_files / "out.csv"
    assert main(["simulate", str(bg_files / "rlc.json"), "--tstop", "2", "--step", "0.05", "--csv", str(out),
                 "--plot", str(bg_files / "p.png")]) == 0
    rows = out.read_text().splitlines()
    head = rows[0].split(",")
    assert head[:3] == ["time", "p(L1)", "q(C1)"] and {"e(C1)", "f(L1)", "e(V1)", "f(V1)"} <= set(head)
    data = np.array([[float(x) for x in r.split(",")] for r in rows[1:]])
    col = {h: data[:, k] for k, h in enumerate(head)}
    vc, i = rlc_closed_form(col["time"])
    assert np.max(np.abs(col["e(C1)"] - vc)) < 1e-6 and np.max(np.abs(col["f(L1)"] - i)) < 1e-6
    assert np.allclose(col["f(V1)"], col["f(L1)"]) and np.allclose(col["p(L1)"], 0.5 * col["f(L1)"])
    assert (bg_files / "p.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_cli_info_and_equations_on_bond_graph_files(bg_files, capsys):
    from netdyn.cli import main
    assert main(["info", str(bg_files / "rlc.yaml")]) == 0
    info = capsys.readouterr().out
    assert "bond graph: series RLC" in info and "causality: integral causality: L1, C1" in info
    assert "coordinates (4)" in info and "degrees of freedom: 1" in info
    assert main(["info", str(bg_files / "rlc.yaml"), "--formulation", "reduced"]) == 0
    assert "coordinates (1): q_L1" in capsys.readouterr().out
    assert main(["info", str(bg_files / "net.json")]) == 0
    assert "network: series RLC" in capsys.readouterr().out
    assert main(["equations", str(bg_files / "rlc.yaml"), "--format", "latex", "--formulation", "reduced"]) == 0
    latex = capsys.readouterr().out
    assert r"\ddot{q}_{L1}" in latex and "&= 0" in latex
    assert main(["equations", str(bg_files / "rlc.yaml"), "--format", "state"]) == 0
    state = capsys.readouterr().out.splitlines()
    assert state == ["Derivative(p_L1(t), t) = -4.0*p_L1(t) - 10.0*q_C1(t) + 1.0",
                     "Derivative(q_C1(t), t) = 2.0*p_L1(t)"]
    py = bg_files / "rlc.py"
    assert main(["equations", str(bg_files / "rlc.json"), "--format", "python", "-o", str(py)]) == 0
    ns = {}
    exec(compile(py.read_text(), str(py), "exec"), ns)        # the exported module runs: M q'' + h = 0 at rest
    assert ns["COORDINATES"] == ["q_V1", "q_R1", "q_L1", "q_C1"]
    assert main(["equations", str(bg_files / "net.json"), "--format", "state"]) == 2
    assert "--format state is for bond-graph files" in capsys.readouterr().err


def test_cli_executable_on_a_bond_graph_file(bg_files):
    import shutil
    import os
    exe = shutil.which("netdyn", path=os.path.dirname(sys.executable)) or shutil.which("netdyn")
    cmd = [exe] if exe else [sys.executable, "-m", "netdyn.cli"]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(__import__("pathlib").Path(netdyn.__file__).parents[1]),
                                                         os.environ.get("PYTHONPATH", "")])}
    out = subprocess.run(cmd + ["simulate", "rlc.yaml", "--tstop", "1", "--step", "0.5"], cwd=bg_files,
                         capture_output=True, text=True, timeout=600, env=env)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].split()[:3] == ["time", "p(L1)", "q(C1)"] and len(lines) == 4
    vc, _ = rlc_closed_form(np.array([1.0]))
    head = lines[0].split()
    assert abs(float(lines[-1].split()[head.index("e(C1)")]) - vc[0]) < 1e-6
    bad = bg_files / "bad.yaml"
    bad.write_text("format: netdyn-bondgraph\nversion: 1\nelements:\n - {kind: C, name: C1, energy: __import__('os')}\n")
    out = subprocess.run(cmd + ["info", "bad.yaml"], cwd=bg_files, capture_output=True, text=True, timeout=600, env=env)
    assert out.returncode == 2 and "C1.energy" in out.stderr and "not an allowed function" in out.stderr


# ------------------------------------------------------------------------------------------ multiport fields
def coupled_inductors_bg(L1, L2, M, R1, R2, as_function=False):
    """Se -> 1(R1) -> I field port 1; I field port 2 -> 1(R2): two meshes coupled by a mutual inductance."""
    bg = netdyn.BondGraph("coupled inductors")
    law = {"coenergy": lambda f1, f2: L1 * f1**2 / 2 + M * f1 * f2 + L2 * f2**2 / 2} if as_function else \
        {"I": [[L1, M], [M, L2]]}
    for kind, name, p in [("Se", "u", {"effort": 1.0}), ("1", "m1", {}), ("R", "R1", {"R": R1}), ("1", "m2", {}),
                          ("R", "R2", {"R": R2}), ("I", "T", {**law, "ports": 2})]:
        bg.add(kind, name, **p)
    bg.chain("u", "m1", "T"), bg.bond("m1", "R1"), bg.bond("m2", "T"), bg.bond("m2", "R2")
    return bg


def step_from_rest(A, B, tt):
    """x(t) = A⁻¹ (e^{At} − I) B: the response of ẋ = A x + B from x(0) = 0 (closed form)."""
    from scipy.linalg import expm
    return np.array([np.linalg.solve(A, (expm(A * tk) - np.eye(len(B))) @ B) for tk in tt])


@pytest.mark.parametrize("as_function", [False, True])
def test_coupled_inductor_field_equals_network_and_closed_form(as_function, tmp_path):
    from netdyn.components.electrical import CoupledInductors
    L1, L2, M, R1, R2 = 1.0, 2.0, 0.8, 1.0, 3.0
    bg = coupled_inductors_bg(L1, L2, M, R1, R2, as_function)
    assert bg.causality().integral == ["T"] and bg.bonds_of("T") == ["T", "T_2"]
    se = bg.state_equations()                                  # p = L i, L ṗ... in the momenta p_T_1, p_T_2
    Lm, Rm = np.array([[L1, M], [M, L2]]), np.diag([R1, R2])
    A_p = -Rm @ np.linalg.inv(Lm)                              # ṗ = b − R L⁻¹ p
    got = np.array([[float(sp.diff(e, s)) for s in se.states] for e in se.rhs])
    assert [s.name for s in se.states] == ["p_T_1", "p_T_2"] and np.allclose(got, A_p, atol=1e-12)
    te = np.linspace(0, 3, 31)
    i_ref = step_from_rest(-np.linalg.solve(Lm, Rm), np.linalg.solve(Lm, [1.0, 0.0]), te)
    net = netdyn.Network("coupled")
    net.add(VoltageSource("u", "a", "0", 1.0), Resistor("R1", "a", "b", R1),
            CoupledInductors("T", "b", "0", "c", "0", L1=L1, L2=L2, M=M), Resistor("R2", "c", "0", R2))
    sn = netdyn.simulate(net, (0, 3), t_eval=te, rtol=1e-10)
    sb = netdyn.simulate(bg, (0, 3), t_eval=te, rtol=1e-10)
    assert np.max(np.abs(sb["q_T_dot"] - i_ref[:, 0])) < 1e-8
    assert np.max(np.abs(sb["q_T_2_dot"] - i_ref[:, 1])) < 1e-8
    assert np.max(np.abs(sb["q_T_dot"] - sn.through("R1"))) < 1e-8      # mesh 1 current
    assert np.max(np.abs(sb["q_T_2_dot"] + sn.through("R2"))) < 1e-8    # port-2 current = −(R2 current c → 0)
    assert sb.power_balance()["relative"] < 1e-6
    path = netdyn.save_bond_graph(bg, tmp_path / "coupled.yaml")
    back = netdyn.load_bond_graph(path)
    assert back.bonds_of("T") == ["T", "T_2"] and back.is_field("T")
    sr = netdyn.simulate(back, (0, 3), t_eval=te, rtol=1e-10)
    assert np.max(np.abs(sr["q_T_2_dot"] - sb["q_T_2_dot"])) < 1e-12
    with pytest.raises(netdyn.errors.TopologyError, match="T: a 2-port I field has no network element"):
        netdyn.to_network(bg)


def test_two_port_capacitance_field_against_closed_form_and_file(tmp_path):
    # V = q1²/(2 C1) + q2²/(2 C2) + (q1 − q2)²/(2 Cm): two capacitors coupled through a third
    C1, C2, Cm, R1, R2, U = 1.0, 0.5, 0.25, 2.0, 1.0, 1.5
    bg = netdyn.BondGraph("C field")
    for kind, name, p in [("Se", "u", {"effort": U}), ("1", "J1", {}), ("R", "R1", {"R": R1}), ("1", "J2", {}),
                          ("R", "R2", {"R": R2}),
                          ("C", "K", {"energy": f"q1**2/(2*{C1}) + q2**2/(2*{C2}) + (q1 - q2)**2/(2*{Cm})",
                                      "ports": 2})]:
        bg.add(kind, name, **p)
    bg.chain("u", "J1", "K"), bg.bond("J1", "R1"), bg.bond("J2", "K"), bg.bond("J2", "R2")
    Kq = np.array([[1 / C1 + 1 / Cm, -1 / Cm], [-1 / Cm, 1 / C2 + 1 / Cm]])   # e = K q
    A, B = -np.diag([1 / R1, 1 / R2]) @ Kq, np.array([U / R1, 0.0])
    se = bg.state_equations()
    assert np.allclose([[float(sp.diff(e, s)) for s in se.states] for e in se.rhs], A, atol=1e-12)
    te = np.linspace(0, 4, 41)
    q_ref = step_from_rest(A, B, te)
    for system in (bg, netdyn.load_bond_graph(netdyn.save_bond_graph(bg, tmp_path / "k.json"))):
        sol = netdyn.simulate(system, (0, 4), t_eval=te, rtol=1e-10)
        assert np.max(np.abs(sol["q_K"] - q_ref[:, 0])) < 1e-8
        assert np.max(np.abs(sol["q_K_2"] - q_ref[:, 1])) < 1e-8
        assert sol.power_balance()["relative"] < 1e-6
    lin = netdyn.linearize(bg, inputs=["u"], u={"u": 0}, outputs=["f(K)"])
    assert np.allclose(np.sort(lin.poles().real), np.sort(np.linalg.eigvals(A).real), atol=1e-10)


def test_field_input_errors_name_the_element():
    from netdyn.errors import ElementError, ParameterError, TopologyError
    bg = netdyn.BondGraph("bad")
    with pytest.raises(ParameterError, match="L: a 2-port I field takes I as an 2 x 2 matrix"):
        bg.add("I", "L", I=[[1.0, 0.1]], ports=2)
    with pytest.raises(ElementError, match="L: the I matrix is not symmetric"):
        bg.add("I", "L", I=[[1.0, 0.1], [0.2, 1.0]], ports=2)
    with pytest.raises(ElementError, match="L: the I matrix is not positive definite"):
        bg.add("I", "L", I=[[1.0, 2.0], [2.0, 1.0]], ports=2)
    with pytest.raises(ParameterError, match=r"K: its energy uses \['q3'\]"):
        bg.add("C", "K", energy="q1**2 + q3**2", ports=2)
    with pytest.raises(ParameterError, match="ports = 0"):
        bg.add("C", "K", C=1.0, ports=0)
    bg.add("I", "L", I=[[1.0, 0.1], [0.1, 1.0]], ports=2)
    bg.add("Se", "u", effort=1.0)
    bg.bond("u", "L")
    with pytest.raises(TopologyError, match=r"L has 1 bond .*a I element has exactly 2 bonds"):
        bg.check()


# ------------------------------------------------------------------------------------------ the linear fast path
def test_fifty_section_ladder_bond_graph_takes_the_linear_path_and_matches_the_network():
    from pathlib import Path
    from netdyn.numerics.paths import method_for
    net = netdyn.read_netlist(Path(__file__).parent.parent / "examples" / "netlists" / "rc_ladder.cir")
    bg = netdyn.to_bond_graph(net)
    T = 1e-3                                      # the pulse's rise and top: every section moves
    assert method_for(bg, (0, T)).name == "linear"
    te = np.linspace(0, T, 101)
    sn = netdyn.simulate(net, (0, T), t_eval=te, rtol=1e-10)
    sb = netdyn.simulate(bg, (0, T), t_eval=te, rtol=1e-10)
    assert sb.coordinate_names == bg.model().coordinate_names      # the bond formulation's coordinates
    caps = bg.of_kind("C")
    assert len(caps) == 50
    peak = max(np.max(np.abs(sn.across(n))) for n in caps)
    for n in caps:
        b = bg.bond_of(n)
        v = bg.sign(n, b) * sb[bg.coordinate_name(b)] / float(bg.params(n)["C"])
        assert np.max(np.abs(v - sn.across(n))) < 1e-8 * peak, n
    assert np.max(np.abs(sb.energy() - sn.energy())) < 1e-8 * np.max(sn.energy())
    assert sb.power_balance()["relative"] < 1e-6


def test_linear_path_of_a_bond_graph_agrees_with_its_symbolic_path_and_says_when_not():
    # DC motor with a gear (GY, TF, a dependent inertia): the stamped matrices against the symbolic model
    U, RA, LA, K, Jm, Bm, n, JL, BL = 12.0, 4.0, 15e-3, 9.54e-3, 1e-6, 1e-6, 0.25, 8e-6, 4e-6
    bg = netdyn.BondGraph("motor and gear")
    for kind, name, p in [("Se", "U", {"effort": U * (1 - sp.exp(-100 * t))}), ("1", "armature", {}),
                          ("R", "RA", {"R": RA}), ("I", "LA", {"I": LA}), ("GY", "K", {"ratio": K}), ("1", "rotor", {}),
                          ("I", "Jm", {"I": Jm}), ("R", "Bm", {"R": Bm}), ("TF", "gear", {"ratio": n}), ("1", "load", {}),
                          ("I", "JL", {"I": JL}), ("R", "BL", {"R": BL}), ("Sf", "leak", {"flow": 0.0}),
                          ("0", "tap", {})]:
        bg.add(kind, name, **p)
    bg.chain("U", "armature", "K", "rotor", "gear", "load", "JL")
    bg.bond("armature", "RA"), bg.bond("armature", "LA"), bg.bond("rotor", "Jm"), bg.bond("rotor", "Bm")
    bg.chain("load", "tap", "BL"), bg.bond("leak", "tap")
    te = np.linspace(0, 0.05, 51)
    fast = netdyn.simulate(bg, (0, 0.05), t_eval=te, rtol=1e-10, method="linear")
    slow = netdyn.simulate(bg, (0, 0.05), t_eval=te, rtol=1e-10, method="ida")
    assert type(fast).__name__ == "LinearSolution"
    for name in ("q_LA_dot", "q_Jm_dot", "q_JL_dot", "q_BL_dot"):
        ref = slow[name]
        assert np.max(np.abs(fast[name] - ref)) < 1e-7 * np.max(np.abs(ref)), name
    assert fast.power_balance()["relative"] < 1e-6
    bg.graph.nodes["RA"]["params"] = {"content": sp.Symbol("f")**4}
    with pytest.raises(ModelError, match="RA: it is given by its content function"):
        netdyn.simulate(bg, (0, 0.05), method="linear")


def test_bondgraphtools_spellings_value_and_connect():
    bg = netdyn.BondGraph("RC, BondGraphTools style")
    bg.add("Se", "u", value=1.0), bg.add("0", "law"), bg.add("R", "R1", value=2.0), bg.add("C", "C1", value=0.5)
    bg.connect("u", "law"), bg.connect("law", "C1")
    same = netdyn.BondGraph("RC")
    same.add("Se", "u", effort=1.0), same.add("0", "law"), same.add("R", "R1", R=2.0), same.add("C", "C1", C=0.5)
    same.bond("u", "law"), same.bond("law", "C1")
    bg.connect("law", "R1"), same.bond("law", "R1")
    assert [bg.params(n) for n in bg.elements] == [same.params(n) for n in same.elements]
    with pytest.raises(netdyn.errors.ParameterError, match="C2: give C= or value=, not both"):
        bg.add("C", "C2", C=1.0, value=2.0)
    with pytest.raises(netdyn.errors.ParameterError, match="J: a 1 element has no value"):
        bg.add("1", "J", value=1.0)


def test_two_port_resistive_field_on_both_paths_against_closed_form():
    # two capacitors discharging through a two-port resistance R = [[3, 1], [1, 2]] (D = ½ fᵀ R f)
    Rm, Cs, U = np.array([[3.0, 1.0], [1.0, 2.0]]), np.array([0.5, 0.25]), 1.0
    bg = netdyn.BondGraph("R field")
    for kind, name, p in [("Se", "u", {"effort": U}), ("1", "J1", {}), ("C", "C1", {"C": Cs[0]}), ("1", "J2", {}),
                          ("C", "C2", {"C": Cs[1]}), ("R", "Rf", {"R": Rm.tolist(), "ports": 2})]:
        bg.add(kind, name, **p)
    bg.chain("u", "J1", "Rf"), bg.bond("J1", "C1"), bg.bond("J2", "Rf"), bg.bond("J2", "C2")
    A, B = -np.linalg.solve(Rm, np.diag(1 / Cs)), np.linalg.solve(Rm, [U, 0.0])
    te = np.linspace(0, 3, 31)
    q_ref = step_from_rest(A, B, te)
    for method in ("linear", "ida"):
        sol = netdyn.simulate(bg, (0, 3), t_eval=te, rtol=1e-10, method=method)
        assert np.max(np.abs(sol["q_C1"] - q_ref[:, 0])) < 1e-8, method
        assert np.max(np.abs(sol["q_C2"] - q_ref[:, 1])) < 1e-8, method
        assert sol.power_balance()["relative"] < 1e-6
