"""``LinearRadau``: the linear fast path's integrator — a stamped network as ``E ẏ = J y + G u(t)``, Radau IIA.

The equations are those of ``net.model(formulation)`` (same coordinates, same
multipliers), written in ``y = [q, f_I, μ]``: the flows ``f_I`` of coordinates
with inertia are states, the others are ``q̇`` itself (an RC ladder in loop
charges is then ``D q̇ + K q = B u``, one unknown per loop). Sparse LU
factorizations are reused for every step of one size (:mod:`.radau`).

>>> import numpy as np
>>> from netdyn import Network
>>> from netdyn.components.electrical import VoltageSource, Resistor, Capacitor
>>> from netdyn.numerics.circuit.stamp import linear_network
>>> net = Network()
>>> _ = net.add(VoltageSource("V1", "a", "0", 1.0), Resistor("R1", "a", "b", 1.0), Capacitor("C1", "b", "0", 1.0))
>>> tr = LinearRadau(linear_network(net)).integrate(0, 1, np.zeros(1), np.zeros(1), np.array([1.0]), 1e-10, None)
>>> round(float(tr.q[0, -1]), 9)
0.632120559
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sps
import sympy as sp

from netdyn.numerics.functions.compiled import time_function
from netdyn.numerics.dae.higherindex import algebraic_split, factor, impulse_consistent, index_one_matrix, reduce_index
from netdyn.numerics.integrators.base import Integrator
from netdyn.numerics.integrators.sensed import sensed_atol
from netdyn.numerics.integrators.radau import LinearDAE, consistent_rates, fast, radau
from netdyn.numerics.results.store import Unsaved
from netdyn.numerics.results.trajectory import INTERRUPTED, SUCCESS, Trajectory, interrupted_message
from netdyn.symbols import t as T_SYM


def linear_dae(lin, reduce=True):
    """The first-order DAE of a :class:`~netdyn.stamp.LinearNetwork` and its state layout.

    Hidden constraints (loops of voltage sources and capacitors, cut-sets of
    current sources and inductors, in whichever formulation makes them
    constraints on the states) are differentiated by
    :func:`netdyn.numerics.dae.higherindex.reduce_index`; the sources' derivatives
    become extra inputs. The returned DAE carries ``exprs`` (its inputs as
    expressions of t), ``hidden`` (the :class:`~netdyn.numerics.dae.higherindex.Reduced`
    record) and ``E0``, ``J0`` (the matrices before the reduction).
    """
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
    G = sps.block_array([[Z(nI, len(lin.inputs))], [lin.B_e], [-lin.B_a]], format="csr").toarray() \
        if lin.inputs else np.zeros((nI + n + m, 0))
    exprs = [sp.sympify(u) for u in lin.inputs]
    made = {}

    def derivative(j):
        if j not in made:
            made[j] = len(exprs)
            exprs.append(sp.diff(exprs[j], T_SYM))
        return made[j]

    labels = [f"the rate of {lin.names[i]}" for i in I] + [f"the equation of {nm}" for nm in lin.names] + \
        [f"the constraint {lb}" for lb in lin.flow_labels]
    if not reduce:  # the circuit path: its Newton adds the skipped devices, the linear part alone may be singular
        dae = LinearDAE(E, J, sps.csr_array(G), [time_function(u) for u in exprs], error_rows=np.arange(n + nI))
        dae.exprs, dae.hidden, dae.E0, dae.J0, dae.labels = exprs, None, E, J, labels
        return dae, I
    red = reduce_index(E, J, G, derivative, labels=labels)
    dae = LinearDAE(red.E, red.J, sps.csr_array(red.G), [time_function(u) for u in exprs],
                    error_rows=np.arange(n + nI), jumps=np.arange(len(lin.inputs), len(exprs)))
    dae.exprs, dae.hidden, dae.E0, dae.J0, dae.labels = exprs, red, E, J, labels
    dae.rate_rows = np.arange(n, n + nI)  # y = [q, f_I, μ]
    return dae, I


def prepared_dae(lin):
    """``(dae, I, solve, differential)``: :func:`linear_dae` and its index-one solver
    (:func:`~netdyn.numerics.integrators.radau.consistent_rates`), made once per
    :class:`~netdyn.stamp.LinearNetwork` and kept on it (``lin.prepared``): the
    method choice and the integrator share them.

    Raises :class:`~netdyn.errors.SingularSystemError` when the DAE is not of index one.

    >>> from netdyn import Network
    >>> from netdyn.components.electrical import VoltageSource, Resistor, Capacitor
    >>> from netdyn.numerics.circuit.stamp import linear_network
    >>> net = Network()
    >>> _ = net.add(VoltageSource("V1", "a", "0", 1.0), Resistor("R1", "a", "b", 1.0), Capacitor("C1", "b", "0", 1.0))
    >>> lin = linear_network(net)
    >>> prepared_dae(lin) is prepared_dae(lin)
    True
    """
    if lin.prepared is None:
        dae, I = linear_dae(lin)
        solve, differential = consistent_rates(dae)
        lin.prepared = (dae, I, solve, differential)
    return lin.prepared


def _derivative_inputs(dae, order):
    """The ``order``-th derivatives of the DAE's inputs, as a function of an array of times (rows)."""
    fns = [time_function(sp.diff(e, T_SYM, order)) for e in dae.exprs]

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
    differences of output samples (a node voltage next to a PULSE corner, the
    current of a capacitor across a supply). Returns ``(rates with the
    algebraic components filled, second derivatives of every component)``;
    with no algebraic component the rates returned are ``rates`` itself.
    """
    S, diff = index_one_matrix(dae.E, dae.J)
    if S.shape[0] == 0:  # no unknowns at all (one resistor in loop charges): nothing moves
        return rates.copy(), np.zeros_like(rates)
    lu = factor(S)
    Jd = sps.csc_array(dae.J)[:, np.flatnonzero(diff)]
    nd = int(diff.sum())
    d1, d2 = _derivative_inputs(dae, 1), _derivative_inputs(dae, 2)
    z1 = lu.solve(Jd @ rates[diff] + dae.G @ d1(T))
    second = np.zeros_like(rates)
    second[diff] = z1[:nd]
    if nd < diff.size:  # algebraic components: their rates, and their second derivatives by a second solve
        rates = rates.copy()
        rates[~diff] = z1[nd:]
        z2 = lu.solve(Jd @ second[diff] + dae.G @ d2(T))
        second[~diff] = z2[nd:]
    return rates, second


def _accelerations(dae, T, Y, rates, n, I, keep_rates=False):
    """The coordinates' second derivatives at the outputs (:func:`exact_rates`; the inertial flows' rates
    where the DAE carries those flows as states); with ``keep_rates`` also the completed rates."""
    full, second = exact_rates(dae, T, Y, rates)
    acc = second[:n]
    acc[I] = full[n:n + I.size]
    return (full, acc) if keep_rates else acc


def power_function(lin, dae, I):
    """Dissipated ``fᵀ D f`` and supplied ``fᵀ B_e u + μᵀ B_a u`` power at the Radau stages."""
    n, nI = lin.n, I.size
    D, Be, Ba = fast(lin.D), fast(lin.B_e), fast(lin.B_a)
    nu = len(lin.inputs)
    servo = fast(lin.A - lin.R.T) if lin.R is not None else None  # controlled sources' work: μ·(A − R) f

    def dot(a, b):  # column-wise a·b, without the temporary a * b
        return np.einsum("ij,ij->j", a, b)

    def power(ts, Ys, Yd, inputs=None):
        f = Yd[:n]
        if nI:
            f = f.copy()
            f[I] = Ys[n:n + nI]
        mu = Ys[n + nI:]
        u = (dae.u(ts) if inputs is None else inputs)[:nu]
        pd = dot(f, D @ f)
        ps = dot(f, Be @ u) + dot(mu, Ba @ u) if nu else np.zeros(ts.size)
        if servo is not None:
            ps = ps + dot(mu, servo @ f)
        return np.vstack([pd, ps])

    return power


class LinearRadau(Integrator):
    """Radau IIA (order 5) on the stamped sparse DAE; stops at the source ``corners`` it is given.

    Initial values not given (``given``: masks over q and f) start at zero
    (uncharged capacitors, no inductor current) and then move only as impulses
    through the sources would move them
    (:func:`~netdyn.numerics.dae.higherindex.impulse_consistent`); the dissipated
    and supplied energy are integrated with the solution by the Radau stages'
    own quadrature.
    """

    name = "linear"
    carries_work = True

    def __init__(self, lin, max_step=np.inf, corners=(), given=None, sensed=()):
        self.lin, self.max_step, self.corners = lin, max_step, np.asarray(corners, dtype=float)
        self.sensed = sensed  # coordinates whose rate a controlled source reads: see netdyn.numerics.integrators.sensed
        self.dae, self.I, self.solve, self.differential = prepared_dae(lin)
        self.dae.corners = self.corners
        self.given = given

    def integrate(self, t0, t1, q0, f0, t_eval, rtol, atol, progress=None, store=None):
        """The :class:`Trajectory` at ``t_eval``; ``store`` (a :class:`Storage`, optional) keeps only the rows
        it names, in memory or streamed to an HDF5 file, a chunk of output columns at a time."""
        lin, dae, I = self.lin, self.dae, self.I
        n, nI, m = lin.n, I.size, lin.m
        te = t_eval if t_eval[0] <= t0 else np.concatenate([[t0], t_eval])
        y0 = np.zeros(dae.size)
        y0[:n], y0[n:n + nI] = q0, f0[I]
        given = np.zeros(dae.size, dtype=bool)
        if self.given is not None:
            given[:n], given[n:n + nI] = self.given[0], self.given[1][I]
        names = list(lin.names) + [lin.names[i] + "_dot" for i in I] + [f"mu_{k + 1}" for k in range(m)]
        # impulses may run through every algebraic unknown, not only the sources' multipliers: a controlled
        # source (F, H) passes on the impulse of the current it senses (a capacitor across a supply at t0)
        impulsive = np.flatnonzero(~algebraic_split(dae.E0))
        jumps = {}  # the jump's dense pseudo-inverses, shared by the start and the restarts at corners
        y0 = impulse_consistent(dae.E0, dae.J0, dae.hidden, y0, dae.u(t0)[:, 0], impulsive,
                                given=given, labels=names, cache=jumps)
        _, y0 = self.solve(t0, y0[:, None])
        grid = np.union1d(te, self.corners)  # steps stop at source corners, as SPICE's do
        stats = {}
        solve = self.solve
        restart = None
        if len(dae.exprs) > len(lin.inputs):  # derivative inputs: re-impose the hidden constraints at corners
            def restart(tt, eps, y):  # the jump a source's corner causes: by impulses, as at the start
                u = dae.inputs_after(tt, eps)
                y = impulse_consistent(dae.E0, dae.J0, dae.hidden, y, u[:, 0], impulsive, cache=jumps)
                return solve(tt, y[:, None], forcing=dae.G @ u)[1][:, 0]
        if len(self.sensed):  # F, H read a rate of the charges: their atol in amperes
            atol = sensed_atol(atol, len(dae.error_rows), range(n), te)
        if store is not None:
            return self._integrate_stored(store, t0, t_eval, te, grid, y0, rtol, atol, restart, progress, stats)
        # every component differential: the rates at the outputs are the last Radau stage's (exact there)
        R = np.empty((dae.size, grid.size), order="F") if self.differential.all() else None
        if R is not None:
            R[:, 0] = np.nan  # (the start's rates: the solve below)
        T, Y, W = radau(dae, grid, y0[:, 0], rtol=rtol, atol=atol, max_step=self.max_step, progress=progress,
                        stats=stats, power=power_function(lin, dae, I), restart=restart, rates=R)
        if R is not None:
            R = R[:, :T.size]  # (a Ctrl-C returns the output times reached)
        keep = np.isin(T, te)
        if not keep.all():  # steps stopped at source corners between the outputs
            T, Y, W = T[keep], Y[:, keep], W[:, keep]
            R = None if R is None else R[:, keep]
        rates, Y = self._rates(T, Y, R)
        if t_eval[0] > t0:
            T, Y, rates, W = T[1:], Y[:, 1:], rates[:, 1:], W[:, 1:] - W[:, :1]
        if self.differential.all():  # the second derivatives are one more solve over every output: on demand
            acc = lambda: _accelerations(dae, T, Y, rates, n, I)
        else:  # algebraic components' rates (flows among them) come from that solve: now
            rates, acc = _accelerations(dae, T, Y, rates, n, I, keep_rates=True)
        q = Y[:n]
        f = rates[:n].copy() if callable(acc) and nI else rates[:n]  # (the deferred solve reads rates as they are)
        f[I] = Y[n:n + nI]
        stopped = stats.get("interrupted")  # Ctrl-C: the times reached
        return Trajectory(T, q, f, acc, np.zeros((0, T.size)), Y[n + nI:], dissipated=W[0], supplied=W[1],
                          nsteps=stats["nsteps"], message=SUCCESS if stopped is None else interrupted_message(stopped),
                          status=0 if stopped is None else INTERRUPTED)

    def _integrate_stored(self, store, t0, t_eval, te, grid, y0, rtol, atol, restart, progress, stats):
        """:meth:`integrate` with the output columns handed, a chunk at a time, to ``store``'s writer: the
        same operations column by column as the dense path (rates, algebraic components, accelerations where
        kept), so the values are those of the dense path."""
        lin, dae, I = self.lin, self.dae, self.I
        n, nI = lin.n, I.size
        differential = bool(self.differential.all())
        keep = np.isin(grid, te)
        first = int(np.flatnonzero(keep)[0]) if t_eval[0] > t0 else -1  # the start, not an output time
        if first >= 0:
            keep[first] = False
        T_out = grid[keep]
        B = store.columns(2 * dae.size, T_out.size)
        writer = store.writer(T_out.size, B)
        Yb = np.empty((dae.size, B), order="F")
        Rb = np.empty((dae.size, B), order="F") if differential else None
        Tb = np.empty(B)
        filled = [0]
        want_acc = "acc" in store.layout

        def flush():
            c = filled[0]
            if not c:
                return
            Tc, Yc = Tb[:c].copy(), Yb[:, :c].copy(order="F")
            rates, Yc = self._rates(Tc, Yc, None if Rb is None else Rb[:, :c].copy(order="F"))
            acc = None
            if differential:
                if want_acc:
                    acc = _accelerations(dae, Tc, Yc, rates, n, I)
            else:
                rates, acc = _accelerations(dae, Tc, Yc, rates, n, I, keep_rates=True)
            f = rates[:n]
            f[I] = Yc[n:n + nI]
            chunk = {"q": Yc[:n], "f": f, "mu": Yc[n + nI:]}
            if want_acc:
                chunk["acc"] = acc
            writer.write(chunk)
            filled[0] = 0

        def sink(k, y, rate):
            if not keep[k]:
                return
            c = filled[0]
            Tb[c], Yb[:, c] = grid[k], y
            if Rb is not None:
                Rb[:, c] = np.nan if rate is None else rate
            filled[0] = c + 1
            if c + 1 == B:
                flush()

        T, _, W = radau(dae, grid, y0[:, 0], rtol=rtol, atol=atol, max_step=self.max_step, progress=progress,
                        stats=stats, power=power_function(lin, dae, I), restart=restart,
                        rates=True if differential else None, sink=sink)
        flush()
        W = W[:, keep[:W.shape[1]]]
        T = T_out[:writer.k]
        W = W[:, :T.size]
        blocks = writer.blocks()
        missing = lambda block, rows: blocks[block] if block in blocks else Unsaved((rows, T.size), block, store.saved)
        stopped = stats.get("interrupted")
        writer.put("t", T)
        if W.shape[0]:
            writer.put("dissipated", W[0])
            writer.put("supplied", W[1])
        return Trajectory(T, missing("q", n), missing("f", n), missing("acc", n), np.zeros((0, T.size)),
                          missing("mu", lin.m), dissipated=W[0] if W.shape[0] else np.zeros(T.size),
                          supplied=W[1] if W.shape[0] else np.zeros(T.size), nsteps=stats["nsteps"],
                          message=SUCCESS if stopped is None else interrupted_message(stopped),
                          status=0 if stopped is None else INTERRUPTED)

    def _rates(self, T, Y, R=None):
        """``(rates, Y)`` at the outputs: the consistent-rates solve (which also gives algebraic components),
        only over the columns the Radau steps' own end rates ``R`` do not cover (the start, steps taken in
        batches, source corners, where the rates are right limits) when ``R`` is given."""
        if R is None:
            return self.solve(T, Y)
        redo = np.isnan(R[0]) if R.shape[0] else np.zeros(T.size, dtype=bool)
        if self.corners.size:
            redo |= np.isin(T, self.corners)
        if redo.any():
            R[:, redo] = self.solve(T[redo], Y[:, redo])[0]
        return R, Y
