"""Consistent starts and rates for IDA when the DAE ``F(t, y, ẏ) = 0`` hides constraints (index two and up).

A loop of voltage sources and capacitors, a cut-set of current sources and
inductors, parallel capacitors or series inductors make some combination
``w`` of the residuals free of every rate and every algebraic unknown
(``wᵀ ∂F/∂ẏ_D = 0``, ``wᵀ ∂F/∂y_A = 0``): a *hidden constraint*
``wᵀF(t, y_D) = 0`` on the differential variables — the capacitor voltages
around the loop add up to the sources'. Its time derivative
``wᵀ(∂F/∂y_D ẏ_D + ∂F/∂t) = 0`` joins the equations; if the enlarged system
again has such a combination (an inductor alone in a cut-set in node fluxes:
its current is zero, then its two node voltages are equal), that is a hidden
constraint one level deeper, differentiated in turn, until none is new — the
numerical counterpart of Pantelides' algorithm and of
:func:`netdyn.numerics.dae.higherindex.reduce_index` on the linear path
(``max_levels``; the default searches one level: on random circuits in node
fluxes the numerical search also returned deeper combinations that the exact
solution violates, see :class:`HiddenConstraints`). IDA
integrates such a system (the multipliers are out of its error test) once it
starts on every constraint with the rates that keep it there.
:class:`HiddenConstraints`

1. finds the hidden combinations level by level from finite-difference
   Jacobians (rows and columns scaled to unit size, so farads beside ohms do
   not matter), the sources' time derivatives by one-sided differences into
   the segment (a segment starts at a source's corner: right limits there, as
   on the linear path);
2. where the state given violates them (a source that is not zero at t0
   across an uncharged capacitor), moves it as the circuit itself does: only
   through impulses of the algebraic variables, ``∂F/∂ẏ_D Δy_D + ∂F/∂y_A Λ = 0``,
   so charge is conserved at every node and flux in every loop (the same rule
   as :func:`netdyn.numerics.dae.higherindex.impulse_consistent` on the linear path);
3. solves ``F = 0`` together with the constraints' time derivatives for the
   algebraic variables and the rates — at t0, and again at every output time
   (:meth:`HiddenConstraints.rates`), so a capacitor's current across a
   supply is ``C v'(t)``, not IDA's differenced rate of its charge.

>>> import numpy as np
>>> # y = [x, m]: x' = -x - m (a capacitor), 0 = x - 2 (a source across it, m its current): hidden x = 2
>>> def F(t, y, yp, res):
...     res[0] = yp[0] + y[0] + y[1]
...     res[1] = y[0] - 2.0
>>> y, yp = consistent_start(F, 0.0, np.zeros(2), np.zeros(2), [1], impulses=True)
>>> y.round(9).tolist(), (yp.round(9) + 0.0).tolist()    # x jumps to 2 and stays: m = -x
([2.0, -2.0], [0.0, 0.0])
"""
from __future__ import annotations

import math

import numpy as np
import scipy.linalg as sla

__all__ = ["HiddenConstraints", "consistent_start", "hidden_combinations"]

#: one-sided difference steps of the m-th time derivative, as fractions of the segment's length
TIME_STEPS = {1: 1e-7, 2: 1e-4, 3: 1e-3, 4: 3e-3}


def _fd_jacobian(fun, z, r0, rel=1e-6):
    """Central differences: exact for the quadratic power rows, so a zero column stays zero to rounding
    (forward differences leave ``h``-sized entries that hide a hidden constraint). The search for hidden
    constraints takes ``rel = 1e-4`` (rounding far below the rank decision); Newton steps ``1e-6``."""
    J = np.empty((r0.size, z.size))
    for j in range(z.size):
        h = rel * (1.0 + abs(z[j]))
        zp, zm = z.copy(), z.copy()
        zp[j] += h
        zm[j] -= h
        J[:, j] = (fun(zp) - fun(zm)) / (2.0 * h)
    return J


def _unit(M, axis):
    s = np.max(np.abs(M), axis=axis, initial=0.0)
    s[s == 0] = 1.0
    return s


def forward_weights(m, h):
    """Weights of ``f(t + i h)``, ``i = 0 … m + 1``, for the m-th derivative at ``t`` (second order).

    >>> (forward_weights(1, 1.0) * 2).tolist()
    [-3.0, 4.0, -1.0]
    """
    k = m + 2
    i = np.arange(k, dtype=float)
    A = np.vander(i, k, increasing=True).T / np.array([math.factorial(p) for p in range(k)], dtype=float)[:, None]
    e = np.zeros(k)
    e[m] = 1.0
    return np.linalg.solve(A, e) / h ** m


def hidden_combinations(Jz, Jd, rcond=1e-9):
    """Rows ``W`` with ``W Jz = 0`` whose constraint ``W F`` involves the differential variables (``W Jd ≠ 0``).

    ``Jz`` is ``∂F/∂[y_A, ẏ_D]`` (what a consistent start solves for), ``Jd`` is ``∂F/∂y_D``.

    >>> W = hidden_combinations(np.array([[1.0], [0.0]]), np.array([[1.0], [3.0]]))
    >>> (W / np.abs(W).max()).round(12).tolist()    # the second equation alone (scaled to unit rows)
    [[0.0, 1.0]]
    """
    rs = _unit(np.hstack([Jz, Jd]), 1)
    Js = Jz / rs[:, None]
    Js = Js / _unit(Js, 0)[None, :]
    U, s, _ = np.linalg.svd(Js)
    rank = int(np.sum(s > rcond * max(s[0] if s.size else 0.0, 1e-300)))
    W = U[:, rank:].T
    if W.size:  # keep combinations that constrain something (a row of zeros everywhere fixes nothing)
        Wd = W @ (Jd / rs[:, None])
        keep = sla.orth(Wd, rcond=rcond) if np.any(Wd) else np.zeros((Wd.shape[0], 0))
        W = keep.T @ W
    return W / rs[None, :]


class HiddenConstraints:
    """The hidden constraints of ``F(t, y, ẏ) = 0`` found at ``t0``, every level, and the solves they need.

    ``residual(t, y, yp, res)`` is IDA's residual, ``algebraic`` the indices of
    the algebraic ``y``; ``span`` the length of the segment ahead (it sets the
    steps of the sources' time derivatives; default ``0.01 max(1, |t0|)``).
    The structure (which combinations, the derivative rows) is taken as fixed
    over the segment — exact for circuits of linear elements, whose Jacobians
    are constant; a nonlinear element is handled by Newton at every solve.

    ``levels`` holds one matrix ``W`` per level: its rows combine the
    equations known at that level (``F``, then the derivative rows of the
    levels before) into a constraint on ``y_D`` alone. ``max_levels`` bounds
    the search; it is 1 by default because beyond the first level the
    numerical rank decisions are not yet reliable: on random circuits in node
    fluxes (seeds 2 and 5 of ``tests/test_random_circuits.py``) the second
    level held on the linear path's exact solution to 1e-12, but the third and
    fourth did not (violated by 1e-2 to 1 of their terms), and IDA failed to
    start from a state forced onto them.

    >>> def F(t, y, yp, res):          # x' = v, 0 = x − t² (x prescribed): v hidden one level deeper
    ...     res[0] = yp[0] - y[1]
    ...     res[1] = y[0] - t**2
    ...     res[2] = yp[1] - y[2]     # a = v' with a algebraic
    >>> h = HiddenConstraints(F, 1.0, np.zeros(3), np.zeros(3), [2], span=1.0, max_levels=4)
    >>> len(h.levels)
    2
    >>> y, yp = h.start(np.array([1.0, 0.0, 0.0]), np.zeros(3), impulses=True)
    >>> y.round(6).tolist()            # x = 1 held; v jumps to 2t = 2 (an impulse of a); a = 2
    [1.0, 2.0, 2.0]
    """

    def __init__(self, residual, t0, y, yp, algebraic, span=None, max_levels=1, rcond=1e-9):
        self.residual, self.t0 = residual, float(t0)
        self.N = N = y.size
        self.alg = np.zeros(N, dtype=bool)
        self.alg[list(algebraic)] = True
        self.span = float(span) if span else 1e-2 * max(1.0, abs(self.t0))
        self._y, self._yp, self._res = np.array(y, dtype=float), np.array(yp, dtype=float), np.zeros(N)
        self.levels, self.blocks = [], []   # W per level; derivative rows (H, {m: B_m}) per level
        z, yd = self._split(self._y, self._yp)
        grads = np.zeros((0, yd.size))
        self._J = None   # the stacked Jacobians at t0 once every level is found
        for _ in range(max_levels):
            Jz, Jd = self.jacobians(self.t0, z, yd, rel=1e-4)
            W = self._new(hidden_combinations(Jz, Jd, rcond), Jd, grads)
            if not W.shape[0]:
                self._J = (Jz, Jd)
                break
            self.levels.append(W)
            grads = np.vstack([grads, W @ Jd])
            self._differentiate(W, Jd)
        self._pinv = None   # the stacked Jacobian's pseudo-inverse, kept across solves while it serves

    # ----------------------------------------------------------------- the stacked equations
    def _split(self, y, yp):
        return np.where(self.alg, y, yp), y[~self.alg].copy()

    def F(self, tt, z, yd):
        """``F`` with ``y_A, ẏ_D = z`` and ``y_D = yd``."""
        y, yp, alg = self._y, self._yp, self.alg
        y[alg], yp[~alg], y[~alg] = z[alg], z[~alg], yd
        self.residual(tt, y, yp, self._res)
        return self._res.copy()

    @property
    def rows(self):
        """Rows of the stacked system: ``F``, then each level's derivative rows."""
        return self.N + sum(W.shape[0] for W in self.levels)

    def _time_derivatives(self, tt, z, yd, order, base):
        out = [base]
        for m in range(1, order + 1):
            h = self.span * TIME_STEPS[m]
            if tt + (m + 1) * h > self.t0 + self.span * (1.0 + 1e-9):  # backward at the segment's end (a corner)
                h = -h
            w = forward_weights(m, h)
            acc = w[0] * base
            for i in range(1, w.size):
                acc = acc + w[i] * self.F(tt + i * h, z, yd)
            out.append(acc)
        return out

    def value(self, tt, z, yd):
        """The stacked residual ``[F; D_1; D_2; …]`` at ``(tt, z, yd)``."""
        base = self.F(tt, z, yd)
        if not self.blocks:
            return base
        order = max(max(B) for _, B in self.blocks)
        Ft = self._time_derivatives(tt, z, yd, order, base)
        zd = z[~self.alg]
        return np.concatenate([base] + [H @ zd + sum(Bm @ Ft[m] for m, Bm in B.items()) for H, B in self.blocks])

    def jacobians(self, tt, z, yd, rel=1e-6):
        """``∂/∂z`` and ``∂/∂y_D`` of the stacked residual (the derivative rows: their rate terms only)."""
        r = self.F(tt, z, yd)
        Jz = _fd_jacobian(lambda v: self.F(tt, v, yd), z, r, rel)
        Jd = self.jd(tt, z, yd, rel)
        if self.blocks:
            extra = []
            for H, _ in self.blocks:
                E = np.zeros((H.shape[0], self.N))
                E[:, ~self.alg] = H
                extra.append(E)
            Jz = np.vstack([Jz] + extra)
        return Jz, Jd

    def jd(self, tt, z, yd, rel=1e-6):
        """``∂/∂y_D`` of the stacked residual (zero in the derivative rows: their ``y_D`` terms are constant)."""
        r = self.F(tt, z, yd)
        Jd = _fd_jacobian(lambda d: self.F(tt, z, d), yd, r, rel)
        return np.vstack([Jd, np.zeros((self.rows - self.N, Jd.shape[1]))])

    def _new(self, W, Jd, grads, rcond=1e-7):
        """The combinations of ``W`` whose constraints are independent of those already found."""
        if not W.shape[0] or not grads.shape[0]:   # the first level: all of them (rank decided already)
            return W
        cs = _unit(Jd, 0)
        Wd = (W @ Jd) / cs[None, :]
        size = np.max(np.abs(Wd), initial=0.0)
        if grads.shape[0]:
            Q = sla.orth((grads / cs[None, :]).T)
            Wd = Wd - (Wd @ Q) @ Q.T
        if size == 0.0:
            return W[:0]
        U, s, _ = np.linalg.svd(Wd, full_matrices=False)
        k = int(np.sum(s > rcond * size))
        return U[:, :k].T @ W

    def _differentiate(self, W, Jd):
        """The time derivative of the level's constraints ``W G``: ``W ∂G/∂y_D ẏ_D + W ∂G/∂t``."""
        H = W @ Jd
        B = {1: W[:, :self.N]}
        off = self.N
        for Hj, Bj in self.blocks:
            Wj = W[:, off:off + Hj.shape[0]]
            off += Hj.shape[0]
            for m, Bm in Bj.items():
                B[m + 1] = B.get(m + 1, 0.0) + Wj @ Bm
        self.blocks.append((H, B))

    def constraints(self, r, Jd):
        """Values and gradients of every level's hidden constraints from the stacked ``r`` and ``Jd``."""
        h, g = [], []
        for W in self.levels:
            k = W.shape[1]
            h.append(W @ r[:k])
            g.append(W @ Jd[:k])
        return np.concatenate(h), np.vstack(g)

    # ----------------------------------------------------------------- solves
    def start(self, y, yp, impulses=None, tol=1e-11, max_iter=12):
        """Consistent ``(y, ẏ)`` at ``t0`` (see :func:`consistent_start`)."""
        z, yd = self._split(np.asarray(y, dtype=float), np.asarray(yp, dtype=float))
        if self.levels and impulses is not None:
            yd = self._jump(z, yd, impulsive=self.alg if impulses else np.zeros_like(self.alg))
        return self._solve(self.t0, z, yd, tol, max_iter)

    def no_worse(self, tt, y, yp, y_new, yp_new, factor=1e3):
        """Whether ``(y_new, ẏ_new)`` from :meth:`rates` satisfies ``F = 0`` about as well as the integrator's
        own ``(y, ẏ)``. A combination found at the start that is no constraint of the solution (a current
        ladder of resistors ``D = i⁴`` in branch charges) makes the stacked system inconsistent and its
        solution a least-squares compromise that breaks ``F`` (a current source's own flow off by 15 %)."""
        r0, r1 = np.zeros(self.N), np.zeros(self.N)
        self.residual(tt, np.asarray(y, dtype=float), np.asarray(yp, dtype=float), r0)
        self.residual(tt, np.asarray(y_new, dtype=float), np.asarray(yp_new, dtype=float), r1)
        return bool(np.max(np.abs(r1)) <= factor * np.max(np.abs(r0)))

    def rates(self, tt, y, yp, tol=1e-11, max_iter=8):
        """``(y, ẏ)`` at ``tt`` with ``y_D`` held: the algebraic ``y`` and every rate solved from ``F = 0`` and
        the hidden constraints' derivatives (right limits at a source's corner)."""
        z, yd = self._split(np.asarray(y, dtype=float), np.asarray(yp, dtype=float))
        return self._solve(tt, z, yd, tol, max_iter)

    def _solve(self, tt, z, yd, tol, max_iter):
        """Newton on the stacked residual for ``z``, its Jacobian kept from solve to solve while the steps
        contract (circuits of linear elements: one Jacobian per run — only the work integrals' rates, quadratic
        in the flows, lag a step behind), recomputed where they do not (a diode)."""
        r = self.value(tt, z, yd)
        fresh, last = False, np.inf
        for _ in range(max_iter):
            if not np.any(r):
                break
            if self._pinv is None:
                J = self._J[0] if self._J is not None and tt == self.t0 else self.jacobians(tt, z, yd)[0]
                self._pinv, fresh = np.linalg.pinv(J, rcond=1e-13), True
            dz = -(self._pinv @ r)
            step, scale = np.max(np.abs(dz)), 1.0 + np.max(np.abs(z))
            if step > 0.5 * last and step > 1e-9 * scale and not fresh:
                self._pinv = None   # a stale Jacobian: recompute it here
                continue
            z = z + dz
            if step <= tol * scale or (step > 0.5 * last and step <= 1e-9 * scale):   # converged, or rounding
                break
            last = step
            r = self.value(tt, z, yd)
        self.F(tt, z, yd)
        return self._y.copy(), self._yp.copy()

    def _jump_rows(self):
        """How many stacked rows :meth:`_jump` solves for the algebraic variables and rates: the equations the
        constraints combine (F, and the derivative rows of all but the deepest level) — the deepest level's own
        derivative rows are inconsistent until the jump is made."""
        return max(W.shape[1] for W in self.levels)

    def _jump(self, z, yd, impulsive, max_iter=6):
        """``y_D + Δ`` on the hidden constraints of every level, ``Δ`` reachable by impulses of the
        (``impulsive``) algebraic variables.

        The violation is measured where the algebraic variables and rates solve the rest of the stacked
        equations (a least-squares step first): ``W`` is a numerical left null space, so at an unsolved ``z``
        its rounding times the residual's volts would hide a violation of 1e-10 of the sources — and IDA,
        whose error test on charges runs at 1e-17 C after the first pass's scaling, cannot start off the
        constraint by that much (random circuit seed 0: a source's 3 V across a 0.3 µF capacitor met to 3e-10 V).
        """
        t0, alg = self.t0, self.alg
        Jz, Jd0 = self._J if self._J is not None else self.jacobians(t0, z, yd, rel=1e-4)
        # F's columns: algebraic y (impulses Λ) and the rates of the differential y (a jump Δ gives ẏ_D ∋ Δ δ(t))
        Ja, Jp = Jz[:self.N, impulsive], Jz[:self.N, ~alg]
        n_imp = Ja.shape[1]
        # the size of the constraints' terms: a violation at rounding level of them is not a jump
        terms = max(np.max(np.abs(Jd0) @ np.abs(yd), initial=0.0),
                    np.max(np.abs(self.value(t0, z, np.zeros_like(yd))[:self.N]), initial=0.0))
        size = np.concatenate([np.max(np.abs(W), axis=1, initial=0.0) for W in self.levels]) * terms
        k = self._jump_rows()
        Jz = Jz[:k]
        for _ in range(max_iter):
            r = self.value(t0, z, yd)[:k]
            z = z - np.linalg.lstsq(Jz, r, rcond=None)[0]   # the solvable part to zero (Gauss-Newton)
            r = self.value(t0, z, yd)[:k]
            h, g = self.constraints(r, self.jd(t0, z, yd))
            if np.all(np.abs(h) <= 1e-13 * size):
                break
            K = np.block([[Jp, Ja], [g, np.zeros((g.shape[0], n_imp))]])
            rhs = np.concatenate([np.zeros(Jp.shape[0]), -h])
            sol = np.linalg.lstsq(K, rhs, rcond=None)[0]
            yd = yd + sol[:yd.size]
            if np.all(np.abs(sol[:yd.size]) <= 1e-15 * np.abs(yd)):   # converged to rounding
                break
        return yd


def consistent_start(residual, t0, y0, yp0, algebraic, tol=1e-11, max_iter=12, impulses=None, span=None,
                     max_levels=1):
    """Consistent ``(y, ẏ)`` at ``t0``: algebraic ``y`` and every rate solved, differential ``y`` held
    except for the impulse-consistent jump onto hidden constraints (see the module doc).

    Newton with finite-difference Jacobians (the unknowns enter linearly in most models, so one or two
    iterations suffice). ``impulses``: ``None`` makes no jump (the state is held); ``True`` lets every
    algebraic variable carry an impulse (multipliers that are currents: node fluxes); ``False`` none (they
    are voltages: node potentials of branch charges — charge then moves only where no rate resists it).
    ``span``: the length of the segment ahead, ``max_levels`` how deep to search (see :class:`HiddenConstraints`).
    """
    hidden = HiddenConstraints(residual, t0, y0, yp0, algebraic, span=span, max_levels=max_levels)
    return hidden.start(y0, yp0, impulses=impulses, tol=tol, max_iter=max_iter)
