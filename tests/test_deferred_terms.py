"""The relative formulation writes the bodies' poses, kinetic terms and gravity's potential only when something
reads them (netdyn.graph.treeposes, netdyn.graph.deferred): a long chain simulates without them, and the terms
read are exactly those an eager walk down the tree writes, in the same order."""
import pickle
import time

import numpy as np
import sympy as sp

import netdyn
from netdyn.components.planar import GROUND_POSE, Gravity, Revolute, RigidBody, Slider, Spring, centre_of_mass
from netdyn.lagrange.model import _terms
from netdyn.linkages import pendulum as pendulum_net


def _chain():
    """A spring, gravity, a second spring (the order of the V terms), a Slider, a centre of mass off the frame."""
    net = netdyn.Network("deferred")
    net.add(RigidBody("a", 1.0, 0.1, com=(0.1, 0.05)), Spring("k1", "ground", (1, 0), "a", (0.5, 0), k=3.0),
            Gravity(g=9.0), RigidBody("b", 0.8, 0.08), RigidBody("c", 0.5, 0.02),
            Revolute("A", "ground", (0, 0), "a", (-0.5, 0)), Slider("S", "a", (0.5, 0), "b", (0, 0), axis=(1, 1)),
            Revolute("B", "c", (-0.4, 0), "b", (0.3, 0)), Spring("k2", "c", (0.4, 0), "ground", (2, 0), k=5.0))
    return net


def _eager_poses(net, model):
    """The poses written by walking the tree from ground (what the relative formulation wrote before deferring)."""
    md = model.metadata["planar"]
    poses = {}
    for name, parent, child in md.tree_edges:
        j = md.joints[name]
        base = GROUND_POSE if parent == "0" else poses[parent]
        poses[child] = tuple(j.child_pose(base, md.joint_coordinates[name], j.values, parent == j.bodies[0]))
    return poses


def test_read_terms_equal_the_eager_ones():
    net = _chain()
    model = net.model(formulation="relative")
    md = model.metadata["planar"]
    assert model.kinetic_deferred and model.potential_deferred
    poses = _eager_poses(net, model)
    springs = [net.elements[k].planar_contribution(_Ctx(poses), net.elements[k].values).V for k in ("k1", "k2")]
    height = [b.values["m"] * 9.0 * centre_of_mass(poses[n], b.values)[1] for n, b in net.bodies.items()]
    assert model.V_terms == _terms([springs[0], sp.Add(*height), springs[1]])  # sympy equality, term by term
    assert model.kinetic_deferred and not model.potential_deferred
    kinetic = [b.contribute(poses[n], b.values).T for n, b in net.bodies.items()]
    assert model.T_terms == _terms(kinetic) and not model.deferred
    assert all(md.poses[b] == poses[b] for b in poses) and md.poses.written == set(poses)


class _Ctx:
    def __init__(self, poses):
        self.poses = poses

    def pose(self, body):
        return GROUND_POSE if body == "0" else self.poses[body]


def test_pickles_unwritten_and_writes_the_same_terms():
    model = _chain().model(formulation="relative")
    copy = pickle.loads(pickle.dumps(model))
    assert copy.deferred and model.deferred
    assert copy.V_terms == model.V_terms and copy.T_terms == model.T_terms
    assert copy.derive().as_time_functions() == model.equations(form="expanded")
    assert list(copy.equations()) == list(model.equations())   # the recursive form pickles with the model


def test_long_chain_builds_and_simulates_without_poses():
    n = 200
    net = pendulum_net(np.ones(n), np.ones(n) / n)
    start = time.process_time()
    model = net.model(formulation="relative")
    assert time.process_time() - start < 5  # 0.17 s here; 6 s when the poses and gravity were written
    sol = netdyn.simulate(model, (0, 0.002), q0={"theta_J1": -0.5}, t_eval=np.linspace(0, 0.002, 3),
                          method="projection")  # "auto" would take 13 s in the eigenvalues of a 400×400 Jacobian
    assert abs(sol.power_balance()["relative"]) < 1e-6
    poses = model.metadata["planar"].poses
    assert model.kinetic_deferred and model.potential_deferred and not poses.written
    assert poses["link3"][2] == sum(model.coordinates[:3]) and poses.written == {"link1", "link2", "link3"}


def test_closed_loop_writes_only_the_poses_its_cut_joint_reads():
    net = pendulum_net(np.ones(3), np.ones(3))
    net.add(RigidBody("tail", 1.0, 0.1), Revolute("T", "link1", (0.5, 0), "tail", (0, 0)),
            Revolute("C", "link3", (0.5, 0), "ground", (2.5, 0)))
    model = net.model(formulation="relative", cut=["C"])
    assert model.metadata["planar"].poses.written == {"link1", "link2", "link3"} and model.deferred


def test_drawing_writes_the_poses_it_reads():
    """A drawing reads every pose: written then, and they place the links where the joint angles put them."""
    from netdyn.linkages.planar import pendulum_state
    from netdyn.viz.plotting import pose_function

    n, lengths = 10, np.linspace(0.5, 1.4, 10)
    model = pendulum_net(np.ones(n), lengths).model(formulation="relative")
    q = np.random.default_rng(5).uniform(-1, 1, n)
    poses = pose_function(model)(q)
    expected = pendulum_state(q, np.zeros(n), lengths)[0].reshape(n, 3)
    assert np.max(np.abs(np.array([poses[f"link{i + 1}"] for i in range(n)]) - expected)) < 1e-12
    assert len(model.metadata["planar"].poses.written) == n
