"""Every element's and bond's outputs on every path of a bond graph: e, f, p, q, E, through and across, the power
e·f and the energy balance.

Each linear textbook case (an RLC under a sine, a flow source on an RC, the quarter car over a sine road, the DC
motor with a gear — its load inertia in derivative causality —, an electrical transformer, Borutzky's
algebraic loop, two capacitors in parallel — one dependent) is simulated on every path a bond graph has: the
linear fast path (the default), the bond formulation through IDA and through the projection integrator, the
reduced formulation and the explicit state equations (``formulation="state"``). On each:

* ``e(X)``, ``f(X)`` of every one-port element and every bond are series; ``sol.through(X)`` is ``f(X)`` and
  ``sol.across(X)`` is ``e(X)`` (a bond's flow through it, its effort across it); ``series_names()`` lists them;
* the powers ``±e·f`` of all one-port elements sum to zero at every instant (the junction structure, two-ports
  included, conserves power: 1e-9 of the largest);
* each storage element's ``E(X)`` changes by the integral of its power, and the whole graph's energy balance
  ``ΔE + ∫ P_R − ∫ P_sources`` closes to 1e-8 of the largest energy (Boole's rule on the sampled powers);
* the energy variables agree with the laws: ``q(C) = C e(C)``, ``p(I) = I f(I)``, and ``sol["q_<C>"]``,
  ``sol["p_<I>"]`` read them by their state names on every path (a coordinate, or the signal where the
  formulation's coordinate is the displacement); ``p(R)``, the integral of a
  linear R's effort, is ``R q(R)`` and equals Boole's integral of ``e(R)`` (where the path carries ``q(R)``;
  the state formulation integrates only the storage states and says so);
* every path gives the same signals as the linear one (1e-7 of each signal's peak).

The projection integrator needs inertia on every flow: on a graph whose bond formulation has flows without
inertia (a flow source, an algebraic loop, a dependent capacitor) it refuses and names IDA, which is checked.
"""
import numpy as np
import pytest
import sympy as sp

import netdyn
from netdyn import t
from netdyn.errors import IntegrationError, ModelError
from test_bondgraph_laws import cumulative_boole, graph   # (Boole's rule on the sampled powers)

PATHS = {"linear": {}, "bond/ida": {"method": "ida"}, "bond/projection": {"method": "projection"},
         "reduced": {"formulation": "reduced"}, "state": {"formulation": "state"}}


def rlc():
    return graph("RLC", [("Se", "V1", {"effort": sp.sin(3 * t)}), ("1", "loop", {}), ("R", "R1", {"R": 2.0}),
                         ("I", "L1", {"I": 0.5}), ("C", "C1", {"C": 0.1})],
                 [("V1", "loop"), ("loop", "R1"), ("loop", "L1"), ("loop", "C1")]), 3.0


def sf_rc():
    return graph("Sf RC", [("Sf", "I0", {"flow": 1 + sp.cos(t)}), ("0", "n", {}), ("R", "R1", {"R": 2.0}),
                           ("C", "C1", {"C": 0.5})], [("I0", "n"), ("n", "R1"), ("n", "C1")]), 3.0


def quarter_car():
    road = 0.05 * sp.pi * sp.sin(2 * sp.pi * t)
    return graph("quarter car", [("Sf", "road", {"flow": road}), ("0", "tyre_force", {}), ("C", "k_t", {"C": 1 / 2e5}),
                                 ("1", "v_wheel", {}), ("I", "m_u", {"I": 40.0}), ("0", "susp_force", {}),
                                 ("1", "v_rel", {}), ("C", "k_s", {"C": 1 / 2e4}), ("R", "c_s", {"R": 1.5e3}),
                                 ("1", "v_body", {}), ("I", "m_s", {"I": 300.0})],
                 [("road", "tyre_force"), ("tyre_force", "v_wheel"), ("v_wheel", "susp_force"),
                  ("susp_force", "v_body"), ("v_body", "m_s"), ("tyre_force", "k_t"), ("v_wheel", "m_u"),
                  ("susp_force", "v_rel"), ("v_rel", "k_s"), ("v_rel", "c_s")]), 1.0


def motor_with_gear():
    U, RA, LA, K, Jm, Bm, n, JL, BL = 12.0, 4.0, 15e-3, 9.54e-2, 1e-4, 1e-4, 0.25, 8e-4, 4e-4
    return graph("motor and gear", [("Se", "U", {"effort": U}), ("1", "armature", {}), ("R", "RA", {"R": RA}),
                                    ("I", "LA", {"I": LA}), ("GY", "K", {"ratio": K}), ("1", "rotor", {}),
                                    ("I", "Jm", {"I": Jm}), ("R", "Bm", {"R": Bm}), ("TF", "gear", {"ratio": n}),
                                    ("1", "load", {}), ("I", "JL", {"I": JL}), ("R", "BL", {"R": BL})],
                 [("U", "armature"), ("armature", "K"), ("K", "rotor"), ("rotor", "gear"), ("gear", "load"),
                  ("load", "JL"), ("armature", "RA"), ("armature", "LA"), ("rotor", "Jm"), ("rotor", "Bm"),
                  ("load", "BL")]), 0.05


def transformer():
    return graph("transformer", [("Se", "u", {"effort": sp.sin(2 * t)}), ("1", "primary", {}), ("R", "R1", {"R": 1.0}),
                                 ("I", "L1", {"I": 0.2}), ("TF", "T", {"ratio": 3.0}), ("1", "secondary", {}),
                                 ("R", "R2", {"R": 0.5}), ("C", "C2", {"C": 0.05})],
                 [("u", "primary"), ("primary", "R1"), ("primary", "L1"), ("primary", "T"), ("T", "secondary"),
                  ("secondary", "R2"), ("secondary", "C2")]), 2.0


def algebraic_loop():
    return graph("loop", [("Se", "u", {"effort": sp.sin(t) + 1}), ("1", "S", {}), ("I", "L", {"I": 0.4}),
                          ("0", "A", {}), ("C", "C", {"C": 0.25}), ("1", "I12", {}), ("R", "R1", {"R": 1.0}),
                          ("0", "B", {}), ("R", "R2", {"R": 2.0})],
                 [("u", "S"), ("S", "L"), ("S", "A"), ("A", "C"), ("A", "I12"), ("I12", "R1"), ("I12", "B"),
                  ("B", "R2")]), 3.0


def parallel_capacitors():
    return graph("parallel C", [("Se", "E", {"effort": 2.0}), ("1", "J", {}), ("R", "R", {"R": 1.0}), ("0", "N", {}),
                                ("C", "C1", {"C": 1.0}), ("C", "C2", {"C": 3.0})],
                 [("E", "J"), ("J", "R"), ("J", "N"), ("N", "C1"), ("N", "C2")]), 4.0


CASES = [rlc, sf_rc, quarter_car, motor_with_gear, transformer, algebraic_loop, parallel_capacitors]


def peak(*arrays):
    return max(max(float(np.max(np.abs(a))) for a in arrays), 1e-300)


_linear = {}


@pytest.mark.parametrize("case", CASES, ids=[c.__name__ for c in CASES])
@pytest.mark.parametrize("path", list(PATHS))
def test_outputs_power_and_energy_on_every_path(case, path):
    bg, T = case()
    te = np.linspace(0, T, 801)
    if path == "bond/projection" and bg.name in ("Sf RC", "loop", "parallel C"):
        with pytest.raises(IntegrationError, match="have no inertia.*use method='ida'"):   # flows without inertia
            netdyn.simulate(bg, (0, T), t_eval=te, **PATHS[path])
        return
    sol = netdyn.simulate(bg, (0, T), t_eval=te, rtol=1e-10, atol=1e-13, **PATHS[path])
    assert sol.success
    if path == "linear":
        assert sol.method == "linear"
    one_ports = [n for n in bg.elements if bg.kind(n) in ("Se", "Sf", "C", "I", "R")]
    names = set(sol.series_names())
    series = {}
    for x in one_ports + [b for b in bg.bond_names if b not in bg.graph]:
        e, f = sol.series(f"e({x})"), sol.series(f"f({x})")
        assert {f"e({x})", f"f({x})"} <= names
        assert np.array_equal(sol.through(x), f) and np.array_equal(sol.across(x), e)
        series[x] = (e, f)
    # power into each one-port element; the junction structure conserves it
    P = {n: bg.sign(n, bg.bond_of(n)) * series[n][0] * series[n][1] for n in one_ports}
    power_sum = float(np.max(np.abs(sum(P.values())))) / peak(*P.values())
    # each storage element's energy changes by the integral of its power; the whole balance closes
    stored = {n: sol.series(f"E({n})") for n in one_ports if bg.kind(n) in ("C", "I")}
    worst_element = 0.0
    for n, E in stored.items():
        W = cumulative_boole(P[n], sol.t)
        worst_element = max(worst_element, float(np.max(np.abs(E[::4] - E[0] - W))) / peak(E, W))
    E = sum(stored.values())
    dissipated = cumulative_boole(sum(P[n] for n in one_ports if bg.kind(n) == "R"), sol.t)
    supplied = -cumulative_boole(sum(P[n] for n in one_ports if bg.kind(n) in ("Se", "Sf")), sol.t)
    balance = float(np.max(np.abs(E[::4] - E[0] + dissipated - supplied))) / peak(E, dissipated, supplied)
    # energy variables against the laws
    for n in one_ports:
        kind = bg.kind(n)
        if kind not in ("C", "I", "R"):
            continue
        value, e, f = float(bg.params(n)[kind]), *series[n]
        if kind in ("C", "I"):   # the energy variable by its state name too, whatever the path's coordinates
            x, law = (f"q({n})", value * e) if kind == "C" else (f"p({n})", value * f)
            assert np.allclose(sol.series(x), law, rtol=1e-9, atol=1e-12 * peak(law))
            assert np.allclose(sol[f"{x[0]}_{n}"], sol.series(x), rtol=1e-14, atol=1e-15 * peak(law))
        elif kind == "R" and path != "state":
            pR = sol.series(f"p({n})")
            assert np.allclose(pR, value * sol.series(f"q({n})"), rtol=1e-12, atol=1e-14 * peak(pR))
            assert float(np.max(np.abs(pR[::4] - pR[0] - cumulative_boole(e, sol.t)))) < 1e-8 * peak(pR, e)
        elif kind == "R":
            with pytest.raises(ModelError, match="bond formulation"):
                sol.series(f"p({n})")
    own = sol.power_balance()["relative"] if path != "state" else None
    print(f"{bg.name} [{path}, {sol.method}]: power sum {power_sum:.1e}, element energies {worst_element:.1e}, "
          f"balance {balance:.1e}" + (f", the model's own {own:.1e}" if own is not None else ""))
    assert power_sum < 1e-9, power_sum
    assert worst_element < 1e-8, worst_element
    assert balance < 1e-8, balance
    if own is not None:
        assert own < 1e-8, own
    # the same signals as the linear path
    key = bg.name
    if path == "linear":
        _linear[key] = series
    elif key in _linear:
        for x, (e, f) in series.items():
            e0, f0 = _linear[key][x]
            assert np.max(np.abs(e - e0)) <= 1e-7 * peak(e0) + 1e-12, (x, "e")
            assert np.max(np.abs(f - f0)) <= 1e-7 * peak(f0) + 1e-12, (x, "f")


def test_through_and_across_of_a_bond_graph_name_what_they_read():
    bg, _ = rlc()
    sol = netdyn.simulate(bg, (0, 1), t_eval=np.linspace(0, 1, 5))
    with pytest.raises(KeyError, match="no element or node named 'nowhere'"):
        sol.across("nowhere")
    with pytest.raises(ModelError, match="loop has 4 bonds"):
        sol.through("loop")
    net = netdyn.to_network(bg)      # a network's through and across are unchanged by the bond graph's
    ns = netdyn.simulate(net, (0, 1), t_eval=np.linspace(0, 1, 5), rtol=1e-10)
    assert np.allclose(ns.through("R1"), sol.through("R1"), atol=1e-7)
    assert np.allclose(ns.across("C1"), sol.across("C1"), atol=1e-7)


def coupled_meshes(field):
    bg = netdyn.BondGraph("coupled meshes")
    bg.add("Se", "u", effort=sp.sin(t)); bg.add("1", "mesh1"); bg.add("R", "R1", R=1.0)
    bg.add("1", "mesh2"); bg.add("R", "R2", R=3.0)
    bg.add("I", "T", ports=2, **field)
    bg.chain("u", "mesh1", "T"); bg.bond("mesh1", "R1"); bg.bond("mesh2", "T"); bg.bond("mesh2", "R2")
    return bg


def two_port_capacitance(field, resistive=None):
    bg = netdyn.BondGraph("two-port capacitance")
    bg.add("C", "K", ports=2, **field)
    bg.add("Se", "u", effort=1.0); bg.add("1", "J1"); bg.add("1", "J2")
    if resistive is None:
        bg.add("R", "R1", R=2.0); bg.add("R", "R2", R=1.0)
        bg.bond("J1", "R1"); bg.bond("J2", "R2")
    else:   # the two resistors as one R field
        bg.add("R", "Rf", ports=2, **resistive)
        bg.bond("J1", "Rf"); bg.bond("J2", "Rf")
    bg.chain("u", "J1", "K"); bg.bond("J2", "K")
    return bg


def test_fields_take_the_other_form_as_a_quadratic_form(tmp_path):
    """A multiport field given by its other function: an I field by its energy H(p1, p2) = ½ pᵀL⁻¹p, a C field
    by its co-energy V*(e1, e2) = ½ eᵀCe, an R field by its co-content D*(e1, e2) = ½ eᵀR⁻¹e. Each gives the
    same state equations as the matrix (symbolically) and survives a file; a nonlinear one is refused, naming
    the element and the form that works."""
    L1, L2, M = 1.0, 2.0, 0.8
    Li = np.linalg.inv([[L1, M], [M, L2]])
    by_matrix = coupled_meshes({"I": [[L1, M], [M, L2]]}).state_equations()
    by_energy = coupled_meshes({"energy": f"{Li[0, 0]}*p1**2/2 + {Li[0, 1]}*p1*p2 + {Li[1, 1]}*p2**2/2"})
    se = by_energy.state_equations()
    assert se.states == by_matrix.states
    assert all(abs(float(c)) < 1e-12 for r in (se.rhs - by_matrix.rhs) for c in sp.Poly(sp.expand(r), *se.states,
                                                                                        sp.sin(t)).coeffs())
    C = [[1.0, 0.2], [0.2, 0.5]]
    Rm = [[2.0, 0.0], [0.0, 1.0]]
    ref = two_port_capacitance({"C": C}).state_equations()
    bg = two_port_capacitance({"coenergy": lambda e1, e2: e1**2 / 2 + 0.2 * e1 * e2 + 0.25 * e2**2},
                              {"cocontent": "e1**2/4 + e2**2/2"})
    se = bg.state_equations()
    assert sp.simplify(se.rhs - ref.rhs) == sp.zeros(2, 1), (se.rhs, ref.rhs)
    assert sp.simplify(two_port_capacitance({"C": C}, {"R": Rm}).state_equations().rhs - ref.rhs) == sp.zeros(2, 1)
    sol = netdyn.simulate(bg, (0, 2), t_eval=np.linspace(0, 2, 5), rtol=1e-10)
    st = netdyn.simulate(bg, (0, 2), t_eval=np.linspace(0, 2, 5), rtol=1e-10, formulation="state")
    assert np.allclose(sol["q_K"], st["q_K_1"], atol=1e-8)
    netdyn.save_bond_graph(bg, tmp_path / "co.yaml")
    back = netdyn.load_bond_graph(tmp_path / "co.yaml")
    assert sp.simplify(back.state_equations().rhs - ref.rhs) == sp.zeros(2, 1)
    with pytest.raises(netdyn.errors.ElementError, match=r"K: a C field's coenergy must be a quadratic form.*give "
                                                         r"its energy as a function of \['q1', 'q2'\]"):
        two_port_capacitance({"coenergy": "e1**2/2 + e2**4/4"})
    with pytest.raises(netdyn.errors.ElementError, match="K: the coenergy matrix is not positive definite"):
        two_port_capacitance({"coenergy": "e1**2/2 - e2**2/2"})


def test_energy_variables_start_and_read_by_state_name_on_every_path():
    """``q0={"p_L1": ...}`` starts the inductor's flux linkage on every path (the linear one moves it onto the
    bond's flow), and ``sol["p_L1"]`` reads it back whatever the path's coordinates; the runs agree."""
    bg, _ = rlc()
    te = np.linspace(0, 1, 9)
    runs = {path: netdyn.simulate(bg, (0, 1), q0={"p_L1": 0.2, "q_C1": 0.05}, t_eval=te, rtol=1e-10, atol=1e-13,
                                  **kw) for path, kw in PATHS.items() if path != "bond/projection"}
    assert runs["linear"].method == "linear" and "p_L1" not in runs["linear"].coordinate_names
    for path, sol in runs.items():
        assert abs(sol["p_L1"][0] - 0.2) < 1e-12 and abs(sol.series("f(L1)")[0] - 0.4) < 1e-12, path
        assert np.allclose(sol["p_L1"], runs["state"]["p_L1"], rtol=0, atol=1e-8), path
        assert np.allclose(sol["q_C1"], runs["state"]["q_C1"], rtol=0, atol=1e-8), path
