"""What SPICE's start-up needs from the circuit's graph: the DC structure that has no operating point, and the
state a ``uic`` transient jumps to.

:func:`dc_singularities` names what makes the DC operating point singular: loops of inductors and voltage
sources (at DC an inductor is a short: a source across one has no finite current, a loop of inductors alone
no unique one), cut-sets of capacitors and current sources (at DC a capacitor is open), nodes that only
capacitors reach. ngspice meets the same circuits with "singular matrix" and falls back to gmin and source
stepping or a pseudo-transient whose answer depends on its own settings; netdyn names the elements instead.

:func:`uic_hold` gives the capacitor voltages and inductor currents a ``.tran ... uic`` transient starts
from. SPICE's rule (ngspice manual, ``.ic`` and ``.tran``): with ``uic`` each capacitor starts at its
``ic=``, else at the difference of its nodes' ``.ic`` voltages (nodes without one at 0 V); each inductor at
its ``ic=``, else 0. Where those values contradict the circuit — a capacitor across a supply given another
voltage, parallel capacitors given different ones, an inductor in series with a current source given
another current — ngspice's first step meets an impulse it cannot take (it rings or stops); netdyn takes
the jump the impulse makes: charge is conserved at every node through capacitors and voltage sources
(the only branches an impulse of current can cross), flux around every loop through inductors and current
sources. Capacitors whose voltage the other held ones and the sources then fix (the last capacitor of a
V–C loop), and inductors whose current they fix (the last inductor of an I–L cut-set), are left for the
operating-point solve to find, so the held values never over-determine it.

>>> import netdyn
>>> net = netdyn.read_netlist("par\\nV1 a 0 1\\nR1 a b 1k\\nC1 b 0 1u ic=2\\nC2 b 0 3u\\n.tran 1u 1m uic\\n")
>>> {k: round(v, 12) for k, v in uic_hold(net, net.element_ic, {}).items()}   # 2 µC shared by 4 µF
{'C1': 0.5}
>>> round(float(netdyn.simulate(net, None, t_eval=[0.0, 1e-6]).voltage("b")[0]), 12)   # C2 follows C1
0.5
"""
from __future__ import annotations

import networkx as nx
import numpy as np

from netdyn.components.base import numeric_values
from netdyn.graph.topology import GrowingGraph

__all__ = ["dc_singularities", "uic_hold", "junction_hold", "StateBeforeJump"]


class StateBeforeJump(dict):
    """Initial coordinates (``q0`` or ``f0``) that hold the stored state *before* ``t0``: the linear path
    jumps from them by the circuit's own impulses (:func:`~netdyn.numerics.dae.higherindex.impulse_consistent`)
    instead of treating them as values the user fixed. Any other path reads them as a plain dict."""


def kinds(net):
    """Each electrical element's role at a jump and at DC, ``(name, kind, a, b)`` with its (output) terminals:
    ``C``, ``L``, ``V``, ``I``, ``E`` (VCVS), ``H`` (CCVS), ``G`` (VCCS, CCCS), ``R`` (anything else)."""
    from netdyn.components import controlled as ctl
    from netdyn.components import electrical as el
    out = []
    for name, element in net.elements.items():
        if isinstance(element, el.Capacitor):
            kind = "C"
        elif isinstance(element, el.Inductor):
            kind = "L"
        elif isinstance(element, el.VoltageSource):
            kind = "V"
        elif isinstance(element, el.CurrentSource):
            kind = "I"
        elif isinstance(element, ctl.VCVS):
            kind = "E"   # an output that is a voltage source
        elif isinstance(element, ctl.CCVS):
            kind = "H"
        elif isinstance(element, (ctl.VCCS, ctl.CCCS)):
            kind = "G"   # an output that is a current source
        else:
            kind = "R"   # finite voltage and current: resistors, diodes, anything else
        terminals = list(getattr(element, "terminals", ()))
        if len(terminals) >= 2:
            out.append((name, kind, str(terminals[0]), str(terminals[1])))
    return out


def _graph(edges):
    g = nx.MultiGraph()
    for name, _kind, a, b in edges:
        g.add_edge(a, b, key=name)
    return g


def dc_singularities(net, limit=4):
    """Sentences naming what leaves the DC operating point of ``net`` singular ([] when nothing does).

    Loops of inductors, voltage sources and voltage-controlled voltage sources (at DC each fixes a voltage
    and none its current: a current can circulate, or is infinite), and nodes that no element conducting at
    DC joins to ground (only capacitors, current sources or controlled current sources reach them: their
    voltage is free). A current-controlled voltage source (``H``) counts as a voltage source unless the
    loop holds the source it senses (then it fixes the loop's current). At most ``limit`` loops are named; linear time in the elements.

    >>> import netdyn
    >>> dc_singularities(netdyn.read_netlist("x\\nV1 a 0 1\\nL1 a 0 1m\\nR1 a 0 1k\\nC1 a b 1u\\nI1 0 b 1m\\n"))
    ['a loop of inductors and voltage sources (L1, V1): at DC an inductor is a short', 'node(s) b have no DC path to ground (only capacitors or current sources reach them)']
    """
    edges = kinds(net)
    found = []
    seen = GrowingGraph()
    kind_of = {name: kind for name, kind, *_ in edges}
    for name, kind, a, b in edges:
        if kind not in ("L", "V", "E", "H"):
            continue
        path = seen.path(a, b) if len(found) < limit else None
        seen.add(name, a, b)
        if path is None:
            continue
        loop = [name] + [key for key, _ in path]
        if any(kind_of[x] == "H" and net.elements[x].couples[0] in loop for x in loop):
            continue  # an H that senses its own loop's current fixes it
        if any(kind_of[x] == "L" for x in loop):
            found.append(f"a loop of inductors and voltage sources ({', '.join(loop)}): at DC an inductor is a short")
        else:
            found.append(f"a loop of voltage sources ({', '.join(loop)})")
    conducting = nx.utils.UnionFind()
    nodes = []
    for name, kind, a, b in edges:
        nodes += [a, b]
        if kind in ("L", "V", "E", "H"):
            conducting.union(a, b)
        elif kind == "R":  # resistors, diodes and anything else (a transformer joins all its terminals)
            conducting.union(*(str(x) for x in net.elements[name].terminals))
    if "0" in nodes:
        lost = sorted({x for x in nodes if conducting[x] != conducting["0"]}, key=str)
        if lost:
            found.append(f"node(s) {', '.join(map(str, lost[:10]))} have no DC path to ground (only capacitors or "
                         "current sources reach them)")
    return found


def _source_value(element, t0):
    from netdyn.numerics.functions.compiled import time_function
    return float(time_function(element.values["value"])(t0))


def _solve(rows, cols, n_rows, n_cols, rhs):
    M = np.zeros((n_rows, n_cols))
    for (r, c), v in zip(rows, cols):
        M[r, c] += v
    return np.linalg.lstsq(M, rhs, rcond=None)[0] if n_cols else np.zeros(0)


def uic_hold(net, element_ic, node_ic, t0=0.0, hold_all=False):
    """``{element: value}`` to hold in :func:`~netdyn.numerics.circuit.operating_point.operating_point` for a ``uic``
    start: capacitor voltages and inductor currents after the jump at ``t0`` (see the module's text).
    ``hold_all=True`` returns instead the current after the jump of every inductor."""
    edges = kinds(net)
    caps = [(n, a, b) for n, k, a, b in edges if k == "C"]
    inds = [(n, a, b) for n, k, a, b in edges if k == "L"]
    value = {n: float(numeric_values(net.elements[n])["C" if k == "C" else "L"]) for n, k, *_ in edges if k in "CL"}
    hold = {}
    # charges: node potentials phi and impulses J of the voltage sources; Σ C (v - v_pre) + Σ ±J = 0 at each node
    vsrc = [(n, a, b) for n, k, a, b in edges if k == "V"]
    nodes = sorted({x for _, a, b in caps + vsrc for x in (a, b)} - {"0"}, key=str)
    if caps:
        idx = {x: i for i, x in enumerate(nodes)}
        N, nv = len(nodes), len(vsrc)
        scale = max(value[n] for n, *_ in caps)
        M = np.zeros((N + nv, N + nv))
        rhs = np.zeros(N + nv)
        for name, a, b in caps:
            pre = element_ic.get(name, node_ic.get(a, 0.0) - node_ic.get(b, 0.0))
            c = value[name] / scale
            for x, sx in ((a, 1.0), (b, -1.0)):
                if x in idx:
                    rhs[idx[x]] += sx * c * pre
                    for y, sy in ((a, 1.0), (b, -1.0)):
                        if y in idx:
                            M[idx[x], idx[y]] += sx * sy * c
        for k, (name, a, b) in enumerate(vsrc):
            for x, sx in ((a, 1.0), (b, -1.0)):
                if x in idx:
                    M[idx[x], N + k] += sx
                    M[N + k, idx[x]] += sx
            rhs[N + k] = _source_value(net.elements[name], t0)
        phi = np.linalg.lstsq(M, rhs, rcond=None)[0][:N]
        pot = lambda x: 0.0 if x == "0" else float(phi[idx[x]])
        # hold every capacitor but those the sources and the capacitors held before them already fix
        fixed = nx.utils.UnionFind()
        for n, k, a, b in edges:
            if k in ("V", "E", "H"):
                fixed.union(a, b)
        for name, a, b in caps:
            if fixed[a] != fixed[b]:
                hold[name] = pot(a) - pot(b)
                fixed.union(a, b)
    if inds:
        # fluxes: contract every branch that cannot take an impulse of voltage; at each super-node the
        # currents of its inductors and current sources sum to zero after the jump
        sup = nx.utils.UnionFind()
        for n, k, a, b in edges:
            if k in ("L", "I", "G"):
                sup[a], sup[b]  # noqa: B018 - every node its own super-node unless joined
            else:
                sup.union(a, b)
        groups = sorted({sup[x] for _, a, b in inds for x in (a, b)} - {sup["0"]}, key=str)
        gidx = {s: i for i, s in enumerate(groups)}
        G = len(groups)
        M = np.zeros((G, G))
        rhs = np.zeros(G)
        scale = max(1.0 / value[n] for n, *_ in inds)
        pre = {name: float(element_ic.get(name, 0.0)) for name, *_ in inds}
        for name, a, b in inds:
            sa, sb = sup[a], sup[b]
            if sa == sb:
                continue
            y = 1.0 / value[name] / scale
            for x, sx in ((sa, 1.0), (sb, -1.0)):
                if x in gidx:
                    rhs[gidx[x]] -= sx * pre[name] / scale
                    for z, sz in ((sa, 1.0), (sb, -1.0)):
                        if z in gidx:
                            M[gidx[x], gidx[z]] += sx * sz * y
        for n, k, a, b in edges:
            if k == "I" and sup[a] != sup[b]:
                i0 = _source_value(net.elements[n], t0)
                for x, sx in ((sup[a], 1.0), (sup[b], -1.0)):
                    if x in gidx:
                        rhs[gidx[x]] -= sx * i0 / scale
        psi = np.linalg.lstsq(M, rhs, rcond=None)[0] if G else np.zeros(0)
        pot = lambda s: 0.0 if s not in gidx else float(psi[gidx[s]])
        post = {name: pre[name] + (pot(sup[a]) - pot(sup[b])) / value[name] for name, a, b in inds}
        if hold_all:
            return post
        # hold every inductor but those whose current the current sources and inductors held before fix
        cut = {n for n, k, *_ in edges if k in ("I", "G")}
        g = _graph(edges)
        for name, a, b in inds:
            rest = nx.Graph()
            rest.add_nodes_from(g.nodes)
            rest.add_edges_from((u, v) for u, v, key in g.edges(keys=True) if key not in cut and key != name)
            if nx.has_path(rest, a, b):
                hold[name] = post[name]
                cut.add(name)
    return hold



def junction_hold(net, node_ic):
    """``{diode: volts}``: the junction voltages a ``uic`` start holds, SPICE's rule for a diode's charge.

    ngspice (``DIOgetic``) starts each diode's junction at the difference of its terminals' ``.ic`` voltages
    (nodes without one at 0 V) and keeps the junction charge ``Q(v)`` of that voltage as the state before
    the first step. A diode with a series resistance ``RS`` has its junction between an internal node and
    its cathode: an impulse of current cannot cross ``RS``, so the junction's charge, and with it its
    voltage, is still that at ``t = 0+`` — held, like a capacitor's ``ic=``. A diode that stores no charge
    (``CJO = TT = 0``) holds nothing (its junction follows the circuit), and one without ``RS`` is left to
    the solve (its junction sits on circuit nodes, where the jump would share its charge with the
    capacitors there).

    >>> import netdyn
    >>> net = netdyn.read_netlist("d\\nV1 a 0 1\\nR1 a b 1k\\nD1 b c dm\\nR2 c 0 1k\\n"
    ...                           ".model dm D(IS=1e-14 RS=10 CJO=1p)\\n.ic v(b)=0.3 v(c)=-0.2\\n")
    >>> junction_hold(net, net.initial_voltages)
    {'D1': 0.5}
    """
    from netdyn.components.diode import Diode
    hold = {}
    for name, element in net.elements.items():
        if not isinstance(element, Diode) or element.internal_node is None:
            continue
        if float(element.values.get("CJO", 0.0)) <= 0 and float(element.values.get("TT", 0.0)) <= 0:
            continue
        a, k = (str(x) for x in element.terminals)
        hold[name] = float(node_ic.get(a, 0.0)) - float(node_ic.get(k, 0.0))
    return hold
