"""Every integrator on every model netdyn ships (issue 18).

Each case is (model × formulation × method × tolerance). A case either runs and agrees with the default
method (``method="auto"`` at rtol 1e-10) to ``K · rtol`` relative to each variable's scale, or — where the
registry says the method does not apply — refuses before integrating (no progress callback, no step taken)
with a ``NetdynError`` whose message says why.

New models join by one entry in ``MODELS``; new integrators by one entry in ``METHODS``.
"""
import importlib.util
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest

import netdyn
from netdyn import linkages, models

HERE = Path(__file__).resolve().parent
EXAMPLES = HERE.parent / "examples"


def example(name):
    spec = importlib.util.spec_from_file_location(f"example_{name}", EXAMPLES / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def systems():
    import sys
    sys.path.insert(0, str(HERE))
    import systems as mod
    return mod


# ------------------------------------------------------------------------------------------ registry

# (method, solver) — every integration path netdyn offers
METHODS = [("auto", "DOP853"), ("projection", "DOP853"), ("projection", "RK45"), ("projection", "Radau"),
           ("ida", "DOP853"), ("linear", "DOP853")]
TOLERANCES = (1e-5, 1e-8)
K = 100  # global error of an rtol-controlled integrator over these short spans: within K · rtol of the scale

NONLINEAR = r"not linear|nonlinear|needs a Network|only networks of one-dimensional elements"
NO_INERTIA = r"projection.*no inertia"


@dataclass
class Case:
    name: str
    build: callable  # -> Network or LagrangianModel
    span: float
    formulations: tuple = (None,)
    q0: dict = None
    f0: dict = None
    guess: dict = None
    refuses: dict = field(default_factory=dict)  # method -> regex of the reason


def _blade_sleigh():
    from netdyn.components.nonholonomic import Blade
    from netdyn.components.planar import RigidBody, Torque
    net = netdyn.Network("blade sleigh")
    net.add(RigidBody("body", mass=1.0, inertia=0.1, com=(0.5, 0)), Blade("blade", "body"),
            Torque("steer", "body", 0.05))
    return net


def _slider_crank_free():
    return linkages.slider_crank(tau=0)


PLANAR = ("absolute", "relative")
MECH_1D = ("node", "loop")
CIRCUIT = ("loop", "branch", "node")

MODELS = [
    # planar linkages, driven and undriven
    Case("slider-crank driven", lambda: linkages.slider_crank(), 0.4, PLANAR, q0={"O": 0.3},
         guess={"theta_rod": -0.1, "x_block": 1.5}, refuses={"linear": NONLINEAR}),
    Case("slider-crank coasting", _slider_crank_free, 0.4, PLANAR, q0={"O": 0.3}, f0={"O": 2.0},
         guess={"theta_rod": -0.1, "x_block": 1.5}, refuses={"linear": NONLINEAR}),
    Case("four-bar driven", lambda: linkages.four_bar(tau=100.0), 0.1, PLANAR, q0={"O": 0.4},
         guess=linkages.FOUR_BAR_GUESS, refuses={"linear": NONLINEAR}),
    Case("four-bar under gravity", lambda: linkages.four_bar(tau=False, gravity=True), 0.4, PLANAR, q0={"O": 0.4},
         guess=linkages.FOUR_BAR_GUESS, refuses={"linear": NONLINEAR}),
    Case("five-bar", lambda: linkages.five_bar()[0], 0.3, PLANAR, q0={"J1": 1.9, "J2": 1.2},
         guess=linkages.five_bar()[1], refuses={"linear": NONLINEAR}),
    Case("3-RRR", lambda: linkages.three_rrr()[0], 0.2, PLANAR, guess=linkages.three_rrr()[1],
         refuses={"linear": NONLINEAR}),
    Case("triple pendulum", lambda: linkages.pendulum([1, 1, 1], [0.5, 0.4, 0.3]), 0.4, PLANAR,
         q0={"J1": 0.5, "J2": 0.2, "J3": -0.1}, refuses={"linear": NONLINEAR}),
    Case("Andrews' squeezer", linkages.andrews_squeezer, 0.003, PLANAR, q0={"O": linkages.ANDREWS_Q0["O"]},
         guess=linkages.ANDREWS_Q0, refuses={"linear": NONLINEAR}),
    # nonholonomic
    Case("blade sleigh", _blade_sleigh, 1.0, PLANAR, f0={"x_body": 0.3, "theta_body": 0.5},
         refuses={"linear": NONLINEAR}),
    Case("Chaplygin sleigh", models.chaplygin_sleigh, 1.0, f0={"x": 0.2, "theta": 1.0},
         refuses={"linear": NONLINEAR}),
    Case("rolling disk", models.rolling_disk, 1.0, f0={"theta": 0.5, "phi": 2.0, "x": 0.6},
         refuses={"linear": NONLINEAR}),
    # the book's hand-typed slider-crank and the motor example (mixed domain)
    Case("slider-crank (hand-typed)", lambda: models.slider_crank(torque=1.0), 0.4, q0={"theta1": 0.3},
         guess={"theta2": -0.1, "x3": 0.35, "x1": 0.05, "y1": 0.01, "x2": 0.2, "y2": 0.01},
         refuses={"linear": NONLINEAR}),
    Case("motor slider-crank (example)", lambda: example("motor_slider_crank").build(), 0.2, PLANAR,
         q0={"O": 0.3}, guess={"theta_rod": -0.1, "x_block": 1.5}, refuses={"linear": NONLINEAR}),
    Case("motor slider-crank (hand-typed)", lambda: example("motor_slider_crank").build_hand_typed(), 0.2,
         q0={"theta1": 0.3}, guess=None, refuses={"linear": NONLINEAR}),
    # transducers and mixed-domain examples
    Case("loudspeaker (example)", lambda: example("loudspeaker").build(), 0.02, CIRCUIT),
    Case("magnetic levitation (example)", lambda: example("magnetic_levitation").build(), 0.02,
         q0={"x_ball": -0.002}, refuses={"linear": NONLINEAR, "projection": NO_INERTIA}),
    Case("capacitor microphone (example)", lambda: example("capacitor_microphone").build(), 0.002,
         refuses={"linear": NONLINEAR, "projection": NO_INERTIA}),
    Case("transducers (tests/systems)", lambda: systems().transducer_network(), 0.02,
         refuses={"linear": NONLINEAR, "projection": NO_INERTIA}),
    # the book's networks and 1-D mechanics
    Case("RLC (tests/systems)", lambda: systems().rlc_circuit(), 0.02, CIRCUIT),
    Case("two masses (tests/systems)", lambda: systems().mechanical_network(), 1.0, MECH_1D),
    Case("every element (tests/systems)", lambda: systems().every_element_network(), 0.004,
         refuses={"linear": NONLINEAR, "projection": NO_INERTIA}),
    Case("Example 4.4 netlist", lambda: netdyn.read_netlist(str(EXAMPLES / "netlists" / "example_4_4.cir")), 0.02,
         CIRCUIT),
    Case("RC ladder netlist", lambda: netdyn.read_netlist(str(EXAMPLES / "netlists" / "rc_ladder.cir")), 1e-5,
         CIRCUIT, refuses={"projection": NO_INERTIA}),
]

# formulations where the structure itself changes the answer to "does it apply"
FORMULATION_REFUSALS = {
    # in node (flux) coordinates an RLC network's inductor flows have no inertia in the loop sense either
}


def _params():
    out = []
    for case in MODELS:
        for form in case.formulations:
            for method, solver in METHODS:
                for rtol in TOLERANCES:
                    fid = "" if form is None else f"-{form}"
                    out.append(pytest.param(case, form, method, solver, rtol,
                                            id=f"{case.name}{fid}-{method}-{solver}-{rtol:g}"))
    return out


_SYSTEMS, _REFS = {}, {}


def _system(case, form):
    key = (case.name, form)
    if key not in _SYSTEMS:
        _SYSTEMS[key] = case.build()
    return _SYSTEMS[key]


def _grid(case):
    return np.linspace(0, case.span, 11)


def _run(case, form, method, solver, rtol, progress=None):
    system = _system(case, form)
    kw = dict(q0=case.q0, f0=case.f0, guess=case.guess, t_eval=_grid(case), rtol=rtol, method=method,
              solver=solver, progress=progress)
    if hasattr(system, "elements"):
        kw["formulation"] = form
    return netdyn.simulate(system, (0, case.span), **kw)


def _reference(case, form):
    key = (case.name, form)
    if key not in _REFS:
        _REFS[key] = _run(case, form, "auto", "DOP853", 1e-10)
    return _REFS[key]


@pytest.mark.parametrize("case, form, method, solver, rtol", _params())
def test_every_integrator_on_every_model(case, form, method, solver, rtol):
    reason = case.refuses.get(method)
    if reason is not None:
        steps = []
        with pytest.raises(netdyn.NetdynError, match=reason):
            _run(case, form, method, solver, rtol, progress=steps.append)
        assert not steps, "the refusal came after integrating had started"
        return
    sol = _run(case, form, method, solver, rtol)
    ref = _reference(case, form)
    names = [n for n in ref.coordinate_names if n in sol.coordinate_names]
    assert names, "no common coordinates to compare"
    Y = np.array([sol[n] for n in names])
    R = np.array([ref[n] for n in names])
    scale = np.max(np.abs(R), axis=1)
    scale = np.maximum(scale, 1e-6 * np.max(scale) if np.max(scale) > 0 else 1.0)
    err = np.max(np.abs(Y - R), axis=1) / scale
    worst = int(np.argmax(err))
    assert err[worst] <= K * rtol, f"{names[worst]}: {err[worst]:.3g} of its scale, allowed {K * rtol:.3g}"


def test_matrix_size():
    """The matrix's size, stated in docs/mechanisms.md."""
    assert len(_params()) == sum(len(c.formulations) for c in MODELS) * len(METHODS) * len(TOLERANCES)
