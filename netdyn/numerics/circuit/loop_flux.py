"""Flux circulating around loops of inductors, in node coordinates.

Node fluxes ``φ`` give every inductor the flux ``φ_a − φ_b``, so around a loop made of inductors alone
``Σ ±L_k i_k`` is 0 in those coordinates. KVL makes that sum a constant of motion (``Σ ±v_k = 0``), so a
``uic`` start whose ``ic=`` currents give it another value ``ψ`` is a state the node coordinates cannot hold.
In node coordinates a circulating flux is exactly a constant current in parallel with one inductor of the
loop: for each independent loop (a chord of a spanning forest of the inductors) :func:`loop_currents`
gives ``I0 = ψ / L_chord``; :func:`loop_network` gives the transient a copy of the network with a DC current
source ``I0`` across the chord (named ``"<chord>:loop"``) and the chord's node part ``i − I0``, and
:func:`settle` puts ``I0`` back into the chord's reported current and counts its energy as the inductor's
(``½ L (i − I0 + I0)²``), not as a source's work, so the power balance closes on the original circuit.

>>> import netdyn
>>> net = netdyn.read_netlist("loop\\nV1 a 0 1\\nR1 a b 1k\\nL1 b 0 1m ic=1m\\nL2 b 0 2m ic=-1m\\n"
...                           "D1 b 0 dm\\n.model dm D(IS=1e-14)\\n.tran 1u 10u uic\\n")
>>> {k: round(v, 9) for k, v in loop_currents(net, {"L1": 1e-3, "L2": -1e-3}).items()}   # ψ = 3 µWb on L2
{'L2': -0.0015}
"""
from __future__ import annotations

import numpy as np

from netdyn.graph.topology import GrowingGraph

__all__ = ["loop_currents", "loop_network", "settle", "stored", "LoopFluxState", "SUFFIX"]

#: the name of the internal current source carrying a chord's circulating current: ``chord + SUFFIX``
SUFFIX = ":loop"


class LoopFluxState(dict):
    """``q0`` of a start that needs circulating currents: a dict of coordinates of ``network`` (the circuit
    with one DC current source per loop, see the module), with ``offsets = {chord: I0}``."""

    def __init__(self, q0, network, offsets):
        super().__init__(q0)
        self.network, self.offsets = network, dict(offsets)


def _inductors(net):
    """``[(name, a, b, L)]`` of the plain linear inductors, or None when coupled inductors (or a symbolic L)
    are present: their loops stay refused. A nonlinear inductor is no ``Inductor``: a loop through it is not
    found, and the start's residual check still refuses it."""
    from netdyn.components.electrical import CoupledInductors, Inductor
    out = []
    for name, el in net.elements.items():
        if isinstance(el, CoupledInductors):
            return None
        if isinstance(el, Inductor):
            try:
                L = float(el.values["L"])
            except TypeError:
                return None
            out.append((name, str(el.terminals[0]), str(el.terminals[1]), L))
    return out


def loop_currents(net, currents, tol=1e-12):
    """``{chord: I0}`` for the independent loops of inductors (chords of a spanning forest, in the order of
    the elements) whose flux ``ψ = Σ ±L_k i_k`` (taken along the chord, ``a → b``) is not 0: ``I0 = ψ / L_chord``.
    ``currents`` are the inductor currents, first terminal to second. Returns None when the network has a
    coupled or nonlinear inductor (those loops are not handled). See the module's example."""
    inductors = _inductors(net)
    if inductors is None:
        return None
    forest = GrowingGraph()
    inductance = {name: L for name, _, _, L in inductors}
    scale = max([abs(L * currents.get(n, 0.0)) for n, _, _, L in inductors] + [1e-300])
    out = {}
    for name, a, b, L in inductors:
        path = forest.path(b, a)  # back from b to a through the tree
        if path is None:
            forest.add(name, a, b)
            continue
        psi = L * currents.get(name, 0.0) + sum(sign * inductance[k] * currents.get(k, 0.0) for k, sign in path)
        if abs(psi) > tol * scale:
            out[name] = psi / L
    return out


def loop_network(net, op):
    """``(network, port_through, port_across, offsets)`` of a start from the operating point ``op`` (its
    inductor currents held) in node coordinates with a circulating current around each loop of inductors
    whose flux is not 0: the network with the loops' sources and its port values (each chord's node part
    ``i − I0``); None when no loop needs one (or coupled inductors are present)."""
    from netdyn.components.electrical import CurrentSource, Inductor
    from netdyn.graph.network import Network
    signs = {name: getattr(el, "through_report_signs", el.report_signs)[0] for name, el in net.elements.items()
             if isinstance(el, Inductor)}
    currents = {name: float(s * op.port_through[name][0]) for name, s in signs.items()}
    offsets = loop_currents(net, currents)
    if not offsets:
        return None
    run = Network(net.name)
    run.add(*net.elements.values())
    through = {k: list(v) for k, v in op.port_through.items()}
    across = {k: list(v) for k, v in op.port_across.items()}
    for chord, I0 in offsets.items():
        el = net.elements[chord]
        src = CurrentSource(chord + SUFFIX, el.terminals[0], el.terminals[1], I0)
        run.add(src)
        through[chord][0] -= signs[chord] * I0
        v = el.report_signs[0] * op.port_across[chord][0]  # the chord's voltage, a to b
        through[src.name] = [getattr(src, "through_report_signs", src.report_signs)[0] * I0]
        across[src.name] = [src.report_signs[0] * v]
    for attr in ("title", "tran", "initial_voltages", "element_ic", "params"):
        if hasattr(net, attr):
            setattr(run, attr, getattr(net, attr))
    return run, through, across, offsets


def settle(sol, offsets):
    """Make a solution computed on :func:`loop_network`'s network report the original circuit: each chord's
    current carries its ``I0`` again, its stored energy is ``½ L (i_node + I0)²``, and the work of the loop
    sources leaves the supplied energy (it is the chord's stored energy). Returns ``sol``."""
    sol.loop_offsets = dict(offsets)
    work = getattr(sol, "work", None)
    per = getattr(sol, "element_work", None) or {}
    if work is not None and work.get("supplied") is not None:
        supplied = np.array(work["supplied"], dtype=float)
        for chord in offsets:
            own = per.pop(chord + SUFFIX, {})
            if "supplied" in own:
                supplied = supplied - own["supplied"]
            else:  # it supplies −v I0 = −I0 L di/dt: its work −I0 L (i(t) − i(0))
                supplied = supplied + _source_work(sol, chord)
        sol.work = dict(work, supplied=supplied)
    return sol


def _source_work(sol, chord):
    I0 = sol.loop_offsets[chord]
    L = float(sol.net.elements[chord].values["L"])
    i = sol._element_quantity(chord, "through")
    return I0 * L * (i - i[0])


def stored(sol):
    """The chords' stored energy beyond the node part's ``½ L i_node²``: ``L I0 i_node + ½ L I0²`` (K,)."""
    out = 0.0
    for chord, I0 in (getattr(sol, "loop_offsets", None) or {}).items():
        L = float(sol.net.elements[chord].values["L"])
        i = sol._element_quantity(chord, "through")
        out = out + L * I0 * i + 0.5 * L * I0 * I0
    return out
