"""Independent reference models of a planar n-link pendulum.

Two engines that share no code with netdyn (nor with each other) give the joint
accelerations of the same chain, so that netdyn's results can be checked against them:

* :func:`pinocchio_pendulum` / :func:`pinocchio_forward` -- Pinocchio's recursive
  articulated-body algorithm (``pinocchio.aba``) on a model built joint by joint;
* :func:`kane_pendulum` -- ``sympy.physics.mechanics.KanesMethod`` written the classic
  way (reference frames, points, rigid bodies, gravity loads), lambdified.

Convention (the same for both, and for :func:`single_pendulum_acceleration`)
---------------------------------------------------------------------------
* The chain moves in the x-y plane; every joint is revolute about z; gravity ``g`` acts
  along -y (``g > 0``).
* The first joint is at the origin; joint ``i`` (``i >= 2``) is at the far end of link
  ``i - 1``.
* Link ``i`` has mass ``m_i`` and length ``l_i``; its centre of mass is at mid-link and its
  moment of inertia about the centre of mass (axis z) is ``I_i = m_i l_i**2 / 12``
  (a slender rod).
* The joint angle ``q_i`` is *relative*: the angle of link ``i`` measured from the
  direction of link ``i - 1`` (from the +x axis for ``i = 1``), counter-clockwise positive.
  The absolute angle of link ``i`` from the +x axis is ``q_1 + ... + q_i``. All zero
  angles put the whole chain straight along +x.
* Speeds ``u_i = dq_i/dt`` and accelerations ``d2q_i/dt2`` are the relative joint rates;
  torques ``tau_i`` act at joint ``i`` between link ``i - 1`` (or ground) and link ``i``.

Example
-------
>>> import numpy as np
>>> model = pinocchio_pendulum(2, [1.0, 1.0], [1.0, 1.0])
>>> qdd_pin = pinocchio_forward(model, [0.3, -0.2], [0.1, 0.5])
>>> accel = kane_pendulum(2)
>>> qdd_kane = accel([0.3, -0.2], [0.1, 0.5], {"masses": [1.0, 1.0], "lengths": [1.0, 1.0]})
>>> bool(np.allclose(qdd_pin, qdd_kane, rtol=1e-10, atol=0))
True
"""
from collections.abc import Mapping

import numpy as np

__all__ = [
    "pinocchio_pendulum",
    "pinocchio_forward",
    "kane_pendulum",
    "kane_system",
    "lagrange_system",
    "single_pendulum_acceleration",
]


def _check(n, masses, lengths):
    n = int(n)
    if n < 1:
        raise ValueError(f"the pendulum needs at least one link, got n={n}")
    masses = np.broadcast_to(np.asarray(masses, dtype=float), (n,)).copy()
    lengths = np.broadcast_to(np.asarray(lengths, dtype=float), (n,)).copy()
    if np.any(masses <= 0) or np.any(lengths <= 0):
        raise ValueError("masses and lengths must be positive")
    return n, masses, lengths


# --------------------------------------------------------------------------- Pinocchio
def pinocchio_pendulum(n, masses, lengths, g=9.81):
    """A ``pinocchio.Model`` of the planar n-link pendulum (module convention).

    Joints are ``JointModelRZ`` chained one after the other; joint ``i`` sits at
    ``(l_{i-1}, 0, 0)`` in the frame of link ``i - 1``, whose x axis runs along the link.
    Each link's spatial inertia is a slender rod: mass ``m_i``, centre of mass at
    ``(l_i/2, 0, 0)``, inertia about it ``diag(0, m_i l_i^2/12, m_i l_i^2/12)``
    (only the z component acts in the plane). Gravity is ``(0, -g, 0)``.

    ``masses`` and ``lengths`` are sequences of ``n`` values (a scalar is repeated).

    >>> model = pinocchio_pendulum(3, 1.0, 0.5)
    >>> model.nq, model.nv
    (3, 3)
    """
    import pinocchio as pin

    n, masses, lengths = _check(n, masses, lengths)
    model = pin.Model()
    model.name = f"planar_pendulum_{n}"
    parent = 0  # the universe
    for i in range(n):
        placement = pin.SE3(np.eye(3), np.array([lengths[i - 1] if i else 0.0, 0.0, 0.0]))
        joint = model.addJoint(parent, pin.JointModelRZ(), placement, f"joint_{i + 1}")
        izz = masses[i] * lengths[i] ** 2 / 12.0
        inertia = pin.Inertia(masses[i], np.array([lengths[i] / 2.0, 0.0, 0.0]),
                              np.diag([0.0, izz, izz]))
        model.appendBodyToJoint(joint, inertia, pin.SE3.Identity())
        parent = joint
    model.gravity.linear = np.array([0.0, -float(g), 0.0])
    return model


def pinocchio_forward(model, q, v, tau=None, data=None):
    """Joint accelerations ``d2q/dt2`` by Pinocchio's articulated-body algorithm.

    ``tau`` defaults to zero joint torques. Pass ``data=model.createData()`` to reuse the
    workspace across calls (that is what a timing loop should do).

    >>> model = pinocchio_pendulum(1, 2.0, 1.0)
    >>> float(pinocchio_forward(model, [0.0], [0.0])[0])  # -(m g l/2)/(m l^2/3)
    -14.715
    """
    import pinocchio as pin

    if data is None:
        data = model.createData()
    q = np.asarray(q, dtype=float)
    v = np.asarray(v, dtype=float)
    tau = np.zeros(model.nv) if tau is None else np.asarray(tau, dtype=float)
    return np.array(pin.aba(model, data, q, v, tau), dtype=float)


# --------------------------------------------------------------------------- sympy.physics.mechanics
def _mechanics_chain(n):
    """Frames, points, bodies and loads of the chain, shared by Kane's and Lagrange's method."""
    import sympy as sp
    from sympy.physics import mechanics as me

    q = me.dynamicsymbols(f"q1:{n + 1}")
    u = me.dynamicsymbols(f"u1:{n + 1}")
    m = sp.symbols(f"m1:{n + 1}", positive=True)
    l = sp.symbols(f"l1:{n + 1}", positive=True)
    g = sp.Symbol("g", positive=True)

    N = me.ReferenceFrame("N")
    O = me.Point("O")
    O.set_vel(N, 0)
    frame, joint = N, O
    bodies, loads, frames = [], [], []
    for i in range(n):
        A = me.ReferenceFrame(f"A{i + 1}")
        A.orient_axis(frame, frame.z, q[i])
        G = joint.locatenew(f"G{i + 1}", l[i] / 2 * A.x)
        P = joint.locatenew(f"P{i + 1}", l[i] * A.x)
        inertia = me.inertia(A, 0, m[i] * l[i] ** 2 / 12, m[i] * l[i] ** 2 / 12)
        bodies.append(me.RigidBody(f"B{i + 1}", G, A, m[i], (inertia, G)))
        loads.append((G, -m[i] * g * N.y))
        frames.append((A, G, P))
        frame, joint = A, P
    return dict(q=q, u=u, m=m, l=l, g=g, N=N, O=O, bodies=bodies, loads=loads, frames=frames)


def kane_system(n):
    """Derive the chain with ``KanesMethod`` (the classic way); return ``(kane, chain)``.

    Angular velocities and point velocities are set from the generalized speeds
    (``A_i`` rotates at ``u_i`` about z relative to ``A_{i-1}``; ``v2pt_theory`` for the
    points), the kinematic differential equations are ``q_i' = u_i``. ``chain`` holds the
    symbols (``q``, ``u``, ``m``, ``l``, ``g``). This is the derivation a benchmark times.
    """
    from sympy.physics import mechanics as me

    c = _mechanics_chain(n)
    N, q, u = c["N"], c["q"], c["u"]
    prev, joint = N, c["O"]
    for i, (A, G, P) in enumerate(c["frames"]):
        A.set_ang_vel(prev, u[i] * prev.z)
        G.v2pt_theory(joint, N, A)
        P.v2pt_theory(joint, N, A)
        prev, joint = A, P
    kd = [q[i].diff(me.dynamicsymbols._t) - u[i] for i in range(n)]
    kane = me.KanesMethod(N, q_ind=q, u_ind=u, kd_eqs=kd)
    kane.kanes_equations(c["bodies"], c["loads"])
    return kane, c


def lagrange_system(n):
    """Derive the chain with ``LagrangesMethod``; return ``(lagrange, chain)``.

    The Lagrangian is built from the same rigid bodies (``me.Lagrangian``) with the
    gravity potential; ``form_lagranges_equations`` is the derivation a benchmark times.
    """
    from sympy.physics import mechanics as me

    c = _mechanics_chain(n)
    N = c["N"]
    # angular velocities follow from orient_axis (in q'); no generalized speeds here
    joint = c["O"]
    for A, G, P in c["frames"]:
        G.v2pt_theory(joint, N, A)
        P.v2pt_theory(joint, N, A)
        joint = P
    for body in c["bodies"]:
        body.potential_energy = body.mass * c["g"] * body.masscenter.pos_from(c["O"]).dot(N.y)
    L = me.Lagrangian(N, *c["bodies"])
    lm = me.LagrangesMethod(L, c["q"])
    lm.form_lagranges_equations()
    return lm, c


def _params(params, n):
    if isinstance(params, Mapping):
        masses = params["masses"]
        lengths = params["lengths"]
        g = params.get("g", 9.81)
    else:
        masses, lengths, g = params
    _, masses, lengths = _check(n, masses, lengths)
    return np.concatenate([masses, lengths, [float(g)]])


def kane_pendulum(n, masses=None, lengths=None, g=9.81):
    """Accelerations of the n-link pendulum from sympy's ``KanesMethod``.

    Returns ``accel(q, u, params=None) -> d2q/dt2`` (numpy array of ``n``), which solves
    ``M(q) u' = F(q, u)`` with the lambdified mass matrix and forcing vector of Kane's
    equations. ``params`` is a mapping with ``"masses"``, ``"lengths"`` and optionally
    ``"g"`` (default 9.81), or a tuple ``(masses, lengths, g)``; if omitted, the
    ``masses``, ``lengths`` and ``g`` given here are used.

    >>> accel = kane_pendulum(1, 2.0, 1.0)
    >>> float(accel([0.0], [0.0])[0])  # doctest: +ELLIPSIS
    -14.71...
    """
    import sympy as sp

    n = int(n)
    kane, c = kane_system(n)
    q, u = list(c["q"]), list(c["u"])
    qs = sp.symbols(f"qq1:{n + 1}")
    us = sp.symbols(f"uu1:{n + 1}")
    sub = dict(zip(q + u, qs + us))
    M = kane.mass_matrix.xreplace(sub)  # exact swap of q(t), u(t) for plain symbols (subs is slow here)
    F = kane.forcing.xreplace(sub)
    args = (qs, us, c["m"], c["l"], c["g"])
    f_M = sp.lambdify(args, M, modules="numpy", cse=True)
    f_F = sp.lambdify(args, F, modules="numpy", cse=True)
    default = None if masses is None or lengths is None else (masses, lengths, g)

    def accel(q, u, params=None):
        p = _params(default if params is None else params, n)
        qv = np.asarray(q, dtype=float).reshape(n)
        uv = np.asarray(u, dtype=float).reshape(n)
        a = (qv, uv, p[:n], p[n:2 * n], p[-1])
        Mv = np.asarray(f_M(*a), dtype=float).reshape(n, n)
        Fv = np.asarray(f_F(*a), dtype=float).reshape(n)
        return np.linalg.solve(Mv, Fv)

    accel.n = n
    accel.kane = kane
    return accel


def single_pendulum_acceleration(theta, m, l, g=9.81):
    """Closed form for one link: ``-(m g l/2 cos(theta)) / (I + m l^2/4)``, ``I = m l^2/12``.

    ``theta`` is measured from +x (module convention), so the link hangs at
    ``theta = -pi/2``, where the acceleration is zero.

    >>> round(float(single_pendulum_acceleration(0.0, 1.0, 1.0, 9.81)), 6)
    -14.715
    """
    inertia = m * l ** 2 / 12.0
    return -(m * g * l / 2.0 * np.cos(theta)) / (inertia + m * l ** 2 / 4.0)
