"""Switches: SPICE's voltage- and current-controlled switches (``S``, ``W``), ideal resistances RON/ROFF
with hysteresis, as ngspice defines them (``src/spicelib/devices/sw``, ``csw``).

A switch is, at any instant, a :class:`~netdyn.components.electrical.Resistor` of ``RON`` (closed) or
``ROFF`` (open); its state is discrete and changes only at events: it closes when the control rises above
``VT + VH`` (``IT + IH``) and opens when it falls below ``VT - VH`` (``IT - IH``); in between it keeps its
state (ngspice's ``swload.c``). The element knows only this; :mod:`netdyn.numerics.events` finds the
crossings (``switching()`` names them) and makes the network with the other state (``with_state``).

>>> s = VoltageSwitch("S1", "a", "0", "g", "0", RON=0.1, ROFF=1e6, VT=2.5, VH=0.5)
>>> s.closed, s.values["R"], s.switching()
(False, 1000000.00000000, [('v(g) - 3.0', 1, True)])
>>> c = s.with_state(True)
>>> c.values["R"], c.switching()
(0.100000000000000, [('v(g) - 2.0', -1, False)])
"""
from __future__ import annotations

from .base import require_positive
from .base import Element
from .electrical import CurrentSource, Resistor, VoltageSource
from netdyn.errors import ElementError
from typing import Any

__all__ = ["Switch", "VoltageSwitch", "CurrentSwitch"]


class Switch(Element):
    """An ideal switch between ``a`` and ``b``: closed, a short (``v = 0``: a 0 V source); open, no branch
    (``i = 0``: a 0 A source). Its state changes the constraint set; ``simulate`` carries the state across a
    change and applies the impulse rule where it must (a capacitor paralleled at another voltage, an
    inductor's current cut), naming it and booking the energy lost (:mod:`netdyn.numerics.events`).

    ``close_when`` / ``open_when``: conditions (strings of named series) whose rise through zero closes /
    opens it; without them an event's action changes it (``action={"S1": True}``).

    >>> s = Switch("S1", "a", "b", close_when="v(g) - 2.5")
    >>> s.closed, type(s).__name__, s.switching()
    (False, 'OpenSwitch', [('v(g) - 2.5', 1, True)])
    >>> s.with_state(True).closed, s.with_state(True).switching()
    (True, [])
    """

    def __new__(cls, name, a, b, closed=False, close_when=None, open_when=None):
        if cls is Switch:
            cls = ClosedSwitch if closed else OpenSwitch
        return object.__new__(cls)

    def __init__(self, name: str, a: str | int, b: str | int, closed: bool = False, close_when: Any = None,
                 open_when: Any = None) -> None:
        self.closed = bool(closed)
        self.close_when, self.open_when = close_when, open_when
        if self.closed:
            VoltageSource.__init__(self, name, a, b, 0.0)
        else:
            CurrentSource.__init__(self, name, a, b, 0.0)

    def switching(self):
        """The crossing that changes the state now: ``(condition, direction, state after)``."""
        when = self.open_when if self.closed else self.close_when
        return [] if when is None else [(when, 1, not self.closed)]

    def with_state(self, closed):
        """The same switch in state ``closed``."""
        cls, args, kw = self._constructor
        return Switch(*args, **dict(kw, closed=bool(closed)))


class ClosedSwitch(Switch, VoltageSource):
    """A closed :class:`Switch` (a short)."""


class OpenSwitch(Switch, CurrentSource):
    """An open :class:`Switch` (no branch)."""


def _difference(a, b):
    parts = [f"v({n})" for n in (a, b) if str(n) != "0"]
    if not parts:
        raise ElementError("a switch's control nodes are both ground")
    return parts[0] if len(parts) == 1 else (f"{parts[0]} - {parts[1]}" if str(a) != "0" else f"-{parts[0]}")


class _Switch(Resistor):
    """A resistor of ``RON`` or ``ROFF`` by its state ``closed``, with the control thresholds."""

    def __new__(cls, *args, **kw):
        return object.__new__(cls)

    def _setup(self, name, a, b, RON, ROFF, threshold, hysteresis, on, what):
        for key, v in (("RON", RON), ("ROFF", ROFF)):
            require_positive(name, key, v)
        if hysteresis < 0:
            raise ElementError(f"{name}: a negative hysteresis ({what}H = {hysteresis:g}) is ngspice's smooth "
                               "switch, which netdyn does not model; give VH/IH >= 0 (the ideal hysteretic "
                               "switch)")
        self.closed = bool(on)
        self.RON, self.ROFF, self.threshold, self.hysteresis = float(RON), float(ROFF), float(threshold), float(hysteresis)
        Resistor.__init__(self, name, a, b, self.RON if self.closed else self.ROFF)

    def control(self):  # pragma: no cover - interface
        raise NotImplementedError

    def switching(self):
        """The crossing that changes the state now: ``(condition, direction, state after)``."""
        if self.closed:
            return [(f"{self.control()} - {self.threshold - self.hysteresis!r}", -1, False)]
        return [(f"{self.control()} - {self.threshold + self.hysteresis!r}", 1, True)]

    def with_state(self, closed):
        """The same switch in state ``closed``."""
        cls, args, kw = self._constructor
        return cls(*args, **dict(kw, on=bool(closed)))


class VoltageSwitch(_Switch):
    """SPICE ``S``: between ``a`` and ``b``, controlled by ``v(cp) - v(cn)``; ``on`` its initial state
    (ngspice's ``ON``/``OFF``; the state at t0 follows the control as in ngspice's DC solution).
    Defaults are ngspice's: RON 1 Ω, ROFF 1e12 Ω (1/GMIN), VT 0, VH 0.

    >>> VoltageSwitch("S1", "a", "b", "c", "0", VT=1.0).switching()
    [('v(c) - 1.0', 1, True)]
    """

    def __init__(self, name: str, a: str | int, b: str | int, cp: str | int, cn: str | int, RON: float = 1.0,
                 ROFF: float = 1e12, VT: float = 0.0, VH: float = 0.0, on: bool = False) -> None:
        self.control_nodes = (str(cp), str(cn))
        self._setup(name, a, b, RON, ROFF, VT, VH, on, "V")

    def control(self):
        return _difference(*self.control_nodes)


class CurrentSwitch(_Switch):
    """SPICE ``W``: between ``a`` and ``b``, controlled by the current through the voltage source
    ``vname``. Defaults are ngspice's: RON 1 Ω, ROFF 1e12 Ω, IT 0, IH 0.

    >>> CurrentSwitch("W1", "a", "b", "Vsense", IT=0.01, IH=0.005).switching()
    [('i(Vsense) - 0.015', 1, True)]
    """

    def __init__(self, name: str, a: str | int, b: str | int, vname: str, RON: float = 1.0, ROFF: float = 1e12,
                 IT: float = 0.0, IH: float = 0.0, on: bool = False) -> None:
        self.sense = str(vname)
        self._setup(name, a, b, RON, ROFF, IT, IH, on, "I")

    def control(self):
        return f"i({self.sense})"
