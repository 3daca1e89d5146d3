"""The numeric functions every code exporter writes, in one language-neutral layout.

A model's derived equations become a list of :class:`Function` objects: the
mass matrix ``M``, the force vector ``h`` (so that ``M q̈ + h + Φ_qᵀλ + Aᵀμ = 0``),
the displacement constraints ``φ`` with ``Φ_q``, ``Φ_t`` and ``γ_φ``, and the
flow constraints ``A f + a = 0`` with ``γ_ψ``; with servo constraints (controlled sources, whose
multiplier acts off its own row of ``A``) also ``reaction``, the matrix ``R`` with ``Rᵀμ`` in place of ``Aᵀμ``
(the exporters' own ``reaction`` is ``A`` otherwise). Every function takes the same
arguments ``(t, q, f, p, u)`` — time, displacements, flows, parameter vector and
input vector — and its expressions are written over indexed arrays ``q[i]``,
``f[i]``, ``p[k]``, ``u[k]`` with common sub-expressions pulled out by
``sympy.cse``. The Python and C printers only choose the syntax.

>>> import sympy as sp
>>> from netdyn import LagrangianModel, coordinates, t
>>> x, = coordinates("x,")
>>> m, k = sp.symbols("m k")
>>> prog = Program(LagrangianModel([x], T=m*x.diff(t)**2/2, V=k*x**2/2))
>>> [fn.name for fn in prog.functions][:2], prog.functions[1].entries   # h = k x, k is p[0]
(['mass_matrix', 'h'], [((0,), p[0]*q[0])])
"""
from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

from netdyn.errors import ExportError
from netdyn.symbols import t
import re

ARGUMENTS = ("t", "q", "f", "p", "u")


@dataclass
class Function:
    """One exported function: its name, what it returns, output shape and non-zero entries.

    ``arguments`` are its inputs (``ARGUMENTS``, or with ``qdd`` — the accelerations — after ``f``);
    ``definitions`` a straight-line program of named intermediates the entries read (the recursive form);
    ``kind`` is ``"expressions"`` (the entries), ``"columns"`` (the mass matrix, column by column from
    ``inertia_times``) or ``"bias"`` (``h``: ``inverse_dynamics`` at zero accelerations), whose bodies the
    printers write as loops and calls.
    """

    name: str
    doc: str
    shape: tuple  # (rows,) or (rows, cols)
    entries: list  # [(index tuple, expression over q[i], f[i], p[k], u[k], t)]
    arguments: tuple = ARGUMENTS
    definitions: list = None
    kind: str = "expressions"

    @property
    def size(self):
        out = 1
        for s in self.shape:
            out *= s
        return out

    def flat_index(self, index):
        """Row-major position of an entry in the flattened output."""
        return index[0] * self.shape[1] + index[1] if len(self.shape) == 2 else index[0]

    def cse(self):
        """``(replacements, outputs)``: the definitions, then shared sub-expressions ``cse0, cse1, ...``, and the
        entry expressions."""
        if not self.entries:
            return list(self.definitions or []), []
        reps, outs = sp.cse([e for _, e in self.entries], symbols=sp.numbered_symbols("cse"))
        return list(self.definitions or []) + reps, outs


class Program:
    """The exported functions of a model, with its names and parameter defaults.

    ``form`` as in ``model.equations(form=...)``: a mechanism in relative coordinates is exported in
    recursive form by default (``inverse_dynamics`` and ``inertia_times`` as Newton–Euler straight-line
    programs, ``mass_matrix`` column by column from ``inertia_times``, ``h`` from ``inverse_dynamics`` at
    zero accelerations: code of size O(n)); ``form="expanded"`` writes ``M`` and ``h`` out entry by entry.
    """

    def __init__(self, model, form=None):
        recursive = wants_recursive(model, form)
        source = model.recursive_form() if recursive else None
        eq = source.rest.derive() if recursive else model.derive()
        self.model, self.eq, self.form = model, eq, "recursive" if recursive else "expanded"
        self.n, self.m1, self.m2 = eq.n, len(eq.phi), len(eq.a0)
        self.coordinates = list(model.coordinate_names)
        programs = [source.program(), source.program(velocities=False, gravity=False)] if recursive else []
        parameters = list(eq.parameters)
        if recursive:  # the bodies' parameters (symbolic masses, lengths) besides the rest's
            named = {s for prog, _ in programs for s, _ in prog.steps}
            found = set()
            for prog, tau in programs:
                for e in [e for _, e in prog.steps] + list(tau):
                    found |= sp.sympify(e).free_symbols
            parameters = sorted(set(parameters) | (found - named - {t}), key=lambda s: s.name)
        self.parameters = [str(s) for s in parameters]
        self.inputs = [str(s) for s in eq.inputs]
        self.lambdas = [str(s) for s in eq.lam]
        self.mus = [str(s) for s in eq.mu]
        self.defaults = parameter_defaults(model, eq, parameters)
        arrays = {name: sp.IndexedBase(name, shape=(max(size, 1),))
                  for name, size in (("q", self.n), ("f", self.n), ("qdd", self.n), ("p", len(self.parameters)),
                                     ("u", len(self.inputs)))}
        self.sub = {}
        for name, syms in (("q", eq.q), ("f", eq.f), ("p", parameters), ("u", eq.inputs)):
            for i, s in enumerate(syms):
                self.sub[s] = arrays[name][i]
        n, m1, m2 = self.n, self.m1, self.m2
        vec = lambda exprs: [((i,), e) for i, e in enumerate(exprs)]
        mat = lambda d: sorted(((i, j), e) for (i, j), e in d.items())
        if recursive:
            head = self._recursive(model, eq, programs, arrays)
        else:
            head = [("mass_matrix", "mass matrix M (n x n, row-major)", (n, n), mat(eq.M)),
                    ("h", "force vector h: M qdd + h + Phi_q^T lambda + A^T mu = 0", (n,), vec(eq.h))]
        self.functions = [fn for fn in head if isinstance(fn, Function)]
        spec = [fn for fn in head if not isinstance(fn, Function)] + [
            ("phi", "displacement constraints phi(q, t)", (m1,), vec(eq.phi)),
            ("Phi_q", "Jacobian of phi with respect to q (m1 x n)", (m1, n), mat(eq.Phi_q)),
            ("Phi_t", "partial time derivative of phi", (m1,), vec(eq.Phi_t)),
            ("gamma_phi", "phi'' = Phi_q qdd + gamma_phi", (m1,), vec(eq.gamma_phi)),
            ("A", "flow-constraint matrix A (m2 x n): A f + a = 0", (m2, n), mat(eq.A)),
            ("a", "flow-constraint offset a", (m2,), vec(eq.a0)),
            ("gamma_psi", "psi' = A qdd + gamma_psi", (m2,), vec(eq.gamma_psi)),
        ]
        self.servo = eq.R is not None
        if self.servo:   # servo constraints: a multiplier acts off its own row of A (controlled sources)
            spec.append(("reaction", "reaction matrix R (m2 x n): M qdd + h + Phi_q^T lambda + R^T mu = 0", (m2, n),
                         mat(eq.R)))
        for name, doc, shape, entries in spec:
            entries = [(idx, self._indexed(e, name)) for idx, e in entries if sp.sympify(e) != 0]
            self.functions.append(Function(name, doc, shape, entries))

    def _recursive(self, model, eq, programs, arrays):
        """The recursive form's functions: the two Newton–Euler programs (with the rest's ``M qdd + h``, resp.
        ``M qdd``), and ``mass_matrix``/``h`` made from them."""
        n = self.n
        times = {}  # q(t), q'(t), q''(t) -> q[i], f[i], a[i]
        for i, c in enumerate(model.coordinates):
            times[c.diff(t, 2)] = arrays["qdd"][i]
            times[c.diff(t)] = arrays["f"][i]
            times[c] = arrays["q"][i]
        rest = [sp.S.Zero] * n
        for (i, j), v in eq.M.items():
            rest[i] += v * eq.a[j]
        mass_rest = list(rest)
        rest = [r + h for r, h in zip(rest, eq.h)]
        accel = {s: arrays["qdd"][i] for i, s in enumerate(eq.a)}
        taken = {"t", "q", "f", "qdd", "p", "u", "out", "numpy", "i", "k", "e", "z", "col"}
        out = []
        for (prog, tau), extra, name, doc in zip(
                programs, (rest, mass_rest), ("inverse_dynamics", "inertia_times"),
                ("inverse dynamics tau = M qdd + h by the recursive Newton-Euler program",
                 "M(q) qdd by the recursive Newton-Euler program (no velocities, no gravity, no loads)")):
            rename = {}
            for s, _ in prog.steps:
                base = "v_" + c_identifier(s.name)
                while base in taken:
                    base += "_"
                taken.add(base)
                rename[s] = sp.Symbol(base)
            both = {**times, **rename}
            defs = [(rename[s], self._indexed(e.xreplace(both), name, allowed=set(rename.values())))
                    for s, e in prog.steps]
            entries = []
            for i, (tk, r) in enumerate(zip(tau, extra)):
                e = sp.sympify(tk).xreplace(both) + sp.sympify(r).xreplace(accel)
                if e != 0:
                    entries.append(((i,), self._indexed(e, name, allowed=set(rename.values()))))
            out.append(Function(name, doc, (n,), entries, ("t", "q", "f", "qdd", "p", "u"), defs))
        out.append(Function("mass_matrix", "mass matrix M (n x n, row-major), column by column from inertia_times",
                            (n, n), [], kind="columns"))
        out.append(Function("h", "force vector h = inverse_dynamics(t, q, f, 0): M qdd + h + Phi_q^T lambda + "
                            "A^T mu = 0", (n,), [], kind="bias"))
        return out

    def _indexed(self, expr, where, allowed=()):
        e = sp.sympify(expr).xreplace(self.sub)
        stray = e.free_symbols - {t} - {s for s in e.free_symbols if isinstance(s, sp.Indexed)} \
            - {a.base.label for a in e.atoms(sp.Indexed)} - set(allowed)
        if stray:
            raise ExportError(f"{where} contains {sorted(map(str, stray))}, which is not a coordinate, flow, "
                              "parameter or input; this is a netdyn bug, please report it")
        if e.atoms(sp.Derivative):
            raise ExportError(f"{where} contains an unevaluated derivative {e.atoms(sp.Derivative).pop()}; "
                              "code cannot be generated for it (give the source waveform in closed form)")
        return e


def wants_recursive(model, form):
    """Whether an export of ``model`` in ``form`` (``None``, ``"recursive"``, ``"expanded"``) is in recursive form.

    >>> from netdyn.linkages import four_bar
    >>> wants_recursive(four_bar().model(formulation="relative"), None), wants_recursive(four_bar().model(), None)
    (True, False)
    """
    if form not in (None, "expanded", "recursive"):
        raise ExportError(f"unknown equation form {form!r}; use 'recursive', 'expanded' or None (recursive where "
                          "the model has it)")
    if form == "recursive" and not model.has_recursive_form:
        raise ExportError(f"model {model.name!r} has no recursive form (it exists for mechanisms in relative "
                          "coordinates); export it with form='expanded' or form=None")
    return model.has_recursive_form if form is None else form == "recursive"


def recursive_parts(model):
    """``(eq, definitions, rows)`` of a model in recursive form, in the internal symbols (``q``, ``q_dot``,
    ``q_ddot``, ``lambda_1``): the rest model's :class:`~netdyn.lagrange.equations.Equations`, the named
    intermediates ``[(symbol, expression)]`` and the equations (Lagrange rows, then the constraints).

    >>> from netdyn.linkages import four_bar
    >>> eq, defs, rows = recursive_parts(four_bar().model(formulation="relative"))
    >>> len(rows), len(defs) > 10
    (5, True)
    """
    from netdyn.lagrange.equations import internalize

    form = model.recursive_form()
    eq = form.rest.derive()
    eqs = form.equations()
    defs = [(s, internalize(form.rest, e)) for s, e in eqs.definitions]
    return eq, defs, [internalize(form.rest, r) for r in eqs]


def parameter_defaults(model, eq=None, parameters=None):
    """Default values of the model's free parameters as floats (None where the model gives none).

    >>> import sympy as sp
    >>> from netdyn import LagrangianModel, coordinates, t
    >>> x, = coordinates("x,")
    >>> m, k = sp.symbols("m k")
    >>> parameter_defaults(LagrangianModel([x], T=m*x.diff(t)**2/2, V=k*x**2/2, parameters={"m": 2}))
    {'k': None, 'm': 2.0}
    """
    if parameters is None:
        eq = eq or model.derive()
        parameters = eq.parameters
    given = {str(k): v for k, v in model.parameters.items()}
    out = {}
    for s in parameters:
        v = given.get(str(s))
        if v is None:
            out[str(s)] = None
            continue
        try:
            out[str(s)] = float(sp.sympify(v))
        except (TypeError, ValueError):
            raise ExportError(f"parameter {s} has the non-numeric default {v!r}; give a number") from None
    return out


def safe_text(text):
    r'''``text`` with every character that could end a string literal, a comment or a docstring escaped.

    Printable ASCII stays, except ``\ " ' ? /`` (so no ``"""``, no ``*/``, no C trigraph ``??/``);
    everything else — those, line breaks, non-ASCII (as UTF-8 bytes) — becomes a three-digit octal
    escape ``\ooo``, which means the same character in a C string literal and in a Python string
    (for ASCII; UTF-8 bytes in C), and is plain text inside a comment. So a name or title embedded this way cannot change the program.

    >>> print(safe_text('a"""b */ c'))
    a\042\042\042b *\057 c
    '''
    out = []
    for ch in str(text):
        if ch.isascii() and ch.isprintable() and ch not in "\\\"'?/":
            out.append(ch)
        else:
            out.extend(f"\\{b:03o}" for b in ch.encode("utf-8"))
    return "".join(out)


def identifier(name):
    """A C/Python identifier made from a model name.

    >>> identifier("RLC network-1")
    'RLC_network_1'
    >>> identifier("2port")
    'm_2port'
    """
    out = re.sub(r"\W", "_", str(name)) or "model"
    return out if not out[0].isdigit() else "m_" + out


C_KEYWORDS = frozenset("""auto break case char const continue default do double else enum extern float for goto if
inline int long register restrict return short signed sizeof static struct switch typedef union unsigned void
volatile while _Bool _Complex _Imaginary main""".split())


def c_identifier(name):
    """An ASCII C identifier made from a name, predictably: every other character becomes ``_``, a leading
    digit or underscore gets ``m_`` (C reserves names that begin with an underscore), a C keyword gets a
    trailing ``_``; a name with no ASCII letter or digit (empty, ``"Ω"``) gives the fixed ``model``.

    >>> c_identifier("RLC network-1"), c_identifier("Ω-filter"), c_identifier("int"), c_identifier("_x")
    ('RLC_network_1', 'm___filter', 'int_', 'm__x')
    >>> c_identifier(""), c_identifier("Ω")
    ('model', 'model')
    """
    if not re.search(r"[A-Za-z0-9]", str(name)):
        return "model"
    out = re.sub(r"[^A-Za-z0-9_]", "_", str(name))
    out = out if not (out[0].isdigit() or out[0] == "_") else "m_" + out
    return out + "_" if out in C_KEYWORDS else out
