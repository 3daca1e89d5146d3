"""Coulomb friction between two nodes of a 1-D mechanical network: a state and the crossings that change it.

A friction contact transmits a force (torque) ``i`` from ``a`` to ``b`` — positive when it resists a positive
relative velocity ``v = v(a) - v(b)``, as a damper's ``i = c v`` — and is in one of three states:

* ``"stick"`` — a flow constraint ``v = 0``; its multiplier is the friction force needed, ``|i| <= F_s``;
* ``+1`` / ``-1`` — sliding with ``v`` of that sign: ``i = ±F_k``, the kinetic level, given as the
  dissipation function ``D = ±F_k v`` (so its work ``f ∂D/∂f = F_k |v|`` is booked as dissipated);
* ``None`` — not decided: ``simulate`` decides it at the start from the initial relative velocity (and, when
  that is zero, from the force needed to stick). On its own it transmits nothing.

The element knows only this; :mod:`netdyn.numerics.nonsmooth.friction` finds the crossings (``events()``:
sliding → sticking when ``v`` crosses zero, sticking → sliding when ``|i|`` reaches ``F_s``) and makes the
network in the other state (``with_state``). With ``regularization=ε`` the element is instead the smooth
law ``i = F_k v / √(v² + ε²)`` (a nonlinear damper; no events, no static peak) for comparison.

>>> from netdyn.components.translational import Friction
>>> f = Friction("F1", "x", "belt", mu_k=0.3, mu_s=0.5, normal=9.81)
>>> f.state, f.levels()
(None, (2.94300000000000, 4.90500000000000))
>>> [(name, d, s) for _, d, s, name in f.with_state(1).events()]
[('F1 sticks', -1, 'stick')]
"""
from __future__ import annotations

import sympy as sp

from netdyn.errors import ElementError
from netdyn.symbols import as_expr, t

from .base import ACROSS, Contribution, TwoTerminal, require_positive

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # names for the hints only (annotations are not evaluated)
    from typing import Any

__all__ = ["CoulombFriction", "STATES"]

#: the states of a friction contact: sticking, sliding with a positive or negative relative velocity, undecided
STATES = ("stick", 1, -1, None)


class CoulombFriction(TwoTerminal):
    """Coulomb friction between ``a`` and ``b`` (the domain's subclasses name the levels: a force, a torque).

    The kinetic level ``F_k`` is ``level`` or ``mu_k * normal`` (times ``radius`` for a torque); the static
    level ``F_s`` is ``static_level`` or ``mu_s * normal`` (default: the kinetic one). Levels are numbers
    or expressions of ``t`` (a clutch's pressure as an input). ``state``: one of :data:`STATES`.
    ``regularization``: a velocity ``ε`` > 0 makes the element the smooth law ``F_k v / √(v² + ε²)``.
    """

    level_names = ("F", "Fs")

    def __init__(self, name: str, a: str | int, b: str | int, level: Any = None, static_level: Any = None, *,
                 mu_k: Any = None, mu_s: Any = None, normal: Any = None, radius: Any = None, state: Any = None,
                 regularization: Any = None) -> None:
        kinetic, static = _levels(name, level, static_level, mu_k, mu_s, normal, radius, self.level_names)
        if state not in STATES:
            raise ElementError(f"{name}: state must be 'stick', +1, -1 or None (decided at the start), got {state!r}")
        self.state = state
        self.regularization = None
        if regularization is not None:
            require_positive(name, "regularization", regularization)
            self.regularization = float(regularization)
        super().__init__(name, a, b, {self.level_names[0]: kinetic, self.level_names[1]: static})

    def levels(self) -> tuple:
        """``(F_k, F_s)``: the kinetic and static levels (numbers or expressions of ``t``)."""
        return self.values[self.level_names[0]], self.values[self.level_names[1]]

    def static_at(self, time: float) -> float:
        """The static level ``F_s`` at ``time`` (a number; the level must not depend on parameters)."""
        return _of_time(self.name, self.levels()[1])(time)

    @property
    def switches(self) -> bool:
        """Whether the contact changes state at events (not when regularised)."""
        return self.regularization is None

    @property
    def sticking(self) -> bool:
        """Whether the contact sticks (its constraint ``v = 0`` active)."""
        return self.state == "stick"

    def contribute(self, ports, values):
        (pv,) = ports
        kinetic = values[self.level_names[0]]
        if pv.kind != ACROSS:
            raise ElementError(f"{self.name}: a friction contact is a law of the relative velocity; use a "
                               "formulation that keeps this domain in node positions (the default)")
        if self.regularization is not None:
            eps = self.regularization
            return Contribution(D=kinetic * eps * (sp.sqrt(1 + (pv.f / eps) ** 2) - 1))
        if self.state is None:
            return Contribution()
        if self.state == "stick":
            return Contribution(flow_constraints=[pv.f])
        return Contribution(D=self.state * kinetic * pv.f)

    def events(self) -> list:
        """The crossings that change the state now: ``(condition g(t, s), direction, state after, name)``.

        Sliding with sign ``s``: ``v(name)`` crossing zero against ``s`` → ``"stick"``. Sticking:
        ``±f(name) − F_s`` rising through zero → sliding with that sign. None for a regularised or undecided
        contact."""
        if self.regularization is not None or self.state is None:
            return []
        if self.state == "stick":
            fs = _of_time(self.name, self.levels()[1])
            key = f"f({self.name})"
            return [(lambda tt, s, k=key: s[k] - fs(tt), 1, 1, f"{self.name} slips +"),
                    (lambda tt, s, k=key: -s[k] - fs(tt), 1, -1, f"{self.name} slips -")]
        key = f"v({self.name})"
        return [(lambda tt, s, k=key: s[k], -self.state, "stick", f"{self.name} sticks")]

    def with_state(self, state: Any) -> CoulombFriction:
        """The same contact in ``state``."""
        cls, args, kw = self._constructor
        return cls(*args, **dict(kw, state=state))


def _levels(name, level, static_level, mu_k, mu_s, normal, radius, names):
    """The kinetic and static levels from a level or from coefficients and a normal force."""
    if level is not None and (mu_k is not None or normal is not None):
        raise ElementError(f"{name}: give the {names[0]} level or mu_k and normal, not both")
    if level is None:
        if mu_k is None or normal is None:
            raise ElementError(f"{name}: give the kinetic {names[0]} level, or mu_k and normal")
        require_positive(name, "mu_k", mu_k)
        factor = as_expr(normal, name, "normal") * (1 if radius is None else as_expr(radius, name, "radius"))
        level = as_expr(mu_k, name, "mu_k") * factor
        if static_level is None and mu_s is not None:
            require_positive(name, "mu_s", mu_s)
            static_level = as_expr(mu_s, name, "mu_s") * factor
    elif mu_s is not None:
        raise ElementError(f"{name}: mu_s goes with mu_k and normal; with a {names[0]} level give static_{names[0]}")
    kinetic = as_expr(level, name, names[0])
    static = kinetic if static_level is None else as_expr(static_level, name, names[1])
    for key, v in ((names[0], kinetic), (names[1], static)):
        if v.is_number:
            require_positive(name, key, v, allow_zero=True)
    if kinetic.is_number and static.is_number and static < kinetic:
        raise ElementError(f"{name}: the static level {static} is below the kinetic level {kinetic}; "
                           "Coulomb friction needs static >= kinetic")
    return kinetic, static


def _of_time(name, expr):
    """A float function of ``t`` from a level (a number or an expression of ``t`` only)."""
    extra = expr.free_symbols - {t}
    if extra:
        raise ElementError(f"{name}: its friction level {expr} depends on {sorted(map(str, extra))}; event-driven "
                           "friction needs numbers or functions of t (give the values, not params=)")
    if not expr.free_symbols:
        value = float(expr)
        return lambda tt: value
    f = sp.lambdify(t, expr, modules="math")
    return lambda tt: float(f(tt))
