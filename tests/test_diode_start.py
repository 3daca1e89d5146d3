"""The start of a diode transient (``.tran ... uic``) when a node floats behind junctions at zero bias.

A group of nodes reached from the rest only through diodes (and an inductor held open at its initial
current) has its voltage fixed by ``GMIN`` = 1e-12 S across each junction beside siemens elsewhere: the
Newton updates of the start's solve stay at rounding noise there (~1e-3 V on a 5 V circuit) while every
current balances. The solve accepts that point (its backward error is rounding) — it used to run out of
iterations (random diode deck 0 of ``tests/test_random_spice.py``)."""
import shutil

import numpy as np
import pytest

import netdyn
from netdyn.numerics.operating_point import operating_point

DECK = """island behind two diodes
V1 a 0 5
R1 a b 1k
R3 b e 100
D1 c b dm1
D2 d e dm2
R2 c d 25
L1 d 0 1m
.model dm1 D(IS=0.6f N=1.94 RS=0.2)
.model dm2 D(IS=5f N=1.62 RS=70)
"""


def test_a_node_behind_unbiased_junctions_gets_its_voltage():
    """With L1 held at 0 A no current enters the island {c, d}: KCL makes both junctions' currents equal and
    opposite, so both are at zero bias (b and e at 5 V, no current in R1, R3): the island sits at 5 V, to the
    rounding a 1e-12 S junction allows."""
    op = operating_point(netdyn.read_netlist(DECK), hold={"L1": 0.0})
    assert abs(op.voltages["b"] - 5.0) < 1e-9 and abs(op.voltages["e"] - 5.0) < 1e-9
    assert abs(op.voltages["c"] - 5.0) < 1e-2 and abs(op.voltages["d"] - 5.0) < 1e-2
    assert max(abs(op.currents[n]) for n in ("D1", "D2", "R2", "R1")) < 1e-13


def test_the_uic_transient_starts_from_it():
    """The same circuit as a ``uic`` deck runs (the start used to stop after 200 Newton iterations). Then L1
    drains the island through the junctions' leakage (about 2 GMIN × 5 V): the island falls to 0 V within
    femtoseconds (time constant L1 · 2 GMIN) and L1 keeps the leakage current, ~1e-11 A."""
    net = netdyn.read_netlist(DECK + ".tran 1u 100u uic\n")
    sol = netdyn.simulate(net, None, t_eval=np.linspace(0.0, 1e-4, 11))
    assert np.max(np.abs(sol.current("L1"))) < 1e-9
    assert np.max(np.abs(sol.voltage("c")[1:])) < 1e-6


JUNCTION_DECK = """a junction charged by .ic
V1 a 0 0
R1 a b 1k
D1 b c dm
R2 c 0 100k
C1 c 0 20p
.model dm D(IS=1e-14 N=1.5 RS=50 CJO=10p)
.ic v(b)=-3 v(c)=1
.tran 1n 200n uic
"""


@pytest.mark.skipif(shutil.which("ngspice") is None, reason="ngspice is not installed")
def test_a_uic_start_charges_the_junction_from_the_ic_voltages_as_ngspice_does():
    """With ``uic`` ngspice starts each diode's junction at the difference of its nodes' ``.ic`` voltages
    (``DIOgetic``): here D1 reverse-biased at −4 V, its 10 pF junction charged, discharging through R1 into
    C1. netdyn holds that junction voltage at the start (:func:`~netdyn.numerics.spice_start.junction_hold`)
    and agrees with ngspice to 1e-4 of peak on both nodes; starting the junction from the circuit's own
    solve instead (its charge ignored) was off by the whole swing."""
    from netdyn.io.spice import run_ngspice
    times = np.linspace(0.0, 2e-7, 101)
    ng = run_ngspice(JUNCTION_DECK, ["v(b)", "v(c)"], tstop=2e-7, tstep=2e-10, tmax=1e-11, uic=True,
                     options={"reltol": 1e-7, "vntol": 1e-10, "abstol": 1e-16}, timeout=30)
    sol = netdyn.simulate(netdyn.read_netlist(JUNCTION_DECK), None, t_eval=times)
    for node in "bc":
        ref = np.interp(times[1:], ng["time"], ng[f"v({node})"])
        assert np.max(np.abs(sol.voltage(node)[1:] - ref)) < 1e-4 * np.max(np.abs(ref)), node
