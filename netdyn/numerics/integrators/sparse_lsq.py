"""Weighted linear least squares on a fixed sparse pattern, by SuperLU on the augmented system.

:class:`SparseIDA <netdyn.numerics.ida.sparse_ida.SparseIDA>` solves, at every
output time, ``min ‖W (J x − b)‖`` for the flows without inertia and the
multipliers (the sparse counterpart of
:func:`~netdyn.numerics.ida.ida.algebraic_at_output`'s ``lstsq``), each
time with new values on the same pattern. :class:`AugmentedLeastSquares` fixes
the pattern of the quasi-definite augmented matrix

    [[I, W J S], [(W J S)ᵀ, −ε I]]

(columns scaled to unit size by ``S``; its LU exists in any pivot order) once,
so an evaluation is a ``bincount`` into that pattern and one ``splu``. An empty
column gets 0 (as the minimum-norm ``lstsq`` does).

>>> import numpy as np
>>> ls = AugmentedLeastSquares(np.array([0, 1, 2]), np.array([0, 0, 1]), (3, 2), np.ones(3))
>>> ls.solve(np.array([1.0, 1.0, 2.0]), np.array([1.0, 3.0, 4.0])).round(12).tolist()
[2.0, 2.0]
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sps
from scipy.sparse.linalg import splu

__all__ = ["AugmentedLeastSquares", "FixedPattern"]


class FixedPattern:
    """A CSC pattern holding every ``(rows[k], cols[k])``; :meth:`matrix` adds values up into it.

    >>> fp = FixedPattern(np.array([0, 1, 0]), np.array([0, 1, 0]), (2, 2))
    >>> fp.matrix(np.array([1.0, 2.0, 3.0])).toarray().tolist()
    [[4.0, 0.0], [0.0, 2.0]]
    """

    def __init__(self, rows, cols, shape):
        P = sps.csc_matrix((np.ones(len(rows)), (rows, cols)), shape=shape)
        P.sum_duplicates()
        P.sort_indices()
        self.shape, self.indices, self.indptr, self.nnz = shape, P.indices, P.indptr, P.nnz
        lookup = sps.csc_matrix((np.arange(1, P.nnz + 1, dtype=float), P.indices, P.indptr), shape=shape)
        self.slot = np.asarray(lookup[rows, cols]).ravel().astype(np.intp) - 1 if len(rows) else \
            np.zeros(0, dtype=np.intp)

    def data(self, values):
        """The CSC data of the summed ``values``."""
        return np.bincount(self.slot, values, minlength=self.nnz)

    def matrix(self, values):
        return sps.csc_matrix((self.data(values), self.indices, self.indptr), shape=self.shape)


class AugmentedLeastSquares:
    """``argmin ‖diag(weight) (J x − b)‖`` for ``J`` given by its values at ``(rows, cols)`` (duplicates add).

    Parameters
    ----------
    rows, cols : ndarray
        Positions of the values of ``J`` (shape ``shape``).
    weight : ndarray
        Row weights.
    eps : float
        The regularisation ``ε`` on the scaled columns (far below any singular value that matters).
    """

    def __init__(self, rows, cols, shape, weight, eps=1e-20):
        m, k = shape
        self.m, self.k, self.weight, self.eps = m, k, np.asarray(weight, dtype=float), eps
        self.J = FixedPattern(rows, cols, shape)
        jc = np.repeat(np.arange(k), np.diff(self.J.indptr))  # the column of each stored entry of J
        self._jr, self._jc = self.J.indices, jc
        ar = np.concatenate([np.arange(m), self._jr, m + jc, m + np.arange(k)])
        ac = np.concatenate([np.arange(m), m + jc, self._jr, m + np.arange(k)])
        self.K = FixedPattern(ar, ac, (m + k, m + k))

    def factor(self, values):
        """A solver ``x = solver(b)`` for ``J`` with these values (one SuperLU factorisation, reusable for
        several right-hand sides), or None when SuperLU fails."""
        d = self.J.data(values) * self.weight[self._jr]
        cs = np.zeros(self.k)
        np.maximum.at(cs, self._jc, np.abs(d))
        cs[cs == 0] = 1.0
        d = d / cs[self._jc]
        K = self.K.matrix(np.concatenate([np.ones(self.m), d, d, np.full(self.k, -self.eps)]))
        try:
            lu = splu(K)
        except RuntimeError:
            return None
        m, k, w = self.m, self.k, self.weight

        def solver(b):
            x = lu.solve(np.concatenate([w * b, np.zeros(k)]))[m:] / cs
            return x if np.all(np.isfinite(x)) else None
        return solver

    def solve(self, values, b):
        """``x`` (length ``k``), or None when SuperLU fails or the answer is not finite."""
        solver = self.factor(values)
        return None if solver is None else solver(b)
