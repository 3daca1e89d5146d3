"""Pinocchio reference for the spatial chain of :func:`netdyn.linkages.spatial.spatial_chain`.

Each link is a revolute joint about a coordinate axis (``JointModelRX/RY/RZ``) placed at the joint offset in
the parent's joint frame; the link's inertia (mass, centre of mass, tensor about the centre of mass) is
appended to that joint. Gravity is Pinocchio's default ``(0, 0, −9.81)``.

>>> from netdyn.linkages.spatial import chain_parameters
>>> model = pinocchio_chain(chain_parameters(2))
>>> model.nq
2
"""
import numpy as np


def pinocchio_chain(params):
    import pinocchio as pin

    model = pin.Model()
    joint_types = {"x": pin.JointModelRX, "y": pin.JointModelRY, "z": pin.JointModelRZ}
    parent = 0
    for k, axis in enumerate(params["axes"]):
        placement = pin.SE3(np.eye(3), np.asarray(params["offsets"][k], dtype=float))
        jid = model.addJoint(parent, joint_types[axis](), placement, f"J{k}")
        inertia = pin.Inertia(float(params["masses"][k]), np.asarray(params["coms"][k], dtype=float),
                              np.asarray(params["inertias"][k], dtype=float))
        model.appendBodyToJoint(jid, inertia, pin.SE3.Identity())
        parent = jid
    return model


def pinocchio_state(model, q, v):
    """Absolute coordinates of every link (origin, Euler parameters) and their rates, from Pinocchio's
    forward kinematics: ``(Q, F)`` in the order x, y, z, e0..e3 of each link."""
    import pinocchio as pin

    data = model.createData()
    pin.forwardKinematics(model, data, np.asarray(q, float), np.asarray(v, float))
    Q, F = [], []
    for k in range(1, model.njoints):
        M = data.oMi[k]
        quat = pin.Quaternion(M.rotation)
        e = np.array([quat.w, quat.x, quat.y, quat.z])
        w_body = data.v[k].angular                      # body-frame angular velocity
        v_origin = M.rotation @ data.v[k].linear         # velocity of the frame origin, global
        e0, e1, e2, e3 = e
        G = np.array([[-e1, e0, e3, -e2], [-e2, -e3, e0, e1], [-e3, e2, -e1, e0]])
        edot = 0.5 * G.T @ w_body
        Q.extend(list(M.translation) + list(e))
        F.extend(list(v_origin) + list(edot))
    return np.array(Q), np.array(F)
