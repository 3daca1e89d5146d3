"""Generated code is clean: the C export compiles without a warning, the Python export passes pyflakes.

Every model of the example set — the book's Examples 4.1–4.4, the demo's models, the examples/
scripts' models (circuits, transducers, bond graphs, planar and spatial linkages), the hand-typed
models of ``netdyn.models``, a model using every function a model file may name, models with
hostile names — and seeded random circuits (plain, with controlled sources, with diodes; in the
default, branch and node formulations) is exported once. Then

* ``gcc`` with :data:`netdyn.export.c.GCC_FLAGS` (``-std=c99 -Wall -Wextra -pedantic -Werror``)
  at ``-O2`` builds every source, and a user file including every header, into one shared
  library with no output at all;
* ``clang`` with :data:`netdyn.export.c.CLANG_FLAGS` (``-std=c99 -Weverything -Werror`` and the
  documented exceptions, none today) checks the same files;
* ``pyflakes`` has nothing to say about any generated module;
* the library, called through ctypes at random states, agrees with the generated Python to
  1e-12 (every function), and its KKT solve has a backward error below 1e-12.

The Stewart platform (examples/spatial_stewart.py, 1 min to export on a quiet machine) and the
six-link spatial chain of examples/spatial_chain.py (3 min) are left out for time (both were checked
clean by hand, gcc, clang and pyflakes alike); a two-link spatial chain in the same relative
formulation stands for the latter.
"""
import ctypes
import io
import shutil
import subprocess

import numpy as np
import pytest
import sympy as sp

import netdyn
import netdyn.models
from netdyn import LagrangianModel, coordinates, demo, linkages, t
from netdyn.components.electrical import Inductor, Resistor, VoltageSource
from netdyn.export import export
from netdyn.export.c import CLANG_FLAGS, GCC_FLAGS
from netdyn.graph.network import as_model
from netdyn.lagrange.sources import Sawtooth
from netdyn.linkages import spatial

import test_book_examples as book
from systems import (every_element_network, load_example, mechanical_network, rlc_circuit,
                     transducer_network)
from test_random_circuits import random_circuit

GCC, CLANG = shutil.which("gcc"), shutil.which("clang")
FUNCTIONS = ("mass_matrix", "h", "phi", "Phi_q", "Phi_t", "gamma_phi", "A", "a", "gamma_psi")


# ------------------------------------------------------------------------------------------ models

def example_4_1():
    x, y = coordinates("x y")
    mA, mB, k, l, g = sp.symbols("m_A m_B k l g", positive=True)
    return LagrangianModel([x, y], T=(mA * y.diff(t)**2 + mB * x.diff(t)**2) / 2,
                           V=k * x**2 / 2, efforts={y: -mA * g}, constraints=[x**2 + y**2 - l**2],
                           name="Example 4.1")


def functions_model():
    """Every function a model file may name (``netdyn.lagrange.exprtext.FUNCTIONS``, bar the complex
    ones and DiracDelta), an input, a time-dependent constraint, huge integers and number symbols.
    The non-smooth ones sit in an effort (a potential would need their derivatives). ``Mod`` and the
    odd roots take arguments that cannot be negative: there C's ``fmod``/``cbrt`` and numpy's
    ``mod``/``**(1/3)`` part ways (sympy's printers, not netdyn's)."""
    x, y = coordinates("x y")
    k, c, F = sp.symbols("k c F")
    ex = (sp.Min(x, y, 1) + sp.Max(x.diff(t), 0.5) + sp.Heaviside(x) + sp.Heaviside(y - 0.1, 1)
          + sp.Piecewise((x, sp.Eq(x, y)), (y, sp.Ne(x, 0.25) & (y > 0)), (0, True))
          + sp.Piecewise((1, sp.Or(x > 2, sp.Not(y < 3))), (2, True))
          + sp.EulerGamma * x + sp.GoldenRatio * y + sp.Catalan + sp.Integer(2)**70 * x**4 / sp.Integer(3)**40
          + sp.sign(y) * sp.Abs(x) + sp.floor(x) + sp.ceiling(y) + sp.Mod(x**2, 2) + Sawtooth(t, 3)
          + sp.atan2(y, x) + sp.exp(-x**2) * sp.log(1 + y**2) + sp.sqrt(1 + x**2) + sp.cbrt(2 + y**2)
          + sp.root(3 + x**2, 5) + sp.cot(1 + x**2) + sp.sec(y) + sp.csc(2 + x**2) + sp.acot(x)
          + sp.coth(1 + y**2) + sp.tanh(x) * sp.asinh(y) + sp.sinh(x) * sp.cosh(y) + sp.acosh(2 + x**2)
          + sp.atanh(sp.tanh(y) / 2) + sp.asin(sp.sin(x) / 2) + sp.acos(sp.cos(y) / 2) + sp.atan(x) * sp.tan(y / 9)
          + sp.pi * x / 2 + sp.sqrt(2) * y + sp.E**2 + sp.Rational(2**70, 3) * y)
    V = k * x**2 / 2 + k * (y - x)**2 / 3 + k * x**3 * y / 7
    return LagrangianModel([x, y], T=((1 + x**2) * x.diff(t)**2 + y.diff(t)**2) / 2, V=V,
                           D=c * x.diff(t)**2 / 2, efforts={x: F * ex, y: sp.Function("Fu")(t) * sp.cos(t)},
                           constraints=[x**2 + y**2 - 1 - sp.sin(t) / 10], name="functions",
                           parameters={"k": 2.0, "c": 0.1, "F": 0.3})


def hostile(title):
    """An R-L circuit whose title (so its C file, guard and prefix names) and element names are hostile."""
    net = netdyn.Network(title)
    net.add(VoltageSource('V"""1 */', "in", "0", 1.0), Resistor("R ??/ 1", "in", "out", 1e3),
            Inductor("L */ 1", "out", "0", 1e-3))
    return net.model(formulation="loop")


def five_bar_with_actuators():
    from netdyn.components.planar import Actuator
    net, _ = linkages.five_bar()
    for j in ("J1", "J2"):  # as examples/planar_five_bar.py: torques are inputs u_J1(t), u_J2(t)
        net.add(Actuator(f"act_{j}", j, sp.Function(f"u_{j}")(t)))
    return net.model()


def three_rrr():
    from netdyn.analysis.kinematics import with_drivers
    from netdyn.linkages.parallel import three_rrr as mechanism
    mech = mechanism()  # as examples/parallel_3rrr.py
    return with_drivers(mech.network().model(), {j: 0 for j in mech.actuated})


def _example(name, builder="build"):
    def build():
        ex = load_example(name)
        return getattr(ex, builder)(**getattr(ex, "PARAMS", {})) if builder == "build" else getattr(ex, builder)()
    return build


def _linkage(fn, *args, model=None, **kw):
    """``netdyn.linkages.<fn>(*args, **kw)`` (or ``netdyn.linkages.spatial.<fn>``), then ``.model(**model)``."""
    def build():
        obj = getattr(linkages, fn, None) or getattr(spatial, fn)
        net = obj(*args, **kw)
        return (net[0] if isinstance(net, tuple) else net).model(**(model or {}))
    return build


MODELS = {
    # the book's Examples 4.1-4.4, typed by hand (tests/test_book_examples.py)
    "book_4_1": example_4_1,
    "book_4_2": lambda: book.slider_crank()[0],
    "book_4_3": lambda: book.four_bar()[0],
    "book_4_4": lambda: book.rlc_network_by_hand()[0],
    # the demo's models (netdyn demo)
    **{f"demo_4_4_{f}": (lambda f=f: demo.example_4_4().model(formulation=f)) for f in ("branch", "loop", "node")},
    "demo_4_4_symbolic": lambda: demo.example_4_4().model(formulation="branch", symbolic=True),
    "demo_mass_spring_damper": lambda: demo.mass_spring_damper().model(),
    "demo_slider_crank": _linkage("slider_crank"),
    # examples/
    "bondgraph_hydraulic": _example("bondgraph_hydraulic"),
    "bondgraph_motor_gear": _example("bondgraph_motor_gear"),
    "bondgraph_quarter_car": _example("bondgraph_quarter_car"),
    "capacitor_microphone": _example("capacitor_microphone"),
    "loudspeaker": _example("loudspeaker"),
    "magnetic_levitation": _example("magnetic_levitation"),
    "motor_slider_crank": _example("motor_slider_crank", "build"),
    "motor_slider_crank_hand_typed": _example("motor_slider_crank", "build_hand_typed"),
    "andrews_absolute": _linkage("andrews_squeezer"),
    "andrews_relative": _linkage("andrews_squeezer", model={"formulation": "relative", "cut": ["E3", "E4", "E6"]}),
    "planar_five_bar": five_bar_with_actuators,
    "planar_four_bar": _linkage("four_bar", tau=False, gravity=True),
    "planar_four_bar_relative": _linkage("four_bar", tau=False, gravity=True, model={"formulation": "relative"}),
    "planar_pendulum": _linkage("pendulum", [1.0] * 4, [0.5] * 4),
    "parallel_3rrr": three_rrr,
    "spatial_chain_2": _linkage("spatial_chain", 2, spatial.chain_parameters(2, seed=1),
                                model={"formulation": "relative"}),
    "spatial_heavy_top": _linkage("heavy_top"),
    "spatial_pendulum": _linkage("spherical_pendulum", length=1.0, radius=1e-3),
    "spatial_rssr": _linkage("rssr"),
    # netdyn.models and the shared test systems
    "chaplygin_sleigh": lambda: netdyn.models.chaplygin_sleigh(),
    "rolling_disk": lambda: netdyn.models.rolling_disk(),
    "models_slider_crank": lambda: netdyn.models.slider_crank(),
    "motor_four_bar": _linkage("motor_four_bar"),
    "rlc": lambda: rlc_circuit().model(),
    "two_masses": lambda: mechanical_network().model(),
    "every_element": lambda: every_element_network().model(),
    "transducers": lambda: transducer_network().model(),
    "functions": functions_model,
}
# names the C file, guard and prefix are made from (c_identifier): None = from the model's title
HOSTILE = ["Ω-filter", "_private", "int", "2port", 'x */ int pwn = system("touch x"); /* ',
           "x ??/\n#include <stdlib.h>\n", 'x""" + __import__("os").system("touch x") + """']
for k, title in enumerate(HOSTILE):
    MODELS[f"hostile_{k}"] = (lambda title=title: hostile(title))
# seeded random circuits (tests/test_random_circuits.py's generator); diodes only in the node formulation
RANDOM = [(seed, devices, formulation) for devices in (None, "controlled") for seed in range(4)
          for formulation in (None, "branch", "node")] + [(seed, "diodes", None) for seed in range(4)]
for seed, devices, formulation in RANDOM:
    MODELS[f"random_{devices or 'rlc'}_{seed}_{formulation or 'default'}"] = (
        lambda s=seed, d=devices, f=formulation: as_model(random_circuit(s, d).network(), f))


class Exported:
    def __init__(self, key, model, code, python):
        self.key, self.model, self.code, self.python = key, model, code, python


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """Every model exported once: {key: Exported}, the C files written to one folder."""
    out = tmp_path_factory.mktemp("generated")
    items = {}
    for key, build in MODELS.items():
        model = as_model(build(), None)
        code = export(model, "c", name=None if key.startswith("hostile") else key)
        code.write(out)
        items[key] = Exported(key, model, code, export(model, "python"))
    names = [e.code.name for e in items.values()]
    assert len(set(names)) == len(names), "two models share a C file name"
    # a user's file that includes every header
    (out / "user.c").write_text("".join(f'#include "{n}.h"\n' for n in names)
                                + "int main(void);\nint main(void) { return 0; }\n")
    return out, items


def _sources(folder, items):
    return [str(folder / f"{e.code.name}.c") for e in items.values()] + [str(folder / "user.c")]


@pytest.fixture(scope="module")
def gcc_library(exported):
    """One gcc call with GCC_FLAGS at -O2 (so the optimizer's warnings count too): every source into one
    shared library. Returns (library path, completed process)."""
    if GCC is None:
        pytest.skip("gcc is not installed")
    folder, items = exported
    lib = folder / "libgenerated.so"
    run = subprocess.run([GCC, *GCC_FLAGS, "-O2", "-shared", "-fPIC", *_sources(folder, items), "-o", str(lib), "-lm"],
                         capture_output=True, text=True)
    return lib, run


# ------------------------------------------------------------------------------------------ tests

def test_gcc_strict_compiles_every_model_without_a_word(gcc_library):
    lib, run = gcc_library
    assert run.returncode == 0 and run.stdout == "" and run.stderr == "", run.stderr[:4000]


def test_clang_everything_compiles_every_model_without_a_word(exported):
    if CLANG is None:
        pytest.skip("clang is not installed")
    folder, items = exported
    run = subprocess.run([CLANG, *CLANG_FLAGS, "-fsyntax-only", *_sources(folder, items)],
                         capture_output=True, text=True)
    assert run.returncode == 0 and run.stdout == "" and run.stderr == "", run.stderr[:4000]


def test_pyflakes_has_nothing_to_say_about_the_generated_python(exported):
    api = pytest.importorskip("pyflakes.api", reason="pyflakes is not installed")
    from pyflakes.reporter import Reporter
    _, items = exported
    out, err = io.StringIO(), io.StringIO()
    for key, e in items.items():
        api.check(e.python, f"{key}.py", Reporter(out, err))
    assert out.getvalue() == "" and err.getvalue() == "", (out.getvalue() + err.getvalue())[:4000]


def _close(mine, ref, where):
    mine, ref = np.asarray(mine, dtype=float), np.asarray(ref, dtype=float)
    scale = np.max(np.abs(ref[np.isfinite(ref)]), initial=1.0)
    np.testing.assert_allclose(mine, ref, rtol=1e-12, atol=1e-12 * scale, err_msg=where)


def test_c_library_agrees_with_the_generated_python(exported, gcc_library):
    lib_path, run = gcc_library
    if run.returncode:
        pytest.fail("the library did not build: " + run.stderr[:2000])
    lib = ctypes.CDLL(str(lib_path))
    dp = np.ctypeslib.ndpointer(dtype=np.float64, flags="C_CONTIGUOUS")
    rng = np.random.default_rng(24)
    solved = 0
    for key, e in exported[1].items():
        ns = {}
        exec(compile(e.python, f"{key}.py", "exec"), ns)  # noqa: S102 - text netdyn generated
        prefix = e.code.name + "_"
        n, m1, m2 = ns["N"], ns["M1"], ns["M2"]
        defaults = np.array([rng.uniform(0.5, 2.0) if v is None else v for v in ns["DEFAULTS"].values()], dtype=float)
        for _ in range(3):
            tt, q, f = float(rng.uniform(0, 1)), rng.normal(size=n), rng.normal(size=n)
            p = np.concatenate([defaults, [0.0]])  # never an empty array for ctypes
            u = np.concatenate([rng.normal(size=len(ns["INPUTS"])), [0.0]])
            with np.errstate(all="ignore"):
                for name in FUNCTIONS:
                    ref = np.asarray(ns[name](tt, q, f, p[:-1], u[:-1]), dtype=float).ravel()
                    fn = getattr(lib, prefix + name)
                    fn.argtypes, fn.restype = [ctypes.c_double, dp, dp, dp, dp, dp], None
                    out = np.full(ref.size + 1, np.nan)
                    fn(tt, q, f, p, u, out)
                    _close(out[:ref.size], ref, f"{key}: {name} at t={tt}")
                acc = getattr(lib, prefix + "accelerations")
                acc.argtypes, acc.restype = [ctypes.c_double, dp, dp, dp, dp, dp, dp, dp], ctypes.c_int
                z = np.zeros(n + m1 + m2 + 3)
                status = acc(tt, q, f, p, u, z[:n], z[n + 1:n + m1 + 2], z[n + m1 + 2:n + m1 + m2 + 3])
                z = np.concatenate([z[:n], z[n + 1:n + m1 + 1], z[n + m1 + 2:n + m1 + m2 + 2]])
                args = (tt, q, f, p[:-1], u[:-1])
                C = np.vstack([ns["Phi_q"](*args), ns["A"](*args)])
                K = np.block([[ns["mass_matrix"](*args), C.T], [C, np.zeros((m1 + m2, m1 + m2))]])
                r = -np.concatenate([ns["h"](*args), ns["gamma_phi"](*args), ns["gamma_psi"](*args)])
            if not (np.all(np.isfinite(K)) and np.all(np.isfinite(r))):
                continue
            if status == 0:  # backward stable: a residual of the order of rounding
                assert np.all(np.isfinite(z)), key
                residual = np.max(np.abs(K @ z - r), initial=0.0)
                assert residual <= 1e-12 * (np.max(np.abs(K)) * np.max(np.abs(z), initial=0.0) + np.max(np.abs(r))), key
                solved += 1
                rhs = getattr(lib, prefix + "rhs")
                rhs.argtypes, rhs.restype = [ctypes.c_double, dp, dp, dp, dp], ctypes.c_int
                dydt = np.zeros(2 * n)
                assert rhs(tt, np.concatenate([q, f]), p, u, dydt) == 0
                np.testing.assert_array_equal(dydt, np.concatenate([f, z[:n]]), err_msg=key)
            else:  # singular only where the matrix is (no inertia for a flow, as an RC circuit)
                assert np.linalg.matrix_rank(K) < K.shape[0], key
    assert solved > 100
