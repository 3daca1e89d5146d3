"""Index reduction of ``F(t, y, ẏ) = 0`` for IDA: hidden constraints of every level, then dummy derivatives.

IDA (BDF) integrates a DAE of index one robustly; on index two it needs a
consistent start and a well-conditioned iteration matrix, and deeper
structures are beyond it: an inductor alone in a cut-set, in node fluxes,
makes the inductor's current zero (a constraint on the fluxes, level one),
hence its two node voltages equal (a constraint on the differential voltages
of capacitive nodes, level two), hence their rates equal — IDA's Newton then
fails at ``t0`` whatever the start; and a fast finite mode beside a V–C loop
(3e-7 s among milliseconds, random circuit seed 2 in node fluxes) left the
index-two system crawling at steps of 1e-17 s.
:class:`ReducedIndex` reduces such a system to index one, for any residual
(nonlinear elements included: the structure is found at ``t0``, Newton does
the rest):

1. **the levels, square as Gear and Pantelides do**: a combination ``W`` of
   the current equations free of ``[y_A, ẏ_D]`` is a hidden constraint
   ``h(t, y_D) = W G``; one equation of each combination is *replaced* by the
   constraint's time derivative ``∂h/∂y_D ẏ_D + ∂h/∂t`` (as
   :func:`netdyn.numerics.dae.higherindex.reduce_index` does on the linear path),
   so the next level is sought in a square system — appending the derivative
   rows instead (:class:`~netdyn.numerics.dae.hidden.HiddenConstraints`) makes
   the system over-determined, and the rounding of one level's combinations
   then passed for constraints one level deeper that the solution violates;
2. **dummy derivatives** (Mattsson and Söderlind 1993): the original
   equations, every derivative row and ``m`` new unknowns — for each hidden
   constraint one differential ``y_S`` (chosen by a pivoted QR of the
   constraints' gradients, so ``∂h/∂y_S`` is regular) turns algebraic, its
   rate ``ẏ_S`` a new algebraic unknown ``d`` — give a square system of
   index one whose solutions satisfy every hidden constraint exactly (each is
   a combination of its rows): no drift, nothing projected.

The sources' time derivatives in the derivative rows are one-sided
differences into the segment (backward within a few steps of its end, so a
PULSE corner ahead is never crossed).

>>> import numpy as np
>>> # x' = v, v' = a, 0 = x − sin t: x, v differential; a algebraic — index three (a is v'' of x)
>>> def F(t, y, yp, res):
...     res[0] = yp[0] - y[1]
...     res[1] = yp[1] - y[2]
...     res[2] = y[0] - np.sin(t)
>>> r = ReducedIndex(F, 0.0, np.zeros(3), np.zeros(3), [2], span=1.0)
>>> [W.shape[0] for W in r.levels], r.dummy.tolist()      # x fixed, then v: both become algebraic
([1, 1], [0, 1])
>>> y, yp = r.start(np.zeros(3), np.zeros(3), impulses=True)
>>> (np.round(y, 6) + 0.0).tolist()                        # x = 0, v = cos 0 = 1, a = −sin 0 = 0
[0.0, 1.0, 0.0]
"""
from __future__ import annotations

import numpy as np
import scipy.linalg as sla

from netdyn.numerics.dae.hidden import HiddenConstraints, _fd_jacobian, _unit, hidden_combinations

__all__ = ["ReducedIndex"]


class ReducedIndex(HiddenConstraints):
    """Hidden constraints of every level (square search) and the index-one system of dummy derivatives.

    Arguments as :class:`~netdyn.numerics.dae.hidden.HiddenConstraints`
    (``max_levels`` defaults to 4 here). After construction ``levels`` holds
    one ``W`` per level (over the rows of the stacked system known at that
    level), ``replaced`` the stacked rows each level exchanged for its
    derivative rows, ``dummy`` the indices of ``y`` whose rates became dummy
    unknowns. :meth:`residual_reduced` is the index-one residual of
    ``Y = [y, d]`` (``N + m`` unknowns), :attr:`algebraic_reduced` its
    algebraic indices, :meth:`extend` and :meth:`restrict` convert between
    ``(y, ẏ)`` and ``(Y, Ẏ)``.

    >>> import numpy as np
    >>> def F(t, y, yp, res):          # a capacitor across a source, x' = −x − m, 0 = x − 2: index two
    ...     res[0] = yp[0] + y[0] + y[1]
    ...     res[1] = y[0] - 2.0
    >>> r = ReducedIndex(F, 0.0, np.zeros(2), np.zeros(2), [1], span=1.0)
    >>> Y, YP = r.extend(*r.start(np.array([2.0, 0.0]), np.zeros(2)))
    >>> res = np.zeros(3); r.residual_reduced(0.0, Y, YP, res); bool(np.max(np.abs(res)) < 1e-12)
    True
    """

    def __init__(self, residual, t0, y, yp, algebraic, span=None, max_levels=4, rcond=1e-9, deep_rcond=1e-13):
        super().__init__(residual, t0, y, yp, algebraic, span=span, max_levels=0, rcond=rcond)
        z, yd = self._split(self._y, self._yp)
        active = np.ones(self.N, dtype=bool)   # stacked rows not yet replaced by a derivative
        self.replaced = []
        self.margin = 0.0   # smallest scaled singular value of the square system left (1: none; 0: not reached)
        for _ in range(max_levels):
            Jz, Jd = self.jacobians(self.t0, z, yd, rel=None)
            rows = np.flatnonzero(active)
            tol = deep_rcond if self.levels else rcond
            Wa = _echelon(hidden_combinations(Jz[rows], Jd[rows], tol), _unit(np.hstack([Jz, Jd])[rows], 1))
            if not Wa.shape[0]:
                self.margin = _smallest(Jz[rows], Jd[rows])
                break
            W = np.zeros((Wa.shape[0], Jz.shape[0]))
            W[:, rows] = Wa
            gone = rows[_pivots(Wa * _unit(np.hstack([Jz, Jd])[rows], 1)[None, :])]
            active[gone] = False
            self.replaced.append(gone)
            self.levels.append(W)
            self._differentiate(W, Jd)
            active = np.concatenate([active, np.ones(W.shape[0], dtype=bool)])
        self._J = self.jacobians(self.t0, z, yd, rel=1e-4)
        self.m = sum(W.shape[0] for W in self.levels)
        diff = np.flatnonzero(~self.alg)
        if self.m:   # y_S: [∂(stacked)/∂z, ∂(stacked)/∂y_S] best conditioned, rows and columns scaled to unit size
            Jz, Jd = self._J
            rs = _unit(np.hstack([Jz, Jd]), 1)
            Zs, Ds = Jz / rs[:, None], Jd / rs[:, None]
            Zs, Ds = Zs / _unit(Zs, 0)[None, :], Ds / _unit(Ds, 0)[None, :]
            U = np.linalg.svd(Zs)[0]
            self.dummy = diff[_pivots(U[:, U.shape[0] - self.m:].T @ Ds)]
        else:
            self.dummy = np.zeros(0, dtype=int)
        self.algebraic_reduced = sorted(np.flatnonzero(self.alg).tolist() + self.dummy.tolist()
                                        + list(range(self.N, self.N + self.m)))

    def _time_derivatives(self, tt, z, yd, order, base):
        """As :meth:`HiddenConstraints._time_derivatives`, the derivatives (not ``F`` itself) kept while ``tt``
        stays: IDA's Newton iterations and difference Jacobian vary ``(z, y_D)`` at one time, and where the
        sources enter additively (circuits: sources as efforts and as flow constraints' terms) ``∂ᵐF/∂tᵐ`` does
        not depend on them — one evaluation of ``F`` per residual instead of ``1 + Σ (m + 1)``. A time
        dependence that is not additive is taken at the first ``(z, y_D)`` of each time (first order in it)."""
        key = (float(tt), order)
        if getattr(self, "_tkey", None) != key:
            self._tkey, self._tval = key, super()._time_derivatives(tt, z, yd, order, base)[1:]
        return [base] + self._tval

    def jacobians(self, tt, z, yd, rel=1e-6):
        """As :meth:`HiddenConstraints.jacobians`; with ``rel = None`` every entry that is the same at steps
        ``1e-4`` and ``1e-1`` (a linear dependence) taken at the larger: its rounding is then ``1e-16`` of the
        residual's terms, not ``1e-12`` — below which a fast finite mode (a time constant of 3e-7 s among
        milliseconds, random circuit seed 2) and a hidden constraint (an exact zero) cannot be told apart."""
        if rel is not None:
            return super().jacobians(tt, z, yd, rel)
        Jz1, Jd1 = super().jacobians(tt, z, yd, 1e-4)
        Jz2, Jd2 = super().jacobians(tt, z, yd, 1e-1)
        return _linear_part(Jz1, Jz2), _linear_part(Jd1, Jd2)

    def _jump_rows(self):
        """Every stacked row: the rates and algebraic variables at which the violations are measured are then
        determined (a least-squares compromise while the state is off its constraints). Without the deepest
        level's derivative rows a direction of them is free — an acceleration of 1e5 along it times the rounding
        of a combination (1e-12) made a violation of 1e-6 out of none (random circuit seed 2, node fluxes)."""
        return self.rows if len(self.levels) > 1 else super()._jump_rows()

    def _jump(self, z, yd, impulsive, max_iter=4):
        """Index two: :meth:`HiddenConstraints._jump`. Deeper: the jump of the linear path
        (:func:`~netdyn.numerics.dae.higherindex.impulse_consistent`) on the pencil ``(∂F/∂ẏ, −∂F/∂y)`` at ``t0``
        and the constraints linearized there (Newton for nonlinear ones) — by impulses of the algebraic
        variables where they reach, else keeping the slow (finite-mode) part of ``E y``, as the Weierstrass
        form says of impulses of any order: a constraint on capacitive node voltages two levels deep is
        reached by an impulse of current through a capacitor, whose voltage then jumps (random circuit seed 2)."""
        if len(self.levels) < 2:
            return super()._jump(z, yd, impulsive, max_iter)
        import scipy.sparse as sps

        from netdyn.numerics.dae.higherindex import Reduced, impulse_consistent
        t0, alg, N = self.t0, self.alg, self.N
        y0 = np.where(alg, z, 0.0)
        y0[~alg] = yd
        yp0 = np.where(alg, 0.0, z)
        res = np.zeros(N)

        def F(y, yp):
            self.residual(t0, y, yp, res)
            return res.copy()
        r0 = F(y0, yp0)
        E = sps.csr_array(_fd_jacobian(lambda v: F(y0, v), yp0, r0, 1e-4))
        J = sps.csr_array(-_fd_jacobian(lambda v: F(v, yp0), y0, r0, 1e-4))
        Jz = self._J[0]
        for _ in range(max_iter):
            for _ in range(2):
                z = z - np.linalg.lstsq(Jz, self.value(t0, z, yd), rcond=None)[0]
            h, g = self.constraints(self.value(t0, z, yd), self.jd(t0, z, yd))
            if np.max(np.abs(h)) <= 1e-13 * (1.0 + np.max(np.abs(g) @ np.abs(yd))):
                break
            C = np.zeros((h.size, N))
            C[:, ~alg] = g
            y = np.where(alg, z, 0.0)
            y[~alg] = yd
            red = Reduced(E, J, np.zeros((N, 1)), C, (h - g @ yd)[:, None])
            yd = impulse_consistent(E, J, red, y, np.ones(1), np.flatnonzero(impulsive))[~alg]
        return yd

    # ----------------------------------------------------------------- the index-one system
    def extend(self, y, yp):
        """``(Y, Ẏ)`` of the reduced system from ``(y, ẏ)``: the dummies ``d = ẏ_S`` appended."""
        y, yp = np.asarray(y, dtype=float), np.asarray(yp, dtype=float)
        return np.concatenate([y, yp[self.dummy]]), np.concatenate([yp, np.zeros(self.m)])

    def restrict(self, Y, YP):
        """``(y, ẏ)`` from the reduced system's ``(Y, Ẏ)`` (the rates of ``y_S`` are the dummies)."""
        y, yp = np.array(Y[:self.N], dtype=float), np.array(YP[:self.N], dtype=float)
        yp[self.dummy] = Y[self.N:]
        return y, yp

    def start_reduced(self, y, yp, impulses=None, tol=1e-12, max_iter=10):
        """Consistent ``(Y, Ẏ)`` of the index-one system at ``t0``: :meth:`start` (the impulse-consistent jump
        onto every hidden constraint), then Newton on :meth:`residual_reduced` for its algebraic unknowns and
        the rates of the rest (a square, regular system), which removes what the jump's least squares left."""
        Y, YP = self.extend(*self.start(y, yp, impulses=impulses))
        alg = np.zeros(Y.size, dtype=bool)
        alg[self.algebraic_reduced] = True
        res = np.zeros(Y.size)

        def value(u):
            Yu, YPu = np.where(alg, u, Y), np.where(alg, YP, u)
            self.residual_reduced(self.t0, Yu, YPu, res)
            return res.copy()
        u = np.where(alg, Y, YP)
        r = value(u)
        J = None
        for _ in range(max_iter):
            if J is None:
                J = _fd_jacobian(value, u, r, 1e-6)
            du = -np.linalg.lstsq(J, r, rcond=None)[0]
            u = u + du
            r = value(u)
            if np.max(np.abs(du)) <= tol * (1.0 + np.max(np.abs(u))):
                break
        return np.where(alg, u, Y), np.where(alg, YP, u)

    def residual_reduced(self, tt, Y, YP, res):
        """The index-one residual: ``F`` and every level's derivative rows at ``Y = [y, d]``."""
        y, yp = self.restrict(Y, YP)
        z, yd = self._split(y, yp)
        res[:] = self.value(tt, z, yd)


def _smallest(Jz, Jd):
    """The smallest singular value of ``Jz`` scaled as :func:`~netdyn.numerics.dae.hidden.hidden_combinations`
    scales it, relative to the largest: how close the system is to one more level of hidden constraints."""
    rs = _unit(np.hstack([Jz, Jd]), 1)
    Js = Jz / rs[:, None]
    Js = Js / _unit(Js, 0)[None, :]
    s = np.linalg.svd(Js, compute_uv=False)
    return float(s[-1] / s[0]) if s.size and s[0] > 0 else 1.0


def _linear_part(J1, J2, agree=1e-6):
    """``J2`` (large steps) where it agrees with ``J1`` (small steps) to ``agree`` of the row's size, else ``J1``."""
    size = np.max(np.abs(J1), axis=1, keepdims=True, initial=0.0)
    return np.where(np.abs(J2 - J1) <= agree * size, J2, J1)


def _pivots(M):
    """The columns a pivoted QR of ``M`` (k × n, k ≤ n) takes first: ``k`` of them with ``M[:, cols]`` regular."""
    _, _, piv = sla.qr(M, pivoting=True, mode="economic")
    return np.sort(piv[:M.shape[0]])


def _echelon(W, rs):
    """``W`` with the rounding of its left-null-space basis removed: entries below ``1e-12`` of a row's
    largest (in rows scaled to unit size, ``rs``) set to zero after a change of basis to reduced echelon form,
    so a combination of a few equations (one loop, one cut-set) stays exactly that."""
    if not W.shape[0]:
        return W
    Ws = W * rs[None, :]
    cols = _pivots(Ws)
    Ws = np.linalg.solve(Ws[:, cols], Ws)
    Ws[np.abs(Ws) < 1e-12 * np.max(np.abs(Ws), axis=1, keepdims=True)] = 0.0
    return Ws / rs[None, :]
