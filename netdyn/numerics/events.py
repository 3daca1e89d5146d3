"""Events on every path: crossings found between output times, located by a bracketing root finder on the
path's own integration, actions applied, and the run restarted from the located state.

The loop works through a path's ``run`` only, so it is the same on ``linear``, ``circuit``, ``projection``,
``ida`` and ``recursive``:

1. integrate the segment ``[ta, t1]`` (PULSE/PWL corners are already segment ends of every path: time
   events are stepped onto exactly) and evaluate each event's ``g`` at the outputs;
2. in the first output interval where a ``g`` changes sign in its ``direction`` (``solve_ivp``'s rule: up
   is ``g_old <= 0 <= g_new``), locate the zero by the Illinois method, each trial integrating from the
   interval's left state to the trial time with the path's own integrator (no interpolant error: the
   located time is as good as the integrator's tolerance and ``EVENT_XTOL`` of the span); the bracket's
   right end is kept, so the state after the event already has ``g``'s new sign and the event does not fire
   again on restart;
3. record it (:class:`~netdyn.numerics.results.events.EventRecord`); an event without action or stop goes
   on with the same integration; one with an action changes the network (an element's value, a switch's
   state), the parameters or the state, makes the state consistent with the new constraint set
   (:mod:`netdyn.numerics.circuit.jumps` on a circuit: charges and fluxes kept where the constraints allow,
   the impulse rule where they do not, its energy booked) and integrates the next segment from there.

Switches with a control (SPICE ``S``/``W``: :class:`~netdyn.components.electrical.VoltageSwitch`,
:class:`~netdyn.components.electrical.CurrentSwitch`) bring their own events: at each segment start the
switch whose control is already past its threshold flips (ngspice's level rule), and the crossings of its
thresholds flip it during the run. Friction contacts (:mod:`netdyn.numerics.nonsmooth.friction`) bring theirs
too: sliding → sticking when the relative velocity crosses zero, sticking → sliding when the force needed
reaches the static level; their states are settled at the start and after each action.
"""
from __future__ import annotations

import inspect
import warnings
from types import SimpleNamespace

import numpy as np

from netdyn.errors import InitialConditionError, IntegrationError
from netdyn.numerics import paths
from netdyn.numerics.integrators.driver import scaled_atol
from netdyn.numerics.integrators.path import Method
from netdyn.numerics.nonsmooth.friction import friction_events, frictions, settle, stuck_flows
from netdyn.numerics.results.events import Event, EventRecord
from netdyn.numerics.results.pieces import PiecewiseSolution, state_of

__all__ = ["solve_with_events", "EVENT_XTOL", "MAX_EVENTS", "with_changes"]

#: the located event time's bracket, relative to the span: ``max(EVENT_XTOL, rtol / 1000)``
EVENT_XTOL = 1e-13
#: events with actions in one run before it is called a chattering (Zeno) run
MAX_EVENTS = 100_000


class _Reader:
    """``s[name]`` at column ``k`` of a solution (series read once per solution)."""

    def __init__(self, sol, cache=None):
        self.sol, self.cache = sol, {} if cache is None else cache

    def column(self, name):
        if name not in self.cache:
            self.cache[name] = np.asarray(self.sol.series(name), dtype=float)
        return self.cache[name]


class _At:
    def __init__(self, reader, k):
        self.reader, self.k = reader, k

    def __getitem__(self, name):
        return float(self.reader.column(name)[..., self.k])


def _values(event, sol, reader, columns):
    return np.array([event.value(sol.t[k], _At(reader, k)) for k in columns])


def _crossed(g_old, g_new, direction):
    up = g_old <= 0 <= g_new and not (g_old == 0 and g_new == 0)
    down = g_old >= 0 >= g_new and not (g_old == 0 and g_new == 0)
    return (up and direction >= 0) or (down and direction <= 0)


class _Segments:
    """The path, its start and plan, kept per system (switch states recur: a converter's two states are
    stamped once each), and the run of one segment from a given state."""

    def __init__(self, problem):
        self.problem = problem
        self.cache = {}
        self.atols = {}  # per system: the first pass's scaled atol (a changed network may have other coordinates)
        self.declined = None

    def _walk(self, problem, key, fresh=False):
        if fresh and key in self.cache and not self.cache[key][0].symbolic:
            return self.cache[key]  # a numeric path's plan does not depend on the state: made once a key
        if fresh or key not in self.cache:
            row, verdict, declined, start = paths.walk(problem)
            self.cache.setdefault(key, (row, verdict, start))
            if self.declined is None:
                self.declined = (row.name, verdict.reason, declined)
            if fresh:
                return row, verdict, start
        return self.cache[key]

    def atol(self, key):
        """The absolute tolerance of the system ``key``: the problem's, or its first pass's scaled one."""
        return self.atols.get(key, self.problem.atol)

    def run(self, problem, key, ta, tb, sol=None, k=None, t_eval=None):
        """Integrate ``problem``'s system from ``ta`` (the state of ``sol`` at column ``k``, or
        ``problem.q0/f0``) to ``tb`` with outputs ``t_eval`` (``tb`` always among them)."""
        te = np.unique(np.r_[np.asarray([] if t_eval is None else t_eval, dtype=float), tb])
        te = te[(te > ta) & (te <= tb)]
        if sol is None:
            first = problem.replace(t_span=(ta, tb), t_eval=np.r_[ta, te])
            row, verdict, start = self._walk(first, key, fresh=True)
            out = row.run(first, start, verdict.plan)
            if self.atol(key) is None and row.symbolic:  # later segments: the first pass's scaled atol, fixed
                self.atols[key] = scaled_atol(SimpleNamespace(q=out.q, f=out.f, t=out.t, dissipated=None),
                                        problem.rtol_or(1e-8))
            return out
        names = list(sol.coordinate_names)
        q, f = sol.q[:, k].copy(), sol.f[:, k].copy()
        nxt = problem.replace(t_span=(ta, tb), t_eval=np.r_[ta, te], q0=dict(zip(names, q)),
                              f0=dict(zip(names, f)), atol=self.atol(key))
        row, verdict, start = self._walk(nxt, key)
        if row.symbolic:
            start = _Restart(start, nxt, q, f)
        return row.run(nxt, start, verdict.plan)


class _Restart:
    """A symbolic start at a later state: the same compiled model and parameters, the state given (already
    consistent: it is the integrator's own)."""

    def __init__(self, start, problem, q, f):
        self.problem, self.model, self.cm, self.p, self.q, self.f = problem, start.model, start.cm, start.p, q, f


def _elements(system):
    """A network's elements (none for a model or a bond graph, whose ``elements`` are no dict of them)."""
    elements = getattr(system, "elements", None)
    return list(elements.values()) if isinstance(elements, dict) else []


def _element_events(system):
    """The events a network's switches with a control bring (``switching()``: condition, direction, state
    it flips to)."""
    out = []
    for el in _elements(system):
        for cond, direction, state in getattr(el, "switching", lambda: ())():
            out.append(Event(cond, name=f"{el.name} {'closes' if state else 'opens'}", direction=direction,
                             action={el.name: state}))
    return out + friction_events(system)  # friction contacts: stick <-> slip (netdyn.numerics.nonsmooth.friction)


def _element_key(system):
    """What tells one state of a changing network from another: switch and contact states, element values."""
    return tuple((el.name, getattr(el, "closed", getattr(el, "state", None)),
                  tuple((k, str(v)) for k, v in el.values.items())) for el in _elements(system))


def with_changes(system, changes):
    """``system`` with element values or switch states changed (a new network; the old one untouched), and
    the changes that are parameters (names that are no element)."""
    elements = getattr(system, "elements", None)
    if not isinstance(elements, dict) or not elements:
        return system, dict(changes)
    params, replaced = {}, {}
    for name, value in changes.items():
        if name in elements:
            replaced[name] = _changed(elements[name], value)
        else:
            params[name] = value
    if not replaced:
        return system, params
    new = type(system)(system.name)
    for attr, value in vars(system).items():  # what a netlist keeps beside its elements (.tran, .ic, ...)
        if attr not in vars(new):
            setattr(new, attr, value)
    new.add(*[replaced.get(n, el) for n, el in elements.items()], *system.bodies.values())
    return new, params


def _changed(element, value):
    if hasattr(element, "with_state"):  # a switch (closed or not), a friction contact (sticking or sliding)
        return element.with_state(value)
    cls, args, kw = element._constructor
    sig = inspect.signature(cls.__init__)
    bound = sig.bind(None, *args, **kw)
    keys = [k for k in element.values if k in sig.parameters]
    if len(element.values) != 1:
        raise IntegrationError(f"event action: {element.name} has {len(element.values)} values "
                               f"({', '.join(element.values)}); change one by its parameter name in params")
    key = keys[0] if keys else list(sig.parameters)[len(bound.args) - 1]
    bound.arguments[key] = value
    return cls(*bound.args[1:], **bound.kwargs)


def solve_with_events(problem, events, restart_start=None):
    """The run of ``problem`` with ``events`` (user events and the switches' own), as a
    :class:`~netdyn.numerics.results.pieces.PiecewiseSolution` whose ``events`` lists what happened.

    ``restart_start(problem) -> problem``: how a changed network's initial state is made when the run starts
    (the SPICE start of a netlist redone after a switch flipped at ``t0``).
    """
    t0, t1 = problem.t_span
    span = t1 - t0
    if _ideal_switches(problem.system):  # the impulse rule works on node fluxes and voltages
        if problem.formulation not in (None, "node", {"electrical": "node"}):
            from netdyn.numerics.circuit.jumps import SwitchFormulationError
            raise SwitchFormulationError(f"ideal switches ({', '.join(e.name for e in _ideal_switches(problem.system))})"
                                         " run in the node formulation; drop formulation= or give 'node'")
        problem = problem.replace(formulation="node")
    xtol = max(EVENT_XTOL, 1e-3 * problem.rtol_or(1e-8)) * max(span, abs(t1))
    requested = problem.t_eval
    scan = _scan_times(requested, _corners(problem.system, t0, t1), span)
    contacts = _contact_set(problem)  # unilateral contacts: impacts and persistent contact (nonsmooth/)
    if contacts is not None and problem.atol is None:
        # a body resting on a contact is still to roundoff: scaling atol by its magnitude would ask for the
        # roundoff itself (endless steps); mechanisms with contacts take rtol/100 of 1 (m, rad, m/s)
        problem = problem.replace(atol=1e-2 * problem.rtol_or(1e-8))
    segs = _Segments(problem)
    system, params = problem.system, dict(problem.params or {})
    counts = {e.name: 0 for e in events}
    records, pieces = [], []
    # switches already past their thresholds at t0 flip before anything is integrated (ngspice's DC rule)
    for _ in range(len(_elements(system)) + 1):
        flips = _level_flips(system, segs, problem, t0)
        if not flips:
            break
        system, _ = with_changes(system, flips)
        problem = problem.replace(system=system)
        if restart_start is not None:
            problem = restart_start(problem)
    if frictions(system):  # friction contacts: their states at t0 from the given velocities and forces
        def probe(trial):
            try:
                out = segs.run(problem.replace(system=trial), (_element_key(trial), tuple(sorted(params.items()))),
                               t0, t0 + 1e-9 * span)
            except InitialConditionError as err:
                stuck = [el.name for el in frictions(trial) if el.sticking]
                if not stuck:
                    raise
                raise InitialConditionError(f"{', '.join(stuck)} stick (v(a) = v(b)) at t0 and the initial values "
                                            f"cannot meet that ({err}); give state=None (decided from the initial "
                                            "velocities) or velocities that agree") from err
            return _At(_Reader(out), 0)
        flips = settle(system, probe, t0, _rebuild)
        if flips:
            system, _ = with_changes(system, flips)
            problem = problem.replace(system=system)
    ta, prev, kprev = t0, None, None
    pending_jump, just_fired, pending = None, set(), None
    window = span / 16  # scanned ahead at a time: doubled while no event comes, sized by the last gap after one
    last_event = t0
    while True:
        pb = problem.replace(system=system, params=params or problem.params)
        key = (_element_key(system), tuple(sorted(params.items())))
        tw = t1 if ta + 1.5 * window >= t1 else ta + window
        sol = pending if pending is not None else segs.run(pb, key, ta, tw, prev, kprev, scan)
        pending = None
        tw = float(sol.t[-1])
        every = list(events) + _element_events(system) + (contacts.events(system) if contacts else [])
        readers = _Reader(sol)
        ncol = sol.t.size
        g = {id(e): _values(e, sol, readers, range(ncol)) for e in every}
        found = None
        start_col = 0
        while found is None:
            hit = _first_crossing(every, g, start_col, ncol, just_fired if prev is not None else ())
            if hit is None:
                break
            kcol, cands = hit
            located = []
            for e in cands:
                tb, sol_b = _locate(e, segs, pb, key, sol, kcol, xtol)
                located.append((tb, e, sol_b))
            tb = min(x[0] for x in located)
            fired = [x for x in located if x[0] <= tb + xtol]
            stop = False
            act = [x for x in fired if x[1].action is not None or x[1].stops_after]
            for tb_e, e, sol_b in fired:
                counts[e.name] = counts.get(e.name, 0) + 1
                if e.stops_after and counts[e.name] >= e.stops_after:
                    stop = True
            if not act:  # record only: the integration goes on
                for tb_e, e, sol_b in fired:
                    before = state_of(sol_b)
                    records.append(EventRecord(tb_e, e.name, _sign(e, g, kcol), before, before))
                start_col = kcol + 1
                continue
            found = (kcol, fired, stop)
        if found is None:
            pieces.append((sol, _keep(sol, requested, ta, tw, prev is not None, pending_jump)))
            if tw >= t1:
                break
            ta, prev, kprev = tw, sol, sol.t.size - 1  # the next window from where this one ended
            pending_jump, just_fired = None, set()
            window *= 2
            continue
        kcol, fired, stop = found
        just_fired = {e.name for _, e, _ in fired}
        tb_e, _, sol_b = fired[0]
        if tb_e > last_event + 1e-6 * span:  # two events apart: scan about twice their gap ahead
            window = max(2 * (tb_e - last_event), span / 256)
            last_event = tb_e
        cols = _keep(sol, requested, ta, sol.t[kcol], prev is not None, pending_jump)
        pieces.append((sol, cols, kcol))  # the next piece (sol_b) runs from column kcol
        pieces.append((sol_b, np.array([sol_b.t.size - 1])))
        if len(records) > MAX_EVENTS:
            raise IntegrationError(f"more than {MAX_EVENTS} events with actions by t = {tb_e:g}: the switching "
                                   "chatters (a Zeno run); widen a hysteresis or stop it with a terminal event")
        before = state_of(sol_b)
        reader_b = _At(_Reader(sol_b), -1)
        changes = {}
        for _, e, _ in fired:
            changes.update(e.changes(tb_e, reader_b))
        if stop or not changes:
            for _, e, _ in fired:
                records.append(EventRecord(tb_e, e.name, _sign(e, g, kcol), before, before, changes))
            if stop:
                break
            ta, prev, kprev = tb_e, sol_b, sol_b.t.size - 1
            pending_jump = None
            continue
        state_changes = {k: changes.pop(k) for k in ("q0", "f0") if k in changes}
        new_system, new_params = with_changes(system, changes)
        params.update(new_params)
        settled = _settle_contacts(segs, problem, new_system, params, sol_b, state_changes, tb_e)
        if settled:  # a contact that reached v = 0 and cannot hold slides on (the other way)
            new_system, _ = with_changes(new_system, settled)
            changes.update(settled)
        after_sol, jump, lost, new_system, impacts = _reinit(
            segs, problem.replace(system=new_system, params=params or problem.params),
            (_element_key(new_system), tuple(sorted(params.items()))), sol_b, state_changes, tb_e, scan,
            until=t1 if tb_e + 1.5 * window >= t1 else tb_e + window, contacts=contacts)
        after = state_of(after_sol, 0)
        supplied = 0.0
        if jump and not impacts:  # the sources' work in the jump: what the stored energy gained beyond the loss
            # (an impact keeps the positions: no work is done across it)
            supplied = float(after_sol.energy()[0] - sol_b.energy()[-1] + lost)
        for _, e, _ in fired:
            records.append(EventRecord(tb_e, e.name, _sign(e, g, kcol), before, after, dict(changes, **state_changes),
                                       jump, lost, supplied, impacts))
            lost, jump, supplied, impacts = 0.0, None, 0.0, ()  # booked once
        system = new_system
        ta, prev, kprev = tb_e, after_sol, 0
        pending_jump, pending = True, after_sol
    row, reason, declined = segs.declined
    out = PiecewiseSolution(pieces, records, Method(row, reason, declined))
    return out


def _corners(system, t0, t1):
    """PULSE/PWL corners of a network's sources inside the span (scan times: a crossing on a ramp is then
    bracketed by the ramp alone)."""
    from netdyn.lagrange.sources import corners
    values = [v for el in _elements(system) for v in el.values.values()]
    return np.asarray(corners(values, t0, t1), dtype=float)


def _scan_times(requested, corners, span):
    """The output times and the corners not within 1e-11 of the span of one (a corner a rounding away from an
    output time would make a step of a few ulps)."""
    if corners.size and requested.size:
        k = np.clip(np.searchsorted(requested, corners), 1, requested.size - 1)
        near = np.minimum(np.abs(requested[k] - corners), np.abs(requested[k - 1] - corners))
        corners = corners[near > 1e-11 * span]
    return np.union1d(requested, corners)


def _sign(e, g, k):
    a, b = g[id(e)][k], g[id(e)][k + 1]
    return 1 if b > a else -1


def _keep(sol, requested, ta, tb, restarted, jump):
    """The columns of ``sol`` that are outputs: the requested times in ``(ta, tb]`` (``[ta, tb]`` on the first
    segment), and after an action the state at ``ta`` right after it."""
    t = sol.t
    inside = np.isin(t, requested) & ((t > ta) | (not restarted)) & (t <= tb)
    if jump:
        inside |= t == ta
    return np.flatnonzero(inside)


def _first_crossing(every, g, start, ncol, just_fired=()):
    """The first output interval from ``start`` where an event's ``g`` crosses in its direction, and the
    events that do; an event that fired at the segment's start is not looked for in its first interval."""
    best = None
    for e in every:
        v = g[id(e)]
        for k in range(start + (e.name in just_fired and start == 0), ncol - 1):
            if _crossed(v[k], v[k + 1], e.direction):
                if best is None or k < best[0]:
                    best = (k, [e])
                elif k == best[0]:
                    best[1].append(e)
                break
    return best


def _locate(event, segs, pb, key, sol, k, xtol):
    """The crossing of ``event`` in ``(sol.t[k], sol.t[k+1]]`` by the Illinois method, each trial an
    integration from column ``k``; the bracket's right end (``g`` already past zero) and its solution."""
    ta, tb = float(sol.t[k]), float(sol.t[k + 1])
    ga = event.value(ta, _At(_Reader(sol), k))
    gb = event.value(tb, _At(_Reader(sol), k + 1))
    sol_b = None
    side = 0
    for _ in range(200):
        if tb - ta <= xtol or gb == 0:
            break
        tc = (ta * gb - tb * ga) / (gb - ga) if gb != ga else 0.5 * (ta + tb)
        # aim a hair past the estimate, away from the side that moved last: a g nearly linear over the
        # bracket then closes it in two trials instead of creeping up on the root from one side
        tc += 0.25 * xtol * (1 if side <= 0 else -1)
        if not (ta < tc < tb):
            tc = 0.5 * (ta + tb)
        trial = segs.run(pb, key, float(sol.t[k]), tc, sol, k)
        gc = event.value(tc, _At(_Reader(trial), -1))
        if (gc > 0) == (gb > 0) and gc != 0:
            tb, gb, sol_b = tc, gc, trial
            if side == 1:
                ga *= 0.5
            side = 1
        else:
            ta, ga = tc, gc
            if side == -1:
                gb *= 0.5
            side = -1
            if gc == 0:
                tb, gb, sol_b = tc, gc, trial
                break
    if sol_b is None or sol_b.t[-1] != tb:
        sol_b = segs.run(pb, key, float(sol.t[k]), tb, sol, k)
    return tb, sol_b


def _level_flips(system, segs, problem, t0):
    """Switches whose control is already past a threshold at ``t0`` (their state changes before the run)."""
    cases = [(el, c) for el in _elements(system)
             for c in getattr(el, "switching", lambda: ())()]
    if not cases:
        return {}
    probe = segs.run(problem.replace(system=system), (_element_key(system), ()), t0,
                     t0 + 1e-9 * (problem.t_span[1] - t0))
    reader = _Reader(probe)
    flips = {}
    for el, (cond, direction, state) in cases:
        v = Event(cond).value(t0, _At(reader, 0))
        if (direction > 0 and v > 0) or (direction < 0 and v < 0):
            flips[el.name] = state
    return flips


def _rebuild(system, changes):
    return with_changes(system, changes)[0]


def _settle_contacts(segs, problem, system, params, sol_b, state_changes, t):
    """The friction contacts' states consistent right after an event (:func:`~netdyn.numerics.nonsmooth.friction.
    settle`), each trial state probed by a short run from the state at the event."""
    if not frictions(system):
        return {}
    span = problem.t_span[1] - problem.t_span[0]

    def probe(trial):
        out = _reinit(segs, problem.replace(system=trial, params=params or problem.params),
                            (_element_key(trial), tuple(sorted(params.items()))), sol_b, state_changes, t, None,
                            until=t + 1e-9 * span)[0]
        return _At(_Reader(out), 0)
    return settle(system, probe, t, _rebuild)


def _reinit(segs, pb, key, sol_b, state_changes, t, scan, until=None, contacts=None):
    """The next segment, from the state after an action: the old state carried into the changed system and
    made consistent there (the impulse rule of a switched network, :mod:`netdyn.numerics.circuit.jumps`; the
    impact law of a network with contacts, :mod:`netdyn.numerics.nonsmooth`, which also decides the contacts'
    states; the path's own start otherwise); the jump's description, the energy it cost, the system and the
    impacts."""
    names = list(sol_b.coordinate_names)
    q, f = sol_b.q[:, -1], sol_b.f[:, -1]
    jump, lost = None, 0.0
    if contacts is not None and not state_changes:
        return _after_impact(segs, pb, sol_b, t, scan, contacts)   # to the end: its scan times follow the bounce
    if _ideal_switches(pb.system):
        from netdyn.numerics.circuit.jumps import impulse_state
        q0, f0, jump, lost = impulse_state(pb.system, names, q, f, t)
    else:
        q0, f0 = dict(zip(names, q)), dict(zip(names, f))
    f0 = stuck_flows(pb.system, f0)  # a contact that starts sticking: its relative velocity at the event removed
    q0.update(state_changes.get("q0", {}))
    f0.update({k[:-4] if k.endswith("_dot") else k: v for k, v in state_changes.get("f0", {}).items()})
    if jump:
        warnings.warn(f"t = {t:.9g}: {jump}; {lost:.6g} J lost in the jump (impulse rule)", JumpWarning,
                      stacklevel=4)
    start = pb.replace(q0=q0, f0=f0, atol=segs.atol(key))
    end = segs.problem.t_span[1] if until is None else until
    return segs.run(start, key, t, end, t_eval=scan), jump, lost, pb.system, ()


def _contact_set(problem):
    from netdyn.numerics.nonsmooth import ContactSet, contacts_of
    return ContactSet(problem) if contacts_of(problem.system) else None


def _after_impact(segs, pb, sol_b, t, scan, contacts):
    """The next segment of a network with contacts: Newton's impact law over the contacts with zero gap, the
    contacts' states it leaves (:func:`netdyn.numerics.nonsmooth.impact_state`), and the run from the state
    it gives (already consistent with the new constraint set: restarted as the integrator's own)."""
    from netdyn.numerics.nonsmooth import impact_state, with_states
    t0, t1 = segs.problem.t_span
    tau = max(1e-10, segs.problem.rtol_or(1e-8)) * (t1 - t0)  # the shortest bounce: the Zeno cut
    out = impact_state(contacts, t, list(sol_b.coordinate_names), sol_b.q[:, -1], sol_b.f[:, -1], tau)
    system = with_states(pb.system, out.closed)
    names = list(sol_b.coordinate_names)
    state = SimpleNamespace(coordinate_names=names, q=np.array([[out.q0[n]] for n in names]),
                            f=np.array([[out.f0[n]] for n in names]))
    nxt = pb.replace(system=system)
    key = (_element_key(system), tuple(sorted((pb.params or {}).items())))
    # a bounce shorter than the output spacing is bracketed by scan times placed on its predicted flight
    extra = t + np.outer(out.flights, [0.25, 0.5, 0.75, 0.95, 1.05, 1.25, 1.5, 2.0, 3.0, 4.0]).ravel()
    after = segs.run(nxt, key, t, t1, state, 0, t_eval=np.union1d(scan, extra[extra < t1]))
    return after, out.jump, out.energy_lost, system, out.impacts


def _ideal_switches(system):
    from netdyn.components.switch import Switch
    return [el for el in _elements(system) if isinstance(el, Switch)]


class JumpWarning(UserWarning):
    """An event's action forced a jump of the state (the impulse rule): which, and the energy it cost."""
