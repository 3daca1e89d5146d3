"""Joint measures of a spatial model in its own coordinates: joint coordinates by name, and the branch
test of prescribed rotations.

* :func:`joint_terms` — every joint coordinate of the relative formulation (``thetaz_R1``, ``sx_P``,
  ``alpha_U1``/``beta_U1``, ``e0_S..e3_S``) as an expression of the model's coordinates, in either
  formulation, so that ``q0``, ``f0`` and ``guess`` take joint terms everywhere (the relative formulation's
  names, the joint's own name for its coordinates, ``theta_<joint>``/``s_<joint>`` for a joint's single
  rotation or slide). In the absolute formulation an angle is ``2 atan2(q_k, q_0)`` of the relative Euler
  parameters and a Cardan pair comes from the relative rotation matrix. (Body coordinates are not joint
  terms: a caller's guess in absolute names stays an error in the relative formulation.)
* :func:`rotation_branch` — for a driver prescribing a rotation by the constraint ``2 w_E v_E = 0`` (the
  absolute formulation, or a cut joint), the pair ``(w_E, v_E)`` of the error's Euler parameters about the
  driven axis. That row vanishes at an error of π as well as at 0; ``w_E² − v_E²`` is the cosine of the error
  angle about the axis, positive only on the right branch (:mod:`netdyn.analysis.kinematics` checks it).

>>> from netdyn import Network
>>> from netdyn.components.spatial import RigidBody, Revolute
>>> net = Network()
>>> _ = net.add(RigidBody("b", 1, (1, 1, 1)), Revolute("R", "ground", (0, 0, 0), "b", (0, 0, 0), axis=(1, 0, 0)))
>>> sorted(k for k in joint_terms(net.model()) if not k.endswith("]"))
['R', 'theta_R', 'thetaz_R']
"""
from __future__ import annotations

import sympy as sp

from netdyn.components.spatial import AXES, COMPONENTS, FREE, GROUND, PRESCRIBED, Joint, quat_matrix
from netdyn.symbols import identifier


def _loose(j):
    return {c: ((FREE, None) if kind == PRESCRIBED else (kind, v)) for c, (kind, v) in j.spec.items()}


def _measures(j, pa, pb, names):
    """Expressions of the joint coordinates ``names`` (relative-formulation suffixes) at poses ``pa``, ``pb``."""
    qr = j.relative_quat(pa, pb)
    out = []
    d = None
    R = None
    for n in names:
        if n.startswith("s") and n[1:] in AXES:
            d = j.relative_position(pa, pb) if d is None else d
            out.append(sp.sympify(d[AXES.index(n[1:])]))
        elif n.startswith("theta") and n[5:] in AXES:
            k = AXES.index(n[5:]) + 1
            out.append(2 * sp.atan2(qr[k], qr[0]))
        elif n in ("alpha", "beta"):  # Cardan angles of R_rel = Rx(alpha) Ry(beta)
            R = quat_matrix(qr) if R is None else R
            out.append(sp.atan2(R[2, 1], R[1, 1]) if n == "alpha" else sp.atan2(R[0, 2], R[0, 0]))
        elif n.startswith("e") and n[1:].isdigit():
            out.append(sp.sympify(qr[int(n[1:])]))
        else:  # pragma: no cover - a joint kind with coordinates of its own
            return None
    return out


def joint_terms(model):
    """``{name: (joint, index, expression)}`` of a spatial model's joint coordinates (see the module
    docstring); ``"<joint>[all]"`` holds ``(joint, None, [expressions])``. Cached on the model."""
    cache = getattr(model, "_compiled", None)
    if cache is not None and "spatial_joint_terms" in cache:
        return cache["spatial_joint_terms"]
    md = model.metadata["spatial"]
    coords = {str(c): c for c in model.coordinates}
    table = {}
    for name, j in md.joints.items():
        ident = identifier(name)
        names = j.relative_names(_loose(j))
        if not names:
            continue
        if md.formulation == "relative" and all(f"{n}_{ident}" in coords for n in names):
            exprs = [coords[f"{n}_{ident}"] for n in names]
        else:
            pa, pb = (GROUND if b == "0" else md.poses[b] for b in j.bodies)
            exprs = _measures(j, pa, pb, names)
            if exprs is None:
                continue
        for k, (n, e) in enumerate(zip(names, exprs)):
            table[f"{n}_{ident}"] = (name, k, e)
        rot = [k for k, n in enumerate(names) if n.startswith("theta")]
        slides = [k for k, n in enumerate(names) if n.startswith("s")]
        if len(rot) == 1:
            table.setdefault(f"theta_{ident}", (name, rot[0], exprs[rot[0]]))
        if len(slides) == 1:
            table.setdefault(f"s_{ident}", (name, slides[0], exprs[slides[0]]))
        table.setdefault(name, (name, 0, exprs[0]))
        table[f"{name}[all]"] = (name, None, list(exprs))
    if cache is not None:
        cache["spatial_joint_terms"] = table
    return table


def rotation_branch(model, name, motion):
    """``(w_E, v_E)``: the scalar and the driven-axis Euler parameter of the orientation error of driver
    ``name`` (``"joint"`` or ``"joint[rk]"``) following ``motion``, when its row is ``2 w_E v_E`` (a rotation
    driven in the absolute formulation or on a cut joint); None for a driver whose row is linear in its
    coordinate (a tree joint of the relative formulation) or a translation."""
    md = model.metadata["spatial"]
    joint, component = name, None
    if name.endswith("]") and "[" in name:
        joint, component = name[:-1].split("[", 1)
    j = md.joints.get(joint)
    if j is None or not j.free:
        return None
    component = component or j.free[0]
    if component in AXES or component not in COMPONENTS:
        return None
    if md.formulation == "relative" and joint in md.tree:
        return None
    if type(j).rotation_equations is not Joint.rotation_equations:  # a Cardan joint: rows of its own
        return None
    spec = dict(j.spec)
    spec[component] = (PRESCRIBED, motion)
    only = {c: (FREE, None) for c in COMPONENTS}
    only[component] = spec[component]
    for c in COMPONENTS:
        if c.startswith("r") and c != component and spec[c][0] != FREE:
            only[c] = spec[c]
    pa, pb = (GROUND if b == "0" else md.poses[b] for b in j.bodies)
    qE = j.error_quat(pa, pb, only)
    return qE[0], qE[AXES.index(component[1]) + 1]
