"""The numeric linear form of a bond graph: sparse ``M q̈ + D q̇ + K q + Aᵀμ = B_e u``, ``A q̇ + B_a u = 0``.

When every element is linear with numeric values (``C``, ``I``, ``R`` and
their matrix fields, ``TF``, ``GY``, junctions, ports) and the sources are
functions of time, the bond formulation of :func:`~netdyn.bondgraph.convert.to_model`
has constant matrices, written here straight from the elements without any
symbolic derivation: one coordinate per bond, I → M, R → D, C → K (1/C),
GY → a skew pair in D, Se → B_e, Sf → a row of A with B_a, 0- and 1-junctions
and TF → rows of A. The rows and their order are those of ``to_model``, so the
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

import numpy as np
import scipy.sparse as sps
import sympy as sp

from netdyn.symbols import t

LINEAR_FORMULATIONS = (None, "bond")


def linear_form(bg, formulation=None):
    """``(form, None)`` with the matrices of :class:`netdyn.numerics.stamp.LinearNetwork`, or ``(None, why)``.

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
    ports = {}

    def number(x, what):
        x = sp.sympify(x)
        if not x.is_number or x.has(t):
            raise _Off(f"{what} = {x} is not a number")
        return float(x)

    def source(value, what):
        value = sp.sympify(value)
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
    form = {"names": [bg.coordinate_name(b) for b in bonds], **{k: m.tocsr() for k, m in mats.items()},
            "A": A.tocsr(), "B_e": B_e.tocsr(), "B_a": B_a.tocsr(), "inputs": inputs, "flow_labels": labels,
            "formulation": formulation, "ports": ports}
    return form, None


class _Off(Exception):
    """An element keeps the graph off the linear path (the message says why)."""


__all__ = ["linear_form"]
