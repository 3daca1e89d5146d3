"""Bond graphs as textbooks write them: constitutive laws in every form, derivative causality reduced,
nonlinear algebraic loops, energy variables and element outputs by name.

Every case is a system from the bond-graph literature (Karnopp–Margolis–Rosenberg, *System Dynamics*:
tanks and orifices, the DC motor with a gear, rigidly joined masses; Borutzky, *Bond Graph Methodology*:
algebraic loops between resistors; 20-sim's examples: geared inertias reduced to one state) with printed-style
data. Each is compared with state equations derived by hand here — independently of netdyn: the laws
inverted with ``scipy.optimize.brentq`` or in closed form, integrated by ``solve_ivp`` at rtol 1e-11 — on
every formulation (``bond``: one displacement per bond, the DAE; ``state``: the explicit state equations in
the energy variables). Every one-port element's ``e``, ``f``, ``p``/``q`` outputs are checked: the powers
``e·f`` of all elements sum to zero (the junction structure conserves power) and each storage element's
energy ``E(X)`` changes by the integral of its power; the bond formulation's own balance closes.

The measured errors are printed (``pytest -s``) and bounded below.
"""
import numpy as np
import pytest
import sympy as sp
from scipy.integrate import solve_ivp
from scipy.optimize import brentq

import netdyn
from netdyn import t
from netdyn.errors import ElementError, ModelError

RTOL = 1e-10         # netdyn's tolerance
REF_RTOL = 1e-11     # the hand-derived reference's


def graph(name, elements, bonds, **kw):
    bg = netdyn.BondGraph(name, **kw)
    for kind, n, params in elements:
        bg.add(kind, n, **params)
    for a, b in bonds:
        bg.bond(a, b)
    return bg


def solve(fn, target, lo=-1e6, hi=1e6):
    """x with fn(x) = target, by bisection-secant (the reference's inversion, independent of netdyn's Newton)."""
    return brentq(lambda x: fn(x) - target, lo, hi, xtol=1e-300, rtol=1e-15, maxiter=1000)


def reference(rhs, y0, T, te, method="DOP853"):
    ref = solve_ivp(rhs, (0, T), y0, t_eval=te, rtol=REF_RTOL, atol=1e-14 * max(1.0, np.max(np.abs(y0))),
                    method=method)
    assert ref.success, ref.message
    return ref.y


def relerr(a, b):
    return float(np.max(np.abs(np.asarray(a) - np.asarray(b))) / max(np.max(np.abs(b)), 1e-300))


def cumulative_boole(y, x):
    """∫ y dx from x[0] to x[0], x[4], x[8], ... by Boole's rule (exact for quintics; equal steps)."""
    h = x[1] - x[0]
    n = (len(y) - 1) // 4
    blocks = [2 * h / 45 * (7 * y[4 * k] + 32 * y[4 * k + 1] + 12 * y[4 * k + 2] + 32 * y[4 * k + 3] + 7 * y[4 * k + 4])
              for k in range(n)]
    return np.concatenate([[0.0], np.cumsum(blocks)])


def check_powers(bg, sol, energy_tol=1e-7):
    """Σ e·f over every one-port element = 0 at every instant; each storage element: ΔE(X) = ∫ e·f dt.

    Returns the worst relative residuals (power sum, energy of any storage element). The energy residual is
    that of Boole's rule on the sampled power (2001 points: about 1e-11 to 1e-8 here), not the simulation's."""
    P, worst = {}, 0.0
    for n in bg.elements:
        if bg.kind(n) in ("Se", "Sf", "C", "I", "R") and not bg.is_field(n):
            b = bg.bond_of(n)
            P[n] = bg.sign(n, b) * sol.series(f"e({n})") * sol.series(f"f({n})")   # power into the element
    scale = max(np.max(np.abs(v)) for v in P.values())
    power_sum = float(np.max(np.abs(sum(P.values()))) / scale)
    for n in bg.elements:
        if bg.kind(n) in ("C", "I") and not bg.is_field(n):
            E = sol.series(f"E({n})")[::4]
            W = cumulative_boole(P[n], sol.t)
            err = float(np.max(np.abs(E - E[0] - W)) / max(np.max(np.abs(E)), np.max(np.abs(W)), 1e-300))
            worst = max(worst, err)
    assert power_sum < 1e-9, power_sum
    assert worst < energy_tol, worst
    return power_sum, worst


def run_case(label, bg, ref_states, q0, T, te, formulations=("bond", "state"), tol=1e-7, **kw):
    """Simulate ``bg`` in each formulation; compare the named energy variables with the reference rows."""
    out = {}
    for form in formulations:
        sol = netdyn.simulate(bg, (0, T), t_eval=te, q0=q0, rtol=RTOL, formulation=form, **kw)
        errs = {spec: relerr(sol.series(spec), ref) for spec, ref in ref_states.items()}
        powers = check_powers(bg, sol)
        balance = sol.power_balance()["relative"] if form != "state" else None
        print(f"{label} [{form}, {sol.method}]: state errors {({k: f'{v:.1e}' for k, v in errs.items()})}, "
              f"power sum {powers[0]:.1e}, energies {powers[1]:.1e}"
              + (f", balance {balance:.1e}" if balance is not None else ""))
        assert max(errs.values()) < tol, (form, errs)
        if balance is not None:
            assert balance < 1e-8, balance
        out[form] = sol
    return out


# ------------------------------------------------------------------------------------------ 1. hydraulics
def test_two_tanks_orifices_pump_kmr():
    """KMR's tank network: a pump fills tank 1 (vertical walls), an orifice joins it to a conical tank 2
    (nonlinear compliance, law e(q)), which drains through a second orifice. Orifice 1 by its conductance law
    f = k·sign(Δp)·√|Δp|, orifice 2 by its co-content (2k/3)|e|^(3/2): both given their pressure drop
    (conductance causality)."""
    rho, g = 1000.0, 9.81
    A1 = 1.2
    C1 = A1 / (rho * g)
    k1, k2 = 0.6 * 8e-4 * np.sqrt(2 / rho), 0.6 * 6e-4 * np.sqrt(2 / rho)     # Cd·a·√(2/ρ)
    alpha = 0.5                                   # cone half-angle: V = π tan²α h³ / 3
    c2 = rho * g * (3 / (np.pi * np.tan(alpha) ** 2)) ** (1 / 3)       # p = c2 V^(1/3)
    Q0 = 1.5e-3
    Q = Q0 * (1 + 0.5 * sp.sin(0.05 * t))
    bg = graph("two tanks", [
        ("Sf", "pump", {"flow": Q}), ("0", "p1", {}), ("C", "tank1", {"C": C1}), ("1", "Q12", {}),
        ("R", "orifice1", {"law": f"f = {float(k1)!r}*sign(e)*sqrt(Abs(e))"}), ("0", "p2", {}),
        ("C", "tank2", {"law": f"e = {float(c2)!r}*sign(q)*Abs(q)**(1/3)"}),
        ("R", "orifice2", {"cocontent": f"2*{float(k2)!r}/3*Abs(e)**(3/2)"})],
        [("pump", "p1"), ("p1", "tank1"), ("p1", "Q12"), ("Q12", "orifice1"), ("Q12", "p2"), ("p2", "tank2"),
         ("p2", "orifice2")], effort="pressure", flow="volume flow")
    caus = bg.causality()
    assert caus.integral == ["tank1", "tank2"] and not caus.algebraic_loops

    def rhs(tt, y):
        p1, p2 = y[0] / C1, c2 * np.cbrt(y[1])
        q12 = k1 * np.sign(p1 - p2) * np.sqrt(abs(p1 - p2))
        return [Q0 * (1 + 0.5 * np.sin(0.05 * tt)) - q12, q12 - k2 * np.sqrt(p2)]

    T, te = 300.0, np.linspace(0, 300, 2001)
    y = reference(rhs, [0.6, 0.02], T, te)       # tank 1 above tank 2 throughout: no flow reversal (no √ cusp)
    assert np.all(y[0] / C1 > c2 * np.cbrt(y[1]))
    run_case("two tanks", bg, {"q(tank1)": y[0], "q(tank2)": y[1]}, {"q_tank1": 0.6, "q_tank2": 0.02}, T, te)
    se = bg.state_equations()     # explicit: the laws in the causality assigned, Abs and sign printed as such
    text = str(se.rhs)
    assert "sign" in text and "Abs" in text and "Derivative" not in text


def test_tank_drained_through_a_long_pipe_and_a_valve():
    """A tank drains through a long pipe (inertance ρL/a) and a valve given by its orifice law
    f = k·sign(e)·√|e|; the pipe's I gives the valve its flow (resistance causality): the valve's law is used
    inverted, e = sign(f)·f²/k², found in closed form."""
    rho, g, A, L, a = 1000.0, 9.81, 0.5, 20.0, 3e-3
    C, I = A / (rho * g), rho * L / a
    k = 0.62 * a * np.sqrt(2 / rho)
    Q = 2e-3 * (1 + sp.sin(t) / 2)
    bg = graph("tank and pipe", [("Sf", "pump", {"flow": Q}), ("0", "p_tank", {}), ("C", "tank", {"C": C}),
                                 ("1", "Q_pipe", {}), ("I", "pipe", {"I": I}),
                                 ("R", "valve", {"law": f"f = {float(k)!r}*sign(e)*sqrt(Abs(e))"})],
               [("pump", "p_tank"), ("p_tank", "tank"), ("p_tank", "Q_pipe"), ("Q_pipe", "pipe"),
                ("Q_pipe", "valve")], effort="pressure", flow="volume flow")
    se = bg.state_equations()   # the valve's resistance law e = sign(f)·f²/k², in closed form
    from netdyn.bondgraph.laws import NumericFunction
    assert not se.rhs.has(NumericFunction)
    p = sp.Symbol("p_pipe")
    valve = se["p_pipe"] - sp.Symbol("q_tank") / C
    for Qv in (-2e-3, 1e-4, 3e-3):
        assert abs(float(valve.subs(p, Qv * I)) + np.sign(Qv) * Qv ** 2 / k ** 2) < 1e-9 * Qv ** 2 / k ** 2

    def rhs(tt, y):
        V, p = y
        Qp = p / I
        return [2e-3 * (1 + np.sin(tt) / 2) - Qp, V / C - np.sign(Qp) * Qp ** 2 / k ** 2]

    T, te = 60.0, np.linspace(0, 60, 2001)
    y = reference(rhs, [0.4, I * 1e-3], T, te)
    run_case("tank and pipe", bg, {"q(tank)": y[0], "p(pipe)": y[1]}, {"q_tank": 0.4, "p_pipe": I * 1e-3}, T, te)


# ------------------------------------------------------------------------------------------ 2. laws in each form
def test_storage_and_resistor_laws_in_every_form_duffing_circuit():
    """A sine-driven series circuit whose three elements are each given in the *other* form than the one their
    causality uses: the I by its energy H(p) (f = p/L + βp³), the C by its co-energy V*(e) (q = C0 e + γ e³:
    no closed-form e(q), Newton), the R by its co-content D*(e) (f = e/R0 + δ e³, given its flow)."""
    L, beta, C0, gam, R0, delta = 0.5, 0.8, 0.2, 0.05, 2.0, 0.3
    bg = graph("Duffing circuit", [("Se", "u", {"effort": sp.sin(2 * t)}), ("1", "J", {}),
                                   ("I", "L", {"energy": f"p**2/(2*{L}) + {beta}*p**4/4"}),
                                   ("C", "K", {"coenergy": f"{C0}*e**2/2 + {gam}*e**4/4"}),
                                   ("R", "D", {"cocontent": f"e**2/(2*{R0}) + {delta}*e**4/4"})],
               [("u", "J"), ("J", "L"), ("J", "K"), ("J", "D")])

    def rhs(tt, y):
        p, q = y
        f = p / L + beta * p ** 3
        eC = solve(lambda e: C0 * e + gam * e ** 3, q)
        eR = solve(lambda e: e / R0 + delta * e ** 3, f)
        return [np.sin(2 * tt) - eC - eR, f]

    T, te = 5.0, np.linspace(0, 5, 2001)
    y = reference(rhs, [0.3, 0.1], T, te)
    run_case("Duffing circuit", bg, {"p(L)": y[0], "q(K)": y[1]}, {"p_L": 0.3, "q_K": 0.1}, T, te,
             formulations=("bond", "reduced", "state"))


def test_laws_as_relations_in_the_causality_assigned():
    """A current source feeds a 0-junction with a hardening capacitor (energy V(q) = q²/2C + a q⁴/4), a
    resistor by its resistance law e = R1 f + b f³ (given its effort here: Newton) and a branch of a
    saturating inductor by its co-energy law p = L0·tanh(f) (f(p) = atanh(p/L0): closed form) in series with
    a resistor by its conductance law f = e/R2 (given its flow: e = R2 f)."""
    C, a, R1, b, L0, R2 = 0.5, 0.4, 1.5, 0.2, 0.8, 0.7
    bg = graph("relations", [("Sf", "i", {"flow": 0.3 * sp.cos(t)}), ("0", "N", {}),
                             ("C", "C1", {"energy": f"q**2/(2*{C}) + {a}*q**4/4"}),
                             ("R", "R1", {"law": f"e = {R1}*f + {b}*f**3"}), ("1", "branch", {}),
                             ("I", "L1", {"law": f"p = {L0}*tanh(f)"}), ("R", "R2", {"law": f"f = e/{R2}"})],
               [("i", "N"), ("N", "C1"), ("N", "R1"), ("N", "branch"), ("branch", "L1"), ("branch", "R2")])
    se = bg.state_equations()
    assert se.rhs.has(sp.atanh) and not se.algebraic

    def rhs(tt, y):
        q, p = y
        e = q / C + a * q ** 3
        fR1 = solve(lambda f: R1 * f + b * f ** 3, e)
        fL = np.arctanh(p / L0)
        return [0.3 * np.cos(tt) - fR1 - fL, e - R2 * fL]

    T, te = 6.0, np.linspace(0, 6, 2001)
    y = reference(rhs, [0.2, 0.1], T, te)
    run_case("relations", bg, {"q(C1)": y[0], "p(L1)": y[1]}, {"q_C1": 0.2, "p_L1": 0.1}, T, te)


def test_conductance_law_without_closed_form_is_inverted_numerically():
    """A varistor-like conductance f = e/R + k·sinh(e/V0) given its flow (in series with an inductor): no
    closed form for e(f): the state equations hold its numeric inverse (Newton, analytic derivative), and every
    path evaluates it."""
    R, k, V0, L, C = 10.0, 1e-3, 0.5, 0.2, 0.05
    bg = graph("varistor", [("Se", "u", {"effort": 2.0 * sp.sin(3 * t)}), ("1", "J", {}),
                            ("I", "L", {"I": L}), ("C", "C", {"C": C}),
                            ("R", "V", {"law": f"f = e/{R} + {k}*sinh(e/{V0})"})],
               [("u", "J"), ("J", "L"), ("J", "C"), ("J", "V")])
    se = bg.state_equations()
    e_of_f = [a for a in se.rhs.atoms(sp.Function) if type(a).__name__.startswith("e_of_f_V")]
    assert e_of_f, se.rhs
    x = sp.Symbol("x")
    d = e_of_f[0].func(x).diff(x)        # analytic: 1 / g'(e)
    assert "cosh" in str(d)

    def rhs(tt, y):
        p, q = y
        f = p / L
        eV = solve(lambda e: e / R + k * np.sinh(e / V0), f, -300.0, 300.0)
        return [2.0 * np.sin(3 * tt) - q / C - eV, f]

    T, te = 4.0, np.linspace(0, 4, 2001)
    y = reference(rhs, [0.0, 0.0], T, te)
    run_case("varistor", bg, {"p(L)": y[0], "q(C)": y[1]}, {}, T, te)


def test_non_monotone_law_is_refused_with_the_fix_named():
    """D = f³/(3k²) gives e = f²/k²: the same effort for f and −f (negative dissipation for reversed flow), so an
    orifice given its pressure cannot find its flow; the message says so and names the sign-preserving form."""
    k = 2e-3
    f = sp.Symbol("f")
    bg = graph("tank", [("Sf", "pump", {"flow": 1e-3}), ("0", "p", {}), ("C", "tank", {"C": 1e-4}),
                        ("R", "orifice", {"content": f ** 3 / (3 * k ** 2)})],
               [("pump", "p"), ("p", "orifice"), ("p", "tank")])
    with pytest.raises(ElementError, match="not monotone.*Abs"):
        bg.state_equations()
    good = graph("tank", [("Sf", "pump", {"flow": 1e-3}), ("0", "p", {}), ("C", "tank", {"C": 1e-4}),
                          ("R", "orifice", {"content": sp.Abs(f) ** 3 / (3 * k ** 2)})],
                 [("pump", "p"), ("p", "orifice"), ("p", "tank")])
    assert sp.srepr(good.state_equations().rhs[0]).count("sign") == 1


# ------------------------------------------------------------------------------------------ 3. derivative causality
def test_dc_motor_gear_load_reduced_to_the_equivalent_inertia():
    """KMR's DC motor driving a load through a gear: the load inertia is in derivative causality. The state
    equations come out in (p_LA, p_Jm) with the reflected inertia Jm + n² JL and friction Bm + n² BL, as 20-sim
    reduces them; the load's energy ½ JL (n ω)² is still reported."""
    U, RA, LA, K, Jm, Bm, n, JL, BL = 12.0, 4.0, 15e-3, 9.54e-2, 1e-4, 1e-4, 0.25, 8e-4, 4e-4
    bg = graph("motor and gear", [("Se", "U", {"effort": U}), ("1", "armature", {}), ("R", "RA", {"R": RA}),
                                  ("I", "LA", {"I": LA}), ("GY", "K", {"ratio": K}), ("1", "rotor", {}),
                                  ("I", "Jm", {"I": Jm}), ("R", "Bm", {"R": Bm}), ("TF", "gear", {"ratio": n}),
                                  ("1", "load", {}), ("I", "JL", {"I": JL}), ("R", "BL", {"R": BL})],
               [("U", "armature"), ("armature", "K"), ("K", "rotor"), ("rotor", "gear"), ("gear", "load"),
                ("load", "JL"), ("armature", "RA"), ("armature", "LA"), ("rotor", "Jm"), ("rotor", "Bm"),
                ("load", "BL")])
    assert bg.causality().derivative == {"JL": ["Jm"]}
    se = bg.state_equations()
    pL, pJ = sp.symbols("p_LA p_Jm")
    J, B = Jm + n ** 2 * JL, Bm + n ** 2 * BL
    assert se.states == [pL, pJ]
    assert abs(float(se.rhs[1].diff(pJ)) - (-B / J)) < 1e-12 * B / J
    assert abs(float(se.rhs[1].diff(pL)) - K / LA * Jm / J) < 1e-12 * K / LA
    assert sp.simplify(se.energies["JL"] - JL * (n * pJ / Jm) ** 2 / 2) == 0

    def rhs(tt, y):
        i, w = y[0] / LA, y[1] / Jm
        return [U - RA * i - K * w, (K * i - B * w) * Jm / J]     # ṗ_Jm = Jm ω̇

    T, te = 0.2, np.linspace(0, 0.2, 2001)
    y = reference(rhs, [0.0, 0.0], T, te, method="Radau")
    sols = run_case("motor and gear", bg, {"p(LA)": y[0], "p(Jm)": y[1]}, {}, T, te)
    for sol in sols.values():   # the dependent inertia's outputs: its flow n ω, its momentum JL n ω
        assert relerr(sol.series("f(JL)"), n * y[1] / Jm) < 1e-7
        assert relerr(sol.series("p(JL)"), JL * n * y[1] / Jm) < 1e-7


def test_twenty_sim_rigidly_geared_inertias_one_state():
    """20-sim's example of two rigidly geared inertias (no compliance between): one inertia is dependent; the
    model reduces to one state, driven by a torque step against a spring and a damper on the first shaft."""
    J1, J2, n, k, c, tau = 0.02, 0.5, 0.2, 40.0, 0.3, 1.5
    bg = graph("geared inertias", [("Se", "tau", {"effort": tau}), ("1", "w1", {}), ("I", "J1", {"I": J1}),
                                   ("C", "spring", {"C": 1 / k}), ("R", "damper", {"R": c}),
                                   ("TF", "gear", {"ratio": n}), ("1", "w2", {}), ("I", "J2", {"I": J2})],
               [("tau", "w1"), ("w1", "J1"), ("w1", "spring"), ("w1", "damper"), ("w1", "gear"), ("gear", "w2"),
                ("w2", "J2")])
    se = bg.state_equations()
    assert [s.name for s in se.states] == ["p_J1", "q_spring"] and "J2" in se.dependent
    Jeq = J1 + n ** 2 * J2

    def rhs(tt, y):
        w, x = y[0] / J1, y[1]
        return [(tau - k * x - c * w) * J1 / Jeq, w]

    T, te = 3.0, np.linspace(0, 3, 2001)
    y = reference(rhs, [0.0, 0.0], T, te, method="Radau")
    run_case("geared inertias", bg, {"p(J1)": y[0], "q(spring)": y[1]}, {}, T, te)


def test_nonlinear_compliance_in_derivative_causality():
    """Two tanks joined without resistance (one pressure): the second, conical, has the nonlinear law
    q = c·e³ (given as q(e)) and is dependent; the reduced equation is (C1 + 3c e²) ė = (p_s − e)/R."""
    C1, c, R, ps = 2.0, 0.5, 3.0, 1.2
    bg = graph("joined tanks", [("Se", "supply", {"effort": ps}), ("1", "line", {}), ("R", "R", {"R": R}),
                                ("0", "N", {}), ("C", "C1", {"C": C1}), ("C", "C2", {"law": f"q = {c}*e**3"})],
               [("supply", "line"), ("line", "R"), ("line", "N"), ("N", "C1"), ("N", "C2")])
    assert bg.causality().derivative == {"C2": ["C1"]}

    def rhs(tt, y):
        e = y[0] / C1
        return [(ps - e) / R * C1 / (C1 + 3 * c * e ** 2)]

    T, te = 10.0, np.linspace(0, 10, 2001)
    y = reference(rhs, [0.3 * C1], T, te)
    sols = run_case("joined tanks", bg, {"q(C1)": y[0]}, {"q_C1": 0.3 * C1}, T, te)
    for sol in sols.values():
        assert relerr(sol.series("q(C2)"), c * (y[0] / C1) ** 3) < 1e-7


# ------------------------------------------------------------------------------------------ 4. algebraic loops
def test_linear_algebraic_loop_borutzky():
    """Borutzky's resistor pair closing an algebraic loop, here between an inductor and a capacitor: solved
    symbolically; against the hand-reduced equations."""
    Lv, C, R1, R2 = 0.4, 0.25, 1.0, 2.0
    bg = graph("loop", [("Se", "u", {"effort": sp.sin(t) + 1}), ("1", "S", {}), ("I", "L", {"I": Lv}),
                        ("0", "A", {}), ("C", "C", {"C": C}), ("1", "I12", {}), ("R", "R1", {"R": R1}),
                        ("0", "B", {}), ("R", "R2", {"R": R2})],
               [("u", "S"), ("S", "L"), ("S", "A"), ("A", "C"), ("A", "I12"), ("I12", "R1"), ("I12", "B"),
                ("B", "R2")])
    assert bg.causality().algebraic_loops == [["R1", "R2"]]
    se = bg.state_equations()
    assert not se.algebraic

    def rhs(tt, y):
        p, q = y
        return [np.sin(tt) + 1 - q / C, p / Lv - q / C / (R1 + R2)]

    T, te = 6.0, np.linspace(0, 6, 2001)
    y = reference(rhs, [0.0, 0.0], T, te)
    run_case("linear loop", bg, {"p(L)": y[0], "q(C)": y[1]}, {}, T, te)


def test_nonlinear_algebraic_loop_kept_implicit_and_solved_at_the_start():
    """The same loop with a cubic resistance law e = R1 f + a f³ and a cubic conductance law f = e/R2 + b e³: no
    closed form; the state equations keep the loop's signals as algebraic unknowns (0 = g), the consistent start
    solves them by Newton, and the state formulation integrates the semi-explicit system."""
    C, R1, a, R2, b, q0 = 0.5, 1.0, 0.5, 2.0, 0.25, 1.5
    bg = graph("nonlinear loop", [("C", "C", {"C": C}), ("0", "A", {}), ("1", "I12", {}),
                                  ("R", "R1", {"law": f"e = {R1}*f + {a}*f**3"}), ("0", "B", {}),
                                  ("R", "R2", {"law": f"f = e/{R2} + {b}*e**3"})],
               [("A", "C"), ("A", "I12"), ("I12", "R1"), ("I12", "B"), ("B", "R2")])
    se = bg.state_equations()
    assert se.algebraic and len(se.residuals) == len(se.algebraic)

    def current(q):
        eA = q / C
        eB = solve(lambda e: e + R1 * (e / R2 + b * e ** 3) + a * (e / R2 + b * e ** 3) ** 3, eA, -1e2, 1e2)
        return eB / R2 + b * eB ** 3

    def rhs(tt, y):
        return [-current(y[0])]

    T, te = 4.0, np.linspace(0, 4, 2001)
    y = reference(rhs, [q0], T, te)
    sols = run_case("nonlinear loop", bg, {"q(C)": y[0]}, {"q_C": q0}, T, te)
    i0 = current(q0)
    for sol in sols.values():   # the start satisfied both resistors' laws
        assert abs(sol.series("f(R2)")[0] - i0) < 1e-9 * abs(i0)


def test_nonlinear_resistive_field_between_junctions_starts_consistently():
    """The issue's failure: an orifice between two junctions, neither next to a storage element's stroke
    (two orifices in series between tanks). Before, the start filled its flow by least squares and IDA failed
    at t = 0; now every law holds at t = 0 and the run matches the hand-derived equations."""
    C1, C2, k1, k2 = 1.0, 0.5, 0.8, 0.5
    bg = graph("orifices in series", [("Sf", "pump", {"flow": 0.3 * (1 + sp.sin(2 * t))}),
                                      ("C", "T1", {"C": C1}), ("0", "p1", {}), ("1", "Q", {}),
                                      ("R", "o1", {"law": f"f = {k1}*sign(e)*sqrt(Abs(e))"}),
                                      ("R", "o2", {"law": f"f = {k2}*sign(e)*sqrt(Abs(e))"}), ("0", "p2", {}),
                                      ("C", "T2", {"C": C2})],
               [("pump", "p1"), ("p1", "T1"), ("p1", "Q"), ("Q", "o1"), ("Q", "o2"), ("Q", "p2"), ("p2", "T2")])
    assert bg.causality().algebraic_loops

    def flow(y):   # Δp split so that both orifices pass one flow: Q = k1√Δ1 = k2√Δ2, Δ1 + Δ2 = Δ
        d = y[0] / C1 - y[1] / C2
        return np.sign(d) * np.sqrt(abs(d) / (1 / k1 ** 2 + 1 / k2 ** 2))

    def rhs(tt, y):
        Q = flow(y)
        return [0.3 * (1 + np.sin(2 * tt)) - Q, Q]

    T, te = 1.0, np.linspace(0, 1, 2001)
    y = reference(rhs, [2.0, 0.1], T, te)
    sols = run_case("orifices in series", bg, {"q(T1)": y[0], "q(T2)": y[1]}, {"q_T1": 2.0, "q_T2": 0.1}, T, te)
    for sol in sols.values():
        assert abs(sol.series("f(o1)")[0] - flow([2.0, 0.1])) < 1e-12
        assert abs(sol.series("f(o2)")[0] - flow([2.0, 0.1])) < 1e-12


# ------------------------------------------------------------------------------------------ 5. a vehicle
def test_quarter_car_with_progressive_spring_and_degressive_damper():
    """A quarter car over a bump with a progressive suspension spring (energy in q) and a degressive damper
    F = c·v0·asinh(v/v0) (a resistance law given its velocity: linear at rest, logarithmic above v0)."""
    kt, mu, ks, a3, c, ms, v0 = 2e5, 40.0, 2e4, 4e6, 1.5e3, 300.0, 0.1
    bump = sp.Piecewise((0.05 * sp.pi * sp.sin(2 * sp.pi * t), t < 1), (0, True))
    bg = graph("quarter car", [("Sf", "road", {"flow": bump}), ("0", "tyre_force", {}), ("C", "k_t", {"C": 1 / kt}),
                               ("1", "v_wheel", {}), ("I", "m_u", {"I": mu}), ("0", "susp_force", {}),
                               ("1", "v_rel", {}), ("C", "k_s", {"energy": f"{ks}*q**2/2 + {a3}*q**4/4"}),
                               ("R", "c_s", {"law": f"e = {c}*{v0}*asinh(f/{v0})"}), ("1", "v_body", {}),
                               ("I", "m_s", {"I": ms})],
               [("road", "tyre_force"), ("tyre_force", "v_wheel"), ("v_wheel", "susp_force"),
                ("susp_force", "v_body"), ("v_body", "m_s"), ("tyre_force", "k_t"), ("v_wheel", "m_u"),
                ("susp_force", "v_rel"), ("v_rel", "k_s"), ("v_rel", "c_s")])

    def rhs(tt, y):
        xt, pu, xs, ps = y
        vu, vs = pu / mu, ps / ms
        vr = vu - vs
        Fs = ks * xs + a3 * xs ** 3 + c * v0 * np.arcsinh(vr / v0)
        road = 0.05 * np.pi * np.sin(2 * np.pi * tt) if tt < 1 else 0.0
        return [road - vu, kt * xt - Fs, vr, Fs]

    T = 1.0    # (the bump's end is a corner of the source: stop there)
    te = np.linspace(0, T, 2001)
    y = reference(rhs, [0.0, 0.0, 0.0, 0.0], T, te, method="Radau")
    run_case("quarter car", bg, {"q(k_t)": y[0], "p(m_u)": y[1], "q(k_s)": y[2], "p(m_s)": y[3]}, {}, T, te,
             tol=1e-6)


# ------------------------------------------------------------------------------------------ 6. exports
def geared_motor_with_a_varistor_load():
    bg = graph("geared load", [("Se", "tau", {"effort": sp.Function("tau")(t)}), ("1", "w1", {}),
                               ("I", "J1", {"I": 2.0}), ("TF", "gear", {"ratio": 3.0}), ("1", "w2", {}),
                               ("I", "J2", {"I": 0.5}), ("R", "b", {"law": "f = e + sinh(e)"})],
               [("tau", "w1"), ("w1", "gear"), ("gear", "w2"), ("w2", "J2"), ("w1", "J1"), ("w2", "b")])
    return bg


def test_reduced_state_equations_exported_in_latex_python_and_c(tmp_path):
    """The reduced equations of a dependent inertia and a law inverted numerically, exported: the Python module
    and the compiled C agree with the state equations (which agree with the hand-reduced one)."""
    import shutil
    import subprocess
    bg = geared_motor_with_a_varistor_load()
    se = bg.state_equations()
    p = sp.Symbol("p_J1")
    assert se.states == [p] and "J2" in se.dependent
    latex = netdyn.export_equations(bg, "latex", formulation="state")
    assert r"\dot{p}_{J1} &=" in latex and "J2" not in latex
    ns = {}
    exec(netdyn.export_equations(bg, "python", formulation="state"), ns)
    assert ns["STATES"] == ["p_J1"] and ns["INPUTS"] == ["tau"]

    def hand(x, tau):   # (J1 + n² J2) ω̇ = τ − n e_b, e_b + sinh(e_b) = n ω: ṗ = J1 ω̇
        w = x / 2.0
        eb = solve(lambda e: e + np.sinh(e), 3.0 * w, -50.0, 50.0)
        return 2.0 * (tau - 3.0 * eb) / (2.0 + 9.0 * 0.5)

    rhs = sp.lambdify([p, sp.Symbol("u")], se.rhs[0].xreplace({sp.Function("tau")(t): sp.Symbol("u")}))
    for x, tau in [(0.3, 1.0), (-2.0, 0.5), (5.0, -3.0)]:
        py = ns["rhs"](0.0, [x], {"tau": tau})[0]
        assert abs(py - hand(x, tau)) < 1e-13 * (1 + abs(py)), (py, hand(x, tau))
        assert abs(float(rhs(x, tau)) - py) < 1e-13 * (1 + abs(py))
    code = netdyn.export_equations(bg, "c", formulation="state")
    cc = shutil.which("gcc") or shutil.which("clang")
    if cc is None:
        pytest.skip("no C compiler")
    code.write(tmp_path)
    (tmp_path / "main.c").write_text(
        '#include <stdio.h>\n#include "geared_load.h"\nint main(void){double x[1], dx[1], u[1];\n'
        'double xs[3] = {0.3, -2.0, 5.0}, us[3] = {1.0, 0.5, -3.0};\n'
        'for (int k = 0; k < 3; ++k) { x[0] = xs[k]; u[0] = us[k]; geared_load_rhs(0.0, x, 0, u, dx);'
        ' printf("%.17g\\n", dx[0]); }\nreturn 0;}\n')
    subprocess.run([cc, "-std=c99", "-Wall", "-Wextra", "-pedantic", "-Werror", "-o", str(tmp_path / "m"),
                    str(tmp_path / "main.c"), str(tmp_path / "geared_load.c"), "-lm"], check=True)
    out = [float(v) for v in subprocess.run([str(tmp_path / "m")], capture_output=True, text=True,
                                            check=True).stdout.split()]
    for v, (x, tau) in zip(out, [(0.3, 1.0), (-2.0, 0.5), (5.0, -3.0)]):
        assert abs(v - hand(x, tau)) < 1e-13 * (1 + abs(v))


def test_nonlinear_loop_exports_to_python_and_says_why_not_to_c():
    C, R1, a, R2, b = 0.5, 1.0, 0.5, 2.0, 0.25
    bg = graph("loop", [("C", "C", {"C": C}), ("0", "A", {}), ("1", "I12", {}),
                        ("R", "R1", {"law": f"e = {R1}*f + {a}*f**3"}), ("0", "B", {}),
                        ("R", "R2", {"law": f"f = e/{R2} + {b}*e**3"})],
               [("A", "C"), ("A", "I12"), ("I12", "R1"), ("I12", "B"), ("B", "R2")])
    ns = {}
    exec(netdyn.export_equations(bg, "python", formulation="state"), ns)
    eB = solve(lambda e: e + R1 * (e / R2 + b * e ** 3) + a * (e / R2 + b * e ** 3) ** 3, 1.5 / C)
    assert abs(ns["rhs"](0.0, [1.5])[0] + (eB / R2 + b * eB ** 3)) < 1e-12
    from netdyn.errors import ExportError
    with pytest.raises(ExportError, match="nonlinear algebraic loop"):
        netdyn.export_equations(bg, "c", formulation="state")


# ------------------------------------------------------------------------------------------ 7. ports, moduli, files
def crank_slider(first_port_last=False):
    """A flywheel (inertia J, bearing friction b) drives a slider of mass m on a spring k through a crank of
    radius r: an MTF whose modulus r·cos(θ) reads the flywheel's angle by name, q_J (the displacement of the
    inertia J); the slider's mass is then in derivative causality (its velocity is r cos θ ω)."""
    J, b, m, k, r = 0.05, 0.02, 0.8, 30.0, 0.1
    bg = netdyn.BondGraph("crank and slider")
    for kind, n, p in [("Se", "tau", {"effort": 0.2 * sp.sin(t) + 0.1}), ("1", "w", {}), ("I", "J", {"I": J}),
                       ("R", "b", {"R": b}), ("MTF", "crank", {"ratio": f"{r}*cos(q_J)", "ports": ("shaft", "rod")}),
                       ("1", "v", {}), ("I", "m", {"I": m}), ("C", "k", {"C": 1 / k})]:
        bg.add(kind, n, **p)
    if first_port_last:    # the rod side connected first: the named ports keep the transformer's direction
        bg.bond(("crank", "rod"), "v")
        bg.bond("w", ("crank", "shaft"))
    else:
        bg.bond("w", "crank")
        bg.bond("crank", "v")
    for a, c in [("tau", "w"), ("w", "J"), ("w", "b"), ("v", "m"), ("v", "k")]:
        bg.bond(a, c)
    return bg, (J, b, m, k, r)


def test_modulus_reads_another_elements_state_by_name_crank_slider():
    bg, (J, b, m, k, r) = crank_slider()
    assert bg.modulating("crank") == {sp.Symbol("q_J"): ("q", "J")}
    assert bg.causality().derivative == {"m": ["J", "tau"]} or "m" in bg.causality().derivative
    se = bg.state_equations()
    assert [s.name for s in se.states] == ["p_J", "q_k", "x_J"]

    def rhs(tt, y):
        th, w, s = y
        c, sn = np.cos(th), np.sin(th)
        tau = 0.2 * np.sin(tt) + 0.1
        wd = (tau - b * w - k * s * r * c + m * r ** 2 * c * sn * w ** 2) / (J + m * r ** 2 * c ** 2)
        return [w, wd, r * c * w]

    T, te = 8.0, np.linspace(0, 8, 2001)
    y = reference(rhs, [0.0, 0.0, 0.0], T, te)
    run_case("crank and slider", bg, {"q(J)": y[0], "p(J)": J * y[1], "q(k)": y[2]}, {}, T, te)


def test_named_ports_keep_a_two_ports_direction_whatever_the_connection_order():
    a, _ = crank_slider()
    b, _ = crank_slider(first_port_last=True)
    assert a.bonds_of("crank")[0] == b.bonds_of("crank")[0] == "w_crank"
    assert a.state_equations().rhs == b.state_equations().rhs
    c = netdyn.BondGraph()
    c.add("TF", "gear", ratio=2, ports=("in", "out"))
    c.add("Se", "u", effort=1)
    with pytest.raises(netdyn.errors.TopologyError, match="no port 'piston'; its ports are \\['in', 'out'\\]"):
        c.bond("u", ("gear", "piston"))
    c.bond("u", ("gear", "out"))
    with pytest.raises(netdyn.errors.TopologyError, match="port 2 of gear already has bond 'u'"):
        c.add("I", "J", I=1.0) or c.bond("J", ("gear", 2))


def test_file_round_trip_is_bit_identical_with_laws_parameters_units_ports(tmp_path):
    """A file keeps what the graph was written with: named parameters (value, unit, description), expressions as
    typed (``A/(rho*g)``), every law form, the domain's units, named ports and a modulus by name; saving what was
    read gives the same bytes, and the simulation of the graph read back is the same to the last bit."""
    bg = netdyn.BondGraph("tanks", effort="pressure", flow="volume flow", units={"effort": "Pa", "flow": "m^3/s"})
    bg.parameter("A", 0.5, "m^2", "tank area")
    bg.parameter("rho", 1000.0, "kg/m^3", "density")
    bg.parameter("g", 9.81, "m/s^2")
    bg.parameter("k", 2.1466252583997982e-05, "m^3/(s Pa^0.5)", "orifice: Cd a sqrt(2/rho)")
    bg.add("Sf", "pump", flow="1e-3*(1 + sin(t)/2)")
    bg.add("0", "p1")
    bg.add("C", "tank1", C="A/(rho*g)")
    bg.add("1", "Q12")
    bg.add("R", "orifice", law="f = k*sign(e)*sqrt(Abs(e))")
    bg.add("0", "p2")
    bg.add("C", "tank2", coenergy="A/(rho*g)*e**2/2")
    bg.add("R", "drain", cocontent="2*k/3*Abs(e)**(3/2)")
    bg.chain("pump", "p1", "Q12", "p2", "tank2")
    bg.bond("p1", "tank1"), bg.bond("Q12", "orifice"), bg.bond("p2", "drain")
    for fmt in ("json", "yaml"):
        path = netdyn.save_bond_graph(bg, tmp_path / f"tanks.{fmt}")
        text = path.read_text()
        assert "A/(rho*g)" in text and "f = k*sign(e)*sqrt(Abs(e))" in text and "m^3/(s Pa^0.5)" in text
        back = netdyn.load_bond_graph(path)
        again = netdyn.save_bond_graph(back, tmp_path / f"again.{fmt}")
        assert again.read_bytes() == path.read_bytes()
        assert back.parameters == bg.parameters and back.units == bg.units
    te = np.linspace(0, 50, 11)
    a = netdyn.simulate(bg, (0, 50), t_eval=te, q0={"q_tank1": 0.2, "q_tank2": 0.05})
    b = netdyn.simulate(back, (0, 50), t_eval=te, q0={"q_tank1": 0.2, "q_tank2": 0.05})
    assert np.array_equal(a.q, b.q) and np.array_equal(a.series("f(orifice)"), b.series("f(orifice)"))
    c = netdyn.simulate(bg, (0, 50), t_eval=te, q0={"q_tank1": 0.2, "q_tank2": 0.05}, params={"A": 1.0})
    assert not np.array_equal(a.q, c.q)       # the named parameter is a parameter of the model
    crank, _ = crank_slider(first_port_last=True)
    path = netdyn.save_bond_graph(crank, tmp_path / "crank.yaml")
    back = netdyn.load_bond_graph(path)
    assert back.port_names("crank") == ["shaft", "rod"] and back.bonds_of("crank") == crank.bonds_of("crank")
    assert netdyn.save_bond_graph(back, tmp_path / "crank2.yaml").read_bytes() == path.read_bytes()
    assert back.state_equations().rhs == crank.state_equations().rhs


def test_linearize_keeps_the_inputs_in_the_order_given():
    bg = graph("two sources", [("Se", "b_src", {"effort": 1.0}), ("Sf", "a_src", {"flow": 0.0}), ("1", "J", {}),
                               ("I", "L", {"I": 0.5}), ("0", "N", {}), ("C", "C", {"C": 0.2}), ("R", "R", {"R": 3.0})],
               [("b_src", "J"), ("J", "L"), ("J", "N"), ("N", "C"), ("N", "R"), ("a_src", "N")])
    for order in (["b_src", "a_src"], ["a_src", "b_src"]):
        lin = netdyn.linearize(bg, inputs=order, u={"b_src": 0, "a_src": 0}, outputs=["e(C)"])
        assert lin.inputs == order
        assert lin.states == ["p_L", "q_C"]
        col = {name: lin.B[:, i] for i, name in enumerate(order)}
        assert np.allclose(col["b_src"], [1.0, 0.0]) and np.allclose(col["a_src"], [0.0, 1.0])


# ------------------------------------------------------------------------------------------ 8. the causality report
def test_causality_report_one_row_a_bond_and_strokes_on_the_half_arrows(tmp_path):
    """The report tabulates every bond (ends, stroke end, who sets effort and flow, integral / derivative /
    resistance / conductance causality, its algebraic loop) and the loops with their sizes; the drawing puts one
    stroke across each bond at the end its row names — on the half-arrow when that is the head."""
    import matplotlib
    matplotlib.use("Agg")
    bg = graph("loop and a dependent capacitor",
               [("Se", "u", {"effort": 1.0}), ("1", "S", {}), ("I", "L", {"I": 0.4}), ("0", "A", {}),
                ("C", "C", {"C": 0.5}), ("C", "C2", {"C": 1.0}), ("1", "I12", {}), ("R", "R1", {"R": 1.0}),
                ("0", "B", {}), ("R", "R2", {"R": 2.0})],
               [("u", "S"), ("S", "L"), ("S", "A"), ("A", "C"), ("A", "I12"), ("I12", "R1"), ("I12", "B"),
                ("B", "R2"), ("A", "C2")])
    caus = bg.causality()
    rows = {r["bond"]: r for r in caus.rows()}
    assert len(rows) == len(bg.bond_names)
    assert rows["L"]["role"] == "integral" and rows["L"]["stroke"] == "L"          # the I is given its effort
    assert rows["C"]["role"] == "integral" and rows["C"]["stroke"] == "A"          # the C gives it
    assert rows["C2"]["role"] == "derivative" and rows["C2"]["stroke"] == "C2"     # dependent: given its effort
    assert {rows["R1"]["role"], rows["R2"]["role"]} == {"resistance", "conductance"}
    assert rows["R1"]["loop"] == rows["R2"]["loop"] == 1 and rows["L"]["loop"] is None
    text = caus.report()
    assert text.count("\n") >= len(bg.bond_names) + 3
    assert "algebraic loop 1: R1, R2 — size 2 elements, 3 bonds, 6 signals" in text
    assert "derivative causality: C2 (depends on C)" in text
    assert any(line.split()[1:3] == ["C2", "A"] and line.split()[-1] == "derivative" for line in text.splitlines()[2:11])
    ax = bg.draw(tmp_path / "loop.png")
    strokes = [ln for ln in ax.lines if ln.get_color() in ("tab:red", "tab:orange")]
    assert len(strokes) == len(bg.bond_names)
    ends = {}
    for ln in ax.lines:   # each bond's line: black, from near its tail to near its head
        if ln.get_color() == "k" and ln.get_linestyle() in ("-", "--") and len(ln.get_xdata()) == 2:
            ends.setdefault(len(ends), np.column_stack([ln.get_xdata(), ln.get_ydata()]))
    mids = [np.array([np.mean(s.get_xdata()), np.mean(s.get_ydata())]) for s in strokes]
    pos = {t.get_text(): t.get_position() for t in ax.texts}
    for b, mid in zip(bg.bond_names, mids):
        tail, head = bg.ends(b)
        stroke = rows[b]["stroke"]
        near, far = (head, tail) if stroke == head else (tail, head)
        lab = lambda n: next(k for k in pos if k.endswith(":" + n) or k == n or (bg.kind(n) in "01" and k == n))
        d_near = np.hypot(*(mid - np.array(pos[lab(near)])))
        d_far = np.hypot(*(mid - np.array(pos[lab(far)])))
        assert d_near < d_far, (b, stroke)
    assert (tmp_path / "loop.png").stat().st_size > 10_000


def test_states_named_after_elements_on_every_path_and_an_unbounded_slope_named_at_the_start():
    """Bonds named by the user (b1 ... b4) still give coordinates named after their storage elements; the state
    formulation's states are the energy variables; p(Iu) and f(Iu) on the linear path. An orifice law started at
    zero pressure (an empty tank) has an unbounded slope there: said, with the element and the fix."""
    bg = netdyn.BondGraph("named bonds")
    for kind, n, p in [("Se", "u", {"effort": 1.0}), ("1", "J", {}), ("I", "Iu", {"I": 2.0}), ("C", "Cs", {"C": 0.5}),
                       ("R", "R1", {"R": 3.0})]:
        bg.add(kind, n, **p)
    for k, (a, c) in enumerate([("u", "J"), ("J", "Iu"), ("J", "Cs"), ("J", "R1")]):
        bg.bond(a, c, name=f"b{k + 1}")
    te = np.linspace(0, 2, 5)
    lin = netdyn.simulate(bg, (0, 2), t_eval=te)
    assert lin.method == "linear" and {"q_Iu", "q_Cs"} <= set(lin.coordinate_names)
    st = netdyn.simulate(bg, (0, 2), t_eval=te, formulation="state")
    assert st.coordinate_names == ["p_Iu", "q_Cs"]
    assert np.allclose(lin.series("p(Iu)"), st["p_Iu"], rtol=1e-7, atol=1e-9)
    assert np.allclose(lin.series("f(Iu)"), st["p_Iu"] / 2.0, rtol=1e-7, atol=1e-9)
    assert np.allclose(lin["q_Cs"], st["q_Cs"], rtol=1e-7, atol=1e-9)
    assert np.allclose(lin.series("e(R1)"), 3.0 * lin.series("f(R1)"), rtol=1e-12)
    k = 2e-3
    tank = graph("tank", [("Sf", "pump", {"flow": 1e-3}), ("0", "p", {}), ("C", "tank", {"C": 1e-4}),
                          ("R", "orifice", {"law": f"f = {k}*sign(e)*sqrt(Abs(e))"})],
                 [("pump", "p"), ("p", "orifice"), ("p", "tank")])
    from netdyn.errors import InitialConditionError
    with pytest.raises(InitialConditionError, match="orifice: its law .* unbounded slope at e = 0"):
        netdyn.simulate(tank, (0, 1))
    sol = netdyn.simulate(tank, (0, 1), q0={"q_tank": 1e-6}, t_eval=np.linspace(0, 1, 3))
    assert sol.success and sol.series("e(orifice)")[-1] > 0
