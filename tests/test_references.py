"""The external reference models agree with each other and with closed forms.

Pinocchio (recursive articulated-body algorithm) and sympy.physics.mechanics
(Kane's method) share no code, so agreement to 1e-9 at random states and random
parameters pins both to the convention stated in ``tests/references/pendulum.py``.
"""
import numpy as np
import pytest

from references.pendulum import (kane_pendulum, pinocchio_forward, pinocchio_pendulum,
                                 single_pendulum_acceleration)

pin = pytest.importorskip("pinocchio")

RTOL = 1e-9


def _random_chain(rng, n):
    return rng.uniform(0.3, 3.0, n), rng.uniform(0.2, 2.0, n), rng.uniform(1.0, 20.0)


def _close(a, b):
    """Agreement relative to the largest acceleration (components may be near zero)."""
    scale = max(np.max(np.abs(a)), np.max(np.abs(b)))
    return np.max(np.abs(np.asarray(a) - np.asarray(b))) <= RTOL * scale


@pytest.mark.parametrize("n", [2, 3, 5])
def test_pinocchio_and_kane_agree_at_random_states(n):
    rng = np.random.default_rng(1000 + n)
    accel = kane_pendulum(n)
    for _ in range(4):
        masses, lengths, g = _random_chain(rng, n)
        model = pinocchio_pendulum(n, masses, lengths, g)
        data = model.createData()
        for _ in range(5):
            q = rng.uniform(-np.pi, np.pi, n)
            v = rng.uniform(-3.0, 3.0, n)
            a_pin = pinocchio_forward(model, q, v, data=data)
            a_kane = accel(q, v, {"masses": masses, "lengths": lengths, "g": g})
            assert _close(a_pin, a_kane), (q, v, a_pin, a_kane)


def test_pinocchio_and_kane_disagree_when_a_parameter_differs():
    """The comparison above can fail: one changed length is far outside the tolerance."""
    rng = np.random.default_rng(7)
    masses, lengths, g = _random_chain(rng, 3)
    q, v = rng.uniform(-np.pi, np.pi, 3), rng.uniform(-3.0, 3.0, 3)
    other = lengths.copy()
    other[1] *= 1.001
    a_pin = pinocchio_forward(pinocchio_pendulum(3, masses, other, g), q, v)
    a_kane = kane_pendulum(3)(q, v, (masses, lengths, g))
    assert not _close(a_pin, a_kane)


def test_single_link_matches_the_closed_form():
    rng = np.random.default_rng(1)
    accel = kane_pendulum(1)
    for _ in range(20):
        (m,), (l,), g = _random_chain(rng, 1)
        theta, omega = rng.uniform(-np.pi, np.pi), rng.uniform(-3.0, 3.0)
        expected = single_pendulum_acceleration(theta, m, l, g)
        a_pin = pinocchio_forward(pinocchio_pendulum(1, m, l, g), [theta], [omega])[0]
        a_kane = accel([theta], [omega], {"masses": [m], "lengths": [l], "g": g})[0]
        assert abs(a_pin - expected) <= RTOL * abs(expected) + 1e-12
        assert abs(a_kane - expected) <= RTOL * abs(expected) + 1e-12


def test_single_link_hangs_still_and_falls_the_right_way():
    """theta from +x, gravity -y: hanging (-pi/2) is at rest; horizontal (0) swings down (negative)."""
    m, l, g = 2.0, 1.5, 9.81
    model = pinocchio_pendulum(1, m, l, g)
    assert abs(pinocchio_forward(model, [-np.pi / 2], [0.0])[0]) < 1e-12
    a0 = pinocchio_forward(model, [0.0], [0.0])[0]
    assert a0 < 0
    assert a0 == pytest.approx(-(m * g * l / 2) / (m * l ** 2 / 3), rel=1e-12)  # inertia about the pivot


def test_pinocchio_joint_positions_follow_the_relative_angle_convention():
    """Joint i+1 sits at sum_k l_k (cos θ_k, sin θ_k), θ_k = q_1 + ... + q_k."""
    rng = np.random.default_rng(3)
    n = 5
    masses, lengths, g = _random_chain(rng, n)
    model = pinocchio_pendulum(n, masses, lengths, g)
    data = model.createData()
    q = rng.uniform(-np.pi, np.pi, n)
    pin.forwardKinematics(model, data, q)
    theta = np.cumsum(q)
    tips = np.cumsum(np.column_stack([lengths * np.cos(theta), lengths * np.sin(theta)]), axis=0)
    for i in range(2, n + 1):  # joint i is at the tip of link i-1
        np.testing.assert_allclose(data.oMi[i].translation[:2], tips[i - 2], rtol=0, atol=1e-12)
    np.testing.assert_allclose(data.oMi[1].translation, 0.0, atol=1e-15)
    # centre of mass of the chain, from Pinocchio's inertias, is the mass-weighted mid-links
    mids = tips - 0.5 * np.column_stack([lengths * np.cos(theta), lengths * np.sin(theta)])
    com = pin.centerOfMass(model, data, q)
    np.testing.assert_allclose(com[:2], masses @ mids / masses.sum(), rtol=0, atol=1e-12)
