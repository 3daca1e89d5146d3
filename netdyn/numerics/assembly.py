"""Element-by-element numeric assembly: the Lagrange residual and its sparse Jacobian from term templates.

A network's model is a sum of small terms (one element's T*, V or D, one applied
effort), each touching a few coordinates. Terms of one *shape* (the same
expression once their coordinates are renamed ``z0, z1, …`` and their numeric
constants are lifted out as ``c0, c1, …``) share one **template**: its local
residual ``r_k = d/dt ∂e/∂ż_k − ∂e/∂z_k`` (T*), ``∂e/∂z_k`` (V), ``∂e/∂ż_k``
(D) or ``−e`` (an effort), the local Jacobian of ``r`` with respect to the
local displacements, flows and accelerations, and the term's dissipated and
supplied power are differentiated once and compiled once into a numpy
function that evaluates *all* terms of that shape in one vectorised call. The
global residual and the Jacobian's values are then scatter-adds with index
arrays fixed at construction (``numpy.bincount``), so one evaluation costs a
few numpy calls per template, whatever the number of elements, and the
compile cost does not grow with the network (an RC ladder of 100,000 sections
has five templates).

The residual is ``R(q, f, a) = M(q) a + h(q, f, t)``: the Lagrange rows
without constraint forces (models with constraints take the symbolic path).

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
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sps
import sympy as sp

from netdyn.lagrange.fastdiff import rate
from netdyn.symbols import t

__all__ = ["TermAssembly", "supports"]

_KEEP = {sp.Integer(k) for k in range(-8, 9)} | {sp.Rational(k, 2) for k in range(-15, 16, 2)}


def supports(model):
    """Whether the term assembly covers ``model``: no displacement or flow constraints."""
    return not model.constraints and not model.flow_constraints


class _Template:
    """One shape of term: compiled local residual, local Jacobian entries and power, and its instances."""

    def __init__(self, expr, role, nloc, nconst):
        self.expr, self.role, self.nloc, self.nconst = expr, role, nloc, nconst
        self.coords = []  # one row of local coordinate indices per instance
        self.consts = []  # one row of lifted constants per instance
        self.fn = None
        self.entries = []  # (local row, local column, kind) of the compiled Jacobian values; kind 0 q, 1 f, 2 a


class TermAssembly:
    """Residual, sparse Jacobian and power of a constraint-free model, assembled from compiled term templates.

    Parameters
    ----------
    model : LagrangianModel
        A model without constraints (:func:`supports`).

    Attributes
    ----------
    n : int
        Number of coordinates.
    templates : list
        The distinct term shapes found (each compiled once).
    rows, cols, kinds : ndarray
        Where each Jacobian value of :meth:`jacobian_values` belongs: residual row, coordinate column and
        whether it is ``∂R/∂q`` (0), ``∂R/∂f`` (1) or ``∂R/∂a`` (2).
    """

    def __init__(self, model):
        eq = model.derive()
        self.n = n = eq.n
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
                self._add(sp.sympify(term).xreplace(internal), role, None)
        coord_index = {c: i for i, c in enumerate(model.coordinates)}
        for c, e in model.efforts.items():
            self._add(sp.sympify(e).xreplace(internal), "e", coord_index[c])
        for tp in self.templates:
            m = len(tp.coords)
            tp.coords = np.array(tp.coords, dtype=np.intp).reshape(m, tp.nloc)
            tp.consts = np.array(tp.consts, dtype=float).reshape(m, tp.nconst)
            self._compile(tp)
        res_rows, rows, cols, kinds = [], [], [], []
        for tp in self.templates:
            for k in range(tp.nloc):
                res_rows.append(tp.coords[:, k])
            for (k, j, kind) in tp.entries:
                rows.append(tp.coords[:, k])
                cols.append(tp.coords[:, j])
                kinds.append(np.full(len(tp.coords), kind, dtype=np.int8))
        prows, pcols, pkinds = [], [], []
        for tp in self.templates:
            for (which, j, kind) in tp.pentries:
                prows.append(np.full(len(tp.coords), which, dtype=np.intp))
                pcols.append(tp.coords[:, j])
                pkinds.append(np.full(len(tp.coords), kind, dtype=np.int8))
        cat = lambda parts, dt: np.concatenate(parts).astype(dt) if parts else np.zeros(0, dtype=dt)
        self.power_rows, self.power_cols = cat(prows, np.intp), cat(pcols, np.intp)
        self.power_kinds = cat(pkinds, np.int8)
        self._res_rows = cat(res_rows, np.intp)
        self.rows, self.cols, self.kinds = cat(rows, np.intp), cat(cols, np.intp), cat(kinds, np.int8)
        self.inertial = np.unique(self.cols[self.kinds == 2])

    # ------------------------------------------------------------------ building
    def _add(self, e, role, effort_row):
        e = sp.sympify(e)
        if e == 0:
            return
        local = sorted({self._index[s][1] for s in e.free_symbols if s in self._index})
        if effort_row is not None and effort_row not in local:
            local = sorted(local + [effort_row])
        rename = {}
        for k, i in enumerate(local):
            rename[self._qs[i]] = sp.Symbol(f"zq{k}")
            rename[self._fs[i]] = sp.Symbol(f"zf{k}")
        e = e.xreplace(rename)
        numbers = []
        for a in sp.preorder_traversal(e):
            if a.is_Number and a not in _KEEP and a not in numbers:
                numbers.append(a)
        lift = {v: sp.Symbol(f"c{j}") for j, v in enumerate(numbers)}
        shape = e.xreplace(lift) if lift else e
        rowtag = local.index(effort_row) if effort_row is not None else -1
        key = (role, len(local), rowtag, sp.srepr(shape))
        tp = self._by_key.get(key)
        if tp is None:
            tp = _Template(shape, role, len(local), len(numbers))
            tp.rowtag = rowtag
            self._by_key[key] = tp
            self.templates.append(tp)
        tp.coords.append(local)
        tp.consts.append([float(v) for v in numbers])

    def _compile(self, tp):
        k = tp.nloc
        zq = [sp.Symbol(f"zq{j}") for j in range(k)]
        zf = [sp.Symbol(f"zf{j}") for j in range(k)]
        za = [sp.Symbol(f"za{j}") for j in range(k)]
        cs = [sp.Symbol(f"c{j}") for j in range(tp.nconst)]
        e = tp.expr
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
        else:
            r = [-e if i == tp.rowtag else sp.S.Zero for i in range(k)]
            pd, ps = sp.S.Zero, e * zf[tp.rowtag]
        jac = []
        for i in range(k):
            for kind, zs in enumerate((zq, zf, za)):
                for j in range(k):
                    d = sp.diff(r[i], zs[j])
                    if d != 0:
                        tp.entries.append((i, j, kind))
                        jac.append(d)
        pjac = []
        tp.pentries = []
        for which, P in enumerate((pd, ps)):
            for kind, zs in enumerate((zq, zf)):
                for j in range(k):
                    d = sp.diff(P, zs[j])
                    if d != 0:
                        tp.pentries.append((which, j, kind))
                        pjac.append(d)
        args = zq + zf + za + cs + self._globals
        tp.fn_res = sp.lambdify(args, list(r) + [pd, ps], modules="numpy", cse=True)
        tp.fn_jac = sp.lambdify(args, jac, modules="numpy", cse=True) if jac else (lambda *a: [])
        tp.fn_pjac = sp.lambdify(args, pjac, modules="numpy", cse=True) if pjac else (lambda *a: [])

    # ------------------------------------------------------------------ evaluation
    def _evaluate(self, which, tt, q, f, a, p, inputs):
        g = [tt, *p, *inputs]
        out = []
        for tp in self.templates:
            c = tp.coords
            cols = [q[c[:, j]] for j in range(tp.nloc)] + [f[c[:, j]] for j in range(tp.nloc)] \
                + [a[c[:, j]] for j in range(tp.nloc)] + [tp.consts[:, j] for j in range(tp.nconst)]
            m = len(c)
            vals = {"res": tp.fn_res, "jac": tp.fn_jac, "pjac": tp.fn_pjac}[which](*cols, *g)
            out.append([v if isinstance(v, np.ndarray) and v.shape == (m,) else np.full(m, float(v)) for v in vals])
        return out

    def evaluate(self, tt, q, f, a, p, inputs):
        """``(R, dissipated power, supplied power)``: ``R = M(q) a + h(q, f, t)`` (length n)."""
        vals = self._evaluate("res", tt, q, f, a, p, inputs)
        res, pd, ps = [], 0.0, 0.0
        for tp, vs in zip(self.templates, vals):
            res.extend(vs[:tp.nloc])
            pd += float(np.sum(vs[-2]))
            ps += float(np.sum(vs[-1]))
        R = np.bincount(self._res_rows, np.concatenate(res), minlength=self.n) if res else np.zeros(self.n)
        return R, pd, ps

    def power(self, tt, q, f, p, inputs):
        """Dissipated and supplied power (no constraints, so no multiplier terms)."""
        _, pd, ps = self.evaluate(tt, q, f, np.zeros(self.n), p, inputs)
        return pd, ps

    def residual(self, tt, q, f, a, p, inputs):
        """``R = M(q) a + h(q, f, t)`` (length n)."""
        return self.evaluate(tt, q, f, a, p, inputs)[0]

    def jacobian_values(self, tt, q, f, a, p, inputs):
        """The values of ``∂R/∂q``, ``∂R/∂f`` and ``∂R/∂a`` at ``(rows, cols, kinds)`` (duplicates add up)."""
        vals = self._evaluate("jac", tt, q, f, a, p, inputs)
        parts = [v for vs in vals for v in vs]
        return np.concatenate(parts) if parts else np.zeros(0)

    def power_jacobian_values(self, tt, q, f, p, inputs):
        """Derivatives of the dissipated (row 0) and supplied (row 1) power at ``(power_rows, power_cols,
        power_kinds)``: with respect to q (kind 0) or f (kind 1)."""
        vals = self._evaluate("pjac", tt, q, f, np.zeros(self.n), p, inputs)
        parts = [v for vs in vals for v in vs]
        return np.concatenate(parts) if parts else np.zeros(0)

    def jacobian(self, tt, q, f, a, p, inputs, kind):
        """``∂R/∂q`` (kind 0), ``∂R/∂f`` (1) or ``∂R/∂a`` (2) as a sparse CSR matrix."""
        J = self.jacobian_values(tt, q, f, a, p, inputs)
        sel = self.kinds == kind
        return sps.csr_matrix((J[sel], (self.rows[sel], self.cols[sel])), shape=(self.n, self.n))
