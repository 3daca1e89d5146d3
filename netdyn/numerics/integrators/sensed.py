"""Absolute tolerances of charges when a current-controlled source reads their rate.

In charge coordinates (branch, loop) the current a ``F`` or ``H`` source senses is the *rate* of a
combination of charges, and the source passes it on times its gain (``H``: ``r`` ohms). A user's scalar
``atol`` holds a charge to that many coulombs; a rate, the sensed current, is then only good to about
``atol / h`` amperes (``h`` the step), which ``r`` turns into volts: ``atol = 1e-12`` on the 1e-10 C of a
30 µA sensed current left 1.2e-6 (linear path) to 3e-5 (IDA) of peak on an ``H`` output whose node
formulation (the sensed current a multiplier) was exact to 3e-12. In such a network every charge's scalar
tolerance is therefore taken in amperes: ``atol`` times the output spacing (each charge, not only the
sensed ones: in loop charges the sensed current is an algebraic function of all of them). In the node
formulation the sensed current is a multiplier, an algebraic unknown: nothing to do.

>>> import numpy as np
>>> sensed_atol(1e-12, 4, [1], np.linspace(0, 1e-3, 11)).tolist()
[1e-12, 1e-16, 1e-12, 1e-12]
"""
from __future__ import annotations

import numpy as np
import sympy as sp

__all__ = ["sensed_sources", "sensed_columns", "sensed_coordinates", "sensed_atol"]


def sensed_sources(net):
    """Names of the voltage sources whose current a ``F`` or ``H`` of ``net`` senses."""
    elements = getattr(net, "elements", None)
    if not isinstance(elements, dict):
        return []
    return sorted({c for el in elements.values() if el.couples and not getattr(el, "couples_need_inductance", True)
                   for c in el.couples})


def sensed_columns(lin, net):
    """Coordinates (indices) of a :class:`~netdyn.numerics.circuit.stamp.LinearNetwork` in the sensed sources'
    ports, when those ports are charges (none in flux coordinates)."""
    cols = set()
    for name in sensed_sources(net):
        port = net.elements[name].ports[0]
        if lin.formulation.get(port.domain) == "node":
            continue
        for _, combo in lin.ports.get(name, ()):
            cols.update(combo)
    return sorted(cols)


def sensed_coordinates(model):
    """Indices of ``model.coordinates`` in the sensed sources' charge ports (a network's model; else none)."""
    md = model.metadata or {}
    net, info = md.get("network"), md.get("elements", {})
    index = {c: i for i, c in enumerate(model.coordinates)}
    out = set()
    for name in sensed_sources(net) if net is not None else ():
        entry = info.get(name)
        if entry is None or entry["kinds"][0] != "through":
            continue
        out.update(index[c] for c in sp.sympify(entry["port_displacements"][0]).atoms(sp.core.function.AppliedUndef)
                   if c in index)
    return sorted(out)


def sensed_atol(atol, size, cols, t_out):
    """A scalar ``atol`` as a vector of ``size`` entries, those at ``cols`` times the mean output spacing (at
    most 1 s).

    Anything else (``None``, a vector the caller chose) is returned unchanged."""
    if atol is None or np.ndim(atol) != 0 or not len(cols):
        return atol
    t_out = np.asarray(t_out, dtype=float)
    spacing = float(t_out[-1] - t_out[0]) / (t_out.size - 1) if t_out.size > 1 else 1.0
    out = np.full(size, float(atol))
    out[list(cols)] *= min(spacing, 1.0)
    return out
