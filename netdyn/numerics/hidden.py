"""Consistent starts for IDA when the DAE ``F(t, y, ẏ) = 0`` hides constraints (index two).

A loop of voltage sources and capacitors, a cut-set of current sources and
inductors, parallel capacitors or series inductors make some combination
``w`` of the residuals free of every rate and every algebraic unknown
(``wᵀ ∂F/∂ẏ_D = 0``, ``wᵀ ∂F/∂y_A = 0``): a *hidden constraint*
``wᵀF(t, y_D) = 0`` on the differential variables — the capacitor voltages
around the loop add up to the sources'. IDA integrates such a system (the
multipliers are out of its error test) once it starts on the constraint with
the rates that keep it there. :func:`consistent_start`

1. finds the hidden combinations ``W`` from finite-difference Jacobians (rows
   and columns scaled to unit size, so farads beside ohms do not matter);
2. where the state given violates them (a source that is not zero at t0
   across an uncharged capacitor), moves it as the circuit itself does: only
   through impulses of the algebraic variables, ``∂F/∂ẏ_D Δy_D + ∂F/∂y_A Λ = 0``,
   so charge is conserved at every node and flux in every loop (the same rule
   as :func:`netdyn.numerics.higherindex.impulse_consistent` on the linear path);
3. solves ``F = 0`` together with the constraints' time derivatives
   ``W dF/dt = 0`` for the algebraic variables and the rates.

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

import numpy as np
import scipy.linalg as sla

__all__ = ["consistent_start", "hidden_combinations"]


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


def consistent_start(residual, t0, y0, yp0, algebraic, tol=1e-11, max_iter=12, impulses=None):
    """Consistent ``(y, ẏ)`` at ``t0``: algebraic ``y`` and every rate solved, differential ``y`` held
    except for the impulse-consistent jump onto hidden constraints (see the module doc).

    Newton with finite-difference Jacobians (the unknowns enter linearly in most models, so one or two
    iterations suffice). ``impulses``: ``None`` makes no jump (the state is held); ``True`` lets every
    algebraic variable carry an impulse (multipliers that are currents: node fluxes); ``False`` none (they
    are voltages: node potentials of branch charges — charge then moves only where no rate resists it).
    """
    N = y0.size
    alg = np.zeros(N, dtype=bool)
    alg[list(algebraic)] = True
    y, yp = y0.copy(), yp0.copy()
    res = np.zeros(N)

    def F(z, yd=None, tt=t0):
        y[alg], yp[~alg] = z[alg], z[~alg]
        if yd is not None:
            y[~alg] = yd
        residual(tt, y, yp, res)
        return res.copy()

    z = np.where(alg, y, yp)
    yd = y[~alg].copy()
    r = F(z, yd)
    Jz = _fd_jacobian(lambda zz: F(zz, yd), z, r, 1e-4)
    Jd = _fd_jacobian(lambda d: F(z, d), yd, r, 1e-4)
    F(z, yd)
    W = hidden_combinations(Jz, Jd)
    if W.shape[0] and impulses is not None:
        yd = _jump(F, z, yd, W, Jz, alg, impulsive=alg if impulses else np.zeros_like(alg))
    if W.shape[0]:  # the hidden constraints' derivatives W (∂F/∂y_D ẏ_D + ∂F/∂t): linear in the rates
        r = F(z, yd)
        WJd = W @ _fd_jacobian(lambda d: F(z, d), yd, r)
    ht = 1e-9 * max(1.0, abs(t0))

    def G(zz):
        base = F(zz, yd)
        if not W.shape[0]:
            return base
        # ∂F/∂t one-sided into the span, second order (a segment starts at a source's corner)
        Ft = (-3.0 * base + 4.0 * F(zz, yd, t0 + ht) - F(zz, yd, t0 + 2.0 * ht)) / (2.0 * ht)
        F(zz, yd)
        return np.concatenate([base, WJd @ zz[~alg] + W @ Ft])

    def jacobian(zz, r):
        J = _fd_jacobian(lambda v: F(v, yd), zz, r[:N])
        if W.shape[0]:
            extra = np.zeros((W.shape[0], N))
            extra[:, ~alg] = WJd
            J = np.vstack([J, extra])
        return J

    r = G(z)
    for _ in range(max_iter):
        if not np.any(r):
            break
        dz = np.linalg.lstsq(jacobian(z, r), -r, rcond=None)[0]
        z = z + dz
        r = G(z)
        if np.max(np.abs(dz)) <= tol * (1.0 + np.max(np.abs(z))):
            break
    F(z, yd)
    return y.copy(), yp.copy()


def _jump(F, z, yd, W, Jz, alg, max_iter=6, impulsive=None):
    """``y_D + Δ`` on the hidden constraints, ``Δ`` reachable by impulses of the (``impulsive``) algebraic
    variables.

    The violation ``W F`` is measured where the algebraic variables and rates solve the rest of ``F`` (a
    least-squares step on ``Jz`` first): ``W`` is a numerical left null space of ``Jz``, so at an unsolved
    ``z`` its rounding times the residual's volts would hide a violation of 1e-10 of the sources — and IDA,
    whose error test on charges runs at 1e-17 C after the first pass's scaling, cannot start off the
    constraint by that much (random circuit seed 0: a source's 3 V across a 0.3 µF capacitor met to 3e-10 V).
    """
    impulsive = alg if impulsive is None else impulsive
    n_alg = int(impulsive.sum())
    # Jz's columns: algebraic y (impulses Λ) and the rates of the differential y (a jump Δ gives ẏ_D ∋ Δ δ(t))
    Ja, Jp = Jz[:, impulsive], Jz[:, ~alg]
    # the size of the constraints' terms: a violation at rounding level of them is not a jump
    r = F(z, yd)
    Jd0 = _fd_jacobian(lambda d: F(z, d), yd, r)
    terms = max(np.max(np.abs(Jd0) @ np.abs(yd), initial=0.0), np.max(np.abs(F(z, np.zeros_like(yd))), initial=0.0))
    size = np.max(np.abs(W), axis=1, initial=0.0) * terms
    for _ in range(max_iter):
        r = F(z, yd)
        z = z - np.linalg.lstsq(Jz, r, rcond=None)[0]   # the solvable part of F to zero (Gauss-Newton)
        r = F(z, yd)
        h = W @ r
        if np.all(np.abs(h) <= 1e-13 * size):
            break
        Jd = _fd_jacobian(lambda d: F(z, d), yd, r)
        K = np.block([[Jp, Ja], [W @ Jd, np.zeros((W.shape[0], n_alg))]])
        rhs = np.concatenate([np.zeros(Jp.shape[0]), -h])
        sol = np.linalg.lstsq(K, rhs, rcond=None)[0]
        yd = yd + sol[:yd.size]
        if np.all(np.abs(sol[:yd.size]) <= 1e-15 * np.abs(yd)):   # converged to rounding
            break
    return yd
