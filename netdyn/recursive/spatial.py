"""A :class:`~netdyn.recursive.model.TreeModel` from a spatial network (``netdyn.components.spatial``).

The tree is grown breadth first from the ground over the one-coordinate joints
(:func:`netdyn.graph.mechanism.spanning_tree`; ball joints are always cut), so without ball joints it is
the relative formulation's and the coordinates are its ``thetaz_<joint>`` / ``sz_<joint>``, same signs. Each body's tree frame is the
frame of its tree joint on it (origin at the joint point, z along the joint axis); mass, centre of
mass and inertia are carried over into that frame.

Offered: :class:`RigidBody`; :class:`Revolute`, :class:`Prismatic` and :class:`Fixed` in the tree;
:class:`Spherical`, :class:`Revolute` and :class:`Fixed` as cut joints; :class:`Gravity`. Anything
else (a Spherical or Universal joint in the tree, drivers, loads, prescribed components) raises
:class:`~netdyn.recursive.planar.NotRecursive`.

>>> from netdyn.linkages.spatial import spatial_chain
>>> tree = tree_from_spatial_network(spatial_chain(3))
>>> tree.model, tree.coordinate_names
(TreeModel(3 bodies, 3 coordinates, 0 cut joint(s), spatial), ['thetaz_J0', 'thetaz_J1', 'thetaz_J2'])
"""
from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from .model import TreeModel
from .planar import NotRecursive, _number
from netdyn.components.spatial import FREE, PRESCRIBED, Fixed, Prismatic, Revolute, Spherical
from netdyn.graph import mechanism
from netdyn.graph.spatial import check_structure, joints


@dataclass
class SpatialTree:
    """A tree built from a spatial network and the maps back to its names."""

    model: TreeModel
    network: object
    body_index: dict        # body name -> tree index
    frames: dict            # body name -> (origin, rotation) of its tree frame in its body frame
    joint_coordinate: dict  # tree joint name -> coordinate index
    coordinate_names: list


def _kind(j):

    for c, (k, v) in j.spec.items():
        if k == PRESCRIBED:
            raise NotRecursive(f"joint {j.name}: its component {c} is prescribed (a driven joint)")
        if k != FREE and v not in (0, None):
            raise NotRecursive(f"joint {j.name}: component {c} is held at {v}, not 0")
    if isinstance(j, Revolute) and j.free == ("rz",):
        return "revolute"
    if isinstance(j, Prismatic) and j.free == ("z",):
        return "prismatic"
    if isinstance(j, Fixed) and j.free == ():
        return "fixed"
    if isinstance(j, Spherical) and j.free == ("rx", "ry", "rz"):
        return "spherical"
    raise NotRecursive(f"joint {j.name} ({type(j).__name__}) is not offered by the recursive path")


def tree_from_spatial_network(net, params=None):
    """The :class:`SpatialTree` of a spatial network (see the module docstring)."""

    def vec(v, where):
        return np.array([_number(x, params, where) for x in v])

    for el in net.elements.values():
        kind = type(el).__name__
        if not getattr(el, "spatial", False):
            raise NotRecursive(f"{el.name} is not a spatial element; the recursive path models bodies and joints only")
        if not getattr(el, "is_joint", False) and kind != "Gravity":
            raise NotRecursive(f"{el.name} ({kind}) is not evaluated by the recursive path")
    check_structure(net)
    js = joints(net)
    # ball joints close loops: the tree is grown from the one-coordinate joints first (breadth first)
    balls = [j for j in js if _kind(j) == "spherical"]
    tree, cuts = mechanism.spanning_tree([j for j in js if _kind(j) != "spherical"])
    cuts = cuts + balls
    if len(tree) != len(net.bodies):
        missing = sorted(set(net.bodies) - {child for _, _, child in tree})
        raise NotRecursive(f"bodies {missing} hang on ball joints only; the recursive tree needs one-coordinate "
                           "joints (Revolute, Prismatic, Fixed) to reach every body")
    g = np.zeros(3)
    for el in net.elements.values():
        if type(el).__name__ == "Gravity":
            g += vec([el.values[f"g{a}"] for a in "xyz"], f"{el.name}: vector")
    frames = {"0": (np.zeros(3), np.eye(3))}
    bodies, names, index = [], [], {}
    for j, parent, child in tree:
        kind = _kind(j)
        pa, pb = vec(j.point_a, f"{j.name}: point_a"), vec(j.point_b, f"{j.name}: point_b")
        parent_is_a = parent == j.bodies[0]
        (p_par, R_par), (p_ch, R_ch) = ((pa, j.R_a), (pb, j.R_b)) if parent_is_a else ((pb, j.R_b), (pa, j.R_a))
        R_par, R_ch = np.asarray(R_par, dtype=float), np.asarray(R_ch, dtype=float)
        oP, RP = frames[parent]
        frames[child] = (p_ch, R_ch)
        body = net.bodies[child]
        v = body.values
        m = _number(v["m"], params, f"body {child}: mass")
        J = np.array([[_number(v.get(f"J{a}{b}", v.get(f"J{b}{a}")), params, f"body {child}: inertia")
                       for b in "xyz"] for a in "xyz"])
        com = vec([v[f"c{a}"] for a in "xyz"], f"body {child}: com")
        spec = dict(name=child, parent=None if parent == "0" else parent, joint_name=j.name,
                    translation=RP.T @ (p_par - oP), rotation=RP.T @ R_par, mass=m,
                    com=R_ch.T @ (com - p_ch), inertia=R_ch.T @ J @ R_ch)
        sign = 1.0 if parent_is_a else -1.0
        ident = re.sub(r"\W", "_", j.name)
        if kind == "revolute":
            spec.update(joint="revolute", axis=(0, 0, sign))
            names.append(f"thetaz_{ident}")
        elif kind == "prismatic":
            spec.update(joint="prismatic", axis=(0, 0, sign))
            names.append(f"sz_{ident}")
        else:
            spec.update(joint="fixed")
        index[child] = len(bodies)
        bodies.append(spec)
    cut_specs = []
    for j in cuts:
        kind = _kind(j)
        if kind == "prismatic":
            raise NotRecursive(f"joint {j.name} (Prismatic) closes a loop; spatial prismatic cut joints are not "
                               "offered")
        a, b = j.bodies
        (oA, RA), (oB, RB) = frames[a], frames[b]
        pa, pb = vec(j.point_a, f"{j.name}: point_a"), vec(j.point_b, f"{j.name}: point_b")
        Ra, Rb = RA.T @ np.asarray(j.R_a, dtype=float), RB.T @ np.asarray(j.R_b, dtype=float)
        cut_specs.append(dict(name=j.name, kind={"fixed": "weld"}.get(kind, kind),
                              body_a=None if a == "0" else a, point_a=RA.T @ (pa - oA),
                              body_b=None if b == "0" else b, point_b=RB.T @ (pb - oB),
                              axis=Ra[:, 2], axis_b=Rb[:, 2], rotation=Ra @ Rb.T))
    model = TreeModel.from_bodies(bodies, gravity=g, cuts=cut_specs)
    jcoord = {model.joint_names[i]: int(model.qindex[i]) for i in range(model.n) if model.qindex[i] >= 0}
    return SpatialTree(model, net, index, {b: f for b, f in frames.items() if b != "0"}, jcoord, names)
