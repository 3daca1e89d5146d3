"""A :class:`~netdyn.recursive.model.TreeModel` from a planar network (``netdyn.components.planar``).

The tree is the one the relative formulation uses (:func:`netdyn.planar.spanning_tree`: breadth-first
from the ground), so the tree's joint coordinates are the relative formulation's ``theta_<joint>`` /
``s_<joint>`` with the same signs; the joints left out become :class:`~netdyn.recursive.model.CutJoint`.

Each body's frame has the axes of its body frame (angle ``theta_<body>``) and its origin at the point
of its tree joint (``offset``, body-frame coordinates; the centre of mass is at the body's ``com``), so
that a revolute tree joint turns the child about its own origin.

Offered: :class:`RigidBody`, :class:`Revolute`, :class:`Prismatic` and :class:`Weld` (tree or cut)
and :class:`Gravity`. Anything else (springs, dampers, forces, actuators, sliders, drivers, 1-D
elements) raises :class:`NotRecursive`: the symbolic path handles those.

>>> from netdyn import Network
>>> from netdyn.components.planar import RigidBody, Revolute, Gravity
>>> net = Network()
>>> _ = net.add(RigidBody("l1", 1, 0.1), RigidBody("l2", 1, 0.1), Gravity(),
...             Revolute("A", "ground", (0, 0), "l1", (-0.5, 0)), Revolute("B", "l1", (0.5, 0), "l2", (-0.5, 0)))
>>> tree = tree_from_network(net)
>>> tree.model.coordinate_joints, tree.coordinate_names
(['A', 'B'], ['theta_A', 'theta_B'])
"""
from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import sympy as sp
from mpmath.libmp import to_float

from netdyn.errors import ModelError

from .model import FIXED, PRISMATIC, REVOLUTE, TreeModel, cut_joints, rot_z
from netdyn.components.planar import Prismatic, Revolute, Weld
from netdyn.graph.planar import check_structure, planar_elements, spanning_tree


class NotRecursive(ModelError):
    """The network holds an element the recursive path does not evaluate (use the symbolic path)."""


def _number(value, params, where):
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, (sp.Float, sp.Integer)):  # the values elements hold: no sympify, no substitution
        return float(to_float(value._mpf_)) if isinstance(value, sp.Float) else float(value.p)
    try:
        e = sp.sympify(value)
        if params:
            # by name: a symbol made with assumptions (positive=True) is not sp.Symbol(name)
            e = e.subs({s: params[s.name] for s in e.free_symbols if s.name in params and not callable(params[s.name])})
        return float(e)
    except (TypeError, ValueError, sp.SympifyError):
        raise NotRecursive(f"{where} is {value!r}, not a number: the recursive path needs numeric values "
                           "(pass params={name: value})") from None


@dataclass
class PlanarTree:
    """A tree built from a planar network: the model and the maps back to the network's names."""

    model: TreeModel
    network: object
    body_index: dict          # body name -> tree index
    offsets: dict             # body name -> body-frame origin in centre-of-mass coordinates (2,)
    joint_coordinate: dict    # tree joint name -> coordinate index
    coordinate_names: list    # relative-formulation names of the coordinates

    def com_poses(self, data):
        """``{body: (x, y, theta)}`` of the centres of mass after forward kinematics in ``data``."""
        out = {}
        for b, i in self.body_index.items():
            R = data.R[i]
            c = R @ self.model.com[i]
            out[b] = (data.p[i, 0] + c[0], data.p[i, 1] + c[1], np.arctan2(R[1, 0], R[0, 0]))
        return out


def tree_from_network(net, params=None, ignore=()):
    """The :class:`PlanarTree` of a planar network (bodies, Revolute/Prismatic/Weld joints, Gravity).

    ``ignore``: element classes left out (loads a caller applies itself, as
    :mod:`netdyn.numerics.functions.treeloads` does)."""

    if not net.bodies:
        raise NotRecursive("the network has no planar bodies")
    for el in net.elements.values():
        if ignore and isinstance(el, ignore):
            continue
        if not getattr(el, "planar", False):
            raise NotRecursive(f"{el.name} is not a planar element; the recursive path models bodies and joints only")
        kind = type(el).__name__
        if not getattr(el, "is_joint", False) and kind != "Gravity":
            raise NotRecursive(f"{el.name} ({kind}) is not evaluated by the recursive path")
        if getattr(el, "is_joint", False) and not isinstance(el, (Revolute, Prismatic, Weld)):
            raise NotRecursive(f"joint {el.name} ({kind}) is not offered by the recursive path; "
                               "use Revolute, Prismatic or Weld")
    check_structure(net)
    tree, cuts = spanning_tree(net)
    if len(tree) != len(net.bodies):
        raise NotRecursive("a body is held by a ground contact, not a joint")
    g = 0.0
    for el in planar_elements(net):
        if type(el).__name__ == "Gravity":
            g += _number(el.values["g"], params, f"{el.name}: g")

    def vec(v, where):
        return np.array([_number(v[0], params, where), _number(v[1], params, where)])

    n = len(tree)
    offsets, index, names = {"0": np.zeros(2)}, {}, []
    parent_ix, jtype = np.full(n, -1, dtype=np.int64), np.zeros(n, dtype=np.int64)
    axis, translation, com = np.zeros((n, 3)), np.zeros((n, 3)), np.zeros((n, 3))
    rotation, mass, inertia = np.tile(np.eye(3), (n, 1, 1)), np.zeros(n), np.zeros((n, 3, 3))
    body_names, joint_names = [], []
    for i, (j, parent, child) in enumerate(tree):  # the columns of the TreeModel, straight (no per-body dicts)
        pa, pb = vec(j.point_a, f"{j.name}: point_a"), vec(j.point_b, f"{j.name}: point_b")
        parent_is_a = parent == j.bodies[0]
        here, there = (pa, pb) if parent_is_a else (pb, pa)  # on the parent, on the child
        sign = 1.0 if parent_is_a else -1.0
        body = net.bodies[child]
        mass[i] = _number(body.values["m"], params, f"body {child}: mass")
        inertia[i, 2, 2] = _number(body.values["I"], params, f"body {child}: inertia")
        offsets[child] = there
        c = vec(body.com, f"body {child}: com") if hasattr(body, "com") else np.zeros(2)  # body frame
        parent_ix[i] = -1 if parent == "0" else index[parent]
        translation[i, :2] = here - offsets[parent]
        com[i, :2] = c - there
        body_names.append(child)
        joint_names.append(j.name)
        if isinstance(j, Revolute):
            jtype[i], axis[i, 2] = REVOLUTE, sign
            names.append(f"theta_{_ident(j.name)}")
        else:
            angle = _number(j.values["angle"], params, f"{j.name}: angle") if "angle" in j.values else 0.0
            rotation[i] = rot_z(sign * angle)
            if isinstance(j, Prismatic):
                u = vec(j.axis, f"{j.name}: axis")
                # slide along u of body a: in the child frame, u turned back by the relative angle
                cs, sn = np.cos(-sign * angle), np.sin(-sign * angle)
                jtype[i] = PRISMATIC
                axis[i, :2] = (cs * u[0] - sn * u[1], sn * u[0] + cs * u[1]) if parent_is_a else -u
                names.append(f"s_{_ident(j.name)}")
            else:  # weld
                jtype[i] = FIXED
        index[child] = i
    cut_specs = []
    for j in cuts:
        a, b = j.bodies
        spec = dict(name=j.name, body_a=None if a == "0" else a, body_b=None if b == "0" else b,
                    point_a=(*(vec(j.point_a, f"{j.name}: point_a") - offsets[a]), 0.0),
                    point_b=(*(vec(j.point_b, f"{j.name}: point_b") - offsets[b]), 0.0))
        if isinstance(j, Revolute):
            spec["kind"] = "revolute"
        elif isinstance(j, Prismatic):
            spec.update(kind="prismatic", axis=(*vec(j.axis, f"{j.name}: axis"), 0.0),
                        angle=_number(j.values["angle"], params, f"{j.name}: angle"))
        else:
            spec.update(kind="weld", angle=_number(j.values["angle"], params, f"{j.name}: angle"))
        cut_specs.append(spec)
    model = TreeModel(parent_ix, jtype, axis, rotation, translation, mass, com, inertia, gravity=(0.0, -g, 0.0),
                      body_names=body_names, joint_names=joint_names, cuts=cut_joints(cut_specs, index))
    jcoord = {model.joint_names[i]: int(model.qindex[i]) for i in range(model.n) if model.qindex[i] >= 0}
    return PlanarTree(model, net, index, {b: o for b, o in offsets.items() if b != "0"}, jcoord, names)


_NONWORD = re.compile(r"\W")


def _ident(name):
    return _NONWORD.sub("_", str(name))  # as netdyn's assembly names coordinates
