"""Spatial networks on the recursive engine against Pinocchio's rnea/aba (independent reference).

Random trees — random parents, Revolute / Prismatic / Cylindrical / Universal / Planar / Fixed / general
``Joint`` tree joints with random ``(point, R)`` frames on both bodies, full inertia tensors with an
offset centre of mass — are built through the public API (:class:`netdyn.Network`,
:mod:`netdyn.components.spatial`) and, independently, as a Pinocchio model from the same numbers (joint
frame a as the placement, the joint's own Pinocchio joint model, body inertias in frame b). The joint
efforts (rnea) and accelerations (aba) agree to 1e-10.
"""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from netdyn import Network
from netdyn.components.spatial import (Cylindrical, Fixed, Gravity, Joint, Planar, Prismatic, RigidBody, Revolute,
                                       Universal)
from netdyn.recursive import TreeData, aba, rnea
from netdyn.recursive.spatial import tree_from_spatial_network

pin = pytest.importorskip("pinocchio")

KINDS = ("revolute", "prismatic", "cylindrical", "universal", "planar", "fixed", "joint")


def rotation(rng):
    Q, R = np.linalg.qr(rng.normal(size=(3, 3)))
    Q = Q @ np.diag(np.sign(np.diag(R)))
    return Q if np.linalg.det(Q) > 0 else -Q


def inertia(rng):
    """A full tensor of a real mass distribution: second moments s, principal moments s_y + s_z, …"""
    s = rng.uniform(0.05, 1.0, size=3)
    R = rotation(rng)
    return R @ np.diag([s[1] + s[2], s[0] + s[2], s[0] + s[1]]) @ R.T


def joint_of(kind, name, a, fa, b, fb):
    """The netdyn joint and its Pinocchio joint model (with the coordinate components in order)."""
    if kind == "revolute":
        return Revolute(name, a, fa, b, fb), pin.JointModelRZ(), ["rz"]
    if kind == "prismatic":
        return Prismatic(name, a, fa, b, fb), pin.JointModelPZ(), ["z"]
    if kind == "cylindrical":
        comp = pin.JointModelComposite(pin.JointModelPZ())
        comp.addJoint(pin.JointModelRZ())
        return Cylindrical(name, a, fa, b, fb), comp, ["z", "rz"]
    if kind == "universal":
        comp = pin.JointModelComposite(pin.JointModelRX())
        comp.addJoint(pin.JointModelRY())
        return Universal(name, a, fa, b, fb), comp, ["rx", "ry"]
    if kind == "planar":
        comp = pin.JointModelComposite(pin.JointModelPX())
        comp.addJoint(pin.JointModelPY())
        comp.addJoint(pin.JointModelRZ())
        return Planar(name, a, fa, b, fb), comp, ["x", "y", "rz"]
    if kind == "joint":  # general joint: slide along y, turn about x, the rest held
        comp = pin.JointModelComposite(pin.JointModelPY())
        comp.addJoint(pin.JointModelRX())
        return Joint(name, a, fa, b, fb, position="xz", rotation="yz"), comp, ["y", "rx"]
    return Fixed(name, a, fa, b, fb), None, []


def build(seed, n, kinds):
    rng = np.random.default_rng(seed)
    net = Network("random tree")
    net.add(Gravity(vector=tuple(rng.normal(size=3) * 5)))
    model = pin.Model()
    model.gravity.linear = np.array([float(v) for v in net.elements["gravity"].values.values()])
    joint_id, X, order = {"0": 0}, {"0": pin.SE3.Identity()}, []
    bodies = [f"B{i}" for i in range(n)]
    for i, b in enumerate(bodies):
        parent = "0" if i == 0 else bodies[int(rng.integers(0, i))]
        m, com, J = float(rng.uniform(0.5, 2)), rng.normal(size=3) * 0.3, inertia(rng)
        net.add(RigidBody(b, m, J.tolist(), com=tuple(com)))
        pa, Ra, pb, Rb = rng.normal(size=3) * 0.5, rotation(rng), rng.normal(size=3) * 0.5, rotation(rng)
        kind = kinds[i % len(kinds)]
        el, jm, comps = joint_of(kind, f"J{i}", "ground" if parent == "0" else parent, (tuple(pa), Ra), b,
                                 (tuple(pb), Rb))
        net.add(el)
        # Pinocchio: X[b] is body b's frame in the joint frame it rides on; frame a of the joint is
        # X[parent]·(pa, Ra), a moving joint's frame is frame b, a fixed joint keeps frame b = frame a
        placement = X[parent] * pin.SE3(Ra, pa)
        body_in_b = pin.SE3(Rb, pb).inverse()
        inert = pin.Inertia(m, com, J)
        if jm is None:
            X[b], joint_id[b] = placement * body_in_b, joint_id[parent]
            model.appendBodyToJoint(joint_id[b], X[b].act(inert), pin.SE3.Identity())
            continue
        jid = model.addJoint(joint_id[parent], jm, placement, f"J{i}")
        X[b], joint_id[b] = body_in_b, jid
        model.appendBodyToJoint(jid, X[b].act(inert), pin.SE3.Identity())
        order.append((f"J{i}", jid, comps))
    return net, model, order


def names_in_pinocchio_order(tree, model, order):
    """netdyn coordinate index of each Pinocchio coordinate."""
    idx = []
    for name, jid, comps in sorted(order, key=lambda o: model.joints[o[1]].idx_q):
        idx += [tree.components[(name, c)] for c in comps]
    return np.array(idx, dtype=int)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**31 - 1), n=st.integers(1, 6), shift=st.integers(0, len(KINDS) - 1))
def test_random_trees_match_pinocchio_rnea_and_aba(seed, n, shift):
    kinds = KINDS[shift:] + KINDS[:shift]
    net, model, order = build(seed, n, kinds)
    tree = tree_from_spatial_network(net)
    data, pdata = TreeData(tree.model), model.createData()
    perm = names_in_pinocchio_order(tree, model, order)
    assert model.nq == tree.model.nq == perm.size
    if not perm.size:  # one body welded to the ground: nothing moves
        return
    rng = np.random.default_rng(seed + 1)
    q, v, a = (rng.normal(size=model.nq) for _ in range(3))
    qn, vn, an = (np.zeros(model.nq) for _ in range(3))
    qn[perm], vn[perm], an[perm] = q, v, a
    tau_ref = pin.rnea(model, pdata, q, v, a)
    tau = rnea(tree.model, data, qn, vn, an)[perm]
    assert np.max(np.abs(tau - tau_ref)) < 1e-10 * (1 + np.max(np.abs(tau_ref)))
    acc_ref = pin.aba(model, pdata, q, v, tau_ref)
    acc = aba(tree.model, data, qn, vn, rnea(tree.model, data, qn, vn, an))[perm]
    assert np.max(np.abs(acc - acc_ref)) < 1e-10 * (1 + np.max(np.abs(acc_ref)))
    assert np.max(np.abs(acc - a)) < 1e-9 * (1 + np.max(np.abs(a)))
