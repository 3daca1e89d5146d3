"""Operating points and linearization on the constraint manifold.

:func:`equilibrium` solves ``h(q, f, u) + Φ_qᵀλ + Aᵀμ = 0`` with ``φ(q) = 0`` and
the velocity-level constraints for the displacements (and, for steady motions,
chosen flows). :func:`linearize` gives, at an operating point,

* the minimal state space on the constraint manifold: independent coordinates
  chosen by coordinate partitioning of Φ_q (positions) and of ``[Φ_q; A]``
  (flows, so nonholonomic systems keep more positions than velocities);
  flows without inertia (a circuit's capacitor currents) are eliminated as
  algebraic variables;
* the descriptor form ``E ẋ = A x + B u`` in all of ``δq, δf, δq̈, δλ, δμ``.

Inputs are undefined functions of t of a model, or source elements of a
network (by name). Outputs are coordinate names (``"x"``, ``"x_dot"``),
element quantities (``"v(R1)"``, ``"i(L1)"``) or sympy expressions.

>>> import sympy as sp
>>> from netdyn import LagrangianModel, coordinates, t
>>> x, = coordinates("x,")
>>> F = sp.Function("F")(t)
>>> lin = linearize(LagrangianModel([x], T=2*x.diff(t)**2/2, V=8*x**2/2, efforts={x: F}), {"x": 0},
...                 inputs=["F"], outputs=["x"])
>>> lin.natural_frequencies(), float(lin.static_gain()[0, 0])
(array([2.]), 0.125)
"""
from __future__ import annotations

import copy

import numpy as np
import scipy.linalg as sla
import sympy as sp
from scipy.optimize import least_squares

from netdyn.lagrange.equations import internalize
from netdyn.errors import ModelError, OperatingPointError, OptionError, SingularSystemError
from netdyn.analysis.linear import Descriptor, StateSpace
from netdyn.analysis.slow import slow_subsystem
from netdyn.numerics.functions.compiled import compile_model
from netdyn.numerics.integrators.options import check_formulation
from netdyn.symbols import t
from netdyn.graph.network import Network
from netdyn.graph.assembly import fill as stored_assembly
from netdyn.numerics.dae.initial import consistent_initial_conditions
from netdyn.numerics.functions.energy import port_efforts

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # names for the hints only (annotations are not evaluated)
    from netdyn.bondgraph.graph import BondGraph
    from netdyn.lagrange.model import LagrangianModel
    from netdyn.hints import ArrayLike, Formulation, Initial, Params
    from collections.abc import Mapping, Sequence
    import sympy


class OperatingPoint:
    """Displacements ``q``, flows ``f``, input values ``u`` and multipliers ``ν = [λ; μ]`` of a steady state;
    made by :func:`equilibrium`, taken by :func:`linearize`.

    >>> import sympy as sp
    >>> from netdyn import LagrangianModel, coordinates, t
    >>> x, = coordinates("x,")
    >>> model = LagrangianModel([x], T=2*x.diff(t)**2/2, V=8*x**2/2, efforts={x: sp.Function("F")(t)})
    >>> op = equilibrium(model, inputs=["F"], u={"F": 4.0})
    >>> op
    OperatingPoint({'x': 0.5, 'x_dot': 0.0}, u={'F': 4.0})
    >>> linearize(op, inputs=["F"], outputs=["x"]).natural_frequencies()
    array([2.])
    """

    def __init__(self, model: LagrangianModel, q: ArrayLike, f: ArrayLike, u: Mapping[str, float],
                 nu: ArrayLike) -> None:
        self.model, self.q, self.f, self.u, self.nu = model, np.asarray(q), np.asarray(f), dict(u), np.asarray(nu)

    def as_dict(self) -> dict[str, float]:
        """``{name: value}`` for the displacements and (``name_dot``) the flows."""
        names = self.model.coordinate_names
        out = {n: float(v) for n, v in zip(names, self.q)}
        out.update({n + "_dot": float(v) for n, v in zip(names, self.f)})
        return out

    def __repr__(self):
        return f"OperatingPoint({self.as_dict()}, u={self.u})"


# ------------------------------------------------------------------------------------------ inputs

def with_inputs(system, inputs, formulation=None):
    """The model of ``system`` with the named inputs as undefined functions of t, and their nominal values.

    For a network, each name is a source element whose value becomes the input
    function of the same name; for a model, each name must be one of its inputs.
    """
    inputs = list(inputs or [])
    if hasattr(system, "with_inputs"):  # another front end (a BondGraph) follows the same protocol
        return system.with_inputs(inputs, formulation)
    if hasattr(system, "derive"):
        check_formulation(system, formulation)  # a model's coordinates are fixed: formulation= cannot act
        known = [str(s) for s in system.derive().inputs]
        for name in inputs:
            if name not in known:
                raise ModelError(f"{name!r} is not an input of the model; its inputs (undefined functions of t) "
                                 f"are {known or 'none'}")
        return system, {}
    net = Network(system.name)
    nominal = {}
    for body in system.bodies.values():
        net.add(body)
    for name, el in system.elements.items():
        if name in inputs:
            if not el.is_source:
                raise ModelError(f"{name} is not a source element; inputs are sources of the network or "
                                 "undefined functions of t of a model")
            value = el.values["value"]
            if value.free_symbols & {t} or value.atoms(sp.core.function.AppliedUndef):
                nominal[name] = float(value.subs(t, 0))
            else:
                nominal[name] = float(value)
            el = copy.copy(el)
            el.values = dict(el.values)
            el.values["value"] = sp.Function(name)(t)
        net.add(el)
    missing = [n for n in inputs if n not in system.elements]
    if missing:
        raise ModelError(f"no source element {missing[0]!r} in the network; its sources are "
                         f"{[n for n, e in system.elements.items() if e.is_source]}")
    model = net.model(formulation=formulation)
    model.metadata["input_functions"] = [sp.Symbol(name) for name in inputs]  # as the derivation names inputs
    return model, nominal


# ------------------------------------------------------------------------------------------ Jacobians

class _Jacobians:
    """Lambdified residuals and Jacobians of one model, made once (cached on the model)."""

    def __init__(self, model):
        eq = model.derive()
        self.eq, self.cm = eq, compile_model(model)
        self.nu = eq.lam + eq.mu
        R = sp.Matrix(eq.lagrange_rows())
        phi = sp.Matrix(eq.phi) if eq.phi else sp.zeros(0, 1)
        vel = [sp.S.Zero] * len(eq.phi)
        for (j, i), v in eq.Phi_q.items():
            vel[j] += v * eq.f[i]
        vel = [v + pt for v, pt in zip(vel, eq.Phi_t)] + eq.flow_constraint_rows()
        V = sp.Matrix(vel) if vel else sp.zeros(0, 1)
        # a named input that no equation contains (a source driving a dead end in loop charges) still counts:
        # outputs (its own voltage) may depend on it
        # in the order the caller named them (``inputs=[...]``: B's columns, D's), then any other input of the model
        given = list(model.metadata.get("input_functions", ()))
        u = given + [f for f in eq.inputs if f not in set(given)]
        self.inputs = u
        self.args = [eq.q, eq.f, eq.a, self.nu, self.cm.parameters, u, t]
        pieces = {"R": R, "R_q": R.jacobian(eq.q), "R_f": R.jacobian(eq.f), "R_a": R.jacobian(eq.a),
                  "R_nu": R.jacobian(self.nu) if self.nu else sp.zeros(eq.n, 0),
                  "R_u": R.jacobian(u) if u else sp.zeros(eq.n, 0),
                  "phi": phi, "phi_q": phi.jacobian(eq.q) if eq.phi else sp.zeros(0, eq.n),
                  "phi_u": phi.jacobian(u) if (u and eq.phi) else sp.zeros(len(eq.phi), len(u)),
                  "V": V, "V_q": V.jacobian(eq.q) if vel else sp.zeros(0, eq.n),
                  "V_f": V.jacobian(eq.f) if vel else sp.zeros(0, eq.n),
                  "V_u": V.jacobian(u) if (u and vel) else sp.zeros(len(vel), len(u))}
        self.shapes = {k: v.shape for k, v in pieces.items()}
        self.names = list(pieces)
        flat = [e for k in self.names for e in pieces[k]]
        self._fn = sp.lambdify(self.args, flat, modules="numpy", cse=True) if flat else (lambda *a: [])

    def __call__(self, q, f, a, nu, p, u, tt=0.0):
        vals = np.asarray(self._fn(q, f, a, nu, p, u, tt), dtype=float).ravel()
        out, i = {}, 0
        for k in self.names:
            r, c = self.shapes[k]
            out[k] = vals[i:i + r * c].reshape(r, c)
            i += r * c
        for k in ("R", "phi", "V"):
            out[k] = out[k].ravel()
        return out


def _jacobians(model):
    j = model._compiled.get("linearize")
    if j is None:
        j = model._compiled["linearize"] = _Jacobians(model)
    return j


def _vector(model, values, suffix=""):
    names = model.coordinate_names
    vec = np.zeros(len(names))
    given = np.zeros(len(names), dtype=bool)
    for k, v in (values or {}).items():
        key = k if isinstance(k, str) else getattr(getattr(k, "func", None), "__name__", str(k))
        if suffix and key.endswith(suffix):
            key = key[: -len(suffix)]
        if key not in names:
            if getattr(values, "skip_unknown", False):  # a network's stored guess: joint names, other formulations
                continue
            raise ModelError(f"unknown coordinate {key!r}; the coordinates are {names}")
        vec[names.index(key)] = float(v)
        given[names.index(key)] = True
    return vec, given


def _input_vector(jac, u_values, nominal):
    u_values = {**nominal, **{str(k): v for k, v in (u_values or {}).items()}}
    names = [str(s) for s in jac.inputs]
    missing = [n for n in names if n not in u_values]
    if missing:
        raise ModelError(f"no operating value for input(s) {missing}; pass u={{{missing[0]!r}: value}}")
    unknown = sorted(set(u_values) - set(names))
    if unknown:
        raise ModelError(f"unknown input(s) {unknown}; the model's inputs are {names or 'none'}")
    return np.array([float(u_values[n]) for n in names]), {n: float(u_values[n]) for n in names}


def _model_inputs(jac, udict):
    """The input values the equations contain (a named input may enter outputs only)."""
    known = {str(s) for s in jac.eq.inputs}
    return {k: v for k, v in udict.items() if k in known}


def _prepare(system, inputs, u, params, formulation=None):
    model, nominal = with_inputs(system, inputs, formulation)
    if hasattr(system, "derive"):
        nominal = {name: 0.0 for name in inputs}  # a model's listed inputs default to 0 at the operating point
    jac = _jacobians(model)
    uvec, udict = _input_vector(jac, u, nominal)
    pv = jac.cm.parameter_vector({**(params or {}), **_model_inputs(jac, udict)}).vector
    return model, jac, uvec, udict, pv


# ------------------------------------------------------------------------------------------ equilibrium

def equilibrium(system: Network | LagrangianModel | BondGraph, guess: Initial | None = None, f: Initial | None = None,
                u: Mapping[str, float] | None = None, inputs: Sequence[str] = (), steady: Sequence[str] = (),
                params: Params | None = None, tol: float = 1e-9, formulation: Formulation = None) -> OperatingPoint:
    """A steady state near ``guess``: all displacements (and the flows of the ``steady`` coordinates) solved.

    ``f`` fixes flows (default 0); ``steady`` names coordinates whose flow is
    unknown too (a motor's speed and current at constant voltage). ``u`` gives
    input values. ``guess`` not given is the network's stored one (``net.assembly``; its coordinates of the
    model, joint names left out). Returns an :class:`OperatingPoint`.

    >>> import sympy as sp
    >>> from netdyn import LagrangianModel, coordinates, t
    >>> x, = coordinates("x,")
    >>> op = equilibrium(LagrangianModel([x], T=x.diff(t)**2/2, V=4*(x - 1)**2/2), {"x": 0.3})
    >>> round(float(op.q[0]), 9)
    1.0
    """
    guess = stored_assembly(system, guess=guess)[2]
    model, jac, uvec, udict, pv = _prepare(system, inputs, u, params, formulation)
    n, nnu = jac.eq.n, len(jac.nu)
    q0, _ = _vector(model, guess)
    f0, _ = _vector(model, f, "_dot")
    names = model.coordinate_names
    steady_idx = [names.index(s) if s in names else _unknown(s, names) for s in steady]
    zero = np.zeros(n)

    def unpack(x):
        q = x[:n]
        ff = f0.copy()
        ff[steady_idx] = x[n:n + len(steady_idx)]
        return q, ff, x[n + len(steady_idx):]

    def fun(x):
        q, ff, nu = unpack(x)
        J = jac(q, ff, zero, nu, pv, uvec)
        return np.concatenate([J["R"], J["phi"], J["V"]])

    def jacobian(x):
        q, ff, nu = unpack(x)
        J = jac(q, ff, zero, nu, pv, uvec)
        cols_f = lambda M: M[:, steady_idx]
        top = np.hstack([J["R_q"], cols_f(J["R_f"]), J["R_nu"]])
        mid = np.hstack([J["phi_q"], np.zeros((len(J["phi"]), len(steady_idx) + nnu))])
        bot = np.hstack([J["V_q"], cols_f(J["V_f"]), np.zeros((len(J["V"]), nnu))])
        return np.vstack([top, mid, bot])

    x0 = np.concatenate([q0, f0[steady_idx], np.zeros(nnu)])
    sol = least_squares(fun, x0, jac=jacobian, xtol=1e-15, ftol=1e-15, gtol=1e-15, max_nfev=200)
    r = fun(sol.x)
    q, ff, nu = unpack(sol.x)
    scale = 1.0 + np.max(np.abs(jacobian(sol.x)), initial=0.0) * (1.0 + np.max(np.abs(sol.x)))
    if np.max(np.abs(r), initial=0.0) > tol * scale:
        worst = int(np.argmax(np.abs(r)))
        raise OperatingPointError(
            f"no equilibrium near the guess: the residual of {_equation_label(model, worst)} stays "
            f"{r[worst]:.3g}; try another guess, free more flows with steady=[...], or check the inputs")
    return OperatingPoint(model, q, ff, udict, nu)


def _unknown(name, names):
    raise ModelError(f"unknown coordinate {name!r} in steady; the coordinates are {names}")


def _equation_label(model, k):
    n = len(model.coordinates)
    if k < n:
        return f"the Lagrange equation of {model.coordinate_names[k]}"
    k -= n
    labels = list(model.constraint_labels)
    if k < len(labels):
        return f"constraint {labels[k]}"
    k -= len(labels)
    vel = [f"{lab} (velocity level)" for lab in model.constraint_labels] + list(model.flow_constraint_labels)
    return f"constraint {vel[k]}"


# ------------------------------------------------------------------------------------------ linearization

class LinearModel(StateSpace):
    """The minimal state space of a linearization, with its operating point, descriptor form and bases.

    ``q = q_op + Pq x``, ``f = f_op + Pf x + Qf u`` to first order; :meth:`state`
    maps a deviation of (q, f) to x.
    """

    #: ``[D1, D2, …]``: outputs that follow the inputs' derivatives, ``y = C x + D u + D1 u̇ + …`` (a capacitor's
    #: current across a supply); empty for a proper system
    D_derivatives: tuple | list = ()
    #: the model linearized (set by :func:`linearize`)
    model: LagrangianModel

    def _derivative_terms(self, i, j):
        return [float(Dk[i, j]) for Dk in self.D_derivatives]

    def frequency_response(self, w, output=0, input=0):
        """Complex ``G(jω)``, with ``Σ (jω)ᵏ D_k`` of the outputs that follow the inputs' derivatives."""
        G = super().frequency_response(w, output, input)
        i = self._index(self.outputs, "output", output)
        j = self._index(self.inputs, "input", input)
        s = 1j * np.asarray(w, dtype=float)
        for k, d in enumerate(self._derivative_terms(i, j), start=1):
            G = G + d * s**k
        return G

    def transfer_function(self, output=0, input=0):
        """``scipy.signal.TransferFunction`` (improper where an output follows an input's derivative)."""
        tf = super().transfer_function(output, input)
        i = self._index(self.outputs, "output", output)
        j = self._index(self.inputs, "input", input)
        terms = self._derivative_terms(i, j)
        if not any(terms):
            return tf
        from scipy import signal
        num = np.polyadd(tf.num, np.polymul(tf.den, list(reversed(terms)) + [0.0]))
        return signal.TransferFunction(np.trim_zeros(num, "f"), tf.den)

    def simulate(self, t, u, x0=None):
        """Outputs for inputs ``u`` (see :meth:`StateSpace.simulate`); not for outputs on input derivatives."""
        if any(np.any(Dk) for Dk in self.D_derivatives):
            bad = sorted({self.outputs[i] for Dk in self.D_derivatives for i in np.flatnonzero(np.any(Dk, axis=1))})
            raise ModelError(f"outputs {bad} follow the inputs' derivatives (D_derivatives); a sampled input has "
                             "none: simulate the network instead, or leave those outputs out")
        return super().simulate(t, u, x0)

    def state(self, dq, df):
        """Minimal state of a deviation ``(δq, δf)`` from the operating point (independent coordinates)."""
        full = np.concatenate([np.asarray(dq, dtype=float)[self.independent_q],
                               np.asarray(df, dtype=float)[self.independent_f_dynamic]])
        return self.reduction @ full


def _partition(J, what, labels, tol=1e-9):
    """Dependent columns (pivots of QR with column pivoting) and a basis N with J N = 0, S N = I."""
    m, n = J.shape
    if m == 0:
        return np.arange(0), np.arange(n), np.eye(n)
    _, Rr, piv = sla.qr(J, pivoting=True)
    d = np.abs(np.diag(Rr))
    rank = int(np.sum(d > tol * max(d.max(), 1e-300)))
    if rank < m:
        U, s, _ = np.linalg.svd(J)
        dep = int(np.argmax(np.abs(U[:, -1])))
        raise SingularSystemError(
            f"singular configuration: the {what} Jacobian has rank {rank} instead of {m} at the operating point "
            f"(smallest singular value {s[-1]:.3g}; constraint {labels[dep]} is dependent there); a dead centre or "
            "change point has no linearization on the constraint manifold, choose another operating point")
    dep = np.sort(piv[:m])
    ind = np.array([i for i in range(n) if i not in set(dep)], dtype=int)
    N = np.zeros((n, n - m))
    N[ind, np.arange(n - m)] = 1.0
    N[dep, :] = -np.linalg.solve(J[:, dep], J[:, ind])
    return dep, ind, N


def linearize(system: Network | LagrangianModel | BondGraph | OperatingPoint,
              q_op: OperatingPoint | Initial | None = None, f_op: Initial | None = None,
              inputs: Sequence[str] = (), outputs: Sequence[str] = (), u: Mapping[str, float] | None = None,
              params: Params | None = None, tol: float = 1e-7,
              formulation: Formulation = None, guess: Initial | None = None, method: str = "auto") -> LinearModel:
    """Linearize at an operating point; returns a :class:`LinearModel` (with ``.descriptor``).

    ``q_op``/``f_op`` map coordinate names to values (an :class:`OperatingPoint`
    may be passed as ``q_op`` or in place of the system); missing displacements are completed to satisfy
    the constraints. The point must be an equilibrium (zero accelerations)
    within ``tol``, or an :class:`~netdyn.errors.OperatingPointError` says by how
    much it is not. A singular configuration is a
    :class:`~netdyn.errors.SingularSystemError`. Ignorable coordinates (a
    position that no equation and no output depends on: a shaft angle, a
    circuit's loop charge through an inductor) are left out of the states.
    ``formulation`` is passed to ``Network.model``; ``guess`` starts the
    completion of the displacements (a rough assembly of a linkage; not given, the network's stored one,
    ``net.assembly``). ``method``: ``"auto"`` linearizes a spatial open tree (a Network whose elements the
    recursive tree reads, inputs on joint actuators, outputs tree coordinates, ``q_op``/``f_op`` in tree
    coordinates) by numeric derivatives of the recursive algorithms
    (:mod:`netdyn.recursive.spatial.linear`: central differences with Richardson extrapolation), everything
    else symbolically; ``"recursive"`` or ``"symbolic"`` insist. ``lin.method`` says which, ``lin.reason``
    why.

    >>> import netdyn
    >>> from netdyn.components.electrical import VoltageSource, Resistor, Inductor, Capacitor
    >>> net = netdyn.Network("rlc")
    >>> _ = net.add(VoltageSource("V1", "a", "0", 0.0), Resistor("R1", "a", "b", 2.0),
    ...             Inductor("L1", "b", "c", 1.0), Capacitor("C1", "c", "0", 0.25))
    >>> lin = netdyn.linearize(net, inputs=["V1"], outputs=["v(C1)"])
    >>> lin.natural_frequencies().round(6), lin.damping_ratios().round(6), float(lin.static_gain()[0, 0])
    (array([2.]), array([0.5]), 1.0)
    """
    if method not in ("auto", "recursive", "symbolic"):
        raise OptionError(f"method={method!r}: use 'auto', 'recursive' or 'symbolic'")
    if method != "symbolic":
        lin, why = _recursive_linearization(system, q_op, f_op, inputs, outputs, u, params, tol, formulation,
                                            guess, method)
        if lin is not None:
            return lin
    else:
        why = "method='symbolic' was named"
    if isinstance(system, OperatingPoint):
        system, q_op = None, system
    if isinstance(q_op, OperatingPoint):
        op = q_op
        if f_op is not None:
            raise OptionError("f_op= was given with an OperatingPoint, whose flows are its own and would replace "
                              "it: drop f_op=, or pass q_op and f_op as dicts by coordinate name")
        system, u = op.model, {**op.u, **(u or {})}
        q_op = dict(zip(op.model.coordinate_names, op.q))
        f_op = dict(zip(op.model.coordinate_names, op.f))
    guess = stored_assembly(system, guess=guess)[2]
    model, jac, uvec, udict, pv = _prepare(system, inputs, u, params, formulation)
    eq, cm = jac.eq, jac.cm
    n = eq.n
    p = cm.parameter_vector({**(params or {}), **_model_inputs(jac, udict)})
    q0, f0 = consistent_initial_conditions(cm, 0.0, q_op, f_op, p, guess=guess)
    labels = list(model.constraint_labels) + list(model.flow_constraint_labels)
    zero = np.zeros(n)
    J0 = jac(q0, f0, zero, np.zeros(len(jac.nu)), pv, uvec)
    C = J0["V_f"]
    # position-level and velocity-level bases (coordinate partitioning)
    dep_q, ind_q, Nq = _partition(J0["phi_q"], "position constraint", labels)
    dep_f, ind_f, Nf = _partition(C, "velocity constraint", labels)
    # where the multipliers act: Cᵀ, unless a servo constraint (a controlled source) acts elsewhere; the
    # dynamic rows are projected on W, the flows that no reaction touches (Nf when every reaction is ideal)
    Rn = J0["R_nu"]
    ideal = np.max(np.abs(Rn - C.T), initial=0.0) <= 1e-13 * max(1.0, np.max(np.abs(C), initial=0.0))
    W = Nf if ideal else _reaction_basis(Rn, Nf, J0["R_a"], labels)
    # multipliers and the equilibrium check
    if C.shape[0]:
        nu0 = np.linalg.lstsq(Rn, -J0["R"], rcond=None)[0]
    else:
        nu0 = np.zeros(0)
    J = jac(q0, f0, zero, nu0, pv, uvec)
    _check_equilibrium(model, cm, q0, f0, p, J, W, tol)
    M, Rq, Rf, Ru = J["R_a"], J["R_q"], J["R_f"], J["R_u"]
    Vq, Vu = J["V_q"], J["V_u"]
    ninp = len(uvec)
    # δf = Nf w + Gz z + H u (the dependent flows follow from the velocity constraints)
    Gz = np.zeros((n, Nq.shape[1]))
    H = np.zeros((n, ninp))
    if C.shape[0]:
        Cd = C[:, dep_f]
        Gz[dep_f] = -np.linalg.solve(Cd, Vq @ Nq)
        H[dep_f] = -np.linalg.solve(Cd, Vu)
    if np.any(np.abs(J["phi_u"]) > 0):
        raise ModelError("an input enters a displacement constraint (a prescribed position); linearize with "
                         "the flow or effort as input instead")
    Sq = np.zeros((Nq.shape[1], n))
    Sq[np.arange(len(ind_q)), ind_q] = 1.0
    nz, nw = Nq.shape[1], Nf.shape[1]
    A1 = np.hstack([Sq @ Gz, Sq @ Nf])
    B1 = Sq @ H
    E22 = W.T @ M @ Nf
    E21 = W.T @ M @ Gz
    A2 = np.hstack([-(W.T @ Rq @ Nq + W.T @ Rf @ Gz), -(W.T @ Rf @ Nf)])
    B2 = -(W.T @ Ru + W.T @ Rf @ H)
    Ym, out_names, y0 = _outputs(model, jac, outputs, q0, f0, nu0, pv, uvec)
    pieces = dict(M=M, Rq=Rq, Rf=Rf, Ru=Ru, C=Rn.T, Nq=Nq, Nf=Nf, W=W, Gz=Gz, H=H, ind_q=ind_q, ind_f=ind_f)
    regular = _regular_reduction(model, nz, nw, ninp, A1, B1, E21, E22, A2, B2, pieces, Ym)
    if regular is None:  # algebraic relations among the states, or inputs' derivatives: the slow subsystem
        lin, nx_ = _slow_linearization(model, nz, nw, A1, B1, E21, E22, A2, B2, pieces, Ym, out_names,
                                       [str(s) for s in jac.inputs])
    else:
        lin, nx_ = regular
        lin = _finish_regular(model, lin, nz, ind_q, ind_f, Ym, out_names, [str(s) for s in jac.inputs])
    lin.operating_point = OperatingPoint(model, q0, f0, udict, nu0)
    lin.output_values = y0
    lin.model = model
    lin.descriptor = _descriptor(model, J, Ym, out_names, lin.inputs)
    lin.descriptor.n_finite = nx_  # the descriptor keeps the ignorable directions (poles at 0)
    lin.method, lin.reason = "symbolic", why
    return lin


def _recursive_linearization(system, q_op, f_op, inputs, outputs, u, params, tol, formulation, guess, method):
    """``(LinearModel or None, why not)``: the recursive linearization of a spatial open tree."""
    from netdyn.graph.spatial import is_spatial
    from netdyn.recursive.planar import NotRecursive
    from netdyn.recursive.spatial.linear import tree_linearization

    named = method == "recursive"
    if isinstance(system, OperatingPoint) or isinstance(q_op, OperatingPoint) or u:
        why = "an OperatingPoint or input values u= belong to the symbolic linearization"
    elif not (hasattr(system, "bodies") and hasattr(system, "elements")) or not is_spatial(system):
        why = "not a spatial Network (a model keeps its own coordinates)"
    elif formulation not in (None, "relative"):
        why = f"formulation={formulation!r} asks for the symbolic coordinates"
    else:
        try:
            A, B, C, D, states, ins, outs = tree_linearization(
                system, q_op, f_op, inputs, outputs, params, stored_assembly(system, guess=guess)[2], tol)
        except NotRecursive as err:
            if named:
                raise
            return None, f"not on the recursive tree: {err}"
        lin = LinearModel(A, B, C, D, states=states, inputs=ins, outputs=outs)
        lin.method = "recursive"
        lin.reason = ("a spatial open tree: numeric derivatives (central differences, Richardson) of the "
                      "articulated-body algorithm")
        return lin, lin.reason
    if named:
        raise NotRecursive(f"method='recursive': {why}")
    return None, why


def _reaction_basis(Rn, Nf, M, labels):
    """A basis ``W`` of the flows no reaction touches (``Rnᵀ W = 0``), ordered like the independent flows
    ``Nf``: ``Wᵀ M Nf`` is the identity on the flows with inertia and zero on the rows of the others, as
    ``Nfᵀ M Nf`` is when every reaction is ideal (so the regular reduction applies to servo constraints)."""
    W = _partition(Rn.T, "reaction", labels)[2]
    E = W.T @ M @ Nf
    scale = max(np.max(np.abs(E), initial=0.0), 1e-300)
    dyn = np.flatnonzero(np.max(np.abs(E), axis=0, initial=0.0) > 1e-12 * scale)
    U = E[:, dyn]
    if W.shape[1] != Nf.shape[1] or (dyn.size and np.linalg.matrix_rank(U) < dyn.size):
        return W
    T = np.zeros((W.shape[1], W.shape[1]))
    massless = np.setdiff1d(np.arange(W.shape[1]), dyn)
    T[dyn] = np.linalg.pinv(U)
    if massless.size:
        T[massless] = sla.null_space(U.T).T if dyn.size else np.eye(W.shape[1])
    return W @ T.T


def _regular_reduction(model, nz, nw, ninp, A1, B1, E21, E22, A2, B2, pc, Ym):
    """The minimal state space when every independent flow has inertia or is fixed by the others; else None."""
    M, Rq, Rf, Ru, C, Nq, Nf, Gz, H = (pc[k] for k in ("M", "Rq", "Rf", "Ru", "C", "Nq", "Nf", "Gz", "H"))
    ind_f = pc["ind_f"]
    if ninp and np.max(np.abs(pc["W"].T @ M @ H), initial=0.0) > 1e-12 * (1 + np.max(np.abs(M))):
        return None  # an input drives an inertial flow directly: its derivative enters
    A2 = A2 - E21 @ A1
    B2 = B2 - E21 @ B1
    # inertial (dynamic) and massless (algebraic) independent flows
    mscale = max(np.max(np.abs(E22), initial=0.0), 1e-300)
    massless = np.array([k for k in range(nw) if np.max(np.abs(E22[k]), initial=0.0) <= 1e-12 * mscale
                         and np.max(np.abs(E22[:, k]), initial=0.0) <= 1e-12 * mscale], dtype=int)
    dyn = np.array([k for k in range(nw) if k not in set(massless)], dtype=int)
    Edd = E22[np.ix_(dyn, dyn)]
    if dyn.size and np.linalg.matrix_rank(Edd) < dyn.size:
        return None  # some flow combinations have no inertia (series inductors in branch charges)
    nx_ = nz + dyn.size
    # s = [z; w] = Ts x + Us u
    Ts = np.zeros((nz + nw, nx_))
    Us = np.zeros((nz + nw, ninp))
    Ts[:nz, :nz] = np.eye(nz)
    Ts[nz + dyn, nz + np.arange(dyn.size)] = 1.0
    if massless.size:
        rows = A2[massless]
        Azz = rows[:, nz + massless]
        if np.linalg.matrix_rank(Azz) < massless.size:
            return None  # a V–C loop or an I–L cut-set: the states are related algebraically
        others = [c for c in range(nz + nw) if c not in set(nz + massless)]
        sol_x = -np.linalg.solve(Azz, rows[:, others] @ Ts[others])
        sol_u = -np.linalg.solve(Azz, rows[:, others] @ Us[others] + B2[massless])
        Ts[nz + massless] = sol_x
        Us[nz + massless] = sol_u
    Edd_inv = np.linalg.inv(Edd) if dyn.size else np.zeros((0, 0))
    top = np.vstack([A1, Edd_inv @ A2[dyn]]) if dyn.size else A1
    Ass = top @ Ts
    Bss = top @ Us + np.vstack([B1, Edd_inv @ B2[dyn]] if dyn.size else [B1])
    Pq = np.hstack([Nq, np.zeros((Nq.shape[0], dyn.size))])
    Pf = Nf @ Ts[nz:] + Gz @ Ts[:nz]
    Qf = Nf @ Us[nz:] + H
    Pa, Qa = Pf @ Ass, Pf @ Bss
    if np.any(np.abs(Ym["a"] @ Qf) > 0) and ninp:
        return None  # an output depends on an acceleration that an input sets directly: on u'
    Pnu, Qnu = _multipliers(M, Rq, Rf, Ru, C, Pa, Pq, Pf, Qa, Qf, nx_, ninp)
    Cy = Ym["q"] @ Pq + Ym["f"] @ Pf + Ym["a"] @ Pa + Ym["nu"] @ Pnu
    Dy = Ym["f"] @ Qf + Ym["a"] @ Qa + Ym["nu"] @ Qnu + Ym["u"]
    names = model.coordinate_names
    states = [names[i] for i in pc["ind_q"]] + [names[ind_f[k]] + "_dot" for k in dyn]
    return dict(A=Ass, B=Bss, C=Cy, D=Dy, states=states, Pq=Pq, Pf=Pf, Qf=Qf, dyn=dyn), nx_


def _multipliers(M, Rq, Rf, Ru, C, Pa, Pq, Pf, Qa, Qf, nx_, ninp):
    """Multiplier deviations: ``Cᵀ δν = −(M δa + Rq δq + Rf δf + Ru u)`` (``Cᵀ``: where the multipliers act)."""
    if C.shape[0]:
        pinv = np.linalg.pinv(C.T)
        return -pinv @ (M @ Pa + Rq @ Pq + Rf @ Pf), -pinv @ (M @ Qa + Rf @ Qf + Ru)
    return np.zeros((0, nx_)), np.zeros((0, ninp))


def _finish_regular(model, r, nz, ind_q, ind_f, Ym, out_names, in_names):
    red, states = _reduction(r["A"], r["C"], nz, r["states"])
    Ass, Bss, Cy = red @ r["A"] @ red.T, red @ r["B"], r["C"] @ red.T
    lin = LinearModel(Ass, Bss, Cy, r["D"], states=states, inputs=in_names, outputs=out_names)
    lin.Pq, lin.Pf, lin.Qf = r["Pq"] @ red.T, r["Pf"] @ red.T, r["Qf"]
    lin.independent_q, lin.independent_f_dynamic, lin.reduction = ind_q, ind_f[r["dyn"]], red
    return lin


def _slow_linearization(model, nz, nw, A1, B1, E21, E22, A2, B2, pc, Ym, out_names, in_names):
    """The linearization of a higher-index point (V–C loops, I–L cut-sets) by the slow subsystem.

    The first-order descriptor in ``s = [z; w]`` (independent positions and
    flows) is ``ż = A1 s + B1 u``, ``E21 ż + E22 ẇ = A2 s + B2 u − Wᵀ M H u̇`` (W: the flows no reaction touches);
    :func:`~netdyn.analysis.slow.slow_subsystem` gives its states and
    ``s = Y x + Σ P_j u⁽ʲ⁾``. Outputs that follow an input's derivative (the
    current of a capacitor across a supply) get ``D_derivatives``.
    """
    M, Rq, Rf, Ru, C, Nq, Nf, Gz, H = (pc[k] for k in ("M", "Rq", "Rf", "Ru", "C", "Nq", "Nf", "Gz", "H"))
    ind_q, ind_f = pc["ind_q"], pc["ind_f"]
    # ignorable positions first (a loop charge that only enters through its flow): left in, the slow
    # subsystem's eliminations mix them into the states at roundoff level, where no later test can tell them
    # from a slow mode (two poles at 1e-10 of an op-amp macro-model in loop charges)
    kz, A1, B1, E21, A2, Nq, Gz = _drop_ignorable(nz, nw, A1, B1, E21, A2, Nq, Gz, Rq, Ym)
    all_q, ind_q, nz_all = ind_q, ind_q[kz], nz
    nz = kz.size
    ns, ninp = nz + nw, B1.shape[1]
    E = np.zeros((ns, ns))
    E[:nz, :nz] = np.eye(nz)
    E[nz:, :nz], E[nz:, nz:] = E21, E22
    Bd = np.zeros((ns, ninp))
    Bd[nz:] = -(pc["W"].T @ M @ H)
    names = model.coordinate_names
    labels = [f"the equation of {names[i]}" for i in ind_q] + [f"the equation of {names[ind_f[k]]}_dot"
                                                                for k in range(nw)]
    slow = slow_subsystem(E, np.vstack([A1, A2]), [np.vstack([B1, B2]), Bd], labels=labels)
    nx_ = slow.F.shape[0]
    Ys, Ps = slow.Y, slow.P
    dY, dP = slow.derivative()
    order = max(len(Ps), len(dP) + 1)
    Ps = Ps + [np.zeros((ns, ninp))] * (order - len(Ps))
    dP = dP + [np.zeros((ns, ninp))] * (order + 1 - len(dP))

    # every quantity as (X, [U_0, U_1, ...]): X x + Σ U_j u^(j)
    def lin_map(Lz, Lw, Yz, Yw, Pz, Pw):
        return Lz @ Yz + Lw @ Yw, [Lz @ a + Lw @ b for a, b in zip(Pz, Pw)]

    dq = (Nq @ Ys[:nz], [Nq @ p[:nz] for p in Ps])
    df_x, df_u = lin_map(Gz, Nf, Ys[:nz], Ys[nz:], [p[:nz] for p in Ps], [p[nz:] for p in Ps])
    df_u[0] = df_u[0] + H
    da_x, da_u = lin_map(Gz, Nf, dY[:nz], dY[nz:], [p[:nz] for p in dP], [p[nz:] for p in dP])
    da_u[1] = da_u[1] + H
    k = len(da_u)
    pad = lambda us: us + [np.zeros_like(us[0])] * (k - len(us))
    dq_u, df_u = pad(dq[1]), pad(df_u)
    ru = pad([Ru])
    if C.shape[0]:
        pinv = np.linalg.pinv(C.T)
        nu_x = -pinv @ (M @ da_x + Rq @ dq[0] + Rf @ df_x)
        nu_u = [-pinv @ (M @ a + Rq @ b + Rf @ c + d) for a, b, c, d in zip(da_u, dq_u, df_u, ru)]
    else:
        nu_x, nu_u = np.zeros((0, nx_)), [np.zeros((0, ninp))] * k
    Cy = Ym["q"] @ dq[0] + Ym["f"] @ df_x + Ym["a"] @ da_x + Ym["nu"] @ nu_x
    Dys = [Ym["q"] @ a + Ym["f"] @ b + Ym["a"] @ c + Ym["nu"] @ d for a, b, c, d in zip(dq_u, df_u, da_u, nu_u)]
    Dys[0] = Dys[0] + Ym["u"]
    scale = 1.0 + max(np.max(np.abs(D), initial=0.0) for D in Dys)
    while len(Dys) > 1 and np.max(np.abs(Dys[-1]), initial=0.0) <= 1e-12 * scale:
        Dys.pop()
    snames = [names[i] for i in ind_q] + [names[ind_f[j]] + "_dot" for j in range(nw)]
    shifted = [any(np.any(np.abs(p[i]) > 0) for p in Ps) for i in slow.selected]
    states = [snames[i] + ("~" if sh else "") for i, sh in zip(slow.selected, shifted)]
    keep = _relevant(slow.F, Cy)
    F, G, Cy = keep @ slow.F @ keep.T, keep @ slow.G, Cy @ keep.T
    if keep.shape[0] < nx_:
        states = ([states[int(np.argmax(np.abs(r)))] for r in keep] if np.all(np.isclose(
            np.max(np.abs(keep), axis=1), 1.0)) else [f"z{j + 1}" for j in range(keep.shape[0])])
    lin = LinearModel(F, G, Cy, Dys[0], states=states, inputs=in_names, outputs=out_names)
    lin.D_derivatives = Dys[1:]
    lin.Pq, lin.Pf, lin.Qf = dq[0] @ keep.T, df_x @ keep.T, df_u[0]
    sel = np.zeros((nx_, ns))
    sel[np.arange(nx_), slow.selected] = 1.0
    kept = np.eye(nz_all + nw)[np.concatenate([kz, nz_all + np.arange(nw)]).astype(int)]
    lin.independent_q, lin.independent_f_dynamic, lin.reduction = all_q, ind_f, keep @ sel @ kept
    return lin, nx_


def _drop_ignorable(nz, nw, A1, B1, E21, A2, Nq, Gz, Rq, Ym):
    """The independent positions something depends on (``kz``) and the descriptor without the others.

    A position is ignorable when no rate, no equation, no flow and no output reads it: its columns of
    ``A1``, ``E21``, ``A2``, ``Gz``, ``Rq Nq`` and ``Ym["q"] Nq`` are zero (exactly, in a circuit: structure).
    """
    deps = np.vstack([A1[:, :nz], E21, A2[:, :nz], Gz, Rq @ Nq, Ym["q"] @ Nq])
    size = np.max(np.abs(deps), axis=0, initial=0.0)
    kz = np.flatnonzero(size > 1e-14 * max(np.max(size, initial=0.0), 1e-300))
    if kz.size == nz:
        return np.arange(nz), A1, B1, E21, A2, Nq, Gz
    ks = np.concatenate([kz, nz + np.arange(nw)])
    return kz, A1[kz][:, ks], B1[kz], E21[:, kz], A2[:, ks], Nq[:, kz], Gz[:, kz]


def _relevant(F, Cy):
    """Rows of an orthonormal map onto the states that some equation or output depends on.

    Directions ``v`` with ``F v = 0`` and ``Cy v = 0`` (loop charges that only
    enter through their flows) are dropped; when they are single states, the
    map is a selection.
    """
    n = F.shape[0]
    cols = np.vstack([F, Cy])
    scale = max(np.max(np.abs(cols), initial=0.0), 1e-300)
    ign = sla.null_space(cols / scale, rcond=1e-11) if n else np.zeros((0, 0))
    if ign.size == 0:
        return np.eye(n)
    if np.all(np.isclose(np.max(np.abs(ign), axis=0), 1.0, atol=1e-12)):
        drop = {int(np.argmax(np.abs(ign[:, k]))) for k in range(ign.shape[1])}
        return np.eye(n)[[k for k in range(n) if k not in drop]]
    return sla.null_space(ign.T).T


def _reduction(A, C, nz, names):
    """Rows that map the full state to the relevant one, and their names.

    Position directions that no equation and no output depends on (columns
    of A and C zero along them: ignorable coordinates, or combinations such as
    loop charges of a circuit that only enter through their flows) are dropped.
    """
    n = A.shape[0]
    cols = np.vstack([A[:, :nz], C[:, :nz]])
    scale = max(np.max(np.abs(cols), initial=0.0), 1e-300)
    ign = sla.null_space(cols / scale, rcond=1e-11) if nz else np.zeros((0, 0))
    if ign.size == 0:
        return np.eye(n), list(names)
    unit = np.isclose(np.max(np.abs(ign), axis=0), 1.0, atol=1e-12)
    if np.all(unit):  # coordinate-aligned: drop the named coordinates
        drop = {int(np.argmax(np.abs(ign[:, k]))) for k in range(ign.shape[1])}
        keep = [k for k in range(n) if k not in drop]
        return np.eye(n)[keep], [names[k] for k in keep]
    Rz = sla.null_space(ign.T)
    red = np.zeros((Rz.shape[1] + n - nz, n))
    red[: Rz.shape[1], :nz] = Rz.T
    red[Rz.shape[1]:, nz:] = np.eye(n - nz)
    return red, [f"z{k + 1}" for k in range(Rz.shape[1])] + list(names[nz:])


def _check_equilibrium(model, cm, q0, f0, p, J, W, tol):
    scale = 1.0 + np.max(np.abs(J["R_q"]), initial=0.0) * (1 + np.max(np.abs(q0))) \
        + np.max(np.abs(J["R_f"]), initial=0.0) * (1 + np.max(np.abs(f0)))
    r = W.T @ J["R"]  # generalized forces left on the manifold (with a = 0 and the best multipliers)
    if np.max(np.abs(r), initial=0.0) <= tol * scale:
        return
    names = model.coordinate_names
    try:
        acc, _, _ = cm.accelerations(0.0, q0, f0, p)
        k = int(np.argmax(np.abs(acc)))
        detail = f"the accelerations there are not zero: max |{names[k]}_ddot| = {abs(acc[k]):.4g}"
    except np.linalg.LinAlgError:
        detail = "the generalized forces do not balance"
    k = int(np.argmax(np.abs(J["R"])))
    raise OperatingPointError(
        f"the operating point is not an equilibrium: {detail}; unbalanced generalized force "
        f"{np.max(np.abs(r)):.4g} (largest in the equation of {names[k]}); find one with netdyn.equilibrium(...) "
        "or give the input values that hold it")


def _output_expression(model, spec):
    names = model.coordinate_names
    if isinstance(spec, sp.Basic):
        return str(spec), internalize(model, spec)
    eq = model.derive()
    if spec in names:
        return spec, eq.q[names.index(spec)]
    if spec.endswith("_dot") and spec[:-4] in names:
        return spec, eq.f[names.index(spec[:-4])]
    signal = model.metadata.get("signal")  # a front end's own named signals (a bond graph's e(C1), f(L1))
    expr = signal(spec) if signal is not None else None
    if expr is not None:
        return spec, internalize(model, expr)
    mult = [str(m.func.__name__) for m in model.lambdas + model.mus]
    if spec in mult:
        return spec, (eq.lam + eq.mu)[mult.index(spec)]
    if len(spec) > 3 and spec[1] == "(" and spec.endswith(")") and spec[0].lower() in "vif":
        name = spec[2:-1]
        info = model.metadata.get("elements", {}).get(name)
        if info is None:
            raise ModelError(f"no element {name!r} for output {spec!r}")
        flow, effort = port_efforts(model, name, 0)
        through = spec[0].lower() != "v"
        expr = flow if through == (info["kinds"][0] == "through") else effort
        return spec, info["element"].report_signs[0] * expr
    raise ModelError(f"unknown output {spec!r}; use a coordinate name, name_dot, a multiplier, v(element), "
                     f"i(element) or a sympy expression; coordinates are {names}")


def _outputs(model, jac, outputs, q0, f0, nu0, pv, uvec):
    eq = jac.eq
    specs = [_output_expression(model, s) for s in (outputs or model.coordinate_names)]
    Y = sp.Matrix([e for _, e in specs])
    u = list(jac.inputs)
    parts = [Y.jacobian(eq.q), Y.jacobian(eq.f), Y.jacobian(eq.a),
             Y.jacobian(jac.nu) if jac.nu else sp.zeros(len(specs), 0),
             Y.jacobian(u) if u else sp.zeros(len(specs), 0), Y]
    fn = sp.lambdify(jac.args, [list(P) for P in parts], modules="numpy")
    vals = fn(q0, f0, np.zeros(eq.n), nu0, pv, uvec, 0.0)
    keys = ["q", "f", "a", "nu", "u"]
    out = {k: np.asarray(v, dtype=float).reshape(P.shape) for k, v, P in zip(keys, vals, parts)}
    return out, [nm for nm, _ in specs], np.asarray(vals[-1], dtype=float).ravel()


def _descriptor(model, J, Ym, out_names, in_names):
    n = len(model.coordinates)
    m1, m = len(J["phi"]), len(J["V"])
    N = 3 * n + m
    E = np.zeros((N, N))
    A = np.zeros((N, N))
    B = np.zeros((N, J["R_u"].shape[1]))
    E[:2 * n, :2 * n] = np.eye(2 * n)
    A[:n, n:2 * n] = np.eye(n)  # δq' = δf
    A[n:2 * n, 2 * n:3 * n] = np.eye(n)  # δf' = δa
    r = slice(2 * n, 3 * n)  # 0 = M δa + Rq δq + Rf δf + Cᵀ δν + Ru u
    A[r, :n], A[r, n:2 * n], A[r, 2 * n:3 * n], A[r, 3 * n:] = -J["R_q"], -J["R_f"], -J["R_a"], -J["R_nu"]
    B[r] = -J["R_u"]
    A[3 * n:3 * n + m1, :n] = -J["phi_q"]  # 0 = Φ_q δq
    A[3 * n + m1:, :n] = -J["V_q"][m1:]  # 0 = ∂ψ/∂q δq + A δf + ∂ψ/∂u u
    A[3 * n + m1:, n:2 * n] = -J["V_f"][m1:]
    B[3 * n + m1:] = -J["V_u"][m1:]
    Cd = np.hstack([Ym["q"], Ym["f"], Ym["a"], Ym["nu"]])
    names = model.coordinate_names
    mult = [str(x.func.__name__) for x in model.lambdas + model.mus]
    variables = names + [s + "_dot" for s in names] + [s + "_ddot" for s in names] + mult
    return Descriptor(E, A, B, Cd, Ym["u"], variables=variables, inputs=in_names, outputs=out_names)


def transfer_function(system: Network | LagrangianModel | BondGraph, inputs: Sequence[str] = (),
                      outputs: Sequence[str] = (), q_op: OperatingPoint | Initial | None = None,
                      s: sympy.Symbol | None = None) -> sympy.Matrix:
    """Symbolic transfer matrix ``G(s)`` (outputs × inputs) of a small model without constraints.

    Linearizes ``M q̈ + h = 0`` symbolically at ``q_op`` (default all zero, zero
    flows and inputs): ``G = Y (M s² + D s + K)⁻¹ B``. Parameters stay symbols.

    >>> import sympy as sp
    >>> from netdyn import LagrangianModel, coordinates, t
    >>> x, = coordinates("x,")
    >>> m, k = sp.symbols("m k", positive=True)
    >>> transfer_function(LagrangianModel([x], T=m*x.diff(t)**2/2, V=k*x**2/2, efforts={x: sp.Function("F")(t)}),
    ...                   inputs=["F"], outputs=["x"])
    Matrix([[1/(k + m*s**2)]])
    """
    model, _ = with_inputs(system, inputs)
    eq = model.derive()
    if eq.phi or eq.a0:
        raise ModelError(f"{model.name} has constraints; the symbolic transfer function is for unconstrained "
                         "models (use the loop formulation for circuits, or netdyn.linearize numerically)")
    s = s if s is not None else sp.Symbol("s")
    u = [next(x for x in eq.inputs if str(x) == name) for name in inputs] if inputs else list(eq.inputs)
    at = {qi: 0 for qi in eq.q}
    at.update({qi: sp.sympify(v) for qi, v in zip(eq.q, _vector(model, q_op)[0])} if q_op else {})
    at.update({fi: 0 for fi in eq.f})
    at.update({ui: 0 for ui in eq.inputs})
    h = sp.Matrix(eq.h)
    M = sp.Matrix(eq.matrix("M")).xreplace(at)
    K, Dm = h.jacobian(eq.q).xreplace(at), h.jacobian(eq.f).xreplace(at)
    Bu = -h.jacobian(u).xreplace(at)
    specs = [_output_expression(model, o)[1] for o in (outputs or model.coordinate_names)]
    Y = sp.Matrix(specs)
    Yq, Yf, Yu = Y.jacobian(eq.q).xreplace(at), Y.jacobian(eq.f).xreplace(at), Y.jacobian(u).xreplace(at)
    X = (M * s**2 + Dm * s + K).LUsolve(Bu)
    return ((Yq + s * Yf) * X + Yu).applyfunc(sp.cancel)
