"""The ``netdyn`` command: the real executable in a subprocess (a few runs: each pays netdyn's import),
the rest through ``netdyn.cli.main`` in-process."""
import csv
import json
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

import netdyn
from netdyn.cli import main
from systems import mechanical_network, rlc_circuit

EXE = shutil.which("netdyn", path=os.path.dirname(sys.executable)) or shutil.which("netdyn")

RC = """RC charging
V1 in 0 DC 1
R1 in out 1k
C1 out 0 1u
.tran 10u 5m uic
.end
"""


def run(*args, cwd):
    return subprocess.run([EXE, *map(str, args)], cwd=cwd, capture_output=True, text=True, timeout=600)


@pytest.fixture
def files(tmp_path):
    (tmp_path / "rc.cir").write_text(RC)
    netdyn.save_model(mechanical_network(), tmp_path / "masses.yaml")
    netdyn.save_model(rlc_circuit(), tmp_path / "rlc.json")
    return tmp_path


def test_simulate_netlist_prints_the_ngspice_like_table(files):
    out = run("simulate", "rc.cir", "--step", "1e-4", cwd=files)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].split() == ["time", "v(in)", "v(out)", "i(V1)", "i(R1)", "i(C1)"]
    table = np.array([[float(x) for x in line.split()] for line in lines[1:]])
    t = table[:, 0]
    assert t.size == 51 and t[-1] == pytest.approx(5e-3)  # .tran's tstop, --step's spacing
    tau = 1e3 * 1e-6
    np.testing.assert_allclose(table[:, 2], 1 - np.exp(-t / tau), atol=1e-6)  # closed form
    np.testing.assert_allclose(table[:, 4], np.exp(-t / tau) / 1e3, atol=1e-9)
    np.testing.assert_allclose(table[:, 3], -table[:, 4], atol=1e-12)  # SPICE sign: into + through the source


def test_simulate_model_file_to_csv_and_plot_with_progress(files):
    out = run("simulate", "masses.yaml", "--tstop", "2", "--step", "0.01", "--csv", "out.csv", "--plot", "out.png",
              "--progress", "always", cwd=files)
    assert out.returncode == 0, out.stderr
    assert out.stdout == "" and "100%" in out.stderr and "[####" in out.stderr
    with open(files / "out.csv") as fh:
        rows = list(csv.reader(fh))
    assert rows[0][:3] == ["time", "v(x1)", "v(x2)"] and "i(k2)" in rows[0] and len(rows) == 202
    assert rows[0][-2:] == ["x_x1", "x_x2"]  # positions of a mechanical network too
    data = np.array(rows[1:], dtype=float)
    sol = netdyn.simulate(mechanical_network(), (0, 2), t_eval=data[:, 0])
    np.testing.assert_allclose(data[:, 1], sol.velocity("x1"), rtol=1e-6, atol=1e-9)
    assert (files / "out.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc")
def test_equations_in_c_compile(files):
    out = run("equations", "rlc.json", "--format", "c", "-o", "gen/rlc_eqs.c", cwd=files)
    assert out.returncode == 0, out.stderr
    assert (files / "gen" / "rlc_eqs.h").exists()
    subprocess.run(["gcc", "-std=c99", "-O2", "-Wall", "-Werror", "-c", "gen/rlc_eqs.c", "-o", "gen/rlc.o"],
                   cwd=files, check=True)


def test_info_reports_coordinates_dof_and_structural_warnings(files):
    (files / "loop.cir").write_text("two sources in parallel\nV1 a 0 1\nV2 a 0 2\nR1 a 0 1k\n.end\n")
    out = run("info", "loop.cir", cwd=files)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    warning = next(line for line in lines if "loop of voltage sources" in line)
    assert "V1" in warning and "V2" in warning and "warnings (2):" in lines
    assert any("cannot assemble the model" in line for line in lines)


def test_bad_netlist_card_exits_2_with_one_line_naming_the_line(files):
    (files / "bad.cir").write_text("title\nR1 1 0 1k\nQ1 1 2 0 npn\n.end\n")
    out = run("simulate", "bad.cir", cwd=files)
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr.count("\n") == 1
    assert out.stderr.startswith("netdyn: error: bad.cir: line 3: Q1") and "not supported" in out.stderr


# ------------------------------------------------------------------------------------------ in-process

def test_info_of_a_mechanical_model_file(files, capsys):
    assert main(["info", str(files / "masses.yaml")]) == 0
    out = capsys.readouterr().out
    assert "coordinates (2): x_x1, x_x2" in out and "degrees of freedom: 2" in out and "warnings (0): none" in out


def test_equations_in_every_text_format(files, capsys):
    path = str(files / "rlc.json")
    assert main(["equations", path, "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["coordinates"] == ["q_L1", "q_L2"]
    assert main(["equations", path, "--format", "latex", "--standalone", "--efforts", "right"]) == 0
    tex = capsys.readouterr().out
    assert tex.startswith("\\documentclass") and "\\ddot{q}_{L1}" in tex and "\\sin" in tex
    assert main(["equations", path, "--format", "python", "-o", str(files / "rlc_mod.py")]) == 0
    ns = {}
    exec((files / "rlc_mod.py").read_text(), ns)
    assert ns["COORDINATES"] == ["q_L1", "q_L2"] and ns["rhs"](0.0, np.zeros(4)).shape == (4,)
    assert main(["equations", path, "--format", "sympy", "--formulation", "branch"]) == 0
    assert "M = Matrix(" in capsys.readouterr().out


@pytest.mark.parametrize("command", [[], ["simulate"], ["equations"], ["info"], ["demo"]])
def test_help_everywhere(command, capsys):
    with pytest.raises(SystemExit) as exc:
        main(command + ["--help"])
    assert exc.value.code == 0 and "usage: netdyn" in capsys.readouterr().out


@pytest.mark.parametrize("argv, message", [
    (["info", "missing.cir"], "missing.cir: no such file"),
    (["info", "notes.txt"], "unknown file type '.txt'"),
    (["simulate", "masses.yaml"], "no --tstop given and the file has no .tran"),
    (["simulate", "rc.cir", "--step", "0"], "--step must be positive"),
    (["equations", "rc.cir", "--format", "pdf"], "invalid choice: 'pdf'"),
    (["frobnicate"], "invalid choice: 'frobnicate'"),
    (["simulate", "rc.cir", "--formulation", "mesh"], "unknown formulation 'mesh'"),
])
def test_bad_input_is_one_line_and_exit_code_2(files, argv, message, capsys, monkeypatch):
    monkeypatch.chdir(files)
    (files / "notes.txt").write_text("hello")
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("netdyn: error: ") and message in err and err.count("\n") == 1


def test_model_file_of_a_newer_version_is_refused(files, capsys):
    doc = json.loads((files / "rlc.json").read_text())
    doc["format_version"] = 7
    (files / "future.json").write_text(json.dumps(doc))
    assert main(["simulate", str(files / "future.json"), "--tstop", "1"]) == 2
    assert "format_version 7 is newer than this netdyn reads (2); upgrade netdyn" in capsys.readouterr().err


def test_demo_runs_the_lead_s_demo_when_present(tmp_path, capsys, monkeypatch):
    import importlib.util
    if importlib.util.find_spec("netdyn.demo") is None:
        assert main(["demo", str(tmp_path)]) == 2
        assert "netdyn.demo is missing" in capsys.readouterr().err
    else:  # pragma: no cover - depends on the lead's module
        calls = []
        monkeypatch.setattr("netdyn.demo.run", lambda outdir: calls.append(outdir))
        assert main(["demo", str(tmp_path)]) == 0 and calls == [str(tmp_path)]


@pytest.mark.parametrize("method", ["auto", "projection", "ida"])
def test_simulate_reports_progress_on_every_path(method):
    """The hook behind the progress bar: increasing times that reach the end (linear, projection, IDA paths)."""
    seen = []
    netdyn.simulate(rlc_circuit(), (0, 0.02), method=method, progress=seen.append)
    assert len(seen) > 10 and seen[-1] == pytest.approx(0.02) and max(seen) <= 0.02 * (1 + 1e-12)
    assert min(seen) >= 0 and sum(b < a for a, b in zip(seen, seen[1:])) <= len(seen) // 2
