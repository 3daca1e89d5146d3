"""Which keyword options each integration path of ``simulate`` honours, and what is said of the others.

``simulate`` takes one set of keywords for five paths (``"projection"``, ``"ida"``, ``"linear"``,
``"circuit"``, ``"recursive"``), and not every path can act on every keyword: IDA has no Runge–Kutta
``solver``, the recursive path integrates in joint coordinates whatever ``formulation`` says, a linear
network has no position solve for ``guess`` to start. An option that the path cannot honour is never
dropped in silence:

- with the method named by the caller it is an :class:`~netdyn.errors.OptionError` naming the option,
  what the path does instead and the call that honours it;
- under ``method="auto"`` (netdyn chose the path) it is an :class:`~netdyn.errors.OptionWarning`: the
  answer is within the tolerance asked for, the option had no effect;
- ``guess`` where there is no position solve is a warning either way (nothing it could change);
- ``formulation`` given with a model that is already formulated is an error either way.

Options left at their defaults (``None``) are never reported: ``solver`` and ``watch_singularities``
default to ``None``, meaning DOP853 and a watch on the projection path.

>>> import warnings
>>> from netdyn.errors import OptionError
>>> try:
...     check_path("ida", "ida", solver="RK45")
... except OptionError as exc:
...     print(exc)
solver='RK45' was given, but method='ida' integrates with IDA (BDF); solver= picks the Runge–Kutta method of method='projection' only: drop it or pass method='projection'
>>> with warnings.catch_warnings(record=True) as w:
...     warnings.simplefilter("always")
...     check_path("linear", "auto", solver="RK45")
>>> w[0].category.__name__
'OptionWarning'
>>> check_path("linear", "linear", solver="Radau")     # the linear path is Radau IIA: honoured
"""
from __future__ import annotations

import math
import warnings

import sympy as sp

from netdyn.errors import InvalidValueError, OptionError, OptionWarning, ParameterError

#: what each path integrates with (the messages' "instead")
INTEGRATES_WITH = {"projection": "a Runge–Kutta method with projection onto the constraints",
                   "ida": "IDA (BDF)", "linear": "Radau IIA on the linear DAE",
                   "circuit": "BDF with Newton on the circuit equations", "recursive": "DOP853 in joint coordinates"}

#: option -> {path: the values it honours}; a path not listed honours every value, an empty tuple none
HONOURED = {
    "solver": {"ida": (), "circuit": (), "linear": ("Radau",), "recursive": ("DOP853",)},
    # a linear network (linear, circuit) has a constant constraint Jacobian: nothing to watch, True is honoured
    "watch_singularities": {"ida": (False,), "recursive": (False,)},
    "compiled_loop": {path: (False, "auto") for path in ("ida", "linear", "circuit", "recursive")},
}

_WHY = {
    "solver": "{path} integrates with {with_}; solver= picks the Runge–Kutta method of method='projection' "
              "only: drop it or pass method='projection'",
    "watch_singularities": "{path} does not watch the constraint Jacobian for singular configurations (a change "
                           "point may be stepped over); only method='projection' watches: pass it, or drop the "
                           "option",
    "compiled_loop": "{path} integrates with {with_}; compiled_loop= compiles the stepping loop of "
                     "method='projection' only: drop it or pass method='projection'",
}


def check_path(path, requested, solver=None, watch_singularities=None, compiled_loop=None, guess=None):
    """Report the options that ``path`` cannot honour: an :class:`~netdyn.errors.OptionError` when the
    caller named the method (``requested == path``), an :class:`~netdyn.errors.OptionWarning` when
    ``method="auto"`` chose it. ``None`` means "not given" for every option.
    """
    given = {"solver": solver, "watch_singularities": watch_singularities, "compiled_loop": compiled_loop}
    where = f"method={path!r}" if requested == path else f"method='auto' chose {path!r}, which"
    for option, value in given.items():
        allowed = HONOURED[option].get(path)
        if value is None or allowed is None or value in allowed:
            continue
        message = f"{option}={value!r} was given, but " + _WHY[option].format(path=where,
                                                                             with_=INTEGRATES_WITH[path])
        if requested == path:
            raise OptionError(message)
        warnings.warn(message, OptionWarning, stacklevel=3)
    if guess and path in ("linear", "circuit"):
        warnings.warn(f"guess= starts the position solve of a linkage; the {path} path has none (a network's "
                      "state is set by q0/f0 and the operating point), so guess had no effect", OptionWarning,
                      stacklevel=3)


def check_formulation(system, formulation, path=None):
    """An :class:`~netdyn.errors.OptionError` when ``formulation`` cannot take effect: ``system`` is a model
    (its coordinates were fixed when it was built), or ``path`` is ``"recursive"`` (joint coordinates).

    >>> import sympy as sp
    >>> from netdyn import LagrangianModel, coordinates, t
    >>> x, = coordinates("x,")
    >>> check_formulation(LagrangianModel([x], T=x.diff(t)**2/2), "node")
    Traceback (most recent call last):
    ...
    netdyn.errors.OptionError: formulation='node' applies to a Network; this LagrangianModel keeps the coordinates it was built with: drop formulation=, or pass the Network (or build the model with net.model(formulation='node'))
    """
    if formulation is None:
        return
    if hasattr(system, "derive"):
        raise OptionError(f"formulation={formulation!r} applies to a Network; this {type(system).__name__} keeps "
                          "the coordinates it was built with: drop formulation=, or pass the Network (or build the "
                          f"model with net.model(formulation={formulation!r}))")
    if path == "recursive":
        forms = set(formulation.values()) if isinstance(formulation, dict) else {formulation}
        if forms - {"relative"}:
            raise OptionError(f"formulation={formulation!r} was given, but method='recursive' integrates in joint "
                              "(relative) coordinates whatever the formulation: drop formulation=, or pass "
                              "method='projection' to integrate in it")


def check_compiled_loop(compiled_loop, integrator, progress):
    """An :class:`~netdyn.errors.OptionWarning` when ``compiled_loop=True`` was asked for and the projection
    integrator runs its Python loop instead (another solver, time-dependent inputs, a large KKT system): the trajectory is the same, only slower."""
    if compiled_loop is not True:
        return
    ok = getattr(integrator, "compiled_ok", None)
    if ok is not None and ok(progress):
        return
    reason = (f"solver={integrator.solver_cls.__name__!r} is not DOP853" if integrator.solver_cls.__name__ != "DOP853"
              else "the model has time-dependent inputs or a KKT system too large for it")
    warnings.warn(f"compiled_loop=True was given, but the compiled loop does not apply ({reason}); the Python "
                  "loop ran instead (the same trajectory, slower)", OptionWarning, stacklevel=3)


def check_arguments(rtol, max_step, progress):
    """An :class:`~netdyn.errors.InvalidValueError` for a tolerance or step bound no integrator can use (a NaN
    ``rtol`` looped forever, a negative one passed unnoticed on the linear path) or a ``progress`` that
    cannot be called.

    >>> check_arguments(1e-8, float("inf"), None)
    >>> check_arguments(float("nan"), 1.0, None)
    Traceback (most recent call last):
    ...
    netdyn.errors.InvalidValueError: rtol must be a finite number > 0 (a relative tolerance such as 1e-8), got nan
    """
    for name, value, what in (("rtol", rtol, "a relative tolerance such as 1e-8"),
                              ("max_step", max_step, "a step bound in seconds, or inf for none")):
        try:
            ok = float(value) > 0 and (name == "max_step" or math.isfinite(float(value)))
        except (TypeError, ValueError):
            ok = False
        if not ok:
            raise InvalidValueError(f"{name} must be a{' finite' if name == 'rtol' else ''} number > 0 ({what}), "
                                    f"got {value!r}")
    if progress is not None and not callable(progress):
        raise InvalidValueError(f"progress must be a function of the time reached (or None), got {progress!r}")


def check_recursive_params(net, params):
    """A :class:`~netdyn.errors.ParameterError` for a ``params`` name that no value of the network's bodies
    and elements uses: the recursive path substitutes only the symbols it meets, and the symbolic path
    refuses unknown names the same way.

    >>> import sympy as sp
    >>> from types import SimpleNamespace as Item
    >>> net = Item(bodies={"b": Item(values={"m": sp.Symbol("m_b"), "I": 1.0})}, elements={})
    >>> check_recursive_params(net, {"m_b": 2.0})
    >>> check_recursive_params(net, {"mb": 2.0})
    Traceback (most recent call last):
    ...
    netdyn.errors.ParameterError: unknown parameter 'mb'; the network's parameters are ['m_b']
    """
    if not params:
        return
    known = set()
    todo = [v for item in [*getattr(net, "bodies", {}).values(), *getattr(net, "elements", {}).values()]
            for v in getattr(item, "values", {}).values()]
    while todo:  # numbers, expressions, and lists or matrices of them (a spatial body's inertia)
        value = todo.pop()
        if isinstance(value, (list, tuple)):
            todo.extend(value)
            continue
        try:
            e = sp.sympify(value)
        except (sp.SympifyError, TypeError, ValueError):
            continue
        if isinstance(e, (list, tuple)):
            todo.extend(e)
        elif hasattr(e, "free_symbols") and hasattr(e, "atoms"):
            known |= {str(s) for s in e.free_symbols}
            known |= {str(f.func) for f in e.atoms(sp.core.function.AppliedUndef)}
    unknown = sorted(str(k) for k in params if str(k) not in known)
    if unknown:
        raise ParameterError(f"unknown parameter {unknown[0]!r}; the network's parameters are "
                             f"{sorted(known) or 'none'}")
