"""The mixed-domain examples against hand-derived closed forms and finite differences of the simulation."""
import numpy as np
import pytest
import scipy.linalg as sla
import sympy as sp
from scipy.optimize import brentq

import netdyn

from systems import load_example


def same_poles(a, b, rtol=1e-8):
    a, b = np.sort_complex(np.asarray(a)), np.sort_complex(np.asarray(b))
    return np.allclose(a, b, rtol=rtol, atol=1e-9 * np.max(np.abs(b)))


def test_loudspeaker_poles_match_the_characteristic_polynomial():
    ls = load_example("loudspeaker")
    p = ls.PARAMS
    lin = netdyn.linearize(ls.build(**p), inputs=["V1"], outputs=["x_cone"], u={"V1": 0})
    # (Le s + Re)(M s² + R s + K) + Bl² s = 0
    poly = np.polyadd(np.polymul([p["Le"], p["Re"]], [p["Mms"], p["Rms"], p["Kms"]]), [p["Bl"]**2, 0])
    assert same_poles(lin.poles(), np.roots(poly))
    # static displacement per volt: Bl / (Re Kms)
    assert lin.static_gain()[0, 0] == pytest.approx(p["Bl"] / (p["Re"] * p["Kms"]), rel=1e-9)


def test_capacitor_microphone_rest_point_and_linear_model():
    mic = load_example("capacitor_microphone")
    p = mic.PARAMS
    eA = mic.EPS0 * p["area"]
    op = netdyn.equilibrium(mic.build(**p), inputs=["F"], guess={"x_d": 1e-7, "q_mic_0": 1e-10})
    # closed form: k x = q²/(2 eA) with q = eA V0 / (d - x)
    x0 = brentq(lambda x: p["k"] * x - eA * p["V0"]**2 / (2 * (p["gap"] - x)**2), 0, p["gap"] / 3)
    q0 = eA * p["V0"] / (p["gap"] - x0)
    assert op.as_dict()["x_d"] == pytest.approx(x0, rel=1e-9)
    assert op.as_dict()["q_mic_0"] == pytest.approx(q0, rel=1e-9)
    lin = netdyn.linearize(op, inputs=["F"], outputs=["v(R)"])
    # by hand: m x'' + c x' + k x = F + q0 dq / eA;  R dq' + (d - x0) dq / eA - q0 dx / eA = 0
    A = np.array([[0, 1, 0], [-p["k"] / p["m"], -p["c"] / p["m"], q0 / (eA * p["m"])],
                  [q0 / (eA * p["R"]), 0, -(p["gap"] - x0) / (eA * p["R"])]])
    assert same_poles(lin.poles(), np.linalg.eigvals(A), rtol=1e-7)
    assert lin.static_gain()[0, 0] == pytest.approx(0.0, abs=1e-9)  # the capacitor blocks DC


def test_magnetic_levitation_equilibrium_and_unstable_pole():
    ml = load_example("magnetic_levitation")
    p = ml.PARAMS
    s, i0 = ml.equilibrium_gap(**p)
    op = netdyn.equilibrium(ml.build(**p), inputs=["V1"], guess={"x_ball": -0.8 * s}, steady=["q_magnet_0"])
    assert -op.as_dict()["x_ball"] == pytest.approx(s, rel=1e-9)
    assert op.as_dict()["q_magnet_0_dot"] == pytest.approx(i0, rel=1e-9)
    lin = netdyn.linearize(op, inputs=["V1"], outputs=["x_ball"])
    x0, a, L0, L1 = -s, p["a"], p["L0"], p["L1"]
    L, dL, d2L = L1 + L0 * a / (a - x0), L0 * a / (a - x0)**2, 2 * L0 * a / (a - x0)**3
    A = np.array([[0, 1, 0], [i0**2 * d2L / (2 * p["m"]), 0, i0 * dL / p["m"]], [0, -dL * i0 / L, -p["R"] / L]])
    assert same_poles(lin.poles(), np.linalg.eigvals(A))
    assert np.max(lin.poles().real) > 0
    with pytest.raises(netdyn.OperatingPointError, match="not an equilibrium"):
        netdyn.linearize(ml.build(**p), {"x_ball": -2 * s}, f_op={"q_magnet_0": i0}, inputs=["V1"])


def test_motor_slider_crank_power_balance_and_linearization():
    msc = load_example("motor_slider_crank")
    net = msc.build(6.0)
    sol = netdyn.simulate(net, (0, 0.5), q0={"theta_crank": 0.3}, guess=msc.GUESS)
    assert sol.constraint_residual()["position"] < 1e-9
    assert sol.power_balance()["relative"] < 1e-6
    # electrical input = copper and friction losses + magnetic and kinetic storage, computed by hand
    R, L, B = msc.MOTOR["R"], msc.MOTOR["L"], msc.MOTOR["B"]
    i, w = sol.current("M"), sol["theta_crank_dot"]
    from netdyn.numerics.results.bookkeeping import cumulative
    w_in = cumulative(6.0 * i, sol.t)[-1]
    losses = cumulative(R * i**2 + B * w**2, sol.t)[-1]
    assert w_in == pytest.approx(losses + (sol.energy()[-1] - sol.energy()[0]), rel=1e-6)
    rep = sol.energy_report()
    assert rep.kinds["(rest)"] == "mechanism" and rep.stored["(rest)"][-1] > 0 and rep.relative < 1e-6
    assert rep.delivered["V1"] == pytest.approx(w_in, rel=1e-9)
    # linearization at rest (any crank angle is an equilibrium at zero voltage) vs finite differences
    lin = netdyn.linearize(net, {"theta_crank": 0.7}, inputs=["V1"], outputs=["theta_crank", "x_block"],
                           u={"V1": 0}, guess=msc.GUESS)
    q_op = dict(zip(lin.model.coordinate_names, lin.operating_point.q))
    T_end, eps = 0.3, 1e-3
    ys = []
    for sgn in (1, -1):
        s2 = netdyn.simulate(msc.build(sgn * eps), (0, T_end), q0={"theta_crank": 0.7}, guess=q_op,
                             t_eval=[0, T_end], rtol=1e-11)
        ys.append(np.array([s2["theta_crank"][-1], s2["x_block"][-1]]))
    fd = (ys[0] - ys[1]) / (2 * eps)  # the operating point cancels in the central difference
    lin_y = lin.step(np.linspace(0, T_end, 301))[:, -1]
    assert np.allclose(fd, lin_y, rtol=1e-5, atol=1e-9)


def test_planar_and_hand_typed_motor_slider_crank_agree():
    msc = load_example("motor_slider_crank")
    T_end = 0.4
    sol = netdyn.simulate(msc.build(6.0), (0, T_end), q0={"theta_crank": 0.3}, guess=msc.GUESS, rtol=1e-10)
    ref = netdyn.simulate(msc.build_hand_typed(6.0), (0, T_end), q0={"theta1": 0.3}, guess=msc.HAND_GUESS,
                          rtol=1e-10)
    assert ref.power_balance()["relative"] < 1e-6
    assert np.allclose(sol["theta_crank_dot"], ref["theta1_dot"], rtol=1e-6, atol=1e-6)
    assert np.allclose(sol.current("M"), ref["q_motor_dot"], rtol=1e-6, atol=1e-6)
    assert np.allclose(sol["x_block"], ref["x3"], atol=1e-8)


def test_examples_run_and_save_figures(tmp_path):
    for name in ("loudspeaker", "capacitor_microphone", "magnetic_levitation", "motor_slider_crank"):
        load_example(name).main(tmp_path)
    assert len(list(tmp_path.glob("*.png"))) == 4
