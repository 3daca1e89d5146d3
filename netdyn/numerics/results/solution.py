"""``Solution``: the result of a simulation, with named access, energy and constraint residuals.

Behaves like scipy's ``OdeResult`` (``t``, ``y``, ``message``, ``success``)
plus names: ``sol["x"]`` (a coordinate), ``sol["x_dot"]`` (its flow),
``sol["lambda_1"]`` (a multiplier), and for network elements
``sol.voltage(name)``, ``sol.current(name)``, ``sol.force(name)``,
``sol.velocity(name)`` (element name, or a node name for its potential).

>>> import sympy as sp
>>> from netdyn import LagrangianModel, coordinates, t, simulate
>>> x, = coordinates("x,")
>>> sol = simulate(LagrangianModel([x], T=x.diff(t)**2/2, V=x**2/2), (0, 1), q0={"x": 1})
>>> bool(abs(sol.energy() - 0.5).max() < 1e-7)
True
"""
from __future__ import annotations

import functools

import numpy as np
import sympy as sp

from netdyn.errors import ModelError
from netdyn.lagrange.equations import internalize
from netdyn.numerics.results import bodies
from netdyn.numerics.results.bookkeeping import cumulative, energy_report
from netdyn.numerics.functions.energy import dissipated_power, port_effort, port_flow, stored_energy, supplied_power
from netdyn.numerics.results.index import ResultIndex
from netdyn.numerics.results.quantities import quantity
from netdyn.numerics.results.reactions import reaction
from netdyn.numerics.results.trajectory import Trajectory  # noqa: F401  (documented attribute type)
from netdyn.symbols import t as T_SYM

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # names for the hints only (annotations are not evaluated)
    from netdyn.hints import Array, PathArg
    from collections.abc import Sequence
    from typing import IO, Any
    from netdyn.numerics.results.bookkeeping import EnergyReport
    from netdyn.lagrange.model import LagrangianModel


def _nan_max(a, b):
    """``max`` in which NaN wins (Python's ``max(0.0, nan)`` is 0.0: a NaN residual must show)."""
    return a if a != a else b if b != b else (a if a > b else b)


class Solution:
    """Trajectories ``q``, ``f``, accelerations and multipliers at the output times ``t``.

    >>> import netdyn
    >>> from netdyn import LagrangianModel, coordinates, t
    >>> x, = coordinates("x,")
    >>> sol = netdyn.simulate(LagrangianModel([x], T=x.diff(t)**2/2, V=x**2/2), (0, 1), q0={"x": 1.0})
    >>> type(sol).__name__, sol.q.shape, round(float(sol["x"][-1]), 6)     # cos(1)
    ('Solution', (1, 1001), 0.540302)
    >>> sol.method, [name for name, _ in sol.method.declined]
    ('projection', ['linear', 'circuit'])

    Attributes
    ----------
    t : (K,) ndarray — output times
    q, f, acc : (n, K) ndarray — displacements, flows, their rates (rows in ``coordinate_names`` order)
    lam, mu : (m1, K), (m2, K) ndarray — multipliers of displacement and flow constraints
    y : (2n, K) ndarray — ``[q; f]`` as in scipy's ``OdeResult``
    method : str — the path taken (``"linear"``, ``"projection"``, ``"ida"``, ...); ``method.reason`` says why,
        ``method.declined`` lists the paths that declined first (:mod:`netdyn.numerics.paths`)
    nsteps : int or None — accepted steps (None where the integrator does not report them)
    message, success, status — as in ``OdeResult``
    work : dict or None — energy dissipated and supplied since t0, integrated with the state
    model, compiled, p — the model, its compiled functions and the parameter values used

    Methods
    -------
    ``sol[name]`` (coordinate, ``name_dot``, ``name_ddot``, multiplier), ``evaluate(expr)``,
    ``energy()``, ``power_balance()``, ``energy_report()``, ``constraint_residual()``,
    ``reaction(joint)``, ``through``/``across`` and their physical names ``current``, ``voltage``,
    ``force``, ``velocity``, ``torque``, ``angular_velocity``, ``plot(*names)``, ``series(spec)``,
    ``series_names()``, ``to_pandas()`` (a ``DataFrame`` of every series, with units).

    A read costs its own output, not the network: the first read makes the solution's
    :attr:`result_index` (names → rows, node → its ports from ground, port → the elements acting on it;
    :mod:`netdyn.numerics.results.index`), once, in time linear in the network, and every read after it
    looks its rows up there (reading every node voltage of a 10^5-node RC ladder takes about half as long
    as simulating it).
    """

    t: Array
    q: Array
    f: Array
    lam: Array
    mu: Array
    method: str
    message: str
    status: int
    success: bool
    nsteps: int | None
    work: dict[str, Array] | None

    def __init__(self, model: LagrangianModel, compiled: Any, p: Any, trajectory: Trajectory, method: str) -> None:
        self.model, self.compiled, self.p = model, compiled, p
        self._init_trajectory(trajectory, method)

    def _init_trajectory(self, trajectory, method):
        self.trajectory = trajectory
        self.method = method
        self.t = trajectory.t
        self.q, self.f = trajectory.q, trajectory.f
        self.lam, self.mu = trajectory.lam, trajectory.mu
        self.message = trajectory.message
        self.status = trajectory.status
        self.success = trajectory.status >= 0
        self.nsteps = trajectory.nsteps
        self.work = trajectory.work  # energy dissipated and supplied since t0, integrated with the state
        self._cache = {}
        self._index = None
        self._saved = None  # {canonical name: values} when a save= list kept only those (see keep_only)

    @property
    def result_index(self) -> ResultIndex:
        """Where every named quantity lives (:class:`~netdyn.numerics.results.index.ResultIndex`): made on the
        first read, in time linear in the network, so that each read costs only its own output."""
        if self._index is None:
            self._index = self._make_index()
        return self._index

    def _make_index(self):
        return ResultIndex.of_model(self.model)

    @property
    def acc(self) -> Array:
        """Rates of the flows, ``(n, K)`` (computed on first use where the integrator deferred them)."""
        return self.trajectory.accelerations()

    # ----------------------------------------------------------------- scipy-like
    @property
    def y(self) -> Array:
        """State ``[q; f]`` with one column per output time (as ``OdeResult.y``)."""
        return np.vstack([self.q, self.f])

    @property
    def multipliers(self) -> dict[str, Array]:
        """Multiplier trajectories by name: ``{"lambda_1": array, "mu_1": array, ...}``."""
        return dict(zip(self.multiplier_names, list(self.lam) + list(self.mu)))

    @property
    def coordinate_names(self) -> list[str]:
        return self.model.coordinate_names

    @property
    def multiplier_names(self) -> list[str]:
        return [s.func.__name__ for s in self.model.lambdas + self.model.mus]

    def __getitem__(self, name: str | sp.Expr) -> Array:
        if not isinstance(name, str):
            name = getattr(getattr(name, "func", None), "__name__", None) or str(name)
        if self._saved is not None:
            return self._saved_value(name)
        index = self.result_index
        row = index.coordinates.get(name)
        if row is not None:
            return self.q[row]
        for suffix in ("_dot", "_ddot"):
            if name.endswith(suffix):
                row = index.coordinates.get(name[:-len(suffix)])
                if row is not None:
                    return self.f[row] if suffix == "_dot" else self.acc[row]
        mult = index.multipliers.get(name)
        if mult is not None:
            return (self.lam if mult[0] == "lam" else self.mu)[mult[1]]
        joint = self._joint_coordinate(name)
        if joint is not None:
            return joint
        spec = self._front_end_state(name)
        if spec is not None:
            return self.series(spec)
        raise KeyError(f"no coordinate or multiplier {name!r}; coordinates are {self.coordinate_names}, "
                       f"multipliers {sorted(index.multipliers)}")

    def _front_end_state(self, name):
        """The series a state name of the model's front end reads where it is no coordinate (a bond graph's
        ``p_<I>`` on the bond formulation: ``p(I)``; ``metadata["state_series"]``), else None."""
        lookup = self.model.metadata.get("state_series")
        return lookup(name) if lookup is not None else None

    def _joint_coordinate(self, name):
        """A planar joint's coordinate (``"J3"``, ``"theta_J3"``, with ``_dot``/``_ddot`` its rates) or a body's
        pose coordinate in the relative formulation, over time; ``None`` when the name is neither."""
        from netdyn.numerics.dae.initial import joint_table

        order = 0
        for suffix, k in (("_ddot", 2), ("_dot", 1)):
            if name.endswith(suffix) and name[: -len(suffix)] in joint_table(self.model):
                name, order = name[: -len(suffix)], k
                break
        entry = joint_table(self.model).get(name)
        if entry is None or name.endswith("[all]"):
            return None
        return self.evaluate(self._internal(sp.sympify(entry[2]).diff(T_SYM, order)))

    # ----------------------------------------------------------------- expressions over the trajectory
    def evaluate(self, expr: sp.Expr | str) -> Array:
        """Evaluate an expression of the model's internal symbols (q, q_dot, q_ddot, λ, μ, parameters, t).

        The expression is compiled over the symbols it contains only (their rows are found in the
        solution's index), so the cost is that of the expression, not of the model; it is evaluated on
        every output time at once (point by point where its functions do not take arrays).
        """
        return self._run(self._compile(expr))

    def _compile(self, expr):
        expr = sp.sympify(expr)
        key = ("expr", sp.srepr(expr))
        entry = self._cache.get(key)
        if entry is None:
            table = self._symbol_rows()
            used = sorted(expr.free_symbols, key=sp.default_sort_key)
            unknown = [s for s in used if s not in table]
            if unknown:
                raise ModelError(f"cannot evaluate {expr}: {sorted(map(str, unknown))} are neither coordinates, "
                                 "multipliers, parameters, inputs nor t")
            entry = (sp.lambdify(used, expr, modules="numpy", cse=True), tuple(table[s] for s in used))
            self._cache[key] = entry
        return entry

    def _symbol_rows(self):
        """Internal symbol -> (block, row) for :meth:`evaluate`, made once (kept on the index)."""
        index = self.result_index
        if index.symbols is None:
            eq, cm = self.compiled.eq, self.compiled
            table = {T_SYM: ("t", 0)}
            for block, symbols in (("q", eq.q), ("f", eq.f), ("acc", eq.a), ("lam", eq.lam), ("mu", eq.mu),
                                   ("p", cm.parameters), ("u", cm.inputs)):
                for i, s in enumerate(symbols):
                    table.setdefault(s, (block, i))
            index.symbols = table
        return index.symbols

    def _block(self, block):
        """The rows a block of internal symbols takes its values from (``"t"``: the times; ``"p"``: the
        parameter vector; ``"u"``: the model's inputs at every output time, computed once)."""
        if block == "t":
            return self.t
        if block == "p":
            return self.p.vector
        if block == "u":
            if "model inputs" not in self._cache:
                n = len(self.compiled.inputs)
                self._cache["model inputs"] = np.array([self.p.inputs(tt) for tt in self.t], dtype=float).T \
                    if self.t.size else np.zeros((n, 0))
            return self._cache["model inputs"]
        return self.acc if block == "acc" else getattr(self, block)  # (the rates computed only when asked for)

    def _run(self, entry):
        fn, rows = entry
        K = self.t.size
        args = [self._block(b) if b == "t" else self._block(b)[i] for b, i in rows]
        try:
            out = np.array(fn(*args), dtype=float)  # (a copy: an expression of one symbol returns its row)
            if out.shape == ():
                return np.full(K, float(out))
            if out.shape == (K,):
                return out
        except Exception:  # a function that takes no arrays: point by point below
            pass
        point = lambda k: [a[k] if np.ndim(a) == 1 else a for a in args]
        return np.array([fn(*point(k)) for k in range(K)], dtype=float)

    def _internal(self, expr):
        return internalize(self.model, expr)

    # ----------------------------------------------------------------- energy
    def energy(self) -> Array:
        """Total stored energy ``Σ f ∂T*/∂f − T* + V`` along the trajectory."""
        tree = getattr(self.compiled, "_tree", None)
        if tree is not None:  # an open tree on the recursive path: no symbolic energy to write
            return np.array([tree.energy(tt, self.q[:, k], self.f[:, k], self.p.vector) for k, tt in enumerate(self.t)])
        return self.evaluate(self._internal(stored_energy(self.model)))

    def power_balance(self) -> dict[str, Any]:
        """Stored energy, cumulative dissipated and supplied energy and the balance residual.

        ``residual = (E(t) − E(0)) + dissipated(t) − supplied(t)``, which is zero
        for an exact solution; ``relative`` divides its maximum by the largest
        energy involved.
        """
        E = self.energy()
        if self.work is not None:
            Wd, Ws = self.work["dissipated"], self.work["supplied"]
        else:
            Wd = cumulative(self.evaluate(self._internal(dissipated_power(self.model))), self.t)
            Ws = cumulative(self.evaluate(self._internal(supplied_power(self.model))), self.t)
        resid = (E - E[0]) + Wd - Ws
        scale = max(np.max(np.abs(E)), np.max(np.abs(Wd)), np.max(np.abs(Ws)), 1e-300)
        return {"stored": E, "dissipated": Wd, "supplied": Ws, "residual": resid,
                "relative": float(np.max(np.abs(resid)) / scale)}

    def energy_report(self) -> EnergyReport:
        """Per-element energy bookkeeping (:class:`netdyn.bookkeeping.EnergyReport`) of a network's solution."""
        return energy_report(self)

    def params_at(self, k: int) -> Any:
        """The parameter values at output ``k`` (``self.p``; a driven motion's solution changes them with time)."""
        return self.p

    def constraint_residual(self) -> dict[str, float]:
        """Max over time of |φ| (positions), |Φ_q f + Φ_t| (velocities) and |A f + a| (flows)."""
        cm = self.compiled
        pos = vel = flow = 0.0
        max = _nan_max  # noqa: A001 - Python's max(0.0, nan) is 0.0: a NaN residual must show
        for k, tt in enumerate(self.t):
            c = cm.constraints(tt, self.q[:, k], self.f[:, k], self.params_at(k))
            if cm.m1:
                pos = max(pos, float(np.max(np.abs(c.phi))))
                vel = max(vel, float(np.max(np.abs(c.Phi_q @ self.f[:, k] + c.Phi_t))))
            if cm.m2:
                flow = max(flow, float(np.max(np.abs(c.A @ self.f[:, k] + c.a))))
        return {"position": pos, "velocity": vel, "flow": flow}

    def reaction(self, joint: str) -> Array:
        """Reaction of a planar joint over time, shape ``(3, len(t))``: the force ``(Fx, Fy)`` that
        its ``body_a`` exerts on its ``body_b`` (global frame) and the moment about its ``point_b``
        (see :mod:`netdyn.inverse`)."""
        key = ("reaction", joint)
        if key not in self._cache:
            self._cache[key] = reaction(self, joint)
        return self._cache[key]

    # ----------------------------------------------------------------- element quantities
    def through(self, name: str) -> Array:
        """Through variable (current, force, torque) of an element, first terminal to second; of a bond-graph
        element or bond, its flow ``f(X)`` (see :meth:`_front_end_quantity`)."""
        out = self._front_end_quantity(name, "through")
        return out if out is not None else self._element_quantity(name, "through")

    def across(self, name: str) -> Array:
        """Across variable (voltage, velocity, angular velocity): of an element, or of a node vs ground.

        A node's value is summed along the ports of its path from ground, which the solution's index
        holds (:attr:`result_index`): a read costs its path, not the network.
        """
        if self._saved is not None:
            return self._saved_value(f"v({name})")
        index = self.result_index
        if name in index.elements:
            return self._element_quantity(name, "across")
        node = index.nodes.get(name)
        if node is None:
            out = self._front_end_quantity(name, "across")
            if out is not None:
                return out
            raise KeyError(f"no element or node named {name!r}")
        out = None
        for el, k, sign in node[1]:
            if out is None:
                out = -sign * self._port_quantity(el, k, "across")  # (0 − x, without the zeros)
            else:
                out -= sign * self._port_quantity(el, k, "across")
        return np.zeros_like(self.t, dtype=float) if out is None else out

    voltage = velocity = across
    current = force = torque = through

    def _front_end_quantity(self, name, which):
        """``through``/``across`` of a name the model's front end defines instead of a network element: a bond
        graph's element or bond, whose through variable is its flow ``f(X)`` and across variable its effort
        ``e(X)`` (``metadata["through_across"]`` names the series); None for any other name or model."""
        index = self.result_index
        if name in index.elements or name in index.nodes:
            return None
        spec = self._front_end_spec(name, which)
        return None if spec is None else self.series(spec)

    def _front_end_spec(self, name, which):
        md = self.model.metadata
        pair, signal = md.get("through_across"), md.get("signal")
        if pair is None or signal is None:
            return None
        spec = f"{pair[0] if which == 'through' else pair[1]}({name})"
        return spec if signal(spec) is not None else None
    def angular_velocity(self, name: str) -> Array:
        """Angular velocity of a body of a mechanism (global frame: ``(3, K)`` spatial, ``(K,)`` planar), else
        the across variable of a 1-D rotational element or node (:meth:`across`)."""
        if bodies.is_body(self.model, name):
            return bodies.angular_velocity(self, name)
        return self.across(name)

    def pose(self, body: str) -> tuple[Array, Array]:
        """``(position, R)`` of a body over time: ``(3, K)`` and ``(3, 3, K)`` spatial (origin of the body frame),
        ``(2, K)`` and ``(2, 2, K)`` planar (centre of mass); :mod:`netdyn.numerics.results.bodies`."""
        return bodies.pose(self, body)

    def acceleration(self, body: str) -> tuple[Array, Array]:
        """``(linear, angular)`` acceleration of a body over time, global frame."""
        return bodies.acceleration(self, body)

    def _element_quantity(self, name, which):
        if self._saved is not None:
            return self._saved_value(f"{'v' if which == 'across' else 'i'}({name})")
        el = self.result_index.element(name)
        sign = getattr(el, "through_report_signs", el.report_signs)[0] if which == "through" else el.report_signs[0]
        return sign * self._port_quantity(name, 0, which)

    def _port_quantity(self, name, k, which):
        key = ("port", name, k, which)
        entry = self._cache.get(key)
        if entry is None:
            kind = self.model.metadata["elements"][name]["kinds"][k]
            if (which == "through") == (kind == "through"):
                expr = port_flow(self.model, name, k)
            else:
                expr = port_effort(self.model, name, k, self.result_index.sharing.get((name, k)))
            entry = self._cache[key] = self._compile(self._internal(expr))
        return self._run(entry)

    # ----------------------------------------------------------------- save= (SPICE's .save)
    def saved_key(self, spec: str) -> str:
        """The canonical name of a series: ``v(X)``, ``i(X)`` (``f(X)`` is a through value too) with ``X``
        spelled as the network spells it (netlists match case-insensitively), or a coordinate's name."""
        spec = str(spec).strip()
        if len(spec) > 3 and spec[1] == "(" and spec.endswith(")") and spec[0].lower() in "vif":
            kind, inner = ("v" if spec[0].lower() == "v" else "i"), spec[2:-1].strip()
            return f"{kind}({self._spelled(inner)})"
        return spec

    def _spelled(self, name):
        index = self.result_index
        if name in index.elements or name in index.nodes:
            return name
        lower = self._cache.get("lower names")
        if lower is None:
            lower = self._cache["lower names"] = {str(k).lower(): k for k in (*index.nodes, *index.elements)}
        return lower.get(name.lower(), name)

    def keep_only(self, save: Sequence[str]) -> Solution:
        """Keep the series named in ``save`` (``"v(out)"``, ``"i(L1)"``, coordinate names, ``x_dot``,
        multipliers) and nothing else: each is computed now, the state arrays are dropped, and a read of
        anything else is an :class:`~netdyn.errors.UnsavedError` saying to add it to ``save=``. Returns the
        solution. ``simulate(..., save=[...])`` calls it (the linear path keeps only the rows those series
        need while it integrates)."""
        from netdyn.numerics.results.store import Unsaved
        names = list(dict.fromkeys(self.saved_key(nm) for nm in save))
        values = {nm: np.array(self.series(nm), dtype=float) for nm in names}
        K = self.t.size
        self.q = Unsaved(np.shape(self.q)[:1] + (K,), "q", names)  # type: ignore[assignment]  # an array stand-in that names what was not saved
        self.f = Unsaved(np.shape(self.f)[:1] + (K,), "f", names)  # type: ignore[assignment]  # an array stand-in that names what was not saved
        self.lam = Unsaved(np.shape(self.lam)[:1] + (K,), "lam", names)  # type: ignore[assignment]  # an array stand-in that names what was not saved
        self.mu = Unsaved(np.shape(self.mu)[:1] + (K,), "mu", names)  # type: ignore[assignment]  # an array stand-in that names what was not saved
        tr = self.trajectory
        tr.q, tr.f, tr.lam, tr.mu = self.q, self.f, self.lam, self.mu
        tr.acc = Unsaved(self.q.shape, "acc", names)
        self._cache = {k: v for k, v in self._cache.items() if k == "lower names"}
        self._saved, self._saved_names = values, names
        return self

    def _saved_value(self, spec):
        key = self.saved_key(spec)
        out = self._saved.get(key)
        if out is None:
            from netdyn.errors import UnsavedError
            raise UnsavedError(f"{key} was not saved (save={self._saved_names}); add {key!r} to save= (or the "
                               "netlist's .save card, --save on the command line) to keep it")
        return out

    # ----------------------------------------------------------------- plots
    def plot(self, *names: str, path: PathArg | IO[bytes] | None = None, ax: Any = None, title: str | None = None,
             max_curves: int = 10) -> Any:
        """Plot coordinates or element quantities (``"v(R1)"``, ``"i(L1)"``, ``"x"``) against time.

        One axis per physical quantity (volts and amperes, metres and radians apart), labelled with
        its SI unit and engineering prefixes on the ticks; at most ``max_curves`` curves an axis (the
        legend says "showing 10 of 150"). ``ax`` puts everything on one given axis instead.
        Returns the axes; ``path`` writes a PNG.
        """
        import matplotlib
        if path is not None:
            matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from netdyn.numerics.results.timeplot import time_plot
        names = names or tuple(self.coordinate_names if self._saved is None else self._saved_names)
        groups: dict[tuple[str, str], list[tuple[str, Any]]] = {}
        for nm in names:
            groups.setdefault(quantity(None, nm, self.result_index), []).append((nm, functools.partial(self.series, nm)))   # read if drawn
        axes = time_plot(self.t, groups, ax=ax, title=title, max_curves=max_curves)
        figure = axes[0].figure
        if path is not None:
            figure.savefig(path, dpi=110, bbox_inches="tight")
            plt.close(figure)
        return axes if ax is None else ax

    def series(self, spec: str) -> Array:
        """A named series: a coordinate/multiplier name, ``v(X)``/``i(X)`` for an element or node, or a name the
        model's front end defines (``metadata["signal"]``: a bond graph's ``e(X)``, ``f(X)``, ``p(X)``, ``q(X)``)."""
        if self._saved is not None:
            return self._saved_value(spec)
        signal = self._signal()
        expr = signal(spec) if signal is not None else None
        if expr is not None:
            return self.evaluate(self._internal(sp.sympify(expr)))
        return self._named_series(spec)

    def _named_series(self, spec):
        """A coordinate/multiplier name or ``v(X)``/``i(X)`` (no front end's own names)."""
        if len(spec) > 3 and spec[1] == "(" and spec.endswith(")"):
            kind, inner = spec[0].lower(), spec[2:-1]
            if kind == "v":
                return self.across(inner)
            if kind in ("i", "f"):
                return self.through(inner)
            raise ModelError(f"unknown series {spec!r}; use v(name) or i(name)")
        return self[spec]

    def _signal(self):
        """The front end's own series names (a bond graph's), or ``None``."""
        return self.model.metadata.get("signal")

    def series_names(self) -> list[str]:
        """Every name :meth:`series` reads, in the order of :meth:`to_pandas`' columns: the coordinates, their
        flows (``_dot``), the multipliers, the planar joint coordinates and body poses that are not
        coordinates themselves (with ``_dot``), every node's ``v(node)`` and every element's ``v(name)`` and
        ``i(name)`` (``f(name)`` for a force or torque)."""
        if self._saved is not None:
            return list(self._saved_names)
        index = self.result_index
        names = list(index.coordinates) + [f"{c}_dot" for c in index.coordinates] + list(index.multipliers)
        for name in self._pose_names():
            names += [name, f"{name}_dot"]
        return names + index.quantity_names() + self._front_end_names()

    def _front_end_names(self):
        """The named signals of the model's front end (a bond graph's ``e(X)``, ``f(X)``, ``p(X)``, ``q(X)``,
        ``E(X)``: ``metadata["signal_names"]``), [] for a network."""
        names = self.model.metadata.get("signal_names")
        return list(names()) if names is not None else []

    def _pose_names(self):
        """Joint coordinates and body poses of a planar model that are not coordinates (``sol[name]`` reads them)."""
        from netdyn.numerics.dae.initial import joint_table
        coordinates = self.result_index.coordinates
        planar = self.model.metadata.get("planar")
        joints = planar.joints if planar else {}  # (a joint's bare name repeats its first coordinate)
        return [name for name, (_, k, _) in joint_table(self.model).items()
                if k is not None and name not in joints and name not in coordinates]

    def to_pandas(self, names: Sequence[str] | None = None) -> Any:
        """The solution as a pandas ``DataFrame``: indexed by time (``"t"``), one column per named series
        (``names``, default :meth:`series_names`: every coordinate and flow, multiplier, joint coordinate,
        node and element quantity); ``df.attrs["units"]`` and ``df.attrs["quantities"]`` give each
        column's SI unit and what it measures. Each column costs its own output (the names are found in
        the solution's index), so the table of a large network is linear in its size.

        pandas, not xarray: the series share one time axis, which is a ``DataFrame`` exactly, and pandas is
        the table everyone has (see :mod:`netdyn.frames`). It is optional: ``pip install netdyn[frames]``.

        >>> import netdyn
        >>> from netdyn.components.electrical import VoltageSource, Resistor, Capacitor
        >>> net = netdyn.Network("RC")
        >>> _ = net.add(VoltageSource("V1", "a", "0", 1.0), Resistor("R1", "a", "b", 1.0), Capacitor("C1", "b", "0", 1.0))
        >>> df = netdyn.simulate(net, (0, 1)).to_pandas()
        >>> list(df.columns)
        ['q_R1', 'q_R1_dot', 'v(a)', 'v(b)', 'v(V1)', 'i(V1)', 'v(R1)', 'i(R1)', 'v(C1)', 'i(C1)']
        >>> round(float(df["v(b)"].iloc[-1]), 6), df.attrs["units"]["v(b)"], df.attrs["units"]["q_R1_dot"]  # 1 - 1/e
        (0.632121, 'V', 'A')
        """
        from types import SimpleNamespace

        from netdyn.frames import require_pandas, time_frame
        from netdyn.graph.gcpause import paused_gc
        require_pandas()  # before any column is computed
        names = self.series_names() if names is None else list(names)
        index = self.result_index
        lookup = SimpleNamespace(coordinates=set(index.coordinates) | set(self._pose_names()), domain=index.domain)
        with paused_gc():  # a column's arrays are garbage at once: reference counting frees them, no collection
            return time_frame(self.t, names, self.series, {n: quantity(None, n, lookup) for n in names},
                              name=self._title())

    def _title(self):
        return self.model.name

    def __repr__(self):
        return f"Solution({self.model.name!r}, {len(self.t)} points, t = {self.t[0]:.4g}..{self.t[-1]:.4g}, " \
               f"method={self.method})"
