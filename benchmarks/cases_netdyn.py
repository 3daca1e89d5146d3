"""The netdyn side of every benchmark case, one small function each (run by :mod:`benchmarks.worker`).

Each function builds the problem of :mod:`benchmarks.problems` with netdyn's public API and
returns its timings. Stages are reported as they finish (:func:`benchmarks.harness.report`), so a
case stopped by the time cap keeps what it measured. A case that needs something netdyn does not
have yet raises :class:`~benchmarks.harness.NotAvailable` (shown as 'n/a (not implemented)');
any other failure is shown as an error in the table. Adjust these functions when the API moves.

What is timed:

* derivation = building the description (model or network, then ``net.model()``) and the
  structured derivation ``model.derive()`` (what ``model.equations()`` is made from), after a
  one-link warm-up in the same process;
* compile = ``netdyn.numerics.functions.compiled.compile_model`` and its first evaluation (lambdify, symengine
  LLVM, numba cache loads), reported, not compared; for a relative-formulation open tree netdyn
  evaluates by the recursive algorithms and derives the symbolic equations only on demand, so its
  'derivation' is the model building alone;
* RHS = one call of the compiled model's ``accelerations(t, q, f, p)`` (KKT assembly and solve),
  median of timeit repeats after a warm-up call, at the same random state as the Pinocchio peer;
  the agreement with Pinocchio at that state is reported next to it;
* simulate = ``netdyn.simulate(model, (0, 10), t_eval=1001 points, rtol=1e-8)`` after a 0.1 s
  warm-up simulation of the same model (compilation is not in the time).
"""
from __future__ import annotations

import numpy as np

from benchmarks.harness import NotAvailable, needs, per_call, report, require, stopwatch
from benchmarks.problems import (NLRC, NLRC_CURRENT, PENDULUM, RC, chain_energy, chain_initial_state, chain_poses,
                                 pendulum_parameters, random_chain_state)

NETDYN = ("netdyn", "netdyn.numerics.functions.compiled")


def _netdyn():
    try:
        import netdyn
    except ModuleNotFoundError as exc:
        raise NotAvailable(f"netdyn does not import: {exc}") from None
    return netdyn


def _compile(model):
    compile_model = require("netdyn.numerics.functions.compiled", "compile_model")
    return compile_model(model)


def _reference_accelerations(n, q, v):
    """Joint-angle accelerations of the chain from Pinocchio (the reference)."""
    from tests.references.pendulum import pinocchio_forward, pinocchio_pendulum

    masses, lengths, g = pendulum_parameters(n)
    return pinocchio_forward(pinocchio_pendulum(n, masses, lengths, g), q, v)


def _rel_diff(a, ref):
    return float(np.max(np.abs(np.asarray(a) - ref)) / max(np.max(np.abs(ref)), 1e-300))


def _simulate(netdyn, model, q0, f0, params, t_end, points):
    netdyn.simulate(model, (0.0, PENDULUM["warmup_time"]), q0=q0, f0=f0, params=params,
                    t_eval=np.linspace(0.0, PENDULUM["warmup_time"], 11), rtol=PENDULUM["rtol"])
    t_eval = np.linspace(0.0, t_end, points)
    return stopwatch(netdyn.simulate, model, (0.0, t_end), q0=q0, f0=f0, params=params, t_eval=t_eval,
                     rtol=PENDULUM["rtol"])


def _drift(E):
    E = np.asarray(E, dtype=float)
    return float(np.max(np.abs(E - E[0])))


def _chain_drift_joint_angles(q, f, n):
    """Energy drift of a joint-angle trajectory (rows q_1..q_n), the energy computed here (not by netdyn)."""
    masses, lengths, g = pendulum_parameters(n)
    E = []
    for k in range(q.shape[1]):
        x, y, th, xd, yd, thd = chain_poses(q[:, k], f[:, k], lengths)
        E.append(chain_energy(xd, yd, thd, y, masses, lengths, g))
    return _drift(E)


def _chain_drift_planar(sol, n):
    """Energy drift of an absolute-coordinate solution, the energy computed here (not by netdyn)."""
    masses, lengths, g = pendulum_parameters(n)

    def rows(name):
        return np.array([sol[name.format(i + 1)] for i in range(n)])

    return _drift(chain_energy(rows("x_link{}_dot"), rows("y_link{}_dot"), rows("theta_link{}_dot"), rows("y_link{}"),
                               masses, lengths, g))


# --------------------------------------------------------------------------- pendulum, joint angles
def _chain_symbols(n):
    import sympy as sp

    m = sp.symbols(f"m1:{n + 1}", positive=True)
    l = sp.symbols(f"l1:{n + 1}", positive=True)
    g = sp.Symbol("g", positive=True)
    masses, lengths, gv = pendulum_parameters(n)
    values = {**dict(zip(m, masses)), **dict(zip(l, lengths)), g: gv}
    return m, l, g, values


def joint_angle_model(n):
    """The n-link chain as a ``LagrangianModel`` typed by hand in the relative joint angles.

    ``T`` and ``V`` are given as one term per link (so the derivation works term by term).
    """
    import sympy as sp

    netdyn = _netdyn()
    t = netdyn.t
    q = netdyn.coordinates(" ".join(f"q{i + 1}" for i in range(n)) + ("," if n == 1 else ""))
    m, l, g, values = _chain_symbols(n)
    T, V = [], []
    theta = 0
    jx = jy = 0
    for i in range(n):
        theta = theta + q[i]
        gx = jx + l[i] / 2 * sp.cos(theta)
        gy = jy + l[i] / 2 * sp.sin(theta)
        T.append(m[i] * (gx.diff(t) ** 2 + gy.diff(t) ** 2) / 2 + m[i] * l[i] ** 2 / 24 * theta.diff(t) ** 2)
        V.append(m[i] * g * gy)
        jx, jy = jx + l[i] * sp.cos(theta), jy + l[i] * sp.sin(theta)
    return netdyn.LagrangianModel(list(q), T=T, V=V, parameters=values, name=f"chain{n}_joint_angles")


@needs(*NETDYN, "pinocchio")
def pendulum_joint_angles(n, simulate=True):
    """netdyn on the chain in joint angles: derivation, compile, RHS (vs Pinocchio), 10 s simulation."""
    netdyn = _netdyn()
    joint_angle_model(1).derive()  # warm-up

    def derive():
        model = joint_angle_model(n)
        model.derive()
        return model

    seconds, model = stopwatch(derive)
    report(derive=seconds)
    seconds, cm = stopwatch(_compile, model)
    report(compile=seconds)
    p = cm.parameter_vector()
    q, v = random_chain_state(n)
    acc = cm.accelerations(0.0, q, v, p)[0]
    report(rhs=per_call(cm.accelerations, 0.0, q, v, p), rhs_agree=_rel_diff(acc, _reference_accelerations(n, q, v)))
    if not simulate:
        return {}
    q0, v0 = chain_initial_state(n)
    names = model.coordinate_names
    seconds, sol = _simulate(netdyn, model, dict(zip(names, q0)), dict(zip(names, v0)), None,
                             PENDULUM["time"], PENDULUM["points"])
    report(simulate=seconds)
    return {"energy_drift": _chain_drift_joint_angles(sol.q, sol.f, n)}


# --------------------------------------------------------------------------- pendulum, planar network
def planar_chain(n):
    """The n-link chain as a network of ``netdyn.components.planar`` bodies and revolute joints."""
    RigidBody, Revolute, Gravity = require("netdyn.components.planar", "RigidBody", "Revolute", "Gravity")
    netdyn = _netdyn()
    m, l, g, values = _chain_symbols(n)
    net = netdyn.Network(f"chain{n}")
    net.add(Gravity(g=g))
    previous, tip = "ground", (0, 0)
    for i in range(n):
        body = f"link{i + 1}"
        net.add(RigidBody(body, mass=m[i], inertia=m[i] * l[i] ** 2 / 12))
        net.add(Revolute(f"J{i + 1}", previous, tip, body, (-l[i] / 2, 0)))
        previous, tip = body, (l[i] / 2, 0)
    return net, {str(k): v for k, v in values.items()}


def _planar_state(model, n, q, v, formulation):
    """The planar model's coordinates and flows (by name) from relative angles and rates.

    Absolute formulation: ``x_/y_/theta_link<i>`` of every link; relative: ``theta_J<i>`` of every joint.
    """
    if formulation == "relative":
        qv = {f"theta_J{i + 1}": q[i] for i in range(n)}
        fv = {f"theta_J{i + 1}": v[i] for i in range(n)}
    else:
        _, lengths, _ = pendulum_parameters(n)
        x, y, th, xd, yd, thd = chain_poses(q, v, lengths)
        qv, fv = {}, {}
        for i in range(n):
            b = f"link{i + 1}"
            qv.update({f"x_{b}": x[i], f"y_{b}": y[i], f"theta_{b}": th[i]})
            fv.update({f"x_{b}": xd[i], f"y_{b}": yd[i], f"theta_{b}": thd[i]})
    names = model.coordinate_names
    if set(qv) != set(names):
        raise NotAvailable(f"planar {formulation} coordinates are not named as expected: {names[:4]}... "
                           f"(expected {sorted(qv)[:4]}...); adjust benchmarks/cases_netdyn.py")
    return names, qv, fv


def _lazy(model):
    """Whether netdyn evaluates this relative model without deriving its symbolic equations (the recursive
    evaluation of an open tree, :mod:`netdyn.numerics.functions.treedynamics`); they are then derived only on demand."""
    try:
        from netdyn.numerics.functions.treedynamics import tree_dynamics
    except ImportError:
        return False
    return tree_dynamics(model) is not None


@needs(*NETDYN, "netdyn.components.planar", "pinocchio")
def pendulum_planar(n, simulate=True, formulation="absolute"):
    """netdyn on the chain as a planar network: absolute coordinates with joint constraints, or the
    ``"relative"`` formulation (joint angles of a spanning tree, no constraints)."""
    netdyn = _netdyn()
    net1, _ = planar_chain(1)
    net1.model(formulation=formulation).derive()  # warm-up

    def derive():
        net, params = planar_chain(n)
        model = net.model(formulation=formulation)
        if formulation != "relative" or not _lazy(model):
            model.derive()
        return model, params

    seconds, (model, params) = stopwatch(derive)
    report(derive=seconds, coordinates=len(model.coordinates), constraints=len(model.constraints))

    def compile_first_call():  # the first call loads the compiled kernels (numba cache, LLVM)
        cm = _compile(model)
        p = cm.parameter_vector(params)
        cm.accelerations(0.0, np.zeros(cm.n), np.zeros(cm.n), p)
        return cm, p

    seconds, (cm, p) = stopwatch(compile_first_call)
    report(compile=seconds)
    q, v = random_chain_state(n)
    names, qv, fv = _planar_state(model, n, q, v, formulation)
    qa = np.array([qv[c] for c in names])
    fa = np.array([fv[c] for c in names])
    acc = cm.accelerations(0.0, qa, fa, p)[0]
    reference = _reference_accelerations(n, q, v)
    if formulation == "relative":
        got = np.array([acc[names.index(f"theta_J{i + 1}")] for i in range(n)])
    else:  # absolute angular accelerations
        got, reference = np.array([acc[names.index(f"theta_link{i + 1}")] for i in range(n)]), np.cumsum(reference)
    report(rhs=per_call(cm.accelerations, 0.0, qa, fa, p), rhs_agree=_rel_diff(got, reference))
    if not simulate:
        return {}
    q0, v0 = chain_initial_state(n)
    _, qv0, fv0 = _planar_state(model, n, q0, v0, formulation)
    seconds, sol = _simulate(netdyn, model, qv0, fv0, params, PENDULUM["time"], PENDULUM["points"])
    report(simulate=seconds)
    if formulation == "relative":
        order = [names.index(f"theta_J{i + 1}") for i in range(n)]
        return {"energy_drift": _chain_drift_joint_angles(sol.q[order], sol.f[order], n)}
    res = sol.constraint_residual()
    return {"residual": max(res["position"], res["velocity"]), "energy_drift": _chain_drift_planar(sol, n)}


@needs(*NETDYN, "netdyn.components.planar", "pinocchio")
def pendulum_planar_relative(n, simulate=True):
    """The planar network in its ``"relative"`` formulation (see :func:`pendulum_planar`)."""
    return pendulum_planar(n, simulate=simulate, formulation="relative")


# --------------------------------------------------------------------------- RC ladder
def rc_ladder_network(N):
    """The N-section ladder as a netdyn ``Network`` (nodes n0..nN, elements V1, R1..RN, C1..CN)."""
    netdyn = _netdyn()
    VoltageSource, Resistor, Capacitor = require("netdyn.components.electrical", "VoltageSource", "Resistor",
                                                 "Capacitor")
    net = netdyn.Network(f"rc_ladder_{N}")
    net.add(VoltageSource("V1", "n0", "0", RC["V"]))
    for k in range(1, N + 1):
        net.add(Resistor(f"R{k}", f"n{k - 1}", f"n{k}", RC["R"]), Capacitor(f"C{k}", f"n{k}", "0", RC["C"]))
    return net


@needs(*NETDYN)
def rc_ladder(N, formulation=None):
    """netdyn on the ladder: description to solution (total), then the integration alone (solve).

    A linear network with numeric values takes netdyn's numeric fast path (``simulate`` picks it:
    elements stamped into sparse matrices, Radau IIA with reused sparse LU). 'total' is network →
    ``netdyn.simulate``; 'solve' is the same integration on the already stamped matrices
    (``netdyn.linearsim.simulate_linear(..., lin=...)``), the counterpart of ngspice's transient
    CPU. Tolerance rtol = 1e-6 (ngspice's Δv is ~4e-6 V of 1 V), atol = 1e-16 C on the charges.
    Capacitor voltages are the port charges over C (no symbolic model is built).
    """
    netdyn = _netdyn()
    simulate_linear = require("netdyn.numerics.circuit.linearsim", "simulate_linear")
    linear_network = require("netdyn.numerics.circuit.stamp", "linear_network")
    t_eval = np.linspace(0.0, RC["t_stop"], RC["points"])
    opts = {"t_eval": t_eval, "rtol": 1e-6, "atol": 1e-16, "formulation": formulation}
    netdyn.simulate(rc_ladder_network(2), (0.0, RC["t_stop"]), **opts)  # warm-up of the whole path

    def total():
        net = rc_ladder_network(N)
        return net, netdyn.simulate(net, (0.0, RC["t_stop"]), **opts)

    seconds, (net, sol) = stopwatch(total)
    report(total=seconds, coordinates=len(sol.coordinate_names), method=getattr(sol, "method", None))
    lin = linear_network(net, formulation)
    seconds, sol = stopwatch(simulate_linear, net, (0.0, RC["t_stop"]), lin=lin, **opts)
    report(solve=seconds)
    return {"t": sol.t, "v_first": sol.port_displacement("C1") / RC["C"],
            "v_last": sol.port_displacement(f"C{N}") / RC["C"]}


def nonlinear_ladder_network(N, drive="voltage"):
    """The nonlinear ladder (:data:`benchmarks.problems.NLRC`) as a netdyn ``Network`` (``drive="current"``:
    fed by a current source with a shunt, :data:`benchmarks.problems.NLRC_CURRENT`)."""
    netdyn = _netdyn()
    VoltageSource, CurrentSource, Resistor, Capacitor = require("netdyn.components.electrical", "VoltageSource",
                                                                "CurrentSource", "Resistor", "Capacitor")
    R, C, A, B = NLRC["R"], NLRC["C"], NLRC["A"], NLRC["B"]
    net = netdyn.Network(f"nonlinear_ladder_{N}")
    if drive == "voltage":
        net.add(VoltageSource("V1", "n0", "0", NLRC["V"]))
    else:
        net.add(CurrentSource("I1", "0", "n0", NLRC_CURRENT["I"]), Resistor("R0", "n0", "0", NLRC_CURRENT["R0"]))
    for k in range(1, N + 1):
        net.add(Resistor(f"R{k}", f"n{k - 1}", f"n{k}", dissipation=lambda i: R * i ** 2 / 2 + A * i ** 4 / 4),
                Capacitor(f"C{k}", f"n{k}", "0", energy=lambda q: q ** 2 / (2 * C) + B * q ** 4 / 4))
    return net


@needs(*NETDYN)
def nonlinear_ladder(N, drive="voltage", symbolic_up_to=200):
    """netdyn on the nonlinear ladder: network to solution (total), then the simulation again (solve).

    The network goes to the circuit path's law templates (``netdyn.numerics.circuit.laws``): each distinct
    energy or dissipation law compiled once, the elements stamped as numbers, Newton + variable-step BDF; the
    flows at the output times are the BDF's own rates. 'total' is network → ``netdyn.simulate`` (the
    network built in Python included); 'solve' is ``netdyn.simulate`` again on the same network (laws cached).
    Up to ``symbolic_up_to`` sections the old symbolic path is timed too ('symbolic': ``net.model()`` →
    ``netdyn.simulate`` on IDA) with the largest difference of the two at nodes 1 and N ('dsym', V). 'peak_mb':
    the process's peak resident set (imports and warm-up included). rtol = 1e-6, atol = 1e-16.
    """
    import resource
    netdyn = _netdyn()
    opts = {"t_eval": np.linspace(0.0, NLRC["t_stop"], NLRC["points"]), "rtol": 1e-6, "atol": 1e-16}
    netdyn.simulate(nonlinear_ladder_network(2, drive), (0.0, NLRC["t_stop"]), **opts)  # warm-up of the whole path

    def total():
        net = nonlinear_ladder_network(N, drive)
        return net, netdyn.simulate(net, (0.0, NLRC["t_stop"]), **opts)

    seconds, (net, sol) = stopwatch(total)
    report(total=seconds, coordinates=len(sol.coordinate_names), method=getattr(sol, "method", None),
           peak_mb=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    seconds, sol = stopwatch(netdyn.simulate, net, (0.0, NLRC["t_stop"]), **opts)
    report(solve=seconds, steps=getattr(sol, "nsteps", None))
    out = {"t": sol.t, "v_first": sol.voltage("C1"), "v_last": sol.voltage(f"C{N}")}
    if N <= symbolic_up_to:
        def symbolic():
            model = nonlinear_ladder_network(N, drive).model()
            return netdyn.simulate(model, (0.0, NLRC["t_stop"]), **opts)
        seconds, ref = stopwatch(symbolic)
        out["symbolic"] = seconds
        out["dsym"] = max(float(np.max(np.abs(sol.voltage(c) - ref.voltage(c)))) for c in ("C1", f"C{N}"))
    return out


@needs(*NETDYN)
def nonlinear_ladder_current(N):
    """:func:`nonlinear_ladder` driven by a current source (a flow constraint in loop charges)."""
    return nonlinear_ladder(N, drive="current")


# --------------------------------------------------------------------------- closed chains
def _book_mechanism(kind):
    """Four-bar (book Example 4.3) or slider-crank (Example 4.2), typed in as the book does, plus gravity.

    Numbers: a Grashof crank-rocker (crank 0.2 m, coupler 0.8 m, rocker 0.6 m, ground 1.0 m) and a
    slider-crank (crank 0.2 m, rod 0.6 m); slender links of 1 kg per metre, the slider 0.5 kg; no
    driving torque; the crank starts at 60 degrees turning at 2*pi rad/s.
    """
    import sympy as sp

    netdyn = _netdyn()
    D = lambda e: e.diff(netdyn.t)
    c, s = sp.cos, sp.sin
    g = sp.Symbol("g", positive=True)
    if kind == "four_bar":
        th1, x2, y2, th2, th3 = q = netdyn.coordinates("theta1 x2 y2 theta2 theta3")
        m1, m2, m3, l1, l2, l3, l4 = sp.symbols("m1 m2 m3 l1 l2 l3 l4", positive=True)
        lengths = {l1: 0.2, l2: 0.8, l3: 0.6, l4: 1.0}
        masses = {m1: 0.2, m2: 0.8, m3: 0.6}
        I1, I2, I3 = m1 * l1 ** 2 / 12, m2 * l2 ** 2 / 12, m3 * l3 ** 2 / 12
        T = [(I1 + m1 * l1 ** 2 / 4) * D(th1) ** 2 / 2, m2 * (D(x2) ** 2 + D(y2) ** 2) / 2, I2 * D(th2) ** 2 / 2,
             (I3 + m3 * l3 ** 2 / 4) * D(th3) ** 2 / 2]
        V = [m1 * g * l1 / 2 * s(th1), m2 * g * y2, m3 * g * l3 / 2 * s(th3)]
        phi = [x2 - (l1 * c(th1) + l2 / 2 * c(th2)), y2 - (l1 * s(th1) + l2 / 2 * s(th2)),
               l1 * c(th1) + l2 * c(th2) - l3 * c(th3) - l4, l1 * s(th1) + l2 * s(th2) - l3 * s(th3)]
        guess = {"theta2": 0.3, "theta3": 1.5, "x2": 0.5, "y2": 0.3}
    elif kind == "slider_crank":
        x1, y1, th1, x2, y2, th2, x3 = q = netdyn.coordinates("x1 y1 theta1 x2 y2 theta2 x3")
        m1, m2, m3, l1, l2 = sp.symbols("m1 m2 m3 l1 l2", positive=True)
        lengths = {l1: 0.2, l2: 0.6}
        masses = {m1: 0.2, m2: 0.6, m3: 0.5}
        I1, I2 = m1 * l1 ** 2 / 12, m2 * l2 ** 2 / 12
        T = [m1 * (D(x1) ** 2 + D(y1) ** 2) / 2, I1 * D(th1) ** 2 / 2, m2 * (D(x2) ** 2 + D(y2) ** 2) / 2,
             I2 * D(th2) ** 2 / 2, m3 * D(x3) ** 2 / 2]
        V = [m1 * g * y1, m2 * g * y2]
        phi = [x1 - l1 / 2 * c(th1), y1 - l1 / 2 * s(th1),
               x2 - (l1 * c(th1) + l2 / 2 * c(th2)), y2 - (l1 * s(th1) + l2 / 2 * s(th2)),
               l1 * c(th1) + l2 * c(th2) - x3, l1 * s(th1) + l2 * s(th2)]
        guess = {"theta2": -0.3, "x3": 0.7, "x2": 0.4, "y2": 0.1, "x1": 0.05, "y1": 0.09}
    else:
        raise ValueError(f"unknown mechanism {kind!r}")
    model = netdyn.LagrangianModel(list(q), T=T, V=V, constraints=phi,
                                   parameters={**lengths, **masses, g: PENDULUM["g"]}, name=kind)
    return model, guess


def _mechanism(kind):
    netdyn = _netdyn()

    def derive():
        model, guess = _book_mechanism(kind)
        model.derive()
        return model, guess

    seconds, (model, guess) = stopwatch(derive)
    report(derive=seconds, coordinates=len(model.coordinates), constraints=len(model.constraints))
    _compile(model)
    q0, f0 = {"theta1": np.pi / 3}, {"theta1": 2 * np.pi}
    netdyn.simulate(model, (0.0, PENDULUM["warmup_time"]), q0=q0, f0=f0, guess=guess,
                    t_eval=np.linspace(0.0, PENDULUM["warmup_time"], 11), rtol=PENDULUM["rtol"])
    seconds, sol = stopwatch(netdyn.simulate, model, (0.0, PENDULUM["time"]), q0=q0, f0=f0, guess=guess,
                             t_eval=np.linspace(0.0, PENDULUM["time"], PENDULUM["points"]), rtol=PENDULUM["rtol"])
    res = sol.constraint_residual()
    report(simulate=seconds)
    E = sol.energy()
    return {"residual": res["position"], "velocity_residual": res["velocity"], "energy_drift": _drift(E),
            "energy_scale": float(np.max(np.abs(E))), "turns": float(
                (sol["theta1"][-1] - sol["theta1"][0]) / (2 * np.pi))}


@needs(*NETDYN)
def four_bar():
    """Four-bar linkage (book Example 4.3 coordinates) under gravity, 10 s: time and constraint residual."""
    return _mechanism("four_bar")


@needs(*NETDYN)
def slider_crank():
    """Slider-crank (book Example 4.2 coordinates) under gravity, 10 s: time and constraint residual."""
    return _mechanism("slider_crank")


# --------------------------------------------------------------------------- reading and sources
@needs("netdyn", "netdyn.io.netlist")
def netlist_read(n):
    """``netdyn.read_netlist`` on a deck of ``n`` elements (:func:`benchmarks.problems.netlist_deck`)."""
    from benchmarks.problems import netlist_deck
    read_netlist = require("netdyn.io.netlist", "read_netlist")
    read_netlist(netlist_deck(10))  # warm-up
    text = netlist_deck(n)
    seconds, net = stopwatch(read_netlist, text)
    return {"read": seconds, "elements": len(net.elements)}


@needs(*NETDYN)
def rc_ladder_read(N, points=101):
    """Reading every node voltage of the N-section RC ladder against simulating it (issue 26).

    'simulate' is ``netdyn.simulate`` of the built network (stamping and Radau on the linear path,
    ``points`` output times: the ladder's state at 10^5 sections and 1001 times would be 0.8 GB a
    matrix); 'read' is ``sol.voltage(node)`` for each of the N + 1 nodes of the fresh solution, the first
    read included (it builds the solution's index: 'first', timed on its own in a second solution of the
    same run); 'to_pandas' is the whole table (every coordinate and flow, node voltage, element voltage
    and current) when pandas is installed. The target: reading everything costs less than simulating.
    """
    netdyn = _netdyn()
    t_eval = np.linspace(0.0, RC["t_stop"], points)
    opts = {"t_eval": t_eval, "rtol": 1e-6, "atol": 1e-16}
    netdyn.simulate(rc_ladder_network(2), (0.0, RC["t_stop"]), **opts).voltage("n1")  # warm-up of the path
    net = rc_ladder_network(N)
    seconds, sol = stopwatch(netdyn.simulate, net, (0.0, RC["t_stop"]), **opts)
    report(simulate=seconds, method=sol.method, points=points)
    nodes = [f"n{k}" for k in range(N + 1)]

    def read_all():
        return [float(sol.voltage(node)[-1]) for node in nodes]

    read, v = stopwatch(read_all)
    out = {"simulate": seconds, "read": read, "per_read": read / len(nodes), "read_ratio": read / seconds,
           "v_n1": v[1], "v_last": v[-1]}
    report(**out)
    sol._index = None  # the same solution without its index: the first read alone
    out["first"], _ = stopwatch(sol.voltage, f"n{N}")
    report(first=out["first"])
    try:
        import pandas  # noqa: F401 (optional: netdyn[frames])
    except ImportError:
        return out
    del v
    frame, df = stopwatch(sol.to_pandas)
    out.update(to_pandas=frame, columns=int(df.shape[1]), frame_ratio=frame / seconds)
    return out


@needs(*NETDYN)
def pwl_source(n):
    """An RC low-pass driven by a PWL square wave of ``n`` corners, simulated over the whole wave
    (the source's corners are the integrator's segment edges; each evaluation of the source is a
    table lookup)."""
    from benchmarks.problems import pwl_square
    netdyn = _netdyn()
    pwl = require("netdyn.lagrange.sources", "pwl")
    VoltageSource, Resistor, Capacitor = require("netdyn.components.electrical", "VoltageSource", "Resistor",
                                                 "Capacitor")

    def run(corners):
        pts, t_end = pwl_square(corners)
        net = netdyn.Network("pwl")
        net.add(VoltageSource("V1", "a", "0", pwl(pts)), Resistor("R1", "a", "b", 1e3),
                Capacitor("C1", "b", "0", 1e-7))
        return netdyn.simulate(net, (0.0, t_end))

    run(8)  # warm-up
    seconds, sol = stopwatch(run, n)
    return {"simulate": seconds, "steps": int(getattr(sol, "nsteps", 0) or 0)}


# --------------------------------------------------------------------------- mixed: a motor driving a linkage
def _timed_network_run(build, span, **opts):
    """Network → ``netdyn.simulate`` (description to solution, CPU seconds), after a short warm-up of the same
    kind of network (imports, symengine and LLVM set-up)."""
    netdyn = _netdyn()
    FOUR_BAR_GUESS = require("netdyn.linkages", "FOUR_BAR_GUESS")
    netdyn.simulate(build(), (0.0, 0.01), guess=FOUR_BAR_GUESS, t_eval=np.linspace(0, 0.01, 3), **opts)
    seconds, sol = stopwatch(lambda: netdyn.simulate(build(), span, guess=FOUR_BAR_GUESS, **opts))
    return seconds, sol


def _mechanism_summary(sol):
    turns = float((sol["theta_crank"][-1] - sol["theta_crank"][0]) / (2 * np.pi))
    return {"method": sol.method, "power_balance": float(sol.power_balance()["relative"]), "turns": turns,
            "residual": float(sol.constraint_residual()["position"])}


@needs(*NETDYN)
def motor_four_bar(method="auto"):
    """The book's four-bar driven by a DC motor on a circuit (``netdyn.linkages.motor_four_bar``: 12 V, 1 Ω,
    1 mH, K = 0.5 N·m/A), 5 s from rest, 1001 output points, rtol = 1e-8: description to solution."""
    motor_four_bar = require("netdyn.linkages", "motor_four_bar")
    seconds, sol = _timed_network_run(motor_four_bar, (0.0, 5.0), method=method)
    return {"total": seconds, **_mechanism_summary(sol)}


@needs(*NETDYN)
def four_bar_alone(tau=4.0, span=5.0, compiled_loop=False):
    """The same four-bar alone, driven by a constant torque on the crank (4 N·m: about the motor's motion,
    ~10 turns in 5 s; 1 N·m over 100 s: the long run), rtol = 1e-8: description to solution.
    ``compiled_loop=True``: the compiled stepping loop (its numba compilation, if the cache is cold, falls in
    the untimed warm-up run)."""
    four_bar = require("netdyn.linkages", "four_bar")
    opts = {"compiled_loop": True} if compiled_loop else {}
    seconds, sol = _timed_network_run(lambda: four_bar(tau=tau), (0.0, span), **opts)
    return {"total": seconds, **_mechanism_summary(sol)}
