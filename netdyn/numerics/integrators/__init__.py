"""Shared room: the integrator interface (:class:`~.base.Integrator`) and the numerical methods that serve
more than one path — Radau IIA on linear DAEs (:mod:`.radau`), weighted sparse least squares
(:mod:`.sparse_lsq`), the charges' tolerances where a source senses a current (:mod:`.sensed`).

The integrators themselves live with their paths: ``Projection`` in :mod:`netdyn.numerics.mechanics`,
``IDA`` in :mod:`netdyn.numerics.ida`, ``LinearRadau`` in :mod:`netdyn.numerics.circuit`; their 0.2 names
here still work until 0.4, with a :class:`DeprecationWarning`.
"""
from netdyn.numerics.integrators.base import Integrator

__all__ = ["Integrator"]


def __getattr__(name):
    from netdyn.numerics import _moved

    if name in _moved.MOVED_INTEGRATORS:
        return _moved.moved_integrator(name)
    raise AttributeError(f"module 'netdyn.numerics.integrators' has no attribute {name!r}")
