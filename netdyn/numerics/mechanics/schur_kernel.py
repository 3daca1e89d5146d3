"""The banded Schur-complement solve of :mod:`netdyn.numerics.mechanics.fastkkt` as one compiled kernel (numba).

``schur_solve`` does in one call what the numpy path does in fifteen: ``w = M⁻¹`` (diagonal),
``S = C W Cᵀ`` into band storage through the fixed pair indices, the banded Cholesky ``S = L Lᵀ``,
``λ = S⁻¹ (γ − C W h)`` and ``q̈ = −W (h + Cᵀ λ)``. Compiled once per machine (``cache=True``).

>>> import numpy as np
>>> rows, cols = np.array([0, 0]), np.array([0, 1])          # C = [1, 1], M = diag(1, 2), h = (1, 0)
>>> acc, lam = np.zeros(2), np.zeros(1)
>>> ok = schur_solve(np.array([1.0, 2.0]), np.array([1.0, 0.0]), np.array([1.0, 1.0]), np.array([0.0]),
...                  rows, cols, np.array([0, 1]), np.array([0, 1]), np.array([0, 0]), np.array([0, 0]), 0,
...                  np.zeros((1, 1)), acc, lam)
>>> ok, lam.round(12).tolist(), acc.round(12).tolist()       # S = 1.5, λ = −1/1.5
(True, [-0.666666666667], [-0.333333333333, 0.333333333333])
"""
from __future__ import annotations

import numpy as np
from numba import njit

#: numba caches on disk only under the package name: a cache written by a bare-name import of this file
#: (``python -m doctest path/to/it.py``) is found by the package import and fails to load there
CACHE = __name__.startswith("netdyn.")


@njit(cache=CACHE)
def schur_solve(dm, h, cv, gamma, rows, cols, k1, k2, band_i, band_j, kd, band, acc, lam):
    """Fill ``acc`` (n) and ``lam`` (m); False when ``M`` has a non-positive entry or ``S`` lost rank.

    ``dm``: the diagonal of M in coordinate order; ``cv``: C's entries at ``rows`` (band order: the rows
    renumbered by the band's permutation, as ``gamma`` and ``lam`` are), ``cols``; the pairs
    ``k1``, ``k2`` of entries in one column go to band row ``band_i`` (distance below the diagonal) and
    column ``band_j``; ``band`` is a ``(kd + 1) × m`` workspace.
    """
    n, m = dm.size, lam.size
    w = np.empty(n)
    for i in range(n):
        if not dm[i] > 0.0:
            return False
        w[i] = 1.0 / dm[i]
    band[:, :] = 0.0
    for p in range(k1.size):
        band[band_i[p], band_j[p]] += cv[k1[p]] * cv[k2[p]] * w[cols[k1[p]]]
    # banded Cholesky, lower: band[d, j] = L[j + d, j]
    dmax = 0.0
    for j in range(m):
        s = band[0, j]
        lo = max(0, j - kd)
        for k in range(lo, j):
            l = band[j - k, k]
            s -= l * l
        if not s > 0.0:
            return False
        d = np.sqrt(s)
        band[0, j] = d
        dmax = max(dmax, d)
        for i in range(j + 1, min(m, j + kd + 1)):
            s = band[i - j, j]
            for k in range(max(0, i - kd), j):
                s -= band[i - k, k] * band[j - k, k]
            band[i - j, j] = s / d
    for j in range(m):
        if band[0, j] <= 1e-6 * dmax:  # pivots (its squares) below 1e-12 of the largest: a lost rank
            return False
    # right-hand side γ − C W h (constraint order), permuted already by the caller's row numbering
    b = gamma.copy()
    for k in range(cv.size):
        b[rows[k]] -= cv[k] * w[cols[k]] * h[cols[k]]
    for j in range(m):  # L y = b
        s = b[j]
        for k in range(max(0, j - kd), j):
            s -= band[j - k, k] * b[k]
        b[j] = s / band[0, j]
    for j in range(m - 1, -1, -1):  # Lᵀ x = y
        s = b[j]
        for i in range(j + 1, min(m, j + kd + 1)):
            s -= band[i - j, j] * b[i]
        b[j] = s / band[0, j]
    for j in range(m):
        lam[j] = b[j]
    for i in range(n):
        acc[i] = h[i]
    for k in range(cv.size):
        acc[cols[k]] += cv[k] * b[rows[k]]
    for i in range(n):
        acc[i] = -w[i] * acc[i]
    return True
