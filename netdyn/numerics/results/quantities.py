"""What a named series of a solution measures, and in which SI unit — for plot axes and tables.

>>> from netdyn.linkages import four_bar
>>> model = four_bar().model()
>>> quantity(model, "theta_crank"), quantity(model, "x_rod_dot")
(('angle', 'rad'), ('velocity', 'm/s'))
"""
from __future__ import annotations

from netdyn.frames import DISPLACEMENTS as _DISPLACEMENTS, PREFIXES as _PREFIX, UNKNOWN  # (by name: base layer)

_PORT = {  # domain -> through, across
    "electrical": (("current", "A"), ("voltage", "V")),
    "translational": (("force", "N"), ("velocity", "m/s")),
    "rotational": (("torque", "N·m"), ("angular velocity", "rad/s")),
}
_IMPULSE = {"translational": ("impulse", "N·s"), "rotational": ("angular impulse", "N·m·s")}


def _domain_of(model, name):
    md = model.metadata
    info = md.get("elements", {}).get(name)
    if info is not None:
        return info["element"].ports[0].domain
    for domain, paths in md.get("node_paths", {}).items():
        if name in paths:
            return domain
    return None


def _displacement(domain_of, coordinate):
    head, _, rest = coordinate.partition("_")
    if head == "p" and rest:
        element = rest.split(":")[0]
        return _IMPULSE.get(domain_of(element), UNKNOWN)
    return _PREFIX.get(head, UNKNOWN)


def quantity(model, spec, index=None):
    """``(quantity, unit)`` of a series name: a coordinate (``x_rod``), its rates (``x_rod_dot``,
    ``x_rod_ddot``), a multiplier, or ``v(name)`` / ``i(name)`` of an element or node.

    ``index``, a solution's :class:`~netdyn.numerics.results.index.ResultIndex`, answers in O(1) without the
    model (``model`` may then be None): a table of every series of a large network stays linear."""
    if index is not None:
        domain_of, coordinates = index.domain, index.coordinates
    else:
        domain_of, coordinates = (lambda name: _domain_of(model, name)), model.coordinate_names
    if len(spec) > 3 and spec[1] == "(" and spec.endswith(")"):
        through, across = _PORT.get(domain_of(spec[2:-1]), (UNKNOWN, UNKNOWN))
        return across if spec[0].lower() == "v" else through
    for suffix, order in (("_ddot", 2), ("_dot", 1), ("", 0)):
        if spec.endswith(suffix) and spec[:len(spec) - len(suffix)] in coordinates:
            base = _displacement(domain_of, spec[:len(spec) - len(suffix)])
            if base == UNKNOWN:
                return UNKNOWN
            return base if order == 0 else _DISPLACEMENTS[base][order - 1]
    if spec.startswith(("lambda_", "mu_")):
        return ("multiplier", "")
    return UNKNOWN
