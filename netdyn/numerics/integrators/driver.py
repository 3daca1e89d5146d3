"""The symbolic paths' run: the span cut at source corners, tolerances scaled, pieces joined into a Solution.

``projection`` and ``ida`` integrate the same way once their integrator is made: :func:`run_symbolic` checks
``atol``, takes the charges' tolerance in amperes where an F or H senses a current, snaps output times onto
PULSE/PWL corners and integrates between them (as SPICE does), scales an absent ``atol`` by a coarse first
pass, and wraps the trajectory in a :class:`~netdyn.numerics.results.solution.Solution`.
"""
from __future__ import annotations

from contextlib import contextmanager

import numpy as np
import sympy as sp

from netdyn.errors import IntegrationError
from netdyn.lagrange.sources import corners
from netdyn.numerics.dae.start import DEFAULT_RTOL
from netdyn.numerics.integrators.sensed import sensed_atol, sensed_coordinates
from netdyn.numerics.results.solution import Solution
from netdyn.numerics.results.trajectory import INTERRUPTED, Trajectory
from netdyn.symbols import t
from netdyn.validate import conditioning_hint


def run_symbolic(problem, start, integrator, name):
    """Integrate ``start``'s consistent state with ``integrator`` over the problem's span; a
    :class:`~netdyn.numerics.results.solution.Solution` whose ``method`` is ``name``."""
    model, cm, p, q, f = start.model, start.cm, start.p, start.q, start.f
    rtol, atol = problem.rtol_or(DEFAULT_RTOL), problem.atol
    t0, t1 = problem.t_span
    requested = problem.t_eval
    _check_atol(atol, cm.n)
    if sensed_coordinates(model):  # F, H read a rate of the charges: their atol in amperes
        atol = sensed_atol(atol, 2 * cm.n, range(cm.n), requested)
    corners = source_breakpoints(cm, t0, t1)
    t_eval = requested.copy()
    for c in corners:  # output times a hair from a corner are the corner (IDA cannot start that close)
        t_eval[np.abs(t_eval - c) < 1e-9 * (t1 - t0)] = c
    run = lambda tol, at, te, pr=None: integrate_segments(integrator, [t0] + corners + [t1], q, f, te, tol, at, pr)
    progress = problem.progress
    stage = getattr(progress, "stage", None)  # a progress bar that labels the passes (netdyn simulate's)
    if atol is None:
        # magnitudes from a first pass under (nearly) pure relative error control; a small fixed atol:
        # pure relative control fails on variables held at 0 by constraints (roundoff noise) and in
        # IDA's first steps from exact zeros; magnitudes are all this pass is for
        # (the work integrals out of its error test: their scale is what it finds out). A callback that
        # labels passes (``progress.stage``) is told of it and sees its times too; a plain function sees the
        # final pass only, as before. Reporting does not change the steps: the numbers are those of a run
        # without a callback.
        if stage is not None:
            stage("first pass")
        with explained(model):
            coarse = run(1e-6, np.r_[np.full(2 * cm.n, 1e-12), 1e6, 1e6], np.linspace(t0, t1, 201),
                         progress if stage is not None else None)
        if coarse.status == INTERRUPTED:  # Ctrl-C during the first pass: the requested times it reached
            return Solution(model, cm, p, on_requested_times(coarse, requested), method=name)
        atol = scaled_atol(coarse, rtol, cm.coupled_groups())
        if stage is not None:
            stage("refining")
    with explained(model):
        trajectory = run(rtol, atol, t_eval, progress)
    if trajectory.t.shape == requested.shape:
        trajectory.t = requested  # report the times asked for (a snapped one differs by < 1e-9 of the span)
    return Solution(model, cm, p, trajectory, method=name)


def on_requested_times(coarse, requested):
    """A first pass stopped by Ctrl-C, at the requested output times it reached: a solution on the grid
    that was asked for (up to where it stopped), not on the pass's own 201 points.

    Between the pass's points, displacements are cubic Hermite interpolants with the flows as their slopes,
    flows with the rates as theirs, multipliers and work integrals linear; the message says so.

    >>> tr = Trajectory(np.array([0.0, 1.0]), np.array([[0.0, 1.0]]), np.array([[0.0, 2.0]]),
    ...                 np.array([[2.0, 2.0]]), np.zeros((0, 2)), np.zeros((0, 2)), status=INTERRUPTED)
    >>> out = on_requested_times(tr, np.linspace(0.0, 2.0, 5))   # q = t**2 reached t = 1
    >>> out.t.tolist(), out.q.round(12).tolist()
    ([0.0, 0.5, 1.0], [[0.0, 0.25, 1.0]])
    """
    T = coarse.t
    if T.size == 0:
        return coarse
    times = np.asarray(requested, dtype=float)
    times = times[times <= T[-1] * (1 + 1e-12) + 1e-300]
    acc = coarse.accelerations()
    if T.size == 1:
        keep = np.zeros(times.size, dtype=np.int64)
        out = coarse.take(keep)
        out.t = times
    else:
        k = np.clip(np.searchsorted(T, times, side="right") - 1, 0, T.size - 2)
        h = T[k + 1] - T[k]
        s = (times - T[k]) / h
        h00, h10, h01, h11 = 2 * s**3 - 3 * s**2 + 1, s**3 - 2 * s**2 + s, -2 * s**3 + 3 * s**2, s**3 - s**2
        hermite = lambda y, dy: h00 * y[:, k] + h10 * h * dy[:, k] + h01 * y[:, k + 1] + h11 * h * dy[:, k + 1]
        linear = lambda y: None if y is None else y[..., k] * (1 - s) + y[..., k + 1] * s
        out = Trajectory(times, hermite(coarse.q, coarse.f), hermite(coarse.f, acc), linear(acc), linear(coarse.lam),
                         linear(coarse.mu), linear(coarse.dissipated), linear(coarse.supplied), nsteps=coarse.nsteps,
                         status=coarse.status)
    out.message = (coarse.message + " It stopped in the first pass (the one that scales atol, at rtol 1e-6 on "
                   "201 points): values between those points are interpolated.")
    return out


def step_bound(problem, cm):
    """The largest step: ``max_step`` as given, else an eighth of the shortest sine period of the model
    (steps of a whole number of a sine's periods would see it as constant)."""
    return problem.max_step if np.isfinite(problem.max_step) else source_period(cm) / 8


@contextmanager
def explained(model):
    """A failed integration inside names the elements whose extreme values make ``model`` ill-conditioned."""
    try:
        yield
    except IntegrationError as exc:
        hint = conditioning_hint(model)
        if not hint:
            raise
        raise IntegrationError(str(exc) + hint) from None


def _check_atol(atol, n):
    if atol is None or np.ndim(atol) == 0:
        if atol is not None and not (np.isfinite(atol) and atol > 0):
            raise IntegrationError(f"atol must be a positive number, got {atol!r}")
        return
    a = np.asarray(atol, dtype=float)
    if a.shape != (2 * n,):
        raise IntegrationError(f"atol has {a.size} entries; give one number or 2n = {2 * n} "
                               "(the displacements, then the flows)")
    if not np.all(np.isfinite(a) & (a > 0)):
        raise IntegrationError("every atol entry must be a positive number")


def source_breakpoints(cm, t0, t1):
    """Corners of the model's time functions (PULSE and PWL sources) inside ``(t0, t1)``
    (:func:`netdyn.lagrange.sources.corners`): the integrators stop and restart there, so no step straddles
    a kink."""
    return corners(cm.time_expressions(), t0, t1)


def source_period(cm):
    """The shortest period of the sines and cosines of t in the model (``inf`` if none).

    A step-size controller that samples a sine only at its steps (BDF: IDA) can
    step a whole number of half periods from a zero of the sine to the next and
    see no input at all (a 100 Hz sine into an RC over 1,000 s came out as zero);
    ``simulate`` caps the step at an eighth of this period unless ``max_step`` is given.

    >>> import sympy as sp
    >>> from netdyn import LagrangianModel, coordinates, t
    >>> from netdyn.numerics.functions.compiled import compile_model
    >>> x, = coordinates("x,")
    >>> cm = compile_model(LagrangianModel([x], T=x.diff(t)**2/2, efforts={x: sp.sin(200*sp.pi*t) + sp.cos(3*t)}))
    >>> round(source_period(cm), 6)
    0.01
    """
    shortest = np.inf
    for e in cm.time_expressions():
        e = sp.sympify(e)
        if t not in e.free_symbols:
            continue
        for f in e.atoms(sp.sin, sp.cos):
            rate = sp.diff(f.args[0], t)
            if rate.free_symbols or not rate.is_number:
                continue
            rate = abs(float(rate))
            if rate > 0:
                shortest = min(shortest, 2 * np.pi / rate)
    return shortest


def integrate_segments(integrator, edges, q, f, t_eval, rtol, atol, progress=None):
    """Integrate segment by segment between ``edges``; the pieces joined, work integrals carried on."""
    parts = []
    qa, fa = q, f
    w = (0.0, 0.0)
    for k, (ta, tb) in enumerate(zip(edges[:-1], edges[1:])):
        inside = t_eval[(t_eval > ta) & (t_eval < tb)] if k else t_eval[(t_eval >= ta) & (t_eval < tb)]
        piece = integrator.integrate(ta, tb, qa, fa, np.concatenate([inside, [tb]]), rtol, atol, progress)
        piece = piece.shift_work(*w)
        if piece.t.size:  # (a piece interrupted by Ctrl-C may have reached none of its output times)
            qa, fa = piece.q[:, -1].copy(), piece.f[:, -1].copy()
            if piece.dissipated is not None:
                w = (piece.dissipated[-1], piece.supplied[-1])
        parts.append(piece.take(np.isin(piece.t, t_eval)))
        if piece.status == INTERRUPTED:  # Ctrl-C: the segments done so far
            break
    return Trajectory.join(parts)


def scaled_atol(trajectory, rtol, groups=None):
    """Absolute tolerances of ``[q, f, W_dissipated, W_supplied]`` from a first pass's magnitudes
    (``rtol``/100 of each; the work integrals at ``rtol``/100 of the largest energy that went through).

    ``groups`` (index arrays of coordinates coupled by one solve, :meth:`CompiledModel.coupled_groups`)
    floor the displacements and the flows of each group of k coordinates at ``100 k ε`` of its largest
    member: a variable that stays near 0 (the far links of a chain over a short span) cannot be integrated
    more finely than the roundoff of the solve it comes from (which grows with the size of the coupled
    system), and asking for it takes tens of thousands of steps.

    >>> from types import SimpleNamespace
    >>> run = SimpleNamespace(q=np.array([[0.0, 1.0], [0.0, 1e-15]]), f=np.array([[0.0, 2.0], [0.0, 0.0]]),
    ...                       dissipated=None, t=np.array([0.0, 1.0]))
    >>> bool(scaled_atol(run, 1e-8)[1] < 1e-15), bool(scaled_atol(run, 1e-8, [np.arange(2)])[1] > 1e-14)
    (True, True)
    """
    y = np.vstack([trajectory.q, trajectory.f])
    scale = np.max(np.abs(y), axis=1)
    # variables held at ~0 (by a constraint) get a usable atol; a system at rest keeps 1e-12
    floor = np.max(scale) * 1e-6 if np.max(scale) > 0 else 1e-12 / max(rtol * 1e-2, 1e-300)
    atol = np.maximum(scale, floor) * rtol * 1e-2
    n = trajectory.q.shape[0]
    for group in groups or ():
        for rows in (group, n + group):  # displacements and flows apart (their units differ)
            atol[rows] = np.maximum(atol[rows], 100 * len(group) * np.finfo(float).eps * np.max(scale[rows]))
    if trajectory.dissipated is None or not trajectory.t.size:
        return atol
    energy = max(np.max(np.abs(trajectory.dissipated)), np.max(np.abs(trajectory.supplied)))
    return np.r_[atol, np.full(2, max(energy * rtol * 1e-2, 1e-14))]
