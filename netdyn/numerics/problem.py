"""The problem record: one ``simulate`` call, validated once, immutable.

:func:`~netdyn.numerics.simulate.simulate` turns its keywords into a :class:`Problem` before any work —
system, span, output times, initial values, parameters, tolerances, options — and every path reads that
record; none re-checks an argument. A step that changes the problem (the SPICE start fills ``q0``/``f0``)
makes a new record with :meth:`Problem.replace`.

>>> import netdyn
>>> from netdyn.components.electrical import Resistor, VoltageSource
>>> net = netdyn.Network()
>>> _ = net.add(VoltageSource("V1", "a", "0", 1.0), Resistor("R1", "a", "0", 2.0))
>>> pb = Problem.from_call(net, (0, 1), t_eval=[0, 0.5, 1])
>>> pb.t_span, pb.t_eval.tolist(), pb.method, pb.rtol_or(1e-8)
((0.0, 1.0), [0.0, 0.5, 1.0], 'auto', 1e-08)
>>> pb.replace(q0={"x": 1.0}).q0["x"]
1.0
"""
from __future__ import annotations

import dataclasses
import os
import re
from types import MappingProxyType
from typing import Any

import numpy as np

from netdyn.errors import IntegrationError
from netdyn.graph.assembly import fill as stored_assembly
from netdyn.numerics.integrators.options import check_arguments, check_formulation
from netdyn.numerics.results.events import as_events

#: the methods ``simulate`` knows (``"auto"`` walks the path table)
METHODS = ("auto", "linear", "circuit", "projection", "ida", "recursive")
#: the Runge–Kutta methods of the projection path
SOLVERS = ("DOP853", "RK45", "Radau")


@dataclasses.dataclass(frozen=True)
class Problem:
    """What to integrate and how, as the caller said it (``None``: not given).

    Fields cannot be reassigned; ``q0``, ``f0``, ``params`` and ``guess`` are copies of the caller's dicts
    (``q0``, ``f0`` and ``guess`` not given are the network's stored :class:`~netdyn.graph.assembly.Assembly`,
    :func:`netdyn.graph.assembly.fill`); ``t_eval`` holds the output times
    (1001 equally spaced ones when none were given); ``asked`` the options as given, for the paths' checks of
    what they honour (:mod:`netdyn.numerics.integrators.options`).
    """

    system: Any
    t_span: tuple
    t_eval: np.ndarray
    q0: Any = None
    f0: Any = None
    params: Any = None
    rtol: float | None = None
    atol: Any = None
    method: str = "auto"
    solver: str | None = None
    guess: Any = None
    max_step: float = np.inf
    formulation: Any = None
    progress: Any = None
    watch_singularities: bool | None = None
    compiled_loop: Any = None
    asked: Any = None
    events: tuple = ()
    save: Any = None
    output: Any = None

    @classmethod
    def from_call(cls, system, t_span, q0=None, f0=None, params=None, t_eval=None, rtol=None, atol=None,
                  method="auto", solver=None, guess=None, max_step=np.inf, formulation=None, progress=None,
                  watch_singularities=None, compiled_loop=None, events=None, save=None, output=None):
        """The record of a ``simulate`` call (same keywords), every argument checked here; ``q0``, ``f0`` and
        ``guess`` the caller did not give come from the network's assembly (``net.assembly``).

        >>> from netdyn.linkages import four_bar
        >>> pb = Problem.from_call(four_bar(), (0, 1))
        >>> sorted(pb.guess)[:2], pb.q0, pb.asked["guess"]
        (['theta_crank', 'theta_rocker'], None, None)
        """
        asked = MappingProxyType(dict(solver=solver, watch_singularities=watch_singularities,
                                      compiled_loop=compiled_loop, guess=guess))
        compiled_loop = compiled_loop_option(compiled_loop)
        if method not in METHODS:
            raise IntegrationError(f"unknown method {method!r}; use one of {', '.join(map(repr, METHODS))}")
        if solver is not None and solver not in SOLVERS:
            raise IntegrationError(f"unknown solver {solver!r}; use one of {sorted(SOLVERS)}")
        t_span = span(system, t_span)
        check_formulation(system, formulation, method)
        q0, f0, guess = stored_assembly(system, q0, f0, guess)  # what the caller left out
        check_arguments(DEFAULT_CHECK_RTOL if rtol is None else rtol, max_step, progress)
        return cls(system, t_span, output_times(t_span, t_eval), _frozen(q0), _frozen(f0), _frozen(params), rtol,
                   atol, method, solver, _frozen(guess), max_step, formulation, progress, watch_singularities,
                   compiled_loop, asked, as_events(events),
                   save_list(save if save is not None else getattr(system, "save", None)), output)

    def replace(self, **changes):
        """A new record with ``changes`` (dicts copied)."""
        changes = {k: _frozen(v) if k in ("q0", "f0", "params", "guess") else v for k, v in changes.items()}
        return dataclasses.replace(self, **changes)

    def rtol_or(self, default):
        """``rtol`` as given, else the path's own ``default``."""
        return default if self.rtol is None else self.rtol

    @property
    def named(self):
        """Whether the caller named the path (``method`` other than ``"auto"``)."""
        return self.method != "auto"


DEFAULT_CHECK_RTOL = 1e-8  # what an absent rtol is checked as (every path's default is valid)


def _frozen(value):
    """A plain dict copied, so the record never aliases (or is changed through) the caller's dict; other
    values (a SPICE start's state, which carries its network) as they are."""
    return dict(value) if type(value) is dict else value


def save_list(save):
    """``save=`` as a tuple of names (a string is split at ``;``, ``,`` and spaces), or ``None`` (keep all).

    >>> save_list("v(out); i(L1)"), save_list(None), save_list(["v(a)"])
    (('v(out)', 'i(L1)'), None, ('v(a)',))
    """
    if save is None:
        return None
    if isinstance(save, str):
        save = [s for s in re.split(r"[;,\s]+", save) if s]
    try:
        names = tuple(save)
    except TypeError:
        raise IntegrationError(f"save= must be a list of names such as ['v(out)', 'i(L1)'], got {save!r}") from None
    bad = [nm for nm in names if not isinstance(nm, str) or not nm.strip()]
    if bad or not names:
        raise IntegrationError(f"save= must be a non-empty list of names such as ['v(out)', 'i(L1)'], got {save!r}")
    return tuple(nm.strip() for nm in names)


def compiled_loop_option(value):
    """``compiled_loop`` as given, or from ``NETDYN_COMPILED_LOOP`` (``1``/``auto``/``0``); ``None`` when
    neither says (the projection path then decides)."""
    if value is None:
        value = os.environ.get("NETDYN_COMPILED_LOOP", "").strip().lower()
        if not value:
            return None
        value = {"1": True, "true": True, "yes": True, "auto": "auto", "0": False, "false": False, "no": False
                 }.get(value, value)
    if isinstance(value, str) and value == "auto":
        return value
    if value not in (True, False):
        raise IntegrationError(f"compiled_loop must be True, False or 'auto' (or NETDYN_COMPILED_LOOP 1/auto/0), "
                               f"got {value!r}")
    return bool(value)


def span(system, t_span):
    """``(t0, t1)`` as floats; ``None`` takes ``(0, tstop)`` from the network's ``.tran`` card."""
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


def output_times(t_span, t_eval):
    """The output times: ``t_eval`` checked against the span, or 1001 equally spaced times."""
    t0, t1 = t_span
    if t_eval is None:
        return np.linspace(t0, t1, 1001)
    te = np.asarray(t_eval, dtype=float).ravel()
    if te.size == 0 or np.any(~np.isfinite(te)) or np.any(np.diff(te) < 0):
        raise IntegrationError("t_eval must be a non-empty, sorted array of finite times")
    span_ = t1 - t0
    if te[0] < t0 - 1e-12 * span_ or te[-1] > t1 + 1e-12 * span_:
        raise IntegrationError(f"t_eval must lie inside t_span = ({t0:g}, {t1:g}); it spans "
                               f"[{te[0]:g}, {te[-1]:g}]")
    return np.clip(te, t0, t1)
