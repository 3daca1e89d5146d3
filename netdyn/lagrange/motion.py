"""Driver motions as numbers: a prescribed motion sampled at given times as ``(q, q̇, q̈)`` arrays.

A motion is given in one of three forms, each turned into three arrays over the times without any
sympy work per time:

* a number or a sympy expression of :data:`netdyn.t` (and parameters, with ``params``): the
  expression and its two time derivatives are made one numpy function, once (:func:`motion_function`,
  cached by expression, so a second call with the same motions does no sympy work at all);
* a callable ``t -> (q, q̇, q̈)`` (called with each time, or with the whole array when it accepts one);
  a callable returning a single value is the older form, a function building an expression of ``t``;
* a tuple of three arrays ``(q, q̇, q̈)`` sampled at the given times (one value each), or a
  :class:`Samples` record.

>>> import numpy as np
>>> from netdyn.symbols import t
>>> q, qd, qdd = sample_motion(3 * t ** 2, np.array([0.0, 1.0]))
>>> q.tolist(), qd.tolist(), qdd.tolist()
([0.0, 3.0], [0.0, 6.0], [6.0, 6.0])
>>> sample_motion(lambda s: (np.sin(s), np.cos(s), -np.sin(s)), np.array([0.0]))[1].tolist()
[1.0]
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import sympy as sp

from netdyn.errors import ModelError
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # names for the hints only
    from collections.abc import Mapping
from netdyn.symbols import as_expr, t as T_SYMBOL


@dataclass(frozen=True)
class Samples:
    """A motion given as data: values, rates and accelerations at the times it is used with.

    >>> Samples([0.0, 1.0], [1.0, 1.0], [0.0, 0.0]).q.tolist()
    [0.0, 1.0]
    """

    q: np.ndarray
    qd: np.ndarray
    qdd: np.ndarray

    def __init__(self, q: Any, qd: Any, qdd: Any) -> None:
        for name, v in (("q", q), ("qd", qd), ("qdd", qdd)):
            object.__setattr__(self, name, np.atleast_1d(np.asarray(v, dtype=float)))


def is_data(motion):
    """Whether ``motion`` is given as numbers over time (three arrays, :class:`Samples`, or a callable
    ``t -> (q, q̇, q̈)``) rather than as an expression of ``t``.

    >>> from netdyn.symbols import t
    >>> is_data(2 * t), is_data(([0.0], [1.0], [0.0])), is_data(lambda s: (s, 1.0, 0.0))
    (False, True, True)
    """
    if isinstance(motion, Samples):
        return True
    if isinstance(motion, (tuple, list)) and len(motion) == 3 and not isinstance(motion, str):
        return True
    if callable(motion) and not isinstance(motion, sp.Basic):
        return _triple_callable(motion)
    return False


def _triple_callable(fn):
    try:
        out = fn(0.0)
    except Exception:  # noqa: BLE001 - a function building a sympy expression may refuse a float
        return False
    return isinstance(out, (tuple, list)) and len(out) == 3


@lru_cache(maxsize=256)
def _function(exprs):
    try:  # symengine differentiates and compiles in about a millisecond where sympy takes a second
        return _symengine_function(exprs)
    except Exception:  # noqa: BLE001 - a function symengine does not know (Piecewise, ...): sympy
        pass
    rows = []
    for e in exprs:
        d1 = sp.diff(e, T_SYMBOL)
        rows.append([e, d1, sp.diff(d1, T_SYMBOL)])
    return sp.lambdify(T_SYMBOL, [x for row in rows for x in row], "numpy")


def _symengine_function(exprs):
    import symengine as se

    ts = se.Symbol(T_SYMBOL.name)
    rows = []
    for e in exprs:
        e = se.sympify(e)  # symbols by name (t carries no assumptions to drop): no sympy rebuild
        d1 = e.diff(ts)
        rows += [e, d1, d1.diff(ts)]
    fn = se.Lambdify([ts], rows, backend="lambda")
    count = len(rows)

    def evaluate(times):
        times = np.asarray(times, dtype=float)
        out = np.asarray(fn(times.reshape(-1, 1)), dtype=float).reshape(times.size, count)
        return [out[:, k].reshape(times.shape) for k in range(count)]

    evaluate(np.zeros(1))  # refuse here, not at the call, what symengine cannot evaluate
    return evaluate


def motion_function(exprs):
    """One numpy function of ``t`` giving every expression of ``exprs`` and its first two derivatives
    (rows ``[e0, e0', e0'', e1, ...]``), made once per tuple of expressions.

    >>> from netdyn.symbols import t
    >>> [float(v) for v in motion_function((t ** 2,))(2.0)]
    [4.0, 4.0, 2.0]
    """
    return _function(tuple(sp.sympify(e) for e in exprs))


def _expression(motion, where, params):
    e = as_expr(motion)
    if params:
        sub = {s: params[str(s)] for s in e.free_symbols if str(s) in params}
        e = e.xreplace({s: sp.sympify(v) for s, v in sub.items()})
    extra = e.free_symbols - {T_SYMBOL}
    if extra:
        raise ModelError(f"driver {where}: the motion {e} has symbols other than t: {sorted(map(str, extra))}; "
                         "give their values in params=")
    return e


def sample_motions(motions, times, params=None):
    """``{name: (q, q̇, q̈)}`` of named motions at ``times`` (arrays of the times' shape).

    Expressions are lambdified together, once (cached); ``params`` (name -> number) substitutes
    parameters in expressions.

    >>> import numpy as np
    >>> from netdyn.symbols import t
    >>> out = sample_motions({"A": t, "B": ([1.0, 2.0], [0.0, 0.0], [0.0, 0.0])}, np.array([0.0, 1.0]))
    >>> out["A"][0].tolist(), out["B"][0].tolist()
    ([0.0, 1.0], [1.0, 2.0])
    """
    times = np.atleast_1d(np.asarray(times, dtype=float))
    params = {str(k): v for k, v in (params or {}).items() if not callable(v)}
    out, symbolic = {}, {}
    for name, motion in dict(motions).items():
        if is_data(motion):
            out[name] = _data(motion, times, name)
        else:
            symbolic[name] = _expression(motion, name, params)
    if symbolic:
        fn = motion_function(tuple(symbolic.values()))
        values = fn(times)
        for k, name in enumerate(symbolic):
            out[name] = tuple(np.broadcast_to(np.asarray(values[3 * k + i], dtype=float), times.shape).copy()
                              for i in range(3))
    return {name: out[name] for name in dict(motions)}


def sample_motion(motion: Any, times: Any, where: str = "motion", params: Mapping[Any, Any] | None = None
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(q, q̇, q̈)`` of one motion at ``times``: see the module docstring for the forms.

    >>> import numpy as np
    >>> [v.tolist() for v in sample_motion(([0.0, 1.0], [1.0, 1.0], [0.0, 0.0]), np.array([0.0, 1.0]))]
    [[0.0, 1.0], [1.0, 1.0], [0.0, 0.0]]
    """
    return sample_motions({where: motion}, times, params)[where]


def _data(motion, times, where):
    if callable(motion) and not isinstance(motion, (tuple, list, Samples)):
        try:
            arrays = [np.asarray(v, dtype=float) for v in motion(times)]
            if any(a.shape not in ((), times.shape) for a in arrays):
                raise ValueError
            arrays = [np.broadcast_to(a, times.shape).copy() for a in arrays]
        except (TypeError, ValueError):  # a scalar function: one call a time
            rows = [motion(float(s)) for s in times]
            arrays = [np.array([float(r[i]) for r in rows]).reshape(times.shape) for i in range(3)]
    else:
        q, qd, qdd = (motion.q, motion.qd, motion.qdd) if isinstance(motion, Samples) else motion
        arrays = []
        for label, v in (("q", q), ("qd", qd), ("qdd", qdd)):
            a = np.array(v, dtype=float)  # a copy: later changes to the caller's arrays do not reach it
            if a.ndim == 0:
                a = np.full(times.shape, float(a))
            if a.shape != times.shape:
                raise ModelError(f"driver {where}: {label} has {a.size} samples but there are {times.size} times; "
                                 "give one value per time (arrays q, q̇, q̈ over the times of the call)")
            arrays.append(a)
    if not all(np.isfinite(a).all() for a in arrays):
        raise ModelError(f"driver {where}: the motion has values that are not finite (NaN or inf)")
    return tuple(arrays)
