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
    """The first-order DAE of a :class:`~netdyn.stamp.LinearNetwork` and its state layout.

    Hidden constraints (loops of voltage sources and capacitors, cut-sets of
    current sources and inductors, in whichever formulation makes them
    constraints on the states) are differentiated by
    :func:`netdyn.higherindex.reduce_index`; the sources' derivatives become extra
    inputs. The returned DAE carries ``exprs`` (its inputs as expressions of t),
    ``hidden`` (the :class:`~netdyn.higherindex.Reduced` record) and ``E0``, ``J0``
    (the matrices before the reduction).
    """
    import sympy as sp
    from netdyn.higherindex import reduce_index
    from netdyn.symbols import t
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
                         [-lin.K, -D_I, -lin.A.T],
                         [Z(m, n), -A_I, Z(m, m)]], format="csr")
    G = sps.block_array([[Z(nI, len(lin.inputs))], [lin.B_e], [-lin.B_a]], format="csr").toarray() \
        if lin.inputs else np.zeros((nI + n + m, 0))
    exprs = [sp.sympify(u) for u in lin.inputs]
    made = {}

    def derivative(j):
        if j not in made:
            made[j] = len(exprs)
            exprs.append(sp.diff(exprs[j], t))
        return made[j]

    labels = [f"the rate of {lin.names[i]}" for i in I] + [f"the equation of {nm}" for nm in lin.names] + \
        [f"the constraint {lb}" for lb in lin.flow_labels]
    red = reduce_index(E, J, G, derivative, labels=labels)
    from netdyn.numeric import time_function
    dae = LinearDAE(red.E, red.J, sps.csr_array(red.G), [time_function(u) for u in exprs],
                    error_rows=np.arange(n + nI), jumps=np.arange(len(lin.inputs), len(exprs)))
    dae.exprs, dae.hidden, dae.E0, dae.J0, dae.labels = exprs, red, E, J, labels
    return dae, I


def try_linear(net, formulation=None):
    """The :class:`~netdyn.stamp.LinearNetwork` of a network, or ``None`` when it has no linear form."""
    if not hasattr(net, "elements") or not hasattr(net, "bodies"):
        return None
    try:
        lin = linear_network(net, formulation)
        dae, I = linear_dae(lin)
        consistent_rates(dae)
    except NotLinear:
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


def _derivative_inputs(dae, order):
    """Values of the ``order``-th derivatives of the DAE's inputs, as a function of an array of times."""
    import sympy as sp
    from netdyn.numeric import time_function
    from netdyn.symbols import t
    fns = [time_function(sp.diff(e, t, order)) for e in dae.exprs]

    def values(tt):
        tt = np.atleast_1d(np.asarray(tt, dtype=float))
        if not fns:
            return np.zeros((0, tt.size))
        return np.vstack([np.broadcast_to(np.asarray(fn(tt), dtype=float), tt.shape) for fn in fns])
    return values


def exact_rates(dae, T, Y, rates):
    """Rates of the algebraic components and second derivatives of the differential ones, exactly.

    Differentiating ``S z = J_d y_d + G v(t)`` (``z = [ẏ_d; y_a]``) gives
    ``S ż = J_d ẏ_d + G v̇(t)``: one more solve with the same matrix, no
    differences of output samples. Returns ``(rates with the algebraic
    components filled, second derivatives of every component)``.
    """
    from netdyn.higherindex import factor, index_one_matrix
    S, diff = index_one_matrix(dae.E, dae.J)
    lu = factor(S)
    Jd = sps.csc_array(dae.J)[:, np.flatnonzero(diff)]
    nd = int(diff.sum())
    d1, d2 = _derivative_inputs(dae, 1), _derivative_inputs(dae, 2)
    z1 = lu.solve(Jd @ rates[diff] + dae.G @ d1(T))
    rates = rates.copy()
    rates[~diff] = z1[nd:]
    second = np.zeros_like(rates)
    second[diff] = z1[:nd]
    z2 = lu.solve(Jd @ second[diff] + dae.G @ d2(T))
    second[~diff] = z2[nd:]
    return rates, second


def simulate_linear(net, t_span, q0=None, f0=None, t_eval=None, rtol=1e-8, atol=None, max_step=np.inf,
                    formulation=None, lin=None, progress=None):
    """Integrate a linear network on the numeric path; returns a :class:`LinearSolution`.

    Initial values not given are zero (uncharged capacitors, no inductor
    current), then changed only as impulses through the sources would change
    them (:func:`netdyn.higherindex.impulse_consistent`). The dissipated and
    supplied energy are integrated with the solution by the Radau stages' own
    quadrature. ``progress(t)`` (optional) is called as each output interval is reached."""
    from netdyn.higherindex import impulse_consistent
    lin = lin or linear_network(net, formulation)
    dae, I = linear_dae(lin)
    solve, diff = consistent_rates(dae)
    n, nI, m = lin.n, I.size, lin.m
    if t_span is None:
        tran = getattr(net, "tran", None)
        if not tran:
            raise ModelError("no t_span given and the network has no .tran card; pass t_span=(t0, t1)")
        t_span = (0.0, float(tran["tstop"]))
    t0, t1 = float(t_span[0]), float(t_span[1])
    t_eval = np.linspace(t0, t1, 1001) if t_eval is None else np.asarray(t_eval, dtype=float)
    te = t_eval if t_eval[0] <= t0 else np.concatenate([[t0], t_eval])
    y0 = np.zeros(dae.size)
    y0[:n], gq = _values(lin.names, q0, "q")
    fv, gf = _values(lin.names, f0, "f")
    y0[n:n + nI] = fv[I]
    given = np.zeros(dae.size, dtype=bool)
    given[:n], given[n:n + nI] = gq, gf[I]
    names = list(lin.names) + [lin.names[i] + "_dot" for i in I] + [f"mu_{k + 1}" for k in range(m)]
    y0 = impulse_consistent(dae.E0, dae.J0, dae.hidden, y0, dae.u(t0)[:, 0], np.arange(n + nI, n + nI + m),
                            given=given, labels=names)
    _, y0 = solve(t0, y0[:, None])
    dae.corners = _corners(lin.inputs, t0, t1)
    grid = np.union1d(te, dae.corners)  # steps stop at source corners, as SPICE's do
    power = _power_function(lin, dae, I)
    restart = (lambda tt, y: solve(tt, y[:, None])[1][:, 0]) if len(dae.exprs) > len(lin.inputs) else None
    T, Y, W = radau(dae, grid, y0[:, 0], rtol=rtol, atol=atol, max_step=max_step, progress=progress,
                    power=power, restart=restart)
    keep = np.isin(T, te)
    T, Y, W = T[keep], Y[:, keep], W[:, keep]
    rates, Y = solve(T, Y)
    rates, second = exact_rates(dae, T, Y, rates)
    if t_eval[0] > t0:
        T, Y, rates, second, W = T[1:], Y[:, 1:], rates[:, 1:], second[:, 1:], W[:, 1:] - W[:, :1]
    q = Y[:n]
    f = rates[:n].copy()
    f[I] = Y[n:n + nI]
    acc = second[:n].copy()
    acc[I] = rates[n:n + nI]
    res = {"t": T, "q": q, "f": f, "acc": acc, "lam": np.zeros((0, T.size)), "mu": Y[n + nI:],
           "work": {"dissipated": W[0], "supplied": W[1]},
           "nsteps": T.size - 1, "message": "The solver successfully reached the end of the integration interval."}
    return LinearSolution(net, lin, res)


def _power_function(lin, dae, I):
    """Dissipated ``fᵀ D f`` and supplied ``fᵀ B_e u + μᵀ B_a u`` power at the Radau stages."""
    n, nI = lin.n, I.size
    D, Be, Ba = lin.D, lin.B_e, lin.B_a
    nu = len(lin.inputs)

    def power(ts, Ys, Yd):
        f = Yd[:n].copy()
        f[I] = Ys[n:n + nI]
        mu = Ys[n + nI:]
        u = dae.u(ts)[:nu]
        pd = np.sum(f * (D @ f), axis=0)
        ps = np.sum(f * (Be @ u), axis=0) + np.sum(mu * (Ba @ u), axis=0) if nu else np.zeros(ts.size)
        return np.vstack([pd, ps])

    return power


def _corners(inputs, t0, t1):
    from netdyn.sources import breakpoints
    found = set()
    for u in inputs:
        found.update(c for c in breakpoints(u, t1, t0) if t0 < c < t1)
    return np.array(sorted(found))


def _values(names, given, what):
    index = {nm: i for i, nm in enumerate(names)}
    out = np.zeros(len(names))
    mask = np.zeros(len(names), dtype=bool)
    for k, v in (given or {}).items():
        key = k if isinstance(k, str) else getattr(getattr(k, "func", None), "__name__", str(k))
        if what == "f" and key.endswith("_dot") and key[:-4] in index:
            key = key[:-4]
        if key not in index:
            raise ModelError(f"unknown coordinate {key!r} in the initial {what}; the coordinates are {names}")
        out[index[key]] = float(v)
        mask[index[key]] = True
    return out, mask


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
        self.work = res.get("work")
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


    # ------------------------------------------------------------ element and node quantities, numerically
    def _inputs_at_t(self):
        if "inputs" not in self._cache:
            from netdyn.numeric import time_function
            fns = [time_function(u) for u in self.linear.inputs]
            self._cache["inputs"] = np.vstack([np.broadcast_to(np.asarray(fn(self.t), dtype=float), self.t.shape)
                                               for fn in fns]) if fns else np.zeros((0, self.t.size))
        return self._cache["inputs"]

    def _port_quantity(self, name, k, which):
        """Through or across variable of port ``k`` of an element from the stamped matrices (no symbolic model)."""
        key = ("port", name, k, which)
        if key not in self._cache:
            from netdyn.components.base import THROUGH
            from netdyn.stamp import port_effort
            if name not in self.linear.stamps:
                raise KeyError(f"no element named {name!r}")
            kind = self.linear.stamps[name]["kinds"][k]
            if (which == "through") == (kind == THROUGH):
                val = self._port(name, k, self.f)
            else:
                val = port_effort(self.linear, name, k, self.q, self.f, self.acc, self.mu, self._inputs_at_t())
            self._cache[key] = val
        return self._cache[key]

    def _element_quantity(self, name, which):
        el = self.net.elements.get(name)
        if el is None:
            raise KeyError(f"no element named {name!r} in this network")
        if el.couples:
            raise KeyError(f"{name} has no port of its own; ask for the coupled elements {el.couples}")
        sign = getattr(el, "through_report_signs", el.report_signs)[0] if which == "through" else el.report_signs[0]
        return sign * self._port_quantity(name, 0, which)

    def across(self, name):
        """Across variable of an element, or of a node against ground, from the stamped matrices."""
        if name in self.net.elements:
            return self._element_quantity(name, "across")
        from netdyn import topology
        from netdyn.components.base import DOMAINS
        from netdyn.network import port_key
        port_of = {port_key(el, k): (nm, k) for nm, el in self.net.elements.items() for k in range(len(el.ports))}
        for domain in [d for d in self.net.domains if d in DOMAINS]:
            paths = topology.tree_paths(self.net.domain_graph(domain), "0")
            if name in paths:
                out = np.zeros_like(self.t, dtype=float)
                for key, sign in paths[name]:
                    el, k = port_of[key]
                    out -= sign * self._port_quantity(el, k, "across")
                return out
        raise KeyError(f"no element or node named {name!r}")

    def through(self, name):
        """Through variable (current, force, torque) of an element, first terminal to second."""
        return self._element_quantity(name, "through")

    voltage = velocity = angular_velocity = across
    current = force = torque = through

    def energy(self):
        """Stored energy ``½ fᵀM f + ½ qᵀK q`` along the trajectory (from the stamped matrices)."""
        M, K = self.linear.M, self.linear.K
        return 0.5 * np.sum(self.f * (M @ self.f), axis=0) + 0.5 * np.sum(self.q * (K @ self.q), axis=0)
