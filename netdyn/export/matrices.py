"""The mass-matrix form ``M(q,t) q̈ = F(q,f,t) − Φ_qᵀλ − Rᵀμ`` as sympy matrices, in time-function form.

``R`` is where each flow multiplier acts: ``A`` itself, but for a controlled source's servo constraint,
whose multiplier acts off its own row.

For users who continue in sympy: coordinates are ``q(t)``, flows ``q'(t)``,
multipliers ``lambda_j(t)`` and ``mu_k(t)`` (as ``sympy.physics.mechanics``
writes them).

>>> import sympy as sp
>>> from netdyn import LagrangianModel, coordinates, t
>>> x, = coordinates("x,")
>>> m, k, F0 = sp.symbols("m k F0")
>>> form = mass_matrix_form(LagrangianModel([x], T=m*x.diff(t)**2/2, V=k*x**2/2, efforts={x: F0}))
>>> form.M, form.F
(Matrix([[m]]), Matrix([[F0 - k*x(t)]]))
>>> form.residual()   # M q̈ − F + Φ_qᵀλ + Rᵀμ, zero on solutions
Matrix([[-F0 + k*x(t) + m*Derivative(x(t), (t, 2))]])
"""
from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

from netdyn.symbols import t


@dataclass
class MatrixForm:
    """``M q̈ = F − Φ_qᵀ λ − Rᵀ μ``, ``phi = 0``, ``A f + a = 0`` (all sympy ``Matrix``; ``R`` is ``A`` but
    for servo constraints)."""

    q: sp.Matrix
    M: sp.Matrix
    F: sp.Matrix
    phi: sp.Matrix
    Phi_q: sp.Matrix
    A: sp.Matrix
    a: sp.Matrix
    lambdas: sp.Matrix
    mus: sp.Matrix
    R: sp.Matrix = None

    def __post_init__(self):
        if self.R is None:
            self.R = self.A

    def residual(self):
        """``M q̈ − F + Φ_qᵀλ + Rᵀμ`` (a column; zero along solutions)."""
        qdd = self.q.diff(t, 2)
        r = self.M * qdd - self.F
        if self.lambdas.rows:
            r += self.Phi_q.T * self.lambdas
        if self.mus.rows:
            r += self.R.T * self.mus
        return r


def mass_matrix_form(model):
    """The :class:`MatrixForm` of a model's derived equations."""
    eq = model.derive()
    back = lambda e: sp.sympify(e).xreplace(eq.to_time)
    n = eq.n
    dense = lambda d, rows: sp.Matrix(rows, n, lambda i, j: back(d.get((i, j), 0)))
    return MatrixForm(q=sp.Matrix(eq.coordinates), M=dense(eq.M, n), F=sp.Matrix([-back(h) for h in eq.h]),
                      phi=sp.Matrix([back(p) for p in eq.phi]), Phi_q=dense(eq.Phi_q, len(eq.phi)),
                      A=dense(eq.A, len(eq.a0)), a=sp.Matrix([back(a) for a in eq.a0]),
                      lambdas=sp.Matrix(eq.lambdas_t), mus=sp.Matrix(eq.mus_t), R=dense(eq.reaction, len(eq.a0)))
