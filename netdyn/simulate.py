"""Integration of the Lagrangian DAE.

Two integrators, chosen per system (``method="auto"``):

* ``"projection"`` — when the index-1 (KKT) matrix ``[[M, Cᵀ], [C, 0]]`` is
  regular (every flow has inertia on the constraint manifold: mechanisms,
  RLC loops with an inductor in every loop): an explicit Runge–Kutta method
  (scipy's DOP853, or ``solver="Radau"`` for stiff systems) on the index-1 form, with
  q and f projected back onto the position- and velocity-level constraints after
  every accepted step, so holonomic constraints do not drift;
* ``"ida"`` — when the mass matrix is singular on the manifold (an RC circuit:
  capacitor and resistor flows are algebraic): SUNDIALS IDA (variable-order
  BDF, through scikit-sundae) on the stabilized index-2 (GGL) form
  ``q̇ − f + Φ_qᵀη = 0``, ``M ḟ + h + Φ_qᵀλ + Aᵀμ = 0``, ``φ = 0``,
  ``Φ_q f + Φ_t = 0``, ``A f + a = 0``, multipliers left out of the error test.

>>> import sympy as sp
>>> from netdyn import LagrangianModel, coordinates, t, simulate
>>> x, = coordinates("x,")
>>> sol = simulate(LagrangianModel([x], T=x.diff(t)**2/2, V=x**2/2), (0, 3.14159265), q0={"x": 1})
>>> round(float(sol["x"][-1]), 6)
-1.0
"""
from __future__ import annotations

import numpy as np
import scipy.linalg as sla
import sympy as sp
from scipy.integrate import DOP853, RK45, Radau

from netdyn.errors import IntegrationError, SingularSystemError
from netdyn.initial import consistent_initial_conditions
from netdyn.numeric import compile_model
from netdyn.symbols import t
from netdyn.structure import SingularityWatch, integration_failure, prepare

SOLVERS = {"DOP853": DOP853, "RK45": RK45, "Radau": Radau}


def as_model(system, formulation=None):
    """A ``LagrangianModel`` from a model or a ``Network``."""
    if hasattr(system, "derive"):
        return system
    if hasattr(system, "model"):
        return system.model(formulation=formulation)
    raise TypeError(f"expected a LagrangianModel or a Network, got {type(system).__name__}")


def simulate(system, t_span, q0=None, f0=None, params=None, t_eval=None, rtol=1e-8, atol=None,
             method="auto", solver="DOP853", guess=None, max_step=np.inf, formulation=None, progress=None):
    """Integrate a model (or a network) over ``t_span``; returns a :class:`~netdyn.solution.Solution`.

    ``q0``/``f0`` map coordinate names to initial displacements/flows; the rest
    are completed consistently with the constraints. ``params`` overrides the
    model's parameter values. ``atol=None`` scales the absolute tolerance to
    each variable's magnitude (found by a coarse first pass), so charges in
    nanocoulombs and angles in radians are integrated equally well.
    A network whose elements are all linear with numeric values takes the
    numeric fast path (:mod:`netdyn.linearsim`: sparse stamped matrices, Radau
    IIA) unless ``params`` is given; ``method="linear"`` insists on it,
    ``"projection"``/``"ida"`` force the symbolic path.
    ``progress(t)`` (optional) is called with the time reached as the integration
    advances (for progress bars; ``netdyn simulate`` draws one).
    """
    from netdyn.solution import Solution

    if t_span is None:  # a netlist's .tran, on every path
        tran = getattr(system, "tran", None) or getattr(getattr(system, "metadata", {}).get("network"), "tran", None)
        if not tran:
            raise IntegrationError("no t_span given and the network has no .tran card; pass t_span=(t0, t1)")
        t_span = (0.0, float(tran["tstop"]))
    if q0 is None and f0 is None and getattr(system, "tran", None) is not None and hasattr(system, "elements"):
        from netdyn.operating_point import spice_initial_state  # a netlist starts as SPICE starts it
        q0, f0 = spice_initial_state(system, formulation)
    if method in ("auto", "linear") and not params:
        from netdyn.linearsim import simulate_linear, try_linear
        lin = try_linear(system, formulation)
        if lin is not None:
            return simulate_linear(system, t_span, q0, f0, t_eval, rtol, atol, max_step, formulation, lin=lin,
                                   progress=progress)
    if method in ("auto", "circuit") and not params and t_span is not None:
        from netdyn.nonlinearsim import simulate_circuit, try_circuit  # linear + diodes: stamp, Newton, BDF
        circuit = try_circuit(system, formulation)
        if circuit is not None:
            return simulate_circuit(system, t_span, q0, f0, t_eval, rtol=min(rtol * 100, 1e-6) if rtol < 1e-6
                                    else rtol, atol=atol, max_step=max_step, circuit=circuit, progress=progress)
        if method == "circuit":
            raise IntegrationError("method='circuit' needs a network that is linear except for nonlinear "
                                   "dissipators (diodes) with numeric values")
    if method == "linear":
        from netdyn.linearsim import explain_not_linear
        explain_not_linear(system, formulation, params)
    model = as_model(system, formulation)
    cm = compile_model(model)
    p = cm.parameter_vector(params)
    if t_span is None:
        tran = getattr(model.metadata.get("network"), "tran", None)
        if not tran:
            raise IntegrationError("no t_span given and the network has no .tran card; pass t_span=(t0, t1)")
        t_span = (0.0, float(tran["tstop"]))
    t0, t1 = float(t_span[0]), float(t_span[1])
    if not t1 > t0:
        raise IntegrationError(f"t_span must increase, got {t_span}")
    t_eval = np.linspace(t0, t1, 1001) if t_eval is None else np.asarray(t_eval, dtype=float)
    q, f = consistent_initial_conditions(cm, t0, q0, f0, p, guess=guess)
    model, cm, p = prepare(model, cm, t0, q, p, params)  # redundant constraints out, reported in metadata
    if method == "auto":
        method = "projection" if kkt_regular(cm, t0, q, f, p) and not stiff(cm, t0, t1, q, f, p) else "ida"
    if method == "projection":
        step = lambda ta, tb, qa, fa, te, tol, at, pr=None: _projection(cm, p, ta, tb, qa, fa, te, tol, at,
                                                                      SOLVERS[solver], max_step, pr)
    elif method == "ida":
        step = lambda ta, tb, qa, fa, te, tol, at, pr=None: _ida(cm, p, ta, tb, qa, fa, te, tol, at, max_step, pr)
    else:
        raise IntegrationError(f"unknown method {method!r}; use 'auto', 'linear', 'projection' or 'ida'")
    corners = source_breakpoints(cm, t0, t1)
    requested, t_eval = t_eval, t_eval.copy()
    for c in corners:  # output times a hair from a corner are the corner (IDA cannot start that close)
        t_eval[np.abs(t_eval - c) < 1e-9 * (t1 - t0)] = c
    run = lambda tol, at, te, pr=None: _segmented(step, [t0] + corners + [t1], q, f, te, tol, at, pr)
    if atol is None:
        # magnitudes from a first pass under (nearly) pure relative error control
        # a small fixed atol: pure relative control fails on variables held at 0 by constraints (roundoff
        # noise) and in IDA's first steps from exact zeros; magnitudes are all this pass is for
        coarse = run(1e-6, 1e-12, np.linspace(t0, t1, 201))
        atol = _scaled_atol(coarse, rtol)
    res = run(rtol, atol, t_eval, progress)
    if res["t"].shape == requested.shape:
        res["t"] = requested  # report the times asked for (a snapped one differs by < 1e-9 of the span)
    return Solution(model, cm, p, res, method=method)


def source_breakpoints(cm, t0, t1):
    """Corners of the model's time functions (PULSE and PWL sources) inside ``(t0, t1)``.

    The integrators stop and restart there, as SPICE does, so no step straddles a kink.
    """
    from netdyn.sources import breakpoints
    eq = cm.eq
    found = set()
    for e in list(eq.h) + list(eq.phi) + list(eq.a0):
        e = sp.sympify(e)
        if t in e.free_symbols and e.has(sp.Piecewise, sp.Heaviside, sp.Function):
            found.update(breakpoints(e, t1, t0))
    return sorted(found)


def _segmented(step, edges, q, f, t_eval, rtol, atol, progress=None):
    """Integrate segment by segment between ``edges``; results joined, work integrals carried on."""
    parts = []
    qa, fa = q, f
    w = np.zeros(2)
    for k, (ta, tb) in enumerate(zip(edges[:-1], edges[1:])):
        inside = t_eval[(t_eval > ta) & (t_eval < tb)] if k else t_eval[(t_eval >= ta) & (t_eval < tb)]
        res = step(ta, tb, qa, fa, np.concatenate([inside, [tb]]), rtol, atol, progress)
        qa, fa = res["q"][:, -1].copy(), res["f"][:, -1].copy()
        keep = np.isin(res["t"], t_eval)
        res["work"] = {key: v + w[i] for i, (key, v) in enumerate(res["work"].items())}
        w = np.array([res["work"]["dissipated"][-1], res["work"]["supplied"][-1]])
        parts.append({key: (val[..., keep] if isinstance(val, np.ndarray) else val) for key, val in res.items()
                      if key != "work"} | {"work": {key: v[keep] for key, v in res["work"].items()}})
    if len(parts) == 1:
        return parts[0]
    out = {key: np.concatenate([pt[key] for pt in parts], axis=-1) for key in ("t", "q", "f", "acc", "lam", "mu")}
    out["work"] = {key: np.concatenate([pt["work"][key] for pt in parts]) for key in ("dissipated", "supplied")}
    out["nsteps"] = sum(pt.get("nsteps", 0) for pt in parts)
    out["message"] = parts[-1].get("message", "")
    return out


def kkt_regular(cm, tt, q, f, p):
    """Whether the index-1 matrix is regular at a state (relative pivot size above 1e-11)."""
    K, _, _ = cm.kkt(tt, q, f, p)
    s = np.linalg.svd(K, compute_uv=False)
    return s.size == 0 or s[-1] > 1e-11 * s[0]


def stiff(cm, t0, t1, q, f, p, ratio=1e3, max_states=400):
    """Whether the index-1 ODE is stiff over the span: fastest eigenvalue × span above ``ratio``.

    The Jacobian of the right-hand side is taken by finite differences at the
    initial state (skipped, returning False, above ``max_states`` states).
    """
    n = cm.n
    if 2 * n > max_states:
        return False

    def rhs(y):
        K, r, _ = cm.kkt(t0, y[:n], y[n:], p)
        return np.concatenate([y[n:], np.linalg.lstsq(K, r, rcond=None)[0][:n]])

    y = np.concatenate([q, f])
    r0 = rhs(y)
    J = np.empty((2 * n, 2 * n))
    for j in range(2 * n):
        h = 1e-7 * (1.0 + abs(y[j]))
        y2 = y.copy()
        y2[j] += h
        J[:, j] = (rhs(y2) - r0) / h
    lam = np.linalg.eigvals(J)
    return bool(np.max(np.abs(lam)) * (t1 - t0) > ratio and np.max(-lam.real) * (t1 - t0) > ratio)


def _scaled_atol(res, rtol):
    y = np.vstack([res["q"], res["f"]])  # the work integrals keep their relative control
    scale = np.max(np.abs(y), axis=1)
    # variables held at ~0 (by a constraint) get a usable atol; a system at rest keeps 1e-12
    floor = np.max(scale) * 1e-6 if np.max(scale) > 0 else 1e-12 / max(rtol * 1e-2, 1e-300)
    return np.maximum(scale, floor) * rtol * 1e-2


def _split_atol(atol, n):
    if atol is None:
        return 1e-10
    atol = np.asarray(atol, dtype=float)
    return atol if atol.ndim == 0 else atol[: 2 * n]


# ------------------------------------------------------------------------------------------ projection

def _projection(cm, p, t0, t1, q0, f0, t_eval, rtol, atol, solver_cls, max_step, progress=None):
    n = cm.n

    def rhs(tt, y):
        q, f = y[:n], y[n:2 * n]
        K, r, _ = cm.kkt(tt, q, f, p)
        z = _solve_kkt(K, r, tt)
        pd, ps = cm.power(tt, q, f, z[n:n + cm.m1], z[n + cm.m1:], p)
        return np.concatenate([f, z[:n], [pd, ps]])

    def project(tt, y):
        q, f = y[:n].copy(), y[n:2 * n].copy()
        if cm.m1:
            for _ in range(8):
                c = cm.constraints(tt, q, f, p)
                phi = c["phi"]
                if np.max(np.abs(phi)) < 1e-14 * (1 + np.max(np.abs(q))):
                    break
                J = c["Phi_q"]
                q -= J.T @ np.linalg.solve(J @ J.T, phi)
        c = cm.constraints(tt, q, f, p)
        C = np.vstack([c["Phi_q"], c["A"]])
        r = C @ f + np.concatenate([c["Phi_t"], c["a"]])
        f -= C.T @ np.linalg.solve(C @ C.T, r)
        return np.concatenate([q, f, y[2 * n:]])

    y0 = np.concatenate([q0, f0, [0.0, 0.0]])
    at = _split_atol(atol, n)
    if np.ndim(at):
        at = np.concatenate([at, [1e-14, 1e-14]])
    solver = solver_cls(rhs, t0, y0, t1, rtol=rtol, atol=at, max_step=max_step)
    ts, ys = [], []
    i = 0
    if t_eval.size and t_eval[0] <= t0:
        ts.append(t0)
        ys.append(y0)
        i = int(np.searchsorted(t_eval, t0, side="right"))
    nsteps = 0
    watch = SingularityWatch(cm, p)
    while solver.status == "running":
        msg = solver.step()
        nsteps += 1
        if progress is not None:
            progress(solver.t)
        if solver.status == "failed":
            raise integration_failure(cm, solver.t, solver.y[:n], p, msg)
        watch.step(solver)
        j = int(np.searchsorted(t_eval, solver.t, side="right"))
        if j > i:
            dense = solver.dense_output()
            for tt in t_eval[i:j]:
                y = dense(tt)
                ys.append(project(tt, y) if cm.has_constraints else y)
                ts.append(tt)
            i = j
        if cm.has_constraints:
            solver.y = project(solver.t, solver.y)
            solver.f = rhs(solver.t, solver.y)
    Y = np.array(ys).T if ys else np.zeros((2 * n + 2, 0))
    T = np.array(ts)
    acc, lam, mu = _post_multipliers(cm, p, T, Y[:n], Y[n:2 * n])
    return {"t": T, "q": Y[:n], "f": Y[n:2 * n], "acc": acc, "lam": lam, "mu": mu, "nsteps": nsteps,
            "work": {"dissipated": Y[2 * n], "supplied": Y[2 * n + 1]},
            "message": "The solver successfully reached the end of the integration interval."}


def _solve_kkt(K, r, tt):
    lu, piv = sla.lu_factor(K, check_finite=False)
    d = np.abs(np.diag(lu))
    if d.size and d.min() <= 1e-12 * d.max():
        raise SingularSystemError(
            f"singular configuration at t = {tt:.6g}: the constrained mass matrix lost rank "
            "(a dead centre, a locked linkage or redundant constraints); check the mechanism or stop before it")
    return sla.lu_solve((lu, piv), r, check_finite=False)


def _post_multipliers(cm, p, T, Q, F):
    n, m1, m2 = cm.n, cm.m1, cm.m2
    acc = np.zeros((n, T.size))
    lam = np.zeros((m1, T.size))
    mu = np.zeros((m2, T.size))
    for k, tt in enumerate(T):
        K, r, _ = cm.kkt(tt, Q[:, k], F[:, k], p)
        z = np.linalg.lstsq(K, r, rcond=None)[0]
        acc[:, k] = z[:n]
        lam[:, k] = z[n:n + m1]
        mu[:, k] = z[n + m1:]
    return acc, lam, mu


# ------------------------------------------------------------------------------------------ IDA

def _consistent_ida_start(residual, t0, y0, yp0, algebraic, tol=1e-11, max_iter=8):
    """Solve F(t0, y, yp) = 0 for the algebraic y and the derivatives of the differential y.

    Newton with a finite-difference Jacobian (the unknowns enter linearly in most
    models, so one or two iterations suffice); the differential y are held.
    """
    N = y0.size
    alg = np.zeros(N, dtype=bool)
    alg[list(algebraic)] = True
    y, yp = y0.copy(), yp0.copy()
    res = np.zeros(N)

    def F(z):
        y[alg], yp[~alg] = z[alg], z[~alg]
        residual(t0, y, yp, res)
        return res.copy()

    z = np.where(alg, y, yp)
    r = F(z)
    for _ in range(max_iter):
        if not np.any(r):
            break
        J = np.empty((N, N))
        for j in range(N):
            h = 1e-7 * (1.0 + abs(z[j]))
            zj = z.copy()
            zj[j] += h
            J[:, j] = (F(zj) - r) / h
        dz = np.linalg.lstsq(J, -r, rcond=None)[0]
        z = z + dz
        r = F(z)
        if np.max(np.abs(dz)) <= tol * (1.0 + np.max(np.abs(z))):
            break
    return y.copy(), yp.copy()  # F(z) was last called at the final z, so y and yp hold it


def _algebraic_at_output(cm, p, tt, q, f, acc, rest, iterations=2):
    """Flows without inertia and the multipliers, solved from the equations at fixed states.

    IDA gives these flows as q̇ (a BDF derivative, one order less accurate) and
    leaves multipliers out of its error test; here they are recomputed from the
    Lagrange rows and the velocity-level constraints by Newton (exact in one
    step for linear dissipation), the inertial rows weighted down because their
    accelerations also come from derivatives.
    """
    n, m1, m2 = cm.n, cm.m1, cm.m2
    inertial_rows = np.ones(n, dtype=bool)
    inertial_rows[rest] = False
    weight = np.where(inertial_rows, 1e-6, 1.0)
    z = np.zeros(m1 + m2)
    for _ in range(iterations if rest.size else 1):
        M, h = cm.dynamics(tt, q, f, p)
        c = cm.constraints(tt, q, f, p)
        C = np.vstack([c["Phi_q"], c["A"]])
        Rt = np.vstack([c["Phi_q"], c["R"]]).T  # where the multipliers act (C.T unless servo constraints)
        if rest.size:
            H = cm.dh_df(tt, q, f, p)[:, rest]
            J = np.block([[weight[:, None] * H, weight[:, None] * Rt], [C[:, rest], np.zeros((m1 + m2, m1 + m2))]])
            r0 = np.concatenate([weight * (M @ acc + h + Rt @ z), C @ f + np.concatenate([c["Phi_t"], c["a"]])])
            dz = np.linalg.lstsq(J, -r0, rcond=None)[0]
            f = f.copy()
            f[rest] += dz[:rest.size]
            z = z + dz[rest.size:]
        else:
            z = np.linalg.lstsq(Rt, -(M @ acc + h), rcond=None)[0]
    return f, z


def _ida_grid(t0, t1, t_eval):
    """Output times for IDA: t0 first, t1 last, at least three, none closer than 1e-10 of the span
    (IDA refuses an output time too close to the previous one; such requests share a point)."""
    gap = 1e-10 * (t1 - t0)
    grid = [t0]
    for x in np.unique(np.concatenate([np.asarray(t_eval, dtype=float), [t1]])):
        if x - grid[-1] > gap:
            grid.append(float(x))
    grid[-1] = t1
    if len(grid) < 3:
        grid = [t0, (t0 + t1) / 2, t1]
    return np.array(grid)


def _ida(cm, p, t0, t1, q0, f0, t_eval, rtol, atol, max_step, progress=None):
    """IDA on F(t, y, ẏ) = 0 with y = [q, f_I, λ, μ, η, W]: f_I are the flows with inertia; the flows
    of coordinates without inertia are q̇ itself (no algebraic variable of their own), so an RC circuit
    is the implicit ODE R q̇ + q/C − v = 0. Only the multipliers are algebraic."""
    from sksundae.ida import IDA

    n, m1, m2 = cm.n, cm.m1, cm.m2
    inertial = np.array(sorted({j for (_, j) in cm.eq.M.keys()}), dtype=int)
    rest = np.array([i for i in range(n) if i not in set(inertial.tolist())], dtype=int)
    nI = inertial.size
    N = n + nI + 2 * m1 + m2 + 2
    sq, sf = slice(0, n), slice(n, n + nI)
    sl, sm = slice(n + nI, n + nI + m1), slice(n + nI + m1, n + nI + m1 + m2)
    se, sw = slice(n + nI + m1 + m2, N - 2), slice(N - 2, N)
    algebraic = list(range(n + nI, N - 2))

    def flows(y, yp, Pq):
        f = np.empty(n)
        f[inertial] = y[sf]
        f[rest] = yp[sq][rest] + (Pq.T @ y[se])[rest] if m1 else yp[sq][rest]
        return f

    def residual(tt, y, yp, res):
        q = y[sq]
        # Φ_q depends on q only: needed before the flows only for the GGL term (displacement constraints)
        Pq = cm.constraints(tt, q, np.zeros(n), p)["Phi_q"] if m1 else None
        f = flows(y, yp, Pq)
        M, h = cm.dynamics(tt, q, f, p)
        acc = np.zeros(n)
        acc[inertial] = yp[sf]
        r = M @ acc + h
        if cm.has_constraints:
            c = cm.constraints(tt, q, f, p)
            Pq = c["Phi_q"]
            r += Pq.T @ y[sl] + c["R"].T @ y[sm]
            res[sl] = c["phi"]
            res[sm] = c["A"] @ f + c["a"]
            res[se] = Pq @ f + c["Phi_t"]
            res[n:n + nI] = yp[sq][inertial] - f[inertial] + (Pq.T @ y[se])[inertial]
        else:
            res[n:n + nI] = yp[sq][inertial] - f[inertial]
        res[:n] = r
        res[sw] = yp[sw] - np.array(cm.power(tt, q, f, y[sl], y[sm], p))

    if progress is not None:  # IDA evaluates the residual as it advances
        plain_residual = residual

        def residual(tt, y, yp, res):
            progress(tt)
            plain_residual(tt, y, yp, res)

    y0 = np.zeros(N)
    y0[sq], y0[sf] = q0, f0[inertial]
    yp0 = np.zeros(N)
    yp0[sq] = f0
    at = np.full(N, 1e-10)
    base = np.broadcast_to(_split_atol(atol, n), (2 * n,))
    at[sq] = base[:n]
    at[sf] = base[n + inertial]
    at[n + nI:N - 2] = 1e6  # multipliers and GGL terms out of the error test, solved exactly afterwards
    at[sw] = 1e-14  # work integrals (joules): nearly relative error control
    te = _ida_grid(t0, t1, t_eval)
    y0, yp0 = _consistent_ida_start(residual, t0, y0, yp0, algebraic)
    # BDF's global error runs ~10x its local tolerance: tighten so both integrators honour rtol alike
    solver = IDA(residual, rtol=rtol / 10, atol=at / 10, algebraic_idx=algebraic or None, calc_initcond=None,
                 max_num_steps=200000, max_step=0 if not np.isfinite(max_step) else max_step)
    out = solver.solve(te, y0, yp0)
    if not out.success:
        tt = out.t[-1] if len(out.t) else t0
        raise IntegrationError(f"IDA failed at t = {tt:.6g}: {out.message}; the system may be "
                               "singular there (check the structure) or need looser tolerances")
    Y, YP, T = out.y.T.copy(), out.yp.T.copy(), np.asarray(out.t)
    pick = np.clip(np.searchsorted(T, t_eval - 1e-10 * (t1 - t0)), 0, T.size - 1)  # nearest grid time
    Y, YP, T = Y[:, pick], YP[:, pick], np.asarray(t_eval, dtype=float)
    F = np.empty((n, T.size))
    ACC = np.zeros((n, T.size))
    for k, tt in enumerate(T):
        Pq = cm.constraints(tt, Y[sq, k], np.zeros(n), p)["Phi_q"] if m1 else None
        F[:, k] = flows(Y[:, k], YP[:, k], Pq)
        ACC[inertial, k] = YP[sf, k]
        F[:, k], z = _algebraic_at_output(cm, p, tt, Y[sq, k], F[:, k], ACC[:, k], rest)
        Y[sl, k], Y[sm, k] = z[:m1], z[m1:]
    return {"t": T, "q": Y[sq], "f": F, "acc": ACC, "lam": Y[sl], "mu": Y[sm],
            "work": {"dissipated": Y[N - 2], "supplied": Y[N - 1]},
            "nsteps": int(getattr(out, "nfev", 0) or 0), "message": str(out.message)}
