"""The compiled step of the circuit path against its numpy pieces and the reference path."""
import numpy as np
import pytest
import scipy.linalg as sla

import netdyn
from netdyn.components.diode import Diode, junction_charge
from netdyn.errors import ModelError
from netdyn.numerics.circuit.kernels.circuit_kernel import band_lu, band_solve, port_laws
from netdyn.numerics.circuit.nonlinearsim import simulate_circuit, try_circuit
from netdyn.numerics.circuit.operating_point import spice_initial_state

from test_devices import RECTIFIERS, ZENER, diode_ladder


def test_band_lu_equals_lapack_with_pivoting():
    """Random band matrices with zero diagonals (pivoting needed, as for a voltage source's row)."""
    rng = np.random.default_rng(3)
    for N, kl, ku in ((1, 0, 0), (7, 2, 1), (40, 3, 5), (25, 0, 4)):
        A = np.zeros((N, N))
        for i in range(N):
            for j in range(max(0, i - kl), min(N, i + ku + 1)):
                A[i, j] = rng.normal()
        A[np.arange(0, N, 3), np.arange(0, N, 3)] = 0.0
        if np.linalg.matrix_rank(A) < N:
            continue
        ab = np.zeros((N, 2 * kl + ku + 1))
        for j in range(N):
            for i in range(max(0, j - ku), min(N, j + kl + 1)):
                ab[j, kl + ku + i - j] = A[i, j]
        ipiv = np.zeros(N, dtype=np.int64)
        assert band_lu(ab, kl, ku, ipiv)
        b = rng.normal(size=N)
        x = band_solve(ab, kl, ku, ipiv, b.copy())
        assert np.allclose(x, sla.solve(A, b), rtol=1e-10, atol=1e-12)
    ab = np.zeros((3, 1))  # a zero column: refused, not divided by
    assert not band_lu(ab, 0, 0, np.zeros(3, dtype=np.int64))


def test_port_laws_equal_the_diodes_closed_forms():
    """Current, conductance, charge and capacitance of the compiled port loop against Diode's numpy forms,
    with breakdown and charge, on both sides of XMAX and of FC VJ."""
    d = Diode("D1", "a", "k", IS=2e-14, N=1.3, RS=3, BV=6.0, IBV=1e-3, NBV=1.4, CJO=2e-12, VJ=0.7, M=0.4,
              FC=0.5, TT=4e-9)
    vals = d.numeric_values()
    named = {k: np.array([v]) for k, v in vals.items()}
    table = Diode.port_table(named, 2)
    for v in (-9.0, -6.2, -1.0, 0.0, 0.349, 0.351, 0.7, 3.5):
        F = np.array([0.2, v])
        g, h, q, c = (np.zeros(2) for _ in range(4))
        port_laws(table, F, g, h, q, c)
        gD, H = Diode.dissipation_batch(named, F[None, :])
        assert g == pytest.approx(gD[0], rel=1e-13, abs=1e-30)
        assert h == pytest.approx(np.diag(H[0]), rel=1e-13, abs=1e-30)
        Q, C = junction_charge(v, vals)
        assert q[1] == pytest.approx(float(Q), rel=1e-12, abs=1e-30) and q[0] == 0.0
        assert c[1] == pytest.approx(float(C), rel=1e-12, abs=1e-30)


PULSED = ("pulsed clamp\nV1 in 0 PULSE(-2 4 0.2u 50n 80n 0.5u 1.3u)\nV2 b 0 SIN(0.5 1 3Meg 0.1u 2e5 30)\n"
          "V3 c 0 PWL(0 0 0.4u 2 1u -1 3u 0.5)\nR1 in x 1k\nD1 x b dm\nR2 x c 2k\nC1 x 0 100p\nD2 0 x dm\n"
          ".model dm D(IS=1e-14 N=1.1 RS=3 CJO=2p TT=2n)\n.tran 10n 3u\n")


@pytest.mark.parametrize("deck", [ZENER, RECTIFIERS["bridge rectifier with smoothing capacitor"][0], diode_ladder(30),
                                  PULSED], ids=["zener", "bridge", "ladder", "pulse-sin-pwl"])
def test_compiled_loop_equals_the_stepwise_numpy_and_reference_paths(deck):
    """Breakdown limiting, a bridge (a source between two diodes: pivoting), a ladder, and PULSE, damped
    delayed SIN and PWL sources (their compiled programs, the corners): the whole loop compiled, one compiled
    call per step attempt (a progress callback keeps the loop in Python), the numpy chord iteration and the
    reference path take the same steps and agree to 1e-9 of the peak."""
    net = netdyn.read_netlist(deck)
    t1 = net.tran.tstop / (4 if "ladder" in deck else 20 if "bridge" in deck else 2 if "zener" in deck else 5)
    q0, f0 = spice_initial_state(net, None)
    times = np.linspace(0, t1, 41)
    seen = []
    sols = [simulate_circuit(net, (0, t1), q0, f0, times, **kw)
            for kw in ({}, dict(progress=seen.append), dict(compiled=False), dict(reference=True))]
    assert [s.circuit_stepper for s in sols] == ["compiled loop", "compiled", "numpy", "reference"]
    assert len({s.trajectory.nsteps for s in sols}) == 1 and seen[-1] == pytest.approx(t1)
    nodes = [n for n in net.graph.nodes if n != "0" and "#" not in str(n)]
    V = [np.array([s.voltage(n) for n in nodes]) for s in sols]
    for a in V[:3]:
        assert np.max(np.abs(a - V[3])) <= 1e-9 * np.max(np.abs(V[3]))


def test_source_programs_equal_the_expressions():
    """Every waveform of the netlist reader, at times on both sides of its corners."""
    from netdyn.numerics.circuit.kernels.circuit_kernel import source_values
    from netdyn.numerics.circuit.kernels.source_program import compile_sources
    from netdyn.symbols import t
    from netdyn.lagrange.sources import pulse, pwl, sine, step
    exprs = [sine(0.5, 1, 3e6, 1e-7, 2e5, 30), pulse(-2, 4, 2e-7, 5e-8, 8e-8, 5e-7, 1.3e-6),
             pwl([(0, 0), (4e-7, 2), (1e-6, -1), (3e-6, 0.5)]), step(3, 1e-6), t ** 2 + abs(t - 1e-6)]
    prog = compile_sources(exprs)
    u = np.zeros(len(exprs))
    for x in np.r_[np.linspace(0, 4e-6, 97), 2e-7, 2.5e-7, 3.3e-7, 1e-6, 1.5e-6]:
        source_values(*prog, float(x), u)
        ref = [float(e.subs(t, x)) for e in exprs]
        assert np.allclose(u, ref, rtol=1e-12, atol=1e-15)
    import sympy as sp
    assert compile_sources([sp.Function("g")(t)]) is None        # unknown function: the caller's Python


def test_compiled_true_on_a_device_without_port_table_is_refused():
    c = try_circuit(netdyn.read_netlist(diode_ladder(3)))
    c.group_types = [object for _ in c.group_types]   # a device kind the compiled step does not know
    with pytest.raises(ModelError, match="port table"):
        simulate_circuit(None, (0, 1e-6), circuit=c, compiled=True)
    assert simulate_circuit(None, (0, 1e-7), circuit=c, t_eval=np.linspace(0, 1e-7, 3)).circuit_stepper == "numpy"
