r"""Export to LaTeX: the equations of motion and the constraints, readable.

Time derivatives are dots (``\dot{x}``, ``\ddot{\theta}_{1}``), digits and
underscores in names become subscripts, the multipliers are ``\lambda_{j}``
(displacement constraints) and ``\mu_{k}`` (flow constraints). Each Lagrange
equation is written ``... = 0`` or, with ``efforts="right"``, with the applied
efforts on the right. A fragment is one ``align`` environment;
``standalone=True`` gives a whole ``.tex`` document (``amsmath``). A mechanism in relative
coordinates is written in recursive form (``form=None`` or ``"recursive"``): first the named
intermediates of its Newton–Euler program, ``\omega_{z l1} := ...``, body by body, then the equations
over them; ``form="expanded"`` writes ``M(q) q̈ + h`` out.

>>> import sympy as sp
>>> from netdyn import LagrangianModel, coordinates, t
>>> x, = coordinates("x,")
>>> m, k, F = sp.symbols("m k F")
>>> model = LagrangianModel([x], T=m*x.diff(t)**2/2, V=k*x**2/2, efforts={x: F})
>>> print(to_latex(model, efforts="right"))
\begin{align}
k x + m \ddot{x} &= F
\end{align}
"""
from __future__ import annotations

import re

import sympy as sp
from sympy.printing.conventions import split_super_sub
from sympy.printing.latex import LatexPrinter

from netdyn.export._program import recursive_parts, wants_recursive
from netdyn.lagrange.equations import internalize
from netdyn.symbols import engineering
from netdyn.errors import ExportError


def _decorated(name, accent):
    """``Symbol`` whose LaTeX is ``name`` with an accent on its main part: ``theta1`` -> ``\\dot{\\theta}_{1}``."""
    base, supers, subs = split_super_sub(name)
    text = base + accent + "".join("_" + s for s in subs) + "".join("^" + s for s in supers)
    return sp.Symbol(text)


def display_symbols(model, eq=None):
    """Internal symbol -> display symbol (dots on flows and accelerations, ``v(t)`` for inputs)."""
    eq = eq or model.derive()
    out = {}
    for name, q, f, a in zip(model.coordinate_names, eq.q, eq.f, eq.a):
        out[f] = _decorated(name, "dot")
        out[a] = _decorated(name, "ddot")
    for u in eq.inputs:
        out[u] = sp.Function(str(u))(sp.Symbol("t"))
    return out


def _rows(model, efforts, eq, lagrange, source):
    if efforts == "left":
        return [(r, 0) for r in lagrange]
    if efforts != "right":
        raise ExportError(f"efforts={efforts!r}: use 'left' (equations = 0) or 'right' (efforts on the right)")
    out = []
    for i, (c, r) in enumerate(zip(model.coordinates, lagrange)):
        e = internalize(source, model.efforts.get(c, 0))
        out.append((r + e, e))
    return out


_LATEX_SPECIAL = {"\\": r"\textbackslash{}", "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}",
                  "^": r"\textasciicircum{}", "_": r"\_", "&": r"\&", "%": r"\%", "#": r"\#", "$": r"\$"}
_SAFE_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")


class _LatexPrinter(LatexPrinter):
    """sympy's LaTeX with numbers as engineers write them (``1.0e6 q_{L1} + 0.001 \\ddot{q}_{L1}``)."""

    def _print_Float(self, expr):
        return engineering(expr)


def _escape(text):
    r"""Text safe in LaTeX: the special characters as commands, line breaks as spaces, only printable
    characters (``\input``, ``\write18`` cannot appear).

    >>> _escape(r"a_b \input{x} 100%")
    'a\\_b \\textbackslash{}input\\{x\\} 100\\%'
    """
    return "".join(_LATEX_SPECIAL.get(ch, ch if ch.isprintable() else " ") for ch in str(text))


def _symbol_names(exprs):
    """``symbol_names=`` for ``sympy.latex``: symbols whose names are not plain identifiers print as
    escaped ``\\text{...}`` (sympy would print the name raw)."""
    out = {}
    for e in exprs:
        for s in sp.sympify(e).free_symbols:
            if isinstance(s, sp.Symbol) and not _SAFE_NAME.match(s.name):
                out[s] = r"\text{" + _escape(s.name) + "}"
    return out


def to_latex(model, standalone=False, efforts="left", environment="align", form=None):
    """LaTeX of a model's equations (a string); see the module docstring."""
    if wants_recursive(model, form):
        eq, defs, all_rows = recursive_parts(model)
        lagrange, constraint_rows = all_rows[:eq.n], all_rows[eq.n:]
    else:
        eq, defs = model.derive(), []
        lagrange, constraint_rows = eq.lagrange_rows(), list(eq.phi) + list(eq.flow_constraint_rows())
    show = display_symbols(model, eq)
    rows = _rows(model, efforts, eq, lagrange, model.recursive_form().rest if defs else model)
    shown = [sp.sympify(e).xreplace(show) for pair in rows for e in pair] + \
        [sp.sympify(e).xreplace(show) for e in constraint_rows] + [e.xreplace(show) for d in defs for e in d]
    names = _symbol_names(shown)
    tex = lambda e: _LatexPrinter(dict(symbol_names=names)).doprint(sp.sympify(e).xreplace(show))  # noqa: E731
    lines = [f"{tex(s)} &:= {tex(e)}" for s, e in defs]
    lines += [f"{tex(lhs)} &= {tex(rhs)}" for lhs, rhs in rows]
    lines += [f"{tex(r)} &= 0" for r in constraint_rows]
    body = f"\\begin{{{environment}}}\n" + " \\\\\n".join(lines) + f"\n\\end{{{environment}}}"
    if not standalone:
        return body
    coords = ", ".join(f"${sp.latex(sp.Symbol(n))}$" if _SAFE_NAME.match(n) else rf"\text{{{_escape(n)}}}"
                       for n in model.coordinate_names)
    mults = ", ".join(f"${sp.latex(s)}$ ({_escape(lab)})" for s, lab in
                      list(zip(eq.lam, model.constraint_labels)) + list(zip(eq.mu, model.flow_constraint_labels)))
    defaults = ", ".join(f"${tex(s)} = {tex(v)}$" for s, v in sorted(model.parameters.items(), key=lambda x: str(x[0]))
                         if v is not None)
    return "\n".join([
        r"\documentclass{article}", r"\usepackage{amsmath}", r"\allowdisplaybreaks", r"\begin{document}",
        rf"\section*{{Equations of motion of {_escape(model.name)}}}",
        rf"Coordinates: {coords}.", "",
        *([f"Parameters (default values): {defaults}.", ""] if defaults else []),
        (rf"Multipliers: {mults}." if mults else "No constraints."), "",
        r"Lagrange's equations $\frac{d}{dt}\frac{\partial T^*}{\partial \dot q_i} - \frac{\partial T^*}{\partial q_i}"
        r" + \frac{\partial D}{\partial \dot q_i} + \frac{\partial V}{\partial q_i} + \sum_j \lambda_j "
        r"\frac{\partial \phi_j}{\partial q_i} + \sum_k \mu_k a_{ki} = e^s_i$, then the constraints"
        + (r" (recursive form: the bodies' terms by the Newton--Euler program of named intermediates "
           r"$:=$, body by body)" if defs else "") + ":", "",
        body, r"\end{document}", ""])
