"""Where ``simulate``'s ``q0`` goes: the modules and rooms it enters on each path.

``python -m benchmarks.q0_walk`` traces one ``simulate`` call a path and follows the caller's initial values:
a function is *reached* when one of its arguments is the caller's ``q0`` dict, a copy of it (equal keys and
values), or the problem record that holds it (the record's own methods are not counted). Printed per path: the modules reached, the rooms (folders of
``netdyn/numerics`` and the layers above) they lie in, how often the walk comes back to a module it had left,
and how often it climbs back up the layer order (a call from a lower room into a higher one).
"""
from __future__ import annotations

import sys
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import netdyn  # noqa: E402

#: rooms from high to low (a call from a lower room to a higher one is a climb back up)
ORDER = ["netdyn.numerics.simulate", "netdyn.numerics.paths", "netdyn.numerics.problem", "netdyn.numerics.circuit",
         "netdyn.numerics.mechanics", "netdyn.numerics.ida", "netdyn.numerics.integrators", "netdyn.numerics.results",
         "netdyn.numerics.dae", "netdyn.numerics.functions", "netdyn.recursive", "netdyn.graph", "netdyn.lagrange",
         "netdyn.validate"]
PATHS = {"netdyn.numerics.circuit", "netdyn.numerics.mechanics", "netdyn.numerics.ida"}


def room(module):
    return next((r for r in ORDER if module == r or module.startswith(r + ".")), module)


def rank(module):
    r = room(module)
    rank_ = ORDER.index(r) if r in ORDER else len(ORDER)
    return rank_ if r not in PATHS else ORDER.index("netdyn.numerics.circuit")  # paths are one layer


def trace(call, q0):
    """``(module, climbed)`` for each call that ``q0`` reaches during ``call()``, in order; ``climbed`` when the
    caller lies in a lower room."""
    reached = []

    def holds(value):
        if value is q0 or (isinstance(value, dict) and value == q0 and value):
            return True
        return getattr(value, "q0", None) is not None and holds(getattr(value, "q0"))

    def tracer(frame, event, arg):
        if event != "call":
            return None
        module = frame.f_globals.get("__name__", "")
        if not module.startswith("netdyn"):
            return None
        code = frame.f_code
        args = [frame.f_locals.get(n) for n in code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]]
        if args and module == "netdyn.numerics.problem" and holds(args[0]):
            return None  # the record's own methods (rtol_or, replace, ...) are no step of the walk
        if any(holds(a) for a in args):
            caller = frame.f_back.f_globals.get("__name__", "") if frame.f_back else ""
            reached.append((module, caller.startswith("netdyn") and rank(module) < rank(caller)))
        return None

    sys.setprofile(None)
    sys.settrace(tracer)
    try:
        call()
    finally:
        sys.settrace(None)
    return reached


def summary(reached):
    """``(modules, rooms, returns, climbs, room names)``: a return is a module reached again after the walk
    left it; a climb a call from a lower room into a higher one."""
    climbs = sum(up for _, up in reached)
    reached = [m for m, _ in reached]
    walk = [m for i, m in enumerate(reached) if i == 0 or reached[i - 1] != m]
    returns = sum(1 for i, m in enumerate(walk) if m in walk[:i])
    return len(set(walk)), len({room(m) for m in walk}), returns, climbs, sorted({room(m) for m in walk})


def cases():
    from netdyn.components.electrical import Capacitor, Inductor, Resistor, VoltageSource
    from netdyn.linkages import slider_crank

    rlc = netdyn.Network("RLC")
    rlc.add(VoltageSource("v", "A", "0", 1.0), Inductor("L1", "A", "B", 0.1), Capacitor("C1", "B", "0", 1e-4),
            Resistor("R1", "B", "0", 10.0))
    x, = netdyn.coordinates("x,")
    osc = netdyn.LagrangianModel([x], T=x.diff(netdyn.t) ** 2 / 2, V=x ** 2 / 2)
    crank = slider_crank()
    yield "linear (RLC, node)", lambda q0: netdyn.simulate(rlc, (0, 0.01), q0=q0, formulation="node"), {"phi_A": 0.0}
    yield "projection (oscillator)", lambda q0: netdyn.simulate(osc, (0, 1), q0=q0), {"x": 1.0}
    yield "ida (oscillator, named)", lambda q0: netdyn.simulate(osc, (0, 1), q0=q0, method="ida"), {"x": 1.0}
    yield "projection (slider-crank)", lambda q0: netdyn.simulate(crank, (0, 0.5), q0=q0), {"theta_crank": 0.3}


def main():
    print("| path (case) | modules reached | rooms | returns to a module left | climbs back up |")
    print("|---|---:|---:|---:|---:|")
    for label, call, q0 in cases():
        modules, rooms, returns, climbs, names = summary(trace(lambda: call(q0), q0))
        print(f"| {label} | {modules} | {rooms} | {returns} | {climbs} |")
        print(f"|  rooms: {', '.join(n.replace('netdyn.', '') for n in names)} | | | | |")


if __name__ == "__main__":
    main()
