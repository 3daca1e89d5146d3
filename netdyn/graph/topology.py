"""Graph algorithms for networks: incidence, spanning trees, loops, structural checks.

Pure functions over networkx graphs (any ``MultiDiGraph`` whose edges are the
branches), numpy only — no sympy. A branch is identified by its edge key.

>>> import networkx as nx
>>> g = nx.MultiDiGraph()
>>> _ = g.add_edge("0", "A", key="V"); _ = g.add_edge("A", "0", key="R")
>>> reduced_incidence(g, ground="0")[0].tolist()
[[1.0, -1.0]]
>>> independent_loop_count(g)
1
"""
from __future__ import annotations

from collections.abc import Mapping

import networkx as nx
import numpy as np
import scipy.sparse as sps


def branches(graph):
    """The branches ``(u, v, key)`` of a graph in a fixed order."""
    return list(graph.edges(keys=True))


def reduced_incidence(graph, ground="0", edges=None, sparse=False):
    """Reduced incidence matrix for KCL: rows are the nodes other than one reference per component.

    Entry ``+1`` where a branch enters the node, ``-1`` where it leaves (the
    book's sign: Σ inflow − Σ outflow = 0). Returns ``(matrix, nodes, edges)``;
    ``sparse=True`` gives a ``scipy.sparse.csc_array`` (large networks).
    """
    edges = branches(graph) if edges is None else edges
    und = nx.Graph()
    und.add_nodes_from(graph.nodes)
    und.add_edges_from((u, v) for u, v, _ in edges)
    refs = set()
    for comp in nx.connected_components(und):
        refs.add(ground if ground in comp else sorted(comp, key=str)[0])
    nodes = [n for n in graph.nodes if n not in refs]
    index = {n: i for i, n in enumerate(nodes)}
    entries = []
    for j, (u, v, _) in enumerate(edges):
        if v in index:
            entries.append((index[v], j, 1.0))
        if u in index:
            entries.append((index[u], j, -1.0))
    return _matrix(entries, (len(nodes), len(edges)), sparse), nodes, edges


def _matrix(entries, shape, sparse):
    """A matrix from ``(row, column, value)`` entries (repeated entries add up)."""
    rows, cols, vals = (np.array(x) for x in zip(*entries)) if entries else ([], [], [])
    m = sps.csc_array((vals, (rows, cols)), shape=shape)
    m.sum_duplicates()
    return m if sparse else m.toarray()


def independent_loop_count(graph):
    """n = B − N + c: the number of independent loops (fundamental loops).

    >>> import networkx as nx
    >>> independent_loop_count(nx.MultiDiGraph([(0, 1), (1, 2), (2, 0), (0, 2)]))
    2
    """
    und = nx.Graph()
    und.add_nodes_from(graph.nodes)
    und.add_edges_from(graph.edges())
    return graph.number_of_edges() - graph.number_of_nodes() + nx.number_connected_components(und)


def spanning_tree(graph, weight=None, edges=None):
    """A spanning forest as a set of edge keys, preferring low ``weight(key)`` branches in the tree.

    Kruskal's algorithm on the branches sorted by weight (a *normal tree* when
    voltage sources and capacitors weigh least and current sources and
    inductors most).
    """
    edges = branches(graph) if edges is None else edges
    order = sorted(range(len(edges)), key=lambda j: (weight(edges[j][2]) if weight else 0, j))
    index = {n: i for i, n in enumerate(graph.nodes)}
    ends = [(index[u], index[v]) for u, v, _ in edges]
    find, union = _union_find(len(index))
    tree = set()
    for j in order:
        a, b = ends[j]
        if union(a, b):
            tree.add(edges[j][2])
    return tree


def _union_find(n):
    """``find(i)`` and ``union(i, j)`` (True when it joined two sets) over the integers ``0..n-1``."""
    parent = list(range(n))

    def find(i):
        while parent[i] != i:
            parent[i] = parent[parent[i]]  # path halving
            i = parent[i]
        return i

    def union(i, j):
        ri, rj = find(i), find(j)
        if ri == rj:
            return False
        parent[rj] = ri
        return True

    return find, union


def fundamental_loops(graph, tree, edges=None, sparse=False):
    """Fundamental loop matrix ``B`` (loops × branches) of a spanning tree, and the co-tree keys.

    Loop ``l`` is defined by co-tree branch ``c_l`` and runs along it; ``B[l, j]``
    is ``+1`` when branch ``j`` is traversed along its orientation, ``-1``
    against. Branch flows are ``f = Bᵀ f_loop`` and satisfy KCL identically.
    ``sparse=True`` gives a ``scipy.sparse.csc_array``.
    """
    edges = branches(graph) if edges is None else edges
    nodes = list(graph.nodes)
    index = {n: i for i, n in enumerate(nodes)}
    adjacent = [[] for _ in nodes]  # tree neighbours: (node, column, +1 going tail -> head)
    cotree, ends = [], []
    for j, (u, v, k) in enumerate(edges):
        a, b = index[u], index[v]
        if k in tree:
            adjacent[a].append((b, j, 1.0))
            adjacent[b].append((a, j, -1.0))
        else:
            cotree.append(k)
            ends.append((j, a, b))
    # parent pointers and depths of the tree (one search per component, roots in node order): each loop
    # is then walked from its two ends up to their common ancestor, in time proportional to its length
    parent, depth = [-1] * len(nodes), [-1] * len(nodes)
    up_col, up_sign = [0] * len(nodes), [0.0] * len(nodes)  # the branch to the parent, sign going up
    for root in range(len(nodes)):
        if depth[root] >= 0:
            continue
        depth[root] = 0
        stack = [root]
        while stack:
            x = stack.pop()
            for y, j, s in adjacent[x]:
                if depth[y] < 0:
                    parent[y], depth[y], up_col[y], up_sign[y] = x, depth[x] + 1, j, -s
                    stack.append(y)
    rows, cols, vals = [], [], []
    for l, (j, u, v) in enumerate(ends):
        up, down = [(j, 1.0)], []  # along the co-tree branch, then back from its head v to its tail u
        a, b = v, u
        while depth[a] > depth[b]:
            up.append((up_col[a], up_sign[a]))
            a = parent[a]
        while depth[b] > depth[a]:
            down.append((up_col[b], -up_sign[b]))
            b = parent[b]
        while a != b:
            up.append((up_col[a], up_sign[a]))
            down.append((up_col[b], -up_sign[b]))
            a, b = parent[a], parent[b]
        path = up + down[::-1]
        rows.extend([l] * len(path))
        cols.extend(c for c, _ in path)
        vals.extend(s for _, s in path)
    shape = (len(cotree), len(edges))
    m = sps.csc_array((np.array(vals, dtype=float), (np.array(rows, dtype=np.int64), np.array(cols, dtype=np.int64))),
                      shape=shape)
    m.sum_duplicates()
    return (m if sparse else m.toarray()), cotree


def tree_paths(graph, root="0"):
    """For every node reachable from ``root``: the list of ``(key, sign)`` along a path from root.

    ``sign`` is +1 when the path goes with the branch orientation (tail to head).
    Used to recover node values from branch (across) values. One breadth-first search over the first
    branch between each two nodes, in time linear in the graph: the answer is a :class:`TreePaths`
    mapping that keeps each node's parent and rebuilds a path when it is read (a series chain of N
    sections has paths of total length N²/2, never made all at once).

    >>> import networkx as nx
    >>> g = nx.MultiDiGraph()
    >>> _ = g.add_edge("0", "a", key="R1"); _ = g.add_edge("b", "a", key="R2")
    >>> tree_paths(g)["b"]
    [('R1', 1), ('R2', -1)]
    """
    return TreePaths(graph, root)


class TreePaths(Mapping):
    """Node -> ``[(key, sign), ...]`` from the root, on a breadth-first tree (the path networkx's
    ``single_source_shortest_path`` finds: shortest, first-found parent, neighbours in branch order).

    ``up[node]`` is ``(parent, key, sign)`` (``None`` at the root) and :meth:`fold` accumulates a value down
    the tree with a memo, so that every node's value costs O(1) more than its parent's.

    >>> import networkx as nx
    >>> g = nx.MultiDiGraph([("0", "a", "R1"), ("a", "b", "R2")])
    >>> paths = tree_paths(g)
    >>> list(paths), paths.up["b"], paths.depth("b")
    (['0', 'a', 'b'], ('a', 'R2', 1), 2)
    >>> paths.fold("b", {}, 0.0, lambda value, key, sign: value + sign)
    2.0
    """

    def __init__(self, graph, root="0"):
        adjacent, seen = {}, set()
        for u, v, k in graph.edges(keys=True):  # the first branch between two nodes carries the path
            pair = frozenset((u, v))
            if pair in seen:
                continue
            seen.add(pair)
            adjacent.setdefault(u, []).append((v, k, 1))
            if u != v:
                adjacent.setdefault(v, []).append((u, k, -1))
        self.root = root
        self.up = {}
        if root not in adjacent:
            return
        self.up[root] = None
        queue, head = [root], 0
        while head < len(queue):  # breadth first, in discovery order: each node once, each branch twice
            x = queue[head]
            head += 1
            for y, k, sign in adjacent[x]:
                if y not in self.up:
                    self.up[y] = (x, k, sign)
                    queue.append(y)

    def __getitem__(self, node):
        step = self.up[node]
        path = []
        while step is not None:
            path.append(step[1:])
            step = self.up[step[0]]
        path.reverse()
        return path

    def __iter__(self):
        return iter(self.up)

    def __len__(self):
        return len(self.up)

    def __contains__(self, node):
        return node in self.up

    def depth(self, node):
        """The number of branches between ``node`` and the root."""
        n, step = 0, self.up[node]
        while step is not None:
            n, step = n + 1, self.up[step[0]]
        return n

    def fold(self, node, memo, start, step):
        """``step(value of parent, key, sign)`` down the path to ``node`` from ``start`` at the root, each
        node's value kept in ``memo``: reading every node costs one step each."""
        chain, x = [], node
        while x not in memo and self.up[x] is not None:
            chain.append(x)
            x = self.up[x][0]
        value = memo[x] if x in memo else memo.setdefault(x, start)
        for y in reversed(chain):
            _, key, sign = self.up[y]
            value = memo[y] = step(value, key, sign)
        return value


def _components_without(graph, keep):
    """Components of the nodes using only branches whose key satisfies ``keep``: ``find(x)`` gives a
    node's representative."""
    index = {n: i for i, n in enumerate(graph.nodes)}
    find, union = _union_find(len(index))
    for u, v, k in graph.edges(keys=True):
        if keep(k):
            union(index[u], index[v])
    return lambda node: find(index[node])


class GrowingGraph:
    """Branches added one at a time, and the path the branches added so far make between two nodes: the
    loop a new branch would close (union-find answers whether there is one; a breadth-first search, only
    when there is, finds it).

    >>> g = GrowingGraph()
    >>> g.add("L1", "a", "b"); g.add("L2", "c", "b")
    >>> g.path("a", "c"), g.path("a", "d")      # (key, +1 along the branch's own first → second node)
    ([('L1', 1.0), ('L2', -1.0)], None)
    """

    def __init__(self):
        self._joined = nx.utils.UnionFind()
        self._graph = nx.MultiGraph()

    def add(self, key, a, b):
        self._joined.union(a, b)
        self._graph.add_edge(a, b, key=key, tail=a)

    def path(self, a, b):
        """The branches from ``a`` to ``b``, each ``(key, sign)``; ``[]`` when ``a == b``, None when no
        branch added so far joins them."""
        if a == b:
            return []
        if self._joined[a] != self._joined[b]:
            return None
        nodes = nx.shortest_path(self._graph, a, b)
        out = []
        for u, v in zip(nodes[:-1], nodes[1:]):
            key, data = next(iter(self._graph[u][v].items()))
            out.append((key, 1.0 if data["tail"] == u else -1.0))
        return out


def source_loops(graph, is_loop_kind, is_required):
    """Branches that close a loop made only of ``is_loop_kind`` branches containing an ``is_required`` one.

    With ``is_loop_kind`` = voltage source or capacitor and ``is_required`` =
    voltage source this finds loops of voltage sources (and capacitors).
    Returns a list of ``(key, [keys of the loop])``.
    """
    sub = GrowingGraph()
    found = []
    for u, v, k in graph.edges(keys=True):
        if not is_loop_kind(k):
            continue
        path = sub.path(u, v)
        if path is not None:
            loop = [k] + [key for key, _ in path]
            if any(is_required(x) for x in loop):
                found.append((k, loop))
                continue
        sub.add(k, u, v)
    return found


def source_cutsets(graph, is_cut_kind, is_required):
    """Branches of kind ``is_cut_kind`` that form a cut-set with others of that kind.

    A branch is in a cut-set made only of such branches when its two ends are
    disconnected once all those branches are removed. Returns the keys of the
    ``is_required`` branches found in such cut-sets.
    """
    find = _components_without(graph, lambda k: not is_cut_kind(k))
    return [k for u, v, k in graph.edges(keys=True) if is_required(k) and find(u) != find(v)]


def dangling_nodes(graph):
    """Nodes with exactly one branch attached (the element's current must be zero)."""
    degree = dict(graph.degree())  # in + out branches, as the undirected view counts them (one pass)
    return [n for n in graph.nodes if degree[n] == 1]


def components_without(graph, node):
    """Connected components (sets of nodes) not containing ``node``, in the order of their first node."""
    find = _components_without(graph, lambda k: True)
    comps = {}
    for n in graph.nodes:
        comps.setdefault(find(n), set()).add(n)
    return [c for c in comps.values() if node not in c]
