"""``simulate``: one entry over the integrator family, like ``scipy.integrate.solve_ivp``.

It completes the initial conditions, picks an integrator
(:func:`~netdyn.numerics.choice.choose_method`), splits the span at source
corners (PULSE/PWL breakpoints, as SPICE does), scales the absolute tolerance
per variable, and returns a :class:`~netdyn.numerics.solution.Solution`.

>>> import sympy as sp
>>> from netdyn import LagrangianModel, coordinates, t, simulate
>>> x, = coordinates("x,")
>>> sol = simulate(LagrangianModel([x], T=x.diff(t)**2/2, V=x**2/2), (0, 3.14159265), q0={"x": 1})
>>> round(float(sol["x"][-1]), 6), sol.method
(-1.0, 'projection')
"""
from __future__ import annotations

import os

import numpy as np
import sympy as sp

from netdyn.errors import IntegrationError
from netdyn.graph.network import as_model
from netdyn.lagrange.sources import breakpoints
from netdyn.numerics.choice import choose_method, kkt_regular
from netdyn.numerics.compiled import compile_model
from netdyn.numerics.initial import consistent_initial_conditions, integrator_tolerance, refuse_projection
from netdyn.numerics.sensed import sensed_atol, sensed_coordinates
from netdyn.numerics.integrators import Projection
from netdyn.numerics.integrators.sparse_ida import ida_for
from netdyn.numerics.integrators.projection import SOLVERS
from netdyn.numerics.linearsim import explain_not_linear, simulate_linear, try_linear
from netdyn.numerics.options import (check_arguments, check_compiled_loop, check_formulation, check_path,
                                     check_recursive_params)
from netdyn.numerics.solution import Solution
from netdyn.numerics.structure import prepare
from netdyn.numerics.trajectory import INTERRUPTED, Trajectory
from netdyn.symbols import t
from netdyn.validate import conditioning_hint, parameter_values, requirements

METHODS = ("auto", "linear", "circuit", "projection", "ida", "recursive")
#: the relative tolerance of every path but the circuit path when ``rtol`` is not given
DEFAULT_RTOL = 1e-8


def simulate(system, t_span, q0=None, f0=None, params=None, t_eval=None, rtol=None, atol=None,
             method="auto", solver=None, guess=None, max_step=np.inf, formulation=None, progress=None,
             watch_singularities=None, compiled_loop=None):
    """Integrate a model or a network over ``t_span``.

    Parameters
    ----------
    system : Network or LagrangianModel
    t_span : (t0, t1) or None
        ``None`` takes ``(0, tstop)`` from the network's ``.tran`` card (netlists).
    q0, f0 : dict, optional
        Initial displacements / flows by coordinate name (``"theta_crank"``; flows also as
        ``"theta_crank_dot"``). What is not given is completed consistently with the constraints
        (Gauss–Newton holding the given values; flows without inertia first, inertial flows 0 unless
        the constraints need them).
    params : dict, optional
        Parameter values overriding the model's (names or symbols); inputs (undefined functions of t)
        take a number, an expression of ``netdyn.t`` or a callable. Giving ``params`` takes the symbolic path.
    t_eval : array_like, optional
        Output times inside the span; default 1001 equally spaced times.
    rtol : float, optional
        Relative tolerance; default 1e-8, except on the circuit path (diodes), whose default is
        :data:`~netdyn.numerics.nonlinearsim.CIRCUIT_RTOL`, 1e-7 (BDF2: 1e-8 costs it 2.1× the steps).
    atol : float or array of length 2n, optional
        Absolute tolerance of ``[q, f]``; ``None`` scales it to each variable's magnitude from a coarse
        first pass, so nanocoulombs and radians are integrated equally well.
    method : {"auto", "linear", "circuit", "projection", "ida", "recursive"}
        ``"auto"`` applies :func:`~netdyn.numerics.choice.choose_method`; see
        :mod:`netdyn.numerics.integrators` for what each method is. ``"circuit"`` takes a network linear
        except for nonlinear dissipators (diodes) to :mod:`netdyn.numerics.nonlinearsim`. ``"recursive"`` (opt-in) integrates a
        planar network of bodies, Revolute/Prismatic/Weld joints and Gravity in joint coordinates with the
        O(n) right-hand side of :mod:`netdyn.recursive` and returns a
        :class:`~netdyn.recursive.joint_space.JointSpaceSolution`.
    solver : {"DOP853", "RK45", "Radau"}, optional
        The Runge–Kutta method of ``"projection"`` (default DOP853). Options a path cannot honour
        (``solver`` on IDA, ``formulation`` on the recursive path or a model, ...) are an
        :class:`~netdyn.errors.OptionError` when the method is named, an
        :class:`~netdyn.errors.OptionWarning` when ``"auto"`` chose the path (:mod:`netdyn.numerics.options`).
    guess : dict, optional
        Starting values for the position solve (which assembly branch a linkage starts on). ``q0``,
        ``f0`` and ``guess`` also take planar joint coordinates (``"J3"``, ``"theta_J3"``) in any
        formulation (:mod:`netdyn.numerics.initial`).
    max_step : float
        Largest step the integrator may take.
    formulation : str or dict, optional
        Passed to ``Network.model`` (see there): ``"branch"``, ``"loop"``, ``"node"``, planar
        ``"absolute"``/``"relative"``, or a dict by domain.
    progress : callable(t), optional
        Called with the time reached as the integration advances (``netdyn simulate`` draws a bar).
    watch_singularities : bool, optional
        ``"projection"`` (default ``True`` there) on a planar linkage watches the constraint Jacobian for
        a change point stepped over (:class:`~netdyn.numerics.structure.SingularityWatch`: a cheap estimate each step, an SVD
        minimisation only when it falls steeply); ``False`` skips it for a chain known to stay regular.

    compiled_loop : {False, True, "auto"}, optional
        ``"projection"`` with DOP853 runs its whole stepping loop compiled, in chunks of ~50 ms that
        report ``progress`` and honour Ctrl-C in between
        (:mod:`~netdyn.numerics.integrators.compiled_projection`, ~20× faster a step, same trajectory to
        1e-9). ``True`` uses it, paying numba's first compilation (~11 s of CPU, once per machine: it is
        cached on disk; ``netdyn warmup`` pays it ahead); ``"auto"`` uses it only when that cache is warm;
        ``False`` never. ``None`` (default) reads the environment variable ``NETDYN_COMPILED_LOOP``
        (``1``/``auto``/``0``); unset, it is ``"auto"`` without a ``progress`` callback and ``False`` with
        one (the Python loop reports every step; ``netdyn simulate`` passes ``"auto"``).

    Returns
    -------
    Solution
        ``t``, ``q``, ``f``, ``acc``, ``lam``, ``mu`` and named access ``sol["x"]``; see
        :class:`~netdyn.numerics.solution.Solution`.
    """
    asked = dict(solver=solver, watch_singularities=watch_singularities, compiled_loop=compiled_loop, guess=guess)
    compiled_loop = _compiled_loop_option(compiled_loop)
    if method not in METHODS:
        raise IntegrationError(f"unknown method {method!r}; use one of {', '.join(map(repr, METHODS))}")
    if solver is not None and solver not in SOLVERS:
        raise IntegrationError(f"unknown solver {solver!r}; use one of {sorted(SOLVERS)}")
    t_span = _span(system, t_span, formulation)
    check_formulation(system, formulation, method)
    circuit_rtol = rtol  # None: the circuit path's own default
    rtol = DEFAULT_RTOL if rtol is None else rtol
    check_arguments(rtol, max_step, progress)
    if method == "recursive":
        check_path("recursive", method, **asked)
        check_recursive_params(getattr(system, "metadata", {}).get("network", system), params)
        from netdyn.numerics.integrators.recursive import simulate_recursive
        return simulate_recursive(system, t_span, q0, f0, params, _output_times(t_span, t_eval), rtol, atol, guess,
                                  max_step, progress)
    if q0 is None and f0 is None and getattr(system, "tran", None) is not None and hasattr(system, "elements"):
        from netdyn.numerics.operating_point import spice_initial_state  # a netlist starts as SPICE starts it
        q0, f0 = spice_initial_state(system, formulation, linear_jump=method in ("auto", "linear") and not params)
        if getattr(q0, "network", None) is not None:  # flux circulating around loops of inductors (node fluxes)
            from netdyn.numerics.loop_flux import settle
            return settle(simulate(q0.network, t_span, dict(q0), f0, params, t_eval, circuit_rtol, atol, method,
                                   solver, guess, max_step, formulation, progress, watch_singularities,
                                   compiled_loop), q0.offsets)
    if method in ("auto", "linear") and not params:
        lin = try_linear(system, formulation)
        if lin is not None:
            check_path("linear", method, **asked)
            return _explained(simulate_linear, system, system, t_span, q0, f0, _output_times(t_span, t_eval), rtol,
                              atol, max_step, formulation, lin, progress)
    if method == "circuit" and params:
        raise IntegrationError("method='circuit' runs the network's own numeric values; params= overrides need "
                               "the symbolic path: method='auto', 'projection' or 'ida'")
    if method in ("auto", "circuit") and not params:
        from netdyn.numerics.nonlinearsim import CIRCUIT_RTOL, simulate_circuit, try_circuit  # Newton, BDF
        circuit = try_circuit(system, formulation)
        if circuit is not None:
            check_path("circuit", method, **asked)
            return simulate_circuit(system, t_span, q0, f0, _output_times(t_span, t_eval), rtol=circuit_rtol or CIRCUIT_RTOL,
                                    atol=atol, max_step=max_step, circuit=circuit, progress=progress)
        if method == "circuit":
            raise IntegrationError("method='circuit' needs a network that is linear except for nonlinear "
                                   "dissipators (diodes), with numeric values")
    if method == "linear":
        explain_not_linear(system, formulation, params)
    if method != "auto":
        check_path(method, method, **asked)  # before any work: an option the named method cannot honour
    model = as_model(system, formulation)
    cm = compile_model(model)
    parameter_values(params, requirements(model))  # params= overrides get the constructors' sign checks
    params = formulation_parameters(model, cm, params)
    p = cm.parameter_vector(params)
    t0, t1 = t_span
    requested = _output_times(t_span, t_eval)
    q, f = consistent_initial_conditions(cm, t0, q0, f0, p, guess=guess, tol=integrator_tolerance(rtol, atol))
    model, cm, p = prepare(model, cm, t0, q, p, params)  # redundant constraints out, reported in metadata
    if method == "auto":
        method = choose_method(cm, t0, t1, q, f, p).name
        check_path(method, "auto", **asked)
    elif method == "projection" and not kkt_regular(cm, t0, q, f, p):
        refuse_projection(cm)  # before integrating: name the flows without inertia
    if not np.isfinite(max_step):  # steps of a whole number of a sine's periods would see it as constant
        max_step = source_period(cm) / 8
    integrator = _projection(compiled_loop, progress)(cm, p, solver or "DOP853", max_step,
                                                      watch_singularities is not False) \
        if method == "projection" else ida_for(cm, p, max_step)
    if method == "projection":
        check_compiled_loop(asked["compiled_loop"], integrator, progress)
    _check_atol(atol, cm.n)
    if sensed_coordinates(model):  # F, H read a rate of the charges: their atol in amperes
        atol = sensed_atol(atol, 2 * cm.n, range(cm.n), requested)
    corners = source_breakpoints(cm, t0, t1)
    t_eval = requested.copy()
    for c in corners:  # output times a hair from a corner are the corner (IDA cannot start that close)
        t_eval[np.abs(t_eval - c) < 1e-9 * (t1 - t0)] = c
    run = lambda tol, at, te, pr=None: integrate_segments(integrator, [t0] + corners + [t1], q, f, te, tol, at, pr)
    if atol is None:
        # magnitudes from a first pass under (nearly) pure relative error control; a small fixed atol:
        # pure relative control fails on variables held at 0 by constraints (roundoff noise) and in
        # IDA's first steps from exact zeros; magnitudes are all this pass is for
        # (the work integrals out of its error test: their scale is what it finds out)
        coarse = _explained(run, model, 1e-6, np.r_[np.full(2 * cm.n, 1e-12), 1e6, 1e6], np.linspace(t0, t1, 201))
        if coarse.status == INTERRUPTED:  # Ctrl-C during the first pass: return what it reached
            return Solution(model, cm, p, coarse, method=method)
        atol = scaled_atol(coarse, rtol, cm.coupled_groups())
    trajectory = _explained(run, model, rtol, atol, t_eval, progress)
    if trajectory.t.shape == requested.shape:
        trajectory.t = requested  # report the times asked for (a snapped one differs by < 1e-9 of the span)
    return Solution(model, cm, p, trajectory, method=method)


def formulation_parameters(model, cm, params):
    """``params`` without the network's symbols that the formulation left out of the model.

    A resistor alone in a cut-set (a bridge to a sub-circuit) carries no loop current: the loop
    formulation has no variable through it and no term with its value, so its symbol is a parameter of
    the network but not of the model. Such a value changes nothing and is dropped; a name that is no
    symbol of the network at all stays an error (``ParameterError`` from ``parameter_vector``).

    >>> import sympy as sp
    >>> from netdyn import LagrangianModel, coordinates, t
    >>> from netdyn.numerics.compiled import compile_model
    >>> x, = coordinates("x,")
    >>> m = LagrangianModel([x], T=x.diff(t)**2/2)
    >>> formulation_parameters(m, compile_model(m), {"k": 1.0})    # not the network's: kept (and refused later)
    {'k': 1.0}
    """
    net = (getattr(model, "metadata", None) or {}).get("network")
    if not params or net is None:
        return params
    known = {str(s) for s in cm.parameters} | {str(s) for s in cm.inputs}
    of_network = set()
    for group in ("elements", "bodies"):
        for obj in (getattr(net, group, None) or {}).values():
            for v in (getattr(obj, "values", None) or {}).values():
                of_network |= {str(s) for s in getattr(v, "free_symbols", ())}
    return {k: v for k, v in params.items() if str(k) in known or str(k) not in of_network}


def _compiled_loop_option(value):
    if value is None:
        value = os.environ.get("NETDYN_COMPILED_LOOP", "").strip().lower()
        if not value:
            return None  # the default: see _projection
        value = {"1": True, "true": True, "yes": True, "auto": "auto", "0": False, "false": False, "no": False
                 }.get(value, value)
    if isinstance(value, str) and value == "auto":
        return value
    if value not in (True, False):
        raise IntegrationError(f"compiled_loop must be True, False or 'auto' (or NETDYN_COMPILED_LOOP 1/auto/0), "
                               f"got {value!r}")
    return bool(value)


def _projection(compiled_loop, progress):
    """The projection integrator's class: the compiled loop when asked for (``"auto"``: when it is cached;
    by default ``"auto"`` unless a progress callback wants the Python loop's every step)."""
    if compiled_loop is None:
        compiled_loop = "auto" if progress is None else False
    if compiled_loop is False:
        return Projection
    from netdyn.numerics.integrators.compiled_projection import CompiledProjection, loop_cached  # imports numba
    return CompiledProjection if compiled_loop is True or loop_cached() else Projection


def _explained(run, model, *args):
    """``run(*args)``; a failed integration names the elements whose extreme values make it ill-conditioned."""
    try:
        return run(*args)
    except IntegrationError as exc:
        hint = conditioning_hint(model)
        if not hint:
            raise
        raise IntegrationError(str(exc) + hint) from None


def _span(system, t_span, formulation):
    if t_span is None:
        tran = getattr(system, "tran", None) or getattr(getattr(system, "metadata", {}).get("network"), "tran", None)
        if not tran:
            raise IntegrationError("no t_span given and the network has no .tran card; pass t_span=(t0, t1)")
        t_span = (0.0, float(tran.tstop))
    try:
        t0, t1 = (float(x) for x in t_span)
    except (TypeError, ValueError):
        raise IntegrationError(f"t_span must be a pair of numbers (t0, t1), got {t_span!r}") from None
    if not (np.isfinite(t0) and np.isfinite(t1) and t1 > t0):
        raise IntegrationError(f"t_span must increase from a finite t0 to a finite t1, got {t_span}")
    return t0, t1


def _output_times(t_span, t_eval):
    t0, t1 = t_span
    if t_eval is None:
        return np.linspace(t0, t1, 1001)
    te = np.asarray(t_eval, dtype=float).ravel()
    if te.size == 0 or np.any(~np.isfinite(te)) or np.any(np.diff(te) < 0):
        raise IntegrationError("t_eval must be a non-empty, sorted array of finite times")
    span = t1 - t0
    if te[0] < t0 - 1e-12 * span or te[-1] > t1 + 1e-12 * span:
        raise IntegrationError(f"t_eval must lie inside t_span = ({t0:g}, {t1:g}); it spans "
                               f"[{te[0]:g}, {te[-1]:g}]")
    return np.clip(te, t0, t1)


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
    """Corners of the model's time functions (PULSE and PWL sources) inside ``(t0, t1)``.

    The integrators stop and restart there, as SPICE does, so no step straddles a kink.
    """
    found = set()
    for e in cm.time_expressions():
        e = sp.sympify(e)
        if t in e.free_symbols and e.has(sp.Piecewise, sp.Heaviside, sp.Function):
            found.update(breakpoints(e, t1, t0))
    return sorted(found)


def source_period(cm):
    """The shortest period of the sines and cosines of t in the model (``inf`` if none).

    A step-size controller that samples a sine only at its steps (BDF: IDA) can
    step a whole number of half periods from a zero of the sine to the next and
    see no input at all (a 100 Hz sine into an RC over 1,000 s came out as zero);
    ``simulate`` caps the step at an eighth of this period unless ``max_step`` is given.

    >>> import sympy as sp
    >>> from netdyn import LagrangianModel, coordinates, t
    >>> from netdyn.numerics.compiled import compile_model
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
