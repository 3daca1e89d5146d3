"""The table of paths ``simulate`` walks, and the walk: which path takes a problem, and why.

=========== ============================================================ ===============================
path        takes                                                        room
=========== ============================================================ ===============================
recursive   a spatial network the recursive tree reads (planar: named)  :mod:`~netdyn.numerics.mechanics`
linear      every element linear with numeric values, index one          :mod:`~netdyn.numerics.circuit`
circuit     linear except for diodes or energy/dissipation laws          :mod:`~netdyn.numerics.circuit`
projection  a regular constrained mass matrix, not stiff                 :mod:`~netdyn.numerics.mechanics`
ida         every model                                                  :mod:`~netdyn.numerics.ida`
=========== ============================================================ ===============================

``method="auto"`` asks each path in turn and runs the first that accepts; the
symbolic paths share one consistent start (:class:`~netdyn.numerics.dae.start.SymbolicStart`). A named
method asks only its own path, which runs or says why not (its own error). The answer is a
:class:`~netdyn.numerics.integrators.path.Method` on ``sol.method``: the path, its reason, and the paths
declined before it with theirs; ``netdyn info`` prints the same walk (:func:`method_for`). A new path is
a module in its room and one row here.

>>> from netdyn import LagrangianModel, coordinates, t
>>> x, = coordinates("x,")
>>> choice = method_for(LagrangianModel([x], T=x.diff(t)**2/2, V=x**2/2))
>>> choice.name, choice.reason
('projection', 'regular constrained mass matrix, not stiff')
"""
from __future__ import annotations

from dataclasses import dataclass

from netdyn.numerics.circuit.path import CIRCUIT, LINEAR
from netdyn.numerics.dae.start import SymbolicStart, kkt_regular, stiffness
from netdyn.numerics.ida.path import IDA
from netdyn.numerics.integrators.options import check_path
from netdyn.errors import OptionWarning
from netdyn.numerics.integrators.path import Method
from netdyn.numerics.mechanics.path import PROJECTION, RECURSIVE
from netdyn.numerics.problem import Problem

__all__ = ["PATHS", "BY_NAME", "INTEGRATORS", "walk", "run", "Choice", "method_for", "kkt_regular", "stiffness"]

#: the rows, in the order ``method="auto"`` asks them
PATHS = (RECURSIVE, LINEAR, CIRCUIT, PROJECTION, IDA)
BY_NAME = {row.name: row for row in PATHS}
#: 0.2's name of the table (the integrator family by name)
INTEGRATORS = BY_NAME


def walk(problem, start=None):
    """``(path, verdict, declined, start)``: the path that takes ``problem``, its :class:`Verdict`, the
    ``(name, reason)`` of each path declined before it, and the symbolic start if one was made.

    A named path that cannot run raises its own error; options it cannot honour raise (named) or warn
    (``auto``), before any work for a named symbolic path.
    """
    rows = [BY_NAME[problem.method]] if problem.named else [row for row in PATHS if row.auto]
    declined = []
    for row in rows:
        if row.symbolic:
            if problem.named:
                check_path(row.name, problem.method, **problem.asked)  # before any work
            start = start or SymbolicStart(problem)
        verdict = row.accepts(problem, start if row.symbolic else None)
        if verdict.ok or (problem.named and not verdict.hard):
            if not (row.symbolic and problem.named):
                check_path(row.name, problem.method, **problem.asked)
            return row, verdict, declined, start
        if problem.named:
            row.refuse(problem, start, verdict)
        if not verdict.quiet:
            declined.append((row.name, verdict.reason))
    raise AssertionError("the last path of the table takes every problem")  # pragma: no cover


def run(problem):
    """The solution of ``problem`` on the path :func:`walk` picks, ``sol.method`` saying which and why."""
    row, verdict, declined, start = walk(problem)
    sol = row.run(problem, start, verdict.plan)
    sol.method = Method(row.name, verdict.reason, declined)
    if problem.output is not None and getattr(sol, "storage", None) is None:
        import warnings
        warnings.warn(f"output={str(problem.output)!r} streams the linear path's outputs; the {row.name!r} path "
                      "kept them in memory and wrote no file", OptionWarning, stacklevel=3)
    if problem.save is not None and getattr(sol, "_saved", None) is None:
        sol.keep_only(problem.save)  # (the linear path kept only the rows they need while integrating)
    return sol


@dataclass(frozen=True)
class Choice:
    """The path ``simulate`` takes and why (``netdyn info`` prints ``reason``); ``declined`` as on
    :class:`~netdyn.numerics.integrators.path.Method`."""

    name: str
    reason: str
    declined: tuple = ()


def method_for(system, t_span=(0.0, 1.0), formulation=None, guess=None):
    """The :class:`Choice` ``simulate(system, t_span)`` makes with ``method="auto"`` and no ``params``: the
    same walk, without running (a locked mechanism, which ``simulate`` refuses, is described as given)."""
    problem = Problem.from_call(system, t_span, guess=guess, formulation=formulation)
    row, verdict, declined, _ = walk(problem, SymbolicStart(problem, tolerate_locked=True))
    return Choice(row.name, verdict.reason, tuple(declined))

