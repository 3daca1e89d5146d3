"""The circuit path's work integrals, element by element: which power term feeds which element's channel.

The transient of :func:`netdyn.numerics.circuit.nonlinearsim.simulate_circuit` carries, beside its states, the energy
each element dissipated or supplied since the start, integrated step by step on the BDF step's own
interpolant (two-point Gauss-Legendre) (:func:`netdyn.numerics.circuit.kernels.circuit_kernel.step_work`). :func:`work_program` splits the powers of the
stamped DAE by element: a resistor's ``fᵀ D_e f`` from its own stamp entries, a source's ``fᵀ B_e u`` (an
applied effort) and ``μᵀ B_a u`` (a driven flow constraint) from its effort entries and constraint rows, a
controlled source's ``μᵀ (A − Rᵀ) f`` from its rows and reactions, and every device port's ``F g(F)`` (dissipated) and
``F c(F) Ḟ`` (the energy its junction charge stores). Summed by kind they are the totals of
``Solution.power_balance`` (the same split as the linear path's ``power_function``).

A controlled source (``E``, ``G``, ``F``, ``H``) has only a ``supplied`` channel, what it delivers: its
conductance-like ``D`` entries (``G``'s coupling, ``H``'s internal ``1/r`` load) and its own part of
``μᵀ (A − Rᵀ) f`` — its servo rows' ``A`` entries minus its reactions, and its reaction on the row of the
source it senses (the stamp records each element's reactions). A sensing 0 V ammeter then supplies nothing,
and no ``1/r`` load is counted as dissipation.

>>> import numpy as np, netdyn
>>> from netdyn.components.electrical import VoltageSource, Resistor, Capacitor
>>> from netdyn.components.diode import Diode
>>> from netdyn.numerics.circuit.nonlinearsim import _Circuit
>>> net = netdyn.Network()
>>> _ = net.add(VoltageSource("V1", "a", "0", 5.0), Resistor("R1", "a", "d", 1e3), Diode("D1", "d", "0"),
...             Capacitor("C1", "d", "0", 1e-6))
>>> prog, channels = work_program(_Circuit(net))
>>> channels
[('R1', 'dissipated'), ('V1', 'supplied'), ('D1', 'dissipated')]
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sps

from netdyn.numerics.circuit.kernels.circuit_kernel import GAUSS, WORK_FIELDS

__all__ = ["work_program", "KINDS"]

#: the kinds of channel: energy dissipated, supplied by a source, stored in a device's junction charge
KINDS = ("dissipated", "supplied", "junction")


def work_program(c):
    """The arrays of :func:`~netdyn.numerics.circuit.kernels.circuit_kernel.step_work` for circuit ``c`` (a
    :class:`~netdyn.numerics.circuit.nonlinearsim._Circuit`, its devices with port tables) in the order of
    :data:`~netdyn.numerics.circuit.kernels.circuit_kernel.WORK_FIELDS`, and the channels as ``(element, kind)`` pairs."""
    lin = c.lin
    channels, index = [], {}

    def channel(name, kind):
        key = (name, kind)
        if key not in index:
            index[key] = len(channels)
            channels.append(key)
        return index[key]

    d, e, a = [], [], []
    owner = {}  # constraint row -> element
    net = getattr(c, "net", None)
    controlled = {n for n, el in net.elements.items() if getattr(el, "is_controlled_source", False)} \
        if net is not None else set()
    for name, st in lin.stamps.items():
        combos = [cb for _, cb in lin.ports[name]]
        for which, i, j, v in st["entries"]:
            if which == "D":  # a controlled source's conductance-like entries are how it supplies
                ch, sign = (channel(name, "supplied"), -1.0) if name in controlled else (channel(name, "dissipated"), 1.0)
                d.extend((ra, rb, sign * v * ca * cb, ch) for ra, ca in combos[i].items()
                         for rb, cb in combos[j].items())
            elif which == "A":
                owner[st["rows0"] + i] = name
        for i, k in st["efforts"]:
            ch = channel(name, "supplied")
            e.extend((ra, k, ca, ch) for ra, ca in combos[i].items())
    Ba = sps.coo_array(lin.B_a)
    for r, k, v in zip(Ba.row.tolist(), Ba.col.tolist(), Ba.data.tolist()):
        a.append((r, k, v, channel(owner.get(r, lin.flow_labels[r]), "supplied")))
    s = []
    if lin.R is not None:
        S = sps.coo_array(lin.A - lin.R.T)
        rest = {}
        for r, col, v in zip(S.row.tolist(), S.col.tolist(), S.data.tolist()):
            rest[(r, col)] = rest.get((r, col), 0.0) + v
        big = max((abs(v) for v in rest.values()), default=0.0)
        for name, terms in _reaction_terms(lin).items():  # each element's own part of μᵀ (A − Rᵀ) f
            ch = channel(name, "supplied")
            for (r, col), v in terms.items():
                if v != 0.0:
                    s.append((r, col, v, ch))
                rest[(r, col)] = rest.get((r, col), 0.0) - v
        for (r, col), v in rest.items():  # what no element claims (none in E, G, F, H): the row's owner
            if abs(v) > 1e-12 * big:
                s.append((r, col, v, channel(owner.get(r, lin.flow_labels[r]), "supplied")))
    port_ch, junction_ch = [], []
    for grp, names, kind in zip(c.groups, c.group_names, c.group_types):
        table = kind.port_table(grp[4], grp[6])
        P = grp[6]
        for e_, name in enumerate(names):
            for p in range(P):
                port_ch.append(channel(name, "dissipated"))
                junction_ch.append(channel(name, "junction") if table[e_ * P + p, 9] != 0.0 else -1)
    ints = lambda rows, col: np.array([r[col] for r in rows], dtype=np.int64)
    floats = lambda rows, col: np.array([r[col] for r in rows], dtype=float)
    prog = []
    for rows in (d, e, a, s):
        prog += [ints(rows, 0), ints(rows, 1), floats(rows, 2), ints(rows, 3)]
    prog += [np.array(port_ch, dtype=np.int64), np.array(junction_ch, dtype=np.int64)]
    assert len(prog) == len(WORK_FIELDS)
    return tuple(prog), channels


def _reaction_terms(lin):
    """``{element: {(row, coordinate): value}}``: the part of ``A − Rᵀ`` each element with multiplier
    reactions (``stamp["reactions"]``: its own servo rows, a sensed source's row) owns: its own ``A``
    entries on its servo rows minus its reactions. A sensed ammeter's row then holds nothing of its own (its
    reaction there is along ``Aᵀ``), and an ``F``'s output power is the ``F``'s."""
    out = {}
    for name, st in lin.stamps.items():
        reactions = st.get("reactions") or []
        if not reactions:
            continue
        combos = [cb for _, cb in lin.ports[name]]
        terms = out.setdefault(name, {})
        own_rows = {r for r, _, _ in reactions}
        for which, i, j, v in st["entries"]:
            if which == "A" and st["rows0"] + i in own_rows:
                for col, cb in combos[j].items():
                    key = (st["rows0"] + i, col)
                    terms[key] = terms.get(key, 0.0) + v * cb
        for r, i, coef in reactions:
            for col, cb in combos[i].items():
                terms[(r, col)] = terms.get((r, col), 0.0) - coef * cb
    return out


def split(channels, W):
    """Totals by kind (``{kind: (K,) array}``) and per element (``{name: {kind: (K,) array}}``) of the work
    ``W`` (output times x channels)."""
    pick = np.zeros((len(channels), len(KINDS)))
    pick[np.arange(len(channels)), [KINDS.index(kind) for _, kind in channels]] = 1.0
    sums = W @ pick
    totals = {kind: sums[:, j].copy() for j, kind in enumerate(KINDS)}
    per = {}
    for k, (name, kind) in enumerate(channels):
        per.setdefault(name, {})[kind] = W[:, k]
    return totals, per


class StepWork:
    """The running work integrals of a step-by-step transient (the compiled loop keeps its own): :meth:`step`
    after each accepted step, :meth:`record` at each output time."""

    def __init__(self, c, t0, yd0):
        from netdyn.numerics.circuit.kernels.circuit_kernel import step_work
        self.program, self.channels = work_program(c)
        n, nI = c.n, c.nI
        fsrc = np.arange(n)
        fsrc[c.I] = n + np.arange(nI)
        finert = np.zeros(n, dtype=np.bool_)
        finert[c.I] = True
        Ct = sps.csr_array(c.C_all.T)
        tables = [kind.port_table(grp[4], grp[6]) for grp, kind in zip(c.groups, c.group_types)]
        i64 = lambda x: np.ascontiguousarray(x, dtype=np.int64)
        self.static = (n, nI, i64(fsrc), finert, i64(Ct.indptr), i64(Ct.indices), Ct.data.astype(float),
                       np.ascontiguousarray(np.vstack(tables)), bool(c.has_charge))
        self.kernel = step_work
        self.nu = len(c.lin.inputs)
        self.u = c.dae.u
        self.W = np.zeros(len(self.channels))
        self.rows = [self.W.copy()]
        self.rates = {float(t0): np.array(yd0, dtype=float)}  # the rates at the accepted points, by time

    def step(self, times, states, rates):
        """Add the step to ``times[0]`` (newest first: the new point, then the history points its BDF formula
        used) with ``states`` the rows at those times and ``rates`` the step's ``ẏ`` at the new point (the
        history points' own were given with their steps)."""
        ts = np.ascontiguousarray(times, dtype=float)
        self.rates[float(ts[0])] = np.array(rates, dtype=float)
        hr = np.vstack([self.rates[float(t)] for t in ts])
        self.rates = {t: self.rates[t] for t in sorted(self.rates)[-5:]}  # the BDF uses at most 3 past points
        u = np.asarray(self.u(ts[1] + (ts[0] - ts[1]) * np.array(GAUSS)), dtype=float).reshape(-1, 2)
        u = np.ascontiguousarray(u) if u.size else np.zeros((max(self.nu, 1), 2))
        self.kernel(ts, np.ascontiguousarray(states, dtype=float), hr, ts.size, u[:, 0].copy(), u[:, 1].copy(),
                    *self.static, *self.program, self.W)

    def record(self):
        self.rows.append(self.W.copy())


def no_program():
    """An empty work program (the compiled loop's arguments when it carries no work)."""
    z, f = np.zeros(0, dtype=np.int64), np.zeros(0)
    return (z, z, f, z) * 4 + (z, z)
