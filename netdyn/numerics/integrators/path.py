"""A path of ``simulate``: one row of the table in :mod:`netdyn.numerics.paths`.

A path says whether it takes a problem (:class:`Verdict`: yes or no, and why), runs it, and — when the
caller named it and it cannot — raises the error that says what to do instead. The symbolic paths
(``symbolic=True``) share one :class:`~netdyn.numerics.dae.start.SymbolicStart`, made by the front door
when the first of them asks; the others get ``None``.

>>> Verdict(False, "needs numeric values").ok
False
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable


@dataclass(frozen=True)
class Verdict:
    """A path's answer to a problem: ``ok``, the ``reason`` (said on ``sol.method`` and by ``netdyn info``),
    whether a ``no`` is ``hard`` (it cannot run) or a preference (``auto`` looks further, a caller who named
    the path gets it anyway), and what the path found on the way (``plan``, handed back to ``run``).
    ``quiet``: a no that is no news (the problem was never a candidate, as a circuit for the recursive path),
    left out of ``declined``."""

    ok: bool
    reason: str
    hard: bool = True
    plan: Any = None
    quiet: bool = False


def _never(problem, start, verdict):  # pragma: no cover - a path that can always run
    raise AssertionError(verdict.reason)


@dataclass(frozen=True)
class Path:
    """One way from a problem record to a solution.

    ``accepts(problem, start) -> Verdict``; ``run(problem, start, plan) -> solution``;
    ``refuse(problem, start, verdict)`` raises the error for a named path that cannot run. ``auto``: whether
    ``method="auto"`` may pick it (an opt-in path is tried only when named).
    """

    name: str
    accepts: Callable
    run: Callable
    refuse: Callable = _never
    symbolic: bool = False
    auto: bool = True
    integrates_with: str = field(default="", compare=False)


class Method(str):
    """The path a solution took — equal to its name (``sol.method == "ida"``) — and why: ``reason`` (the
    path's own) and ``declined``, the ``(path, why not)`` of each path tried before it.

    >>> m = Method("ida", "stiff", [("projection", "stiff: 3e+04 > 1e+03")])
    >>> m == "ida", m.reason, m.declined[0][0]
    (True, 'stiff', 'projection')
    """

    def __new__(cls, name, reason="", declined=()):
        self = super().__new__(cls, name)
        self.reason = reason
        self.declined = tuple(tuple(d) for d in declined)
        return self

    def explain(self):
        """One line a path: the paths declined and why, then the one taken."""
        return "\n".join([f"{name}: no — {why}" for name, why in self.declined] + [f"{self}: {self.reason}"])
