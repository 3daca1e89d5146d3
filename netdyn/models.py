"""Ready-made models as ``LagrangianModel`` builders: nonholonomic vehicles and the book's slider-crank.

Parameters are sympy symbols with the given numbers as default values, so a
model can be simulated directly and re-parameterized with ``params=``.

>>> sleigh = chaplygin_sleigh()
>>> sleigh.coordinate_names, sleigh.flow_constraint_labels
(['x', 'y', 'theta'], ['knife edge'])
"""
from __future__ import annotations

import sympy as sp

from netdyn.components.base import ACROSS, THROUGH, PortVariables
from netdyn.components.nonholonomic import KnifeEdge, RollingDisk
from netdyn.lagrange.model import LagrangianModel
from netdyn.symbols import coordinates, t

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # names for the hints only (annotations are not evaluated)
    from typing import Any


def _params(**values):
    syms = {k: sp.Symbol(k, positive=True) for k in values}
    return syms, {syms[k]: v for k, v in values.items()}


def chaplygin_sleigh(m: float = 1.0, I: float = 0.1, a: float = 0.5,
                     name: str = "Chaplygin sleigh") -> LagrangianModel:
    """A body on a knife edge at ``(x, y)``, heading ``theta``; centre of mass a distance ``a`` ahead.

    ``I`` is the moment of inertia about the centre of mass. With ``v`` the
    speed of the contact point along the blade and ``ω = θ̇``:
    ``m v̇ = m a ω²``, ``(I + m a²) ω̇ = −m a v ω``, so ω → 0 and the sleigh ends
    in straight-line motion along its axis at ``v = sqrt(2E/m)``.

    >>> sleigh = chaplygin_sleigh()
    >>> sleigh.coordinate_names, sleigh.flow_constraints
    (['x', 'y', 'theta'], [-sin(theta(t))*Derivative(x(t), t) + cos(theta(t))*Derivative(y(t), t)])
    """
    x, y, th = coordinates("x y theta")
    s, defaults = _params(m=m, I=I, a=a)
    xc = x + s["a"] * sp.cos(th)
    yc = y + s["a"] * sp.sin(th)
    T = s["m"] * (xc.diff(t)**2 + yc.diff(t)**2) / 2 + s["I"] * th.diff(t)**2 / 2
    edge = KnifeEdge(x, y, th)
    return LagrangianModel([x, y, th], T=T, flow_constraints=edge.flow_constraints, parameters=defaults, name=name,
                           flow_constraint_labels=edge.labels)


def rolling_disk(m: float = 1.0, R: float = 0.3, name: str = "rolling disk") -> LagrangianModel:
    """A thin vertical disk (mass ``m``, radius ``R``) rolling without slipping on a plane.

    Coordinates: contact point ``(x, y)``, heading ``theta``, spin ``phi``.
    Spin and heading rates stay constant; the contact point runs on a circle of
    radius ``R φ̇ / θ̇``.

    >>> rolling_disk().flow_constraint_labels
    ['rolling disk (along x)', 'rolling disk (along y)']
    """
    x, y, th, ph = coordinates("x y theta phi")
    s, defaults = _params(m=m, R=R)
    mm, RR = s["m"], s["R"]
    T = (mm * (x.diff(t)**2 + y.diff(t)**2) / 2 + mm * RR**2 / 4 * ph.diff(t)**2
         + mm * RR**2 / 8 * th.diff(t)**2)
    disk = RollingDisk(x, y, th, ph, RR)
    return LagrangianModel([x, y, th, ph], T=T, flow_constraints=disk.flow_constraints, parameters=defaults,
                           name=name, flow_constraint_labels=disk.labels)


def slider_crank(m1: float = 1.0, m2: float = 2.0, m3: float = 0.5, l1: float = 0.1, l2: float = 0.3,
                 I1: float | None = None, I2: float | None = None, torque: Any = 0,
                 name: str = "slider-crank") -> LagrangianModel:
    """The book's Example 4.2 in 7 absolute coordinates and 6 displacement constraints.

    Crank (1) and rod (2) are slender rods (``I = m l²/12`` unless given),
    slider (3) moves on the x axis; ``torque`` (number, expression of t or an
    undefined function of t, i.e. an input) drives the crank angle ``theta1``.

    >>> slider_crank().coordinate_names
    ['x1', 'y1', 'theta1', 'x2', 'y2', 'theta2', 'x3']
    """
    x1, y1, th1, x2, y2, th2, x3 = coordinates("x1 y1 theta1 x2 y2 theta2 x3")
    I1 = m1 * l1**2 / 12 if I1 is None else I1
    I2 = m2 * l2**2 / 12 if I2 is None else I2
    s, defaults = _params(m1=m1, m2=m2, m3=m3, l1=l1, l2=l2, I1=I1, I2=I2)
    D = lambda q: q.diff(t)  # noqa: E731
    T = (s["m1"] * (D(x1)**2 + D(y1)**2) / 2 + s["I1"] * D(th1)**2 / 2 + s["m2"] * (D(x2)**2 + D(y2)**2) / 2
         + s["I2"] * D(th2)**2 / 2 + s["m3"] * D(x3)**2 / 2)
    L1, L2 = s["l1"], s["l2"]
    phi = [x1 - L1 / 2 * sp.cos(th1), y1 - L1 / 2 * sp.sin(th1),
           x2 - (L1 * sp.cos(th1) + L2 / 2 * sp.cos(th2)), y2 - (L1 * sp.sin(th1) + L2 / 2 * sp.sin(th2)),
           L1 * sp.cos(th1) + L2 * sp.cos(th2) - x3, L1 * sp.sin(th1) + L2 * sp.sin(th2)]
    labels = ["crank centre x", "crank centre y", "rod centre x", "rod centre y", "slider x", "slider y"]
    return LagrangianModel([x1, y1, th1, x2, y2, th2, x3], T=T, efforts={th1: torque} if torque else None,
                           constraints=phi, parameters=defaults, name=name, constraint_labels=labels)


def with_motor(model: LagrangianModel, shaft: str, motor: Any, voltage: Any, charge: str = "q_motor",
               load: Any = None) -> LagrangianModel:
    """A model with a :class:`~netdyn.components.transducers.DCMotor` added on coordinate ``shaft``.

    The motor's own contribution (its armature R and L, the coupling and its
    rotor J, B) is taken from the element on the armature charge ``charge``
    (a new coordinate) and the shaft angle; ``voltage`` (number, expression of
    t or an input function) drives the armature. ``load`` adds extra efforts.

    >>> from netdyn.components.transducers import DCMotor
    >>> m = with_motor(slider_crank(), "theta1", DCMotor("M", "a", "0", "s", R=1, L=0.01, K=0.05), 6.0)
    >>> m.coordinate_names[-1], len(m.constraints)
    ('q_motor', 6)
    """
    q, = coordinates(f"{charge},")
    th = model.coordinate(shaft)
    c = motor.contribute([PortVariables(THROUGH, q, q.diff(t)), PortVariables(ACROSS, th, th.diff(t))],
                         motor.values)
    efforts = dict(model.efforts)
    efforts[q] = efforts.get(q, 0) + c.efforts.get(0, 0) + voltage
    efforts[th] = efforts.get(th, 0) + c.efforts.get(1, 0)
    for k, v in (load or {}).items():
        efforts[model.coordinate(k)] = efforts.get(model.coordinate(k), 0) + v
    return LagrangianModel(model.coordinates + [q], T=model.T_terms + [c.T], V=model.V_terms + [c.V],
                           D=model.D_terms + [c.D], efforts=efforts, constraints=model.constraints,
                           flow_constraints=model.flow_constraints, parameters=model.parameters,
                           name=f"{model.name} + {motor.name}", constraint_labels=model.constraint_labels,
                           flow_constraint_labels=model.flow_constraint_labels)
