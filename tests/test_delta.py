"""Clavel's Delta robot (netdyn.linkages.spatial.delta_robot) driven by its platform's position through the
front door, against an independent second formulation: the closed-form inverse kinematics of the three arms,
written here in sympy, and the principle of virtual power in the platform coordinates p (the arms' angles
θ(p), their gradients and Hessians by sympy; every body's velocity and acceleration by the chain rule; thin
rods, whose rotational terms are J (∂u/∂p)ᵀ ü for the rod's unit vector u). No tree, no closure Newton."""
import functools
import warnings

import numpy as np
import pytest
import sympy as sp

import netdyn
from netdyn.errors import IdleFreedomWarning, ModelError
from netdyn.linkages.spatial import DELTA_FLEXPICKER, delta_circle, delta_inverse_kinematics, delta_robot

D = DELTA_FLEXPICKER
EZ = np.array([0.0, 0.0, 1.0])


def legs():
    wB, wP = D["sB"] * np.sqrt(3) / 6, D["sP"] * np.sqrt(3) / 6
    out = []
    for phi in (-np.pi / 2, np.pi / 6, 5 * np.pi / 6):
        rho = np.array([np.cos(phi), np.sin(phi), 0.0])
        out.append((rho, np.array([-np.sin(phi), np.cos(phi), 0.0]), wB * rho, wP * rho))
    return out


@functools.lru_cache(maxsize=1)
def arm_angle_functions():
    """θ_i(p) (elbows out), its gradient and Hessian, from sympy: the arm's elbow at distance l from the
    platform's ball-pair centre."""
    p = sp.symbols("px py pz", real=True)
    out = []
    for rho, _, B, P in legs():
        Dv = [p[k] + P[k] - B[k] for k in range(3)]
        a = sum(Dv[k] * rho[k] for k in range(3))
        b = -Dv[2]
        k = (D["L"] ** 2 + sum(x ** 2 for x in Dv) - D["l"] ** 2) / (2 * D["L"])
        theta = sp.atan2(b, a) - sp.acos(k / sp.sqrt(a ** 2 + b ** 2))
        grad = [sp.diff(theta, v) for v in p]
        hess = [[sp.diff(g, v) for v in p] for g in grad]
        out.append(sp.lambdify([p], [theta, grad, hess], "numpy"))
    return out


def reference_efforts(times, trajectory):
    """Arm torques by virtual power: Gᵀ τ = Q(p), G = ∂θ/∂p, Q the generalised inertial and gravity force."""
    fns = arm_angle_functions()
    g = np.array([0.0, 0.0, -D["g"]])
    L, l, h = D["L"], D["l"], D["h"]
    Ja, Jr = D["m_arm"] * L ** 2 / 12, D["m_rod"] * l ** 2 / 12
    Pt, Vt, At = trajectory(np.asarray(times, dtype=float))
    out = np.zeros((3, len(times)))
    for n in range(len(times)):
        p, pd, pdd = Pt[:, n], Vt[:, n], At[:, n]
        G = np.zeros((3, 3))
        Q = D["m_platform"] * (pdd - g)  # the platform translates
        for i, ((rho, axis, B, P), fn) in enumerate(zip(legs(), fns)):
            th, grad, hess = fn(p)
            grad, hess = np.array(grad, dtype=float), np.array(hess, dtype=float)
            G[i] = grad
            thd, thdd = grad @ pd, grad @ pdd + pd @ hess @ pd
            w = np.cos(th) * rho - np.sin(th) * EZ             # along the arm
            w1 = -np.sin(th) * rho - np.cos(th) * EZ           # dw/dθ
            w2 = -w                                           # d²w/dθ²
            # the arm: centre of mass B + (L/2) w, and J θ̈ ∇θ for its rotation about the fixed axis
            Jc = np.outer(L / 2 * w1, grad)
            ac = L / 2 * (w1 * thdd + w2 * thd ** 2)
            Q = Q + D["m_arm"] * Jc.T @ (ac - g) + Ja * thdd * grad
            for s in (1.0, -1.0):
                e_J = np.outer(L * w1, grad)                  # ∂e/∂p of the ball on the arm
                e_a = L * (w1 * thdd + w2 * thd ** 2)         # its acceleration (f's is p̈)
                c_J, c_a = (e_J + np.eye(3)) / 2, (e_a + pdd) / 2
                u_J, u_a = (np.eye(3) - e_J) / l, (pdd - e_a) / l
                e = B + L * w + s * h / 2 * axis
                f = p + P + s * h / 2 * axis
                assert abs(np.linalg.norm(f - e) - l) < 1e-12  # the test's own IK closes the leg
                Q = Q + D["m_rod"] * c_J.T @ (c_a - g) + Jr * u_J.T @ u_a
        out[:, n] = np.linalg.solve(G.T, Q)
    return out


@pytest.fixture(scope="module")
def delta_run():
    times = np.linspace(0, 1, 201)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = netdyn.inverse_dynamics(delta_robot(), {"platform": delta_circle()}, times, actuated=["A1", "A2", "A3"])
    return times, res, caught


def test_delta_efforts_equal_virtual_power_in_platform_coordinates(delta_run):
    times, res, _ = delta_run
    sample = np.arange(0, 201, 20)
    ref = reference_efforts(times[sample], delta_circle())
    got = np.array([res.efforts[f"A{i}"][sample] for i in (1, 2, 3)])
    assert np.max(np.abs(got - ref)) < 1e-9 * (1 + np.max(np.abs(ref)))
    assert np.max(np.abs(ref)) > 5.0  # a real load (N·m), not a vacuous zero


def test_delta_motion_is_the_closed_form_kinematics(delta_run):
    times, res, caught = delta_run
    assert res.method == "recursive"
    home = delta_inverse_kinematics((0.0, 0.0, -1.0))
    P, V, _ = delta_circle()(times)
    arms = np.array([res[f"thetaz_A{i}"] for i in (1, 2, 3)]) + home[:, None]  # tree angles count from home
    assert np.max(np.abs(arms - np.array([delta_inverse_kinematics(P[:, k]) for k in range(times.size)]).T)) < 1e-10
    for c, a in enumerate("xyz"):  # the platform by its absolute names, and it does not turn
        assert np.max(np.abs(res[f"{a}_platform"] - P[c])) < 1e-10
        assert np.max(np.abs(res[f"{a}_platform_dot"] - V[c])) < 1e-9
    assert np.max(np.abs(res["e0_platform"] - 1)) < 1e-10
    idle = [w for w in caught if issubclass(w.category, IdleFreedomWarning)]
    assert len(idle) == 6 and "rod1a" in str(idle[0].message)


def test_delta_unsorted_times_and_array_trajectory_give_the_same_efforts(delta_run):
    times, res, _ = delta_run
    pick = np.array([150, 3, 77, 200, 0, 41])
    arrays = delta_circle()(times[pick])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IdleFreedomWarning)
        again = netdyn.inverse_dynamics(delta_robot(), {"platform": arrays}, times[pick], actuated=["A1", "A2", "A3"])
    for j in ("A1", "A2", "A3"):
        assert np.max(np.abs(again.efforts[j] - res.efforts[j][pick])) < 1e-9


def test_delta_guess_in_joint_coordinates_picks_the_branch(delta_run):
    """A guess in tree coordinates (the arms' angles from home) starts the Newton: the elbows-out branch."""
    times, res, _ = delta_run
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IdleFreedomWarning)
        again = netdyn.inverse_dynamics(delta_robot(), {"platform": delta_circle()}, times[:3],
                                        actuated=["A1", "A2", "A3"], guess={"thetaz_A1": 0.05, "thetaz_A2": -0.05})
    assert np.max(np.abs(again.efforts["A2"] - res.efforts["A2"][:3])) < 1e-9


def test_delta_bad_requests_name_the_fault():
    net = delta_robot()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IdleFreedomWarning)
        with pytest.raises(ModelError, match="actuated"):
            netdyn.inverse_dynamics(net, {"platform": delta_circle()}, [0.0])
        with pytest.raises(ModelError, match="three arrays"):
            netdyn.inverse_dynamics(net, {"platform": (np.zeros(3), np.zeros(3))}, [0.0, 1.0], actuated=["A1", "A2", "A3"])
        with pytest.raises(ModelError, match="E1a|not a moving joint|free"):
            netdyn.inverse_dynamics(net, {"platform": delta_circle()}, [0.0], actuated=["A1", "A2", "P1a"])
        with pytest.raises(Exception, match="reach|closed|cannot"):
            netdyn.inverse_dynamics(net, {"platform": delta_circle(depth=-3.0)}, [0.0], actuated=["A1", "A2", "A3"])
