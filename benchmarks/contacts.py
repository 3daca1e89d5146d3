"""Contacts and impacts beside a hand-written event loop: ``python -m benchmarks.contacts [method ...]``
(default ``projection``; ``ida`` is the slow one).

Cases (each netdyn run from the network, CPU seconds after a warm-up on a small case):

* the bouncing ball (e = 0.8, dropped from 1 m, 5 s, rtol 1e-10) to rest: netdyn's contact element through
  ``simulate``; the peer is the loop a user writes by hand — ``scipy.integrate.solve_ivp`` (DOP853, the same
  rtol, atol 1e-12) from bounce to bounce with a terminal event on the height and Newton's law on the
  velocity, stopped at the same Zeno cut. Errors: the largest impact-time error against the closed form and
  the rest time against t∞ = t1 + 2 v1 e / (g (1 − e));
* Newton's cradle (5 balls 1 cm apart on a rail, e = 1, 0.5 s): binary impacts; error in the final velocities;
* a bar falling onto an end stop at −45° (e = 0.5, 1.5 s) until it rests: the energy balance's residual with
  the booked losses.
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import netdyn  # noqa: E402
from netdyn.components.contact import Contact  # noqa: E402
from netdyn.components.planar import Gravity, RigidBody  # noqa: E402
from tests.test_contacts import cradle, stop_pendulum  # noqa: E402  (the tests' networks, timed)

G, E, H0 = 9.81, 0.8, 1.0


def ball():
    net = netdyn.Network("ball")
    net.add(RigidBody("ball", mass=2.0, inertia=0.01), Gravity(g=G),
            Contact("floor", "ground", (0, 0), "ball", (0, 0), normal=(0, 1), e=E))
    return net


def peer_ball(t1=5.0, rtol=1e-10):
    """solve_ivp from bounce to bounce; the same Zeno cut as netdyn's (a bounce below the roundoff height)."""
    from scipy.integrate import solve_ivp

    def ground(tt, y):
        return y[0]
    ground.terminal, ground.direction = True, -1
    h_min = 64 * np.finfo(float).eps
    tt, y, times = 0.0, [H0, 0.0], []
    while tt < t1:
        r = solve_ivp(lambda s, z: [z[1], -G], (tt, t1), y, method="DOP853", rtol=rtol, atol=1e-12, events=ground,
                      t_eval=np.linspace(tt, t1, 50))
        if not r.t_events[0].size:
            break
        tt, v = float(r.t_events[0][0]), float(r.y_events[0][0][1])
        times.append(tt)
        if (E * v) ** 2 / (2 * G) < h_min:
            break  # at rest
        y = [0.0, -E * v]
    return np.array(times)


def closed_form(n):
    t1, v1 = np.sqrt(2 * H0 / G), np.sqrt(2 * G * H0)
    return t1 + np.r_[0, np.cumsum(2 * v1 * E ** np.arange(1, n) / G)], t1 + 2 * v1 * E / (G * (1 - E))


def cpu(fn):
    t0 = time.process_time()
    out = fn()
    return time.process_time() - t0, out


def main(methods):
    netdyn.simulate(ball(), (0, 0.5), q0={"y_ball": 0.5})  # warm-up: imports and compiles
    rows = []
    tp, ref = cpu(peer_ball)
    for method in methods:
        tn, sol = cpu(lambda: netdyn.simulate(ball(), (0, 5), q0={"y_ball": H0}, rtol=1e-10, method=method))
        got = np.array([ev.t for ev in sol.events])
        exact, t_inf = closed_form(got.size)
        rows.append((f"bouncing ball to rest, {got.size} impacts ({method})", tn, tp, ref.size,
                     f"impact times {np.max(np.abs(got - exact)):.1e}; rest − t∞ {got[-1] - t_inf:.1e} s "
                     f"(peer {ref[-1] - t_inf:.1e} s); balance {sol.power_balance()['relative']:.1e}"))
        net, q0 = cradle(5, 0.01)
        tn, sol = cpu(lambda: netdyn.simulate(net, (0, 0.5), q0=q0, f0={"x_b0": 1.0}, rtol=1e-10, method=method))
        v = np.array([sol[f"x_b{i}_dot"][-1] for i in range(5)])
        rows.append((f"Newton's cradle, 5 balls, e = 1 ({method})", tn, None, None,
                     f"final velocities {np.max(np.abs(v - [0, 0, 0, 0, 1])):.1e}; energy lost {sol.energy_lost:.1e} J"))
        tn, sol = cpu(lambda: netdyn.simulate(stop_pendulum(0.5), (0, 1.5), q0={"theta_bar": 0.0, "x_bar": 0.5, "y_bar": 0.0},
                                              rtol=1e-10, method=method))
        rows.append((f"bar onto an end stop to rest, {len(sol.events)} impacts ({method})", tn, None, None,
                     f"energy balance with the booked losses {sol.power_balance()['relative']:.1e}"))
    print("| case | netdyn CPU [s] | peer: solve_ivp loop [s] | ratio | checks |")
    print("|---|---|---|---|---|")
    for name, tn, tp_, npeer, check in rows:
        peer = f"{tp_:.3f} ({npeer} impacts)" if tp_ is not None else ""
        ratio = f"{tn / tp_:.1f}×" if tp_ else ""
        print(f"| {name} | {tn:.3f} | {peer} | {ratio} | {check} |")


if __name__ == "__main__":
    main(sys.argv[1:] or ["projection"])
