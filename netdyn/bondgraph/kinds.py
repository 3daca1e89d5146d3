"""The element kinds of a bond graph: bond counts, parameters, and the variables of function parameters.

>>> KINDS["TF"][0], sorted(p for g in KINDS["C"][1] for p in g)
(2, ['C', 'coenergy', 'energy', 'law'])
>>> function_variable("I", "energy"), function_variable("R", "cocontent"), function_variable("MTF", "ratio")
(p, e, x)
"""
from typing import Any

import sympy as sp

#: the variable each function-valued parameter is written in
Q, F, X = sp.Symbol("q"), sp.Symbol("f"), sp.Symbol("x")
E, P = sp.Symbol("e"), sp.Symbol("p")
#: the parameters whose value is a function (of the element's variable, or of a field's q1..qn / f1..fn)
FUNCTION_VARIABLE = {"energy": Q, "coenergy": F, "content": F, "cocontent": E, "ratio_modulated": X}
#: the variable of a one-port element's energy-like function: (kind, parameter) -> symbol
_ONE_PORT_VARIABLE = {("C", "energy"): Q, ("C", "coenergy"): E, ("I", "energy"): P, ("I", "coenergy"): F,
                      ("R", "content"): F, ("R", "cocontent"): E}


def function_variable(kind, param):
    """The variable a function-valued parameter of a ``kind`` element is written in (``None``: not one)."""
    if (kind, param) in _ONE_PORT_VARIABLE:
        return _ONE_PORT_VARIABLE[(kind, param)]
    if param == "ratio" and kind in ("MTF", "MGY"):
        return X
    return None

#: kind -> (number of bonds: int or (min, None)), parameter alternatives (exactly one of each group), optional
KINDS: dict[str, Any] = {
    "Se": (1, [("effort",)], ()),
    "Sf": (1, [("flow",)], ()),
    "C": (1, [("C", "energy", "coenergy", "law")], ("ports",)),
    "I": (1, [("I", "coenergy", "energy", "law")], ("ports",)),
    "R": (1, [("R", "content", "cocontent", "law")], ("ports",)),
    "TF": (2, [("ratio",)], ("ports",)),
    "GY": (2, [("ratio",)], ("ports",)),
    "MTF": (2, [("ratio",)], ("by", "ports")),
    "MGY": (2, [("ratio",)], ("by", "ports")),
    "0": ((2, None), [], ()),
    "1": ((2, None), [], ()),
    "port": (2, [], ()),
    "field": ((1, None), [("element",)], ("kinds", "label")),
}
JUNCTIONS = ("0", "1")
#: elements that become multiport fields with ``ports=n`` (one energy / coenergy / content of n variables)
FIELDS = ("C", "I", "R")
#: the parameters a multiport field takes: its matrix, its function (energy of q1..qn, coenergy or content of
#: f1..fn), or — a quadratic form only — the other function (co-energy of e1..en, energy of p1..pn,
#: co-content of e1..en)
FIELD_PARAMETERS = {"C": ("C", "energy", "coenergy"), "I": ("I", "coenergy", "energy"), "R": ("R", "content", "cocontent")}
#: (kind, parameter) -> the letter of a field function's variables
FIELD_VARIABLE = {("C", "energy"): "q", ("C", "coenergy"): "e", ("I", "coenergy"): "f", ("I", "energy"): "p",
                  ("R", "content"): "f", ("R", "cocontent"): "e"}
#: the function a field's model uses, and the other one (given as a quadratic form)
FIELD_MAIN = {"C": "energy", "I": "coenergy", "R": "content"}
FIELD_DUAL = {"C": "coenergy", "I": "energy", "R": "cocontent"}


def field_variables(param, n, kind=None):
    """The variables of a field's function: ``q1..qn`` (energy) or ``f1..fn`` (coenergy, content); with the
    element's ``kind`` the other forms' ``e1..en`` (a C's co-energy, an R's co-content) and ``p1..pn`` (an I's
    energy)."""
    base = FIELD_VARIABLE.get((kind, param)) or ("q" if param in ("energy", "C") else "f")
    return [sp.Symbol(f"{base}{k + 1}") for k in range(n)]


def quadratic_form(expr, variables):
    """The symmetric matrix H with ``expr = ½ xᵀ H x`` (x the variables), or None when ``expr`` is no such form.

    >>> e1, e2 = sp.symbols("e1 e2")
    >>> quadratic_form(e1**2 + e1*e2 + 3*e2**2/2, [e1, e2])
    Matrix([
    [2, 1],
    [1, 3]])
    >>> quadratic_form(e1**4, [e1, e2]) is None
    True
    """
    H = sp.hessian(expr, variables)
    if any(h.has(*variables) for h in H):
        return None
    x = sp.Matrix(variables)
    if sp.expand(expr - (x.T * H * x)[0, 0] / 2) != 0:
        return None
    return H

STORAGE = ("C", "I")
SOURCES = ("Se", "Sf")
TWO_PORTS = ("TF", "GY", "MTF", "MGY")
ALIASES = {"zero": "0", "one": "1", "0-junction": "0", "1-junction": "1", 0: "0", 1: "1"}


def field_function(kind, vals, x):
    """A multiport field's V(q), T*(f) or D(f) at the port variables ``x`` (its function, or ½ xᵀ K x)."""
    param = FIELD_MAIN[kind]
    if param in vals:
        return vals[param].xreplace(dict(zip(field_variables(param, len(x)), x)))
    if FIELD_DUAL[kind] in vals:   # ½ yᵀHy given: its Legendre transform is ½ xᵀH⁻¹x
        K = quadratic_form(vals[FIELD_DUAL[kind]], field_variables(FIELD_DUAL[kind], len(x), kind)).inv()
    else:
        K = vals[kind].inv() if kind == "C" else vals[kind]
    xv = sp.Matrix(x)
    return sp.expand((xv.T * K * xv)[0, 0] / 2)


def field_cofunction(kind, vals, y):
    """A multiport field's other function at ``y``: V*(e), H(p) or D*(e) — as given, or the Legendre transform
    ½ yᵀK⁻¹y of a quadratic main function or matrix; None when the main function is not quadratic."""
    dual, n = FIELD_DUAL[kind], len(y)
    if dual in vals:
        return vals[dual].xreplace(dict(zip(field_variables(dual, n, kind), y)))
    if kind in vals:
        K = vals[kind] if kind == "C" else vals[kind].inv()
    else:
        H = quadratic_form(vals[FIELD_MAIN[kind]], field_variables(FIELD_MAIN[kind], n, kind))
        if H is None:
            return None
        K = H.inv()
    yv = sp.Matrix(y)
    return sp.expand((yv.T * K * yv)[0, 0] / 2)


def element_values(bg, n, symbolic=False, parameters=None):
    """The element's parameters; with ``symbolic`` numeric ones become symbols (named after the element)."""
    values = dict(bg.params(n))
    numeric = [p for p, v in values.items() if isinstance(v, sp.Basic) and not isinstance(v, sp.MatrixBase)
               and v.is_number and p not in FUNCTION_VARIABLE]
    if symbolic:
        for p, v in values.items():   # a field's matrix: one symbol per independent numeric entry
            if isinstance(v, sp.MatrixBase):
                entry = lambda i, j: v[i, j] if not v[i, j].is_number else sp.Symbol(f"{n}_{min(i, j) + 1}{max(i, j) + 1}")
                values[p] = sp.ImmutableMatrix(v.rows, v.cols, entry)
                if parameters is not None:
                    for i in range(v.rows):
                        for j in range(i, v.cols):
                            if v[i, j].is_number:
                                parameters[values[p][i, j]] = v[i, j]
        for p in numeric:
            sym = sp.Symbol(n if len(numeric) == 1 else f"{n}_{p}")
            if parameters is not None:
                parameters[sym] = values[p]
            values[p] = sym
    return values
