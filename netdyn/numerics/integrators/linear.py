"""``LinearRadau``: the linear fast path's integrator — a stamped network as ``E ẏ = J y + G u(t)``, Radau IIA.

The equations are those of ``net.model(formulation)`` (same coordinates, same
multipliers), written in ``y = [q, f_I, μ]``: the flows ``f_I`` of coordinates
with inertia are states, the others are ``q̇`` itself (an RC ladder in loop
charges is then ``D q̇ + K q = B u``, one unknown per loop). Sparse LU
factorizations are reused for every step of one size (:mod:`.radau`).

>>> import numpy as np
>>> from netdyn import Network
>>> from netdyn.components.electrical import VoltageSource, Resistor, Capacitor
>>> from netdyn.numerics.stamp import linear_network
>>> net = Network()
>>> _ = net.add(VoltageSource("V1", "a", "0", 1.0), Resistor("R1", "a", "b", 1.0), Capacitor("C1", "b", "0", 1.0))
>>> tr = LinearRadau(linear_network(net)).integrate(0, 1, np.zeros(1), np.zeros(1), np.array([1.0]), 1e-10, None)
>>> round(float(tr.q[0, -1]), 9)
0.632120559
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sps

from netdyn.numerics.compiled import time_function
from netdyn.numerics.integrators.base import Integrator
from netdyn.numerics.integrators.radau import LinearDAE, consistent_rates, radau
from netdyn.numerics.trajectory import INTERRUPTED, SUCCESS, Trajectory, interrupted_message


def linear_dae(lin):
    """The first-order DAE of a :class:`~netdyn.stamp.LinearNetwork` and its state layout."""
    n, m = lin.n, lin.m
    inertial = np.asarray(abs(lin.M).sum(axis=0)).ravel() > 0
    I = np.flatnonzero(inertial)
    nI = I.size
    keep_free = sps.diags((~inertial).astype(float))  # columns of q whose rate is the flow itself
    pick = sps.csr_array((np.ones(nI), (np.arange(nI), I)), shape=(nI, n))
    M_I, D_I, A_I = lin.M[:, I], lin.D[:, I], lin.A[:, I]
    Z = lambda r, c: sps.csr_array((r, c))
    E = sps.block_array([[pick, Z(nI, nI), Z(nI, m)],
                         [lin.D @ keep_free, M_I, Z(n, m)],
                         [lin.A @ keep_free, Z(m, nI), Z(m, m)]], format="csr")
    J = sps.block_array([[Z(nI, n), sps.eye(nI), Z(nI, m)],
                         [-lin.K, -D_I, -lin.reaction],
                         [Z(m, n), -A_I, Z(m, m)]], format="csr")
    G = sps.block_array([[Z(nI, len(lin.inputs))], [lin.B_e], [-lin.B_a]], format="csr") if lin.inputs \
        else sps.csr_array((nI + n + m, 0))
    fns = [time_function(u) for u in lin.inputs]
    dae = LinearDAE(E, J, G, fns, error_rows=np.arange(n + nI))
    return dae, I



class LinearRadau(Integrator):
    """Radau IIA (order 5) on the stamped sparse DAE; stops at the source ``corners`` it is given."""

    name = "linear"
    carries_work = False

    def __init__(self, lin, max_step=np.inf, corners=()):
        self.lin, self.max_step, self.corners = lin, max_step, np.asarray(corners, dtype=float)
        self.dae, self.I = linear_dae(lin)
        self.solve, self.differential = consistent_rates(self.dae)

    def integrate(self, t0, t1, q0, f0, t_eval, rtol, atol, progress=None):
        lin, dae, I = self.lin, self.dae, self.I
        n, nI = lin.n, I.size
        te = t_eval if t_eval[0] <= t0 else np.concatenate([[t0], t_eval])
        y0 = np.zeros(dae.size)
        y0[:n], y0[n:n + nI] = q0, f0[I]
        _, y0 = self.solve(t0, y0[:, None])
        grid = np.union1d(te, self.corners)  # steps stop at source corners, as SPICE's do
        stats = {}
        T, Y = radau(dae, grid, y0[:, 0], rtol=rtol, atol=atol, max_step=self.max_step, progress=progress,
                     stats=stats)
        keep = np.isin(T, te)
        T, Y = T[keep], Y[:, keep]
        rates, Y = self.solve(T, Y)
        if t_eval[0] > t0:
            T, Y, rates = T[1:], Y[:, 1:], rates[:, 1:]
        q = Y[:n]
        f = rates[:n].copy()
        f[I] = Y[n:n + nI]
        acc = np.gradient(f, T, axis=1) if T.size > 1 else np.zeros_like(f)
        acc[I] = rates[n:n + nI]
        algebraic_q = ~self.differential[:n]
        if algebraic_q.any():  # displacements without any rate term: their flows by differences
            f[algebraic_q] = np.gradient(q[algebraic_q], T, axis=1) if T.size > 1 else 0.0
        stopped = stats.get("interrupted")  # Ctrl-C: the times reached
        return Trajectory(T, q, f, acc, np.zeros((0, T.size)), Y[n + nI:], nsteps=stats["nsteps"],
                          message=SUCCESS if stopped is None else interrupted_message(stopped),
                          status=0 if stopped is None else INTERRUPTED)
