"""Friction that sticks, beside a hand-written peer: ``python -m benchmarks.friction``.

Two cases of tests/test_friction.py, each run three ways in the same process:

* **netdyn, event-driven** — the network (``Friction`` / ``Clutch``) through ``netdyn.simulate``: every
  stick/slip transition an event of :mod:`netdyn.numerics.events`, the switching laws of
  :mod:`netdyn.numerics.nonsmooth.friction`;
* **netdyn, regularised** — the same network with ``regularization=ε`` on ``method="ida"`` (the clutch only:
  the smooth law has no static peak, so it has no stick–slip cycle on the belt);
* **scipy, hand-written** — the equations typed by hand for each state and ``solve_ivp`` (DOP853, rtol 1e-10,
  atol 1e-12) with its events, the state switched in a Python loop: what a user writes without netdyn.

The belt: m = 1, k = 10, μs = 0.4, μk = 0.3, belt at 0.2 m/s, 10 s (8 switchings); error = the largest
relative error of the limit cycle's period against its closed form. The clutch: J1 = 0.8 at 50 rad/s, J2 =
2.4 at rest, 20 N m, 3 s; error = the relative error of the lock time (event-driven) or of the final speed
(regularised). CPU seconds (``time.process_time``) after a warm-up run of each; ratio = netdyn / scipy.
"""
from __future__ import annotations

import sys
import time
import warnings
from pathlib import Path

import numpy as np
from scipy.integrate import solve_ivp

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

G = 9.81
M, K, MU_S, MU_K, VB, T_BELT = 1.0, 10.0, 0.4, 0.3, 0.2, 10.0
J1, J2, W0, TC, T_CLUTCH = 0.8, 2.4, 50.0, 20.0, 3.0


def belt_period():
    fs, fk, w = MU_S * M * G, MU_K * M * G, np.sqrt(K / M)
    xs, xk = fs / K, fk / K
    phi = np.arctan2(w * (xs - xk), VB)
    return (2 * np.pi - 2 * phi) / w + 2 * (xs - xk) / VB


def netdyn_belt():
    import netdyn
    from netdyn.components.translational import Friction, Mass, Spring, VelocitySource
    net = netdyn.Network("block on a belt")
    net.add(Mass("m", "x", m=M), Spring("k", "x", "0", k=K),
            Friction("F1", "x", "belt", mu_k=MU_K, mu_s=MU_S, normal=M * G), VelocitySource("vb", "belt", VB))
    sol = netdyn.simulate(net, (0, T_BELT), t_eval=np.linspace(0, T_BELT, 2001), rtol=1e-10)
    return [e.t for e in sol.events if e.name == "F1 slips -"], len(sol.events)


def scipy_belt():
    """The belt by hand: state (x, v); sliding m v' = -k x + F_k (v < vb), sticking v = vb while |k x| <= F_s."""
    fs, fk = MU_S * M * G, MU_K * M * G
    t, y, stuck, slips, n = 0.0, np.array([0.0, 0.0]), False, [], 0
    while t < T_BELT:
        if stuck:  # x = x0 + vb (t - t0) until k x = F_s
            t_slip = t + (fs / K - y[0]) / VB
            if t_slip >= T_BELT:
                break
            t, y, stuck = t_slip, np.array([fs / K, VB]), False
            slips.append(t)
            n += 1
            continue

        def catch(tt, yy):
            return yy[1] - VB
        catch.terminal, catch.direction = True, 1
        out = solve_ivp(lambda tt, yy: [yy[1], (-K * yy[0] + fk) / M], (t, T_BELT), y, method="DOP853",
                        rtol=1e-10, atol=1e-12, events=catch, first_step=1e-6 if t > 0 else None)
        if out.status != 1:
            break
        t, y = float(out.t_events[0][0]), np.array([out.y_events[0][0][0], VB])
        stuck = abs(K * y[0]) <= fs
        n += 1
    return slips, n


def netdyn_clutch(regularization=None):
    import netdyn
    from netdyn.components.rotational import Clutch, Inertia
    net = netdyn.Network("clutch")
    net.add(Inertia("J1", "a", J=J1), Inertia("J2", "b", J=J2),
            Clutch("C", "a", "b", torque=TC, regularization=regularization))
    return netdyn.simulate(net, (0, T_CLUTCH), f0={"theta_a": W0}, t_eval=np.linspace(0, T_CLUTCH, 301),
                           method="auto" if regularization is None else "ida")


def scipy_clutch():
    def match(tt, yy):
        return yy[0] - yy[1]
    match.terminal = True
    out = solve_ivp(lambda tt, yy: [-TC / J1, TC / J2], (0, T_CLUTCH), [W0, 0.0], method="DOP853", rtol=1e-10,
                    atol=1e-12, events=match)
    t_lock = float(out.t_events[0][0])
    w = (J1 * out.y_events[0][0][0] + J2 * out.y_events[0][0][1]) / (J1 + J2)
    return t_lock, w


def cpu(fn, *args):
    fn(*args)  # warm-up
    start = time.process_time()
    out = fn(*args)
    return time.process_time() - start, out


def main(argv=None):
    warnings.simplefilter("ignore")
    period = belt_period()
    t_lock = J1 * J2 * W0 / ((J1 + J2) * TC)
    w_lock = J1 * W0 / (J1 + J2)
    print("| case | switchings | netdyn event-driven CPU (error) | netdyn regularised CPU (error) | "
          "scipy by hand CPU (error) | ratio netdyn / scipy |")
    print("|---|---|---|---|---|---|")
    c_nd, (slips, n) = cpu(netdyn_belt)
    c_sp, (slips_sp, n_sp) = cpu(scipy_belt)
    err_nd = float(np.max(np.abs(np.diff(slips) / period - 1)))
    err_sp = float(np.max(np.abs(np.diff(slips_sp) / period - 1)))
    print(f"| block on a belt, {T_BELT:g} s | {n} ({n_sp}) | {c_nd:.2f} ({err_nd:.1e}) | — "
          f"| {c_sp:.3f} ({err_sp:.1e}) | {c_nd / c_sp:.0f} |", flush=True)
    c_nd, sol = cpu(netdyn_clutch)
    c_rg, reg = cpu(netdyn_clutch, 1e-3)
    c_sp, (t_sp, w_sp) = cpu(scipy_clutch)
    print(f"| clutch, {T_CLUTCH:g} s | {len(sol.events)} | {c_nd:.2f} ({abs(sol.events[0].t / t_lock - 1):.1e}) | "
          f"{c_rg:.2f}, ε = 1e-3 ({abs(float(reg['theta_b_dot'][-1]) / w_lock - 1):.1e}) | "
          f"{c_sp:.4f} ({abs(t_sp / t_lock - 1):.1e}) | {c_nd / c_sp:.0f} |", flush=True)


if __name__ == "__main__":
    main()
