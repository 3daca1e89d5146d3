"""The slow subsystem of a linear descriptor system of any index (dense; for linearizations).

A regular descriptor system ``E ẏ = A y + Σ_j B_j u⁽ʲ⁾`` of index two or more
(a capacitor straight across a supply, parallel capacitors, an inductor in
series with a current source) has fewer states than variables: some
combinations of ``y`` are fixed by the inputs, and some outputs follow the
inputs' derivatives. :func:`slow_subsystem` finds

* the states ``x`` (their number is the number of finite poles) with
  ``ẋ = F x + G u`` — no input derivative in the state equation, always
  possible for the slow part of a regular pencil;
* ``y = Y x + Σ_j P_j u⁽ʲ⁾`` for every solution of the descriptor system;

by Luenberger's *shuffle*: the rows of ``E`` are compressed (SVD); the rows
with no rate are constraints ``0 = A₂ y + Σ B₂ u⁽ʲ⁾`` that are kept and
replaced by their derivative, until ``E`` is regular. The constraints
collected on the way define the manifold of consistent ``y``, the regular
system the flow on it. Rank decisions are taken on rows scaled to unit size,
so the answer does not depend on the units (farads beside ohms).

>>> import numpy as np
>>> # x1' = -x1 + x2, and 0 = x2 - u: one state, x2 follows the input
>>> E = np.array([[1.0, 0.0], [0.0, 0.0]]); A = np.array([[-1.0, 1.0], [0.0, 1.0]]); B = np.array([[0.0], [-1.0]])
>>> s = slow_subsystem(E, A, [B])
>>> s.F.round(12).tolist(), s.G.round(12).tolist(), [P.round(12).tolist() for P in s.P]
([[-1.0]], [[1.0]], [[[0.0], [1.0]]])
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg as sla

from netdyn.errors import SingularSystemError

__all__ = ["Slow", "slow_subsystem"]


@dataclass
class Slow:
    """``ẋ = F x + G u`` and ``y = Y x + Σ_j P[j] u⁽ʲ⁾``; ``constraints`` counts the algebraic relations found.

    The states are variables of ``y`` (``y[selected]``, so ``Y[selected] = I``), minus
    the input terms that keep input derivatives out of ``ẋ = F x + G u``.
    """

    F: np.ndarray
    G: np.ndarray
    Y: np.ndarray
    P: list
    constraints: int
    selected: np.ndarray  #: x = y[selected] − (their input offsets Σ_j P[j][selected] u⁽ʲ⁾)

    def derivative(self):
        """``(Ẏ, Ṗ)`` with ``ẏ = Ẏ x + Σ_j Ṗ[j] u⁽ʲ⁾`` along the solutions."""
        P = [self.Y @ self.G] + [p.copy() for p in self.P]
        return self.Y @ self.F, P


def _unit_rows(M, tol=0.0):
    scale = np.max(np.abs(M), axis=1, initial=0.0)
    scale[scale <= tol] = 1.0
    return M / scale[:, None], scale


def _pad(Bs, k, shape):
    return [Bs[j] if j < len(Bs) else np.zeros(shape) for j in range(k)]


def slow_subsystem(E, A, B, tol=1e-10, labels=None):
    """Slow subsystem of ``E ẏ = A y + Σ_j B[j] u⁽ʲ⁾`` (``B`` a list by derivative order); see the module doc.

    Parameters
    ----------
    E, A : (n, n) array_like
    B : list of (n, m) array_like
        Input matrices of ``u``, ``u̇``, ….
    tol : float
        Relative rank tolerance on rows scaled to unit size.
    labels : list of str, optional
        Names of the equations, for the error of a singular pencil.

    Returns
    -------
    Slow

    Raises
    ------
    SingularSystemError
        The pencil is singular (equations that fix nothing, or contradict each other).

    Examples
    --------
    >>> import numpy as np
    >>> # two capacitors in parallel behind a resistor, as node equations: C1 v' = (u - v)/R - i, C2 w' = i, 0 = v - w
    >>> E = np.diag([1e-6, 2e-6, 0.0]); A = np.array([[-1e-3, 0, -1], [0, 0, 1], [1, -1, 0]])
    >>> s = slow_subsystem(E, A, [np.array([[1e-3], [0], [0]])])
    >>> s.F.round(6).tolist()   # one pole at -1/(R (C1 + C2))
    [[-333.333333]]
    """
    E = np.array(E, dtype=float)
    A = np.array(A, dtype=float)
    n = E.shape[0]
    Bs = [np.array(b, dtype=float).reshape(n, -1) for b in B]
    m = Bs[0].shape[1] if Bs else 0
    # column scaling (ỹ = cs·y): every variable of comparable size in the pencil
    cs = np.max(np.abs(np.vstack([E, A])), axis=0, initial=0.0)
    cs[cs == 0] = 1.0
    E, A = E / cs, A / cs
    cons_C, cons_D = [], []
    for _ in range(n + 1):
        En, rs = _unit_rows(np.hstack([E, A]))
        E, A = En[:, :n], En[:, n:]
        Bs = [b / rs[:, None] for b in Bs]
        # the combinations with no rate from the rates alone, each equation's rate scaled to unit size: scaled
        # with their forces the rates are as small as their time constants (1e-6 for a µs), and the SVD would
        # resolve the combination only to eps/1e-6 (1e-9 on the gain of an op-amp macro-model in branch charges)
        re = np.max(np.abs(E), axis=1, initial=0.0)
        re[re <= tol * max(re.max(initial=0.0), 1e-300)] = 1.0
        U, sv, _ = np.linalg.svd(E / re[:, None])
        rank = int(np.sum(sv > tol * max(sv[0] if sv.size else 0.0, 1e-300)))
        if rank == n:
            break
        Nl = U[:, rank:] / re[:, None]  # left null vectors of E: the constraints Nlᵀ (A y + Σ B u⁽ʲ⁾) = 0
        # they replace the equations they weigh most (pivoted QR); the others stay as they are, not rotated
        # into each other (which would mix a fast equation's large forces into a slow one's)
        drop = sla.qr(Nl.T, pivoting=True, mode="r")[1][:n - rank]
        keep = np.setdiff1d(np.arange(n), drop)
        Et, At = np.vstack([E[keep], Nl.T @ E]), np.vstack([A[keep], Nl.T @ A])
        Bt = [np.vstack([b[keep], Nl.T @ b]) for b in Bs]
        A2, B2 = At[rank:], [b[rank:] for b in Bt]
        A2s, s2 = _unit_rows(A2)
        stacked = np.vstack(cons_C + [A2s])
        if np.linalg.matrix_rank(stacked, tol=tol * max(1.0, np.abs(stacked).max(initial=0.0))) < stacked.shape[0]:
            bad = np.abs(U[:, rank:]).sum(axis=1)
            rows = [labels[k] if labels else str(k) for k in np.flatnonzero(bad > 1e-8 * bad.max())]
            raise SingularSystemError(
                "the linearized equations are singular: a combination of the equations of "
                f"{', '.join(rows)} fixes no variable (a loop of ideal sources, or a part with no path that "
                "determines it); check those elements")
        B2s = [b / s2[:, None] for b in B2]
        cons_C.append(A2s)
        cons_D.append(B2s)
        # replace the constraints by their derivatives: A2 ẏ + Σ B2_j u^(j+1) = 0
        k = len(Bs) + 1
        E = np.vstack([Et[:rank], A2s])
        A = np.vstack([At[:rank], np.zeros_like(A2s)])
        top = _pad([b[:rank] for b in Bt], k, (rank, m))
        bottom = [np.zeros((n - rank, m))] + [-b for b in B2s]
        Bs = [np.vstack([t_, b_]) for t_, b_ in zip(top, _pad(bottom, k, (n - rank, m)))]
    else:  # pragma: no cover - the loop always ends for a regular pencil
        raise SingularSystemError("the linearized equations could not be reduced to index one")
    k = len(Bs)
    if cons_C:
        Cc = np.vstack(cons_C)
        Dc = [np.vstack(_pad_rows(cons_D, j, m)) for j in range(k)]
        Y = sla.null_space(Cc, rcond=tol)
        pinv = np.linalg.pinv(Cc, rcond=tol)
        P = [-pinv @ d for d in Dc]
    else:
        Y, P = np.eye(n), [np.zeros((n, m))]
    lu = sla.lu_factor(E)
    Einv_A = sla.lu_solve(lu, A)
    Einv_B = [sla.lu_solve(lu, b) for b in Bs]
    F = Y.T @ Einv_A @ Y
    P = _pad(P, k, (n, m))
    G = [Y.T @ (Einv_A @ P[j] + Einv_B[j]) for j in range(k)]
    # x = x̃ + Σ_{j≥1} K_j u^(j-1) removes the input derivatives from the state equation
    K = [None] * (k + 1)
    K[k] = np.zeros((Y.shape[1], m))
    for j in range(k - 1, 0, -1):
        K[j] = G[j] + F @ K[j + 1]
    G0 = G[0] + (F @ K[1] if k > 1 else 0.0)
    Pout = [P[j] + (Y @ K[j + 1] if j + 1 < k else 0.0) for j in range(k)]
    for p in Pout:  # rounding noise off the input terms (the scaled system has unit rows and columns)
        p[np.abs(p) <= 1e-12 * max(1.0, np.max(np.abs(p), initial=0.0))] = 0.0
    # states: the variables of y that are independent on the manifold (pivoted QR), shifted by the inputs
    sel = np.sort(sla.qr(Y.T, pivoting=True, mode="r")[1][:Y.shape[1]]) if Y.shape[1] else np.zeros(0, int)
    T = Y[sel]
    Tinv = np.linalg.inv(T) if sel.size else T
    F, G0, Y = T @ F @ Tinv, T @ np.asarray(G0, dtype=float).reshape(Y.shape[1], m), Y @ Tinv
    # undo the column scaling (x stays the scaled selected variables: rescale it to the variables themselves)
    F, G0 = (F / cs[sel][:, None]) * cs[sel][None, :], G0 / cs[sel][:, None]
    Ys = (Y * cs[sel][None, :]) / cs[:, None]
    Pout = [p / cs[:, None] for p in Pout]
    while len(Pout) > 1 and not np.any(Pout[-1]):
        Pout.pop()
    return Slow(F, G0, Ys, Pout, sum(c.shape[0] for c in cons_C), sel)


def _pad_rows(cons_D, j, m):
    return [d[j] if j < len(d) else np.zeros((d[0].shape[0] if d else 0, m)) for d in cons_D]
