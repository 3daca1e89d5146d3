"""The mechanics room's rows of the path table: ``recursive`` (opt-in) and ``projection``.

``projection`` integrates the index-1 form with an explicit Runge–Kutta method and projects onto the
constraints; ``method="auto"`` gives it a model whose constrained mass matrix is regular and whose index-1
ODE is not stiff at the consistent start. ``recursive`` integrates a planar or spatial tree (or closed chain)
in joint coordinates with the O(n) right-hand side of :mod:`netdyn.recursive`; ``method="auto"`` asks it
first and it takes a spatial network the recursive tree reads whole
(:func:`~netdyn.numerics.mechanics.recursive.auto_verdict` says why not otherwise).

>>> PROJECTION.symbolic, RECURSIVE.auto
(True, True)
"""
from __future__ import annotations

from netdyn.numerics.dae.initial import refuse_projection
from netdyn.numerics.dae.start import DEFAULT_RTOL, STIFFNESS_RATIO
from netdyn.numerics.integrators.driver import run_symbolic, step_bound
from netdyn.numerics.integrators.options import check_compiled_loop, check_recursive_params
from netdyn.numerics.integrators.path import Path, Verdict

SINGULAR = "the constrained mass matrix is singular (flows without inertia)"


def _projection_accepts(problem, start):
    if not start.kkt_regular:
        return Verdict(False, SINGULAR)
    if problem.named:
        return Verdict(True, "method='projection' was named; regular constrained mass matrix")
    if start.stiff:
        return Verdict(False, f"stiff: fastest decay rate × span = {start.stiffness:.3g} > {STIFFNESS_RATIO:g}",
                       hard=False)
    return Verdict(True, "regular constrained mass matrix, not stiff"
                   + ("" if start.stiffness is not None else " (stiffness not tested above 400 states)"))


def projection_class(compiled_loop, progress):
    """The projection integrator's class: the compiled loop when asked for (``"auto"``: when it is cached;
    by default ``"auto"`` unless a progress callback wants the Python loop's every step)."""
    from netdyn.numerics.mechanics.projection import Projection  # (here: its KKT kernels import numba)
    if compiled_loop is None:
        compiled_loop = "auto" if progress is None else False
    if compiled_loop is False:
        return Projection
    from netdyn.numerics.mechanics.compiled_projection import CompiledProjection, loop_cached  # imports numba
    return CompiledProjection if compiled_loop is True or loop_cached() else Projection


def _projection_run(problem, start, plan):
    integrator = projection_class(problem.compiled_loop, problem.progress)(
        start.cm, start.p, problem.solver or "DOP853", step_bound(problem, start.cm),
        problem.watch_singularities is not False)
    check_compiled_loop(problem.asked["compiled_loop"], integrator, problem.progress)
    return run_symbolic(problem, start, integrator, "projection")


def _projection_refuse(problem, start, verdict):
    refuse_projection(start.cm)  # names the flows without inertia


def _recursive_accepts(problem, start):
    if problem.named:
        return Verdict(True, "method='recursive' was named: joint coordinates, the O(n) right-hand side of "
                             "netdyn.recursive")
    system = problem.system
    if hasattr(system, "elements") and not getattr(system, "bodies", True):
        # one-dimensional elements only (a circuit): never a tree of bodies; declined without loading the
        # recursive algorithms (numba and llvmlite: about 50 MB and a second of a circuit run's imports)
        return Verdict(False, "a network without bodies: the recursive path integrates trees of bodies",
                       hard=False, quiet=True)
    from netdyn.numerics.mechanics.recursive import auto_verdict
    ok, reason = auto_verdict(problem)
    # a model, a circuit or a planar network was never a candidate: no news in sol.method.declined
    quiet = not ok and not _spatial_network(problem.system)
    return Verdict(ok, reason, hard=False, quiet=quiet)


def _spatial_network(system):
    from netdyn.graph.spatial import is_spatial
    return hasattr(system, "bodies") and hasattr(system, "elements") and is_spatial(system)


def _recursive_run(problem, start, plan):
    from netdyn.numerics.mechanics.recursive import simulate_recursive
    system = problem.system
    check_recursive_params(getattr(system, "metadata", {}).get("network", system), problem.params)
    return simulate_recursive(system, problem.t_span, problem.q0, problem.f0, problem.params, problem.t_eval,
                              problem.rtol_or(DEFAULT_RTOL), problem.atol, problem.guess, problem.max_step,
                              problem.progress)


PROJECTION = Path("projection", _projection_accepts, _projection_run, _projection_refuse, symbolic=True,
                  integrates_with="a Runge–Kutta method with projection onto the constraints")
RECURSIVE = Path("recursive", _recursive_accepts, _recursive_run,
                 integrates_with="DOP853 in joint coordinates")
