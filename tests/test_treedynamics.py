"""The relative formulation of a planar open tree evaluated by the recursive path (netdyn.numerics.functions.treedynamics)
against the symbolic relative formulation it replaces, to 1e-9: M and h at random states (numeric and
symbolic parameters, revolute, prismatic and weld joints, a branching tree), a simulation, and the
symbolic equations still there on demand."""
import numpy as np
import pytest
import sympy as sp

import netdyn
from netdyn.components.planar import (Actuator, Damper, Driver, Force, Gravity, Prismatic, Revolute, RigidBody,
                                     Slider, Spring, Torque, Weld)
from netdyn.linkages import pendulum as pendulum_net
from netdyn.numerics.functions.compiled import CompiledModel, compile_model
from netdyn.numerics.functions.treedynamics import MIN_BODIES, TreeDynamics, tree_dynamics


def _tree_net():
    """A branching tree: a slider on ground carrying a pendulum, a second arm welded to it, a third link."""
    net = netdyn.Network("tree")
    net.add(Gravity(),
            RigidBody("cart", 2.0, 0.2), RigidBody("arm", 1.0, 0.1), RigidBody("plate", 0.5, 0.02),
            RigidBody("tip", 0.3, 0.01), RigidBody("side", 0.7, 0.05),
            Prismatic("P", "ground", (0, 0), "cart", (0, 0), axis=(1, 0.2)),
            Revolute("A", "cart", (0.1, 0), "arm", (-0.5, 0)),
            Weld("W", "arm", (0.5, 0), "plate", (0, 0.1), angle=0.3),
            Revolute("B", "plate", (0.2, 0), "tip", (-0.3, 0)),
            Revolute("C", "cart", (-0.1, 0.05), "side", (0.4, 0.1)))
    return net


def _agree(model, states=4):
    fast = compile_model(model)
    ref = CompiledModel(model, equations=model.derive())
    assert fast._tree is not None and ref._tree is None
    p = fast.parameter_vector()
    assert [str(s) for s in fast.parameters] == [str(s) for s in ref.parameters]
    rng = np.random.default_rng(11)
    for _ in range(states):
        q, f = rng.uniform(-2, 2, fast.n), rng.uniform(-2, 2, fast.n)
        M, h = fast.dynamics(0.0, q, f, p)
        Mr, hr = ref.dynamics(0.0, q, f, p)
        assert np.max(np.abs(M - Mr)) <= 1e-9 * np.max(np.abs(Mr))
        assert np.max(np.abs(h - hr)) <= 1e-9 * (1 + np.max(np.abs(hr)))
        assert np.max(np.abs(fast.dh_df(0.0, q, f, p) - ref.dh_df(0.0, q, f, p))) <= 1e-6 * (1 + np.max(np.abs(hr)))
    return fast, ref


@pytest.fixture
def any_size(monkeypatch):
    """Trees of every size on the recursive evaluator (the symbolic reference is slow from MIN_BODIES on)."""
    import netdyn.numerics.functions.treedynamics as treedynamics   # compiled.py imports it when used

    monkeypatch.setattr(treedynamics, "tree_dynamics", lambda model: tree_dynamics(model, min_bodies=1))


def test_chain_matches_symbolic_relative(any_size):
    _agree(pendulum_net(np.linspace(1, 2, 4), np.linspace(0.5, 1, 4)).model(formulation="relative"))


def test_large_tree_is_not_derived_until_asked():
    model = pendulum_net(np.ones(MIN_BODIES), np.ones(MIN_BODIES)).model(formulation="relative")
    cm = compile_model(model)
    cm.kkt(0.0, np.zeros(cm.n), np.zeros(cm.n), cm.parameter_vector())
    assert cm._tree is not None and model._derived is None  # the numbers need no symbolic derivation ...
    assert len(cm.eq.h) == MIN_BODIES and model._derived is not None  # ... which is there when asked for


def test_branching_tree_with_prismatic_and_weld_matches_symbolic(any_size):
    _agree(_tree_net().model(formulation="relative"))


def test_symbolic_parameters_by_name(any_size):
    m1, m2, l1, l2, g = sp.symbols("m1 m2 l1 l2 g", positive=True)  # assumptions: not sp.Symbol("m1")
    net = netdyn.Network("two")
    net.add(Gravity(g=g), RigidBody("a", m1, m1 * l1 ** 2 / 12), RigidBody("b", m2, m2 * l2 ** 2 / 12),
            Revolute("J1", "ground", (0, 0), "a", (-l1 / 2, 0)), Revolute("J2", "a", (l1 / 2, 0), "b", (-l2 / 2, 0)))
    model = net.model(formulation="relative")
    fast = compile_model(model)
    ref = CompiledModel(model, equations=model.derive())
    values = {"m1": 1.5, "m2": 0.5, "l1": 0.8, "l2": 1.2, "g": 9.81}
    p = fast.parameter_vector(values)
    q, f = np.array([0.3, -1.1]), np.array([0.7, 2.0])
    for a, b in zip(fast.dynamics(0, q, f, p), ref.dynamics(0, q, f, ref.parameter_vector(values))):
        assert np.max(np.abs(a - b)) <= 1e-9 * (1 + np.max(np.abs(b)))


def test_simulation_matches_symbolic_path(any_size):
    q0 = {"theta_J1": -0.6, "theta_J3": 0.2}
    te = np.linspace(0, 0.3, 4)
    model = pendulum_net(np.ones(4), np.ones(4)).model(formulation="relative")
    sol = netdyn.simulate(model, (0, 0.3), q0=q0, t_eval=te, rtol=1e-10, atol=1e-12)
    assert compile_model(model)._tree is not None
    ref_model = pendulum_net(np.ones(4), np.ones(4)).model(formulation="relative")
    ref_model._compiled["lambdify"] = CompiledModel(ref_model, equations=ref_model.derive())
    ref = netdyn.simulate(ref_model, (0, 0.3), q0=q0, t_eval=te, rtol=1e-10, atol=1e-12)
    assert np.max(np.abs(sol.q - ref.q)) < 1e-9 and np.max(np.abs(sol.acc - ref.acc)) < 1e-8


def test_not_applicable_keeps_the_symbolic_path():
    small = pendulum_net(np.ones(3), np.ones(3)).model(formulation="relative")
    assert tree_dynamics(small) is None  # below MIN_BODIES
    net = pendulum_net(np.ones(MIN_BODIES), np.ones(MIN_BODIES))
    net.add(Driver("drive", "J1", 0.1 * netdyn.t))  # a rheonomic constraint: the symbolic path
    assert tree_dynamics(net.model(formulation="relative")) is None
    net = pendulum_net(np.ones(MIN_BODIES), np.ones(MIN_BODIES))
    net.add(Slider("sl", "ground", (0.0, -3.0), "link8", (0.5, 0), axis=(1, 0)))  # not offered recursively
    assert tree_dynamics(net.model(formulation="relative")) is None
    net = pendulum_net(np.ones(MIN_BODIES), np.ones(MIN_BODIES))
    net.add(Revolute("loop", "link3", (0.5, 0), "ground", (2.0, 0)))  # a cut joint: its rows on the tree
    assert tree_dynamics(net.model(formulation="relative")).m == 2
    assert tree_dynamics(pendulum_net(np.ones(MIN_BODIES), np.ones(MIN_BODIES)).model()) is None  # absolute
    assert isinstance(tree_dynamics(pendulum_net(np.ones(MIN_BODIES), np.ones(MIN_BODIES))
                                    .model(formulation="relative")), TreeDynamics)


def _loaded_tree(tau=0.4):
    """The branching tree with every load the recursive path takes: an actuator (a function of time),
    torques (one with a reaction body), forces in the global and the body frame, springs with and
    without free length (one to ground), a damper."""
    net = _tree_net()
    net.add(Actuator("motor", "A", tau * sp.sin(3 * netdyn.t)), Actuator("push", "P", 0.7),
            Torque("T1", "tip", -0.3), Torque("T2", "side", 0.25, reaction="cart"),
            Force("F1", "plate", (0.1, 0.2), 1.5, -0.5), Force("F2", "tip", (0.3, 0), 0.4, 0.9, frame="body"),
            Spring("S1", "ground", (1.0, 1.0), "tip", (0.3, 0), k=20, length=0.5),
            Spring("S2", "arm", (0.2, 0.05), "side", (-0.4, 0), k=5),
            Damper("D1", "cart", (0.0, 0.1), "tip", (0.1, 0), c=0.8))
    return net


def test_loads_match_symbolic_relative(any_size):
    model = _loaded_tree().model(formulation="relative")
    fast, ref = _agree(model)
    p, pr = fast.parameter_vector(), ref.parameter_vector()
    rng = np.random.default_rng(5)
    for tt in (0.0, 0.37):
        q, f = rng.uniform(-1, 1, fast.n), rng.uniform(-2, 2, fast.n)
        M, h = fast.dynamics(tt, q, f, p)
        Mr, hr = ref.dynamics(tt, q, f, pr)
        assert np.max(np.abs(h - hr)) <= 1e-9 * (1 + np.max(np.abs(hr)))
        acc = fast.accelerations(tt, q, f, p)[0]  # the articulated-body algorithm against the symbolic solve
        assert np.max(np.abs(acc - np.linalg.solve(Mr, -hr))) <= 1e-9 * (1 + np.max(np.abs(acc)))
        pd, ps = fast.power(tt, q, f, np.zeros(0), np.zeros(0), p)
        pdr, psr = ref.power(tt, q, f, np.zeros(0), np.zeros(0), pr)
        assert abs(pd - pdr) <= 1e-9 * (1 + abs(pdr)) and abs(ps - psr) <= 1e-9 * (1 + abs(psr))
    assert fast.time_expressions()  # the actuator's sine: its corners are looked for


def test_symbolic_load_values_by_parameter(any_size):
    k, c = sp.symbols("k_s c_d", positive=True)
    net = pendulum_net(np.ones(3), np.ones(3))
    net.add(Spring("S", "ground", (1.0, 0.0), "link3", (0.5, 0), k=k, length=0.2),
            Damper("D", "ground", (0.0, 1.0), "link2", (0, 0), c=c))
    model = net.model(formulation="relative")
    fast = compile_model(model)
    ref = CompiledModel(model, equations=model.derive())
    values = {"k_s": 30.0, "c_d": 1.5}
    q, f = np.array([0.2, -0.4, 0.9]), np.array([1.0, -0.5, 0.3])
    for a, b in zip(fast.dynamics(0, q, f, fast.parameter_vector(values)),
                    ref.dynamics(0, q, f, ref.parameter_vector(values))):
        assert np.max(np.abs(a - b)) <= 1e-9 * (1 + np.max(np.abs(b)))


def test_loaded_simulation_matches_symbolic_and_balances_energy(any_size):
    te = np.linspace(0, 0.3, 4)
    model = _loaded_tree().model(formulation="relative")
    sol = netdyn.simulate(model, (0, 0.3), t_eval=te, rtol=1e-10, atol=1e-12)
    assert compile_model(model)._tree is not None and model.kinetic_deferred  # no symbol of T written
    ref_model = _loaded_tree().model(formulation="relative")
    ref_model._compiled["lambdify"] = CompiledModel(ref_model, equations=ref_model.derive())
    ref = netdyn.simulate(ref_model, (0, 0.3), t_eval=te, rtol=1e-10, atol=1e-12)
    assert np.max(np.abs(sol.q - ref.q)) < 1e-9 and np.max(np.abs(sol.acc - ref.acc)) < 1e-8
    assert np.max(np.abs(sol.energy() - ref.energy())) < 1e-9 * np.max(np.abs(ref.energy()))  # springs, gravity
    assert abs(sol.power_balance()["relative"]) < 1e-6  # stored + dissipated − supplied energy
    assert model.kinetic_deferred  # the energy without the symbolic T


def test_state_dependent_load_keeps_the_symbolic_path():
    net = pendulum_net(np.ones(MIN_BODIES), np.ones(MIN_BODIES))
    model0 = net.model(formulation="relative")
    net.add(Actuator("fb", "J1", -2.0 * model0.coordinate("theta_J1")))  # feedback: a function of the state
    assert tree_dynamics(net.model(formulation="relative")) is None


def test_short_span_of_a_long_chain_takes_few_steps():
    """The far links of a chain hardly move in 0.1 s: their tolerances are floored at the roundoff of the
    coupled solve (netdyn.numerics.simulate.scaled_atol), not at 1e-16 (40,000 steps at n = 30)."""
    n = 30
    model = pendulum_net(np.ones(n), np.ones(n)).model(formulation="relative")
    sol = netdyn.simulate(model, (0, 0.1), q0={"theta_J1": -np.pi / 4}, t_eval=np.linspace(0, 0.1, 3))
    assert sol.trajectory.nsteps < 200 and model.kinetic_deferred


def _closed_net():
    """A four-bar (cut revolute C) carrying two pendulums, one of them tied by a second cut revolute (G) to
    a slider on ground: 6 tree coordinates, 4 cut rows."""
    net = netdyn.Network("closed")
    net.add(Gravity(), RigidBody("a", 1.0, 0.1), RigidBody("b", 0.8, 0.08), RigidBody("c", 1.2, 0.1),
            RigidBody("d", 0.5, 0.05), RigidBody("e", 0.4, 0.03), RigidBody("f", 0.6, 0.02),
            Revolute("A", "ground", (0, 0), "a", (-0.5, 0)), Revolute("B", "a", (0.5, 0), "b", (-0.5, 0)),
            Revolute("C", "b", (0.5, 0), "c", (-0.5, 0)), Revolute("D", "ground", (1.6, 0.2), "c", (0.5, 0)),
            Revolute("E", "a", (0.0, 0.0), "d", (-0.6, 0)), Revolute("F", "b", (0.0, 0.0), "e", (0.0, 0.2)),
            Prismatic("S", "ground", (-0.5, -0.6), "f", (0.0, 0.0), axis=(0.0, 1.0)),
            Revolute("G", "f", (0.1, 0.0), "d", (0.6, 0.0)))
    return net


def test_closed_tree_cut_rows_match_symbolic(any_size):
    model = _closed_net().model(formulation="relative")
    fast, ref = _agree(model)
    assert fast.m1 == ref.m1 > 0
    p = fast.parameter_vector()
    rng = np.random.default_rng(2)
    for _ in range(3):
        q, f = rng.uniform(-1, 1, fast.n), rng.uniform(-1, 1, fast.n)
        c, cr = fast.constraints(0.0, q, f, p), ref.constraints(0.0, q, f, p)
        for a, b in ((c.phi, cr.phi), (c.Phi_q, cr.Phi_q), (c.gamma_phi, cr.gamma_phi)):
            assert np.max(np.abs(a - b)) <= 1e-9 * (1 + np.max(np.abs(b)))
        for a, b in list(zip(fast.accelerations(0.0, q, f, p), ref.accelerations(0.0, q, f, p)))[:2]:  # q̈, λ
            assert np.max(np.abs(a - b)) <= 1e-9 * (1 + np.max(np.abs(b)))


def test_closed_tree_simulation_matches_symbolic(any_size):
    te = np.linspace(0, 0.2, 3)
    q0 = {"theta_A": 0.3}
    model = _closed_net().model(formulation="relative")
    sol = netdyn.simulate(model, (0, 0.2), q0=q0, t_eval=te, rtol=1e-10, atol=1e-12)
    assert compile_model(model)._tree is not None and model.kinetic_deferred  # nothing symbolic derived
    ref_model = _closed_net().model(formulation="relative")
    ref_model._compiled["lambdify"] = CompiledModel(ref_model, equations=ref_model.derive())
    ref = netdyn.simulate(ref_model, (0, 0.2), q0=q0, t_eval=te, rtol=1e-10, atol=1e-12)
    assert np.max(np.abs(sol.q - ref.q)) < 1e-9 and np.max(np.abs(sol.lam - ref.lam)) < 1e-7
    assert sol.constraint_residual()["position"] < 1e-10
