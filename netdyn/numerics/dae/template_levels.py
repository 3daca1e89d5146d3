"""Constraint values and the mass matrix from the element templates, for the consistent start.

:func:`~netdyn.numerics.dae.initial.consistent_initial_conditions` needs, at a few
states, the constraint values and Jacobians (``φ, Φ_q, Φ_t, A, a``) and, in
node coordinates, the mass matrix. The compiled model gives them through its
fused kernel (:mod:`netdyn.numerics.functions.kernel`), whose build grows faster than the
network. When the model will be integrated by
:class:`~netdyn.numerics.ida.sparse_ida.SparseIDA` anyway, the same
numbers come from its element templates (:class:`~netdyn.numerics.functions.assembly.TermAssembly`,
built once and kept with the compiled model, so the integrator reuses them):

* ``φ`` and ``A f + a`` are rows of the assembly's output ``E``; ``Φ_q f + Φ_t``
  is its GGL row, so ``a`` and ``Φ_t`` are those rows at ``f = 0``;
* ``Φ_q``, ``A`` and ``M`` are blocks of its sparse Jacobians with respect to
  ``q``, ``f`` and the accelerations.

>>> import numpy as np
>>> from netdyn import LagrangianModel, coordinates, t
>>> from netdyn.numerics.functions.compiled import compile_model
>>> x, y = coordinates("x, y")
>>> cm = compile_model(LagrangianModel([x, y], T=x.diff(t)**2 / 2, D=y.diff(t)**2 / 2,
...                                    constraints=[x - y**2], flow_constraints=[y.diff(t) - 2 * t]))
>>> c = TemplateLevels(cm).constraints(0.5, np.array([1.0, 2.0]), np.array([3.0, 4.0]), cm.parameter_vector())
>>> c.phi.tolist(), c.Phi_q.tolist(), c.A.tolist(), c.a.tolist()
([-3.0], [[1.0, -4.0]], [[0.0, 1.0]], [-1.0])
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from netdyn.numerics.functions.assembly import DENSE_UNKNOWNS, assembly, ida_unknowns

__all__ = ["LevelValues", "TemplateLevels", "templates_serve_start"]


@dataclass
class LevelValues:
    """Displacement constraints ``phi`` (m1), their Jacobian ``Phi_q`` (m1×n) and time derivative ``Phi_t``;
    flow constraints ``A f + a = 0`` (``A`` m2×n, ``a`` m2)."""

    phi: np.ndarray
    Phi_q: np.ndarray
    Phi_t: np.ndarray
    A: np.ndarray
    a: np.ndarray


def templates_serve_start(cm):
    """Whether the consistent start should take its numbers from the templates rather than the fused kernel.

    True when the kernel is not built yet, the model is not an open tree of the recursive path, it has flows
    without inertia (circuits: the integrator is IDA whatever the state) and it is larger than the dense IDA's
    reach (:func:`~netdyn.numerics.ida.sparse_ida.ida_for`), so that the sparse IDA, which builds the
    templates anyway, integrates it.
    """
    if getattr(cm, "_kernel", None) is not False or getattr(cm, "_tree", None) is not None:
        return False
    if len(cm.inertial_columns()) == cm.n:
        return False
    return ida_unknowns(cm) > DENSE_UNKNOWNS


class TemplateLevels:
    """``constraints`` and ``dynamics`` of a compiled model evaluated on its element templates."""

    def __init__(self, cm):
        self.cm = cm
        self.asm = assembly(cm)

    def _jacobian(self, tt, q, f, p, kind):
        return self.asm.jacobian(tt, q, f, np.zeros(self.cm.n), p.vector, p.inputs(tt), kind).toarray()

    def constraints(self, tt, q, f, p):
        """:class:`LevelValues` at a state (the multipliers play no part)."""
        n, m1, m2 = self.cm.n, self.asm.m1, self.asm.m2
        q, f = np.asarray(q, dtype=float), np.asarray(f, dtype=float)
        zero = np.zeros(n)
        E0 = self.asm.evaluate(tt, q, zero, zero, p.vector, p.inputs(tt))[0]
        Jq = self._jacobian(tt, q, f, p, 0)
        Jf = self._jacobian(tt, q, f, p, 1)
        return LevelValues(phi=E0[n:n + m1], Phi_q=Jq[n:n + m1], Phi_t=E0[n + m1 + m2:n + 2 * m1 + m2],
                           A=Jf[n + m1:n + m1 + m2], a=E0[n + m1:n + m1 + m2])

    def dynamics(self, tt, q, f, p):
        """The mass matrix ``M`` (dense, n×n) and ``h`` (the Lagrange rows at zero acceleration)."""
        n = self.cm.n
        q, f = np.asarray(q, dtype=float), np.asarray(f, dtype=float)
        M = self._jacobian(tt, q, f, p, 2)[:n]
        h = self.asm.evaluate(tt, q, f, np.zeros(n), p.vector, p.inputs(tt))[0][:n]
        return M, h
