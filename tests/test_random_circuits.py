"""Random circuits as engineers draw them, in every formulation, against ngspice.

A seeded generator draws circuits of R, L, C, voltage sources (DC, SIN, PULSE)
and current sources (DC, SIN): 4–12 nodes, 6–25 elements, every node with a DC
path to ground (a random spanning tree of resistors, inductors and voltage
sources), and on purpose the structures that make circuits DAEs of index two:
a capacitor straight across a supply, a source in series with a loop of
capacitors, parallel capacitors, series inductors, a current source in series
with an inductor, a source driving a node nothing else touches. Every circuit
is simulated in the default formulation and in ``branch``, ``loop`` and
``node`` (the default is ``loop``); the formulations must agree to 1e-5 of each waveform's peak, the
default path's power balance must close to 1e-6, and node voltages and inductor
currents must agree with ngspice (``uic``, fine maximum step) to 1e-3 of
their peak. Where ngspice fails at start-up the reference is instead an
exact solution computed here from an independently written MNA of the same
circuit (generalized Schur form: finite modes by the matrix exponential on an
augmented input model, the infinite ones algebraically), which is also held
against ngspice wherever ngspice does run.

Run ``python tests/test_random_circuits.py 60`` for failure statistics.
"""
import shutil

import numpy as np
import pytest
import scipy.linalg as sla

import netdyn
from netdyn.components.electrical import Capacitor, CurrentSource, Inductor, Resistor, VoltageSource
from netdyn.lagrange.sources import pulse, sine

NGSPICE = shutil.which("ngspice")
N_CIRCUITS = 10  # circuits in the test run (seeds 0..N-1): ~8 s each on this (shared, loaded) machine
TSTOP = 2e-3
# the default formulation of circuits is "loop" (asserted below), so None covers it without a second run
FORMULATIONS = (None, "branch", "node")


# ------------------------------------------------------------------------------------------ generator

class Drawn:
    """A random circuit: netdyn elements plus the data an independent MNA needs."""

    def __init__(self, seed):
        self.seed = seed
        self.rng = np.random.default_rng(seed)
        self.items = []  # (kind, name, a, b, value, wave) ; wave: ("dc", v) | ("sin", off, amp, f) | ("pulse", ...)
        self.nodes = []

    def add(self, kind, a, b, value=None, wave=None):
        name = f"{kind}{sum(1 for it in self.items if it[0] == kind) + 1}"
        self.items.append((kind, name, a, b, value, wave))
        return name

    def network(self):
        net = netdyn.Network(f"random circuit {self.seed}")
        for kind, name, a, b, value, wave in self.items:
            if kind == "R":
                net.add(Resistor(name, a, b, value))
            elif kind == "L":
                net.add(Inductor(name, a, b, value))
            elif kind == "C":
                net.add(Capacitor(name, a, b, value))
            elif kind == "V":
                net.add(VoltageSource(name, a, b, waveform(wave)))
            else:
                net.add(CurrentSource(name, a, b, waveform(wave)))
        return net


def waveform(wave):
    if wave[0] == "dc":
        return float(wave[1])
    if wave[0] == "sin":
        return sine(*wave[1:])
    return pulse(*wave[1:])


def waveform_value(wave, tt, order=0):
    """A source waveform (or its derivative) at times ``tt``, written here independently of netdyn."""
    tt = np.asarray(tt, dtype=float)
    if wave[0] == "dc":
        return np.full(tt.shape, float(wave[1]) if order == 0 else 0.0)
    if wave[0] == "sin":
        off, amp, f = wave[1:]
        w = 2 * np.pi * f
        return [off + amp * np.sin(w * tt), amp * w * np.cos(w * tt), -amp * w * w * np.sin(w * tt)][order]
    v1, v2, delay, rise, fall, width, period = wave[1:]
    s = np.mod(tt - delay, period)
    before = tt < delay
    if order == 0:
        val = np.select([s < rise, s < rise + width, s < rise + width + fall],
                        [v1 + (v2 - v1) * s / rise, v2, v2 - (v2 - v1) * (s - rise - width) / fall], v1)
    elif order == 1:
        val = np.select([s < rise, s < rise + width, s < rise + width + fall],
                        [(v2 - v1) / rise, 0.0, -(v2 - v1) / fall], 0.0)
    else:
        val = np.zeros(tt.shape)
    return np.where(before, v1 if order == 0 else 0.0, val)


def _wave(rng, volts):
    kind = rng.choice(["dc", "sin", "pulse"], p=[0.4, 0.3, 0.3])
    amp = volts * rng.uniform(0.2, 1.0) * rng.choice([-1, 1])
    if kind == "dc":
        return ("dc", float(amp))
    if kind == "sin":
        return ("sin", float(volts * rng.uniform(-0.5, 0.5)), float(amp), float(rng.uniform(1, 4) / TSTOP))
    period = float(TSTOP / rng.integers(1, 4))
    rise, fall = (float(period * rng.uniform(0.02, 0.1)) for _ in range(2))
    width = float(period * rng.uniform(0.1, 0.4))
    return ("pulse", 0.0, float(amp), float(period * rng.uniform(0.0, 0.2)), rise, fall, width, period)


def random_circuit(seed):
    """A circuit drawn from ``seed``: R, L, C, V (DC/SIN/PULSE), I; 4–12 nodes; 6–25 elements."""
    d = Drawn(seed)
    rng = d.rng
    n_nodes = int(rng.integers(4, 13))
    nodes = ["0"] + [f"n{k}" for k in range(1, n_nodes)]
    d.nodes = nodes
    R = lambda: float(10 ** rng.uniform(1, 4))
    L = lambda: float(10 ** rng.uniform(-3, -1))
    C = lambda: float(10 ** rng.uniform(-7, -5))
    parent_of = {}
    special = {}  # node -> the structure it carries (nothing else may touch it)
    v_groups = {n: n for n in nodes}  # union-find over voltage-source edges (no loop of sources only)

    def vfind(x):
        while v_groups[x] != x:
            x = v_groups[x]
        return x

    for k in range(1, n_nodes):
        node = nodes[k]
        parents = [p for p in nodes[:k] if p not in special]
        parent = parents[int(rng.integers(len(parents)))]
        parent_of[node] = parent
        roll = rng.uniform()
        if k >= 2 and roll < 0.10:  # a current source in series with an inductor (I–L cut-set)
            special[node] = "IL"
            d.add("L", parent, node, L())
            other = [p for p in nodes[:k] if p not in special and p != parent] or [parent]
            d.add("I", other[int(rng.integers(len(other)))], node, wave=_wave(rng, 0.01))
        elif k >= 2 and roll < 0.18:  # series inductors: a node with two inductors only
            special[node] = "LL"
            d.add("L", parent, node, L())
            other = [p for p in nodes[:k] if p not in special and p != parent] or [parent]
            d.add("L", node, other[int(rng.integers(len(other)))], L())
        elif roll < 0.24:  # a source driving a node nothing else touches
            special[node] = "V"
            d.add("V", node, parent, wave=_wave(rng, 5.0))
            v_groups[vfind(node)] = vfind(parent)
        else:
            kind = rng.choice(["R", "L", "V"], p=[0.6, 0.25, 0.15])
            if kind == "V":
                name = d.add("V", node, parent, wave=_wave(rng, 5.0))
                v_groups[vfind(node)] = vfind(parent)
                if rng.uniform() < 0.5:  # decoupling capacitor across the supply (V–C loop)
                    d.add("C", node, parent, C())
            else:
                d.add(kind, node, parent, R() if kind == "R" else L())
    regular = [n for n in nodes if n not in special]
    n_elements = int(rng.integers(max(6, len(d.items) + 1), 26))
    if len(regular) >= 3 and rng.uniform() < 0.5:  # a source in series with a capacitor loop (V–C–C loop)
        a, b = rng.choice(regular[1:], size=2, replace=False)
        if vfind(a) != vfind(b):
            d.add("V", a, b, wave=_wave(rng, 2.0))
            v_groups[vfind(a)] = vfind(b)
            d.add("C", a, "0", C())
            d.add("C", b, "0", C())
    while len(d.items) < n_elements:
        a, b = rng.choice(regular, size=2, replace=False)
        kind = rng.choice(["R", "L", "C", "C", "V", "I"], p=[0.3, 0.15, 0.2, 0.15, 0.1, 0.1])
        if kind == "V":
            if vfind(a) == vfind(b):
                continue
            d.add("V", a, b, wave=_wave(rng, 5.0))
            v_groups[vfind(a)] = vfind(b)
        elif kind == "I":
            d.add("I", a, b, wave=_wave(rng, 0.01))
        elif kind == "C" and rng.uniform() < 0.3 and any(it[0] == "C" for it in d.items):
            cap = [it for it in d.items if it[0] == "C"][int(rng.integers(sum(it[0] == "C" for it in d.items)))]
            d.add("C", cap[2], cap[3], C())  # parallel capacitors
        else:
            d.add(kind, a, b, {"R": R, "L": L, "C": C}[kind]())
    return d


# ------------------------------------------------------------------------------------------ exact MNA reference

def mna(drawn):
    """``E x' = A x + Σ_s B_s u_s(t)`` in x = [node voltages, inductor currents, voltage-source currents]."""
    nodes = [n for n in drawn.nodes if n != "0"]
    idx = {n: i for i, n in enumerate(nodes)}
    Ls = [it for it in drawn.items if it[0] == "L"]
    Vs = [it for it in drawn.items if it[0] == "V"]
    srcs = [it for it in drawn.items if it[0] in "VI"]
    nn, nl, nv = len(nodes), len(Ls), len(Vs)
    N = nn + nl + nv
    E, A, B = np.zeros((N, N)), np.zeros((N, N)), np.zeros((N, len(srcs)))

    def stamp(M, r_nodes, c_nodes, val):
        for ra, sa in zip(r_nodes, (1, -1)):
            for cb, sb in zip(c_nodes, (1, -1)):
                if ra in idx and cb in idx:
                    M[idx[ra], idx[cb]] += sa * sb * val

    for kind, name, a, b, value, wave in drawn.items:
        if kind == "R":
            stamp(A, (a, b), (a, b), -1.0 / value)
        elif kind == "C":
            stamp(E, (a, b), (a, b), value)
    for k, (_, name, a, b, value, _) in enumerate(Ls):  # current a -> b; L i' = v_a - v_b
        r = nn + k
        for node, s in ((a, -1.0), (b, 1.0)):
            if node in idx:
                A[idx[node], r] += s
                A[r, idx[node]] -= s
        E[r, r] = value
    for k, (_, name, a, b, _, wave) in enumerate(Vs):  # SPICE current a -> b inside; v_a - v_b = u
        r = nn + nl + k
        for node, s in ((a, -1.0), (b, 1.0)):
            if node in idx:
                A[idx[node], r] += s
                A[r, idx[node]] -= s
        B[r, srcs.index(Vs[k])] = -1.0
    for j, (kind, name, a, b, _, wave) in enumerate(srcs):
        if kind == "I":  # i flows a -> b through the source: out of a, into b
            if a in idx:
                B[idx[a], j] -= 1.0
            if b in idx:
                B[idx[b], j] += 1.0
    return E, A, B, srcs, nodes, [it[1] for it in Ls]


def mna_exact(drawn, times):
    """Node voltages and inductor currents at ``times`` from the MNA, exactly.

    The pencil ``(A, E)`` is split by an ordered generalized Schur form into
    finite and infinite eigenvalues. The finite part is an ODE integrated
    exactly piece by piece between source corners with the matrix exponential
    of an augmented system (each source written as the output of a small
    linear generator: constant, ramp or oscillator); the infinite part is
    ``x_∞ = −Σ_k Nᵏ B_∞ u^(k)``. The circuit starts from rest (uncharged
    capacitors, no inductor current) and jumps at ``t = 0`` onto the
    consistent state as impulses would move it: the finite coordinates
    ``E x`` keep their values.
    """
    E, A, B, srcs, nodes, Ls = mna(drawn)
    N = E.shape[0]
    scale = np.max(np.abs(A)) / max(np.max(np.abs(E)), 1e-300)
    AA, EE, alpha, beta, Q, Z = sla.ordqz(A, E * scale, sort=lambda a, b: np.abs(b) > 1e-9 * np.abs(a),
                                          output="real")
    nf = int(np.sum(np.abs(beta) > 1e-9 * np.abs(alpha)))
    # Q^T (A, E s) Z = (AA, EE) upper triangular blocks [[11, 12], [0, 22]]; x = Z [y_f; y_inf]
    # decouple the 12 blocks (Sylvester: Y A22 - A11 X ..., solved as a generalized Sylvester pair)
    A11, A12, A22 = AA[:nf, :nf], AA[:nf, nf:], AA[nf:, nf:]
    E11, E12, E22 = EE[:nf, :nf], EE[:nf, nf:], EE[nf:, nf:]
    ni = N - nf
    # find L, R with [I L; 0 I] (A, E) [I R; 0 I] block diagonal: A11 R + L A22 = -A12, E11 R + L E22 = -E12
    if ni and nf:
        K = np.block([[np.kron(np.eye(ni), A11), np.kron(A22.T, np.eye(nf))],
                      [np.kron(np.eye(ni), E11), np.kron(E22.T, np.eye(nf))]])
        sol = np.linalg.solve(K, -np.concatenate([A12.ravel(order="F"), E12.ravel(order="F")]))
        Rm = sol[:nf * ni].reshape((nf, ni), order="F")
        Lm = sol[nf * ni:].reshape((nf, ni), order="F")
    else:
        Rm, Lm = np.zeros((nf, ni)), np.zeros((nf, ni))
    QB = Q.T @ B
    Bf = QB[:nf] + Lm @ QB[nf:]
    Bi = QB[nf:]
    T = Z @ np.block([[np.eye(nf), Rm], [np.zeros((ni, nf)), np.eye(ni)]])  # x = T [y_f; y_i]
    # finite part: E11 y_f' = A11 y_f + Bf u ; infinite: E22 y_i' = A22 y_i + Bi u, E22 nilpotent-ish
    Af = np.linalg.solve(E11 / scale, A11) if nf else np.zeros((0, 0))
    Bf_ = np.linalg.solve(E11 / scale, Bf) if nf else np.zeros((0, len(srcs)))
    Ainv = np.linalg.inv(A22) if ni else np.zeros((0, 0))
    Nil = Ainv @ (E22 / scale) if ni else np.zeros((0, 0))

    def y_inf(tt):
        out = np.zeros((ni, np.size(tt)))
        term = -Ainv @ Bi
        for k in range(3):
            u = np.vstack([waveform_value(s[5], tt, k) for s in srcs]) if srcs else np.zeros((0, np.size(tt)))
            out += term @ u
            term = Nil @ term
        return out

    # initial jump: at rest before t = 0 (x = 0); finite coordinates y_f are continuous
    yf = np.zeros(nf)
    corners = set()
    for s in srcs:
        w = s[5]
        if w[0] == "pulse":
            v1, v2, delay, rise, fall, width, period = w[1:]
            k = 0
            while delay + k * period < times[-1]:
                base = delay + k * period
                corners.update(c for c in (base, base + rise, base + rise + width, base + rise + width + fall)
                               if 0 < c < times[-1])
                k += 1
    edges = [0.0] + sorted(corners) + [float(times[-1]) + 1e-12]
    out_f = np.zeros((nf, times.size))
    for ta, tb in zip(edges[:-1], edges[1:]):
        # on this piece every source is  c0 + c1 (t - ta)  or  off + amp sin(ω t): states of a generator
        nz = 2 * len(srcs)
        Mc = np.zeros((nf + nz + 1, nf + nz + 1))  # [y_f, generator states, 1]
        Mc[:nf, :nf] = Af
        z0 = np.zeros(nz)
        for j, s in enumerate(srcs):
            w, k = s[5], nf + 2 * j
            if w[0] == "sin":  # z = (sin ω t, cos ω t); u = off + amp z1
                off, amp, f = w[1:]
                om = 2 * np.pi * f
                Mc[k, k + 1], Mc[k + 1, k] = om, -om
                z0[2 * j], z0[2 * j + 1] = np.sin(om * ta), np.cos(om * ta)
                Mc[:nf, k] = Bf_[:, j] * amp
                Mc[:nf, -1] += Bf_[:, j] * off
            else:  # z = (c0 + c1 τ, c1); u = z1
                Mc[k, k + 1] = 1.0
                z0[2 * j] = float(waveform_value(w, np.array([ta]))[0])
                z0[2 * j + 1] = float(waveform_value(w, np.array([0.5 * (ta + tb)]), 1)[0])
                Mc[:nf, k] = Bf_[:, j]
        x = np.concatenate([yf, z0, [1.0]])
        tk = ta
        steps = {}
        for i in np.flatnonzero((times >= ta) & (times < tb)):  # march from one output time to the next
            h = float(times[i] - tk)
            key = round(h / (tb - ta + 1e-300), 9)
            if key not in steps:
                steps[key] = sla.expm(Mc * h)
            x = steps[key] @ x
            tk = times[i]
            out_f[:, i] = x[:nf]
        yf = (sla.expm(Mc * (tb - tk)) @ x)[:nf]
    x = T @ np.vstack([out_f, y_inf(times)])
    res = {f"v({n})": x[i] for i, n in enumerate(nodes)}
    res.update({f"i({name})": x[len(nodes) + k] for k, name in enumerate(Ls)})
    return res


# ------------------------------------------------------------------------------------------ comparisons

def peak_error(a, b, floor=0.0):
    """max |a − b| relative to the peak of ``b`` (or to ``floor`` when larger: waveforms zero to roundoff)."""
    return float(np.max(np.abs(np.asarray(a) - np.asarray(b))) / max(np.max(np.abs(b)), floor, 1e-300))


def worst(ours, ref, keys):
    """Largest :func:`peak_error` over ``keys``; a waveform's floor is 1e-5 of the largest peak of its kind
    (voltages, currents), so one that is zero but for roundoff (a dead-end branch) is not divided by its
    own roundoff: there the errors are absolute, below 1e-10 (formulations) or 1e-8 (references) of the
    circuit's largest waveform."""
    floors = {}
    for kind in "vi":
        peaks = [np.max(np.abs(ref[k])) for k in keys if k[0] == kind]
        floors[kind] = 1e-5 * max(peaks, default=0.0)
    return max(peak_error(ours[k], ref[k], floors[k[0]]) for k in keys)


def netdyn_waveforms(drawn, net, times, formulation):
    sol = netdyn.simulate(net, (0.0, TSTOP), t_eval=times, formulation=formulation)
    out = {f"v({n})": sol.voltage(n) for n in drawn.nodes if n != "0"}
    for kind, name, *_ in drawn.items:
        out[f"i({name})"] = sol.current(name)
    return sol, out


def ngspice_waveforms(drawn, net, probes):
    from netdyn.io import run_ngspice, spice_names, write_netlist
    names = spice_names(net)
    rename = {p: p for p in probes}
    for p in probes:
        inner = p[2:-1]
        rename[p] = f"v({names['nodes'][inner]})" if p[0] == "v" else f"i({names['elements'][inner]})"
    try:
        out = run_ngspice(write_netlist(net), list(rename.values()), tstop=TSTOP, tstep=TSTOP / 1000,
                          tmax=TSTOP / 20000, uic=True, timeout=120)
    except Exception as exc:  # ngspice failed (start-up, time step too small, ...)
        return None, str(exc).splitlines()[0][:120]
    return {"time": out["time"], **{p: out[rename[p]] for p in probes}}, None


def check_circuit(seed, verbose=False):
    """Simulate one random circuit every way; returns a dict of measured errors (asserts nothing)."""
    drawn = random_circuit(seed)
    net = drawn.network()
    probes = [f"v({n})" for n in drawn.nodes if n != "0"] + [f"i({it[1]})" for it in drawn.items if it[0] == "L"]
    report = {"seed": seed, "elements": len(drawn.items), "nodes": len(drawn.nodes)}
    ng, why = ngspice_waveforms(drawn, net, probes) if NGSPICE else (None, "ngspice not installed")
    report["ngspice_failed"] = why
    t_eval = np.linspace(0.0, TSTOP, 401)
    times = t_eval[1:]
    if ng is not None:  # ngspice's own time points (step <= TSTOP/20000) interpolated onto the grid
        ng = {p: np.interp(times, ng["time"], ng[p]) for p in probes}
    exact = mna_exact(drawn, times)
    results = {}
    for form in FORMULATIONS:
        sol, wav = netdyn_waveforms(drawn, net, t_eval, form)
        results[form] = (sol, {k: v[1:] for k, v in wav.items()})
    base = results[None][1]
    report["formulations"] = max(worst(results[f][1], base, list(base)) for f in FORMULATIONS[1:])
    report["power_balance"] = results[None][0].power_balance()["relative"]
    report["method"] = results[None][0].method
    report["vs_exact"] = worst(base, exact, probes)
    if ng is not None:
        report["vs_ngspice"] = worst(base, ng, probes)
        report["ngspice_vs_exact"] = worst(ng, exact, probes)
    if verbose:
        print(report)
    return report


@pytest.mark.parametrize("seed", range(N_CIRCUITS))
def test_random_circuit(seed):
    from netdyn.graph.assemble import DEFAULT_FORMULATION
    assert DEFAULT_FORMULATION["electrical"] == "loop"
    r = check_circuit(seed)
    print(r)
    assert r["method"] == "linear"
    assert r["formulations"] < 1e-5, r
    assert r["power_balance"] < 1e-6, r
    if r.get("vs_ngspice") is not None:
        assert r["vs_ngspice"] < 1e-3, r
        assert r["ngspice_vs_exact"] < 1e-3, r  # the independent reference is itself checked against ngspice
    assert r["vs_exact"] < 1e-3, r


def test_generator_draws_the_structures_on_purpose():
    """The seeds of the test run contain each index-two structure the generator is meant to draw."""
    from netdyn.graph import topology
    found = {"VC": 0, "IL": 0, "LL": 0, "dangling V": 0, "parallel C": 0}
    for seed in range(N_CIRCUITS):
        d = random_circuit(seed)
        assert 4 <= len(d.nodes) <= 12 and 6 <= len(d.items) <= 25
        net = d.network()
        g = net.domain_graph("electrical")
        kind = {it[1]: it[0] for it in d.items}
        found["VC"] += bool(topology.source_loops(g, lambda k: kind[k] in "VC", lambda k: kind[k] == "V"))
        found["IL"] += bool(topology.source_cutsets(g, lambda k: kind[k] in "IL", lambda k: kind[k] == "I"))
        found["LL"] += any(all(kind[k] == "L" for *_, k in g.in_edges(n, keys=True)) and
                           all(kind[k] == "L" for *_, k in g.out_edges(n, keys=True)) and g.degree(n) == 2
                           for n in g.nodes if n != "0")
        found["dangling V"] += any(g.degree(n) == 1 and kind[next(iter(g.in_edges(n, keys=True) or
                                                                       g.out_edges(n, keys=True)))[2]] == "V"
                                   for n in g.nodes if n != "0")
        ends = [frozenset((it[2], it[3])) for it in d.items if it[0] == "C"]
        found["parallel C"] += len(ends) != len(set(ends))
        for node in d.nodes:  # a DC path to ground: through R, L and V only
            assert node == "0" or _dc_path(d, node)
    assert all(v >= 2 for v in found.values()), found


def _dc_path(d, node):
    import networkx as nx
    g = nx.Graph()
    g.add_edges_from((it[2], it[3]) for it in d.items if it[0] in "RLV")
    return g.has_node(node) and nx.has_path(g, node, "0")


if __name__ == "__main__":  # statistics over more seeds: python tests/test_random_circuits.py 60
    import sys
    import time
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 60
    t0 = time.time()
    rows = []
    for s in range(count):
        try:
            rows.append(check_circuit(s))
        except Exception as exc:  # refused or failed: report it
            rows.append({"seed": s, "error": f"{type(exc).__name__}: {str(exc)[:160]}"})
        print(rows[-1], flush=True)
    errs = [r for r in rows if "error" in r]
    print(f"{count} circuits in {time.time() - t0:.0f} s: {len(errs)} raised; "
          f"ngspice failed on {sum(1 for r in rows if r.get('ngspice_failed'))}; "
          f"formulations disagree (>1e-5) on {sum(1 for r in rows if r.get('formulations', 0) > 1e-5)}; "
          f"vs ngspice > 1e-3 on {sum(1 for r in rows if r.get('vs_ngspice', 0) > 1e-3)}; "
          f"vs exact > 1e-3 on {sum(1 for r in rows if r.get('vs_exact', 0) > 1e-3)}; "
          f"power balance > 1e-6 on {sum(1 for r in rows if r.get('power_balance', 0) > 1e-6)}")
