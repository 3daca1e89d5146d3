"""Shared construction of the 1-D mechanical element families (translational and rotational).

Both domains have the same laws; only names differ. This module builds the
classes of one domain from a table of names so the two libraries cannot drift.
"""
from netdyn.errors import ElementError

from .base import (ACROSS, AcrossSource, DisplacementSource, EnergyLaw, LinearLaw, Port, ThroughSource, TwoPort,
                   node_name, require_positive)


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

        def __init__(self, name, node, value=None, reference="0", **kw):
            value = kw.pop(inertia_param, value)
            _no_extra(name, kw)
            if value is None:
                raise ElementError(f"{name}: give {inertia_param}")
            require_positive(name, inertia_param, value)
            super().__init__(name, node, reference, {inertia_param: value}, domain=domain)

        def coefficient(self, values):
            return values[inertia_param]

    class Spring(LinearLaw):
        law = "across_storage"

        def __new__(cls, name, a, b, value=None, energy=None, **kw):
            if energy is not None:
                return EnergyLaw(name, a, b, "V", energy, ACROSS, domain=domain)
            return super().__new__(cls)

        def __init__(self, name, a, b, value=None, energy=None, **kw):
            value = kw.pop(spring_param, value)
            _no_extra(name, kw)
            if value is None:
                raise ElementError(f"{name}: give {spring_param} or an energy function")
            require_positive(name, spring_param, value)
            super().__init__(name, a, b, {spring_param: value}, domain=domain)

        def coefficient(self, values):
            return 1 / values[spring_param]

    class Damper(LinearLaw):
        law = "dissipator"

        def __new__(cls, name, a, b, value=None, dissipation=None, **kw):
            if dissipation is not None:
                return EnergyLaw(name, a, b, "D", dissipation, ACROSS, domain=domain)
            return super().__new__(cls)

        def __init__(self, name, a, b, value=None, dissipation=None, **kw):
            value = kw.pop(damper_param, value)
            _no_extra(name, kw)
            if value is None:
                raise ElementError(f"{name}: give {damper_param} or a dissipation function")
            require_positive(name, damper_param, value)
            super().__init__(name, a, b, {damper_param: value}, domain=domain)

        def coefficient(self, values):
            return 1 / values[damper_param]

    class EffortSource(ThroughSource):
        def __init__(self, name, node, value, reference="0"):
            super().__init__(name, reference, node, value, domain=domain)
            self.terminals = (node_name(node), node_name(reference))
            self.report_signs = (-1,)  # velocity(name): of node relative to reference
            self.through_report_signs = (1,)  # force(name): the applied force on node

    class FlowSource(AcrossSource):
        def __init__(self, name, node, value, reference="0"):
            super().__init__(name, reference, node, value, domain=domain)
            self.terminals = (node_name(node), node_name(reference))
            self.report_signs = (-1,)

    class PositionSource(DisplacementSource):
        def __init__(self, name, node, value, reference="0"):
            super().__init__(name, reference, node, value, domain=domain)
            self.terminals = (node_name(node), node_name(reference))
            self.report_signs = (-1,)

    class Transformer(TwoPort):
        def __init__(self, name, a, b, ratio, reference_a="0", reference_b="0"):
            super().__init__(name, Port(domain, node_name(a), node_name(reference_a)),
                             Port(domain, node_name(b), node_name(reference_b)), "transformer", ratio)

    classes = dict(Inertia=Inertia, Spring=Spring, Damper=Damper, EffortSource=EffortSource,
                   FlowSource=FlowSource, PositionSource=PositionSource, Transformer=Transformer)
    for role, cls in classes.items():
        cls.domain = domain
    return classes


def _no_extra(name, kw):
    if kw:
        raise ElementError(f"{name}: unknown parameter(s) {sorted(kw)}")
