"""Parameter sweeps: one model compiled once, simulated for every parameter set, serially or in parallel.

``sweep(model, grid, t_span, ...)`` runs ``simulate`` for each parameter set of
``grid`` (a list of dicts, or a dict of lists for their Cartesian product). With
``executor=None`` it runs here, reusing the model's compiled functions; with any
``concurrent.futures.Executor`` (a ``ProcessPoolExecutor``, a Dask client's
``client.get_executor()``) the grid is cut into one chunk per worker, each chunk
compiles the model once in its process and returns plain arrays, and the
results come back as :class:`~netdyn.solution.Solution` objects in grid order.

>>> import sympy as sp
>>> from netdyn import LagrangianModel, coordinates, t
>>> x, = coordinates("x,")
>>> k = sp.Symbol("k", positive=True)
>>> model = LagrangianModel([x], T=x.diff(t)**2/2, V=k*x**2/2, parameters={k: 1.0})
>>> sols = sweep(model, {"k": [1.0, 4.0]}, (0, 1), q0={"x": 1})
>>> [round(float(s["x"][-1]), 6) for s in sols]     # cos(sqrt(k) t) at t = 1
[0.540302, -0.416147]
"""
from __future__ import annotations

import copy
import itertools
import os
import pickle
import uuid

from netdyn.errors import ParameterError
from netdyn.numerics.functions.compiled import compile_model
from netdyn.numerics.simulate import simulate
from netdyn.numerics.results.solution import Solution

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # names for the hints only (annotations are not evaluated)
    from netdyn.lagrange.model import LagrangianModel
    from netdyn.graph.network import Network
    from netdyn.hints import ArrayLike, Initial, Params, TimeSpan
    from collections.abc import Sequence
    from concurrent.futures import Executor
    from typing import Any

__all__ = ["sweep", "parameter_grid"]


def parameter_grid(grid):
    """A list of parameter dicts from a list of dicts or a dict of value lists (Cartesian product).

    >>> parameter_grid({"a": [1, 2], "b": [0]})
    [{'a': 1, 'b': 0}, {'a': 2, 'b': 0}]
    """
    if isinstance(grid, dict):
        keys = list(grid)
        for k in keys:
            if isinstance(grid[k], (str, bytes)) or not hasattr(grid[k], "__iter__"):
                raise ParameterError(f"sweep grid entry {k!r} must be a list of values, got {grid[k]!r}")
        return [dict(zip(keys, combo)) for combo in itertools.product(*(list(grid[k]) for k in keys))]
    out = [dict(p) for p in grid]
    if not out:
        raise ParameterError("the sweep grid is empty; give at least one parameter set")
    return out


def sweep(model: Network | LagrangianModel, params_grid: Sequence[Params], t_span: TimeSpan,
          q0: Initial | None = None, f0: Initial | None = None, t_eval: ArrayLike | None = None,
          executor: Executor | Any | None = None, chunks: int | None = None, **options: Any) -> list[Solution]:
    """Simulate ``model`` for every parameter set of ``params_grid``; returns the solutions in grid order.

    ``model`` is a ``LagrangianModel`` or a ``Network`` (assembled with
    ``symbolic=True``, so element values are parameters named after the
    elements). ``options`` go to :func:`netdyn.simulate` (``rtol``, ``method``,
    ...). ``chunks`` sets how many tasks the executor gets (default: its
    worker count, or 2·CPU count).

    >>> import sympy as sp, netdyn
    >>> x, = netdyn.coordinates("x,")
    >>> k = sp.Symbol("k", positive=True)
    >>> model = netdyn.LagrangianModel([x], T=x.diff(netdyn.t)**2/2, V=k*x**2/2, parameters={k: 1.0})
    >>> sols = netdyn.sweep(model, [{"k": 1.0}, {"k": 4.0}], (0, 1), q0={"x": 1})
    >>> [round(float(s["x"][-1]), 4) for s in sols]     # cos(sqrt(k) t) at t = 1
    [0.5403, -0.4161]
    """

    if not hasattr(model, "derive"):
        model = model.model(symbolic=True, formulation=options.pop("formulation", None))
    grid = parameter_grid(params_grid)
    cm = compile_model(model)
    vectors = [cm.parameter_vector(p) for p in grid]  # bad names fail here, before any work is sent
    if executor is None:
        return [simulate(model, t_span, q0, f0, params=p, t_eval=t_eval, **options) for p in grid]
    payload = _payload(model)
    token = uuid.uuid4().hex
    n = chunks or _workers(executor)
    parts = [list(range(len(grid)))[i::n] for i in range(n)]
    futures = [executor.submit(_run_chunk, token, payload, [grid[i] for i in part], t_span, q0, f0, t_eval, options)
               for part in parts if part]
    results: list[Any] = [None] * len(grid)
    for part, fut in zip([p for p in parts if p], futures):
        for i, (res, method) in zip(part, fut.result()):
            results[i] = Solution(cm.model, cm, vectors[i], res, method=method)  # (the model compiled)
    return results


def _workers(executor):
    for attr in ("_max_workers",):
        if getattr(executor, attr, None):
            return int(getattr(executor, attr))
    client = getattr(executor, "_client", None)
    if client is not None:
        try:
            return max(1, sum(client.nthreads().values()))
        except Exception:  # pragma: no cover - a client without workers yet
            pass
    return 2 * (os.cpu_count() or 1)


def _payload(model):
    """The model as bytes for another process, without its (unpicklable) compiled functions."""
    clean = copy.copy(model)
    clean._compiled = {}
    try:
        return pickle.dumps(clean)
    except Exception:
        try:
            import cloudpickle  # optional (dask's): only a distributed sweep needs it
        except ImportError:  # pragma: no cover - cloudpickle comes with dask
            raise ParameterError("the model cannot be sent to other processes (it holds a lambda); "
                                 "install cloudpickle or run the sweep serially") from None
        return cloudpickle.dumps(clean)


_MODELS = {}  # token -> model, per worker process: compiled once, reused by every chunk of the sweep


def _run_chunk(token, payload, grid, t_span, q0, f0, t_eval, options):
    model = _MODELS.get(token)
    if model is None:
        model = _MODELS[token] = pickle.loads(payload)
    out = []
    for p in grid:
        sol = simulate(model, t_span, q0, f0, params=p, t_eval=t_eval, **options)
        out.append((sol.trajectory, sol.method))
    return out
