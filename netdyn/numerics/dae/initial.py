"""Consistent initial conditions: complete what the user gave so the constraints hold.

Positions: Gauss–Newton with minimum-norm steps on φ(q, t0) = 0, moving only the
coordinates not given, iterated to convergence (until the residual reaches the
rounding level or stops falling) — not to a fixed threshold — so an integrator
starts from a state consistent far below its own tolerance. ``tol`` is only the
acceptance test afterwards: a residual above it means the data cannot be met, an
:class:`~netdyn.errors.InitialConditionError` naming the constraints left unmet.
Flows: the linear velocity-level constraints ``Φ_q f + Φ_t = 0`` and
``A f + a = 0`` solved (least squares, exact) for the flows not given.

Joint coordinates are accepted wherever coordinates are: in a planar model
``q0={"J3": 0.2}`` (or ``{"theta_J3": 0.2}``, the name the relative formulation
gives the coordinate) asks for the relative angle of revolute ``J3``
(``theta_b − theta_a``), a prismatic joint's name for its slide ``s``; a slider
takes a pair ``(s, theta)`` or ``s_J``/``theta_J``. In the absolute formulation
these are extra equations of the position solve (and, in ``f0``, of the velocity
solve). Conditions that fix more than the mechanism's freedom, or contradict
each other, are an ``InitialConditionError`` naming the joints.

>>> import sympy as sp
>>> from netdyn import LagrangianModel, coordinates, t
>>> from netdyn.numerics.functions.compiled import compile_model
>>> x, y = coordinates("x y")
>>> m = LagrangianModel([x, y], T=(x.diff(t)**2 + y.diff(t)**2)/2, constraints=[x**2 + y**2 - 1])
>>> cm = compile_model(m)
>>> q, f = consistent_initial_conditions(cm, 0.0, {"x": 0.6}, {}, cm.parameter_vector(), guess={"y": -1})
>>> [round(float(v), 12) for v in q]
[0.6, -0.8]
"""
from __future__ import annotations

import numpy as np
import sympy as sp

from netdyn.validate import real
from netdyn.errors import InitialConditionError, LoopClosureError, ModelError
from netdyn.numerics.dae.closure import loop_report, structure_text
from netdyn.numerics.dae.template_levels import TemplateLevels, templates_serve_start
from netdyn.symbols import identifier, t as _t

EPS = np.finfo(float).eps


def _key(k):
    return k if isinstance(k, str) else getattr(getattr(k, "func", None), "__name__", str(k))


def joint_table(model):
    """Joint-coordinate names of a planar model: name -> (joint, index, expression of q(t)).

    A joint's own name stands for its first coordinate; ``theta_<joint>`` and
    ``s_<joint>`` (the relative formulation's names) for the named one.
    """
    cached = getattr(model, "_compiled", {}).get("joint_table")
    if cached is not None:
        return cached
    if model.metadata.get("spatial") is not None:  # joint coordinates of spatial models, in both formulations
        from netdyn.graph.spatial_terms import joint_terms

        return joint_terms(model)
    planar = model.metadata.get("planar")
    jc, jobjs = (planar.joint_coordinates, planar.joints) if planar else ({}, {})
    table = {}
    for name, exprs in jc.items():
        kinds = tuple(getattr(jobjs.get(name), "relative", ())) or ("theta", "s")[: len(exprs)]
        for k, e in enumerate(exprs):
            table.setdefault(f"{kinds[k] if k < len(kinds) else k}_{identifier(name)}", (name, k, e))
        if exprs:
            table.setdefault(name, (name, 0, exprs[0]))
            table.setdefault(f"{name}[all]", (name, None, list(exprs)))
    for body, pose in (planar.poses if planar else {}).items():  # body coordinates in the relative formulation
        for k, e in zip(("x", "y", "theta"), pose):
            table.setdefault(f"{k}_{identifier(body)}", (f"{k}_{identifier(body)}", 0, e))
            table.setdefault(f"{k}_{identifier(body)}[all]", (body, None, [e]))
    if hasattr(model, "_compiled"):
        model._compiled["joint_table"] = table
    return table


def _split(cm, values, what):
    """Coordinate values and joint conditions ``[(label, joint, expression of q(t), target)]`` of a q0/f0 dict.

    A guess stored on the network (``skip_unknown``, :class:`netdyn.graph.assembly.StoredGuess`) may name
    coordinates of another formulation: those names are skipped; any other unknown name is an error."""
    model = cm.model
    names = model.coordinate_names
    index = {n: i for i, n in enumerate(names)}
    table = None
    plain, conditions = {}, []
    if values is not None and not isinstance(values, dict):
        raise ModelError(f"the initial {what} must be a dict of coordinate names to values, got {values!r:.60}")
    for k, v in (values or {}).items():
        key = _key(k)
        if key.endswith("_dot") and what == "f" and key not in index:
            if key[:-4] in index:
                key = key[:-4]
            else:  # a joint rate: "O_dot", "theta_O_dot"
                table = joint_table(model) if table is None else table
                key = key[:-4] if key[:-4] in table and key not in table else key
        if key in index:
            plain[key] = v
            continue
        table = joint_table(model) if table is None else table
        if key in table:
            joint, i, e = table[key]
            if np.ndim(v):  # a pair for a multi-coordinate joint
                exprs = table[f"{joint}[all]"][2]
                if len(v) != len(exprs):
                    raise ModelError(f"joint {joint!r} has {len(exprs)} coordinate(s); the initial {what} "
                                     f"gives {len(v)} values")
                pairs = list(enumerate(zip(exprs, v)))
            else:
                pairs = [(i, (e, v))]
            mech = model.metadata.get("planar") or model.metadata.get("spatial")
            kind = "joint " if mech and joint in mech.joints else ""
            for j, (e, val) in pairs:
                label = f"{kind}{joint}" + (f"[{j}]" if len(table[f'{joint}[all]'][2]) > 1 else "")
                conditions.append((label, joint, e, real(val, parameter=f"{what}0[{k!r}]" + (
                    f"[{j}]" if len(pairs) > 1 else ""))))  # NaN, inf, complex refused, naming the coordinate
            continue
        if getattr(values, "skip_unknown", False):
            continue
        joints = sorted(n for n in table if not n.endswith("[all]")) if table else []
        raise ModelError(f"unknown coordinate {key!r} in the initial {what}; the coordinates are {names}"
                         + (f", the joint coordinates {joints}" if joints else ""))
    return plain, conditions


def _vector(cm, values, what, default=0.0):
    names = cm.model.coordinate_names
    index = {n: i for i, n in enumerate(names)}
    vec = np.full(cm.n, default, dtype=float)
    given = np.zeros(cm.n, dtype=bool)
    if values is not None and not isinstance(values, dict):
        raise ModelError(f"the initial {what} must be a dict of coordinate names to values, got {values!r:.60}")
    for k, v in (values or {}).items():
        vec[index[k]] = real(v, parameter=f"{what}0[{k!r}]")  # NaN, inf, complex, "abc" refused
        given[index[k]] = True
    return vec, given


class _Conditions:
    """Joint conditions ``g(q) = target`` compiled to values and gradients in q."""

    def __init__(self, cm, conditions):
        from netdyn.numerics.functions.compiled import _lambdify

        self.labels = [c[0] for c in conditions]
        self.joints = [c[1] for c in conditions]
        self.target = np.array([c[3] for c in conditions], dtype=float)
        self.k, self.n = len(conditions), cm.n
        if not conditions:  # nothing to compile (and no equations to derive for it)
            return
        eq = cm.eq
        sub = {c: s for c, s in zip(eq.coordinates, eq.q)}
        exprs = [sp.sympify(e).xreplace(sub) for _, _, e, _ in conditions]
        grads = [[sp.diff(e, s) for s in eq.q] for e in exprs]
        args = [_t, eq.q, cm.parameters, cm.inputs]
        self._g = _lambdify(args, exprs)
        self._G = _lambdify(args, [d for row in grads for d in row])

    def residual(self, tt, q, p):
        if not self.k:
            return np.zeros(0)
        return np.asarray(self._g(tt, q, p.vector, p.inputs(tt)), dtype=float) - self.target

    def jacobian(self, tt, q, p):
        if not self.k:
            return np.zeros((0, self.n))
        return np.asarray(self._G(tt, q, p.vector, p.inputs(tt)), dtype=float).reshape(self.k, self.n)


def _held_by_joint(cm, conditions):
    """Joint conditions on a coordinate itself (a tree joint in the relative formulation): ``{name: value}``."""
    names = {c: n for c, n in zip(cm.model.coordinates, cm.model.coordinate_names)}
    held, labels, rest = {}, {}, []
    for cond in conditions:
        e = sp.sympify(cond[2])
        if e in names:
            held[names[e]] = cond[3]
            labels[names[e]] = cond[0]
        else:
            rest.append(cond)
    return held, labels, rest


def _given(names, values, given, labels):
    """The given values for a message, a joint's under its joint's label."""
    return {labels.get(n, n): float(values[i]) for i, n in enumerate(names) if given[i]}


def _newton(residual, jacobian, q, free, max_iter):
    """Damped Gauss–Newton on ``residual(q) = 0`` moving ``q[free]``, to convergence.

    Stops when the residual reaches the rounding level of ``q``, or stops falling
    near it for three iterations; returns the last iterate and its residual.
    """
    r = residual(q)
    best, stalled = np.inf, 0
    for _ in range(max_iter):
        size = np.max(np.abs(r)) if r.size else 0.0
        scale = 1.0 + np.max(np.abs(q))
        if size <= 8 * EPS * scale:
            break
        # near the rounding level Newton no longer halves the residual: three such steps end it
        # (far from a solution a damped step may gain less, so there it runs on to max_iter)
        stalled = stalled + 1 if size > 0.5 * best and size < 1e-8 * scale else 0
        if stalled >= 3:
            break
        best = min(best, size)
        J = jacobian(q)[:, free]
        if J.size == 0:
            break
        dq, *_ = np.linalg.lstsq(J, -r, rcond=None)
        base, step = np.linalg.norm(r), 1.0
        while step > 1e-4:  # damped: accept the first step that reduces the residual
            trial = q.copy()
            trial[free] += step * dq
            rt = residual(trial)
            if np.linalg.norm(rt) < base:
                break
            step /= 2
        q = trial
        r = rt
    return q, r


def consistent_initial_conditions(cm, t0, q0=None, f0=None, p=None, guess=None, tol=1e-8, max_iter=60):
    """Initial q and f satisfying the constraints, holding the given values.

    ``q0``/``f0`` map coordinate names (or, in planar models, joint names and
    joint-coordinate names) to values. ``guess`` gives starting values for
    coordinates not in ``q0`` (a rough assembly of a linkage, say); the others
    start at 0. Newton runs to convergence; ``tol`` is the largest residual
    accepted (relative to ``1 + max|q|``, or for flows ``1 + max|f|``): the
    integrator's own tolerance, so an inconsistency it cannot step over is an
    error here rather than an integrator failure at t0.
    """
    p = cm.parameter_vector() if p is None else p
    model = cm.model
    complete = model.metadata.get("complete_start")
    if complete is not None:  # a front end that knows its elements' laws completes the values (a bond graph)
        q0, f0 = complete(cm, t0, q0, f0, p)
    # numbers at a state: the fused kernel, or the sparse IDA's element templates when that integrator will
    # serve (the kernel's build grows faster than the network; netdyn.numerics.dae.template_levels)
    ev = TemplateLevels(cm) if templates_serve_start(cm) else cm
    q_plain, q_cond = _split(cm, q0, "q")
    f_plain, f_cond = _split(cm, f0, "f")
    held, held_labels, q_cond = _held_by_joint(cm, q_cond)
    clash = sorted(set(held) & set(q_plain))
    if clash:
        raise InitialConditionError(f"q0 gives {clash} both as coordinates and through their joints "
                                    f"({[held_labels[c] for c in clash]}); give one")
    q, q_given = _vector(cm, q_plain | held, "q")
    spatial = model.metadata.get("spatial")
    start = spatial.initial_guess if spatial else None  # unit Euler parameters
    if start:
        g, g_set = _vector(cm, start, "q")
        q = np.where(~q_given & g_set, g, q)
    g_cond = []
    if guess:
        g_plain, g_cond = _split(cm, guess, "q")
        g_held, _, g_cond = _held_by_joint(cm, g_cond)
        g, g_set = _vector(cm, g_plain | g_held, "q")
        q = np.where(~q_given & g_set, g, q)
    f_held, f_labels, f_cond = _held_by_joint(cm, f_cond)
    f, f_given = _vector(cm, f_plain | f_held, "f")
    qc = _Conditions(cm, q_cond)
    fc = _Conditions(cm, f_cond)
    if g_cond:  # a guess in joint terms: start from the closest assembly (least squares) that meets it
        gc = _Conditions(cm, g_cond)
        q, _ = _newton(lambda qq: np.concatenate([ev.constraints(t0, qq, f, p).phi, qc.residual(t0, qq, p),
                                                  gc.residual(t0, qq, p)]),
                       lambda qq: np.vstack([ev.constraints(t0, qq, f, p).Phi_q, qc.jacobian(t0, qq, p),
                                             gc.jacobian(t0, qq, p)]), q, ~q_given, max_iter)
    if cm.m1 or qc.k:
        free = ~q_given

        def residual(qq):
            return np.concatenate([ev.constraints(t0, qq, f, p).phi, qc.residual(t0, qq, p)])

        def jacobian(qq):
            return np.vstack([ev.constraints(t0, qq, f, p).Phi_q, qc.jacobian(t0, qq, p)])

        q, r = _newton(residual, jacobian, q, free, max_iter)
        labels = list(model.constraint_labels) + qc.labels
        bad = np.abs(r) > tol * (1.0 + np.max(np.abs(q)))
        if bad.any():
            given = _given(model.coordinate_names, q, q_given, held_labels)
            worst = [labels[i] for i in np.argsort(-np.abs(r)) if bad[i]][:6]
            joints = qc.labels + sorted(set(held_labels.values()))
            if joints:
                raise InitialConditionError(
                    f"initial positions: the joint values {joints} (given {given}"
                    + (f", conditions {qc.labels}" if qc.k else "") + ") cannot all hold (left unmet: "
                    f"{worst}, largest residual {np.max(np.abs(r)):.3g}); they fix more than the mechanism's "
                    "freedom or contradict each other — give fewer joint values or change them, or pass a closer "
                    "guess=")
            unclosed_mechanism(model, cm, r[:cm.m1], tol * (1.0 + np.max(np.abs(q))), given, worst[0])
            raise InitialConditionError(
                f"initial positions cannot satisfy constraint {worst[0]} (residual {np.max(np.abs(r)):.3g}"
                + (f"; also unmet: {worst[1:]}" if len(worst) > 1 else "") + f") with the given values {given}; "
                "change them, give fewer, or pass a closer guess=")
        if qc.k:
            _check_independent(ev.constraints(t0, q, f, p).Phi_q[:, free], qc.jacobian(t0, q, p)[:, free],
                               qc.labels, "q0")
    if cm.m1 or cm.m2 or fc.k:
        c = ev.constraints(t0, q, f, p)
        G = fc.jacobian(t0, q, p)
        C = np.vstack([c.Phi_q, c.A, G])
        rhs = -np.concatenate([c.Phi_t, c.a, -fc.target])
        # flows without inertia are free first; unspecified inertial flows move only if that is not enough
        inertial = np.zeros(cm.n, dtype=bool)
        inertial[sorted(cm.inertial_columns())] = True
        f_start = f.copy()
        for free in (~f_given & ~inertial, ~f_given):
            f = f_start.copy()
            r = C @ f - rhs
            if free.any():
                df = _flow_step(cm, ev, t0, q, f, p, C[:, free], r, free, inertial)
                f[free] += df
            r = C @ f - rhs
            if not r.size or np.max(np.abs(r)) <= 1e-12 * (1.0 + np.max(np.abs(f)) + np.max(np.abs(rhs))):
                break
        level = tol * (1.0 + np.max(np.abs(f)) + np.max(np.abs(rhs)))
        if r.size and np.max(np.abs(r)) > level:
            labels = list(model.constraint_labels) + list(model.flow_constraint_labels) + fc.labels
            worst = [labels[i] for i in np.argsort(-np.abs(r)) if abs(r[i]) > level][:6]
            given = _given(model.coordinate_names, f, f_given, f_labels)
            raise InitialConditionError(
                f"initial flows cannot satisfy constraint {worst[0]} at velocity level (residual "
                f"{np.max(np.abs(r)):.3g}" + (f"; also unmet: {worst[1:]}" if len(worst) > 1 else "")
                + f") with the given flows {given}"
                + (f" and joint rates {fc.labels}" if fc.k else "") + "; change or drop some of them")
        if fc.k:
            free = ~f_given
            _check_independent(np.vstack([c.Phi_q, c.A])[:, free], G[:, free], fc.labels, "f0")
    return q, f


def _flow_step(cm, ev, t0, q, f, p, Cf, r, free, inertial):
    """The correction of the free flows that meets ``Cf Δf = −r``.

    Where inertial flows must move (a voltage source across a capacitor in node
    fluxes, a driver that starts at speed) they move as an impulse of the
    constraint forces would move them: ``M Δf + Cᵀ Λ = 0``, i.e. the change of
    least kinetic coenergy ``Δfᵀ M Δf`` — charge conserved at every node, as
    on the linear path. Flows without inertia move at no cost. Done for
    networks in every formulation (an inductor in series with a current
    source in branch or loop currents: only that inductor's current jumps, by
    an impulse of voltage across the source, not a least-squares share of every
    inductor's); for models without a network (and if that fails) the
    minimum-norm correction.
    """
    kinds = set((cm.model.metadata.get("kinds") or {}).values())
    if kinds and (free & inertial).any():  # networks (models without one: as before)
        M, _ = ev.dynamics(t0, q, f, p)
        Mf = np.asarray(M, dtype=float)[np.ix_(free, free)]
        k = Cf.shape[0]
        K = np.block([[Mf, Cf.T], [Cf, np.zeros((k, k))]])
        # flows without inertia among the free ones cost nothing: K may be singular, any solution will do
        sol = np.linalg.lstsq(K, np.concatenate([np.zeros(Mf.shape[0]), -r]), rcond=None)[0][:Mf.shape[0]]
        if np.all(np.isfinite(sol)) and np.allclose(Cf @ sol, -r, rtol=1e-9, atol=1e-12 * (1.0 + np.max(np.abs(r)))):
            return sol
    return np.linalg.lstsq(Cf, -r, rcond=None)[0]


def unclosed_mechanism(model, cm, residual, tol, given, worst):
    """Raise a :class:`~netdyn.errors.LoopClosureError` naming each loop of a mechanism that the position
    solve left open (with its residual, the constraint ``worst`` off, and for a loop of pins whether its
    side lengths can close at all); nothing when the model has no loops or they all closed."""
    loops = loop_report(model, residual, tol)
    if not loops:
        return
    md = model.metadata.get("planar") or model.metadata.get("spatial")
    gruebler = getattr(md, "gruebler", None)
    rheonomic = any(bool(e != 0) for e in cm.eq.Phi_t)
    locked = gruebler is not None and gruebler <= 0 and not rheonomic
    raise LoopClosureError(
        f"initial positions: {'; '.join(loops)} (largest at constraint {worst})"
        + (f" (given values {given})" if given else "")
        + (f"; note: {structure_text(model)}, so even assembled it would not move unless some constraints "
           "are redundant (as in a parallelogram)" if locked else ""))


def _check_independent(C, G, labels, what):
    """Joint conditions must fix freedoms the constraints leave: rank([C; G]) = rank(C) + rows(G)."""
    def rank(a):
        if not a.size:
            return 0
        s = np.linalg.svd(a, compute_uv=False)
        return int(np.sum(s > 1e-9 * max(s[0], 1.0)))

    base, both = rank(C), rank(np.vstack([C, G]))
    if both < base + G.shape[0]:
        dof = C.shape[1] - base
        raise InitialConditionError(
            f"{what}: the joint conditions {labels} fix {G.shape[0]} freedom(s) but only {both - base} of them are "
            f"independent of the constraints and each other (the mechanism has {dof} degree(s) of freedom left "
            "by the coordinates given); give fewer joint values")


def integrator_tolerance(rtol, atol=None):
    """The residual an integrator run at ``rtol``/``atol`` accepts in its initial state.

    Three orders below ``rtol`` (and below a scalar ``atol``), never looser than
    1e-8 nor tighter than 1e-12 (Newton reaches the rounding level in all but
    ill-conditioned configurations, where 1e-12 is still far below what an
    integrator resolves).

    >>> float(f"{integrator_tolerance(1e-8):.3g}"), integrator_tolerance(1e-3)
    (1e-11, 1e-08)
    """
    tol = min(1e-8, 1e-3 * float(rtol))
    if atol is not None and np.ndim(atol) == 0:
        tol = min(tol, 1e-2 * float(atol))
    return max(tol, 1e-12)


def refuse_projection(cm):
    """The error for ``method="projection"`` on a model whose index-1 (KKT) matrix is singular at t0.

    Names the flows without inertia (an RC circuit's charges), or else says the
    constrained mass matrix is singular, and points to ``method="ida"``.
    """
    from netdyn.errors import IntegrationError

    inertial = cm.inertial_columns()
    free = [n for j, n in enumerate(cm.model.coordinate_names) if j not in inertial]
    why = (f"the flows of {free[:8]}{' ...' if len(free) > 8 else ''} have no inertia (algebraic)" if free else
           "the constrained mass matrix [[M, Cᵀ], [C, 0]] is singular at t0 (a dead centre, a locked linkage, or "
           "mass missing on the constraint manifold)")
    raise IntegrationError(f"method='projection' needs every flow to have inertia on the constraint manifold, but {why}; "
                           "use method='ida' (or 'auto', which picks it)")
