"""``topology.tree_paths`` is linear in the network on a long series chain (issue 26).

Operation counts, not timings: the lines executed in :mod:`netdyn.graph.topology` (and in the result
index built on it) are counted with a tracer while the tree of a 1,000- and a 2,000-section series chain
is made, every node is listed and every node's value is folded down the tree. The old code made every
path in full, N(N+1)/2 steps on a chain (2,001,000 at N = 2,000); the count here doubles with N.
"""
import sys

import networkx as nx
import numpy as np

import netdyn
from netdyn.components import electrical as el
from netdyn.graph import topology
from netdyn.numerics.results import index as result_index

WATCHED = {topology.__file__, result_index.__file__}


def lines_run(fn):
    """``(result, lines executed in the watched modules)`` of ``fn()``."""
    count = [0]

    def tracer(frame, event, arg):
        if frame.f_code.co_filename not in WATCHED:
            return None
        if event == "line":
            count[0] += 1
        return tracer

    sys.settrace(tracer)
    try:
        out = fn()
    finally:
        sys.settrace(None)
    return out, count[0]


def chain(N):
    """A source and N series resistors from n0 to nN, a capacitor across the last one (an open chain):
    node nK is K + 1 branches from ground."""
    net = netdyn.Network(f"chain_{N}")
    net.add(el.VoltageSource("V1", "n0", "0", 1.0))
    net.add(*(el.Resistor(f"R{k}", f"n{k - 1}", f"n{k}", 1.0) for k in range(1, N + 1)))
    net.add(el.Capacitor("C1", f"n{N - 1}", f"n{N}", 1.0))
    return net


def walk_everything(graph):
    paths = topology.tree_paths(graph, "0")
    memo = {}
    depths = {node: paths.fold(node, memo, 0, lambda value, key, sign: value + 1) for node in paths}
    return paths, depths


def test_tree_paths_on_a_series_chain_costs_lines_linear_in_its_length():
    found = {}
    for N in (1000, 2000):
        graph = chain(N).domain_graph("electrical")
        (paths, depths), found[N] = lines_run(lambda: walk_everything(graph))
        assert len(paths) == N + 2 and depths[f"n{N}"] == N + 1  # ground, n0..nN; nN is N + 1 branches deep
        assert paths.depth(f"n{N}") == N + 1
    assert found[2000] <= 2.05 * found[1000], found
    assert found[2000] <= 30 * 2000, found  # a few lines a node and a branch
    old_steps = sum(len(p) - 1 for p in nx.single_source_shortest_path(nx.Graph(list(graph.edges())), "0").values())
    assert old_steps == 2001 * 2002 // 2 and found[2000] < old_steps / 30  # what the old code made: every path


def test_one_path_read_costs_its_length_and_goes_along_the_chain():
    graph = chain(2000).domain_graph("electrical")
    paths = topology.tree_paths(graph, "0")
    last, count = lines_run(lambda: paths["n2000"])
    (u, v), = [(u, v) for u, v, k in graph.edges(keys=True) if k == "V1"]
    source_sign = 1 if (u, v) == ("0", "n0") else -1  # +1 when the path from ground goes along the branch
    assert last == [("V1", source_sign)] + [(f"R{k}", 1) for k in range(1, 2001)]  # the source, every resistor
    assert count <= 4 * 2001 + 10
    assert paths.up["n0"] == ("0", "V1", source_sign) and paths.up["0"] is None


def test_the_result_index_of_a_series_chain_is_made_in_linear_lines():
    """Building a linear-path solution's index (every node listed, with its domain) is linear too: the
    paths are made when a node is read, and reading one costs its path."""
    found = {}
    for N in (1000, 2000):
        sol = netdyn.simulate(chain(N), (0.0, 1.0), t_eval=np.linspace(0.0, 1.0, 3), method="linear")
        index, found[N] = lines_run(lambda: (sol.result_index, len(sol.result_index.nodes))[0])
        assert len(index.nodes) == N + 2
    assert found[2000] <= 2.1 * found[1000], found
    assert np.allclose(sol.voltage("n2000"), 1.0, rtol=0, atol=1e-12)  # an open chain: no current, no drop
