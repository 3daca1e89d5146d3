"""The circuit room's two rows of the path table: ``linear`` and ``circuit``.

``linear`` takes a network whose elements are all linear with numeric values and whose DAE has index one
(stamped sparse matrices, Radau IIA); ``circuit`` one that is linear except for nonlinear dissipators
(diodes: Newton on the stamped matrices, variable-order BDF), or a circuit whose nonlinear resistors and
capacitors are given by their own dissipation or energy functions (:mod:`.laws`: each law compiled once). Neither takes ``params=`` overrides (those need
the symbolic paths).

>>> import netdyn
>>> from netdyn.numerics.problem import Problem
>>> from netdyn.components.electrical import Resistor, VoltageSource
>>> net = netdyn.Network()
>>> _ = net.add(VoltageSource("V1", "a", "0", 1.0), Resistor("R1", "a", "0", 2.0))
>>> LINEAR.accepts(Problem.from_call(net, (0, 1)), None).ok
True
>>> CIRCUIT.accepts(Problem.from_call(net, (0, 1), params={"R1": 1.0}), None).reason
'params= overrides need the symbolic path'
"""
from __future__ import annotations

from netdyn.errors import IntegrationError
from netdyn.numerics.circuit.linearsim import explain_not_linear, simulate_linear, try_linear
from netdyn.numerics.integrators.driver import explained
from netdyn.numerics.integrators.path import Path, Verdict

NO_PARAMS = "params= overrides need the symbolic path"


def _numeric_accepts(build, declined, accepted):
    """A row's ``accepts`` for a path that runs the network's own numbers: no ``params=``, and
    ``build(system, formulation)`` (the path's plan) not ``None``."""
    def accepts(problem, start):
        if problem.params:
            return Verdict(False, NO_PARAMS)
        plan = build(problem.system, problem.formulation)
        return Verdict(False, declined) if plan is None else Verdict(True, accepted, plan=plan)
    return accepts


def _try_circuit(system, formulation):
    from netdyn.numerics.circuit.nonlinearsim import try_circuit  # Newton, BDF (numba kernels)
    return try_circuit(system, formulation)


_linear_accepts = _numeric_accepts(
    try_linear, "not every element is linear with a numeric value, or the DAE has index two",
    "every element linear with numeric values and the DAE of index one: stamped sparse matrices, Radau IIA")
_diode_accepts = _numeric_accepts(
    _try_circuit, "not a network linear except for nonlinear dissipators (diodes) or elements given by "
    "energy or dissipation functions, with numeric values",
    "linear except for nonlinear dissipators (diodes): Newton on the stamped matrices, variable-order BDF")
#: the reason the row gives when it takes a network through its elements' own laws
LAWS_REASON = ("linear except for elements given by energy or dissipation functions (nonlinear resistors and "
               "capacitors): each law compiled once, Newton on the stamped matrices, variable-step BDF")


def _circuit_accepts(problem, start):
    verdict = _diode_accepts(problem, start)
    if verdict.ok or problem.params:
        return verdict
    from netdyn.numerics.circuit.laws.energysim import try_laws  # the laws' templates (sympy once per law)
    plan = try_laws(problem.system, problem.formulation)
    return verdict if plan is None else Verdict(True, LAWS_REASON, plan=plan)


def _linear_run(problem, start, lin):
    from netdyn.numerics.dae.start import DEFAULT_RTOL
    with explained(problem.system):
        return simulate_linear(problem.system, problem.t_span, problem.q0, problem.f0, problem.t_eval,
                               problem.rtol_or(DEFAULT_RTOL), problem.atol, problem.max_step, problem.formulation,
                               lin, problem.progress, save=problem.save, output=problem.output)


def _linear_refuse(problem, start, verdict):
    explain_not_linear(problem.system, problem.formulation, problem.params)


def _circuit_run(problem, start, circuit):
    from netdyn.numerics.circuit.nonlinearsim import CIRCUIT_RTOL, simulate_circuit
    if not hasattr(circuit, "group_types"):  # a LawCircuit: elements given by their own functions
        from netdyn.numerics.circuit.laws.energysim import simulate_laws
        from netdyn.numerics.dae.start import DEFAULT_RTOL  # the symbolic paths' default, which these networks had
        return simulate_laws(problem.system, problem.t_span, problem.q0, problem.f0, problem.t_eval,
                             rtol=problem.rtol_or(DEFAULT_RTOL), atol=problem.atol, max_step=problem.max_step,
                             circuit=circuit, progress=problem.progress)
    return simulate_circuit(problem.system, problem.t_span, problem.q0, problem.f0, problem.t_eval,
                            rtol=problem.rtol_or(CIRCUIT_RTOL), atol=problem.atol, max_step=problem.max_step,
                            circuit=circuit, progress=problem.progress)


def _circuit_refuse(problem, start, verdict):
    if problem.params:
        raise IntegrationError("method='circuit' runs the network's own numeric values; params= overrides need "
                               "the symbolic path: method='auto', 'projection' or 'ida'")
    elements = getattr(problem.system, "elements", None)
    from netdyn.components.base import EnergyLaw
    if isinstance(elements, dict) and any(isinstance(el, EnergyLaw) for el in elements.values()):
        from netdyn.errors import ElementError, ModelError
        from netdyn.numerics.circuit.laws.energysim import LawCircuit
        try:
            LawCircuit(problem.system, problem.formulation)
        except (ModelError, ElementError) as exc:
            raise IntegrationError(f"method='circuit' cannot take this network: {exc}; method='auto' or 'ida' "
                                   "runs it on the symbolic path") from None
        raise IntegrationError("method='circuit' takes circuits (electrical elements only) whose nonlinear "
                               "elements are diodes or given by energy or dissipation functions; method='auto' "
                               "or 'ida' runs this network on the symbolic path")
    if isinstance(elements, dict) and not any(getattr(el, "prefers_kind", None) for el in elements.values()):
        raise IntegrationError("method='circuit' is the path of networks with nonlinear dissipators (diodes), and "
                               "this one has none: method='linear' (or 'auto') runs a linear network")
    raise IntegrationError("method='circuit' needs a network that is linear except for nonlinear "
                           "dissipators (diodes), with numeric values")


LINEAR = Path("linear", _linear_accepts, _linear_run, _linear_refuse, integrates_with="Radau IIA on the linear DAE")
CIRCUIT = Path("circuit", _circuit_accepts, _circuit_run, _circuit_refuse,
               integrates_with="BDF with Newton on the circuit equations")
