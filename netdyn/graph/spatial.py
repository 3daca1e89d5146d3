"""Spatial mechanisms: coordinates, energies and constraints from the 3-D bodies and joints on the graph.

Two formulations (``Network.model(formulation=...)``), as for planar linkages:

* ``"absolute"`` (default): every body keeps ``x_<b>, y_<b>, z_<b>`` (origin of its frame) and Euler
  parameters ``e0_<b>..e3_<b>`` with the norm constraint ``<b>[norm]``; every joint contributes its
  constraints (the seed's form). Loops close by themselves.
* ``"relative"``: a spanning tree of the joint graph rooted at ground (breadth-first, shared with the
  planar linkages: :mod:`netdyn.graph.mechanism`) carries joint coordinates — ``theta<axis>_<joint>`` for one
  free rotation, ``s<axis>_<joint>`` for a free slide, Euler parameters ``e0_<joint>, e<k>_<joint>`` (with
  their norm) for two or three free rotations, ``alpha_/beta_<joint>`` for a Cardan joint; every body pose
  is an expression of them; the cut joints (one per independent loop) close the loops with their
  constraints.

>>> from netdyn import Network
>>> from netdyn.components.spatial import RigidBody, Revolute, Gravity
>>> net = Network()
>>> _ = net.add(RigidBody("l1", 1, (0.1, 0.1, 0.01)), RigidBody("l2", 1, (0.1, 0.1, 0.01)), Gravity(),
...             Revolute("A", "ground", (0, 0, 0), "l1", (0, 0, 0), axis=(1, 0, 0)),
...             Revolute("B", "l1", (0, 0, -1), "l2", (0, 0, 0), axis=(0, 1, 0)))
>>> net.model(formulation="relative").coordinate_names
['thetaz_A', 'thetaz_B']
>>> m = net.model()
>>> len(m.coordinates), len(m.constraints), m.metadata["spatial"].gruebler
(14, 12, 2)
"""
from __future__ import annotations


from functools import partial

import sympy as sp

from netdyn.graph import mechanism
from netdyn.graph.deferred import Deferred
from netdyn.graph.mechanism import BodyPart, joint_multipliers
from netdyn.components.spatial import (AXES, COMPONENTS, FREE, GROUND, PRESCRIBED, Gravity, Pose, Universal,
                                       body_omega, quat_conj, quat_matrix, quat_mul)
from netdyn.errors import ElementError, ModelError, TopologyError
from netdyn.symbols import as_expr, identifier

FORMULATIONS = ("absolute", "relative")
NORM_WEIGHT = 10  # scale of the Euler-parameter norm rows (same solution set)


def is_spatial(net):
    """Whether a network holds spatial bodies or elements.

    >>> from netdyn import Network
    >>> is_spatial(Network())
    False
    """
    return any(getattr(b, "spatial", False) for b in net.bodies.values()) or bool(spatial_elements(net))


def spatial_elements(net):
    """The spatial elements (joints, drivers, loads), in insertion order."""
    return [el for el in net.elements.values() if getattr(el, "spatial", False)]


def joints(net):
    return [el for el in spatial_elements(net) if getattr(el, "is_joint", False)]


def drivers(net):
    return [el for el in spatial_elements(net) if getattr(el, "is_driver", False)]


def check_structure(net, extra_joints=()):
    """Planar and spatial bodies mixed, unknown bodies or joints, conflicting drivers, floating bodies:
    each an error naming the culprit. ``extra_joints``: joints that hold bodies besides the network's (the
    recursive tree's virtual free joints)."""
    planar = [b for b, body in net.bodies.items() if not getattr(body, "spatial", False)]
    if planar:
        raise TopologyError(f"bodies {planar} are planar but the network has spatial bodies or joints; build "
                            "the mechanism from netdyn.components.spatial only (a planar mechanism is a spatial "
                            "one with Revolute axes along z)")
    names = {j.name: j for j in joints(net)}
    mechanism.check_names(spatial_elements(net), net.bodies, names)
    seen = {}
    for d in drivers(net):
        j = names[d.joint]
        kind = j.spec[d.component][0]
        if kind != FREE:
            raise ElementError(f"{d.name} prescribes component {d.component} of joint {j.name}, which the joint "
                               f"already {'holds' if kind == 'held' else 'prescribes'}: a component is either free "
                               "(and may be driven) or constrained by the joint, not both; free it in the joint "
                               "or remove the driver")
        key = (d.joint, d.component)
        if key in seen:
            raise ElementError(f"{d.name} and {seen[key]} both prescribe component {d.component} of joint "
                               f"{d.joint}; remove one")
        seen[key] = d.name
    mechanism.check_grounded(net.bodies, joints(net) + list(extra_joints),
                             joint_words="a joint (Revolute, Spherical, Fixed, ...)")




def driven_spec(joint, drivers_of):
    """A joint's component spec with its drivers' motions as prescribed components, and the row labels."""
    spec = dict(joint.spec)
    by = {}
    for d in drivers_of:
        spec[d.component] = (PRESCRIBED, d.values["motion"])
        by[d.component] = d.name
    labels = [by.get(c, f"{joint.name}[{c}]") for c in COMPONENTS if spec[c][0] != FREE]
    return spec, labels


def distribute_power(efforts, coordinates, velocity, effort):
    """Add the generalized efforts ``effort · ∂velocity/∂q̇`` (``velocity`` linear in the coordinate rates)."""
    velocity = sp.sympify(velocity)
    for d in velocity.atoms(sp.Derivative):
        c = d.expr
        if c in coordinates and d.derivative_count == 1:
            coeff = velocity.diff(d)
            if coeff != 0:
                efforts[c] = efforts.get(c, 0) + coeff * effort


class _Context:
    def __init__(self, poses, body_values, joint_coords, joints_by_name):
        self.poses, self._values, self._jc, self._joints = poses, body_values, joint_coords, joints_by_name
        self.bodies = list(poses)

    def pose(self, body):
        return GROUND if body == "0" else self.poses[body]

    def body_values(self, body):
        return self._values[body]

    def joint_coordinate(self, joint, component, who):
        coords = self._jc[joint]
        if not coords:
            raise ElementError(f"{who}: joint {joint} has no free component to act on")
        if component is None:
            rot = [c for c in coords if c.startswith("r")]
            component = rot[0] if rot else next(iter(coords))
        if component not in coords:
            raise ElementError(f"{who}: component {component!r} of joint {joint} is not free "
                               f"(free: {sorted(coords)}); act on a free component")
        value = coords[component]
        if callable(value):
            value = coords[component] = value()
        return value


def _pose_from_coordinates(r, e):
    return Pose(sp.Matrix(r), tuple(e), quat_matrix(e), body_omega(e))


class LazyPose(Pose):
    """The pose :func:`child_pose` gives, written on the first read of ``r``, ``q``, ``R`` or ``omega`` (its
    unwritten ancestors first, from ground outwards, without recursion). Only for joints without Euler
    parameters (no norm rows to report)."""

    def __init__(self, j, parent, qs, parent_is_a, spec):  # noqa: D107 - the dataclass fields come later
        self.__dict__["_args"] = (j, parent, qs, parent_is_a, spec)

    def __getattr__(self, name):
        if name not in ("r", "q", "R", "omega") or "_args" not in self.__dict__:
            raise AttributeError(name)
        chain, pose = [], self
        while isinstance(pose, LazyPose) and "_args" in pose.__dict__:
            chain.append(pose)
            pose = pose.__dict__["_args"][1]
        for lazy in reversed(chain):
            written, _ = child_pose(*lazy.__dict__.pop("_args"))
            lazy.__dict__.update(r=written.r, q=written.q, R=written.R, omega=written.omega)
        return self.__dict__[name]


def child_pose(j, parent, qs, parent_is_a, spec=None):
    """The pose of the body across tree joint ``j`` from its parent's pose and the joint coordinates."""
    d, q_rel, w_rel, norms = j.relative_parts(qs, spec)
    Ra, Rb = sp.Matrix(j.R_a.tolist()), sp.Matrix(j.R_b.tolist())
    Rr = quat_matrix(q_rel)
    if parent_is_a:
        local = Ra * Rr * Rb.T
        R = parent.R * local
        q = quat_mul(quat_mul(quat_mul(parent.q, j.q_a), q_rel), quat_conj(j.q_b))
        Pb = parent.point(j.point_a) + parent.R * Ra * d
        r = Pb - R * sp.Matrix(j.point_b)
        omega = Rb * Rr.T * (Ra.T * parent.omega + w_rel)
    else:
        local = Rb * Rr.T * Ra.T
        R = parent.R * local
        q = quat_mul(quat_mul(quat_mul(parent.q, j.q_b), quat_conj(q_rel)), quat_conj(j.q_a))
        Pa = parent.point(j.point_b) - R * Ra * d
        r = Pa - R * sp.Matrix(j.point_a)
        omega = Ra * Rr * Rb.T * parent.omega - Ra * w_rel
    return Pose(r, q, R, omega), norms


def assemble_spatial(net, formulation, new_coordinate, values_of, cut=None):
    """The :class:`~netdyn.graph.mechanism.BodyPart` of a network; ``new_coordinate(name)`` registers a coordinate."""

    if formulation not in FORMULATIONS:
        raise ModelError(f"unknown spatial formulation {formulation!r}; use one of {FORMULATIONS}")
    check_structure(net)
    js = joints(net)
    by_name = {j.name: j for j in js}
    drivers_of = {j.name: [d for d in drivers(net) if d.joint == j.name] for j in js}
    tree, cuts = mechanism.spanning_tree(js, cut)
    values = {el.name: values_of(el) for el in spatial_elements(net)}
    body_values = {b: values_of(body) for b, body in net.bodies.items()}
    part = BodyPart("spatial")
    created = []

    def new(name):
        c = new_coordinate(name)
        created.append(c)
        return c

    poses, guess, tree_coords = {}, {}, {}
    norm_rows, prescribed_rows = [], []
    if formulation == "absolute":
        for b in net.bodies:
            ib = identifier(b)
            r = [new(f"{a}_{ib}") for a in AXES]
            e = [new(f"e{k}_{ib}") for k in range(4)]
            guess[f"e0_{ib}"] = 1.0
            poses[b] = _pose_from_coordinates(r, e)
            # weighted so that a least-squares assembly that cannot succeed blames a joint, not the norm
            norm_rows.append((NORM_WEIGHT * (sum(x ** 2 for x in e) - 1), f"{b}[norm]", b))
        closing = js
    else:
        for j, parent, child in tree:
            # prescribed components keep a coordinate, held to their motion by a row (its multiplier: the effort)
            loose = {c: ((FREE, None) if kind == PRESCRIBED else (kind, v)) for c, (kind, v) in j.spec.items()}
            names = j.relative_names(loose)
            qs = [new(f"{n}_{identifier(j.name)}") for n in names]
            for n in names:
                if n == "e0":
                    guess[f"e0_{identifier(j.name)}"] = 1.0
            tree_coords[j.name] = qs
            base = GROUND if parent == "0" else poses[parent]
            if any(n == "e0" for n in names):   # Euler parameters: their norm rows are needed now
                poses[child], norms = child_pose(j, base, qs, parent == j.bodies[0], loose)
            else:   # written when first read (a chain's rotations nest: O(n^2) if written eagerly)
                poses[child], norms = LazyPose(j, base, qs, parent == j.bodies[0], loose), []
            norm_rows.extend((n, f"{j.name}[norm]", j.name) for n in norms)
            by_coord = dict(zip(names, qs))
            for c, (kind, v) in j.spec.items():
                if kind != PRESCRIBED:
                    continue
                key = f"s{c}" if c in AXES else f"theta{c[-1]}"
                if key not in by_coord:
                    raise ModelError(f"joint {j.name}: its prescribed component {c} has no joint coordinate in the "
                                     "relative formulation (it is one of several free rotations); use "
                                     "formulation='absolute'")
                prescribed_rows.append((by_coord[key] - v, f"{j.name}[{c}]", j.name))
        poses = {b: poses[b] for b in net.bodies}
        closing = cuts
    # free-component measures of every joint (tree joints: their own coordinates)
    joint_coords = {}
    for j in js:
        pa, pb = (GROUND if b == "0" else poses[b] for b in j.bodies)
        coords = {}
        if j.name in tree_coords:
            loose = {c: ((FREE, None) if kind == PRESCRIBED else (kind, v)) for c, (kind, v) in j.spec.items()}
            names = j.relative_names(loose)
            qs = dict(zip(names, tree_coords[j.name]))
            for c in [c for c in COMPONENTS if loose[c][0] == FREE]:
                if c in AXES and f"s{c}" in qs:
                    coords[c] = qs[f"s{c}"]
                elif isinstance(j, Universal):
                    coords[c] = qs["alpha" if c == "rx" else "beta"]
                elif f"theta{c[-1]}" in qs:
                    coords[c] = qs[f"theta{c[-1]}"]
        else:
            for c in j.free:
                coords[c] = (lambda j=j, pa=pa, pb=pb, c=c: j.coordinate(pa, pb, c))
        joint_coords[j.name] = coords
    ctx = _Context(poses, body_values, joint_coords, by_name)
    coordset = set(created)
    relative = formulation == "relative"
    for b, body in net.bodies.items():  # relative: marked, so that the recursive form knows them (deferred.py)
        if relative:
            part.T.append(Deferred(partial(_kinetic, body, poses[b], body_values[b])))
        else:
            part.T.append(body.contribute(poses[b], body_values[b]).T)
    constraint_index = {}

    def add_rows(owner, rows, labels):
        idx = constraint_index.setdefault(owner, [])
        for row, lab in zip(rows, labels):
            idx.append(len(part.constraints))
            part.constraints.append(row)
            part.labels.append(lab)

    for row, label, owner in norm_rows + prescribed_rows:
        add_rows(owner, [row], [label])
    closing_names = {j.name for j in closing}
    for j in js:
        if j.name not in closing_names:
            continue
        spec, labels = driven_spec(j, drivers_of[j.name])
        pa, pb = (GROUND if b == "0" else poses[b] for b in j.bodies)
        rows = j.constraint_equations(pa, pb, spec)
        if len(rows) != len(labels):  # a Universal joint: one rotation row of its own
            labels = j.constraint_labels(spec)
        add_rows(j.name, rows, labels)
        for d in drivers_of[j.name]:
            constraint_index[d.name] = [i for i in constraint_index[j.name] if part.labels[i] == d.name]
    for j, _, _ in (tree if formulation == "relative" else []):
        for d in drivers_of[j.name]:
            coords = joint_coords[j.name]
            if d.component not in coords:
                raise ModelError(f"{d.name}: in the relative formulation a driver needs a joint coordinate for "
                                 f"component {d.component} of {j.name}; use formulation='absolute'")
            add_rows(d.name, [coords[d.component] - d.values["motion"]], [d.name])
    for el in spatial_elements(net):
        if getattr(el, "is_joint", False) or getattr(el, "is_driver", False):
            continue
        if relative and isinstance(el, Gravity):
            part.V.append(Deferred(partial(_potential, el, _Bodies(poses, body_values), values[el.name])))
            constraint_index.setdefault(el.name, [])
            continue
        c = el.spatial_contribution(ctx, values[el.name])
        part.add_energies(c)
        for vel, effort in c.power:
            distribute_power(part.efforts, coordset, vel, effort)
        add_rows(el.name, c.constraints, c.labels)
    for j in js:
        rot = [c for c in j.free if c.startswith("r")]
        if len(rot) == 1 and rot[0] in joint_coords[j.name]:
            try:
                part.angles[j.name] = ctx.joint_coordinate(j.name, rot[0], j.name)
            except ElementError:
                pass
    n_constraints = sum(len(j.components) for j in js) + len(drivers(net))
    part.metadata = mechanism.MechanismMetadata(
        formulation=formulation, bodies=list(net.bodies), poses=poses, joints=by_name,
        joint_coordinates={k: list(v) for k, v in joint_coords.items()}, constraints=constraint_index,
        tree=[j.name for j, _, _ in tree], cuts=[j.name for j in cuts],
        loops=mechanism.fundamental_loops(tree, cuts), gruebler=6 * len(net.bodies) - n_constraints,
        body_values=body_values, initial_guess=guess, drivers={d.name: d for d in drivers(net)},
        tree_edges=[(j.name, parent, child) for j, parent, child in tree], element_values=values,
        tree_coordinates={k: list(v) for k, v in tree_coords.items()})
    return part


class _Bodies:
    """The poses and body values gravity reads (picklable, unlike the assembly context)."""

    def __init__(self, poses, body_values):
        self.poses, self._values, self.bodies = poses, body_values, list(poses)

    def pose(self, body):
        return GROUND if body == "0" else self.poses[body]

    def body_values(self, body):
        return self._values[body]


def _kinetic(body, pose, values):
    return [body.contribute(pose, values).T]


def _potential(el, bodies, values):
    return [el.spatial_contribution(bodies, values).V]


# ------------------------------------------------------------------------------------------ analysis helpers

def driver_constraint(model, name, motion):
    """The constraint of a kinematic driver ``name`` (a joint, or ``"joint[component]"``) following ``motion``."""
    md = model.metadata["spatial"]
    joint, component = name, None
    if name.endswith("]") and "[" in name:
        joint, component = name[:-1].split("[", 1)
    j = md.joints[joint]
    free = list(md.joint_coordinates[joint])
    if not free:
        raise ModelError(f"joint {joint!r} has no free component to drive (it is fixed); drive another joint")
    component = component or free[0]
    if component not in free:
        raise ModelError(f"component {component!r} of joint {joint!r} is not free (free: {free})")
    motion = as_expr(motion)
    if md.formulation == "relative" and joint in md.tree:
        names = j.relative_names({c: ((FREE, None) if k == PRESCRIBED else (k, v)) for c, (k, v) in j.spec.items()})
        key = f"s{component}" if component in AXES else f"theta{component[-1]}"
        if isinstance(j, Universal):
            key = "alpha" if component == "rx" else "beta"
        if key not in names:
            raise ModelError(f"joint {joint!r}: component {component} has no coordinate in the relative "
                             "formulation; use formulation='absolute'")
        return model.coordinate(f"{key}_{_ident(joint)}") - motion
    pa, pb = (GROUND if b == "0" else md.poses[b] for b in j.bodies)
    spec = dict(j.spec)
    spec[component] = (PRESCRIBED, motion)
    only = {c: (FREE, None) for c in COMPONENTS}
    only[component] = spec[component]
    if component in AXES:
        return j.constraint_equations(pa, pb, only)[0]
    if isinstance(j, Universal):
        return j.coordinate(pa, pb, component) - motion
    # rotation: the error of the joint's own prescribed rotation and this one
    for c in COMPONENTS:
        if c.startswith("r") and c != component and spec[c][0] != FREE:
            only[c] = spec[c]
    rows = j.rotation_equations(pa, pb, only)
    kinds = [c for c in ("rx", "ry", "rz") if only[c][0] != FREE]
    return rows[kinds.index(component)]


def _ident(name):
    return identifier(name)


def reaction_expressions(model, joint):
    """``[Fx, Fy, Fz, Mx, My, Mz]``: the force and the moment about the origin of frame b that ``body_a``
    exerts on ``body_b``, in frame a, as expressions of the coordinates and multipliers (absolute
    formulation, or a cut joint of the relative one)."""

    md = model.metadata["spatial"]
    if joint not in md.joints:
        raise ModelError(f"no spatial joint named {joint!r}; the joints are {sorted(md['joints'])}")
    j = md.joints[joint]
    drivers_here = [d for d in md.drivers.values() if d.joint == joint]
    spec, labels = driven_spec(j, drivers_here)
    if len(labels) != len(j.constraint_equations(GROUND, GROUND, spec)):
        labels = j.constraint_labels(spec)
    lam = joint_multipliers(model, joint, labels, md.formulation)
    # symbolic poses of the two bodies, differentiated with respect to body b's coordinates
    rs = [sp.symbols(f"r{a}_{k}") for k in range(2) for a in AXES]
    es = [sp.symbols(f"q{i}_{k}") for k in range(2) for i in range(4)]
    sym = [Pose(sp.Matrix(rs[3 * k:3 * k + 3]), tuple(es[4 * k:4 * k + 4]), quat_matrix(es[4 * k:4 * k + 4]),
                sp.zeros(3, 1)) for k in range(2)]
    real = [GROUND if b == "0" else md.poses[b] for b in j.bodies]
    on = 1 if j.bodies[1] != "0" else 0
    pa = sym[0] if j.bodies[0] != "0" else GROUND
    pb = sym[1] if j.bodies[1] != "0" else GROUND
    phi = j.constraint_equations(pa, pb, spec)
    own = sym[on]
    sub = {}
    for k in range(2):
        if j.bodies[k] != "0":
            sub.update(dict(zip(list(sym[k].r) + list(sym[k].q), list(real[k].r) + list(real[k].q))))
    F = [-sp.Add(*[sp.diff(ph, s) * lm for ph, lm in zip(phi, lam)]) for s in own.r]
    Qe = sp.Matrix([-sp.Add(*[sp.diff(ph, s) * lm for ph, lm in zip(phi, lam)]) for s in own.q])
    e0, e1, e2, e3 = own.q
    G = sp.Matrix([[-e1, e0, e3, -e2], [-e2, -e3, e0, e1], [-e3, e2, -e1, e0]])
    n_body = G * Qe / 2                      # moment about the body origin, body frame
    F = sp.Matrix(F)
    M = own.R * n_body                        # global
    Pb = pb.point(j.point_b)
    Mb = M + (own.r - Pb).cross(F)           # moment about the origin of frame b
    if on == 0:  # body_b is ground: action and reaction
        F, Mb = -F, -Mb
    _, Ra, _, _ = j.frames(pa, pb)
    out = list(Ra.T * F) + list(Ra.T * Mb)
    return [sp.sympify(e).xreplace(sub) for e in out]


def absolute_expressions(model):
    """Coordinate name of the absolute formulation -> its expression in this model's coordinates."""
    md = model.metadata["spatial"]
    out = {}
    for b in md.bodies:
        ib = _ident(b)
        pose = md.poses[b]
        for a, v in zip(AXES, pose.r):
            out[f"{a}_{ib}"] = sp.sympify(v)
        for k, v in enumerate(pose.q):
            out[f"e{k}_{ib}"] = sp.sympify(v)
    return out
