"""Transients of networks that are linear except for nonlinear dissipators (diodes): stamp + Newton + BDF.

The linear part is the sparse stamp of :mod:`netdyn.stamp` written as the
first-order DAE ``E ẏ = J y + G u(t)`` of :mod:`netdyn.linearsim` (same
coordinates, same multipliers); each nonlinear element adds the gradient of
its own dissipation function, ``Σ C_e ∇D_e(C_eᵀ f)``, to the Lagrange rows,
with ``f`` the flows (``q̇`` for coordinates without inertia). The DAE
``F(t, y, ẏ) = 0`` is integrated as SPICE integrates circuits: variable-step
BDF (order 1 on the first step and after a source corner, then 2), a Newton
iteration per step on a sparse Jacobian ``α/h E − J + ∂N/∂y`` factored per
iteration, steps that land on the output times and the source corners, and a
local error estimate from the predictor–corrector difference on the states
that carry energy (flows with inertia and displacements with a potential).

>>> import numpy as np, netdyn
>>> from netdyn.components.electrical import VoltageSource, Resistor, Capacitor
>>> from netdyn.components.diode import Diode
>>> net = netdyn.Network()
>>> _ = net.add(VoltageSource("V1", "a", "0", 5.0), Resistor("R1", "a", "d", 1e3), Diode("D1", "d", "0"),
...             Capacitor("C1", "d", "0", 1e-6))
>>> sol = netdyn.simulate(net, (0, 10e-3))
>>> sol.method, round(float(sol.voltage("d")[-1]), 4)   # charged to the diode's forward voltage
('circuit', 0.6929)
"""
from __future__ import annotations

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sps
import scipy.sparse.linalg as spla

from netdyn.components.base import ACROSS, DOMAINS, THROUGH
from netdyn.errors import IntegrationError, ModelError
from netdyn.numerics.circuit.linear import linear_dae
from netdyn.numerics.circuit.linearsim import LinearSolution, _corners, _values
from netdyn.graph.gcpause import paused_gc
from netdyn.numerics.circuit.operating_point import port_incidence
from netdyn.numerics.circuit.kernels.circuit_kernel import RESTART_STEP

#: the initial jump (:func:`_jump`): backward-Euler steps of these fractions of the span, the first that
#: converges (no longer than the first step of the run, 1e-6 of the span)
JUMP_STEPS = (1e-10, 1e-9, 1e-8, 1e-7)
#: the ``rtol`` :func:`netdyn.simulate` hands the circuit path when none is given (1e-8 is the linear path's).
#: BDF2's error accumulated over a run is ~1e3 of its local tolerance on the random diode circuits: at 1e-6 six
#: of 23 were 1.1e-3 - 3.8e-3 of peak off converged ngspice, at 1e-7 all within 4.4e-4, for twice the steps
#: (the steps go like rtol^(-1/3); at 1e-8 another factor 2.1 for a further 4x in accuracy)
CIRCUIT_RTOL = 1e-7

__all__ = ["try_circuit", "simulate_circuit", "CircuitSolution", "warm_up", "CIRCUIT_RTOL"]


class _Circuit:
    """The stamped linear DAE and the nonlinear elements of a network, in one formulation."""

    def __init__(self, net, formulation=None, t0=0.0):
        from netdyn.graph.assemble import resolve_formulation
        from netdyn.numerics.circuit.operating_point import _stamped
        self.net = net
        domains = [d for d in net.domains if d in DOMAINS]
        self.forms = resolve_formulation(formulation, domains, net)
        kinds = {d: ACROSS if self.forms[d] == "node" else THROUGH for d in domains}
        self.lin, info, skip = _stamped(net, self.forms, kinds, t0)
        if not skip:
            raise ModelError("no nonlinear element: the linear path takes this network")
        self.dae, self.I = linear_dae(self.lin, reduce=False)
        n, nI = self.lin.n, self.I.size
        self.n, self.nI = n, nI
        self.pos_I = -np.ones(n, dtype=int)
        self.pos_I[self.I] = np.arange(nI)
        groups = {}
        for name in skip:  # elements of one law are evaluated together, vectorized over the elements
            el, law, vals, combos, keys, pk = info[name]
            groups.setdefault(id(law), (law, []))[1].append((name, el, vals, combos))
        self.groups, self.group_types, self.group_names = [], [], []
        for law, members in groups.values():
            self.group_names.append([m[0] for m in members])
            P = len(members[0][3])
            ne = len(members)
            C = port_incidence([m[3] for m in members], n)
            values = [np.array([m[2][k] for m in members]) for k in range(len(members[0][2]))]
            hr = np.repeat(np.arange(ne * P).reshape(ne, P), P, axis=1).ravel()  # block-diagonal Hessian layout
            hc = np.tile(np.arange(ne * P).reshape(ne, P), (1, P)).ravel()
            limiter = getattr(type(members[0][1]), "limit_flows_batch", None)
            named = dict(zip(law.value_names, values))
            self.groups.append((law, C, C.T.tocsr(), values, named, ne, P, hr, hc, limiter))
            self.group_types.append(type(members[0][1]))
        # charge-storing devices (a junction's T*(v)): their charge in closed form, integrated by the same BDF
        self.charge_fns = []
        for (law, C, Ct, values, named, ne, P, hr, hc, limiter), kind in zip(self.groups, self.group_types):
            fn = getattr(kind, "charge_batch", None)
            if law.tports and fn is None:
                raise ModelError(f"{kind.__name__}: a nonlinear energy store without a closed-form charge")
            self.charge_fns.append(fn if law.tports else None)
        self.has_charge = any(fn is not None for fn in self.charge_fns)
        self.C_all = sps.hstack([grp[1] for grp in self.groups]).tocsr() if self.groups else None
        self.dense = self.dae.size <= 60
        if self.dense:
            self.E_dense, self.J_dense = self.dae.E.toarray(), self.dae.J.toarray()  # small circuits: dense LAPACK beats sparse bookkeeping
        # energy-carrying states: inertial flows and displacements with a potential
        # energy-carrying states: inertial flows, and displacements with a potential through the efforts they
        # give, K q (the inductor currents into each node): a node's flux grows with its voltage over the whole
        # run, the flux across an inductor is the small difference of two (random diode seed 24: 8e-3 of peak)
        K = sps.csr_array(self.lin.K)
        K_rows = np.flatnonzero(np.diff(K.indptr) > 0)
        self.K_err = sps.csr_array(K[K_rows])
        self.K_diag = float(np.max(np.abs(K.diagonal()), initial=0.0))
        self.error_rows = (n + np.arange(nI)).astype(int)

    def flows(self, y, yd):
        f = yd[:self.n].copy()
        f[self.I] = y[self.n:self.n + self.nI]
        return f

    def charges(self, f):
        """The devices' charges ``∂T*/∂f`` (flat, group by group, device by port) and their capacitances (device ×
        port × port, flat): the layout of :meth:`netdyn.numerics.circuit.kernels.newton_matrix.NewtonMatrix.devices`."""
        qs, cs = [], []
        for (law, C, Ct, values, named, ne, P, *_), fn in zip(self.groups, self.charge_fns):
            out = fn(named, (Ct @ f).reshape(ne, P)) if fn is not None else None
            if out is None:
                qs.append(np.zeros(ne * P))
                cs.append(np.zeros(ne * P * P))
            else:
                qs.append(out[0].ravel())
                cs.append(out[1].ravel())
        return np.concatenate(qs), np.concatenate(cs)

    def nonlinear(self, f, t, jacobian=True, charge=None):
        """Σ C ∇D(Cᵀ f) on the Lagrange rows (length n) and its Jacobian in f (sparse n x n); with ``charge =
        (α, past)`` the devices' BDF charge current ``C (α Q(Cᵀ f) + past)`` and its Jacobian are added."""
        g = np.zeros(self.n)
        if jacobian:
            Jn = np.zeros((self.n, self.n)) if self.dense else sps.csr_array((self.n, self.n))
        else:
            Jn = None
        if charge is not None:
            Q, Cq = self.charges(f)
            g += self.C_all @ (charge[0] * Q + charge[1])
        at = 0
        for law, C, Ct, values, named, ne, P, hr, hc, limiter in self.groups:
            F = (Ct @ f).reshape(ne, P)
            gD, hD = law.batch(values, F, t)
            if charge is not None:
                hD = hD + charge[0] * Cq[at:at + ne * P * P].reshape(ne, P, P).transpose(1, 2, 0)
            at += ne * P * P
            g += C @ gD.ravel()
            if jacobian:
                H = sps.csr_array((hD.transpose(2, 0, 1).reshape(ne, P * P).ravel(), (hr, hc)), shape=(ne * P, ne * P))
                part = C @ H @ Ct
                Jn = Jn + (part.toarray() if self.dense else part)
        return g, Jn


@paused_gc()
def try_circuit(net, formulation=None):
    """A :class:`_Circuit` when the network is linear except for semiconductor devices (diodes) and other
    nonlinear dissipators, else ``None``."""
    if not hasattr(net, "elements") or not hasattr(net, "bodies") or net.bodies:
        return None  # a network of one-dimensional elements only (not a model, a bond graph or a linkage)
    if not any(getattr(el, "prefers_kind", None) for el in net.elements.values()):
        return None  # semiconductor devices only: other nonlinear networks keep the symbolic path's energy work
    try:
        return _Circuit(net, formulation)
    except Exception:  # noqa: BLE001 - any reason at all sends the network to the symbolic path
        return None


@paused_gc()
def simulate_circuit(net, t_span, q0=None, f0=None, t_eval=None, rtol=1e-6, atol=None, max_step=np.inf,
                     formulation=None, circuit=None, progress=None, reference=False, compiled=None,
                     charge_error=True, work=True):
    """Integrate on the circuit path; returns a :class:`CircuitSolution`.

    By default (``compiled=None``: when the devices offer a port table and the Newton matrix has a narrow
    band after renumbering) every step attempt is one compiled call
    (:func:`netdyn.numerics.circuit.kernels.circuit_kernel.bdf_step`: predictor, Newton with the devices evaluated in a
    loop, a banded LU kept across iterations and steps while Newton converges fast with it, the error
    estimate); ``compiled=False`` runs the same iteration in numpy, each Newton iteration evaluating the
    devices in one vectorised call and scattering their Hessians into a fixed sparse pattern
    (:class:`~netdyn.numerics.circuit.kernels.newton_matrix.NewtonMatrix`) with a kept sparse LU (a chord iteration).
    ``reference=True`` runs the plain path instead: the devices' lambdified laws, sparse products and a
    fresh factorisation every iteration (the check of the fast ones). ``charge_error``: the local error
    test watches the junction charges beside the states (SPICE's charge-based truncation error).

    ``work``: every path (compiled, numpy, reference) carries the energy each element dissipates or
    supplies (and each junction charge stores) with the integration, by Gauss-Legendre on every accepted
    step's own BDF interpolant (:mod:`netdyn.numerics.circuit.energy.circuit_work`), so ``power_balance`` closes to the
    integrator's tolerance whatever the output times; ``False`` (or a device without a port table) leaves
    the balance to a quadrature over the output times."""
    c = circuit or _Circuit(net, formulation, float(t_span[0]))
    dae, n, nI = c.dae, c.n, c.nI
    N = dae.size
    t0, t1 = float(t_span[0]), float(t_span[1])
    t_eval, corners, targets = step_targets(c.lin.inputs, t0, t1, t_eval)
    t_eval_set, corner_set = set(t_eval.tolist()), set(corners)
    y = np.zeros(N)
    q_given, f_given = _values(c.lin.names, q0, "q")[0], _values(c.lin.names, f0, "f")[0]
    y[:n] = q_given
    y[n:n + nI] = f_given[c.I]
    yd = np.zeros(N)
    yd[:n] = f_given  # the rates of the displacements: the given flows
    # the absolute part of the error test is relative to the largest state seen so far, and at least to the
    # sources' size (a circuit at rest driven by a SIN would otherwise start with no absolute tolerance at all)
    drive = float(np.max(np.abs(dae.forcing(np.linspace(t0, t1, 257))), initial=0.0))
    tol = (rtol, atol, drive, charge_error)
    y, yd = _jump(c, y, yd, t0, t1, tol)
    stepper = None
    if not reference and compiled is not False:
        stepper = _CompiledStep.of(c, y, yd, t0, tol)
        if stepper is None and compiled:
            raise ModelError("compiled=True: the circuit's devices have no port table or its band is too wide")
    if stepper is None:
        stepper = _PyStep(c, y, yd, t0, tol, reference)
    if work and all(hasattr(kind, "port_table") for kind in c.group_types):
        from netdyn.numerics.circuit.energy.circuit_work import StepWork
        stepper.work = StepWork(c, t0, yd)
    h = min((t1 - t0) * 1e-6, max_step)
    run = getattr(stepper, "run", None) if progress is None else None
    done = run(t0, t1, h, max_step, targets, corner_set, t_eval_set) if run is not None else None
    if done is not None:  # the whole loop in one compiled call
        T, Y, YD, YDD, nsteps = done
    else:
        T, Y, YD, YDD, nsteps = _step_loop(stepper, t0, t1, h, max_step, targets, corner_set, t_eval_set, y, yd, progress)
    keep = np.isin(T, t_eval)
    W = np.asarray(stepper.work.rows) if stepper.work is not None else None
    if not keep.all():
        T, Y, YD, YDD = T[keep], Y[keep], YD[keep], YDD[keep]  # time x state: contiguous rows, transposed at the end
        if W is not None:
            W = W[keep] - W[keep][:1]  # counted from the first output time
    f = YD[:, :n].copy()
    f[:, c.I] = Y[:, n:n + nI]
    acc = np.empty_like(f)
    free = np.setdiff1d(np.arange(n), c.I)  # flows without inertia: their rates from the steps' own BDF
    acc[:, free] = YDD[:, free]  # polynomials of the rates (circuit_kernel.rate_of_rates)
    acc[:, c.I] = YD[:, n:n + nI]
    q, f, acc, mu = Y[:, :n].T, f.T, acc.T, Y[:, n + nI:].T
    from netdyn.numerics.results.trajectory import Trajectory
    totals, per = (None, None)
    if W is not None:
        from netdyn.numerics.circuit.energy.circuit_work import split
        totals, per = split(stepper.work.channels, W)
    sol = CircuitSolution(net, c.lin, Trajectory(T, q, f, acc, np.zeros((0, T.size)), mu, nsteps=nsteps,
                                                 dissipated=None if W is None else totals["dissipated"],
                                                 supplied=None if W is None else totals["supplied"]))
    sol.element_work = per
    sol.junction_energy = None if W is None else totals["junction"]
    sol.circuit_stepper = stepper.name + ("" if done is None else " loop")
    return sol


def step_targets(inputs, t0, t1, t_eval):
    """``(t_eval, corners, targets)``: the output times (1001 by default), the sources' corners inside the span
    and every time a step must land on (outputs, corners, ``t1``), sorted."""
    t_eval = np.linspace(t0, t1, 1001) if t_eval is None else np.asarray(t_eval, dtype=float)
    inside = t_eval[(t_eval > t0) & (t_eval <= t1)]
    # (a corner a few ulps from an output time or from t0 — a restart at an event beside a source's corner —
    # would leave a step of a few ulps: it is moved onto the time, or dropped at t0)
    near = max(1e-12 * (t1 - t0), 64 * np.finfo(float).eps * max(abs(t0), abs(t1)))
    corners = [x for x in _snapped([float(x) for x in _corners(inputs, t0, t1)], inside, near) if x - t0 > near]
    return t_eval, corners, np.union1d(inside, corners + [t1])


def _snapped(corners, times, tol):
    """The source corners, each moved onto an output time within ``tol`` of it: a corner computed as
    ``6.000000000000001e-4`` beside the output ``6e-4`` would otherwise leave a step of 1e-19 between the two,
    whose rates of rates are roundoff over 1e-19."""
    if not len(times):
        return corners
    idx = np.clip(np.searchsorted(times, corners), 1, len(times) - 1) if len(times) > 1 else np.zeros(len(corners), int)
    out = []
    for c, j in zip(corners, np.atleast_1d(idx)):
        near = min((times[k] for k in (j - 1, j) if 0 <= k < len(times)), key=lambda x: abs(x - c))
        out.append(float(near) if abs(near - c) <= tol else c)
    return out


def _step_loop(stepper, t0, t1, h, max_step, targets, corner_set, t_eval_set, y, yd, progress):
    """The step-size control of the circuit path around ``stepper.attempt`` / ``stepper.accept``: steps land
    on every target (output times, source corners), BDF order 1 after a corner. Returns the times, states
    and rates at ``t0`` and the output times (time x state) and the number of steps."""
    out_t, out_y, out_yd, out_ydd = [t0], [y.copy()], [yd.copy()], [np.zeros_like(yd)]
    from netdyn.numerics.circuit.kernels.circuit_kernel import rate_of_rates
    N = y.size
    ht, hr, nh = np.zeros(4), np.zeros((4, N)), 1  # the rates at the BDF history's points (rate_of_rates)
    ht[0], hr[0] = t0, yd
    tw, w0, w1, w2, ydd = np.zeros(3), np.zeros(3), np.zeros(3), np.zeros(3), np.zeros(N)
    k, tt, order, nsteps = 0, t0, 1, 0
    while k < targets.size:
        target = targets[k]
        hit = tt + h >= target - 1e-12 * (t1 - t0)
        h_try = target - tt if hit else h
        t_new = tt + h_try
        ok, e = stepper.attempt(t_new, order)
        grow = 0.9 * (1.0 / max(e, 1e-10)) ** (1 / (order + 1))
        if not ok or e > 1.0:
            h = h_try * (0.25 if not ok else max(0.1, min(0.9, grow)))
            if h < 1e-14 * (t1 - t0):
                raise _too_small(tt, ok)
            continue
        tt = t_new
        nsteps += 1
        # restart after a source corner (no history across the kink) and after the first step (it jumps from an
        # initial state the sources' loops may not allow onto one they do: no history across the jump)
        restart = hit and target in corner_set or nsteps == 1
        y, yd = stepper.accept(restart)
        rate_of_rates(t_new, yd, ht, hr, nh, order, tw, w0, w1, w2, ydd)
        if nsteps == 1:
            out_ydd[0] = ydd.copy()
        if restart:
            nh = 0
        elif nh == 4:
            ht[:3], hr[:3], nh = ht[1:].copy(), hr[1:].copy(), 3
        ht[nh], hr[nh] = t_new, yd
        nh += 1
        h_next = min(h_try * min(2.0, max(0.2, grow)), max_step)
        h = max(h, h_next) if hit else h_next  # a step cut short by a target does not shrink the next one
        h = min(h, max_step)
        if restart:  # the step after a corner has no error estimate (no history): a tenth of the last one
            h = RESTART_STEP * min(h, h_try)
        order = 1 if restart else 2
        if hit:
            if target in t_eval_set:
                if stepper.work is not None:
                    stepper.work.record()
                out_t.append(tt)
                out_y.append(y)  # the steppers hand out arrays of their own
                out_yd.append(yd)
                out_ydd.append(ydd.copy())
            k += 1
            if progress is not None:
                progress(tt)
    return np.array(out_t), np.array(out_y), np.array(out_yd), np.array(out_ydd), nsteps


def _jump(c, y, yd, t0, t1, tol):
    """The state the circuit jumps to at ``t0`` when the given one breaks a loop of voltage sources and
    capacitors (or a cut-set of current sources and inductors): one backward-Euler step of ``JUMP_STEPS`` of
    the span from it, whose limit as the step shrinks is the impulse-consistent state (the resistive devices
    carry no impulse; a junction's charge takes its share of it), then a second one from there, whose
    multipliers and rates are the finite ones after the impulse. The start and the work then count from the
    state the circuit actually runs from, as on the linear path. Returns the given state unchanged when Newton
    fails (the chord iteration and then the plain one)."""
    for fraction in JUMP_STEPS:  # the shortest step whose Newton converges
        dt = fraction * (t1 - t0)
        for reference in (False, True):  # on so short a step either Newton may stall at roundoff: the other one
            step = _PyStep(c, y, yd, t0, tol, reference)
            for k in (1, 2):
                ok, _ = step.attempt(t0 + k * dt, 1)
                if not ok:
                    break
                step.accept(True)
            if ok:
                _, y_new, yd_new = step.new
                return y_new.copy(), yd_new.copy()
    return y, yd


def _too_small(tt, ok):
    return IntegrationError(f"the circuit step became too small near t = {tt:.6g} "
                            f"({'Newton did not converge' if not ok else 'the error test keeps failing'})")


def _forcing(dae):
    """``t ↦ G u(t)`` for one time, without the vectorised path's stacking (it runs once per step attempt)."""
    G = np.asarray(dae.G.toarray() if hasattr(dae.G, "toarray") else dae.G, dtype=float)
    fns = list(dae.inputs)
    if not fns:
        zero = np.zeros(G.shape[0])
        return lambda tt: zero
    cols = [np.ascontiguousarray(G[:, j]) for j in range(len(fns))]
    if len(fns) == 1:
        col, fn = cols[0], fns[0]
        return lambda tt: col * float(fn(tt))
    return lambda tt: G @ np.array([float(fn(tt)) for fn in fns])


def _error(C, new, pred, scale, rtol, floor):
    """The local error over its tolerance (RMS) of ``C (new − pred)``, the tolerance ``floor + rtol · scale``
    with ``scale`` the running maxima of |x| (updated here)."""
    np.maximum(scale, np.abs(new), out=scale)
    return float(np.sqrt(np.mean((C * (new - pred) / (floor + rtol * scale)) ** 2)))


class _PyStep:
    """A step attempt in numpy (``reference``: :func:`_newton`; else :class:`_Chord`) and its history."""

    def __init__(self, c, y, yd, t0, tol, reference):
        self.c, self.tol = c, tol
        self.name = "reference" if reference else "numpy"
        if reference:
            E, J = c.dae.E.tocsc(), c.dae.J.tocsc()
            self.newton = lambda coeff, pred, t_new, qpast: _newton(c, E, J, coeff, pred, t_new, qpast)
        else:
            from netdyn.numerics.circuit.kernels.newton_matrix import NewtonMatrix
            self.newton = _Chord(c, NewtonMatrix(c)).solve
        err = c.error_rows
        self.scale = np.maximum(np.abs(y[err]), 1e-30)
        self.kscale = np.maximum(np.abs(c.K_err @ y[:c.n]), 1e-30)
        self.charge_at = (lambda yy, yyd: c.charges(c.flows(yy, yyd))[0]) if c.has_charge else (lambda yy, yyd: None)
        self.hist = [(t0, y.copy())]  # (t, y) of the last accepted points, newest last
        self.hyd = yd.copy()  # the rates at the newest of them
        self.qhist = [self.charge_at(y, yd)]  # the devices' charges at those points
        self.qscale = np.abs(self.qhist[0]) if c.has_charge else None
        self.qmask = _charged_ports(c) if c.has_charge else None
        if c.has_charge:  # each port's own capacitance in the (device, port, port) layout of the capacitances
            diag, at = [], 0
            for (law, C, Ct, values, named, ne, P, *_) in c.groups:
                e, a = np.divmod(np.arange(ne * P), P)
                diag.append(at + e * P * P + a * (P + 1))
                at += ne * P * P
            self.qcap = np.concatenate(diag)[self.qmask]
        self.work = None

    def attempt(self, t_new, order):
        c = self.c
        self.order = order
        rtol, atol, drive, charge_error = self.tol
        coeff, pred, C, w = _bdf(self.hist, t_new, order)
        if len(self.hist) == 1:  # one point (after a restart): the displacements along their rates, so the flows
            pred[:c.n] += (t_new - self.hist[0][0]) * self.hyd[:c.n]  # without inertia do not start at zero
        qpast = None
        if c.has_charge:  # the BDF history of the device charges: Σ a_i Q_i over the same points as y's
            a = coeff[0]
            qpast = sum(a[i + 1] * q for i, q in enumerate(reversed(self.qhist[-(len(a) - 1):])))
        y_new, yd_new, ok = self.newton(coeff, pred, t_new, qpast)
        self.new = (t_new, y_new, yd_new)
        e = 0.0
        err = c.error_rows
        if ok and (err.size or c.K_err.shape[0]) and C > 0:
            floor = atol if atol is not None else \
                rtol * 1e-3 * max(np.max(np.maximum(self.scale, np.abs(y_new[err])), initial=0.0), drive, 1e-30)
            e = _error(C, y_new[err], pred[err], self.scale, rtol, floor) ** 2 * err.size if err.size else 0.0
            if c.K_err.shape[0]:  # the potentials' efforts: floor rtol 1e-3 of the largest, at least the
                kn, kp = c.K_err @ y_new[:c.n], c.K_err @ pred[:c.n]  # flows' floor over the step through K
                kfloor = atol if atol is not None else max(rtol * 1e-3 * max(np.max(self.kscale), np.max(np.abs(kn))),
                                                           floor * (t_new - self.hist[-1][0]) * c.K_diag)
                e += _error(C, kn, kp, self.kscale, rtol, kfloor) ** 2 * kn.size
            e = float(np.sqrt(e / (err.size + c.K_err.shape[0])))
            if c.has_charge and charge_error:
                # junction charges: the floor is rtol 1e-3 of the largest charge seen, at least the voltages'
                # floor times the junction's capacitance
                q_new, caps = c.charges(c.flows(y_new, yd_new))
                q_pred = sum(wj * q for wj, q in zip(w, reversed(self.qhist[-len(w):])))
                m, qs = self.qmask, self.qscale
                np.maximum(qs, np.abs(q_new), out=qs)
                qfloor = np.maximum(rtol * 1e-3 * qs.max(), caps[self.qcap] * floor)
                e = max(e, _error(C, q_new[m], q_pred[m], qs[m], rtol, qfloor))
        return ok, e

    def accept(self, restart):
        t_new, y, yd = self.new
        if self.work is not None:
            used = self.hist[-min(self.order, max(len(self.hist) - 1, 1)):][::-1]  # the step's order (_bdf)
            self.work.step([t_new] + [p[0] for p in used], np.vstack([y] + [p[1] for p in used]), yd)
        self.hist = (self.hist + [(t_new, y.copy())])[-4:]
        self.hyd = yd.copy()
        self.qhist = (self.qhist + [self.charge_at(y, yd)])[-4:]
        if restart:
            self.hist, self.qhist = self.hist[-1:], self.qhist[-1:]
        return y, yd


def _charged_ports(c):
    """Which entries of :meth:`_Circuit.charges` belong to a port that stores charge (a junction with CJO or TT)."""
    masks = []
    for (law, C, Ct, values, named, ne, P, *_), fn in zip(c.groups, c.charge_fns):
        m = np.zeros((ne, P), dtype=bool)
        if fn is not None:
            m[:, -1] = True
        masks.append(m.ravel())
    return np.concatenate(masks)


class _CompiledStep:
    """A step attempt as one call of :func:`netdyn.numerics.circuit.kernels.circuit_kernel.bdf_step`, its history in arrays."""

    name = "compiled"

    @classmethod
    def of(cls, c, y, yd, t0, tol):
        """The compiled stepper of circuit ``c``, or ``None`` when a device has no port table or the band is
        too wide."""
        if not all(hasattr(kind, "port_table") for kind in c.group_types):
            return None
        from netdyn.numerics.circuit.kernels.newton_matrix import BandLayout, NewtonMatrix
        band = BandLayout.of(NewtonMatrix(c))
        if band is None:
            return None
        return cls(c, band, y, yd, t0, tol)

    def __init__(self, c, band, y, yd, t0, tol):
        from netdyn.numerics.circuit.kernels import circuit_kernel
        self.kernel = circuit_kernel.bdf_step
        self.c, self.band = c, band
        n, nI = c.n, c.nI
        N = c.dae.size
        self.rtol, atol, self.drive, self.charge_error = tol
        self.atol = -1.0 if atol is None else float(atol)
        self.forcing = _forcing(c.dae)
        fsrc = np.arange(n)
        fsrc[c.I] = n + np.arange(nI)
        finert = np.zeros(n, dtype=np.bool_)
        finert[c.I] = True
        E, J = sps.csr_array(c.dae.E), sps.csr_array(c.dae.J)
        Ct = sps.csr_array(c.C_all.T)
        tables = [kind.port_table(grp[4], grp[6]) for grp, kind in zip(c.groups, c.group_types)]
        table = np.ascontiguousarray(np.vstack(tables))
        K = table.shape[0]
        ints = lambda a: np.ascontiguousarray(a, dtype=np.int64)
        self.static = (n, nI, ints(fsrc), finert, ints(E.indptr), ints(E.indices), E.data.astype(float),
                       ints(J.indptr), ints(J.indices), J.data.astype(float),
                       ints(Ct.indptr), ints(Ct.indices), Ct.data.astype(float), table, bool(c.has_charge),
                       ints(band.base_pos), band.base_E, band.base_J, ints(band.nw_port), ints(band.nw_pos),
                       band.nw_coef.astype(float), band.nw_alpha.astype(np.bool_), band.kl, band.ku,
                       ints(band.rperm), ints(band.cperm), ints(c.K_err.indptr), ints(c.K_err.indices),
                       c.K_err.data.astype(float), c.K_diag)
        self.ab = np.zeros(band.shape)
        self.ipiv = np.zeros(N, dtype=np.int64)
        self.lu_state = np.zeros(2)
        self.stats = np.zeros(2, dtype=np.int64)
        self.err_rows = ints(c.error_rows)
        self.scale = np.maximum(np.concatenate([np.abs(y[self.err_rows]), np.abs(c.K_err @ y[:n])]), 1e-30)
        self.ht, self.hy, self.hq = np.zeros(4), np.zeros((4, N)), np.zeros((4, K))
        self.ht[0], self.hy[0] = t0, y
        self.yd0 = yd.copy()
        self.hyd = yd.copy()  # the rates at the newest accepted point (the predictor after a restart)
        if c.has_charge:
            self.hq[0] = c.charges(c.flows(y, yd))[0]
        self.qscale = np.abs(self.hq[0]).copy()
        self.nh = 1
        self.y, self.yd, self.qn = np.zeros(N), np.zeros(N), np.zeros(K)
        self.t_new, self.order = t0, 1
        self.work = None

    def attempt(self, t_new, order):
        self.t_new, self.order = t_new, order
        ok, e = self.kernel(t_new, order, self.ht, self.hy, self.hq, self.nh, self.hyd, self.forcing(t_new),
                            *self.static,
                            self.ab, self.ipiv, self.lu_state, 0.02, 0.2, self.err_rows, self.scale, self.qscale,
                            self.rtol, self.atol, self.drive, self.charge_error, self.y, self.yd, self.qn, self.stats)
        return ok, e

    def run(self, t0, t1, h, max_step, targets, corner_set, t_eval_set):
        """The whole step loop in one compiled call (:func:`~netdyn.numerics.circuit.kernels.circuit_kernel.bdf_run`), or
        ``None`` when a source's waveform has no compiled program."""
        from netdyn.numerics.circuit.kernels import circuit_kernel
        from netdyn.numerics.circuit.energy.circuit_work import no_program
        from netdyn.numerics.circuit.kernels.source_program import compile_sources
        dae = self.c.dae
        prog = compile_sources(dae.exprs)
        if prog is None:
            return None
        G = np.ascontiguousarray(dae.G.toarray() if hasattr(dae.G, "toarray") else dae.G, dtype=float)
        is_corner = np.array([x in corner_set for x in targets.tolist()], dtype=np.bool_)
        is_output = np.array([x in t_eval_set for x in targets.tolist()], dtype=np.bool_)
        N = self.hy.shape[1]
        m = int(is_output.sum()) + 1
        out_t, out_y, out_yd, out_ydd = np.empty(m), np.empty((m, N)), np.empty((m, N)), np.zeros((m, N))
        out_t[0], out_y[0] = t0, self.hy[0]
        out_yd[0] = self.yd0
        work = self.work
        nch = len(work.channels) if work is not None else 0
        out_w = np.zeros((m, nch))
        W = np.zeros(nch)
        wprog = work.program if work is not None else no_program()
        status, tt, nout, nsteps = circuit_kernel.bdf_run(
            t0, t1, h, float(max_step), np.ascontiguousarray(targets, dtype=float), is_corner, is_output, *prog, G,
            self.ht, self.hy, self.hq, self.hyd, *self.static, self.ab, self.ipiv, self.lu_state, 0.02, 0.2, self.err_rows,
            self.scale, self.qscale, self.rtol, self.atol, self.drive, self.charge_error, out_t[1:], out_y[1:],
            out_yd[1:], out_ydd, self.stats, work is not None, wprog, W, out_w[1:])
        if status:
            raise _too_small(tt, status != 1)
        if work is not None:
            work.rows = out_w[:nout + 1]
        return out_t[:nout + 1], out_y[:nout + 1], out_yd[:nout + 1], out_ydd[:nout + 1], nsteps

    def accept(self, restart):
        if self.work is not None:
            npts = min(self.order, max(self.nh - 1, 1)) + 1
            idx = [self.nh - j for j in range(1, npts)]
            self.work.step(np.r_[self.t_new, self.ht[idx]], np.vstack([self.y[None, :], self.hy[idx]]), self.yd)
        if restart:
            self.nh = 0
        elif self.nh == 4:
            self.ht[:3], self.hy[:3], self.hq[:3] = self.ht[1:].copy(), self.hy[1:].copy(), self.hq[1:].copy()
            self.nh = 3
        self.ht[self.nh], self.hy[self.nh], self.hq[self.nh] = self.t_new, self.y, self.qn
        self.nh += 1
        self.hyd[:] = self.yd
        return self.y.copy(), self.yd.copy()


def _bdf(hist, t_new, order):
    """Variable-step BDF weights (``ẏ_new = a0 y_new + Σ a_i y_i``), the predictor (the polynomial through
    the last ``order + 1`` points, extrapolated) and the factor turning corrector − predictor into the local
    error (``h / (t_new − t_oldest)``; 0 when there is not enough history to tell) and the predictor's
    weights (newest point first)."""
    order = min(order, max(len(hist) - 1, 1))  # one point more than the formula: the error estimate
    ts = [t_new] + [p[0] for p in reversed(hist[-order:])]
    ys = [p[1] for p in reversed(hist[-order:])]
    a = np.zeros(len(ts))
    for j in range(len(ts)):
        others = [ts[i] for i in range(len(ts)) if i != j]
        denom = np.prod([ts[j] - o for o in others])
        if j == 0:
            a[j] = sum(1.0 / (t_new - o) for o in others)
        else:
            a[j] = np.prod([t_new - o for o in others if o != t_new]) / denom
    pts = list(reversed(hist[-(order + 1):]))
    pred = np.zeros_like(ys[0])
    ws = []
    for j, (tj, yj) in enumerate(pts):
        w = np.prod([(t_new - pts[i][0]) / (tj - pts[i][0]) for i in range(len(pts)) if i != j])
        ws.append(w)
        pred = pred + w * yj
    C = (t_new - pts[0][0]) / (t_new - pts[-1][0]) if len(pts) == order + 1 else 0.0
    return (a, ys), pred, C, ws


def _newton(c, E, J, coeff, pred, t_new, qpast=None, max_iter=30):
    a, ys = coeff
    dae, n = c.dae, c.n
    past = sum(a[i + 1] * ys[i] for i in range(len(ys)))
    g_u = dae.forcing(t_new)[:, 0]
    y = pred.copy()
    nI = c.nI
    colmap = np.arange(n)  # ∂f/∂y: a0 on displacement columns (flows without inertia), 1 on inertial flows
    factor = np.full(n, a[0])
    colmap[c.I] = n + np.arange(nI)
    factor[c.I] = 1.0
    if c.dense:
        base = a[0] * c.E_dense - c.J_dense
    else:
        base = (a[0] * E - J).tocsc()
    for it in range(max_iter):
        yd = a[0] * y + past
        f = c.flows(y, yd)
        g, Jn = c.nonlinear(f, t_new, charge=(a[0], qpast) if qpast is not None else None)
        r = E @ yd - J @ y - g_u
        r[nI:nI + n] += g
        if c.dense:
            M = base.copy()
            M[nI:nI + n][:, colmap] += Jn * factor[None, :]
            try:
                dy = sla.lu_solve(sla.lu_factor(M, check_finite=False), -r, check_finite=False)
            except (sla.LinAlgError, ValueError):
                return y, yd, False
        else:
            Jc = Jn.tocoo()
            Jy = sps.csr_array((Jc.data * factor[Jc.col], (Jc.row + nI, colmap[Jc.col])), shape=base.shape)
            try:
                dy = spla.splu((base + Jy).tocsc()).solve(-r)
            except RuntimeError:
                return y, yd, False
        if not np.all(np.isfinite(dy)):
            return y, yd, False
        y_old = y
        dy = _limit(c, y, dy, a[0], past)
        y = y + dy
        if (np.max(np.abs(dy)) <= 1e-10 * (1.0 + np.max(np.abs(y))) or
                (it and np.linalg.norm(dy) <= 1e-12 * (1.0 + np.linalg.norm(y)))) and \
                _ports_settled(c, y_old, dy, a[0], past):
            yd = a[0] * y + past
            return y, yd, True
    return y, a[0] * y + past, False


class _Chord:
    """Newton on one BDF step with the factorisation kept while it serves: refactored when the BDF weight
    moved by more than ``drift`` since the last factorisation or when an iteration contracts by less than
    ``rate`` (the Jacobian went stale); the iteration stops on the same test as :func:`_newton`."""

    def __init__(self, c, nm, drift=0.02, rate=0.2):
        self.c, self.nm, self.drift, self.rate = c, nm, drift, rate
        self.lu, self.alpha = None, None
        self.factorizations = 0
        self.dense = c.dae.size <= 60
        if self.dense:
            P = nm.pattern
            self._dr = P.indices
            self._dc = np.repeat(np.arange(P.shape[1]), np.diff(P.indptr))
        self.EJ = sps.hstack([c.dae.E, -c.dae.J]).tocsr()  # E ẏ − J y in one product
        if self.dense:
            self.EJ = self.EJ.toarray()

    def factor(self, alpha, h):
        data = self.nm.data(alpha, h)
        try:
            if self.dense:
                A = np.zeros((self.nm.N, self.nm.N))
                A[self._dr, self._dc] = data
                lu = sla.lu_factor(A, check_finite=False)
                self.lu = lambda b: sla.lu_solve(lu, b, check_finite=False)
            else:
                A = self.nm.pattern.copy()
                A.data = data
                self.lu = spla.splu(A).solve
        except (RuntimeError, sla.LinAlgError, ValueError):
            self.lu = None
            return False
        self.alpha = alpha
        self.factorizations += 1
        return True

    def solve(self, coeff, pred, t_new, qpast=None, max_iter=30):
        a, ys = coeff
        c, n, nI = self.c, self.c.n, self.c.nI
        a0 = a[0]
        past = sum(a[i + 1] * ys[i] for i in range(len(ys)))
        g_u = c.dae.forcing(t_new)[:, 0]
        y = pred.copy()
        if self.lu is None or abs(a0 / self.alpha - 1.0) > self.drift:
            self.lu = None
        prev = None
        for it in range(max_iter):
            yd = a0 * y + past
            f = yd[:n].copy()
            f[c.I] = y[n:n + nI]
            g, h, ports = self.nm.devices(f, t_new, ports=True)
            if qpast is not None:
                Q, Cq = c.charges(f)
                g = g + c.C_all @ (a0 * Q + qpast)
                h = h + a0 * Cq
            r = self.EJ @ np.concatenate([yd, y]) - g_u
            r[nI:nI + n] += g
            fresh = False
            if self.lu is None:
                if not self.factor(a0, h):
                    return y, yd, False
                fresh = True
            dy = self.lu(-r)
            size = np.max(np.abs(dy)) if dy.size else 0.0
            if not fresh and prev is not None and size > self.rate * prev or not np.all(np.isfinite(dy)):
                if not self.factor(a0, h):
                    return y, yd, False
                dy = self.lu(-r)
                size = np.max(np.abs(dy))
                if not np.isfinite(size):
                    self.lu = None
                    return y, yd, False
            prev = size
            y_old = y
            dy = _limit(c, y, dy, a0, past, ports)
            y = y + dy
            if (np.max(np.abs(dy)) <= 1e-10 * (1.0 + np.max(np.abs(y))) or
                    (it and np.linalg.norm(dy) <= 1e-12 * (1.0 + np.linalg.norm(y)))) and \
                    _ports_settled(c, y_old, dy, a0, past):
                return y, a0 * y + past, True
        self.lu = None  # no convergence: the next try starts from a fresh factorisation
        return y, a0 * y + past, False


def _ports_settled(c, y, dy, a0, past):
    """The devices' port flows settled on the Newton update ``dy`` from ``y``: each within ``PORT_TOL`` of
    ``1 + |flow|`` or within 64 roundoffs of the flows it is made of
    (:func:`netdyn.numerics.circuit.kernels.circuit_kernel._ports_settled`, the same test): a flow without inertia is the
    rate ``a0 y + past`` of its displacement, so the states' own test lets it move by ``a0`` times theirs."""
    from netdyn.numerics.circuit.kernels.circuit_kernel import EPS, PORT_TOL
    n, nI = c.n, c.nI
    f = c.flows(y, a0 * y + past)
    df = c.flows(dy, a0 * dy)
    rf = EPS * (np.abs(a0 * y[:n]) + np.abs(past[:n]))
    rf[c.I] = EPS * np.abs(y[n:n + nI])
    for (law, C, Ct, *_) in c.groups:
        absCt = abs(Ct)
        if np.any(np.abs(Ct @ df) > PORT_TOL * (1.0 + np.abs(Ct @ f)) + 64.0 * (absCt @ rf)):
            return False
    return True


def _limit(c, y, dy, a0, past, ports=None):
    """Shorten a Newton step so no junction's voltage jumps more than its element allows (SPICE's limiting).
    ``ports``: the groups' port flows at ``y`` when the caller has them already."""
    f_old = c.flows(y, a0 * y + past) if ports is None else None
    df = c.flows(dy, a0 * dy)
    factor = 1.0
    for k, (law, C, Ct, values, named, ne, P, hr, hc, limiter) in enumerate(c.groups):
        if limiter is None:
            continue
        Fo = (Ct @ f_old).reshape(ne, P) if ports is None else ports[k]
        dF = (Ct @ df).reshape(ne, P)
        Fn = Fo + dF
        Fl = limiter(named, Fo, Fn)
        if Fl is Fn:
            continue  # nothing limited
        full, lim = np.abs(Fn - Fo), np.abs(Fl - Fo)
        cut = (full > 0) & (lim < full)
        if cut.any():
            factor = min(factor, max(float(np.min(lim[cut] / full[cut])), 1e-3))
    return dy * factor


class CircuitSolution(LinearSolution):
    """A :class:`~netdyn.linearsim.LinearSolution` made by the circuit path (``method == "circuit"``)."""

    #: ``{element: {"dissipated" | "supplied" | "junction": (K,) energy since the start}}`` integrated with
    #: the state (:mod:`netdyn.numerics.circuit.energy.circuit_work`), or None
    element_work = None
    #: the energy stored in the devices' junction charges since the start (integrated with the state), or None
    junction_energy = None

    def __init__(self, net, lin, trajectory):
        self.net, self.linear = net, lin
        self._model = self._compiled = self._p = None
        self._init_trajectory(trajectory, "circuit")

    def energy_report(self):
        """Per-element energy bookkeeping from the stamp, the devices' laws and the work integrated with the
        state, without the symbolic model (:mod:`netdyn.numerics.circuit.energy.circuit_report`)."""
        from netdyn.numerics.circuit.energy import circuit_report
        if circuit_report.takes(self):
            return circuit_report.circuit_energy_report(self)
        return super().energy_report()

    def energy(self):
        """Stored energy: the linear elements' ``½ fᵀM f + ½ qᵀK q`` plus, where the transient carried it, the
        energy the devices' junction charges took up since the start (``∫ v dQ``)."""
        E = super().energy()
        return E if self.junction_energy is None else E + self.junction_energy


def warm_up():
    """Compile the circuit path's kernels once (a diode with its charge behind a SIN source, both the whole
    loop and the per-attempt step) so that numba caches them on disk; returns the seconds it took (~10 s of
    CPU the first time on a quiet machine, well under one once cached).

    >>> warm_up() >= 0
    True
    """
    import time

    from netdyn.components.diode import Diode
    from netdyn.components.electrical import Capacitor, Resistor, VoltageSource
    from netdyn.graph.network import Network
    from netdyn.lagrange.sources import sine
    start = time.perf_counter()
    net = Network()
    net.add(VoltageSource("V1", "a", "0", sine(0, 1, 1e3)), Resistor("R1", "a", "d", 1e3),
            Diode("D1", "d", "0", RS=1.0, BV=5.0, CJO=1e-12), Capacitor("C1", "d", "0", 1e-9))
    times = np.linspace(0, 1e-4, 3)
    simulate_circuit(net, (0, 1e-4), t_eval=times)
    simulate_circuit(net, (0, 1e-4), t_eval=times, progress=lambda tt: None)
    return time.perf_counter() - start
