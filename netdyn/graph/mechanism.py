"""Graph pieces shared by the planar and the spatial mechanisms: the joint graph, the spanning tree of
the relative formulation, its cut joints and fundamental loops, and the floating-body check.

A joint is any object with ``name`` and ``bodies = (body_a, body_b)``; ground is ``"0"``.

>>> from types import SimpleNamespace as J
>>> js = [J(name="A", bodies=("0", "l1")), J(name="B", bodies=("l1", "l2")), J(name="C", bodies=("l2", "0"))]
>>> tree, cuts = spanning_tree(js)
>>> [j.name for j, _, _ in tree], [j.name for j in cuts]
(['A', 'C'], ['B'])
>>> fundamental_loops(tree, cuts)
{'B': ['C', 'A', 'B']}
"""
from __future__ import annotations

import networkx as nx

from netdyn.errors import TopologyError


def joint_graph(bodies, joints):
    """An undirected ``networkx.MultiGraph``: bodies and ground ``"0"`` as nodes, joints as edges keyed by name."""
    g = nx.MultiGraph()
    g.add_node("0")
    g.add_nodes_from(bodies)
    for j in joints:
        g.add_edge(j.bodies[0], j.bodies[1], key=j.name, joint=j)
    return g


def spanning_tree(joints):
    """Breadth-first spanning tree of the joint graph from ground, joints taken in the order given.

    Returns ``(tree, cuts)``: ``tree`` lists ``(joint, parent, child)`` in the order bodies are reached;
    ``cuts`` the joints that close loops.
    """
    order = list(joints)
    reached, queue, tree, used = {"0"}, ["0"], [], set()
    while queue:
        u = queue.pop(0)
        for j in order:
            if j.name in used or u not in j.bodies:
                continue
            other = j.bodies[1] if j.bodies[0] == u else j.bodies[0]
            if other in reached:
                continue
            reached.add(other)
            used.add(j.name)
            tree.append((j, u, other))
            queue.append(other)
    return tree, [j for j in order if j.name not in used]


def fundamental_loops(tree, cuts):
    """For each cut joint, the closed chain of joints it completes (by networkx's path in the tree)."""
    g = nx.Graph()
    g.add_node("0")
    for j, u, v in tree:
        g.add_edge(u, v, joint=j.name)
    loops = {}
    for c in cuts:
        path = nx.shortest_path(g, c.bodies[1], c.bodies[0])
        loops[c.name] = [g.edges[u, v]["joint"] for u, v in zip(path, path[1:])] + [c.name]
    return loops


def check_grounded(bodies, joints, also_grounded=(), joint_words="a joint"):
    """A :class:`TopologyError` naming the first body that no chain of joints connects to ground."""
    g = joint_graph(bodies, joints)
    grounded = nx.node_connected_component(g, "0") | set(also_grounded)
    for b in bodies:
        if b not in grounded:
            raise TopologyError(f"body {b!r} is floating: no chain of joints connects it to ground; "
                                f"add {joint_words} to it")
