"""The consistent start on the element templates: the same numbers as the fused kernel, and no kernel built."""
import numpy as np
import pytest

from netdyn import Network
from netdyn.components.electrical import Capacitor, CurrentSource, Inductor, Resistor, VoltageSource
from netdyn.numerics.functions.compiled import compile_model
from netdyn.numerics.dae.initial import consistent_initial_conditions
from netdyn.numerics.dae.template_levels import TemplateLevels, templates_serve_start


def _ladder(n, drive, nonlinear=True):
    net = Network(f"ladder_{drive}_{n}")
    if drive == "current":
        net.add(CurrentSource("I1", "0", "n0", 1e-3), Resistor("R0", "n0", "0", 1e3))
    else:
        net.add(VoltageSource("V1", "n0", "0", 1.0))
    for k in range(1, n + 1):
        if nonlinear:  # in loop charges
            net.add(Resistor(f"R{k}", f"n{k - 1}", f"n{k}", dissipation=lambda i: 50.0 * i ** 2 + 3e4 * i ** 4),
                    Capacitor(f"C{k}", f"n{k}", "0", energy=lambda q: q ** 2 / 2e-6 + 1e12 * q ** 4))
        else:
            net.add(Resistor(f"R{k}", f"n{k - 1}", f"n{k}", 100.0), Capacitor(f"C{k}", f"n{k}", "0", 1e-6))
    net.add(Inductor("L1", f"n{n}", "0", 1e-3))
    return net


@pytest.mark.parametrize("drive,formulation", [("current", None), ("voltage", "node"), ("voltage", None)])
def test_templates_give_the_kernels_numbers(drive, formulation):
    net = _ladder(30, drive, nonlinear=formulation is None)
    model = net.model(formulation) if formulation else net.model()
    cm = compile_model(model)
    p = cm.parameter_vector()
    ev = TemplateLevels(cm)
    rng = np.random.default_rng(7)
    for _ in range(3):
        q, f, tt = rng.normal(size=cm.n) * 1e-6, rng.normal(size=cm.n) * 1e-3, rng.uniform(0, 1e-5)
        ref, got = cm.constraints(tt, q, f, p), ev.constraints(tt, q, f, p)
        for name in ("phi", "Phi_q", "Phi_t", "A", "a"):
            a, b = np.asarray(getattr(ref, name), dtype=float), getattr(got, name)
            assert a.shape == b.shape, name
            assert np.allclose(a, b, rtol=1e-12, atol=1e-12 * (1 + np.max(np.abs(a), initial=0))), name
        M_ref, h_ref = cm.dynamics(tt, q, f, p)
        M, h = ev.dynamics(tt, q, f, p)
        assert np.allclose(M, M_ref, rtol=1e-12, atol=0) and np.allclose(h, h_ref, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("drive,formulation", [("current", None), ("voltage", "node")])
def test_consistent_start_without_the_kernel(drive, formulation):
    net = _ladder(30, drive, nonlinear=formulation is None)
    cm = compile_model(net.model(formulation) if formulation else net.model())
    assert templates_serve_start(cm)
    q, f = consistent_initial_conditions(cm, 0.0, tol=1e-10)
    assert cm._kernel is False  # the fused kernel was never built
    ref = compile_model(net.model(formulation) if formulation else net.model())
    ref.kernel  # built first: the start takes the kernel's numbers
    assert not templates_serve_start(ref)
    q_ref, f_ref = consistent_initial_conditions(ref, 0.0, tol=1e-10)
    assert np.allclose(q, q_ref, rtol=1e-12, atol=1e-15) and np.allclose(f, f_ref, rtol=1e-10, atol=1e-15)
    assert np.any(f != 0) or np.any(q != 0) or drive == "voltage"


def test_small_or_regular_models_keep_the_kernel():
    assert not templates_serve_start(compile_model(_ladder(2, "current").model()))  # the dense IDA's size
