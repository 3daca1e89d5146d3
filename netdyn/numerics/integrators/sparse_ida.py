"""``SparseIDA``: IDA with an analytic sparse Jacobian and SuperLU, for constraint-free networks.

The same method and the same variables as :class:`~netdyn.numerics.integrators.ida.IDA`
(``y = [q, f_I, W_d, W_s]``: displacements, the flows with inertia, the work
integrals; the flows without inertia are ``q̇``), but the residual, its
Jacobian ``∂F/∂y + c_j ∂F/∂ẏ`` and the powers come from the element templates
of :class:`~netdyn.numerics.assembly.TermAssembly` — vectorised compiled code,
scattered with fixed index arrays — and IDA factorises the Jacobian with its
sparse direct solver (SuperLU_MT) instead of building a dense one by finite
differences. The consistent start and the flows recomputed at the output times
use the same sparse Jacobian (``scipy.sparse.linalg.splu``). Work per step
grows linearly with the number of elements.

Used for models without displacement or flow constraints (a circuit in loop
charges, a mechanical network in node coordinates); the others keep
:class:`~netdyn.numerics.integrators.ida.IDA`.

>>> import numpy as np
>>> from netdyn import LagrangianModel, coordinates, t
>>> from netdyn.numerics.compiled import compile_model
>>> x, = coordinates("x,")
>>> cm = compile_model(LagrangianModel([x], D=x.diff(t)**2/2, V=x**2/2))   # q̇ = -q
>>> tr = SparseIDA(cm, cm.parameter_vector()).integrate(0, 1, np.array([1.0]), np.array([-1.0]),
...                                                      np.array([0.5, 1.0]), 1e-10, 1e-12)
>>> bool(abs(tr.q[0, -1] - np.exp(-1)) < 1e-8)
True
"""
from __future__ import annotations

import warnings

import numpy as np
import scipy.sparse as sps
from scipy.sparse.linalg import splu

from netdyn.errors import IntegrationError
from netdyn.numerics.assembly import TermAssembly, supports
from netdyn.numerics.integrators.base import Integrator, split_atol, work_atol
from netdyn.numerics.integrators.ida import IDA, ida_grid, out_at, run_ida
from netdyn.numerics.trajectory import Trajectory


def assembly(cm):
    """The model's :class:`TermAssembly`, built once and kept with the compiled model."""
    asm = getattr(cm, "_term_assembly", None)
    if asm is None:
        asm = cm._term_assembly = TermAssembly(cm.model)
    return asm


def ida_for(cm, p, max_step=np.inf):
    """:class:`SparseIDA` when the model has no constraints, else the general :class:`IDA`."""
    return SparseIDA(cm, p, max_step) if supports(cm.model) else IDA(cm, p, max_step)


class SparseIDA(Integrator):
    """IDA on ``F(t, y, ẏ) = 0`` with the analytic sparse Jacobian of the element templates."""

    name = "ida"
    carries_work = True

    def __init__(self, cm, p, max_step=np.inf):
        if not supports(cm.model):
            raise IntegrationError("SparseIDA takes models without constraints; use IDA")
        self.cm, self.p, self.max_step = cm, p, max_step
        self.asm = asm = assembly(cm)
        n = self.n = cm.n
        self.inertial = asm.inertial
        self.rest = np.setdiff1d(np.arange(n), self.inertial)
        nI = self.inertial.size
        self.N = N = n + nI + 2
        pos = np.full(n, -1)
        pos[self.inertial] = n + np.arange(nI)
        # every Jacobian value lands at (row, col) with weight one + cj * with_cj
        k, j = asm.kinds, asm.cols
        col = np.where((k == 2) | ((k == 1) & (pos[j] >= 0)), pos[j], j)
        with_cj = ((k == 2) | ((k == 1) & (pos[j] < 0))).astype(float)
        # the work-integral rows: yp_W - P(q, f), P's derivatives mapped like the Lagrange rows'
        pk, pj = asm.power_kinds, asm.power_cols
        pcol = np.where((pk == 1) & (pos[pj] >= 0), pos[pj], pj)
        p_cj = ((pk == 1) & (pos[pj] < 0)).astype(float)
        rows = np.concatenate([asm.rows, N - 2 + asm.power_rows, n + np.arange(nI), n + np.arange(nI),
                               [N - 2, N - 1]])
        cols = np.concatenate([col, pcol, self.inertial, n + np.arange(nI), [N - 2, N - 1]])
        self._one = np.concatenate([1.0 - with_cj, 1.0 - p_cj, np.zeros(nI), np.ones(nI), [0.0, 0.0]])
        self._cj = np.concatenate([with_cj, p_cj, np.ones(nI), np.zeros(nI), [1.0, 1.0]])
        self._nvar = asm.rows.size + asm.power_rows.size
        self._const = np.concatenate([np.zeros(self._nvar), np.ones(nI), -np.ones(nI), [1.0, 1.0]])
        pattern = sps.csc_matrix((np.ones(rows.size), (rows, cols)), shape=(N, N))
        pattern.sum_duplicates()
        pattern.sort_indices()
        self.sparsity = pattern
        # position of each entry in the CSC data array
        lookup = sps.csc_matrix((np.arange(1, pattern.nnz + 1, dtype=float), pattern.indices, pattern.indptr),
                                shape=(N, N))
        self._slot = np.asarray(lookup[rows, cols]).ravel().astype(np.intp) - 1
        self._nnz = pattern.nnz
        # the flows-without-inertia block of ∂R/∂f (rows and columns of the coordinates without inertia)
        rest_pos = np.full(n, -1)
        rest_pos[self.rest] = np.arange(self.rest.size)
        sel = (k == 1) & (rest_pos[asm.rows] >= 0) & (rest_pos[j] >= 0)
        self._ff_sel = sel
        r = self.rest.size
        ff = sps.csc_matrix((np.ones(int(sel.sum())), (rest_pos[asm.rows[sel]], rest_pos[j[sel]])), shape=(r, r))
        ff.sum_duplicates()
        ff.sort_indices()
        self._ff = ff
        cols = np.repeat(np.arange(r), np.diff(ff.indptr))  # the column of each stored entry, in CSC order
        slot = {(int(a), int(b)): k for k, (a, b) in enumerate(zip(ff.indices, cols))}
        self._ff_slot = np.array([slot[(int(a), int(b))] for a, b in zip(rest_pos[asm.rows[sel]], rest_pos[j[sel]])],
                                 dtype=np.intp)

    # ------------------------------------------------------------------ F and its Jacobian
    def _state(self, y, yp):
        n, nI = self.n, self.inertial.size
        f = np.array(yp[:n], dtype=float)
        f[self.inertial] = y[n:n + nI]
        a = np.zeros(n)
        a[self.inertial] = yp[n:n + nI]
        return f, a

    def residual(self, tt, y, yp, res):
        n, nI, p = self.n, self.inertial.size, self.p
        f, a = self._state(y, yp)
        R, pd, ps = self.asm.evaluate(tt, y[:n], f, a, p.vector, p.inputs(tt))
        res[:n] = R
        res[n:n + nI] = yp[self.inertial] - y[n:n + nI]
        res[n + nI] = yp[n + nI] - pd
        res[n + nI + 1] = yp[n + nI + 1] - ps

    def jacobian_data(self, tt, y, yp, cj):
        """The CSC data of ``∂F/∂y + cj ∂F/∂ẏ`` on :attr:`sparsity`."""
        f, a = self._state(y, yp)
        u = self.p.inputs(tt)
        vals = np.concatenate([self.asm.jacobian_values(tt, y[:self.n], f, a, self.p.vector, u),
                               -self.asm.power_jacobian_values(tt, y[:self.n], f, self.p.vector, u),
                               self._const[self._nvar:]])
        return np.bincount(self._slot, vals * (self._one + cj * self._cj), minlength=self._nnz)

    def jacobian(self, tt, y, yp, cj):
        """``∂F/∂y + cj ∂F/∂ẏ`` as a sparse CSC matrix."""
        J = self.sparsity.copy()
        J.data = self.jacobian_data(tt, y, yp, cj)
        return J

    def jacfn(self, tt, y, yp, res, cj, JJ):
        JJ[:] = self.jacobian_data(tt, y, yp, cj)

    # ------------------------------------------------------------------ integration
    def consistent_start(self, t0, y0, yp0, tol=1e-12, max_iter=20):
        """Newton on ``F(t0, y0, ẏ) = 0`` for ẏ (every variable is differential here), sparse LU."""
        yp = yp0.copy()
        res = np.zeros(self.N)
        for _ in range(max_iter):
            self.residual(t0, y0, yp, res)
            Jp = self.jacobian(t0, y0, yp, 1.0) - self.jacobian(t0, y0, yp, 0.0)
            d = splu(sps.csc_matrix(Jp)).solve(-res)
            yp += d
            if np.max(np.abs(d)) <= tol * (1.0 + np.max(np.abs(yp))):
                break
        return yp

    def flows_at(self, tt, q, f, a, iterations=4):
        """Flows without inertia solved from their own Lagrange rows at fixed q (Newton, sparse LU)."""
        rest = self.rest
        if not rest.size:
            return f
        p, f = self.p, f.copy()
        Jf = self._ff.copy()
        for _ in range(iterations):
            u = p.inputs(tt)
            R = self.asm.residual(tt, q, f, a, p.vector, u)[rest]
            vals = self.asm.jacobian_values(tt, q, f, a, p.vector, u)[self._ff_sel]
            Jf.data = np.bincount(self._ff_slot, vals, minlength=Jf.nnz)
            d = splu(Jf).solve(-R)
            f[rest] += d
            if np.max(np.abs(d)) <= 1e-14 * (1.0 + np.max(np.abs(f[rest]))):
                break
        return f

    def integrate(self, t0, t1, q0, f0, t_eval, rtol, atol, progress=None):
        """As :meth:`IDA.integrate`; a Jacobian that is singular where the sparse LU needs it (a resistor
        ``D = i⁴`` at rest has no slope) hands the piece to the dense :class:`IDA`, whose least-squares
        start and finite differences cope with it."""
        try:
            return self._integrate(t0, t1, q0, f0, t_eval, rtol, atol, progress)
        except (RuntimeError, IntegrationError, np.linalg.LinAlgError):
            return IDA(self.cm, self.p, self.max_step).integrate(t0, t1, q0, f0, t_eval, rtol, atol, progress)

    def _integrate(self, t0, t1, q0, f0, t_eval, rtol, atol, progress=None):
        from sksundae.ida import IDA as SundialsIDA

        n, N, inertial, nI = self.n, self.N, self.inertial, self.inertial.size
        residual = self.residual
        y0 = np.zeros(N)
        y0[:n], y0[n:n + nI] = q0, f0[inertial]
        yp0 = np.zeros(N)
        yp0[:n] = f0
        yp0 = self.consistent_start(t0, y0, yp0)
        at = np.empty(N)
        base = np.broadcast_to(split_atol(atol, n), (2 * n,))
        at[:n], at[n:n + nI] = base[:n], base[n + inertial]
        at[N - 2:] = work_atol(atol, n)  # joules: scaled to the run's energies by simulate's first pass
        te = ida_grid(t0, t1, t_eval)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            solver = SundialsIDA(residual, rtol=rtol / 10, atol=at / 10, linsolver="sparse", sparsity=self.sparsity,
                                 jacfn=self.jacfn, calc_initcond=None, max_num_steps=200000,
                                 max_step=0 if not np.isfinite(self.max_step) else self.max_step)
        with warnings.catch_warnings():  # sksundae notes that jacfn replaces its own sparse differencing
            warnings.simplefilter("ignore", UserWarning)
            out = run_ida(solver, te, y0, yp0, progress)
        T, Y, YP = out_at(out, t_eval, t0, t1)
        F = np.empty((n, T.size))
        ACC = np.zeros((n, T.size))
        for k, tt in enumerate(T):
            f, a = self._state(Y[:, k], YP[:, k])
            F[:, k] = self.flows_at(tt, Y[:n, k], f, a)
            ACC[:, k] = a
        empty = np.zeros((0, T.size))
        return Trajectory(T, Y[:n].copy(), F, ACC, empty, empty, Y[N - 2].copy(), Y[N - 1].copy(), nsteps=None,
                          message=out.message, status=out.status)
