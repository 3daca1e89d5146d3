"""Linear controlled sources: SPICE's ``E`` (VCVS), ``G`` (VCCS), ``F`` (CCCS) and ``H`` (CCVS).

Sign conventions are SPICE's: the output port runs from ``plus`` to ``minus``
(its current flows plus → minus inside the source, its voltage is
``v(plus) − v(minus)``); the controlling voltage is ``v(cplus) − v(cminus)``;
the controlling current of ``F``/``H`` is the SPICE current of a
:class:`~netdyn.components.electrical.VoltageSource` of the network (plus →
minus inside it), named by ``sense``.

A controlled source is not reciprocal: its output obeys the control, the
control feels nothing. In the energy form that is either an applied effort that
depends on another port's flow (``G`` in flux coordinates, ``H`` in charge
coordinates), or a *servo* flow constraint whose multiplier acts only where
the source can push (``Contribution.reactions``) — e.g. ``E`` in charge
coordinates: the control port carries no current (``i_c = 0``, multiplier
μ = ``v_c``) and the same μ, times the gain, is the output voltage. The
supplied power is the work of these non-ideal reactions.

========  =====================================  ==========================================
element   charge coordinates (branch, loop)      flux coordinates (node)
========  =====================================  ==========================================
``E``     ``i_c = 0``; reaction ``v_c = μ``,      ``v_o − A v_c = 0``; reaction on the output
          ``v_o = A μ``                           only (``i_o = μ``, ``i_c = 0``)
``G``     ``i_c = 0``; reaction on the output     output current ``g v_c`` (an effort)
          only; ``v_c = i_o / g`` (an effort)
``F``     ``i_o − β i_s = 0``; reaction on the    the sensed source's multiplier (its
          output only                             current) also acts on the output, times
                                                 ``−β`` (``sensed_reactions``)
``H``     output voltage ``r i_s`` (an effort);   the sensed multiplier also drives the
          the internal port: no current, the      internal node ``<name>#r`` (port 1), loaded
          same voltage ``r i_s``                  by ``1/r`` (an effort): ``v_r = r i_s``;
                                                 ``v_o − v_r = 0``, reaction on the output only
========  =====================================  ==========================================

>>> import sympy as sp
>>> from netdyn.components.base import PortVariables, THROUGH
>>> q, f = sp.symbols("q0 q1"), sp.symbols("f0 f1")
>>> e = VCVS("E1", "out", "0", "in", "0", gain=10)
>>> c = e.contribute([PortVariables(THROUGH, q[i], f[i]) for i in range(2)], {"gain": 10})
>>> c.flow_constraints, c.reactions
([f1], {0: {1: 1, 0: 10}})
"""
from __future__ import annotations
from netdyn.errors import ElementError
from netdyn.symbols import as_expr

from .base import ACROSS, THROUGH, Contribution, Element, Port, node_name

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # names for the hints only (annotations are not evaluated)
    from typing import Any

DOMAIN = "electrical"

__all__ = ["VCVS", "VCCS", "CCCS", "CCVS"]


def _nonzero(name, what, value):
    v = as_expr(value)
    if v.is_zero:
        raise ElementError(f"{name}: {what} = 0 makes the source a plain open or short circuit; give a non-zero "
                           f"{what} (or leave the element out)")


class _VoltageControlled(Element):
    """Output port ``(plus, minus)`` (index 0), control port ``(cplus, cminus)`` (index 1)."""

    parameter = None
    is_controlled_source = True  # a source whose value another port sets (the energy report counts it a source)

    def __init__(self, name, plus, minus, cplus, cminus, value):
        ports = [Port(DOMAIN, node_name(plus), node_name(minus)), Port(DOMAIN, node_name(cplus), node_name(cminus))]
        super().__init__(name, ports, {self.parameter: value})


class VCVS(_VoltageControlled):
    """Voltage-controlled voltage source (SPICE ``E``): ``v(plus) − v(minus) = gain · (v(cplus) − v(cminus))``.

    The control terminals draw no current.

    >>> VCVS("E1", "o", "0", "i", "0", gain=1e5).values["gain"]
    100000.000000000
    """

    parameter = "gain"

    def __init__(self, name: str, plus: str | int, minus: str | int, cplus: str | int, cminus: str | int,
                 gain: Any) -> None:
        super().__init__(name, plus, minus, cplus, cminus, gain)

    def contribute(self, ports, values):
        out, ctl = ports
        A = values["gain"]
        if out.kind == THROUGH:  # i_c = 0, its multiplier is v_c; the output voltage is A times it
            return Contribution(flow_constraints=[ctl.f], reactions={0: {1: 1, 0: A}})
        return Contribution(flow_constraints=[out.f - A * ctl.f], reactions={0: {0: 1}})


class VCCS(_VoltageControlled):
    """Voltage-controlled current source (SPICE ``G``): ``gm · (v(cplus) − v(cminus))`` flows plus → minus
    through it (into ``minus``). The control terminals draw no current.

    >>> VCCS("G1", "o", "0", "i", "0", gm=1e-3).values["gm"]
    0.00100000000000000
    """

    parameter = "gm"

    def __init__(self, name: str, plus: str | int, minus: str | int, cplus: str | int, cminus: str | int,
                 gm: Any) -> None:
        _nonzero(name, "gm", gm)
        super().__init__(name, plus, minus, cplus, cminus, gm)

    def contribute(self, ports, values):
        out, ctl = ports
        g = values["gm"]
        if out.kind == ACROSS:  # the output current is an effort: absorbed current = -effort = g v_c
            return Contribution(efforts={0: -g * ctl.f})
        # charge coordinates: i_c = 0 (multiplier = output voltage), v_c = i_o / g as an effort on the control
        return Contribution(flow_constraints=[ctl.f], reactions={0: {0: 1}}, efforts={1: -out.f / g})


class _CurrentControlled(Element):
    """Output port ``(plus, minus)`` (index 0), then the element's internal ports (``internal``: the name of an
    internal node joined to ``minus``); the sensed voltage source's own port comes after them."""

    parameter = None
    couples_need_inductance = False
    is_controlled_source = True

    def __init__(self, name, plus, minus, sense, value, internal=None):
        if not isinstance(sense, str) or not sense:
            raise ElementError(f"{name}: sense must name the voltage source whose current controls it")
        p, m = node_name(plus), node_name(minus)
        self.internal_node = f"{name}#{internal}" if internal else None
        ports = [Port(DOMAIN, p, m)] + ([Port(DOMAIN, self.internal_node, m)] if internal else [])
        super().__init__(name, ports, {self.parameter: value}, terminals=(p, m))
        self.couples = (sense,)

    @staticmethod
    def _sensed_current(sensed):
        """The SPICE current of the sensed voltage source in charge coordinates (its port runs minus -> plus)."""
        return -sensed.f


class CCCS(_CurrentControlled):
    """Current-controlled current source (SPICE ``F``): ``gain · i(sense)`` flows plus → minus through it.

    ``i(sense)`` is the SPICE current of the voltage source ``sense`` (plus → minus inside it); use a 0 V
    source as an ammeter.

    >>> CCCS("F1", "o", "0", "Vs", gain=2).couples
    ('Vs',)
    """

    parameter = "gain"

    def __init__(self, name: str, plus: str | int, minus: str | int, sense: str, gain: Any) -> None:
        super().__init__(name, plus, minus, sense, gain)

    def contribute(self, ports, values):
        out, sensed = ports
        if sensed.kind == ACROSS:  # i_s is the sensed source's multiplier: it also drives the output
            return Contribution(sensed_reactions={1: {0: -values["gain"]}})
        i_s = self._sensed_current(sensed)
        return Contribution(flow_constraints=[out.f - values["gain"] * i_s], reactions={0: {0: 1}})


class CCVS(_CurrentControlled):
    """Current-controlled voltage source (SPICE ``H``): ``v(plus) − v(minus) = r · i(sense)``.

    Besides its output port (index 0) the source owns an internal port (index 1) from the internal node
    ``"<name>#r"`` to ``minus``, as the diode owns the node behind its ``RS``: in flux (node) coordinates the
    sensed current is a multiplier, and the internal node turns it into a voltage (see the module table).
    In charge coordinates nothing else touches that node, so the internal port carries no current; its voltage
    is ``r i(sense)`` there too, so ``"<name>#r"`` reads the same in every formulation.

    >>> h = CCVS("H1", "o", "0", "Vs", r=1e3)
    >>> h.values["r"], h.internal_node, h.terminals
    (1000.00000000000, 'H1#r', ('o', '0'))
    """

    parameter = "r"

    def __init__(self, name: str, plus: str | int, minus: str | int, sense: str, r: Any) -> None:
        _nonzero(name, "r", r)
        super().__init__(name, plus, minus, sense, r, internal="r")

    def contribute(self, ports, values):
        out, inner, sensed = ports
        r = values["r"]
        if sensed.kind == ACROSS:
            # the sensed multiplier drives its current i_s into the internal node, whose only other load is
            # the effort -v_r / r (a conductance 1/r that is no dissipation: the pair exchanges no power with
            # the network), so v_r = r i_s; the output servo v_o = v_r pushes on the output only
            return Contribution(efforts={1: -inner.f / r}, flow_constraints=[out.f - inner.f],
                                reactions={0: {0: 1}}, sensed_reactions={2: {1: 1}})
        i_s = self._sensed_current(sensed)
        # absorbed v_o = -effort = r i_s; the internal port carries no current and reads the same voltage
        return Contribution(efforts={0: -r * i_s, 1: -r * i_s})
