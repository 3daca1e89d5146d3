"""read_netlist → write_netlist → read_netlist is the identity on every card the reader acts on.

Decks are drawn from the random-circuit generator (R, L, C, V and I with DC/SIN/PULSE waveforms; linear
controlled sources E, G, F, H; diodes with random ``.model`` parameters) and dressed with the cards around
the elements, each drawn at random: ``.temp``, ``.options tnom=``, the diodes' temperature coefficients
(``EG XTI TNOM TLEV TLEVC CTA TPB TCV TRS TRS2 TTT1 TTT2 TM1 TM2``, breakdown ``BV IBV NBV``) and their own
``TEMP=``/``DTEMP=``, ``.ic``, ``ic=`` on capacitors and inductors, ``.tran`` with ``tstart``, ``tmax`` and
``uic``, ``.op``, ``.ac`` with ``AC mag phase`` on a source, and mutual inductances ``K``.
"""
import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_random_circuits import random_circuit

import netdyn
from netdyn.components.electrical import MutualInductance
from netdyn.errors import NetdynError

finite = dict(allow_nan=False, allow_infinity=False)


def _num(draw, lo, hi):
    return repr(draw(st.floats(lo, hi, **finite)))


@st.composite
def decks(draw, devices=st.sampled_from([None, "controlled", "diodes"]), coupling=True):
    """A netlist: a random circuit with random cards around it. The element lines of R, L, C, V, I, E, G,
    F, H and K come from ``write_netlist`` of the drawn network; every card this test is about (the diodes'
    lines and models, ``ic=``, ``AC``, ``.temp``, ``.options``, ``.ic``, ``.op``, ``.ac``, ``.tran``) is
    written here, so a writer that drops one cannot hide it."""
    seed = draw(st.integers(0, 100_000))
    dev = draw(devices)
    d = random_circuit(seed, devices=dev)
    diodes = [it for it in d.items if it[0] == "D"]
    d.items = [it for it in d.items if it[0] != "D"]
    net = d.network()
    inductors = [n for n in net.elements if n.startswith("L")]
    if coupling and dev != "diodes" and len(inductors) >= 2 and draw(st.booleans()):
        l1, l2 = draw(st.permutations(inductors))[:2]
        net.add(MutualInductance("K1", l1, l2, k=draw(st.floats(-0.95, 0.95, **finite).filter(bool))))
    lines = netdyn.write_netlist(net).splitlines()[:-1]          # without .end
    for name in draw(st.lists(st.sampled_from([n for n in net.elements if n[0] in "LC"] or ["-"]), unique=True,
                              max_size=3)):
        if name != "-":
            lines = [ln + f" ic={_num(draw, -1e-2, 1e-2)}" if ln.startswith(name + " ") else ln for ln in lines]
    analyses = draw(st.lists(st.sampled_from([".op", ".ac"]), unique=True))
    if ".ac" in analyses:
        sources = [n for n in net.elements if n[0] in "VI"]
        if sources:
            name = draw(st.sampled_from(sources))
            lines = [ln + f" AC {_num(draw, 0.1, 2.0)} {_num(draw, -180.0, 180.0)}" if ln.startswith(name + " ")
                     else ln for ln in lines]
    for k, (_, name, a, b, model, _) in enumerate(diodes):
        card = dict(model)
        if draw(st.booleans()):
            card.update(EG=_num(draw, 0.6, 1.4), XTI=_num(draw, 0.0, 4.0), TNOM=_num(draw, -20.0, 60.0))
        if draw(st.booleans()):
            card.update(TRS=_num(draw, -2e-3, 5e-3), TRS2=_num(draw, 0.0, 2e-5), TTT1=_num(draw, -2e-3, 5e-3),
                        TTT2=_num(draw, 0.0, 2e-5), TM1=_num(draw, -1e-3, 1e-3), TM2=_num(draw, 0.0, 1e-6))
        if draw(st.booleans()):
            card.update(TLEVC=1, CTA=_num(draw, 0.0, 3e-3), TPB=_num(draw, 0.0, 2e-3))
        if draw(st.booleans()):
            card.update(BV=_num(draw, 3.0, 50.0), IBV=_num(draw, 1e-6, 1e-2), NBV=_num(draw, 1.0, 2.0),
                        TLEV=draw(st.sampled_from([0, 1])), TCV=_num(draw, -3e-3, 3e-3))
        own = draw(st.sampled_from(["", " TEMP=", " DTEMP="]))
        own += _num(draw, -40.0, 125.0) if own else ""
        lines.append(f"{name} {a} {b} dm{k}{own}")
        lines.append(f".model dm{k} D(" + " ".join(f"{key}={val}" for key, val in card.items()) + ")")
    if draw(st.booleans()):
        lines.append(f".temp {_num(draw, -40.0, 125.0)}")
    if draw(st.booleans()):
        lines.append(f".options tnom={_num(draw, 0.0, 50.0)}")
    nodes = sorted({t for el in net.elements.values() if not isinstance(el, MutualInductance)
                    for t in el.terminals} - {"0"})
    picked = draw(st.lists(st.sampled_from(nodes), unique=True, max_size=3))
    if picked:
        lines.append(".ic " + " ".join(f"v({n})={_num(draw, -5.0, 5.0)}" for n in picked))
    for card in analyses:
        lines.append(".op" if card == ".op" else
                     f".ac {draw(st.sampled_from(['dec', 'oct', 'lin']))} {draw(st.integers(1, 50))} 10 "
                     f"{_num(draw, 1e3, 1e6)}")
    tran = ".tran 1e-05 0.002"
    tstart, tmax = draw(st.sampled_from(["", " 0.0001", " 0.0001 1e-05", " 0 1e-05"])), ""
    tran += tstart + tmax + draw(st.sampled_from(["", " uic"]))
    lines += [tran, ".end"]
    return "\n".join(lines) + "\n"


def summary(net):
    """Everything the reader acts on, as plain data."""
    elements = []
    for name, el in net.elements.items():
        row = [type(el).__name__, name, tuple(el.terminals), tuple(el.couples or ())]
        if hasattr(el, "model_parameters"):      # a diode: its model, its temperature, the law's numbers
            row += [el.model_parameters, el.temperature, el.numeric_values()]
        else:
            row.append({k: str(v) for k, v in el.values.items()})
        elements.append(row)
    return dict(elements=elements, title=net.title, tran=net.tran, ic=net.initial_voltages,
                element_ic=net.element_ic, analyses=net.analyses, ac=net.ac, ac_sources=net.ac_sources,
                temp=net.temp, tnom=net.tnom)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(decks())
def test_read_write_read_is_the_identity(deck):
    first = netdyn.read_netlist(deck)
    again = netdyn.write_netlist(first)
    second = netdyn.read_netlist(again)
    assert summary(second) == summary(first)
    assert netdyn.write_netlist(second) == again          # a fixed point after one pass


def _run(net, times):
    try:
        sol = netdyn.simulate(net, None, t_eval=times)
    except NetdynError as exc:          # a circuit refused (a singular gain loop) is refused the same way
        return type(exc).__name__, str(exc)
    return sol.method, sol.y


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(decks(devices=st.sampled_from([None, "diodes"]), coupling=False))
def test_the_reread_deck_simulates_identically(deck):
    first = netdyn.read_netlist(deck)
    second = netdyn.read_netlist(netdyn.write_netlist(first))
    times = np.linspace(first.tran.tstart, first.tran.tstop, 41)
    a, b = _run(first, times), _run(second, times)
    assert a[0] == b[0]
    if isinstance(a[1], str):
        assert a[1] == b[1]
    else:
        assert np.array_equal(a[1], b[1])
