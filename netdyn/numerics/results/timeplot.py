"""Series against time, one axis per physical quantity: the figure of ``sol.plot`` and ``netdyn simulate --plot``.

>>> import numpy as np
>>> t = np.linspace(0, 1e-3, 5)
>>> axes = time_plot(t, {("voltage", "V"): [("v(C1)", t * 1e3)], ("current", "A"): [("i(L1)", t)]})
>>> [a.get_ylabel() for a in axes]
['voltage', 'current']
"""
from __future__ import annotations

from typing import Any, Mapping, Sequence

Curves = Sequence[tuple[str, Any]]


def time_plot(t: Any, groups: Mapping[tuple[str, str], Curves], *, ax: Any = None, title: str | None = None,
              max_curves: int = 10, width: float = 7.5) -> list[Any]:
    """Plot ``groups`` — ``{(quantity, SI unit): [(name, values), ...]}`` — against ``t``: one axis a quantity
    (all on ``ax`` if given; a value may be a function that reads it), the unit with engineering prefixes on the ticks (so the label is the quantity's
    name alone), at most ``max_curves`` curves an axis with the legend saying how many were left out.
    Returns the axes."""
    import matplotlib.pyplot as plt
    from matplotlib.ticker import EngFormatter
    if ax is not None:
        axes = [ax]
        groups = {("value", ""): [c for members in groups.values() for c in members]}
    else:
        _, grid = plt.subplots(max(len(groups), 1), 1, sharex=True, squeeze=False,
                               figsize=(width, 1.2 + 2.4 * max(len(groups), 1)))
        axes = list(grid[:, 0])
    for a, ((what, unit), members) in zip(axes, groups.items()):
        for name, values in members[:max_curves]:
            a.plot(t, values() if callable(values) else values, label=name)
        a.set_ylabel(what)
        a.yaxis.set_major_formatter(EngFormatter(unit=unit, sep=" "))
        shown = f"showing {max_curves} of {len(members)}" if len(members) > max_curves else None
        a.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize="small", borderaxespad=0,
                 title=shown, title_fontsize="small")
        a.grid(True, alpha=0.3)
    axes[-1].set_xlabel("time t")
    axes[-1].xaxis.set_major_formatter(EngFormatter(unit="s", sep=" "))
    if title:
        axes[0].set_title(title, fontsize="medium")
    if ax is None:
        axes[0].figure.tight_layout()
    return axes
