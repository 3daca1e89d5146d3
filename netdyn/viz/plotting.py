"""Pictures of planar mechanisms: one configuration (:func:`plot_mechanism`) or a simulated
motion as a GIF (:func:`animate_mechanism`, matplotlib's ``PillowWriter``).

Each body is drawn through the points where its joints and springs attach (a bar for two,
a plate for more), its centre of mass as a dot; pins are circles, pins to ground triangles,
prismatic and slider axes dashed lines.

>>> import matplotlib; matplotlib.use("Agg")
>>> from netdyn import Network
>>> from netdyn.components.planar import RigidBody, Revolute
>>> net = Network()
>>> _ = net.add(RigidBody("bar", 1, 0.1), Revolute("O", "ground", (0, 0), "bar", (-0.5, 0)))
>>> ax = plot_mechanism(net.model(), {"x_bar": 0.0, "y_bar": -0.5, "theta_bar": -1.5707963})
>>> len(ax.lines) > 0
True
"""
from __future__ import annotations

import numpy as np
import sympy as sp

from netdyn.errors import ModelError
from netdyn.files import writing
from netdyn.lagrange.equations import internalize
from netdyn.numerics.functions.compiled import compile_model

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # names for the hints only (annotations are not evaluated)
    from netdyn.lagrange.model import LagrangianModel
    from netdyn.numerics.results.solution import Solution
    from netdyn.hints import ArrayLike, PathArg
    from collections.abc import Mapping
    from typing import IO
    from typing import Any


def body_metadata(model, kind, hint):
    """The ``"planar"`` or ``"spatial"`` metadata of a model, or a :class:`ModelError` saying how to build one."""
    md = model.metadata.get(kind)
    if not md:
        raise ModelError(f"{model.name!r} has no {kind} bodies to draw; {hint}")
    return md


def _planar(model):
    return body_metadata(model, "planar", "build it from RigidBody and joints")


def pose_function(model):
    """``poses(q) -> {body: (x, y, theta)}`` for a coordinate vector ``q`` (model order)."""

    planar = _planar(model)
    cm = compile_model(model)
    p = cm.parameter_vector({str(u): 0.0 for u in cm.inputs}).vector  # poses never depend on inputs
    bodies = planar.bodies
    exprs = [internalize(model, e) for b in bodies for e in planar.poses[b]]
    fn = sp.lambdify([cm.eq.q, cm.parameters], exprs, modules="numpy")

    def poses(q):
        vals = np.asarray(fn(np.asarray(q, dtype=float), p), dtype=float).reshape(len(bodies), 3)
        return {b: vals[i] for i, b in enumerate(bodies)}

    return poses


def coordinate_vector(model, q):
    """``q`` as a vector in model order: a dict by coordinate name (missing ones 0) or an array."""
    if isinstance(q, dict):
        names = model.coordinate_names
        unknown = sorted(set(q) - set(names))
        if unknown:
            raise ModelError(f"unknown coordinate(s) {unknown}; the coordinates are {names}")
        return np.array([float(q.get(n, 0.0)) for n in names])
    return np.asarray(q, dtype=float)


def _global(pose, s):
    c, si = np.cos(pose[2]), np.sin(pose[2])
    return np.array([pose[0] + c * s[0] - si * s[1], pose[1] + si * s[0] + c * s[1]])


def attachment_points(model, bodies, as_point=tuple):
    """Per body of ``bodies`` the body-frame points where something attaches (each ``as_point`` of its
    floats), and the elements with attachment points (joints, springs) as drawing items; planar or spatial."""
    net = model.metadata.get("network")
    pts = {b: [] for b in bodies}
    items = []
    for el in (net.elements.values() if net is not None else []):
        if not hasattr(el, "point_a"):
            continue
        for body, s in ((el.bodies[0], el.point_a), (el.bodies[1], el.point_b)):
            if body in pts:
                pts[body].append(as_point([float(v) for v in s]))
        items.append(el)
    return pts, items


def draw(ax, model, poses, attachments, items, scale):
    """Draw one configuration on ``ax`` (used by :func:`plot_mechanism` and :func:`animate_mechanism`)."""
    ground = np.zeros(3)
    for k, (b, pose) in enumerate(poses.items()):
        local = attachments.get(b) or [(0.0, 0.0)]
        P = np.array([_global(pose, s) for s in local])
        if len(P) > 2:  # a plate: its attachment points around the centre
            order = np.argsort(np.arctan2(P[:, 1] - pose[1], P[:, 0] - pose[0]))
            P = np.vstack([P[order], P[order][:1]])
        ax.plot(P[:, 0], P[:, 1], "-", lw=3, color=f"C{k % 10}", solid_capstyle="round")
        ax.plot([pose[0]], [pose[1]], "o", ms=3, color="k")
    for el in items:
        pa = ground if el.bodies[0] == "0" else poses[el.bodies[0]]
        pb = ground if el.bodies[1] == "0" else poses[el.bodies[1]]
        A, B = _global(pa, [float(v) for v in el.point_a]), _global(pb, [float(v) for v in el.point_b])
        kind = type(el).__name__
        if kind in ("Spring", "Damper"):
            ax.plot([A[0], B[0]], [A[1], B[1]], ":" if kind == "Damper" else "--", color="0.3", lw=1)
            continue
        if hasattr(el, "axis"):
            c, s = np.cos(pa[2]), np.sin(pa[2])
            u = np.array([c * float(el.axis[0]) - s * float(el.axis[1]), s * float(el.axis[0]) + c * float(el.axis[1])])
            reach = 1e3 * scale  # the whole rail: the axis limits clip it to the frame
            ax.plot([A[0] - reach * u[0], A[0] + reach * u[0]], [A[1] - reach * u[1], A[1] + reach * u[1]],
                    "--", color="0.5", lw=1, scalex=False, scaley=False)
        marker = "^" if "0" in el.bodies else "o"
        ax.plot([B[0]], [B[1]], marker, ms=7, mfc="white", mec="k")


def _extent(model, Q, poses_fn, attachments):
    pts = []
    for q in Q:
        for b, pose in poses_fn(q).items():
            pts.extend(_global(pose, s) for s in (attachments.get(b) or [(0.0, 0.0)]))
    pts = np.array(pts + [np.zeros(2)])
    lo, hi = pts.min(axis=0), pts.max(axis=0)
    pad = 0.1 * max(float(np.max(hi - lo)), 1e-3)
    return lo - pad, hi + pad


def _frame(ax, lo, hi, title=None):
    """Equal axes fitted to the mechanism's extent, labelled in metres."""
    ax.set_aspect("equal")
    ax.set_xlim(lo[0], hi[0])
    ax.set_ylim(lo[1], hi[1])
    ax.set_xlabel("x [m]")
    ax.set_ylabel("y [m]")
    ax.grid(True, alpha=0.3)
    if title:
        ax.set_title(title, fontsize="medium")


def _figure_size(lo, hi, width=6.0):
    span = np.maximum(hi - lo, 1e-9)
    return width, float(np.clip(width * span[1] / span[0], 2.0, 8.0)) + 0.6


def plot_mechanism(model: LagrangianModel, q: Mapping[str, float] | ArrayLike, ax: Any = None,
                   path: PathArg | IO[bytes] | None = None, title: str | None = None) -> Any:
    """Draw the mechanism at coordinates ``q`` (dict name -> value, or a vector in model order); returns the
    axes (``path=`` also saves the figure).

    >>> import matplotlib; matplotlib.use("Agg")
    >>> from netdyn import Network
    >>> from netdyn.components.planar import RigidBody, Revolute
    >>> net = Network("bar")
    >>> _ = net.add(RigidBody("bar", 1, 0.1), Revolute("O", "ground", (0, 0), "bar", (-0.5, 0)))
    >>> ax = plot_mechanism(net.model(), {"x_bar": 0.5, "y_bar": 0.0, "theta_bar": 0.0}, title="a bar")
    >>> ax.get_title()
    'a bar'
    """
    import matplotlib
    if path is not None:
        matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    poses_fn = pose_function(model)
    qv = coordinate_vector(model, q)
    attachments, items = attachment_points(model, _planar(model).bodies)
    lo, hi = _extent(model, [qv], poses_fn, attachments)
    own = ax is None
    if own:
        _, ax = plt.subplots(figsize=_figure_size(lo, hi))
    draw(ax, model, poses_fn(qv), attachments, items, scale=float(np.max(hi - lo)) / 10)
    _frame(ax, lo, hi, title)
    if own and path is not None:
        with writing(path, "mechanism picture") as target:  # str or PathLike, its folder made
            figure: Any = ax.figure
            figure.savefig(target, dpi=100, bbox_inches="tight")
        plt.close(figure)
    return ax


def animate_mechanism(solution: Solution, path: PathArg, fps: int = 25, frames: int = 100, dpi: float = 80) -> int:
    """Write the motion of a simulated mechanism to a GIF at ``path``; returns the number of frames.

    >>> import numpy as np, netdyn
    >>> from netdyn.components.planar import RigidBody, Revolute, Gravity
    >>> net = netdyn.Network("pendulum")
    >>> _ = net.add(RigidBody("bar", 1, 0.1), Revolute("O", "ground", (0, 0), "bar", (-0.5, 0)), Gravity())
    >>> sol = netdyn.simulate(net, (0, 0.2), q0={"theta_bar": 0.3}, t_eval=np.linspace(0, 0.2, 3))
    >>> import os, tempfile
    >>> animate_mechanism(sol, os.path.join(tempfile.mkdtemp(), "pendulum.gif"), dpi=20)
    3
    """
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.animation import PillowWriter

    model = solution.model
    poses_fn = pose_function(model)
    idx = np.unique(np.linspace(0, solution.t.size - 1, min(frames, solution.t.size)).astype(int))
    Q = [solution.q[:, k] for k in idx]
    attachments, items = attachment_points(model, _planar(model).bodies)
    lo, hi = _extent(model, Q, poses_fn, attachments)
    fig, ax = plt.subplots(figsize=_figure_size(lo, hi))
    writer = PillowWriter(fps=fps)
    with writing(path, "animation") as target, writer.saving(fig, target, dpi):  # str or PathLike, folder made
        for k, q in zip(idx, Q):
            ax.clear()
            draw(ax, model, poses_fn(q), attachments, items, scale=float(np.max(hi - lo)) / 10)
            _frame(ax, lo, hi, f"{model.name}   t = {solution.t[k]:.2f} s")
            writer.grab_frame()
    plt.close(fig)
    return len(idx)
