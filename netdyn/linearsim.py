"""The numeric fast path of ``simulate``: a linear network straight to sparse matrices and Radau IIA.

``simulate(net, ...)`` takes this path by itself (``method="auto"``) when
:func:`netdyn.stamp.linear_network` can stamp the network and its DAE is of
index one; ``method="linear"`` insists on it. The equations are those of
``net.model(formulation)`` (same coordinates, same multipliers), written as
the first-order DAE ``E ẏ = J y + G u(t)`` in ``y = [q, f_I, μ]``: the flows
``f_I`` of coordinates with inertia are states, the others are ``q̇`` itself
(an RC ladder in loop charges is then ``D q̇ + K q = B u``, one unknown per loop).

>>> from netdyn import Network, simulate
>>> from netdyn.components.electrical import VoltageSource, Resistor, Capacitor
>>> net = Network()
>>> _ = net.add(VoltageSource("V1", "a", "0", 1.0), Resistor("R1", "a", "b", 1.0), Capacitor("C1", "b", "0", 1.0))
>>> sol = simulate(net, (0, 1))
>>> sol.method, round(float(sol["q_R1"][-1]), 9)    # 1 - exp(-1)
('linear', 0.632120559)
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sps

from netdyn.errors import ModelError, SingularSystemError
from netdyn.lineardae import LinearDAE, consistent_rates, radau
from netdyn.solution import Solution
from netdyn.stamp import NotLinear, linear_network

__all__ = ["linear_dae", "simulate_linear", "LinearSolution", "try_linear"]


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
    from netdyn.numeric import time_function
    fns = [time_function(u) for u in lin.inputs]
    dae = LinearDAE(E, J, G, fns, error_rows=np.arange(n + nI))
    return dae, I


def try_linear(net, formulation=None):
    """The :class:`~netdyn.stamp.LinearNetwork` of a network, or ``None`` when it has no index-1 linear form."""
    if not hasattr(net, "elements") or not hasattr(net, "bodies"):
        return None
    try:
        lin = linear_network(net, formulation)
        dae, I = linear_dae(lin)
        consistent_rates(dae)
    except (NotLinear, SingularSystemError):
        return None
    return lin


def explain_not_linear(system, formulation=None, params=None):
    """Raise the error that says why ``method="linear"`` cannot run on ``system``."""
    if params:
        raise ModelError("method='linear' takes the element values as they are; params= needs the symbolic path")
    if not hasattr(system, "elements"):
        raise ModelError("method='linear' needs a Network (a hand-written LagrangianModel takes the symbolic path)")
    linear_dae_of = linear_dae(linear_network(system, formulation))[0]  # raises NotLinear naming the element
    consistent_rates(linear_dae_of)  # raises SingularSystemError: not of index one


def simulate_linear(net, t_span, q0=None, f0=None, t_eval=None, rtol=1e-8, atol=None, max_step=np.inf,
                    formulation=None, lin=None, progress=None):
    """Integrate a linear network on the numeric path; returns a :class:`LinearSolution`.

    ``progress(t)`` (optional) is called as each output interval is reached."""
    lin = lin or linear_network(net, formulation)
    dae, I = linear_dae(lin)
    solve, diff = consistent_rates(dae)
    n, nI = lin.n, I.size
    t0, t1 = float(t_span[0]), float(t_span[1])
    t_eval = np.linspace(t0, t1, 1001) if t_eval is None else np.asarray(t_eval, dtype=float)
    te = t_eval if t_eval[0] <= t0 else np.concatenate([[t0], t_eval])
    y0 = np.zeros(dae.size)
    y0[:n] = _values(lin.names, q0, "q")
    y0[n:n + nI] = _values(lin.names, f0, "f")[I]
    _, y0 = solve(t0, y0[:, None])
    grid = np.union1d(te, _corners(lin.inputs, t0, t1))  # steps stop at source corners, as SPICE's do
    T, Y = radau(dae, grid, y0[:, 0], rtol=rtol, atol=atol, max_step=max_step, progress=progress)
    keep = np.isin(T, te)
    T, Y = T[keep], Y[:, keep]
    rates, Y = solve(T, Y)
    if t_eval[0] > t0:
        T, Y, rates = T[1:], Y[:, 1:], rates[:, 1:]
    q = Y[:n]
    f = rates[:n].copy()
    f[I] = Y[n:n + nI]
    acc = np.gradient(f, T, axis=1) if T.size > 1 else np.zeros_like(f)
    acc[I] = rates[n:n + nI]
    algebraic_q = ~diff[:n]
    if algebraic_q.any():  # displacements without any rate term: their flows by differences
        f[algebraic_q] = np.gradient(q[algebraic_q], T, axis=1) if T.size > 1 else 0.0
    res = {"t": T, "q": q, "f": f, "acc": acc, "lam": np.zeros((0, T.size)), "mu": Y[n + nI:],
           "nsteps": T.size - 1, "message": "The solver successfully reached the end of the integration interval."}
    return LinearSolution(net, lin, res)


def _corners(inputs, t0, t1):
    from netdyn.sources import breakpoints
    found = set()
    for u in inputs:
        found.update(c for c in breakpoints(u, t1, t0) if t0 < c < t1)
    return np.array(sorted(found))


def _values(names, given, what):
    index = {nm: i for i, nm in enumerate(names)}
    out = np.zeros(len(names))
    for k, v in (given or {}).items():
        key = k if isinstance(k, str) else getattr(getattr(k, "func", None), "__name__", str(k))
        if what == "f" and key.endswith("_dot") and key[:-4] in index:
            key = key[:-4]
        if key not in index:
            raise ModelError(f"unknown coordinate {key!r} in the initial {what}; the coordinates are {names}")
        out[index[key]] = float(v)
    return out


class LinearSolution(Solution):
    """A :class:`~netdyn.solution.Solution` of the numeric path.

    Coordinates, flows and multipliers are at hand at once; the symbolic model
    (``sol.model``), needed only for energies and element quantities, is
    assembled on first use.
    """

    def __init__(self, net, lin, res):
        self.net, self.linear = net, lin
        self.method = "linear"
        self.t = res["t"]
        self.q, self.f, self.acc = res["q"], res["f"], res["acc"]
        self.lam, self.mu = res["lam"], res["mu"]
        self.message = res["message"]
        self.success = True
        self.nsteps = res["nsteps"]
        self.work = None
        self._cache = {}
        self._model = self._compiled = self._p = None

    @property
    def model(self):
        if self._model is None:
            self._model = self.net.model(formulation=self.linear.formulation)
        return self._model

    @property
    def compiled(self):
        if self._compiled is None:
            from netdyn.numeric import compile_model
            self._compiled = compile_model(self.model)
        return self._compiled

    @property
    def p(self):
        if self._p is None:
            self._p = self.compiled.parameter_vector()
        return self._p

    def port_displacement(self, name, k=0):
        """Displacement of port ``k`` of an element (a capacitor's charge, a spring's stretch), numerically.

        Unlike ``voltage``/``current`` it needs no symbolic model (large networks).
        """
        return self._port(name, k, self.q)

    def port_flow(self, name, k=0):
        """Flow of port ``k`` of an element (current in charge coordinates, velocity in node ones)."""
        return self._port(name, k, self.f)

    def _port(self, name, k, X):
        ports = self.linear.ports.get(name)
        if ports is None:
            raise KeyError(f"no element named {name!r}")
        out = np.zeros(self.t.size)
        for i, c in ports[k][1].items():
            out += c * X[i]
        return out

    @property
    def coordinate_names(self):
        return list(self.linear.names)

    @property
    def multiplier_names(self):
        return [f"mu_{k + 1}" for k in range(self.linear.m)]

