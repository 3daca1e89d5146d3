"""Mechanisms driven through a circuit: a DC motor on a voltage source turning a linkage's crank.

The motor is built from its parts, as a circuit designer draws it: the source
``V1``, the armature resistance ``Ra`` and inductance ``La`` in series, and the
electromechanical coupling ``K`` (a :class:`~netdyn.components.transducers.MovingCoil`
in the rotational domain: ``v = K ω``, ``τ = K i``) whose shaft is the crank body.
The electrical time constant ``La/Ra`` is much shorter than the mechanical one,
which makes the model stiff: ``netdyn.simulate`` picks IDA for it (see
:mod:`netdyn.numerics.paths`).

>>> net = motor_four_bar()
>>> sorted(net.elements)[:4]
['A', 'C', 'D', 'K']
>>> net.model().coordinate_names[-1]
'q_La'
"""
from __future__ import annotations
from netdyn.components.electrical import Inductor, Resistor, VoltageSource
from netdyn.components.transducers import MovingCoil
from netdyn.linkages.planar import BOOK, four_bar

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # names for the hints only (annotations are not evaluated)
    from collections.abc import Mapping
    from netdyn.graph.network import Network

#: a small permanent-magnet motor: 12 V, 1 Ω, 1 mH, 0.5 V·s/rad (electrical time constant 1 ms)
MOTOR = dict(V=12.0, R=1.0, L=1e-3, K=0.5)


def motor_four_bar(V: float = MOTOR["V"], R: float = MOTOR["R"], L: float = MOTOR["L"], K: float = MOTOR["K"],
                   p: Mapping[str, float] = BOOK) -> Network:
    """The book's four-bar (:func:`~netdyn.linkages.planar.four_bar`, no torque) with its crank driven by a
    DC motor on a voltage source ``V``: armature ``R`` (Ω) and ``L`` (H), torque constant ``K`` (N·m/A).
    It keeps the four-bar's assembly (the elbow-up branch, ``net.assembly``), so it starts there with no
    ``guess=``.

    >>> net = motor_four_bar(V=6.0)
    >>> net["V1"].values, net["K"].values
    ({'value': 6.00000000000000}, {'Bl': 0.500000000000000})
    """
    net = four_bar(p, tau=False)
    net.name = "motor four-bar"
    net.add(VoltageSource("V1", "p", "0", V), Resistor("Ra", "p", "a", R), Inductor("La", "a", "b", L),
            MovingCoil("K", "b", "0", "crank", Bl=K, domain="rotational"))
    return net
