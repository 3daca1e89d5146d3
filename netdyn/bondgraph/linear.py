"""The numeric linear form of a bond graph: sparse ``M q̈ + D q̇ + K q + Aᵀμ = B_e u``, ``A q̇ + B_a u = 0``.

When every element is linear with numeric values (``C``, ``I``, ``R`` and
their matrix fields, ``TF``, ``GY``, junctions, ports) and the sources are
functions of time, the bond formulation of :func:`~netdyn.bondgraph.convert.to_model`
has constant matrices, written here straight from the elements without any
symbolic derivation: one coordinate per bond, I → M, R → D, C → K (1/C),
GY → a skew pair in D, Se → B_e, Sf → a row of A with B_a, 0- and 1-junctions
and TF → rows of A; a ``field`` wrapping linear network elements (coupled
inductors, controlled sources E, G, F, H) by its own contribution, whose servo
constraints' reactions (a controlled source's multiplier acting where it
pushes, not along its own row) fill the matrix ``R``. The rows and their order are those of ``to_model``, so the
multipliers are the same. The numerics layer integrates it on its linear fast
path (``netdyn.simulate`` picks it by itself, ``method="linear"``).

>>> import netdyn
>>> bg = netdyn.BondGraph("RC")
>>> for k, n, p in [("Se", "u", {"effort": 1.0}), ("1", "J", {}), ("C", "C1", {"C": 0.5}), ("R", "R1", {"R": 2.0})]:
...     bg.add(k, n, **p)
>>> _ = bg.chain("u", "J", "C1"); _ = bg.bond("J", "R1")
>>> form, why = linear_form(bg)
>>> form["names"], float(form["K"][1, 1]), float(form["D"][2, 2]), form["A"].toarray().tolist()
(['q_u', 'q_C1', 'q_R1'], 2.0, 2.0, [[1.0, -1.0, 0.0], [1.0, 0.0, -1.0]])
"""
from __future__ import annotations

import re

import numpy as np
import scipy.sparse as sps
import sympy as sp

from netdyn.bondgraph.convert import field_terms
from netdyn.symbols import t

LINEAR_FORMULATIONS = (None, "bond")


def linear_form(bg, formulation=None):
    """``(form, None)`` with the matrices of :class:`netdyn.numerics.circuit.stamp.LinearNetwork`, or ``(None, why)``.

    ``why`` names the element that keeps the graph off the linear path.
    """
    if formulation not in LINEAR_FORMULATIONS:
        return None, f"the linear path builds the bond formulation; formulation={formulation!r} is symbolic"
    bg.check()
    bonds = bg.bond_names
    idx = {b: i for i, b in enumerate(bonds)}
    n = len(bonds)
    mats = {k: sps.lil_matrix((n, n)) for k in ("M", "D", "K")}
    rows, labels, inputs, be, ba = [], [], [], [], []   # be/ba: (row, input index, value)
    servo = {}  # row -> {column: value}: where a servo constraint's multiplier acts (its column of R)
    ports = {}

    named = bg.parameter_values()   # the graph's named parameters at their values

    def number(x, what):
        x = sp.sympify(x).xreplace(named)
        if not x.is_number or x.has(t):
            raise _Off(f"{what} = {x} is not a number")
        return float(x)

    def source(value, what):
        value = sp.sympify(value).xreplace(named)
        if value.free_symbols - {t} or value.atoms(sp.core.function.AppliedUndef):
            raise _Off(f"{what} = {value} depends on more than t")
        inputs.append(value)
        return len(inputs) - 1

    try:
        for el in bg.graph.nodes:
            kind = bg.kind(el)
            vals = bg.params(el)
            bl = bg.bonds_of(el)
            s = [bg.sign(el, b) for b in bl]
            ports[el] = [(None, {idx[b]: float(sb)}) for b, sb in zip(bl, s)]
            if kind in ("C", "I", "R"):
                target = {"C": "K", "I": "M", "R": "D"}[kind]
                if kind not in vals:
                    raise _Off(f"it is given by its {'energy' if kind == 'C' else 'coenergy' if kind == 'I' else 'content'}"
                               " function")
                value = vals[kind]
                if isinstance(value, sp.MatrixBase):
                    Km = np.array([[number(x, f"{kind}[{i + 1},{j + 1}]") for j, x in enumerate(value.row(i))]
                                   for i in range(value.rows)])
                    if kind == "C":
                        Km = np.linalg.inv(Km)
                else:
                    Km = np.array([[1.0 / number(value, kind) if kind == "C" else number(value, kind)]])
                for i, bi in enumerate(bl):
                    for j, bj in enumerate(bl):
                        mats[target][idx[bi], idx[bj]] += s[i] * s[j] * Km[i, j]
            elif kind == "Se":
                be.append((idx[bl[0]], source(vals["effort"], "effort"), -float(s[0])))
            elif kind == "Sf":
                rows.append({idx[bl[0]]: 1.0})
                labels.append(f"{el} (flow source)")
                ba.append((len(rows) - 1, source(vals["flow"], "flow"), -1.0))
            elif kind in ("0", "port"):
                rows.append({idx[b]: float(sb) for b, sb in zip(bl, s)})
                labels.append(f"{el} (0-junction)")
            elif kind == "1":
                for b in bl[1:]:
                    rows.append({idx[bl[0]]: 1.0, idx[b]: -1.0})
                    labels.append(f"{el} (1-junction: {bl[0]} = {b})")
            elif kind == "TF":
                r = number(vals["ratio"], "ratio")
                rows.append({idx[bl[1]]: 1.0, idx[bl[0]]: -r})
                labels.append(f"{el} (transformer)")
            elif kind == "GY":
                r = number(vals["ratio"], "ratio")
                mats["D"][idx[bl[0]], idx[bl[1]]] += s[0] * r
                mats["D"][idx[bl[1]], idx[bl[0]]] -= s[0] * r
            elif kind == "field":
                _field_rows(bg, el, vals, bl, s, bonds, idx, mats, rows, labels, be, ba, servo, source)
            else:
                raise _Off(f"a {kind} element has no constant linear form")
    except _Off as why:
        return None, f"{el}: {why}"
    A = sps.lil_matrix((len(rows), n))
    for k, row in enumerate(rows):
        for j, v in row.items():
            A[k, j] += v
    B_e = sps.lil_matrix((n, len(inputs)))
    B_a = sps.lil_matrix((len(rows), len(inputs)))
    for i, k, v in be:
        B_e[i, k] += v
    for i, k, v in ba:
        B_a[i, k] += v
    R = None
    if servo:  # Aᵀ but for the servo rows' columns
        R = sps.lil_matrix(A.T)
        for r, col in servo.items():
            R[:, r] = 0.0
            for j, v in col.items():
                R[j, r] += v
        R = R.tocsr()
    coordinate = bg.coordinate_names()
    form = {"names": [coordinate[b] for b in bonds], **{k: m.tocsr() for k, m in mats.items()},
            "A": A.tocsr(), "B_e": B_e.tocsr(), "B_a": B_a.tocsr(), "inputs": inputs, "flow_labels": labels,
            "formulation": formulation, "ports": ports, "R": R}
    return form, None


def linear_start(bg, q0, f0):
    """``(q0, f0)`` of the linear path with the momenta ``p_<I>`` of its inertias given in ``q0`` moved onto their
    bonds' flows (f = p/I, signed by the half-arrow): the energy variables start a run on every path.

    >>> import netdyn
    >>> bg = netdyn.BondGraph("mass")
    >>> bg.add("Se", "F", effort=2.0); bg.add("I", "m", I=4.0); _ = bg.bond("F", "m")
    >>> linear_start(bg, {"p_m": 2.0}, None)
    ({}, {'q_m': 0.5})
    """
    momenta = {"p_" + re.sub(r"\W", "_", n): n for n in bg.of_kind("I") if not bg.is_field(n)}
    if not q0 or not any(isinstance(k, str) and k in momenta for k in q0):
        return q0, f0
    names = bg.coordinate_names()
    q0, f0 = dict(q0), dict(f0 or {})
    for key in [k for k in q0 if isinstance(k, str) and k in momenta]:
        n = momenta[key]
        b = bg.bond_of(n)
        inertance = sp.sympify(bg.params(n)["I"]).xreplace(bg.parameter_values())
        f0.setdefault(names[b], bg.sign(n, b) * float(q0.pop(key)) / float(inertance))
    return q0, f0


def _field_rows(bg, el, vals, bl, s, bonds, idx, mats, rows, labels, be, ba, servo, source):
    """A field's terms (:func:`~netdyn.bondgraph.convert.field_terms`, in plain symbols) as matrix entries."""
    q = {b: sp.Symbol(f"_q{i}") for i, b in enumerate(bonds)}
    f = {b: sp.Symbol(f"_f{i}") for i, b in enumerate(bonds)}
    T, V, D, efforts, flow, flow_labels, reactions = [], [], [], {}, [], [], {}
    field_terms(bg, el, vals, bl, dict(zip(bl, s)), q, f, T, V, D, efforts, flow, flow_labels, {}, False, reactions)
    qs, fs = [q[b] for b in bl], [f[b] for b in bl]
    col = {q[b]: idx[b] for b in bl} | {f[b]: idx[b] for b in bl}

    def linear(expr, variables, what):
        expr = sp.expand(sp.sympify(expr))
        coeffs = {v: expr.coeff(v) for v in variables}
        rest = sp.expand(expr - sum(c * v for v, c in coeffs.items()))
        if any(c.free_symbols for c in coeffs.values()) or rest.free_symbols & (set(qs) | set(fs)):
            raise _Off(f"its {what} is not linear in the port variables")
        return {v: float(c) for v, c in coeffs.items() if c != 0}, rest

    for target, terms, variables in (("M", T, fs), ("K", V, qs), ("D", D, fs)):
        energy = sp.expand(sp.Add(*terms))
        for a in variables:
            grad, rest = linear(energy.diff(a), variables, f"{target} term")
            if rest != 0:
                raise _Off(f"its {target} term has a part that is not quadratic")
            for v, c in grad.items():
                mats[target][col[a], col[v]] += c
    for coord, e in efforts.items():  # M q̈ + D q̇ + K q = effort: -coefficients, the rest an input
        lin, rest = linear(e, qs + fs, "effort")
        for v, c in lin.items():
            mats["K" if v in qs else "D"][col[coord], col[v]] -= c
        if rest != 0:
            be.append((col[coord], source(rest, "effort"), 1.0))
    for c, label in zip(flow, flow_labels):
        lin, rest = linear(c, fs, "flow constraint")
        rows.append({col[v]: a for v, a in lin.items()})
        labels.append(label)
        if rest != 0:
            ba.append((len(rows) - 1, source(rest, "flow"), 1.0))
        if label in reactions:
            servo[len(rows) - 1] = {col[v]: float(a) for v, a in reactions[label].items()}


class _Off(Exception):
    """An element keeps the graph off the linear path (the message says why)."""


__all__ = ["linear_form", "linear_start"]
