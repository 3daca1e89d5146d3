"""A model whose bodies' kinetic coenergy is written only when something reads it.

In the relative (spanning-tree) formulation every body's velocity is a sum over all the joints between
it and ground, so the bodies' kinetic terms ``m|v_c|²/2 + I θ̇²/2`` grow like n² in symbols for an
n-link chain (18 s of sympy differentiation at n = 100), while the numeric path of an open tree
(:mod:`netdyn.numerics.treedynamics`) never needs them: it evaluates ``M`` and ``h`` by the recursive
algorithms. :class:`DeferredKineticModel` is an ordinary
:class:`~netdyn.lagrange.model.LagrangianModel` whose ``T_terms`` are built on first access (the
derivation, an export, ``model.T``), identical to those an eager assembly writes, in the same order.

>>> from netdyn import Network
>>> from netdyn.components.planar import RigidBody, Revolute, Gravity
>>> net = Network()
>>> _ = net.add(RigidBody("l1", 1, 0.1), Gravity(), Revolute("A", "ground", (0, 0), "l1", (-0.5, 0)))
>>> model = net.model(formulation="relative")
>>> model.kinetic_deferred
True
>>> len(model.T_terms), model.kinetic_deferred
(3, False)
"""
from __future__ import annotations

from netdyn.lagrange.model import LagrangianModel, _terms


class DeferredKineticModel(LagrangianModel):
    """A :class:`LagrangianModel` whose leading kinetic terms come from ``kinetic()`` on first access."""

    def __init__(self, coordinates, kinetic, **kwargs):
        self._kinetic = kinetic
        super().__init__(coordinates, **kwargs)

    @property
    def kinetic_deferred(self):
        """Whether the bodies' kinetic terms are still unwritten."""
        return self._kinetic is not None

    @property
    def T_terms(self):
        if self._kinetic is not None:
            kinetic, self._kinetic = self._kinetic, None
            self._rest_T = _terms(list(kinetic())) + self._rest_T
        return self._rest_T

    @T_terms.setter
    def T_terms(self, terms):
        self._rest_T = list(terms)

    def __getstate__(self):  # pickled (a parallel sweep): written first, the writer is a closure
        self.T_terms
        return dict(self.__dict__)
