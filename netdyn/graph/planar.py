"""Planar linkages: coordinates, energies and constraints from the bodies and joints on the graph.

Two formulations (``Network.model(formulation=...)``):

* ``"absolute"`` (default): every body keeps ``x_<body>``, ``y_<body>``,
  ``theta_<body>``; every joint contributes its constraints (the book's
  Examples 4.2 and 4.3). Loops close by themselves.
* ``"relative"``: a spanning tree of the joint graph rooted at ground carries
  joint coordinates (``theta_<joint>`` for a revolute, ``s_<joint>`` for a
  prismatic joint); every body pose is an expression of them; the joints left
  out of the tree (cut joints, one per independent loop of the graph) close the
  loops with their constraints. The tree follows a rule that does not depend on
  the order of ``net.add`` calls (:func:`spanning_tree`: fewest joints from
  ground, ties to the joint name that sorts first); ``net.model(formulation=
  "relative", cut=[...])`` chooses the cut joints instead.

>>> from netdyn import Network
>>> from netdyn.components.planar import RigidBody, Revolute, Gravity
>>> net = Network()
>>> _ = net.add(RigidBody("l1", 1, 0.1), RigidBody("l2", 1, 0.1), Gravity(),
...             Revolute("A", "ground", (0, 0), "l1", (-0.5, 0)), Revolute("B", "l1", (0.5, 0), "l2", (-0.5, 0)))
>>> net.model(formulation="relative").coordinate_names
['theta_A', 'theta_B']
>>> m = net.model()
>>> len(m.coordinates), len(m.constraints), m.metadata["planar"].gruebler
(6, 4, 2)
"""
from __future__ import annotations

from functools import partial

import sympy as sp

from netdyn.graph import mechanism
from netdyn.graph.mechanism import BodyPart
from netdyn.components.planar import GROUND_POSE, Gravity
from netdyn.graph.deferred import Deferred
from netdyn.graph.treeposes import TreePoses
from netdyn.errors import ModelError, TopologyError
from netdyn.symbols import identifier

FORMULATIONS = ("absolute", "relative")


def split_formulation(formulation):
    """Separate the planar formulation from the 1-D ones: ``(planar, rest)``.

    >>> split_formulation("relative"), split_formulation({"planar": "absolute", "electrical": "loop"})
    (('relative', None), ('absolute', {'electrical': 'loop'}))
    """
    if isinstance(formulation, str) and formulation in FORMULATIONS:
        return formulation, None
    if isinstance(formulation, dict) and "planar" in formulation:
        rest = {k: v for k, v in formulation.items() if k != "planar"}
        form = formulation["planar"]
        if form not in FORMULATIONS:
            raise ModelError(f"unknown planar formulation {form!r}; use one of {FORMULATIONS}")
        return form, rest or None
    return "absolute", formulation


def planar_elements(net):
    """The planar elements of a network (joints, drivers, loads), in insertion order."""
    return [el for el in net.elements.values() if getattr(el, "planar", False)]


def joints(net):
    return [el for el in planar_elements(net) if getattr(el, "is_joint", False)]


def joint_graph(net):
    """An undirected ``networkx.MultiGraph``: bodies and ground ``"0"`` as nodes, joints as edges keyed by name."""
    return mechanism.joint_graph(net.bodies, joints(net))


def check_structure(net):
    """Unknown bodies and joints, then floating bodies: a :class:`TopologyError` listing every culprit."""
    mechanism.check_names(planar_elements(net), net.bodies, {j.name for j in joints(net)})
    # a contact with the ground (a knife edge) holds a body without a joint
    contacts = {b for el in planar_elements(net) if getattr(el, "contacts_ground", False) for b in el.bodies}
    mechanism.check_grounded(net.bodies, joints(net), also_grounded=contacts,
                             joint_words="a joint (Revolute, Prismatic, Slider or Weld)")


def spanning_tree(net, cut=None):
    """The spanning tree of the joint graph that carries the relative coordinates, and the cut joints:
    :func:`netdyn.graph.mechanism.spanning_tree` (fewest joints from ground, ties to the joint name that
    sorts first, ``cut`` joints cut), with a :class:`TopologyError` when ``cut`` strands a body.

    Returns ``(tree, cuts)``: ``tree`` lists ``(joint, parent, child)`` from ground outwards, by depth
    and then body name (the order of the relative coordinates); ``cuts`` the joints that close loops.
    """
    tree, cuts = mechanism.spanning_tree(joints(net), cut)
    if cut:
        reached = {child for _, _, child in tree}
        contacts = {b for el in planar_elements(net) if getattr(el, "contacts_ground", False) for b in el.bodies}
        lost = [b for b in net.bodies if b not in reached and b not in contacts]
        if lost:
            raise TopologyError(f"cutting {list(cut)} leaves {lost} with no chain of joints to ground; cut other "
                                "joints (each cut joint must close a loop)")
    return tree, cuts


def fundamental_loops(net, tree, cuts):
    """For each cut joint, the closed chain of joints it completes (:func:`netdyn.graph.mechanism.fundamental_loops`)."""
    return mechanism.fundamental_loops(tree, cuts)


def distribute(efforts, coordinates, displacement, effort):
    """Add the generalized efforts of ``effort`` acting on ``displacement(q)`` (virtual work)."""
    for c in displacement.atoms(sp.core.function.AppliedUndef) & coordinates:
        efforts[c] = efforts.get(c, 0) + sp.diff(displacement, c) * effort




class _Writer:
    """The terms the relative formulation defers (:class:`~netdyn.graph.deferred.Deferred`), written from the
    assembly context; picklable, so that a model pickles unwritten."""

    def __init__(self, bodies, ctx, values):
        self.bodies, self.ctx, self.values = dict(bodies), ctx, values

    def kinetic(self):
        """The bodies' kinetic coenergies, in the order of ``bodies``."""
        return [body.contribute(self.ctx.pose(b), self.ctx.body_values(b)).T for b, body in self.bodies.items()]

    def potential(self, el):
        """The potential of the element ``el`` (Gravity: an energy and nothing else)."""
        return [el.planar_contribution(self.ctx, self.values[el.name]).V]


class _Context:
    def __init__(self, poses, body_values, joint_coords):
        self.poses, self._values, self._jc = poses, body_values, joint_coords
        self.bodies = list(poses)

    def pose(self, body):
        return GROUND_POSE if body == "0" else self.poses[body]

    def body_values(self, body):
        return self._values[body]

    def joint_coordinate(self, joint, k):
        coords = self._jc[joint]
        if k >= len(coords):
            raise ModelError(f"joint {joint!r} has {len(coords)} coordinate(s); coordinate={k} does not exist")
        return coords[k]


def assemble_planar(net, formulation, new_coordinate, values_of, cut=None):
    """The :class:`~netdyn.graph.mechanism.BodyPart` of a network; ``new_coordinate(name)`` registers a coordinate.

    ``cut`` names joints the relative formulation must cut (see :func:`spanning_tree`)."""
    if formulation not in FORMULATIONS:
        raise ModelError(f"unknown planar formulation {formulation!r}; use one of {FORMULATIONS}")
    check_structure(net)
    tree, cuts = spanning_tree(net, cut)
    values = {el.name: values_of(el) for el in planar_elements(net)}
    body_values = {b: values_of(body) for b, body in net.bodies.items()}
    poses, coords = {}, []
    tree_coords = {}
    if formulation == "absolute":
        for b in net.bodies:
            poses[b] = tuple(new_coordinate(f"{p}_{identifier(b)}") for p in ("x", "y", "theta"))
            coords.extend(poses[b])
        closing = joints(net)
    else:  # a pose sums the joints above it (n² symbols for a chain): written when something reads it
        links = {}
        for j, parent, child in tree:
            qs = [new_coordinate(f"{p}_{identifier(j.name)}") for p in j.relative]
            coords.extend(qs)
            tree_coords[j.name] = qs
            links[child] = (j, parent, qs, values[j.name], parent == j.bodies[0])
        for b in net.bodies:  # held by ground contacts only: absolute coordinates
            if b not in links:
                poses[b] = tuple(new_coordinate(f"{p}_{identifier(b)}") for p in ("x", "y", "theta"))
                coords.extend(poses[b])
        poses = TreePoses(net.bodies, poses, links)
        closing = cuts
    joint_coords = {}
    for j in joints(net):
        if j.name in tree_coords:  # a tree joint's coordinates are its own (none for a Weld)
            joint_coords[j.name] = tree_coords[j.name]
            continue
        pa = GROUND_POSE if j.bodies[0] == "0" else poses[j.bodies[0]]
        pb = GROUND_POSE if j.bodies[1] == "0" else poses[j.bodies[1]]
        joint_coords[j.name] = j.coordinates(pa, pb, values[j.name])
    ctx = _Context(poses, body_values, joint_coords)
    part = BodyPart("planar")
    coordset = set(coords)
    relative = formulation == "relative"
    writer = _Writer(net.bodies, ctx, values)
    if relative:
        part.T.append(Deferred(writer.kinetic))
    else:
        part.T.extend(writer.kinetic())
    constraint_index = {}
    closing_names = {j.name for j in closing}
    for el in planar_elements(net):
        if getattr(el, "is_joint", False) and el.name not in closing_names:
            continue
        if relative and isinstance(el, Gravity):  # every body's height: written when something reads V
            part.V.append(Deferred(partial(writer.potential, el)))
            constraint_index[el.name] = []
            continue
        c = el.planar_contribution(ctx, values[el.name])
        part.add_energies(c)
        for disp, effort in c.work:
            distribute(part.efforts, coordset, sp.sympify(disp), effort)
        constraint_index[el.name] = list(range(len(part.constraints), len(part.constraints) + len(c.constraints)))
        part.constraints.extend(c.constraints)
        part.labels.extend(c.labels)
        part.flow_constraints.extend(c.flow_constraints)
        part.flow_labels.extend(c.flow_labels)
    part.angles = poses.angles() if relative else {b: poses[b][2] for b in net.bodies}
    n_constraints = sum(len(j.components) for j in joints(net)) + sum(
        1 for el in planar_elements(net) if getattr(el, "is_driver", False))
    part.metadata = mechanism.MechanismMetadata(
        formulation=formulation, bodies=list(net.bodies), poses=poses, joint_coordinates=joint_coords,
        constraints=constraint_index, tree=[j.name for j, _, _ in tree], cuts=[j.name for j in cuts],
        tree_edges=[(j.name, parent, child) for j, parent, child in tree],
        loops=fundamental_loops(net, tree, cuts), gruebler=3 * len(net.bodies) - n_constraints,
        joints={j.name: j for j in joints(net)}, body_values=body_values, element_values=values,
        tree_coordinates={k: list(v) for k, v in tree_coords.items()})
    return part

