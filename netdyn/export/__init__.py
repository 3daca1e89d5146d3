"""Export of derived equations: ``netdyn.export_equations(model, format, **options)``
(here also :func:`export`, the same function under its 0.2 name).

Formats (each a module of this package):

* ``"latex"`` — :func:`netdyn.export.latex.to_latex` (``standalone=``, ``efforts=``);
* ``"python"`` — :func:`netdyn.export.python.to_python`, a module needing only numpy;
* ``"c"`` — :func:`netdyn.export.c.to_c`, a :class:`~netdyn.export.c.CCode` header and source;
* ``"json"`` — :func:`netdyn.export.json.to_json`, read back by :func:`netdyn.export.json.from_json`;
* ``"sympy"`` (alias ``"matrices"``) — :func:`netdyn.export.matrices.mass_matrix_form`.

``model`` may be a :class:`~netdyn.model.LagrangianModel`, a ``Network`` or a ``BondGraph``
(``formulation=`` then chooses its coordinates). A bond graph's ``formulation="state"`` exports its explicit
state equations in ``latex``, ``python`` and ``c`` (:mod:`netdyn.export.state`).

FMI 2.0 FMUs of a model (compiled at export): ``netdyn.save_fmu`` in :mod:`netdyn.export.fmu`.

>>> import sympy as sp
>>> from netdyn import LagrangianModel, coordinates, t
>>> x, = coordinates("x,")
>>> model = LagrangianModel([x], T=x.diff(t)**2/2, V=x**2/2)
>>> print(export(model, "latex"))
\\begin{align}
x + \\ddot{x} &= 0
\\end{align}
>>> export(model, "pdf")
Traceback (most recent call last):
...
netdyn.errors.ExportError: unknown export format 'pdf'; use one of ['c', 'json', 'latex', 'matrices', 'python', 'sympy']
"""
from __future__ import annotations

import inspect

import sympy as sp

from netdyn.errors import ExportError

from netdyn.graph.network import as_model

from . import c, json, latex, matrices, python, state

from typing import TYPE_CHECKING, Any, Literal, Union, overload

if TYPE_CHECKING:  # names for the hints only (annotations are not evaluated)
    from typing import TypeAlias

    from netdyn.bondgraph.graph import BondGraph
    from netdyn.export.c import CCode
    from netdyn.export.matrices import MatrixForm
    from netdyn.graph.network import Network
    from netdyn.hints import Formulation
    from netdyn.lagrange.model import LagrangianModel

    System: TypeAlias = Union[LagrangianModel, Network, BondGraph]

FORMATS = {"latex": latex.to_latex, "python": python.to_python, "c": c.to_c, "json": json.to_json,
           "sympy": matrices.mass_matrix_form, "matrices": matrices.mass_matrix_form}


@overload
def export(model: System, format: Literal["latex", "python", "json"] = ..., formulation: Formulation = ...,
           **options: Any) -> str: ...
@overload
def export(model: System, format: Literal["c"], formulation: Formulation = ..., **options: Any) -> CCode: ...
@overload
def export(model: System, format: Literal["sympy", "matrices"], formulation: Formulation = ...,
           **options: Any) -> MatrixForm: ...
@overload
def export(model: System, format: str, formulation: Formulation = ..., **options: Any) -> Any: ...


def export(model: System, format: str = "latex", formulation: Formulation = None, **options: Any) -> Any:
    """Export a model's (or a network's) derived equations in ``format``; see the module docstring.

    ``netdyn.export_equations`` is the short name of the same call.

    >>> from netdyn.components.electrical import Resistor, Capacitor
    >>> from netdyn import Network
    >>> net = Network("rc")
    >>> _ = net.add(Resistor("R1", "a", "0", 2.0), Capacitor("C1", "a", "0", 0.5))
    >>> export(net, "json", formulation="branch").startswith("{")
    True
    """
    fn = FORMATS.get(str(format).lower())
    if fn is None:
        raise ExportError(f"unknown export format {format!r}; use one of {sorted(FORMATS)}")
    built = as_model(model, formulation)
    se = built.metadata.get("state_equations")
    if se is not None and str(format).lower() in state.FORMATS:   # explicit state equations (a bond graph's)
        fn = state.FORMATS[str(format).lower()]
        options = {"name": built.name, **options} if "name" in inspect.signature(fn).parameters else options
        built = se
    accepted = list(inspect.signature(fn).parameters)[1:]  # type: ignore[arg-type]
    unknown = sorted(set(options) - set(accepted))
    if unknown:
        raise ExportError(f"format {format!r} does not take option(s) {unknown}; it takes {accepted or 'none'}")
    if se is None and str(format).lower() in ("c", "python"):  # the recursive form reads no body term
        recursive = built.has_recursive_form and options.get("form") != "expanded"
        _refuse_numeric_laws(built.recursive_form().rest if recursive else built, format)
    return fn(built, **options)  # type: ignore[operator]


def _refuse_numeric_laws(model, format):
    """A law computed numerically (a bond graph's inverse with no closed form) has no code in these exports."""
    exprs = list(model.T_terms) + list(model.V_terms) + list(model.D_terms) + list(model.efforts.values()) \
        + list(model.constraints) + list(model.flow_constraints)
    for e in exprs:
        for f in sp.sympify(e).atoms(sp.Function):
            if hasattr(type(f), "_imp_") and hasattr(type(f), "label"):
                raise ExportError(f"{f.label}: a law computed numerically (no closed form) has no {format} code in "
                                  "the model's export; export the state equations (formulation='state', which write "
                                  "its Newton iteration) or give the law in a form with a closed-form inverse")


@overload
def export_equations(model: System, format: Literal["latex", "python", "json"] = ...,
                     formulation: Formulation = ..., **options: Any) -> str: ...
@overload
def export_equations(model: System, format: Literal["c"], formulation: Formulation = ...,
                     **options: Any) -> CCode: ...
@overload
def export_equations(model: System, format: Literal["sympy", "matrices"], formulation: Formulation = ...,
                     **options: Any) -> MatrixForm: ...
@overload
def export_equations(model: System, format: str, formulation: Formulation = ..., **options: Any) -> Any: ...


def export_equations(model: System, format: str = "latex", formulation: Formulation = None, **options: Any) -> Any:
    """The derived equations of a model, a ``Network`` or a ``BondGraph`` in ``format``: ``"latex"``,
    ``"python"``, ``"c"``, ``"json"`` or ``"sympy"`` (see :mod:`netdyn.export` for each format's options).

    The entry point of exports, ``netdyn.export_equations(model, "c")``; ``formulation=`` chooses a
    network's coordinates.

    >>> import netdyn
    >>> x, = netdyn.coordinates("x,")
    >>> model = netdyn.LagrangianModel([x], T=x.diff(netdyn.t)**2/2, V=2*x**2)
    >>> print(netdyn.export_equations(model, "latex"))
    \\begin{align}
    4 x + \\ddot{x} &= 0
    \\end{align}
    >>> netdyn.export_equations(model, "c", name="osc").header.count("osc_rhs")
    1
    """
    return export(model, format, formulation, **options)


__all__ = ["export", "export_equations", "FORMATS"]
