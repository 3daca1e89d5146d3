"""The compiled fast paths against the reference paths they replace.

* :class:`~netdyn.numerics.functions.assembly.TermAssembly` (element templates) against the whole-model lambdified
  ``M a + h`` and ``∂h/∂f`` of :class:`~netdyn.numerics.functions.compiled.CompiledModel`, and its ``∂R/∂q`` against
  central differences;
* :class:`~netdyn.numerics.ida.sparse_ida.SparseIDA` (analytic sparse Jacobian, SuperLU) against
  :class:`~netdyn.numerics.ida.ida.IDA` (dense finite-difference Jacobian) and a closed form.
"""
import numpy as np
import pytest
import sympy as sp

import netdyn
from netdyn import LagrangianModel, Network, coordinates, t
from netdyn.components import electrical as el
from netdyn.numerics.functions.assembly import TermAssembly
from netdyn.numerics.functions.compiled import compile_model
from netdyn.numerics.ida.ida import IDA
from netdyn.numerics.ida.sparse_ida import SparseIDA, ida_for

R, C, A, B = 1e3, 1e-9, 1e8, 1e26


def nonlinear_ladder(n, source=1.0, scale=1.0):
    """RC ladder with nonlinear resistors (D = R i²/2 + A i⁴/4) and capacitors (V = q²/2C + B q⁴/4)."""
    net = Network(f"nonlinear_ladder_{n}")
    net.add(el.VoltageSource("V1", "n0", "0", source))
    for k in range(1, n + 1):
        Rk, Ck = R * (1 + 0.1 * k * scale), C * (1 + 0.05 * k * scale)  # distinct values: lifted constants
        net.add(el.Resistor(f"R{k}", f"n{k - 1}", f"n{k}", dissipation=lambda i, Rk=Rk: Rk * i**2 / 2 + A * i**4 / 4),
                el.Capacitor(f"C{k}", f"n{k}", "0", energy=lambda q, Ck=Ck: q**2 / (2 * Ck) + B * q**4 / 4))
    return net


def nonlinear_rl():
    """Nonlinear resistors, a nonlinear inductor and a capacitor: flows with and without inertia."""
    net = Network("nonlinear_rl")
    net.add(el.VoltageSource("V1", "a", "0", sp.sin(2e5 * t)),
            el.Resistor("R1", "a", "b", dissipation=lambda i: 50 * i**2 / 2 + 1e3 * i**4 / 4),
            el.Inductor("L1", "b", "c", coenergy=lambda i: 1e-4 * i**2 / 2 + 1e-3 * i**4 / 4),
            el.Capacitor("C1", "c", "0", 1e-7), el.Resistor("R2", "c", "0", 200.0))
    return net


def random_state(n, rng, scale=(1e-9, 1e-4, 1e2)):
    return rng.normal(0, scale[0], n), rng.normal(0, scale[1], n), rng.normal(0, scale[2], n)


def _residual(cm, tt, q, f, a, p):
    """``M(q, f) a + h(q, f)`` of the compiled (lambdified) model: the reference residual."""
    M, h = cm.dynamics(tt, q, f, p)
    return M @ a + h


def _central_differences(fun, x, floor, rel=1e-6):
    """The Jacobian of ``fun`` at ``x`` by central differences, step ``rel · max(|x_j|, floor)``."""
    columns = []
    for j in range(x.size):
        e = np.zeros(x.size)
        e[j] = rel * max(abs(x[j]), floor)
        columns.append((fun(x + e) - fun(x - e)) / (2 * e[j]))
    return np.column_stack(columns)


@pytest.mark.parametrize("make", [lambda: nonlinear_ladder(6), nonlinear_rl])
def test_templates_match_the_lambdified_model(make):
    model = make().model()
    assert not model.constraints and not model.flow_constraints
    cm = compile_model(model)
    p = cm.parameter_vector()
    asm = TermAssembly(model)
    rng = np.random.default_rng(1)
    for tt in (0.0, 3e-6):
        q, f, a = random_state(cm.n, rng)
        M, h = cm.dynamics(tt, q, f, p)
        ref = M @ a + h
        got = asm.residual(tt, q, f, a, p.vector, p.inputs(tt))
        assert np.max(np.abs(got - ref)) <= 1e-9 * np.max(np.abs(ref))
        # at a = 0, ∂R/∂f is the reference's compiled ∂h/∂f; otherwise ∂(M(f) a)/∂f adds (checked below)
        Jf = asm.jacobian(tt, q, f, 0 * a, p.vector, p.inputs(tt), 1).toarray()
        Jf_ref = cm.dh_df(tt, q, f, p)
        assert np.max(np.abs(Jf - Jf_ref)) <= 1e-9 * np.max(np.abs(Jf_ref))
        Jf = asm.jacobian(tt, q, f, a, p.vector, p.inputs(tt), 1).toarray()
        Jf_fd = _central_differences(lambda x: _residual(cm, tt, q, x, a, p), f, floor=1e-4)
        assert np.max(np.abs(Jf - Jf_fd)) <= 1e-6 * np.max(np.abs(Jf_fd))
        Ja = asm.jacobian(tt, q, f, a, p.vector, p.inputs(tt), 2).toarray()
        assert np.max(np.abs(Ja - M)) <= 1e-9 * max(np.max(np.abs(M)), 1e-300) if M.any() else not Ja.any()
        Jq = asm.jacobian(tt, q, f, a, p.vector, p.inputs(tt), 0).toarray()
        Jq_fd = _central_differences(lambda x: _residual(cm, tt, x, f, a, p), q, floor=1e-9)
        assert np.max(np.abs(Jq - Jq_fd)) <= 1e-6 * np.max(np.abs(Jq_fd))


def test_templates_are_shared_between_elements_of_one_shape():
    asm = TermAssembly(nonlinear_ladder(40).model())
    # R i²/2 and A i⁴/4 of the resistors (one loop flow, or the difference of two), q²/2C and B q⁴/4 of the
    # capacitors, the source: a handful of shapes for 81 elements, their values lifted into constants
    assert len(asm.templates) <= 10
    assert sum(len(tp.coords) for tp in asm.templates) >= 160


def test_power_matches_the_symbolic_expressions():
    model = nonlinear_rl().model()
    cm = compile_model(model)
    p = cm.parameter_vector()
    asm = TermAssembly(model)
    rng = np.random.default_rng(2)
    q, f, _ = random_state(cm.n, rng, (1e-7, 1e-2, 0))
    ref = cm.power(1e-6, q, f, np.zeros(0), np.zeros(0), p)
    got = asm.power(1e-6, q, f, p.vector, p.inputs(1e-6))
    assert np.allclose(got, ref, rtol=1e-9, atol=0)


def test_sparse_jacobian_matches_finite_differences_of_the_residual():
    cm = compile_model(nonlinear_rl().model())
    ida = SparseIDA(cm, cm.parameter_vector())
    rng = np.random.default_rng(3)
    y, yp = rng.normal(0, 1e-3, ida.N), rng.normal(0, 1e-1, ida.N)
    cj = 1e5
    J = ida.jacobian(2e-6, y, yp, cj).toarray()

    def F(y_, yp_):
        r = np.zeros(ida.N)
        ida.residual(2e-6, y_, yp_, r)
        return r

    Jfd = _central_differences(lambda y_: F(y_, yp + cj * (y_ - y)), y, floor=1e-3, rel=1e-7)
    assert np.max(np.abs(J - Jfd)) <= 1e-6 * np.max(np.abs(Jfd))


def test_sparse_ida_matches_dense_ida():
    for net in (nonlinear_ladder(5), nonlinear_rl()):
        cm = compile_model(net.model())
        p = cm.parameter_vector()
        assert isinstance(ida_for(cm, p), SparseIDA)
        q0, f0 = np.zeros(cm.n), np.zeros(cm.n)
        t1 = 5e-6
        te = np.linspace(0, t1, 11)
        atol = np.concatenate([np.full(cm.n, 1e-19), np.full(cm.n, 1e-13)])
        a = SparseIDA(cm, p).integrate(0.0, t1, q0, f0, te, 1e-9, atol)
        b = IDA(cm, p).integrate(0.0, t1, q0, f0, te, 1e-9, atol)
        for x, y in ((a.q, b.q), (a.f, b.f), (a.dissipated, b.dissipated)):
            assert np.max(np.abs(x - y)) <= 1e-6 * np.max(np.abs(y))


def test_linear_rc_against_closed_form():
    x, = coordinates("x,")
    tau, v = 2.0, 3.0
    cm = compile_model(LagrangianModel([x], D=tau * x.diff(t)**2 / 2, V=x**2 / 2, efforts={x: v}))
    te = np.linspace(0, 4, 9)
    tr = SparseIDA(cm, cm.parameter_vector()).integrate(0, 4, np.array([0.0]), np.array([v / tau]), te, 1e-10, 1e-12)
    exact = v * (1 - np.exp(-te / tau))
    assert np.max(np.abs(tr.q[0] - exact)) < 1e-8
    assert np.max(np.abs(tr.f[0] - v / tau * np.exp(-te / tau))) < 1e-8
    # energy: supplied = stored + dissipated
    assert abs(tr.supplied[-1] - (exact[-1]**2 / 2 + tr.dissipated[-1])) < 1e-8


def test_simulate_takes_the_sparse_path_and_agrees_with_the_dense_one():
    net = nonlinear_ladder(4)
    sol = netdyn.simulate(net, (0, 5e-6), rtol=1e-10, method="ida")
    model = net.model()
    cm = compile_model(model)
    p = cm.parameter_vector()
    ref = IDA(cm, p).integrate(0.0, 5e-6, np.zeros(cm.n), np.zeros(cm.n), sol.t, 1e-10, sol.trajectory.q.max() * 1e-12)
    assert np.max(np.abs(sol.trajectory.q - ref.q)) <= 1e-6 * np.max(np.abs(ref.q))
    assert sol.power_balance()["relative"] < 1e-6


def test_sparse_kkt_solve_matches_dense_and_least_squares():
    from netdyn.numerics.mechanics.projection import SPARSE_KKT, solve_kkt
    from netdyn.errors import SingularSystemError
    rng = np.random.default_rng(4)
    n, m = 60, 20  # above the dense/sparse switch
    assert n + m > SPARSE_KKT
    M = np.diag(rng.uniform(1, 2, n))
    Cm = np.zeros((m, n))
    for i in range(m):
        Cm[i, rng.choice(n, 3, replace=False)] = rng.normal(size=3)
    K = np.block([[M, Cm.T], [Cm, np.zeros((m, m))]])
    r = rng.normal(size=n + m)
    z = solve_kkt(K, r, 0.0)
    ref = np.linalg.solve(K, r)
    assert np.max(np.abs(z - ref)) <= 1e-9 * np.max(np.abs(ref))
    K[-1, :], K[:, -1] = K[-2, :], K[:, -2]  # a repeated constraint: singular
    with pytest.raises(SingularSystemError):
        solve_kkt(K, r, 0.0)
