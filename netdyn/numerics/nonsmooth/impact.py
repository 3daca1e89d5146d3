"""Newton's impact law through the constraint Jacobian, over every contact closing at one instant, and the
contact states after it (which contacts stay closed: persistent contact, the end of a Zeno accumulation).

At an impact the positions stay and the velocities jump. With ``W`` the Jacobian of the contacts in the set
(gap zero, not separating), ``B`` the joints' (bilateral, kept: ``B f⁺ + b = 0``) and ``P ≥ 0`` the
contacts' normal impulses,

    M (f⁺ − f⁻) = Wᵀ P + Bᵀ Λ,      B f⁺ + b = 0,

and Newton's law in Glocker's generalised form (the simultaneous-impact law of Moreau and Glocker, as
Siconos' ``NewtonImpactNSL``): ``ξ = γ⁺ + e γ⁻ ≥ 0``, ``P ≥ 0``, ``ξ·P = 0`` for each contact (``γ`` the
normal velocity, ``e`` its restitution). Eliminating ``f⁺`` gives a small LCP in ``P`` with the Delassus
matrix ``G = W Y Wᵀ`` (``Y`` the inverse mass on the joints' velocity constraints),
:func:`~netdyn.numerics.nonsmooth.lcp.solve_lcp`. A single contact is Newton's law ``γ⁺ = −e γ⁻``; several
contacts closing together share the impulse as the LCP says (for three touching balls with e = 1 it is not
the cradle's sequence of binary impacts: balls with a small gap between them give that).

Then the states: a contact whose next flight would be shorter than ``tau`` (``2 γ⁺ / |a|`` with ``a`` its
normal acceleration in free flight: a bouncing ball's accumulation point is that close), or whose next
bounce would rise less than the positions' roundoff (``γ⁺² / (2|a|) < 64 ε max(1, |q|)``: a gap the
integrator cannot tell from zero), gets ``e = 0`` — the Zeno accumulation ends in contact instead of a
stall, within ``t_min / (1 − e)`` of the accumulation time, ``t_min`` the longer of the two flights —;
the contacts with zero gap and zero normal velocity after the impact are held closed as long as their
normal forces push (an active set: the most pulling one is let go and the forces solved again). The kinetic
energy lost, ``T(f⁻) − T(f⁺)``, is returned for the event record.

>>> import netdyn
>>> from netdyn.components.planar import RigidBody, Gravity
>>> from netdyn.components.contact import Contact
>>> from netdyn.numerics.problem import Problem
>>> from netdyn.numerics.nonsmooth.contacts import ContactSet
>>> net = netdyn.Network("ball")
>>> _ = net.add(RigidBody("ball", 2.0, 0.01), Gravity(g=10.0), Contact("floor", "ground", (0, 0), "ball", (0, 0), e=0.5))
>>> out = impact_state(ContactSet(Problem.from_call(net, (0, 1))), 0.0, ["x_ball", "y_ball", "theta_ball"],
...                    [0.0, 0.0, 0.0], [1.0, -4.0, 0.0], tau=1e-8)
>>> out.f0["y_ball"], out.f0["x_ball"], out.closed, out.energy_lost      # ½·2·(16 − 4)
(2.0, 1.0, {'floor': False}, 12.0)
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from netdyn.numerics.nonsmooth.lcp import solve_lcp

__all__ = ["Impact", "ImpactOutcome", "impact_state"]


@dataclass(frozen=True)
class Impact:
    """One contact's part in an impact (on ``sol.events[k].impacts``): ``contact`` name, the normal velocity
    ``velocity_before`` and ``velocity_after`` (negative: approaching), the normal ``impulse`` (N·s, ≥ 0)
    and whether the contact stays closed after it (``persistent``: resting contact).

    >>> Impact("floor", -4.0, 2.0, 6.0, False).velocity_after
    2.0
    """

    contact: str
    velocity_before: float
    velocity_after: float
    impulse: float
    persistent: bool


@dataclass
class ImpactOutcome:
    """The state after an impact (``q0``, ``f0`` by coordinate name), every contact's state after it
    (``closed``), the ``impacts``, the kinetic ``energy_lost`` and a sentence for the event record."""

    q0: dict
    f0: dict
    closed: dict
    impacts: tuple = ()
    energy_lost: float = 0.0
    jump: str | None = None
    changed: bool = field(default=False)
    flights: tuple = ()  # the predicted flight of each bouncing contact (2 γ⁺ / |a|): where to look next


def _kkt(M, C):
    n, m = M.shape[0], C.shape[0]
    K = np.zeros((n + m, n + m))
    K[:n, :n], K[:n, n:], K[n:, :n] = M, C.T, C
    return K


def _project(cs, tt, q, f, closed, touching=()):
    """``q`` moved onto the joints' gaps and the zero gap of the closed and ``touching`` contacts (least
    change, Gauss–Newton: the located impact leaves a gap of about −γ·xtol) and ``f`` onto the velocity
    constraints of the joints and the closed contacts (in the metric of M: no work done on the motion the
    constraints allow)."""
    held = list(closed) + list(touching)
    for _ in range(4):
        st = cs.at(tt, q, f)
        rows = cs.cm.constraints(tt, q, f, cs.p)
        phi = np.concatenate([rows.phi[cs.bilateral], st.gap[held]])
        C = np.vstack([rows.Phi_q[cs.bilateral], st.W[held]])
        if not C.shape[0] or np.max(np.abs(phi), initial=0.0) < 1e-14 * max(1.0, np.max(np.abs(q))):
            break
        q = q - np.linalg.lstsq(C, phi, rcond=None)[0]
    st = cs.at(tt, q, f)
    C = np.vstack([st.B, st.W[closed]])
    if C.shape[0]:
        c = np.concatenate([st.b, st.w_t[closed]])
        z = np.linalg.lstsq(_kkt(st.M, C), np.concatenate([st.M @ f, -c]), rcond=None)[0]
        f = z[:f.size]
    return q, f


def impact_state(cs, tt: float, names, q, f, tau: float) -> ImpactOutcome:
    """The state after the impact at ``tt`` from ``q, f`` (by ``names``, a segment's coordinate order) over
    the contacts of ``cs`` (a :class:`~netdyn.numerics.nonsmooth.contacts.ContactSet`) with zero gap, and
    every contact's state after it; ``tau``: the shortest flight a bounce may have (the Zeno cut)."""
    order = cs.order(names)
    q = np.asarray(q, dtype=float)[order]
    f = np.asarray(f, dtype=float)[order]
    st = cs.at(tt, q, f)
    scale = max(1.0, float(np.max(np.abs(q))))
    vscale = max(1e-300, float(np.max(np.abs(f), initial=0.0)), float(np.max(np.abs(st.rate), initial=0.0)))
    vzero = 1e-9 * vscale
    gtol = 1e-8 * scale
    S = [i for i in range(len(cs.names)) if st.gap[i] <= gtol and st.rate[i] <= vzero]
    n = q.size
    K = _kkt(st.M, st.B)
    nb = st.B.shape[0]
    # f without impulses: f⁻ on the joints' velocity constraints (it is already, to the integrator's tolerance)
    f_free = np.linalg.lstsq(K, np.concatenate([st.M @ f, -st.b]), rcond=None)[0][:n]
    WS = st.W[S]
    Y_Wt = np.linalg.lstsq(K, np.vstack([WS.T, np.zeros((nb, len(S)))]), rcond=None)[0][:n] if S else np.zeros((n, 0))
    G = WS @ Y_Wt
    g_minus = st.rate[S]
    g_free = WS @ f_free + st.w_t[S]
    e = cs.restitution[S].copy()
    names_S = [cs.names[i] for i in S]
    P = solve_lcp(G, g_free + e * np.minimum(g_minus, 0.0), names_S)
    f_plus = f_free + Y_Wt @ P
    g_plus = WS @ f_plus + st.w_t[S]
    # the Zeno cut: a bounce whose flight would be shorter than tau, or whose height the positions' roundoff
    # cannot resolve, ends in contact (e = 0 for it: its kinetic energy normal to the contact is lost)
    rest = []
    if S:
        _, acc = cs.normal_forces(cs.at(tt, q, f_plus), [])
        h_min = 64 * np.finfo(float).eps * scale
        rest = [k for k, i in enumerate(S) if acc[i] < 0
                and g_plus[k] < max(0.5 * tau * -acc[i], np.sqrt(2 * -acc[i] * h_min))]
        if rest:
            e[rest] = 0.0
            P = solve_lcp(G, g_free + e * np.minimum(g_minus, 0.0), names_S)
            f_plus = f_free + Y_Wt @ P
            g_plus = WS @ f_plus + st.w_t[S]
    # persistent contact: zero gap and zero normal velocity, held while the normal force pushes
    vzero = max(vzero, 1e-9 * float(np.max(np.abs(g_minus), initial=0.0)))
    closed = [i for k, i in enumerate(S) if k in rest or abs(g_plus[k]) <= vzero]
    after = cs.at(tt, q, f_plus)
    while closed:
        N, _ = cs.normal_forces(after, closed)
        worst = int(np.argmin(N))
        if N[worst] > 0:
            break
        closed.pop(worst)
    q_new, f_new = _project(cs, tt, q, f_plus, closed, [i for i in S if i not in closed])
    lost = 0.5 * float(f @ st.M @ f) - 0.5 * float(f_plus @ st.M @ f_plus)
    impacts = tuple(Impact(cs.names[i], float(g_minus[k]), float(g_plus[k]), float(P[k]), i in closed)
                    for k, i in enumerate(S) if P[k] > 0 or g_minus[k] < -vzero)
    hit = [imp.contact for imp in impacts if imp.impulse > 0]
    jump = None
    if hit:
        jump = "impact: " + ", ".join(f"{imp.contact} (e = {cs.restitution[cs.names.index(imp.contact)]:g}, "
                                      f"normal velocity {imp.velocity_before:.6g} -> {imp.velocity_after:.6g})"
                                      for imp in impacts if imp.impulse > 0)
    states = {name: (i in closed) for i, name in enumerate(cs.names)}
    _, acc = cs.normal_forces(cs.at(tt, q_new, f_new), closed)
    flights = tuple(2 * g_plus[k] / -acc[i] for k, i in enumerate(S)
                    if i not in closed and g_plus[k] > 0 and acc[i] < 0)
    return ImpactOutcome(dict(zip(cs.coordinate_names, q_new.tolist())), dict(zip(cs.coordinate_names, f_new.tolist())),
                         states, impacts, lost if hit else 0.0, jump, bool(hit), flights)
