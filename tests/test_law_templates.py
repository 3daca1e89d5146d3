"""The circuit path for elements given by their own energy or dissipation functions (issue 27, item 5).

``netdyn.numerics.circuit.laws``: each distinct law compiled once, elements stamped as numbers, Newton +
variable-step BDF, flows from the BDF's own rates. Checked against the symbolic path (its derived equations
at random states, to 1e-9, and its trajectories), against ngspice's B-source deck, and on random nonlinear
networks (hypothesis, derandomized).
"""
import shutil

import numpy as np
import pytest
import sympy as sp
from hypothesis import HealthCheck, Phase, given, reject, settings, strategies as st

import netdyn
from netdyn.components.electrical import Capacitor, CurrentSource, Inductor, Resistor, VoltageSource
from netdyn.errors import IntegrationError, NetdynError
from netdyn.lagrange.sources import sine
from netdyn.numerics.circuit.laws.energysim import LawCircuit, try_laws
from netdyn.numerics.circuit.laws.templates import canonical, law_of, template_count
from netdyn.numerics.circuit.path import LAWS_REASON
from netdyn.numerics.functions.compiled import compile_model

R, C, A, B = 1e3, 1e-9, 1e8, 1e26  # benchmarks.problems.NLRC: cubic terms about a tenth at 1 V


def ladder(N, drive="voltage", spread=False):
    """The nonlinear RC ladder of the benchmarks (v = R i + A i³, v = q/C + B q³); ``spread``: each section's
    own R and C (one law each all the same)."""
    net = netdyn.Network(f"nonlinear ladder {N}")
    if drive == "voltage":
        net.add(VoltageSource("V1", "n0", "0", 1.0))
    else:
        net.add(CurrentSource("I1", "0", "n0", 1e-3), Resistor("R0", "n0", "0", 1e3))
    for k in range(1, N + 1):
        Rk, Ck = (R * (1 + 0.1 * k), C / (1 + 0.05 * k)) if spread else (R, C)
        net.add(Resistor(f"R{k}", f"n{k - 1}", f"n{k}", dissipation=lambda i, Rk=Rk: Rk * i**2 / 2 + A * i**4 / 4),
                Capacitor(f"C{k}", f"n{k}", "0", energy=lambda q, Ck=Ck: q**2 / (2 * Ck) + B * q**4 / 4))
    return net


def equations_against_symbolic(net, seeds=3, scale_q=1e-9, scale_f=1e-3):
    """Largest relative difference of the law path's Lagrange and constraint rows from the symbolic model's
    (``net.model()`` derived and compiled) at random states, and of its Newton matrix from central differences
    of its own residual."""
    c = LawCircuit(net)
    cm = compile_model(net.model(formulation=c.forms))
    p = cm.parameter_vector()
    rng = np.random.default_rng(27)
    worst, worst_jac = 0.0, 0.0
    for _ in range(seeds):
        tt = float(rng.uniform(0, 1e-5))
        q, f = rng.normal(size=c.n) * scale_q, rng.normal(size=c.n) * scale_f
        M, h = cm.dynamics(tt, q, f, p)
        y, yd = np.zeros(c.N), np.zeros(c.N)
        y[:c.n], yd[:c.n] = q, f
        y[c.n:c.n + c.nI] = f[c.I]
        u = c.dae.G @ np.array([fn(tt) for fn in c.dae.inputs]) if c.dae.inputs else np.zeros(c.N)
        r, hh = c.residual(tt, y, yd, u)
        lag = r[c.nI:c.nI + c.n] - (M @ np.zeros(c.n))  # (no accelerations: yd's inertial part is 0)
        worst = max(worst, np.max(np.abs(lag - h)) / np.max(np.abs(h)))
        con = cm.constraints(tt, q, f, p)
        if con.A.size:
            flow = con.A @ f + con.a
            worst = max(worst, np.max(np.abs(r[c.nI + c.n:] - flow)) / max(np.max(np.abs(flow)), 1e-3))
        alpha = 1e7
        Jm = c.matrix(alpha, hh).toarray()
        step = 1e-7 * np.maximum(np.abs(y), np.r_[np.full(c.n, scale_q), np.full(c.N - c.n, scale_f)])
        for j in range(c.N):
            e = np.zeros(c.N)
            e[j] = step[j]
            rp = c.residual(tt, y + e, yd + alpha * e, u)[0]
            rm = c.residual(tt, y - e, yd - alpha * e, u)[0]
            fd = (rp - rm) / (2 * step[j])
            worst_jac = max(worst_jac, np.max(np.abs(Jm[:, j] - fd)) / max(np.max(np.abs(fd)), 1e-300))
    return worst, worst_jac


@pytest.mark.parametrize("drive", ["voltage", "current"])
def test_equations_equal_the_symbolic_model_on_the_ladder(drive):
    rows, jac = equations_against_symbolic(ladder(6, drive, spread=True))
    assert rows < 1e-9
    assert jac < 1e-5  # central differences of the residual, step 1e-7


def test_one_compiled_law_per_expression():
    before = template_count()
    net = ladder(40, spread=True)   # 40 different resistors and capacitors, two laws
    c = LawCircuit(net)
    assert len(c.groups) == 2 and sorted(len(g.names) for g in c.groups) == [40, 40]
    assert template_count() - before <= 2
    law, p = law_of(net.elements["R7"])
    assert np.allclose(p, [R * 1.7 / 2, A / 4]) and law.role == "D"
    expr, values = canonical(sp.sympify("2*_x**3 + exp(_x/0.025)"))
    assert values == [2.0, 40.0] and expr.has(sp.exp)


def test_ladder_takes_the_law_path_and_says_why():
    net = ladder(30)
    sol = netdyn.simulate(net, (0, 1e-5), rtol=1e-6, atol=1e-16)
    assert sol.method == "circuit" and sol.method.reason == LAWS_REASON
    assert "energy or dissipation functions" in sol.method.explain()
    from netdyn.numerics.paths import method_for
    assert method_for(net, (0, 1e-5)).name == "circuit"
    # an element's voltage is its law's slope, its current the BDF's own rate: v = R i + A i³, v = q/C + B q³
    i, v = sol.current("R3"), sol.voltage("R3")
    assert np.allclose(v, R * i + A * i**3, rtol=1e-12, atol=1e-15)
    q = sol.port_displacement("C3")
    assert np.allclose(sol.voltage("C3"), q / C + B * q**3, rtol=1e-12, atol=1e-15)
    assert np.allclose(sol.voltage("n3"), sol.voltage("C3"), rtol=0, atol=1e-12)
    named = netdyn.simulate(net, (0, 1e-5), rtol=1e-6, atol=1e-16, method="circuit")
    assert np.array_equal(named.q, sol.q)


@pytest.mark.parametrize("drive", ["voltage", "current"])
def test_ladder_trajectories_equal_the_symbolic_path(drive):
    net = ladder(8, drive, spread=True)
    te = np.linspace(0, 1e-5, 101)
    new = netdyn.simulate(net, (0, 1e-5), t_eval=te, rtol=1e-9)
    old = netdyn.simulate(net.model(), (0, 1e-5), t_eval=te, rtol=1e-9)
    assert new.method == "circuit" and old.method == "ida"
    for name in ("C1", "C8", "R1", "R8"):
        ref = old.voltage(name)
        assert np.max(np.abs(new.voltage(name) - ref)) < 2e-6 * np.max(np.abs(ref)), name
        ref = old.current(name)
        assert np.max(np.abs(new.current(name) - ref)) < 2e-5 * np.max(np.abs(ref)), name
    E_old = old.energy()
    assert np.max(np.abs(new.energy() - E_old)) < 1e-5 * np.max(E_old)


@pytest.mark.skipif(shutil.which("ngspice") is None, reason="ngspice is not installed")
def test_ladder_against_ngspice_b_sources():
    from netdyn.io import run_ngspice
    N = 10
    lines = [f"* nonlinear RC ladder, {N} sections", "V1 n0 0 DC 1"]
    for k in range(1, N + 1):  # the deck of benchmarks.problems.nonlinear_ladder_deck
        lines += [f"Vs{k} n{k - 1} m{k} 0", f"BR{k} m{k} n{k} V = {R:g}*I(Vs{k}) + {A:g}*I(Vs{k})^3",
                  f"Vc{k} n{k} y{k} 0", f"BC{k} y{k} 0 V = V(x{k}) + {B * C ** 3:g}*V(x{k})^3",
                  f"Bq{k} 0 x{k} I = I(Vc{k})", f"Cx{k} x{k} 0 {C:g}"]
    ng = run_ngspice("\n".join(lines) + "\n", ["v(n1)", f"v(n{N})"], tstop=1e-5, tstep=1e-8, tmax=1e-9,
                     options={"reltol": 1e-6})
    keep = np.zeros(ng["time"].size, bool)
    keep[1::10] = True  # every tenth of ngspice's ~10,000 points (netdyn steps onto each output time)
    sol = netdyn.simulate(ladder(N), (0, 1e-5), t_eval=ng["time"][keep], rtol=1e-8)
    for node in ("n1", f"n{N}"):
        err = np.max(np.abs(sol.voltage(node) - ng[f"v({node})"][keep]))
        assert err < 1e-4 * np.max(np.abs(ng["v(n1)"])), (node, err)


# ------------------------------------------------------------------ random nonlinear networks
@st.composite
def nonlinear_networks(draw):
    """A connected circuit: a source at n1, a random tree of (non)linear resistors, a (non)linear capacitor from
    every node to ground, and a few extra resistors or inductors between nodes."""
    nodes = draw(st.integers(2, 6))
    net = netdyn.Network("random nonlinear")
    amp = draw(st.floats(0.5, 2.0))
    source = sine(0, amp, 2e5) if draw(st.booleans()) else amp
    net.add(VoltageSource("V1", "n1", "0", source) if draw(st.booleans()) else CurrentSource("I1", "0", "n1", amp * 1e-3))
    net.add(Resistor("Rg", "n1", "0", draw(st.floats(500, 5e3))))
    coeff = lambda lo, hi: draw(st.floats(lo, hi))
    k = 0

    def resistor(a, b):
        nonlocal k
        k += 1
        r = coeff(200, 2e3)
        if draw(st.booleans()):
            cubic = coeff(1e6, 1e8)
            return Resistor(f"R{k}", a, b, dissipation=lambda i, r=r, c=cubic: r * i**2 / 2 + c * i**4 / 4)
        return Resistor(f"R{k}", a, b, r)

    for j in range(2, nodes + 1):
        net.add(resistor(f"n{draw(st.integers(1, j - 1))}", f"n{j}"))
    for j in range(1, nodes + 1):
        cap = coeff(2e-10, 2e-9)
        if draw(st.booleans()):
            quartic = coeff(1e24, 1e26)
            net.add(Capacitor(f"C{j}", f"n{j}", "0", energy=lambda q, cap=cap, b=quartic: q**2 / (2 * cap) + b * q**4 / 4))
        else:
            net.add(Capacitor(f"C{j}", f"n{j}", "0", cap))
    for m in range(draw(st.integers(0, 2))):
        a, b = draw(st.integers(1, nodes)), draw(st.integers(1, nodes))
        if a != b:
            net.add(resistor(f"n{a}", f"n{b}") if draw(st.booleans()) else
                    Inductor(f"L{m}", f"n{a}", f"n{b}", coeff(1e-4, 1e-3)))
    net.add(Resistor("Rlaw", "n1", "0", dissipation=lambda i: 2e3 * i**2 / 2 + 1e7 * i**4 / 4))  # at least one law
    return net


@settings(max_examples=8, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow],
          phases=[Phase.explicit, Phase.reuse, Phase.generate])
@given(nonlinear_networks())
def test_random_nonlinear_networks_equal_the_symbolic_path(net):
    assert try_laws(net) is not None
    rows, jac = equations_against_symbolic(net, seeds=2)
    assert rows < 1e-9 and jac < 1e-5
    te = np.linspace(0, 5e-6, 51)
    try:
        old = netdyn.simulate(net.model(), (0, 5e-6), t_eval=te, rtol=1e-9)
    except IntegrationError:  # the reference's own failure to start (IDA at t = 0): nothing to compare with
        reject()
    new = netdyn.simulate(net, (0, 5e-6), t_eval=te, rtol=1e-9)
    assert new.method == "circuit"
    for name in net.elements:
        ref = old.voltage(name)
        peak = max(np.max(np.abs(ref)), 1e-3)
        assert np.max(np.abs(new.voltage(name) - ref)) < 1e-5 * peak, name


# ------------------------------------------------------------------ what the path declines
def test_declines_what_it_does_not_take():
    from netdyn.components.translational import Mass, Spring
    oscillator = netdyn.Network()
    oscillator.add(Mass("m", "x", 1.0), Spring("k", "x", "0", energy=lambda x: x**4 / 4 + x**2 / 2))
    assert try_laws(oscillator) is None   # a mechanism: the symbolic paths' energy-preserving integrators
    coil = netdyn.Network()
    coil.add(VoltageSource("V1", "a", "0", 1.0), Resistor("R1", "a", "b", 1.0),
             Inductor("L1", "b", "0", coenergy=lambda i: i**2 / 2 + i**4 / 4))
    assert try_laws(coil) is None and netdyn.simulate(coil, (0, 1)).method != "circuit"
    with pytest.raises(NetdynError, match="L1"):
        netdyn.simulate(coil, (0, 1), method="circuit")
    bad = netdyn.Network()
    bad.add(VoltageSource("V1", "a", "0", 1.0), Resistor("R1", "a", "0", dissipation=lambda i: sp.Symbol("k") * i**2))
    with pytest.raises(NetdynError, match="R1"):
        LawCircuit(bad)
