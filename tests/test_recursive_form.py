"""Equations in recursive form (issue 25, item 2): the customized symbolic Newton–Euler program of a mechanism
in relative coordinates, checked against the expanded symbolic equations, its exports against each other and
its inverse dynamics against Pinocchio's ``rnea``.

Equality with the expanded equations is checked at random points (every coordinate, rate, acceleration and
multiplier random; the difference to 1e-12 of the equations' scale): ``sympy.simplify`` of the difference is
used only for the two-link pendulum (beyond, simplify takes minutes). With Euler parameters (Spherical joints)
both forms are Lagrange's equations of *redundant* coordinates, which may differ by a multiple of the norm
constraint's gradient off the unit sphere: there they agree on the sphere, up to that gradient (the norm's
multiplier absorbs it), which is what is checked.
"""
import ctypes
import shutil
import subprocess

import numpy as np
import pytest
import sympy as sp

import netdyn
from netdyn import t
from netdyn.components import planar as P
from netdyn.components import spatial as S
from netdyn.errors import ExportError, ModelError
from netdyn.export import export
from netdyn.export.c import CLANG_FLAGS, GCC_FLAGS
from netdyn.export.json import from_json
from netdyn.linkages import four_bar, slider_crank
from netdyn.linkages.planar import pendulum
from netdyn.linkages.spatial import heavy_top, spatial_chain

GCC, CLANG = shutil.which("gcc"), shutil.which("clang")


def _point(model, rng):
    """A random point: q(t), q', q'', multipliers -> numbers."""
    sub = {}
    for c in model.coordinates:
        sub[c.diff(t, 2)], sub[c.diff(t)], sub[c] = rng.normal(size=3)
    for m in model.multipliers:
        sub[m] = rng.normal()
    return sub


def _values(exprs, sub):
    """The expressions at the point ``sub`` and t = 0.3 (lambdified: the expanded equations are large)."""
    keys = list(sub)
    dummies = [sp.Dummy() for _ in keys]
    rep = dict(zip(keys, dummies))
    f = sp.lambdify([t, *dummies], [sp.sympify(e).xreplace(rep) for e in exprs], "math")
    return np.array(f(0.3, *[float(sub[k]) for k in keys]), dtype=float)


def _program_values(rec, sub):
    """The recursive equations at the point ``sub`` and t = 0.3, the straight-line program evaluated step by step
    (its expanded form is too large to lambdify in a test at n = 6 or on a loaded tree)."""
    vals = {k: sp.Float(float(v)) for k, v in sub.items()}
    vals[t] = sp.Float(0.3)
    for sym, expr in rec.definitions:
        vals[sym] = sp.sympify(expr).xreplace(vals).evalf(17)
    return np.array([float(sp.sympify(e).xreplace(vals).evalf(17)) for e in rec], dtype=float)


def _agree(model, points=3, seed=0):
    rec, ref = model.equations(), model.equations(form="expanded")
    assert len(rec) == len(ref)
    rng = np.random.default_rng(seed)
    for _ in range(points):
        sub = _point(model, rng)
        a, b = _program_values(rec, sub), _values(ref, sub)
        assert np.max(np.abs(a - b)) <= 1e-12 * max(1.0, np.max(np.abs(b))), (a, b)
    return rec


def test_two_link_pendulum_simplifies_to_the_expanded_equations():
    model = pendulum([1.0, 2.0], [1.0, 0.5]).model(formulation="relative", symbolic=True)
    rec = model.equations()
    for a, b in zip(rec.expanded(), model.equations(form="expanded")):
        assert sp.simplify(sp.expand(a - b)) == 0


@pytest.mark.parametrize("n", [2, 3, 4, 5, 6])
def test_planar_chains_equal_the_expanded_equations(n):
    rng = np.random.default_rng(n)
    rec = _agree(pendulum(rng.uniform(0.5, 2, n), rng.uniform(0.3, 1.5, n)).model(formulation="relative"))
    assert len(rec) == n and len(rec.definitions) <= 20 * n


def _loaded_planar():
    """Revolute, prismatic and slider joints, offset centres of mass, a spring, a damper, a force, a torque,
    an actuator and gravity."""
    net = netdyn.Network("loaded planar tree")
    net.add(P.RigidBody("a", 1.3, 0.2, com=(0.1, 0.05)), P.RigidBody("b", 0.8, 0.1),
            P.RigidBody("c", 0.6, 0.05, com=(-0.1, 0.2)), P.RigidBody("d", 0.4, 0.03), P.Gravity(),
            P.Revolute("A", "ground", (0, 0), "a", (-0.5, 0)),
            P.Prismatic("B", "a", (0.5, 0), "b", (0, 0), axis=(0.6, 0.8)),
            P.Revolute("C", "a", (0.2, 0.1), "c", (0, -0.3)),
            P.Slider("D", "c", (0.3, 0), "d", (0, 0.1)),
            P.Spring("k", "ground", (1, 1), "b", (0.1, 0), 20.0, 0.5),
            P.Damper("r", "a", (0.3, 0), "d", (0, 0), 0.7),
            P.Force("F", "c", (0.1, 0.2), 1.5, -2.0), P.Torque("M", "d", 0.3),
            P.Actuator("motor", "A", 2.0))
    return net


@pytest.mark.parametrize("build", [lambda: four_bar(tau=1.0, gravity=True), slider_crank, _loaded_planar],
                         ids=["four_bar_cut_joint", "slider_crank", "loaded_tree"])
def test_planar_mechanisms_with_loads_and_cut_joints_equal_the_expanded_equations(build):
    _agree(build().model(formulation="relative"))


def _mixed_spatial():
    """Oblique prismatic and Universal joints, a full inertia tensor, offset centres of mass, oblique gravity,
    a spring, a force and a joint damper (oblique revolutes: the Pinocchio test below)."""
    net = netdyn.Network("mixed spatial chain")
    net.add(S.RigidBody("b1", 1.2, (0.1, 0.2, 0.15), com=(0.1, 0.2, -0.3)),
            S.RigidBody("b2", 0.9, [[0.1, 0.01, 0.0], [0.01, 0.2, 0.02], [0.0, 0.02, 0.15]], com=(0.2, 0, 0.1)),
            S.Gravity(vector=(0.1, -0.2, -9.81)),
            S.Prismatic("A", "ground", (0, 0, 0), "b1", (0.1, 0, 0), axis=(1, 1, 0.3)),
            S.Universal("U", "b1", (0, 0, 0.3), "b2", (0, 0, 0)),
            S.Spring("k1", "ground", (1, 0, 0), "b2", (0.1, 0.1, 0), 5.0, 0.3),
            S.Force("F1", "b2", (0.1, 0, 0), (1.0, 2.0, 0.5)),
            S.JointDamper("dA", "A", 0.3))
    return net


def _cylindrical():
    net = netdyn.Network("cylindrical")
    net.add(S.RigidBody("s", 1.1, (0.1, 0.12, 0.05), com=(0.05, 0, 0.1)), S.Gravity(vector=(0, -9.81, 0)),
            S.Cylindrical("C", "ground", (0, 0, 0), "s", (0, 0, 0.2), axis=(0, 0.6, 0.8)))
    return net


@pytest.mark.parametrize("build", [lambda: spatial_chain(3), _mixed_spatial, _cylindrical],
                         ids=["axes_chain", "prismatic_universal_loads", "cylindrical"])
def test_spatial_trees_equal_the_expanded_equations(build):
    _agree(build().model(formulation="relative"))


def test_euler_parameters_agree_on_the_unit_sphere_up_to_the_norm_gradient():
    model = heavy_top().model(formulation="relative")
    rec, ref = model.equations().expanded(), model.equations(form="expanded")
    names = model.coordinate_names
    group = [i for i, nm in enumerate(names) if nm.startswith("e")]
    rng = np.random.default_rng(3)
    for _ in range(3):
        sub = _point(model, rng)
        e = rng.normal(size=4)
        e /= np.linalg.norm(e)
        de = rng.normal(size=4)
        de -= (de @ e) * e
        for k, i in enumerate(group):
            c = model.coordinates[i]
            sub[c], sub[c.diff(t)] = e[k], de[k]
        d = _values(rec, sub) - _values(ref, sub)
        n = len(model.coordinates)
        scale = max(1.0, np.max(np.abs(_values(ref, sub))))
        assert np.max(np.abs(np.delete(d, group))) < 1e-12 * scale     # other rows and the norm row itself
        along = d[group]
        assert np.linalg.norm(along - (along @ e) * e) < 1e-12 * scale  # only along the norm's gradient 2e
        assert n == len(names)


def test_size_is_linear_in_the_number_of_bodies():
    ops = {}
    for n in (5, 10, 20):
        rec = pendulum(np.ones(n), np.ones(n)).model(formulation="relative").equations()
        ops[n] = rec.operations
    assert abs((ops[20] - ops[10]) - 2 * (ops[10] - ops[5])) <= 0.05 * ops[20]   # constant cost per body


def test_forms_and_their_errors():
    rel = four_bar().model(formulation="relative")
    assert rel.has_recursive_form and isinstance(rel.equations(), netdyn.RecursiveEquations)
    assert not isinstance(rel.equations(form="expanded"), netdyn.RecursiveEquations)
    ab = four_bar().model()
    assert not ab.has_recursive_form and ab.equations() == ab.equations(form="expanded")
    with pytest.raises(ModelError, match="no recursive form"):
        ab.equations(form="recursive")
    with pytest.raises(ModelError, match="unknown equation form"):
        rel.equations(form="bogus")
    with pytest.raises(ExportError, match="no recursive form"):
        export(ab, "c", form="recursive")


def test_latex_and_json_carry_the_program():
    model = four_bar(tau=1.0).model(formulation="relative", symbolic=True)
    tex = export(model, "latex")
    assert r"F_{x rod} &:=" in tex and ":=" not in export(model, "latex", form="expanded")
    doc = from_json(export(model, "json"))
    assert doc["format_version"] == 2 and len(doc["definitions"]) == len(model.equations().definitions)
    # the JSON's program substituted back is the model's expanded form, in the internal symbols
    env = {}
    for s, e in doc["definitions"]:
        env[s] = e.xreplace(env)
    eq = model.recursive_form().rest.derive()
    to_time = dict(eq.to_time)
    rng = np.random.default_rng(7)
    sub = _point(model, rng)
    sub.update({s: rng.uniform(0.5, 2) for s in (sp.Symbol(p["name"]) for p in from_json(export(model, "json"))["parameters"])})
    params = {k: v for k, v in sub.items() if isinstance(k, sp.Symbol)}
    mine = _values([r.xreplace(env).xreplace(to_time).xreplace(params) for r in doc["equations"]], sub)
    ref = _values([r.xreplace(params) for r in model.equations(form="expanded")], sub)
    assert np.max(np.abs(mine - ref)) < 1e-12 * max(1.0, np.max(np.abs(ref)))


# ------------------------------------------------------------------------------------------ generated code

def _python(model, form=None):
    ns = {}
    exec(compile(export(model, "python", form=form), "generated.py", "exec"), ns)   # noqa: S102 - our own export
    return ns


MODELS = {"four_bar": lambda: four_bar(tau=1.0, gravity=True).model(formulation="relative"),
          "loaded_tree": lambda: _loaded_planar().model(formulation="relative"),
          "mixed_spatial": lambda: _mixed_spatial().model(formulation="relative")}


@pytest.mark.parametrize("key", list(MODELS))
def test_python_export_matches_the_expanded_export(key):
    model = MODELS[key]()
    rec, ref = _python(model), _python(model, "expanded")
    assert rec["FORM"] == "recursive" and ref["FORM"] == "expanded"
    p, _ = rec["parameters"]()
    rng = np.random.default_rng(1)
    n = rec["N"]
    for _ in range(4):
        q, f, a = rng.normal(size=(3, n))
        for fn in ("mass_matrix", "h", "phi", "Phi_q", "gamma_phi"):
            mine, want = rec[fn](0.2, q, f, p), ref[fn](0.2, q, f, p)
            assert mine.shape == want.shape
            assert np.max(np.abs(mine - want), initial=0) <= 1e-12 * max(1.0, np.max(np.abs(want), initial=0)), fn
        tau = rec["inverse_dynamics"](0.2, q, f, a, p)
        want = ref["mass_matrix"](0.2, q, f, p) @ a + ref["h"](0.2, q, f, p)
        assert np.max(np.abs(tau - want)) <= 1e-12 * max(1.0, np.max(np.abs(want)))


@pytest.fixture(scope="module")
def c_library(tmp_path_factory):
    if GCC is None:
        pytest.skip("gcc is not installed")
    folder = tmp_path_factory.mktemp("recursive_c")
    sources = []
    for key, build in MODELS.items():
        code = export(build(), "c", name=key)
        code.write(folder)
        sources.append(str(folder / f"{key}.c"))
    lib = folder / "librecursive.so"
    run = subprocess.run([GCC, *GCC_FLAGS, "-O2", "-shared", "-fPIC", *sources, "-o", str(lib), "-lm"],
                         capture_output=True, text=True)
    return folder, sources, lib, run


def test_c_export_compiles_without_a_warning(c_library):
    _, sources, _, run = c_library
    assert run.returncode == 0 and run.stdout == "" and run.stderr == "", run.stderr[:4000]
    if CLANG is not None:
        run = subprocess.run([CLANG, *CLANG_FLAGS, "-fsyntax-only", *sources], capture_output=True, text=True)
        assert run.returncode == 0 and run.stdout == "" and run.stderr == "", run.stderr[:4000]


def test_c_export_matches_the_symbolic_model(c_library):
    _, _, lib_path, run = c_library
    assert run.returncode == 0, run.stderr[:2000]
    lib = ctypes.CDLL(str(lib_path))
    dp = np.ctypeslib.ndpointer(dtype=np.float64, flags="C_CONTIGUOUS")
    rng = np.random.default_rng(5)
    for key, build in MODELS.items():
        model = build()
        ref = _python(model, "expanded")
        n, m1 = ref["N"], ref["M1"]
        p = np.ascontiguousarray(ref["parameters"]()[0])
        fn = lib[f"{key}_inverse_dynamics"]
        fn.argtypes = [ctypes.c_double, dp, dp, dp, dp, ctypes.c_void_p, dp]
        acc = lib[f"{key}_accelerations"]
        acc.argtypes = [ctypes.c_double, dp, dp, dp, ctypes.c_void_p, dp, dp, dp]
        for _ in range(4):
            q, f, a = (np.ascontiguousarray(x) for x in rng.normal(size=(3, n)))
            out = np.zeros(n)
            fn(0.2, q, f, a, p, None, out)
            want = ref["mass_matrix"](0.2, q, f, p) @ a + ref["h"](0.2, q, f, p)
            assert np.max(np.abs(out - want)) <= 1e-12 * max(1.0, np.max(np.abs(want))), key
            qdd, lam, mu = np.zeros(n), np.zeros(max(m1, 1)), np.zeros(1)
            assert acc(0.2, q, f, p, None, qdd, lam, mu) == 0
            want_qdd, want_lam, _ = ref["accelerations"](0.2, q, f, p)
            scale = max(1.0, np.max(np.abs(want_qdd)))
            assert np.max(np.abs(qdd - want_qdd)) <= 1e-9 * scale, key   # a solve: conditioning enters


def test_generated_c_grows_linearly():
    size = {n: len(export(pendulum(np.ones(n), np.ones(n)).model(formulation="relative"), "c").source)
            for n in (10, 20, 40)}
    assert abs((size[40] - size[20]) - 2 * (size[20] - size[10])) <= 0.05 * size[40]


# ------------------------------------------------------------------------------------------ Pinocchio

def test_inverse_dynamics_matches_pinocchio_rnea_on_a_random_spatial_chain():
    """Random unit axes, joint offsets, centres of mass and full inertia tensors, built through the public API
    on both sides; the recursive form's exported ``inverse_dynamics`` against ``pinocchio.rnea``."""
    pin = pytest.importorskip("pinocchio")
    n = 6
    rng = np.random.default_rng(11)
    net = netdyn.Network("random spatial chain")
    pm = pin.Model()
    parent = 0
    for k in range(n):
        axis = rng.normal(size=3)
        axis /= np.linalg.norm(axis)
        offset = np.zeros(3) if k == 0 else rng.uniform(-0.3, 0.3, 3) + (0, 0, -0.5)
        com = rng.uniform(-0.1, 0.1, 3) + (0, 0, -0.25)
        w = np.sort(rng.uniform(0.02, 0.1, 3))
        w[2] = min(w[2], w[0] + w[1] - 1e-3)
        A = np.linalg.qr(rng.normal(size=(3, 3)))[0]
        J = A @ np.diag(w) @ A.T
        m = rng.uniform(0.5, 2.0)
        net.add(S.RigidBody(f"L{k}", m, J.tolist(), com=tuple(com)),
                S.Revolute(f"J{k}", "ground" if k == 0 else f"L{k - 1}", tuple(offset), f"L{k}", (0, 0, 0),
                           axis=tuple(axis)))
        jid = pm.addJoint(parent, pin.JointModelRevoluteUnaligned(*axis), pin.SE3(np.eye(3), offset), f"J{k}")
        pm.appendBodyToJoint(jid, pin.Inertia(m, com, J), pin.SE3.Identity())
        parent = jid
    net.add(S.Gravity(vector=(0, 0, -9.81)))
    model = net.model(formulation="relative")
    gen = _python(model)
    p, _ = gen["parameters"]()
    data = pm.createData()
    for _ in range(5):
        q, v, a = rng.uniform(-np.pi, np.pi, n), rng.uniform(-2, 2, n), rng.uniform(-3, 3, n)
        want = pin.rnea(pm, data, q, v, a)
        got = gen["inverse_dynamics"](0.0, q, v, a, p)
        assert np.max(np.abs(got - want)) <= 1e-10 * max(1.0, np.max(np.abs(want)))
