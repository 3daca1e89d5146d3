"""Recursive dynamics (netdyn.recursive): trees against Pinocchio, closed chains against the
least-squares path and the DAE multipliers, energy balance, the 3-RRR of issue 14."""
import numpy as np
import pytest

from netdyn.errors import ModelError
from netdyn.recursive import TreeData, TreeModel, aba, crba, energy, rnea
from netdyn.recursive import reference as ref

pin = pytest.importorskip("pinocchio")


def random_tree(n, seed, planar=False, prismatic=True):
    """A random tree of n bodies (random parents, axes, placements, inertias) and its Pinocchio twin."""
    rng = np.random.default_rng(seed)
    bodies = []
    for i in range(n):
        parent = None if i == 0 else f"b{rng.integers(max(0, i - 3), i)}"
        joint = "prismatic" if prismatic and rng.random() < 0.3 else "revolute"
        if planar:
            axis = (0, 0, 1) if joint == "revolute" else (*rng.normal(size=2), 0)
            rot, trans = rng.uniform(-np.pi, np.pi), (*rng.normal(size=2), 0)
            com = (*rng.normal(size=2), 0)
        else:
            axis = rng.normal(size=3)
            A = rng.normal(size=(3, 3))
            rot = np.linalg.qr(A)[0] * np.sign(np.linalg.det(np.linalg.qr(A)[0]))
            trans, com = rng.normal(size=3), rng.normal(size=3)
        B = rng.normal(size=(3, 3))
        bodies.append(dict(name=f"b{i}", parent=parent, joint=joint, axis=axis, rotation=rot, translation=trans,
                           mass=rng.uniform(0.5, 2), com=com, inertia=B @ B.T + 0.1 * np.eye(3)))
    model = TreeModel.from_bodies(bodies, gravity=(0, -9.81, 0) if planar else rng.normal(size=3))
    return model, to_pinocchio(model)


def to_pinocchio(model):
    pm = pin.Model()
    ids = []
    for i in range(model.n):
        parent = 0 if model.parent[i] < 0 else ids[model.parent[i]]
        placement = pin.SE3(model.rotation[i], model.translation[i])
        joint = (pin.JointModelRevoluteUnaligned if model.jtype[i] == 0 else pin.JointModelPrismaticUnaligned)(
            model.axis[i])
        jid = pm.addJoint(parent, joint, placement, model.body_names[i])
        pm.appendBodyToJoint(jid, pin.Inertia(model.mass[i], model.com[i], model.inertia[i]), pin.SE3.Identity())
        ids.append(jid)
    pm.gravity.linear = model.gravity
    return pm


@pytest.mark.parametrize("n", [2, 3, 7, 20, 100])
def test_rnea_aba_crba_equal_pinocchio_on_random_spatial_trees(n):
    model, pm = random_tree(n, seed=n)
    pd, data = pm.createData(), TreeData(model)
    rng = np.random.default_rng(100 + n)
    for _ in range(3):
        q, qd, qdd, tau = (rng.normal(size=n) for _ in range(4))
        tau_pin = pin.rnea(pm, pd, q, qd, qdd)
        qdd_pin = pin.aba(pm, pd, q, qd, tau)
        scale = 1 + np.max(np.abs(tau_pin))
        assert np.max(np.abs(rnea(model, data, q, qd, qdd) - tau_pin)) < 1e-10 * scale
        assert np.max(np.abs(aba(model, data, q, qd, tau) - qdd_pin)) < 1e-10 * (1 + np.max(np.abs(qdd_pin)))
        # the mass matrix from Pinocchio's rnea columns: its crba (4.1, either convention) leaves some
        # entries of ancestor pairs zero on these trees, entries its own rnea says are not zero
        z = np.zeros(n)
        M_pin = np.array([pin.rnea(pm, pd, q, z, e) for e in np.eye(n)]).T - pin.rnea(pm, pd, q, z, z)[:, None]
        assert np.max(np.abs(crba(model, data, q) - M_pin)) < 1e-10 * (1 + np.max(np.abs(M_pin)))
        if n <= 20:  # the numpy reference is slow; the same mathematics, written with 6x6 matrices
            assert np.max(np.abs(ref.rnea(model, q, qd, qdd) - tau_pin)) < 1e-10 * scale
            assert np.max(np.abs(ref.aba(model, q, qd, tau) - qdd_pin)) < 1e-10 * (1 + np.max(np.abs(qdd_pin)))
            assert np.allclose(ref.crba(model, q), M_pin, rtol=0, atol=1e-10 * (1 + np.max(np.abs(M_pin))))


@pytest.mark.parametrize("n", [2, 10, 50])
def test_planar_trees_equal_pinocchio_and_energy_matches(n):
    model, pm = random_tree(n, seed=1000 + n, planar=True)
    assert model.planar
    pd, data = pm.createData(), TreeData(model)
    rng = np.random.default_rng(n)
    q, qd, tau = (rng.normal(size=n) for _ in range(3))
    qdd_pin = pin.aba(pm, pd, q, qd, tau)
    assert np.max(np.abs(aba(model, data, q, qd, tau) - qdd_pin)) < 1e-10 * (1 + np.max(np.abs(qdd_pin)))
    T, V = energy(model, data, q, qd)
    assert abs(T - pin.computeKineticEnergy(pm, pd, q, qd)) < 1e-10 * (1 + T)
    assert abs(V - pin.computePotentialEnergy(pm, pd, q)) < 1e-10 * (1 + abs(V))


def test_external_wrenches_and_fixed_joints_against_reference():
    model, pm = random_tree(6, seed=7)
    rng = np.random.default_rng(3)
    # weld a seventh body on body 2: the fixed joint must add its inertia to body 2
    bodies = [dict(name=model.body_names[i], parent=None if model.parent[i] < 0 else model.body_names[model.parent[i]],
                   joint=["revolute", "prismatic"][model.jtype[i]], axis=model.axis[i], rotation=model.rotation[i],
                   translation=model.translation[i], mass=model.mass[i], com=model.com[i], inertia=model.inertia[i])
              for i in range(model.n)]
    bodies.append(dict(name="welded", parent="b2", joint="fixed", translation=(0.3, 0.1, -0.2), rotation=0.4,
                       mass=1.5, com=(0.1, 0.2, 0.0), inertia=np.diag([0.1, 0.2, 0.3])))
    welded = TreeModel.from_bodies(bodies, gravity=model.gravity)
    assert welded.nq == 6
    data = TreeData(welded)
    q, qd, qdd, tau = (rng.normal(size=6) for _ in range(4))
    fext = rng.normal(size=(7, 6))
    assert np.allclose(rnea(welded, data, q, qd, qdd, fext), ref.rnea(welded, q, qd, qdd, fext), atol=1e-11)
    assert np.allclose(aba(welded, data, q, qd, tau, fext), ref.aba(welded, q, qd, tau, fext), atol=1e-11)
    # aba inverts rnea with the same external wrenches
    assert np.allclose(rnea(welded, data, q, qd, aba(welded, data, q, qd, tau, fext), fext), tau, atol=1e-10)


def test_bad_descriptions_raise_model_errors_naming_the_body():
    with pytest.raises(ModelError, match="'b'.*parent 'x'"):
        TreeModel.from_bodies([dict(name="a", parent=None), dict(name="b", parent="x")])
    with pytest.raises(ModelError, match="'a'.*unknown joint 'ball'"):
        TreeModel.from_bodies([dict(name="a", parent=None, joint="ball")])
    with pytest.raises(ModelError, match="'a'.*negative mass"):
        TreeModel.from_bodies([dict(name="a", parent=None, mass=-1)])
    m = TreeModel.chain([1.0, 1.0], [1.0, 1.0])
    with pytest.raises(ModelError, match="3 entries.*2 joint coordinates"):
        aba(m, TreeData(m), [0, 0, 0], [0, 0], [0, 0])
