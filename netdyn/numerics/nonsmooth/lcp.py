"""A small linear complementarity problem, solved exactly: ``z ≥ 0``, ``w = G z + q ≥ 0``, ``zᵀw = 0``.

The impulse problem of an impact has one unknown a contact closing at that instant (a handful: Newton's
cradle has one a ball), so the active sets are tried by size — the empty set first, then each single
contact, pairs, … — each a least-squares solve of ``G_SS z_S = −q_S`` (``G`` is positive semidefinite; a
redundant set of contacts, such as a table's four legs, leaves ``z`` non-unique but ``w`` and the velocities
unique). The first set whose ``z_S ≥ 0`` and whose ``w ≥ 0`` elsewhere is the solution; for a positive
semidefinite ``G`` (the Delassus matrix of a mechanism) one exists when ``q`` comes from an impact.

>>> import numpy as np
>>> G = np.array([[2.0, -1.0], [-1.0, 2.0]])          # two contacts of three unit balls in a row
>>> z = solve_lcp(G, np.array([-2.0, 0.0]))           # ball 1 at 1 m/s onto balls 2, 3 at rest, e = 1
>>> np.round(z * 3, 12).tolist()
[4.0, 2.0]
"""
from __future__ import annotations

from itertools import combinations

import numpy as np

from netdyn.errors import IntegrationError

__all__ = ["solve_lcp", "LCPError", "MAX_CONTACTS"]

#: contacts one impact may involve (2**MAX_CONTACTS active sets at most are tried)
MAX_CONTACTS = 16


class LCPError(IntegrationError):
    """The impulse problem of an impact has no solution the active-set search finds."""


def solve_lcp(G: np.ndarray, q: np.ndarray, names: list[str] | None = None) -> np.ndarray:
    """The ``z`` of ``z ≥ 0, G z + q ≥ 0, zᵀ(G z + q) = 0`` (``G``: m×m, m ≤ :data:`MAX_CONTACTS`).

    >>> solve_lcp(np.array([[1.0]]), np.array([-3.0])).tolist()
    [3.0]
    """
    G = np.asarray(G, dtype=float)
    q = np.asarray(q, dtype=float)
    m = q.size
    scale = max(1.0, float(np.max(np.abs(q), initial=0.0)), float(np.max(np.abs(G), initial=0.0)))
    tol = 1e-10 * scale
    z = np.zeros(m)
    if m == 0 or np.all(q >= -tol):
        return z
    if m > MAX_CONTACTS:
        raise LCPError(f"an impact of {m} contacts at once ({', '.join(names or [])}); at most {MAX_CONTACTS} "
                       "are solved (2^m active sets)")
    for size in range(1, m + 1):
        for S in combinations(range(m), size):
            S = list(S)
            zs = np.linalg.lstsq(G[np.ix_(S, S)], -q[S], rcond=None)[0]
            if np.any(zs < -tol):
                continue
            z = np.zeros(m)
            z[S] = np.maximum(zs, 0.0)
            w = G @ z + q
            if np.all(w >= -tol * 10) and np.max(np.abs(w[S]), initial=0.0) <= tol * 10:
                return z
    raise LCPError(f"the impulse problem of the contacts {', '.join(names or map(str, range(m)))} has no "
                   "solution (is the Delassus matrix positive semidefinite?)")
