"""``SparseIDA``: IDA with an analytic sparse Jacobian and SuperLU, for any model.

The same method, the same variables and the same residual as
:class:`~netdyn.numerics.ida.ida.IDA` (``y = [q, f_I, λ, μ, η, W]``:
displacements, the flows with inertia, the multipliers of the displacement and
flow constraints, the GGL terms, the work integrals; the flows without inertia
are ``q̇_R + (Φ_qᵀη)_R``), but the residual, its Jacobian ``∂F/∂y + c_j ∂F/∂ẏ``
and the powers come from the element and constraint templates of
:class:`~netdyn.numerics.functions.assembly.TermAssembly` — vectorised compiled code,
scattered with fixed index arrays — and IDA factorises the Jacobian with its
sparse direct solver (SuperLU_MT) instead of building a dense one.

The Jacobian is the assembly's entries mapped onto ``y`` by the chain rule
through the flows: an entry in ``∂E/∂f_i`` goes to ``f_I``'s column (flows with
inertia), or to ``q_i``'s column times ``c_j`` and, with displacement
constraints, to the columns of ``q`` and ``η`` times the entries of
``∂(Φ_qᵀη)_i/∂(q, η)`` (products whose index pairs are fixed at construction).

The consistent start is a sparse Newton on ``F(t0, y, ẏ) = 0`` for the
algebraic variables and the rates when ``∂F/∂[y_A, ẏ_D]`` is regular; when it
is not (hidden constraints: V–C loops, I–L cut-sets) it is that of
:func:`netdyn.numerics.dae.hidden.consistent_start`, as for IDA. The flows without
inertia and the multipliers at the output times are solved again from the
equations at fixed states, as :func:`~netdyn.numerics.ida.ida.algebraic_at_output`
does, by sparse weighted least squares. Work per step grows linearly with the
number of elements.

>>> import numpy as np
>>> from netdyn import LagrangianModel, coordinates, t
>>> from netdyn.numerics.functions.compiled import compile_model
>>> x, y = coordinates("x, y")
>>> cm = compile_model(LagrangianModel([x, y], D=[x.diff(t)**2/2, y.diff(t)**2/2], V=[x**2/2, y**2/2],
...                                    flow_constraints=[x.diff(t) - y.diff(t)]))   # q̇ = -q, shared
>>> tr = SparseIDA(cm, cm.parameter_vector()).integrate(0, 1, np.array([1.0, 1.0]), np.array([-1.0, -1.0]),
...                                                      np.array([0.5, 1.0]), 1e-10, 1e-12)
>>> bool(abs(tr.q[0, -1] - np.exp(-1)) < 1e-8), bool(abs(tr.mu[0, -1]) < 1e-9)
(True, True)
"""
from __future__ import annotations

import warnings

import numpy as np
import scipy.sparse as sps
from scipy.sparse.csgraph import structural_rank
from scipy.sparse.linalg import LinearOperator, onenormest, splu

from netdyn.errors import IntegrationError
from netdyn.numerics.functions.assembly import DENSE_UNKNOWNS, assembly, ida_unknowns
from netdyn.numerics.integrators.base import Integrator, split_atol, work_atol
from netdyn.numerics.ida.ida import IDA, algebraic_at_output, ida_grid, out_at, run_ida
from netdyn.numerics.integrators.sparse_lsq import AugmentedLeastSquares
from netdyn.numerics.results.trajectory import Trajectory

__all__ = ["SparseIDA", "ida_for"]

WORK_ROW_SCALE = 1e-10  # the work rows as IDA sees them (see SparseIDA.ida_residual)
_COND = 1e12  # a scaled ∂F/∂[y_A, ẏ_D] beyond this condition number is treated as singular (hidden constraints)


class HiddenConstraintsFound(Exception):
    """The start's Jacobian is singular at ``t0``: the model has hidden constraints (the dense IDA takes it)."""


def ida_for(cm, p, max_step=np.inf):
    """The IDA a model gets: :class:`SparseIDA`, except for constrained models of at most
    :data:`~netdyn.numerics.functions.assembly.DENSE_UNKNOWNS` IDA unknowns, which keep the dense :class:`IDA`. Measured with the templates'
    compile included: random circuits of 10–20 unknowns ran 2.2–2.6× faster on the dense IDA; ladders driven
    by a current source of 13–37 unknowns were between 1.5× faster dense and 1.2× faster sparse; at 100
    unknowns the sparse one was 20× faster (0.9 s against 20 s)."""
    if cm.has_constraints and ida_unknowns(cm) <= DENSE_UNKNOWNS:
        return IDA(cm, p, max_step)
    return SparseIDA(cm, p, max_step)


class SparseIDA(Integrator):
    """IDA on ``F(t, y, ẏ) = 0`` with the analytic sparse Jacobian of the element and constraint templates."""

    name = "ida"
    carries_work = True

    def __init__(self, cm, p, max_step=np.inf):
        self.cm, self.p, self.max_step = cm, p, max_step
        self.asm = asm = assembly(cm)
        n, m1, m2 = self.n, self.m1, self.m2 = cm.n, asm.m1, asm.m2
        self.inertial = asm.inertial
        self.rest = np.setdiff1d(np.arange(n), self.inertial)
        nI = self.inertial.size
        self.N = N = n + nI + 2 * m1 + m2 + 2
        self.sz = slice(n + nI, n + nI + m1 + m2)  # z = [λ, μ]
        self.se = slice(n + nI + m1 + m2, N - 2)
        self.algebraic = list(range(n + nI, N - 2))
        self._build_pattern()
        self._build_output_system()

    # ------------------------------------------------------------------ the Jacobian's pattern
    def _build_pattern(self):
        asm, n, m1, m2, N = self.asm, self.n, self.m1, self.m2, self.N
        nI = self.inertial.size
        pos = np.full(n, -1)
        pos[self.inertial] = n + np.arange(nI)
        self._pos = pos
        g0 = n + 2 * m1 + m2  # first row of Φ_qᵀη in E
        # raw values: the assembly's E derivatives, then the power derivatives (rows negated), then a one
        rows = np.concatenate([asm.rows, g0 + n + asm.power_rows])  # power rows after E's: g0 + n + (0, 1)
        cols, kinds = np.concatenate([asm.cols, asm.power_cols]), np.concatenate([asm.kinds, asm.power_kinds])
        sign = np.where(rows >= g0 + n, -1.0, 1.0)
        # the F row of each raw value (-1: a Φ_qᵀη entry of a flow without inertia, used through the chain rule)
        frow = np.where(rows < n, rows, rows + nI)
        g = (rows >= g0) & (rows < g0 + n)
        gc = rows - g0
        frow[g] = np.where(pos[np.clip(gc[g], 0, n - 1)] >= 0, pos[np.clip(gc[g], 0, n - 1)], -1)
        frow[rows >= g0 + n] = N - 2 + (rows[rows >= g0 + n] - g0 - n)
        # the y column: q, f_I, z, η; a flow without inertia is q̇ (weight c_j)
        offs = np.array([0, 0, 0, n + nI, n + nI + m1 + m2])
        ycol = offs[kinds] + cols
        rest_f = (kinds == 1) & (pos[cols] < 0)
        ycol = np.where(((kinds == 1) | (kinds == 2)) & (pos[cols] >= 0), pos[cols], ycol)
        with_cj = ((kinds == 2) | rest_f).astype(float)
        keep = frow >= 0
        lin = np.flatnonzero(keep)
        # products: ∂E/∂f_c (c without inertia) × ∂(Φ_qᵀη)_c/∂(q, η)
        chain = np.flatnonzero(g & (frow < 0))
        by_row = {}
        for h in chain:
            by_row.setdefault(int(gc[h]), []).append(h)
        pe, ph = [], []
        for e in np.flatnonzero(rest_f & keep):
            for h in by_row.get(int(cols[e]), ()):
                pe.append(e)
                ph.append(h)
        pe, ph = np.array(pe, dtype=np.intp), np.array(ph, dtype=np.intp)
        # constants: q̇_I - f_I on the inertial rows, Ẇ on the work rows
        I = self.inertial
        crow = np.concatenate([n + np.arange(nI), n + np.arange(nI), [N - 2, N - 1]])
        ccol = np.concatenate([I, n + np.arange(nI), [N - 2, N - 1]])
        c_one = np.concatenate([np.zeros(nI), -np.ones(nI), [0.0, 0.0]])
        c_cj = np.concatenate([np.ones(nI), np.zeros(nI), [1.0, 1.0]])
        all_rows = np.concatenate([frow[lin], frow[pe], crow]).astype(np.intp)
        all_cols = np.concatenate([ycol[lin], ycol[ph], ccol]).astype(np.intp)
        pattern = sps.csc_matrix((np.ones(all_rows.size), (all_rows, all_cols)), shape=(N, N))
        pattern.sum_duplicates()
        pattern.sort_indices()
        self.sparsity = pattern
        lookup = sps.csc_matrix((np.arange(1, pattern.nnz + 1, dtype=float), pattern.indices, pattern.indptr),
                                shape=(N, N))
        slot = np.asarray(lookup[all_rows, all_cols]).ravel().astype(np.intp) - 1
        nl, npr = lin.size, pe.size
        self._slot_lin, self._slot_prod, self._slot_const = slot[:nl], slot[nl:nl + npr], slot[nl + npr:]
        self._lin, self._pe, self._ph = lin, pe, ph
        self._lin_one = sign[lin] * (1.0 - with_cj[lin])
        self._lin_cj = sign[lin] * with_cj[lin]
        self._prod_sign = sign[pe]
        self._c_one, self._c_cj = c_one, c_cj
        self._nnz = pattern.nnz
        self._work_entries = pattern.indices >= N - 2

    # ------------------------------------------------------------------ F and its Jacobian
    def _unpack(self, tt, y, yp):
        """``(q, f, a, z, η)`` from IDA's variables (two evaluations of the GGL term when it moves flows)."""
        n, I, R = self.n, self.inertial, self.rest
        nI = I.size
        q, z, eta = y[:n], y[self.sz], y[self.se]
        f = np.array(yp[:n], dtype=float)
        f[I] = y[n:n + nI]
        a = np.zeros(n)
        a[I] = yp[n:n + nI]
        G = None
        if self.m1:
            G = self.ggl_term(tt, q, eta)
            f[R] += G[R]
        return q, f, a, z, eta, G

    def ggl_term(self, tt, q, eta):
        """``Φ_qᵀη`` (length n)."""
        return self.asm.ggl(tt, q, eta, self.p.vector, self.p.inputs(tt))

    def residual(self, tt, y, yp, res):
        n, nI, p, I = self.n, self.inertial.size, self.p, self.inertial
        q, f, a, z, eta, G = self._unpack(tt, y, yp)
        E, pd, ps = self.asm.evaluate(tt, q, f, a, p.vector, p.inputs(tt), z, eta)
        res[:n] = E[:n]
        res[n:n + nI] = yp[I] - y[n:n + nI] + (G[I] if G is not None else 0.0)
        res[n + nI:self.N - 2] = E[n:self.asm.size - n]
        res[self.N - 2] = yp[self.N - 2] - pd
        res[self.N - 1] = yp[self.N - 1] - ps

    def jacobian_data(self, tt, y, yp, cj):
        """The CSC data of ``∂F/∂y + cj ∂F/∂ẏ`` on :attr:`sparsity`."""
        q, f, a, z, eta, _ = self._unpack(tt, y, yp)
        p, u = self.p, self.p.inputs(tt)
        V = np.concatenate([self.asm.jacobian_values(tt, q, f, a, p.vector, u, z, eta),
                            self.asm.power_jacobian_values(tt, q, f, p.vector, u, z)])
        out = np.bincount(self._slot_lin, V[self._lin] * (self._lin_one + cj * self._lin_cj), minlength=self._nnz)
        if self._pe.size:
            out += np.bincount(self._slot_prod, self._prod_sign * V[self._pe] * V[self._ph], minlength=self._nnz)
        out += np.bincount(self._slot_const, self._c_one + cj * self._c_cj, minlength=self._nnz)
        return out

    def jacobian(self, tt, y, yp, cj):
        """``∂F/∂y + cj ∂F/∂ẏ`` as a sparse CSC matrix."""
        J = self.sparsity.copy()
        J.data = self.jacobian_data(tt, y, yp, cj)
        return J

    def jacfn(self, tt, y, yp, res, cj, JJ):
        """scikit-sundae's sparse ``jacfn``: the Jacobian of :meth:`ida_residual` (work rows scaled)."""
        JJ[:] = self.jacobian_data(tt, y, yp, cj)
        JJ[self._work_entries] *= WORK_ROW_SCALE

    def ida_residual(self, tt, y, yp, res):
        """The residual handed to IDA: :meth:`residual` with the two work rows scaled by
        :data:`WORK_ROW_SCALE`. Scaling equations changes neither their solution nor IDA's Newton updates
        (its tests are on the variables); it keeps the dissipated power's row — dense: it involves every
        flow — from winning SuperLU's partial pivoting and filling the factors (SuperLU_MT ran out of memory
        on a 1,000-section ladder driven by a current source)."""
        self.residual(tt, y, yp, res)
        res[self.N - 2:] *= WORK_ROW_SCALE

    # ------------------------------------------------------------------ consistent start
    def consistent_start(self, t0, y0, yp0, tol=1e-12, max_iter=20):
        """Consistent ``(y, ẏ)`` at ``t0``: Newton with the sparse Jacobian for the algebraic ``y`` and the
        rates of the differential ones when that Jacobian is regular; otherwise (hidden constraints)
        :class:`HiddenConstraintsFound`."""
        alg = np.zeros(self.N, dtype=bool)
        alg[self.algebraic] = True
        y, yp = y0.copy(), yp0.copy()
        res = np.zeros(self.N)
        for it in range(max_iter):
            self.residual(t0, y, yp, res)
            J0 = self.jacobian(t0, y, yp, 0.0)
            Jz = sps.csc_matrix(sps.hstack([J0[:, alg], (self.jacobian(t0, y, yp, 1.0) - J0)[:, ~alg]]))
            lu = self._regular(Jz) if it == 0 else lu_next(Jz)
            if lu is None:
                raise HiddenConstraintsFound(t0)
            d = lu.solve(-res)
            y[alg] += d[:int(alg.sum())]
            yp[~alg] += d[int(alg.sum()):]
            if np.max(np.abs(d), initial=0.0) <= tol * (1.0 + np.max(np.abs(np.r_[y[alg], yp[~alg]]))):
                break
        self.residual(t0, y, yp, res)
        return y, yp

    def _regular(self, Jz):
        """A sparse LU of ``Jz`` when it is regular (rows and columns scaled to unit size), else None."""
        if structural_rank(Jz) < Jz.shape[0]:
            return None
        A = abs(Jz)
        rs = np.asarray(A.max(axis=1).todense()).ravel()
        rs[rs == 0] = 1.0
        S = sps.diags(1.0 / rs) @ Jz
        cs = np.asarray(abs(S).max(axis=0).todense()).ravel()
        cs[cs == 0] = 1.0
        S = sps.csc_matrix(S @ sps.diags(1.0 / cs))
        try:
            lu = splu(S)
        except RuntimeError:  # exactly singular
            return None
        op = LinearOperator(S.shape, matvec=lu.solve, rmatvec=lambda v: lu.solve(v, trans="T"), dtype=float)
        if S.shape[0] and onenormest(op) * abs(S).sum(axis=0).max() > _COND:
            return None
        return _Scaled(lu, rs, cs)

    # ------------------------------------------------------------------ flows and multipliers at the outputs
    def _build_output_system(self):
        """Rows (Lagrange, GGL, flow constraints) and columns (flows without inertia, multipliers) of the
        least-squares problem solved at the output times, as index maps into the raw Jacobian values."""
        asm, n, m1, m2 = self.asm, self.n, self.m1, self.m2
        nR = self.rest.size
        rest_pos = np.full(n, -1)
        rest_pos[self.rest] = np.arange(nR)
        r = asm.rows
        on_rows = (r < n) | ((r >= n + m1) & (r < n + 2 * m1 + m2))  # Lagrange, flow constraint and GGL rows
        orow = np.where(r < n, r, n + (r - n - m1))  # [Lagrange n, ψ m2, GGL m1]
        fcol = (asm.kinds == 1) & (rest_pos[asm.cols] >= 0)
        zcol = asm.kinds == 3
        sel = on_rows & (fcol | zcol)
        ocol = np.where(fcol, rest_pos[asm.cols], nR + asm.cols)
        self._o_sel, self._o_rows, self._o_cols = sel, orow[sel], ocol[sel]
        self._o_shape = (n + m2 + m1, nR + m1 + m2)
        weight = np.ones(n + m2 + m1)
        weight[self.inertial] = 1e-6  # as algebraic_at_output: accelerations come from derivatives
        self._ls = AugmentedLeastSquares(self._o_rows, self._o_cols, self._o_shape, weight)

    def algebraic_at(self, tt, q, f, a, z, iterations=2):
        """Flows without inertia and the multipliers from the Lagrange rows and the velocity-level constraints
        at fixed ``q`` and accelerations: :func:`~netdyn.numerics.ida.ida.algebraic_at_output` with the
        sparse Jacobian (weighted least squares through a regularised augmented system, SuperLU): a Newton
        step, then a chord step on the same factorisation unless the first moved the flows and the
        multipliers by less than 1e-5 of the largest of their kind (IDA's values are within its tolerance:
        the chord step's error is about the square of the first step's)."""
        n, m1, m2, asm, p = self.n, self.m1, self.m2, self.asm, self.p
        R, nR = self.rest, self.rest.size
        f, z = f.copy(), z.copy()
        u = p.inputs(tt)
        solver = None
        for _ in range(iterations):
            E, _, _ = asm.evaluate(tt, q, f, a, p.vector, u, z)
            r0 = np.concatenate([E[:n], E[n + m1:n + m1 + m2], E[n + m1 + m2:n + 2 * m1 + m2]])
            if solver is None:
                solver = self._ls.factor(asm.jacobian_values(tt, q, f, a, p.vector, u, z)[self._o_sel])
            dx = None if solver is None else solver(-r0)
            if dx is None:
                return algebraic_at_output(self.cm, p, tt, q, f, a, R)
            f[R] += dx[:nR]
            z += dx[nR:]
            if _small(dx[:nR], f[R]) and _small(dx[nR:], z):
                break  # Newton from IDA's values: a further step would change them by ~1e-10
        return f, z

    # ------------------------------------------------------------------ integration
    def integrate(self, t0, t1, q0, f0, t_eval, rtol, atol, progress=None):
        """As :meth:`IDA.integrate`; a Jacobian that is singular where the sparse LU needs it (a resistor
        ``D = i⁴`` at rest has no slope) or hidden constraints (V–C loops, I–L cut-sets) hand the piece to
        the dense :class:`IDA`: its least-squares start and finite differences cope with the first; it jumps
        the state onto hidden constraints and solves the outputs' rates from their derivatives (a capacitor
        across a source carries C·v′(t), not a differenced rate of its charge)."""
        try:
            return self._integrate(t0, t1, q0, f0, t_eval, rtol, atol, progress)
        except (RuntimeError, IntegrationError, np.linalg.LinAlgError, HiddenConstraintsFound):
            return IDA(self.cm, self.p, self.max_step).integrate(t0, t1, q0, f0, t_eval, rtol, atol, progress)

    def _integrate(self, t0, t1, q0, f0, t_eval, rtol, atol, progress=None):
        from sksundae.ida import IDA as SundialsIDA

        n, N, inertial, nI = self.n, self.N, self.inertial, self.inertial.size
        y0 = np.zeros(N)
        y0[:n], y0[n:n + nI] = q0, f0[inertial]
        yp0 = np.zeros(N)
        yp0[:n] = f0
        y0, yp0 = self.consistent_start(t0, y0, yp0)
        at = np.full(N, 1e-10)
        base = np.broadcast_to(split_atol(atol, n), (2 * n,))
        at[:n], at[n:n + nI] = base[:n], base[n + inertial]
        at[n + nI:N - 2] = 1e6  # multipliers and GGL terms out of the error test, solved exactly afterwards
        at[N - 2:] = work_atol(atol, n)  # joules: scaled to the run's energies by simulate's first pass
        te = ida_grid(t0, t1, t_eval)
        with warnings.catch_warnings():  # sksundae notes that jacfn replaces its own sparse differencing
            warnings.simplefilter("ignore", UserWarning)
            solver = SundialsIDA(self.ida_residual, rtol=rtol / 10, atol=at / 10, linsolver="sparse",
                                 sparsity=self.sparsity, jacfn=self.jacfn, calc_initcond=None,
                                 algebraic_idx=self.algebraic or None, max_num_steps=200000,
                                 max_step=0 if not np.isfinite(self.max_step) else self.max_step)
            out = run_ida(solver, te, y0, yp0, progress)
        T, Y, YP = out_at(out, t_eval, t0, t1)
        F = np.empty((n, T.size))
        ACC = np.zeros((n, T.size))
        Z = np.zeros((self.m1 + self.m2, T.size))
        for k, tt in enumerate(T):
            q, f, a, z, _, _ = self._unpack(tt, Y[:, k], YP[:, k])
            ACC[:, k] = a
            if self.m1 or self.m2:
                F[:, k], Z[:, k] = self.algebraic_at(tt, q, f, a, z)
            else:
                F[:, k] = self.flows_at(tt, q, f, a)
        return Trajectory(T, Y[:n].copy(), F, ACC, Z[:self.m1], Z[self.m1:], Y[N - 2].copy(), Y[N - 1].copy(),
                          nsteps=None, message=out.message, status=out.status)

    def flows_at(self, tt, q, f, a, iterations=4):
        """Flows without inertia solved from their own Lagrange rows at fixed q (Newton, sparse LU): a model
        without constraints."""
        rest = self.rest
        if not rest.size:
            return f
        p, f = self.p, f.copy()
        sel = self._o_sel
        for _ in range(iterations):
            u = p.inputs(tt)
            R = self.asm.residual(tt, q, f, a, p.vector, u)[rest]
            vals = self.asm.jacobian_values(tt, q, f, a, p.vector, u)[sel]
            Jf = sps.csc_matrix((vals, (self._o_rows, self._o_cols)), shape=self._o_shape)[rest]
            d = splu(sps.csc_matrix(Jf)).solve(-R)
            f[rest] += d
            if np.max(np.abs(d)) <= 1e-14 * (1.0 + np.max(np.abs(f[rest]))):
                break
        return f


class _Scaled:
    """The LU of ``diag(1/rs) J diag(1/cs)`` solving with ``J``."""

    def __init__(self, lu, rs, cs):
        self.lu, self.rs, self.cs = lu, rs, cs

    def solve(self, b):
        return self.lu.solve(b / self.rs) / self.cs


def lu_next(J):
    """A sparse LU of ``J`` (later Newton iterations: regularity was checked at the first), or None."""
    try:
        return splu(sps.csc_matrix(J))
    except RuntimeError:
        return None


def _small(d, x, rel=1e-5):
    """Whether the update ``d`` is below ``rel`` of the largest ``|x|``."""
    return not d.size or np.max(np.abs(d)) <= rel * np.max(np.abs(x))
