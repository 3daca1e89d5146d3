"""Why a mechanism cannot be assembled or cannot move: its loops named, side by side.

:func:`loop_report` says which closed loops of a planar (or spatial) mechanism a
failed position solve left open — the loop as a chain of bodies and joints,
its residual — and, for a loop of pins, whether any configuration could close
it at all (a polygon closes only if its longest side is at most the sum of the
others). :func:`structure_text` describes a mechanism for the error of a locked
one (:class:`~netdyn.errors.LockedMechanismError`).

>>> import numpy as np
>>> from netdyn.linkages import four_bar, BOOK
>>> model = four_bar(dict(BOOK, l1=0.1, l2=0.1, l3=0.1, l4=2.0)).model()
>>> print(loop_report(model, np.full(8, 0.5), 1e-8)[0])   # doctest: +NORMALIZE_WHITESPACE
loop ground -O- crank -A- rod -C- rocker -D- ground does not close (residual 0.5): its pin-to-pin
sides are ground 2, crank 0.1, rod 0.1, rocker 0.1, and the longest (ground, 2) exceeds the sum of
the others (0.3), so no configuration closes it; change the lengths
"""
from __future__ import annotations

import numpy as np

GROUND = {"0", "ground", "gnd"}


def _body(name):
    return "ground" if str(name) in GROUND else str(name)


def _metadata(model):
    md = model.metadata.get("planar") or model.metadata.get("spatial")
    return md if md is not None and md.loops is not None and md.joints else None


def _chain(names, joints):
    """The loop walked body by body: ``[(body, joint), ...]``, body k lying between joints k − 1 and k,
    starting at ground when the loop touches it."""
    ends = [tuple(_body(b) for b in joints[n].bodies) for n in names]
    shared = [b for b in ends[0] if b in ends[-1]]
    body = "ground" if "ground" in shared else (shared[0] if shared else ends[0][0])
    chain = []
    for name, (a, b) in zip(names, ends):
        chain.append((body, name))
        body = b if a == body else a
    for k, (b, _) in enumerate(chain):
        if b == "ground":
            return chain[k:] + chain[:k]
    return chain


def _point(joint, body):
    a, b = (_body(x) for x in joint.bodies)
    try:
        return np.array([float(v) for v in (joint.point_a if body == a else joint.point_b)][:2])
    except (TypeError, ValueError, AttributeError):
        return None


def _sides(chain, joints):
    """``[(body, length)]``: on each body of a loop of pins, the distance between its two pins."""
    sides = []
    for k, (body, name) in enumerate(chain):  # body k lies between joint k - 1 and joint k
        before, here = joints[chain[k - 1][1]], joints[name]
        if type(here).__name__ != "Revolute" or type(before).__name__ != "Revolute":
            return None
        pa, pb = _point(before, body), _point(here, body)  # both in the body's frame (ground: absolute)
        if pa is None or pb is None:
            return None
        sides.append((body, float(np.linalg.norm(pa - pb))))
    return sides


def loop_report(model, residual, tol):
    """Sentences, one per loop whose constraints ``residual`` (over the model's displacement constraints)
    leaves above ``tol``; ``None`` when the model carries no loops or every loop closes."""
    md = _metadata(model)
    if md is None:
        return None
    joints, rows = md.joints, md.constraints or {}
    residual = np.abs(np.asarray(residual, dtype=float))
    out = []
    for cut, names in md.loops.items():
        if any(n not in joints for n in names):
            continue
        idx = [i for n in names for i in rows.get(n, []) if i < residual.size]
        if not idx or residual[idx].max() <= tol:
            continue
        chain = _chain(names, joints)
        text = " ".join(f"{b} -{j}-" for b, j in chain) + f" {chain[0][0]}"
        line = f"loop {text} does not close (residual {residual[idx].max():.3g})"
        sides = _sides(chain, joints)
        if sides and len(sides) >= 3:
            body, longest = max(sides, key=lambda s: s[1])
            rest = sum(s[1] for s in sides) - longest
            listed = ", ".join(f"{b} {x:.4g}" for b, x in sides)
            if longest > rest * (1 + 1e-9):
                line += (f": its pin-to-pin sides are {listed}, and the longest ({body}, {longest:.4g}) exceeds "
                         f"the sum of the others ({rest:.4g}), so no configuration closes it; change the lengths")
            else:
                line += (f"; its pin-to-pin sides ({listed}) can close: start nearer an assembly "
                         "(guess= with body angles or joint values)")
        out.append(line)
    return out or None


def structure_text(model):
    """``bodies: a, b; joints: A, B; Grübler count g`` of a mechanism's model (empty if it has none)."""
    md = model.metadata.get("planar") or model.metadata.get("spatial")
    if md is None or not md.joints:
        return ""
    bodies = [b for b in md.bodies or [] if _body(b) != "ground"]
    return (f"bodies: {', '.join(map(str, bodies))}; joints: {', '.join(sorted(md.joints))}"
            + (f"; Grübler count {md.gruebler}" if md.gruebler is not None else ""))
