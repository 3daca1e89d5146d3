"""Linearization against central finite differences of the nonlinear simulation, and against closed forms."""
import numpy as np
import pytest
import scipy.linalg as sla
import sympy as sp

import netdyn
from netdyn import LagrangianModel, coordinates, t
from netdyn.components.electrical import Capacitor, Inductor, Resistor, VoltageSource

from systems import series_rlc
from test_book_examples import four_bar

T_END = 0.7


def fd_response(model, q_full, direction_q, direction_f=None, params=None, outputs=(), eps=1e-4, guess=None):
    """(y(+eps) - y(-eps)) / (2 eps) at T_END of the nonlinear simulation, y = named coordinates."""
    out = []
    for s in (+1, -1):
        q0 = {k: v + s * eps * direction_q.get(k, 0.0) for k, v in q_full.items() if k in direction_q}
        f0 = {k: s * eps * v for k, v in (direction_f or {}).items()}
        sol = netdyn.simulate(model, (0, T_END), q0=q0, f0=f0, params=params, t_eval=[0, T_END / 2, T_END],
                              guess=guess or q_full, rtol=1e-11)
        out.append(np.array([sol[name][-1] for name in outputs]))
    return (out[0] - out[1]) / (2 * eps), sol


def linear_response(lin, dq, df):
    x0 = lin.state(dq, df)
    return lin.C @ sla.expm(lin.A * T_END) @ x0


def pendulum(m=1.0, l=2.0, g=9.81):
    x, y = coordinates("x y")
    F = sp.Function("F")(t)
    return LagrangianModel([x, y], T=m * (x.diff(t)**2 + y.diff(t)**2) / 2, V=m * g * y, efforts={x: F},
                           constraints=[x**2 + y**2 - l**2], D=0.3 * x.diff(t)**2 / 2)


def test_pendulum_linearization_matches_finite_differences_of_the_simulation():
    model = pendulum()
    lin = netdyn.linearize(model, {"x": 0.0, "y": -2.0}, inputs=["F"], outputs=["x", "y"], u={"F": 0})
    assert lin.n == 2 and lin.states == ["x", "x_dot"]
    wn = lin.natural_frequencies()
    assert wn[0] == pytest.approx(np.sqrt(9.81 / 2.0), rel=1e-10)  # small-oscillation closed form sqrt(g/l)
    # initial-condition response: perturb x (y follows the constraint) and compare both coordinates
    fd, _ = fd_response(model, {"x": 0.0, "y": -2.0}, {"x": 1.0}, params={"F": 0}, outputs=["x", "y"])
    lin_y = linear_response(lin, np.array([1.0, 0.0]), np.zeros(2))
    assert np.allclose(fd, lin_y, atol=1e-6)
    # input response: a small constant force
    eps = 1e-4
    ys = [netdyn.simulate(model, (0, T_END), q0={"x": 0.0}, guess={"y": -2.0}, params={"F": s * eps},
                          t_eval=[0, T_END], rtol=1e-11)["x"][-1] for s in (1, -1)]
    tt = np.linspace(0, T_END, 201)
    assert (ys[0] - ys[1]) / (2 * eps) == pytest.approx(lin.step(tt)[0, -1], rel=1e-6)
    # the descriptor form keeps q, f, q̈ and λ, and has the same finite poles
    assert len(lin.descriptor.variables) == 3 * 2 + 1
    assert np.allclose(lin.descriptor.poles(), lin.poles(), atol=1e-8)


def four_bar_with_spring():
    model, (th1, x2, y2, th2, th3), syms, phi = four_bar()
    m1, m2, m3, I1, I2, I3, l1, l2, l3, l4, tau = syms
    k, c = sp.symbols("k c", positive=True)
    u = sp.Function("u")(t)
    vals = {m1: 1.0, m2: 1.5, m3: 1.0, I1: 0.1, I2: 0.3, I3: 0.2, l1: 1.0, l2: 2.0, l3: 1.5, l4: 2.0, tau: 0.0,
            k: 5.0, c: 0.2}
    return LagrangianModel(model.coordinates, T=model.T_terms, V=k * (th1 - 1.0)**2 / 2, D=c * th1.diff(t)**2 / 2,
                           efforts={th1: tau + u}, constraints=model.constraints, parameters=vals)


def assembled(model, theta1, guess):
    from netdyn.numerics.dae.initial import consistent_initial_conditions
    from netdyn.numerics.functions.compiled import compile_model
    cm = compile_model(model)
    q, _ = consistent_initial_conditions(cm, 0.0, {"theta1": theta1}, {}, cm.parameter_vector({"u": 0}), guess=guess)
    return dict(zip(model.coordinate_names, q))


def test_four_bar_linearization_matches_finite_differences():
    model = four_bar_with_spring()
    q_op = assembled(model, 1.0, {"theta2": 0.3, "theta3": 1.5, "x2": 1.0, "y2": 1.0})
    outs = ["theta1", "theta3", "x2"]
    lin = netdyn.linearize(model, q_op, inputs=["u"], outputs=outs, u={"u": 0})
    assert lin.n == 2 and lin.states[0].startswith("theta")  # one degree of freedom: 2 states
    eps = 1e-4
    res = []
    for s in (1, -1):
        sol = netdyn.simulate(model, (0, T_END), q0={"theta1": q_op["theta1"]}, guess=q_op, params={"u": s * eps},
                              t_eval=[0, T_END], rtol=1e-11)
        res.append(np.array([sol[o][-1] for o in outs]))
    fd = (res[0] - res[1]) / (2 * eps)
    lin_y = lin.step(np.linspace(0, T_END, 401))[:, -1]
    assert np.allclose(fd, lin_y, rtol=1e-5, atol=1e-8)
    assert np.allclose(np.sort_complex(np.round(lin.descriptor.poles(), 9)), np.sort_complex(np.round(lin.poles(), 9)), atol=1e-7)


def test_not_an_equilibrium_says_by_how_much():
    with pytest.raises(netdyn.OperatingPointError, match=r"not an equilibrium.*max \|x_ddot\| = 4\.2"):
        netdyn.linearize(pendulum(), {"x": 1.0, "y": -np.sqrt(3.0)}, inputs=["F"], u={"F": 0})


def test_singular_configuration_is_an_error():
    # a parallelogram four-bar (l1 = l3, l2 = l4) at its change point: all links on the x axis
    model = four_bar_with_spring()
    model = LagrangianModel(model.coordinates, T=model.T_terms, V=model.V_terms, efforts=model.efforts,
                            constraints=model.constraints,
                            parameters={k: (1.0 if str(k) == "l3" else v) for k, v in model.parameters.items()})
    q_op = {"theta1": 0.0, "theta2": 0.0, "theta3": 0.0, "x2": 2.0, "y2": 0.0}
    with pytest.raises(netdyn.SingularSystemError, match="singular configuration.*rank 3 instead of 4"):
        netdyn.linearize(model, q_op, u={"u": 0})


def test_rlc_transfer_function_and_bode_against_closed_form():
    R, L, C = 1.0, 0.5, 0.02
    lin = netdyn.linearize(series_rlc(R, L, C, V=0.0), inputs=["V1"], outputs=["v(C1)"])
    tf = lin.transfer_function("v(C1)", "V1")
    den = tf.den / tf.num[-1]
    assert np.allclose(den, [L * C, R * C, 1.0], rtol=1e-10)  # 1 / (LC s² + RC s + 1)
    w, mag, ph = lin.bode([1.0, 1 / np.sqrt(L * C), 1e3])
    G = 1 / (L * C * (1j * w)**2 + R * C * 1j * w + 1)
    assert np.allclose(mag, 20 * np.log10(np.abs(G)), atol=1e-9)
    assert np.allclose(ph, np.degrees(np.angle(G)), atol=1e-7)
    assert lin.damping_ratios()[0] == pytest.approx(R / 2 * np.sqrt(C / L), rel=1e-10)
    assert float(lin.static_gain()[0, 0]) == pytest.approx(1.0)


def test_rc_circuit_has_one_state_and_massless_flows_are_eliminated():
    net = netdyn.Network()
    net.add(VoltageSource("V1", "a", "0", 1.0), Resistor("R1", "a", "b", 2.0), Capacitor("C1", "b", "0", 0.25))
    op = netdyn.equilibrium(net, inputs=["V1"])
    lin = netdyn.linearize(op, inputs=["V1"], outputs=["i(R1)", "v(C1)"])
    assert lin.n == 1 and lin.poles()[0].real == pytest.approx(-1 / (2.0 * 0.25))
    assert np.allclose(lin.D, [[0.5], [0.0]])  # a voltage step passes straight to the current through R
    assert lin.operating_point.as_dict()["q_R1"] == pytest.approx(0.25)  # the capacitor holds C V


def test_symbolic_transfer_function_of_a_small_system():
    R, L, C = sp.symbols("R L C", positive=True)
    q, = coordinates("q,")
    v = sp.Function("v")(t)
    model = LagrangianModel([q], T=L * q.diff(t)**2 / 2, V=q**2 / (2 * C), D=R * q.diff(t)**2 / 2, efforts={q: v})
    G = netdyn.transfer_function(model, inputs=["v"], outputs=[q / C])
    s = sp.Symbol("s")
    assert sp.simplify(G[0, 0] - 1 / (L * C * s**2 + R * C * s + 1)) == 0
