"""Pictures of spatial mechanisms on matplotlib's 3-D axes: one configuration (:func:`plot_spatial`) or a
simulated motion as a GIF (:func:`animate_spatial`).

Each body is drawn as lines from its frame origin to the points where joints and springs attach (to its centre
of mass when nothing else is attached), its centre of mass as a dot and its frame as three short arrows (x red, y green, z blue); a joint is a marker at its
frame-a origin with its axis (the z axis of frame a) as a dashed segment. Axes are labelled in metres and
scaled equally.

>>> import matplotlib; matplotlib.use("Agg")
>>> from netdyn.linkages.spatial import spherical_pendulum
>>> model = spherical_pendulum().model()
>>> ax = plot_spatial(model, {"z_bob": -1.0, "e0_bob": 1.0})
>>> ax.get_xlabel()
'x [m]'
"""
from __future__ import annotations

import numpy as np
import sympy as sp

from netdyn.files import writing
from netdyn.viz.plotting import attachment_points, body_metadata, coordinate_vector
from netdyn.lagrange.equations import internalize
from netdyn.numerics.functions.compiled import compile_model
from netdyn.symbols import t as T

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # names for the hints only (annotations are not evaluated)
    from netdyn.lagrange.model import LagrangianModel
    from netdyn.numerics.results.solution import Solution
    from netdyn.hints import ArrayLike, PathArg
    from collections.abc import Mapping
    from typing import IO
    from typing import Any


def _spatial(model):
    return body_metadata(model, "spatial", "build it from netdyn.components.spatial")


def pose_function(model):
    """``poses(q) -> {body: (origin, R)}`` for a coordinate vector ``q`` (model order)."""

    md = _spatial(model)
    cm = compile_model(model)
    p = cm.parameter_vector({str(u): 0.0 for u in cm.inputs}).vector
    bodies = md.bodies
    exprs = []
    for b in bodies:
        pose = md.poses[b]
        exprs.extend(internalize(model, sp.sympify(e)) for e in list(pose.r) + list(pose.R))
    fn = sp.lambdify([cm.eq.q, cm.parameters, T], exprs, modules="numpy")

    def poses(q, tt=0.0):
        vals = np.asarray(fn(np.asarray(q, dtype=float), p, tt), dtype=float).reshape(len(bodies), 12)
        out = {}
        for i, b in enumerate(bodies):
            R = vals[i, 3:].reshape(3, 3)
            out[b] = (vals[i, :3], R / np.cbrt(np.linalg.det(R)))  # Euler parameters off unit norm: rescale
        return out

    return poses


def _attachments(model):
    return attachment_points(model, _spatial(model).bodies, np.array)


def _global(pose, s):
    return pose[0] + pose[1] @ s


def _draw(ax, model, poses, pts, items, scale):
    ground = (np.zeros(3), np.eye(3))
    get = lambda b: ground if b == "0" else poses[b]
    md = _spatial(model)
    for k, b in enumerate(md.bodies):
        pose = poses[b]
        color = f"C{k % 10}"
        o = pose[0]
        for s in pts[b]:
            P = _global(pose, s)
            ax.plot(*np.stack([o, P]).T, color=color, lw=2.5, solid_capstyle="round")
        com = np.array([float(md.body_values[b][f"c{a}"]) for a in "xyz"])
        C = _global(pose, com)
        if all(np.linalg.norm(s) < 1e-12 for s in pts[b]):  # nothing beyond the origin: draw out to the com
            ax.plot(*np.stack([o, C]).T, color=color, lw=2.5, solid_capstyle="round")
        ax.scatter(*C, color=color, s=25, depthshade=False)
        for i, c in enumerate(("r", "g", "b")):
            ax.quiver(*o, *(pose[1][:, i] * scale), color=c, lw=1, arrow_length_ratio=0.25)
        ax.text(*o, f" {b}", fontsize=8, color=color)
    for el in items:
        if not getattr(el, "is_joint", False):
            pa, pb = get(el.bodies[0]), get(el.bodies[1])
            A, B = _global(pa, el.point_a), _global(pb, el.point_b)
            ax.plot(*np.stack([A, B]).T, color="0.4", lw=1, ls=":")
            continue
        pa = get(el.bodies[0])
        P = _global(pa, np.array([float(v) for v in el.point_a]))
        z = pa[1] @ el.R_a[:, 2]
        ax.scatter(*P, color="k", marker="^" if "0" in el.bodies else "o", s=30, depthshade=False)
        ax.plot(*np.stack([P - z * scale, P + z * scale]).T, color="k", lw=1, ls="--")


def _limits(points):
    pts = np.array(points)
    lo, hi = pts.min(axis=0), pts.max(axis=0)
    centre, half = (lo + hi) / 2, max(float(np.max(hi - lo)) / 2, 1e-3) * 1.15
    return centre, half


def _frame_points(poses, pts):
    out = [np.zeros(3)]
    for b, pose in poses.items():
        out.append(pose[0])
        out.extend(_global(pose, s) for s in pts[b])
    return out


def _setup(ax, centre, half, title):
    ax.set_xlim(centre[0] - half, centre[0] + half)
    ax.set_ylim(centre[1] - half, centre[1] + half)
    ax.set_zlim(centre[2] - half, centre[2] + half)
    ax.set_box_aspect((1, 1, 1))
    ax.set_xlabel("x [m]")
    ax.set_ylabel("y [m]")
    ax.set_zlabel("z [m]")
    ax.set_title(title)


def plot_spatial(model: LagrangianModel, q: Mapping[str, float] | ArrayLike, ax: Any = None,
                 path: PathArg | IO[bytes] | None = None, title: str | None = None, t: float = 0.0) -> Any:
    """Draw a spatial mechanism at coordinates ``q`` (dict name -> value or a vector); returns the axes.

    ``path`` saves the figure (PNG, SVG, ...).

    >>> import matplotlib; matplotlib.use("Agg")
    >>> from netdyn.linkages.spatial import spherical_pendulum
    >>> ax = plot_spatial(spherical_pendulum().model(), {"z_bob": -1.0, "e0_bob": 1.0})
    >>> ax.name
    '3d'
    """
    import matplotlib.pyplot as plt  # lazy: matplotlib stays out of `import netdyn` (tests/test_layers.py)

    q = coordinate_vector(model, q)
    poses = pose_function(model)(q, t)
    pts, items = _attachments(model)
    centre, half = _limits(_frame_points(poses, pts))
    if ax is None:
        fig = plt.figure(figsize=(6, 6))
        ax = fig.add_subplot(projection="3d")
    _draw(ax, model, poses, pts, items, 0.12 * half)
    _setup(ax, centre, half, title or model.name)
    if path:
        with writing(path, "mechanism picture") as target:  # str or PathLike, its folder made
            ax.figure.savefig(target, dpi=110, bbox_inches="tight")
    return ax


def animate_spatial(solution: Solution, path: PathArg, fps: int = 20, frames: int = 60,
                    title: str | None = None) -> PathArg:
    """Write the motion of a simulated spatial mechanism as a GIF (``frames`` evenly spaced times).

    Returns the path.

    >>> import numpy as np, netdyn
    >>> from netdyn.linkages.spatial import spherical_pendulum
    >>> model = spherical_pendulum().model()
    >>> sol = netdyn.simulate(model, (0, 0.2), q0={"z_bob": -1.0, "e0_bob": 1.0}, t_eval=np.linspace(0, 0.2, 3))
    >>> import os, tempfile
    >>> path = animate_spatial(sol, os.path.join(tempfile.mkdtemp(), "bob.gif"), frames=3)
    >>> os.path.basename(path)
    'bob.gif'
    """
    import matplotlib.pyplot as plt  # lazy: matplotlib stays out of `import netdyn` (tests/test_layers.py)
    from matplotlib.animation import FuncAnimation, PillowWriter  # lazy: matplotlib stays out of `import netdyn` (tests/test_layers.py)

    model = solution.model
    _spatial(model)
    fn = pose_function(model)
    pts, items = _attachments(model)
    idx = np.unique(np.linspace(0, solution.t.size - 1, min(frames, solution.t.size)).astype(int))
    all_poses = [fn(solution.q[:, k], solution.t[k]) for k in idx]
    centre, half = _limits([p for poses in all_poses for p in _frame_points(poses, pts)])
    fig = plt.figure(figsize=(5, 5))
    ax = fig.add_subplot(projection="3d")

    def frame(i):
        ax.cla()
        _draw(ax, model, all_poses[i], pts, items, 0.12 * half)
        _setup(ax, centre, half, f"{title or model.name}   t = {solution.t[idx[i]]:.3f} s")

    anim = FuncAnimation(fig, frame, frames=len(idx))
    with writing(path, "animation") as target:  # str or PathLike, its folder made
        anim.save(target, writer=PillowWriter(fps=fps))
    plt.close(fig)
    return path
