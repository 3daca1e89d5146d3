"""The integrator family: one interface (:class:`~.base.Integrator`), one module per method.

========== ============================================= ==========================================
name       class                                         for
========== ============================================= ==========================================
projection :class:`~.projection.Projection`              regular KKT matrix, not stiff (mechanisms)
ida        :class:`~.ida.IDA`                            singular mass on the manifold, or stiff
linear     :class:`~.linear.LinearRadau`                 linear networks with numeric values
recursive  :class:`~.recursive.Recursive`                planar trees and closed chains in joint
                                                         coordinates (opt-in, ``method="recursive"``)
========== ============================================= ==========================================

:func:`netdyn.numerics.choice.choose_method` holds the rule that picks one.
A new integrator is a module here implementing ``Integrator.integrate`` and one line in ``INTEGRATORS``.
"""
from netdyn.numerics.integrators.base import Integrator
from netdyn.numerics.integrators.ida import IDA
from netdyn.numerics.integrators.linear import LinearRadau
from netdyn.numerics.integrators.projection import Projection

INTEGRATORS = {cls.name: cls for cls in (Projection, IDA, LinearRadau)}

__all__ = ["Integrator", "Projection", "IDA", "LinearRadau", "INTEGRATORS"]
