"""Drawing a bond graph with matplotlib (imported only when drawing).

Elements are labelled ``kind:name`` (junctions ``0``/``1``), bonds are lines
from label to label with a power half-arrow at the head, numbered as the rows of
the causality report, and, when causality is drawn, a causal stroke across the
bond's end that *receives* the effort (on the half-arrow when that is the head;
orange at storage in derivative causality; an algebraic loop's bonds dashed). The
layout is networkx's Kamada–Kawai layout of the graph (or any ``{node: (x, y)}`` given).

>>> import matplotlib
>>> matplotlib.use("Agg")
>>> import netdyn
>>> bg = netdyn.BondGraph("RC")
>>> for k, n, p in [("Se", "u", {"effort": 1.0}), ("1", "J", {}), ("C", "C1", {"C": 1.0}), ("R", "R1", {"R": 1.0})]:
...     bg.add(k, n, **p)
>>> _ = bg.chain("u", "J", "C1"); _ = bg.bond("J", "R1")
>>> ax = draw(bg)
>>> sorted(t.get_text() for t in ax.texts)
['1', '1', '2', '3', 'C:C1', 'J', 'R:R1', 'Se:u']
"""
from __future__ import annotations

import networkx as nx
import numpy as np

from netdyn.files import writing


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


def draw(bg, path=None, ax=None, causality=True, layout=None, figsize=None, bond_labels="numbers"):
    """Draw ``bg``; returns the matplotlib axes (and writes ``path`` when given).

    Each bond runs from its tail's label to its head's, where its half-arrow is
    (one barb, on the left of the bond). ``causality=True`` runs SCAP and puts each
    causal stroke across the end of its bond whose element is given the effort —
    on the half-arrow when that is the head — in red, in orange for a storage
    element in derivative causality; the bonds of an algebraic loop are dashed.
    ``bond_labels``: ``"numbers"`` (the rows of :meth:`Causality.report`),
    ``"names"`` or ``None``. A causal conflict is drawn without strokes and
    reported in the title.
    """
    import matplotlib.pyplot as plt
    pos = {n: np.asarray(p, dtype=float) for n, p in (layout or globals()["layout"](bg)).items()}
    own = ax is None
    if own:
        fig, ax = plt.subplots(figsize=figsize or (2 + 1.4 * np.sqrt(len(pos)) * 1.6, 1.5 + 1.4 * np.sqrt(len(pos))))
    setter, title, caus = {}, bg.name, None
    if (bg.effort_name, bg.flow_name) != ("effort", "flow"):
        title += f" (effort: {bg.effort_name}, flow: {bg.flow_name})"
    if causality:
        try:
            caus = bg.causality()
            setter = caus.effort_setter
            notes = [f"derivative: {', '.join(caus.derivative)}"] if caus.derivative else []
            notes += [f"algebraic loop: {', '.join(loop)}" for loop in caus.algebraic_loops]
            if notes:
                title += "\n" + "; ".join(notes)
        except Exception as exc:  # noqa: BLE001 - draw what can be drawn, say why strokes are missing
            title += f"\n(no causality: {exc})"
    loop_of = {b: k + 1 for k, loop in enumerate(caus.loops) for b in loop["bonds"]} if caus else {}
    xs = np.array(list(pos.values()))
    span = max(float(np.ptp(xs[:, 0])) if len(xs) else 1.0, float(np.ptp(xs[:, 1])) if len(xs) else 1.0, 1.0)
    ax.set_xlim(xs[:, 0].min() - 0.15 * span, xs[:, 0].max() + 0.15 * span)
    ax.set_ylim(xs[:, 1].min() - 0.15 * span, xs[:, 1].max() + 0.15 * span)
    ax.set_aspect("equal")
    ax.axis("off")
    texts = {}
    for n, p in pos.items():
        kind = bg.kind(n)
        junction = kind in ("0", "1")
        texts[n] = ax.text(p[0], p[1], label(bg, n), ha="center", va="center", fontsize=11 if junction else 9,
                           fontweight="bold" if junction else "normal", zorder=3,
                           bbox=dict(boxstyle="circle,pad=0.2" if junction else "round,pad=0.25", fc="white",
                                     ec="0.6" if junction else "none"))
        if junction:
            ax.text(p[0], p[1] - 0.07 * span, n, ha="center", va="top", fontsize=6, color="0.35")
    ax.figure.canvas.draw()   # the labels' extents, so bonds end at their boxes
    inv = ax.transData.inverted()
    boxes = {}
    for n, txt in texts.items():
        bb = txt.get_bbox_patch().get_window_extent() if txt.get_bbox_patch() else txt.get_window_extent()
        (x0, y0), (x1, y1) = inv.transform([[bb.x0, bb.y0], [bb.x1, bb.y1]])
        boxes[n] = (min(x0, x1), min(y0, y1), max(x0, x1), max(y0, y1))
    h = 0.035 * span   # half-arrow barb and stroke half-length
    for k, b in enumerate(bg.bond_names):
        tail, head = bg.ends(b)
        p0, p1 = pos[tail], pos[head]
        d = p1 - p0
        L = np.hypot(*d)
        if L == 0:
            continue
        u = d / L
        n_ = np.array([-u[1], u[0]])
        a = p0 + u * (_exit(boxes[tail], p0, u) + 0.01 * span)
        z = p1 - u * (_exit(boxes[head], p1, -u) + 0.01 * span)
        dashed = b in loop_of
        ax.plot([a[0], z[0]], [a[1], z[1]], color="k", lw=1.2, ls="--" if dashed else "-", zorder=1)
        barb = z - u * h + n_ * h * 0.8   # the half-arrow: one barb, on the left of the bond
        ax.plot([z[0], barb[0]], [z[1], barb[1]], color="k", lw=1.2, zorder=1)
        if b in setter:
            end = z if setter[b] == tail else a   # the stroke sits where the effort is received
            dependent = caus is not None and any(e in caus.derivative for e in (tail, head))
            s0, s1 = end + n_ * h, end - n_ * h
            ax.plot([s0[0], s1[0]], [s0[1], s1[1]], color="tab:orange" if dependent else "tab:red", lw=2.2,
                    solid_capstyle="butt", zorder=2)
        text = {"numbers": str(k + 1), "names": b}.get(bond_labels) if bond_labels else None
        if text:
            mid = (a + z) / 2 - n_ * 0.04 * span
            ax.text(mid[0], mid[1], text + (f" (loop {loop_of[b]})" if dashed else ""), fontsize=6, color="0.4",
                    ha="center", va="center", zorder=2)
    ax.set_title(title, fontsize=9)
    if path is not None:
        with writing(path, "bond-graph picture") as target:  # str or PathLike, its folder made
            ax.figure.savefig(target, dpi=130, bbox_inches="tight")
        if own:
            plt.close(ax.figure)
    return ax


def _exit(box, p, u):
    """How far from ``p`` (inside ``box``) along the unit direction ``u`` the line leaves the box."""
    x0, y0, x1, y1 = box
    ts = []
    for lo, hi, c, d in ((x0, x1, p[0], u[0]), (y0, y1, p[1], u[1])):
        if abs(d) > 1e-12:
            ts.append(max((lo - c) / d, (hi - c) / d))
    return max(0.0, min(ts)) if ts else 0.0
