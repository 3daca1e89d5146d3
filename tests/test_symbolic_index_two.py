"""V–C loops, I–L cut-sets, parallel C and series L on the symbolic paths (IDA, projection).

With symbolic ``params=`` values, a nonlinear resistor or a diode, a circuit
leaves the linear fast path; the structures that make it a DAE of index two
(a capacitor across the supply, a source in series with a capacitor loop,
parallel capacitors, series inductors, a current source in series with an
inductor, a source driving a dead end) must still simulate, in every
formulation, and agree with the linear path (itself held against closed forms
in ``tests/test_index_two_circuits.py`` and against ngspice in
``tests/test_random_circuits.py``), including the charge-conserving jump at
t = 0. Nonlinear circuits are held against closed forms and against the same
circuit without the index-two structure.
"""
import numpy as np
import pytest
import sympy as sp

import netdyn
from netdyn.components.electrical import Capacitor, CurrentSource, Inductor, Resistor, VoltageSource
from netdyn.lagrange.sources import sine

Rx = sp.Symbol("Rx", positive=True)
CASES = {  # name: (elements given the one resistance, its value, tstop)
    "decoupling capacitor, sine": (lambda R: [VoltageSource("V1", "a", "0", sine(0, 2.0, 500)),
                                              Capacitor("C1", "a", "0", 1e-6), Resistor("R1", "a", "b", R),
                                              Capacitor("C2", "b", "0", 2e-6)], 100.0, 4e-3),
    "decoupling capacitor, DC": (lambda R: [VoltageSource("V1", "a", "0", 5.0), Capacitor("C1", "a", "0", 1e-6),
                                            Resistor("R1", "a", "b", R), Capacitor("C2", "b", "0", 2e-6)], 100.0, 1e-3),
    "source in series with a C loop": (lambda R: [VoltageSource("V1", "a", "b", 3.0), Capacitor("C1", "a", "0", 1e-6),
                                                  Capacitor("C2", "b", "0", 3e-6), Resistor("R1", "a", "0", R),
                                                  Resistor("R2", "b", "0", 500.0)], 200.0, 2e-3),
    "parallel capacitors": (lambda R: [VoltageSource("V1", "a", "0", 1.0), Resistor("R1", "a", "b", R),
                                       Capacitor("C1", "b", "0", 1e-6), Capacitor("C2", "b", "0", 2e-6)], 100.0, 1e-3),
    "series inductors": (lambda R: [VoltageSource("V1", "a", "0", 1.0), Inductor("L1", "a", "b", 1e-2),
                                    Inductor("L2", "b", "c", 2e-2), Resistor("R1", "c", "0", R)], 10.0, 0.01),
    "I in series with L": (lambda R: [CurrentSource("I1", "0", "a", sine(0, 0.5, 200)), Inductor("L1", "a", "b", 1e-2),
                                      Resistor("R1", "b", "0", R)], 10.0, 0.01),
    "I with series inductors": (lambda R: [CurrentSource("I1", "0", "a", 0.2), Inductor("L1", "a", "b", 1e-3),
                                           Inductor("L2", "b", "c", 4e-3), Resistor("R1", "c", "0", R),
                                           Resistor("R2", "a", "0", 1e3)], 50.0, 1e-3),
    "source driving a dead end": (lambda R: [VoltageSource("V1", "a", "0", 2.0),
                                             VoltageSource("V2", "b", "0", sine(1, 1, 100)),
                                             Resistor("R1", "b", "0", R)], 5.0, 0.01),
}


def worst(sol, ref, names):
    """Largest error of every element voltage and current relative to its peak; a waveform that is zero but
    for rounding (the current of a capacitor across a DC supply) against 1e-2 of the largest of its kind, so
    a bound of 1e-4 holds it to 1e-6 of the circuit's currents."""
    out = 0.0
    for q in ("current", "voltage"):
        peak = max(np.max(np.abs(getattr(ref, q)(el))) for el in names)
        for el in names:
            a, b = getattr(sol, q)(el), getattr(ref, q)(el)
            out = max(out, float(np.max(np.abs(a - b)) / max(np.max(np.abs(b)), 1e-2 * peak)))
    return out


@pytest.mark.parametrize("form", [None, "branch", "node"])
@pytest.mark.parametrize("case", list(CASES))
def test_symbolic_parameters_agree_with_the_linear_path(case, form):
    build, value, tstop = CASES[case]
    te = np.linspace(0.0, tstop, 101)
    net = netdyn.Network(case)
    net.add(*build(value))
    ref = netdyn.simulate(net, (0.0, tstop), t_eval=te, formulation=form)
    assert ref.method == "linear"
    sym = netdyn.Network(case)
    sym.add(*build(Rx))
    sol = netdyn.simulate(sym, (0.0, tstop), t_eval=te, formulation=form, params={Rx: value})
    assert sol.method in ("ida", "projection")
    assert worst(sol, ref, list(net.elements)) < 1e-4   # measured ≤ 2e-5 (IDA's BDF rates: 2e-7 of the currents)


@pytest.mark.parametrize("form", [None, "branch", "node"])
def test_ida_forced_on_a_source_driving_a_capacitor_node(form):
    """IDA (not only the automatic choice) on the capacitor across the supply and the source in series with
    a capacitor loop: the jump at t = 0 conserves charge as the linear path does."""
    for case in ("decoupling capacitor, DC", "source in series with a C loop"):
        build, value, tstop = CASES[case]
        net = netdyn.Network(case)
        net.add(*build(value))
        te = np.linspace(0.0, tstop, 101)
        ref = netdyn.simulate(net, (0.0, tstop), t_eval=te, formulation=form)
        sol = netdyn.simulate(net, (0.0, tstop), t_eval=te, formulation=form, method="ida")
        assert sol.method == "ida"
        assert worst(sol, ref, list(net.elements)) < 1e-4
    assert abs(1e-6 * sol.voltage("a")[0] + 3e-6 * sol.voltage("b")[0]) < 1e-12   # charge at t = 0+


def _nonlinear(with_decoupling):
    net = netdyn.Network("nonlinear resistor")
    net.add(VoltageSource("V1", "a", "0", sine(0, 2.0, 500)),
            Resistor("Rn", "a", "b", dissipation=lambda i: 100 * i**2 / 2 + 1e5 * i**4 / 4),
            Capacitor("C1", "b", "0", 2e-6), Resistor("R2", "b", "0", 1e3))
    if with_decoupling:
        net.add(Capacitor("Cd", "a", "0", 1e-6))
    return net


@pytest.mark.parametrize("form", [None, "branch"])
def test_nonlinear_resistor_with_a_capacitor_across_the_supply(form):
    te = np.linspace(0.0, 4e-3, 201)
    ref = netdyn.simulate(_nonlinear(False), (0.0, 4e-3), t_eval=te, formulation=form, method="ida")
    sol = netdyn.simulate(_nonlinear(True), (0.0, 4e-3), t_eval=te, formulation=form, method="ida")
    assert sol.method == "ida"  # (auto: the circuit path's law templates, tests/test_law_templates.py)
    i_cd = 1e-6 * 2.0 * 2 * np.pi * 500 * np.cos(2 * np.pi * 500 * te)     # C v'(t), closed form
    assert np.max(np.abs(sol.voltage("b") - ref.voltage("b"))) < 1e-6 * np.max(np.abs(ref.voltage("b")))
    assert np.max(np.abs(sol.current("Cd") - i_cd)) < 1e-5 * np.max(np.abs(i_cd))
    assert np.max(np.abs(sol.current("V1") - (ref.current("V1") - i_cd))) < 1e-5 * np.max(np.abs(i_cd))


def test_diode_rectifier_with_a_capacitor_across_the_supply_on_ida():
    from netdyn.components.diode import Diode

    def rectifier(with_decoupling):
        net = netdyn.Network("rectifier")
        net.add(VoltageSource("V1", "a", "0", sine(0, 5.0, 1e3)), Diode("D1", "a", "b", IS=1e-14, N=1.0),
                Capacitor("C1", "b", "0", 1e-6), Resistor("R1", "b", "0", 1e3))
        if with_decoupling:
            net.add(Capacitor("Cd", "a", "0", 1e-6))
        return net
    te = np.linspace(0.0, 2e-3, 201)
    ref = netdyn.simulate(rectifier(False), (0.0, 2e-3), t_eval=te)          # the diode circuit path
    sol = netdyn.simulate(rectifier(True), (0.0, 2e-3), t_eval=te, method="ida")
    assert sol.method == "ida"
    assert np.max(np.abs(sol.voltage("b") - ref.voltage("b"))) < 1e-4 * 5.0
    i_cd = 1e-6 * 5.0 * 2 * np.pi * 1e3 * np.cos(2 * np.pi * 1e3 * te)
    assert np.max(np.abs(sol.current("Cd") - i_cd)) < 1e-4 * np.max(np.abs(i_cd))


# ------------------------------------------------------------------------------------------ random circuits

def symbolic_random(seed, form=None, floor=1e-5):
    """One random circuit of ``tests/test_random_circuits.py`` with its first resistor symbolic, against the
    linear path (itself held against ngspice and an exact MNA solution there); returns the worst error of a
    waveform relative to its peak, or to ``floor`` times the largest peak of its kind when that is larger."""
    from test_random_circuits import TSTOP, peak_error, random_circuit
    d = random_circuit(seed)
    te = np.linspace(0.0, TSTOP, 201)
    ref = netdyn.simulate(d.network(), (0.0, TSTOP), t_eval=te, formulation=form)
    k = next(i for i, it in enumerate(d.items) if it[0] == "R")
    kind, name, a, b, value, wave = d.items[k]
    d.items[k] = (kind, name, a, b, Rx, wave)
    sol = netdyn.simulate(d.network(), (0.0, TSTOP), t_eval=te, formulation=form, params={Rx: value})
    assert sol.method == "ida"

    def waves(s):
        out = {f"v({n})": s.voltage(n) for n in d.nodes if n != "0"}
        out.update({f"i({it[1]})": s.current(it[1]) for it in d.items})
        return out
    r, w = waves(ref), waves(sol)
    floors = {kind: floor * max(np.max(np.abs(v)) for k, v in r.items() if k[0] == kind) for kind in "vi"}
    return max(peak_error(w[k], r[k], floors[k[0]]) for k in r)


@pytest.mark.parametrize("seed", [1, 2])
def test_random_circuits_on_the_symbolic_path(seed):
    assert symbolic_random(seed) < 1e-5


def test_random_circuit_with_a_source_across_a_capacitor_on_the_branch_path():
    """Seed 0 (V ∥ C twice, I in series with L, a PULSE corner): IDA's error test on the charges (1e-17 C
    after the first pass) failed at t = 0 while the start met the V–C loops to only 3e-10 V. A loop current
    that is zero (a DC source across a capacitor) came from IDA's BDF rate, 2e-9 A just after the restart
    at the PULSE corner; it is now solved at the output times from the hidden constraint's derivative
    (measured worst 2.3e-6 of a peak, floor 1e-5 of the largest of its kind)."""
    assert symbolic_random(0, "branch") < 1e-4


# one random circuit per failure found on the symbolic path, each in the formulation where it failed:
# (seed, formulation): what went wrong before
SYMBOLIC_RANDOM = {
    (5, "branch"): "an inductor in series with a current source: every inductor's current jumped at t = 0 "
                   "(least squares), not that one's alone; a capacitor's current across a DC source was IDA's "
                   "differenced rate of its charge (2e-8 A), not C·v'(t) = 0",
    (0, None): "a resistor alone in a cut-set has no loop current: its symbol is no parameter of the loop model "
               "(ParameterError)",
    (5, "node"): "node fluxes: an inductor in series with a current source, a capacitor across a source",
    (0, "node"): "an inductor alone in a cut-set between capacitive nodes: hidden constraints two levels deep; IDA's "
                 "Newton failed at t = 0 (now: the index-one system of dummy derivatives)",
    (2, "node"): "a fast finite mode (3e-7 s) beside a V–C loop: the index-two system failed at t = 1e-17 (and the "
                 "numerical search took the mode for a second-level constraint)",
    (3, "node"): "parallel capacitors across a V–C loop and an I–L cut-set: IDA on index two did not finish in 60 s",
}


@pytest.mark.parametrize("seed, form", list(SYMBOLIC_RANDOM))
def test_random_circuits_with_a_symbolic_resistor_in_every_formulation(seed, form):
    """The first resistor of a random circuit symbolic (``params=``: the IDA path), against the linear path:
    every node voltage and element current to 1e-4 of its peak (or of 1e-5 of the largest of its kind)."""
    assert symbolic_random(seed, form) < 1e-4


# ------------------------------------------------------------------------------------------ index three and up

def _cut_inductor(R):
    """An inductor alone in a cut-set (the island c–d hangs on R1 only) between two capacitive nodes: in node
    fluxes its current is zero (level one), then the voltages across it equal (level two)."""
    return [VoltageSource("V1", "a", "0", sine(0, 2.0, 500)), Capacitor("C1", "a", "0", 1e-6),
            Inductor("L1", "a", "b", 1e-2), Resistor("R1", "b", "c", R), Capacitor("C2", "c", "d", 1e-6),
            VoltageSource("V2", "d", "c", 1.0), Resistor("R2", "a", "0", 100.0)]


def test_inductor_alone_in_a_cut_set_in_node_fluxes_on_dummy_derivatives(monkeypatch):
    """Node fluxes, hidden constraints two levels deep: IDA integrates the index-one system of dummy
    derivatives (``numerics/dae/index_reduction.py``) and agrees with the linear path (measured 1.6e-9 V)."""
    from netdyn.numerics.dae import index_reduction
    seen = []
    start = index_reduction.ReducedIndex.start_reduced
    monkeypatch.setattr(index_reduction.ReducedIndex, "start_reduced",
                        lambda self, *a, **k: seen.append(len(self.levels)) or start(self, *a, **k))
    te = np.linspace(0.0, 4e-3, 101)
    net = netdyn.Network("L alone in a cut-set")
    net.add(*_cut_inductor(50.0))
    ref = netdyn.simulate(net, (0.0, 4e-3), t_eval=te, formulation="node")
    sym = netdyn.Network("L alone in a cut-set")
    sym.add(*_cut_inductor(Rx))
    sol = netdyn.simulate(sym, (0.0, 4e-3), t_eval=te, formulation="node", params={Rx: 50.0})
    assert sol.method == "ida" and seen and min(seen) >= 2
    assert worst(sol, ref, list(net.elements)) < 1e-4


def test_reduced_index_of_a_prescribed_position():
    """x' = v, v' = a, 0 = x − sin t (index three): two levels, x and v become algebraic, and the reduced
    residual vanishes at the start on x = sin t, v = cos t, a = −sin t (closed form)."""
    from netdyn.numerics.dae.index_reduction import ReducedIndex

    def F(t, y, yp, res):
        res[0] = yp[0] - y[1]
        res[1] = yp[1] - y[2]
        res[2] = y[0] - np.sin(t)
    t0 = 0.3
    r = ReducedIndex(F, t0, np.zeros(3), np.zeros(3), [2], span=1.0)
    assert [W.shape[0] for W in r.levels] == [1, 1]
    Y, YP = r.start_reduced(np.array([np.sin(t0), 0.0, 0.0]), np.zeros(3), impulses=True)
    y, yp = r.restrict(Y, YP)
    assert np.allclose(y, [np.sin(t0), np.cos(t0), -np.sin(t0)], atol=1e-6)
