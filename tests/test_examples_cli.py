"""Every model of ``examples/`` runs through ``netdyn simulate`` with no initial-condition flag.

Each ``examples/*.py`` script builds a network or a bond graph (its ``build()``, or the ready-made linkage it
starts from); here that system is saved to a model file (or bond-graph file) in a temporary folder and run by
``netdyn simulate FILE --tstop T --step H`` over a short span: the linkages start from the assembly their
file stores (issue 26). Every netlist under ``examples/netlists`` runs with no flag at all (its ``.tran``).
A new example joins by one entry in ``EXAMPLES``; ``test_every_example_is_listed`` fails until it has one.

The Stewart–Gough platform (``spatial_stewart.py``: 13 bodies, 91 coordinates) takes about a minute to
derive and compile: its file is checked here (saved, loaded, its stored home pose on its joints), and run
through ``netdyn simulate`` only with ``NETDYN_SLOW_TESTS=1``. The six-link spatial chain runs in the
command's default (absolute) coordinates: the script's relative formulation takes about two minutes to derive.

The whole file takes about 26 s of CPU (21 runs of the command, each deriving its model; the chain 8 s).
"""
import os
from pathlib import Path

import numpy as np
import pytest

import netdyn
from netdyn.cli import main
from netdyn.linkages import parallel
from systems import load_example

EXAMPLES_DIR = Path(__file__).resolve().parent.parent / "examples"


def _module(name, **params):
    return lambda: load_example(name).build(**{**load_example(name).PARAMS, **params})


#: example script -> (builder of the system it defines, tstop, step); the scripts' own spans are shortened
EXAMPLES = {
    "bondgraph_hydraulic": (_module("bondgraph_hydraulic"), 1.0, 0.25),
    "bondgraph_motor_gear": (_module("bondgraph_motor_gear"), 2e-4, 5e-5),
    "bondgraph_quarter_car": (_module("bondgraph_quarter_car"), 0.05, 0.01),
    "capacitor_microphone": (_module("capacitor_microphone"), 1e-3, 2.5e-4),
    "loudspeaker": (_module("loudspeaker"), 5e-3, 1e-3),
    "magnetic_levitation": (_module("magnetic_levitation"), 0.01, 2.5e-3),
    "motor_slider_crank": (lambda: load_example("motor_slider_crank").build(), 0.05, 0.025),
    "parallel_3rrr": (lambda: parallel.three_rrr().network(), 0.05, 0.025),
    "planar_andrews": (netdyn.linkages.andrews_squeezer, 1e-3, 5e-4),
    "planar_five_bar": (lambda: netdyn.linkages.five_bar()[0], 0.05, 0.025),
    "planar_four_bar": (lambda: netdyn.linkages.four_bar(tau=False, gravity=True), 0.05, 0.025),
    "planar_pendulum": (lambda: netdyn.linkages.pendulum([1.0] * 4, [0.5] * 4), 0.05, 0.025),
    "planar_slider_crank": (netdyn.linkages.slider_crank, 0.05, 0.025),
    "spatial_chain": (lambda: netdyn.linkages.spatial_chain(6, netdyn.linkages.chain_parameters(6, seed=1)),
                      0.02, 0.01),
    "spatial_heavy_top": (netdyn.linkages.heavy_top, 0.02, 0.01),
    "spatial_pendulum": (lambda: netdyn.linkages.spherical_pendulum(radius=1e-3), 0.05, 0.025),
    "spatial_rssr": (netdyn.linkages.rssr, 0.05, 0.025),
}
SLOW = {"spatial_stewart": (netdyn.linkages.stewart_platform, 0.01, 0.01)}


def _save(system, folder, name):
    if isinstance(system, netdyn.BondGraph):
        path = folder / f"{name}.bg.yaml"
        netdyn.save_bond_graph(system, path)
    else:
        path = folder / f"{name}.yaml"
        netdyn.save_model(system, path)
    return path


def _table(out):
    lines = out.strip().splitlines()
    return lines[0].split(), np.array([[float(x) for x in line.split()] for line in lines[1:]])


def test_every_example_is_listed():
    scripts = {p.stem for p in EXAMPLES_DIR.glob("*.py")}
    assert scripts == set(EXAMPLES) | set(SLOW), "give each new example an entry in EXAMPLES (or SLOW)"


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_example_model_file_runs_through_netdyn_simulate(name, tmp_path, capsys):
    build, tstop, step = EXAMPLES[name]
    path = _save(build(), tmp_path, name)
    code = main(["simulate", str(path), "--tstop", str(tstop), "--step", str(step), "--progress", "never"])
    out, err = capsys.readouterr()
    assert code == 0, err
    header, table = _table(out)
    assert header[0] == "time" and table.shape == (round(tstop / step) + 1, len(header))
    assert np.all(np.isfinite(table))


@pytest.mark.parametrize("netlist", sorted(p.name for p in (EXAMPLES_DIR / "netlists").glob("*.cir")))
def test_example_netlist_runs_through_netdyn_simulate_with_no_flag(netlist, capsys):
    code = main(["simulate", str(EXAMPLES_DIR / "netlists" / netlist), "--progress", "never"])
    out, err = capsys.readouterr()
    assert code == 0, err
    header, table = _table(out)
    assert header[0] == "time" and table.shape[0] > 1 and np.all(np.isfinite(table))


def test_linkage_files_start_on_their_stored_assembly(tmp_path, capsys):
    """The four-bar file of the README starts where ``four_bar().assembly`` says: crank at 0, elbow up."""
    path = _save(netdyn.linkages.four_bar(), tmp_path, "four_bar")
    assert main(["simulate", str(path), "--tstop", "0.02", "--step", "0.01", "--progress", "never"]) == 0
    header, table = _table(capsys.readouterr().out)
    first = dict(zip(header, table[0]))
    stored = netdyn.linkages.four_bar().assembly.guess
    for name, value in stored.items():
        assert first[name] == pytest.approx(value, abs=1e-9)
    assert first["theta_rocker"] > 0  # elbow up


def test_stewart_platform_file_keeps_an_assembly_on_its_joints(tmp_path):
    """The platform's stored home pose, read back from its file: every body frame aligned with the global
    axes, and at every joint the two bodies' points coincide (the slides at zero). Deriving its constraints
    takes seconds; the slow test below simulates from it."""
    net = netdyn.load_model(_save(netdyn.linkages.stewart_platform(), tmp_path, "stewart"))
    guess = dict(net.assembly.guess)
    assert guess == dict(netdyn.linkages.stewart_platform().assembly.guess)
    for body in net.bodies:
        assert [guess[f"e{k}_{body}"] for k in range(4)] == [1.0, 0.0, 0.0, 0.0]
    at = {"0": np.zeros(3), **{b: np.array([guess[f"{c}_{b}"] for c in "xyz"]) for b in net.bodies}}
    joints = [j for j in net.elements.values() if getattr(j, "is_joint", False)]
    assert len(joints) == 18
    for j in joints:
        (a, b), pa, pb = j.bodies, np.array(j.point_a, dtype=float), np.array(j.point_b, dtype=float)
        np.testing.assert_allclose(at[a] + pa, at[b] + pb, atol=1e-12, err_msg=j.name)


@pytest.mark.skipif(os.environ.get("NETDYN_SLOW_TESTS") != "1", reason="about a minute: NETDYN_SLOW_TESTS=1 runs it")
@pytest.mark.parametrize("name", sorted(SLOW))
def test_slow_example_model_file_runs_through_netdyn_simulate(name, tmp_path, capsys):
    build, tstop, step = SLOW[name]
    path = _save(build(), tmp_path, name)
    assert main(["simulate", str(path), "--tstop", str(tstop), "--step", str(step), "--progress", "never"]) == 0
