"""Code written against netdyn 0.1's documented API runs, with a DeprecationWarning that names the new home.

0.1 is the tree at the parent of commit 77cad1b (``__version__ = "0.1.0"``; 77cad1b split the flat package into
layer sub-packages and took ``LagrangianModel.export`` away). The snippets below are 0.1's own, copied
verbatim from its README.md and module docstrings; a line marked ``# import added`` is the import a module
docstring got from its module's namespace (a user writes it). The aliases go in 0.4 (``netdyn._compat``).
"""
import re
import warnings

import pytest

import netdyn
from netdyn import _compat

#: 0.1's README, "Export the derived equations" (verbatim)
README_EXPORT = '''
import netdyn
from netdyn.components.electrical import VoltageSource, Resistor, Inductor, Capacitor
net = netdyn.Network("rlc")
net.add(VoltageSource("V1", "in", "0", 1.0), Resistor("R1", "in", "a", 10.0),
        Inductor("L1", "a", "out", 1e-3), Capacitor("C1", "out", "0", 1e-6))
model = net.model()
print(model.export("latex", efforts="right"))          # align environment; standalone=True for a .tex file
open("rlc_eqs.py", "w").write(model.export("python"))  # needs only numpy
model.export("c", name="rlc_eqs").write("gen")         # gen/rlc_eqs.h, gen/rlc_eqs.c (C99, shared sub-expressions)
text = model.export("json")                            # netdyn.export.json.from_json(text) reads it back
form = model.export("sympy")                           # M q'' = F - Phi_q^T lambda - A^T mu as sympy matrices
'''

#: 0.1's netdyn/sources.py docstring (verbatim); 0.1's README: "netdyn.sources.sine/pulse/pwl/step"
SOURCES_DOCTEST = '''
>>> import numpy as np, sympy as sp
>>> from netdyn.symbols import t
>>> from netdyn.sources import pulse, spice_form
>>> v = pulse(0, 5, delay=1e-3, rise=1e-4, fall=1e-4, width=1e-3, period=4e-3)
>>> f = sp.lambdify(t, v, "numpy")
>>> np.round(f(np.array([0.0, 1.05e-3, 1.5e-3, 5.5e-3, 8.0e-3])), 12).tolist()
[0.0, 2.5, 5.0, 5.0, 0.0]
>>> spice_form(v)
'PULSE(0 5 0.001 0.0001 0.0001 0.001 0.004)'
'''

#: 0.1's netdyn/initial.py docstring
INITIAL_DOCTEST = '''
>>> import sympy as sp
>>> from netdyn import LagrangianModel, coordinates, t
>>> from netdyn.numeric import compile_model
>>> from netdyn.initial import consistent_initial_conditions  # import added
>>> x, y = coordinates("x y")
>>> m = LagrangianModel([x, y], T=(x.diff(t)**2 + y.diff(t)**2)/2, constraints=[x**2 + y**2 - 1])
>>> cm = compile_model(m)
>>> q, f = consistent_initial_conditions(cm, 0.0, {"x": 0.6}, {}, cm.parameter_vector(), guess={"y": -1})
>>> [round(float(v), 12) for v in q]
[0.6, -0.8]
'''

#: 0.1's netdyn/stamp.py docstring; 0.1's README: "`netdyn.stamp.linear_network`"
STAMP_DOCTEST = '''
>>> from netdyn import Network
>>> from netdyn.components.electrical import VoltageSource, Resistor, Capacitor
>>> from netdyn.stamp import linear_network  # import added
>>> net = Network()
>>> _ = net.add(VoltageSource("V1", "a", "0", 1.0), Resistor("R1", "a", "b", 2.0), Capacitor("C1", "b", "0", 0.5))
>>> lin = linear_network(net)
>>> lin.names, lin.D.toarray().tolist(), lin.K.toarray().tolist()
(['q_R1'], [[2.0]], [[2.0]])
'''

#: 0.1's README, Performance: "`derive(model, fast=False)` is the pure-sympy reference" (netdyn/equations.py),
#: on 0.1's netdyn/equations.py docstring model
DERIVE_DOCTEST = '''
>>> import sympy as sp
>>> from netdyn import LagrangianModel, coordinates, t
>>> from netdyn.equations import derive  # import added
>>> x, = coordinates("x,")
>>> m, k = sp.symbols("m k")
>>> eq = derive(LagrangianModel([x], T=m*x.diff(t)**2/2, V=k*x**2/2), fast=False)
>>> eq.matrix("M"), eq.h
(Matrix([[m]]), [k*x])
'''

#: every public name of every 0.1 module that no longer exists as a file (module -> names)
NAMES_01 = {
    "netdyn.analog": "KINDS MECHANICAL analog dual",
    "netdyn.assemble": "DEFAULT_FORMULATION FORMULATIONS identifier role resolve_formulation structural_check "
                       "coordinate_plan assemble element_ports",
    "netdyn.bookkeeping": "EnergyReport energy_report REST",
    "netdyn.compare": "MAX_SEARCH Analogy normal_form analogy Comparison compare",
    "netdyn.energy": "stored_energy dissipated_power supplied_power port_efforts element_energy",
    "netdyn.equations": "Equations internal_symbols derive internalize",
    "netdyn.exprtext": "to_text symbol_table from_text",
    "netdyn.fastdiff": "rate Differentiator",
    "netdyn.initial": "consistent_initial_conditions",
    "netdyn.integrability": "Integrability is_integrable",
    "netdyn.inverse": "reaction_expressions inverse_dynamics multipliers_from_motion absolute_motion reaction",
    "netdyn.kinematics": "driver_constraints with_drivers assemble_configuration kinematics",
    "netdyn.linear": "sort_poles modes StateSpace Descriptor",
    "netdyn.lineardae": "LinearDAE consistent_rates radau",
    "netdyn.linearize": "OperatingPoint with_inputs equilibrium LinearModel linearize transfer_function",
    "netdyn.linearsim": "linear_dae try_linear explain_not_linear simulate_linear LinearSolution",
    "netdyn.model": "LagrangianModel",
    "netdyn.network": "port_key Network",
    "netdyn.numeric": "Params time_function CompiledModel compile_model",
    "netdyn.planar": "FORMULATIONS split_formulation planar_elements joints joint_graph check_structure spanning_tree "
                     "fundamental_loops distribute assemble_planar",
    "netdyn.plotting": "pose_function draw plot_mechanism animate_mechanism",
    "netdyn.simulate": "SOLVERS as_model simulate source_breakpoints kkt_regular",
    "netdyn.solution": "Solution",
    "netdyn.sources": "Sawtooth spice_form breakpoints step sine pulse pwl",
    "netdyn.stamp": "NotLinear LinearNetwork linear_network",
    "netdyn.structure": "Mobility dependent_rows redundant_constraints with_constraints without_constraints mobility "
                        "prepare integration_failure SingularityWatch",
    "netdyn.sweep": "parameter_grid sweep",
    "netdyn.topology": "branches reduced_incidence independent_loop_count spanning_tree fundamental_loops tree_paths "
                       "source_loops source_cutsets dangling_nodes components_without",
}
#: 0.1 names not kept, and why (never documented; internal helpers that went in 0.2)
REMOVED_01 = {
    "netdyn.exprtext.namespace": "the eval namespace, removed by the restricted expression reader (safety)",
    "netdyn.planar.PlanarPart": "merged into netdyn.graph.mechanism.BodyPart",
    "netdyn.simulate.stiff": "became the internal stiffness measure of the integrator choice",
}


def run_doctest(text, tmp_path, monkeypatch):
    import doctest
    monkeypatch.chdir(tmp_path)
    test = doctest.DocTestParser().get_doctest(text, {}, "0.1 snippet", None, 0)
    report = []
    result = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS).run(test, out=report.append)
    assert result.failed == 0, "".join(report)


def messages(record):
    return [str(w.message) for w in record if issubclass(w.category, DeprecationWarning)]


def test_readme_export_block_of_0_1_runs_and_names_export_equations(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    namespace = {}
    with pytest.warns(DeprecationWarning) as record:
        exec(compile(README_EXPORT, "README 0.1", "exec"), namespace)
    said = messages(record)
    assert len(said) == 5 and all("netdyn.export_equations(model, format" in m for m in said), said
    assert (tmp_path / "gen" / "rlc_eqs.c").exists() and (tmp_path / "rlc_eqs.py").exists()
    model = namespace["model"]
    assert namespace["text"] == netdyn.export_equations(model, "json")
    assert capsys.readouterr().out.strip() == netdyn.export_equations(model, "latex", efforts="right").strip()


@pytest.mark.parametrize("text, old, new", [
    (SOURCES_DOCTEST, "netdyn.sources", "from netdyn.lagrange.sources import pulse"),
    (INITIAL_DOCTEST, "netdyn.numeric", "compile_model"),
    (STAMP_DOCTEST, "netdyn.stamp", "linear_network"),
    (DERIVE_DOCTEST, "netdyn.equations", "from netdyn.lagrange.equations import derive"),
], ids=["sources", "initial", "stamp", "derive"])
def test_docstring_examples_of_0_1_run(text, old, new, tmp_path, monkeypatch):
    with pytest.warns(DeprecationWarning) as record:
        run_doctest(text, tmp_path, monkeypatch)
    said = [m for m in messages(record) if m.startswith(old + " ")]
    assert said and all(new in m for m in said[:1]), messages(record)


def home_of(message):
    """The import the warning tells the user to write, as ``(module, name)``."""
    m = (re.search(r"use 'from ([\w.]+) import (\w+)'", message)
         or re.search(r"internal now \(([\w.]+)\.(\w+);", message))
    assert m, f"the warning names no new home: {message}"
    return m[1], m[2]


@pytest.mark.parametrize("old", sorted(NAMES_01))
def test_every_name_of_a_moved_0_1_module_imports_and_names_its_new_home(old):
    import importlib
    module = importlib.import_module(old)
    for name in NAMES_01[old].split():
        with pytest.warns(DeprecationWarning) as record:
            obj = getattr(module, name)
        (message,) = messages(record)
        assert message.startswith(f"{old} moved in 0.2 (deprecated alias, goes in {_compat.REMOVAL}): "), message
        home, attr = home_of(message)
        assert attr == name and getattr(importlib.import_module(home), name) is obj, message
        assert home == "netdyn" or not home.startswith("netdyn.numerics") or "internal" in message


def test_removed_0_1_names_say_where_their_names_went():
    import importlib
    for dotted in REMOVED_01:
        old, name = dotted.rsplit(".", 1)
        with pytest.raises(AttributeError, match="deprecated; its names moved to"):
            getattr(importlib.import_module(old), name)


def test_0_1_import_styles_of_moved_modules():
    # 0.1's netdyn/__init__.py imported its names this way, and README 0.1 wrote netdyn.sources.sine
    with pytest.warns(DeprecationWarning, match=r"netdyn\.model .*use 'from netdyn import LagrangianModel'"):
        from netdyn.model import LagrangianModel
    assert LagrangianModel is netdyn.LagrangianModel
    with pytest.warns(DeprecationWarning, match=r"use 'from netdyn\.lagrange\.sources import sine'"):
        wave = netdyn.sources.sine(0, 1, 50)
    assert str(wave) == "sin(100*pi*t)"
    from netdyn import sources
    with pytest.warns(DeprecationWarning):
        assert sources.step is not None
    with pytest.warns(DeprecationWarning, match=r"netdyn\.simulate .*use 'from netdyn import simulate'"):
        from netdyn.simulate import simulate
    user = {}
    exec("import netdyn.simulate", user)  # the alias module must not replace the function netdyn.simulate
    assert user["netdyn"].simulate is simulate is netdyn.simulate


def test_the_aliases_cost_nothing_until_used():
    import subprocess
    import sys
    code = ("import sys, warnings; warnings.simplefilter('error'); import netdyn, netdyn.stamp; "
            "print([m for m in ('netdyn.numerics.stamp', 'netdyn.export') if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_model_export_goes_through_the_slot_the_root_fills():
    from netdyn.lagrange import slots
    x, = netdyn.coordinates("x,")
    model = netdyn.LagrangianModel([x], T=x.diff(netdyn.t)**2/2, V=x**2/2)
    previous = slots.set_exporter(None)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            with pytest.raises(netdyn.ExportError, match="no equation exporter is installed"):
                model.export("latex")
    finally:
        slots.set_exporter(previous)
    with pytest.warns(DeprecationWarning, match="LagrangianModel.export"):
        assert model.export("latex") == netdyn.export_equations(model, "latex")
