"""Source waveforms against direct numeric formulas (ngspice's vsrcload.c, transcribed)."""
import math

import numpy as np
import pytest
import sympy as sp

from netdyn.errors import ElementError, NetdynError
from netdyn.lagrange.sources import Sawtooth, pulse, pwl, sine, spice_form, step
from netdyn.symbols import t


def ref_sin(tt, vo, va, freq, td=0.0, theta=0.0, phase=0.0):
    ph = phase * math.pi / 180
    tau = tt - td
    if tau <= 0:
        return vo + va * math.sin(ph)
    return vo + va * math.sin(2 * math.pi * freq * tau + ph) * math.exp(-tau * theta)


def ref_pulse(tt, v1, v2, td, tr, tf, pw, per=None):
    time = tt - td
    if per is not None and time > per:
        time -= per * math.floor(time / per)
    if time <= 0 or time >= tr + pw + tf:
        return v1
    if tr <= time <= tr + pw:
        return v2
    if 0 < time < tr:
        return v1 + (v2 - v1) * time / tr
    return v2 + (v1 - v2) * (time - (tr + pw)) / tf


def ref_pwl(tt, pts):
    if tt <= pts[0][0]:
        return pts[0][1]
    for (ta, va), (tb, vb) in zip(pts, pts[1:]):
        if tt <= tb:
            return va + (vb - va) * (tt - ta) / (tb - ta)
    return pts[-1][1]


def vectorized(expr):
    f = sp.lambdify(t, expr, "numpy")
    return lambda x: np.broadcast_to(f(x), np.shape(x)).astype(float)


GRID = np.linspace(0.0, 10e-3, 10007)   # does not fall on the corners exactly


@pytest.mark.parametrize("args", [
    (0.0, 1.0, 1e3),
    (1.5, -2.0, 750.0, 2e-3),
    (0.0, 3.0, 400.0, 1e-3, 300.0),
    (0.5, 1.0, 1234.0, 0.5e-3, 100.0, 45.0),
    (0.0, 1.0, 200.0, 0.0, 0.0, -90.0),
])
def test_sine_matches_spice_formula(args):
    v = sine(*args)
    got = vectorized(v)(GRID)
    want = np.array([ref_sin(x, *args) for x in GRID])
    assert np.max(np.abs(got - want)) < 1e-12


@pytest.mark.parametrize("args", [
    (0.0, 1.0, 1e-3, 1e-4, 2e-4, 2e-3, None),
    (-1.0, 2.0, 0.5e-3, 3e-4, 1e-4, 1e-3, 2.1e-3),
    (1.0, 0.0, 0.0, 1e-4, 1e-4, 0.5e-3, 1e-3),
    (0.0, 5.0, 2e-3, 1e-6, 1e-6, 1e-3, 3e-3),
])
def test_pulse_matches_spice_formula(args):
    v1, v2, td, tr, tf, pw, per = args
    v = pulse(v1, v2, td, tr, tf, pw, per)
    got = vectorized(v)(GRID)
    want = np.array([ref_pulse(x, v1, v2, td, tr, tf, pw, per) for x in GRID])
    assert np.max(np.abs(got - want)) < 1e-9


def test_periodic_pulse_really_repeats():
    v = vectorized(pulse(0, 1, delay=1e-3, rise=1e-4, fall=1e-4, width=3e-4, period=1e-3))
    x = np.linspace(1e-3, 2e-3, 1001)
    for k in range(1, 8):
        assert np.max(np.abs(v(x + k * 1e-3) - v(x))) < 1e-9
    assert v(np.array([1.25e-3 + 5e-3]))[0] == pytest.approx(1.0)
    assert v(np.array([1.8e-3 + 5e-3]))[0] == pytest.approx(0.0)


def test_pulse_with_ideal_edges_and_no_width():
    v = pulse(2, 7, delay=1e-3)
    f = vectorized(v)
    assert f(np.array([0.0, 0.999e-3, 1.001e-3, 1.0])).tolist() == [2, 2, 7, 7]
    w = vectorized(pulse(0, 1, delay=0, rise=0, fall=0, width=1e-3, period=2e-3))
    assert w(np.array([0.5e-3, 1.5e-3, 2.5e-3, 3.5e-3])).tolist() == [1, 0, 1, 0]


@pytest.mark.parametrize("pts", [
    [(0.0, 0.0), (1e-3, 1.0), (3e-3, -2.0), (7e-3, 0.5)],
    [(1e-3, 4.0), (2e-3, 4.0), (2.5e-3, 0.0)],
    [(0.0, 1.0), (9e-3, 3.0)],
])
def test_pwl_matches_spice_formula(pts):
    got = vectorized(pwl(pts))(GRID)
    want = np.array([ref_pwl(x, pts) for x in GRID])
    assert np.max(np.abs(got - want)) < 1e-12


def test_step():
    v = step(3.0, t0=2e-3)
    got = vectorized(v)(GRID)
    want = np.where(GRID < 2e-3, 0.0, 3.0)
    assert np.array_equal(got, want)
    assert step(4) == 4


def test_derivatives_lambdify_to_the_slopes():
    v = pulse(0, 2, delay=1e-3, rise=1e-4, fall=4e-4, width=1e-3, period=3e-3)
    dv = vectorized(sp.diff(v, t))
    for k in range(3):
        base = 1e-3 + k * 3e-3
        got = dv(np.array([base + 0.5e-4, base + 0.6e-3, base + 1.3e-3, base + 2e-3]))
        assert got == pytest.approx([2 / 1e-4, 0.0, -2 / 4e-4, 0.0])
    s = sine(0, 2, 50, delay=0.01, damping=3)
    ds = vectorized(sp.diff(s, t))
    h = 1e-7
    for x in (0.013, 0.02, 0.031):
        fd = (ref_sin(x + h, 0, 2, 50, 0.01, 3) - ref_sin(x - h, 0, 2, 50, 0.01, 3)) / (2 * h)
        assert ds(np.array([x]))[0] == pytest.approx(fd, rel=1e-6)
    assert ds(np.array([0.005]))[0] == 0.0
    dp = vectorized(sp.diff(pwl([(0, 0), (1, 2), (3, -2)]), t))
    assert dp(np.array([-1.0, 0.5, 2.0, 4.0])).tolist() == [0.0, 2.0, -2.0, 0.0]


def test_sawtooth():
    x = sp.Symbol("x", real=True)
    assert Sawtooth(sp.Float(7.5), 2) == pytest.approx(1.5)
    assert Sawtooth(-1, 3) == 2
    assert sp.diff(Sawtooth(3 * x, 2), x) == 3
    f = sp.lambdify(x, 2 * Sawtooth(x, 2) + 1, "numpy")
    assert f(np.array([-0.5, 0.5, 5.25])).tolist() == [4.0, 2.0, 3.5]
    g = sp.lambdify(x, Sawtooth(x, 2), "math")
    assert g(5.25) == pytest.approx(1.25)
    assert "floor" in sp.ccode(Sawtooth(x, 2))
    assert Sawtooth(x, 2).rewrite(sp.floor) == x - 2 * sp.floor(x / 2)


def test_symbolic_amplitude_stays_symbolic():
    a = sp.Symbol("a", positive=True)
    v = sine(0, a, 60)
    assert v.free_symbols == {a, t}
    assert v.subs(a, 2).subs(t, sp.Rational(1, 240)) == 2


def test_spice_forms():
    assert spice_form(sine(0, 1, 1000.0)) == "SIN(0 1 1000 0 0 0)"
    assert spice_form(pulse(0, 1, 1e-3, 1e-6, 2e-6, 1e-3, 2e-3)) == "PULSE(0 1 0.001 1e-06 2e-06 0.001 0.002)"
    assert spice_form(pulse(0, 1, 1e-3, 1e-6, 2e-6)) == "PULSE(0 1 0.001 1e-06 2e-06)"
    assert spice_form(pwl([(0, 0), (1e-3, 2.5)])) == "PWL(0 0 0.001 2.5)"
    assert spice_form(step(2, 1e-3)).startswith("PWL(0 0 0.001 0 0.0010000")
    assert spice_form(5) == "DC 5"
    assert spice_form(sp.sin(t)) is None


@pytest.mark.parametrize("make, match", [
    (lambda: sine(0, 1, 0), "frequency"),
    (lambda: sine(0, 1, 50, delay=-1), "delay"),
    (lambda: pulse(0, 1, -1e-3), "delay"),
    (lambda: pulse(0, 1, 0, -1e-6), "rise"),
    (lambda: pulse(0, 1, 0, 1e-3, 1e-3, 1e-3, period=2e-3), "longer than the period"),
    (lambda: pulse(0, 1, 0, 1e-3, 1e-3, None, period=2e-3), "needs a width"),
    (lambda: pulse(0, 1, 0, 1e-3, 1e-3, 1e-3, period=-1.0), "positive"),
    (lambda: pwl([(0, 0), (1, 1), (1, 2)]), "increase"),
    (lambda: pwl([]), "at least one"),
    (lambda: pwl([1, 2, 3]), "pairs"),
    (lambda: step(1, t0=t), "time"),
    (lambda: step("x y z"), "number"),
])
def test_bad_waveforms_raise(make, match):
    with pytest.raises(ElementError, match=match):
        make()
    assert issubclass(ElementError, NetdynError)


def test_breakpoints_are_the_corners():
    from netdyn.lagrange.sources import breakpoints

    v = pulse(0, 1, delay=1e-3, rise=1e-4, fall=2e-4, width=5e-4, period=2e-3)
    bps = breakpoints(v, 6e-3)
    assert bps == pytest.approx([1e-3, 1.1e-3, 1.6e-3, 1.8e-3, 3e-3, 3.1e-3, 3.6e-3, 3.8e-3,
                                 5e-3, 5.1e-3, 5.6e-3, 5.8e-3])
    # every corner found is a kink of the numeric waveform, and there is no other one
    f = vectorized(v)
    grid = np.linspace(0, 6e-3, 60001)
    d2 = np.abs(np.diff(f(grid), 2))
    kinks = grid[1:-1][d2 > 1e-6]
    for k in kinks:
        assert min(abs(b - k) for b in bps) < 2e-7
    assert breakpoints(step(1, 2.0), 5) == [2.0]
    assert breakpoints(step(1, 2.0), 1) == []
    assert breakpoints(pwl([(0, 0), (1, 1), (2, 0)]), 10, t_start=0.5) == [1.0, 2.0]
    assert breakpoints(sp.Piecewise((0, t < 3), (t - 3, True)) * sine(0, 1, 50), 10) == [3.0]
    assert breakpoints(3 * sp.sin(t), 10) == []
