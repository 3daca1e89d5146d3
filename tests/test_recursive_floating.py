"""A free-floating base on the recursive engine (issue 25, item 1): a spatial network whose base body has no
joint, read with ``tree_from_spatial_network(net, floating=("base",))`` (a virtual free joint: slides x, y, z,
then turns z, y, x, through massless frames), against Pinocchio's rnea and aba with a JointModelFreeFlyer
root and the same revolute children, built here from the network's own data (not from netdyn's tree).

Pinocchio's free flyer takes ``q = [p, quaternion]`` and the body-frame twist ``v = S(q) q̇`` with
``S = diag(Rᵀ, Rᵀ E)`` (``E`` maps the z-y-x angle rates to the world angular velocity); its acceleration is
``v̇ = S q̈ + Ṡ q̇`` and its efforts satisfy ``τ = Sᵀ τ_pin`` (equal power)."""
import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from netdyn import Network
from netdyn.components.spatial import Gravity, Revolute, RigidBody
from netdyn.recursive import TreeData, aba, rnea
from netdyn.recursive.spatial.tree import tree_from_spatial_network

pin = pytest.importorskip("pinocchio")


def rot(axis, a):
    return Rotation.from_rotvec(a * np.eye(3)[axis]).as_matrix()


def floating_chain(seed, n):
    """A base without a joint and n bodies on revolutes with random axes and points; its Pinocchio twin."""
    rng = np.random.default_rng(seed)
    net, pm = Network(), pin.Model()
    g = rng.normal(size=3)
    net.add(Gravity(vector=tuple(g)))
    pm.gravity.linear = g
    parents, ids = ["base"], {}
    for i in range(n + 1):
        name = "base" if i == 0 else f"b{i}"
        m, com = rng.uniform(0.5, 2.0), rng.normal(size=3) * 0.3
        a, b = rng.uniform(0.2, 1.0, size=2)
        Q = np.linalg.qr(rng.normal(size=(3, 3)))[0]  # principal axes; moments that a real body can have
        J = Q @ np.diag([a, b, rng.uniform(abs(a - b) + 0.05, a + b)]) @ Q.T
        net.add(RigidBody(name, m, J, com=tuple(com)))
        if i == 0:
            jid = pm.addJoint(0, pin.JointModelFreeFlyer(), pin.SE3.Identity(), "base")
        else:
            parent = parents[rng.integers(0, len(parents))]
            axis, point = rng.normal(size=3), rng.normal(size=3)
            axis /= np.linalg.norm(axis)
            net.add(Revolute(f"J{i}", parent, tuple(point), name, (0, 0, 0), axis=tuple(axis)))
            jid = pm.addJoint(ids[parent], pin.JointModelRevoluteUnaligned(axis), pin.SE3(np.eye(3), point), name)
            parents.append(name)
        pm.appendBodyToJoint(jid, pin.Inertia(m, com, J), pin.SE3.Identity())
        ids[name] = jid
    return net, pm


def to_pinocchio_state(q, qd, qdd):
    """(q, v, a) of the free flyer from the virtual joint's (x, y, z, ψ, θ, φ), rates and accelerations, and S."""
    p, (psi, th, ph) = q[:3], q[3:6]
    Rz, Ry, Rx = rot(2, psi), rot(1, th), rot(0, ph)
    R = Rz @ Ry @ Rx
    ez, ey, ex = np.eye(3)[2], np.eye(3)[1], np.eye(3)[0]
    E = np.column_stack([ez, Rz @ ey, Rz @ Ry @ ex])
    S = np.zeros((6, 6))
    S[:3, :3], S[3:, 3:] = R.T, R.T @ E
    v = S @ qd[:6]
    w_world = E @ qd[3:6]
    w_zy = qd[3] * ez + qd[4] * (Rz @ ey)
    Edot = np.column_stack([np.zeros(3), np.cross(qd[3] * ez, Rz @ ey), np.cross(w_zy, Rz @ Ry @ ex)])
    a_lin = R.T @ qdd[:3] - np.cross(R.T @ w_world, R.T @ qd[:3])
    a_ang = R.T @ (E @ qdd[3:6] + Edot @ qd[3:6])
    quat = pin.Quaternion(R).coeffs()  # x, y, z, w
    return (np.concatenate([p, quat, q[6:]]), np.concatenate([v, qd[6:]]),
            np.concatenate([a_lin, a_ang, qdd[6:]]), S)


@pytest.mark.parametrize("seed, n", [(0, 0), (1, 3), (2, 8)])
def test_free_floating_base_matches_pinocchio_free_flyer(seed, n):
    net, pm = floating_chain(seed, n)
    tree = tree_from_spatial_network(net, floating=("base",))
    names = tree.coordinate_names
    assert names[:6] == [f"{c}_base_free" for c in ("sx", "sy", "sz", "thetaz", "thetay", "thetax")]
    assert tree.model.nq == 6 + n and pm.nv == 6 + n
    # the tree numbers the children as the network's breadth-first tree does; Pinocchio as they were added
    order = [pm.names[pm.joints[k].id] for k in range(2, pm.njoints)]
    perm = np.array([*range(6), *[names.index(f"thetaz_J{name[1:]}") for name in order]])
    model, data, pd = tree.model, TreeData(tree.model), pm.createData()
    rng = np.random.default_rng(10 + seed)
    for _ in range(4):
        q, qd, qdd, tau = (rng.normal(size=model.nq) for _ in range(4))
        q[4] = rng.uniform(-1.2, 1.2)  # away from the z-y-x angles' singular pitch
        qp, v, a, S = to_pinocchio_state(q[perm], qd[perm], qdd[perm])
        T = np.eye(model.nq)
        T[:6, :6] = S
        tau_pin = pin.rnea(pm, pd, qp, v, a)
        ours = rnea(model, data, q, qd, qdd)[perm]
        assert np.max(np.abs(ours - T.T @ tau_pin)) < 1e-10 * (1 + np.max(np.abs(tau_pin)))
        a_pin = pin.aba(pm, pd, qp, v, np.linalg.solve(T.T, tau[perm]))
        qdd_ours = aba(model, data, q, qd, tau)[perm]
        _, _, a_ours, _ = to_pinocchio_state(q[perm], qd[perm], qdd_ours)
        assert np.max(np.abs(a_ours - a_pin)) < 1e-10 * (1 + np.max(np.abs(a_pin)))


def test_floating_names_a_body_of_the_network():
    net, _ = floating_chain(0, 1)
    with pytest.raises(Exception, match="not bodies of the network"):
        tree_from_spatial_network(net, floating=("nobody",))
