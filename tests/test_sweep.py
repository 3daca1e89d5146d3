"""netdyn.sweep: one compiled model, the same results serially, on a process pool and on Dask."""
from concurrent.futures import ProcessPoolExecutor

import numpy as np
import pytest
import sympy as sp

import netdyn
from netdyn import LagrangianModel, coordinates, t
from netdyn.analysis.sweep import parameter_grid, sweep


def oscillator():
    x, = coordinates("x,")
    m, k, c = sp.symbols("m k c", positive=True)
    return LagrangianModel([x], T=m * x.diff(t)**2 / 2, V=k * x**2 / 2, D=c * x.diff(t)**2 / 2,
                           parameters={m: 1.0, k: 1.0, c: 0.1}, name="oscillator")


GRID = {"k": [1.0, 4.0, 9.0], "c": [0.0, 0.3]}
TE = np.linspace(0, 2, 21)


def _same(a, b):
    assert len(a) == len(b)
    for sa, sb in zip(a, b):
        assert np.allclose(sa.q, sb.q, rtol=1e-12, atol=1e-14) and np.allclose(sa.f, sb.f, rtol=1e-12, atol=1e-14)


def test_serial_sweep_matches_separate_simulations_and_compiles_once():
    model = oscillator()
    sols = sweep(model, GRID, (0, 2), q0={"x": 1}, t_eval=TE)
    assert len(sols) == 6 and len(model._compiled) == 1
    for p, sol in zip(parameter_grid(GRID), sols):
        ref = netdyn.simulate(oscillator(), (0, 2), q0={"x": 1}, t_eval=TE, params=p)
        assert np.allclose(sol.q, ref.q, rtol=1e-12, atol=1e-14)
    w = np.sqrt(4.0)  # undamped k = 4: cos(2 t)
    assert np.max(np.abs(sols[2]["x"] - np.cos(w * TE))) < 1e-6


def test_process_pool_gives_the_serial_results():
    model = oscillator()
    serial = sweep(model, GRID, (0, 2), q0={"x": 1}, t_eval=TE)
    with ProcessPoolExecutor(max_workers=2) as pool:
        parallel = sweep(model, GRID, (0, 2), q0={"x": 1}, t_eval=TE, executor=pool)
    _same(serial, parallel)
    assert parallel[0].energy().shape == TE.shape  # full Solutions on this side


def test_dask_cluster_gives_the_serial_results():
    distributed = pytest.importorskip("distributed")
    model = oscillator()
    serial = sweep(model, GRID, (0, 2), q0={"x": 1}, t_eval=TE)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        parallel = sweep(model, GRID, (0, 2), q0={"x": 1}, t_eval=TE, executor=client.get_executor())
    _same(serial, parallel)


def test_a_network_is_swept_over_its_element_values():
    from netdyn.components.electrical import Capacitor, Resistor, VoltageSource
    net = netdyn.Network()
    net.add(VoltageSource("V1", "a", "0", 1.0), Resistor("R1", "a", "b", 1.0), Capacitor("C1", "b", "0", 1.0))
    sols = sweep(net, [{"R1": 1.0}, {"R1": 2.0}], (0, 1), t_eval=np.linspace(0, 1, 11))
    for R, sol in zip((1.0, 2.0), sols):
        assert np.max(np.abs(sol.voltage("C1") - (1 - np.exp(-sol.t / R)))) < 1e-7


def test_bad_grids_are_named():
    with pytest.raises(netdyn.ParameterError, match="nope"):
        sweep(oscillator(), [{"nope": 1.0}], (0, 1))
    with pytest.raises(netdyn.ParameterError, match="list of values"):
        sweep(oscillator(), {"k": 3.0}, (0, 1))
    with pytest.raises(netdyn.ParameterError, match="empty"):
        sweep(oscillator(), [], (0, 1))
