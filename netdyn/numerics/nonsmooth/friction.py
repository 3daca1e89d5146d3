"""Event-driven Coulomb friction: the stick–slip switching of the friction contacts of a network.

A contact (:class:`~netdyn.components.friction.CoulombFriction`: ``Friction``, ``RotationalFriction``,
``Clutch``) slides with its kinetic level against the relative velocity ``v``, or sticks (the constraint
``v = 0``, its multiplier ``i`` the friction force needed). :mod:`netdyn.numerics.events` runs the switching:

* sliding → sticking when ``v`` crosses zero (:func:`friction_events`, located as any event);
* sticking → sliding when ``|i|`` reaches the static level ``F_s``, in the direction of ``i``;
* at the start of the run and after each switch, :func:`settle` makes the states consistent: an undecided
  contact slides with the sign of ``v`` (sticks when ``v = 0``), and a sticking contact whose force ``i``
  already exceeds ``F_s`` slides in its direction — a contact that reaches ``v = 0`` and cannot hold
  reverses there instead of sticking.

>>> import netdyn
>>> from netdyn.components.translational import Mass, Friction, Force
>>> net = netdyn.Network("pushed block")
>>> _ = net.add(Mass("m", "x", m=1.0), Friction("F1", "x", "0", force=1.0, static_force=2.0), Force("P", "x", 1.5))
>>> [e.name for e in friction_events(net)], frictions(net)[0].state
([], None)
>>> sol = netdyn.simulate(net, (0, 1))
>>> sol.pieces[0].model.flow_constraints != [], round(float(sol.series("f(F1)")[-1]), 9)     # stuck: holds 1.5 N
(True, 1.5)
"""
from __future__ import annotations

from netdyn.numerics.results.events import Event

__all__ = ["frictions", "friction_events", "settle", "stuck_flows", "VELOCITY_ZERO"]

#: a relative velocity within this of zero (times max(1, |v(a)|, |v(b)|)) is at rest at a state decision
VELOCITY_ZERO = 1e-10


def frictions(system):
    """The event-driven friction contacts of a network (regularised ones have no states)."""
    from netdyn.components.friction import CoulombFriction
    elements = getattr(system, "elements", None)
    if not isinstance(elements, dict):
        return []
    return [el for el in elements.values() if isinstance(el, CoulombFriction) and el.regularization is None]


def friction_events(system):
    """The events the contacts' current states bring: each an :class:`Event` whose action sets the state."""
    out = []
    for el in frictions(system):
        for g, direction, state, name in el.events():
            out.append(Event(g, name=name, direction=direction, action={el.name: state}))
    return out


def settle(system, probe, t, rebuild, limit=None):
    """The states of ``system``'s contacts consistent at ``t``: ``{name: state}`` of the changes (empty when
    they already are). ``probe(system)`` reads the named series at ``t`` of ``system`` started from the
    current state (``s["v(F1)"]``, ``s["f(F1)"]``); ``rebuild(system, {name: state})`` makes the network with
    those states (:func:`netdyn.numerics.events.with_changes`). Contacts are decided one at a time (the largest excess
    of the static level first) and the network probed again after each, at most ``limit`` rounds (default:
    twice the number of contacts, then the states found are kept)."""
    contacts = frictions(system)
    if not contacts:
        return {}
    changes = {}
    undecided = [el for el in contacts if el.state is None]
    if undecided:  # no contact's force acts while undecided: the relative velocities are the given ones
        s = probe(system)
        for el in undecided:
            v = s[f"v({el.name})"]
            changes[el.name] = "stick" if abs(v) <= VELOCITY_ZERO * _scale(el, s) else (1 if v > 0 else -1)
        system = rebuild(system, changes)
    for _ in range(limit if limit is not None else 2 * len(contacts) + 1):
        s = probe(system)
        worst, excess = None, 1e-12
        for el in frictions(system):
            if el.sticking:
                force, static = s[f"f({el.name})"], el.static_at(t)
                ratio = abs(force) / static - 1 if static > 0 else (abs(force) > 0) * 1.0
                if ratio > excess:
                    worst, excess = (el, 1 if force > 0 else -1), ratio
        if worst is None:
            break
        changes[worst[0].name] = worst[1]
        system = rebuild(system, {worst[0].name: worst[1]})
    return changes


def _scale(el, s):
    """``max(1, |v(a)|, |v(b)|)`` of a contact's nodes."""
    out = 1.0
    for node in el.terminals:
        if node != "0":
            try:
                out = max(out, abs(s[f"v({node})"]))
            except Exception:  # a node the solution does not name: the relative velocity alone
                pass
    return out


def stuck_flows(system, f0):
    """``f0`` (node flows by coordinate name) with each sticking contact's two node velocities made equal — the
    relative velocity left at a located event (the bracket's right end: of the order of the event tolerance
    times the acceleration) removed by a plastic impulse: a node whose velocity is prescribed (ground, a
    velocity or position source to ground) keeps it and the other takes it; two free nodes take their
    momentum-weighted mean (by the masses or inertias at the nodes). Returns a new dict."""
    from netdyn.components.base import DOMAINS
    out = dict(f0)
    for el in frictions(system):
        if not el.sticking:
            continue
        prefix = DOMAINS[el.ports[0].domain]["node_prefix"]
        names = [None if n == "0" else f"{prefix}_{n}" for n in el.terminals]
        if any(n is not None and n not in out for n in names):
            continue  # a formulation without node coordinates: the start makes it consistent
        fixed = [n is None or _prescribed(system, n[len(prefix) + 1:]) for n in names]
        value = [0.0 if n is None else out[n] for n in names]
        if fixed[0] and fixed[1]:
            continue
        if fixed[0] or fixed[1]:
            w = value[0] if fixed[0] else value[1]
        else:
            m = [_inertia(system, n[len(prefix) + 1:]) for n in names]
            w = (m[0] * value[0] + m[1] * value[1]) / (m[0] + m[1]) if m[0] + m[1] > 0 else 0.5 * sum(value)
        for n, fx in zip(names, fixed):
            if not fx:
                out[n] = w
    return out


def _prescribed(system, node):
    """Whether a source between ``node`` and ground prescribes its velocity (or position)."""
    from netdyn.components.base import AcrossSource, DisplacementSource
    return any(isinstance(el, (AcrossSource, DisplacementSource)) and set(el.terminals) == {node, "0"}
               for el in system.elements.values())


def _inertia(system, node):
    """The mass or inertia at ``node`` (the inertia elements between it and ground)."""
    total = 0.0
    for el in system.elements.values():
        if getattr(el, "law", None) == "through_storage" and set(el.terminals) == {node, "0"}:
            try:
                total += float(el.coefficient(el.values))
            except TypeError:  # a symbolic mass: no weight
                pass
    return total
