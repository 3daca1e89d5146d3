"""Export to C99: a header and a source with the same functions as the Python export.

Names are embedded only escaped (C string literals and comments, see
:func:`netdyn.export._program.safe_text`); the file and function names are
:func:`netdyn.export._program.c_identifier` of the model name (the mapping is in
the header's second comment).

Every function is ``void <prefix><name>(double t, const double *q, const double *f,
const double *p, const double *u, double *out)`` writing a row-major array
(sizes in the header's ``#define``\\ s), with common sub-expressions shared
through ``sympy.cse``. A mechanism in relative coordinates is exported in recursive form (see
:class:`~netdyn.export._program.Program`): ``<prefix>inverse_dynamics`` and ``<prefix>inertia_times`` take
the accelerations ``qdd`` after ``f`` and are Newton–Euler straight-line programs (one ``const double`` a
named intermediate); ``<prefix>mass_matrix`` calls ``inertia_times`` once a column and ``<prefix>h`` calls
``inverse_dynamics`` at ``qdd = 0``, so the source grows linearly with the number of bodies. ``<prefix>accelerations`` solves the KKT system by
Gaussian elimination with partial pivoting (returns 1 if it is singular), and
``<prefix>rhs(t, y, p, u, dydt)`` gives ``dy/dt`` of the index-1 ODE for
``y = [q, f]``. ``u`` holds the input values at ``t`` (may be NULL when the model
has no inputs). The source needs only ``<math.h>``.

Warnings. The generated header and source compile without a single warning under
``gcc -std=c99 -Wall -Wextra -pedantic -Werror`` (:data:`GCC_FLAGS`) and under
``clang -std=c99 -Weverything -Werror`` (:data:`CLANG_FLAGS`), with no ``-Wno-...``
exception (:data:`CLANG_EXCEPTIONS` is empty; checked with clang 14 and gcc 12 on every
example model and on seeded random circuits by ``tests/test_generated_code_clean.py``).
What that takes, so that a change keeps it:

* each function declares its shared sub-expressions first and only then runs statements
  (``-Wdeclaration-after-statement``); a shared condition of a ``Piecewise`` is an ``int``,
  not a ``double`` (``-Wfloat-conversion``);
* an argument a function does not read (``out`` of an empty function, ``t`` of a
  time-invariant one, ...) is cast to ``void``, and only such an argument (``-Wunused-parameter``);
* the ``M_PI``-style constants are defined (for a strict C99 ``<math.h>``) only where the
  source uses them (``-Wunused-macros``);
* no identifier begins with an underscore (``-Wreserved-identifier``): :func:`c_identifier`
  puts ``m_`` in front of such a name and ``prefix=`` may not begin with one;
* the printer (:class:`_Printer`) writes ``==``/``!=`` of the model (``Eq``, ``Ne``,
  ``Heaviside`` at 0) as the equivalent ``<=``/``>=`` pair (``-Wfloat-equal``), integers
  beyond ``int`` as double literals and ``EulerGamma``-like constants as numbers;
* the KKT solver's tests ``pivot == 0.0`` and ``l == 0.0`` compare with the literal ``0.0``,
  which clang's ``-Wfloat-equal`` accepts (gcc's, which is in neither ``-Wall`` nor ``-Wextra``,
  does not: add ``-Wno-float-equal`` if you turn it on).

A newer clang may add warnings to ``-Weverything``; the test then names them.

>>> import sympy as sp
>>> from netdyn import LagrangianModel, coordinates, t
>>> x, = coordinates("x,")
>>> m, k = sp.symbols("m k")
>>> code = to_c(LagrangianModel([x], T=m*x.diff(t)**2/2, V=k*x**2/2, name="osc"))
>>> [line for line in code.header.splitlines() if line.startswith("#define OSC_N ")]
['#define OSC_N 1']
>>> "out[0] = p[0]*q[0];" in code.source   # h = k x, k is p[0]
True
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass

import sympy as sp
from sympy.logic.boolalg import BooleanFunction
from sympy.printing.c import C99CodePrinter

from netdyn.errors import ExportError
from netdyn.export._program import ARGUMENTS, Program, c_identifier, safe_text
from netdyn.files import output_folder, write_text
from netdyn.symbols import t as _t

#: warning flags the generated C compiles clean with, under gcc
GCC_FLAGS = ("-std=c99", "-Wall", "-Wextra", "-pedantic", "-Werror")
#: the ``-Wno-...`` flags kept under clang ``-Weverything`` (each justified in the module docstring): none
CLANG_EXCEPTIONS = ()
#: warning flags the generated C compiles clean with, under clang
CLANG_FLAGS = ("-std=c99", "-Weverything", "-Werror") + CLANG_EXCEPTIONS



class _Printer(C99CodePrinter):
    """sympy's C99 printer, with three changes that keep the generated code warning-free.

    * An integer outside the range of ``int`` prints as a double literal (the value C would
      convert it to anyway): no ``long`` constants, no ``integer constant is too large``.
    * ``==`` and ``!=`` (from ``Eq``/``Ne`` and ``Heaviside``'s value at 0) print as
      ``(a <= b && a >= b)`` and ``!(a <= b && a >= b)``, which are the same IEEE comparisons
      (false, respectively true, when either side is NaN) without ``-Wfloat-equal``.
    * A number symbol without a ``<math.h>`` macro (``EulerGamma``, ``GoldenRatio``, ``Catalan``)
      prints as its double value instead of a declaration in front of the expression.
    """

    def _print_Integer(self, expr):
        if abs(int(expr)) > 2**31 - 1:
            return self._print_Float(sp.Float(expr, 17))
        return super()._print_Integer(expr)

    def _print_Relational(self, expr):
        if expr.rel_op in ("==", "!="):
            lhs, rhs = self._print(expr.lhs), self._print(expr.rhs)
            equal = f"({lhs} <= {rhs} && {lhs} >= {rhs})"
            return equal if expr.rel_op == "==" else f"(!{equal})"
        return super()._print_Relational(expr)

    def _print_NumberSymbol(self, expr):
        if expr in self.math_macros:
            return super()._print_NumberSymbol(expr)
        return self._print_Float(sp.Float(expr.evalf(20), 17))


def _used_arguments(exprs):
    """The names among ``t, q, f, p, u`` that the expressions read."""
    used = set()
    for e in exprs:
        used |= {x.base.label.name for x in e.atoms(sp.Indexed)}
        if _t in e.free_symbols:
            used.add("t")
    return used


def _is_boolean(expr):
    return bool(getattr(expr, "is_Relational", False)) or isinstance(expr, BooleanFunction)


_ARGS = ", ".join(["double t"] + [f"const double *{a}" for a in ARGUMENTS[1:]] + ["double *out"])


def _signature(fn):
    return ", ".join(["double t"] + [f"const double *{a}" for a in fn.arguments[1:]] + ["double *out"])


def _function(prefix, fn, printer):
    """The C definition of one exported function: declarations first (C89 order, no
    ``-Wdeclaration-after-statement``), then ``(void)`` for each argument it does not read."""
    if fn.kind != "expressions":
        return ["", f"void {prefix}{fn.name}({_signature(fn)})", "{",
                *_CALLS[fn.kind].replace("PFX_", prefix).replace("MAC_", prefix.upper()).splitlines(), "}"]
    reps, outs = fn.cse()
    body = []
    for sym, expr in reps:  # a shared condition of a Piecewise is an int, not a double
        body.append(f"    const {'int' if _is_boolean(expr) else 'double'} {sym} = {printer.doprint(expr)};")
    used = _used_arguments([e for _, e in reps] + list(outs)) | ({"out"} if fn.size else set())
    unused = [a for a in fn.arguments + ("out",) if a not in used]
    if unused:
        body.append("    " + " ".join(f"(void){a};" for a in unused))
    if fn.size:
        body.append(f"    for (int i = 0; i < {fn.size}; ++i) out[i] = 0.0;")
    for (idx, _), expr in zip(fn.entries, outs):
        body.append(f"    out[{fn.flat_index(idx)}] = {printer.doprint(expr)};")
    return ["", f"void {prefix}{fn.name}({_signature(fn)})", "{", *body, "}"]


# the bodies of the recursive form's mass_matrix and h (netdyn.export._program.Function.kind)
_CALLS = {
    "columns": """    double e[MAC_N], col[MAC_N];
    for (int i = 0; i < MAC_N; ++i) e[i] = 0.0;
    for (int k = 0; k < MAC_N; ++k) {
        e[k] = 1.0;
        PFX_inertia_times(t, q, f, e, p, u, col);
        for (int i = 0; i < MAC_N; ++i) out[i * MAC_N + k] = col[i];
        e[k] = 0.0;
    }""",
    "bias": """    double z[MAC_N];
    for (int i = 0; i < MAC_N; ++i) z[i] = 0.0;
    PFX_inverse_dynamics(t, q, f, z, p, u, out);""",
}


@dataclass
class CCode:
    """A C99 header and source; ``write(directory)`` saves ``<name>.h`` and ``<name>.c``."""

    name: str
    header: str
    source: str

    def write(self, directory):
        """Write ``<name>.h`` and ``<name>.c`` into ``directory`` (``str`` or ``PathLike``, made when missing);
        returns their paths."""
        folder = output_folder(directory, "C export folder")
        paths = (os.path.join(folder, self.name + ".h"), os.path.join(folder, self.name + ".c"))
        for path, text in zip(paths, (self.header, self.source)):
            write_text(path, text, "C export")
        return paths

    def __str__(self):
        return f"/* ---- {self.name}.h ---- */\n{self.header}\n/* ---- {self.name}.c ---- */\n{self.source}"


def _strings(values):
    return "{" + ", ".join('"' + safe_text(v) + '"' for v in values) + "}" if values else "{0}"


def to_c(model, name=None, prefix=None, form=None):
    """C99 header and source (:class:`CCode`) of a model's equations; see the module docstring (``form``: as
    in ``model.equations(form=...)``)."""
    title = name or model.name
    name = c_identifier(title)
    if prefix is not None and (not isinstance(prefix, str) or (prefix and c_identifier(prefix) != prefix)):
        raise ExportError(f"prefix {prefix!r} is not a C identifier a program may define; use letters, digits "
                          "and underscores, not beginning with a digit or an underscore (C reserves those)")
    return c_code(Program(model, form), title, name, prefix if prefix is not None else name + "_")


def c_code(prog, title, name, prefix):
    """The :class:`CCode` of a :class:`~netdyn.export._program.Program` (``to_c`` with the program made once,
    for exporters that add functions of their own: :mod:`netdyn.export.fmu`)."""
    model = prog.model
    macro = prefix.upper()
    guard = f"{name.upper()}_H"
    printer = _Printer()
    defaults = [0.0 if v is None else v for v in prog.defaults.values()]
    h = [f"/* Equations of motion of \"{safe_text(model.name)}\", exported by netdyn. */",
         f"/* identifiers: \"{safe_text(title)}\" -> {name} (file names), prefix {prefix} */",
         "/* M(q,t) qdd + h(q,f,t) + Phi_q^T lambda + R^T mu = 0, phi(q,t) = 0, A f + a = 0; y = [q, f];",
         "   R = A except for controlled sources' servo constraints. */",
         f"#ifndef {guard}", f"#define {guard}",
         f"#define {macro}N {prog.n}", f"#define {macro}M1 {prog.m1}", f"#define {macro}M2 {prog.m2}",
         f"#define {macro}NP {len(prog.parameters)}", f"#define {macro}NU {len(prog.inputs)}", "",
         f"extern const char *const {prefix}coordinates[];", f"extern const char *const {prefix}parameters[];",
         f"extern const char *const {prefix}inputs[];",
         f"extern const double {prefix}defaults[];  /* parameter defaults (0 where the model gives none) */", ""]
    data = [f"const char *const {prefix}coordinates[] = {_strings(prog.coordinates)};",
            f"const char *const {prefix}parameters[] = {_strings(prog.parameters)};",
            f"const char *const {prefix}inputs[] = {_strings(prog.inputs)};",
            f"const double {prefix}defaults[] = {{{', '.join(repr(float(v)) for v in defaults) or '0'}}};"]
    s = []
    for fn in prog.functions:
        h.append(f"/* {fn.doc}; out has {fn.size} entries */")
        h.append(f"void {prefix}{fn.name}({_signature(fn)});")
        s += _function(prefix, fn, printer)
    if not prog.servo:
        h += ["/* reaction matrix R (m2 x n): M qdd + h + Phi_q^T lambda + R^T mu = 0; here R = A */",
              f"void {prefix}reaction({_ARGS});"]
        s += [f"void {prefix}reaction({_ARGS})", "{", f"    {prefix}A(t, q, f, p, u, out);", "}", ""]
    h += ["/* (qdd, lambda, mu) from the KKT system; returns 0, or 1 if it is singular */",
          f"int {prefix}accelerations(double t, const double *q, const double *f, const double *p, const double *u,",
          "                          double *qdd, double *lambda, double *mu);",
          "/* dy/dt of the index-1 ODE for y = [q, f]; returns 0, or 1 if the KKT system is singular */",
          f"int {prefix}rhs(double t, const double *y, const double *p, const double *u, double *dydt);",
          "", f"#endif /* {guard} */", ""]
    s.append(_KKT.replace("PFX_", prefix).replace("MAC_", macro))
    used = set(re.findall(r"\bM_[0-9A-Z_]+\b", "\n".join(s[:-1]))) & set(_CONSTANTS)  # in the expressions
    constants = [f"#ifndef {k}\n#define {k} {v!r}\n#endif" for k, v in _CONSTANTS.items() if k in used]
    s = [f'#include "{name}.h"', "#include <math.h>", *constants, "", *data] + s
    return CCode(name, "\n".join(h), "\n".join(s))


# the constants sympy's C printer uses; strict C99 <math.h> need not define them. Only those the
# source uses are defined (an unused macro is a -Wunused-macros warning).
_CONSTANTS = {
    "M_PI": 3.141592653589793, "M_PI_2": 1.5707963267948966, "M_PI_4": 0.7853981633974483,
    "M_1_PI": 0.3183098861837907, "M_2_PI": 0.6366197723675814, "M_2_SQRTPI": 1.1283791670955126,
    "M_E": 2.718281828459045, "M_LOG2E": 1.4426950408889634, "M_LOG10E": 0.4342944819032518,
    "M_LN2": 0.6931471805599453, "M_LN10": 2.302585092994046, "M_SQRT2": 1.4142135623730951,
    "M_SQRT1_2": 0.7071067811865476}

_KKT = r"""
enum { MAC_NK = MAC_N + MAC_M1 + MAC_M2 };

int PFX_accelerations(double t, const double *q, const double *f, const double *p, const double *u,
                      double *qdd, double *lambda, double *mu)
{
    static const int n = MAC_N, m1 = MAC_M1, m2 = MAC_M2, nk = MAC_NK;
    double K[MAC_NK * MAC_NK], r[MAC_NK], work[MAC_N * MAC_N + MAC_NK * MAC_N + 1], vec[MAC_NK + 1];
    for (int i = 0; i < nk * nk; ++i) K[i] = 0.0;
    PFX_mass_matrix(t, q, f, p, u, work);
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j) K[i * nk + j] = work[i * n + j];
    PFX_h(t, q, f, p, u, vec);
    for (int i = 0; i < n; ++i) r[i] = -vec[i];
    if (m1) {
        PFX_Phi_q(t, q, f, p, u, work);
        for (int k = 0; k < m1; ++k)
            for (int j = 0; j < n; ++j) K[(n + k) * nk + j] = K[j * nk + n + k] = work[k * n + j];
        PFX_gamma_phi(t, q, f, p, u, vec);
        for (int k = 0; k < m1; ++k) r[n + k] = -vec[k];
    }
    if (m2) {
        PFX_A(t, q, f, p, u, work);
        for (int k = 0; k < m2; ++k)
            for (int j = 0; j < n; ++j) K[(n + m1 + k) * nk + j] = work[k * n + j];
        PFX_reaction(t, q, f, p, u, work);   /* where mu acts: A, or a controlled source's servo reaction */
        for (int k = 0; k < m2; ++k)
            for (int j = 0; j < n; ++j) K[j * nk + n + m1 + k] = work[k * n + j];
        PFX_gamma_psi(t, q, f, p, u, vec);
        for (int k = 0; k < m2; ++k) r[n + m1 + k] = -vec[k];
    }
    for (int c = 0; c < nk; ++c) {  /* Gaussian elimination, partial pivoting */
        int piv = c;
        for (int i = c + 1; i < nk; ++i)
            if (fabs(K[i * nk + c]) > fabs(K[piv * nk + c])) piv = i;
        if (K[piv * nk + c] == 0.0) return 1;
        if (piv != c) {
            double s = r[c]; r[c] = r[piv]; r[piv] = s;
            for (int j = 0; j < nk; ++j) { s = K[c * nk + j]; K[c * nk + j] = K[piv * nk + j]; K[piv * nk + j] = s; }
        }
        for (int i = c + 1; i < nk; ++i) {
            double l = K[i * nk + c] / K[c * nk + c];
            if (l == 0.0) continue;
            for (int j = c; j < nk; ++j) K[i * nk + j] -= l * K[c * nk + j];
            r[i] -= l * r[c];
        }
    }
    for (int i = nk - 1; i >= 0; --i) {
        double s = r[i];
        for (int j = i + 1; j < nk; ++j) s -= K[i * nk + j] * r[j];
        r[i] = s / K[i * nk + i];
    }
    for (int i = 0; i < n; ++i) qdd[i] = r[i];
    for (int k = 0; k < m1; ++k) lambda[k] = r[n + k];
    for (int k = 0; k < m2; ++k) mu[k] = r[n + m1 + k];
    return 0;
}

int PFX_rhs(double t, const double *y, const double *p, const double *u, double *dydt)
{
    double lambda[MAC_M1 + 1], mu[MAC_M2 + 1];
    for (int i = 0; i < MAC_N; ++i) dydt[i] = y[MAC_N + i];
    return PFX_accelerations(t, y, y + MAC_N, p, u, dydt + MAC_N, lambda, mu);
}
"""
