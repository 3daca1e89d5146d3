"""The impulse rule of a switched network: the state right after its constraint set changed.

An ideal switch that closes adds a flow constraint; one that opens removes it. In node coordinates (node
fluxes φ, node voltages φ̇; capacitors are the mass matrix M, inductors the stiffness K) the state is carried
over unchanged where the new constraints allow — capacitor charges and inductor fluxes kept — and where they
do not, the impulse rule gives the state after:

* **flows** (capacitor voltages): a perfectly inelastic impulse along the new constraints,
  ``M (f⁺ − f⁻) = Aᵀ Λ`` with ``A f⁺ + B_a u = 0``: the charge of every set of capacitors joined by the
  switch is conserved and their voltages equalise; the energy dissipated in the jump is Carnot's
  ``½ Δfᵀ M Δf`` (the source's work ``Λ·(B_a u)``, e.g. charging a capacitor from a voltage source through
  a closed switch, is supplied energy, not lost);
* **displacements** (inductor fluxes): a node with neither capacitance nor resistance (rows of M and D
  empty) holds ``K φ + Aᵀμ = B_e u`` at every instant; an opening switch that leaves an inductor's current
  nowhere to go breaks it, the node's flux jumps to satisfy it and the inductor's magnetic energy is lost
  (less the work of a current source across the jump).

Each jump is named (the capacitors whose voltage and the inductors whose current jumped) and its energy
returned; :mod:`netdyn.numerics.events` records both on ``sol.events`` and warns.

>>> import netdyn
>>> from netdyn.components.electrical import Capacitor
>>> from netdyn.components.switch import Switch
>>> net = netdyn.Network("two capacitors")
>>> _ = net.add(Capacitor("C1", "a", "0", 1e-6), Switch("S1", "a", "b", closed=True), Capacitor("C2", "b", "0", 1e-6))
>>> q, f, what, lost = impulse_state(net, ["phi_a", "phi_b"], [0.0, 0.0], [2.0, 0.0], 0.0)
>>> [round(v, 12) for v in f.values()], what, round(lost * 1e6, 9)     # shared charge, half the energy lost
([1.0, 1.0], 'capacitors C1, C2 changed voltage (charge shared through the closed switch)', 1.0)
"""
from __future__ import annotations

import numpy as np
import scipy.linalg as sla

from netdyn.numerics.circuit.stamp import NotLinear, linear_network

__all__ = ["impulse_state", "SwitchFormulationError"]


class SwitchFormulationError(NotLinear):
    """A network of ideal switches in a formulation the impulse rule does not work in."""


def _inputs(lin, t):
    from netdyn.numerics.functions.compiled import time_function
    return np.array([float(np.asarray(time_function(u)(np.array([t]))).ravel()[0]) for u in lin.inputs])


def impulse_state(net, names, q, f, t):
    """``(q0, f0, jump, energy_lost)`` of ``net`` (node formulation) at ``t`` from the state ``q, f`` by
    ``names`` (the state before the switching, in the same coordinates): the state carried over, named
    dicts; ``jump`` describes an impulse (``None`` when none was needed); ``energy_lost`` in joules."""
    skip = tuple(n for n, el in net.elements.items() if getattr(el, "prefers_kind", None))
    lin = linear_network(net, "node", skip=skip)
    order = [names.index(n) for n in lin.names]
    q = np.asarray(q, dtype=float)[order]
    f = np.asarray(f, dtype=float)[order]
    n = lin.n
    M, D, K, A = (x.toarray() for x in (lin.M, lin.D, lin.K, lin.A))
    u = _inputs(lin, t)
    c = -(lin.B_a.toarray() @ u) if lin.B_a.shape[1] else np.zeros(A.shape[0])
    resistive = np.zeros(n, dtype=bool)
    for name in skip:  # a diode's node carries current without a stamp here: no jump of its flux
        for _, combo in lin.ports[name]:
            resistive[list(combo)] = True
    mass = np.abs(M).sum(axis=1) > 0
    free = ~mass & ~resistive & ~(np.abs(D).sum(axis=1) > 0)
    parts, lost = [], 0.0
    # flows: the inelastic impulse along the constraints, on the coordinates with capacitance
    f_new = f.copy()
    if A.shape[0]:
        viol = A @ f - c
        if np.max(np.abs(viol), initial=0.0) > 1e-9 * max(1.0, np.max(np.abs(f)), np.max(np.abs(c), initial=0.0)):
            s = np.max(np.abs(M), initial=0.0) or 1.0  # M scaled to O(1) beside A's ±1 (microfarads would look singular)
            kkt = np.block([[M / s, A.T], [A, np.zeros((A.shape[0], A.shape[0]))]])
            rhs = np.r_[M @ f / s, c]
            sol = sla.lstsq(kkt, rhs)[0]
            f_new[mass] = sol[:n][mass]
            df = f_new - f
            loss = 0.5 * float(df @ M @ df)
            # (a massless node's voltage is algebraic: its roundoff against the new constraint is no jump)
            size = max(np.max(np.abs(f)), np.max(np.abs(c), initial=0.0))
            if loss > 1e-12 * max(0.5 * float(f @ M @ f), 0.5 * float(f_new @ M @ f_new), 0.5 * s * size ** 2):
                lost += loss
                caps = _elements(net, lin, df, "C")
                parts.append(f"capacitors {', '.join(caps)} changed voltage (charge shared through the closed switch)"
                             if caps else "the node voltages jumped")
    # displacements: nodes with neither capacitance nor resistance hold K q + Aᵀ mu = B_e u at once
    q_new = q.copy()
    if free.any():
        be = lin.B_e.toarray() @ u if lin.B_e.shape[1] else np.zeros(n)
        r = (K @ q - be)[free]
        touched = np.abs(A[:, free]).sum(axis=1) > 0 if A.shape[0] else np.zeros(0, dtype=bool)
        if not touched.any() and np.max(np.abs(r), initial=0.0) > 1e-9 * max(1e-300, np.max(np.abs(K @ q))):
            Kff = K[np.ix_(free, free)]
            rhs = be[free] - K[np.ix_(free, ~free)] @ q[~free]
            q_new[free] = sla.lstsq(Kff, rhs)[0]
            dq = q_new - q
            loss = 0.5 * float(q @ K @ q) - 0.5 * float(q_new @ K @ q_new) + float(be @ dq)
            if loss > 1e-12 * 0.5 * float(q @ K @ q):
                lost += loss
                inds = _elements(net, lin, dq, "L")
                parts.append(f"inductors {', '.join(inds)} had their current cut (flux jumped)" if inds
                             else "node fluxes jumped")
    q0 = dict(zip(lin.names, q_new.tolist()))
    f0 = {name: v for name, v, m in zip(lin.names, f_new.tolist(), mass) if m}
    return q0, f0, ("; ".join(parts) or None), lost


def _elements(net, lin, change, letter):
    """Elements of kind ``letter`` (``C``: capacitors, ``L``: inductors) whose ports see ``change``."""
    kinds = {"C": "Capacitor", "L": "Inductor"}
    out = []
    for name, el in net.elements.items():
        if type(el).__name__ != kinds[letter]:
            continue
        for _, combo in lin.ports[name]:
            if abs(sum(coef * change[i] for i, coef in combo.items())) > 1e-12 * max(1.0, np.max(np.abs(change))):
                out.append(name)
                break
    return out
