"""The energy model: coordinates, T*, V, D, applied efforts and constraints.

A :class:`LagrangianModel` is a constant description of a system, exactly as
the book writes one (eqs. 4.5 and 4.6). Build it by hand or get it from
``Network.model()``.

>>> import sympy as sp
>>> from netdyn import LagrangianModel, coordinates, t
>>> x, y = coordinates("x y")
>>> mA, mB, k, l, g = sp.symbols("m_A m_B k l g", positive=True)
>>> model = LagrangianModel([x, y], T=(mA*y.diff(t)**2 + mB*x.diff(t)**2)/2, V=k*x**2/2,
...                         efforts={y: -mA*g}, constraints=[x**2 + y**2 - l**2])
>>> lam, = model.multipliers
>>> sp.simplify(model.equations()[0] - (mB*x.diff(t, 2) + k*x + 2*lam*x))
0
"""
from __future__ import annotations

import warnings

import sympy as sp
from sympy.physics.mechanics import dynamicsymbols

from netdyn.errors import ModelError
from netdyn.symbols import as_expr, t
from netdyn.lagrange import slots
from netdyn.lagrange.equations import derive

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # names for the hints only (annotations are not evaluated)
    from collections.abc import Iterable, Mapping, Sequence
    from typing import Any
    from netdyn.lagrange.equations import Equations


class LagrangianModel:
    """Coordinates q(t), kinetic coenergy T*, potential V, dissipation D,
    applied efforts e^s, displacement constraints φ(q, t) = 0 and flow
    constraints ψ(q, f, t) = Σ a_ki f_i + a_k = 0.

    ``T``, ``V`` and ``D`` may be expressions or lists of terms (one per
    element: derivation then works term by term, which keeps it linear in the
    size of the system). ``efforts`` maps coordinates to expressions.
    ``parameters`` maps symbols to default values used at simulation.
    ``metadata`` carries what the assembler knows (elements, ports, nodes).

    >>> import sympy as sp
    >>> from netdyn import coordinates
    >>> x, = coordinates("x,")
    >>> m, k, c = sp.symbols("m k c", positive=True)
    >>> model = LagrangianModel([x], T=m*x.diff(t)**2/2, V=k*x**2/2, D=c*x.diff(t)**2/2,
    ...                         parameters={"m": 1.0, "k": 4.0, "c": 0.1})
    >>> model.equations()
    [c*Derivative(x(t), t) + k*x(t) + m*Derivative(x(t), (t, 2))]
    """

    def __init__(self, coordinates: Iterable[sp.Expr], T: Any = 0, V: Any = 0, D: Any = 0,
                 efforts: Mapping[Any, Any] | None = None, constraints: Iterable[Any] = (),
                 flow_constraints: Iterable[Any] = (), parameters: Mapping[Any, Any] | None = None,
                 name: str | None = None, metadata: Mapping[str, Any] | None = None,
                 constraint_labels: Sequence[str] | None = None,
                 flow_constraint_labels: Sequence[str] | None = None) -> None:
        self.coordinates = list(coordinates)
        if not self.coordinates:
            raise ModelError("a model needs at least one coordinate")
        for c in self.coordinates:
            if not (isinstance(c, sp.Function) or (isinstance(c, sp.core.function.AppliedUndef))) or c.args != (t,):
                raise ModelError(f"coordinate {c!r} must be a function of netdyn.t (use netdyn.coordinates)")
        if len(set(self.coordinates)) != len(self.coordinates):
            raise ModelError("a coordinate is listed twice")
        self.name = name or "model"
        self.T_terms = _terms(T)
        self.V_terms = _terms(V)
        self.D_terms = _terms(D)
        self.efforts = {}
        for c, e in (efforts or {}).items():
            c = self._coordinate(c)
            self.efforts[c] = self.efforts.get(c, 0) + as_expr(e)
        self.constraints = [as_expr(c) for c in constraints]
        self.flow_constraints = [as_expr(c) for c in flow_constraints]
        self.constraint_labels = list(constraint_labels or [f"phi_{j + 1}" for j in range(len(self.constraints))])
        self.flow_constraint_labels = list(
            flow_constraint_labels or [f"psi_{j + 1}" for j in range(len(self.flow_constraints))])
        self.lambdas = list(dynamicsymbols(" ".join(f"lambda_{j + 1}" for j in range(len(self.constraints))), seq=True)) \
            if self.constraints else []
        self.mus = list(dynamicsymbols(" ".join(f"mu_{j + 1}" for j in range(len(self.flow_constraints))), seq=True)) \
            if self.flow_constraints else []
        self.metadata = dict(metadata or {})
        self.parameters = {}
        for k, v in (parameters or {}).items():
            sym = k if isinstance(k, sp.Symbol) else sp.Symbol(str(k))
            self.parameters[self._parameter_symbol(sym)] = v
        self._derived: Equations | None = None
        self._compiled = {}

    # ----------------------------------------------------------------- accessors
    @property
    def T(self) -> sp.Expr:
        """Kinetic coenergy T*(q, f, t)."""
        return sp.Add(*self.T_terms)

    @property
    def V(self) -> sp.Expr:
        """Potential energy V(q, t)."""
        return sp.Add(*self.V_terms)

    @property
    def D(self) -> sp.Expr:
        """Dissipation function D(q, f, t)."""
        return sp.Add(*self.D_terms)

    @property
    def multipliers(self) -> list[sp.Expr]:
        """Lagrange multipliers: λ for displacement constraints, then μ for flow constraints."""
        return self.lambdas + self.mus

    @property
    def flows(self) -> list[sp.Expr]:
        """The flows f = dq/dt."""
        return [c.diff(t) for c in self.coordinates]

    def coordinate(self, name: str | sp.Expr) -> sp.Expr:
        """The coordinate called ``name`` (or the coordinate itself).

        >>> from netdyn import coordinates
        >>> x, = coordinates("x,")
        >>> LagrangianModel([x], T=x.diff(t)**2/2).coordinate("x")
        x(t)
        """
        return self._coordinate(name)

    def _coordinate(self, c):
        if isinstance(c, str):
            for q in self.coordinates:
                if q.func.__name__ == c:
                    return q
            raise ModelError(f"unknown coordinate {c!r}; the model's coordinates are "
                             f"{[q.func.__name__ for q in self.coordinates]}")
        if c not in self.coordinates:
            raise ModelError(f"{c} is not a coordinate of this model; add it to the coordinate list")
        return c

    def _parameter_symbol(self, sym):
        return sym

    @property
    def coordinate_names(self) -> list[str]:
        return [q.func.__name__ for q in self.coordinates]

    @property
    def free_parameters(self) -> list[sp.Symbol]:
        """Symbols other than t, the coordinates and the multipliers that the model's expressions contain."""
        return self.derive().parameters

    # ----------------------------------------------------------------- derivation
    def derive(self) -> Equations:
        """The structured equations (:class:`netdyn.equations.Equations`), computed once."""
        if self._derived is None:
            self._derived = derive(self)
        return self._derived

    def equations(self, form: str | None = None) -> list[sp.Expr]:
        """The DAE as a list of sympy expressions, each ``== 0``.

        First the N Lagrange equations of eq. (4.5)/(4.6)
        ``d/dt ∂T*/∂f_i − ∂T*/∂q_i + ∂D/∂f_i + ∂V/∂q_i + Σ λ_j ∂φ_j/∂q_i + Σ μ_k a_ki − e^s_i``,
        then the displacement constraints φ_j and the flow constraints ψ_k.

        ``form``: ``"expanded"`` writes every equation out in the coordinates (``M(q) q̈ + h``);
        ``"recursive"`` gives the :class:`~netdyn.lagrange.newton_euler.RecursiveEquations` of a mechanism in
        relative coordinates (a customized symbolic Newton–Euler: named intermediates body by body, size
        O(n)); ``None`` (default) is ``"recursive"`` where the model has that form, else ``"expanded"``.
        """
        if form not in (None, "expanded", "recursive"):
            raise ModelError(f"unknown equation form {form!r}; use 'recursive', 'expanded' or None (recursive "
                             "where the model has it)")
        if form == "expanded" or (form is None and not self.has_recursive_form):
            return self.derive().as_time_functions()
        return self.recursive_form().equations()

    @property
    def has_recursive_form(self) -> bool:
        """Whether the model has a recursive form (a mechanism in relative coordinates)."""
        return self.metadata.get("recursive_form") is not None

    def recursive_form(self) -> Any:
        """The :class:`~netdyn.lagrange.newton_euler.RecursiveForm` of a mechanism in relative coordinates
        (``Network.model(formulation="relative")``), made once; a :class:`~netdyn.errors.ModelError` for other
        models.

        >>> from netdyn.linkages import four_bar
        >>> form = four_bar().model(formulation="relative").recursive_form()
        >>> [link.body for link in form.links], len(form.rest.constraints)
        (['crank', 'rocker', 'rod'], 2)
        """
        build = self.metadata.get("recursive_form")
        if build is None:
            raise ModelError(f"model {self.name!r} has no recursive form: it exists for mechanisms in relative "
                             "coordinates (net.model(formulation='relative')); use equations(form='expanded')")
        cached = self._compiled.get("recursive_form")
        if cached is None:
            cached = self._compiled["recursive_form"] = build(self)
        return cached

    def export(self, format: str = "latex", **options: Any) -> Any:
        """Deprecated: use ``netdyn.export_equations(model, format, **options)``.

        0.1's API, removed in 0.2 and back as an alias so that code written for 0.1 runs; goes in 0.4. The energy model does not import the
        exporters (a higher layer): the call goes through the exporter the package root installs in
        :mod:`netdyn.lagrange.slots`.
        """
        warnings.warn("LagrangianModel.export(format) was removed in 0.2 (deprecated alias, goes in 0.4): use "
                      "netdyn.export_equations(model, format, ...)", DeprecationWarning, stacklevel=2)
        return slots.exporter()(self, format, **options)

    def __repr__(self):
        return (f"LagrangianModel({self.name!r}: {len(self.coordinates)} coordinates, "
                f"{len(self.constraints)} displacement and {len(self.flow_constraints)} flow constraints)")


def _terms(expr):
    if isinstance(expr, (list, tuple)):
        out = []
        for e in expr:
            out.extend(sp.Add.make_args(as_expr(e)))
        return [e for e in out if e != 0]
    e = as_expr(expr)
    return [a for a in sp.Add.make_args(sp.expand(e) if len(sp.Add.make_args(e)) == 1 and e.is_Mul else e) if a != 0]
