"""Transients of networks with elements given by their own energy or dissipation functions, without a model.

The linear elements are the sparse stamp of :mod:`netdyn.numerics.circuit.stamp`, written as the first-order
DAE ``E ẏ = J y + G u(t)`` of :func:`~netdyn.numerics.circuit.linear.linear_dae` (``y = [q, f_I, μ]``, the
coordinates of ``net.model()``). Each element given by a function (a nonlinear resistor's dissipation
``D(i)``, a nonlinear capacitor's energy ``V(q)``) is its law (:mod:`.templates`, compiled once per law) and
a column of an incidence ``C`` from the coordinates to its port; its Lagrange-row terms are

    Σ_D C_D D'(C_Dᵀ f)  +  Σ_V C_V V'(C_Vᵀ q)

with ``f = q̇`` for the coordinates without inertia, so the whole residual is one sparse product and one
vectorised call per law, and the Newton matrix ``α E − J + C_D diag(D'') C_Dᵀ P_α + C_V diag(V'') C_Vᵀ`` is
scattered into a pattern fixed before the first step (one ``bincount``). The transient is the circuit path's
variable-step BDF (order 1 after a restart, then 2; steps landing on the output times and source corners;
:func:`netdyn.numerics.circuit.nonlinearsim._step_loop`) with a chord Newton on a kept sparse LU. Flows at the
output times are the BDF's own rates there, not a solve.

>>> import numpy as np, netdyn
>>> from netdyn.components.electrical import VoltageSource, Resistor, Capacitor
>>> net = netdyn.Network()
>>> _ = net.add(VoltageSource("V1", "a", "0", 1.0), Resistor("R1", "a", "b", dissipation=lambda i: 500 * i**2),
...             Capacitor("C1", "b", "0", energy=lambda q: q**2 / 2e-6 + 1e12 * q**4 / 4))
>>> sol = netdyn.simulate(net, (0, 20e-3))
>>> sol.method, round(float(sol.voltage("C1")[-1]), 6)   # charged to the source's 1 V
('circuit', 1.0)
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sps
import scipy.sparse.linalg as spla

from netdyn.components.base import ACROSS, DOMAINS, THROUGH, EnergyLaw
from netdyn.errors import ModelError
from netdyn.numerics.circuit.laws.templates import law_of
from netdyn.numerics.circuit.linear import linear_dae
from netdyn.numerics.circuit.linearsim import _values
from netdyn.numerics.circuit.nonlinearsim import CircuitSolution, _bdf, _step_loop, step_targets

__all__ = ["LawCircuit", "try_laws", "simulate_laws", "LawSolution"]


class _Group:
    """The elements of one law: ``C`` (coordinates × elements) maps the coordinates to their port variables,
    ``p`` (parameters × elements) holds their numbers."""

    def __init__(self, law, names, C, p):
        self.law, self.names, self.role = law, names, law.role
        self.C, self.Ct = C.tocsc(), C.T.tocsr()
        self.p = p

    def at(self, y, f):
        """The law's slope and curvature at the port variables (flows for ``D``, displacements for ``V``)."""
        return self.law.slopes(self.Ct @ (f if self.role == "D" else y), self.p)


class LawCircuit:
    """The stamped linear DAE of a network and its elements given by functions, grouped by law."""

    def __init__(self, net, formulation=None):
        from netdyn.graph.assemble import resolve_formulation
        from netdyn.numerics.circuit.stamp import linear_network
        laws = {name: el for name, el in net.elements.items() if isinstance(el, EnergyLaw)}
        if not laws:
            raise ModelError("no element given by its energy or dissipation function")
        domains = [d for d in net.domains if d in DOMAINS]
        forms = resolve_formulation(formulation, domains, net)
        kinds = {d: ACROSS if forms[d] == "node" else THROUGH for d in domains}
        for name, el in laws.items():
            if el.role == "T":
                raise ModelError(f"{name}: a coenergy T*(f) (nonlinear inductor) is not on the stamped path")
            if kinds[el.ports[0].domain] != el.natural_kind:
                raise ModelError(f"{name} is given in {el.natural_kind} variables; the formulation is "
                                 f"{forms[el.ports[0].domain]!r}")
        self.net, self.forms = net, forms
        self.lin = lin = linear_network(net, forms, skip=tuple(laws))
        self.dae, self.I = linear_dae(lin, reduce=False)
        n, nI = lin.n, self.I.size
        self.n, self.nI, self.N = n, nI, self.dae.size
        members = {}
        for name, el in laws.items():
            law, p = law_of(el)
            members.setdefault(id(law), (law, []))[1].append((name, p))
        self.groups = []
        for law, items in members.values():
            rows, cols, data = [], [], []
            for e, (name, _) in enumerate(items):
                for j, c in self.lin.ports[name][0][1].items():
                    rows.append(j)
                    cols.append(e)
                    data.append(c)
            C = sps.csr_array((np.array(data, dtype=float), (rows, cols)), shape=(n, len(items)))
            p = np.array([v for _, v in items], dtype=float).reshape(len(items), -1).T
            self.groups.append(_Group(law, [nm for nm, _ in items], C, p))
        self.group_of = {nm: (g, e) for g in self.groups for e, nm in enumerate(g.names)}
        self._pattern()
        # the error test watches what carries energy: inertial flows, the linear potentials' efforts K q and the
        # nonlinear capacitors' charges
        K = sps.csr_array(lin.K)
        K = K[np.flatnonzero(np.diff(K.indptr) > 0)]
        blocks = [sps.csr_array((np.ones(nI), (np.arange(nI), n + np.arange(nI))), shape=(nI, self.N)),
                  sps.hstack([K, sps.csr_array((K.shape[0], self.N - n))])]
        blocks += [sps.hstack([g.Ct, sps.csr_array((g.Ct.shape[0], self.N - n))]) for g in self.groups
                   if g.role == "V"]
        self.Z = sps.vstack(blocks).tocsr()

    def _pattern(self):
        """The Newton matrix's fixed CSC pattern and, for every law entry, its slot, coefficient and whether it
        scales with the BDF weight (a flow that is ``q̇``)."""
        n, nI, N = self.n, self.nI, self.N
        colmap = np.arange(n)
        colmap[self.I] = n + np.arange(nI)
        free = np.ones(n, dtype=bool)
        free[self.I] = False
        rows, cols, coef, src, scaled = [], [], [], [], []
        offset = 0
        for g in self.groups:
            Cc = g.C
            cnt = np.diff(Cc.indptr)
            sq = cnt * cnt
            elem = np.repeat(np.arange(cnt.size), sq)
            local = np.arange(elem.size) - np.repeat(np.cumsum(sq) - sq, sq)
            ia = Cc.indptr[elem] + local // cnt[elem]
            ib = Cc.indptr[elem] + local % cnt[elem]
            r, c = Cc.indices[ia], Cc.indices[ib]
            rows.append(nI + r)
            flow = g.role == "D"
            cols.append(colmap[c] if flow else c)
            scaled.append(free[c] if flow else np.zeros(c.size, dtype=bool))
            coef.append(Cc.data[ia] * Cc.data[ib])
            src.append(offset + elem)
            offset += cnt.size
        cat = lambda parts, dt: np.concatenate(parts).astype(dt) if parts else np.zeros(0, dtype=dt)
        rows, cols = cat(rows, np.intp), cat(cols, np.intp)
        self._coef, self._src, self._scaled = cat(coef, float), cat(src, np.intp), cat(scaled, bool)
        E, J = sps.coo_array(self.dae.E), sps.coo_array(self.dae.J)
        allr, allc = np.concatenate([E.row, J.row, rows]), np.concatenate([E.col, J.col, cols])
        pattern = sps.csc_array((np.ones(allr.size), (allr, allc)), shape=(N, N))
        pattern.sum_duplicates()
        pattern.sort_indices()
        self.pattern = pattern
        lookup = sps.csc_array((np.arange(1, pattern.nnz + 1, dtype=float), pattern.indices, pattern.indptr),
                               shape=(N, N))
        slot = np.asarray(lookup[allr, allc]).ravel().astype(np.intp) - 1
        ne, nj = E.nnz, J.nnz
        self._E = np.bincount(slot[:ne], E.data, minlength=pattern.nnz)
        self._J = np.bincount(slot[ne:ne + nj], J.data, minlength=pattern.nnz)
        self._slot = slot[ne + nj:]
        self.EJ = sps.hstack([self.dae.E, -self.dae.J]).tocsr()

    def flows(self, y, yd):
        f = yd[:self.n].copy()
        f[self.I] = y[self.n:self.n + self.nI]
        return f

    def terms(self, y, yd):
        """The laws' terms on the Lagrange rows (length n) and their curvatures, element by element."""
        g = np.zeros(self.n)
        f = self.flows(y, yd)
        hs = []
        for grp in self.groups:
            d1, d2 = grp.at(y[:self.n], f)
            g += grp.C @ d1
            hs.append(d2)
        return g, (np.concatenate(hs) if len(hs) > 1 else hs[0])

    def residual(self, tt, y, yd, forcing):
        g, h = self.terms(y, yd)
        r = self.EJ @ np.concatenate([yd, y]) - forcing
        r[self.nI:self.nI + self.n] += g
        return r, h

    def matrix(self, alpha, h):
        """The Newton matrix ``α E − J + ∂(laws)/∂y`` on :attr:`pattern`."""
        w = self._coef * h[self._src]
        w[self._scaled] *= alpha
        A = self.pattern.copy()
        A.data = alpha * self._E - self._J + np.bincount(self._slot, w, minlength=self.pattern.nnz)
        return A


class _Forcing:
    def __init__(self, dae):
        G = np.asarray(dae.G.toarray() if hasattr(dae.G, "toarray") else dae.G, dtype=float)
        self.cols, self.fns = [np.ascontiguousarray(G[:, j]) for j in range(G.shape[1])], list(dae.inputs)
        self.zero = np.zeros(G.shape[0])

    def __call__(self, tt):
        out = self.zero.copy()
        for col, fn in zip(self.cols, self.fns):
            out += col * float(fn(tt))
        return out


class _LawStep:
    """One BDF step attempt (chord Newton on a kept sparse LU) and the accepted history, for ``_step_loop``."""

    name = "laws"

    def __init__(self, c, y, yd, t0, tol, drift=0.02, rate=0.3):
        self.c, self.tol, self.drift, self.rate = c, tol, drift, rate
        self.forcing = _Forcing(c.dae)
        self.hist, self.hyd = [(t0, y.copy())], yd.copy()
        self.scale = np.maximum(np.abs(c.Z @ y), 1e-300)
        self.lu, self.alpha, self.work = None, None, None
        self.factorizations = 0
        # Newton stops when every state and every rate (a flow without inertia is a0 y + past: a change of a
        # charge far below any absolute tolerance is a large change of its current) moved by less than ``ntol``
        # of its own running size, or of 1e-3 of the largest one of its kind
        self.ntol = max(min(0.1 * tol[0], 1e-7), 1e-13)
        self.yscale, self.fscale = np.abs(y), np.abs(yd[:c.n])

    def _factor(self, alpha, h):
        try:
            self.lu = spla.splu(self.c.matrix(alpha, h)).solve
        except RuntimeError:
            self.lu = None
            return False
        self.alpha = alpha
        self.factorizations += 1
        return True

    def newton(self, coeff, pred, t_new, max_iter=30):
        a, ys = coeff
        a0 = a[0]
        past = sum(a[i + 1] * ys[i] for i in range(len(ys)))
        u = self.forcing(t_new)
        y = pred.copy()
        if self.lu is not None and abs(a0 / self.alpha - 1.0) > self.drift:
            self.lu = None
        prev = None
        for it in range(max_iter):
            yd = a0 * y + past
            r, h = self.c.residual(t_new, y, yd, u)
            fresh = self.lu is None
            if fresh and not self._factor(a0, h):
                return y, yd, False
            dy = self.lu(-r)
            size = float(np.max(np.abs(dy)))
            if not fresh and (not np.isfinite(size) or prev is not None and size > self.rate * prev):
                if not self._factor(a0, h):
                    return y, yd, False
                dy = self.lu(-r)
                size = float(np.max(np.abs(dy)))
            if not np.isfinite(size):
                self.lu = None
                return y, yd, False
            rate = size / prev if prev else 1.0
            prev = size
            y = y + dy
            # what is left after this correction: |dy| ρ/(1 − ρ) while it contracts at a rate ρ (IDA's test)
            left = dy * (rate / (1.0 - rate)) if rate < 0.9 and it else dy
            if self._settled(y, left, a0 * y + past, a0, past):
                return y, a0 * y + past, True
        self.lu = None
        return y, a0 * y + past, False

    def _settled(self, y, dy, yd, a0, past):
        n = self.c.n
        ys = np.maximum(self.yscale, np.abs(y))
        fs = np.maximum(self.fscale, np.abs(yd[:n]))
        tol = self.ntol
        roundoff = 64 * np.finfo(float).eps * (np.abs(a0 * y[:n]) + np.abs(past[:n]))  # in a0 y + past
        return bool(np.all(np.abs(dy) <= tol * (ys + 1e-3 * ys.max())) and
                    np.all(np.abs(a0 * dy[:n]) <= tol * (fs + 1e-3 * fs.max()) + roundoff))

    def attempt(self, t_new, order):
        c = self.c
        self.order = order
        rtol, atol = self.tol
        coeff, pred, C, _ = _bdf(self.hist, t_new, order)
        if len(self.hist) == 1:  # one point (after a restart): the displacements along their rates
            pred[:c.n] += (t_new - self.hist[0][0]) * self.hyd[:c.n]
        y_new, yd_new, ok = self.newton(coeff, pred, t_new)
        self.new = (t_new, y_new, yd_new)
        e = 0.0
        if ok and C > 0 and c.Z.shape[0]:
            zn, zp = c.Z @ y_new, c.Z @ pred
            np.maximum(self.scale, np.abs(zn), out=self.scale)
            floor = atol if atol is not None else rtol * 1e-3 * float(np.max(self.scale))
            e = float(np.sqrt(np.mean((C * (zn - zp) / (floor + rtol * self.scale)) ** 2)))
        return ok, e

    def accept(self, restart):
        t_new, y, yd = self.new
        if self.work is not None:  # the step's own polynomial: the points _bdf used
            used = self.hist[-min(self.order, max(len(self.hist) - 1, 1)):][::-1]
            self.work.step([t_new] + [pt[0] for pt in used], np.vstack([y] + [pt[1] for pt in used]))
        np.maximum(self.yscale, np.abs(y), out=self.yscale)
        np.maximum(self.fscale, np.abs(yd[:self.c.n]), out=self.fscale)
        self.hist = (self.hist + [(t_new, y.copy())])[-4:]
        if restart:
            self.hist = self.hist[-1:]
        self.hyd = yd.copy()
        return y, yd


def try_laws(net, formulation=None):
    """A :class:`LawCircuit` when the network is a circuit (electrical elements only) whose nonlinear elements
    are all given by energy or dissipation functions (resistors, capacitors; no diodes, no nonlinear inductors)
    with numbers, else ``None``."""
    if not hasattr(net, "elements") or not hasattr(net, "bodies") or net.bodies:
        return None
    if not any(isinstance(el, EnergyLaw) for el in net.elements.values()):
        return None
    if any(p.domain != "electrical" for el in net.elements.values() for p in el.ports):
        return None  # a circuit's path: a mechanism's conservative oscillations keep the symbolic paths' integrators
    try:
        return LawCircuit(net, formulation)
    except Exception:  # noqa: BLE001 - any reason at all sends the network to the symbolic path
        return None


def _start(c, y, yd, t0, t1, tol):
    """The rates and multipliers at ``t0`` that the given displacements and inertial flows imply: a backward-Euler
    step of 1e-10 of the span, its rates and multipliers (an algebraic start, O(step) off the exact one)."""
    step = _LawStep(c, y, yd, t0, tol)
    dt = 1e-10 * (t1 - t0)
    ok, _ = step.attempt(t0 + dt, 1)
    if not ok:
        return y, yd
    _, y_new, yd_new = step.new
    y, yd = y.copy(), yd_new.copy()
    y[c.n + c.nI:] = y_new[c.n + c.nI:]  # the multipliers; the states stay where they were given
    return y, yd


def simulate_laws(net, t_span, q0=None, f0=None, t_eval=None, rtol=1e-7, atol=None, max_step=np.inf,
                  formulation=None, circuit=None, progress=None, work=True):
    """Integrate a network of linear elements and elements given by functions; returns a :class:`LawSolution`.

    ``work``: the energy dissipated and supplied is integrated with the state on every step's own polynomial
    (:mod:`.work`), so ``sol.power_balance()`` closes to the integrator's tolerance without a symbolic model."""
    from netdyn.numerics.results.trajectory import Trajectory
    c = circuit or LawCircuit(net, formulation)
    n, nI, N = c.n, c.nI, c.N
    t0, t1 = float(t_span[0]), float(t_span[1])
    t_eval, corners, targets = step_targets(c.lin.inputs, t0, t1, t_eval)
    y, yd = np.zeros(N), np.zeros(N)
    q_given, f_given = _values(c.lin.names, q0, "q")[0], _values(c.lin.names, f0, "f")[0]
    y[:n], y[n:n + nI], yd[:n] = q_given, f_given[c.I], f_given
    tol = (rtol, atol)
    y, yd = _start(c, y, yd, t0, t1, tol)
    stepper = _LawStep(c, y, yd, t0, tol)
    if work and c.lin.R is None:
        from netdyn.numerics.circuit.laws.work import LawWork
        stepper.work = LawWork(c, stepper.forcing)
    h = min((t1 - t0) * 1e-6, max_step)
    T, Y, YD, YDD, nsteps = _step_loop(stepper, t0, t1, h, max_step, targets, set(corners), set(t_eval.tolist()),
                                       y, yd, progress)
    keep = np.isin(T, t_eval)
    T, Y, YD, YDD = T[keep], Y[keep], YD[keep], YDD[keep]
    W = None if stepper.work is None else np.asarray(stepper.work.rows)[keep]
    if W is not None:
        W = W - W[:1]  # counted from the first output time
    f = YD[:, :n].copy()
    f[:, c.I] = Y[:, n:n + nI]
    acc = YDD[:, :n].copy()
    acc[:, c.I] = YD[:, n:n + nI]
    tr = Trajectory(T, Y[:, :n].T, f.T, acc.T, np.zeros((0, T.size)), Y[:, n + nI:].T, nsteps=nsteps,
                    dissipated=None if W is None else W[:, 0], supplied=None if W is None else W[:, 1])
    sol = LawSolution(net, c.lin, tr)
    sol.law_circuit = c
    sol.circuit_stepper = f"{stepper.name} ({stepper.factorizations} factorizations)"
    return sol


class LawSolution(CircuitSolution):
    """A :class:`~netdyn.numerics.circuit.nonlinearsim.CircuitSolution` whose elements given by functions are
    read through their own compiled laws (an element's voltage is its law's slope at its port), not through a
    symbolic model."""

    law_circuit = None

    def _port_quantity(self, name, k, which):
        found = self.law_circuit.group_of.get(name) if self.law_circuit is not None else None
        if found is None:
            return super()._port_quantity(name, k, which)
        grp, e = found
        x = self._port(name, 0, self.f if grp.role == "D" else self.q)
        if which == "through":
            return self._port(name, 0, self.f)
        return grp.law.evaluate(x, np.repeat(grp.p[:, e:e + 1], x.size, axis=1))[1]

    def energy(self):
        """Stored energy: the linear elements' (stamp) plus each nonlinear capacitor's ``V(q)``."""
        E = super().energy()
        for grp in (self.law_circuit.groups if self.law_circuit is not None else ()):
            if grp.role == "V":
                x = grp.Ct @ np.asarray(self.q)
                V = grp.law.evaluate(x, grp.p[:, :, None])[0]
                E = E + np.sum(V, axis=0)
        return E
