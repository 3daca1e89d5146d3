"""Is a Pfaffian (flow) constraint integrable, i.e. holonomic in disguise?

A flow constraint ``Σ a_i(q, t) q̇_i + a_0(q, t) = 0`` is the one-form
``ω = Σ a_i dq_i + a_0 dt``. For one constraint:

* *exact* when ``dω = 0`` (``∂a_i/∂q_j = ∂a_j/∂q_i``): it integrates to
  ``φ(q, t) = const`` directly (the potential is returned);
* *integrable* when some factor makes it exact, iff ``ω ∧ dω = 0`` (every
  triple of variables; always true in two variables).

For several constraints, Frobenius: the distribution they annihilate must be
involutive — every Lie bracket of two vector fields spanning it is annihilated
too. An expression that sympy cannot reduce to zero is evaluated at random
points: non-zero there decides "not integrable"; otherwise the answer is
``None`` (undecided).

>>> from netdyn import coordinates, t
>>> x, y, th = coordinates("x y theta")
>>> import sympy as sp
>>> bool(is_integrable(-sp.sin(th)*x.diff(t) + sp.cos(th)*y.diff(t), [x, y, th]))   # knife edge
False
>>> r = is_integrable(y.diff(t)*x + x.diff(t)*y, [x, y]); r.exact, r.potential
(True, x(t)*y(t))
"""
from __future__ import annotations

import itertools
import random
from dataclasses import dataclass

import sympy as sp

from netdyn.errors import ModelError
from netdyn.symbols import t

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # names for the hints only (annotations are not evaluated)
    from netdyn.lagrange.model import LagrangianModel
    from collections.abc import Sequence
    import sympy


@dataclass
class Integrability:
    """Outcome of :func:`is_integrable`: ``integrable`` is True, False or None (undecided)."""

    integrable: bool | None
    exact: bool
    test: str
    detail: str
    potential: sp.Expr | None = None

    def __bool__(self):
        return bool(self.integrable)

    def __str__(self):
        verdict = {True: "integrable (holonomic)", False: "not integrable (nonholonomic)",
                   None: "undecided"}[self.integrable]
        return f"{verdict} by {self.test}: {self.detail}"


def _forms(constraints, coordinates):
    coords = list(coordinates)
    syms = [sp.Symbol(f"_q{i}") for i in range(len(coords))]
    sub_f = {c.diff(t): sp.Symbol(f"_f{i}") for i, c in enumerate(coords)}
    sub_q = dict(zip(coords, syms))
    fs = list(sub_f.values())
    rows = []
    for k, c in enumerate(constraints):
        e = sp.sympify(c).xreplace(sub_f).xreplace(sub_q)
        a = [sp.diff(e, f) for f in fs]
        if any(ai.free_symbols & set(fs) for ai in a):
            raise ModelError(f"flow constraint {k + 1} is not linear in the flows: {c}")
        a0 = sp.expand(e - sum(ai * f for ai, f in zip(a, fs)))
        if a0.free_symbols & set(fs) or e.has(sp.Derivative):
            raise ModelError(f"flow constraint {k + 1} contains flows of variables that are not in the coordinates")
        rows.append(a + [a0])
    use_t = any(r[-1] != 0 or any(t in ai.free_symbols for ai in r) for r in rows)
    variables = syms + ([t] if use_t else [])
    rows = [r if use_t else r[:-1] for r in rows]
    names = {s: c for s, c in zip(syms, coords)}
    return variables, rows, names


def _is_zero(expr, variables):
    """True, False, or None when sympy cannot decide and random points do not refute it."""
    e = sp.simplify(sp.together(sp.expand(expr)))
    if e == 0:
        return True
    rng = random.Random(1)
    for _ in range(6):
        point = {v: sp.Float(rng.uniform(0.3, 1.7)) for v in variables}
        val = complex(sp.N(e.xreplace(point)))
        if abs(val) > 1e-9:
            return False
    return None


def is_integrable(constraints: sympy.Expr | Sequence[sympy.Expr] | LagrangianModel,
                  coordinates: Sequence[sympy.Expr] | None) -> Integrability:
    """Decide whether flow constraints (expressions, a list, or a model) are integrable; see the module docstring.

    >>> import sympy as sp
    >>> from netdyn import coordinates, t
    >>> x, y, th = coordinates("x y theta")
    >>> knife = -sp.sin(th)*x.diff(t) + sp.cos(th)*y.diff(t)
    >>> bool(is_integrable(knife, [x, y, th])), bool(is_integrable(x.diff(t) - 2*y.diff(t), [x, y]))
    (False, True)
    """
    if hasattr(constraints, "flow_constraints") and not isinstance(constraints, (list, tuple, sp.Basic)):
        constraints = constraints.flow_constraints
    if isinstance(constraints, sp.Basic):
        constraints = [constraints]
    constraints = list(constraints)
    if not constraints:
        raise ModelError("no flow constraint given")
    variables, rows, names = _forms(constraints, coordinates)
    show = lambda e: sp.sympify(e).xreplace(names)  # noqa: E731
    n = len(variables)
    if len(rows) == 1:
        a = rows[0]
        exact = all(_is_zero(sp.diff(a[j], variables[i]) - sp.diff(a[i], variables[j]), variables) is True
                    for i, j in itertools.combinations(range(n), 2))
        if exact:
            return Integrability(True, True, "exactness (dω = 0)", "the one-form is exact", show(_potential(a, variables)))
        test = "Frobenius (ω ∧ dω = 0)"
        found = _refutation(_three_form(a, variables, show), variables, show, test)
        return found if found is not None else Integrability(
            True, False, test, "not exact, but ω ∧ dω = 0: an integrating factor exists")
    A = sp.Matrix(rows)
    if A.rank(simplify=True) < A.shape[0]:
        raise ModelError("the flow constraints are not independent; remove the redundant ones")
    fields = A.nullspace(simplify=True)
    test = "Frobenius (involutive distribution)"
    if len(fields) <= 1:
        return Integrability(True, False, test, "the constraints leave at most one direction free")
    found = _refutation(_brackets(A, fields, variables, show), variables, show, test)
    return found if found is not None else Integrability(
        True, False, test, "every Lie bracket of admissible directions is admissible")


def _three_form(a, variables, show):
    """Components of ω ∧ dω, each with the words that say where it is."""
    for i, j, k in itertools.combinations(range(len(variables)), 3):
        d = lambda p, r: sp.diff(a[p], variables[r])  # noqa: E731
        w = a[i] * (d(k, j) - d(j, k)) + a[j] * (d(i, k) - d(k, i)) + a[k] * (d(j, i) - d(i, j))
        vs = "∧".join(f"d{show(variables[x])}" for x in (i, j, k))
        yield w, f"ω ∧ dω has the non-zero component {show(w)} on {vs}"


def _brackets(A, fields, variables, show):
    """Constraint values of the Lie brackets of the admissible vector fields."""
    X = sp.Matrix(variables)
    for u, v in itertools.combinations(fields, 2):
        for r in A * (v.jacobian(X) * u - u.jacobian(X) * v):
            yield r, f"the Lie bracket of two admissible directions violates a constraint by {show(r)}"


def _refutation(candidates, variables, show, test):
    """The first candidate expression that is not (provably) zero, as a negative or undecided verdict."""
    for expr, why in candidates:
        z = _is_zero(expr, variables)
        if z is False:
            return Integrability(False, False, test, why)
        if z is None:
            return Integrability(None, False, test, f"could not decide whether {show(expr)} = 0")
    return None


def _potential(a, variables):
    F = sp.S.Zero
    for ai, v in zip(a, variables):
        F += sp.integrate(sp.simplify(ai - sp.diff(F, v)), v)
    return sp.simplify(F)
