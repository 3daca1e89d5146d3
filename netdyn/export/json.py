"""Export to JSON: coordinates, parameters, multipliers and the equations as sympy strings.

Every expression is a string in the model's internal
symbols (``x``, ``x_dot``, ``x_ddot``, ``lambda_1``, ``mu_1``, parameters, ``t``;
an input ``v(t)`` is the symbol ``v``). ``symbols`` records each symbol's
assumptions so that :func:`from_json` gives back *equal* expressions (it parses them with the
restricted reader of :mod:`netdyn.lagrange.exprtext`, never ``eval``; every name must be one the file declares):
``equations`` (the Lagrange rows ``M q̈ + h + Φ_qᵀλ + Rᵀμ``, ``R = A`` but for controlled sources, then ``φ``, then
``A f + a``, each ``= 0``) and the pieces ``M``, ``h``, ``phi``, ``Phi_q``, ...
(matrices as ``[row, column, expression]`` triples).

A mechanism in relative coordinates is written in recursive form (``form=None`` or ``"recursive"``;
``format_version`` 2): ``definitions`` lists the named intermediates of its Newton–Euler program as
``[name, expression]`` pairs in the order they are computed, ``equations`` are written over them, and ``M``
and ``h`` hold only the terms outside the bodies (springs, dampers, forces, 1-D elements), so that
``equations`` stays the complete statement; ``form="expanded"`` writes the expanded ``M`` and ``h`` (version 1).

>>> import sympy as sp
>>> from netdyn import LagrangianModel, coordinates, t
>>> x, = coordinates("x,")
>>> m, k = sp.symbols("m k")
>>> model = LagrangianModel([x], T=m*x.diff(t)**2/2, V=k*x**2/2, parameters={"m": 2})
>>> import json
>>> doc = json.loads(to_json(model))
>>> doc["equations"], doc["parameters"]
(['k*x + m*x_ddot'], [{'name': 'k', 'default': None}, {'name': 'm', 'default': 2.0}])
>>> from_json(to_json(model))["equations"] == model.derive().lagrange_rows()
True
"""
from __future__ import annotations

import json

from netdyn.errors import ParseError
import sympy as sp

from netdyn.export._program import parameter_defaults, recursive_parts, wants_recursive
from netdyn.lagrange.exprtext import from_text, symbol_table, to_text

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # names for the hints only (annotations are not evaluated)
    from typing import Any

FORMAT = "netdyn-equations"
FORMAT_VERSION = 2  # 2: "R", where each multiplier acts (controlled sources), and the recursive form's "definitions"; 1 is read as R = A
_VECTORS = ("h", "phi", "Phi_t", "gamma_phi", "a", "gamma_psi")
_MATRICES = ("M", "Phi_q", "A", "R")  # R: where μ acts (A itself but for controlled sources' servo constraints)


def _pieces(eq):
    return {"M": eq.M, "h": eq.h, "phi": eq.phi, "Phi_q": eq.Phi_q, "Phi_t": eq.Phi_t, "gamma_phi": eq.gamma_phi,
            "A": eq.A, "a": eq.a0, "gamma_psi": eq.gamma_psi, "R": eq.reaction}


def to_json(model, indent=2, form=None):
    """The JSON text of a model's derived equations; see the module docstring."""
    recursive = wants_recursive(model, form)
    if recursive:
        eq, defs, rows = recursive_parts(model)
        params = sorted({s for e in [e for _, e in defs] + rows for s in sp.sympify(e).free_symbols}
                        - {s for s, _ in defs} - set(eq.q) - set(eq.f) - set(eq.a) - set(eq.lam) - set(eq.mu)
                        - set(eq.inputs) - {sp.Symbol("t")} | set(eq.parameters), key=lambda s: s.name)
    else:
        eq, defs = model.derive(), []
        rows = eq.lagrange_rows() + list(eq.phi) + eq.flow_constraint_rows()
        params = list(eq.parameters)
    pieces = _pieces(eq)
    doc = {
        "format": FORMAT, "format_version": FORMAT_VERSION, "name": model.name,
        "form": ("recursive: Newton-Euler definitions, then tau(q,f,q_ddot) + M_rest q_ddot + h_rest + Phi_q^T lambda"
                 " + R^T mu = 0; phi(q,t) = 0; A f + a = 0" if recursive else
                 "M(q,t) q_ddot + h(q,f,t) + Phi_q^T lambda + R^T mu = 0; phi(q,t) = 0; A f + a = 0"),
        "coordinates": [str(s) for s in eq.q], "flows": [str(s) for s in eq.f],
        "accelerations": [str(s) for s in eq.a],
        "parameters": [{"name": k, "default": v} for k, v in parameter_defaults(model, eq, params).items()],
        "inputs": [str(s) for s in eq.inputs],
        "multipliers": {
            "lambda": [{"name": str(s), "constraint": lab} for s, lab in zip(eq.lam, model.constraint_labels)],
            "mu": [{"name": str(s), "constraint": lab} for s, lab in zip(eq.mu, model.flow_constraint_labels)]},
        "equations": [to_text(r) for r in rows],
    }
    if recursive:
        doc["definitions"] = [[s.name, to_text(e)] for s, e in defs]
    for key in _VECTORS:
        doc[key] = [to_text(e) for e in pieces[key]]
    for key in _MATRICES:
        doc[key] = [[i, j, to_text(e)] for (i, j), e in sorted(pieces[key].items())]
    everything = rows + [e for k in _VECTORS for e in pieces[k]] + [e for k in _MATRICES for e in pieces[k].values()]
    everything += [e for d in defs for e in d]
    doc["symbols"] = symbol_table(*everything, *eq.q, *eq.f, *eq.a, *eq.lam, *eq.mu, *params)
    return json.dumps(doc, indent=indent)


def from_json(text: str) -> dict[str, Any]:
    """Parse :func:`to_json` output: a dict with the names and sympy objects.

    ``equations`` and the vectors are lists of expressions; ``M``, ``Phi_q``, ``A`` and ``R`` (where each
    multiplier μ acts: ``A`` but for controlled sources) are ``{(row, column): expression}`` dicts as in :class:`netdyn.lagrange.equations.Equations`.

    >>> import netdyn
    >>> x, = netdyn.coordinates("x,")
    >>> model = netdyn.LagrangianModel([x], T=3*x.diff(netdyn.t)**2/2, V=x**2/2)
    >>> doc = from_json(netdyn.export_equations(model, "json"))
    >>> doc["M"]
    {(0, 0): 3}
    """
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ParseError(f"not JSON: {exc.msg}", line=exc.lineno) from None
    except RecursionError:
        raise ParseError("not a netdyn equations file: the JSON is nested too deeply") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise ParseError(f"not a netdyn equations file (expected \"format\": \"{FORMAT}\")")
    version = doc.get("format_version")
    if not isinstance(version, int) or version > FORMAT_VERSION:
        raise ParseError(f"equations file format_version {version!r} is newer than this netdyn reads "
                         f"({FORMAT_VERSION}); upgrade netdyn")
    table = doc.get("symbols", {})
    if not isinstance(table, dict):
        raise ParseError("equations file: 'symbols' must be a mapping of names to assumptions")
    names: set[Any] = {"t"}
    for key in ("coordinates", "flows", "accelerations", "inputs"):
        names.update(_strings(doc, key))
    for entry in _list(doc, "parameters"):
        names.add(entry.get("name") if isinstance(entry, dict) else entry)
    multipliers = doc.get("multipliers") or {}
    if not isinstance(multipliers, dict):
        raise ParseError("equations file: 'multipliers' must be a mapping with 'lambda' and 'mu'")
    for key in ("lambda", "mu"):
        for entry in multipliers.get(key) or []:
            names.add(entry.get("name") if isinstance(entry, dict) else entry)
    definitions = _list(doc, "definitions")
    for entry in definitions:
        if not (isinstance(entry, list) and len(entry) == 2 and all(isinstance(x, str) for x in entry)):
            raise ParseError(f"equations file definitions: entries are [name, expression], got {entry!r:.80}")
        names.add(entry[0])
    names = {n for n in names if isinstance(n, str)}
    read = lambda s, where: from_text(s, table, f"equations file {where}", names=names, strict=True)  # noqa: E731
    out = dict(doc)
    out["definitions"] = [(read(name, "definitions"), read(e, f"definition of {name}")) for name, e in definitions]
    out["equations"] = [read(s, f"equation {i + 1}") for i, s in enumerate(_list(doc, "equations"))]
    for key in _VECTORS:
        out[key] = [read(s, f"{key}[{i}]") for i, s in enumerate(_list(doc, key))]
    for key in _MATRICES:
        entries = {}
        for entry in _list(doc, key):
            if not (isinstance(entry, list) and len(entry) == 3 and all(
                    isinstance(x, int) and not isinstance(x, bool) and x >= 0 for x in entry[:2])):
                raise ParseError(f"equations file {key}: entries are [row, column, expression], got {entry!r:.80}")
            i, j, s = entry
            entries[(i, j)] = read(s, f"{key}[{i}, {j}]")
        out[key] = entries
    if "R" not in doc:   # written before R was: μ acts along A
        out["R"] = dict(out["A"])
    out["symbols"] = {name: read(name, "symbols") for name in table if isinstance(name, str) and not name.endswith("()")}
    return out


def _list(doc, key):
    value = doc.get(key, [])
    if not isinstance(value, list):
        raise ParseError(f"equations file: {key!r} must be a list, got {type(value).__name__}")
    return value


def _strings(doc, key):
    value = _list(doc, key)
    bad = [v for v in value if not isinstance(v, str)]
    if bad:
        raise ParseError(f"equations file: {key!r} must list names (strings), got {bad[0]!r:.80}")
    return value
