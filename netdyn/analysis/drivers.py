"""Drivers of a mechanism: motions given as text parsed safely, their constraint rows, and the driven
model compiled once per set of drivers with the motions as numbers.

Drivers map a joint name (its first joint coordinate: ``theta_b − theta_a`` for a planar revolute,
the slide ``s`` for a prismatic joint, ``"joint[rz]"`` for a component of a spatial joint) or a
coordinate name to a motion (:mod:`netdyn.lagrange.motion`): a number, a sympy expression of
``netdyn.t``, a string such as ``"0.5*sin(2*t)"`` (read by the restricted parser, never evaluated:
:func:`driver_motions`), a callable ``t -> (q, q̇, q̈)`` or three arrays ``(q, q̇, q̈)`` over the times.

In the driven model (:func:`driven_model`) each driver's row is ``coordinate − m(t)`` (or a joint's prescribed-component row) with the motion
written as the parabola ``m(t) = m_q + m_v (t − m_t) + m_a (t − m_t)² / 2`` in four parameters per
driver. At a sample time ``t_k`` the parameters take the driver's ``(q, q̇, q̈)`` there and ``m_t = t_k``,
so ``φ``, ``Φ_t`` and ``γ`` of the compiled model are exact at ``t_k`` whatever form the motion came in
(an expression, a callable, arrays). The compiled model does not depend on the motions: it is made once
per model and set of driver names (cached on the model), so a second call with other motions — or a
sweep of trajectories — does no symbolic work.

For a rotation driven through ``2 w_E v_E`` (:func:`netdyn.graph.spatial_terms.rotation_branch`) the
model also gives ``w_E² − v_E²``, the cosine of the error about the driven axis: positive only on the
prescribed branch.

>>> import numpy as np
>>> from netdyn import Network
>>> from netdyn.components.planar import RigidBody, Revolute
>>> net = Network()
>>> _ = net.add(RigidBody("crank", 1, 0.1), Revolute("O", "ground", (0, 0), "crank", (-0.5, 0)))
>>> d = driven_model(net.model(), ["O"])
>>> p = d.params_at({"O": (np.array([0.3]), np.array([2.0]), np.array([0.0]))}, np.array([1.0]), 0)
>>> c = d.compiled.constraints(1.0, np.array([0.5, 0.0, 0.3]), np.zeros(3), p)
>>> float(c.phi[-1]), float(c.Phi_t[-1])
(0.0, -2.0)
"""
from __future__ import annotations

import numpy as np
import sympy as sp

from netdyn.errors import ModelError
from netdyn.graph.network import as_model
from netdyn.graph.spatial import driver_constraint
from netdyn.lagrange.exprtext import parse_expression, symbol_table
from netdyn.numerics.dae.structure import with_constraints, without_constraints
from netdyn.numerics.functions.compiled import _lambdify, compile_model
from netdyn.numerics.results.solution import Solution
from netdyn.symbols import as_expr, t as T_SYMBOL
from netdyn.validate import NUMBER


def driver_motions(system, drivers, params=None):
    """``drivers`` with every motion given as text parsed into an expression of ``t`` and the parameters.

    The text is read by :func:`~netdyn.lagrange.exprtext.parse_expression` with ``t``, the model's
    parameters and the names in ``params`` declared (``strict``): anything else — an undeclared name, a
    call of a function that is not a math function, attribute access, ``__import__`` — is a
    :class:`~netdyn.errors.ParseError` naming the driver. SPICE numbers (``"1k"``) stay numbers.

    >>> from netdyn import LagrangianModel, coordinates, t
    >>> x, = coordinates("x,")
    >>> driver_motions(LagrangianModel([x], T=x.diff(t)**2/2), {"x": "0.5*sin(2*t)", "y": 1.0})
    {'x': 0.5*sin(2*t), 'y': 1.0}
    >>> driver_motions(LagrangianModel([x], T=x.diff(t)**2/2), {"x": "__import__('os').getcwd()"})
    Traceback (most recent call last):
    ...
    netdyn.errors.ParseError: driver x: '__import__' is not allowed in an expression (names starting with an underscore are refused)
    """
    drivers = dict(drivers)
    text = {k: v for k, v in drivers.items() if isinstance(v, str) and not NUMBER.match(v.strip())}
    if not text:
        return drivers
    model = as_model(system)
    declared = [T_SYMBOL] + [sp.Symbol(k) if isinstance(k, str) else k for k in model.parameters] + \
        [sp.Symbol(k) if isinstance(k, str) else k for k in (params or {})]
    table = symbol_table(*declared)
    names = {str(s) for s in declared}
    for k, v in text.items():
        e = parse_expression(v, table, where=f"driver {k}", names=names, strict=True)
        drivers[k] = e.xreplace({s: T_SYMBOL for s in e.free_symbols if str(s) == "t"})
    return drivers


def driver_constraints(model, drivers):
    """``(expressions, labels)`` of the constraints ``coordinate(joint) − motion(t) = 0``."""
    planar = model.metadata.get("planar")
    jc = planar.joint_coordinates if planar else {}
    exprs, labels = [], []
    spatial = model.metadata.get("spatial")
    for name, motion in dict(drivers).items():
        if spatial and name.split("[")[0] in spatial.joints:
            exprs.append(driver_constraint(model, name, motion))
            labels.append(f"driver {name}")
            continue
        if name in jc:
            if not jc[name]:
                raise ModelError(f"joint {name!r} has no coordinate to drive (a weld); drive another joint")
            coordinate = jc[name][0]
        elif name in model.coordinate_names:
            coordinate = model.coordinate(name)
        else:
            raise ModelError(f"driver {name!r} names neither a joint nor a coordinate; the joints are "
                             f"{sorted(jc)}, the coordinates {model.coordinate_names}")
        exprs.append(coordinate - as_expr(motion))
        labels.append(f"driver {name}")
    return exprs, labels


def with_drivers(model, drivers):
    """A copy of ``model`` with the driver constraints appended (labels ``"driver <name>"``)."""

    exprs, labels = driver_constraints(model, drivers)
    return with_constraints(model, list(model.constraints) + exprs, list(model.constraint_labels) + labels)



class DrivenModel:
    """The driven model, its compiled functions, and where each driver's parameters sit."""

    def __init__(self, base, names, params=None):
        self.base, self.names = base, list(names)
        self.symbols = [sp.symbols(f"_drv{k}_a _drv{k}_q _drv{k}_t _drv{k}_v") for k in range(len(self.names))]
        motions = {}
        for name, (a, q, tk, v) in zip(self.names, self.symbols):
            dt = T_SYMBOL - tk
            motions[name] = q + v * dt + a * dt ** 2 / 2
        exprs, labels = driver_constraints(base, motions)
        self.model = with_constraints(base, list(base.constraints) + exprs, list(base.constraint_labels) + labels)
        self.compiled = compile_model(self.model)
        self._motions = motions
        self._branch = None
        self._params = params
        self._set_index()

    def _set_index(self):
        names = [str(s) for s in self.compiled.parameters]
        self.index = np.array([[names.index(str(s)) for s in group] for group in self.symbols],
                              dtype=int).reshape(-1, 4)

    def without(self, drop):
        """The same drivers on the model with the constraints ``drop`` (redundant ones) left out."""
        out = object.__new__(DrivenModel)
        out.base, out.names, out.symbols, out._motions = self.base, self.names, self.symbols, self._motions
        out.model = without_constraints(self.model, drop)
        out.compiled = compile_model(out.model)
        out._branch, out._params = None, self._params
        out._set_index()
        return out

    def parameter_vector(self, params=None):
        """The parameters of the base model (``params`` over its defaults) with the drivers' at zero."""
        cm = self.compiled
        base_names = {str(s) for s in cm.parameters} - {str(s) for g in self.symbols for s in g}
        given = {k: v for k, v in (params or {}).items() if str(k) in base_names}
        given.update({str(s): 0.0 for g in self.symbols for s in g})
        return cm.parameter_vector(given)

    def params_at(self, samples, times, k, base=None):
        """Parameters with every driver's motion at sample ``k`` of ``samples`` (name -> (q, q̇, q̈))."""
        base = self.parameter_vector(self._params) if base is None else base
        vec = base.vector.copy()
        for row, name in zip(self.index, self.names):
            q, qd, qdd = samples[name]
            vec[row] = (qdd[k], q[k], times[k], qd[k])
        return base.replace(vec)

    def params_with(self, base, values, tt):
        """Parameters with driver values ``values`` (in ``names`` order) held at time ``tt`` (rates zero)."""
        vec = base.vector.copy()
        for row, v in zip(self.index, values):
            vec[row] = (0.0, v, tt, 0.0)
        return base.replace(vec)

    def driver_values(self, p):
        """The drivers' prescribed values held in ``p`` (``m_q`` of each)."""
        return p.vector[self.index[:, 1]].copy()

    # ------------------------------------------------------------------ branches of prescribed rotations
    def branch_function(self):
        """``g(t, q, p) -> cos of each rotation driver's error`` (empty when no driver is a rotation
        through ``2 w_E v_E``), with the labels; built on first use."""
        if self._branch is None:
            spatial = self.model.metadata.get("spatial")
            terms = []
            if spatial is not None:
                from netdyn.graph.spatial_terms import rotation_branch

                for name in self.names:
                    wv = rotation_branch(self.model, name, self._motions[name])
                    if wv is not None:
                        terms.append((name, *wv))
            if not terms:
                self._branch = ([], None)
            else:
                cm = self.compiled
                eq = cm.eq
                sub = {c: s for c, s in zip(eq.coordinates, eq.q)}
                exprs = [(sp.sympify(w) ** 2 - sp.sympify(v) ** 2).xreplace(sub) for _, w, v in terms]
                fn = _lambdify([T_SYMBOL, eq.q, cm.parameters, cm.inputs], exprs)
                self._branch = ([n for n, _, _ in terms],
                                lambda tt, q, p: np.asarray(fn(tt, q, p.vector, p.inputs(tt)), dtype=float))
        return self._branch


class DrivenSolution(Solution):
    """A :class:`~netdyn.numerics.results.solution.Solution` of a driven motion: its drivers' parameters take
    their values at each output time (``params_at(k)``), in expressions and in the constraint residual."""

    def __init__(self, driven, samples, p0, trajectory, method):
        self.driven, self.driver_samples, self._p0 = driven, samples, p0
        super().__init__(driven.model, driven.compiled, driven.params_at(samples, trajectory.t, 0, p0) if
                         trajectory.t.size else p0, trajectory, method)

    def params_at(self, k):
        return self.driven.params_at(self.driver_samples, self.t, k, self._p0)

    def _block(self, block):
        if block != "p":
            return super()._block(block)
        if "driven p" not in self._cache:  # parameters × times: the drivers' rows change along the motion
            self._cache["driven p"] = np.array([self.params_at(k).vector for k in range(self.t.size)]).T
        return self._cache["driven p"]


def driven_model(base, names, params=None):
    """The :class:`DrivenModel` of ``base`` with drivers ``names`` (cached on ``base``)."""
    cache = base._compiled.setdefault("driven", {})
    key = tuple(names)
    if key not in cache:
        cache[key] = DrivenModel(base, names)
    out = cache[key]
    out._params = params
    return out
