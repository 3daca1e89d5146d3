"""The fast build of linear networks against its references.

* The grouped, vectorised stamp (:func:`netdyn.numerics.circuit.stamp.linear_network`) against the matrices of
  the symbolic path (``derive(net.model(formulation))``) on the seeded random circuits of
  ``test_random_circuits`` (R, L, C, DC/SIN/PULSE sources, index-two structures), in every formulation.
* Elements given by their own energy functions get stamps of their own (a template per function).
* The array-based graph algorithms against networkx on random multigraphs.
"""
import networkx as nx
import numpy as np
import pytest
import sympy as sp

import netdyn
from netdyn.components.electrical import Capacitor, Resistor, VoltageSource
from netdyn.lagrange.equations import derive
from netdyn.numerics.circuit.stamp import linear_network
from netdyn.symbols import t

from test_random_circuits import random_circuit

SEEDS = range(8)


def _dense(d, shape):
    out = np.zeros(shape)
    for (i, j), v in d.items():
        out[i, j] = float(v)
    return out


def _rel(a, b):
    scale = max(np.max(np.abs(b)) if b.size else 0.0, 1e-300)
    return np.max(np.abs(a - b)) / scale if a.size else 0.0


def assert_stamp_matches_derivation(net, formulation, tol=1e-12):
    """Every stamped matrix equals the symbolic path's, with the same coordinates and constraint labels."""
    lin = linear_network(net, formulation)
    model = net.model(formulation=formulation)
    eq = derive(model)
    assert lin.names == model.coordinate_names
    assert lin.flow_labels == model.flow_constraint_labels
    K = np.array([[float(sp.diff(h, q)) for q in eq.q] for h in eq.h]).reshape(lin.n, lin.n)
    D = np.array([[float(sp.diff(h, f)) for f in eq.f] for h in eq.h]).reshape(lin.n, lin.n)
    assert _rel(lin.M.toarray(), _dense(eq.M, (lin.n, lin.n))) <= tol
    assert _rel(lin.K.toarray(), K) <= tol
    assert _rel(lin.D.toarray(), D) <= tol
    assert _rel(lin.A.toarray(), _dense(eq.A, (lin.m, lin.n))) <= tol
    zero = {s: 0 for s in eq.q + eq.f}
    for tt in (0.0, 3.7e-4, 1.1e-3):
        u = np.array([float(e.subs(t, tt)) for e in lin.inputs])
        h0 = np.array([float(h.xreplace(zero).subs(t, tt)) for h in eq.h])
        a0 = np.array([float(sp.sympify(a).xreplace(zero).subs(t, tt)) for a in eq.a0])
        assert _rel(lin.B_e @ u if u.size else np.zeros(lin.n), -h0) <= tol
        assert _rel(lin.B_a @ u if u.size else np.zeros(lin.m), a0) <= tol
    return lin


@pytest.mark.parametrize("seed", SEEDS)
def test_grouped_stamp_equals_the_derived_matrices_on_random_circuits(seed):
    net = random_circuit(seed).network()
    for formulation in ("loop", "branch", "node"):
        assert_stamp_matches_derivation(net, formulation)


def test_each_energy_function_gets_its_own_stamp():
    net = netdyn.Network()
    net.add(VoltageSource("V1", "a", "0", 1.0), Resistor("R1", "a", "b", 1.0),
            Capacitor("C1", "b", "0", energy=lambda q: q**2 / 2), Resistor("R2", "b", "c", 1.0),
            Capacitor("C2", "c", "0", energy=lambda q: 5 * q**2))
    lin = assert_stamp_matches_derivation(net, "loop")
    assert lin.K.toarray().tolist() == [[1.0, -1.0], [-1.0, 11.0]]


def test_a_large_ladder_is_stamped_in_groups():
    n = 300
    net = netdyn.Network()
    net.add(VoltageSource("V1", "n0", "0", 1.0))
    for k in range(1, n + 1):
        net.add(Resistor(f"R{k}", f"n{k - 1}", f"n{k}", 1e3 * k), Capacitor(f"C{k}", f"n{k}", "0", 1e-9 / k))
    lin = linear_network(net)
    # loop k runs through C_{k-1}, R_k and C_k: D = diag(R_k), K tridiagonal with 1/C_{k-1} + 1/C_k
    R = 1e3 * np.arange(1, n + 1)
    invC = np.arange(1, n + 1) / 1e-9
    K = np.diag(invC + np.append(0.0, invC[:-1])) - np.diag(invC[:-1], 1) - np.diag(invC[:-1], -1)
    assert np.array_equal(lin.D.toarray(), np.diag(R))
    assert _rel(lin.K.toarray(), K) <= 1e-15
    assert lin.stamps["C7"]["entries"] == [("K", 0, 0, 7 / 1e-9)]
    assert lin.ports["R3"] == [("R3", {2: 1.0})]


def _random_multigraph(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(3, 14))
    g = nx.MultiDiGraph()
    g.add_nodes_from(str(i) for i in rng.permutation(n))  # node order unrelated to the names
    for j in range(int(rng.integers(1, 3 * n))):
        u, v = rng.choice(n, size=2, replace=False)
        g.add_edge(str(u), str(v), key=f"e{j}")
    return g


@pytest.mark.parametrize("seed", range(20))
def test_array_graph_algorithms_agree_with_networkx(seed):
    from netdyn.graph import topology
    g = _random_multigraph(seed)
    und = nx.MultiGraph(g)
    weights = {k: int(w) for k, w in zip((k for *_, k in g.edges(keys=True)),
                                         np.random.default_rng(seed + 100).integers(0, 4, g.number_of_edges()))}
    tree = topology.spanning_tree(g, weight=weights.get)
    forest = nx.Graph()
    forest.add_nodes_from(g.nodes)
    forest.add_edges_from((u, v) for u, v, k in g.edges(keys=True) if k in tree)
    components = list(nx.connected_components(nx.Graph(und)))
    assert nx.is_forest(forest) and len(tree) == g.number_of_nodes() - len(components)
    # Kruskal keeps a minimum-weight forest: networkx's own gives the same total weight
    nx_tree = nx.minimum_spanning_tree(nx.Graph([(u, v, {"weight": min(weights[k] for a, b, k in g.edges(keys=True)
                                                                           if {a, b} == {u, v})})
                                                 for u, v in und.edges()]))
    assert sum(weights[k] for k in tree) == nx_tree.size(weight="weight")
    B, cotree = topology.fundamental_loops(g, tree)
    A, _, edges = topology.reduced_incidence(g, ground="0")
    assert cotree == [k for *_, k in edges if k not in tree]
    assert np.array_equal(A @ B.T, np.zeros((A.shape[0], len(cotree))))  # every loop satisfies KCL
    cols = [j for j, (*_, k) in enumerate(edges) if k not in tree]
    assert np.array_equal(B[:, cols], np.eye(len(cotree)))
    assert [sorted(c) for c in topology.components_without(g, "0")] == \
        [sorted(c) for c in components if "0" not in c]
