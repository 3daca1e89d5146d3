"""Linear DAEs of index two: hidden constraints, their derivatives, and impulse-consistent initial values.

A circuit with a loop of voltage sources and capacitors, or a cut-set of
current sources and inductors, gives a linear DAE ``E ẏ = J y + G u(t)`` of
index two in some formulations: a combination ``w`` of its equations has no
rate term and no algebraic unknown left (``wᵀE = 0``, ``wᵀJ_a = 0``), so it
is a *hidden constraint* ``c y + g u(t) = 0`` on the differential
components — the capacitor voltages around the loop sum to the sources'
(node formulation), the inductor currents of the cut-set add up to the
sources' (charge formulations). :func:`reduce_index` finds every such
combination (structurally, by a maximum matching, then numerically on the
small over-determined block it isolates), replaces one equation of each by the
constraint's derivative ``c ẏ + g u̇ = 0`` (the sources' derivatives become
extra inputs) and repeats until the DAE is of index one. The constraint itself
is kept and imposed on the initial values; a linear invariant is preserved
by Radau IIA, so it holds along the solution to the integrator's accuracy.

A combination with ``c = 0`` is a truly singular circuit (a loop of voltage
sources, a cut-set of current sources): :class:`~netdyn.errors.SingularSystemError`
naming the equations involved.

:func:`impulse_consistent` completes initial values the way the circuit itself
would: what the user gave (uncharged capacitors by default) is changed only by
impulses of the multipliers (currents through voltage sources, voltages across
current sources), so charge is conserved at every node and flux in every
loop — two capacitors in series across a source share its voltage as their
capacitances dictate, not as a least-squares fit would.

>>> import numpy as np, scipy.sparse as sps
>>> # x' = -x + u, and x fixed by the algebraic row 0 = x - u: index two in the multiplier m
>>> E = sps.csr_array(np.array([[1.0, 0.0], [0.0, 0.0]]))
>>> J = sps.csr_array(np.array([[-1.0, -1.0], [1.0, 0.0]]))
>>> G = np.array([[1.0], [-1.0]])
>>> red = reduce_index(E, J, G, lambda j: 1, multiplier_columns=[1])
>>> red.E.toarray().tolist(), red.G.tolist()   # one row replaced by x' = u'
([[1.0, 0.0], [1.0, 0.0]], [[1.0, 0.0], [0.0, 1.0]])
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sps
import scipy.sparse.linalg as spla

from netdyn.errors import InitialConditionError, SingularSystemError

__all__ = ["Reduced", "reduce_index", "impulse_consistent", "algebraic_split", "singular_pencil"]

#: above this size a numerically (not structurally) singular DAE is not analysed densely
DENSE_LIMIT = 3000


@dataclass
class Reduced:
    """An index-one DAE ``E ẏ = J y + G v(t)`` and the hidden constraints ``C y + H v(t) = 0`` it came with.

    ``v`` are the inputs and the derivatives :func:`reduce_index` asked for
    (columns of ``G`` and ``H`` index them); ``replaced`` lists the equations
    exchanged for a derivative, with the equations of each combination.
    """

    E: sps.csr_array
    J: sps.csr_array
    G: np.ndarray
    C: np.ndarray  # hidden constraints on y (rows), dense
    H: np.ndarray  # their input coefficients
    replaced: list = field(default_factory=list)  # (row replaced, rows of the combination)


def algebraic_split(E):
    """Mask of the differential components (columns of ``E`` with an entry)."""
    return np.asarray(abs(sps.csc_array(E)).sum(axis=0)).ravel() > 0


def index_one_matrix(E, J):
    """``S = [E_d, −J_a]``: regular exactly when ``E ẏ = J y + G u`` is of index at most one."""
    E, J = sps.csc_array(E), sps.csc_array(J)
    diff = algebraic_split(E)
    return sps.hstack([E[:, np.flatnonzero(diff)], -J[:, np.flatnonzero(~diff)]]).tocsc(), diff


def factor(S):
    """Sparse LU of ``S``, or ``None`` when it is singular (relative pivot below 1e-13)."""
    from scipy.sparse.csgraph import structural_rank
    if S.shape[0] == 0:
        return None
    S = sps.csc_array(S)
    S.eliminate_zeros()
    if structural_rank(S) < S.shape[0]:  # SuperLU may crash, not raise, on a structurally singular matrix
        return None
    try:
        lu = spla.splu(S)
    except RuntimeError:
        return None
    d = np.abs(lu.U.diagonal())
    if d.size and d.min() <= 1e-13 * d.max():
        return None
    return lu


def left_null_space(S, tol=1e-13):
    """Rows ``w`` (as a dense ``k × N`` array) with ``wᵀS = 0``; an empty array when ``S`` is regular.

    The over-determined block of ``S`` (rows left unmatched by a maximum
    matching and every row reachable from them along alternating paths) is
    found structurally; only that block is analysed densely.
    """
    from scipy.sparse.csgraph import maximum_bipartite_matching
    S = sps.csr_array(S)
    N = S.shape[0]
    if factor(S) is not None:
        return np.zeros((0, N))
    pattern = sps.csr_array((np.ones(S.nnz), S.indices, S.indptr), shape=S.shape)
    col_of_row = maximum_bipartite_matching(pattern, perm_type="column")
    row_of_col = np.full(S.shape[1], -1)
    row_of_col[col_of_row[col_of_row >= 0]] = np.flatnonzero(col_of_row >= 0)
    start = np.flatnonzero(col_of_row < 0)
    if start.size:
        rows, cols = set(start.tolist()), set()
        queue = list(start)
        while queue:
            r = queue.pop()
            for c in S.indices[S.indptr[r]:S.indptr[r + 1]]:
                if c in cols:
                    continue
                cols.add(int(c))
                r2 = row_of_col[c]
                if r2 >= 0 and r2 not in rows:
                    rows.add(int(r2))
                    queue.append(r2)
        rows, cols = sorted(rows), sorted(cols)
    else:
        if N > DENSE_LIMIT:
            raise SingularSystemError(f"the linear DAE ({N} unknowns) is singular but not structurally; "
                                      "use the symbolic path")
        rows, cols = list(range(N)), list(range(S.shape[1]))
    block = S[rows][:, cols].toarray() if cols else np.zeros((len(rows), 0))
    scale = np.max(np.abs(block), initial=1.0)
    null = sla.null_space(block.T / scale, rcond=tol) if cols else np.eye(len(rows))
    W = np.zeros((null.shape[1], N))
    W[:, rows] = null.T
    W[np.abs(W) < 1e-12 * np.max(np.abs(W), initial=1.0)] = 0.0
    return W


def singular_pencil(E, J, tol=1e-11, seed=0):
    """Null vectors ``(v, w)`` of a (numerically) singular pencil (``det(sE − J) ≡ 0``), else ``None``.

    A singular pencil has no unique solution at all (a gain loop that
    cancels a passive path, ``v₂ = 1·v₂``): ``(sE − J) v = 0`` and
    ``wᵀ(sE − J) = 0`` for every ``s``. Tested by a dense SVD at two random
    ``s`` (scaled to the matrices), columns equilibrated first so the units of
    the unknowns do not count (rows are not: a row nearly zero is what a gain
    that cancels a passive path leaves): singular when ``σ_min < tol σ_max``
    at both. Above ``DENSE_LIMIT`` unknowns the pencil is not analysed (``None``).
    ``v`` and ``w`` are the right and left null vectors at the first ``s``.

    >>> import numpy as np
    >>> # x' = -x + z, 0 = z - z (an equation that fixes nothing): singular
    >>> E, J = np.array([[1.0, 0.0], [0.0, 0.0]]), np.array([[-1.0, 1.0], [0.0, 0.0]])
    >>> v, w = singular_pencil(E, J)
    >>> np.round(np.abs(w), 6).tolist()
    [0.0, 1.0]
    >>> singular_pencil(E, np.array([[-1.0, 1e-9], [0.0, 1e-9]])) is None   # z = 0: regular, z in small units
    True
    """
    E, J = sps.csc_array(E), sps.csc_array(J)
    N = E.shape[0]
    if N == 0 or N > DENSE_LIMIT:
        return None
    scale = max(float(np.max(np.abs(J.data), initial=0.0)), 1e-300) / \
        max(float(np.max(np.abs(E.data), initial=0.0)), 1e-300)
    found = None
    for s in np.random.default_rng(seed).uniform(0.5, 2.0, 2) * scale:
        M = (s * E - J).toarray()
        c = np.max(np.abs(M), axis=0)
        c = 1.0 / np.where(c > 0, c, 1.0)
        M *= c[None, :]
        U, sv, Vh = np.linalg.svd(M)
        if sv[-1] >= tol * sv[0]:
            return None
        found = found or (c * Vh[-1], U[:, -1])
    return found


def reduce_index(E, J, G, derivative, multiplier_columns=(), labels=None, max_rounds=4):
    """Differentiate the hidden constraints of ``E ẏ = J y + G u(t)`` until it is of index one.

    ``G`` is dense (inputs as columns); ``derivative(j)`` returns the column
    index of the derivative of input ``j`` (creating it: ``G`` grows by
    columns as needed). ``labels[r]`` names equation ``r`` in errors.
    Returns a :class:`Reduced`.
    """
    E, J = sps.lil_array(E), sps.lil_array(J)
    N = E.shape[0]
    G = np.array(G, dtype=float)
    G = G.reshape(N, -1) if G.size else np.zeros((N, G.shape[1] if G.ndim == 2 else 0))
    hidden_c, hidden_h, replaced = [], [], []
    for _ in range(max_rounds):
        S, diff = index_one_matrix(E.tocsr(), J.tocsr())
        W = left_null_space(S)
        if W.shape[0] == 0:
            break
        Jc = sps.csr_array(J)
        C = np.zeros((W.shape[0], N))
        C[:, diff] = (sps.csr_array(W) @ Jc[:, np.flatnonzero(diff)]).toarray() if diff.any() else 0.0
        Hc = W @ G
        jscale = max(float(np.max(np.abs(Jc.data), initial=0.0)), 1e-300)
        for i in range(W.shape[0]):
            if np.max(np.abs(C[i])) <= 1e-10 * jscale:
                involved = [labels[r] if labels else f"equation {r}" for r in np.flatnonzero(W[i])]
                what = "inconsistent" if np.any(np.abs(Hc[i]) > 0) else "redundant (their solution is not unique)"
                raise SingularSystemError(f"the equations of {', '.join(map(str, involved))} are {what}: a loop of "
                                          "ideal voltage sources or a cut-set of ideal current sources fixes the "
                                          "same quantity twice; remove one source or add an element in series "
                                          "(loop) or in parallel (cut-set)")
        # one constraint per pivot variable (reduced echelon form): separate loops and cut-sets stay separate
        k = W.shape[0]
        _, _, pc = sla.qr(C, pivoting=True, mode="economic")
        Tk = np.linalg.inv(C[:, pc[:k]])
        C, Hc, W = Tk @ C, Tk @ Hc, Tk @ W
        C[np.abs(C) < 1e-13 * np.max(np.abs(C), axis=1, keepdims=True)] = 0.0
        _, _, piv = sla.qr(W, pivoting=True, mode="economic")
        rows = [int(r) for r in piv[:k]]
        for i, r in enumerate(rows):  # the new equation gets the size of the one it replaces
            size = max(float(np.max(np.abs(E[[r], :].toarray()), initial=0.0)),
                       float(np.max(np.abs(J[[r], :].toarray()), initial=0.0)), 1e-300)
            f = size / np.max(np.abs(C[i]))
            C[i], Hc[i], W[i] = C[i] * f, Hc[i] * f, W[i] * f
        for i, r in enumerate(rows):
            replaced.append((r, [int(x) for x in np.flatnonzero(W[i])]))
            E[[r], :] = 0
            J[[r], :] = 0
            cols = np.flatnonzero(C[i])
            for c in cols:
                E[r, int(c)] = C[i, c]
            new = np.zeros(G.shape[1])
            for j in np.flatnonzero(Hc[i]):
                k = derivative(int(j))
                if k >= new.size:
                    G = np.hstack([G, np.zeros((N, k + 1 - G.shape[1]))])
                    new = np.concatenate([new, np.zeros(k + 1 - new.size)])
                new[k] -= Hc[i, j]
            G[r, :] = new
        hidden_c.append(C)
        hidden_h.append(Hc)
    else:
        raise SingularSystemError("the linear DAE stays of index above one after differentiating its hidden "
                                  "constraints four times")
    width = G.shape[1]
    Ch = np.vstack(hidden_c) if hidden_c else np.zeros((0, N))
    Hh = np.vstack([np.pad(h, ((0, 0), (0, width - h.shape[1]))) for h in hidden_h]) if hidden_h \
        else np.zeros((0, width))
    return Reduced(sps.csr_array(E), sps.csr_array(J), G, Ch, Hh, replaced)


def impulse_consistent(E, J, red, y0, v0, impulsive, given=None, labels=None, cache=None):
    """Initial values consistent with the hidden constraints, reached from ``y0`` by impulses only.

    ``E``, ``J`` are the original (unreduced) matrices; ``impulsive`` the
    columns that may carry a Dirac impulse at ``t0`` (the algebraic unknowns:
    currents of voltage sources, voltages of current sources, controlled
    sources' multipliers). The jump ``Δ`` solves ``E Δ = J ζ₀`` (integrated
    over the impulse, the finite components contribute nothing) together with
    ``red.C (y0 + Δ) + red.H v0 = 0``. When no impulse of those columns is
    enough, the impulse is of higher order or runs through differential
    components (an ``H`` that copies the impulsive current of a capacitor
    charged across a supply puts an impulse of voltage on a capacitor across
    its output, whose charge then carries it): then only the slow
    (finite-mode) part of ``E y0`` is kept, as the Weierstrass form of the
    circuit's pencil says of any impulse (dense: an ordered QZ). ``given`` (a mask) marks components the user fixed: a jump in
    one of them is an :class:`~netdyn.errors.InitialConditionError`.
    ``cache`` (a dict, optional) keeps the dense pseudo-inverses between calls with the same matrices (the
    restarts at source corners).
    Returns the new ``y0`` (its algebraic components are left for the solver).

    >>> import numpy as np, scipy.sparse as sps
    >>> # q' = i, 0 = q - u (a capacitor across a supply u = 2): the charge jumps to 2 by an impulse of i
    >>> E, J = np.array([[1.0, 0.0], [0.0, 0.0]]), np.array([[0.0, 1.0], [1.0, 0.0]])
    >>> red = Reduced(sps.csr_array(E), sps.csr_array(J), np.zeros((2, 1)), np.array([[1.0, 0.0]]),
    ...               np.array([[-1.0]]))
    >>> np.round(impulse_consistent(E, J, red, np.zeros(2), np.array([2.0]), [1]), 12).tolist()
    [2.0, 0.0]
    """
    if red.C.shape[0] == 0:
        return y0
    r = red.C @ y0 + red.H @ v0
    if np.max(np.abs(r)) <= 1e-12 * (1.0 + np.max(np.abs(red.H @ v0), initial=0.0) + np.max(np.abs(y0))):
        return y0
    E, J = sps.csr_array(E), sps.csr_array(J)
    diff = algebraic_split(E)
    d = np.flatnonzero(diff)
    for order in (0, 1):
        x, ok = _impulse_jump(E, J, red.C, d, np.asarray(impulsive, dtype=int), r, order,
                              {} if cache is None else cache)
        if ok:
            break
    else:
        worst = int(np.argmax(np.abs(r)))
        if given is not None and given.any():
            raise InitialConditionError("no impulse of the circuit makes the initial values given consistent "
                                        f"(hidden constraint {worst}, residual {r[worst]:.3g}); give initial "
                                        "values that satisfy it")
        raise InitialConditionError("no jump of the state at t0 reaches the circuit's constraints from rest "
                                    f"(hidden constraint {worst}, residual {r[worst]:.3g}): its matrices are "
                                    "nearly singular, as a gain loop of controlled sources that almost cancels "
                                    "a passive path makes them; check the gains of its controlled sources")
    out = y0.copy()
    out[d] += x
    if given is not None:
        moved = np.flatnonzero(given[d] & (np.abs(x) > 1e-9 * (1.0 + np.abs(y0[d]))))
        if moved.size:
            names = [labels[d[k]] if labels else f"component {d[k]}" for k in moved]
            raise InitialConditionError(
                f"the initial values given for {', '.join(map(str, names))} contradict a loop of voltage sources "
                "and capacitors or a cut-set of current sources and inductors; leave them out (they follow from "
                "the sources) or change them")
    return out


def _impulse_jump(E, J, C, d, imp, r, order, cache):
    """The jump ``Δ`` of the differential components ``d`` that makes ``C (y0 + Δ) = −r`` hold.

    ``order = 0``: an impulse ``ζ₀ δ`` on the columns ``imp`` only, ``E Δ = J[:, imp] ζ₀``.
    Otherwise the slow (finite-mode) part of ``E y`` is kept: ``wᵀ E Δ = 0`` for every ``w`` of the
    pencil's left deflating subspace of finite eigenvalues (ordered QZ of ``(Jᵀ, Eᵀ)``), which is what
    impulses of any order (``Σ ζⱼ δ⁽ʲ⁾``, on any component) can reach.
    Returns ``(Δ, solvable)``.
    """
    nd = d.size
    if order not in cache:
        cache[order] = _jump_matrix(E, J, C, d, imp, order)
    A, P = cache[order]
    b = np.concatenate([np.zeros(A.shape[0] - C.shape[0]), -r])
    x = P @ b
    res = A @ x - b
    return x[:nd], bool(np.max(np.abs(res)) <= 1e-8 * (1.0 + np.max(np.abs(b))))


def _jump_matrix(E, J, C, d, imp, order):
    """``(A, pinv(A))`` of :func:`_impulse_jump`'s least-squares problem for ``order``."""
    Ed = E[:, d].toarray()
    if order == 0:
        A = np.vstack([np.hstack([Ed, -J[:, imp].toarray()]),
                       np.hstack([C[:, d], np.zeros((C.shape[0], imp.size))])])
    else:
        Ez, Jz = E.toarray(), J.toarray()
        scale = max(np.max(np.abs(Jz), initial=0.0), 1e-300) / max(np.max(np.abs(Ez), initial=0.0), 1e-300)
        _, _, alpha, beta, _, Z = sla.ordqz(Jz.T, scale * Ez.T, output="real",
                                            sort=lambda al, be: np.abs(be) > 1e-9 * np.abs(al))
        k = int(np.sum(np.abs(beta) > 1e-9 * np.abs(alpha)))
        A = np.vstack([Z[:, :k].T @ Ed * scale, C[:, d]])
    return A, np.linalg.pinv(A)
