"""The front door of the numerics house: one problem record, one table of paths, the reasons on sol.method,
the 0.2 module names still importing with a warning that names their new home."""
import dataclasses
import importlib
import subprocess
import sys
import warnings

import numpy as np
import pytest

import netdyn
from netdyn import LagrangianModel, coordinates, t
from netdyn.components.diode import Diode
from netdyn.components.electrical import Capacitor, Resistor, VoltageSource
from netdyn.linkages import FOUR_BAR_GUESS, four_bar, motor_four_bar
from netdyn.numerics import paths
from netdyn.numerics.integrators.path import Path, Verdict
from netdyn.numerics.problem import Problem


def rc():
    net = netdyn.Network()
    net.add(VoltageSource("V1", "a", "0", 1.0), Resistor("R1", "a", "b", 1.0), Capacitor("C1", "b", "0", 1.0))
    return net


def diode_circuit():
    net = netdyn.Network()
    net.add(VoltageSource("V1", "a", "0", 5.0), Resistor("R1", "a", "d", 1e3), Diode("D1", "d", "0"),
            Capacitor("C1", "d", "0", 1e-6))
    return net


def oscillator():
    x, = coordinates("x,")
    return LagrangianModel([x], T=x.diff(t) ** 2 / 2, V=x ** 2 / 2)


@pytest.mark.parametrize("build, span, kw, name, declined", [
    (rc, (0, 1), {}, "linear", []),
    (diode_circuit, (0, 1e-3), {}, "circuit", ["linear"]),
    (oscillator, (0, 1), {"q0": {"x": 1.0}}, "projection", ["linear", "circuit"]),
    (four_bar, (0, 0.5), {"guess": FOUR_BAR_GUESS}, "projection", ["linear", "circuit"]),
])
def test_sol_method_names_the_path_its_reason_and_the_paths_declined(build, span, kw, name, declined):
    sol = netdyn.simulate(build(), span, **kw)
    assert sol.method == name and isinstance(sol.method, str)
    assert [d[0] for d in sol.method.declined] == declined
    assert sol.method.reason and all(why for _, why in sol.method.declined)
    assert sol.method.explain().splitlines()[-1].startswith(f"{name}: ")


def test_a_stiff_mechanism_goes_to_ida_and_projection_says_why_not():
    net = motor_four_bar()
    choice = paths.method_for(net, (0, 2.0), guess=FOUR_BAR_GUESS)
    assert choice.name == "ida" and choice.reason.startswith("stiff: ")
    assert dict(choice.declined)["projection"] == choice.reason  # the same measurement, said once by each row


def test_netdyn_info_and_simulate_walk_the_same_table():
    for build, span in ((rc, (0, 1)), (diode_circuit, (0, 1e-3))):
        choice = paths.method_for(build(), span)
        sol = netdyn.simulate(build(), span)
        assert (choice.name, choice.reason, choice.declined) == (sol.method, sol.method.reason, sol.method.declined)


def test_a_named_path_that_cannot_run_says_so_in_its_own_words():
    with pytest.raises(netdyn.IntegrationError, match="params= overrides need the symbolic path"):
        netdyn.simulate(rc(), (0, 1), method="circuit", params={"R1": 2.0})
    with pytest.raises(netdyn.IntegrationError, match="this one has none: method='linear'"):
        netdyn.simulate(rc(), (0, 1), method="circuit")
    with pytest.raises(netdyn.IntegrationError, match="linear except for nonlinear"):
        netdyn.simulate(oscillator(), (0, 1), method="circuit", q0={"x": 1.0})
    with pytest.raises(netdyn.NetdynError):
        netdyn.simulate(diode_circuit(), (0, 1e-3), method="linear")


def test_the_problem_record_is_validated_once_and_immutable():
    q0 = {"x": 1.0}
    pb = Problem.from_call(oscillator(), (0, 1), q0=q0, t_eval=[0, 0.5, 1])
    with pytest.raises(dataclasses.FrozenInstanceError):
        pb.rtol = 1.0
    q0["x"] = 2.0  # the caller's dict changes later: the record does not
    assert pb.q0 == {"x": 1.0}
    for bad in (dict(t_span=(1, 0)), dict(method="euler"), dict(solver="RK4"), dict(t_eval=[0, 2]),
                dict(rtol=float("nan")), dict(compiled_loop="fast")):
        kw = {"t_span": (0, 1), **bad}
        with pytest.raises(netdyn.NetdynError):
            Problem.from_call(oscillator(), kw.pop("t_span"), **kw)


def test_a_new_path_is_one_row_in_the_table(monkeypatch):
    """What a new path needs: a Path with accepts/run, put in PATHS (here first, taking every problem)."""
    seen = []
    row = Path("toy", lambda problem, start: Verdict(True, "takes everything"),
               lambda problem, start, plan: seen.append(problem.t_span) or type("S", (), {})())
    monkeypatch.setattr(paths, "PATHS", (row,) + paths.PATHS)
    sol = netdyn.simulate(rc(), (0, 2))
    assert seen == [(0.0, 2.0)] and sol.method == "toy" and sol.method.reason == "takes everything"


@pytest.mark.parametrize("old, new", [("netdyn.numerics.stamp", "netdyn.numerics.circuit.stamp"),
                                      ("netdyn.numerics.integrators.ida", "netdyn.numerics.ida.ida"),
                                      ("netdyn.numerics.choice", "netdyn.numerics.paths"),
                                      ("netdyn.numerics.options", "netdyn.numerics.integrators.options")])
def test_0_2_module_names_import_with_a_warning_naming_the_new_home(old, new):
    code = (f"import warnings; warnings.simplefilter('error', DeprecationWarning)\n"
            f"try:\n    import {old}\nexcept DeprecationWarning as w:\n    print(w)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert new in out and old in out
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        assert importlib.import_module(old) is importlib.import_module(new)


def test_0_2_integrator_names_still_resolve():
    from netdyn.numerics.ida.ida import IDA
    with pytest.warns(DeprecationWarning, match="netdyn.numerics.ida.ida.IDA"):
        from netdyn.numerics.integrators import IDA as old
    assert old is IDA
    with pytest.warns(DeprecationWarning):
        from netdyn.numerics.integrators import INTEGRATORS
    assert set(INTEGRATORS) >= {"projection", "ida", "linear"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        from netdyn.numerics.choice import method_for  # (warns on first import: the test above)
    assert method_for(rc(), (0, 1)).name == "linear"


def test_the_same_answers_through_the_record():
    """The record changes nothing numerically: an RC step against its closed form on the linear path, an
    oscillator against cos t on projection and IDA."""
    sol = netdyn.simulate(rc(), (0, 1), t_eval=[1.0])
    assert abs(sol.voltage("C1")[-1] - (1 - np.exp(-1))) < 1e-7
    for method in ("projection", "ida"):
        s = netdyn.simulate(oscillator(), (0, 2), q0={"x": 1.0}, t_eval=[2.0], method=method)
        assert abs(s["x"][-1] - np.cos(2.0)) < 1e-6, method
