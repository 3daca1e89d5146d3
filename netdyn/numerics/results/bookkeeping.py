"""Energy bookkeeping by element along a simulated trajectory.

For every element of a network: stored energy ``E_i(t)``, dissipated power,
absorbed power ``P_i`` (sources deliver, i.e. absorb negative power; an ideal
transducer passes power through and absorbs none), the cumulative energies and
two balance checks — each element's own ``E_i(t) − E_i(0) + ∫P_diss = ∫P_i``,
and the network's ``Σ P_i = 0`` (Tellegen). Energy that no element holds (the
bodies and joints of a planar linkage) is one more row, ``"(rest)"``: the
model's totals minus the elements', fed by the power the element ports deliver.

>>> import netdyn
>>> from netdyn.components.electrical import VoltageSource, Resistor, Capacitor
>>> net = netdyn.Network()
>>> _ = net.add(VoltageSource("V1", "a", "0", 1.0), Resistor("R1", "a", "b", 1.0), Capacitor("C1", "b", "0", 1.0))
>>> rep = netdyn.simulate(net, (0, 5)).energy_report()
>>> # closed form: delivered C V²(1 − e⁻⁵), stored C V²(1 − e⁻⁵)²/2, the rest dissipated
>>> round(float(rep.delivered["V1"]), 4), round(float(rep.stored["C1"][-1]), 4), round(float(rep.dissipated["R1"]), 4)
(0.9933, 0.4933, 0.5)
>>> rep.relative < 1e-6
True
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.integrate import cumulative_simpson, cumulative_trapezoid

from netdyn.numerics.functions.energy import dissipated_power, element_energy


@dataclass
class EnergyReport:
    """Per-element time series (``stored``, ``dissipated_power``, ``power``) and totals over the run."""

    t: np.ndarray
    kinds: dict
    stored: dict  # name -> stored energy E_i(t)
    dissipated_power: dict  # name -> dissipated power
    power: dict  # name -> absorbed power P_i(t)
    dissipated: dict  # name -> energy dissipated over the run
    absorbed: dict  # name -> energy absorbed over the run (negative: delivered)
    residual: dict  # name -> max |E_i(t) - E_i(0) + W_diss - W_abs| (0 for sources)
    tellegen: float  # max |Σ P_i| / max |P_i| (nan when a "(rest)" row holds what no element does)
    relative: float  # worst element residual relative to the largest energy involved
    totals: dict | None = None  # the model's power balance (Solution.power_balance) and how it was integrated

    @property
    def delivered(self):
        """Energy delivered by each source over the run."""
        return {n: -w for n, w in self.absorbed.items() if self.kinds[n] == "source"}

    def table(self):
        """The balance as text: one row per element, then the totals.

        ``stored`` is the change since the start (so it reads the same whatever the energy's zero),
        ``dissipated`` and ``absorbed`` are integrals over the run (by quadrature over the output
        times where per element no integrator state exists; on the circuit path ``dissipated`` and the
        sources' ``absorbed`` are the work integrated with the state), and ``balance`` is
        ``max |ΔE + W_dissipated − W_absorbed|`` per element. The closing line gives the model's totals
        from the integrator's own work integrals where it carried them.
        """
        w = max(len(n) for n in self.kinds)
        lines = [f"{'element':{w}}  {'kind':10}  {'stored ΔE':>11}  {'dissipated':>11}  {'absorbed':>11}  "
                 f"{'balance':>9}"]
        for n, kind in self.kinds.items():
            lines.append(f"{n:{w}}  {kind:10}  {self.stored[n][-1] - self.stored[n][0]:11.6g}  "
                         f"{self.dissipated[n]:11.6g}  {self.absorbed[n]:11.6g}  {self.residual[n]:9.2g}")
        if self.totals is not None:
            tot = self.totals
            lines.append(f"total: supplied {tot['supplied'][-1]:.6g} J, dissipated {tot['dissipated'][-1]:.6g} J, "
                         f"stored ΔE {tot['stored'][-1] - tot['stored'][0]:.6g} J; balance "
                         f"{tot['relative']:.2g} relative ({tot['how']})")
        if not np.isnan(self.tellegen):
            lines.append(f"Σ absorbed power over the elements (Tellegen): {self.tellegen:.2g} relative")
        lines.append(f"worst element balance: {self.relative:.2g} relative")
        return "\n".join(lines)

    def __str__(self):
        return self.table()


def energy_report(sol):
    """The :class:`EnergyReport` of a :class:`~netdyn.solution.Solution` of a network model, from its symbolic
    model (a circuit-path solution's ``energy_report()`` makes it from its stamp, devices and integrated work
    instead: :mod:`netdyn.numerics.circuit.energy.circuit_report`, which builds on this module)."""
    model = sol.model
    names = list(model.metadata.get("elements", {}))
    if not names:
        element_energy(model, "")  # raises the explanatory ModelError
    kinds, stored, pdiss, power, wd, wa, resid = {}, {}, {}, {}, {}, {}, {}
    for n in names:
        el = model.metadata["elements"][n]["element"]
        E, Pd, P = (sol.evaluate(e) for e in element_energy(model, n))
        stored[n], pdiss[n], power[n] = E, Pd, P
        Wd, Wa = cumulative(Pd, sol.t), cumulative(P, sol.t)
        wd[n], wa[n] = float(Wd[-1]), float(Wa[-1])
        kinds[n] = _kind(el, E, Pd)
        # a source is where energy enters: it has no balance of its own (Tellegen covers it)
        resid[n] = 0.0 if kinds[n] == "source" else float(np.max(np.abs(E - E[0] + Wd - Wa)))
    _rest(sol, names, kinds, stored, pdiss, power, wd, wa, resid)
    rows = list(kinds)
    scale = max([np.max(np.abs(stored[n])) for n in rows] + [abs(wa[n]) for n in rows] + [1e-300])
    pscale = max([np.max(np.abs(power[n])) for n in rows] + [1e-300])
    tellegen = float("nan") if REST in kinds else \
        float(np.max(np.abs(np.sum([power[n] for n in rows], axis=0))) / pscale)
    totals = dict(sol.power_balance(), how="integrated with the state" if sol.work is not None else "quadrature")
    return EnergyReport(sol.t, kinds, stored, pdiss, power, wd, wa, resid, tellegen, max(resid.values()) / scale,
                        totals)


REST = "(rest)"


def _rest(sol, names, kinds, stored, pdiss, power, wd, wa, resid):
    """A row for the energy the elements do not hold (planar or spatial bodies and joints): the model's totals minus theirs.

    It absorbs the power the element ports put into it, ``−Σ P_i``, so its own
    balance checks the rest of the model.
    """
    E = sol.energy() - np.sum([stored[n] for n in names], axis=0)
    Pd = sol.evaluate(sol._internal(dissipated_power(sol.model))) - np.sum([pdiss[n] for n in names], axis=0)
    scale = max(np.max(np.abs(sol.energy())), 1e-300)
    if np.max(np.abs(E)) <= 1e-12 * scale and np.max(np.abs(Pd)) <= 1e-12 * max(np.max(np.abs(Pd)), 1e-300) \
            and not (sol.model.metadata.get("planar") or sol.model.metadata.get("spatial")):
        return
    P = -np.sum([power[n] for n in names], axis=0)
    Wd, Wa = cumulative(Pd, sol.t), cumulative(P, sol.t)
    kinds[REST], stored[REST], pdiss[REST], power[REST] = "mechanism", E, Pd, P
    wd[REST], wa[REST] = float(Wd[-1]), float(Wa[-1])
    resid[REST] = float(np.max(np.abs(E - E[0] + Wd - Wa)))


def _kind(el, E, Pd):
    if el.is_source or getattr(el, "is_controlled_source", False):  # E, G, F, H: energy enters there too
        return "source"
    if getattr(el, "is_transducer", False) or len(el.ports) > 1:
        return "transducer"
    if np.any(Pd != 0):
        return "dissipator"
    return "storage" if np.any(E != 0) else "coupling"


def cumulative(y, x):
    if len(x) < 3:
        return cumulative_trapezoid(y, x, initial=0)
    return cumulative_simpson(y, x=x, initial=0)
