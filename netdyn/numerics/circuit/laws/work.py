"""The energy dissipated and supplied on the law path, integrated with the state (so the balance closes).

On every accepted step the BDF's own polynomial through the step's points gives ``y(τ)`` and ``ẏ(τ)``; at
three Gauss–Legendre points of the step the dissipated power ``fᵀ D f + Σ_D x D'(x)`` (linear resistors and the
dissipation laws at their port flows ``x``) and the supplied power ``fᵀ B_e u + μᵀ B_a u`` (effort sources on
the Lagrange rows, driven flow constraints through their multipliers) are summed with the Gauss weights. From
the Lagrange rows ``fᵀ(M ḟ + D f + K q + g_D + g_V + Aᵀ μ − B_e u) = 0`` with ``A f = −B_a u``:
``dE/dt = supplied − dissipated``. Networks whose reactions are not ``Aᵀ`` (controlled sources) get no work
here (``sol.power_balance()`` then falls back to a quadrature of the symbolic powers).

>>> gauss_points(0.0, 2.0)[0].round(6).tolist()
[0.225403, 1.0, 1.774597]
"""
from __future__ import annotations

import numpy as np

__all__ = ["LawWork", "gauss_points"]

_NODES, _WEIGHTS = np.polynomial.legendre.leggauss(3)


def gauss_points(a: float, b: float) -> tuple[np.ndarray, np.ndarray]:
    """The three Gauss–Legendre points of ``[a, b]`` and their weights."""
    half = 0.5 * (b - a)
    return a + half * (_NODES + 1.0), half * _WEIGHTS


def _lagrange(ts, tau):
    """Weights of the interpolating polynomial through ``ts`` and of its derivative, at ``tau``."""
    k = len(ts)
    w, dw = np.ones(k), np.zeros(k)
    for j in range(k):
        others = [i for i in range(k) if i != j]
        den = np.prod([ts[j] - ts[i] for i in others])
        w[j] = np.prod([tau - ts[i] for i in others]) / den
        dw[j] = sum(np.prod([tau - ts[i] for i in others if i != m]) for m in others) / den
    return w, dw


class LawWork:
    """Cumulative dissipated and supplied energy of a :class:`~netdyn.numerics.circuit.laws.energysim.LawCircuit`
    run: :meth:`step` on every accepted step, :meth:`record` at every output time (``rows``: one per output,
    the first at the start)."""

    def __init__(self, c, forcing):
        self.c, self.forcing = c, forcing
        lin = c.lin
        self.D, self.Be, self.Ba = lin.D.tocsr(), lin.B_e.tocsr(), lin.B_a.tocsr()
        self.fns = list(c.dae.inputs)[:len(lin.inputs)]
        self.W = np.zeros(2)
        self.rows = [self.W.copy()]

    def step(self, ts, ys):
        """Add the work over ``[ts[1], ts[0]]``: ``ts`` the step's points newest first, ``ys`` their states."""
        c, n, nI = self.c, self.c.n, self.c.nI
        taus, weights = gauss_points(ts[1], ts[0])
        for tau, wt in zip(taus, weights):
            w, dw = _lagrange(ts, tau)
            y, yd = w @ ys, dw @ ys
            f = yd[:n].copy()
            f[c.I] = y[n:n + nI]
            diss = f @ (self.D @ f)
            for grp in c.groups:
                if grp.role == "D":
                    x = grp.Ct @ f
                    diss += x @ grp.law.slopes(x, grp.p)[0]
            u = np.array([float(fn(tau)) for fn in self.fns])
            sup = f @ (self.Be @ u) + y[n + nI:] @ (self.Ba @ u) if u.size else 0.0
            self.W += wt * np.array([diss, sup])

    def record(self):
        self.rows.append(self.W.copy())
