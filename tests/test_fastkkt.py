"""The fast constrained path (netdyn.numerics.mechanics.fastkkt) against the reference path it replaces, to 1e-9:
the compiled KKT terms and solve against ``CompiledModel.kkt`` + LU, the banded Gram factorisation
against dense algebra, the projection integrator with ``fast=True`` against ``fast=False``, the cheap
singularity estimate against the SVD, and the watch's switch."""
import numpy as np
import pytest
import sympy as sp

import netdyn
from netdyn.linkages import FOUR_BAR_GUESS, four_bar as four_bar_net, pendulum as pendulum_net
from netdyn.models import chaplygin_sleigh
from netdyn.numerics.functions.compiled import compile_model
from netdyn.numerics.mechanics.fastkkt import FastKKT, Gram, fused_function
from netdyn.numerics.mechanics.projection import Projection, solve_kkt
from netdyn.numerics.dae.structure import SingularityWatch, hermite


def _chain(n):
    return pendulum_net(np.ones(n), np.linspace(1.0, 0.6, n)).model()


def _reference(cm, p, tt, q, f):
    K, r, _ = cm.kkt(tt, q, f, p)
    z = np.linalg.solve(K, r)
    return z[:cm.n], z[cm.n:cm.n + cm.m1], z[cm.n + cm.m1:]


@pytest.mark.parametrize("case", ["chain", "four-bar relative", "sleigh", "four-bar absolute"])
def test_solve_matches_reference_kkt(case):
    model = {"chain": lambda: _chain(4),
             "four-bar relative": lambda: four_bar_net().model(formulation="relative"),
             "four-bar absolute": lambda: four_bar_net().model(),
             "sleigh": chaplygin_sleigh}[case]()
    cm = compile_model(model)
    p = cm.parameter_vector()
    fast = FastKKT(cm, p, solve_kkt)
    # diagonal M: the banded Schur path; a full M (relative four-bar; the sleigh's centre of mass ahead of
    # its contact point, with a flow constraint): the KKT matrix from the one compiled function
    assert fast.structured == (case in ("chain", "four-bar absolute"))
    rng = np.random.default_rng(3)
    for _ in range(5):
        q, f = rng.uniform(-1, 1, cm.n), rng.uniform(-1, 1, cm.n)
        for got, ref in zip(fast.solve(0.2, q, f), _reference(cm, p, 0.2, q, f)):
            assert np.max(np.abs(got - ref), initial=0) <= 1e-9 * (1 + np.max(np.abs(ref), initial=0))
        c, ref = fast.constraint_values(fast.values(0.2, q, f)), cm.constraints(0.2, q, f, p)
        assert np.allclose(c.jacobian, ref.jacobian, rtol=0, atol=1e-12)
        assert np.allclose(c.velocity_terms, ref.velocity_terms, rtol=0, atol=1e-12)


def test_gram_band_factorisation_matches_dense():
    rng = np.random.default_rng(1)
    C = rng.standard_normal((7, 12)) * (rng.random((7, 12)) < 0.3) + np.eye(7, 12)
    rows, cols = np.nonzero(C)
    g = Gram(rows, cols, 7, 12)
    w = rng.uniform(0.5, 2, 12)
    assert g.factor(C[rows, cols], w)
    S = C @ np.diag(w) @ C.T
    b = rng.standard_normal(7)
    assert np.allclose(g.solve(b), np.linalg.solve(S, b), rtol=1e-12, atol=1e-12)
    assert np.allclose(g.last_matvec(b), S @ b, rtol=1e-12, atol=1e-12)
    assert not g.factor(np.zeros(rows.size), w)  # a lost rank is reported, not solved


def test_fused_function_renames_arguments_named_like_temporaries():
    x0, x1 = sp.symbols("x0 x1")  # symengine's cse temporaries are named x0, x1, ...
    fn = fused_function([x0, x1], [sp.sin(x0) * x1 + sp.sin(x0) ** 2, x0 * x1])
    a, b = 0.7, -1.3
    assert np.allclose(fn(np.array([a, b])), [np.sin(a) * b + np.sin(a) ** 2, a * b], rtol=0, atol=1e-14)


@pytest.mark.parametrize("n", [3, 12])
def test_projection_fast_path_matches_reference_path(n):
    cm = compile_model(_chain(n))
    p = cm.parameter_vector()
    q, f = netdyn.numerics.dae.initial.consistent_initial_conditions(
        cm, 0.0, {"theta_link1": -0.7}, None, p, guess={f"x_link{n}": 1.0})
    te = np.linspace(0, 0.5, 6)
    fast = Projection(cm, p).integrate(0.0, 0.5, q, f, te, 1e-10, 1e-12)
    ref = Projection(cm, p, fast=False).integrate(0.0, 0.5, q, f, te, 1e-10, 1e-12)
    assert Projection(cm, p).fast is not None and Projection(cm, p, fast=False).fast is None
    for a, b in ((fast.q, ref.q), (fast.f, ref.f), (fast.acc, ref.acc), (fast.lam, ref.lam)):
        assert np.max(np.abs(a - b)) <= 1e-9 * (1 + np.max(np.abs(b)))


def test_cheap_singularity_estimate_tracks_the_svd_ratio():
    model = four_bar_net(dict(netdyn.linkages.BOOK, l1=0.6, l3=0.6, l2=1.0, l4=1.0)).model()
    cm = compile_model(model)
    p = cm.parameter_vector()
    watch = SingularityWatch(cm, p, fast=FastKKT(cm, p, solve_kkt))
    for crank in (1.2, 0.4, 0.05, 0.002):  # a parallelogram approaching its flat change point
        q, _ = netdyn.numerics.dae.initial.consistent_initial_conditions(
            cm, 0.0, {"theta_crank": crank}, None, p, guess={"theta_rod": 0.0, "theta_rocker": crank})
        for _ in range(4):  # warm starts, as along a trajectory
            est = watch.estimate(0.0, q)
        exact = watch.ratio(0.0, q)
        assert exact <= est * (1 + 1e-9)          # Rayleigh quotients: never below the exact ratio
        assert est <= 1.05 * exact                 # and close to it
    assert exact < 1e-2


def test_watch_switch_and_cost():
    p = dict(netdyn.linkages.BOOK, l1=0.6, l3=0.6, l2=1.0, l4=1.0)
    net = four_bar_net(p, tau=False, gravity=True)
    guess = {"theta_rod": 0.0, "theta_rocker": 1.2}
    with pytest.raises(netdyn.SingularSystemError, match="singular configuration"):
        netdyn.simulate(net, (0, 2), q0={"theta_crank": 1.2}, guess=guess)
    # an open chain never loses rank: the expensive test never runs, and switching the watch off changes nothing
    cm = compile_model(_chain(5))
    pv = cm.parameter_vector()
    q, f = netdyn.numerics.dae.initial.consistent_initial_conditions(cm, 0.0, {"theta_link1": -0.7}, None, pv,
                                                                  guess={"x_link5": 1.0})
    watched = Projection(cm, pv)
    calls = []
    original = SingularityWatch.step

    def spy(self, *args):
        calls.append(self)
        return original(self, *args)
    SingularityWatch.step = spy
    try:
        a = watched.integrate(0.0, 2.0, q, f, np.linspace(0, 2, 5), 1e-8, 1e-10)
    finally:
        SingularityWatch.step = original
    assert calls and calls[0].checks == 0
    b = Projection(cm, pv, watch_singularities=False).integrate(0.0, 2.0, q, f, np.linspace(0, 2, 5), 1e-8, 1e-10)
    assert np.array_equal(a.q, b.q)
    sol = netdyn.simulate(_chain(2), (0, 0.2), q0={"theta_link1": -0.5}, guess={"x_link2": 1.0},
                          watch_singularities=False)
    assert sol.method == "projection"


def test_hermite_interpolant_is_exact_for_quintics():
    c = np.array([0.3, -1.0, 0.5, 2.0, -0.7, 0.25])
    q = lambda tt: np.polyval(c[::-1], tt)
    dq = lambda tt: np.polyval(np.polyder(c[::-1]), tt)
    ddq = lambda tt: np.polyval(np.polyder(c[::-1], 2), tt)
    a, b = 0.4, 1.3
    path = hermite(a, (np.array([q(a)]), np.array([dq(a)]), np.array([ddq(a)])),
                   b, (np.array([q(b)]), np.array([dq(b)]), np.array([ddq(b)])))
    for tt in np.linspace(a, b, 7):
        assert abs(path(tt)[0] - q(tt)) < 1e-12
