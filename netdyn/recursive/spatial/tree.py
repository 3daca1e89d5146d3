"""A :class:`~netdyn.recursive.model.TreeModel` from a spatial network (``netdyn.components.spatial``).

The tree is grown breadth first from the ground (:func:`netdyn.graph.mechanism.spanning_tree`; ball joints
are always cut), so without ball joints it is the relative formulation's and the coordinates are its
``sx_<joint>`` … ``thetaz_<joint>``, ``alpha_<joint>``/``beta_<joint>`` (Universal), same signs.

Every tree joint is the general relative pose of :class:`~netdyn.components.spatial.Joint`: frame b sits
at ``d`` in frame a, turned by ``R_rel``. Its free translations become prismatic joints along the axes of
frame a, its free rotation a revolute joint (a Universal: a revolute about x, then one about the turned
y), one after the other through massless intermediate frames, as Featherstone models multi-freedom
joints; held components are zero and constant prescribed components fixed offsets. So Revolute,
Prismatic, Cylindrical, Planar, Universal, Fixed and any general ``Joint`` with at most one free rotation
(or the Universal's two) are tree joints. Several free Euler-parameter rotations (a Spherical joint, a
free-floating body) have no such chain: a Spherical joint is cut (three rows), the others raise
:class:`~netdyn.recursive.planar.NotRecursive` (the symbolic path takes them). Cut joints: Spherical,
Revolute and Fixed. Each real body's tree frame is the frame of its tree joint on it; mass, centre of mass
and inertia are carried over into that frame. Loads: :mod:`netdyn.recursive.spatial.loads`.

>>> from netdyn.linkages.spatial import spatial_chain
>>> tree = tree_from_spatial_network(spatial_chain(3))
>>> tree.model, tree.coordinate_names
(TreeModel(3 bodies, 3 coordinates, 0 cut joint(s), spatial), ['thetaz_J0', 'thetaz_J1', 'thetaz_J2'])
"""
from __future__ import annotations

from typing import Any

from dataclasses import dataclass, field

import numpy as np
import sympy as sp

from ..model import TreeModel
from ..planar import NotRecursive, _number
from netdyn.components.spatial import AXES, FREE, PRESCRIBED, Joint, Spherical, Universal, quat_matrix
from netdyn.errors import ModelError
from netdyn.graph import mechanism
from netdyn.graph.spatial import check_structure, joints
from netdyn.symbols import identifier, t as T_SYMBOL


@dataclass
class SpatialTree:
    """A tree built from a spatial network and the maps back to its names."""

    model: TreeModel
    network: object
    body_index: dict        # body name -> tree index
    frames: dict            # body name -> (origin, rotation) of its tree frame in its body frame
    joint_coordinate: dict  # tree joint name -> its first coordinate's index
    coordinate_names: list
    components: dict = field(default_factory=dict)  # (joint, component) -> coordinate index
    loads: object = None    # the network's loads (netdyn.recursive.spatial.loads.SpatialLoads) or None
    prescribed: dict = field(default_factory=dict)  # label -> (coordinate index, motion): drivers=True
    joints: dict = field(default_factory=dict)  # joint name -> the joint as the tree reads it (idle spins held)


def is_ball(j):
    """A joint whose rotation is all free and position all held: cut (three rows)."""
    return isinstance(j, Spherical) or (not isinstance(j, Universal) and j.free == ("rx", "ry", "rz"))


def _constant(j, c, value, params):
    """A held or prescribed component's constant value (NotRecursive for a motion in time)."""
    e = sp.sympify(value)
    if T_SYMBOL in e.free_symbols:
        raise NotRecursive(f"joint {j.name}: its component {c} is prescribed in time ({e}); the recursive "
                           "simulation takes constant components (drive it through inverse_dynamics, or use "
                           "the symbolic path)")
    return _number(e, params, f"joint {j.name}: component {c}")


def _timed(kind, value):
    return kind == PRESCRIBED and T_SYMBOL in sp.sympify(value).free_symbols


def joint_steps(j, params, timed=None):
    """The chain of frame a → frame b as steps ``("move", kind, axis, component)`` and ``("place", d, R)``
    (constant offsets), in frame-a order; see the module docstring. With a dict ``timed``, components
    prescribed in time become coordinates too, their motions recorded there by ``(joint, component)``."""
    if getattr(j, "floating", False):  # a virtual free joint: slides along x, y, z, then turns z, y, x
        return [("move", "prismatic", np.eye(3)[k], a) for k, a in enumerate(AXES)] + [
            ("move", "revolute", np.eye(3)[k], "r" + AXES[k]) for k in (2, 1, 0)]
    spec = dict(j.spec)
    if timed is not None:
        for c, (kind, value) in j.spec.items():
            if _timed(kind, value):
                timed[(j.name, c)] = (f"{j.name}[{c}]", value)
                spec[c] = (FREE, None)
    steps = []
    for k, a in enumerate(AXES):
        kind, value = spec[a]
        if kind == FREE:
            steps.append(("move", "prismatic", np.eye(3)[k], a))
        elif kind == PRESCRIBED:
            steps.append(("place", _constant(j, a, value, params) * np.eye(3)[k], np.eye(3)))
    if isinstance(j, Universal):
        steps += [("move", "revolute", np.eye(3)[0], "rx"), ("move", "revolute", np.eye(3)[1], "ry")]
        return steps
    free_rot = [k for k, a in enumerate(AXES) if spec["r" + a][0] == FREE]
    if len(free_rot) > 1:
        raise NotRecursive(f"joint {j.name} ({type(j).__name__}) has {len(free_rot)} free rotations (Euler "
                           "parameters); the recursive tree takes one free rotation a joint (two for a Universal), "
                           "a Spherical joint as a cut joint; the symbolic path takes it")
    spec = {c: (kind, _constant(j, c, v, params) if kind == PRESCRIBED else v) for c, (kind, v) in spec.items()}
    qp = [float(v) for v in j.prescribed_quat(spec)]
    if free_rot:
        steps.append(("move", "revolute", np.eye(3)[free_rot[0]], "r" + AXES[free_rot[0]]))
    if qp != [1.0, 0.0, 0.0, 0.0]:
        steps.append(("place", np.zeros(3), np.array(quat_matrix(qp), dtype=float)))
    return steps


def _inverse(steps):
    """The steps of frame b → frame a: reversed, each inverted."""
    out = []
    for s in reversed(steps):
        if s[0] == "move":
            out.append(("move", s[1], -s[2], s[3]))
        else:
            out.append(("place", -s[2].T @ s[1], s[2].T))
    return out


def idle_spins(net, js, params=None):
    """``js`` with the first ball joint of every S–S link (a body held by two ball joints and nothing else)
    replaced by a :class:`~netdyn.components.spatial.Universal` whose forks are normal to the line of the
    two ball centres: the link's spin about that line is idle (no inertia about it when the link is
    axisymmetric about it, no load can turn it) and is held, with an
    :class:`~netdyn.errors.IdleFreedomWarning` naming it. The fork frame on the other body is chosen so
    that both angles are zero in the network's stored assembly (far from the Universal's singularity).
    A link that is not axisymmetric about the line raises :class:`~netdyn.recursive.planar.NotRecursive`."""
    import warnings

    from netdyn.errors import IdleFreedomWarning
    from netdyn.graph.assembly import fill

    guess = dict(fill(net)[2] or {})
    out = list(js)
    for body in net.bodies:
        mine = [j for j in js if body in j.bodies]
        if len(mine) != 2 or not all(is_ball(j) and not isinstance(j, Universal) for j in mine):
            continue
        j, other = sorted(mine, key=lambda x: mechanism.natural_key(x.name))
        side = j.bodies.index(body)
        here = np.array([_number(x, params, f"{j.name}: point") for x in (j.point_a, j.point_b)[side]])
        there = np.array([_number(x, params, f"{other.name}: point")
                          for x in (other.point_a, other.point_b)[other.bodies.index(body)]])
        if np.linalg.norm(there - here) == 0:
            continue
        Rlink = np.column_stack(_frame_along((there - here) / np.linalg.norm(there - here)))
        v = net.bodies[body].values
        J = np.array([[_number(v.get(f"J{a}{b}", v.get(f"J{b}{a}")), params, f"body {body}: inertia")
                       for b in "xyz"] for a in "xyz"])
        c = np.array([_number(v[f"c{a}"], params, f"body {body}: com") for a in "xyz"]) - here
        Jl, cl = Rlink.T @ J @ Rlink, Rlink.T @ c
        scale = max(1.0, np.max(np.abs(J)))
        if (abs(Jl[0, 0] - Jl[1, 1]) > 1e-9 * scale or np.max(np.abs([Jl[0, 1], Jl[0, 2], Jl[1, 2]])) > 1e-9 * scale
                or np.max(np.abs(cl[:2])) > 1e-9 * max(1.0, np.max(np.abs(c)))):
            raise NotRecursive(f"body {body} hangs on ball joints {j.name} and {other.name}: its spin about their line "
                               "is a freedom (the body is not axisymmetric about it), not idle; the symbolic path "
                               "takes it")
        far = j.bodies[1 - side]
        A, B = _pose_of(guess, far), _pose_of(guess, body)
        R_far_to_link = Rlink if A is None or B is None else A[1].T @ B[1] @ Rlink
        p_far = (j.point_a, j.point_b)[1 - side]
        frames = [(p_far, R_far_to_link), (tuple(here), Rlink)]
        if side == 0:
            frames.reverse()
        out[out.index(j)] = Universal(j.name, j.bodies[0], frames[0], j.bodies[1], frames[1])
        warnings.warn(f"body {body}: its spin about the line of ball joints {j.name} and {other.name} is idle "
                      f"(axial inertia {Jl[2, 2]:.3g}, no load turns it); the recursive path holds it (joint {j.name} "
                      "as a Universal with forks normal to the line)", IdleFreedomWarning, stacklevel=3)
    return out


def _check_inertia(model, names):
    """NotRecursive naming a coordinate that moves no inertia (a thin rod turned about its own axis)."""
    from ..algorithms import crba
    from ..model import TreeData
    if not model.nq:
        return
    d = np.diag(crba(model, TreeData(model), np.zeros(model.nq)))
    idle = [names[k] for k in np.flatnonzero(d <= 1e-12 * max(1.0, np.max(d)))]
    if idle:
        raise NotRecursive(f"the joint coordinate(s) {idle} move no inertia (a thin rod turned about its own axis): "
                           "hold that freedom with the joint, or leave it idle between two ball joints")


def _frame_along(z):
    """Two unit vectors normal to ``z`` and ``z``: a right-handed frame with third axis ``z``."""
    helper = np.eye(3)[int(np.argmin(np.abs(z)))]
    x = np.cross(helper, z)
    x /= np.linalg.norm(x)
    return x, np.cross(z, x), z


def _coordinate_name(j, comp):
    if comp in AXES:
        return f"s{comp}"
    if isinstance(j, Universal):
        return "alpha" if comp == "rx" else "beta"
    return f"theta{comp[-1]}"


def floating_joint(body: str) -> Joint:
    """A virtual free joint from the ground to ``body`` (named ``"<body>@free"``): on the tree, slides along the
    ground's x, y, z, then turns about z, y and x (``R = Rz Ry Rx``, singular at a pitch of ±90°), through
    massless frames. It gives a body that hangs on ball joints only (a parallel manipulator's platform) a
    place on the tree; its coordinates ``sx_<body>_free`` … ``thetax_<body>_free`` are the body's pose.

    >>> floating_joint("platform").free
    ('x', 'y', 'z', 'rx', 'ry', 'rz')
    """
    j = Joint(f"{body}@free", "ground", (0, 0, 0), body, (0, 0, 0), position="", rotation="")
    j.floating = True
    return j


def _compose(p, q):
    return p[0] + p[1] @ q[0], p[1] @ q[1]


def tree_from_spatial_network(net: Any, params: Any = None, loads: bool = True, drivers: bool = False,
                              floating: Any = ()) -> Any:
    """The :class:`SpatialTree` of a spatial network (see the module docstring); ``loads=False`` refuses
    loads instead of reading them (:mod:`netdyn.recursive.spatial.loads`); ``drivers=True`` (inverse
    dynamics) takes Driver elements and components prescribed in time as coordinates whose motions
    ``tree.prescribed`` lists (label → ``(coordinate index, motion)``). ``floating`` names bodies joined to
    the ground by a virtual free joint (:func:`floating_joint`), first in the tree.

    >>> from netdyn import Network
    >>> from netdyn.components.spatial import RigidBody, Universal
    >>> net = Network()
    >>> _ = net.add(RigidBody("shaft", 1.0, (0.1, 0.1, 0.02)), Universal("U", "ground", (0, 0, 0), "shaft", (0, 0, 0)))
    >>> tree = tree_from_spatial_network(net)
    >>> tree.coordinate_names, tree.model.body_names          # two revolutes through a massless cross
    (['alpha_U', 'beta_U'], ['shaft@U.rx', 'shaft'])
    """
    from .loads import SpatialLoads, is_spatial_load

    def vec(v, where):
        return np.array([_number(x, params, where) for x in v])

    load_elements = []
    for el in net.elements.values():
        kind = type(el).__name__
        if not getattr(el, "spatial", False):
            raise NotRecursive(f"{el.name} is not a spatial element; the recursive path models spatial bodies, "
                               "joints and loads")
        if getattr(el, "is_driver", False) and drivers:
            continue
        if getattr(el, "is_driver", False):
            raise NotRecursive(f"{el.name} (Driver) prescribes a joint in time; the recursive simulation takes "
                               "free joints (inverse_dynamics takes drivers)")
        if getattr(el, "is_joint", False) or kind == "Gravity":
            continue
        if not (loads and is_spatial_load(el)):
            raise NotRecursive(f"{el.name} ({kind}) is not evaluated by the recursive path")
        load_elements.append(el)
    unknown = [b for b in floating if b not in net.bodies]
    if unknown:
        raise ModelError(f"floating= names {unknown}, which are not bodies of the network {sorted(net.bodies)}")
    free = [floating_joint(b) for b in floating]
    check_structure(net, free)
    js = free + idle_spins(net, joints(net), params)
    balls = [j for j in js if is_ball(j)]
    tree, cuts = mechanism.spanning_tree([j for j in js if not is_ball(j)])
    cuts = cuts + balls
    if len(tree) != len(net.bodies):
        missing = sorted(set(net.bodies) - {child for _, _, child in tree})
        raise NotRecursive(f"bodies {missing} hang on ball joints only; the recursive tree needs joints with at most "
                           "one free rotation (or a Universal) to reach every body")
    g = np.zeros(3)
    for el in net.elements.values():
        if type(el).__name__ == "Gravity":
            g += vec([el.values[f"g{a}"] for a in "xyz"], f"{el.name}: vector")
    frames = {"0": (np.zeros(3), np.eye(3))}
    bodies, names, index, components, jcoord, timed = [], [], {}, {}, {}, {}
    for j, parent, child in tree:
        parent_is_a = parent == j.bodies[0]
        pa, pb = vec(j.point_a, f"{j.name}: point_a"), vec(j.point_b, f"{j.name}: point_b")
        Ra, Rb = np.asarray(j.R_a, dtype=float), np.asarray(j.R_b, dtype=float)
        (p_par, R_par), (p_ch, R_ch) = ((pa, Ra), (pb, Rb)) if parent_is_a else ((pb, Rb), (pa, Ra))
        steps = joint_steps(j, params, timed if drivers else None)
        steps = steps if parent_is_a else _inverse(steps)
        oP, RP = frames[parent]
        pending = (RP.T @ (p_par - oP), RP.T @ R_par)  # the joint frame on the parent, in its tree frame
        last = None if parent == "0" else parent
        ident = identifier(j.name)
        moves = [s for s in steps if s[0] == "move"]
        for s in steps:
            if s[0] == "place":
                pending = _compose(pending, (s[1], s[2]))
                continue
            _, kind, axis, comp = s
            final = s is moves[-1]
            name = child if final else f"{child}@{j.name}.{comp}"
            bodies.append(dict(name=name, parent=last, joint_name=j.name, joint=kind, axis=axis,
                               translation=pending[0], rotation=pending[1], mass=0.0, com=np.zeros(3),
                               inertia=np.zeros((3, 3))))
            coord = _coordinate_name(j, comp)
            components[(j.name, comp)] = len(names)
            jcoord.setdefault(j.name, len(names))
            names.append(f"{coord}_{ident}")
            last, pending = name, (np.zeros(3), np.eye(3))
        if not moves:
            bodies.append(dict(name=child, parent=last, joint_name=j.name, joint="fixed",
                               translation=pending[0], rotation=pending[1]))
            pending = (np.zeros(3), np.eye(3))
        # the child's tree frame: its joint frame, less the offsets after the last moving step
        R_tree = R_ch @ pending[1].T
        frames[child] = (p_ch - R_tree @ pending[0], R_tree)
        o, R = frames[child]
        v = net.bodies[child].values
        m = _number(v["m"], params, f"body {child}: mass")
        J = np.array([[_number(v.get(f"J{a}{b}", v.get(f"J{b}{a}")), params, f"body {child}: inertia")
                       for b in "xyz"] for a in "xyz"])
        com = vec([v[f"c{a}"] for a in "xyz"], f"body {child}: com")
        bodies[-1].update(mass=m, com=R.T @ (com - o), inertia=R.T @ J @ R)
        index[child] = len(bodies) - 1
    for d in (el for el in net.elements.values() if drivers and getattr(el, "is_driver", False)):
        if (d.joint, d.component) not in components:
            raise NotRecursive(f"driver {d.name}: component {d.component} of joint {d.joint} is not a coordinate "
                               "of the recursive tree (a cut joint, or not free)")
        timed[(d.joint, d.component)] = (d.name, d.values["motion"])
    cut_specs = []
    for j in cuts:
        if any(_timed(*kv) for kv in j.spec.values()):
            raise NotRecursive(f"joint {j.name} closes a loop and has a component prescribed in time; the recursive "
                               "path drives tree joints")
        kind = ("spherical" if is_ball(j) else "revolute" if j.free == ("rz",) and type(j).__name__ != "Universal"
                else "fixed" if j.free == () else None)
        if kind is None or any(k == PRESCRIBED for k, _ in j.spec.values()):
            raise NotRecursive(f"joint {j.name} ({type(j).__name__}) closes a loop; the recursive path cuts "
                               "Spherical, Revolute and Fixed joints only (put this joint in the tree by cutting "
                               "another one of the loop, or use the symbolic path)")
        a, b = j.bodies
        (oA, RA), (oB, RB) = frames[a], frames[b]
        pa, pb = vec(j.point_a, f"{j.name}: point_a"), vec(j.point_b, f"{j.name}: point_b")
        Ra, Rb = RA.T @ np.asarray(j.R_a, dtype=float), RB.T @ np.asarray(j.R_b, dtype=float)
        cut_specs.append(dict(name=j.name, kind={"fixed": "weld"}.get(kind, kind),
                              body_a=None if a == "0" else a, point_a=RA.T @ (pa - oA),
                              body_b=None if b == "0" else b, point_b=RB.T @ (pb - oB),
                              axis=Ra[:, 2], axis_b=Rb[:, 2], rotation=Ra @ Rb.T))
    model = TreeModel.from_bodies(bodies, gravity=g, cuts=cut_specs)
    _check_inertia(model, names)
    tree_out = SpatialTree(model, net, index, {b: f for b, f in frames.items() if b != "0"}, jcoord, names,
                           components)
    tree_out.joints = {j.name: j for j in js}
    tree_out.prescribed = {label: (components[key], motion) for key, (label, motion) in timed.items()}
    if load_elements:
        tree_out.loads = SpatialLoads(tree_out, load_elements, params)
    return tree_out


def _pose_of(values, body):
    """``(origin, R)`` of a body from absolute names (``x_b`` … ``e3_b``; those missing 0, e0 1), None when
    none is given."""
    ib = identifier(body)
    keys = [f"{a}_{ib}" for a in AXES] + [f"e{k}_{ib}" for k in range(4)]
    if body == "0":
        return np.zeros(3), np.eye(3)
    if not any(k in values for k in keys):
        return None
    # what the symbolic start assumes of a coordinate not given: 0, and e0 = 1
    e = np.array([float(values.get(k, 1.0 if k.startswith("e0_") else 0.0)) for k in keys[3:]])
    e = e / np.linalg.norm(e)
    return np.array([float(values.get(k, 0.0)) for k in keys[:3]]), np.array(quat_matrix(e), dtype=float)


def coordinates_from_poses(tree: Any, values: Any) -> dict[str, float]:
    """Tree coordinates ``{name: value}`` from absolute body poses (``x_<b>``…``e3_<b>``, the absolute
    formulation's names, as a stored assembly holds them), for every tree joint whose two bodies are given.

    >>> from netdyn import Network
    >>> from netdyn.components.spatial import RigidBody, Revolute
    >>> net = Network()
    >>> _ = net.add(RigidBody("arm", 1.0, (1, 1, 1)), Revolute("A", "ground", (0, 0, 0), "arm", (0, 0, 0)))
    >>> turned = {"x_arm": 0, "y_arm": 0, "z_arm": 0, "e0_arm": 0.0, "e1_arm": 0, "e2_arm": 0, "e3_arm": 1.0}
    >>> coordinates_from_poses(tree_from_spatial_network(net), turned)      # half a turn about z
    {'thetaz_A': 3.141592653589793}
    """
    out = {}
    for j in tree.joints.values():
        comps = [c for (jn, c) in tree.components if jn == j.name]
        if not comps:
            continue
        A, B = _pose_of(values, j.bodies[0]), _pose_of(values, j.bodies[1])
        if A is None or B is None:
            continue
        Pa = A[0] + A[1] @ np.array([float(x) for x in j.point_a])
        Pb = B[0] + B[1] @ np.array([float(x) for x in j.point_b])
        Ra, Rb = A[1] @ np.asarray(j.R_a, dtype=float), B[1] @ np.asarray(j.R_b, dtype=float)
        d, R = Ra.T @ (Pb - Pa), Ra.T @ Rb
        zyx = (np.arctan2(R[2, 1], R[2, 2]), np.arcsin(np.clip(-R[2, 0], -1, 1)), np.arctan2(R[1, 0], R[0, 0]))
        for c in comps:
            k = tree.components[(j.name, c)]
            if c in AXES:
                value = d[AXES.index(c)]
            elif getattr(j, "floating", False):  # R = Rz Ry Rx: the angles about x, y, z
                value = zyx[AXES.index(c[1])]
            elif isinstance(j, Universal):
                value = np.arctan2(-R[1, 2], R[2, 2]) if c == "rx" else np.arctan2(R[0, 2], R[0, 0])
            else:
                a, b = [(AXES.index(c[1]) + s) % 3 for s in (1, 2)]
                value = np.arctan2(R[b, a] - R[a, b], R[a, a] + R[b, b])  # the angle about axis c
            out[tree.coordinate_names[k]] = float(value)
    return out
