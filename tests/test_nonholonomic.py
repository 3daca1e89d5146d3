"""Nonholonomic vehicles (flow constraints, multipliers μ) against closed forms, and the integrability test."""
import numpy as np
import pytest
import sympy as sp

import netdyn
from netdyn import coordinates, t
from netdyn.components.nonholonomic import KnifeEdge, RollingDisk
from netdyn.models import chaplygin_sleigh, rolling_disk

from test_book_examples import rlc_network_by_hand


def test_chaplygin_sleigh_settles_to_straight_motion_along_its_axis():
    m, I, a = 1.0, 0.1, 0.5
    v0, w0 = 0.2, 1.0
    sol = netdyn.simulate(chaplygin_sleigh(m, I, a), (0, 20), f0={"x": v0, "theta": w0})
    res = sol.constraint_residual()
    assert res["flow"] < 1e-9
    E = sol.energy()
    assert np.ptp(E) < 1e-8 * E[0]
    th = sol["theta"]
    v = np.cos(th) * sol["x_dot"] + np.sin(th) * sol["y_dot"]  # speed along the blade
    J = I + m * a * a
    v_inf = np.sqrt(2 * E[0] / m)
    # closed form of m v' = m a w², J w' = -m a v w with energy conserved: v = v_inf tanh(a m v_inf t / J + c)
    assert np.max(np.abs(v - v_inf * np.tanh(a * m * v_inf * sol.t / J + np.arctanh(v0 / v_inf)))) < 1e-7
    assert abs(sol["theta_dot"][-1]) < 1e-6 * w0  # angular velocity -> 0
    # the heading freezes: the last stretch is a straight line along the body axis
    assert abs(th[-1] - th[-100]) < 1e-6 * abs(th[-1] - th[0])
    heading = np.arctan2(np.diff(sol["y"][-100:]), np.diff(sol["x"][-100:]))
    assert np.allclose(heading, th[-1], atol=1e-6)
    # the multiplier is the lateral blade force, which must vanish as the rotation stops
    assert abs(sol["mu_1"][-1]) < 1e-6 * np.max(np.abs(sol["mu_1"]))


def test_rolling_disk_runs_on_a_circle_at_constant_rates():
    R, spin, turn = 0.3, 3.0, 0.7
    sol = netdyn.simulate(rolling_disk(1.0, R), (0, 5), f0={"phi": spin, "theta": turn}, rtol=1e-11)
    assert sol.constraint_residual()["flow"] < 1e-9
    E = sol.energy()
    assert np.ptp(E) < 1e-9 * E[0]
    assert np.allclose(sol["theta_dot"], turn, rtol=1e-9) and np.allclose(sol["phi_dot"], spin, rtol=1e-9)
    rho = R * spin / turn  # closed form: circle of radius R φ'/θ' centred at (0, rho)
    assert np.allclose(np.hypot(sol["x"], sol["y"] - rho), rho, rtol=1e-8)


def test_knife_edge_at_an_offset_point():
    # the blade at body point (1, 0) of a body pinned... direct check of the velocity of that point
    x, y, th = coordinates("x y theta")
    psi, = KnifeEdge(x, y, th, point=(1, 0), angle=sp.pi / 2).flow_constraints
    # blade along the body y axis: the point (1, 0) may not move along the body x axis
    val = psi.subs({x.diff(t): 2, y.diff(t): 0, th.diff(t): 5}).subs(th, 0)
    assert val == -2


def test_integrability():
    x, y, z, th, ph = coordinates("x y z theta phi")
    D = lambda q: q.diff(t)  # noqa: E731
    # Kirchhoff's current law of the book's Example 4.4: integrable (exact)
    model, q, *_ = rlc_network_by_hand()
    r = netdyn.is_integrable(model, q)
    assert r.integrable is True and "Frobenius" in r.test
    single = netdyn.is_integrable(model.flow_constraints[1], q)
    assert single.exact and sp.simplify(single.potential - (q[1] + q[2] - q[3])) == 0
    # an integrating factor: e^x d(xyz) is not exact but integrable
    w = sp.exp(x) * (y * z * D(x) + x * z * D(y) + x * y * D(z))
    r = netdyn.is_integrable(w, [x, y, z])
    assert r.integrable is True and not r.exact
    # knife edge and rolling disk: nonholonomic
    r = netdyn.is_integrable(KnifeEdge(x, y, th).flow_constraints, [x, y, th])
    assert r.integrable is False and "ω ∧ dω" in r.test
    r = netdyn.is_integrable(RollingDisk(x, y, th, ph, 0.3).flow_constraints, [x, y, th, ph])
    assert r.integrable is False and "Lie bracket" in r.detail
    # a disk rolling on a line (theta fixed): integrable
    r = netdyn.is_integrable([D(x) - 0.3 * D(ph), D(y)], [x, y, ph])
    assert r.integrable is True
    # a time-dependent constraint is a form in (q, t): x' - t = 0 integrates to x - t²/2
    r = netdyn.is_integrable(D(x) - t, [x])
    assert r.exact and sp.simplify(r.potential - (x - t**2 / 2)) == 0
    with pytest.raises(netdyn.ModelError, match="not linear in the flows"):
        netdyn.is_integrable(D(x)**2, [x])


def test_sleigh_linearized_about_straight_motion():
    m, I, a, v0 = 1.0, 0.1, 0.5, 0.8
    sleigh = chaplygin_sleigh(m, I, a)
    lin = netdyn.linearize(sleigh, {"x": 0, "y": 0, "theta": 0}, f_op={"x": v0}, outputs=["y", "theta"])
    # x is ignorable (dropped); ẏ = v0 θ; J ω' = -m a v0 ω: the one non-zero pole, stable forwards only
    assert lin.states == ["y", "theta", "x_dot", "theta_dot"]
    assert np.allclose(np.sort(lin.poles().real), [-m * a * v0 / (I + m * a * a), 0, 0, 0], atol=1e-12)
    back = netdyn.linearize(sleigh, {"x": 0, "y": 0, "theta": 0}, f_op={"x": -v0}, outputs=["y"])
    assert np.max(back.poles().real) == pytest.approx(m * a * v0 / (I + m * a * a))
    # against central differences of the nonlinear simulation: a small initial turning rate
    T, eps = 1.5, 1e-5
    ys = [netdyn.simulate(sleigh, (0, T), f0={"x": v0, "theta": s * eps}, t_eval=[0, T], rtol=1e-11)
          for s in (1, -1)]
    fd = np.array([(ys[0][k][-1] - ys[1][k][-1]) / (2 * eps) for k in ("y", "theta")])
    x0 = lin.state(np.zeros(3), np.array([0.0, 0.0, 1.0]))
    import scipy.linalg as sla
    assert np.allclose(fd, lin.C @ sla.expm(lin.A * T) @ x0, rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("formulation", ["absolute", "relative"])
def test_sleigh_from_a_rigid_body_and_a_blade_matches_the_model_builder(formulation):
    from netdyn.components.nonholonomic import Blade
    from netdyn.components.planar import RigidBody
    m, I, a, v0, w0 = 1.0, 0.1, 0.5, 0.2, 1.0
    net = netdyn.Network("sleigh")
    net.add(RigidBody("body", mass=m, inertia=I), Blade("blade", "body", point=(-a, 0)))
    model = net.model(formulation=formulation)
    assert model.coordinate_names == ["x_body", "y_body", "theta_body"] and model.flow_constraint_labels == ["blade"]
    # contact point at the origin moving at v0 along x, turning at w0: the centre of mass is a ahead
    sol = netdyn.simulate(net, (0, 8), q0={"x_body": a, "y_body": 0, "theta_body": 0},
                          f0={"x_body": v0, "y_body": a * w0, "theta_body": w0}, formulation=formulation)
    ref = netdyn.simulate(chaplygin_sleigh(m, I, a), (0, 8), f0={"x": v0, "theta": w0})
    assert sol.constraint_residual()["flow"] < 1e-9
    assert np.allclose(sol["theta_body"], ref["theta"], atol=1e-7)
    assert np.allclose(sol["x_body"], ref["x"] + a * np.cos(ref["theta"]), atol=1e-7)
    assert np.allclose(sol["mu_1"], ref["mu_1"], atol=1e-7)  # the same lateral blade force
