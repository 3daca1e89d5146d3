"""IDA's analytic Jacobian on models with PULSE/PWL sources (issue 10: IDA crawled on the node formulation).

The fused LLVM kernel does not compile ``Piecewise`` waveforms, so such models used SUNDIALS' finite-difference
Jacobian, with which Newton failed at ever smaller steps on random circuits in node fluxes (steps ~1e-10 s,
>1e5 residual calls). The Jacobian pieces are now lambdified for them; checked here against central differences
of the residual, and on a random circuit that crawled, against the exact MNA solution.
"""
import numpy as np
import pytest

from netdyn import Network, simulate
from netdyn.components.electrical import Capacitor, Inductor, Resistor, VoltageSource
from netdyn.lagrange.sources import pulse, pwl
from netdyn.numerics.functions.compiled import compile_model
from netdyn.numerics.ida import ida as ida_module
from netdyn.numerics.ida.ida import IDA
from netdyn.numerics.ida.ida_kernel import IDAKernel, ida_kernel

import test_random_circuits as rc


class Crawled(Exception):
    pass


def _floating_pair(source):
    """Two capacitors in series between nodes with no capacitor to ground (a singular capacitance matrix)."""
    net = Network("floating pair")
    net.add(VoltageSource("V1", "in", "0", source), Resistor("R1", "in", "a", 100.0),
            Capacitor("C1", "a", "b", 1e-6), Capacitor("C2", "b", "c", 2e-6), Resistor("R2", "c", "0", 50.0),
            Resistor("R3", "b", "0", 1e3), Inductor("L1", "a", "0", 1e-2))
    return net


@pytest.mark.parametrize("source", [pulse(0, 2, 1e-4, 5e-5, 5e-5, 2e-4, 1e-3),
                                    pwl([(0, 0), (1e-4, 1), (3e-4, -1), (5e-4, 0)])], ids=["pulse", "pwl"])
def test_lambdified_jacobian_against_differences(source):
    cm = compile_model(_floating_pair(source).model("node"))
    assert cm.kernel is None  # the waveform keeps the LLVM kernel out
    ida = IDA(cm, cm.parameter_vector())
    k = ida_kernel(ida)
    assert isinstance(k, IDAKernel) and k.jacfn is not None
    rng = np.random.default_rng(11)
    tt, cj = 1.3e-4, 7.0e3  # on a ramp of either waveform
    y, yp = rng.normal(size=ida.N), rng.normal(size=ida.N)
    r1, r2 = np.zeros(ida.N), np.zeros(ida.N)
    k.residual(tt, y, yp, r1)
    ida.residual(tt, y, yp, r2)
    np.testing.assert_array_equal(r1, r2)  # no kernel: the residual is the reference one
    J = k.matrix(tt, y, yp, cj)
    Jfd = np.empty_like(J)
    for j in range(ida.N):
        h = 1e-6 * (1 + abs(y[j]))
        d = np.zeros(ida.N)
        d[j] = h
        rp, rm = np.zeros(ida.N), np.zeros(ida.N)
        ida.residual(tt, y + d, yp + cj * d, rp)
        ida.residual(tt, y - d, yp - cj * d, rm)
        Jfd[:, j] = (rp - rm) / (2 * h)
    assert np.max(np.abs(J - Jfd)) < 1e-6 * max(1.0, np.max(np.abs(J)))


def test_random_circuit_that_crawled_on_ida_in_node_fluxes(monkeypatch):
    """Seed 8: a PULSE source and V–C structures; on differenced Jacobians its first pass stalled near
    t = 0.9 ms (>4e4 residual calls in 10 s, steps ~1e-10 s). Now bounded, and equal to the exact MNA solution."""
    calls = [0]
    residual = ida_module.IDA.residual

    def counted(self, tt, y, yp, res):
        calls[0] += 1
        if calls[0] > 40000:  # crawling (it runs ~18,000 calls)
            raise Crawled(f"{calls[0]} residual calls, t = {tt:.6g}")
        residual(self, tt, y, yp, res)

    monkeypatch.setattr(ida_module.IDA, "residual", counted)
    drawn = rc.random_circuit(8)
    times = np.linspace(0, rc.TSTOP, 101)
    try:
        sol = simulate(drawn.network(), (0, rc.TSTOP), method="ida", formulation="node", rtol=1e-5, t_eval=times)
    except Crawled as exc:
        pytest.fail(f"IDA crawled: {exc}")
    assert sol.status == 0
    ref = rc.mna_exact(drawn, times)
    ours = {f"v({nd})": sol.voltage(nd) for nd in drawn.nodes if nd != "0"}
    ours.update({f"i({it[1]})": sol.current(it[1]) for it in drawn.items if it[0] == "L"})
    assert rc.worst(ours, ref, [key for key in ours if key in ref]) < 1e-3
