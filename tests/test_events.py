"""Events (issue 27, item 1): zero crossings of named quantities, located to the integrator's tolerance on
every path, actions applied, the run restarted; checked against closed forms and against solve_ivp's events
on the same ODE-form models."""
import numpy as np
import pytest
from scipy.integrate import solve_ivp

import netdyn
from netdyn import Event, LagrangianModel, coordinates, t
from netdyn.components.electrical import Capacitor, Resistor, VoltageSource
from netdyn.errors import IntegrationError, ParseError

G = 9.81


def rc(R=1e3, C=1e-6, V=5.0):
    net = netdyn.Network("rc")
    net.add(VoltageSource("V1", "in", "0", V), Resistor("R1", "in", "out", R), Capacitor("C1", "out", "0", C))
    return net


def ball():
    x, = coordinates("x,")
    return LagrangianModel([x], T=x.diff(t) ** 2 / 2, V=G * x)


def oscillator():
    x, = coordinates("x,")
    return LagrangianModel([x], T=x.diff(t) ** 2 / 2, V=x ** 2 / 2)


@pytest.mark.parametrize("method", ["linear", "ida"])
def test_rc_threshold_closed_form(method):
    """An RC charging to 2.5 V of 5 V: t = RC ln 2, the run stops there (terminal)."""
    sol = netdyn.simulate(rc(), (0, 5e-3), method=method, rtol=1e-10,
                          events=[Event("v(C1) - 2.5", direction=1, terminal=True)])
    (ev,) = sol.events
    assert ev.t == pytest.approx(1e-3 * np.log(2), rel=1e-10, abs=0)
    assert ev.direction == 1 and ev.name == "v(C1) - 2.5"
    assert sol.t[-1] == ev.t and sol.series("v(C1)")[-1] == pytest.approx(2.5, rel=1e-9)
    assert sol.method == method


@pytest.mark.parametrize("method", ["projection", "ida"])
def test_ball_apex_and_ground(method):
    """A ball thrown up at 7 m/s from 1 m: apex at v0/g, ground at (v0 + sqrt(v0² + 2 g h0))/g, to 1e-10."""
    v0, h0 = 7.0, 1.0
    sol = netdyn.simulate(ball(), (0, 5), q0={"x": h0}, f0={"x": v0}, method=method, rtol=1e-10,
                          events=[Event("x_dot", name="apex", direction=-1),
                                  Event("x", name="ground", direction=-1, terminal=True)])
    apex, ground = sol.events
    assert (apex.name, ground.name) == ("apex", "ground")
    assert abs(apex.t - v0 / G) < 1e-10
    assert abs(ground.t - (v0 + np.sqrt(v0 ** 2 + 2 * G * h0)) / G) < 1e-10
    assert apex.before["x"] == pytest.approx(h0 + v0 ** 2 / (2 * G), rel=1e-9)
    assert sol.t[-1] == ground.t


def _ivp_events(direction, terminal, t1=20.0):
    def g(tt, y):
        return y[0]
    g.direction, g.terminal = direction, terminal
    out = solve_ivp(lambda tt, y: [y[1], -y[0]], (0, t1), [1.0, 0.0], method="DOP853", rtol=1e-12, atol=1e-14,
                    events=g)
    return out.t_events[0]


@pytest.mark.parametrize("direction,terminal", [(0, False), (1, False), (-1, False), (-1, 2), (1, True)])
def test_solve_ivp_semantics(direction, terminal):
    """x'' = -x from x = 1: the same crossings as solve_ivp's events with the same direction and terminal
    (an int: stop at that occurrence), times to 1e-10."""
    ref = _ivp_events(direction, terminal)
    sol = netdyn.simulate(oscillator(), (0, 20), q0={"x": 1.0}, rtol=1e-11,
                          events=[Event("x", direction=direction, terminal=terminal)])
    ours = np.array([e.t for e in sol.events])
    assert ours.shape == ref.shape
    assert np.max(np.abs(ours - ref)) < 1e-10
    exact = np.pi / 2 + np.pi * np.arange(7)
    if direction:
        exact = exact[(np.arange(7) % 2 == 0) == (direction < 0)]
    assert np.max(np.abs(ours - exact[:ours.size])) < 1e-10
    if terminal:
        assert sol.t[-1] == ours[-1]


def test_callable_condition_and_state_reinit():
    """A bouncing ball (restitution 0.8) by a callable action re-initialising the velocity: bounce times in
    closed form."""
    e = 0.8
    bounce = Event(lambda tt, s: s["x"], name="ground", direction=-1,
                   action=lambda tt, s: {"f0": {"x_dot": -e * s["x_dot"]}})
    sol = netdyn.simulate(ball(), (0, 2.3), q0={"x": 1.0}, rtol=1e-10, events=[bounce])
    times, v, tt = [], np.sqrt(2 * G), np.sqrt(2 / G)
    while tt < 2.3:
        times.append(tt)
        v *= e
        tt += 2 * v / G
    got = [ev.t for ev in sol.events]
    assert len(got) == len(times)
    assert np.max(np.abs(np.array(got) - times)) < 1e-10
    first = sol.events[0]
    assert first.after["x_dot"] == pytest.approx(-e * first.before["x_dot"], rel=1e-12)


@pytest.mark.parametrize("method", ["linear", "ida"])
def test_action_changes_a_resistor(method):
    """At v(C1) = 4 V (t = RC ln 5) R1 halves: then v = 5 − exp(−(t − t1)/(RC/2))."""
    sol = netdyn.simulate(rc(), (0, 5e-3), method=method, rtol=1e-10,
                          events=[Event("v(C1) - 4", action={"R1": 500.0})])
    (ev,) = sol.events
    t1 = 1e-3 * np.log(5)
    assert ev.t == pytest.approx(t1, rel=1e-9)
    v = sol.series("v(C1)")
    assert v[-1] == pytest.approx(5 - np.exp(-(5e-3 - t1) / 0.5e-3), rel=1e-8)
    assert sol.t.size == 1003 and np.all(np.diff(sol.t) >= 0)  # 1001 outputs and the event before and after


def test_record_only_events_do_not_restart():
    sol = netdyn.simulate(rc(), (0, 5e-3), events=["v(C1) - 1", "v(C1) - 2"])
    assert [round(e.t / 1e-3, 8) for e in sol.events] == [round(np.log(5 / 4), 8), round(np.log(5 / 3), 8)]
    assert sol.t.size == 1001 and np.all(np.diff(sol.t) > 0)


def test_condition_text_is_never_evaluated():
    with pytest.raises(ParseError, match="not allowed"):
        Event("__import__('os').system('true')")
    with pytest.raises(IntegrationError, match="number-valued"):
        Event("v(C1) > 2.5")
    with pytest.raises(IntegrationError, match="direction"):
        Event("x", direction=2)
    with pytest.raises(IntegrationError, match="action"):
        Event("x", action=3)


def test_recursive_path_agrees_with_projection():
    """A pendulum's crossing of theta = 0 on the recursive path (joint coordinates) and on projection."""
    from netdyn.linkages import pendulum
    net = pendulum([1.0], [1.0])
    times = {}
    for method in ("recursive", "projection"):
        sol = netdyn.simulate(net, (0, 1), q0={"theta_J1": 0.3}, method=method, rtol=1e-10,
                              events=[Event("theta_J1", terminal=True)])
        assert sol.method == method and len(sol.events) == 1
        times[method] = sol.events[0].t
    assert abs(times["recursive"] - times["projection"]) < 1e-9


def test_piecewise_solution_reads_as_one():
    sol = netdyn.simulate(rc(), (0, 5e-3), events=[Event("v(C1) - 4", action={"R1": 500.0})])
    df = sol.to_pandas(["v(C1)", "i(R1)"])
    assert list(df.columns) == ["v(C1)", "i(R1)"] and len(df) == sol.t.size == 1003
    i = sol.series("i(R1)")
    k = int(np.flatnonzero(np.diff(sol.t) == 0)[0])
    assert i[k + 1] == pytest.approx(2 * i[k], rel=1e-9)  # R halved: the current doubles at the event
    assert sol.power_balance()["relative"] < 1e-7
