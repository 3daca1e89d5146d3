"""The compiled projection loop run in chunks: the same trajectory as one call, progress reported and a real
Ctrl-C (SIGINT from the OS) honoured between chunks; the CLI's progress bar no longer turns it off."""
import os
import signal
import time

import numpy as np
import pytest

import netdyn
from netdyn.linkages import FOUR_BAR_GUESS, four_bar
from netdyn.numerics.functions.compiled import compile_model
from netdyn.numerics.dae.initial import consistent_initial_conditions
from netdyn.numerics.mechanics import compiled_projection
from netdyn.numerics.mechanics.compiled_projection import CompiledProjection


@pytest.fixture(scope="module")
def driven():
    """The four-bar under 1 N·m (turning ever faster) at its consistent initial state."""
    cm = compile_model(four_bar(tau=1.0).model())
    p = cm.parameter_vector()
    q, f = consistent_initial_conditions(cm, 0.0, None, None, p, guess=FOUR_BAR_GUESS)
    return cm, p, q, f


def test_chunks_give_the_one_call_trajectory(driven):
    """Three steps a call against one call for the whole run: the loop's state (step size, output index,
    watch history) is carried whole, so the two agree to the last bit, with the same steps."""
    cm, p, q, f = driven
    te = np.linspace(0, 3.0, 31)
    whole = CompiledProjection(cm, p, chunk_steps=10 ** 9)
    one = whole.integrate(0, 3.0, q, f, te, 1e-8, 1e-10)
    chunked = CompiledProjection(cm, p, chunk_steps=3)
    seen = []
    many = chunked.integrate(0, 3.0, q, f, te, 1e-8, 1e-10, progress=seen.append)
    assert chunked.chunks >= one.nsteps // 3 > 10
    assert many.nsteps == one.nsteps and many.status == 0
    for name in ("t", "q", "f", "acc", "lam", "supplied", "dissipated"):
        np.testing.assert_allclose(getattr(many, name), getattr(one, name), rtol=0, atol=1e-12)
    assert len(seen) >= one.nsteps // 3 and np.all(np.diff(seen) > 0) and 0 < seen[0] < seen[-1] == 3.0


def test_simulate_with_progress_runs_the_compiled_loop(monkeypatch):
    """A ``progress`` callback (as ``netdyn simulate`` passes) keeps the compiled loop; reported times rise."""
    calls = []
    loop = compiled_projection._integrate
    monkeypatch.setattr(compiled_projection, "_integrate", lambda *a: calls.append(1) or loop(*a))
    seen = []
    kw = dict(guess=FOUR_BAR_GUESS, t_eval=np.linspace(0, 2.0, 11), method="projection", atol=1e-9)
    sol = netdyn.simulate(four_bar(tau=1.0), (0, 2.0), compiled_loop=True, progress=seen.append, **kw)
    assert calls and sol.status == 0
    ref = netdyn.simulate(four_bar(tau=1.0), (0, 2.0), compiled_loop=False, **kw)
    np.testing.assert_allclose(sol.q, ref.q, rtol=0, atol=1e-8)
    assert seen == sorted(seen) and seen[-1] == 2.0


def _raise_interrupt(signum, frame):
    raise KeyboardInterrupt


@pytest.mark.parametrize("handler", ["python's", "the caller's"])
def test_a_real_sigint_stops_the_compiled_loop_with_what_it_reached(handler):
    """SIGINT delivered by the OS while the compiled loop runs: the call in progress finishes its chunk and
    the outputs reached come back with status -2 — under Python's default handler (replaced while the loop
    runs by one that notes the signal) and under a caller's own handler that raises KeyboardInterrupt
    (which may surface inside numba's dispatcher as a SystemError caused by it)."""
    armed = []

    def progress(tt):  # the first report arms a timer that sends SIGINT 0.5 s later, mid-integration
        if not armed:
            armed.append(time.perf_counter())
            signal.setitimer(signal.ITIMER_REAL, 0.5)

    te = np.linspace(0, 1000.0, 100001)
    previous = signal.signal(signal.SIGALRM, lambda *args: os.kill(os.getpid(), signal.SIGINT))
    interrupt = signal.signal(signal.SIGINT, signal.default_int_handler if handler == "python's" else _raise_interrupt)
    try:
        sol = netdyn.simulate(four_bar(tau=1.0), (0, 1000.0), guess=FOUR_BAR_GUESS, t_eval=te, method="projection",
                              atol=1e-9, compiled_loop=True, progress=progress)  # (a given atol: no first pass)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        signal.signal(signal.SIGINT, interrupt)
    assert time.perf_counter() - armed[0] < 5
    assert sol.status == -2 and "Interrupted" in sol.message and 0.5 < sol.t[-1] < 1000.0
    np.testing.assert_array_equal(sol.t, te[:sol.t.size])  # the output times reached, none skipped
    # what was reached is the solution: an uninterrupted run up to the last time reached
    ref = netdyn.simulate(four_bar(tau=1.0), (0, sol.t[-1]), guess=FOUR_BAR_GUESS, t_eval=sol.t,
                          method="projection", atol=1e-9, compiled_loop=True)
    np.testing.assert_allclose(sol.q, ref.q, rtol=0, atol=1e-6 * (1 + np.max(np.abs(ref.q))))


def test_netdyn_simulate_draws_its_bar_from_the_compiled_loop(tmp_path, monkeypatch, capsys):
    """``netdyn simulate`` (which always passes a progress bar) runs the compiled loop once it is cached, and
    gives the Python loop's numbers; NETDYN_COMPILED_LOOP=0 still turns it off."""
    from netdyn.cli import main
    from netdyn.linkages import pendulum
    netdyn.save_model(pendulum([1.0, 0.5], [1.0, 0.7]), tmp_path / "pendulum.yaml")  # bodies and pins
    calls = []
    run = CompiledProjection._run
    monkeypatch.setattr(CompiledProjection, "_run", lambda *a: calls.append(1) or run(*a))
    tables = {}
    for env in ("", "0"):
        monkeypatch.setenv("NETDYN_COMPILED_LOOP", env)
        out = tmp_path / f"out{env}.csv"
        assert main(["simulate", str(tmp_path / "pendulum.yaml"), "--tstop", "1", "--step", "0.1", "--csv", str(out),
                     "--progress", "always"]) == 0
        tables[env] = np.loadtxt(out, delimiter=",", skiprows=1)
        assert bool(calls) == (env == "")
        calls.clear()
    assert "100%" in capsys.readouterr().err
    np.testing.assert_allclose(tables[""], tables["0"], rtol=1e-7, atol=1e-9)
