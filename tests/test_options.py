"""Keyword options are honoured or reported, never dropped in silence (:mod:`netdyn.numerics.integrators.options`).

Every ``simulate`` keyword a path cannot act on is an :class:`~netdyn.OptionError` when the caller named
the method (raised before any integration) and an :class:`~netdyn.OptionWarning` when ``method="auto"``
chose the path; options the path does act on pass without a word, and change the result where they
should. The same for ``linearize`` and ``ac``.
"""
import warnings

import numpy as np
import pytest
import sympy as sp

import netdyn
from netdyn import LagrangianModel, coordinates, t
from netdyn.components.electrical import Capacitor, Resistor, VoltageSource


def rc():
    net = netdyn.Network("rc")
    net.add(VoltageSource("V1", "in", "0", 1.0), Resistor("R1", "in", "out", 1.0), Capacitor("C1", "out", "0", 1.0))
    return net


def oscillator():
    x, = coordinates("x,")
    return LagrangianModel([x], T=x.diff(t) ** 2 / 2, V=x ** 2 / 2)


def pendulum():
    from netdyn.linkages.planar import pendulum
    return pendulum([1.0], [1.0])


def silent(fn, *args, **kw):
    """``fn(*args, **kw)``, failing on any OptionWarning."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", netdyn.OptionWarning)
        return fn(*args, **kw)


# ------------------------------------------------------------------------------------ the recursive path

@pytest.mark.parametrize("option, value", [("solver", "RK45"), ("solver", "Radau"), ("watch_singularities", True),
                                           ("formulation", "absolute"), ("compiled_loop", True)])
def test_recursive_refuses_what_it_cannot_honour(option, value):
    steps = []
    with pytest.raises(netdyn.OptionError, match=rf"{option}=.*method='recursive'") as err:
        netdyn.simulate(pendulum(), (0, 0.1), method="recursive", progress=steps.append, **{option: value})
    assert "method='projection'" in str(err.value)  # says which call honours it
    assert not steps  # refused before integrating


def test_recursive_accepts_what_it_does():
    """DOP853, no watch, joint (relative) coordinates, no compiled loop: what the recursive path does."""
    from netdyn.numerics.integrators.options import check_formulation, check_path
    silent(check_path, "recursive", "recursive", solver="DOP853", watch_singularities=False, compiled_loop=False,
           guess={"J1": 0.1})
    check_formulation(pendulum(), "relative", "recursive")
    check_formulation(pendulum(), {"planar": "relative"}, "recursive")


# ------------------------------------------------------------------------------------ the linear path

def test_linear_path_reports_a_runge_kutta_solver():
    with pytest.raises(netdyn.OptionError, match=r"solver='RK45'.*method='linear' integrates with Radau IIA"):
        netdyn.simulate(rc(), (0, 1), method="linear", solver="RK45")
    with pytest.warns(netdyn.OptionWarning, match=r"method='auto' chose 'linear'.*solver= picks"):
        sol = netdyn.simulate(rc(), (0, 1), solver="DOP853", t_eval=[0, 1])
    assert sol.method == "linear"  # the answer is still right: the option only had no effect
    assert abs(sol.voltage("C1")[-1] - (1 - np.exp(-1))) < 1e-6


def test_linear_path_honours_radau_and_a_watch_without_a_word():
    sol = silent(netdyn.simulate, rc(), (0, 1), method="linear", solver="Radau", watch_singularities=True,
                 compiled_loop="auto", t_eval=[0, 1])
    assert abs(sol.voltage("C1")[-1] - (1 - np.exp(-1))) < 1e-6


def test_guess_without_a_position_solve_is_a_warning():
    with pytest.warns(netdyn.OptionWarning, match="guess= .*the linear path has none"):
        netdyn.simulate(rc(), (0, 1), method="linear", guess={"q_C1": 1.0}, t_eval=[0, 1])


def test_circuit_path_reports_a_runge_kutta_solver():
    from netdyn.components.diode import Diode
    net = netdyn.Network("clamp")
    net.add(VoltageSource("V1", "a", "0", 5.0), Resistor("R1", "a", "d", 1e3), Diode("D1", "d", "0"),
            Capacitor("C1", "d", "0", 1e-9))
    with pytest.raises(netdyn.OptionError, match=r"solver='RK45'.*method='circuit' integrates with BDF"):
        netdyn.simulate(net, (0, 1e-5), method="circuit", solver="RK45")
    with pytest.warns(netdyn.OptionWarning, match=r"method='auto' chose 'circuit'.*solver="):
        sol = netdyn.simulate(net, (0, 1e-5), solver="RK45", t_eval=[0, 1e-5])
    assert sol.method == "circuit"


# ------------------------------------------------------------------------------------ the symbolic paths

@pytest.mark.parametrize("option, value", [("solver", "RK45"), ("watch_singularities", True),
                                           ("compiled_loop", True)])
def test_ida_named_refuses_projection_options(option, value):
    steps = []
    with pytest.raises(netdyn.OptionError, match=rf"{option}=.*method='ida'"):
        netdyn.simulate(oscillator(), (0, 1), method="ida", progress=steps.append, **{option: value})
    assert not steps


def test_auto_choosing_ida_warns_of_a_runge_kutta_solver():
    """An RC as a model (a charge without inertia): 'auto' chooses IDA, which has no Runge–Kutta solver."""
    q, = coordinates("q,")
    model = LagrangianModel([q], V=q ** 2 / 2, D=q.diff(t) ** 2 / 2, efforts={q: 1})
    with pytest.warns(netdyn.OptionWarning, match=r"method='auto' chose 'ida'.*solver="):
        sol = netdyn.simulate(model, (0, 1), q0={"q": 0}, solver="RK45", t_eval=[0, 1])
    assert sol.method == "ida" and abs(sol["q"][-1] - (1 - np.exp(-1))) < 1e-5


def test_projection_honours_the_solver():
    """The solver changes the steps taken (and not the answer): it was used."""
    a = silent(netdyn.simulate, oscillator(), (0, 3), q0={"x": 1}, method="projection", solver="DOP853",
               watch_singularities=False)
    b = silent(netdyn.simulate, oscillator(), (0, 3), q0={"x": 1}, method="projection", solver="RK45",
               watch_singularities=True)
    assert a.nsteps != b.nsteps
    assert abs(a["x"][-1] - np.cos(3)) < 1e-6 and abs(b["x"][-1] - np.cos(3)) < 1e-6


def test_compiled_loop_that_does_not_apply_is_a_warning():
    """Another solver runs the Python loop: said, and the trajectory is the one asked for."""
    with pytest.warns(netdyn.OptionWarning, match=r"compiled_loop=True .*solver='RK45'"):
        sol = netdyn.simulate(oscillator(), (0, 1), q0={"x": 1}, method="projection", compiled_loop=True,
                              solver="RK45", t_eval=[0, 1])
    assert abs(sol["x"][-1] - np.cos(1)) < 1e-6


@pytest.mark.parametrize("method", ["auto", "projection", "ida", "recursive"])
def test_formulation_of_a_model_is_refused(method):
    with pytest.raises(netdyn.OptionError, match=r"formulation='node' applies to a Network"):
        netdyn.simulate(oscillator(), (0, 1), formulation="node", method=method)


def test_unknown_solver_still_named():
    with pytest.raises(netdyn.IntegrationError, match="unknown solver 'Euler'"):
        netdyn.simulate(oscillator(), (0, 1), solver="Euler")


# ------------------------------------------------------------------------------------ linearize, ac

def test_linearize_refuses_f_op_beside_an_operating_point():
    x, = coordinates("x,")
    model = LagrangianModel([x], T=x.diff(t) ** 2 / 2, V=(x - 1) ** 2 / 2)
    op = netdyn.equilibrium(model, {"x": 0.3})
    assert abs(netdyn.linearize(op).A[1, 0] + 1) < 1e-9
    with pytest.raises(netdyn.OptionError, match="f_op= was given with an OperatingPoint"):
        netdyn.linearize(model, op, f_op={"x": 1.0})


def test_linearize_refuses_a_formulation_for_a_model():
    x, = coordinates("x,")
    model = LagrangianModel([x], T=x.diff(t) ** 2 / 2, V=(x - 1) ** 2 / 2)
    with pytest.raises(netdyn.OptionError, match="formulation='loop' applies to a Network"):
        netdyn.linearize(model, {"x": 1.0}, formulation="loop")


def test_ac_refuses_a_model_and_bad_frequencies():
    with pytest.raises(netdyn.ModelError, match="ac needs a Network"):
        netdyn.ac(oscillator(), [1.0])
    for bad in ([np.nan], [-1.0], []):
        with pytest.raises(netdyn.ModelError, match="frequencies must be finite"):
            netdyn.ac(rc(), bad, input="V1")


# ------------------------------------------------------------------------------------ values no path can use

@pytest.mark.parametrize("system", [rc, oscillator], ids=["linear path", "projection path"])
@pytest.mark.parametrize("kw, match", [({"rtol": float("nan")}, "rtol must be a finite number > 0"),
                                       ({"rtol": -1e-6}, "rtol must be a finite number > 0"),
                                       ({"max_step": -1.0}, "max_step must be a number > 0"),
                                       ({"progress": 3}, "progress must be a function")])
def test_arguments_no_integrator_can_use(system, kw, match):
    """A NaN rtol looped forever on the projection path; a negative one passed unnoticed on the linear path."""
    with pytest.raises(netdyn.InvalidValueError, match=match):
        netdyn.simulate(system(), (0, 1), **kw)


def test_recursive_refuses_an_unknown_parameter():
    """The symbolic path refuses a params name no value uses; the recursive path ignored it."""
    with pytest.raises(netdyn.ParameterError, match="unknown parameter 'bogus'"):
        netdyn.simulate(pendulum(), (0, 0.1), params={"bogus": 1.0}, method="recursive")
    with pytest.raises(netdyn.ParameterError, match="unknown parameter 'bogus'"):
        netdyn.simulate(oscillator(), (0, 0.1), params={"bogus": 1.0}, method="projection")
