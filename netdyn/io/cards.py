"""Analysis cards a netlist carries beyond its elements, as named records.

>>> card = TranCard(tstep=1e-6, tstop=2e-3)
>>> card.tstop, card.tstart, card.tmax, card.uic
(0.002, 0.0, None, False)
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class TranCard:
    """A ``.tran tstep tstop [tstart [tmax]] [uic]`` card (``net.tran`` of a netlist; seconds).

    ``tstop`` is the default simulation span of :func:`netdyn.simulate` and ``netdyn simulate``;
    ``tstart`` the first time written out; ``tmax`` ngspice's largest step; ``uic`` starts from the
    given initial conditions instead of the DC operating point. Change one with ``dataclasses.replace``.
    """

    tstep: float | None
    tstop: float
    tstart: float = 0.0
    tmax: float | None = None
    uic: bool = False
