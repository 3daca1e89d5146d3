"""Export of explicit state equations ẋ = f(t, x, u) (a bond graph's, in its energy variables).

``netdyn.export_equations(bg, fmt, formulation="state")`` writes the state
equations of :func:`netdyn.bondgraph.state_equations` — derivative causality
reduced, states named after the elements (``q_<C>``, ``p_<I>``) — as

* ``"latex"``: ``\\dot{p}_{L1} &= …`` rows (and ``0 &= g`` for a nonlinear algebraic loop);
* ``"python"``: a module needing only numpy: ``STATES``, ``PARAMETERS``, ``DEFAULTS``,
  ``INPUTS``, ``parameters(values)`` and ``rhs(t, x, params=None)`` for
  ``scipy.integrate.solve_ivp``; a law inverted numerically is a function of the
  module (Newton's method inside a bracket, on the law and its analytic slope), a
  nonlinear algebraic loop is solved by Newton's method at every call;
* ``"c"``: a C99 header and source with ``<prefix>rhs(t, x, p, u, dxdt)`` (laws
  inverted numerically as ``static`` functions); a nonlinear algebraic loop is an
  :class:`~netdyn.errors.ExportError` (export to Python, or simulate).

>>> import netdyn
>>> bg = netdyn.BondGraph("RC")
>>> for k, n, p in [("Se", "u", {"effort": 1.0}), ("1", "J", {}), ("C", "C1", {"C": 0.5}), ("R", "R1", {"R": 2.0})]:
...     bg.add(k, n, **p)
>>> _ = bg.chain("u", "J", "C1"); _ = bg.bond("J", "R1")
>>> ns = {}; exec(netdyn.export_equations(bg, "python", formulation="state"), ns)
>>> ns["STATES"], ns["rhs"](0.0, [0.25]).tolist()          # (1 − q/C)/R
(['q_C1'], [0.25])
"""
from __future__ import annotations

import math

import sympy as sp
from sympy.printing.numpy import NumPyPrinter

from netdyn.errors import ExportError
from netdyn.export._program import c_identifier, safe_text
from netdyn.export.c import CCode, _Printer as _CPrinter
from netdyn.export.latex import _decorated
from netdyn.export.python import PARAMETERS_RUNTIME
from netdyn.symbols import t as _t


class _Layout:
    """The state equations over indexed arrays ``x[i]``, ``z[j]``, ``p[k]``, ``u[k]``; the inverse laws."""

    def __init__(self, se):
        self.se = se
        self.states = [str(s) for s in se.states]
        self.algebraic = [str(z) for z in se.algebraic]
        exprs = [sp.sympify(e) for e in list(se.rhs) + list(se.residuals)]
        inputs = sorted({u for e in exprs for u in e.atoms(sp.core.function.AppliedUndef)}, key=str)
        known = set(se.states) | set(se.algebraic) | {_t}
        params = sorted({s for e in exprs for s in e.free_symbols} - known, key=str)
        self.parameters = [str(s) for s in params]
        self.inputs = [u.func.__name__ for u in inputs]
        self.defaults = {str(k): float(v) for k, v in (se.parameters or {}).items()}
        for name in self.parameters:
            self.defaults.setdefault(name, None)
        X, Z, P, U = (sp.IndexedBase(n, shape=(max(k, 1),)) for n, k in
                      (("x", len(se.states)), ("z", len(se.algebraic)), ("p", len(params)), ("u", len(inputs))))
        sub = {s: X[i] for i, s in enumerate(se.states)}
        sub.update({z: Z[j] for j, z in enumerate(se.algebraic)})
        sub.update({s: P[k] for k, s in enumerate(params)})
        sub.update({u: U[k] for k, u in enumerate(inputs)})
        self.sub = sub
        self.rhs = [e.xreplace(sub) for e in exprs[:len(se.states)]]
        self.residuals = [e.xreplace(sub) for e in exprs[len(se.states):]]
        self.jacobian = [[sp.diff(g, Z[j]) for j in range(len(se.algebraic))] for g in self.residuals]
        from netdyn.bondgraph.laws import NumericFunction
        self.inverses = {}
        for e in exprs:
            for a in e.atoms(sp.Function):
                if isinstance(a, NumericFunction) and a.func not in self.inverses:
                    if a.func.inverse_of is None:
                        raise ExportError(f"{a.func.label}: a law's antiderivative computed by quadrature has no "
                                          "exported form")
                    self.inverses[a.func] = f"_law{len(self.inverses) + 1}"
        if any(g.has(Z[j]) for g in self.rhs for j in range(len(se.algebraic))) or self.algebraic:
            self.has_algebraic = True
        else:
            self.has_algebraic = False


# ----------------------------------------------------------------------------------- LaTeX
def to_latex(se, standalone=False):
    """``align`` rows ``\\dot{x} &= f`` (and ``0 &= g``)."""
    rows = [rf"{sp.latex(_decorated(s.name, 'dot'))} &= {sp.latex(e)}" for s, e in zip(se.states, se.rhs)]
    rows += [rf"0 &= {sp.latex(g)}" for g in se.residuals]
    body = "\\begin{align}\n" + " \\\\\n".join(rows) + "\n\\end{align}"
    if standalone:
        return "\\documentclass{article}\n\\usepackage{amsmath}\n\\begin{document}\n" + body + "\n\\end{document}\n"
    return body


# ----------------------------------------------------------------------------------- Python
class _PyPrinter(NumPyPrinter):
    _module = "numpy"

    def __init__(self, inverses):
        super().__init__({"fully_qualified_modules": True, "inline": True, "allow_unknown_functions": False})
        self.inverses = inverses

    def _print_Float(self, expr):
        value = float(expr)
        return repr(value) if math.isfinite(value) else super()._print_Float(expr)

    def _print_Function(self, expr):
        if expr.func in self.inverses:
            return f"{self.inverses[expr.func]}({self._print(expr.args[0])})"
        return super()._print_Function(expr)


_PY_RUNTIME = PARAMETERS_RUNTIME + '''

def _inverse(g, dg, y, increasing):
    """x with g(x) = y for a monotone law g: a bracket grown from 0, then Newton's steps inside it."""
    s = 1.0 if increasing else -1.0
    step, x = 1.0, 0.0
    r = g(x) - y
    if r == 0.0:
        return x
    if (r < 0) == (s > 0):
        lo, hi = x, x + step
        while (g(hi) - y) * s < 0:
            lo, step = hi, 2.0 * step
            hi = hi + step
    else:
        lo, hi = x - step, x
        while (g(lo) - y) * s > 0:
            hi, step = lo, 2.0 * step
            lo = lo - step
    x = 0.5 * (lo + hi)
    for _ in range(400):
        r = g(x) - y
        if r == 0.0:
            break
        if (r < 0) == (s > 0):
            lo = x
        else:
            hi = x
        d = dg(x)
        nx = x - r / d if d != 0 and math.isfinite(d) else 0.5 * (lo + hi)
        if not (lo < nx < hi):
            nx = 0.5 * (lo + hi)
        if abs(nx - x) <= 4e-16 * max(abs(nx), 1e-300):
            return nx
        x = nx
    return x
'''


def to_python(se, name="state equations"):
    """The module text of the explicit state equations (see the module docstring)."""
    lay = _Layout(se)
    pr = _PyPrinter(lay.inverses)
    lines = [f'"""State equations of "{safe_text(name)}" in its energy variables, exported by netdyn (needs only '
             'numpy).', "", "dx/dt = rhs(t, x, params) for x in the order STATES.", '"""', "import math", "",
             "import numpy", "", f"NAME = {str(name)!r}", f"STATES = {lay.states!r}",
             f"ALGEBRAIC = {lay.algebraic!r}", f"PARAMETERS = {lay.parameters!r}",
             f"DEFAULTS = {lay.defaults!r}", f"INPUTS = {lay.inputs!r}"]
    lines.append(_PY_RUNTIME.rstrip("\n"))
    w = sp.Symbol("w")
    for cls, fname in lay.inverses.items():
        law, slope, var, increasing = cls.inverse_of
        g = law.xreplace({var: w})
        dg = slope.xreplace({var: w})
        lines += ["", "", f"def {fname}(y, p=None, u=None):",
                  f'    """{safe_text(cls.label)}: the value w with {safe_text(str(g))} = y."""',
                  f"    return _inverse(lambda w: {pr.doprint(g)}, lambda w: {pr.doprint(dg)}, float(y), "
                  f"{bool(increasing)})"]
    if lay.has_algebraic:
        nz = len(lay.algebraic)
        lines += ["", "", "def algebraic(t, x, p, u):",
                  '    """The unknowns z of the nonlinear algebraic loops: Newton on 0 = g(t, x, z)."""',
                  f"    z = numpy.zeros({nz})",
                  "    for _ in range(100):",
                  f"        r = numpy.array([{', '.join(pr.doprint(g) for g in lay.residuals)}], dtype=float)",
                  "        if numpy.max(numpy.abs(r)) <= 1e-14 * (1.0 + numpy.max(numpy.abs(z))):",
                  "            break",
                  "        J = numpy.array([" + ", ".join("[" + ", ".join(pr.doprint(d) for d in row) + "]"
                                                     for row in lay.jacobian) + "], dtype=float)",
                  "        z = z + numpy.linalg.lstsq(J, -r, rcond=None)[0]",
                  "    return z"]
    lines += ["", "", "def rhs(t, x, params=None):",
              '    """dx/dt; params: a dict of values or the result of parameters()."""',
              "    p, inputs = params if isinstance(params, tuple) else parameters(params)",
              "    x = numpy.asarray(x, dtype=float)"]
    if lay.inputs:
        lines.append("    u = numpy.array([fn(t) for fn in inputs], dtype=float)")
    elif lay.has_algebraic:
        lines.append("    u = numpy.zeros(0)")
    if lay.has_algebraic:
        lines.append("    z = algebraic(t, x, p, u)")
    lines.append(f"    return numpy.array([{', '.join(pr.doprint(e) for e in lay.rhs)}], dtype=float)")
    return "\n".join(lines) + "\n"


# ----------------------------------------------------------------------------------- C
class _StatePrinter(_CPrinter):
    def __init__(self, inverses, prefix):
        super().__init__()
        self.inverses, self.prefix = inverses, prefix

    def _print_Function(self, expr):
        if expr.func in self.inverses:
            return f"{self.prefix}{self.inverses[expr.func][1:]}({self._print(expr.args[0])})"
        return super()._print_Function(expr)


_C_INVERSE = """
static double PFX_inverse(double (*g)(double), double (*dg)(double), double y, int increasing)
{
    double s = increasing ? 1.0 : -1.0, step = 1.0, x = 0.0, lo, hi, r = g(x) - y;
    int k;
    if (!(r < 0.0 || r > 0.0)) return x;
    if ((r < 0.0) == (s > 0.0)) {
        lo = x; hi = x + step;
        while ((g(hi) - y) * s < 0.0) { lo = hi; step *= 2.0; hi += step; }
    } else {
        lo = x - step; hi = x;
        while ((g(lo) - y) * s > 0.0) { hi = lo; step *= 2.0; lo -= step; }
    }
    x = 0.5 * (lo + hi);
    for (k = 0; k < 400; ++k) {
        double d, nx;
        r = g(x) - y;
        if (!(r < 0.0 || r > 0.0)) break;
        if ((r < 0.0) == (s > 0.0)) lo = x; else hi = x;
        d = dg(x);
        nx = (d < 0.0 || d > 0.0) && isfinite(d) ? x - r / d : 0.5 * (lo + hi);
        if (!(lo < nx && nx < hi)) nx = 0.5 * (lo + hi);
        if (fabs(nx - x) <= 4e-16 * fmax(fabs(nx), 1e-300)) return nx;
        x = nx;
    }
    return x;
}
"""


def to_c(se, name="state equations", prefix=None):
    """C99 header and source (:class:`~netdyn.export.c.CCode`) of the explicit state equations."""
    lay = _Layout(se)
    if lay.has_algebraic:
        raise ExportError(f"{name}: the state equations hold a nonlinear algebraic loop ({', '.join(lay.algebraic)}); "
                          "the C export writes explicit equations only: export to Python (Newton on the loop "
                          "at every call) or simulate")
    cname = c_identifier(name)
    prefix = prefix if prefix is not None else cname + "_"
    macro = prefix.upper()
    printer = _StatePrinter(lay.inverses, prefix)
    n = len(lay.states)
    strings = lambda vs: "{" + ", ".join('"' + safe_text(v) + '"' for v in vs) + "}" if vs else "{0}"
    h = [f"/* State equations of \"{safe_text(name)}\" in its energy variables, exported by netdyn. */",
         f"#ifndef {cname.upper()}_H", f"#define {cname.upper()}_H", f"#define {macro}NX {n}",
         f"#define {macro}NP {len(lay.parameters)}", f"#define {macro}NU {len(lay.inputs)}",
         f"extern const char *const {prefix}states[];", f"extern const char *const {prefix}parameters[];",
         f"extern const char *const {prefix}inputs[];",
         f"extern const double {prefix}defaults[];  /* parameter defaults (0 where none is given) */",
         "/* dx/dt at (t, x) for parameters p and inputs u */",
         f"void {prefix}rhs(double t, const double *x, const double *p, const double *u, double *dxdt);",
         f"#endif /* {cname.upper()}_H */", ""]
    defaults = [0.0 if lay.defaults[k] is None else lay.defaults[k] for k in lay.parameters]
    s = [f"/* State equations of \"{safe_text(name)}\", exported by netdyn. */", "#include <math.h>",
         f"#include \"{cname}.h\"", "",
         f"const char *const {prefix}states[] = {strings(lay.states)};",
         f"const char *const {prefix}parameters[] = {strings(lay.parameters)};",
         f"const char *const {prefix}inputs[] = {strings(lay.inputs)};",
         f"const double {prefix}defaults[] = {{{', '.join(repr(float(v)) for v in defaults) or '0'}}};"]
    w = sp.Symbol("w")
    if lay.inverses:
        s.append(_C_INVERSE.replace("PFX_", prefix))
    for cls, fname in lay.inverses.items():
        law, slope, var, increasing = cls.inverse_of
        g, dg = law.xreplace({var: w}), slope.xreplace({var: w})
        if g.free_symbols - {w}:
            raise ExportError(f"{cls.label}: a law with parameters inverted numerically has no C form here; "
                              "give its parameters as numbers")
        base = f"{prefix}{fname[1:]}"
        s += [f"static double {base}_g(double w) {{ return {printer.doprint(g)}; }}",
              f"static double {base}_dg(double w) {{ return {printer.doprint(dg)}; }}",
              f"static double {base}(double y) {{ return {prefix}inverse({base}_g, {base}_dg, y, "
              f"{1 if increasing else 0}); }}"]
    reps, outs = sp.cse(lay.rhs, symbols=sp.numbered_symbols("cse")) if lay.rhs else ([], [])
    used = set()
    for e in [e for _, e in reps] + list(outs):
        used |= {a.base.label.name for a in e.atoms(sp.Indexed)}
        if _t in e.free_symbols:
            used.add("t")
    body = [f"    const double {sym} = {printer.doprint(e)};" for sym, e in reps]
    unused = [a for a in ("t", "x", "p", "u") if a not in used]
    if unused:
        body.append("    " + " ".join(f"(void){a};" for a in unused))
    body += [f"    dxdt[{i}] = {printer.doprint(e)};" for i, e in enumerate(outs)]
    s += ["", f"void {prefix}rhs(double t, const double *x, const double *p, const double *u, double *dxdt)", "{",
          *body, "}", ""]
    return CCode(cname, "\n".join(h), "\n".join(s))


FORMATS = {"latex": to_latex, "python": to_python, "c": to_c}

__all__ = ["to_latex", "to_python", "to_c", "FORMATS"]
