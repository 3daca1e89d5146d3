"""Compiling derived equations into numeric functions, made once and reused.

:class:`CompiledModel` holds lambdified (common sub-expressions shared)
functions of ``(t, q, f, p)`` where ``p`` is the parameter vector, so one
compilation serves every simulation, sweep and linearization.

>>> import sympy as sp, numpy as np
>>> from netdyn import LagrangianModel, coordinates, t
>>> x, = coordinates("x,")
>>> m, k = sp.symbols("m k")
>>> cm = compile_model(LagrangianModel([x], T=m*x.diff(t)**2/2, V=k*x**2/2))
>>> M, h = cm.dynamics(0.0, np.array([0.5]), np.array([0.0]), cm.parameter_vector({"m": 2, "k": 8}))
>>> float(M[0, 0]), float(h[0])
(2.0, 4.0)
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import sympy as sp

from netdyn.errors import ModelError, ParameterError
from netdyn.numerics.functions.energy import dissipated_power, supplied_power
from netdyn.numerics.functions.kernel import state_kernel
from netdyn.numerics.functions.pwtable import tabulate
from netdyn.validate import real
from netdyn.symbols import t


_MODULES = ["numpy", {"Heaviside": lambda x, h0=0.5: np.heaviside(x, h0)}]


def _lambdify(args, exprs):
    exprs = [sp.sympify(e) for e in exprs]
    if not exprs:
        return lambda *a: []
    exprs, tables = tabulate(exprs)  # PWL sources by table lookup: O(log n) a call, not O(n)
    fn = sp.lambdify(args, exprs, modules=[tables] + _MODULES, cse=True)
    return fn


class Params:
    """Numeric parameter values (``vector``, in ``CompiledModel.parameters`` order) and input functions.

    ``inputs(t)`` gives the input vector (for models with undefined functions of t as inputs).
    """

    def __init__(self, vector, input_functions=()):
        self.vector = np.asarray(vector, dtype=float)
        self.input_functions = list(input_functions)

    def inputs(self, tt):
        return np.array([fn(tt) for fn in self.input_functions], dtype=float)

    def replace(self, vector):
        return Params(vector, self.input_functions)


def time_function(expr):
    """A numpy function of t (vectorized) for a sympy expression of ``netdyn.t``.

    >>> from netdyn.symbols import t
    >>> time_function(2 * t)(np.array([0.0, 1.5])).tolist()
    [0.0, 3.0]

    Functions are kept by expression (a switched circuit's segments and an event's trials make the same
    sources' functions again and again; printing and compiling one costs milliseconds).
    """
    expr = sp.sympify(expr)
    fn = _TIME_FUNCTIONS.get(expr)
    if fn is None:
        [tab], tables = tabulate([expr])
        fn = sp.lambdify(t, tab, modules=[tables] + _MODULES)
        if len(_TIME_FUNCTIONS) > 4096:
            _TIME_FUNCTIONS.clear()
        _TIME_FUNCTIONS[expr] = fn
    return fn


_TIME_FUNCTIONS = {}


def _input_function(value, name):
    if callable(value) and not isinstance(value, sp.Basic):
        return lambda tt: float(value(tt))
    expr = sp.sympify(value)
    extra = expr.free_symbols - {t}
    if extra:
        raise ParameterError(f"input {name} = {value} contains {sorted(map(str, extra))}; give a number, an "
                             "expression of netdyn.t or a callable of t")
    [expr], tables = tabulate([expr])
    fn = sp.lambdify(t, expr, modules=[tables, "numpy"])
    return lambda tt: float(fn(tt))


@dataclass
class ConstraintValues:
    """Constraint values and Jacobians at one state.

    ``phi`` (m1) displacement constraints, ``Phi_q`` (m1×n) their Jacobian, ``Phi_t`` (m1) their time
    derivative, ``gamma_phi`` (m1) the acceleration-level remainder; ``A`` (m2×n), ``a`` (m2) and
    ``gamma_psi`` (m2) the same for the flow (Pfaffian) constraints ``A f + a = 0``.
    """

    phi: np.ndarray
    Phi_q: np.ndarray
    Phi_t: np.ndarray
    gamma_phi: np.ndarray
    A: np.ndarray
    a: np.ndarray
    gamma_psi: np.ndarray
    R: np.ndarray | None = None  # (m2×n) where μ acts when servo constraints (controlled sources) do not act along A

    @property
    def reaction(self):
        """The matrix whose transpose multiplies μ in the Lagrange rows: ``A`` unless servo constraints."""
        return self.A if self.R is None else self.R

    @property
    def reaction_jacobian(self):
        """``[Φ_q; R]``: the multipliers act along its transpose (equal to :attr:`jacobian` without servos)."""
        return np.vstack([self.Phi_q, self.reaction])

    @property
    def jacobian(self):
        """``C = [Φ_q; A]``: every velocity-level constraint is ``C f + velocity_terms = 0``."""
        return np.vstack([self.Phi_q, self.A])

    @property
    def velocity_terms(self):
        """``[Φ_t; a]``."""
        return np.concatenate([self.Phi_t, self.a])

    def velocity_residual(self, f):
        """``C f + [Φ_t; a]``."""
        return self.jacobian @ f + self.velocity_terms


class CompiledModel:
    """Numeric functions of a model's equations.

    ``dynamics(t, q, f, p) -> (M, h)``; ``constraints(t, q, f, p) -> ConstraintValues``;
    ``kkt(t, q, f, p) -> KKT``.
    """

    def __init__(self, model, equations=None):
        self.model = model
        self._eq = equations
        # a relative-formulation planar open tree: M and h by the recursive algorithms, the symbolic
        # equations derived only when asked for (netdyn.numerics.functions.treedynamics)
        if equations is None:  # (imported here: it brings numba, which a circuit never needs)
            from netdyn.numerics.functions.treedynamics import tree_dynamics
        self._tree = None if equations is not None else tree_dynamics(model)
        self._power = None
        self._dh_df = None
        self._kernel = False  # the fused kernel: not built yet
        if self._tree is not None:
            self.n, self.m1, self.m2 = self._tree.n, self._tree.m, 0
            self.parameters, self.inputs = list(self._tree.parameters), []
            self.has_constraints = self.m1 > 0  # cut joints
            self._R_idx = None
            return
        eq = self.eq
        self.n = eq.n
        self.m1 = len(eq.phi)
        self.m2 = len(eq.a0)
        self.parameters = list(eq.parameters)
        self.inputs = list(eq.inputs)
        args = [t, eq.q, eq.f, self.parameters, self.inputs]
        self._M_idx = np.array(list(eq.M.keys()), dtype=int).reshape(-1, 2)
        self._Pq_idx = np.array(list(eq.Phi_q.keys()), dtype=int).reshape(-1, 2)
        self._A_idx = np.array(list(eq.A.keys()), dtype=int).reshape(-1, 2)
        self._nM = len(eq.M)
        self._args = args
        self._nPq, self._nA = len(eq.Phi_q), len(eq.A)
        self._dyn_fn = self._con_fn = None
        servo = eq.R is not None
        self._R_idx = np.array(list(eq.R.keys()), dtype=int).reshape(-1, 2) if servo else None
        self._R = _lambdify(args, list(eq.R.values())) if servo and eq.R else None
        self.has_constraints = (self.m1 + self.m2) > 0

    @property
    def eq(self):
        """The derived :class:`~netdyn.lagrange.equations.Equations` (derived on first use for a tree
        evaluated by the recursive path)."""
        if self._eq is None:
            self._eq = self.model.derive()
        return self._eq

    def inertial_columns(self):
        """Indices of the coordinates whose flows have inertia (a column of ``M`` with an entry)."""
        if self._tree is not None:
            return set(range(self.n))
        return {j for (_, j) in self.eq.M.keys()}

    def tree_kernel(self, p):
        """For an open tree on the recursive path, what the projection integrator calls in place of the
        KKT solve (:class:`~netdyn.numerics.functions.treedynamics.TreeKernel`); else None."""
        return None if self._tree is None else self._tree.kernel(p)

    def coupled_groups(self):
        """The coordinates whose accelerations one solve couples: connected components of the pattern of
        ``M`` and the constraint Jacobians (a list of index arrays). Roundoff in one solve is relative to the
        largest acceleration it yields, so :func:`netdyn.numerics.simulate.scaled_atol` floors the absolute
        tolerances of each group at the scale of its largest member."""
        if self._tree is not None:
            return [np.arange(self.n)]
        from scipy.sparse import coo_matrix
        from scipy.sparse.csgraph import connected_components

        eq = self.eq
        rows, cols = [], []
        for i, j in eq.M.keys():
            rows.append(i); cols.append(j)
        for offset, block in ((0, eq.Phi_q), (len(eq.phi), eq.A)):  # one constraint couples its columns
            for (r, j) in block.keys():
                rows.append(self.n + offset + r); cols.append(j)
        size = self.n + self.m1 + self.m2
        graph = coo_matrix((np.ones(len(rows)), (rows, cols)), shape=(size, size))
        _, label = connected_components(graph, directed=False)
        label = label[: self.n]
        return [np.flatnonzero(label == k) for k in np.unique(label)]

    def time_expressions(self):
        """The expressions where source waveforms can appear (for their corners): h, φ and a."""
        if self._tree is not None:  # bodies, joints and gravity; loads that are functions of time
            return self._tree.time_expressions()
        eq = self.eq
        return list(eq.h) + list(eq.phi) + list(eq.a0)

    @property
    def kernel(self):
        """The fused compiled evaluation of :mod:`netdyn.numerics.functions.kernel` (built on first use), or None
        where it does not apply (PWL/PULSE sources, very large models): then ``lambdify`` serves."""
        if self._kernel is False and self._tree is not None:
            self._kernel = None  # the recursive tree evaluates M and h itself
        if self._kernel is False:
            power = (dissipated_power(self.model), supplied_power(self.model))
            self._kernel = state_kernel(self.eq, self.parameters, self.inputs, power)
        return self._kernel

    @kernel.setter
    def kernel(self, value):
        if value is not None:
            raise ValueError("the kernel can only be switched off (None): the lambdified reference path")
        self._kernel = None

    # compiled on first use: a network integrated on the element templates
    # (:mod:`netdyn.numerics.functions.assembly`) never needs the whole-model functions
    @property
    def _dyn(self):
        if self._dyn_fn is None:
            self._dyn_fn = _lambdify(self._args, list(self.eq.M.values()) + list(self.eq.h))
        return self._dyn_fn

    @property
    def _con(self):
        if self._con_fn is None:
            eq = self.eq
            self._con_fn = _lambdify(self._args, list(eq.phi) + list(eq.Phi_q.values()) + list(eq.Phi_t)
                                     + list(eq.gamma_phi) + list(eq.A.values()) + list(eq.a0) + list(eq.gamma_psi))
        return self._con_fn

    # --------------------------------------------------------------- parameters
    def parameter_vector(self, params=None):
        """Numeric values for the model's parameters: defaults from the model, overridden by ``params``.

        Keys may be symbols or their names. An unknown key or a missing value is a ``ParameterError``.
        """
        params = dict(params or {})
        input_names = {str(s) for s in self.inputs}
        input_values = {str(k): params.pop(k) for k in list(params) if str(k) in input_names}
        missing_inputs = sorted(input_names - set(input_values))
        if missing_inputs:
            raise ParameterError(f"no value for input(s) {missing_inputs}; pass params={{{missing_inputs[0]!r}: "
                                 "expression of netdyn.t or callable}")
        fns = [_input_function(input_values[str(s)], str(s)) for s in self.inputs]
        by_name = {str(s): s for s in self.parameters}
        values = {}
        for k, v in self.model.parameters.items():
            if k in self.parameters:
                values[k] = v
        for k, v in params.items():
            sym = by_name.get(str(k))
            if sym is None:
                raise ParameterError(
                    f"unknown parameter {str(k)!r}; the model's parameters are {sorted(by_name) or 'none'}")
            values[sym] = v
        missing = [str(s) for s in self.parameters if s not in values]
        if missing:
            raise ParameterError(f"no value for parameter(s) {missing}; pass params={{{missing[0]!r}: ...}}")
        vec = np.empty(len(self.parameters))
        for i, s in enumerate(self.parameters):
            vec[i] = real(values[s], parameter=f"parameter {s}")  # never sympify a string: "1k" is 1000
        return Params(vec, fns)

    # --------------------------------------------------------------- evaluation
    def dynamics(self, tt, q, f, p):
        """Mass matrix M (n×n) and the force vector h (n) at one state."""
        if self._tree is not None:
            return self._tree.dynamics(tt, np.asarray(q, dtype=float), np.asarray(f, dtype=float), p.vector)
        if self.kernel is not None:
            return self.kernel.dynamics(tt, q, f, p.vector, p.inputs(tt))
        vals = self._dyn(tt, q, f, p.vector, p.inputs(tt))
        M = np.zeros((self.n, self.n))
        if self._nM:
            M[self._M_idx[:, 0], self._M_idx[:, 1]] = np.asarray(vals[: self._nM], dtype=float)
        h = np.asarray(vals[self._nM:], dtype=float).reshape(self.n)
        return M, h

    def constraints(self, tt, q, f, p):
        """Constraint values, Jacobians and acceleration-level terms at one state."""
        if self._tree is not None:  # the cut joints' rows through the tree's kinematics
            z = np.zeros(0)
            phi, J, gamma = self._tree.constraints(tt, np.asarray(q, dtype=float), np.asarray(f, dtype=float),
                                                   p.vector)
            return ConstraintValues(phi, J, np.zeros(self.m1), gamma, np.zeros((0, self.n)), z, z)
        if self.kernel is not None:
            return ConstraintValues(*self.kernel.constraints(tt, q, f, p.vector, p.inputs(tt)))
        vals = self._con(tt, q, f, p.vector, p.inputs(tt))
        vals = [float(v) for v in vals]
        m1, m2, n = self.m1, self.m2, self.n
        i = 0
        phi = np.array(vals[i:i + m1]); i += m1
        Pq = np.zeros((m1, n))
        if self._nPq:
            Pq[self._Pq_idx[:, 0], self._Pq_idx[:, 1]] = vals[i:i + self._nPq]
        i += self._nPq
        Pt = np.array(vals[i:i + m1]); i += m1
        gphi = np.array(vals[i:i + m1]); i += m1
        A = np.zeros((m2, n))
        if self._nA:
            A[self._A_idx[:, 0], self._A_idx[:, 1]] = vals[i:i + self._nA]
        i += self._nA
        a = np.array(vals[i:i + m2]); i += m2
        gpsi = np.array(vals[i:i + m2])
        R = None
        if self._R_idx is not None:  # servo constraints: μ acts along R, not along A
            R = np.zeros((m2, n))
            if self._R is not None:
                R[self._R_idx[:, 0], self._R_idx[:, 1]] = [float(v) for v in self._R(tt, q, f, p.vector, p.inputs(tt))]
        return ConstraintValues(phi, Pq, Pt, gphi, A, a, gpsi, R)

    def power(self, tt, q, f, lam, mu, p):
        """Dissipated and supplied power at one state (for the energy quadratures)."""
        if self._tree is not None:  # dampers dissipate, actuators, torques and forces supply
            return self._tree.power(tt, np.asarray(q, dtype=float), np.asarray(f, dtype=float), p.vector)
        if self.kernel is not None:
            return self.kernel.power(tt, q, f, lam, mu, p.vector, p.inputs(tt))
        if self._power is None:
            eq = self.eq
            exprs, tables = tabulate([dissipated_power(self.model), supplied_power(self.model)])
            self._power = sp.lambdify([t, eq.q, eq.f, eq.lam, eq.mu, self.parameters, self.inputs], exprs,
                                      modules=[tables, "numpy"], cse=True)
        pd, ps = self._power(tt, q, f, lam, mu, p.vector, p.inputs(tt))
        return float(pd), float(ps)

    def dh_df(self, tt, q, f, p):
        """∂h/∂f (n×n) at one state: damping and gyroscopic terms, compiled on first use."""
        if self._tree is not None:  # h is quadratic in f: ∂h/∂f by central differences is exact to rounding
            J = np.zeros((self.n, self.n))
            for k in range(self.n):
                e = np.zeros(self.n)
                e[k] = 1e-6 * max(1.0, abs(f[k]))
                J[:, k] = (self.dynamics(tt, q, f + e, p)[1] - self.dynamics(tt, q, f - e, p)[1]) / (2 * e[k])
            return J
        if self._dh_df is None:
            eq = self.eq
            index_f = {s: i for i, s in enumerate(eq.f)}
            entries = {}
            for i, hi in enumerate(eq.h):
                for s in sp.sympify(hi).free_symbols:
                    if s in index_f:
                        entries[(i, index_f[s])] = sp.diff(hi, s)
            idx = np.array(list(entries.keys()), dtype=int).reshape(-1, 2)
            fn = _lambdify([t, eq.q, eq.f, self.parameters, self.inputs], list(entries.values()))
            self._dh_df = (idx, fn)
        idx, fn = self._dh_df
        J = np.zeros((self.n, self.n))
        if idx.size:
            J[idx[:, 0], idx[:, 1]] = np.asarray(fn(tt, q, f, p.vector, p.inputs(tt)), dtype=float)
        return J

    def kkt(self, tt, q, f, p):
        """The KKT system of the index-1 form ``K [q̈; λ; μ] = r`` (a :class:`KKT`; unpacks as ``K, r, c``).

        Without constraints ``K`` is the mass matrix and ``c`` is None.
        """
        self._check_state(q, f)
        if self.kernel is not None and not self.has_constraints:
            K, r = self.kernel.kkt(tt, q, f, p.vector, p.inputs(tt))
            return KKT(K, r, None, self.n, 0, 0)
        if self.kernel is not None:
            K, r = self.kernel.kkt(tt, q, f, p.vector, p.inputs(tt))
            return KKT(K, r, self.constraints(tt, q, f, p), self.n, self.m1, self.m2)
        M, h = self.dynamics(tt, q, f, p)
        if not self.has_constraints:
            return KKT(M, -h, None, self.n, 0, 0)
        c = self.constraints(tt, q, f, p)
        C = c.jacobian
        m = C.shape[0]
        K = np.zeros((self.n + m, self.n + m))
        K[: self.n, : self.n] = M
        K[: self.n, self.n:] = c.reaction_jacobian.T  # where the multipliers act (= C unless servo constraints)
        K[self.n:, : self.n] = C
        r = np.concatenate([-h, -c.gamma_phi, -c.gamma_psi])
        return KKT(K, r, c, self.n, self.m1, self.m2)

    def _check_state(self, q, f):
        if len(q) != self.n or len(f) != self.n:
            raise ModelError(f"the model has {self.n} coordinates; got q of length {len(q)} and f of {len(f)}")

    def kkt_system(self, tt, q, f, p):
        """``(K, r)`` of :meth:`kkt` without the constraint record (the right-hand side's inner loop)."""
        if self.kernel is not None:
            self._check_state(q, f)
            return self.kernel.kkt(tt, q, f, p.vector, p.inputs(tt))
        kkt = self.kkt(tt, q, f, p)
        return kkt.K, kkt.r

    def accelerations(self, tt, q, f, p):
        """q̈, λ, μ at one state from the index-1 (KKT) form (an open tree: the articulated-body algorithm)."""
        if self._tree is not None and not self.has_constraints:
            self._check_state(q, f)
            acc = self._tree.accelerations(tt, np.asarray(q, dtype=float), np.asarray(f, dtype=float), p.vector)
            return acc, np.zeros(0), np.zeros(0)
        kkt = self.kkt(tt, q, f, p)
        return kkt.split(np.linalg.solve(kkt.K, kkt.r))


@dataclass
class KKT:
    """``K z = r`` with ``z = [q̈; λ; μ]``; ``c`` the constraint values used (None without constraints).

    Unpacks as ``K, r, c``; :meth:`split` names the parts of a solution ``z``.
    """

    K: np.ndarray
    r: np.ndarray
    c: ConstraintValues | None
    n: int
    m1: int
    m2: int

    def __iter__(self):
        return iter((self.K, self.r, self.c))

    def split(self, z):
        """``(q̈, λ, μ)`` of a solution vector."""
        n, m1 = self.n, self.m1
        return z[:n], z[n:n + m1], z[n + m1:]


def compile_model(model):
    """Compile a model once (cached on the model)."""
    cm = model._compiled.get("lambdify")
    if cm is None:
        cm = CompiledModel(model)
        model._compiled["lambdify"] = cm
    return cm
