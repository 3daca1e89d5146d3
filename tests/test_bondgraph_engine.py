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
