"""``netdyn.linearize`` on circuits with V–C loops, I–L cut-sets, parallel capacitors and series inductors.

These points are differential-algebraic of index two in some formulations:
some combinations of the states are fixed by the others or by the inputs,
and some outputs follow an input's derivative (the current of a capacitor
across a supply is ``C u̇``). The linearization reduces them to the slow
subsystem (:mod:`netdyn.analysis.slow`); each case is checked against its
closed-form transfer function and against :func:`netdyn.ac`, and the random
circuits of ``tests/test_random_circuits.py`` go through linearize in every
formulation and are held against ``ac`` at frequencies across six decades.

Run ``python tests/test_linearize_index_two.py 40`` for statistics over more seeds.
"""
import numpy as np
import pytest

import netdyn
from netdyn.components.electrical import Capacitor, CurrentSource, Inductor, Resistor, VoltageSource

FORMS = ("branch", "loop", "node")
FREQS = np.logspace(1, 6, 11)


def response(lin, output, input, f=FREQS):
    return lin.frequency_response(2 * np.pi * np.asarray(f), output, input)


def rel(a, b):
    a, b = np.asarray(a), np.asarray(b)
    return float(np.max(np.abs(a - b) / np.maximum(np.abs(b), 1e-12 * np.max(np.abs(b)))))


@pytest.mark.parametrize("form", FORMS)
def test_parallel_capacitors_behind_a_resistor(form):
    R, C1, C2 = 1e3, 1e-6, 2e-6
    net = netdyn.Network("parallel C")
    net.add(VoltageSource("V1", "in", "0", 0.0), Resistor("R1", "in", "a", R),
            Capacitor("C1", "a", "0", C1), Capacitor("C2", "a", "0", C2))
    lin = netdyn.linearize(net, inputs=["V1"], outputs=["v(C1)", "i(C2)", "i(R1)"], formulation=form)
    assert lin.n == 1 and lin.poles()[0].real == pytest.approx(-1 / (R * (C1 + C2)), rel=1e-10)
    s = 2j * np.pi * FREQS
    H = 1 / (1 + s * R * (C1 + C2))
    assert rel(response(lin, "v(C1)", "V1"), H) < 1e-8
    assert rel(response(lin, "i(C2)", "V1"), s * C2 * H) < 1e-8
    acr = netdyn.ac(net, FREQS, input="V1", outputs=["i(C2)"])
    assert rel(response(lin, "i(C2)", "V1"), acr["i(C2)"]) < 1e-8
    assert float(lin.static_gain()[0, 0]) == pytest.approx(1.0, rel=1e-12)


@pytest.mark.parametrize("form", FORMS)
def test_capacitor_across_the_supply_has_an_improper_current(form):
    R, Cd, C1 = 1e3, 1e-6, 1e-7
    net = netdyn.Network("decoupled supply")
    net.add(VoltageSource("V1", "vdd", "0", 0.0), Capacitor("Cd", "vdd", "0", Cd),
            Resistor("R1", "vdd", "out", R), Capacitor("C1", "out", "0", C1))
    lin = netdyn.linearize(net, inputs=["V1"], outputs=["v(C1)", "i(Cd)", "i(V1)"], formulation=form)
    assert lin.n == 1 and lin.poles()[0].real == pytest.approx(-1 / (R * C1), rel=1e-10)
    s = 2j * np.pi * FREQS
    H = 1 / (1 + s * R * C1)
    assert rel(response(lin, "v(C1)", "V1"), H) < 1e-8
    assert rel(response(lin, "i(Cd)", "V1"), s * Cd) < 1e-8      # C u̇: a derivative feedthrough
    i_v = -(s * Cd + s * C1 * H)                                  # SPICE sign: + → − inside the source
    assert rel(response(lin, "i(V1)", "V1"), i_v) < 1e-8
    acr = netdyn.ac(net, FREQS, input="V1", outputs=["i(V1)"])
    assert rel(response(lin, "i(V1)", "V1"), acr["i(V1)"]) < 1e-8
    k = lin.outputs.index("i(Cd)")
    assert lin.D_derivatives[0][k, 0] == pytest.approx(Cd, rel=1e-10)
    tf = lin.transfer_function("i(Cd)", "V1")                    # improper: Cd s
    assert np.allclose(np.polyval(tf.num, s) / np.polyval(tf.den, s), s * Cd, rtol=1e-9)
    with pytest.raises(netdyn.ModelError, match="follow the inputs' derivatives"):
        lin.step(np.linspace(0, 1e-3, 5))


@pytest.mark.parametrize("form", FORMS)
def test_source_in_series_with_a_capacitor_loop(form):
    """V1 between a and b, C1 and R1 from a to ground, C2 and R2 from b: one state, the shared charge."""
    C1, C2, R1, R2 = 1e-6, 2e-6, 100.0, 200.0
    net = netdyn.Network("V in series with a C loop")
    net.add(VoltageSource("V1", "a", "b", 0.0), Capacitor("C1", "a", "0", C1), Capacitor("C2", "b", "0", C2),
            Resistor("R1", "a", "0", R1), Resistor("R2", "b", "0", R2))
    lin = netdyn.linearize(net, inputs=["V1"], outputs=["v(C2)", "i(C1)"], formulation=form)
    # KCL on the super-node: (C1 + C2) s v_b + C1 s u + (v_b + u)/R1 + v_b/R2 = 0
    s = 2j * np.pi * FREQS
    vb = -(C1 * s + 1 / R1) / ((C1 + C2) * s + 1 / R1 + 1 / R2)
    assert lin.n == 1
    assert lin.poles()[0].real == pytest.approx(-(1 / R1 + 1 / R2) / (C1 + C2), rel=1e-10)
    assert rel(response(lin, "v(C2)", "V1"), vb) < 1e-8
    assert rel(response(lin, "i(C1)", "V1"), C1 * s * (vb + 1)) < 1e-8


@pytest.mark.parametrize("form", FORMS)
def test_current_source_in_series_with_an_inductor_and_series_inductors(form):
    L1, L2, L3, R = 1e-3, 2e-3, 3e-3, 50.0
    net = netdyn.Network("I–L cut-set")
    net.add(CurrentSource("I1", "0", "a", 0.0), Inductor("L1", "a", "b", L1), Resistor("R1", "b", "0", R),
            Inductor("L2", "b", "c", L2), Inductor("L3", "c", "0", L3))
    lin = netdyn.linearize(net, inputs=["I1"], outputs=["v(R1)", "i(L3)", "v(L1)"], formulation=form)
    s = 2j * np.pi * FREQS
    i3 = R / (R + s * (L2 + L3))          # the current divider between R1 and the series L2 + L3
    assert lin.n == 1 and lin.poles()[0].real == pytest.approx(-R / (L2 + L3), rel=1e-10)
    assert rel(response(lin, "i(L3)", "I1"), i3) < 1e-8
    assert rel(response(lin, "v(R1)", "I1"), R * (1 - i3)) < 1e-8
    assert rel(response(lin, "v(L1)", "I1"), s * L1) < 1e-8        # L di/dt of the source current


def test_a_loop_of_voltage_sources_alone_stays_an_error():
    net = netdyn.Network("two supplies")
    net.add(VoltageSource("V1", "a", "0", 0.0), VoltageSource("V2", "a", "0", 0.0), Resistor("R1", "a", "0", 1.0))
    with pytest.raises((netdyn.TopologyError, netdyn.SingularSystemError), match="V1"):
        netdyn.linearize(net, inputs=["V1"], outputs=["i(R1)"])


# ------------------------------------------------------------------------------------------ random circuits

def zeroed(drawn):
    """The drawn circuit with every source at 0 V / 0 A: the origin is then its operating point."""
    from test_random_circuits import Drawn
    z = Drawn(drawn.seed)
    z.nodes = drawn.nodes
    z.items = [(k, n, a, b, v, ("dc", 0.0) if k in "VI" else w) for k, n, a, b, v, w in drawn.items]
    return z


def check_linearize(seed, forms=(None,) + FORMS, freqs=FREQS):
    """Largest relative difference between linearize's and ac's responses of one random circuit."""
    from test_random_circuits import random_circuit
    drawn = zeroed(random_circuit(seed))
    net = drawn.network()
    src = next(it[1] for it in drawn.items if it[0] in "VI")
    outs = [f"i({it[1]})" for it in drawn.items] + [f"v({it[1]})" for it in drawn.items if it[0] != "V"]
    acr = netdyn.ac(net, freqs, input=src, outputs=[o if o[0] == "i" else _ac_v(drawn, o) for o in outs])
    ref = {o: acr[o if o[0] == "i" else _ac_v(drawn, o)] for o in outs}
    # normwise at each frequency: the error of every output of a kind (voltages, currents) relative to the
    # largest response of that kind there (a branch that a zero-valued source holds still is zero but for roundoff;
    # where a whole kind is zero, as the currents of a source driving a dead end, the error is absolute)
    peak = {k: np.max([np.abs(ref[o]) for o in outs if o[0] == k], axis=0) for k in "vi"}
    worst = 0.0
    for form in forms:
        lin = netdyn.linearize(net, inputs=[src], outputs=outs, formulation=form)
        for o in outs:
            err = np.abs(response(lin, o, src, freqs) - ref[o])
            err = np.where(peak[o[0]] > 0, err / np.where(peak[o[0]] > 0, peak[o[0]], 1.0), err)  # else absolute
            worst = max(worst, float(np.max(err)))
    return worst


def _ac_v(drawn, out):
    name = out[2:-1]
    a, b = next((it[2], it[3]) for it in drawn.items if it[1] == name)
    return f"v({a},{b})"


@pytest.mark.parametrize("seed", range(3))
def test_random_circuits_linearize_equals_ac(seed):
    assert check_linearize(seed) < 1e-6


if __name__ == "__main__":  # statistics over more seeds: python tests/test_linearize_index_two.py 40
    import sys
    import time
    sys.path.insert(0, "tests")
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 40
    t0 = time.time()
    errs = {}
    for s in range(count):
        try:
            errs[s] = check_linearize(s)
        except Exception as exc:
            errs[s] = f"{type(exc).__name__}: {str(exc)[:200]}"
        print(s, errs[s], flush=True)
    nums = [v for v in errs.values() if isinstance(v, float)]
    print(f"{len(nums)}/{count} ran; worst {max(nums):.3g}; {time.time() - t0:.0f} s")
