"""Named series over time as a pandas ``DataFrame``, and the SI unit a series' name implies.

``sol.to_pandas()`` (every solution class) returns one table: indexed by time, one column per named
quantity, with ``df.attrs["units"]`` and ``df.attrs["quantities"]`` mapping each column to its SI unit
and what it measures. pandas rather than xarray: a solution is a set of one-dimensional series on one
time axis, which is exactly a ``DataFrame`` — xarray's labelled N-dimensional arrays add nothing for one
dimension, and pandas is the table everyone already has (CSV, Parquet and Excel, plotting, resampling,
joins with measured data; xarray itself is built on it).

pandas is an optional dependency (``pip install netdyn[frames]``); without it the call raises a
:class:`~netdyn.errors.NetdynError` that says so. This module sits in the base layer, beside
:mod:`netdyn.errors`, so that every solution class (the numeric paths' and the recursive path's) uses it.

>>> import numpy as np
>>> displacement_quantity("theta_crank_dot"), displacement_quantity("q_R1")
(('angular velocity', 'rad/s'), ('charge', 'C'))
>>> df = time_frame(np.array([0.0, 1.0]), ["x_m"], lambda name: np.array([0.5, 0.25]), {"x_m": ("position", "m")})
>>> df.index.name, df["x_m"].tolist(), df.attrs["units"]
('t', [0.5, 0.25], {'x_m': 'm'})
"""
from __future__ import annotations

import numpy as np

from netdyn.errors import NetdynError

#: displacement kind -> (its rate, the rate's rate), each ``(quantity, unit)``
DISPLACEMENTS = {
    ("charge", "C"): (("current", "A"), ("current rate", "A/s")),
    ("flux linkage", "Wb"): (("voltage", "V"), ("voltage rate", "V/s")),
    ("position", "m"): (("velocity", "m/s"), ("acceleration", "m/s²")),
    ("angle", "rad"): (("angular velocity", "rad/s"), ("angular acceleration", "rad/s²")),
    ("impulse", "N·s"): (("force", "N"), ("force rate", "N/s")),
    ("angular impulse", "N·m·s"): (("torque", "N·m"), ("torque rate", "N·m/s")),
}
#: a coordinate's name prefix (before the first ``_``) -> what it measures
PREFIXES = {"q": ("charge", "C"), "phi": ("flux linkage", "Wb"), "x": ("position", "m"), "y": ("position", "m"),
            "z": ("position", "m"), "theta": ("angle", "rad"), "s": ("position", "m")}
UNKNOWN = ("value", "")


def displacement_quantity(name):
    """``(quantity, unit)`` of a displacement named by netdyn's prefixes (``x_``, ``theta_``, ``q_``, ...) or
    of its rates (``_dot``, ``_ddot``); :data:`UNKNOWN` for any other name."""
    for suffix, order in (("_ddot", 2), ("_dot", 1), ("", 0)):
        if name.endswith(suffix):
            base = PREFIXES.get(name[:len(name) - len(suffix)].partition("_")[0], UNKNOWN)
            if base == UNKNOWN or order == 0:
                return base
            return DISPLACEMENTS[base][order - 1]
    return UNKNOWN


class SharedDict(dict):
    """A read-only ``dict`` that is shared, not copied, by the frames pandas derives from a table.

    pandas deep-copies ``df.attrs`` into every frame or series it makes from ``df`` (``df[col]``,
    ``df.iloc[...]``, arithmetic): with a unit for each of 700,000 columns, reading one column would copy
    700,000 entries. A read-only mapping can be shared instead. It pickles and serialises as a dict.

    >>> import copy
    >>> units = SharedDict({"v(a)": "V"})
    >>> copy.deepcopy(units) is units, units["v(a)"], dict(units)
    (True, 'V', {'v(a)': 'V'})
    >>> units["v(b)"] = "V"
    Traceback (most recent call last):
    ...
    TypeError: the units of a netdyn table are read-only (copy them with dict(...) to change them)
    """

    def __deepcopy__(self, memo):
        return self

    def __copy__(self):
        return self

    def __reduce__(self):
        return type(self), (dict(self),)

    def _read_only(self, *args, **kwargs):
        raise TypeError("the units of a netdyn table are read-only (copy them with dict(...) to change them)")

    __setitem__ = __delitem__ = __ior__ = update = pop = popitem = clear = setdefault = _read_only


def require_pandas():
    """The ``pandas`` module, or a :class:`~netdyn.errors.NetdynError` saying how to install it."""
    try:
        import pandas
    except ImportError as exc:
        raise NetdynError("to_pandas() needs pandas, an optional dependency of netdyn: "
                          "pip install netdyn[frames]  (or pip install 'pandas>=2')") from exc
    return pandas


def time_frame(t, names, read, quantities, name=None):
    """A ``DataFrame`` indexed by the times ``t`` (index name ``"t"``), column ``n`` = ``read(n)`` for each
    of ``names``; ``quantities`` maps a column to its ``(quantity, unit)``, kept in ``df.attrs["units"]``
    and ``df.attrs["quantities"]`` (:class:`SharedDict`: the frames pandas derives share them). The values
    are gathered into one float block (one copy)."""
    pd = require_pandas()
    t = np.asarray(t, dtype=float)
    names = list(dict.fromkeys(names))  # a name once, in first-seen order
    data = np.empty((len(names), t.size))  # a series a row: pandas keeps its float block as columns x times
    for j, n in enumerate(names):
        data[j] = read(n)
    df = pd.DataFrame(data.T, index=pd.Index(t, name="t"), columns=names, copy=False)
    df.attrs["units"] = SharedDict((n, quantities.get(n, UNKNOWN)[1]) for n in names)
    df.attrs["quantities"] = SharedDict((n, quantities.get(n, UNKNOWN)[0]) for n in names)
    if name is not None:
        df.attrs["name"] = name
    return df
