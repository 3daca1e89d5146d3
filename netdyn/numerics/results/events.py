"""Events: zero-crossing conditions on named quantities, and what happened at each (``sol.events``).

An :class:`Event` is ``solve_ivp``'s event with names: a condition ``g`` (a string of named series such as
``"v(C1) - 2.5"``, read safely by :func:`~netdyn.lagrange.exprtext.parse_expression`, never ``eval``; or a
callable ``g(t, s)`` where ``s["v(C1)"]`` reads a named quantity at ``t``), a ``direction`` (``+1``: only
when ``g`` rises through zero, ``-1``: falls, ``0``: either), ``terminal`` (stop there; an int *n*: stop
at the *n*-th occurrence) and an ``action`` done at the located time before the integration restarts:

* ``"stop"`` — the same as ``terminal=True``;
* a dict of changes — an element's or parameter's name to a new value (``{"R1": 5.0}``), a
  :class:`~netdyn.components.electrical.Switch`'s name to ``True``/``False`` (closed/open), and
  ``"q0"``/``"f0"`` to dicts that re-initialise coordinates or flows by name (an impact law sets a
  velocity this way);
* a callable ``action(t, s)`` that returns such a dict.

Each located crossing is an :class:`EventRecord` on ``sol.events``: time, event name, direction, the state
just before and just after (dicts of coordinates and flows by name) and the energy lost in the jump if the
action forced one (:mod:`netdyn.numerics.events` runs it).

>>> ev = Event("v(C1) - 2.5", direction=1, terminal=True)
>>> ev.name, ev.names()
('v(C1) - 2.5', ('v(C1)',))
>>> ev.value(0.0, {"v(C1)": 3.0})
0.5
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np
import sympy as sp

from netdyn.errors import IntegrationError

__all__ = ["Event", "EventRecord", "as_events"]

_SERIES = re.compile(r"\b([vifepq])\(\s*([^()]+?)\s*\)")


@dataclass(frozen=True)
class Event:
    """A zero-crossing event of ``simulate(..., events=[...])``.

    ``condition``: a string of named series (``"v(C1) - 2.5"``, ``"x"``, ``"x_dot"``, ``"t - 0.3"``) or a
    callable ``g(t, s)`` with ``s[name]`` the named quantity at ``t``. ``direction``: +1, -1 or 0 (as
    ``solve_ivp``). ``terminal``: ``True`` stops at the first occurrence, an int *n* at the *n*-th.
    ``action``: ``None``, ``"stop"``, a dict of changes or a callable ``(t, s) -> dict`` (module docstring).

    >>> import netdyn
    >>> from netdyn.components.electrical import VoltageSource, Resistor, Capacitor
    >>> net = netdyn.Network("rc")
    >>> _ = net.add(VoltageSource("V1", "in", "0", 5.0), Resistor("R1", "in", "out", 1e3), Capacitor("C1", "out", "0", 1e-6))
    >>> sol = netdyn.simulate(net, (0, 5e-3), events=[netdyn.Event("v(C1) - 2.5", direction=1, terminal=True)])
    >>> ev = sol.events[0]
    >>> round(ev.t / (1e-3 * 0.6931471805599453), 9), ev.name, ev.direction, round(float(sol.t[-1]), 12) == round(ev.t, 12)
    (1.0, 'v(C1) - 2.5', 1, True)
    """

    condition: Any
    name: str | None = None
    direction: int = 0
    terminal: Any = False
    action: Any = None
    _g: Callable = field(default=None, repr=False, compare=False)
    _names: tuple = field(default=(), repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.direction not in (-1, 0, 1):
            raise IntegrationError(f"event {self.name or self.condition!r}: direction must be -1, 0 or +1, "
                                   f"got {self.direction!r}")
        if not isinstance(self.terminal, (bool, int, np.integer)) or self.terminal < 0:
            raise IntegrationError(f"event {self.name or self.condition!r}: terminal must be True/False or a "
                                   f"positive count, got {self.terminal!r}")
        if not (self.action is None or self.action == "stop" or isinstance(self.action, dict)
                or callable(self.action)):
            raise IntegrationError(f"event {self.name or self.condition!r}: action must be None, 'stop', a dict "
                                   "of changes or a callable (t, s) -> dict")
        if isinstance(self.condition, str):
            g, names = _compile(self.condition)
            object.__setattr__(self, "_g", g)
            object.__setattr__(self, "_names", names)
            if self.name is None:
                object.__setattr__(self, "name", self.condition)
        elif callable(self.condition):
            object.__setattr__(self, "_g", self.condition)
            if self.name is None:
                object.__setattr__(self, "name", getattr(self.condition, "__name__", "event"))
        else:
            raise IntegrationError(f"an event condition is a string such as 'v(C1) - 2.5' or a callable "
                                   f"g(t, s); got {type(self.condition).__name__}")

    def names(self) -> tuple:
        """The named series a string condition reads (empty for a callable)."""
        return self._names

    def value(self, t: float, s: Any) -> float:
        """``g(t, s)`` as a float (``s[name]``: the named quantity at ``t``)."""
        return float(self._g(t, s))

    @property
    def stops_after(self) -> int:
        """How many occurrences end the run (0: never)."""
        if self.action == "stop":
            return 1
        return int(self.terminal) if self.terminal is not True else 1

    def changes(self, t: float, s: Any) -> dict:
        """The action's dict of changes at ``t`` (``{}`` for none or ``"stop"``)."""
        if self.action is None or self.action == "stop":
            return {}
        out = self.action(t, s) if callable(self.action) else self.action
        if not isinstance(out, dict):
            raise IntegrationError(f"event {self.name!r}: its action returned {type(out).__name__}, not a dict of "
                                   "changes")
        return dict(out)


def _compile(text):
    """``g(t, s)`` from a condition string: each ``v(X)``/``i(X)``/... and each other name becomes a series
    read from ``s``; the text is parsed from a whitelist (:func:`~netdyn.lagrange.exprtext.parse_expression`)."""
    from netdyn.lagrange.exprtext import parse_expression
    series = {}

    def placeholder(m):
        key = f"{m.group(1)}({m.group(2)})"
        return series.setdefault(key, f"SERIESxx{len(series)}")

    plain = _SERIES.sub(placeholder, text)
    expr = parse_expression(plain, where=f"event {text!r}")
    if not isinstance(expr, sp.Expr):
        raise IntegrationError(f"event {text!r}: a condition is a number-valued expression whose zero is the "
                               "event (write 'v(C1) - 2.5', not 'v(C1) > 2.5')")
    back = {v: k for k, v in series.items()}
    symbols = sorted(expr.free_symbols, key=lambda s: s.name)
    names = tuple(back.get(s.name, s.name) for s in symbols)
    f = sp.lambdify(symbols, expr, modules="math")
    reads = tuple(None if n == "t" else n for n in names)

    def g(t, s):
        return f(*[t if n is None else s[n] for n in reads])
    return g, tuple(n for n in names if n != "t")


@dataclass(frozen=True)
class EventRecord:
    """One located event on ``sol.events``: ``t``, ``name``, ``direction`` of the crossing (+1 rising, -1
    falling), ``before``/``after`` (coordinates and flows by name just before and after the action),
    ``changes`` made, ``jump`` (the impulse the action forced, ``None`` if the state stayed consistent),
    ``energy_lost`` in that jump and ``energy_supplied`` by the sources across it (joules, 0 without one);
    at an impact of contacts, ``impacts`` lists each contact's part (contact, normal velocity before and
    after, impulse, whether it stays closed: :class:`~netdyn.numerics.nonsmooth.impact.Impact`).

    >>> EventRecord(1.0, "apex", -1, {"x": 1.0}, {"x": 1.0}).energy_lost
    0.0
    """

    t: float
    name: str
    direction: int
    before: dict
    after: dict
    changes: dict = field(default_factory=dict)
    jump: str | None = None
    energy_lost: float = 0.0
    energy_supplied: float = 0.0
    impacts: tuple = ()


def as_events(events):
    """``events`` as a tuple of :class:`Event` (a string or callable is wrapped with the defaults)."""
    if events is None:
        return ()
    if isinstance(events, (Event, str)) or callable(events):
        events = [events]
    out = []
    for e in events:
        out.append(e if isinstance(e, Event) else Event(e))
    return tuple(out)
