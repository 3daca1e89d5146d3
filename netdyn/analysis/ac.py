"""Small-signal AC analysis (SPICE ``.ac``): the network linearized about its DC operating point.

The linearized equations are the transient's own sparse stamp (same
coordinates, same multipliers), with each nonlinear element replaced by the
Hessian of its dissipation at the operating point (a diode's small-signal
conductance), in the descriptor form

    (s² M + s D + K) Q + R μ = b_e U,     s A Q + b_a U = 0,     s = jω,

where ``b_e``/``b_a`` is how the input source's value enters its efforts and
flow constraints and every other source is held at its DC value (zero
small-signal). One complex sparse factorization per frequency. Node voltages
and element currents come from each element's own port law, as in
:mod:`netdyn.operating_point`.

>>> import numpy as np, netdyn
>>> from netdyn.components.electrical import VoltageSource, Resistor, Capacitor
>>> net = netdyn.Network("rc")
>>> _ = net.add(VoltageSource("V1", "in", "0", 0.0), Resistor("R1", "in", "out", 1e3), Capacitor("C1", "out", "0", 1e-6))
>>> res = ac(net, [1 / (2 * np.pi * 1e-3)], input="V1", outputs=["v(out)"])
>>> round(float(res.magnitude("v(out)")[0]), 9), round(float(res.phase("v(out)")[0]), 6)   # 1/sqrt(2), -45°
(0.707106781, -45.0)
"""
from __future__ import annotations

import re

import numpy as np
import scipy.sparse as sps
import scipy.sparse.linalg as spla

from netdyn.components.base import ACROSS, DOMAINS, THROUGH
from netdyn.errors import ModelError, SingularSystemError
from netdyn.graph.assemble import resolve_formulation
from netdyn.numerics.circuit.operating_point import _stamped, operating_point
from netdyn.graph import topology

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # names for the hints only (annotations are not evaluated)
    from netdyn.graph.network import Network
    from netdyn.hints import ArrayLike, Formulation
    from collections.abc import Sequence

__all__ = ["ac", "ACResult", "frequencies_of"]


def frequencies_of(sweep, points, fstart, fstop):
    """The frequencies of a SPICE ``.ac`` sweep (``dec``/``oct``: points per decade/octave; ``lin``: total).

    >>> frequencies_of("dec", 2, 1.0, 100.0).round(6).tolist()
    [1.0, 3.162278, 10.0, 31.622777, 100.0]
    """
    sweep = sweep.lower()
    if sweep == "lin":
        return np.linspace(fstart, fstop, int(points)) if points > 1 else np.array([fstart])
    base = {"dec": 10.0, "oct": 2.0}.get(sweep)
    if base is None:
        raise ModelError(f"unknown .ac sweep {sweep!r}; use dec, oct or lin")
    n = int(np.floor(np.log(fstop / fstart) / np.log(base) * points + 1e-9)) + 1
    return fstart * base ** (np.arange(n) / points)


class ACResult:
    """Complex responses ``values[output]`` at ``frequencies`` (Hz) to the ``input`` source's AC value."""

    def __init__(self, frequencies, values, input, drive):
        self.frequencies, self.values, self.input, self.drive = frequencies, values, input, drive

    def __getitem__(self, output):
        return self.values[output]

    def magnitude(self, output):
        """|response|."""
        return np.abs(self.values[output])

    def db(self, output):
        """20 log10 |response|."""
        return 20 * np.log10(np.abs(self.values[output]))

    def phase(self, output):
        """Phase in degrees, in (−180, 180] (as ngspice's ``vp``, in degrees)."""
        return np.degrees(np.angle(self.values[output]))

    def table(self):
        """Frequency, then magnitude and phase (degrees) of every output, one row a frequency."""
        cols = ["frequency"]
        for out in self.values:
            cols += [f"mag({out})", f"phase({out})"]
        width = max(16, max(len(c) for c in cols))
        lines = [" ".join(f"{c:>{width}}" for c in cols)]
        for k, f in enumerate(self.frequencies):
            row = [f]
            for out in self.values:
                row += [abs(self.values[out][k]), np.degrees(np.angle(self.values[out][k]))]
            lines.append(" ".join(f"{v:>{width}.9e}" for v in row))
        return "\n".join(lines)

    def plot(self, path=None, outputs=None, title=None):
        """Bode plot: magnitude in dB and phase in degrees against frequency in Hz (log axis)."""
        import matplotlib  # lazy: matplotlib stays out of `import netdyn` (tests/test_layers.py)
        if path is not None:
            matplotlib.use("Agg")
        import matplotlib.pyplot as plt  # lazy: matplotlib stays out of `import netdyn` (tests/test_layers.py)
        outputs = list(outputs or self.values)
        fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(8, 6), sharex=True)
        for out in outputs:
            ax1.semilogx(self.frequencies, self.db(out), label=out)
            ax2.semilogx(self.frequencies, self.phase(out), label=out)
        ax1.set_ylabel(f"magnitude (dB, output / {self.input})")
        ax2.set_ylabel("phase (degrees)")
        ax2.set_xlabel("frequency (Hz)")
        for ax in (ax1, ax2):
            ax.grid(True, which="both", alpha=0.3)
            ax.legend(loc="best", fontsize="small")
        ax1.set_title(title or f"AC response to {self.input}")
        fig.tight_layout()
        if path is not None:
            fig.savefig(path, dpi=110)
            plt.close(fig)
        return fig

    def __repr__(self):
        return f"ACResult({len(self.frequencies)} frequencies, outputs {list(self.values)})"


def ac(net: Network, frequencies: ArrayLike, input: str | None = None, outputs: Sequence[str] | None = None,
       formulation: Formulation = None, t0: float = 0.0) -> ACResult:
    """Small-signal response of a network about its DC operating point.

    Parameters
    ----------
    net : Network
    frequencies : array_like
        Frequencies in Hz.
    input : str, optional
        The source driven with its AC value (``net.ac_sources`` from a netlist's ``AC mag phase``, else
        magnitude 1, phase 0). Default: the only source with an AC value, or the only source.
    outputs : list of str, optional
        ``"v(node)"``, ``"v(a,b)"`` or ``"i(element)"`` (SPICE signs); default every node voltage.
    formulation : str, optional
        Coordinates of the solve (the answer does not depend on it).

    Returns
    -------
    ACResult

    Examples
    --------
    >>> import netdyn
    >>> from netdyn.components.electrical import VoltageSource, Resistor
    >>> from netdyn.components.controlled import VCVS
    >>> net = netdyn.Network()
    >>> _ = net.add(VoltageSource("V1", "in", "0", 0.0), Resistor("R1", "in", "0", 1e3),
    ...             VCVS("E1", "out", "0", "in", "0", gain=-4), Resistor("R2", "out", "0", 1e3))
    >>> ac(net, [1e3], input="V1", outputs=["v(out)", "i(E1)"])["v(out)"].round(12).tolist()
    [(-4+0j)]
    """

    if not hasattr(net, "elements"):
        raise ModelError(f"ac needs a Network (its sources are driven), got {type(net).__name__}; build the network, "
                         "or linearize a model with netdyn.linearize and take its transfer function")
    frequencies = np.atleast_1d(np.asarray(frequencies, dtype=float))
    if frequencies.size == 0 or not np.all(np.isfinite(frequencies) & (frequencies >= 0)):
        raise ModelError(f"ac: frequencies must be finite numbers >= 0 (Hz), got {frequencies.tolist()[:5]}")
    sources = [n for n, el in net.elements.items() if getattr(el, "is_source", False)]
    ac_sources = dict(getattr(net, "ac_sources", None) or {})
    if input is None:
        pool = list(ac_sources) or sources
        if len(pool) != 1:
            raise ModelError(f"ac: say which source drives the circuit (input=...); candidates: {pool or 'none'}")
        input = pool[0]
    if input not in net.elements or not getattr(net.elements[input], "is_source", False):
        raise ModelError(f"ac: input {input!r} is not a source of the network; sources: {sources}")
    mag, phase = ac_sources.get(input, (1.0, 0.0))
    drive = mag * np.exp(1j * np.radians(phase))
    domains = [d for d in net.domains if d in DOMAINS]
    forms = resolve_formulation(formulation, domains, net)
    kinds = {d: ACROSS if forms[d] == "node" else THROUGH for d in domains}
    lin, info, skip = _stamped(net, forms, kinds, t0)
    op = operating_point(net, formulation) if skip else None
    n, m = lin.n, lin.m

    def vec(combo):
        return np.fromiter(combo.keys(), dtype=int, count=len(combo)), \
            np.fromiter(combo.values(), dtype=float, count=len(combo))

    # the operating point of each element (only nonlinear ones need it) and its small-signal law
    local = {}
    extra = []
    for name, (el, law, vals, combos, keys, pk) in info.items():
        F0 = np.zeros(len(keys))
        if op is not None and name in skip:
            F0 = np.array([(op.port_through if pk[i] == THROUGH else op.port_across)[name][i]
                           for i in range(len(keys))])
        ev = law(vals, np.zeros(len(keys)), F0, t0)
        ss = law.small_signal(vals, np.zeros(len(keys)), F0, t0)
        local[name] = (ev, ss)
        if name in skip:  # the device's conductance (hD) and its junction capacitance (hT) at the operating point
            for which, H in (("D", ev["hD"]), ("M", ss["hT"])):
                for a, ca in enumerate(combos):
                    for b, cb in enumerate(combos):
                        if H[a, b]:
                            ia, va = vec(ca)
                            ib, vb = vec(cb)
                            extra.append((which, np.repeat(ia, ib.size), np.tile(ib, ia.size),
                                          np.outer(va, vb).ravel() * H[a, b]))

    def plus(base, which):
        parts = [e for e in extra if e[0] == which]
        if not parts:
            return base
        r, c, d = (np.concatenate([e[k] for e in parts]) for k in (1, 2, 3))
        return base + sps.csr_array((d, (r, c)), shape=(n, n))
    D, M = plus(lin.D, "D"), plus(lin.M, "M")
    # the input: how its value enters its efforts and its flow constraints
    el, law, vals, combos, keys, pk = info[input]
    ss_in = local[input][1]
    iv = list(law.value_names).index("value")
    b_e = np.zeros(n)
    for i, ci in enumerate(combos):
        idx, cf = vec(ci)
        b_e[idx] += cf * ss_in["deP"][i, iv]
    b_a = np.zeros(m)
    rows = [r for r, label in enumerate(lin.flow_labels) if re.sub(r"\[\d+\]$", "", label) == input]
    for j, r in enumerate(rows[:ss_in["dpsiP"].shape[0]]):
        b_a[r] = ss_in["dpsiP"][j, iv]

    outputs = list(outputs) if outputs is not None else None
    nodes = _node_paths(net)  # the tree paths from ground, once for every frequency and output
    values = {}
    for k, f in enumerate(frequencies):
        s = 2j * np.pi * f
        top = sps.hstack([(s * s) * M + s * D + lin.K, lin.reaction])
        bottom = sps.hstack([s * lin.A, sps.csr_array((m, m))])
        Z = sps.vstack([top, bottom]).tocsc()
        rhs = np.concatenate([b_e * drive, -b_a * drive]).astype(complex)
        try:
            x = spla.splu(Z).solve(rhs)
        except RuntimeError:
            raise SingularSystemError(f"the small-signal system is singular at {f:g} Hz: a node with no path to "
                                      "ground at that frequency or a loop of ideal sources") from None
        Q, mu = x[:n], x[n:]
        port = _port_values(net, info, local, lin, Q, mu, s, input, drive, iv)
        if outputs is None:
            outputs = [f"v({node})" for node in _node_names(net)]
        memo = {}  # node voltages at this frequency, each its parent's minus one branch
        for out in outputs:
            values.setdefault(out, np.zeros(frequencies.size, complex))[k] = _output(net, port, out, nodes, memo)
    return ACResult(frequencies, values, input, drive)


def _node_names(net):
    return [nd for nd in net.graph.nodes if nd != "0" and nd not in net.bodies and "#" not in str(nd)]


def _port_values(net, info, local, lin, Q, mu, s, input, drive, iv):
    """Complex (through, across) of every element port, from each element's linearized law."""
    row_of = {}
    for r, label in enumerate(lin.flow_labels):
        row_of.setdefault(re.sub(r"\[\d+\]$", "", label), []).append(r)
    eff_by_key, flow_by_key = {}, {}
    for name, (el, law, vals, combos, keys, pk) in info.items():
        ev, ss = local[name]
        Qp = np.array([sum(c * Q[j] for j, c in cb.items()) for cb in combos])
        Fp = s * Qp
        eff = s * (ss["hT"] @ Fp) + ev["hD"] @ Fp + ev["hV"] @ Qp - ss["deF"] @ Fp - ss["deQ"] @ Qp
        if name == input:
            eff = eff - ss["deP"][:, iv] * drive
        for j, r in enumerate(row_of.get(name, [])[:ev["react"].shape[0]]):
            eff = eff + ev["react"][j] * mu[r]
        for i, k in enumerate(keys):
            eff_by_key[k] = eff_by_key.get(k, 0) + eff[i]
            flow_by_key[k] = (pk[i], Fp[i])
    out = {}
    for name, el in net.elements.items():
        keys = info[name][4][:len(el.ports)]
        vals = []
        for k in keys:
            kind, fl = flow_by_key[k]
            e = eff_by_key[k]
            vals.append((fl, e) if kind == THROUGH else (e, fl))
        out[name] = vals
    return out


def _output(net, port, spec, nodes, memo):
    m = re.fullmatch(r"\s*([vVIi])\(\s*([^,()]+?)\s*(?:,\s*([^,()]+?)\s*)?\)\s*", spec)
    if not m:
        raise ModelError(f"ac output {spec!r}: use v(node), v(a,b) or i(element)")
    kind, a, b = m.group(1).lower(), m.group(2), m.group(3)
    if kind == "i":
        el = net.elements.get(a)
        if el is None or not el.ports:
            raise ModelError(f"ac output {spec!r}: no element named {a!r} with a port of its own")
        sign = getattr(el, "through_report_signs", el.report_signs)[0]
        return sign * port[a][0][0]

    def node_voltage(node):
        if node in ("0", "gnd", "ground"):
            return 0.0
        for i, (paths, owner) in enumerate(nodes):  # the first domain that has the node answers for it
            if node in paths:
                def down(value, key, sign):
                    name, k = owner[key]
                    return value - sign * port[name][k][1]
                return paths.fold(node, memo.setdefault(i, {}), 0.0, down)
        raise ModelError(f"ac output {spec!r}: no node named {node!r}")
    return node_voltage(a) - (node_voltage(b) if b is not None else 0.0)


def _node_paths(net):
    """The tree from ground of each domain and the port each of its branches is: ``[(paths, owner)]`` with
    ``owner[key] = (element, port)``. A node's voltage is ``−Σ sign · across`` down its path; folded with a
    memo (:meth:`~netdyn.graph.topology.TreePaths.fold`), every node costs one step more than its parent."""
    out = []
    for domain in [d for d in net.domains if d in DOMAINS]:
        g = net.domain_graph(domain)
        owner = {d_key: (d["element"].name, d["port"]) for *_, d_key, d in g.edges(keys=True, data=True)}
        out.append((topology.tree_paths(g, "0"), owner))
    return out