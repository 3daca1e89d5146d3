"""``netdyn simulate FILE`` and a linkage's assembly (issue 26): the file's stored guess/q0/f0, and the
``--q0``, ``--f0`` and ``--guess NAME=VALUE`` flags for the rest (through ``netdyn.cli.main`` in-process)."""
import numpy as np
import pytest

import netdyn
from netdyn.cli import main
from systems import rlc_circuit


@pytest.fixture
def files(tmp_path):
    netdyn.save_model(netdyn.linkages.four_bar(), tmp_path / "four_bar.yaml")
    bare = netdyn.linkages.four_bar()
    bare.assembly = None
    netdyn.save_model(bare, tmp_path / "bare.json")           # as netdyn 0.2 saved it: no assembly
    netdyn.save_model(rlc_circuit(), tmp_path / "rlc.json")
    return tmp_path


def simulate(path, *flags, capsys):
    code = main(["simulate", str(path), "--tstop", "0.02", "--step", "0.01", "--progress", "never", *flags])
    out, err = capsys.readouterr()
    if code:
        return code, err
    lines = out.strip().splitlines()
    return code, {h: float(v) for h, v in zip(lines[0].split(), lines[1].split())}  # the first row (t = 0)


def test_the_readme_four_bar_runs_as_written(files, capsys):
    code, start = simulate(files / "four_bar.yaml", capsys=capsys)
    assert code == 0 and start["theta_crank"] == pytest.approx(0.0, abs=1e-9) and start["theta_rocker"] > 0


def test_q0_and_guess_flags_start_a_file_without_an_assembly(files, capsys):
    code, err = simulate(files / "bare.json", capsys=capsys)
    assert code == 2 and "does not close" in err and err.count("\n") == 1
    code, start = simulate(files / "bare.json", "--q0", "O=0.4", "--guess", "theta_rod=0.9",
                           "--guess", "theta_rocker=1.9", capsys=capsys)
    assert code == 0 and start["theta_crank"] == pytest.approx(0.4) and start["theta_rocker"] > 0
    code, start = simulate(files / "bare.json", "--q0", "theta_crank=400m", "--f0", "O_dot=2",
                           "--guess", "theta_rod=-0.9", "--guess", "theta_rocker=-1.9", capsys=capsys)
    assert code == 0 and start["theta_crank"] == pytest.approx(0.4) and start["theta_rocker"] < 0  # elbow down


def test_flags_replace_the_stored_part_only(files, capsys):
    code, start = simulate(files / "four_bar.yaml", "--q0", "O=0.4", capsys=capsys)   # stored guess kept
    assert code == 0 and start["theta_crank"] == pytest.approx(0.4) and start["theta_rocker"] > 0
    code, start = simulate(files / "four_bar.yaml", "--guess", "theta_rod=-0.9", "--guess", "theta_rocker=-1.9",
                           capsys=capsys)
    assert code == 0 and start["theta_rocker"] < 0


@pytest.mark.parametrize("flags, message", [
    (["--q0", "theta_crnak=0.4"], "--q0: 'theta_crnak' is not a coordinate or joint coordinate of 'four-bar'"),
    (["--q0", "O"], "--q0 expects NAME=VALUE (e.g. --q0 theta_crank=0.4), got 'O'"),
    (["--q0", "=0.4"], "--q0 expects NAME=VALUE"),
    (["--guess", "theta_rod="], "--guess expects NAME=VALUE"),
    (["--f0", "O_dot=fast"], "--f0 O_dot=fast: 'fast' is not a number"),
    (["--q0", "O=nan"], "'nan' is not a number"),
    (["--q0", "O=1e999"], "is not a number"),
    (["--guess", "x_ghost=1"], "--guess: 'x_ghost' is not a coordinate"),
])
def test_bad_flags_are_one_line_and_exit_code_2(files, flags, message, capsys):
    code, err = simulate(files / "four_bar.yaml", *flags, capsys=capsys)
    assert code == 2 and err.startswith("netdyn: error: ") and message in err and err.count("\n") == 1


def test_flags_on_a_circuit_name_its_coordinates(files, capsys):
    code, start = simulate(files / "rlc.json", "--q0", "q_L1=1e-3", capsys=capsys)
    assert code == 0 and np.isfinite(list(start.values())).all()
    code, err = simulate(files / "rlc.json", "--q0", "q_C9=1", capsys=capsys)
    assert code == 2 and "'q_C9' is not a coordinate" in err


def test_info_checks_t0_from_the_stored_assembly(files, capsys):
    """``netdyn info`` checks the configuration at t = 0 as ``simulate`` starts it: from the file's stored
    assembly (the README's four-bar closes; the same file without its assembly does not)."""
    assert main(["info", str(files / "four_bar.yaml"), "--derive"]) == 0
    out = capsys.readouterr().out
    assert "warnings (0): none" in out and "degrees of freedom: 1 (9 coordinates - 8 independent constraints)" in out
    assert main(["info", str(files / "bare.json"), "--derive"]) == 0
    out = capsys.readouterr().out
    assert "does not close" in out and "warnings (1):" in out
