"""The numeric fast path (stamped sparse matrices, Radau IIA) against the symbolic path."""
import numpy as np
import pytest
import sympy as sp

import netdyn
from netdyn import Network, simulate
from netdyn.components import electrical as el
from netdyn.lagrange.equations import derive
from netdyn.lagrange.sources import pulse
from netdyn.numerics.circuit.stamp import NotLinear, linear_network
from netdyn.symbols import t

from systems import mechanical_network, rlc_circuit


def rc_ladder(n, R=1e3, C=1e-9, source=1.0):
    """An n-section RC ladder driven by a voltage source (the benchmark circuit)."""
    net = Network(f"rc_ladder_{n}")
    net.add(el.VoltageSource("V1", "n0", "0", source))
    for k in range(1, n + 1):
        net.add(el.Resistor(f"R{k}", f"n{k - 1}", f"n{k}", R), el.Capacitor(f"C{k}", f"n{k}", "0", C))
    return net


def rlc_ladder():
    """Two LC sections with losses, driven by a pulse: inertial and algebraic flows together."""
    net = Network("rlc_ladder")
    net.add(el.VoltageSource("V1", "in", "0", pulse(0, 1, 1e-4, 1e-5, 1e-5, 3e-4, 1e-3)),
            el.Resistor("R1", "in", "a", 5.0), el.Inductor("L1", "a", "b", 1e-3), el.Capacitor("C1", "b", "0", 1e-6),
            el.Resistor("R2", "b", "c", 20.0), el.Inductor("L2", "c", "d", 2e-3), el.Capacitor("C2", "d", "0", 2e-6),
            el.Resistor("R3", "d", "0", 100.0))
    return net


CASES = [("rc_ladder_loop", lambda: rc_ladder(6), "loop", 4e-5, "ida"),
         ("rc_ladder_branch", lambda: rc_ladder(4), "branch", 4e-5, "ida"),
         ("rc_ladder_node", lambda: rc_ladder(4), "node", 4e-5, "ida"),
         ("rlc_ladder_loop", rlc_ladder, "loop", 1e-3, "ida"),
         ("rlc_ladder_branch", rlc_ladder, "branch", 1e-3, "ida"),
         ("rlc_circuit_loop", rlc_circuit, "loop", 0.05, "projection"),
         ("two_masses_node", mechanical_network, "node", 3.0, "projection")]


def _close(a, b, tol=1e-9):
    scale = max(np.max(np.abs(b)), 1e-300)
    return np.max(np.abs(a - b)) / scale


@pytest.mark.parametrize("name,build,formulation,t_end,symbolic", CASES, ids=[c[0] for c in CASES])
def test_fast_and_symbolic_paths_give_the_same_trajectories(name, build, formulation, t_end, symbolic):
    net = build()
    te = np.linspace(0, t_end, 41)
    fast = simulate(net, (0, t_end), t_eval=te, formulation=formulation, rtol=1e-12, method="linear")
    slow = simulate(net, (0, t_end), t_eval=te, formulation=formulation, rtol=1e-12, method=symbolic)
    assert fast.method == "linear" and slow.method != "linear"
    assert fast.coordinate_names == slow.model.coordinate_names
    assert _close(fast.q, slow.q) < 1e-9, _close(fast.q, slow.q)
    assert _close(fast.f, slow.f) < 1e-8, _close(fast.f, slow.f)


@pytest.mark.parametrize("formulation", ["loop", "branch", "node"])
def test_stamped_matrices_equal_the_derived_ones(formulation):
    for net in (rlc_circuit(), mechanical_network(), rlc_ladder()):
        lin = linear_network(net, formulation)
        model = net.model(formulation=formulation)
        eq = derive(model)
        assert lin.names == model.coordinate_names and lin.flow_labels == model.flow_constraint_labels
        dense = lambda d, shape: _dense(d, shape)
        assert np.allclose(dense(eq.M, (lin.n, lin.n)), lin.M.toarray(), rtol=1e-14, atol=0)
        K = np.array([[float(sp.diff(h, q)) for q in eq.q] for h in eq.h])
        D = np.array([[float(sp.diff(h, f)) for f in eq.f] for h in eq.h])
        assert np.allclose(K, lin.K.toarray(), rtol=1e-14, atol=0)
        assert np.allclose(D, lin.D.toarray(), rtol=1e-14, atol=0)
        assert np.allclose(dense(eq.A, (lin.m, lin.n)), lin.A.toarray(), rtol=1e-14, atol=0)
        zero = {s: 0 for s in eq.q + eq.f}
        for tt in (0.0, 1.3e-4, 0.37):
            u = np.array([float(e.subs(t, tt)) for e in lin.inputs])
            h0 = np.array([float(h.xreplace(zero).subs(t, tt)) for h in eq.h])
            a0 = np.array([float(sp.sympify(a).xreplace(zero).subs(t, tt)) for a in eq.a0])
            assert np.allclose(-h0, lin.B_e @ u if u.size else 0, rtol=1e-13, atol=1e-300)
            assert np.allclose(a0, lin.B_a @ u if u.size else 0, rtol=1e-13, atol=1e-300)


def _dense(d, shape):
    out = np.zeros(shape)
    for (i, j), v in d.items():
        out[i, j] = float(v)
    return out


def test_auto_picks_the_fast_path_and_element_quantities_work():
    net = rc_ladder(1, R=1.0, C=1.0)
    sol = simulate(net, (0, 2))
    assert sol.method == "linear"
    exact = 1 - np.exp(-sol.t)
    assert np.max(np.abs(sol.voltage("C1") - exact)) < 1e-9
    assert np.max(np.abs(sol.current("R1") - np.exp(-sol.t))) < 1e-9
    assert np.max(np.abs(sol["q_R1_dot"] - np.exp(-sol.t))) < 1e-9


def test_initial_values_are_honoured():
    net = Network()
    net.add(el.Inductor("L1", "a", "0", 2.0), el.Capacitor("C1", "a", "0", 0.5))
    sol = simulate(net, (0, 1), q0={"q_L1": 0.5}, f0={"q_L1": 0.0}, formulation="loop")
    assert sol.method == "linear"
    assert np.max(np.abs(sol["q_L1"] - 0.5 * np.cos(sol.t))) < 1e-8


def test_method_linear_names_what_is_in_the_way():
    net = rc_ladder(2)
    net.add(el.Resistor("Rnl", "n2", "0", dissipation=lambda i: i**4))
    with pytest.raises(NotLinear, match="Rnl"):
        simulate(net, (0, 1e-6), method="linear")
    sol = simulate(net, (0, 1e-6))  # auto: the symbolic path
    assert sol.method != "linear"
    with pytest.raises(netdyn.NetdynError, match="params"):
        simulate(rc_ladder(2), (0, 1e-6), method="linear", params={"R1": 2.0})


def test_symbolic_values_take_the_symbolic_path():
    net = Network()
    net.add(el.VoltageSource("V1", "a", "0", 1.0), el.Resistor("R1", "a", "b", sp.Symbol("R")),
            el.Capacitor("C1", "b", "0", 1.0))
    with pytest.raises(NotLinear, match="R1"):
        linear_network(net)
    sol = simulate(net, (0, 1), params={"R": 1.0})
    assert sol.method != "linear"
