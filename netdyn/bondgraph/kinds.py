"""The element kinds of a bond graph: bond counts, parameters, and the variables of function parameters.

>>> KINDS["TF"][0], sorted(p for g in KINDS["C"][1] for p in g)
(2, ['C', 'energy'])
"""
import sympy as sp

#: the variable each function-valued parameter is written in
Q, F, X = sp.Symbol("q"), sp.Symbol("f"), sp.Symbol("x")
FUNCTION_VARIABLE = {"energy": Q, "coenergy": F, "content": F, "ratio_modulated": X}

#: kind -> (number of bonds: int or (min, None)), parameter alternatives (exactly one of each group), optional
KINDS = {
    "Se": (1, [("effort",)], ()),
    "Sf": (1, [("flow",)], ()),
    "C": (1, [("C", "energy")], ("ports",)),
    "I": (1, [("I", "coenergy")], ("ports",)),
    "R": (1, [("R", "content")], ("ports",)),
    "TF": (2, [("ratio",)], ()),
    "GY": (2, [("ratio",)], ()),
    "MTF": (2, [("ratio",), ("by",)], ()),
    "MGY": (2, [("ratio",), ("by",)], ()),
    "0": ((2, None), [], ()),
    "1": ((2, None), [], ()),
    "port": (2, [], ()),
    "field": ((1, None), [("element",)], ("kinds", "label")),
}
JUNCTIONS = ("0", "1")
#: elements that become multiport fields with ``ports=n`` (one energy / coenergy / content of n variables)
FIELDS = ("C", "I", "R")


def field_variables(param, n):
    """The variables of a field's function: ``q1..qn`` (energy) or ``f1..fn`` (coenergy, content)."""
    base = "q" if param in ("energy", "C") else "f"
    return [sp.Symbol(f"{base}{k + 1}") for k in range(n)]

STORAGE = ("C", "I")
SOURCES = ("Se", "Sf")
TWO_PORTS = ("TF", "GY", "MTF", "MGY")
ALIASES = {"zero": "0", "one": "1", "0-junction": "0", "1-junction": "1", 0: "0", 1: "1"}


def field_function(kind, vals, x):
    """A multiport field's V(q), T*(f) or D(f) at the port variables ``x`` (its function, or ½ xᵀ K x)."""
    param = {"C": "energy", "I": "coenergy", "R": "content"}[kind]
    if param in vals:
        return vals[param].xreplace(dict(zip(field_variables(param, len(x)), x)))
    K = vals[kind].inv() if kind == "C" else vals[kind]
    xv = sp.Matrix(x)
    return sp.expand((xv.T * K * xv)[0, 0] / 2)
