"""The symengine derivation gives the sympy derivation's equations."""
import pytest
import sympy as sp

from netdyn.lagrange.equations import derive
from netdyn.lagrange.fastdiff import Differentiator

from chains import chain_absolute, chain_relative
from systems import every_element_network, mechanical_network, rlc_circuit
from test_book_examples import four_bar, rlc_network_by_hand, slider_crank


def models():
    yield "slider_crank", slider_crank()[0]
    yield "four_bar", four_bar()[0]
    yield "rlc_by_hand", rlc_network_by_hand()[0]
    yield "rlc_loop", rlc_circuit().model(formulation="loop")
    yield "rlc_branch", rlc_circuit().model(formulation="branch")
    yield "rlc_node", rlc_circuit().model(formulation="node")
    yield "mechanical", mechanical_network().model()
    yield "everything", every_element_network().model()
    yield "chain_relative_4", chain_relative(4)
    yield "chain_absolute_4", chain_absolute(4)


@pytest.mark.parametrize("name,model", list(models()), ids=[n for n, _ in models()])
def test_symengine_and_sympy_derivations_agree(name, model):
    fast, slow = derive(model, fast=True), derive(model, fast=False)
    assert fast.parameters == slow.parameters and fast.inputs == slow.inputs
    assert set(fast.M) <= set(slow.M) and set(fast.Phi_q) == set(slow.Phi_q) and set(fast.A) == set(slow.A)
    pairs = [(fast.M.get(k, 0), v) for k, v in slow.M.items()] + list(zip(fast.h, slow.h))
    pairs += list(zip(fast.phi, slow.phi)) + [(fast.Phi_q[k], v) for k, v in slow.Phi_q.items()]
    pairs += list(zip(fast.Phi_t, slow.Phi_t)) + list(zip(fast.gamma_phi, slow.gamma_phi))
    pairs += [(fast.A[k], v) for k, v in slow.A.items()] + list(zip(fast.a0, slow.a0))
    pairs += list(zip(fast.gamma_psi, slow.gamma_psi))
    for a, b in pairs:
        d = sp.sympify(a) - sp.sympify(b)
        assert d == 0 or sp.simplify(d) == 0, (name, a, b)


def test_round_trip_keeps_the_users_symbols_and_their_assumptions():
    m = sp.Symbol("m", positive=True)
    x = sp.Symbol("x")
    d = Differentiator()
    e = d.sympy(d.diff(d.term(m * x**3 / 3 + sp.exp(-x)), x))
    assert e == m * x**2 - sp.exp(-x)
    assert m in e.free_symbols and all(s in (m, x) for s in e.free_symbols)


def test_a_name_shared_by_two_symbols_falls_back_to_sympy():
    a, b = sp.Symbol("k"), sp.Symbol("k", positive=True)
    x = sp.Symbol("x")
    d = Differentiator()
    first = d.term(a * x**2)
    second = d.term(b * x**2)
    assert isinstance(second, sp.Basic)  # kept in sympy, so its symbol stays b
    assert d.sympy(d.diff(second, x)) == 2 * b * x and d.sympy(d.diff(first, x)) == 2 * a * x
