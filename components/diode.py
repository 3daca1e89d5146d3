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
import math

import numpy as np
import sympy as sp

from netdyn.errors import ElementError

from .base import ACROSS, Contribution, Element, Port, node_name, require_positive

DOMAIN = "electrical"

#: ngspice's constants (const.h): Boltzmann's constant and the elementary charge, and its default 27 °C
BOLTZMANN, CHARGE, TNOM = 1.38064852e-23, 1.6021766208e-19, 300.15
#: thermal voltage kT/q at ngspice's default temperature
VT = BOLTZMANN * TNOM / CHARGE
#: the exponent above which the junction law continues linearly
XMAX = 50.0

__all__ = ["Diode", "DiodeModel", "junction_current", "VT"]


class DiodeModel:
    """The parameters of a ``.model NAME D(...)`` card: ``IS`` (A), ``N``, ``RS`` (Ω), ``GMIN`` (S).

    >>> DiodeModel(IS=2e-14, N=1.5).N
    1.5
    """

    PARAMETERS = {"IS": 1e-14, "N": 1.0, "RS": 0.0}

    def __init__(self, IS=1e-14, N=1.0, RS=0.0):
        self.IS, self.N, self.RS = float(IS), float(N), float(RS)

    def as_dict(self):
        return {"IS": self.IS, "N": self.N, "RS": self.RS}


def junction_current(v, IS=1e-14, N=1.0, gmin=1e-12, vt=VT):
    """The junction law ``g(v)`` with its linear continuation above ``XMAX·N·Vt`` (numbers or numpy arrays).

    >>> round(float(junction_current(0.7) * 1e3), 6)     # mA at 0.7 V
    5.670347
    """
    nvt = N * vt
    x = np.asarray(v, dtype=float) / nvt
    xm = np.minimum(x, XMAX)
    return IS * (np.exp(xm) * (1.0 + (x - xm)) - 1.0) + gmin * np.asarray(v, dtype=float)


class Diode(Element):
    """A junction diode from ``anode`` to ``cathode``: ``i = IS (exp(v/(N Vt)) − 1) + GMIN v``, ``RS`` in series.

    Give the parameters directly or a :class:`DiodeModel` (``model=``). ``gmin``
    is ngspice's default 1e-12 S; ``vt`` the thermal voltage (27 °C).

    >>> Diode("D1", "a", "k", model=DiodeModel(IS=1e-15, RS=2)).terminals
    ('a', 'k')
    """

    prefers_kind = ACROSS  # the assembler picks the node formulation for a network that contains one

    def __init__(self, name, anode, cathode, IS=None, N=None, RS=None, model=None, gmin=1e-12, vt=VT):
        m = model.as_dict() if model is not None else dict(DiodeModel.PARAMETERS)
        for key, val in (("IS", IS), ("N", N), ("RS", RS)):
            if val is not None:
                m[key] = float(val)
        require_positive(name, "IS", m["IS"])
        require_positive(name, "N", m["N"])
        require_positive(name, "RS", m["RS"], allow_zero=True)
        require_positive(name, "gmin", gmin, allow_zero=True)
        a, k = node_name(anode), node_name(cathode)
        self.internal_node = f"{name}#a" if m["RS"] > 0 else None
        if self.internal_node:
            ports = [Port(DOMAIN, a, self.internal_node), Port(DOMAIN, self.internal_node, k)]
        else:
            ports = [Port(DOMAIN, a, k)]
        super().__init__(name, ports, {"IS": m["IS"], "N": m["N"], "RS": m["RS"], "gmin": gmin, "vt": vt},
                         terminals=(a, k))

    def numeric_values(self):
        """The parameter values as floats."""
        return {k: float(v) for k, v in self.values.items()}

    def limit_flows(self, old, new):
        """Newton-step limiting of the junction voltage (SPICE's ``pnjlim``), used by the DC solver."""
        v = self.numeric_values()
        nvt = v["N"] * v["vt"]
        vcrit = nvt * math.log(nvt / (math.sqrt(2) * v["IS"]))
        out = [float(x) for x in new]
        out[-1] = pnjlim(out[-1], float(old[-1]), nvt, vcrit)
        return np.array(out)

    @staticmethod
    def limit_flows_batch(values, old, new):
        """:meth:`limit_flows` for many diodes at once: ``values`` maps parameter names to arrays, ``old``/``new``
        are (diodes × ports) arrays of port flows; the last port is the junction. Returns ``new`` itself when
        no junction needs limiting."""
        nvt = values["N"] * values["vt"]
        vcrit = nvt * np.log(nvt / (np.sqrt(2) * values["IS"]))
        vn, vo = new[:, -1], old[:, -1]
        big = (vn > vcrit) & (np.abs(vn - vo) > 2 * nvt)
        if not big.any():
            return new  # the same array: nothing limited
        arg = 1 + (vn - vo) / nvt
        with np.errstate(divide="ignore", invalid="ignore"):
            up = np.where(arg > 0, vo + nvt * np.log(np.where(arg > 0, arg, 1.0)), vcrit)
            fresh = nvt * np.log(np.where(vn > 0, vn, 1.0) / nvt)
        lim = np.where(big, np.where(vo > 0, up, fresh), vn)
        out = new.copy()
        out[:, -1] = lim
        return out

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
        D = co_content(junction.f, IS, N, gmin, vt)
        if len(ports) == 2:
            D += ports[0].f ** 2 / (2 * RS)
        return Contribution(D=D)


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


def co_content(v, IS, N, gmin, vt):
    """``J(v)`` of the junction (sympy): ``∂J/∂v`` is :func:`junction_current`.

    >>> v = sp.Symbol("v")
    >>> sp.diff(co_content(v, 1e-14, 1, 0, 0.025), v).subs(v, 0.5)   # doctest: +ELLIPSIS
    4.85165...e-6
    """
    nvt = N * vt
    x = v / nvt
    d = x - XMAX  # the excess above v_max
    capped = sp.Piecewise((x, x <= XMAX), (XMAX, True))  # numpy evaluates both branches: never exp(huge)
    exponential = sp.Piecewise((sp.exp(capped), x <= XMAX), (sp.exp(XMAX) * (1 + d + d ** 2 / 2), True))
    return IS * nvt * (exponential - 1) - IS * v + gmin * v ** 2 / 2

