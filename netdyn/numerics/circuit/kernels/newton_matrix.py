"""The Newton matrix of the circuit path on a fixed sparse pattern: devices evaluated at once, scattered by index.

The circuit path (:mod:`netdyn.numerics.circuit.nonlinearsim`) solves at every BDF step
``F(y) = E ẏ − J y − G u(t) + Σ C ∇D(Cᵀ f) = 0`` with ``ẏ = α y + past``. Its
Newton matrix is

    A(α, H) = α E − J + P_α(C H Cᵀ)

where ``H`` is the block-diagonal Hessian of the devices' dissipation (one
``P × P`` block per device of ``P`` ports) and ``P_α`` moves a coordinate
column to the column of ``y`` it depends on (``α`` for a flow that is ``q̇``,
1 for a flow with inertia). Every entry of ``A`` has a place fixed before
the first step: the union pattern of ``E``, ``J`` and the device blocks is
built once as a CSC matrix, and for every device entry ``(device, port,
port)`` the list of CSC slots it lands in with its coefficient is
precomputed. One evaluation is then a vectorised call per device law (a
closed form in numpy when the element offers one, ``dissipation_batch``; its
lambdified dissipation otherwise) and one ``numpy.bincount`` — no sparse
matrix products, no Python loop over devices.

>>> import numpy as np
>>> from netdyn.numerics.circuit.nonlinearsim import try_circuit
>>> c = try_circuit(example_network())
>>> nm = NewtonMatrix(c)
>>> f = np.full(c.n, 0.6)
>>> g, H = nm.devices(f, 0.0)
>>> ref_g, ref_J = c.nonlinear(f, 0.0)
>>> bool(np.allclose(g, ref_g, rtol=1e-13, atol=0))
True
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sps

__all__ = ["NewtonMatrix", "BandLayout"]


def example_network():
    """The network of this module's examples: 5 V through 1 kΩ into a diode."""
    from netdyn.components.diode import Diode
    from netdyn.components.electrical import Resistor, VoltageSource
    from netdyn.graph.network import Network

    net = Network()
    net.add(VoltageSource("V1", "a", "0", 5.0), Resistor("R1", "a", "d", 1e3), Diode("D1", "d", "0"))
    return net


class NewtonMatrix:
    """Device gradients on the Lagrange rows and the Newton matrix ``α E − J + P_α(C H Cᵀ)`` as CSC data.

    Parameters
    ----------
    circuit : netdyn.numerics.circuit.nonlinearsim._Circuit
        The stamped circuit and its device groups.
    """

    def __init__(self, circuit):
        c = circuit
        n, nI = c.n, c.nI
        N = c.dae.size
        self.n, self.nI, self.N = n, nI, N
        inertial = np.zeros(n, dtype=bool)
        inertial[c.I] = True
        colmap = np.arange(n)
        colmap[c.I] = n + np.arange(nI)
        self.groups = []
        rows_y, cols_y, src_y, coef_y, alpha_y, pa_y, pb_y = [], [], [], [], [], [], []
        offset = ports = 0
        for (law, C, Ct, values, named, ne, P, hr, hc, limiter), kind in zip(c.groups, c.group_types):
            fast = getattr(kind, "dissipation_batch", None)
            Cc = sps.csc_array(C)
            Cc.sort_indices()
            # every (device, port a, port b): each stored entry of column a times each of column b
            cnt = np.diff(Cc.indptr)
            ka = np.repeat(np.arange(ne * P), P)  # columns e P + a, each paired with the P columns of its device
            kb = (ka // P) * P + np.tile(np.arange(P), ne * P)
            na, nb = cnt[ka], cnt[kb]
            pairs = np.repeat(np.arange(ka.size), na * nb)  # one row per (entry of a) x (entry of b)
            first = np.repeat(np.cumsum(na * nb) - na * nb, na * nb)
            local = np.arange(pairs.size) - first
            ia = Cc.indptr[ka[pairs]] + local // nb[pairs]
            ib = Cc.indptr[kb[pairs]] + local % nb[pairs]
            rc = Cc.indices[ib]
            rows_y.append(nI + Cc.indices[ia])
            cols_y.append(colmap[rc])
            alpha_y.append(~inertial[rc])
            coef_y.append(Cc.data[ia] * Cc.data[ib])
            src_y.append(offset + ka[pairs] * P + kb[pairs] % P)
            pa_y.append(ports + ka[pairs])  # the entry's two ports, numbered over all groups
            pb_y.append(ports + kb[pairs])
            if N <= 60:  # small circuits: dense products cost a microsecond, sparse ones their call overhead
                C, Ct = C.toarray(), Ct.toarray()
            self.groups.append((law, C, Ct, values, named, ne, P, fast))
            offset += ne * P * P
            ports += ne * P
        cat = lambda parts, dt: np.concatenate(parts).astype(dt) if parts else np.zeros(0, dtype=dt)
        rows_y, cols_y = cat(rows_y, np.intp), cat(cols_y, np.intp)
        self._src, self._coef, self._alpha = cat(src_y, np.intp), cat(coef_y, float), cat(alpha_y, bool)
        self._pa, self._pb = cat(pa_y, np.intp), cat(pb_y, np.intp)
        E, J = sps.coo_array(c.dae.E), sps.coo_array(c.dae.J)
        rows = np.concatenate([E.row, J.row, rows_y])
        cols = np.concatenate([E.col, J.col, cols_y])
        pattern = sps.csc_array((np.ones(rows.size), (rows, cols)), shape=(N, N))
        pattern.sum_duplicates()
        pattern.sort_indices()
        self.pattern = pattern
        self.nnz = nnz = pattern.nnz
        lookup = sps.csc_array((np.arange(1, nnz + 1, dtype=float), pattern.indices, pattern.indptr), shape=(N, N))
        slot = np.asarray(lookup[rows, cols]).ravel().astype(np.intp) - 1
        ne_, nj = E.nnz, J.nnz
        self._E = np.bincount(slot[:ne_], E.data, minlength=nnz)
        self._J = np.bincount(slot[ne_:ne_ + nj], J.data, minlength=nnz)
        self._slot = slot[ne_ + nj:]
        self.size = offset  # number of Hessian values, all groups

    def devices(self, f, tt, ports=False):
        """``(g, h)``: ``Σ C ∇D(Cᵀ f)`` on the Lagrange rows (length n) and the Hessian values of every device
        (devices × ports × ports, flattened, in group order); with ``ports=True`` also the groups' port flows."""
        g = np.zeros(self.n)
        hs, Fs = [], []
        for law, C, Ct, values, named, ne, P, fast in self.groups:
            F = (Ct @ f).reshape(ne, P)
            Fs.append(F)
            if fast is not None:
                gD, H = fast(named, F)
            else:
                gD, hD = law.batch(values, F, tt)
                H = hD.transpose(2, 0, 1)
            g += C @ gD.ravel()
            hs.append(H.ravel())
        h = (np.concatenate(hs) if len(hs) > 1 else hs[0]) if hs else np.zeros(0)
        return (g, h, Fs) if ports else (g, h)

    def data(self, alpha, h):
        """The CSC data of the Newton matrix on :attr:`pattern` for BDF weight ``alpha`` and Hessian values ``h``."""
        w = self._coef * h[self._src]
        w[self._alpha] *= alpha
        return alpha * self._E - self._J + np.bincount(self._slot, w, minlength=self.nnz)

    def matrix(self, alpha, h):
        """The Newton matrix as a CSC array."""
        A = self.pattern.copy()
        A.data = self.data(alpha, h)
        return A


class BandLayout:
    """The Newton matrix of :class:`NewtonMatrix` in band storage (LAPACK's, transposed: one row per column) after a reverse Cuthill–McKee
    renumbering (each state paired with an equation that contains it first): where every constant entry and every device entry lands, for the compiled step
    (:func:`netdyn.numerics.circuit.kernels.circuit_kernel.bdf_step`). Only for devices whose Hessian is diagonal in their
    ports (a junction and its series resistance); ``None`` from :meth:`of` otherwise or when the band is
    too wide to beat a sparse LU.

    Attributes: ``rperm``, ``cperm`` (band row → equation, band column → state), ``kl``, ``ku`` (the band's half-widths before pivoting),
    ``shape`` of the band array, ``base_pos``, ``base_E``, ``base_J`` (flat positions and values of the
    entries of ``E`` and ``J``), ``nw_port``, ``nw_pos``, ``nw_coef``, ``nw_alpha`` (one row per device
    entry: its port, position, coefficient and whether it scales with the BDF weight).

    >>> import numpy as np
    >>> from netdyn.numerics.circuit.nonlinearsim import try_circuit
    >>> nm = NewtonMatrix(try_circuit(example_network()))
    >>> band = BandLayout.of(nm)
    >>> h = np.array([2e-3])
    >>> A = np.zeros(band.shape); A.ravel()[band.base_pos] += 3.0 * band.base_E - band.base_J
    >>> np.add.at(A.ravel(), band.nw_pos, band.nw_coef * h[band.nw_port] * np.where(band.nw_alpha, 3.0, 1.0))
    >>> bool(np.allclose(band.dense(A), nm.matrix(3.0, h).toarray()))
    True
    """

    @classmethod
    def of(cls, nm, max_width=400):
        from scipy.sparse.csgraph import maximum_bipartite_matching, reverse_cuthill_mckee
        P = nm.pattern
        N = P.shape[0]
        # equations and unknowns are different things: pair each unknown with an equation that contains it
        # (a zero-free diagonal), then renumber the pairs by reverse Cuthill-McKee
        match = maximum_bipartite_matching(P.tocsr(), perm_type="column")  # row i -> its column
        if np.any(match < 0):
            return None  # structurally singular: the sparse LU's error message is the better one
        rowof = np.empty(N, dtype=np.intp)
        rowof[match] = np.arange(N)
        B = P.tocsr()[rowof]  # column j's equation on row j
        S = (B + B.T).tocsr()
        cols = np.repeat(np.arange(N), np.diff(P.indptr))  # CSC slot order: the pattern's own (sorted) order
        best = None
        for order in (np.asarray(reverse_cuthill_mckee(S, symmetric_mode=True), dtype=np.intp), _rcm(S)):
            cperm, rperm = order, rowof[order]
            inv_c, inv_r = np.empty(N, dtype=np.intp), np.empty(N, dtype=np.intp)
            inv_c[cperm] = np.arange(N)
            inv_r[rperm] = np.arange(N)
            ri, ci = inv_r[P.indices], inv_c[cols]
            kl = int(max(np.max(ri - ci, initial=0), 0))
            ku = int(max(np.max(ci - ri, initial=0), 0))
            if best is None or 2 * kl + ku < 2 * best[0] + best[1]:  # the solve's work per row
                best = (kl, ku, cperm, rperm, ri, ci)
        kl, ku, cperm, rperm, ri, ci = best
        if kl + ku > max_width and N > 2 * max_width:
            return None
        self = cls()
        N = P.shape[0]
        self.rperm, self.cperm, self.kl, self.ku, self.N = rperm, cperm, kl, ku, N
        self.shape = (N, 2 * kl + ku + 1)  # one row per column: A[i, j] at [j, kl + ku + i − j]
        pos = ci * (2 * kl + ku + 1) + kl + ku + ri - ci  # flat position of every CSC slot
        self.base_pos = pos
        self.base_E, self.base_J = nm._E.copy(), nm._J.copy()
        diag = nm._pa == nm._pb  # the devices' off-diagonal Hessian entries are zero (port_table devices)
        self.nw_port = nm._pa[diag]
        self.nw_pos = pos[nm._slot[diag]]
        self.nw_coef = nm._coef[diag]
        self.nw_alpha = nm._alpha[diag]
        return self

    def dense(self, ab):
        """The matrix in the states' order from band storage ``ab`` (before factorisation; for checks)."""
        N, kv = self.N, self.kl + self.ku
        A = np.zeros((N, N))
        for j in range(N):
            for i in range(max(0, j - self.ku), min(N, j + self.kl + 1)):
                A[i, j] = ab[j, kv + i - j]
        out = np.zeros((N, N))
        out[np.ix_(self.rperm, self.cperm)] = A
        return out


def _rcm(S):
    """Reverse Cuthill–McKee of the symmetric pattern ``S``, each component started at a pseudo-peripheral
    node (George and Liu: the far end of a breadth-first search, repeated while the search gets deeper).
    scipy's ordering starts at a node of least degree, which in a ladder may sit in its middle and double
    the band."""
    indptr, indices = S.indptr, S.indices
    n = S.shape[0]
    deg = np.diff(indptr)
    seen = np.zeros(n, dtype=bool)
    order = []

    def levels(root):
        depth = {root: 0}
        frontier, last = [root], [root]
        while frontier:
            nxt = []
            for v in frontier:
                for w in indices[indptr[v]:indptr[v + 1]]:
                    if w not in depth:
                        depth[w] = depth[v] + 1
                        nxt.append(w)
            if nxt:
                last = nxt
            frontier = nxt
        return max(depth.values()), last

    for seed in np.argsort(deg, kind="stable"):
        if seen[seed]:
            continue
        root, (ecc, last) = seed, levels(seed)
        for _ in range(8):
            cand = min(last, key=lambda v: deg[v])
            e2, last2 = levels(cand)
            if e2 <= ecc:
                break
            root, ecc, last = cand, e2, last2
        seen[root] = True
        queue, head = [root], 0
        while head < len(queue):
            v = queue[head]
            head += 1
            nb = [w for w in indices[indptr[v]:indptr[v + 1]] if not seen[w]]
            nb.sort(key=lambda w: deg[w])
            for w in nb:
                seen[w] = True
                queue.append(w)
        order.extend(queue)
    return np.asarray(order[::-1], dtype=np.intp)
