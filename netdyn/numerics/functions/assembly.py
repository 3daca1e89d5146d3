"""Element-by-element numeric assembly: the Lagrange residual, the constraint rows and their sparse Jacobian.

A network's model is a sum of small terms (one element's T*, V or D, one applied
effort, one constraint), each touching a few coordinates. Terms of one *shape*
(the same expression once their coordinates are renamed ``z0, z1, …`` and their
numeric constants are lifted out as ``c0, c1, …``) share one **template**: its
local outputs, their local Jacobian with respect to the local displacements,
flows, accelerations and the term's own multiplier, and the term's dissipated
and supplied power are differentiated once and compiled once into a numpy
function that evaluates *all* terms of that shape in one vectorised call. The
global vectors and the Jacobian's values are then scatter-adds with index
arrays fixed at construction (``numpy.bincount``), so one evaluation costs a
few numpy calls per template, whatever the number of elements, and the
compile cost does not grow with the network (an RC ladder of 100,000 sections
has five templates).

What one evaluation returns, ``E(q, f, a, z, η)`` with ``z = [λ, μ]`` (the
rows of :class:`~netdyn.numerics.ida.ida.IDA`'s residual, in that order):

* ``E[:n]``: the Lagrange rows ``M(q) a + h(q, f, t) + Φ_qᵀλ + Rᵀμ`` (``R = A`` but for servo
  constraints, whose reaction is given apart);
* ``E[n:n+m1]``: the displacement constraints ``φ(q, t)``;
* ``E[n+m1:n+m1+m2]``: the flow constraints ``A(q, t) f + a(q, t)``;
* ``E[n+m1+m2:n+2m1+m2]``: their velocity form ``Φ_q f + Φ_t`` (the GGL rows);
* ``E[n+2m1+m2:]``: the GGL correction ``Φ_qᵀη`` (n entries);

and the dissipated ``f·∂D/∂f`` and supplied power (efforts, ``λᵀΦ_t``, ``μᵀa``,
servo reactions, explicit time dependence) of
:func:`~netdyn.numerics.functions.energy.supplied_power`.

>>> import numpy as np
>>> from netdyn import LagrangianModel, coordinates, t
>>> x, y = coordinates("x, y")
>>> model = LagrangianModel([x, y], T=[x.diff(t)**2 / 2, y.diff(t)**2 / 2],
...                         V=[(x - y)**2 / 2, (y - 2)**4 / 4], D=[3 * x.diff(t)**2 / 2])
>>> asm = TermAssembly(model)
>>> asm.residual(0.0, np.array([1.0, 0.0]), np.array([1.0, 0.0]), np.array([0.5, 0.0]), np.zeros(0), np.zeros(0))
array([ 4.5, -9. ])
>>> len(asm.templates)
4
>>> pend = LagrangianModel([x, y], T=(x.diff(t)**2 + y.diff(t)**2) / 2, V=9.81 * y,
...                        constraints=[x**2 + y**2 - 1])
>>> E, pd, ps = TermAssembly(pend).evaluate(0.0, np.array([0.6, -0.8]), np.array([0.8, 0.6]), np.zeros(2),
...                                         np.zeros(0), np.zeros(0), z=np.array([2.0]), eta=np.array([0.5]))
>>> E.round(12).tolist()    # ẍ + 2λx, ÿ + g + 2λy, φ, Φ_q f, (Φ_qᵀη)
[2.4, 6.61, 0.0, 0.0, 0.6, -0.8]
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sps
import sympy as sp

from netdyn.lagrange.fastdiff import rate
from netdyn.numerics.functions.pwtable import tabulate
from netdyn.symbols import t

__all__ = ["TermAssembly", "assembly", "ida_unknowns", "DENSE_UNKNOWNS"]

#: constrained models up to this many IDA unknowns keep the dense IDA (:func:`netdyn.numerics.ida.sparse_ida.ida_for`)
DENSE_UNKNOWNS = 30

_KEEP = {sp.Integer(k) for k in range(-8, 9)} | {sp.Rational(k, 2) for k in range(-15, 16, 2)}
_MODULES = [{"Heaviside": lambda x, h0=0.5: np.heaviside(x, h0)}, "numpy"]
_SPACES = ("L", "C", "E", "G")  # Lagrange row of a local coordinate, own constraint row, own GGL row, own Φ_qᵀη
KINDS = ("q", "f", "a", "z", "eta")  # the variables a Jacobian entry is taken with respect to


def _lambdify(args, exprs):
    """numpy function of ``args`` returning the list ``exprs``; PWL sources by table lookup."""
    if not exprs:
        return lambda *a: []
    exprs, tables = tabulate([sp.sympify(e) for e in exprs])
    return sp.lambdify(args, exprs, modules=[tables] + _MODULES, cse=True)


class _Template:
    """One shape of term: compiled local outputs, Jacobian entries and power, and its instances."""

    def __init__(self, expr, role, nloc, nconst, rowtag):
        self.expr, self.role, self.nloc, self.nconst, self.rowtag = expr, role, nloc, nconst, rowtag
        self.coords = []  # one row of local coordinate indices per instance
        self.consts = []  # one row of lifted constants per instance
        self.mult = []  # the instance's multiplier index in z = [λ, μ] (constraints), else 0
        self.outs = []  # (space, local row) of each compiled output
        self.entries = []  # (output number, kind, local column) of each compiled Jacobian value
        self.pentries = []  # (0 dissipated / 1 supplied, kind, local column) of each power derivative


class TermAssembly:
    """Residual rows, sparse Jacobian and power of a model, assembled from compiled term templates.

    Parameters
    ----------
    model : LagrangianModel
        Any model: constraint rows and multiplier terms are templates like the elements' terms.

    Attributes
    ----------
    n, m1, m2 : int
        Numbers of coordinates, displacement and flow constraints.
    size : int
        Length of the output vector ``E`` (``2n + 2m1 + m2``; see the module docstring).
    templates : list
        The distinct term shapes found (each compiled once).
    rows, cols, kinds : ndarray
        Where each Jacobian value of :meth:`jacobian_values` belongs: the row of ``E``, the variable's index and
        its kind (0 q, 1 f, 2 a, 3 z = [λ, μ], 4 η).
    power_rows, power_cols, power_kinds : ndarray
        The same for :meth:`power_jacobian_values` (row 0 dissipated, 1 supplied; kinds 0, 1, 3).
    """

    def __init__(self, model):
        eq = model.derive()
        self.n = n = eq.n
        self.m1, self.m2 = m1, m2 = len(eq.phi), len(eq.a0)
        self.size = 2 * n + 2 * m1 + m2
        self.parameters, self.inputs = list(eq.parameters), list(eq.inputs)
        self._qs, self._fs = list(eq.q), list(eq.f)
        self._index = {}
        for i, (qs, fs) in enumerate(zip(eq.q, eq.f)):
            self._index[qs] = (0, i)
            self._index[fs] = (1, i)
        self._globals = [t] + self.parameters + self.inputs
        self._by_key = {}
        self.templates = []
        # coordinate functions -> internal symbols in one top-down pass (q̇(t) is matched before q(t))
        internal = {}
        for c, qs, fs in zip(eq.coordinates, eq.q, eq.f):
            internal[rate(c)] = fs
            internal[c] = qs
        internal.update({fn: s for s, fn in eq.to_time.items() if s in set(eq.inputs)})
        for role, terms in (("T", model.T_terms), ("V", model.V_terms), ("D", model.D_terms)):
            for term in terms:
                self._add(sp.sympify(term).xreplace(internal), role)
        coord_index = {c: i for i, c in enumerate(model.coordinates)}
        for c, e in model.efforts.items():
            self._add(sp.sympify(e).xreplace(internal), "e", effort_row=coord_index[c])
        for j, phi in enumerate(eq.phi):
            self._add(sp.sympify(phi), "phi", mult=j)
        reactions = [{} for _ in range(m2)]
        for (k, i), v in eq.reaction.items():
            reactions[k][i] = sp.sympify(v)
        for k, psi in enumerate(eq.flow_constraint_rows()):
            self._add(sp.sympify(psi), "psi", mult=m1 + k, reaction=reactions[k])
        for tp in self.templates:
            m = len(tp.coords)
            tp.coords = np.array(tp.coords, dtype=np.intp).reshape(m, tp.nloc)
            tp.consts = np.array(tp.consts, dtype=float).reshape(m, tp.nconst)
            tp.mult = np.array(tp.mult, dtype=np.intp)
            self._compile(tp)
        self._index_arrays()

    # ------------------------------------------------------------------ building
    def _add(self, e, role, effort_row=None, mult=0, reaction=None):
        e = sp.sympify(e)
        if e == 0 and role not in ("phi", "psi"):
            return
        parts = [e] + list((reaction or {}).values())
        local = set()
        for part in parts:
            local |= {self._index[s][1] for s in part.free_symbols if s in self._index}
        local |= set((reaction or {}).keys())
        if effort_row is not None:
            local.add(effort_row)
        local = sorted(local)
        rename = {}
        for k, i in enumerate(local):
            rename[self._qs[i]] = sp.Symbol(f"zq{k}")
            rename[self._fs[i]] = sp.Symbol(f"zf{k}")
        if reaction is not None:  # (e, reaction coefficient of each local coordinate)
            e = sp.Tuple(e, *[reaction.get(i, sp.S.Zero) for i in local])
        e = e.xreplace(rename)
        numbers = []
        if not e.has(sp.Piecewise):  # PWL/PULSE sources keep their numbers: table lookup needs them
            for a in sp.preorder_traversal(e):
                if a.is_Number and a not in _KEEP and a not in numbers:
                    numbers.append(a)
        lift = {v: sp.Symbol(f"c{j}") for j, v in enumerate(numbers)}
        shape = e.xreplace(lift) if lift else e
        rowtag = local.index(effort_row) if effort_row is not None else -1
        # the shape itself is the key: sympy's structural equality (symbols with their assumptions, Float 2.0
        # apart from 2) and cached hash, at a fraction of the cost of printing it with srepr
        key = (role, len(local), rowtag, shape)
        tp = self._by_key.get(key)
        if tp is None:
            tp = self._by_key[key] = _Template(shape, role, len(local), len(numbers), rowtag)
            self.templates.append(tp)
        tp.coords.append(local)
        tp.consts.append([float(v) for v in numbers])
        tp.mult.append(mult)

    def _outputs(self, tp, zq, zf, za, zm, ze):
        """The template's outputs ``[(space, local row, expression)]`` and its powers ``(dissipated, supplied)``."""
        k, e = tp.nloc, tp.expr
        if tp.role == "T":
            r = []
            for i in range(k):
                p = sp.diff(e, zf[i])
                r.append(sum((sp.diff(p, zf[j]) * za[j] + sp.diff(p, zq[j]) * zf[j] for j in range(k)), sp.S.Zero)
                         + sp.diff(p, t) - sp.diff(e, zq[i]))
            pd, ps = sp.S.Zero, -sp.diff(e, t)
        elif tp.role == "V":
            r = [sp.diff(e, zq[i]) for i in range(k)]
            pd, ps = sp.S.Zero, sp.diff(e, t)
        elif tp.role == "D":
            r = [sp.diff(e, zf[i]) for i in range(k)]
            pd, ps = sum((zf[i] * r[i] for i in range(k)), sp.S.Zero), sp.S.Zero
        elif tp.role == "e":
            r = [-e if i == tp.rowtag else sp.S.Zero for i in range(k)]
            pd, ps = sp.S.Zero, e * zf[tp.rowtag]
        elif tp.role == "phi":  # φ, Φ_q f + Φ_t, λ Φ_q on the Lagrange rows, η Φ_q on the flows; power λ Φ_t
            grad = [sp.diff(e, zq[i]) for i in range(k)]
            pt = sp.diff(e, t)
            outs = [("C", 0, e), ("E", 0, sum((g * zf[i] for i, g in enumerate(grad)), sp.S.Zero) + pt)]
            outs += [("L", i, zm * g) for i, g in enumerate(grad)] + [("G", i, ze * g) for i, g in enumerate(grad)]
            return outs, sp.S.Zero, zm * pt
        else:  # psi: A f + a, μ R on the Lagrange rows; power μ (A f + a − R f)
            psi, react = e[0], list(e[1:])
            outs = [("C", 0, psi)] + [("L", i, zm * g) for i, g in enumerate(react)]
            return outs, sp.S.Zero, zm * (psi - sum((g * zf[i] for i, g in enumerate(react)), sp.S.Zero))
        return [("L", i, ri) for i, ri in enumerate(r)], pd, ps

    def _compile(self, tp):
        k = tp.nloc
        zq = [sp.Symbol(f"zq{j}") for j in range(k)]
        zf = [sp.Symbol(f"zf{j}") for j in range(k)]
        za = [sp.Symbol(f"za{j}") for j in range(k)]
        zm, ze = sp.Symbol("zm"), sp.Symbol("ze")
        cs = [sp.Symbol(f"c{j}") for j in range(tp.nconst)]
        outs, pd, ps = self._outputs(tp, zq, zf, za, zm, ze)
        outs = [(s, i, sp.sympify(x)) for s, i, x in outs if sp.sympify(x) != 0 or s == "C"]
        tp.outs = [(s, i) for s, i, _ in outs]
        wrt = [(0, zq), (1, zf), (2, za), (3, [zm]), (4, [ze])]
        jac = []
        for o, (_, _, x) in enumerate(outs):
            for kind, zs in wrt:
                for j, z in enumerate(zs):
                    d = sp.diff(x, z)
                    if d != 0:
                        tp.entries.append((o, kind, j))
                        jac.append(d)
        pjac = []
        for which, P in enumerate((pd, ps)):
            for kind, zs in wrt[:2] + [wrt[3]]:
                for j, z in enumerate(zs):
                    d = sp.diff(P, z)
                    if d != 0:
                        tp.pentries.append((which, kind, j))
                        pjac.append(d)
        args = zq + zf + za + [zm, ze] + cs + self._globals
        tp.fn_res = _lambdify(args, [x for _, _, x in outs] + [pd, ps])
        tp.fn_jac = _lambdify(args, jac)
        tp.fn_pjac = _lambdify(args, pjac)

    def _row(self, tp, space, i):
        """Global rows of ``E`` of one output of every instance of ``tp``."""
        n, m1, m2 = self.n, self.m1, self.m2
        if space == "L":
            return tp.coords[:, i]
        if space == "C":
            return n + tp.mult
        if space == "E":
            return n + m1 + m2 + tp.mult
        return n + 2 * m1 + m2 + tp.coords[:, i]

    def _col(self, tp, kind, j):
        return tp.coords[:, j] if kind <= 2 else tp.mult

    def _index_arrays(self):
        cat = lambda parts, dt: np.concatenate(parts).astype(dt) if parts else np.zeros(0, dtype=dt)
        res_rows, rows, cols, kinds, prows, pcols, pkinds = [], [], [], [], [], [], []
        for tp in self.templates:
            m = len(tp.coords)
            res_rows += [self._row(tp, s, i) for s, i in tp.outs]
            for (o, kind, j) in tp.entries:
                rows.append(self._row(tp, *tp.outs[o]))
                cols.append(self._col(tp, kind, j))
                kinds.append(np.full(m, kind, dtype=np.int8))
            for (which, kind, j) in tp.pentries:
                prows.append(np.full(m, which, dtype=np.intp))
                pcols.append(self._col(tp, kind, j))
                pkinds.append(np.full(m, kind, dtype=np.int8))
        self._res_rows = cat(res_rows, np.intp)
        self.rows, self.cols, self.kinds = cat(rows, np.intp), cat(cols, np.intp), cat(kinds, np.int8)
        self.power_rows, self.power_cols, self.power_kinds = cat(prows, np.intp), cat(pcols, np.intp), \
            cat(pkinds, np.int8)
        self.inertial = np.unique(self.cols[self.kinds == 2])

    # ------------------------------------------------------------------ evaluation
    def _evaluate(self, which, tt, q, f, a, p, inputs, z, eta, templates=None):
        g = [tt, *p, *inputs]
        out = []
        for tp in self.templates if templates is None else templates:
            c, m = tp.coords, len(tp.coords)
            mult = (z[tp.mult], eta[tp.mult] if tp.role == "phi" else 0.0) if tp.role in ("phi", "psi") \
                else (0.0, 0.0)
            cols = [q[c[:, j]] for j in range(tp.nloc)] + [f[c[:, j]] for j in range(tp.nloc)] \
                + [a[c[:, j]] for j in range(tp.nloc)] + list(mult) + [tp.consts[:, j] for j in range(tp.nconst)]
            vals = {"res": tp.fn_res, "jac": tp.fn_jac, "pjac": tp.fn_pjac}[which](*cols, *g)
            out.append([v if isinstance(v, np.ndarray) and v.shape == (m,) else np.full(m, float(v)) for v in vals])
        return out

    def _multipliers(self, z, eta):
        z = np.zeros(self.m1 + self.m2) if z is None else np.asarray(z, dtype=float)
        eta = np.zeros(self.m1) if eta is None else np.asarray(eta, dtype=float)
        return z, eta

    def evaluate(self, tt, q, f, a, p, inputs, z=None, eta=None):
        """``(E, dissipated power, supplied power)`` at a state; ``z = [λ, μ]`` and ``η`` default to zero."""
        z, eta = self._multipliers(z, eta)
        vals = self._evaluate("res", tt, q, f, a, p, inputs, z, eta)
        res, pd, ps = [], 0.0, 0.0
        for tp, vs in zip(self.templates, vals):
            res.extend(vs[:len(tp.outs)])
            pd += float(np.sum(vs[-2]))
            ps += float(np.sum(vs[-1]))
        E = np.bincount(self._res_rows, np.concatenate(res), minlength=self.size) if res else np.zeros(self.size)
        return E, pd, ps

    def ggl(self, tt, q, eta, p, inputs):
        """``Φ_qᵀη`` (length n) from the displacement constraints' templates alone."""
        phi = [tp for tp in self.templates if tp.role == "phi"]
        zero = np.zeros(self.n)
        G = np.zeros(self.n)
        for tp, vs in zip(phi, self._evaluate("res", tt, q, zero, zero, p, inputs,
                                              np.zeros(self.m1 + self.m2), eta, phi)):
            for (space, i), v in zip(tp.outs, vs):
                if space == "G":
                    np.add.at(G, tp.coords[:, i], v)
        return G

    def power(self, tt, q, f, p, inputs, z=None):
        """Dissipated and supplied power."""
        _, pd, ps = self.evaluate(tt, q, f, np.zeros(self.n), p, inputs, z)
        return pd, ps

    def residual(self, tt, q, f, a, p, inputs, z=None):
        """The Lagrange rows ``M(q) a + h(q, f, t) + Φ_qᵀλ + Rᵀμ`` (length n)."""
        return self.evaluate(tt, q, f, a, p, inputs, z)[0][:self.n]

    def jacobian_values(self, tt, q, f, a, p, inputs, z=None, eta=None):
        """The values of the derivatives of ``E`` at ``(rows, cols, kinds)`` (duplicates add up)."""
        z, eta = self._multipliers(z, eta)
        parts = [v for vs in self._evaluate("jac", tt, q, f, a, p, inputs, z, eta) for v in vs]
        return np.concatenate(parts) if parts else np.zeros(0)

    def power_jacobian_values(self, tt, q, f, p, inputs, z=None):
        """Derivatives of the dissipated (row 0) and supplied (row 1) power at ``(power_rows, power_cols,
        power_kinds)``: with respect to q (kind 0), f (1) or z (3)."""
        z, eta = self._multipliers(z, None)
        parts = [v for vs in self._evaluate("pjac", tt, q, f, np.zeros(self.n), p, inputs, z, eta) for v in vs]
        return np.concatenate(parts) if parts else np.zeros(0)

    def widths(self):
        """Length of each kind's variable vector: ``(n, n, n, m1 + m2, m1)``."""
        return (self.n, self.n, self.n, self.m1 + self.m2, self.m1)

    def jacobian(self, tt, q, f, a, p, inputs, kind, z=None, eta=None):
        """``∂E/∂q`` (kind 0), ``∂E/∂f`` (1), ``∂E/∂a`` (2), ``∂E/∂z`` (3) or ``∂E/∂η`` (4), sparse CSR; for
        a model without constraints ``E`` is the n Lagrange rows (``n × n``)."""
        J = self.jacobian_values(tt, q, f, a, p, inputs, z, eta)
        sel = self.kinds == kind
        rows = self.size if (self.m1 or self.m2) else self.n
        return sps.csr_matrix((J[sel], (self.rows[sel], self.cols[sel])), shape=(rows, self.widths()[kind]))


def assembly(cm):
    """The model's :class:`TermAssembly`, built once and kept with the compiled model."""
    asm = getattr(cm, "_term_assembly", None)
    if asm is None:
        asm = cm._term_assembly = TermAssembly(cm.model)
    return asm


def ida_unknowns(cm):
    """How many unknowns IDA integrates for a compiled model: ``q``, the inertial flows, both multiplier
    sets of the stabilized index-2 form, the flow multipliers and the two work integrals."""
    return cm.n + len(cm.inertial_columns()) + 2 * cm.m1 + cm.m2 + 2
