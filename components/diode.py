"""The junction diode (SPICE ``D``) as a nonlinear resistor given by one function: its co-content.

A resistor whose current is a function of its voltage, ``i = g(v)``, is in the
energy form the dissipation (co-content) ``J(v) = ∫₀^v g(u) du`` in flux
coordinates, where the port flow *is* the voltage: ``∂J/∂v = i``. The diode's
is SPICE's (ngspice's forward law with the ``GMIN`` conductance it puts across
every junction):

    g(v) = IS (exp(v / (N Vt)) − 1) + GMIN v

so ``J(v) = IS N Vt (exp(v / (N Vt)) − 1) − IS v + GMIN v² / 2``. Above
``v_max = XMAX · N Vt`` the exponential is continued by its tangent (``J``
by the matching parabola): ``g`` stays C¹ and finite for any voltage a Newton
iterate may try, and no circuit that conducts less than ``IS·e^XMAX`` (5e7 A
for ``IS = 1e-14``) ever sees the difference. A series resistance ``RS`` sits
between the anode and an internal node ``"<name>#a"``, as in SPICE.

The diode is voltage-controlled: its natural kind is flux (node) coordinates,
and a network containing one is assembled in the node formulation unless told
otherwise. In charge coordinates its law would be the inverse ``v(i)``, which
has no closed form with ``GMIN`` and is numerically useless in reverse bias
(the current is pinned at −IS), so it is refused there with an error that says so.

>>> import sympy as sp
>>> from netdyn.components.base import PortVariables, ACROSS
>>> d = Diode("D1", "a", "0", IS=1e-14, N=1)
>>> v = sp.Symbol("v")
>>> J = d.contribute([PortVariables(ACROSS, sp.Symbol("phi"), v)], d.numeric_values()).D
>>> round(float(sp.diff(J, v).subs(v, 0.6)), 9)    # IS (exp(0.6/Vt) - 1) + GMIN 0.6, Vt at 27 °C
0.00011872
"""
from __future__ import annotations
import math

import numpy as np
import sympy as sp

from netdyn.errors import ElementError

from .base import ACROSS, Contribution, Element, Port, node_name, require_positive

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # names for the hints only (annotations are not evaluated)
    from typing import Any

DOMAIN = "electrical"

#: ngspice's constants (const.h): Boltzmann's constant and the elementary charge, and its default 27 °C
BOLTZMANN, CHARGE, TNOM = 1.38064852e-23, 1.6021766208e-19, 300.15
#: ngspice's temperature coefficients of the diode (``DIOtemp``) and their defaults: none moves anything
TEMPERATURE_COEFFICIENTS = {"TLEV": 0.0, "TLEVC": 0.0, "CTA": 0.0, "TPB": 0.0, "TCV": 0.0, "TRS": 0.0, "TRS2": 0.0,
                            "TTT1": 0.0, "TTT2": 0.0, "TM1": 0.0, "TM2": 0.0}
#: ngspice's limit on the temperature-adjusted grading coefficient (``DIOgradingCoeffMax``)
GRADING_MAX = 0.9
#: thermal voltage kT/q at ngspice's default temperature
VT = BOLTZMANN * TNOM / CHARGE
#: the exponent above which the junction law continues linearly
XMAX = 50.0

__all__ = ["Diode", "DiodeModel", "junction_current", "VT", "temperature_adjusted"]


class DiodeModel:
    """The parameters of a ``.model NAME D(...)`` card: ``IS`` (A), ``N``, ``RS`` (Ω), and the reverse
    breakdown ``BV`` (V, ``None``: no breakdown), ``IBV`` (A, the current at ``−BV``), ``NBV`` (its emission
    coefficient, default ``N``); the junction charge ``CJO``, ``VJ``, ``M``, ``FC``, ``TT``; the temperature
    law's band gap ``EG`` (eV), saturation-current exponent ``XTI`` and the temperature ``TNOM`` (°C, ``None``:
    the circuit's nominal 27 °C) at which the others were measured; ngspice's temperature coefficients
    (:func:`temperature_adjusted`): ``TLEVC`` (0: the band-gap law of ``VJ`` and ``CJO``; 1: linear in
    ``CTA`` and ``TPB``), ``TLEV`` with ``TCV`` (the breakdown voltage's), ``TRS``/``TRS2`` (``RS``'s),
    ``TTT1``/``TTT2`` (``TT``'s) and ``TM1``/``TM2`` (``M``'s), all 0 by default.

    >>> DiodeModel(IS=2e-14, N=1.5).N
    1.5
    """

    PARAMETERS = {"IS": 1e-14, "N": 1.0, "RS": 0.0, "BV": None, "IBV": 1e-3, "NBV": None,
                  "CJO": 0.0, "VJ": 1.0, "M": 0.5, "FC": 0.5, "TT": 0.0, "EG": 1.11, "XTI": 3.0, "TNOM": None,
                  **TEMPERATURE_COEFFICIENTS}

    def __init__(self, IS: Any = 1e-14, N: Any = 1.0, RS: Any = 0.0, BV: Any = None, IBV: Any = 1e-3, NBV: Any = None,
                 CJO: Any = 0.0, VJ: Any = 1.0, M: Any = 0.5, FC: Any = 0.5, TT: Any = 0.0, EG: Any = 1.11,
                 XTI: Any = 3.0, TNOM: Any = None, **coefficients: Any) -> None:
        self.IS, self.N, self.RS = float(IS), float(N), float(RS)
        self.BV, self.IBV, self.NBV = BV, float(IBV), NBV
        self.CJO, self.VJ, self.M, self.FC, self.TT = float(CJO), float(VJ), float(M), float(FC), float(TT)
        self.EG, self.XTI, self.TNOM = float(EG), float(XTI), TNOM  # the temperature law; TNOM in °C
        for key, default in TEMPERATURE_COEFFICIENTS.items():
            setattr(self, key, float(coefficients.pop(key, default)))
        if coefficients:
            raise ElementError(f"DiodeModel: unknown parameter(s) {', '.join(sorted(coefficients))} (a diode takes "
                               f"{', '.join(self.PARAMETERS)})")

    def as_dict(self):
        return {k: getattr(self, k) for k in self.PARAMETERS}


def breakdown_voltage(BV: float, IBV: float, IS: float, NBV: float | None, vt: float = VT,
                      reltol: float = 1e-3) -> float:
    """The knee voltage ``xbv`` of the breakdown law ``−IS exp(−(xbv + v)/(NBV Vt))`` that passes ``−IBV``
    at ``v = −BV`` (ngspice's ``DIOtemp``: the same fixed-point iteration; an ``IBV`` below
    ``IS·BV/Vt`` is raised to it and then ``xbv = BV``).

    >>> round(breakdown_voltage(5.1, 1e-3, 1e-14, 1.0), 4)
    4.4449
    """
    cbv = IBV
    if cbv < IS * BV / vt:
        return float(BV)
    nbvt = NBV * vt
    xbv = BV - nbvt * math.log(1 + cbv / IS)
    for _ in range(25):
        xbv = BV - nbvt * math.log(cbv / IS + 1 - xbv / vt)
        xcbv = IS * (math.exp((BV - xbv) / nbvt) - 1 + xbv / vt)
        if abs(xcbv - cbv) <= reltol * cbv:
            break
    return float(xbv)


def junction_current(v: Any, IS: float = 1e-14, N: float = 1.0, gmin: float = 1e-12, vt: float = VT,
                     BV: float | None = None, NBV: float | None = None) -> Any:
    """The junction law ``g(v)`` with its linear continuation above ``XMAX·N·Vt`` (numbers or numpy arrays);
    with a breakdown knee ``BV`` (the ``xbv`` of :func:`breakdown_voltage`) the reverse current
    ``−IS exp(−(BV + v)/(NBV Vt))`` is added, continued the same way.

    >>> round(float(junction_current(0.7) * 1e3), 6)     # mA at 0.7 V
    5.670347
    """
    v = np.asarray(v, dtype=float)
    i = IS * (_exp_lin(v / (N * vt)) - 1.0) + gmin * v
    if BV is not None:
        i = i - IS * _exp_lin(-(BV + v) / (NBV * vt))
    return i


def _exp_lin(x):
    """``exp(x)`` continued by its tangent above ``XMAX``."""
    xm = np.minimum(x, XMAX)
    return np.exp(xm) * (1.0 + (x - xm))


#: ngspice's reference temperature (REFTEMP, K) of its band-gap law
REFTEMP = 300.15


def _gap_terms(T):
    """ngspice's ``pbfact`` of the junction potential at temperature ``T`` (K), and ``T / REFTEMP``."""
    vt = BOLTZMANN * T / CHARGE
    egfet = 1.16 - 7.02e-4 * T * T / (T + 1108.0)
    arg = -egfet / (2 * BOLTZMANN * T) + 1.1150877 / (BOLTZMANN * 2 * REFTEMP)
    fact = T / REFTEMP
    return -2 * vt * (1.5 * math.log(fact) + CHARGE * arg), fact


def temperature_adjusted(m: DiodeModel, temp: float = 27.0, tnom: float | None = None) -> DiodeModel:
    """The model parameters ``m`` (a dict of :attr:`DiodeModel.PARAMETERS`) at ``temp`` °C, measured at
    ``tnom`` °C (default the model's ``TNOM``, else 27 °C), by ngspice's laws (``DIOtemp``), with
    ``dT = T − Tnom``:

    - ``IS(T) = IS exp((T/Tnom − 1) EG/(N Vt) + XTI/N ln(T/Tnom))``;
    - the grading coefficient ``M (1 + TM1 dT + TM2 dT²)``, at most 0.9;
    - ``TLEVC = 0``: the junction potential ``VJ(T)`` and the zero-bias capacitance ``CJO(T)`` from the
      silicon band gap ``Eg(T) = 1.16 − 7.02e-4 T²/(T + 1108)``; ``TLEVC = 1``: ``VJ − TPB (T − 300.15 K)``
      and ``CJO (1 + CTA (T − 300.15 K))``; ``VJ`` at most ``1/FC``;
    - the breakdown voltage ``BV − TCV dT`` (``TLEV = 0``) or ``BV (1 − TCV dT)`` (``TLEV = 1``);
    - ``TT (1 + TTT1 dT + TTT2 dT²)`` and ``RS (1 + TRS dT + TRS2 dT²)``.

    Returns the adjusted dict and the thermal voltage ``kT/q`` at ``temp``.

    >>> m = dict(DiodeModel().as_dict(), CJO=1e-12, VJ=0.7)
    >>> hot, vt = temperature_adjusted(m, 75.0)
    >>> round(hot["IS"] / m["IS"], 1), round(hot["VJ"], 4), round(vt / VT, 4)   # 75 °C against 27 °C
    (579.3, 0.6067, 1.1599)
    >>> hot, _ = temperature_adjusted(dict(m, RS=10.0, TRS=2e-3, TLEVC=1, TPB=1e-3), 75.0)
    >>> round(hot["RS"], 4), round(hot["VJ"], 4)      # RS (1 + 2e-3 · 48), VJ − 1e-3 · 48
    (10.96, 0.652)
    """
    tnom = m.get("TNOM") if tnom is None else tnom
    Tn = TNOM if tnom is None else float(tnom) + 273.15
    T = float(temp) + 273.15
    if T <= 0 or Tn <= 0:
        raise ElementError(f"a diode at {temp:g} °C measured at {Tn - 273.15:g} °C: temperatures must lie above "
                           "absolute zero")
    c = {key: float(m.get(key, default)) for key, default in TEMPERATURE_COEFFICIENTS.items()}
    if c["TLEVC"] not in (0.0, 1.0) or c["TLEV"] not in (0.0, 1.0):
        raise ElementError(f"TLEVC = {c['TLEVC']:g}, TLEV = {c['TLEV']:g}: netdyn has ngspice's temperature laws 0 "
                           "and 1")
    vt = BOLTZMANN * T / CHARGE
    out = dict(m)
    if T == Tn and c["TLEVC"] == 0.0:
        return out, vt
    dt = T - Tn
    vte = m["N"] * vt
    out["IS"] = m["IS"] * math.exp((T / Tn - 1) * m["EG"] / vte + m["XTI"] / m["N"] * math.log(T / Tn))
    grading = min(m["M"] * (1 + c["TM1"] * dt + c["TM2"] * dt * dt), GRADING_MAX)
    out["M"] = grading
    if c["TLEVC"] == 0.0:
        pbfact, fact2 = _gap_terms(T)
        pbfact1, fact1 = _gap_terms(Tn)
        pbo = (m["VJ"] - pbfact1) / fact1
        gmaold = (m["VJ"] - pbo) / pbo
        vj = pbfact + fact2 * pbo
        gmanew = (vj - pbo) / pbo
        cj = m["CJO"] / (1 + grading * (400e-6 * (Tn - REFTEMP) - gmaold))
        out["CJO"] = cj * (1 + grading * (400e-6 * (T - REFTEMP) - gmanew))
    else:
        vj = m["VJ"] - c["TPB"] * (T - REFTEMP)
        out["CJO"] = m["CJO"] * (1 + c["CTA"] * (T - REFTEMP))
    out["VJ"] = min(vj, 1.0 / m["FC"]) if m["FC"] > 0 else vj  # ngspice limits FC VJ to 1
    if m.get("BV") is not None:
        out["BV"] = m["BV"] - c["TCV"] * dt if c["TLEV"] == 0.0 else m["BV"] * (1 - c["TCV"] * dt)
    out["TT"] = m["TT"] * (1 + c["TTT1"] * dt + c["TTT2"] * dt * dt)
    out["RS"] = m["RS"] * (1 + c["TRS"] * dt + c["TRS2"] * dt * dt)
    return out, vt


class Diode(Element):
    """A junction diode from ``anode`` to ``cathode``: ``i = IS (exp(v/(N Vt)) − 1) + GMIN v``, ``RS`` in series.

    Give the parameters directly or a :class:`DiodeModel` (``model=``). ``gmin``
    is ngspice's default 1e-12 S; ``vt`` the thermal voltage (27 °C). ``BV``,
    ``IBV``, ``NBV`` add the reverse breakdown; ``CJO``, ``VJ``, ``M``, ``FC``
    (depletion) and ``TT`` (transit time) the junction's charge ``Q(v)``, stored
    as the co-energy ``T*(v) = ∫₀^v Q(u) du`` of the junction port (a nonlinear
    capacitor given by its own energy function). ``temp`` (°C) simulates the
    diode at another temperature than the model's ``TNOM`` (or ``tnom``, °C;
    both 27 °C by default): ``IS``, ``VJ``, ``CJO``, the breakdown knee and ``Vt``
    follow ngspice's laws (:func:`temperature_adjusted`, with ``EG`` and ``XTI``), and so do ``RS``, ``TT``,
    ``M`` and the breakdown voltage with the temperature coefficients of :class:`DiodeModel` given as keywords
    (``TRS=``, ``TCV=``, ``TLEVC=``, ...).

    >>> Diode("D1", "a", "k", model=DiodeModel(IS=1e-15, RS=2)).terminals
    ('a', 'k')
    >>> round(Diode("D1", "a", "k", temp=75).numeric_values()["IS"] / 1e-14, 1)   # IS at 75 °C
    579.3
    """

    prefers_kind = ACROSS  # the assembler picks the node formulation for a network that contains one

    def __init__(self, name: str, anode: str | int, cathode: str | int, IS: Any = None, N: Any = None, RS: Any = None,
                 model: Any = None, gmin: Any = 1e-12, vt: Any = VT, BV: Any = None, IBV: Any = None, NBV: Any = None,
                 CJO: Any = None, VJ: Any = None, M: Any = None, FC: Any = None, TT: Any = None, EG: Any = None,
                 XTI: Any = None, TNOM: Any = None, temp: Any = None, tnom: Any = None, **coefficients: Any) -> None:
        m = model.as_dict() if model is not None else dict(DiodeModel.PARAMETERS)
        unknown = sorted(set(coefficients) - set(TEMPERATURE_COEFFICIENTS))
        if unknown:
            raise ElementError(f"{name}: unknown diode parameter(s) {', '.join(unknown)} (a diode takes "
                               f"{', '.join(DiodeModel.PARAMETERS)})")
        given = dict(IS=IS, N=N, RS=RS, BV=BV, IBV=IBV, NBV=NBV, CJO=CJO, VJ=VJ, M=M, FC=FC, TT=TT, EG=EG, XTI=XTI,
                     TNOM=TNOM, **coefficients)
        for key, val in given.items():
            if val is not None:
                m[key] = float(val)
        require_positive(name, "IS", m["IS"])
        require_positive(name, "N", m["N"])
        require_positive(name, "RS", m["RS"], allow_zero=True)
        require_positive(name, "gmin", gmin, allow_zero=True)
        require_positive(name, "EG", m["EG"], allow_zero=True)
        self.model_parameters = {k: m[k] for k in ("IS", "N", "RS")}
        self.temperature = None  # °C when the diode is simulated away from its model's nominal temperature
        t = m  # the parameters at the simulation's temperature
        if temp is not None or tnom is not None or m["TNOM"] is not None:
            try:
                t, vt = temperature_adjusted(m, 27.0 if temp is None else temp, tnom)
            except ElementError as exc:
                raise ElementError(f"{name}: {exc}") from None
            self.temperature = 27.0 if temp is None else float(temp)
        if m["RS"] > 0:
            require_positive(name, f"RS at {self.temperature:g} °C (TRS, TRS2)" if self.temperature is not None
                             else "RS", t["RS"])
        values = {"IS": t["IS"], "N": m["N"], "RS": t["RS"], "gmin": gmin, "vt": vt}
        if m["BV"] is not None:
            require_positive(name, "BV", m["BV"])
            require_positive(name, "IBV", m["IBV"])
            nbv = m["NBV"] if m["NBV"] is not None else m["N"]
            require_positive(name, "NBV", nbv)
            # the law's own parameters: the knee xbv and the breakdown's N Vt
            if t["BV"] <= 0:
                raise ElementError(f"{name}: the breakdown voltage at {self.temperature:g} °C is {t['BV']:g} V (TCV "
                                   "too large for this temperature); it must stay positive")
            values["BV"] = breakdown_voltage(t["BV"], m["IBV"], t["IS"], nbv, vt)
            values["NBV"] = float(nbv)
            self.model_parameters.update(BV=float(m["BV"]), IBV=float(m["IBV"]), NBV=float(nbv))
        if m["CJO"] > 0 or m["TT"] > 0:
            require_positive(name, "CJO", m["CJO"], allow_zero=True)
            require_positive(name, "TT", m["TT"], allow_zero=True)
            require_positive(name, "VJ", m["VJ"])
            if not 0 < m["M"] < 1 or not 0 < t["M"] < 1:
                raise ElementError(f"{name}: the grading coefficient M = {m['M']:g} (at the temperature "
                                   f"{t['M']:g}) must lie in (0, 1)")
            if not 0 <= m["FC"] < 1:
                raise ElementError(f"{name}: the depletion coefficient FC = {m['FC']:g} must lie in [0, 1)")
            for key in ("CJO", "VJ", "M", "FC", "TT"):
                values[key] = float(t[key])
                self.model_parameters[key] = float(m[key])
        for key in ("EG", "XTI", "TNOM", *TEMPERATURE_COEFFICIENTS):  # the temperature law, when not the default
            if m[key] is not None and m[key] != DiodeModel.PARAMETERS[key]:
                self.model_parameters[key] = float(m[key])
        a, k = node_name(anode), node_name(cathode)
        self.internal_node = f"{name}#a" if m["RS"] > 0 else None
        if self.internal_node:
            ports = [Port(DOMAIN, a, self.internal_node), Port(DOMAIN, self.internal_node, k)]
        else:
            ports = [Port(DOMAIN, a, k)]
        super().__init__(name, ports, values, terminals=(a, k))

    def numeric_values(self):
        """The parameter values as floats."""
        return {k: float(v) for k, v in self.values.items()}

    def limit_flows(self, old, new):
        """Newton-step limiting of the junction voltage (SPICE's ``pnjlim``), used by the DC solver."""
        values = {k: np.array([v]) for k, v in self.numeric_values().items()}
        out = self.limit_flows_batch(values, np.array([old], dtype=float), np.array([new], dtype=float))
        return np.array(out[0], dtype=float)

    @staticmethod
    def limit_flows_batch(values, old, new):
        """:meth:`limit_flows` for many diodes at once: ``values`` maps parameter names to arrays, ``old``/``new``
        are (diodes × ports) arrays of port flows; the last port is the junction. In breakdown (below
        ``−BV + 10 NBV Vt``) the distance past the knee is limited instead, as ngspice does. Returns ``new``
        itself when no junction needs limiting."""
        nvt = values["N"] * values["vt"]
        vcrit = nvt * np.log(nvt / (np.sqrt(2) * values["IS"]))
        vn, vo = new[:, -1], old[:, -1]
        lim = _pnjlim_array(vn, vo, nvt, vcrit)
        if "BV" in values:
            bv, nbvt = values["BV"], values["NBV"] * values["vt"]
            rev = vn < np.minimum(0.0, -bv + 10 * nbvt)
            if rev.any():
                back = -(_pnjlim_array(-(vn + bv), -(vo + bv), nbvt, vcrit) + bv)
                lim = np.where(rev, back, lim)
        if lim is vn:
            return new  # the same array: nothing limited
        out = new.copy()
        out[:, -1] = lim
        return out

    @staticmethod
    def port_table(values, P):
        """The rows of the compiled circuit step's port table (:data:`netdyn.numerics.circuit.kernels.circuit_kernel.PORT_FIELDS`,
        devices × ports, flattened) for diodes of ``P`` ports: the ``RS`` port a conductance, the junction
        its law, breakdown, limiting and charge parameters.

        >>> t = Diode.port_table({k: np.array([v]) for k, v in Diode("D1", "a", "k", RS=2).numeric_values().items()}, 2)
        >>> t[:, :2].tolist()       # port 0: a 0.5 S conductance; port 1: a junction
        [[0.0, 0.5], [1.0, 0.0]]
        """
        ne = values["IS"].size
        t = np.zeros((ne, P, 15))
        j = t[:, -1]
        nvt = values["N"] * values["vt"]
        j[:, 0], j[:, 2], j[:, 3], j[:, 4] = 1.0, values["IS"], nvt, values["gmin"]
        if "BV" in values:
            j[:, 5], j[:, 6], j[:, 7] = 1.0, values["BV"], values["NBV"] * values["vt"]
        j[:, 8] = nvt * np.log(nvt / (np.sqrt(2) * values["IS"]))
        if "CJO" in values:
            j[:, 9] = 1.0
            for col, key in zip(range(10, 15), ("CJO", "VJ", "M", "FC", "TT")):
                j[:, col] = values[key]
        if P == 2:
            t[:, 0, 1] = 1.0 / values["RS"]
        return t.reshape(ne * P, 15)

    @staticmethod
    def dissipation_batch(values, F):
        """Gradient (diodes × ports) and Hessian (diodes × ports × ports) of the dissipation of many diodes at
        once, in closed form: the derivatives of :meth:`contribute`'s ``D`` (``values`` maps parameter names
        to arrays, ``F`` holds the port flows; the last port is the junction, the first the ``RS`` one when
        there are two)."""
        ne, P = F.shape
        v = F[:, -1]
        nvt = values["N"] * values["vt"]
        x = v / nvt
        ex = np.exp(np.minimum(x, XMAX))
        IS, gmin = values["IS"], values["gmin"]
        g = np.empty((ne, P))
        H = np.zeros((ne, P, P))
        g[:, -1] = IS * (ex * (1.0 + np.maximum(x - XMAX, 0.0)) - 1.0) + gmin * v
        H[:, -1, -1] = IS / nvt * ex + gmin
        if "BV" in values:
            nbvt = values["NBV"] * values["vt"]
            z = -(values["BV"] + v) / nbvt
            ez = np.exp(np.minimum(z, XMAX))
            g[:, -1] -= IS * ez * (1.0 + np.maximum(z - XMAX, 0.0))
            H[:, -1, -1] += IS / nbvt * ez
        if P == 2:
            g[:, 0] = F[:, 0] / values["RS"]
            H[:, 0, 0] = 1.0 / values["RS"]
        return g, H

    def contribute(self, ports, values):
        if any(p.kind != ACROSS for p in ports):
            raise ElementError(
                f"{self.name}: a diode is voltage-controlled (its law is its co-content in node voltages); "
                "simulate the network in formulation='node' (the default when it contains a diode)")
        IS, N, RS, gmin, vt = (values[k] for k in ("IS", "N", "RS", "gmin", "vt"))
        junction = ports[-1]
        D = co_content(junction.f, IS, N, gmin, vt, values.get("BV"), values.get("NBV"))
        if len(ports) == 2:
            D += ports[0].f ** 2 / (2 * RS)
        T = 0
        if "CJO" in values:
            T = junction_coenergy(junction.f, values)
        return Contribution(T=T, D=D)

    @staticmethod
    def charge_batch(values, F):
        """The junction charge ``Q = ∂T*/∂v`` (diodes × ports) and its capacitance ``∂Q/∂v`` (diodes × ports ×
        ports) of many diodes at once, in closed form; ``None`` for diodes without charge storage."""
        if "CJO" not in values:
            return None
        ne, P = F.shape
        v = F[:, -1]
        Q = np.zeros((ne, P))
        Cap = np.zeros((ne, P, P))
        Q[:, -1], Cap[:, -1, -1] = junction_charge(v, values)
        return Q, Cap


def _pnjlim_array(vn, vo, nvt, vcrit):
    """:func:`pnjlim` on arrays; returns ``vn`` itself when no element is limited."""
    big = (vn > vcrit) & (np.abs(vn - vo) > 2 * nvt)
    if not big.any():
        return vn
    arg = 1 + (vn - vo) / nvt
    with np.errstate(divide="ignore", invalid="ignore"):
        up = np.where(arg > 0, vo + nvt * np.log(np.where(arg > 0, arg, 1.0)), vcrit)
        fresh = nvt * np.log(np.where(vn > 0, vn, 1.0) / nvt)
    return np.where(big, np.where(vo > 0, up, fresh), vn)


def pnjlim(vnew, vold, nvt, vcrit):
    """SPICE's junction-voltage limiting of a Newton update (``DEVpnjlim``): above ``vcrit`` a step
    larger than ``2 N Vt`` is shortened to the logarithm of the current ratio it asks for.

    >>> round(pnjlim(5.0, 0.0, 0.0259, 0.7), 4)
    0.1363
    """
    if vnew > vcrit and abs(vnew - vold) > 2 * nvt:
        if vold > 0:
            arg = 1 + (vnew - vold) / nvt
            return vold + nvt * math.log(arg) if arg > 0 else vcrit
        return nvt * math.log(vnew / nvt)
    return vnew


def co_content(v, IS, N, gmin, vt, BV=None, NBV=None):
    """``J(v)`` of the junction (sympy): ``∂J/∂v`` is :func:`junction_current` (with the breakdown term when
    ``BV``, the knee voltage, is given).

    >>> v = sp.Symbol("v")
    >>> sp.diff(co_content(v, 1e-14, 1, 0, 0.025), v).subs(v, 0.5)   # doctest: +ELLIPSIS
    4.85165...e-6
    """
    J = IS * N * vt * (_exp_lin_integral(v / (N * vt)) - 1) - IS * v + gmin * v ** 2 / 2
    if BV is not None:
        # ∫₀^v −IS e(−(BV + u)/(NBV Vt)) du = IS NBV Vt [E(−(BV + v)/(NBV Vt)) − E(−BV/(NBV Vt))]
        nbvt = NBV * vt
        at_zero = sp.exp(-BV / nbvt) if isinstance(BV, sp.Basic) or isinstance(nbvt, sp.Basic) \
            else math.exp(-BV / nbvt)  # BV > 0: below XMAX, no continuation
        J += IS * nbvt * (_exp_lin_integral(-(BV + v) / nbvt) - at_zero)
    return J


def _exp_lin_integral(x):
    """The antiderivative of ``exp(x)`` continued by its tangent above ``XMAX`` (sympy), ``exp(x)`` below."""
    d = x - XMAX  # the excess above XMAX
    capped = sp.Piecewise((x, x <= XMAX), (XMAX, True))  # numpy evaluates both branches: never exp(huge)
    return sp.Piecewise((sp.exp(capped), x <= XMAX), (sp.exp(XMAX) * (1 + d + d ** 2 / 2), True))


def junction_charge(v, values):
    """ngspice's junction charge and capacitance (numpy): ``TT`` times the junction current without ``GMIN``
    (diffusion) plus the depletion charge of ``CJO``, ``VJ``, ``M``, continued linearly in capacitance above
    ``FC·VJ``. Returns ``(Q, dQ/dv)``.

    >>> vals = dict(IS=1e-14, N=1.0, vt=VT, CJO=1e-12, VJ=0.8, M=0.5, FC=0.5, TT=0.0)
    >>> [round(float(x) * 1e12, 6) for x in junction_charge(-1.0, vals)]   # pC and pF at -1 V
    [-0.8, 0.666667]
    """
    v = np.asarray(v, dtype=float)
    g = {k: values[k] for k in ("IS", "N", "vt")}
    bv = dict(BV=values["BV"], NBV=values["NBV"]) if "BV" in values else {}
    i = junction_current(v, gmin=0.0, **g, **bv)
    nvt = values["N"] * values["vt"]
    di = values["IS"] / nvt * np.exp(np.minimum(v / nvt, XMAX))
    if bv:
        nbvt = bv["NBV"] * values["vt"]
        di = di + values["IS"] / nbvt * np.exp(np.minimum(-(bv["BV"] + v) / nbvt, XMAX))
    CJO, VJ, M, FC, TT = (values[k] for k in ("CJO", "VJ", "M", "FC", "TT"))
    d = FC * VJ
    F1 = VJ * (1 - (1 - FC) ** (1 - M)) / (1 - M)
    F2, F3 = (1 - FC) ** (1 + M), 1 - FC * (1 + M)
    below = v < d
    arg = 1 - np.where(below, v, d) / VJ
    Qd = np.where(below, VJ * CJO * (1 - arg ** (1 - M)) / (1 - M),
                  CJO * F1 + CJO / F2 * (F3 * (v - d) + M / (2 * VJ) * (v * v - d * d)))
    Cd = np.where(below, CJO * arg ** (-M), CJO / F2 * (F3 + M * v / VJ))
    return TT * i + Qd, TT * di + Cd


def junction_coenergy(v, values):
    """``T*(v) = ∫₀^v Q(u) du`` of :func:`junction_charge` (sympy): the junction as a nonlinear capacitor."""
    IS, N, vt = values["IS"], values["N"], values["vt"]
    CJO, VJ, M, FC, TT = (values[k] for k in ("CJO", "VJ", "M", "FC", "TT"))
    W = TT * co_content(v, IS, N, 0, vt, values.get("BV"), values.get("NBV"))
    d = FC * VJ
    F1 = VJ * (1 - (1 - FC) ** (1 - M)) / (1 - M)
    F2, F3 = (1 - FC) ** (1 + M), 1 - FC * (1 + M)
    s = sp.Piecewise((v, v < d), (d, True))  # the power is evaluated at a capped argument: never (negative)^x
    low = lambda x: VJ * CJO / (1 - M) * (x + VJ * ((1 - x / VJ) ** (2 - M) - 1) / (2 - M))
    high = low(d) + CJO * F1 * (v - d) + CJO / F2 * (F3 * (v - d) ** 2 / 2
                                                    + M / (2 * VJ) * ((v ** 3 - d ** 3) / 3 - d ** 2 * (v - d)))
    return W + sp.Piecewise((low(s), v < d), (high, True))
