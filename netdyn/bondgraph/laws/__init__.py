"""Constitutive laws and the causal state equations of a bond graph (a room of :mod:`netdyn.bondgraph`).

* :mod:`~netdyn.bondgraph.laws.forms` — a one-port's law in any of its forms (energy, co-energy, content,
  co-content, an explicit relation either way), inverted and integrated in closed form or numerically;
* :mod:`~netdyn.bondgraph.laws.equations` — the explicit state equations by the causal signal paths, each
  law used in the causality SCAP assigns, derivative causality reduced, nonlinear algebraic loops kept implicit.

>>> from netdyn.bondgraph.laws import Law
>>> Law("R1", "R", "law", "f = e/2").F(3)
6
"""
from netdyn.bondgraph.laws.forms import (LAW_PARAMETERS, PARAMETER_VARIABLE, VARIABLES, Abs, Law, NumericFunction,
                                         closed_antiderivative, closed_inverse, element_law, parse_relation, plain,
                                         realify, sign)
from netdyn.bondgraph.laws.equations import CausalSystem, StateEquations, state_equations

__all__ = ["Law", "element_law", "realify", "plain", "sign", "Abs", "NumericFunction", "closed_inverse",
           "closed_antiderivative", "VARIABLES", "PARAMETER_VARIABLE", "LAW_PARAMETERS", "parse_relation",
           "CausalSystem", "StateEquations", "state_equations"]
