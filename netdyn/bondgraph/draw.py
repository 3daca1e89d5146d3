"""Drawing a bond graph with matplotlib (imported only when drawing).

Elements are labelled ``kind:name`` (junctions ``0``/``1``), bonds are lines
with a power half-arrow at the head (labelled when not named after an
element), and, when causality is drawn, a causal
stroke across the bond at the end that *receives* the effort. The layout is
networkx's Kamada–Kawai layout of the graph (or any ``{node: (x, y)}`` given).

>>> import matplotlib
>>> matplotlib.use("Agg")
>>> import netdyn
>>> bg = netdyn.BondGraph("RC")
>>> for k, n, p in [("Se", "u", {"effort": 1.0}), ("1", "J", {}), ("C", "C1", {"C": 1.0}), ("R", "R1", {"R": 1.0})]:
...     bg.add(k, n, **p)
>>> _ = bg.chain("u", "J", "C1"); _ = bg.bond("J", "R1")
>>> ax = draw(bg)
>>> sorted(t.get_text() for t in ax.texts)
['1', 'C:C1', 'J', 'R:R1', 'Se:u']
"""
from __future__ import annotations

import networkx as nx
import numpy as np


def label(bg, n):
    """The text drawn for element ``n``."""
    kind = bg.kind(n)
    if kind in ("0", "1"):
        return kind
    if kind == "field":
        return f"{bg.params(n).get('label', 'field')}:{n}"
    return f"{kind}:{n}"


def layout(bg, seed=1):
    """Positions of the elements: Kamada–Kawai on the undirected graph, per connected component."""
    g = nx.Graph(bg.graph.to_undirected())
    if g.number_of_nodes() == 1:
        return {n: np.zeros(2) for n in g}
    pos, offset = {}, 0.0
    for comp in sorted(nx.connected_components(g), key=len, reverse=True):
        sub = g.subgraph(comp)
        p = nx.kamada_kawai_layout(sub) if len(comp) > 2 else nx.spring_layout(sub, seed=seed)
        xs = np.array(list(p.values()))
        width = float(np.ptp(xs[:, 0])) if len(xs) > 1 else 0.0
        for n, xy in p.items():
            pos[n] = np.asarray(xy, dtype=float) + np.array([offset - xs[:, 0].min(), 0.0])
        offset += width + 0.8
    return pos


def draw(bg, path=None, ax=None, causality=True, layout=None, figsize=None):
    """Draw ``bg``; returns the matplotlib axes (and writes ``path`` when given).

    ``causality=True`` runs SCAP and draws causal strokes (a conflict is drawn
    without strokes and reported in the title).
    """
    import matplotlib.pyplot as plt
    pos = {n: np.asarray(p, dtype=float) for n, p in (layout or globals()["layout"](bg)).items()}
    own = ax is None
    if own:
        fig, ax = plt.subplots(figsize=figsize or (2 + 1.4 * np.sqrt(len(pos)) * 1.6, 1.5 + 1.4 * np.sqrt(len(pos))))
    setter, title = {}, bg.name
    if (bg.effort_name, bg.flow_name) != ("effort", "flow"):
        title += f" (effort: {bg.effort_name}, flow: {bg.flow_name})"
    if causality:
        try:
            c = bg.causality()
            setter = c.effort_setter
            notes = [f"derivative: {', '.join(c.derivative)}"] if c.derivative else []
            notes += [f"algebraic loop: {', '.join(loop)}" for loop in c.algebraic_loops]
            if notes:
                title += "\n" + "; ".join(notes)
        except Exception as exc:  # noqa: BLE001 - draw what can be drawn, say why strokes are missing
            title += f"\n(no causality: {exc})"
    xs = np.array(list(pos.values()))
    span = max(float(np.ptp(xs[:, 0])) if len(xs) else 1.0, float(np.ptp(xs[:, 1])) if len(xs) else 1.0, 1.0)
    r = 0.06 * span   # clearance around labels
    for b in bg.bond_names:
        tail, head = bg.ends(b)
        p0, p1 = pos[tail], pos[head]
        d = p1 - p0
        L = np.hypot(*d)
        if L == 0:
            continue
        u = d / L
        n_ = np.array([-u[1], u[0]])
        a, z = p0 + u * r, p1 - u * r
        ax.plot([a[0], z[0]], [a[1], z[1]], color="k", lw=1.2)
        h = 0.35 * r
        barb = z - u * h + n_ * h * 0.8   # half-arrow: one barb, on the left of the bond
        ax.plot([z[0], barb[0]], [z[1], barb[1]], color="k", lw=1.2)
        if b in setter:
            end = z if setter[b] == tail else a   # the stroke sits where the effort is received
            s0, s1 = end + n_ * h, end - n_ * h
            ax.plot([s0[0], s1[0]], [s0[1], s1[1]], color="tab:red", lw=2.0)
        if b in (tail, head):   # a bond named after its element needs no label
            continue
        mid = (a + z) / 2 - n_ * 0.25 * r
        ax.text(mid[0], mid[1], b, fontsize=6, color="0.4", ha="center", va="center")
    for n, p in pos.items():
        kind = bg.kind(n)
        junction = kind in ("0", "1")
        ax.text(p[0], p[1], label(bg, n), ha="center", va="center", fontsize=11 if junction else 9,
                fontweight="bold" if junction else "normal",
                bbox=dict(boxstyle="circle" if junction else "round", fc="white", ec="0.6" if junction else "none"))
        if junction:
            ax.text(p[0], p[1] - 1.1 * r, n, ha="center", va="top", fontsize=6, color="0.35")
    ax.set_title(title, fontsize=9)
    ax.set_aspect("equal")
    ax.margins(0.12)
    ax.axis("off")
    if path is not None:
        ax.figure.savefig(path, dpi=130, bbox_inches="tight")
        if own:
            plt.close(ax.figure)
    return ax
