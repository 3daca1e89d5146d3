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

import re
from dataclasses import dataclass, field

import networkx as nx

from netdyn.errors import ModelError, SingularSystemError, TopologyError


def joint_graph(bodies, joints):
    """An undirected ``networkx.MultiGraph``: bodies and ground ``"0"`` as nodes, joints as edges keyed by name."""
    g = nx.MultiGraph()
    g.add_node("0")
    g.add_nodes_from(bodies)
    for j in joints:
        g.add_edge(j.bodies[0], j.bodies[1], key=j.name, joint=j)
    return g


def natural_key(name):
    """Sort key putting ``J2`` before ``J10``.

    >>> sorted(["J10", "J2", "A"], key=natural_key)
    ['A', 'J2', 'J10']
    """
    return [(0, int(p), "") if p.isdigit() else (1, 0, p) for p in re.split(r"(\d+)", str(name)) if p]


def spanning_tree(joints, cut=None):
    """The spanning tree of the joint graph from ground that carries relative coordinates, and the cut joints.

    The rule, independent of the order the joints are given in: the joints named in
    ``cut`` are cut; of the others, every body is reached from ground through the
    fewest joints, and where several joints would reach it so, through the one whose
    name sorts first (:func:`natural_key`: ``J2`` before ``J10``). The remaining
    joints are cut, each closing one loop.

    Returns ``(tree, cuts)``: ``tree`` lists ``(joint, parent, child)`` from ground
    outwards, by depth and then body name; ``cuts`` the joints that close loops, in
    name order. An unknown name in ``cut`` is a :class:`~netdyn.errors.ModelError`.
    """
    order = list(joints)
    names = {j.name for j in order}
    cut = list(cut or [])
    unknown = [c for c in cut if c not in names]
    if unknown:
        raise ModelError(f"cut names {unknown}, which are not joints of the network; the joints are "
                         f"{sorted(names, key=natural_key)}")
    usable = sorted((j for j in order if j.name not in set(cut)), key=lambda j: natural_key(j.name))
    depth, frontier = {"0": 0}, ["0"]
    while frontier:  # breadth-first depths over the joints not cut
        nxt = []
        for u in frontier:
            for j in usable:
                if u in j.bodies:
                    other = j.bodies[1] if j.bodies[0] == u else j.bodies[0]
                    if other not in depth:
                        depth[other] = depth[u] + 1
                        nxt.append(other)
        frontier = nxt
    tree = []
    for body in sorted((b for b in depth if b != "0"), key=lambda b: (depth[b], natural_key(b))):
        for j in usable:  # name order: the first joint reaching it from one level closer to ground
            a, b = j.bodies
            other = b if a == body else a if b == body else None
            if other is not None and other != body and depth.get(other) == depth[body] - 1:
                tree.append((j, other, body))
                break
    used = {j.name for j, _, _ in tree}
    return tree, sorted((j for j in order if j.name not in used), key=lambda j: natural_key(j.name))


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


def check_names(elements, bodies, joint_names):
    """A :class:`TopologyError` listing every element that names a body or a joint not in the network."""
    faults = []
    for el in elements:
        faults += [f"{el.name} names body {b!r}, which is not in the network; add RigidBody({b!r}, mass, inertia) "
                   "or correct the name" for b in el.bodies if b != "0" and b not in bodies]
        joint = getattr(el, "joint", None)
        if joint is not None and joint not in joint_names:
            faults.append(f"{el.name} acts on joint {joint!r}, which is not in the network; the joints are "
                          f"{sorted(joint_names)}")
    if faults:
        raise TopologyError.listing(faults)


def check_grounded(bodies, joints, also_grounded=(), joint_words="a joint"):
    """A :class:`TopologyError` naming every body that no chain of joints connects to ground."""
    g = joint_graph(bodies, joints)
    grounded = nx.node_connected_component(g, "0") | set(also_grounded)
    faults = [f"body {b!r} is floating: no chain of joints connects it to ground; add {joint_words} to it"
              for b in bodies if b not in grounded]
    if faults:
        raise TopologyError.listing(faults)


@dataclass(frozen=True)
class MechanismMetadata:
    """What a model keeps of its mechanism, ``model.metadata["planar"]`` or ``model.metadata["spatial"]``.

    ``formulation`` (``"absolute"`` or ``"relative"``); ``bodies`` (names); ``poses`` (each body's pose as
    expressions of the coordinates); ``joint_coordinates`` (each joint's relative coordinates as expressions);
    ``constraints`` (each element's constraint rows); ``tree`` and ``cuts`` (joint names of the spanning tree
    and of the joints that close loops); ``loops`` (the joints of each cut joint's loop); ``gruebler``
    (the Grübler mobility count); ``joints`` and ``body_values`` (the joint elements and the bodies' values
    by name); ``tree_edges`` (``(joint, parent, child)`` of each tree joint); ``element_values`` (each
    mechanism element's resolved values, by name); ``tree_coordinates`` (relative: each tree joint's coordinates,
    functions of t, in the order the joint reads them); spatial only: ``initial_guess`` (unit Euler parameters)
    and ``drivers`` (by name).

    >>> from netdyn.linkages import four_bar
    >>> md = four_bar().model(formulation="relative").metadata["planar"]
    >>> md.gruebler, md.formulation, md.cuts
    (1, 'relative', ['C'])
    """

    formulation: str
    bodies: list
    poses: dict
    joint_coordinates: dict
    constraints: dict
    tree: list
    cuts: list
    loops: dict
    gruebler: int
    joints: dict
    body_values: dict
    tree_edges: list = field(default_factory=list)
    initial_guess: dict = None
    drivers: dict = field(default_factory=dict)
    element_values: dict = field(default_factory=dict)
    tree_coordinates: dict = field(default_factory=dict)


@dataclass
class BodyPart:
    """The bodies' share of a model (planar or spatial): coordinates (already registered), energies,
    efforts, constraints, and ``angles`` (a body's angle, or a joint's single free rotation, for
    rotational elements that name it)."""

    kind: str  # "planar" or "spatial": the metadata key the part is filed under
    T: list = field(default_factory=list)
    V: list = field(default_factory=list)
    D: list = field(default_factory=list)
    efforts: dict = field(default_factory=dict)
    constraints: list = field(default_factory=list)
    labels: list = field(default_factory=list)
    flow_constraints: list = field(default_factory=list)
    flow_labels: list = field(default_factory=list)
    angles: dict = field(default_factory=dict)
    metadata: MechanismMetadata = None

    def add_energies(self, c):
        """Take an element's contribution ``c`` (its ``T``, ``V``, ``D``) into the part's energies."""
        self.T.append(c.T)
        self.V.append(c.V)
        self.D.append(c.D)


def joint_multipliers(model, joint, labels, formulation):
    """The multipliers of ``joint``'s constraint rows ``labels`` in ``model`` (planar or spatial).

    A tree joint of the relative formulation has no rows (a :class:`~netdyn.errors.ModelError`); a joint
    some of whose rows were left out as redundant is statically indeterminate (a
    :class:`~netdyn.errors.SingularSystemError`).

    >>> from types import SimpleNamespace as Model
    >>> m = Model(constraint_labels=["J1 x", "J1 y", "J2 x"], lambdas=["l0", "l1", "l2"])
    >>> joint_multipliers(m, "J1", ["J1 x", "J1 y"], "absolute")
    ['l0', 'l1']
    >>> joint_multipliers(m, "J2", ["J2 x", "J2 y"], "absolute")
    Traceback (most recent call last):
    ...
    netdyn.errors.SingularSystemError: the reaction of J2 is statically indeterminate: its constraint(s) ['J2 y'] are redundant and were left out of the solve
    >>> joint_multipliers(m, "J3", ["J3 x"], "relative")
    Traceback (most recent call last):
    ...
    netdyn.errors.ModelError: J3 is a tree joint of the relative formulation: it has no multipliers; use reaction(solution, joint), which solves for them in absolute coordinates
    """
    rows = _label_rows(model)
    missing = [lab for lab in labels if lab not in rows]
    if missing and len(missing) == len(labels) and formulation == "relative":
        raise ModelError(f"{joint} is a tree joint of the relative formulation: it has no multipliers; "
                         "use reaction(solution, joint), which solves for them in absolute coordinates")
    if missing:
        raise SingularSystemError(f"the reaction of {joint} is statically indeterminate: its constraint(s) "
                                  f"{missing} are redundant and were left out of the solve")
    return [model.lambdas[rows[lab]] for lab in labels]


def _label_rows(model):
    """Constraint label -> its row (the first of that label), made once per model: a joint's reaction reads its
    own rows in O(1)."""
    cache = getattr(model, "_compiled", None)
    rows = cache.get("constraint_rows") if isinstance(cache, dict) else None
    if rows is None:
        rows = {}
        for i, lab in enumerate(model.constraint_labels):
            rows.setdefault(lab, i)
        if isinstance(cache, dict):
            cache["constraint_rows"] = rows
    return rows
