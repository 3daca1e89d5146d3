"""Consistent initial conditions: complete what the user gave so the constraints hold.

Positions: Gauss–Newton with minimum-norm steps on φ(q, t0) = 0, moving only the
coordinates not given. Flows: the linear velocity-level constraints
``Φ_q f + Φ_t = 0`` and ``A f + a = 0`` solved for the flows not given. A given
set that cannot be completed is an :class:`~netdyn.errors.InitialConditionError`
naming the worst constraint.

>>> import sympy as sp
>>> from netdyn import LagrangianModel, coordinates, t
>>> from netdyn.numerics.compiled import compile_model
>>> x, y = coordinates("x y")
>>> m = LagrangianModel([x, y], T=(x.diff(t)**2 + y.diff(t)**2)/2, constraints=[x**2 + y**2 - 1])
>>> cm = compile_model(m)
>>> q, f = consistent_initial_conditions(cm, 0.0, {"x": 0.6}, {}, cm.parameter_vector(), guess={"y": -1})
>>> [round(float(v), 12) for v in q]
[0.6, -0.8]
"""
from __future__ import annotations

import numpy as np

from netdyn.validate import real
from netdyn.errors import InitialConditionError, ModelError


def _vector(cm, values, what, default=0.0):
    names = cm.model.coordinate_names
    index = {n: i for i, n in enumerate(names)}
    vec = np.full(cm.n, default, dtype=float)
    given = np.zeros(cm.n, dtype=bool)
    if values is not None and not isinstance(values, dict):
        raise ModelError(f"the initial {what} must be a dict of coordinate names to values, got {values!r:.60}")
    for k, v in (values or {}).items():
        key = k if isinstance(k, str) else getattr(getattr(k, "func", None), "__name__", str(k))
        if key.endswith("_dot") and what == "f" and key[:-4] in index:
            key = key[:-4]
        if key not in index:
            raise ModelError(f"unknown coordinate {key!r} in the initial {what}; the coordinates are {names}")
        vec[index[key]] = real(v, parameter=f"{what}0[{key!r}]")  # NaN, inf, complex, "abc" refused
        given[index[key]] = True
    return vec, given


def consistent_initial_conditions(cm, t0, q0=None, f0=None, p=None, guess=None, tol=1e-10, max_iter=50):
    """Initial q and f satisfying the constraints, holding the given values.

    ``guess`` gives starting values for coordinates not in ``q0`` (a rough
    assembly of a linkage, say); the others start at 0.
    """
    p = cm.parameter_vector() if p is None else p
    q, q_given = _vector(cm, q0, "q")
    start = (cm.model.metadata.get("spatial") or {}).get("initial_guess")  # unit Euler parameters
    if start:
        g, g_set = _vector(cm, start, "q")
        q = np.where(~q_given & g_set, g, q)
    if guess:
        g, g_set = _vector(cm, guess, "q")
        q = np.where(~q_given & g_set, g, q)
    f, f_given = _vector(cm, f0, "f")
    model = cm.model
    if cm.m1:
        free = ~q_given
        for _ in range(max_iter):
            c = cm.constraints(t0, q, f, p)
            phi = c.phi
            scale = 1.0 + np.max(np.abs(q))
            if np.max(np.abs(phi)) <= tol * scale:
                break
            J = c.Phi_q[:, free]
            if J.size == 0:
                break
            dq, *_ = np.linalg.lstsq(J, -phi, rcond=None)
            step = 1.0
            base = np.linalg.norm(phi)
            while step > 1e-4:  # damped Newton: accept the first step that reduces the residual
                trial = q.copy()
                trial[free] += step * dq
                if np.linalg.norm(cm.constraints(t0, trial, f, p).phi) < base:
                    break
                step /= 2
            q[free] += step * dq
        phi = cm.constraints(t0, q, f, p).phi
        worst = int(np.argmax(np.abs(phi)))
        if abs(phi[worst]) > 1e-8 * (1.0 + np.max(np.abs(q))):
            given = {n: q[i] for i, n in enumerate(model.coordinate_names) if q_given[i]}
            raise InitialConditionError(
                f"initial positions cannot satisfy constraint {model.constraint_labels[worst]} "
                f"(residual {phi[worst]:.3g}) with the given values {given}; change them, give fewer, "
                "or pass a closer guess=")
    if cm.m1 or cm.m2:
        c = cm.constraints(t0, q, f, p)
        C = c.jacobian
        rhs = -np.concatenate([c.Phi_t, c.a])
        # flows without inertia are free first; unspecified inertial flows move only if that is not enough
        inertial = np.zeros(cm.n, dtype=bool)
        inertial[[j for (_, j) in cm.eq.M.keys()]] = True
        f_start = f.copy()
        for free in (~f_given & ~inertial, ~f_given):
            f = f_start.copy()
            r = C @ f - rhs
            if free.any():
                df, *_ = np.linalg.lstsq(C[:, free], -r, rcond=None)
                f[free] += df
            r = C @ f - rhs
            if not r.size or np.max(np.abs(r)) <= 1e-10 * (1.0 + np.max(np.abs(f)) + np.max(np.abs(rhs))):
                break
        if r.size and np.max(np.abs(r)) > 1e-8 * (1.0 + np.max(np.abs(f)) + np.max(np.abs(rhs))):
            worst = int(np.argmax(np.abs(r)))
            labels = list(model.constraint_labels) + list(model.flow_constraint_labels)
            given = {n: f[i] for i, n in enumerate(model.coordinate_names) if f_given[i]}
            raise InitialConditionError(
                f"initial flows cannot satisfy constraint {labels[worst]} at velocity level "
                f"(residual {r[worst]:.3g}) with the given flows {given}; change or drop some of them")
    return q, f
