"""A solution in pieces: the segments of a run that events cut (a switch flipped, a value changed, a state
re-initialised), read as one solution.

Each piece is a solution of its own segment (its own model when a switch changed the network) and the
output columns it contributes; every read that returns values over time (``sol.t``, ``sol.q``,
``sol["x"]``, ``sol.voltage("C1")``, ``sol.series("v(out)")``, ``sol.energy()``, ...) is the pieces' reads
joined along time. At an event with an action the time of the event appears twice: the state before the
action, then the state after.

>>> import numpy as np
>>> from types import SimpleNamespace
>>> a = SimpleNamespace(t=np.array([0.0, 1.0]), series=lambda n: np.array([1.0, 2.0]), method="linear")
>>> b = SimpleNamespace(t=np.array([1.0, 2.0]), series=lambda n: np.array([0.0, 5.0]), method="linear")
>>> sol = PiecewiseSolution([(a, slice(None)), (b, slice(None))], [])
>>> sol.t.tolist(), sol.series("v(x)").tolist(), sol.method
([0.0, 1.0, 1.0, 2.0], [1.0, 2.0, 0.0, 5.0], 'linear')
"""
from __future__ import annotations

import numpy as np

__all__ = ["PiecewiseSolution", "state_of"]


def _join(values):
    if all(v is None for v in values):
        return None
    if all(isinstance(v, np.ndarray) for v in values):
        return np.concatenate(values, axis=-1)
    if all(isinstance(v, dict) for v in values):
        return {k: _join([v[k] for v in values]) for k in values[0]}
    if all(isinstance(v, tuple) for v in values):
        return tuple(_join(list(c)) for c in zip(*values))
    return values[-1]


class PiecewiseSolution:
    """Pieces ``(solution, columns)`` joined along time; ``events`` the :class:`EventRecord` list.

    Attributes the pieces share and that do not vary in time (``method``, ``coordinate_names``, ``model``)
    are the first piece's; ``pieces`` gives the segments' own solutions; ``energy_lost`` the energy the
    events' jumps dissipated (joules).
    """

    def __init__(self, pieces, events, method=None):
        self.pieces = [p[0] for p in pieces]
        self._columns = [p[1] for p in pieces]
        # the column where the next piece starts (the rest of a piece's run is not part of the solution)
        self._ends = [p[2] if len(p) > 2 else -1 for p in pieces]
        self.events = list(events)
        self.method = method if method is not None else getattr(self.pieces[0], "method", None)

    @property
    def energy_lost(self):
        """The energy the events' jumps dissipated (joules): the sum of ``sol.events[k].energy_lost``."""
        return float(sum(e.energy_lost for e in self.events))

    def _cut(self, k, value):
        if isinstance(value, np.ndarray) and value.ndim and value.shape[-1] == self.pieces[k].t.shape[-1]:
            return value[..., self._columns[k]]
        if isinstance(value, dict):
            return {key: self._cut(k, v) for key, v in value.items()}
        if isinstance(value, tuple):
            return tuple(self._cut(k, v) for v in value)
        return value

    def _over(self, name, *args, **kw):
        out = []
        for k, sol in enumerate(self.pieces):
            attr = getattr(sol, name)
            out.append(self._cut(k, attr(*args, **kw) if callable(attr) else attr))
        return _join(out)

    @property
    def t(self):
        return self._over("t")

    def __getitem__(self, name):
        return self._over("__getitem__", name)

    def series(self, spec):
        """The named series over the whole run (see :meth:`Solution.series`)."""
        return self._over("series", spec)

    def series_names(self):
        """Every name :meth:`series` reads (the first piece's: a switch changes values, not names)."""
        return self.pieces[0].series_names()

    def to_pandas(self, names=None):
        """The whole run as one pandas ``DataFrame`` (:meth:`Solution.to_pandas`): the pieces' rows joined."""
        import pandas as pd
        names = self.series_names() if names is None else list(names)
        frames = [sol.to_pandas(names).iloc[np.asarray(cols, dtype=int)] for sol, cols in zip(self.pieces, self._columns)]
        out = pd.concat(frames)
        out.attrs = dict(frames[0].attrs)
        return out

    def power_balance(self):
        """Stored energy, cumulative dissipated and supplied energy and the balance residual over the whole
        run (:meth:`Solution.power_balance`), each piece's work carried on from where the previous one ended
        and the events' jumps booked: ``energy_lost`` dissipated, ``energy_supplied`` supplied, at the event."""
        stored, dis, sup = [], [], []
        wd = ws = 0.0
        jumps = {}
        for e in self.events:
            d, s = jumps.get(e.t, (0.0, 0.0))
            jumps[e.t] = (d + e.energy_lost, s + e.energy_supplied)
        booked = set()
        for k, sol in enumerate(self.pieces):
            pb = sol.power_balance()
            t0 = float(sol.t[0])
            if k and t0 in jumps and t0 not in booked and self._ends[k - 1] == -1:
                wd, ws = wd + jumps[t0][0], ws + jumps[t0][1]
                booked.add(t0)
            cols = self._columns[k]
            stored.append(pb["stored"][cols])
            dis.append(wd + pb["dissipated"][cols])
            sup.append(ws + pb["supplied"][cols])
            end = self._ends[k]
            wd, ws = wd + pb["dissipated"][end], ws + pb["supplied"][end]
        E, Wd, Ws = (np.concatenate(x) for x in (stored, dis, sup))
        resid = (E - E[0]) + Wd - Ws
        scale = max(np.max(np.abs(E)), np.max(np.abs(Wd)), np.max(np.abs(Ws)), 1e-300)
        return {"stored": E, "dissipated": Wd, "supplied": Ws, "residual": resid,
                "relative": float(np.max(np.abs(resid)) / scale)}

    def __getattr__(self, name):
        if name.startswith("_") or name in ("pieces", "events", "method"):
            raise AttributeError(name)
        first = getattr(self.pieces[0], name)
        if callable(first):
            return lambda *a, **kw: self._over(name, *a, **kw)
        if isinstance(first, (np.ndarray, dict, tuple)):
            return self._over(name)
        return first

    def __repr__(self):
        return (f"PiecewiseSolution({len(self.pieces)} pieces, {len(self.events)} events, "
                f"t = {self.t[0]:g} … {self.t[-1]:g}, method={self.method!r})")


def state_of(sol, k=-1):
    """Coordinates and flows (``name_dot``) of ``sol`` at column ``k``, by name.

    >>> from types import SimpleNamespace
    >>> s = SimpleNamespace(coordinate_names=["x"], q=np.array([[1.0, 2.0]]), f=np.array([[0.5, 0.25]]))
    >>> state_of(s)
    {'x': 2.0, 'x_dot': 0.25}
    """
    names = list(sol.coordinate_names)
    out = {n: float(sol.q[i, k]) for i, n in enumerate(names)}
    out.update({f"{n}_dot": float(sol.f[i, k]) for i, n in enumerate(names)})
    return out
