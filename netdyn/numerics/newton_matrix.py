"""The Newton matrix of the circuit path on a fixed sparse pattern: devices evaluated at once, scattered by index.

The circuit path (:mod:`netdyn.numerics.nonlinearsim`) solves at every BDF step
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

>>> import numpy as np, netdyn
>>> from netdyn.components.electrical import VoltageSource, Resistor
>>> from netdyn.components.diode import Diode
>>> from netdyn.numerics.nonlinearsim import try_circuit
>>> net = netdyn.Network()
>>> _ = net.add(VoltageSource("V1", "a", "0", 5.0), Resistor("R1", "a", "d", 1e3), Diode("D1", "d", "0"))
>>> c = try_circuit(net)
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

__all__ = ["NewtonMatrix"]


class NewtonMatrix:
    """Device gradients on the Lagrange rows and the Newton matrix ``α E − J + P_α(C H Cᵀ)`` as CSC data.

    Parameters
    ----------
    circuit : netdyn.numerics.nonlinearsim._Circuit
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
        rows_y, cols_y, src_y, coef_y, alpha_y = [], [], [], [], []
        offset = 0
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
            if N <= 60:  # small circuits: dense products cost a microsecond, sparse ones their call overhead
                C, Ct = C.toarray(), Ct.toarray()
            self.groups.append((law, C, Ct, values, named, ne, P, fast))
            offset += ne * P * P
        cat = lambda parts, dt: np.concatenate(parts).astype(dt) if parts else np.zeros(0, dtype=dt)
        rows_y, cols_y = cat(rows_y, np.intp), cat(cols_y, np.intp)
        self._src, self._coef, self._alpha = cat(src_y, np.intp), cat(coef_y, float), cat(alpha_y, bool)
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
