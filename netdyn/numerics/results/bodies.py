"""Body motion by body name: pose, angular velocity and accelerations of a planar or spatial body.

Read from the model's own pose expressions (absolute coordinates, or the relative formulation's
body poses written in joint coordinates), compiled once per body and quantity over the symbols they
contain, and evaluated at every output time at once: a read costs the body's expressions, not the
mechanism's size.

* planar body: ``pose`` → ``(position (2, K), R (2, 2, K))`` of the centre of mass (the body's
  coordinates ``x``, ``y``, ``theta``), ``angular_velocity`` → ``(K,)``, ``acceleration`` →
  ``(linear (2, K), angular (K,))``;
* spatial body: the origin of the body frame and its rotation matrix, ``(3, K)`` and ``(3, 3, K)``;
  angular velocity and the linear and angular accelerations in the global frame, ``(3, K)`` each.

>>> import numpy as np, netdyn
>>> from netdyn.components.spatial import RigidBody, Revolute
>>> net = netdyn.Network()
>>> _ = net.add(RigidBody("b", 1, (1, 1, 1)), Revolute("R", "ground", (0, 0, 0), "b", (0, 0, 0), axis=(1, 0, 0)))
>>> sol = netdyn.simulate(net.model(), (0, 1), q0={"R": 0.0}, f0={"R": 2.0}, t_eval=[0.0, 1.0])
>>> np.round(sol.angular_velocity("b")[:, -1], 6).tolist()
[2.0, 0.0, 0.0]
"""
from __future__ import annotations

import numpy as np
import sympy as sp

from netdyn.errors import ModelError
from netdyn.symbols import identifier, t as T_SYM


def mechanism_of(model):
    """``("planar" | "spatial", metadata)`` of a mechanism model, or ``(None, None)``."""
    for kind in ("spatial", "planar"):
        md = model.metadata.get(kind)
        if md is not None:
            return kind, md
    return None, None


def is_body(model, name):
    kind, md = mechanism_of(model)
    return kind is not None and name in getattr(md, "bodies", ())


def _check(sol, body):
    kind, md = mechanism_of(sol.model)
    if kind is None:
        raise ModelError("the solution's model is not a mechanism: it has no bodies")
    if body not in md.bodies:
        raise ModelError(f"no body named {body!r}; the bodies are {list(md.bodies)}")
    return kind, md


def _rows(sol, body, what, build):
    """Values of the expressions ``build()`` over the trajectory, compiled once (kept in the solution's cache)."""
    key = ("body", body, what)
    entry = sol._cache.get(key)
    if entry is None:
        exprs = [sol._internal(sp.sympify(e)) for e in build()]
        table = sol._symbol_rows()
        used = sorted(set().union(*(e.free_symbols for e in exprs)), key=sp.default_sort_key)
        fn = sp.lambdify(used, exprs, modules="numpy", cse=True)
        entry = sol._cache[key] = (fn, tuple(table[s] for s in used))
    fn, rows = entry
    K = sol.t.size
    args = [sol._block(b) if b == "t" else sol._block(b)[i] for b, i in rows]
    return np.array([np.broadcast_to(np.asarray(v, dtype=float), (K,)) for v in fn(*args)])


def _quat_matrices(e):
    e = e / np.linalg.norm(e, axis=0)
    e0, e1, e2, e3 = e
    return np.array([
        [e0**2 + e1**2 - e2**2 - e3**2, 2 * (e1 * e2 - e0 * e3), 2 * (e1 * e3 + e0 * e2)],
        [2 * (e1 * e2 + e0 * e3), e0**2 - e1**2 + e2**2 - e3**2, 2 * (e2 * e3 - e0 * e1)],
        [2 * (e1 * e3 - e0 * e2), 2 * (e2 * e3 + e0 * e1), e0**2 - e1**2 - e2**2 + e3**2]])


def _planar(sol, body, suffix=""):
    b = identifier(body)
    return np.array([sol[f"{c}_{b}{suffix}"] for c in ("x", "y", "theta")])


def pose(sol, body):
    """``(position, R)`` of ``body`` over time (see the module docstring for the shapes)."""
    kind, md = _check(sol, body)
    if kind == "planar":
        x, y, th = _planar(sol, body)
        c, s = np.cos(th), np.sin(th)
        return np.array([x, y]), np.array([[c, -s], [s, c]])
    p = md.poses[body]
    v = _rows(sol, body, "pose", lambda: list(p.r) + list(p.q))
    return v[:3], _quat_matrices(v[3:])


def angular_velocity(sol, body):
    """Angular velocity of ``body`` over time (global frame; ``theta_dot`` of a planar body)."""
    kind, md = _check(sol, body)
    if kind == "planar":
        return _planar(sol, body, "_dot")[2]
    p = md.poses[body]
    v = _rows(sol, body, "omega", lambda: list(p.q) + list(p.omega))
    return np.einsum("ijk,jk->ik", _quat_matrices(v[:4]), v[4:])


def acceleration(sol, body):
    """``(linear, angular)`` acceleration of ``body`` over time: of its centre of mass (planar) or the
    origin of its frame (spatial), global frame."""
    kind, md = _check(sol, body)
    if kind == "planar":
        ax, ay, al = _planar(sol, body, "_ddot")
        return np.array([ax, ay]), al
    p = md.poses[body]
    v = _rows(sol, body, "acceleration",
              lambda: [e.diff(T_SYM, 2) for e in p.r] + list(p.q) + [w.diff(T_SYM) for w in p.omega])
    return v[:3], np.einsum("ijk,jk->ik", _quat_matrices(v[3:7]), v[7:])
