"""Equations in recursive form on spatial chains with random joint frames (issue 25, item 2).

Random chains of revolute and prismatic joints whose joint frames ``(point, R)`` on both bodies are random
rotations and offsets, with random full inertia tensors, centres of mass and an oblique gravity:

- n = 2, 3: the recursive-form equations equal the symbolic relative equations (``form="expanded"``, the
  Lagrangian derivation) at random states, every coordinate, rate and acceleration random, to 1e-12 of their scale
  (at n = 4 the expanded spatial form has 1.1 million operations: it takes 12 s to derive and longer to evaluate;
  28 s at n = 5 and over 10 minutes at n = 6), so the larger chains are checked against Pinocchio instead;
- n = 4, 5, 6: their exported ``inverse_dynamics`` equals Pinocchio's ``rnea`` on the same chain, built joint frame by
  joint frame from the same numbers, to 1e-10;
- the C export of the n = 6 chain compiles under ``gcc -std=c99 -Wall -Wextra -pedantic -Werror`` with no output
  and its ``inverse_dynamics`` equals the Python export's at random states to 1e-12.
"""
import ctypes
import shutil
import subprocess

import numpy as np
import pytest

import netdyn
from netdyn.components import spatial as S
from netdyn.export import export
from netdyn.export.c import GCC_FLAGS
from test_recursive_form import _point, _program_values, _python, _values   # the same evaluation at random states

GCC = shutil.which("gcc")


def _rotation(rng):
    q, r = np.linalg.qr(rng.normal(size=(3, 3)))
    q = q * np.sign(np.diag(r))
    return q if np.linalg.det(q) > 0 else -q


def _chain_data(n, seed):
    """Numbers of a random chain: per link its mass, inertia (body frame, about the centre of mass), centre of
    mass, joint kind and the joint frames on the parent (a) and on the link (b)."""
    rng = np.random.default_rng(seed)
    links = []
    for k in range(n):
        w = np.sort(rng.uniform(0.02, 0.1, 3))
        w[2] = min(w[2], w[0] + w[1] - 1e-3)
        A = _rotation(rng)
        links.append({"m": float(rng.uniform(0.5, 2)), "J": A @ np.diag(w) @ A.T, "c": rng.uniform(-0.2, 0.2, 3),
                      "kind": "P" if k % 3 == 1 else "R",
                      "a": (rng.uniform(-0.4, 0.4, 3), _rotation(rng)), "b": (rng.uniform(-0.3, 0.3, 3), _rotation(rng))})
    return links, rng.normal(size=3)


def random_chain(n, seed):
    links, g = _chain_data(n, seed)
    net = netdyn.Network(f"random spatial chain {n}")
    for k, ln in enumerate(links):
        net.add(S.RigidBody(f"L{k}", ln["m"], ln["J"].tolist(), com=tuple(ln["c"])))
        joint = S.Prismatic if ln["kind"] == "P" else S.Revolute
        net.add(joint(f"J{k}", "ground" if k == 0 else f"L{k - 1}", (tuple(ln["a"][0]), ln["a"][1]),
                      f"L{k}", (tuple(ln["b"][0]), ln["b"][1])))
    net.add(S.Gravity(vector=tuple(g)))
    return net


def pinocchio_chain(n, seed):
    """The same chain in Pinocchio: each joint's frame a placed in the parent's joint frame (through the
    parent body's frame b), the joint about/along z, the body's frame at frame b⁻¹ of the joint frame."""
    pin = pytest.importorskip("pinocchio")
    links, g = _chain_data(n, seed)
    model = pin.Model()
    model.gravity.linear = g
    parent, to_body = 0, pin.SE3.Identity()
    for k, ln in enumerate(links):
        Fa, Fb = pin.SE3(ln["a"][1], ln["a"][0]), pin.SE3(ln["b"][1], ln["b"][0])
        jm = pin.JointModelPZ() if ln["kind"] == "P" else pin.JointModelRZ()
        jid = model.addJoint(parent, jm, to_body * Fa, f"J{k}")
        body_in_joint = Fb.inverse()
        model.appendBodyToJoint(jid, body_in_joint.act(pin.Inertia(ln["m"], ln["c"], ln["J"])), pin.SE3.Identity())
        parent, to_body = jid, body_in_joint
    return model


@pytest.mark.parametrize("n", [2, 3])
def test_random_frame_chains_equal_the_symbolic_relative_equations(n):
    model = random_chain(n, n).model(formulation="relative")
    rec, ref = model.equations(), model.equations(form="expanded")
    assert isinstance(rec, netdyn.RecursiveEquations) and len(rec) == len(ref) == n
    rng = np.random.default_rng(10 + n)
    for _ in range(3):
        sub = _point(model, rng)
        a, b = _program_values(rec, sub), _values(ref, sub)
        assert np.max(np.abs(a - b)) <= 1e-12 * max(1.0, np.max(np.abs(b))), (a, b)


@pytest.mark.parametrize("n", [4, 5, 6])
def test_random_frame_chains_match_pinocchio_rnea(n):
    pin = pytest.importorskip("pinocchio")
    pm = pinocchio_chain(n, n)
    data = pm.createData()
    gen = _python(random_chain(n, n).model(formulation="relative"))
    p, _ = gen["parameters"]()
    rng = np.random.default_rng(20 + n)
    for _ in range(5):
        q, v, a = rng.uniform(-np.pi, np.pi, n), rng.uniform(-2, 2, n), rng.uniform(-3, 3, n)
        want = pin.rnea(pm, data, q, v, a)
        got = gen["inverse_dynamics"](0.0, q, v, a, p)
        assert np.max(np.abs(got - want)) <= 1e-10 * max(1.0, np.max(np.abs(want))), (got, want)


def test_c_export_of_a_random_frame_chain_compiles_without_a_warning_and_matches(tmp_path):
    if GCC is None:
        pytest.skip("gcc is not installed")
    model = random_chain(6, 6).model(formulation="relative")
    code = export(model, "c", name="chain6")
    code.write(tmp_path)
    lib = tmp_path / "libchain6.so"
    run = subprocess.run([GCC, *GCC_FLAGS, "-O2", "-shared", "-fPIC", str(tmp_path / "chain6.c"), "-o", str(lib),
                          "-lm"], capture_output=True, text=True)
    assert run.returncode == 0 and run.stdout == "" and run.stderr == "", run.stderr[:4000]
    gen = _python(model)
    p = np.ascontiguousarray(gen["parameters"]()[0])
    dp = np.ctypeslib.ndpointer(dtype=np.float64, flags="C_CONTIGUOUS")
    fn = ctypes.CDLL(str(lib))["chain6_inverse_dynamics"]
    fn.argtypes = [ctypes.c_double, dp, dp, dp, dp, ctypes.c_void_p, dp]
    rng = np.random.default_rng(6)
    for _ in range(5):
        q, v, a = (np.ascontiguousarray(x) for x in rng.normal(size=(3, 6)))
        out = np.zeros(6)
        fn(0.0, q, v, a, p, None, out)
        want = gen["inverse_dynamics"](0.0, q, v, a, p)
        assert np.max(np.abs(out - want)) <= 1e-12 * max(1.0, np.max(np.abs(want)))
