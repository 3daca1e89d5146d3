"""The benchmark problems, defined once for the peers and for netdyn.

Pendulum: the planar n-link chain of ``tests/references/pendulum.py`` (relative joint angles,
zero angle along +x, gravity -y), every link 1 kg and 1 m, g = 9.81. Released from rest with the
first link 45 degrees below +x and the others straight; 10 s of motion, 1001 output points,
rtol = atol = 1e-8 for both the peer and netdyn.

RC ladder: N sections, each a series R = 1 kOhm then a shunt C = 1 nF to ground, driven by a 1 V
step (source at 1 V, capacitors empty at t = 0); transient of 10 us with a 10 ns maximum step
(ngspice: ``.tran 10n 10u 0 10n uic``, about 1000 time points), netdyn output at 1001 points.
"""
import numpy as np

PENDULUM = {"mass": 1.0, "length": 1.0, "g": 9.81, "time": 10.0, "points": 1001, "rtol": 1e-8, "atol": 1e-8,
            "warmup_time": 0.1}
RC = {"R": 1e3, "C": 1e-9, "V": 1.0, "t_stop": 10e-6, "step": 10e-9, "points": 1001}


def pendulum_parameters(n):
    """``(masses, lengths, g)`` of the n-link benchmark chain."""
    return np.full(n, PENDULUM["mass"]), np.full(n, PENDULUM["length"]), PENDULUM["g"]


def chain_initial_state(n):
    """Relative joint angles and rates of the simulation's start: first link -45 deg, rest straight, at rest."""
    q = np.zeros(n)
    q[0] = -np.pi / 4
    return q, np.zeros(n)


def random_chain_state(n, seed=12345):
    """A reproducible random state (relative angles and rates) for the per-call timings."""
    rng = np.random.default_rng(seed + n)
    return rng.uniform(-np.pi, np.pi, n), rng.uniform(-2.0, 2.0, n)


def chain_poses(q, v, lengths):
    """Absolute poses of the links' centres of mass from relative angles and rates.

    Returns ``(x, y, theta, xd, yd, thetad)``, arrays of n; ``theta`` from +x.
    """
    lengths = np.asarray(lengths, dtype=float)
    theta = np.cumsum(q)
    omega = np.cumsum(v)
    c, s = np.cos(theta), np.sin(theta)
    joint_x = np.concatenate([[0.0], np.cumsum(lengths * c)[:-1]])
    joint_y = np.concatenate([[0.0], np.cumsum(lengths * s)[:-1]])
    joint_xd = np.concatenate([[0.0], np.cumsum(-lengths * s * omega)[:-1]])
    joint_yd = np.concatenate([[0.0], np.cumsum(lengths * c * omega)[:-1]])
    x = joint_x + lengths / 2 * c
    y = joint_y + lengths / 2 * s
    xd = joint_xd - lengths / 2 * s * omega
    yd = joint_yd + lengths / 2 * c * omega
    return x, y, theta, xd, yd, omega


def chain_energy(x_dot, y_dot, theta_dot, y, masses, lengths, g):
    """Kinetic plus potential energy of the chain from the links' absolute centre-of-mass motion.

    Arrays of shape (n,) or (n, times); slender links, ``I = m l^2 / 12``.
    """
    m = np.asarray(masses, dtype=float).reshape(-1, *([1] * (np.ndim(y) - 1)))
    inertia = m * np.asarray(lengths, dtype=float).reshape(m.shape) ** 2 / 12
    T = 0.5 * m * (x_dot ** 2 + y_dot ** 2) + 0.5 * inertia * theta_dot ** 2
    return np.sum(T + m * g * y, axis=0)


def rc_ladder_deck(N, analysis="tran"):
    """The ngspice deck of the N-section ladder (nodes n0 = source, n1..nN).

    ``analysis="op"`` gives the same circuit with only an operating point: the cost of reading,
    setting up and writing, subtracted from the transient run to get the transient's CPU time.
    """
    lines = [f"* RC ladder, {N} sections", f"V1 n0 0 DC {RC['V']:g}"]
    for k in range(1, N + 1):
        lines.append(f"R{k} n{k - 1} n{k} {RC['R']:g}")
        lines.append(f"C{k} n{k} 0 {RC['C']:g}")
    if analysis == "tran":
        lines += [".options acct", f".tran {RC['step']:g} {RC['t_stop']:g} 0 {RC['step']:g} uic"]
    elif analysis == "op":
        lines += [".options acct", ".op"]
    else:
        raise ValueError(f"analysis must be 'tran' or 'op', got {analysis!r}")
    return "\n".join(lines + [".end", ""])


# Nonlinear RC ladder: the RC ladder above with nonlinear resistors, v = R i + A i^3 (netdyn: dissipation
# D(i) = R i^2/2 + A i^4/4), and nonlinear capacitors, v = q/C + B q^3 (netdyn: energy V(q) = q^2/2C + B q^4/4);
# A and B make the cubic terms about a tenth of the linear ones at 1 V.
NLRC = {**RC, "A": 1e8, "B": 1e26}
# The same ladder driven by a current source instead: 1 mA into n0, with a 1 kOhm shunt from n0 to ground
# (about 1 V at the head again). In loop charges the source is a flow constraint with its multiplier.
NLRC_CURRENT = {"I": 1e-3, "R0": 1e3}


def nonlinear_ladder_deck(N, analysis="tran", drive="voltage"):
    """ngspice deck of the nonlinear ladder with B-sources (``drive="current"``: fed by a current source
    with a shunt, :data:`NLRC_CURRENT`).

    Section k: a 0 V source ``Vs{k}`` senses the resistor current for ``BR{k}`` (v = R i + A i^3); the
    capacitor is charge-controlled, so its charge is integrated on an auxiliary node (``Cx{k}`` of C
    farads fed by ``Bq{k}`` with the capacitor current sensed by ``Vc{k}``: v(x{k}) = q/C) and
    ``BC{k}`` sets v(n{k}) = q/C + B q^3. Four nodes per section where the linear ladder has one.
    """
    R, C, A, B = NLRC["R"], NLRC["C"], NLRC["A"], NLRC["B"]
    lines = [f"* nonlinear RC ladder, {N} sections", f"V1 n0 0 DC {NLRC['V']:g}"] if drive == "voltage" else \
        [f"* nonlinear RC ladder, {N} sections, current drive", f"I1 0 n0 DC {NLRC_CURRENT['I']:g}",
         f"R0 n0 0 {NLRC_CURRENT['R0']:g}"]
    for k in range(1, N + 1):
        lines += [f"Vs{k} n{k - 1} m{k} 0",
                  f"BR{k} m{k} n{k} V = {R:g}*I(Vs{k}) + {A:g}*I(Vs{k})^3",
                  f"Vc{k} n{k} y{k} 0",
                  f"BC{k} y{k} 0 V = V(x{k}) + {B * C ** 3:g}*V(x{k})^3",
                  f"Bq{k} 0 x{k} I = I(Vc{k})",
                  f"Cx{k} x{k} 0 {C:g}"]
    if analysis == "tran":
        lines += [".options acct", f".tran {NLRC['step']:g} {NLRC['t_stop']:g} 0 {NLRC['step']:g} uic"]
    elif analysis == "op":
        lines += [".options acct", ".op"]
    else:
        raise ValueError(f"analysis must be 'tran' or 'op', got {analysis!r}")
    return "\n".join(lines + [".end", ""])


def netlist_deck(elements):
    """A deck of about ``elements`` elements to read (an RC ladder of elements/2 sections, no analysis).

    What netlist reading is measured on, by netdyn (``read_netlist``) and by ``ngspice -b`` (which
    parses and sets the circuit up, then finds no analysis to run).
    """
    sections = max(1, elements // 2)
    lines = [f"* netlist reading, {2 * sections + 1} elements", "V1 n0 0 DC 1"]
    for k in range(1, sections + 1):
        lines.append(f"R{k} n{k - 1} n{k} 1k")
        lines.append(f"C{k} n{k} 0 1n")
    return "\n".join(lines + [".end", ""])


def pwl_square(corners, period=1e-3, edge=1e-6):
    """Corners (time, value) of a PWL square wave with ``corners`` corners (4 a period) and its end time."""
    pts = []
    for k in range(max(1, corners // 4)):
        t0 = period * k
        pts += [(t0, 0.0), (t0 + edge, 1.0), (t0 + period / 2, 1.0), (t0 + period / 2 + edge, 0.0)]
    return pts, period * max(1, corners // 4)
