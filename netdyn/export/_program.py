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
    """One exported function: its name, what it returns, output shape and non-zero entries."""

    name: str
    doc: str
    shape: tuple  # (rows,) or (rows, cols)
    entries: list  # [(index tuple, expression over q[i], f[i], p[k], u[k], t)]

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
        """``(replacements, outputs)``: shared sub-expressions ``cse0, cse1, ...`` and the entry expressions."""
        if not self.entries:
            return [], []
        return sp.cse([e for _, e in self.entries], symbols=sp.numbered_symbols("cse"))


class Program:
    """The exported functions of a model, with its names and parameter defaults."""

    def __init__(self, model):
        eq = model.derive()
        self.model, self.eq = model, eq
        self.n, self.m1, self.m2 = eq.n, len(eq.phi), len(eq.a0)
        self.coordinates = list(model.coordinate_names)
        self.parameters = [str(s) for s in eq.parameters]
        self.inputs = [str(s) for s in eq.inputs]
        self.lambdas = [str(s) for s in eq.lam]
        self.mus = [str(s) for s in eq.mu]
        self.defaults = parameter_defaults(model, eq)
        arrays = {name: sp.IndexedBase(name, shape=(max(size, 1),))
                  for name, size in (("q", self.n), ("f", self.n), ("p", len(self.parameters)),
                                     ("u", len(self.inputs)))}
        self.sub = {}
        for name, syms in (("q", eq.q), ("f", eq.f), ("p", eq.parameters), ("u", eq.inputs)):
            for i, s in enumerate(syms):
                self.sub[s] = arrays[name][i]
        n, m1, m2 = self.n, self.m1, self.m2
        vec = lambda exprs: [((i,), e) for i, e in enumerate(exprs)]
        mat = lambda d: sorted(((i, j), e) for (i, j), e in d.items())
        spec = [
            ("mass_matrix", "mass matrix M (n x n, row-major)", (n, n), mat(eq.M)),
            ("h", "force vector h: M qdd + h + Phi_q^T lambda + A^T mu = 0", (n,), vec(eq.h)),
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
        self.functions = []
        for name, doc, shape, entries in spec:
            entries = [(idx, self._indexed(e, name)) for idx, e in entries if sp.sympify(e) != 0]
            self.functions.append(Function(name, doc, shape, entries))

    def _indexed(self, expr, where):
        e = sp.sympify(expr).xreplace(self.sub)
        stray = e.free_symbols - {t} - {s for s in e.free_symbols if isinstance(s, sp.Indexed)} \
            - {a.base.label for a in e.atoms(sp.Indexed)}
        if stray:
            raise ExportError(f"{where} contains {sorted(map(str, stray))}, which is not a coordinate, flow, "
                              "parameter or input; this is a netdyn bug, please report it")
        if e.atoms(sp.Derivative):
            raise ExportError(f"{where} contains an unevaluated derivative {e.atoms(sp.Derivative).pop()}; "
                              "code cannot be generated for it (give the source waveform in closed form)")
        return e


def parameter_defaults(model, eq=None):
    """Default values of the model's free parameters as floats (None where the model gives none).

    >>> import sympy as sp
    >>> from netdyn import LagrangianModel, coordinates, t
    >>> x, = coordinates("x,")
    >>> m, k = sp.symbols("m k")
    >>> parameter_defaults(LagrangianModel([x], T=m*x.diff(t)**2/2, V=k*x**2/2, parameters={"m": 2}))
    {'k': None, 'm': 2.0}
    """
    eq = eq or model.derive()
    given = {str(k): v for k, v in model.parameters.items()}
    out = {}
    for s in eq.parameters:
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
