"""netdyn against ngspice (and closed forms) on the same circuits.

Every case runs ngspice in batch mode with a small fixed maximum step
(tmax = tstop/20000 unless said otherwise), simulates the same network with
netdyn at ngspice's own output times (no interpolation), and requires the
waveforms to agree to within 1e-4 of each waveform's peak.  Where a closed
form exists (linear circuits: the exact solution through the eigenvectors of
the state matrix) both are also held against it, so a disagreement says who
is wrong.  Run with ``-s`` to see the measured numbers.
"""
import pathlib
import re
import shutil

import numpy as np
import pytest

import netdyn
from netdyn.components.electrical import (Capacitor, CoupledInductors, IdealTransformer, Inductor, MutualInductance,
                                          Resistor, VoltageSource)
from netdyn.errors import NetdynError
from netdyn.io import read_netlist, run_ngspice, spice_names, write_netlist
from netdyn.lagrange.sources import pulse, sine

NGSPICE = shutil.which("ngspice")
pytestmark = pytest.mark.skipif(NGSPICE is None, reason="ngspice is not installed (no 'ngspice' on PATH)")

EXAMPLES = pathlib.Path(__file__).resolve().parent.parent / "examples" / "netlists"
TOL = 1e-4


# --- helpers ----------------------------------------------------------------------------------

def rel_err(a, b):
    """max |a - b| relative to the peak of b."""
    return float(np.max(np.abs(np.asarray(a) - np.asarray(b))) / np.max(np.abs(b)))


def ngspice_run(deck, probes, tstop, tmax_div=20000, tstep=None):
    return run_ngspice(deck, probes, tstop=tstop, tstep=tstep or tstop / 1000, tmax=tstop / tmax_div)


def netdyn_at(net, probes, times, **kw):
    """netdyn's waveforms for ngspice-style probes v(node) / i(element), at the given times."""
    sol = netdyn.simulate(net, (0.0, float(times[-1])), t_eval=np.concatenate([[0.0], times]), **kw)
    assert sol.t[1:] == pytest.approx(times, rel=0, abs=0)
    md = sol.model.metadata
    nodes = {str(n).lower(): n for paths in md.get("node_paths", {}).values() for n in paths}
    elements = {n.lower(): n for n in md.get("elements", {})}
    out = {}
    for p in probes:
        kind, name = re.fullmatch(r"([vi])\((.+)\)", p.lower()).groups()
        if kind == "v":
            out[p] = sol.voltage(nodes[name])[1:]
        else:
            out[p] = sol.current(elements[name])[1:]
    return out


def agree(label, ours, ng, probes, exact=None, tol=TOL):
    """Assert agreement; print netdyn-ngspice (and -exact) errors relative to the peak."""
    for p in probes:
        e = rel_err(ours[p], ng[p])
        line = f"{label:28s} {p:10s} netdyn-ngspice {e:.2e}"
        if exact is not None and p in exact:
            line += f"   netdyn-exact {rel_err(ours[p], exact[p]):.2e}   ngspice-exact {rel_err(ng[p], exact[p]):.2e}"
        print(line)
    for p in probes:
        if exact is not None and p in exact:
            assert rel_err(ours[p], exact[p]) < tol, (label, p, "netdyn vs exact")
            assert rel_err(ng[p], exact[p]) < tol, (label, p, "ngspice vs exact")
        assert rel_err(ours[p], ng[p]) < tol, (label, p)


def lti_exact(A, B, u_gen, G, z0, times):
    """Exact solution of x' = A x + B (u_gen . z), z' = G z, x(0) = 0, z(0) = z0.

    The augmented matrix [[A, B u_gen], [0, G]] is diagonalized (its eigenvalues
    are distinct for the circuits here); returns x at ``times`` (states in rows).
    """
    n, m = A.shape[0], G.shape[0]
    M = np.zeros((n + m, n + m))
    M[:n, :n] = A
    M[:n, n:] = np.outer(B, u_gen)
    M[n:, n:] = G
    lam, V = np.linalg.eig(M)
    c = np.linalg.solve(V, np.concatenate([np.zeros(n), z0]))
    Y = (V @ (np.exp(np.outer(lam, times)) * c[:, None])).real
    return Y[:n]


def lti_pwl(A, B, knots, times):
    """Exact x(t) of x' = A x + B u(t), x(0) = 0, u piecewise linear through ``knots`` (constant outside).

    On a segment starting at a with u = u_a + s (t - a):
    x = e^{A tau} (x_a + A^-1 B u_a + A^-2 B s) - A^-1 B (u_a + s tau) - A^-2 B s.
    """
    n = A.shape[0]
    lam, V = np.linalg.eig(A)
    Vi = np.linalg.inv(V)
    AiB = np.linalg.solve(A, B)
    Ai2B = np.linalg.solve(A, AiB)
    kt = np.array([k[0] for k in knots], float)
    ku = np.array([k[1] for k in knots], float)
    edges = sorted({0.0, *[k for k in kt if k > 0]}) + [np.inf]
    x = np.zeros(n)
    out = np.zeros((n, len(times)))
    for a, b in zip(edges[:-1], edges[1:]):
        ua = np.interp(a, kt, ku)
        s = 0.0 if not np.isfinite(b) else (np.interp(b, kt, ku) - ua) / (b - a)
        c = Vi @ (x + AiB * ua + Ai2B * s)

        def at(tau, c=c, ua=ua, s=s):
            tau = np.atleast_1d(tau)
            return ((V @ (np.exp(np.outer(lam, tau)) * c[:, None])).real
                    - np.outer(AiB, ua + s * tau) - Ai2B[:, None] * s)
        mask = (times >= a) & (times < b)
        if mask.any():
            out[:, mask] = at(times[mask] - a)
        if np.isfinite(b):
            x = at(b - a)[:, 0]
    return out


# --- hand-built networks ----------------------------------------------------------------------

def test_series_rlc_step_response():
    R, L, C = 10.0, 1e-3, 1e-6
    net = netdyn.Network("series RLC")
    net.add(VoltageSource("V1", "in", "0", 1.0), Resistor("R1", "in", "mid", R),
            Inductor("L1", "mid", "cap", L), Capacitor("C1", "cap", "0", C))
    tstop = 2e-3
    probes = ["v(cap)", "i(V1)", "v(mid)"]
    ng = ngspice_run(write_netlist(net), probes, tstop)
    tt = ng["time"]
    ours = netdyn_at(net, probes, tt)
    a, w0 = R / (2 * L), 1 / np.sqrt(L * C)
    wd = np.sqrt(w0**2 - a**2)
    vc = 1 - np.exp(-a * tt) * (np.cos(wd * tt) + a / wd * np.sin(wd * tt))
    i = C * np.exp(-a * tt) * (w0**2 / wd) * np.sin(wd * tt)
    exact = {"v(cap)": vc, "i(V1)": -i, "v(mid)": 1 - R * i}
    agree("series RLC step", ours, ng, probes, exact)


def example_4_4(v):
    net = netdyn.Network("Example 4.4")
    net.add(VoltageSource("V1", "A", "0", v), Inductor("L1", "A", "B", 1e-3), Capacitor("C1", "0", "B", 1e-6),
            Inductor("L2", "B", "C", 2e-3), Capacitor("C2", "C", "0", 2e-6), Resistor("R1", "C", "0", 20.0))
    return net


def example_4_4_exact(times, f):
    # states i1 (L1, A->B), vB, i2 (L2, B->C), vC; v(t) = sin(w t)
    L1, C1, L2, C2, R1 = 1e-3, 1e-6, 2e-3, 2e-6, 20.0
    A = np.array([[0, -1 / L1, 0, 0],
                  [1 / C1, 0, -1 / C1, 0],
                  [0, 1 / L2, 0, -1 / L2],
                  [0, 0, 1 / C2, -1 / (R1 * C2)]])
    B = np.array([1 / L1, 0, 0, 0])
    w = 2 * np.pi * f
    G = np.array([[0, w], [-w, 0]])          # z = (sin wt, cos wt)
    return lti_exact(A, B, np.array([1.0, 0.0]), G, np.array([0.0, 1.0]), times)


def test_example_4_4_sinusoidal_source():
    f = 2e3
    net = example_4_4(sine(0, 1, f))
    tstop = 5e-3
    probes = ["v(b)", "v(c)", "i(L1)", "i(L2)", "i(V1)"]
    ng = ngspice_run(write_netlist(net), probes, tstop)
    ours = netdyn_at(net, probes, ng["time"])
    i1, vb, i2, vc = example_4_4_exact(ng["time"], f)
    exact = {"v(b)": vb, "v(c)": vc, "i(L1)": i1, "i(L2)": i2, "i(V1)": -i1}
    agree("Example 4.4, sine 2 kHz", ours, ng, probes, exact)


def ladder(n, R=100.0, C=10e-9, v=None):
    net = netdyn.Network(f"RC ladder {n}")
    net.add(VoltageSource("V1", "n0", "0", v if v is not None else pulse(0, 1, 0.1e-3, 0.1e-3, 0.1e-3, 2e-3)))
    for k in range(1, n + 1):
        net.add(Resistor(f"R{k}", f"n{k - 1}", f"n{k}", R), Capacitor(f"C{k}", f"n{k}", "0", C))
    return net


def ladder_exact(n, R, C, knots, times):
    g = 1 / (R * C)
    A = np.zeros((n, n))
    for k in range(n):
        A[k, k] -= g
        if k > 0:
            A[k, k - 1] += g
        if k < n - 1:
            A[k, k] -= g
            A[k, k + 1] += g
    B = np.zeros(n)
    B[0] = g
    return lti_pwl(A, B, knots, times)


def test_rc_ladder_of_50_sections():
    n, R, C = 50, 100.0, 10e-9
    net = ladder(n, R, C)
    tstop = 5e-3
    probes = ["v(n50)", "v(n25)", "v(n1)", "i(V1)"]
    # the first section's time constant is 1 us: ngspice needs a finer step than tstop/20000 for
    # i(V1) (its trapezoidal error at tmax = 0.25 us is 9e-5 of the peak, against 4e-6 here)
    ng = ngspice_run(write_netlist(net), probes, tstop, tmax_div=100000)
    tt = ng["time"][::5]
    ng = {k: v[::5] for k, v in ng.items()}
    ours = netdyn_at(net, probes, tt)
    knots = [(0, 0), (0.1e-3, 0), (0.2e-3, 1), (2.2e-3, 1), (2.3e-3, 0)]
    X = ladder_exact(n, R, C, knots, tt)
    u = np.interp(tt, [k[0] for k in knots], [k[1] for k in knots])
    exact = {"v(n50)": X[-1], "v(n25)": X[24], "v(n1)": X[0], "i(V1)": -(u - X[0]) / R}
    agree("RC ladder, 50 sections", ours, ng, probes, exact)


def coupled_exact(times, k, f):
    # V1 sin -> R1 -> L1 (p to 0); L2 (s to 0) -> R2 load; states i1, i2 (through L1, L2, top to ground)
    R1, L1, L2, R2 = 10.0, 1e-3, 4e-3, 100.0
    M = k * np.sqrt(L1 * L2)
    Lm = np.array([[L1, M], [M, L2]])
    Li = np.linalg.inv(Lm)
    # L di/dt = [v - R1 i1, -R2 i2]
    A = Li @ np.array([[-R1, 0], [0, -R2]])
    B = Li @ np.array([1.0, 0.0])
    w = 2 * np.pi * f
    G = np.array([[0, w], [-w, 0]])
    return lti_exact(A, B, np.array([1.0, 0.0]), G, np.array([0.0, 1.0]), times)


@pytest.mark.parametrize("dotted_same", [True, False])
def test_coupled_inductors_k_card(dotted_same):
    k, f = 0.9, 1e3
    net = netdyn.Network("coupled inductors")
    s_top, s_bot = ("s", "0") if dotted_same else ("0", "s")
    net.add(VoltageSource("V1", "in", "0", sine(0, 1, f)), Resistor("R1", "in", "p", 10.0),
            Inductor("L1", "p", "0", 1e-3), Inductor("L2", s_top, s_bot, 4e-3), Resistor("R2", "s", "0", 100.0),
            MutualInductance("K1", "L1", "L2", k=k))
    deck = write_netlist(net)
    assert "K1 L1 L2 0.9" in deck
    tstop = 5e-3
    probes = ["v(s)", "i(L1)", "i(L2)"]
    ng = ngspice_run(deck, probes, tstop)
    ours = netdyn_at(net, probes, ng["time"])
    i1, i2 = coupled_exact(ng["time"], k, f)
    # L2 written 0 -> s: its dotted end and its current's direction both turn round, so i(L2)
    # obeys the same equations and only the winding's voltage, v(s) = -v(L2), changes sign
    sign = 1 if dotted_same else -1
    exact = {"i(L1)": i1, "i(L2)": i2, "v(s)": -sign * 100.0 * i2}
    agree(f"K card, L2 {'s->0' if dotted_same else '0->s'}", ours, ng, probes, exact)


def test_coupled_inductors_element_matches_k_card():
    k, f = 0.9, 1e3
    net = netdyn.Network("coupled element")
    net.add(VoltageSource("V1", "in", "0", sine(0, 1, f)), Resistor("R1", "in", "p", 10.0),
            CoupledInductors("T1", "p", "0", "s", "0", L1=1e-3, L2=4e-3, k=k), Resistor("R2", "s", "0", 100.0))
    deck = write_netlist(net)
    names = spice_names(net)["elements"]["T1"]
    assert names == ("LT1_1", "LT1_2") and "KT1 LT1_1 LT1_2 0.9" in deck
    tstop = 5e-3
    probes = ["v(s)", "v(p)"]
    ng = ngspice_run(deck, probes, tstop)
    ours = netdyn_at(net, probes, ng["time"])
    i1, i2 = coupled_exact(ng["time"], k, f)
    exact = {"v(s)": -100.0 * i2}
    agree("CoupledInductors element", ours, ng, probes, exact)


# --- the example netlists ---------------------------------------------------------------------

def probes_of(path):
    for line in path.read_text().splitlines():
        m = re.match(r"\*\s*probes:\s*(.+)", line.strip(), re.IGNORECASE)
        if m:
            return m.group(1).split()
    raise AssertionError(f"{path.name} has no '* probes:' line")


def test_examples_use_every_supported_card():
    text = "\n".join(p.read_text().lower() for p in sorted(EXAMPLES.glob("*.cir")))
    for needle in ("sin(", "pulse(", "pwl(", " dc ", ".param", ".subckt", ".ends", "\nk", "\ni", "\nx",
                   ".tran", "\n+"):
        assert needle in text, needle


# circuits with a microsecond time constant need a finer ngspice step than tstop/20000 (ngspice's own
# trapezoidal error there is 9e-5 (ladder, i(V1)) and 8e-5 (coupled_pwl, v(p)) of the peak, against
# 4e-6 at tstop/100000); netdyn is then compared at every 5th ngspice point
FINE = {"rc_ladder.cir", "coupled_pwl.cir"}


#: the example decks without S/W switches (the switched ones have their own ngspice tests, with the switching
#: instants left out of the comparison: tests/test_switches.py)
UNSWITCHED = [p for p in sorted(EXAMPLES.glob("*.cir")) if not re.search(r"(?im)^[sw]\w*\s", p.read_text())]


@pytest.mark.parametrize("path", UNSWITCHED, ids=lambda p: p.name)
def test_example_netlist_against_ngspice(path):
    net = read_netlist(path)
    probes = probes_of(path)
    tstop = net.tran.tstop
    fine = path.name in FINE
    # ngspice reads the file itself, not netdyn's rewrite of it
    ng = ngspice_run(path.read_text(), probes, tstop, tstep=net.tran.tstep, tmax_div=100000 if fine else 20000)
    step = 5 if fine else 1
    tt = ng["time"][::step]
    ng = {k: v[::step] for k, v in ng.items()}
    ours = netdyn_at(net, probes, tt)
    exact = EXACT[path.name](tt) if path.name in EXACT else None
    agree(path.name, ours, ng, probes, exact)


def coupled_pwl_exact(times):
    """examples/netlists/coupled_pwl.cir in closed form: states i(L1), i(L2), v(out)."""
    Rp, L1, L2, k, Rs, Cs = 1e3, 10e-3, 2.5e-3, 0.95, 50.0, 1e-6
    M = k * np.sqrt(L1 * L2)
    Li = np.linalg.inv(np.array([[L1, M], [M, L2]]))
    # I = v(p)/Rp + i1; L [i1, i2]' = [Rp (I - i1), v(out) - Rs i2]; Cs v(out)' = -i2
    A = np.zeros((3, 3))
    A[:2, :] = Li @ np.array([[-Rp, 0, 0], [0, -Rs, 1]])
    A[2, 1] = -1 / Cs
    B = np.zeros(3)
    B[:2] = Li @ np.array([Rp, 0])
    knots = [(0, 0), (0.2e-3, 10e-3), (1e-3, 10e-3), (1.2e-3, -5e-3), (2e-3, -5e-3), (2.2e-3, 0)]
    i1, i2, vo = lti_pwl(A, B, knots, times)
    current = np.interp(times, [a for a, _ in knots], [b for _, b in knots])
    return {"v(p)": Rp * (current - i1), "v(s)": vo - Rs * i2, "v(out)": vo, "i(L1)": i1, "i(L2)": i2}


def rlc_step_exact(times):
    R, L, C = 10.0, 1e-3, 1e-6
    a, w0 = R / (2 * L), 1 / np.sqrt(L * C)
    wd = np.sqrt(w0**2 - a**2)
    i = C * np.exp(-a * times) * (w0**2 / wd) * np.sin(wd * times)
    vc = 1 - np.exp(-a * times) * (np.cos(wd * times) + a / wd * np.sin(wd * times))
    return {"v(cap)": vc, "v(mid)": 1 - R * i, "i(V1)": -i}


def example_4_4_file_exact(times):
    i1, vb, i2, vc = example_4_4_exact(times, 2e3)
    return {"v(b)": vb, "v(c)": vc, "i(L1)": i1, "i(L2)": i2, "i(V1)": -i1}


def rc_ladder_file_exact(times):
    knots = [(0, 0), (0.1e-3, 0), (0.2e-3, 1), (2.2e-3, 1), (2.3e-3, 0)]
    X = ladder_exact(50, 100.0, 10e-9, knots, times)
    u = np.interp(times, [a for a, _ in knots], [b for _, b in knots])
    return {"v(n10)": X[49], "v(n5)": X[24], "v(n1)": X[4], "i(V1)": -(u - X[0]) / 100.0}


EXACT = {"coupled_pwl.cir": coupled_pwl_exact, "rlc_step.cir": rlc_step_exact,
         "example_4_4.cir": example_4_4_file_exact, "rc_ladder.cir": rc_ladder_file_exact}


@pytest.mark.parametrize("path", UNSWITCHED, ids=lambda p: p.name)
def test_written_deck_simulates_like_the_original(path):
    """read_netlist then write_netlist is the same circuit for ngspice (flattened subcircuits)."""
    net = read_netlist(path)
    probes = [p for p in probes_of(path) if p.lower().startswith("v(")]
    tstop = net.tran.tstop
    a = ngspice_run(path.read_text(), probes, tstop, tstep=net.tran.tstep)
    b = ngspice_run(write_netlist(net), probes, tstop, tstep=net.tran.tstep)
    for p in probes:
        err = rel_err(np.interp(a["time"], b["time"], b[p]), a[p])
        print(f"{path.name:28s} {p:10s} ngspice(original) vs ngspice(written) {err:.1e}")
        assert err < 1e-6


# --- the runner itself ------------------------------------------------------------------------

def test_run_ngspice_errors():
    with pytest.raises(NetdynError, match="ngspice produced no data") as err:
        run_ngspice("bad\nR1 1 0 1k\nQ1 1 2 3 nomodel\n", ["v(1)"], tstop=1e-3, tstep=1e-5)
    assert "q1" in str(err.value).lower()          # ngspice's own complaint is quoted
    with pytest.raises(NetdynError, match="not an ngspice vector"):
        run_ngspice("t\nR1 1 0 1\n", ["v1"], tstop=1e-3, tstep=1e-5)
    with pytest.raises(NetdynError, match="no data"):
        run_ngspice("t\nV1 1 0 1\nR1 1 0 1\n", ["v(nosuchnode)"], tstop=1e-3, tstep=1e-5)


def test_run_ngspice_returns_the_probes_in_order():
    out = run_ngspice("divider\nV1 1 0 PWL(0 0 1m 2)\nR1 1 2 1k\nR2 2 0 3k\n.tran 1u 1m\n.end\n",
                      ["v(2)", "i(V1)", "v(1,2)"], tstop=1e-3, tstep=1e-5)
    assert list(out) == ["time", "v(2)", "i(V1)", "v(1,2)"]
    t = out["time"]
    assert t[-1] == pytest.approx(1e-3)
    assert out["v(2)"] == pytest.approx(2 * t / 1e-3 * 0.75, abs=1e-9)
    assert out["i(V1)"] == pytest.approx(-2 * t / 1e-3 / 4e3, abs=1e-12)
    assert out["v(1,2)"] == pytest.approx(2 * t / 1e-3 * 0.25, abs=1e-9)


def test_behavioral_source_for_other_expressions():
    from netdyn.symbols import t
    import sympy as sp
    v = sp.exp(-t / 1e-3) * sp.sin(2 * sp.pi * 1e3 * t) + sp.Piecewise((0, t < 0.5e-3), (1, True))
    net = netdyn.Network("B source")
    net.add(VoltageSource("V1", "a", "0", v), Resistor("R1", "a", "0", 1.0))
    deck = write_netlist(net)
    assert deck.splitlines()[1].startswith("BV1 a 0 V={")
    out = run_ngspice(deck, ["v(a)"], tstop=2e-3, tstep=1e-6, tmax=1e-6)
    f = sp.lambdify(sp.Symbol("tt"), v.subs(t, sp.Symbol("tt")), "numpy")
    tt = out["time"]
    away = np.abs(tt - 0.5e-3) > 2e-6     # the jump itself is resolved to one step by ngspice
    assert np.max(np.abs(out["v(a)"][away] - f(tt[away]))) < 1e-9


def test_ideal_transformer_as_e_and_f_sources():
    n, R1, R2, C, f = 3.0, 10.0, 100.0, 1e-6, 2e3
    net = netdyn.Network("ideal transformer")
    net.add(VoltageSource("V1", "in", "0", sine(0, 1, f)), Resistor("R1", "in", "p", R1),
            IdealTransformer("T1", "p", "0", "s", "0", n=n), Resistor("R2", "s", "0", R2), Capacitor("C2", "s", "0", C))
    tstop = 5e-3
    probes = ["v(s)", "v(p)", "i(V1)"]
    ng = ngspice_run(write_netlist(net), probes, tstop)
    ours = netdyn_at(net, probes, ng["time"])
    # v_s = n v_p, i1 = -n i2:  n C v_s' = (v - v_s/n)/R1 - n v_s/R2
    A = np.array([[-(1 / (n * R1) + n / R2) / (n * C)]])
    B = np.array([1 / (R1 * n * C)])
    w = 2 * np.pi * f
    (vs,) = lti_exact(A, B, np.array([1.0, 0.0]), np.array([[0, w], [-w, 0]]), np.array([0.0, 1.0]), ng["time"])
    v = np.sin(w * ng["time"])
    exact = {"v(s)": vs, "v(p)": vs / n, "i(V1)": -(v - vs / n) / R1}
    agree("ideal transformer n = 3", ours, ng, probes, exact)


def test_element_ic_means_what_ngspice_uic_means():
    """``ic=`` on C and L (kept in net.element_ic) are ngspice's initial capacitor voltage and inductor current.

    netdyn.simulate does not read net.element_ic yet; in branch charges the mapping is q_C = C v0, f_L = i0.
    """
    net = read_netlist("ic\nC1 a 0 1u ic=2\nR1 a b 100\nL1 b 0 1m ic=5m\n.tran 1u 1m uic\n")
    assert net.element_ic == {"C1": 2.0, "L1": 5e-3}
    tstop = net.tran.tstop
    probes = ["v(a)", "i(L1)"]
    ng = ngspice_run(write_netlist(net), probes, tstop)
    model = net.model(formulation="branch")
    q0 = {"q_C1": 1e-6 * net.element_ic["C1"]}
    f0 = {"q_L1": net.element_ic["L1"]}
    ours = netdyn_at(model, probes, ng["time"], q0=q0, f0=f0)
    # series RLC from v(a) = 2, i = 5 mA (a -> b -> ground through L1, so C1 discharges by i)
    R, L, C = 100.0, 1e-3, 1e-6
    A = np.array([[0.0, -1 / C], [1 / L, -R / L]])           # states v(a), i(L1)
    lam, V = np.linalg.eig(A)
    c = np.linalg.solve(V, np.array([2.0, 5e-3]))
    va, il = (V @ (np.exp(np.outer(lam, ng["time"])) * c[:, None])).real
    agree("C and L ic= under uic", ours, ng, probes, {"v(a)": va, "i(L1)": il})
