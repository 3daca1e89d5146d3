"""Export round trips: generated Python and C against netdyn's own CompiledModel, JSON back to equal equations."""
import ctypes
import importlib.util
import json
import shutil
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import sympy as sp
from scipy.integrate import solve_ivp

import netdyn
import netdyn.models
from netdyn.lagrange.sources import Sawtooth
from netdyn.export import export
from netdyn.export.json import from_json
from netdyn.numerics.functions.compiled import compile_model
from netdyn.symbols import t
from systems import mechanical_network, rlc_circuit
from test_book_examples import rlc_network_by_hand, slider_crank

SLIDER_VALUES = {"m1": 1.0, "m2": 2.0, "m3": 0.7, "I1": 0.1, "I2": 0.4, "l1": 0.3, "l2": 0.9, "tau": 1.5}


def slider_crank_model():
    model = slider_crank()[0]
    model.parameters.update({sp.Symbol(k, positive=True): v for k, v in SLIDER_VALUES.items()})
    return model


VCVS_RLC = """two RLC sections, the second driven by a VCVS from the first's capacitor
V1 in 0 SIN(0 1 1k)
R1 in a 100
L1 a b 10m
C1 b 0 1u
E1 c 0 b 0 2
R2 c d 100
L2 d e 10m
C2 e 0 1u
.end
"""


def controlled_circuit():
    return netdyn.read_netlist(VCVS_RLC).model(formulation="branch", symbolic=True)


SYSTEMS = {
    "circuit": lambda: rlc_circuit().model(formulation="branch"),
    "controlled": controlled_circuit,  # a servo constraint: the multiplier acts off its own row (R != A)
    "mechanical": lambda: mechanical_network().model(),
    "slider_crank": slider_crank_model,
    "rolling_disk": lambda: netdyn.models.rolling_disk(),  # nonholonomic: A(q), a, gamma_psi
}


def random_states(n, count=5, seed=1):
    rng = np.random.default_rng(seed)
    return [(float(rng.uniform(0, 1)), rng.normal(size=n), rng.normal(size=n)) for _ in range(count)]


def import_text(tmp_path, name, text):
    path = tmp_path / f"{name}.py"
    path.write_text(text)
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def close(a, b):
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    assert a.shape == b.shape
    np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12 * max(1.0, np.max(np.abs(b), initial=0)))


def reference(cm, p, tt, q, f):
    M, h = cm.dynamics(tt, q, f, p)
    out = {"mass_matrix": M, "h": h}
    c = cm.constraints(tt, q, f, p)
    out.update({k: getattr(c, k) for k in ("phi", "Phi_q", "Phi_t", "gamma_phi", "A", "a", "gamma_psi")})
    out["reaction"] = c.reaction
    return out


@pytest.mark.parametrize("system", sorted(SYSTEMS))
def test_python_export_matches_compiled_model(system, tmp_path):
    model = SYSTEMS[system]()
    cm = compile_model(model)
    p = cm.parameter_vector()
    mod = import_text(tmp_path, f"exported_{system}", export(model, "python"))
    assert mod.COORDINATES == model.coordinate_names
    pv, inputs = mod.parameters()
    np.testing.assert_array_equal(pv, p.vector)
    for tt, q, f in random_states(cm.n):
        ref = reference(cm, p, tt, q, f)
        for name, value in ref.items():
            close(getattr(mod, name)(tt, q, f, pv), value)
        close(mod.forcing(tt, q, f, pv), -ref["h"])
        for mine, theirs in zip(mod.accelerations(tt, q, f, pv), cm.accelerations(tt, q, f, p)):
            np.testing.assert_allclose(mine, theirs, rtol=1e-10, atol=1e-10 * (1 + np.max(np.abs(theirs), initial=0)))


@pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc")
@pytest.mark.parametrize("system", sorted(SYSTEMS))
def test_c_export_compiles_and_matches_compiled_model(system, tmp_path):
    model = SYSTEMS[system]()
    cm = compile_model(model)
    p = cm.parameter_vector()
    code = netdyn.export.export(model, "c", name=f"exported_{system}")
    header, source = code.write(tmp_path)
    subprocess.run(["gcc", "-std=c99", "-O2", "-Wall", "-Werror", "-c", source, "-o", str(tmp_path / "x.o")],
                   check=True, capture_output=True)
    lib_path = tmp_path / f"lib{system}.so"
    subprocess.run(["gcc", "-std=c99", "-O2", "-shared", "-fPIC", source, "-o", str(lib_path), "-lm"],
                   check=True, capture_output=True)
    lib = ctypes.CDLL(str(lib_path))
    dp = np.ctypeslib.ndpointer(dtype=np.float64, flags="C_CONTIGUOUS")
    prefix = f"exported_{system}_"
    assert list(np.ctypeslib.as_array((ctypes.c_double * len(cm.parameters)).in_dll(lib, prefix + "defaults"))) \
        == list(p.vector)
    u = np.zeros(1)
    for tt, q, f in random_states(cm.n, seed=2):
        for name, value in reference(cm, p, tt, q, f).items():
            fn = getattr(lib, prefix + name)
            fn.argtypes = [ctypes.c_double, dp, dp, dp, dp, dp]
            fn.restype = None
            out = np.full(max(value.size, 1), np.nan)
            fn(tt, q, f, p.vector, u, out)
            close(out[:value.size].reshape(value.shape), value)
        rhs = getattr(lib, prefix + "rhs")
        rhs.argtypes = [ctypes.c_double, dp, dp, dp, dp]
        rhs.restype = ctypes.c_int
        dydt = np.zeros(2 * cm.n)
        assert rhs(tt, np.concatenate([q, f]), p.vector, u, dydt) == 0
        acc = cm.accelerations(tt, q, f, p)[0]
        np.testing.assert_array_equal(dydt[:cm.n], f)
        np.testing.assert_allclose(dydt[cm.n:], acc, rtol=1e-10, atol=1e-10 * (1 + np.max(np.abs(acc))))


def test_python_export_integrates_with_scipy_alone(tmp_path):
    """The exported circuit, imported where sympy and netdyn cannot be, integrated by solve_ivp, matches netdyn."""
    net = rlc_circuit()
    model = net.model()
    (tmp_path / "rlc_exported.py").write_text(export(model, "python"))
    script = textwrap.dedent("""
        import sys
        sys.modules["sympy"] = sys.modules["netdyn"] = None   # importing either now fails
        import numpy as np
        from scipy.integrate import solve_ivp
        import rlc_exported as m
        params = m.parameters()
        y0 = np.zeros(2 * m.N)
        sol = solve_ivp(m.rhs, (0, 0.05), y0, args=(params,), rtol=1e-10, atol=1e-12, t_eval=[0.05])
        print(repr(float(sol.y[0, -1])), repr(float(sol.y[m.N, -1])))
    """)
    out = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, check=True)
    q_end, f_end = map(float, out.stdout.split())
    sol = netdyn.simulate(model, (0, 0.05), t_eval=[0, 0.05], rtol=1e-10)
    assert q_end == pytest.approx(sol.q[0, -1], rel=1e-6)
    assert f_end == pytest.approx(sol.f[0, -1], rel=1e-6)
    assert abs(f_end) > 1e-3  # the current really moved


def test_exported_controlled_source_drives_its_load_like_netdyn(tmp_path):
    """A VCVS's servo constraint in the exported module: the second section's current is the one netdyn
    simulates (written with A^T mu, as before, the VCVS's current had no effect and i(L2) stayed 0)."""
    model = controlled_circuit()
    mod = import_text(tmp_path, "vcvs_exported", export(model, "python"))
    assert "E1" in mod.PARAMETERS and mod.DEFAULTS["E1"] == 2.0
    times = np.linspace(0, 2e-3, 9)
    sol = netdyn.simulate(model, (0, 2e-3), t_eval=times, rtol=1e-10, atol=1e-13)
    ivp = solve_ivp(mod.rhs, (0, 2e-3), np.zeros(2 * mod.N), rtol=1e-11, atol=1e-14, t_eval=times, method="Radau")
    i_L2 = ivp.y[mod.N + mod.COORDINATES.index("q_L2")]
    assert np.max(np.abs(i_L2)) > 1e-3
    np.testing.assert_allclose(i_L2, sol.current("L2"), atol=1e-7 * np.max(np.abs(i_L2)))


def test_python_export_of_slider_crank_integrates_like_netdyn(tmp_path):
    model = slider_crank_model()
    mod = import_text(tmp_path, "slider", export(model, "python"))
    sol = netdyn.simulate(model, (0, 0.5), q0={"theta1": 0.4}, guess={"theta2": -0.1}, t_eval=[0, 0.5], rtol=1e-10)
    y0 = np.concatenate([sol.q[:, 0], sol.f[:, 0]])
    ivp = solve_ivp(mod.rhs, (0, 0.5), y0, rtol=1e-11, atol=1e-12, method="DOP853")
    np.testing.assert_allclose(ivp.y[:7, -1], sol.q[:, -1], atol=1e-6)
    assert abs(ivp.y[2, -1] - 0.4) > 0.05  # the crank turned


def test_python_export_takes_inputs_as_functions(tmp_path):
    model, q, (L1, L2, C1, C2, R1), v = rlc_network_by_hand()
    mod = import_text(tmp_path, "byhand", export(model, "python"))
    assert mod.INPUTS == ["v"] and mod.PARAMETERS == ["C1", "C2", "L1", "L2", "R1"]
    values = {"C1": 1.0, "C2": 2.0, "L1": 0.5, "L2": 0.25, "R1": 3.0, "v": np.sin}
    cm = compile_model(model)
    p = cm.parameter_vector({**values, "v": sp.sin(t)})
    for tt, qq, ff in random_states(cm.n):
        close(mod.h(tt, qq, ff, mod.parameters(values)[0], [np.sin(tt)]), cm.dynamics(tt, qq, ff, p)[1])
    with pytest.raises(KeyError, match="input 'v'"):
        mod.parameters({k: v for k, v in values.items() if k != "v"})


@pytest.mark.parametrize("system", sorted(SYSTEMS))
def test_json_round_trip_gives_equal_equations(system):
    model = SYSTEMS[system]()
    eq = model.derive()
    text = export(model, "json")
    back = from_json(text)
    assert back["equations"] == eq.lagrange_rows() + list(eq.phi) + eq.flow_constraint_rows()
    assert back["M"] == eq.M and back["Phi_q"] == eq.Phi_q and back["A"] == eq.A and back["R"] == eq.reaction
    assert back["h"] == eq.h and back["gamma_phi"] == eq.gamma_phi and back["gamma_psi"] == eq.gamma_psi
    doc = json.loads(text)
    assert doc["coordinates"] == model.coordinate_names
    assert [m["name"] for m in doc["multipliers"]["lambda"]] == [str(s) for s in eq.lam]
    names = {p["name"]: sp.Symbol(p["name"]) for p in doc["parameters"]}  # E1 is also sympy's expint E1
    for s in doc["equations"]:  # plain sympify reads every string
        assert isinstance(sp.sympify(s, locals={"Sawtooth": Sawtooth, **names}), sp.Expr)


def test_json_of_a_newer_version_is_refused():
    doc = json.loads(export(SYSTEMS["mechanical"](), "json"))
    doc["format_version"] = 99
    with pytest.raises(netdyn.ParseError, match="format_version 99 is newer"):
        from_json(json.dumps(doc))


def test_matrix_form_reproduces_the_lagrange_equations():
    model = slider_crank_model()
    form = export(model, "sympy")
    rows = model.equations()[:7]
    diff = form.residual() - sp.Matrix(rows)
    assert all(sp.simplify(d) == 0 for d in diff)
    assert form.M.shape == (7, 7) and form.Phi_q.shape == (6, 7)
    assert form.M == sp.diag(*sp.symbols("m1 m1 I1 m2 m2 I2 m3", positive=True))
    model = controlled_circuit()   # a VCVS: its multiplier acts off its own row (R != A)
    form = export(model, "sympy")
    n = len(model.coordinates)
    assert form.R != form.A
    assert sp.simplify(form.residual() - sp.Matrix(model.equations()[:n])) == sp.zeros(n, 1)


def test_latex_of_the_slider_crank_has_dots_multipliers_and_subscripts():
    model = slider_crank_model()
    tex = export(model, "latex")
    assert tex.startswith("\\begin{align}") and tex.count("\\\\\n") == 7 + 6 - 1
    assert r"\ddot{\theta}_{1}" in tex and r"\lambda_{6}" in tex and r"I_{1} \ddot{\theta}_{1}" in tex
    right = export(model, "latex", efforts="right").split("\\\\\n")
    assert right[2].rstrip().endswith("&= \\tau") and right[0].rstrip().endswith("&= 0")
    doc = export(model, "latex", standalone=True)
    assert doc.startswith("\\documentclass") and doc.rstrip().endswith("\\end{document}")


def test_latex_of_a_circuit_names_the_flow_multipliers():
    tex = export(rlc_circuit().model(formulation="branch"), "latex", standalone=True)
    assert r"\mu_{1}" in tex and r"\ddot{q}_{L1}" in tex and r"\dot{q}_{R1}" in tex
    assert "KCL at node" in tex


def test_export_errors_name_the_problem():
    model = SYSTEMS["mechanical"]()
    with pytest.raises(netdyn.ExportError, match="unknown export format 'fortran'"):
        export(model, "fortran")
    with pytest.raises(netdyn.ExportError, match="does not take option"):
        export(model, "json", colour=True)
    with pytest.raises(netdyn.ExportError, match="efforts='middle'"):
        export(model, "latex", efforts="middle")


def test_network_exports_through_its_model():
    net = mechanical_network()
    assert netdyn.export.export(net, "json") == export(net.model(), "json")
