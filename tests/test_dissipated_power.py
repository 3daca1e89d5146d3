"""``dissipated_power`` built term by term equals the whole-sum construction ``Σ f_i ∂D/∂f_i``."""
import numpy as np
import pytest
import sympy as sp

from netdyn import LagrangianModel, Network, coordinates, t
from netdyn.components.electrical import Capacitor, CurrentSource, Inductor, Resistor
from netdyn.lagrange.equations import internalize
from netdyn.numerics.functions.energy import dissipated_power


def _whole_sum(model):
    """The former construction: the whole D differentiated by every flow (quadratic in size)."""
    eq = model.derive()
    D = internalize(model, model.D)
    return sp.Add(*[fi * sp.diff(D, fi) for fi in eq.f if fi in D.free_symbols])


def _ladder(n):
    net = Network(f"ladder{n}")
    net.add(CurrentSource("I1", "0", "n0", 1e-3), Resistor("R0", "n0", "0", 1e3))
    for k in range(1, n + 1):
        net.add(Resistor(f"R{k}", f"n{k - 1}", f"n{k}", dissipation=lambda i: 2.0 * i ** 2 + 0.3 * i ** 4),
                Capacitor(f"C{k}", f"n{k}", "0", 1e-6))
    net.add(Inductor("L1", f"n{n}", "0", 1e-3))
    return net.model()


def _mechanical():
    x, y = coordinates("x, y")
    c1, c2, c3 = sp.symbols("c1 c2 c3", positive=True)
    xd, yd = x.diff(t), y.diff(t)
    return LagrangianModel([x, y], T=[xd ** 2 / 2, yd ** 2 / 2], V=[x ** 2 / 2],
                           D=[c1 * xd ** 2 / 2, c2 * (xd - yd) ** 2 / 2 + c3 * (xd - yd) ** 4 / 4,
                              sp.sin(y) * yd ** 2 / 2])


@pytest.mark.parametrize("model", [_mechanical(), _ladder(1), _ladder(4)], ids=["mechanical", "ladder1", "ladder4"])
def test_equal_to_the_whole_sum(model):
    new, old = dissipated_power(model), _whole_sum(model)
    assert new != 0
    assert sp.simplify(new - old) == 0
    symbols = sorted(old.free_symbols | new.free_symbols, key=str)
    f_new, f_old = sp.lambdify(symbols, new), sp.lambdify(symbols, old)
    rng = np.random.default_rng(3)
    for _ in range(5):
        v = rng.uniform(-2.0, 2.0, len(symbols))
        assert np.isclose(f_new(*v), f_old(*v), rtol=1e-13, atol=1e-13)


def test_no_dissipation_is_zero():
    x, = coordinates("x,")
    assert dissipated_power(LagrangianModel([x], T=x.diff(t) ** 2 / 2, V=x ** 2 / 2)) == 0
