"""Unilateral contacts and impacts (issue 27, item 3): the planar ``Contact`` element through
``netdyn.simulate`` with no extra call, checked against closed forms (bouncing ball: impact times, apex heights,
the Zeno time, the resting force; a block lifted off by a ramp force), momentum and energy (Newton's cradle with
e = 1, both binary impacts and the simultaneous-impact LCP), an independent reference (a pendulum hitting an
end stop against solve_ivp with the impact law in joint space) and the energy balance with the booked losses."""
import numpy as np
import pytest
from scipy.integrate import solve_ivp

import netdyn
from netdyn import Event
from netdyn.components.contact import Contact
from netdyn.components.planar import Force, Gravity, Prismatic, Revolute, RigidBody
from netdyn.errors import ElementError
from netdyn.numerics.nonsmooth import solve_lcp

G = 9.81


def ball(e, m=2.0, g=G):
    net = netdyn.Network("ball")
    net.add(RigidBody("ball", mass=m, inertia=0.01), Gravity(g=g),
            Contact("floor", "ground", (0, 0), "ball", (0, 0), normal=(0, 1), e=e))
    return net


def contact_force(sol, name):
    """The normal force of a closed contact over the last piece of a run (N = −λ of its row)."""
    last = sol.pieces[-1]
    row = last.model.constraint_labels.index(f"{name}[gap]")
    return -last.lam[row]


def test_bouncing_ball_impacts_apexes_zeno_time_and_rest():
    """Dropped from h0 with e = 0.8: impacts at t_k = t1 + Σ 2 v1 e^j / g, apexes h_k = e^{2k} h0, rest at the
    Zeno time t∞ = t1 + 2 v1 e / (g (1 − e)) (within the Zeno cut's bound, 6e-7 s here), then the floor carries
    m g; the energy balance closes with each impact's booked loss."""
    e, h0, m = 0.8, 1.0, 2.0
    sol = netdyn.simulate(ball(e, m), (0, 5), q0={"y_ball": h0}, rtol=1e-10)
    impacts = [ev for ev in sol.events if ev.impacts]
    assert len(impacts) == len(sol.events)
    t1, v1 = np.sqrt(2 * h0 / G), np.sqrt(2 * G * h0)
    k = np.arange(len(impacts))
    exact = t1 + np.r_[0, np.cumsum(2 * v1 * e ** k[1:] / G)]
    got = np.array([ev.t for ev in impacts])
    assert np.max(np.abs(got[:20] - exact[:20])) < 1e-10
    assert np.max(np.abs(got - exact)) < 1e-9
    first = impacts[0].impacts[0]
    assert first.contact == "floor" and not first.persistent
    assert first.velocity_before == pytest.approx(-v1, rel=1e-9)
    assert first.velocity_after == pytest.approx(e * v1, rel=1e-9)
    assert impacts[0].energy_lost == pytest.approx(0.5 * m * v1 ** 2 * (1 - e ** 2), rel=1e-9)
    t_inf = t1 + 2 * v1 * e / (G * (1 - e))
    rest = impacts[-1]
    assert rest.impacts[0].persistent and rest.impacts[0].velocity_after == 0.0
    assert abs(rest.t - t_inf) < 6e-7
    after = sol.t > rest.t
    assert np.max(np.abs(sol["y_ball"][after])) < 1e-12 and np.max(np.abs(sol["y_ball_dot"][after])) < 1e-12
    assert np.allclose(contact_force(sol, "floor"), m * G, rtol=1e-10)
    balance = sol.power_balance()
    assert balance["relative"] < 1e-10
    assert sol.energy_lost == pytest.approx(m * G * h0, rel=1e-9)  # all of it, once at rest


def test_apex_heights():
    """A user's event beside the contact's: the apexes after each bounce at h_k = e^{2k} h0."""
    e, h0 = 0.8, 1.0
    sol = netdyn.simulate(ball(e), (0, 2.5), q0={"y_ball": h0}, rtol=1e-10,
                          events=[Event("y_ball_dot", name="apex", direction=-1)])
    apexes = [ev for ev in sol.events if ev.name == "apex" and ev.t > 0.1]
    heights = np.array([ev.before["y_ball"] for ev in apexes])
    assert len(heights) == 4
    assert np.max(np.abs(heights - h0 * e ** (2 * np.arange(1, 5)))) < 1e-9
    assert [ev.name for ev in sol.events if ev.t > 0.1][:2] == ["floor impact", "apex"]


@pytest.mark.parametrize("method", ["projection", "ida"])
def test_bounces_on_each_path(method):
    """The first three bounces (e = 0.5) on each path: times in closed form to 1e-9."""
    e, h0 = 0.5, 0.5
    sol = netdyn.simulate(ball(e), (0, 0.85), q0={"y_ball": h0}, rtol=1e-10, method=method)  # 3 bounces
    assert sol.method == method
    t1, v1 = np.sqrt(2 * h0 / G), np.sqrt(2 * G * h0)
    exact = t1 + np.r_[0, np.cumsum(2 * v1 * e ** np.arange(1, 3) / G)]
    got = np.array([ev.t for ev in sol.events])
    assert np.max(np.abs(got - exact)) < 1e-9
    assert sol.power_balance()["relative"] < 1e-8


def test_plastic_impact_rests_at_once():
    """e = 0: the first impact ends in persistent contact; the kinetic energy is lost."""
    sol = netdyn.simulate(ball(0.0), (0, 1.0), q0={"y_ball": 0.5, "x_ball": 0.0}, f0={"x_ball": 1.0})
    (ev,) = sol.events
    (imp,) = ev.impacts
    assert imp.persistent and imp.velocity_after == 0.0
    assert ev.energy_lost == pytest.approx(0.5 * 2.0 * 2 * G * 0.5, rel=1e-7)
    assert sol["x_ball_dot"][-1] == pytest.approx(1.0, rel=1e-9)  # no friction: it slides on


def cradle(n, gap, e=1.0, r=0.05, m=0.2):
    net = netdyn.Network("cradle")
    q0 = {}
    for i in range(n):
        net.add(RigidBody(f"b{i}", mass=m, inertia=0.4 * m * r * r),
                Prismatic(f"P{i}", "ground", (0, 0), f"b{i}", (0, 0), axis=(1, 0)))
        q0[f"x_b{i}"] = i * (2 * r + gap)
    for i in range(n - 1):
        net.add(Contact(f"c{i}", f"b{i}", (0, 0), f"b{i + 1}", (0, 0), normal=None, clearance=2 * r, e=e))
    return net, q0


@pytest.mark.parametrize("n", [3, 5])
def test_newtons_cradle_binary_impacts(n):
    """Balls a small gap apart on a rail, e = 1: a chain of binary impacts, the k-th at k·gap/v; the last ball
    leaves with the first one's velocity and the others stop; momentum and energy conserved."""
    v, gap, m = 1.0, 0.01, 0.2
    net, q0 = cradle(n, gap, m=m)
    sol = netdyn.simulate(net, (0, 0.5), q0=q0, f0={"x_b0": v}, rtol=1e-10)
    times = np.array([ev.t for ev in sol.events])
    assert [ev.impacts[0].contact for ev in sol.events] == [f"c{i}" for i in range(n - 1)]
    assert np.max(np.abs(times - gap * np.arange(1, n) / v)) < 1e-10
    final = np.array([sol[f"x_b{i}_dot"][-1] for i in range(n)])
    assert np.allclose(final, np.r_[np.zeros(n - 1), v], atol=1e-12)
    assert m * final.sum() == pytest.approx(m * v, rel=1e-12)
    assert 0.5 * m * (final ** 2).sum() == pytest.approx(0.5 * m * v ** 2, rel=1e-12)
    assert abs(sol.energy_lost) < 1e-14


def test_touching_cradle_is_the_simultaneous_impact_law():
    """Three touching balls, e = 1: both contacts close at once and Glocker's generalised Newton law (the LCP
    over the closing set) gives (−1/3, 2/3, 2/3)·v — momentum and energy conserved, but not the cradle's
    sequence of binary impacts (that needs gaps: the test above)."""
    net, q0 = cradle(3, 0.0)
    sol = netdyn.simulate(net, (0, 0.5), q0=q0, f0={"x_b0": 1.0}, rtol=1e-10)
    (ev,) = sol.events
    assert {imp.contact for imp in ev.impacts} == {"c0", "c1"}
    final = np.array([sol[f"x_b{i}_dot"][-1] for i in range(3)])
    assert np.allclose(final, [-1 / 3, 2 / 3, 2 / 3], atol=1e-12)
    assert np.sum(final ** 2) == pytest.approx(1.0, rel=1e-12)


def stop_pendulum(e, m=1.5, L=1.0, angle=-np.pi / 4):
    net = netdyn.Network("stop")
    net.add(RigidBody("bar", mass=m, inertia=m * L * L / 12), Gravity(g=G),
            Revolute("A", "ground", (0, 0), "bar", (-L / 2, 0)),
            Contact("stop", "ground", (0, 0), "bar", (L / 2, 0), normal=(-np.sin(angle), np.cos(angle)), e=e))
    return net


def _stop_reference(e, m, L, angle, count):
    """Impact times by solve_ivp on θ'' = −m g (L/2) cos θ / I_pivot with ω → −e ω at θ = angle."""
    Ip = m * L * L / 3

    def hit(tt, y):
        return y[0] - angle
    hit.terminal, hit.direction = True, -1
    tt, y, out = 0.0, [0.0, 0.0], []
    for _ in range(count):
        r = solve_ivp(lambda s, z: [z[1], -m * G * L / 2 * np.cos(z[0]) / Ip], (tt, 10), y, events=hit,
                      method="DOP853", rtol=1e-12, atol=1e-12)
        tt, y = r.t_events[0][0], [angle, -e * r.y_events[0][0][1]]
        out.append(tt)
    return np.array(out)


def test_pendulum_on_an_end_stop():
    """A bar falling from horizontal onto a stop at −45° (e = 0.5): impact times against solve_ivp to 1e-9 (the
    revolute joint's impulse through its Jacobian), the energy balance with the booked losses to 1e-9, rest on
    the stop with the force of the torque balance, N = m g (L/2) cos 45° / L."""
    m, L, e, angle = 1.5, 1.0, 0.5, -np.pi / 4
    sol = netdyn.simulate(stop_pendulum(e, m, L, angle), (0, 1.5), q0={"theta_bar": 0.0, "x_bar": L / 2, "y_bar": 0.0},
                          rtol=1e-10)
    got = np.array([ev.t for ev in sol.events if ev.impacts][:6])
    assert np.max(np.abs(got - _stop_reference(e, m, L, angle, 6))) < 1e-9
    balance = sol.power_balance()
    assert balance["relative"] < 1e-9
    assert sol.energy_lost == pytest.approx(m * G * L / 2 * np.sin(-angle), rel=1e-8)
    assert sol.events[-1].impacts[0].persistent
    assert np.allclose(contact_force(sol, "stop"), m * G * L / 2 * np.cos(angle) / L, rtol=1e-9)


def test_pendulum_stop_on_ida():
    m, L, e, angle = 1.5, 1.0, 0.5, -np.pi / 4
    sol = netdyn.simulate(stop_pendulum(e, m, L, angle), (0, 0.8), q0={"theta_bar": 0.0, "x_bar": L / 2, "y_bar": 0.0},
                          rtol=1e-10, method="ida")
    got = np.array([ev.t for ev in sol.events if ev.impacts])
    assert sol.method == "ida" and got.size == 2
    assert np.max(np.abs(got - _stop_reference(e, m, L, angle, 2))) < 1e-8
    assert sol.power_balance()["relative"] < 1e-8


def test_lift_off_when_the_force_would_pull():
    """A block resting on the floor under an upward force k t: the contact holds until k t = m g (its force
    would pull after), then y = k (t − t_l)³ / (6 m)."""
    m, k = 2.0, 40.0
    net = netdyn.Network("lift")
    net.add(RigidBody("block", mass=m, inertia=0.1), Gravity(g=G), Force("lift", "block", (0, 0), 0, k * netdyn.t),
            Contact("floor", "ground", (0, 0), "block", (0, 0), e=0.5, closed=True))
    sol = netdyn.simulate(net, (0, 1.0), rtol=1e-10)
    (ev,) = sol.events
    t_l = m * G / k
    assert ev.name == "floor lifts off" and abs(ev.t - t_l) < 1e-9
    after = sol.t > t_l
    assert np.allclose(sol["y_block"][after], k * (sol.t[after] - t_l) ** 3 / (6 * m), rtol=1e-7, atol=1e-12)
    assert np.max(np.abs(sol["y_block"][~after])) < 1e-12


def test_lcp_solutions_are_complementary():
    rng = np.random.default_rng(0)
    for _ in range(50):
        m = int(rng.integers(1, 6))
        A = rng.normal(size=(m, m + 1))
        G = A @ A.T
        q = rng.normal(size=m)
        z = solve_lcp(G, q)
        w = G @ z + q
        assert np.all(z >= 0) and np.all(w >= -1e-9) and abs(z @ w) < 1e-9


def test_bad_contacts_are_named():
    with pytest.raises(ElementError, match="floor.*restitution"):
        Contact("floor", "ground", (0, 0), "ball", (0, 0), e=1.5)
    with pytest.raises(ElementError, match="c1.*two different bodies"):
        Contact("c1", "ball", (0, 0), "ball", (1, 0))
    with pytest.raises(ElementError, match="c2.*zero vector"):
        Contact("c2", "ground", (0, 0), "ball", (0, 0), normal=(0, 0))
