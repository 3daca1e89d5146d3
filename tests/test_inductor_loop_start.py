"""A ``uic`` start whose inductor currents circulate around a loop of inductors, in node coordinates
(:mod:`netdyn.numerics.circuit.loop_flux`): the diode circuit path and the linear path with ``formulation="node"``.

References: ngspice at tight tolerances (a hand-written diode deck, and random diode deck 11 of
``tests/test_random_spice.py``), the branch formulation (which holds the loop's flux in its own
coordinates), and the stored energy written from the reported currents."""
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy.integrate import cumulative_trapezoid

import netdyn
from netdyn.numerics.circuit.loop_flux import SUFFIX, loop_currents

sys.path.insert(0, str(Path(__file__).parent))

NGSPICE = shutil.which("ngspice") is not None
TIGHT = {"reltol": 1e-6, "vntol": 1e-9, "abstol": 1e-15}

DIODE_LOOP = ("two inductors in a loop beside a diode\nV1 a 0 sin(0 5 10k)\nR1 a b 1k\n"
              "L1 b 0 1m ic=1m\nL2 b 0 2m ic=-1m\nD1 b 0 dm\n.model dm D(IS=1e-14 N=1.5 RS=2)\n"
              ".tran 1u 300u uic\n")


def test_loop_currents_one_per_independent_loop():
    # three inductors from b to 0: two independent loops, chords L2 and L3 against the tree edge L1
    net = netdyn.read_netlist("x\nV1 a 0 1\nR1 a b 1k\nL1 b 0 1m\nL2 b 0 2m\nL3 0 b 4m\n.tran 1u 1m uic\n")
    i = {"L1": 1e-3, "L2": -1e-3, "L3": 3e-3}
    got = loop_currents(net, i)
    # along L2 (b -> 0), back through L1 (0 -> b, against it): psi = 2m*(-1m) - 1m*1m; L3 (0 -> b) then L1 (b -> 0)
    assert got == pytest.approx({"L2": (2e-3 * -1e-3 - 1e-3 * 1e-3) / 2e-3, "L3": (4e-3 * 3e-3 + 1e-3 * 1e-3) / 4e-3},
                                rel=1e-12)
    assert loop_currents(net, {"L1": 2e-3, "L2": 1e-3, "L3": -0.5e-3}) == {}   # sum(L*i) = 0 around both


@pytest.mark.skipif(not NGSPICE, reason="ngspice not installed")
def test_diode_deck_with_circulating_current_equals_ngspice():
    from netdyn.io.spice import run_ngspice
    ng = run_ngspice(DIODE_LOOP, ["v(b)", "i(L1)", "i(L2)"], tstop=300e-6, tstep=0.3e-6, tmax=15e-9, uic=True,
                     options=TIGHT, timeout=60)
    net = netdyn.read_netlist(DIODE_LOOP)
    sol = netdyn.simulate(net, None, t_eval=ng["time"])
    assert sol.method == "circuit"
    for probe, ours in (("v(b)", sol.voltage("b")), ("i(L1)", sol.current("L1")), ("i(L2)", sol.current("L2"))):
        assert np.max(np.abs(ours - ng[probe])) <= 1e-3 * np.max(np.abs(ng[probe])), probe   # measured ≤ 1e-5


def test_diode_deck_energy_is_the_inductors_and_balances():
    net = netdyn.read_netlist(DIODE_LOOP)
    sol = netdyn.simulate(net, None, t_eval=np.linspace(0, 300e-6, 601))
    assert (SUFFIX and "L2" + SUFFIX) in sol.net.elements   # the loop's current, carried by a source across L2
    i1, i2 = sol.current("L1"), sol.current("L2")
    assert (i1[0], i2[0]) == pytest.approx((1e-3, -1e-3), rel=1e-12)   # the ic= values at t = 0
    stored = 0.5 * 1e-3 * i1 ** 2 + 0.5 * 2e-3 * i2 ** 2   # the diode stores no charge (no CJO, TT)
    assert np.max(np.abs(sol.energy() - stored)) <= 1e-12 * np.max(stored)
    pb = sol.power_balance()
    assert pb["relative"] < 1e-6   # measured 1.2e-9
    supplied = cumulative_trapezoid(-sol.voltage("a") * sol.current("V1"), sol.t, initial=0.0)   # V1's work only
    assert np.max(np.abs(pb["supplied"] - supplied)) <= 1e-5 * np.max(np.abs(supplied))   # measured 8e-9


@pytest.mark.skipif(not NGSPICE, reason="ngspice not installed")
def test_random_diode_deck_11_equals_ngspice():
    from test_random_spice import CHECKS, verdict
    r = CHECKS["uic"](11, "diodes")
    assert verdict(r) == "pass", r
    assert r["vs_ngspice"] < 1e-3   # measured 2.6e-4 (ngspice's own spread 2.9e-10)


def test_linear_node_formulation_agrees_with_branch():
    deck = ("x\nV1 a 0 sin(0 1 10k)\nR1 a b 1k\nL1 b 0 1m ic=1m\nL2 b 0 2m ic=-1m\nL3 0 b 4m ic=0.5m\n"
            "C1 b 0 10n\n.tran 1u 200u uic\n")
    net = netdyn.read_netlist(deck)
    ref = netdyn.simulate(net, None, formulation="branch")
    sol = netdyn.simulate(net, None, formulation="node")
    assert sol.method == "linear"
    for name in ("L1", "L2", "L3"):
        assert np.max(np.abs(sol.current(name) - ref.current(name))) <= 1e-9 * 1e-3, name
    assert np.max(np.abs(sol.voltage("b") - ref.voltage("b"))) <= 1e-9
    assert np.max(np.abs(sol.energy() - ref.energy())) <= 1e-9 * np.max(ref.energy())
    assert sol.power_balance()["relative"] < 1e-8


def test_coupled_inductors_in_a_loop_stay_refused():
    # mutual inductance needs charge coordinates, which a diode circuit does not have: named, never simulated
    deck = DIODE_LOOP.replace(".tran", "K1 L1 L2 0.5\n.tran")
    with pytest.raises(netdyn.NetdynError, match="K1"):
        netdyn.simulate(netdyn.read_netlist(deck), None)
