"""The command line at library speed (issue 26): a light ``--help``, ``python -m netdyn``, a cheap ``info``,
the table read in bulk (and equal to the accessors), every argument checked with one line, output sizes capped,
and Ctrl-C (SIGINT) during the first pass returning the requested grid.

Subprocesses run ``python -m netdyn`` on this checkout (``PYTHONPATH``), not whatever ``netdyn`` is on PATH.
"""
import csv
import io
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import netdyn
from netdyn.cli import main
from systems import mechanical_network, rlc_circuit, series_rlc

ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
HEAVY = ("numpy", "sympy", "scipy", "numba", "matplotlib", "networkx", "scipy.integrate")


def python(code, *args, timeout=300):
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code), *map(str, args)], capture_output=True,
                          text=True, timeout=timeout, env=ENV, cwd=ROOT)


def ladder(n):
    lines = [f"* RC ladder, {n} sections", "V1 n0 0 DC 1"]
    for k in range(1, n + 1):
        lines += [f"R{k} n{k - 1} n{k} 1k", f"C{k} n{k} 0 1n"]
    return "\n".join(lines + [".tran 10n 10u 0 10n uic", ".end", ""])


# ------------------------------------------------------------------------------------------ imports

@pytest.mark.parametrize("argv", [["--help"], ["simulate", "--help"], ["--version"],
                                  ["simulate", "x.cir", "--tstop", "abc"], ["ac", "x.cir", "--points", "0"],
                                  ["frobnicate"]])
def test_help_version_and_argument_errors_import_no_numerics(argv):
    """Counts, not timings: what ``netdyn --help`` (and an argument error) imports, against a bare interpreter."""
    out = python("""
        import sys
        bare = len(sys.modules)
        from netdyn.cli import main
        try:
            code = main(sys.argv[1:])
        except SystemExit as exc:
            code = exc.code
        print(code, len(sys.modules) - bare, ",".join(m for m in %r if m in sys.modules), file=sys.stderr)
    """ % (HEAVY,), *argv)
    code, added, heavy = (out.stderr.strip().splitlines()[-1].split(" ") + [""])[:3]
    assert heavy == "", f"{argv} imported {heavy}"
    assert int(code) in (0, 2) and int(added) < 60  # netdyn.cli, netdyn, errors, units, argparse and friends


def test_python_dash_m_netdyn():
    out = subprocess.run([sys.executable, "-m", "netdyn", "--version"], capture_output=True, text=True, env=ENV,
                         cwd=ROOT, timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == f"netdyn {netdyn.__version__}"
    out = subprocess.run([sys.executable, "-m", "netdyn", "info", "missing.cir"], capture_output=True, text=True,
                         env=ENV, cwd=ROOT, timeout=120)
    assert out.returncode == 2 and out.stderr == "netdyn: error: missing.cir: no such file\n"


# ------------------------------------------------------------------------------------------ arguments

@pytest.fixture
def rc(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "rc.cir").write_text("RC\nV1 in 0 DC 0 AC 1\nR1 in out 1k\nC1 out 0 1u\n.tran 10u 5m\n.end\n")
    return tmp_path


@pytest.mark.parametrize("argv, message", [
    (["ac", "rc.cir", "--sweep", "lin", "--points", "1e8", "--fstart", "1", "--fstop", "1k"],
     "the sweep has 100,000,000 frequencies, over the cap of 1,000,000"),
    (["ac", "rc.cir", "--sweep", "dec", "--points", "10", "--fstart", "-5", "--fstop", "1k"],
     "--fstart -5: a frequency must be finite and positive"),
    (["ac", "rc.cir", "--sweep", "dec", "--points", "0", "--fstart", "1", "--fstop", "1k"],
     "'0' is not a whole number of at least 1"),
    (["ac", "rc.cir", "--sweep", "dec", "--points", "2.5", "--fstart", "1", "--fstop", "1k"],
     "'2.5' is not a whole number"),
    (["ac", "rc.cir", "--sweep", "dec", "--points", "10", "--fstart", "1k", "--fstop", "10"],
     "--fstop 10 is below --fstart 1000"),
    (["ac", "rc.cir", "--sweep", "dec", "--points", "10", "--fstart", "0", "--fstop", "10"],
     "--fstart 0: a frequency must be finite and positive"),
    (["ac", "rc.cir", "--sweep", "lin", "--points", "10", "--fstart", "1", "--fstop", "1e400"],
     "is not a finite number"),
    (["ac", "rc.cir", "--sweep", "dec", "--points", "10", "--fstart", "1", "--fstop", "1meg", "--max-points", "5"],
     "the sweep has 61 frequencies, over the cap of 5"),
    (["simulate", "rc.cir", "--step", "1n"], "--step 1e-09 gives 5,000,000 output points over 0.005 s, over the cap"),
    (["simulate", "rc.cir", "--step", "1u", "--max-points", "100"], "raise the cap with --max-points 5000"),
    (["simulate", "rc.cir", "--max-cells", "1000"], "the table would hold 6 columns x 501 rows"),
    (["simulate", "rc.cir", "--outputs", "v(nowhere)"], "--outputs: no column 'v(nowhere)'"),
    (["simulate", "rc.cir", "--outputs", " ; "], "--outputs is empty"),
    (["simulate", "rc.cir", "--csv", "no/such/folder/out.csv"], "--csv no/such/folder/out.csv: no folder"),
    (["simulate", "rc.cir", "--max-points", "-3"], "'-3' is not a whole number of at least 1"),
    (["simulate", "rc.cir", "--formulation", "electrical="], "give FORM or DOMAIN=FORM"),
    (["equations", "rc.cir", "-o", "rc.cir/x.tex"], "--output rc.cir/x.tex: no folder"),  # (a missing folder is made)
])
def test_every_argument_fault_is_one_line(rc, argv, message, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("netdyn: error: ") and message in err and err.count("\n") == 1, err


def test_the_caps_can_be_raised(rc, capsys):
    assert main(["ac", "rc.cir", "--sweep", "lin", "--points", "7", "--fstart", "1", "--fstop", "1k",
                 "--max-points", "7", "--csv", "ac.csv"]) == 0
    assert len((rc / "ac.csv").read_text().splitlines()) == 8
    assert main(["simulate", "rc.cir", "--step", "1u", "--max-points", "5000", "--outputs", "v(out)",
                 "--csv", "t.csv"]) == 0
    assert len((rc / "t.csv").read_text().splitlines()) == 5002


# ------------------------------------------------------------------------------------------ the table

@pytest.mark.parametrize("formulation", ["loop", "branch", "node"])
def test_the_bulk_table_equals_the_accessors(tmp_path, formulation):
    """Node voltages from one tree walk over ports read in bulk, currents by element: as ``sol.voltage``/``current``."""
    net = rlc_circuit()
    netdyn.save_model(net, tmp_path / "rlc.json")
    assert main(["simulate", str(tmp_path / "rlc.json"), "--tstop", "0.02", "--step", "1e-4", "--formulation",
                 formulation, "--csv", str(tmp_path / "out.csv")]) == 0
    with open(tmp_path / "out.csv") as fh:
        rows = list(csv.reader(fh))
    head, data = rows[0], np.array(rows[1:], dtype=float)
    assert head == ["time", "v(in)", "v(a)", "v(out)", "v(b)", "i(V1)", "i(R1)", "i(L1)", "i(C1)", "i(R2)", "i(L2)"]
    sol = netdyn.simulate(net, (0, 0.02), t_eval=data[:, 0], formulation=formulation)
    for j, name in enumerate(head[1:], 1):
        ref = sol.voltage(name[2:-1]) if name[0] == "v" else sol.current(name[2:-1])
        np.testing.assert_allclose(data[:, j], ref, rtol=1e-9, atol=1e-12 * np.max(np.abs(ref)), err_msg=name)


def test_the_bulk_table_of_a_diode_circuit_equals_the_accessors(tmp_path):
    """The circuit path: linear ports in bulk, the diode's through its own law."""
    (tmp_path / "d.cir").write_text("rectifier\nV1 in 0 SIN(0 5 1k)\nR1 in a 1k\nD1 a out DMOD\nC1 out 0 1u\n"
                                    "R2 out 0 10k\n.model DMOD D(IS=1e-14 RS=1)\n.tran 20u 2m\n.end\n")
    assert main(["simulate", str(tmp_path / "d.cir"), "--csv", str(tmp_path / "out.csv")]) == 0
    with open(tmp_path / "out.csv") as fh:
        rows = list(csv.reader(fh))
    head, data = rows[0], np.array(rows[1:], dtype=float)
    assert {"v(in)", "v(a)", "v(out)", "i(V1)", "i(R1)", "i(D1)", "i(C1)", "i(R2)"} <= set(head)  # (and RS's node)
    sol = netdyn.simulate(netdyn.read_netlist(tmp_path / "d.cir"), (0, 2e-3), t_eval=data[:, 0])
    assert sol.method == "circuit"
    for j, name in enumerate(head[1:], 1):
        ref = sol.voltage(name[2:-1]) if name[0] == "v" else sol.current(name[2:-1])
        np.testing.assert_allclose(data[:, j], ref, rtol=1e-9, atol=1e-12 * np.max(np.abs(ref)), err_msg=name)


def test_outputs_pick_columns_by_name_and_pattern(rc, capsys):
    assert main(["simulate", "rc.cir", "--outputs", "i(C*);v(out)", "--csv", "t.csv"]) == 0
    rows = (rc / "t.csv").read_text().splitlines()
    assert rows[0] == "time,v(out),i(C1)" and len(rows) == 502
    netdyn.save_model(mechanical_network(), rc / "m.yaml")
    assert main(["simulate", "m.yaml", "--tstop", "1", "--outputs", "x_x2;v(x1)", "--csv", "m.csv"]) == 0
    assert (rc / "m.csv").read_text().splitlines()[0] == "time,v(x1),x_x2"
    assert main(["simulate", "m.yaml", "--tstop", "1", "--outputs", "x_x9"]) == 2
    assert "no column 'x_x9'" in capsys.readouterr().err


def test_info_is_cheap_and_fits_a_terminal(tmp_path, capsys):
    (tmp_path / "big.cir").write_text(ladder(2000))
    assert main(["info", str(tmp_path / "big.cir")]) == 0
    out = capsys.readouterr().out
    assert "elements: 4001 (Capacitor 2000, Resistor 2000, VoltageSource 1)" in out
    assert "nodes: 2001: n0, n1, n2, n3, n4, n5, ..., n1999, n2000 + ground" in out
    assert "model: not derived (4,001 elements); --derive adds" in out and "coordinates (" not in out
    assert max(len(line) for line in out.splitlines()) < 200
    (tmp_path / "small.cir").write_text(ladder(3))
    assert main(["info", str(tmp_path / "small.cir"), "--no-derive"]) == 0
    assert "model: not derived" in capsys.readouterr().out
    assert main(["info", str(tmp_path / "small.cir")]) == 0  # small: derived by itself
    out = capsys.readouterr().out
    assert "coordinates (3)" in out and "integrator: linear" in out


# ------------------------------------------------------------------------------------------ paths and values

def test_path_likes_and_missing_files_everywhere(tmp_path):
    from netdyn.errors import NetdynError
    (tmp_path / "rc.cir").write_text(ladder(2))
    netdyn.save_model(series_rlc(), tmp_path / "s.json")
    assert len(netdyn.read_netlist(tmp_path / "rc.cir").elements) == 5
    assert len(netdyn.load_model(tmp_path / "s.json").elements) == 4
    for reader in (netdyn.read_netlist, netdyn.load_model, netdyn.load_bond_graph):
        for missing in (tmp_path / "missing.cir", str(tmp_path / "missing.cir")):
            with pytest.raises(NetdynError, match="missing.cir"):
                reader(missing)


def test_a_complex_q0_names_the_coordinate():
    from netdyn.errors import NetdynError
    x, = netdyn.coordinates("x,")
    model = netdyn.LagrangianModel([x], T=x.diff(netdyn.t) ** 2 / 2, V=x ** 2 / 2)
    with pytest.raises(NetdynError, match="x"):
        netdyn.simulate(model, (0, 1), q0={"x": 1 + 2j})
    net = netdyn.Network("pendulum")
    from netdyn.components.planar import RigidBody, Revolute
    net.add(RigidBody("link", 1.0, 0.1), Revolute("O", "ground", (0, 0), "link", (-0.5, 0)))
    with pytest.raises(NetdynError, match="O"):
        netdyn.simulate(net, (0, 1), q0={"O": 0.3j})


# ------------------------------------------------------------------------------------------ progress and Ctrl-C

PENDULUM = """
    import os, signal, sys
    signal.signal(signal.SIGINT, signal.default_int_handler)  # (a child of a shell that ignores SIGINT inherits that)
    import netdyn
    from netdyn.components.planar import RigidBody, Revolute
    net = netdyn.Network("pendulum")
    net.add(RigidBody("link", 1.0, 0.1), Revolute("O", "ground", (0, 0), "link", (-0.5, 0)))
"""


def test_ctrl_c_in_the_first_pass_returns_the_requested_grid():
    out = python(PENDULUM + """
    import numpy as np
    class Interrupting:
        stages = []
        def stage(self, label):
            self.stages.append(label)
        def __call__(self, t):
            if self.stages == ["first pass"] and t >= 1.0:
                os.kill(os.getpid(), signal.SIGINT)
    t_eval = np.linspace(0, 3, 301)
    sol = netdyn.simulate(net, (0, 3), t_eval=t_eval, progress=Interrupting())
    ref = netdyn.simulate(net, (0, 3), t_eval=t_eval)
    k = sol.t.size
    assert sol.status == -2 and 100 <= k < 301 and np.array_equal(sol.t, t_eval[:k]), (sol.status, sol.t)
    assert "first pass" in sol.message and Interrupting.stages == ["first pass"]
    assert np.max(np.abs(sol.q - ref.q[:, :k])) < 1e-5, np.max(np.abs(sol.q - ref.q[:, :k]))
    # not interrupted: both passes reported, labelled, and the numbers those of a run without a callback
    seen = []
    class Labelled(Interrupting):
        stages = []
        def __call__(self, t):
            seen.append((self.stages[-1], t))
    full = netdyn.simulate(net, (0, 3), t_eval=t_eval, progress=Labelled())
    assert Labelled.stages == ["first pass", "refining"] and full.status == 0
    assert {s for s, _ in seen} == {"first pass", "refining"} and max(t for _, t in seen) == 3
    assert np.array_equal(full.q, ref.q) and np.array_equal(full.f, ref.f)
    print("ok")
    """)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr[-2000:]


def test_ctrl_c_in_the_cli_keeps_the_grid_and_the_bar_where_it_stopped(tmp_path):
    out = python(PENDULUM + """
    netdyn.save_model(net, "pend.yaml")
    os.environ["NETDYN_COMPILED_LOOP"] = "0"  # the Python loop: progress at every step (a cached compiled loop
    from netdyn import cli                    # may cover the whole span in one chunk)
    call = cli.ProgressBar.__call__
    def interrupting(self, t):
        call(self, t)
        if self.label == "first pass" and t >= 1.0:
            os.kill(os.getpid(), signal.SIGINT)
    cli.ProgressBar.__call__ = interrupting
    sys.exit(cli.main(["simulate", "pend.yaml", "--tstop", "3", "--step", "0.01", "--csv", "out.csv",
                       "--progress", "always"]))
    """.replace('"pend.yaml"', repr(str(tmp_path / "pend.yaml"))).replace('"out.csv"', repr(str(tmp_path / "out.csv"))))
    assert out.returncode == 130, out.stderr[-2000:]
    bar = out.stderr.replace("\r", "\n").splitlines()
    last = [line for line in bar if line.startswith("[")][-1]
    assert "first pass: interrupted" in last and "100%" not in last
    assert "Interrupted by the user (Ctrl-C)" in out.stderr
    data = np.loadtxt(tmp_path / "out.csv", delimiter=",", skiprows=1)
    grid = np.linspace(0, 3, 301)
    assert 100 <= data.shape[0] < 301 and np.allclose(data[:, 0], grid[:data.shape[0]], rtol=0, atol=1e-15)


def test_the_bar_labels_passes_and_stops_where_interrupted():
    from netdyn.cli import ProgressBar
    out = io.StringIO()
    bar = ProgressBar(0.0, 1.0, out, mode="always")
    bar.stage("first pass")
    bar(1.0)
    bar.stage("refining")
    bar(0.5)
    bar.close(stopped=True)
    lines = [x for x in out.getvalue().replace("\r", "\n").splitlines() if x]
    assert lines[-1].endswith("50%  t = 0.5  refining: interrupted")
    assert any(x.endswith("100%  t = 1  first pass") for x in lines)
