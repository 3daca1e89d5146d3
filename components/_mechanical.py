"""Shared construction of the 1-D mechanical element families (translational and rotational).

Both domains have the same laws; only names differ. This module builds the
classes of one domain from a table of names so the two libraries cannot drift.
"""
from __future__ import annotations
from netdyn.errors import ElementError

from .base import (ACROSS, AcrossSource, DisplacementSource, EnergyLaw, LinearLaw, Port, ThroughSource, TwoPort,
                   node_name, require_positive)

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # names for the hints only (annotations are not evaluated)
    from typing import Any


def make_domain(domain, names):
    """Return the element classes of one 1-D mechanical domain.

    ``names`` maps roles to ``(class name, parameter name)``: inertia, spring,
    damper, effort source, flow source, displacement source.
    """
    inertia_name, inertia_param = names["inertia"]
    spring_name, spring_param = names["spring"]
    damper_name, damper_param = names["damper"]

    class Inertia(LinearLaw):
        law = "through_storage"

        def __init__(self, name: str, node: str | int, value: Any = None, reference: str | int = "0",
                     **kw: Any) -> None:
            value = _value(name, kw, inertia_param, value)
            super().__init__(name, node, reference, {inertia_param: value}, domain=domain)

        def coefficient(self, values):
            return values[inertia_param]

    Spring = _across_law(domain, "across_storage", spring_param, "V", "energy", "an energy function")
    Damper = _across_law(domain, "dissipator", damper_param, "D", "dissipation", "a dissipation function")

    class EffortSource(ThroughSource):
        def __init__(self, name: str, node: str | int, value: Any, reference: str | int = "0") -> None:
            super().__init__(name, reference, node, value, domain=domain)
            self.terminals = (node_name(node), node_name(reference))
            self.report_signs = (-1,)  # velocity(name): of node relative to reference
            self.through_report_signs = (1,)  # force(name): the applied force on node

    class FlowSource(AcrossSource):
        def __init__(self, name: str, node: str | int, value: Any, reference: str | int = "0") -> None:
            super().__init__(name, reference, node, value, domain=domain)
            self.terminals = (node_name(node), node_name(reference))
            self.report_signs = (-1,)

    class PositionSource(DisplacementSource):
        def __init__(self, name: str, node: str | int, value: Any, reference: str | int = "0") -> None:
            super().__init__(name, reference, node, value, domain=domain)
            self.terminals = (node_name(node), node_name(reference))
            self.report_signs = (-1,)

    class Transformer(TwoPort):
        def __init__(self, name: str, a: str | int, b: str | int, ratio: Any, reference_a: str | int = "0",
                     reference_b: str | int = "0") -> None:
            super().__init__(name, Port(domain, node_name(a), node_name(reference_a)),
                             Port(domain, node_name(b), node_name(reference_b)), "transformer", ratio)

    classes = dict(Inertia=Inertia, Spring=Spring, Damper=Damper, EffortSource=EffortSource,
                   FlowSource=FlowSource, PositionSource=PositionSource, Transformer=Transformer)
    for role, cls in classes.items():
        cls.domain = domain
    return classes


def _across_law(domain, law_name, param, kind, keyword, what):
    """The spring (``kind="V"``, ``energy=``) or damper (``"D"``, ``dissipation=``) class of a domain:
    linear in ``param`` (the law's coefficient is ``1/param``), or an :class:`EnergyLaw` of the function
    given as ``keyword`` (by that name or as the fifth argument)."""

    class AcrossLaw(LinearLaw):
        law = law_name

        def __new__(cls, name, a, b, value=None, function=None, **kw):
            function = kw.pop(keyword, function)
            if function is not None:
                return EnergyLaw(name, a, b, kind, function, ACROSS, domain=domain)
            return super().__new__(cls)

        def __init__(self, name: str, a: str | int, b: str | int, value: Any = None, function: Any = None,
                     **kw: Any) -> None:
            kw.pop(keyword, None)
            value = _value(name, kw, param, value, f" or {what}")
            super().__init__(name, a, b, {param: value}, domain=domain)

        def coefficient(self, values):
            return 1 / values[param]

    return AcrossLaw


def _value(name, kw, param, value, alternative=""):
    """The element's ``param`` (positional ``value`` or by its name), checked positive; no other keyword."""
    value = kw.pop(param, value)
    _no_extra(name, kw)
    if value is None:
        raise ElementError(f"{name}: give {param}{alternative}")
    require_positive(name, param, value)
    return value


def _no_extra(name, kw):
    if kw:
        raise ElementError(f"{name}: unknown parameter(s) {sorted(kw)}")
