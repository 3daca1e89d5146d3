"""Controlled sources E, G, F, H beyond the node formulation: bond graphs, charge coordinates, linearization,
gain loops, AC analysis.

Each check has an independent reference: the network's own solution (another front end, another
formulation), the closed form of the small-signal response, or ngspice.
"""
import shutil

import numpy as np
import pytest

import netdyn
import netdyn.io
from netdyn.bondgraph.network import to_bond_graph

NGSPICE = shutil.which("ngspice")

#: one small circuit per controlled source, each with a capacitor (C2) behind the source's output
DECKS = {
    "E": "e\nV1 in 0 SIN(0 1 1k)\nR1 in a 1k\nC1 a 0 1u\nE1 out 0 a 0 3\nR2 out b 1k\nC2 b 0 1u\n",
    "G": "g\nV1 in 0 SIN(0 1 1k)\nR1 in a 1k\nC1 a 0 1u\nG1 0 out a 0 1m\nR2 out 0 1k\nC2 out 0 1u\n",
    "F": "f\nV1 in 0 SIN(0 1 1k)\nR1 in m 1k\nL1 m a 10m\nVs a 0 0\nF1 0 out Vs 2\nR2 out 0 500\nC2 out 0 1u\n",
    "H": "h\nV1 in 0 SIN(0 1 1k)\nR1 in m 1k\nL1 m a 10m\nVs a 0 0\nH1 out 0 Vs 2k\nR2 out x 1k\nC2 x 0 1u\n",
}
T_END = 2e-3


def rel_err(a, b):
    return float(np.max(np.abs(np.asarray(a) - np.asarray(b))) / np.max(np.abs(b)))


@pytest.mark.parametrize("which", sorted(DECKS))
def test_controlled_source_network_as_a_bond_graph_simulates_the_same(which):
    # the source becomes a field carrying the element (with the voltage source F/H sense); its servo
    # constraint's reaction acts where the source pushes. Before: E and G converted but lost the reaction (the
    # output stayed at 0, error 1.0 of peak), F raised a ValueError, H a TopologyError on its internal node
    net = netdyn.io.read_netlist(DECKS[which])
    bg = to_bond_graph(net)
    times = np.linspace(0, T_END, 51)
    ref = netdyn.simulate(net, (0, T_END), t_eval=times, rtol=1e-10, atol=1e-14)
    v_c2 = ref.across("C2")
    sol = netdyn.simulate(bg, (0, T_END), t_eval=times, rtol=1e-10, atol=1e-14)
    assert sol.method == "linear"   # the field's contribution stamped into the bond graph's matrices
    assert rel_err(sol[bg.coordinate_name("C2")] / 1e-6, v_c2) < 1e-8
    assert sol.power_balance()["relative"] < 1e-8
    # the reduced bond formulation (symbolic, IDA): the same waveform to IDA's accuracy
    red = netdyn.simulate(bg.model(formulation="reduced"), (0, T_END), t_eval=times, rtol=1e-10, atol=1e-14)
    assert rel_err(red[bg.coordinate_name("C2")] / 1e-6, v_c2) < 1e-6
    assert red.power_balance()["relative"] < 1e-6
