"""The per-element energy report of a circuit-path solution, from numbers alone (no symbolic model).

A transient of :func:`netdyn.numerics.circuit.nonlinearsim.simulate_circuit` holds everything the report of
:func:`netdyn.numerics.results.bookkeeping.energy_report` needs without assembling the network's Lagrangian: the
stamped matrices give each linear element's stored energy (``½ Fᵀ M_e F + ½ Qᵀ K_e Q`` over its port flows
``F`` and displacements ``Q``), dissipated power (``Fᵀ D_e F``) and port efforts
(:func:`netdyn.numerics.circuit.stamp.port_effort`); a device's dissipated power is ``F·∇D(F)`` from its own
closed-form law (``dissipation_batch``) and its junction current adds ``C(F) dF/dt`` of its closed-form
charge (``charge_batch``); a controlled source's (``E``, ``G``, ``F``, ``H``) is ``v i`` of its own ports, the
currents it pushes from its entries and the multipliers' reactions the stamp records for it (it is a source:
it stores and dissipates nothing). The work the transient integrated with the state (``sol.element_work``: each element's
energy dissipated, supplied, and stored in its junction charge, step by step on the BDF interpolant) gives
the totals and the devices' stored energy; each element's balance compares that work with the quadrature
of its port power over the output times, so it checks one against the other.

>>> import netdyn
>>> from netdyn.components.electrical import VoltageSource, Resistor, Capacitor
>>> from netdyn.components.diode import Diode
>>> net = netdyn.Network()
>>> _ = net.add(VoltageSource("V1", "a", "0", 5.0), Resistor("R1", "a", "d", 1e3), Diode("D1", "d", "0", CJO=1e-9),
...             Capacitor("C1", "d", "0", 1e-6))
>>> rep = netdyn.simulate(net, (0, 5e-3)).energy_report()     # no symbolic model is built
>>> rep.kinds["D1"], round(float(rep.stored["C1"][-1]) * 1e6, 4)    # µJ in C1 at the diode's forward voltage
('dissipator', 0.24)
>>> rep.relative < 1e-6
True
"""
from __future__ import annotations

import numpy as np

from netdyn.numerics.results.bookkeeping import EnergyReport, _kind, cumulative
from netdyn.numerics.circuit.stamp import _slot_effort

__all__ = ["circuit_energy_report", "takes"]


def takes(sol):
    """Whether :func:`circuit_energy_report` makes ``sol``'s report: a circuit-path solution (with its stamp)."""
    return getattr(sol, "method", None) == "circuit" and getattr(sol, "linear", None) is not None


def circuit_energy_report(sol):
    """The :class:`~netdyn.numerics.results.bookkeeping.EnergyReport` of a circuit-path solution (see the module).

    Rows, kinds and columns are those of the symbolic report; ``dissipated`` and the sources' ``absorbed``
    are the work integrated with the state where the transient carried it (else quadratures over the output
    times), the devices' stored energy is the junction work ``∫ v dQ`` since the start."""
    lin, net = sol.linear, sol.net
    work = getattr(sol, "element_work", None) or {}
    u = sol._inputs_at_t()
    kinds, stored, pdiss, power, wd, wa, resid = {}, {}, {}, {}, {}, {}, {}
    for name, el in net.elements.items():
        controlled = getattr(el, "is_controlled_source", False)
        if name in lin.skipped:
            E, Pd, P = _device(sol, name, el, work.get(name, {}))
        elif controlled:
            E, Pd, P = _controlled(sol, name, el, u)
        else:
            E, Pd, P = _linear(sol, name, u)
        own = work.get(name, {})
        Wd = own["dissipated"] if "dissipated" in own else cumulative(Pd, sol.t)
        Wa = cumulative(P, sol.t)
        stored[name], pdiss[name], power[name] = E, Pd, P
        kinds[name] = _kind(el, E, Pd)
        wd[name] = float(Wd[-1])
        if kinds[name] == "source":
            wa[name] = -float(own["supplied"][-1]) if "supplied" in own else float(Wa[-1])
            resid[name] = 0.0  # a source is where energy enters: Tellegen covers it
        else:
            wa[name] = float(Wa[-1])
            resid[name] = float(np.max(np.abs(E - E[0] + Wd - Wa)))
    rows = list(kinds)
    scale = max([np.max(np.abs(stored[n])) for n in rows] + [abs(wa[n]) for n in rows] + [1e-300])
    pscale = max([np.max(np.abs(power[n])) for n in rows] + [1e-300])
    tellegen = float(np.max(np.abs(np.sum([power[n] for n in rows], axis=0))) / pscale) if rows else 0.0
    totals = dict(sol.power_balance(), how="integrated with the state" if sol.work is not None else "quadrature")
    return EnergyReport(sol.t, kinds, stored, pdiss, power, wd, wa, resid, tellegen,
                        max(resid.values(), default=0.0) / scale, totals)


def _port(X, combo, K):
    out = np.zeros(K)
    for i, c in combo.items():
        out += c * X[i]
    return out


def _linear(sol, name, u):
    """Stored energy, dissipated and absorbed power of a stamped element over the output times."""
    lin = sol.linear
    combos = [c for _, c in lin.ports[name]]
    K = sol.t.size
    F = [_port(sol.f, c, K) for c in combos]
    Q = [_port(sol.q, c, K) for c in combos]
    E, Pd = np.zeros(K), np.zeros(K)
    for which, a, b, v in lin.stamps[name]["entries"]:
        if which == "M":
            E += 0.5 * v * F[a] * F[b]
        elif which == "K":
            E += 0.5 * v * Q[a] * Q[b]
        elif which == "D":
            Pd += v * F[a] * F[b]
    P = np.zeros(K)
    for k in range(len(combos)):
        P += F[k] * _slot_effort(lin, name, k, sol.q, sol.f, sol.acc, sol.mu, u)
    return E, Pd, P


def _controlled(sol, name, el, u):
    """A controlled source's (``E``, ``G``, ``F``, ``H``) absorbed power over the output times: its own ports'
    voltages times the currents it pushes through them (its efforts, its conductance-like entries, and the
    multipliers' reactions where it can push: its own servo rows and the sensed source's row); the sensed
    source's port, which its stamp also lists, is that source's. It stores and dissipates nothing (an ``H``'s
    internal ``1/r`` load is part of how it sets its voltage, not a resistor): zero, as in the symbolic model.

    >>> import numpy as np, netdyn
    >>> from netdyn.components.electrical import VoltageSource, Resistor
    >>> from netdyn.components.controlled import VCVS
    >>> from netdyn.components.diode import Diode
    >>> net = netdyn.Network()
    >>> _ = net.add(VoltageSource("V1", "a", "0", 1.0), Resistor("R1", "a", "b", 1e3), Diode("D1", "b", "0"),
    ...             VCVS("E1", "c", "0", "b", "0", 2.0), Resistor("R2", "c", "0", 1e3))
    >>> sol = netdyn.simulate(net, (0, 1e-3), t_eval=np.linspace(0, 1e-3, 3))
    >>> _, _, P = _controlled(sol, "E1", net.elements["E1"], sol._inputs_at_t())
    >>> bool(np.allclose(-P, sol.voltage("c") ** 2 / 1e3, rtol=1e-9))   # E1 delivers what R2 takes
    True
    """
    lin = sol.linear
    st = lin.stamps[name]
    combos = [c for _, c in lin.ports[name]]
    K = sol.t.size
    own = len(el.ports)  # the ports after the element's own are the sensed source's
    F = [_port(sol.f, c, K) for c in combos]
    effort = [np.zeros(K) for _ in range(own)]
    for which, a, b, v in st["entries"]:
        if which == "D" and a < own:
            effort[a] += v * F[b]
    for row, i, c in st.get("reactions", ()):
        if i < own:
            effort[i] += c * sol.mu[row]
    for i, k in st["efforts"]:
        if i < own:
            effort[i] -= u[k]
    P = sum((F[i] * effort[i] for i in range(own)), np.zeros(K))
    return np.zeros(K), np.zeros(K), P


def _device(sol, name, el, own):
    """Stored energy (junction work since the start), dissipated and absorbed power of a device (a diode)
    from its closed-form law and charge."""
    combos = [c for _, c in sol.linear.ports[name]]
    K = sol.t.size
    F = np.column_stack([_port(sol.f, c, K) for c in combos])  # output times x ports
    values = {k: np.full(K, v) for k, v in el.numeric_values().items()}
    g, _ = type(el).dissipation_batch(values, F)
    Pd = np.sum(F * g, axis=1)
    effort = g.copy()
    charge = getattr(type(el), "charge_batch", None)
    out = charge(values, F) if charge is not None else None
    if out is None:
        E = np.zeros(K)
    else:
        dF = np.column_stack([_port(sol.acc, c, K) for c in combos])  # the flows' rates: the integrator's own
        dQ = np.einsum("kij,kj->ki", out[1], dF)                      # where they carry inertia
        effort += dQ
        E = own["junction"] if "junction" in own else cumulative(np.sum(F * dQ, axis=1), sol.t)
    return E, Pd, np.sum(F * effort, axis=1)
