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
        # the mass matrix from Pinocchio's rnea columns: its crba fills M by subtree blocks and so expects
        # every subtree's joints numbered contiguously (depth first); these random trees number bodies in
        # any parent-before-child order, which netdyn allows, and Pinocchio's crba then leaves entries zero
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
    # aba() took the 3-D planar kernel; the 6-D kernel on the same tree agrees too
    from netdyn.recursive import kernels
    qdd6 = kernels.aba(model.ints, model.geom, model.gravity, q, qd, tau, data.fext, data.work, np.zeros(n))
    assert np.max(np.abs(qdd6 - qdd_pin)) < 1e-10 * (1 + np.max(np.abs(qdd_pin)))
    fext = np.random.default_rng(1).normal(size=(n, 6))
    assert np.allclose(aba(model, data, q, qd, tau, fext), ref.aba(model, q, qd, tau, fext), atol=1e-9)
    T, V = energy(model, data, q, qd)
    assert abs(T - pin.computeKineticEnergy(pm, pd, q, qd)) < 1e-10 * (1 + T)
    assert abs(V - pin.computePotentialEnergy(pm, pd, q)) < 1e-10 * (1 + abs(V))


@pytest.mark.parametrize("n, planar", [(1, True), (8, True), (30, True), (6, False), (25, False)])
def test_rnea_over_a_motion_equals_pinocchio_at_every_time(n, planar):
    """rnea_motion (one compiled call over the times; the 3-D planar kernel on a planar tree, with slides)
    against Pinocchio's rnea at each time."""
    from netdyn.recursive.algorithms import rnea_motion
    model, pm = random_tree(n, seed=7 * n, planar=planar)
    assert model.planar == planar
    pd, data = pm.createData(), TreeData(model)
    rng = np.random.default_rng(n)
    Q, QD, QDD = (rng.normal(size=(n, 13)) for _ in range(3))
    tau = rnea_motion(model, data, Q, QD, QDD)
    ref_tau = np.array([pin.rnea(pm, pd, Q[:, k], QD[:, k], QDD[:, k]) for k in range(13)]).T
    assert tau.shape == (n, 13)
    assert np.max(np.abs(tau - ref_tau)) < 1e-10 * (1 + np.max(np.abs(ref_tau)))
    with pytest.raises(ModelError, match="nq"):
        rnea_motion(model, data, Q[:-1] if n > 1 else Q.ravel(), QD, QDD)


def test_planar_rnea_kernel_with_fixed_joints_and_wrenches_equals_the_spatial_kernel():
    from netdyn.recursive import kernels
    from netdyn.recursive.algorithms import planar_geometry
    from netdyn.recursive.planar_kernels import rnea_planar
    rng = np.random.default_rng(3)
    bodies = [dict(name=f"b{i}", parent=None if i == 0 else f"b{rng.integers(0, i)}",
                   joint="revolute" if i == 0 else ("revolute", "prismatic", "fixed")[i % 3],
                   axis=(0, 0, -1) if i % 3 == 0 else (*rng.normal(size=2), 0), rotation=rng.uniform(-3, 3),
                   translation=(*rng.normal(size=2), 0), mass=rng.uniform(0.5, 2), com=(*rng.normal(size=2), 0),
                   inertia=rng.uniform(0.1, 1)) for i in range(9)]
    model = TreeModel.from_bodies(bodies, gravity=(0.4, -9.81, 0))
    data = TreeData(model)
    assert model.planar
    for _ in range(3):
        q, qd, qdd = (rng.normal(size=model.nq) for _ in range(3))
        fext = np.zeros((model.n, 6))
        fext[:, 2:5] = rng.normal(size=(model.n, 3))  # in-plane wrenches: n_z, f_x, f_y
        six = kernels.rnea(model.ints, model.geom, model.gravity, q, qd, qdd, fext, data.work, np.zeros(model.nq))
        three = rnea_planar(model.ints, planar_geometry(model), model.gravity, q, qd, qdd, fext, data.pwork,
                            np.zeros(model.nq))
        assert np.max(np.abs(six - three)) < 1e-12 * (1 + np.max(np.abs(six)))


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


# ------------------------------------------------------------------------------ planar networks
def _slider_weld_net():
    from netdyn import Network
    from netdyn.components.planar import Gravity, Prismatic, Revolute, RigidBody, Weld
    net = Network()
    net.add(Gravity(), RigidBody("crank", 1, 0.1), RigidBody("rod", 2, 0.3), RigidBody("block", 0.5, 0.05),
            RigidBody("w", 0.7, 0.02), RigidBody("blk", 1, 0.1),
            Revolute("O", "ground", (0, 0), "crank", (-0.25, 0)), Revolute("A", "crank", (0.25, 0), "rod", (-0.6, 0)),
            Revolute("B", "rod", (0.6, 0), "block", (0.1, 0.05)),
            Prismatic("P", "ground", (0, 0.1), "block", (0.2, 0), axis=(1, 0.2), angle=0.3),
            Weld("W", "rod", (0.1, 0.1), "w", (0.2, -0.1), angle=0.4),
            Prismatic("Q", "blk", (0.1, 0.2), "ground", (0.3, -0.1), axis=(1, 0.5), angle=0.2),
            Revolute("S", "blk", (-0.1, 0.2), "w", (0.3, 0.1)))
    return net


def _mass_and_bias_match_the_relative_model(net, tree, seed):
    """Assert that the tree of ``net`` has the mass matrix and bias of netdyn's relative model of it at a
    random state; return the tree model, its data, the state ``q, qd`` (tree order), the random generator
    that drew it and the compiled model with the state in its order ``(cm, Q, F, p, order)``."""
    from netdyn.numerics.functions.compiled import compile_model

    m, d = tree.model, TreeData(tree.model)
    rel = net.model(formulation="relative")
    cm = compile_model(rel)
    p = cm.parameter_vector()
    order = [rel.coordinate_names.index(n) for n in tree.coordinate_names]
    assert sorted(order) == list(range(len(rel.coordinate_names)))
    rng = np.random.default_rng(seed)
    q, qd = rng.normal(size=m.nq), rng.normal(size=m.nq)
    Q, F = np.zeros(m.nq), np.zeros(m.nq)
    Q[order], F[order] = q, qd
    M, h = cm.dynamics(0.0, Q, F, p)
    assert np.allclose(crba(m, d, q), M[np.ix_(order, order)], rtol=0, atol=1e-12)
    assert np.allclose(rnea(m, d, q, qd, np.zeros(m.nq)), h[order], rtol=0, atol=1e-12)
    return m, d, q, qd, rng, (cm, Q, F, p, order)


@pytest.mark.parametrize("which", ["five_bar", "three_rrr", "slider_weld"])
def test_tree_from_network_matches_the_symbolic_relative_formulation(which):
    """Mass matrix, bias, cut constraints, their Jacobian and bias against netdyn's relative model."""
    from netdyn import linkages
    from netdyn.recursive.constraints import constraint_terms, constraint_terms_reference
    from netdyn.recursive.planar import tree_from_network

    net = {"five_bar": lambda: linkages.five_bar()[0], "three_rrr": lambda: linkages.three_rrr()[0],
           "slider_weld": _slider_weld_net}[which]()
    tree = tree_from_network(net)
    m, d, q, qd, rng, (cm, Q, F, p, order) = _mass_and_bias_match_the_relative_model(net, tree, seed=5)
    c = cm.constraints(0.0, Q, F, p)
    phi, J, b = constraint_terms(m, d, q, qd)
    s = np.sign(phi) * np.sign(c.phi)  # netdyn writes P_a − P_b where the tree writes P_b − P_a
    assert np.allclose(s * c.phi, phi, atol=1e-12)
    assert np.allclose(s[:, None] * c.Phi_q[:, order], J, atol=1e-12)
    assert np.allclose(s * c.gamma_phi, b, atol=1e-12)
    for x, y in zip((phi, J, b), constraint_terms_reference(m, d, q, qd)):  # compiled vs numpy
        assert np.allclose(x, y, rtol=0, atol=1e-13)
    from netdyn.recursive.closed import cut_wrenches  # the reactions as body wrenches do the work Jᵀ λ
    lam = rng.normal(size=m.m)
    fext = cut_wrenches(m, d, lam)
    z = np.zeros(m.nq)
    assert np.allclose(rnea(m, d, q, z, z) - rnea(m, d, q, z, z, fext), J.T @ lam, atol=1e-12)


def _feed_back_drivers():
    import sympy as sp
    from netdyn import t
    return {"J1": 1.9 + 0.3 * sp.sin(2 * t), "J2": 1.2 - 0.2 * sp.sin(3 * t)}


def test_inverse_dynamics_hook_recursive_equals_least_squares_five_bar():
    import netdyn
    from netdyn.linkages import five_bar
    net, guess = five_bar()
    tt = np.linspace(0, 1, 21)
    rec = netdyn.inverse_dynamics(net, _feed_back_drivers(), tt, guess=guess)
    ls = netdyn.inverse_dynamics(net, _feed_back_drivers(), tt, guess=guess, method="least-squares")
    assert rec.method == "recursive" and ls.method == "inverse"
    scale = max(np.max(np.abs(v)) for v in ls.efforts.values())
    for j in ("J1", "J2"):
        assert np.max(np.abs(rec.efforts[j] - ls.efforts[j])) < 1e-9 * scale
    for j in ("J1", "J2", "E1", "E2", "P"):
        R = ls.reaction(j)
        assert np.max(np.abs(rec.reaction(j) - R)) < 1e-9 * (1 + np.max(np.abs(R))), j
    for c in ls.model.coordinate_names:
        assert np.max(np.abs(rec[c] - ls[c])) < 1e-9, c
    assert np.allclose(rec.energy(), ls.energy(), atol=1e-9)  # delegated to the least-squares solution


def test_inverse_dynamics_hook_on_a_tree_and_its_fallbacks():
    import sympy as sp
    import netdyn
    from netdyn import t
    from netdyn.components.planar import Torque
    from netdyn.linkages import pendulum
    from netdyn.recursive.planar import NotRecursive
    net = pendulum([1.0, 2.0, 0.5], [1.0, 0.7, 0.4])
    drivers = {"J1": sp.sin(t), "J2": 0.3 * t ** 2, "J3": sp.cos(2 * t)}
    tt = np.linspace(0, 1, 11)
    rec = netdyn.inverse_dynamics(net, drivers, tt)
    ls = netdyn.inverse_dynamics(net, drivers, tt, method="least-squares")
    for j in drivers:
        assert np.max(np.abs(rec.efforts[j] - ls.efforts[j])) < 1e-9 * (1 + np.max(np.abs(ls.efforts[j])))
        assert np.max(np.abs(rec.reaction(j) - ls.reaction(j))) < 1e-9 * (1 + np.max(np.abs(ls.reaction(j))))
    # a driver on a cut joint, or an element the recursion does not evaluate: the least-squares path
    net.add(Torque("tau", "link1", 1.0))
    assert netdyn.inverse_dynamics(net, drivers, tt).method == "inverse"
    with pytest.raises(NotRecursive, match="tau"):
        netdyn.inverse_dynamics(net, drivers, tt, method="recursive")


# ------------------------------------------------------------------------------ the 3-RRR of issue 14
@pytest.fixture(scope="module")
def rrr():
    from netdyn.linkages.parallel import circle, three_rrr
    mech, traj = three_rrr(), circle()
    return mech, traj, mech.inverse_dynamics(np.linspace(0, 2, 201), traj)


def test_three_rrr_efforts_equal_least_squares_and_reactions(rrr):
    from netdyn.analysis.inverse import multipliers_from_motion
    from netdyn.analysis.kinematics import with_drivers
    from netdyn.linkages.parallel import absolute_motion
    mech, traj, res = rrr
    assert res.efforts.shape == (3, 201) and not res.redundant
    model = with_drivers(mech.network().model(), {j: 0 for j in mech.actuated})
    sub = slice(0, 201, 25)
    q, f, acc = absolute_motion(mech, res, model.coordinate_names)
    ls = multipliers_from_motion(model, res.t[sub], q[:, sub], f[:, sub], acc[:, sub])
    labels = ls.model.constraint_labels
    scale = np.max(np.abs(res.efforts))
    for k, j in enumerate(mech.actuated):
        assert np.max(np.abs(-ls.lam[labels.index(f"driver {j}")] - res.efforts[k, sub])) < 1e-9 * scale
    for k in range(3):  # the pin B_k: force of the distal link on the platform
        R = ls.reaction(f"B{k + 1}")[:2]
        assert np.max(np.abs(R - res.lam[2 * k:2 * k + 2, sub])) < 1e-9 * scale


def test_three_rrr_dae_multipliers_and_power_balance(rrr):
    from netdyn.recursive.closed import forward_dynamics
    mech, traj, res = rrr
    act = [mech.coordinate[j] for j in mech.actuated]
    for k in range(0, 201, 20):  # the efforts drive the forward dynamics (KKT) to the same q̈ and multipliers
        tau = np.zeros(mech.tree.nq)
        tau[act] = res.efforts[:, k]
        qdd, lam = forward_dynamics(mech.tree, mech.data, res.q[:, k], res.qd[:, k], tau)
        assert np.max(np.abs(qdd - res.qdd[:, k])) < 1e-9
        assert np.max(np.abs(lam - res.lam[:, k])) < 1e-9 * np.max(np.abs(res.lam))
    # actuator power = d(T + V)/dt, the derivative by a five-point stencil of the energy (h = 1e-4: its
    # truncation error falls like h^4, 1e-3 at h = 1e-2, 1e-11 at h = 1e-4; round-off ~1e-11)
    h, ts = 1e-4, np.linspace(0.1, 1.9, 7)
    offsets = np.array([-2, -1, 1, 2]) * h
    weights = np.array([1, -8, 8, -1]) / (12 * h)
    for t0 in ts:
        r = mech.inverse_dynamics(t0 + offsets, traj)
        E = np.array([mech.energy(r.q[:, k], r.qd[:, k]) for k in range(4)])
        power = mech.inverse_dynamics([t0], traj).power()[0]
        assert abs(weights @ E - power) < 1e-9 * max(1.0, np.max(np.abs(res.power())))


def test_three_rrr_efforts_fed_back_reproduce_the_motion(rrr):
    from netdyn.recursive.integrate import integrate
    mech, traj, _ = rrr
    tt = np.linspace(0, 0.3, 31)
    res = mech.inverse_dynamics(tt, traj)
    act = [mech.coordinate[j] for j in mech.actuated]

    def tau(t, q, qd):
        out = np.zeros(mech.tree.nq)
        out[act] = mech.inverse_dynamics([t], traj).efforts[:, 0]
        return out

    out = integrate(mech.tree, (0, tt[-1]), res.q[:, 0], res.qd[:, 0], tau=tau, t_eval=tt, rtol=1e-10, atol=1e-10)
    assert np.max(np.abs(out["q"] - res.q)) < 1e-6
    assert np.max(np.abs(out["qd"] - res.qd)) < 1e-6


def test_redundant_actuation_gives_least_norm_efforts(rrr):
    from netdyn.recursive.closed import constraint_terms, denoc_inverse_dynamics
    mech, traj, res = rrr
    act = [mech.coordinate[j] for j in ("A1", "A2", "A3", "E1")]
    k = 37
    red = denoc_inverse_dynamics(mech.tree, mech.data, res.q[:, k], res.qd[:, k], res.qdd[:, k], act)
    assert red.redundant
    _, J, _ = constraint_terms(mech.tree, mech.data, res.q[:, k])
    tau = rnea(mech.tree, mech.data, res.q[:, k], res.qd[:, k], res.qdd[:, k])
    gen = np.zeros(mech.tree.nq)
    gen[act] = red.efforts
    assert np.allclose(gen + J.T @ red.lam, tau, atol=1e-9)
    # least norm: no effort pattern that the loops can absorb (N^T S_a x = 0) is mixed in
    N = np.linalg.svd(J)[2][J.shape[0]:].T
    null = np.linalg.svd(N[act].T)[2][N.shape[1]:]
    assert null.shape[0] == 1 and abs(null @ red.efforts) < 1e-9 * np.linalg.norm(red.efforts)
    assert np.linalg.norm(red.efforts) < np.linalg.norm(res.efforts[:, k])  # sharing lowers the norm


@pytest.mark.parametrize("builder", ["three_rpr", "five_bar"])
def test_other_parallel_manipulators_equal_least_squares(builder):
    from netdyn.linkages import parallel as lp
    from netdyn.analysis.inverse import multipliers_from_motion
    from netdyn.analysis.kinematics import with_drivers
    mech = getattr(lp, builder)()
    traj = lp.circle(phi=0.6) if builder == "three_rpr" else lp.circle(centre=(0.25, 0.7), radius=0.1, omega=3)
    res = mech.inverse_dynamics(np.linspace(0, 1, 5), traj)
    model = with_drivers(mech.network().model(), {j: 0 for j in mech.actuated})
    q, f, acc = lp.absolute_motion(mech, res, model.coordinate_names)
    ls = multipliers_from_motion(model, res.t, q, f, acc)
    for k, j in enumerate(mech.actuated):
        ref_eff = -ls.lam[ls.model.constraint_labels.index(f"driver {j}")]
        assert np.max(np.abs(ref_eff - res.efforts[k])) < 1e-9 * np.max(np.abs(res.efforts))


# ------------------------------------------------------------------------------ spatial closed chain
def test_spatial_closed_chain_inverse_and_forward_dynamics_agree():
    """Two spatial legs from the ground meeting at a ball joint: DeNOC inverse dynamics, the KKT
    forward dynamics' accelerations and multipliers, and the tree's efforts with the cut reactions."""
    from netdyn.recursive.closed import (closed_kinematics, constraint_terms, cut_wrenches, denoc_inverse_dynamics,
                                         forward_dynamics)
    rng = np.random.default_rng(11)
    bodies = []
    for leg, base in (("a", (0, 0, 0)), ("b", (1.0, 0, 0))):
        for k, axis in enumerate([(0, 0, 1), (0, 1, 0), (0, 1, 0)]):
            B = rng.normal(size=(3, 3))
            bodies.append(dict(name=f"{leg}{k}", parent=None if k == 0 else f"{leg}{k - 1}", axis=axis,
                               translation=base if k == 0 else (0.5, 0, 0), mass=1 + rng.random(),
                               com=(0.25, 0.02, 0.01), inertia=B @ B.T / 10 + 0.01 * np.eye(3)))
    model = TreeModel.from_bodies(bodies, gravity=(0, 0, -9.81), cuts=[
        dict(name="ball", kind="spherical", body_a="a2", point_a=(0.5, 0, 0), body_b="b2", point_b=(0.5, 0, 0))])
    data = TreeData(model)
    assert model.m == 3 and not model.planar
    # a configuration with the loop closed: move a's joints, solve b's
    q0 = np.array([0.5, -0.3, 0.2, 2.6, -0.3, 0.5])
    T = 3
    pres = {i: (q0[i] + 0.1 * np.sin(np.arange(T)), 0.2 * np.cos(np.arange(T)), -0.1 * np.ones(T)) for i in (0, 1, 2)}
    q, qd, qdd = closed_kinematics(model, data, pres, q0)
    for k in range(T):
        phi, J, _ = constraint_terms(model, data, q[:, k], qd[:, k])
        assert np.max(np.abs(phi)) < 1e-11 and np.max(np.abs(J @ qd[:, k])) < 1e-11
    act = [0, 1, 2]
    inv = denoc_inverse_dynamics(model, data, q, qd, qdd, act)
    for k in range(T):
        tau = np.zeros(6)
        tau[act] = inv.efforts[:, k]
        acc, lam = forward_dynamics(model, data, q[:, k], qd[:, k], tau)
        assert np.max(np.abs(acc - qdd[:, k])) < 1e-9 and np.max(np.abs(lam - inv.lam[:, k])) < 1e-9
        # the cut reactions as external wrenches: rnea gives exactly the actuator efforts
        constraint_terms(model, data, q[:, k], qd[:, k])
        fext = cut_wrenches(model, data, inv.lam[:, k])
        assert np.allclose(rnea(model, data, q[:, k], qd[:, k], qdd[:, k], fext), tau, atol=1e-9)


# ------------------------------------------------------------------------------ forward dynamics
def test_simulate_recursive_matches_the_symbolic_path_on_a_closed_chain():
    import netdyn
    from netdyn.linkages import five_bar
    net, guess = five_bar()
    tt = np.linspace(0, 1, 11)
    q0 = {"theta_c1": 1.9, "theta_c2": 1.2}
    rec = netdyn.simulate(net, (0, 1), q0=q0, guess=guess, t_eval=tt, rtol=1e-10, method="recursive")
    ref_sol = netdyn.simulate(net, (0, 1), q0=q0, guess=guess, t_eval=tt, rtol=1e-10)
    assert rec.method == "recursive"
    for name in ("theta_c1", "theta_k2", "x_k1", "y_k2"):
        assert np.max(np.abs(rec[name] - ref_sol[name])) < 1e-6, name
    E = rec.energy()
    assert np.ptp(E) < 1e-7 * (1 + np.max(np.abs(E)))


def test_integrate_a_long_chain_matches_pinocchio_and_dop853():
    from scipy.integrate import solve_ivp

    from netdyn.recursive.integrate import integrate
    from tests.references.pendulum import pinocchio_pendulum
    n = 10
    model = TreeModel.chain([1.0] * n, [1.0] * n)
    pm = pinocchio_pendulum(n, [1.0] * n, [1.0] * n)
    pd = pm.createData()
    q0 = np.zeros(n)
    q0[0] = -np.pi / 4
    tt = np.linspace(0, 1, 11)
    out = integrate(model, (0, 1), q0, np.zeros(n), t_eval=tt, rtol=1e-10, atol=1e-10)
    ref_sol = solve_ivp(lambda t, y: np.concatenate([y[n:], pin.aba(pm, pd, y[:n], y[n:], np.zeros(n))]), (0, 1),
                        np.concatenate([q0, np.zeros(n)]), method="DOP853", t_eval=tt, rtol=1e-10, atol=1e-10)
    assert np.max(np.abs(out["q"] - ref_sol.y[:n])) < 1e-6


def test_hook_reactions_of_prismatic_and_welded_tree_joints_equal_least_squares():
    """Slides on either side of the ground (tree joints with the parent as body_a and as body_b), a weld,
    a revolute cut joint: efforts and every reaction against the least-squares path."""
    import sympy as sp
    import netdyn
    from netdyn import Network, t
    from netdyn.components.planar import Gravity, Prismatic, Revolute, RigidBody, Weld
    net = Network()
    net.add(Gravity(), RigidBody("crank", 1, 0.1), RigidBody("rod", 2, 0.3), RigidBody("block", 0.5, 0.05),
            RigidBody("w", 0.7, 0.02), RigidBody("blk", 1, 0.1),
            Revolute("O", "ground", (0, 0), "crank", (-0.25, 0)),
            Prismatic("P", "ground", (0, 0.1), "block", (0.2, 0), axis=(1, 0.2), angle=0.3),
            Prismatic("Q", "blk", (0.1, 0.2), "ground", (0.3, -0.1), axis=(1, 0.5), angle=0.2),
            Revolute("A", "crank", (0.25, 0), "rod", (-0.6, 0)), Revolute("B", "rod", (0.6, 0), "block", (0.1, 0.05)),
            Weld("W", "rod", (0.1, 0.1), "w", (0.2, -0.1), angle=0.4))
    drivers = {"O": 0.4 + 1.5 * t, "Q": 0.2 * sp.sin(3 * t)}
    guess = {"theta_crank": 0.4, "theta_rod": -0.1, "x_block": 1.0, "y_block": 0.2, "theta_block": 0.3}
    tt = np.linspace(0, 0.5, 6)
    rec = netdyn.inverse_dynamics(net, drivers, tt, guess=guess)
    ls = netdyn.inverse_dynamics(net, drivers, tt, guess=guess, method="least-squares")
    assert rec.method == "recursive" and set(rec.tree.model.joint_names) >= {"P", "Q", "W"}
    for j in drivers:
        assert np.max(np.abs(rec.efforts[j] - ls.efforts[j])) < 1e-9 * (1 + np.max(np.abs(ls.efforts[j])))
    for j in ("O", "P", "Q", "A", "B", "W"):
        R = ls.reaction(j)
        assert np.max(np.abs(rec.reaction(j) - R)) < 1e-9 * (1 + np.max(np.abs(R))), j


def test_planar_cut_kinds_refused_in_a_spatial_tree():
    with pytest.raises(ModelError, match="cut joint 'C'.*planar trees only"):
        TreeModel.from_bodies([dict(name="a", parent=None, axis=(1, 0, 0), mass=1, com=(0, 0.5, 0), inertia=0.1)],
                              cuts=[dict(name="C", kind="prismatic", body_a="a", point_a=(0, 1, 0), body_b=None,
                                         point_b=(0, 1, 0))])


@pytest.mark.parametrize("kind", ["revolute", "weld", "spherical"])
def test_spatial_cut_joint_terms_are_the_derivatives_of_the_constraints(kind):
    """J = ∂φ/∂q and b = φ̈ − J q̈ by finite differences of φ along a motion; compiled = numpy reference."""
    from netdyn.recursive.constraints import constraint_terms, constraint_terms_reference
    rng = np.random.default_rng(4)
    bodies = []
    for leg, base in (("a", (0, 0, 0)), ("b", (1.0, 0.2, 0))):
        for k in range(3):
            B = rng.normal(size=(3, 3))
            bodies.append(dict(name=f"{leg}{k}", parent=None if k == 0 else f"{leg}{k - 1}", axis=rng.normal(size=3),
                               joint="prismatic" if k == 1 else "revolute", translation=rng.normal(size=3) * 0.5,
                               mass=1.0, com=(0.1, 0, 0), inertia=B @ B.T + 0.1 * np.eye(3)))
    A = np.linalg.qr(rng.normal(size=(3, 3)))[0]
    model = TreeModel.from_bodies(bodies, cuts=[dict(name="C", kind=kind, body_a="a2", point_a=(0.3, 0.1, 0),
                                                     body_b="b2", point_b=(0.2, 0, 0.1), axis=(0.3, 1, 0.2),
                                                     axis_b=(1, 0, 0.5), rotation=A * np.sign(np.linalg.det(A)))])
    data = TreeData(model)
    assert model.m == {"revolute": 5, "weld": 6, "spherical": 3}[kind]
    q, qd, qdd = rng.normal(size=6), rng.normal(size=6), rng.normal(size=6)
    phi, J, b = constraint_terms(model, data, q, qd)
    for x, y in zip((phi, J, b), constraint_terms_reference(model, data, q, qd)):
        assert np.allclose(x, y, rtol=0, atol=1e-12)
    h = 1e-6
    Jfd = np.array([(constraint_terms(model, data, q + h * e)[0] - constraint_terms(model, data, q - h * e)[0]) / (2 * h)
                    for e in np.eye(6)]).T
    assert np.allclose(J, Jfd, atol=1e-8)

    def phi_at(s):  # φ along q(s) = q + s qd + s²/2 qdd: φ''(0) = J qdd + b
        return constraint_terms(model, data, q + s * qd + s * s / 2 * qdd)[0]
    h = 1e-4
    second = (phi_at(h) - 2 * phi_at(0.0) + phi_at(-h)) / h ** 2
    assert np.allclose(second, J @ qdd + b, atol=1e-5)
    # the reactions λ as body wrenches do the generalized work Jᵀ λ
    from netdyn.recursive.closed import cut_wrenches
    lam = rng.normal(size=model.m)
    constraint_terms(model, data, q)
    fext = cut_wrenches(model, data, lam)
    z = np.zeros(6)
    assert np.allclose(rnea(model, data, q, z, z) - rnea(model, data, q, z, z, fext), J.T @ lam, atol=1e-10)


# ------------------------------------------------------------------------------ Stewart–Gough platform
def test_stewart_gough_statics_equal_the_leg_force_balance():
    """Light legs, platform at rest: the six leg forces balance the platform's weight (independent statics)."""
    from netdyn.linkages.parallel import Trajectory, _rot, stewart_gough
    sg = stewart_gough(mc=1e-9, mpist=1e-9)
    pose = np.array([0.03, -0.02, 1.05, 0.1, -0.05, 0.08])
    still = Trajectory(lambda t: (np.tile(pose[:, None], (1, np.size(t))), np.zeros((6, np.size(t))),
                                  np.zeros((6, np.size(t)))))
    res = sg.inverse_dynamics([0.0], still)
    R = _rot(2, pose[3]) @ _rot(1, pose[4]) @ _rot(0, pose[5])
    c = pose[:3]
    rows = []
    for i in range(6):
        P = c + R @ sg.platform_points[i]
        k = sg.tree.body_names.index(f"u{i + 1}")
        u = P - sg.tree.translation[k]
        u /= np.linalg.norm(u)
        rows.append(np.concatenate([u, np.cross(P - c, u)]))
    weight = np.array([0, 0, 10.0 * 9.81, 0, 0, 0])  # the legs push the platform up along their axes
    forces = np.linalg.solve(np.array(rows).T, weight)
    assert np.allclose(res.efforts[:, 0], forces, rtol=0, atol=1e-6)


def test_stewart_gough_dynamics_power_balance_and_kkt():
    from netdyn.linkages.parallel import hover, stewart_gough
    from netdyn.recursive.closed import forward_dynamics
    sg, traj = stewart_gough(), hover()
    res = sg.inverse_dynamics(np.linspace(0, 1, 11), traj)
    act = [sg.coordinate[j] for j in sg.actuated]
    for k in (0, 7):
        tau = np.zeros(sg.tree.nq)
        tau[act] = res.efforts[:, k]
        qdd, lam = forward_dynamics(sg.tree, sg.data, res.q[:, k], res.qd[:, k], tau)
        assert np.max(np.abs(qdd - res.qdd[:, k])) < 1e-9 and np.max(np.abs(lam - res.lam[:, k])) < 1e-9
    h, weights = 1e-4, np.array([1, -8, 8, -1]) / 12e-4
    for t0 in (0.3, 0.8):
        r = sg.inverse_dynamics(t0 + np.array([-2, -1, 1, 2]) * h, traj)
        E = np.array([sg.energy(r.q[:, k], r.qd[:, k]) for k in range(4)])
        assert abs(weights @ E - sg.inverse_dynamics([t0], traj).power()[0]) < 1e-8


def test_closed_chain_forward_dynamics_by_aba_solves_equals_the_dense_kkt():
    """A 60-link loop (a chain pinned back to the ground): m extra ABA solves give the dense KKT's answer."""
    from netdyn.recursive.closed import forward_dynamics, solve_positions
    n = 60
    bodies = [dict(name=f"l{i}", parent=None if i == 0 else f"l{i - 1}", translation=(0.1 if i else 0, 0, 0),
                   mass=0.2, com=(0.05, 0, 0), inertia=0.2 * 0.01 / 12) for i in range(n)]
    model = TreeModel.from_bodies(bodies, gravity=(0, -9.81, 0), cuts=[
        dict(name="close", kind="revolute", body_a=None, point_a=(1.2, 0.0), body_b=f"l{n - 1}", point_b=(0.1, 0))])
    data = TreeData(model)
    q = np.full(n, 2 * np.pi / n) + np.random.default_rng(0).normal(size=n) * 0.01
    q = solve_positions(model, data, q, fixed=[0])
    qd = np.random.default_rng(1).normal(size=n)
    tau = np.random.default_rng(2).normal(size=n)
    a1, l1 = forward_dynamics(model, data, q, qd, tau, method="dense")
    a2, l2 = forward_dynamics(model, data, q, qd, tau, method="aba")
    assert np.allclose(a1, a2, rtol=0, atol=1e-8 * np.max(np.abs(a1))) and np.allclose(l1, l2, atol=1e-8 * np.max(np.abs(l1)))


def test_closed_chain_errors_name_the_culprit():
    from netdyn.errors import InitialConditionError, SingularSystemError
    from netdyn.linkages.parallel import circle, three_rrr
    from netdyn.recursive.closed import denoc_inverse_dynamics
    mech = three_rrr()
    with pytest.raises(InitialConditionError, match="leg A.*out of reach"):
        mech.inverse_dynamics([0.0], circle(centre=(0.5, 0.2887), radius=2.0))
    res = mech.inverse_dynamics([0.0], circle())
    with pytest.raises(SingularSystemError, match=r"\['A1', 'A2'\] cannot produce the motion"):
        denoc_inverse_dynamics(mech.tree, mech.data, res.q, res.qd, res.qdd,
                               [mech.coordinate["A1"], mech.coordinate["A2"]])
    with pytest.raises(ModelError, match="leave 1 degree"):
        from netdyn.recursive.closed import closed_kinematics
        closed_kinematics(mech.tree, mech.data, {mech.coordinate["x"]: (0.5, 0.0, 0.0),
                                                 mech.coordinate["y"]: (0.3, 0.0, 0.0)}, res.q[:, 0])


# ------------------------------------------------------------------------------ spatial networks
def _spatial_mix():
    from netdyn.components.spatial import Fixed, Gravity, Prismatic, Revolute, RigidBody
    from netdyn.graph.network import Network
    net = Network("mix")
    rng = np.random.default_rng(3)

    def J():
        A = np.linalg.qr(rng.normal(size=(3, 3)))[0]
        return (A @ np.diag([0.02, 0.03, 0.04]) @ A.T).tolist()
    net.add(RigidBody("a", 1.0, J(), com=(0.1, 0.2, -0.1)), RigidBody("b", 2.0, J(), com=(0.0, 0.1, 0.3)),
            RigidBody("c", 0.5, J(), com=(0.2, 0.0, 0.0)), RigidBody("d", 0.7, J(), com=(0.0, -0.1, 0.1)),
            Revolute("R", "ground", (0.1, 0.2, 0.3), "a", (0.0, 0.1, -0.2), axis=(1, 1, 0)),
            Prismatic("P", "b", (0.2, 0.0, 0.1), "a", (0.3, 0.1, 0.0), axis=(0, 1, 1), axis_b=(1, 0, 0.5)),
            Fixed("W", "b", (0.1, 0.1, 0.1), "c", (0.0, 0.2, 0.0), axis=(0.3, 0, 1)),
            Revolute("Q", "c", (0.2, 0.0, 0.0), "d", (0.0, 0.0, 0.1), axis=(0, 1, 0.2)),
            Gravity(vector=(0.5, -1.0, -9.81)))
    return net


@pytest.mark.parametrize("which", ["chain", "mix"])
def test_tree_from_spatial_network_matches_the_symbolic_relative_formulation(which):
    """Revolute, prismatic (from either side) and fixed joints with turned frames: M and h against
    netdyn's spatial relative model; a ball joint becomes a cut that closes where it was placed."""
    from netdyn.components.spatial import Spherical
    from netdyn.linkages.spatial import spatial_chain
    from netdyn.recursive import forward_kinematics
    from netdyn.recursive.constraints import constraint_terms
    from netdyn.recursive.spatial import tree_from_spatial_network
    net = spatial_chain(3) if which == "chain" else _spatial_mix()
    tree = tree_from_spatial_network(net)
    m, d, q, qd, _, _ = _mass_and_bias_match_the_relative_model(net, tree, seed=0)
    if which == "mix":
        forward_kinematics(m, d, q)
        i, (o, R) = tree.body_index["d"], tree.frames["d"]
        tip = np.array([0.3, 0.0, 0.0])
        net.add(Spherical("S", "ground", tuple(d.p[i] + d.R[i] @ (R.T @ (tip - o))), "d", tuple(tip)))
        closed = tree_from_spatial_network(net).model
        assert [c.kind for c in closed.cuts] == ["spherical"]
        assert np.max(np.abs(constraint_terms(closed, TreeData(closed), q)[0])) < 1e-12


def test_simulate_recursive_on_a_spatial_chain_matches_the_symbolic_path():
    import netdyn
    from netdyn.linkages.spatial import spatial_chain
    net = spatial_chain(3)
    tt = np.linspace(0, 1, 11)
    q0 = {"thetaz_J0": 0.3, "thetaz_J1": -0.2, "thetaz_J2": 0.5}
    rec = netdyn.simulate(net, (0, 1), q0=q0, t_eval=tt, rtol=1e-10, method="recursive")
    ref_sol = netdyn.simulate(net, (0, 1), q0=q0, t_eval=tt, rtol=1e-10, formulation="relative")
    for name in rec.coordinate_names:
        assert np.max(np.abs(rec[name] - ref_sol[name])) < 1e-8, name
    assert np.ptp(rec.energy()) < 1e-8
