"""The recursive form of a relative-coordinate mechanism: its spanning tree as Newton–Euler links.

``Network.model(formulation="relative")`` files a :class:`RecursiveBuilder` under
``model.metadata["recursive_form"]``; ``model.recursive_form()`` calls it and gets a
:class:`~netdyn.lagrange.newton_euler.RecursiveForm`: one :class:`~netdyn.lagrange.newton_euler.Link` per body
(the tree joint's child pose relative to its parent, read from the joint itself — ``child_pose`` at a parent
fixed at the origin gives ``L``, ``ρ`` and the relative angular velocity), the gravity vector, and the
*rest* model: every term the assembler did not mark as a body's kinetic coenergy or gravity's potential
(:class:`~netdyn.graph.deferred.Deferred`), with the model's efforts and constraints. Planar mechanisms are
embedded in space (rotations about z; the zero components are pruned as the program is written); a planar
body held by ground contacts only keeps its absolute coordinates as a free planar link.

>>> from netdyn import Network
>>> from netdyn.components.planar import RigidBody, Revolute, Gravity
>>> net = Network()
>>> _ = net.add(RigidBody("l1", 1, 0.1), RigidBody("l2", 1, 0.1), Gravity(),
...             Revolute("A", "ground", (0, 0), "l1", (-0.5, 0)), Revolute("B", "l1", (0.5, 0), "l2", (-0.5, 0)))
>>> form = net.model(formulation="relative").recursive_form()
>>> [(link.body, link.parent, [str(c) for c in link.coordinates]) for link in form.links]
[('l1', -1, ['theta_A(t)']), ('l2', 0, ['theta_B(t)'])]
"""
from __future__ import annotations

import sympy as sp

from netdyn.components import planar as planar_components
from netdyn.components import spatial as spatial_components
from netdyn.graph.spatial import child_pose
from netdyn.lagrange.newton_euler import Link, RecursiveForm
from netdyn.lagrange.model import LagrangianModel
from netdyn.lagrange.sparsepoly import time_derivative
from netdyn.symbols import identifier


class RecursiveBuilder:
    """Makes a model's :class:`~netdyn.lagrange.newton_euler.RecursiveForm` from its mechanism metadata
    (``kind``: ``"planar"`` or ``"spatial"``) and the terms the bodies and gravity do not hold (``T``, ``V``,
    ``D``: the assembler's unmarked pieces). Picklable: a model pickles with it."""

    def __init__(self, kind, T, V, D):
        self.kind, self.T, self.V, self.D = kind, list(T), list(V), list(D)

    def __call__(self, model):
        md = model.metadata[self.kind]
        links, gravity = (_planar if self.kind == "planar" else _spatial)(model, md)
        metadata = {k: v for k, v in model.metadata.items() if k != "recursive_form"}
        rest = LagrangianModel(model.coordinates, T=self.T, V=self.V, D=self.D, efforts=model.efforts,
                               constraints=model.constraints, flow_constraints=model.flow_constraints,
                               parameters=model.parameters, name=model.name, metadata=metadata,
                               constraint_labels=model.constraint_labels,
                               flow_constraint_labels=model.flow_constraint_labels)
        return RecursiveForm(links, gravity, rest, model.coordinates)


def _order(md, edges):
    """Tree edges ``(joint, parent, child)`` from ground outwards (the assembler's order is so already)."""
    index, out = {"0": -1}, []
    for j, parent, child in edges:
        out.append((j, parent, child))
        index[child] = len(index) - 1
    return out, index


def _rz(phi):
    c, s = sp.cos(phi), sp.sin(phi)
    return sp.Matrix([[c, -s, 0], [s, c, 0], [0, 0, 1]])


def _planar(model, md):
    """Links of a planar tree; free bodies (held by ground contacts) as free planar links of ground."""
    edges, index = _order(md, md.tree_edges)
    links = []

    def body(b):
        bv = md.body_values[b]
        com = sp.Matrix([bv.get("cx", 0), bv.get("cy", 0), 0])
        return bv["m"], com, sp.diag(0, 0, bv["I"])

    for name, parent, child in edges:
        j = md.joints[name]
        qs = md.joint_coordinates[name]
        x, y, phi = j.child_pose(planar_components.GROUND_POSE, qs, md.element_values[name], parent == j.bodies[0])
        links.append(Link(child, index[parent], _rz(phi), sp.Matrix([x, y, 0]), sp.Matrix([0, 0, time_derivative(phi)]),
                          list(qs), *body(child)))
    for b in md.bodies:
        if b in index:
            continue
        x, y, phi = md.poses[b]
        links.append(Link(b, -1, _rz(phi), sp.Matrix([x, y, 0]), sp.Matrix([0, 0, time_derivative(phi)]), [x, y, phi],
                          *body(b)))
    g = sp.zeros(3, 1)
    for name, values in md.element_values.items():
        el = model.metadata["network"].elements.get(name)
        if isinstance(el, planar_components.Gravity):
            g += sp.Matrix([0, -values["g"], 0])
    return links, g


def _spatial(model, md):
    """Links of a spatial tree: each tree joint's relative pose at a parent fixed at the origin."""
    edges, index = _order(md, md.tree_edges)
    links = []
    for name, parent, child in edges:
        j = md.joints[name]
        loose = {c: ((spatial_components.FREE, None) if kind == spatial_components.PRESCRIBED else (kind, v))
                 for c, (kind, v) in j.spec.items()}
        qs = [model.coordinate(f"{n}_{identifier(name)}") for n in j.relative_names(loose)]
        pose, _ = child_pose(j, spatial_components.GROUND, qs, parent == j.bodies[0], loose)
        bv = md.body_values[child]
        links.append(Link(child, index[parent], pose.R, pose.r, pose.omega, qs, bv["m"],
                          spatial_components.RigidBody.com(bv), spatial_components.RigidBody.inertia_matrix(bv)))
    g = sp.zeros(3, 1)
    for name, values in md.element_values.items():
        el = model.metadata["network"].elements.get(name)
        if isinstance(el, spatial_components.Gravity):
            g += sp.Matrix([values[f"g{a}"] for a in spatial_components.AXES])
    return links, g
