"""The fused compiled kernel and IDA's compiled residual and Jacobian against the lambdified reference path;
the DC motor driving a four-bar (a stiff mixed model) through the automatic choice, with its energy balance."""
import numpy as np
import pytest
import sympy as sp

import netdyn
from netdyn import LagrangianModel, coordinates, t
from netdyn.components.electrical import Capacitor, VoltageSource
from netdyn.lagrange.sources import pwl
from netdyn.linkages import FOUR_BAR_GUESS, MOTOR, four_bar, motor_four_bar
from netdyn.numerics.paths import method_for
from netdyn.numerics.functions.compiled import CompiledModel, compile_model
from netdyn.numerics.ida.ida import IDA
from netdyn.numerics.ida.ida_kernel import ida_kernel
from netdyn.numerics.mechanics.projection import Projection


def _with_capacitor():
    """The motor four-bar with a capacitor across the armature's middle node: a flow without inertia."""
    net = motor_four_bar()
    net.add(Capacitor("Cx", "a", "0", 1e-3))
    return net


def _tricky_names():
    """Arguments named like symengine's CSE temporaries (x0, x1), parameters and an input function."""
    x0, x1 = coordinates("x0, x1")
    k, c = sp.symbols("x2 x3")
    u = sp.Function("u")(t)
    return LagrangianModel([x0, x1], T=[x0.diff(t)**2 / 2, (1 + x0**2) * x1.diff(t)**2 / 2],
                           V=[k * (x0 - x1)**2 / 2, sp.cos(x1)], D=[c * x1.diff(t)**2 / 2],
                           efforts={x0: u * sp.sin(t)}, constraints=[x0 + sp.sin(x1) - 0.3 * t],
                           parameters={k: 3.0, c: 0.2})


MODELS = {
    "motor four-bar": lambda: motor_four_bar().model(),
    "with a capacitor": lambda: _with_capacitor().model(),
    "tricky names": _tricky_names,
}


def _pair(build):
    model = build()
    fast, ref = CompiledModel(model), CompiledModel(model)
    ref.kernel = None
    p = fast.parameter_vector({str(fast.inputs[0]): lambda tt: 1 + tt} if fast.inputs else None)
    return fast, ref, p


@pytest.mark.parametrize("name", sorted(MODELS))
def test_kernel_matches_the_lambdified_functions(name):
    fast, ref, p = _pair(MODELS[name])
    assert fast.kernel is not None
    rng = np.random.default_rng(3)
    for _ in range(3):
        tt, q, f = rng.uniform(0, 1), rng.normal(size=fast.n), rng.normal(size=fast.n)
        for a, b in zip(fast.dynamics(tt, q, f, p), ref.dynamics(tt, q, f, p)):
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
        ca, cb = fast.constraints(tt, q, f, p), ref.constraints(tt, q, f, p)
        for field in ("phi", "Phi_q", "Phi_t", "gamma_phi", "A", "a", "gamma_psi"):
            np.testing.assert_allclose(getattr(ca, field), getattr(cb, field), rtol=1e-12, atol=1e-12)
        ka, kb = fast.kkt(tt, q, f, p), ref.kkt(tt, q, f, p)
        np.testing.assert_allclose(ka.K, kb.K, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(ka.r, kb.r, rtol=1e-12, atol=1e-12)
        lam, mu = rng.normal(size=fast.m1), rng.normal(size=fast.m2)
        np.testing.assert_allclose(fast.power(tt, q, f, lam, mu, p), ref.power(tt, q, f, lam, mu, p), rtol=1e-12,
                                   atol=1e-12)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_ida_kernel_residual_and_jacobian(name):
    fast, ref, p = _pair(MODELS[name])
    ida = IDA(ref, p)
    k = ida_kernel(IDA(fast, p))
    rng = np.random.default_rng(5)
    y, yp, cj = rng.normal(size=ida.N), rng.normal(size=ida.N), 2.5
    r_fast, r_ref = np.zeros(ida.N), np.zeros(ida.N)
    k.residual(0.4, y, yp, r_fast)
    ida.residual(0.4, y, yp, r_ref)
    np.testing.assert_allclose(r_fast, r_ref, rtol=1e-12, atol=1e-12)
    # the analytic Jacobian against central differences of the reference residual (ẏ moves with cj)
    J = k.matrix(0.4, y, yp, cj)
    Jfd = np.empty_like(J)
    for j in range(ida.N):
        h = 1e-6 * (1 + abs(y[j]))
        rp, rm = np.zeros(ida.N), np.zeros(ida.N)
        d = np.zeros(ida.N)
        d[j] = h
        ida.residual(0.4, y + d, yp + cj * d, rp)
        ida.residual(0.4, y - d, yp - cj * d, rm)
        Jfd[:, j] = (rp - rm) / (2 * h)
    assert np.max(np.abs(J - Jfd)) < 1e-6 * max(1.0, np.max(np.abs(J)))


def test_kernel_steps_aside_for_table_lookups():
    net = netdyn.Network("pwl")
    from netdyn.components.electrical import Inductor, Resistor
    net.add(VoltageSource("V1", "a", "0", pwl([(0, 0), (1e-3, 1), (2e-3, 0)])), Resistor("R1", "a", "b", 10.0),
            Inductor("L1", "b", "0", 1e-2))
    cm = compile_model(net.model(formulation="branch"))
    assert cm.kernel is None  # PWL stays on the table lookup of lambdify
    sol = netdyn.simulate(net, (0, 3e-3), formulation="branch", method="projection")
    assert sol.current("L1")[-1] == pytest.approx(sol.current("L1")[-1])  # ran


def test_projection_with_the_kernel_reproduces_the_reference_path():
    """The four-bar under a torque, 2 s: the same DOP853 steps on kernel and lambdified functions."""
    runs = []
    for use_kernel in (True, False):
        model = four_bar().model()
        cm = compile_model(model)
        if not use_kernel:
            cm.kernel = None
        runs.append(netdyn.simulate(model, (0, 2.0), guess=FOUR_BAR_GUESS, t_eval=np.linspace(0, 2, 21)))
    fast, ref = runs
    assert fast.method == ref.method == "projection"
    np.testing.assert_allclose(fast.q, ref.q, rtol=0, atol=1e-9)
    np.testing.assert_allclose(fast.lam, ref.lam, rtol=0, atol=1e-9 * np.max(np.abs(ref.lam)))


def test_motor_four_bar_is_stiff_runs_on_ida_and_agrees_with_projection():
    net = motor_four_bar()
    choice = method_for(net, (0, 2.0), guess=FOUR_BAR_GUESS)
    assert choice.name == "ida" and "stiff" in choice.reason  # L/R = 1 ms against a ~1 s mechanism
    te = np.linspace(0, 2.0, 11)
    ida = netdyn.simulate(net, (0, 2.0), guess=FOUR_BAR_GUESS, t_eval=te)
    assert ida.method == "ida"
    proj = netdyn.simulate(net, (0, 2.0), guess=FOUR_BAR_GUESS, t_eval=te, method="projection")
    np.testing.assert_allclose(ida["theta_crank"], proj["theta_crank"], rtol=0, atol=1e-6)
    np.testing.assert_allclose(ida.current("La"), proj.current("La"), rtol=0, atol=2e-6 * np.max(np.abs(proj.current("La"))))
    # energy: what the source supplies is dissipated in Ra or stored (inductor, bodies), to the tolerance
    for sol in (ida, proj):
        assert sol.power_balance()["relative"] < 1e-6
    # steady state of the motor: back-emf K ω = V − R i
    i, w = ida.current("La")[-1], ida["theta_crank_dot"][-1]
    assert MOTOR["K"] * w == pytest.approx(MOTOR["V"] - MOTOR["R"] * i, rel=0.2)


def test_ida_on_kernel_agrees_with_ida_on_the_reference():
    """Same method, compiled residual and analytic Jacobian against lambdified records and finite
    differences: the trajectories agree to the integration tolerance."""
    te = np.linspace(0, 0.2, 5)
    runs = []
    for compiled in (True, False):
        model = _with_capacitor().model()
        cm = compile_model(model)
        p = cm.parameter_vector()
        from netdyn.numerics.dae.initial import consistent_initial_conditions
        q, f = consistent_initial_conditions(cm, 0.0, None, None, p, guess=FOUR_BAR_GUESS)
        runs.append(IDA(cm, p, compiled=compiled).integrate(0.0, 0.2, q, f, te, 1e-9, 1e-10))
    np.testing.assert_allclose(runs[0].q, runs[1].q, rtol=0, atol=1e-7)


def test_projection_radau_on_the_kernel():
    """The implicit Runge–Kutta of the projection path uses the same kernel (no special case)."""
    model = motor_four_bar(L=1e-2).model()
    cm = compile_model(model)
    p = cm.parameter_vector()
    from netdyn.numerics.dae.initial import consistent_initial_conditions
    q, f = consistent_initial_conditions(cm, 0.0, None, None, p, guess=FOUR_BAR_GUESS)
    tr = Projection(cm, p, "Radau").integrate(0.0, 0.05, q, f, np.array([0.05]), 1e-8, 1e-10)
    assert np.max(np.abs(cm.constraints(0.05, tr.q[:, -1], tr.f[:, -1], p).phi)) < 1e-12


def test_compiled_loop_reproduces_the_python_loop():
    """The compiled DOP853 + projection + watch loop against scipy's DOP853 driven from Python (first run
    compiles the loop with numba, ~20 s; cached on disk afterwards)."""
    from netdyn.numerics.dae.initial import consistent_initial_conditions
    from netdyn.numerics.mechanics.compiled_projection import CompiledProjection
    cm = compile_model(four_bar().model())
    p = cm.parameter_vector()
    q, f = consistent_initial_conditions(cm, 0.0, None, None, p, guess=FOUR_BAR_GUESS)
    te = np.linspace(0, 2.0, 21)
    a = CompiledProjection(cm, p).integrate(0, 2.0, q, f, te, 1e-8, 1e-10)
    b = Projection(cm, p).integrate(0, 2.0, q, f, te, 1e-8, 1e-10)
    assert a.nsteps == b.nsteps
    np.testing.assert_allclose(a.q, b.q, rtol=0, atol=1e-9)
    np.testing.assert_allclose(a.f, b.f, rtol=0, atol=1e-9)
    np.testing.assert_allclose(a.supplied, b.supplied, rtol=0, atol=1e-9)


def test_compiled_loop_stops_at_a_change_point():
    from netdyn.linkages.planar import four_bar as four_bar_net
    from netdyn.linkages.planar import BOOK
    from netdyn.numerics.dae.initial import consistent_initial_conditions
    from netdyn.numerics.mechanics.compiled_projection import CompiledProjection
    pr = dict(BOOK, l1=0.6, l3=0.6, l2=1.0, l4=1.0)  # a parallelogram falling onto its flat change point
    cm = compile_model(four_bar_net(pr, tau=False, gravity=True).model())
    p = cm.parameter_vector()
    q, f = consistent_initial_conditions(cm, 0.0, {"theta_crank": 1.2}, None, p,
                                         guess={"theta_rod": 0.0, "theta_rocker": 1.2})
    with pytest.raises(netdyn.SingularSystemError, match="singular configuration at t = "):
        CompiledProjection(cm, p).integrate(0, 2.0, q, f, np.linspace(0, 2, 11), 1e-8, 1e-10)


def test_simulate_compiled_loop_gives_the_python_loops_trajectory(monkeypatch):
    """``simulate(compiled_loop=True)`` (and ``NETDYN_COMPILED_LOOP=1``) against the Python loop, the four-bar
    under a torque; ``"auto"`` takes the compiled loop once it is cached, and a bad value is refused."""
    from netdyn.numerics.mechanics.path import projection_class
    from netdyn.numerics.mechanics.compiled_projection import CompiledProjection, loop_cached
    loops = []
    run = CompiledProjection._run  # (one call a run; the loop itself is called once a chunk)
    monkeypatch.setattr(CompiledProjection, "_run", lambda *a: loops.append(1) or run(*a))
    kw = dict(guess=FOUR_BAR_GUESS, t_eval=np.linspace(0, 1.0, 11), method="projection")
    ref = netdyn.simulate(four_bar(), (0, 1.0), compiled_loop=False, **kw)
    assert not loops
    fast = netdyn.simulate(four_bar(), (0, 1.0), compiled_loop=True, **kw)
    assert len(loops) == 2  # the coarse pass that scales atol, then the run
    monkeypatch.setenv("NETDYN_COMPILED_LOOP", "1")
    env = netdyn.simulate(four_bar(), (0, 1.0), **kw)
    assert len(loops) == 4
    for sol in (fast, env):
        np.testing.assert_allclose(sol.q, ref.q, rtol=0, atol=1e-9)
        np.testing.assert_allclose(sol.f, ref.f, rtol=0, atol=1e-9)
    assert fast.nsteps == ref.nsteps
    monkeypatch.setattr(CompiledProjection, "_run", run)
    assert loop_cached()  # compiled in this process by now
    assert projection_class("auto", None) is CompiledProjection
    assert projection_class(True, lambda tt: None) is CompiledProjection  # progress: chunked, compiled
    assert projection_class(None, None) is CompiledProjection  # the default: "auto" ...
    assert projection_class(None, lambda tt: None) is Projection  # ... unless a callback wants every step
    with pytest.raises(netdyn.IntegrationError, match="compiled_loop must be"):
        netdyn.simulate(four_bar(), (0, 1.0), compiled_loop="fast", **kw)


def test_method_for_reports_what_simulate_picks_for_a_diode_circuit():
    """``netdyn info``'s choice follows ``simulate``'s order: a diode circuit goes to the circuit path."""
    from netdyn.components.diode import Diode
    from netdyn.components.electrical import Resistor
    net = netdyn.Network()
    net.add(VoltageSource("V1", "a", "0", 5.0), Resistor("R1", "a", "d", 1e3), Diode("D1", "d", "0"),
            Capacitor("C1", "d", "0", 1e-6))
    assert method_for(net, (0, 1e-3)).name == netdyn.simulate(net, (0, 1e-3)).method == "circuit"


def test_netdyn_warmup_leaves_the_loop_cached(capsys):
    from netdyn.cli import main
    from netdyn.numerics.mechanics.compiled_projection import loop_cached
    assert main(["warmup"]) == 0
    assert "compiled projection loop" in capsys.readouterr().out and loop_cached()


def test_circuit_method_refuses_params_instead_of_running_ida():
    from netdyn.components.diode import Diode
    from netdyn.components.electrical import Resistor
    net = netdyn.Network()
    net.add(VoltageSource("V1", "a", "0", 5.0), Resistor("R1", "a", "d", sp.Symbol("R", positive=True)),
            Diode("D1", "d", "0"), Capacitor("C1", "d", "0", 1e-6))
    with pytest.raises(netdyn.IntegrationError, match="method='circuit' runs the network's own"):
        netdyn.simulate(net, (0, 1e-3), method="circuit", params={"R": 2e3})  # was: IDA, labelled 'circuit'

