"""``simulate``: one entry over the paths, like ``scipy.integrate.solve_ivp``.

The call becomes one immutable, validated :class:`~netdyn.numerics.problem.Problem`; a netlist with a
``.tran`` card and no initial values starts as SPICE starts it; then the path table
(:mod:`netdyn.numerics.paths`) picks the path and runs it.

>>> import sympy as sp
>>> from netdyn import LagrangianModel, coordinates, t, simulate
>>> x, = coordinates("x,")
>>> sol = simulate(LagrangianModel([x], T=x.diff(t)**2/2, V=x**2/2), (0, 3.14159265), q0={"x": 1})
>>> round(float(sol["x"][-1]), 6), sol.method, sol.method.reason
(-1.0, 'projection', 'regular constrained mass matrix, not stiff')
"""
from __future__ import annotations

import numpy as np

from netdyn.numerics import paths
from netdyn.numerics.dae.start import DEFAULT_RTOL, formulation_parameters
from netdyn.numerics.integrators.driver import integrate_segments, scaled_atol, source_breakpoints, source_period
from netdyn.numerics.problem import METHODS, Problem

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # names for the hints only (annotations are not evaluated)
    from netdyn.bondgraph.graph import BondGraph
    from netdyn.graph.network import Network
    from netdyn.lagrange.model import LagrangianModel
    from netdyn.numerics.results.solution import Solution
    from netdyn.hints import ArrayLike, Formulation, Initial, Params, PathArg, TimeSpan
    from collections.abc import Callable, Sequence
    from typing import Any
    from netdyn.numerics.results.events import Event

#: ``simulate`` and, for code written against 0.2, the helpers that lived here
__all__ = ["simulate", "solve", "METHODS", "DEFAULT_RTOL", "formulation_parameters", "integrate_segments",
           "scaled_atol", "source_breakpoints", "source_period"]


def simulate(system: Network | LagrangianModel | BondGraph, t_span: TimeSpan, q0: Initial | None = None,
             f0: Initial | None = None, params: Params | None = None, t_eval: ArrayLike | None = None,
             rtol: float | None = None, atol: float | None = None, method: str = "auto", solver: str | None = None,
             guess: Initial | None = None, max_step: float = np.inf, formulation: Formulation = None,
             progress: bool | str | Callable[..., Any] | None = None, watch_singularities: bool | None = None,
             compiled_loop: bool | None = None,
             events: Sequence[Event | str | Callable[..., Any]] | None = None,
             save: Sequence[str] | str | None = None, output: PathArg | None = None) -> Solution:
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
        :data:`~netdyn.numerics.circuit.nonlinearsim.CIRCUIT_RTOL`, 1e-7 (BDF2: 1e-8 costs it 2.1× the steps).
    atol : float or array of length 2n, optional
        Absolute tolerance of ``[q, f]``; ``None`` scales it to each variable's magnitude from a coarse
        first pass, so nanocoulombs and radians are integrated equally well.
    method : {"auto", "linear", "circuit", "projection", "ida", "recursive"}
        ``"auto"`` walks the path table (:mod:`netdyn.numerics.paths`) and takes the first path that accepts;
        ``sol.method`` names it, with its reason and the paths declined (``sol.method.explain()``). ``"circuit"`` takes a network linear
        except for nonlinear dissipators (diodes) to :mod:`netdyn.numerics.circuit.nonlinearsim`, and a circuit whose
        nonlinear resistors and capacitors are given by their dissipation or energy functions to
        :mod:`netdyn.numerics.circuit.laws` (each law compiled once, no symbolic model). ``"recursive"`` (opt-in) integrates a
        planar network of bodies, Revolute/Prismatic/Weld joints and Gravity in joint coordinates with the
        O(n) right-hand side of :mod:`netdyn.recursive` and returns a
        :class:`~netdyn.recursive.joint_space.JointSpaceSolution`.
    solver : {"DOP853", "RK45", "Radau"}, optional
        The Runge–Kutta method of ``"projection"`` (default DOP853). Options a path cannot honour
        (``solver`` on IDA, ``formulation`` on the recursive path or a model, ...) are an
        :class:`~netdyn.errors.OptionError` when the method is named, an
        :class:`~netdyn.errors.OptionWarning` when ``"auto"`` chose the path (:mod:`netdyn.numerics.integrators.options`).
    guess : dict, optional
        Starting values for the position solve (which assembly branch a linkage starts on). ``q0``,
        ``f0`` and ``guess`` also take planar joint coordinates (``"J3"``, ``"theta_J3"``) in any
        formulation (:mod:`netdyn.numerics.dae.initial`).
    max_step : float
        Largest step the integrator may take.
    formulation : str or dict, optional
        Passed to ``Network.model`` (see there): ``"branch"``, ``"loop"``, ``"node"``, planar
        ``"absolute"``/``"relative"``, or a dict by domain.
    progress : callable(t), optional
        Called with the time reached as the integration advances (``netdyn simulate`` draws a bar).
    watch_singularities : bool, optional
        ``"projection"`` (default ``True`` there) on a planar linkage watches the constraint Jacobian for
        a change point stepped over (:class:`~netdyn.numerics.dae.structure.SingularityWatch`: a cheap estimate each step, an SVD
        minimisation only when it falls steeply); ``False`` skips it for a chain known to stay regular.

    compiled_loop : {False, True, "auto"}, optional
        ``"projection"`` with DOP853 runs its whole stepping loop compiled, in chunks of ~50 ms that
        report ``progress`` and honour Ctrl-C in between
        (:mod:`~netdyn.numerics.mechanics.compiled_projection`, ~20× faster a step, same trajectory to
        1e-9). ``True`` uses it, paying numba's first compilation (~11 s of CPU, once per machine: it is
        cached on disk; ``netdyn warmup`` pays it ahead); ``"auto"`` uses it only when that cache is warm;
        ``False`` never. ``None`` (default) reads the environment variable ``NETDYN_COMPILED_LOOP``
        (``1``/``auto``/``0``); unset, it is ``"auto"`` without a ``progress`` callback and ``False`` with
        one (the Python loop reports every step; ``netdyn simulate`` passes ``"auto"``).

    events : list of Event, str or callable, optional
        Zero-crossing events (:class:`~netdyn.numerics.results.events.Event`: a condition such as
        ``"v(C1) - 2.5"`` or ``g(t, s)``, direction, terminal, action): located to the integrator's
        tolerance on every path, actions applied and the run restarted there; ``sol.events`` lists them
        (:mod:`netdyn.numerics.events`, docs/events.md). A network with switches (``S``/``W`` cards,
        :class:`~netdyn.components.electrical.Switch`) runs this way without being asked.
    save : list of str, optional
        SPICE's ``.save``: keep only these series (``"v(out)"``, ``"v(R1)"``, ``"i(L1)"``, coordinate names,
        ``"x_dot"``, multipliers); reading anything else is an :class:`~netdyn.errors.UnsavedError` saying to
        add it here. A netlist's ``.save`` cards give the default. On the linear path only the rows those
        series need are kept while integrating. ``None`` keeps everything: in memory up to
        ``NETDYN_OUTPUT_LIMIT`` bytes (default 256 MB), streamed to an HDF5 file above it, with an
        :class:`~netdyn.errors.OutputWarning` (:mod:`netdyn.numerics.results.store`).
    output : str or path, optional
        An HDF5 file (h5py) the linear path streams its outputs to, whatever their size; the solution reads
        it lazily with the same accessors.

    Returns
    -------
    Solution
        ``t``, ``q``, ``f``, ``acc``, ``lam``, ``mu`` and named access ``sol["x"]``; see
        :class:`~netdyn.numerics.results.solution.Solution`.

    >>> import netdyn
    >>> from netdyn.components.electrical import VoltageSource, Resistor, Capacitor
    >>> net = netdyn.Network("rc")
    >>> _ = net.add(VoltageSource("V1", "in", "0", 1.0), Resistor("R1", "in", "out", 1.0),
    ...             Capacitor("C1", "out", "0", 1.0))
    >>> sol = netdyn.simulate(net, (0, 1))
    >>> round(float(sol.voltage("C1")[-1]), 6), sol.method        # 1 - exp(-1), on the linear fast path
    (0.632121, 'linear')
    """
    problem = Problem.from_call(system, t_span, q0, f0, params, t_eval, rtol, atol, method, solver, guess, max_step,
                                formulation, progress, watch_singularities, compiled_loop, events, save, output)
    return solve(problem)


def solve(problem):
    """The solution of a :class:`~netdyn.numerics.problem.Problem`: the SPICE start where it applies, then
    the path table (through :mod:`netdyn.numerics.events` when there are events or switches)."""
    system = problem.system
    spice = problem.method != "recursive" and problem.q0 is None and problem.f0 is None \
        and getattr(system, "tran", None) is not None and hasattr(system, "elements")
    if spice:
        q0, f0 = _spice_start(problem)
        if getattr(q0, "network", None) is not None:  # flux circulating around loops of inductors (node fluxes)
            from netdyn.numerics.circuit.loop_flux import settle
            return settle(solve(problem.replace(system=q0.network, q0=dict(q0), f0=f0)), q0.offsets)
        problem = problem.replace(q0=q0, f0=f0)
    if problem.events or _switched(system):
        from netdyn.numerics.events import solve_with_events
        restart = (lambda pb: pb.replace(q0=dict(_spice_start(pb)[0]), f0=_spice_start(pb)[1])) if spice else None
        return solve_with_events(problem, problem.events, restart)
    return paths.run(problem)


def _spice_start(problem):
    from netdyn.numerics.circuit.operating_point import spice_initial_state  # a netlist starts as SPICE does
    return spice_initial_state(problem.system, problem.formulation,
                               linear_jump=problem.method in ("auto", "linear") and not problem.params)


def _switched(system):
    """Whether a network holds switches (elements with a ``closed`` state) or friction contacts that stick."""
    elements = getattr(system, "elements", None)
    return isinstance(elements, dict) and any(hasattr(el, "closed") or getattr(el, "switches", False)
                                              for el in elements.values())
