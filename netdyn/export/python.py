"""Export to a standalone Python module that needs only numpy.

Names and titles appear only as Python data (``repr``) or escaped in the docstring
(:func:`netdyn.export._program.safe_text`), so no name can change the program.

The module text defines, for ``y = [q, f]``:

* ``mass_matrix``, ``h``, ``forcing`` (``= -h``), ``phi``, ``Phi_q``, ``Phi_t``,
  ``gamma_phi``, ``A``, ``a``, ``gamma_psi`` — each ``fn(t, q, f, p, u=None)``
  with ``p`` the parameter vector (order ``PARAMETERS``) and ``u`` the input
  vector (order ``INPUTS``);
* for a mechanism in relative coordinates (the recursive form, ``FORM = "recursive"``) also
  ``inverse_dynamics(t, q, f, qdd, p, u=None)`` (``M qdd + h``) and ``inertia_times(t, q, f, qdd, p, u=None)``
  (``M qdd``), Newton–Euler straight-line programs of size O(n); ``mass_matrix`` is then made column by
  column from ``inertia_times`` and ``h`` is ``inverse_dynamics`` at ``qdd = 0``
  (``form="expanded"`` writes ``M`` and ``h`` entry by entry instead);
* ``parameters(values=None)`` — a ``(p, inputs)`` pair from a dict of parameter
  values (defaults ``DEFAULTS`` filled in) and input functions of t;
* ``accelerations(t, q, f, p, u=None)`` — ``(qdd, lambda, mu)`` from the KKT system
  ``[[M, Bᵀ], [C, 0]] [q̈; λ; μ] = [-h; -γ_φ; -γ_ψ]`` with ``C = [Φ_q; A]``, ``B = [Φ_q; R]``;
* ``reaction`` — ``R``, where each ``μ`` acts in the Lagrange rows: ``A`` itself unless a controlled
  source's servo constraint acts off its own row (then its own function);
* ``rhs(t, y, params=None)`` — ``dy/dt`` of the index-1 ODE, for
  ``scipy.integrate.solve_ivp`` (``params``: a dict, or ``parameters(...)``'s result).

The index-1 ODE exists when the KKT matrix is regular (every flow has inertia on
the constraint manifold); for a model without (an RC circuit) ``accelerations``
raises ``numpy.linalg.LinAlgError``.

>>> import sympy as sp
>>> from netdyn import LagrangianModel, coordinates, t
>>> x, = coordinates("x,")
>>> m, k = sp.symbols("m k")
>>> text = to_python(LagrangianModel([x], T=m*x.diff(t)**2/2, V=k*x**2/2, parameters={"m": 2, "k": 8}))
>>> ns = {}
>>> exec(text, ns)
>>> ns["rhs"](0.0, [0.5, 0.0]).tolist()
[0.0, -2.0]
"""
from __future__ import annotations

import math

from sympy import Indexed
from sympy.printing.numpy import NumPyPrinter

from netdyn.export._program import Program, safe_text

#: the generated module's parameters(): shared with the state-equation export (:mod:`netdyn.export.state`)
PARAMETERS_RUNTIME = '''

def parameters(values=None):
    """(p, inputs): the parameter vector and the input functions from a dict of values.

    Parameters missing from ``values`` take their DEFAULTS; inputs are numbers or callables of t.
    """
    values = dict(values or {})
    unknown = sorted(set(values) - set(PARAMETERS) - set(INPUTS))
    if unknown:
        raise KeyError(f"unknown parameter(s) {unknown}; the model has {PARAMETERS} and inputs {INPUTS}")
    p = []
    for name in PARAMETERS:
        value = values.get(name, DEFAULTS[name])
        if value is None:
            raise KeyError(f"no value for parameter {name!r}; pass it in the dict")
        p.append(float(value))
    inputs = []
    for name in INPUTS:
        if name not in values:
            raise KeyError(f"no value for input {name!r}; pass a number or a callable of t")
        value = values[name]
        inputs.append(value if callable(value) else (lambda t, v=float(value): v))
    return numpy.array(p, dtype=float), inputs
'''

_RUNTIME = '''

def _vector(values, size):
    return numpy.zeros(size) if values is None else numpy.asarray(values, dtype=float)


def forcing(t, q, f, p, u=None):
    """F = -h: M qdd = F - Phi_q^T lambda - R^T mu."""
    return -h(t, q, f, p, u)
''' + PARAMETERS_RUNTIME + '''

def accelerations(t, q, f, p, u=None):
    """(qdd, lambda, mu) from the KKT system of the index-1 form."""
    M, rhs_h = mass_matrix(t, q, f, p, u), -h(t, q, f, p, u)
    C = numpy.vstack([Phi_q(t, q, f, p, u), A(t, q, f, p, u)])
    B = numpy.vstack([Phi_q(t, q, f, p, u), reaction(t, q, f, p, u)])
    m = C.shape[0]
    K = numpy.zeros((N + m, N + m))
    K[:N, :N] = M
    K[:N, N:] = B.T
    K[N:, :N] = C
    r = numpy.concatenate([rhs_h, -gamma_phi(t, q, f, p, u), -gamma_psi(t, q, f, p, u)])
    z = numpy.linalg.solve(K, r)
    return z[:N], z[N:N + M1], z[N + M1:]


def rhs(t, y, params=None):
    """dy/dt for y = [q, f] (the index-1 ODE); params: dict of values or the result of parameters()."""
    p, inputs = params if isinstance(params, tuple) else parameters(params)
    y = numpy.asarray(y, dtype=float)
    q, f = y[:N], y[N:]
    u = numpy.array([fn(t) for fn in inputs], dtype=float)
    qdd, _, _ = accelerations(t, q, f, p, u)
    return numpy.concatenate([f, qdd])
'''


# the bodies of the recursive form's mass_matrix and h (netdyn.export._program.Function.kind)
_CALLS = {
    "columns": ["    out = numpy.zeros((N, N))", "    e = numpy.zeros(N)", "    for k in range(N):",
                "        e[k] = 1.0", "        out[:, k] = inertia_times(t, q, f, e, p, u)", "        e[k] = 0.0",
                "    return out"],
    "bias": ["    return inverse_dynamics(t, q, f, numpy.zeros(N), p, u)"],
}


class _Printer(NumPyPrinter):
    """numpy printer that writes ``numpy.`` (the module imports numpy under its own name) and every
    float as the shortest literal that reads back to the same double (sympy's printer writes 15
    significant digits, so ``13507.495250279351`` became ``13507.4952502794``)."""

    _module = "numpy"

    def _print_Float(self, expr):
        value = float(expr)
        return repr(value) if math.isfinite(value) else super()._print_Float(expr)


def to_python(model, name=None, form=None):
    """The module text (a string) of a model's equations; see the module docstring (``form``: as in
    ``model.equations(form=...)``)."""
    prog = Program(model, form)
    printer = _Printer({"fully_qualified_modules": True, "inline": True, "allow_unknown_functions": False})
    lines = [
        f'"""Equations of motion of "{safe_text(name or model.name)}", exported by netdyn (needs only numpy).',
        "",
        "M(q,t) qdd + h(q,f,t) + Phi_q^T lambda + R^T mu = 0,  phi(q,t) = 0,  A f + a = 0 (R = A but for",
        "controlled sources' servo constraints).",
        "y = [q, f]; rhs(t, y, params) gives dy/dt of the index-1 ODE.",
        '"""',
        "import numpy",
        "",
        f"NAME = {str(name or model.name)!r}",
        f"COORDINATES = {prog.coordinates!r}",
        f"PARAMETERS = {prog.parameters!r}",
        f"DEFAULTS = {prog.defaults!r}",
        f"INPUTS = {prog.inputs!r}",
        f"LAMBDAS = {prog.lambdas!r}",
        f"MUS = {prog.mus!r}",
        f"N, M1, M2 = {prog.n}, {prog.m1}, {prog.m2}",
        f"FORM = {prog.form!r}",
    ]
    for fn in prog.functions:
        lines += ["", "", f"def {fn.name}({', '.join(fn.arguments)}=None):", f'    """{fn.doc}."""']
        if fn.kind != "expressions":
            lines += _CALLS[fn.kind]
            continue
        reps, outs = fn.cse()
        lines.append(f"    out = numpy.zeros({fn.size})")
        if any(x.base.label.name == "u" for _, e in fn.entries for x in e.atoms(Indexed)):
            lines.append("    u = _vector(u, len(INPUTS))")
        for sym, expr in reps:
            lines.append(f"    {sym} = {printer.doprint(expr)}")
        for (idx, _), expr in zip(fn.entries, outs):
            lines.append(f"    out[{fn.flat_index(idx)}] = {printer.doprint(expr)}")
        lines.append(f"    return out.reshape({fn.shape!r})")
    if not prog.servo:
        lines += ["", "", "def reaction(t, q, f, p, u=None):",
                  '    """reaction matrix R (m2 x n): M qdd + h + Phi_q^T lambda + R^T mu = 0; here R = A."""',
                  "    return A(t, q, f, p, u)"]
    # modules the printed expressions name besides numpy (functools for Min/Max of three or more)
    others = sorted(m for m in printer.module_imports if m != "numpy")
    lines[lines.index("import numpy") + 1:lines.index("import numpy") + 1] = [f"import {m}" for m in others]
    return "\n".join(lines) + "\n" + _RUNTIME
