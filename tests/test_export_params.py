"""Exports of a netlist keep its ``.param`` names as parameters, with their values as defaults, and take C
identifiers from ``name=``, else the model's name made safe, else ``model`` — never from a title line
(issue 26)."""
import ctypes
import importlib.util
import json
import shutil
import subprocess

import numpy as np
import pytest

import netdyn
from netdyn.cli import main
from netdyn.export.json import from_json
from netdyn.numerics.functions.compiled import compile_model

NETLIST = """* RC divider (v2) -- with a load!
.param rload=1k cval=2u lval=-3m
V1 in 0 DC 5
R1 in out 500
R2 out 0 {rload}
C1 out 0 {cval*2}
L1 out mid {abs(lval)}
R3 mid 0 {2*rload}
.tran 1u 1m
.end
"""


@pytest.fixture
def netlist(tmp_path):
    path = tmp_path / "rc_divider.cir"
    path.write_text(NETLIST)
    return path


def states(n, seed=3):
    rng = np.random.default_rng(seed)
    return [(float(rng.uniform(0, 1e-3)), rng.normal(size=n), rng.normal(size=n)) for _ in range(4)]


def test_the_netlist_keeps_its_param_expressions_and_simulates_on_numbers(netlist):
    net = netdyn.read_netlist(netlist)
    assert {n: {k: str(v) for k, v in d.items()} for n, d in net.value_expressions.items()} == \
        {"R2": {"R": "rload"}, "C1": {"C": "2*cval"}, "L1": {"L": "Abs(lval)"}, "R3": {"R": "2*rload"}}
    assert float(net.elements["R2"].values["R"]) == 1000.0 and not net.model().parameters  # simulation: numbers
    assert netdyn.simulate(net, (0, 1e-4)).method == "linear"


def test_every_export_shows_the_params_with_their_defaults(netlist, tmp_path):
    net = netdyn.read_netlist(netlist)
    tex = netdyn.export_equations(net, "latex", standalone=True)
    assert "rload" in tex and "1000" not in tex.split("Parameters")[0]
    assert "$rload = 1000$" in tex.split("Parameters (default values):")[1].splitlines()[0]
    doc = json.loads(netdyn.export_equations(net, "json"))
    assert {p["name"]: p["default"] for p in doc["parameters"]} == {"cval": 2e-6, "lval": -0.003, "rload": 1000.0}
    back = from_json(netdyn.export_equations(net, "json"))
    assert "rload" in str(back["parameters"]) and any("rload" in str(e) for e in back["equations"])
    text = netdyn.export_equations(net, "python")
    path = tmp_path / "exported_rc.py"
    path.write_text(text)
    spec = importlib.util.spec_from_file_location("exported_rc", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    assert dict(zip(mod.PARAMETERS, mod.parameters()[0])) == {"cval": 2e-6, "lval": -0.003, "rload": 1000.0}
    # the symbols at their defaults are the numbers the netlist simulates with: the same dynamics
    cm = compile_model(net.model())
    pv = mod.parameters()[0]
    for tt, q, f in states(cm.n):
        np.testing.assert_allclose(mod.h(tt, q, f, pv), cm.dynamics(tt, q, f, cm.parameter_vector())[1], rtol=1e-12)
    code = netdyn.export_equations(net, "c")
    assert code.name == "rc_divider" and '"rload"' in code.source


@pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc")
def test_the_c_export_lists_the_params_and_their_defaults(netlist, tmp_path):
    code = netdyn.export_equations(netdyn.read_netlist(netlist), "c")
    _, source = code.write(tmp_path)
    lib = tmp_path / "librc.so"
    subprocess.run(["gcc", "-std=c99", "-shared", "-fPIC", source, "-o", str(lib), "-lm"], check=True,
                   capture_output=True)
    dll = ctypes.CDLL(str(lib))
    names = (ctypes.c_char_p * 3).in_dll(dll, "rc_divider_parameters")
    defaults = (ctypes.c_double * 3).in_dll(dll, "rc_divider_defaults")
    assert dict(zip([n.decode() for n in names], defaults)) == {"cval": 2e-6, "lval": -0.003, "rload": 1000.0}


def test_c_identifiers_come_from_name_then_the_model_name_then_model(netlist):
    net = netdyn.read_netlist(netlist)
    assert net.name == "rc_divider" and net.title == "* RC divider (v2) -- with a load!"
    assert netdyn.export_equations(net, "c").name == "rc_divider"                  # the file, not the title
    assert netdyn.export_equations(net, "c", name="my filter-2").name == "my_filter_2"  # name= first
    assert netdyn.export_equations(netdyn.read_netlist(NETLIST), "c").name == "netlist"  # text: no file name
    with open(netlist) as fh:
        assert netdyn.read_netlist(fh).name == "rc_divider"
    bare = netdyn.read_netlist(NETLIST)
    bare.name = "Ω"
    assert netdyn.export_equations(bare, "c").name == "model"                      # nothing to make safe


def test_the_command_line_exports_the_params_too(netlist, capsys):
    assert main(["equations", str(netlist), "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert {p["name"] for p in doc["parameters"]} == {"cval", "lval", "rload"}


def test_a_controlled_source_gain_keeps_its_param_name(tmp_path):
    """An E gain written as a .param stays that parameter in the exports (its servo reaction included), and
    the exported module integrates like the network."""
    from scipy.integrate import solve_ivp
    deck = tmp_path / "vcvs.cir"
    deck.write_text("VCVS driving an RLC\n.param av=2\nV1 in 0 SIN(0 1 1k)\nR1 in a 100\nL1 a b 10m\nC1 b 0 1u\n"
                    "E1 c 0 b 0 {av}\nR2 c d 100\nL2 d e 10m\nC2 e 0 1u\n.end\n")
    net = netdyn.read_netlist(deck)
    assert {k: str(v) for k, v in net.value_expressions["E1"].items()} == {"gain": "av"}
    ns = {}
    exec(netdyn.export_equations(net.model(formulation="branch", symbolic="params"), "python"), ns)
    assert ns["DEFAULTS"]["av"] == 2.0 and "E1" not in ns["PARAMETERS"]
    times = np.linspace(0, 2e-3, 9)
    sol = netdyn.simulate(net, (0, 2e-3), t_eval=times, rtol=1e-10, atol=1e-13, formulation="branch")
    for gain, scale in ((2.0, 1.0), (4.0, 2.0)):   # the load's current is linear in the gain
        params = ns["parameters"]({"av": gain})
        ivp = solve_ivp(ns["rhs"], (0, 2e-3), np.zeros(2 * ns["N"]), args=(params,), rtol=1e-11, atol=1e-14,
                        t_eval=times, method="Radau")
        i_L2 = ivp.y[ns["N"] + ns["COORDINATES"].index("q_L2")]
        np.testing.assert_allclose(i_L2, scale * sol.current("L2"), atol=1e-7 * np.max(np.abs(i_L2)))
