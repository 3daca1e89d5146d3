"""The constrained dynamics of a compiled model, evaluated and solved without the interpreter in the loop.

:class:`FastKKT` is what the projection integrator calls at every right-hand side, projection and
output time in place of :meth:`CompiledModel.kkt <netdyn.numerics.functions.compiled.CompiledModel.kkt>`:

* **one compiled function** returns every term of the KKT system at once (the entries of ``M``, ``h``,
  ``φ``, the entries of ``Φ_q``, ``Φ_t``, ``γ_φ``, ``A``, ``a``, ``γ_ψ``): symengine's LLVM ``Lambdify``
  (``opt_level=0``: 0.05 s to compile and 5 µs a call for the 100-link chain in absolute coordinates,
  where the separate sympy functions took 0.5 ms), sympy's ``lambdify`` where symengine or its LLVM
  backend is missing or the model holds piecewise sources;
* **a structured solve** when ``M`` is diagonal (bodies in absolute coordinates of their centres of mass):
  ``q̈ = M⁻¹(−h − Cᵀλ)`` with ``(C M⁻¹ Cᵀ) λ = γ − C M⁻¹ h``, where ``C M⁻¹ Cᵀ`` is assembled straight
  into LAPACK's band storage through index arrays fixed once (rows ordered by reverse Cuthill–McKee) and
  factorised by banded Cholesky (``dpbtrf``): O(m) for a chain, no fill, where the KKT LU is O((n + m)³)
  dense or a SuperLU call per step. The same :class:`Gram` factorises ``Φ_q Φ_qᵀ`` and ``C Cᵀ`` for the
  projection, and its smallest eigenvalue is what the singularity watch tests cheaply.

Anything else (a full mass matrix, servo constraints, a band wider than a third of the rows) keeps the
KKT matrix and the dense or sparse LU of :func:`netdyn.numerics.mechanics.projection.solve_kkt`.
The build checks the compiled function against the reference functions at one state to 1e-9 and falls
back to them if it disagrees; ``tests/test_fastkkt.py`` checks every path against the reference to 1e-9.

>>> import numpy as np
>>> from netdyn import Network
>>> from netdyn.components.planar import RigidBody, Revolute, Gravity
>>> from netdyn.numerics.functions.compiled import compile_model
>>> net = Network()
>>> _ = net.add(RigidBody("l1", 1, 0.1), Gravity(), Revolute("A", "ground", (0, 0), "l1", (-0.5, 0)))
>>> cm = compile_model(net.model())
>>> fast = FastKKT(cm, cm.parameter_vector())
>>> q, f = np.array([0.5, 0.0, 0.0]), np.zeros(3)
>>> acc, lam, mu = fast.solve(0.0, q, f)
>>> ref = cm.accelerations(0.0, q, f, cm.parameter_vector())[0]
>>> fast.structured, bool(np.allclose(acc, ref, rtol=0, atol=1e-12))
(True, True)
"""
from __future__ import annotations


import numpy as np
import scipy.linalg.lapack as lapack
import sympy as sp
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import reverse_cuthill_mckee

from netdyn.errors import SingularSystemError
from netdyn.numerics.functions.compiled import ConstraintValues, _lambdify
from netdyn.numerics.functions.energy import dissipated_power, supplied_power
from netdyn.numerics.functions.kernel import compile_llvm
from netdyn.numerics.mechanics.schur_kernel import schur_solve
from netdyn.symbols import t

PIVOT_RATIO = 1e-12  # a pivot below this fraction of the largest is a lost rank (as the KKT LU's test)


def singular(tt):
    """The error of a KKT system that lost rank at ``tt`` (a dead centre, a locked linkage)."""
    return SingularSystemError(
        f"singular configuration at t = {tt:.6g}: the constrained mass matrix lost rank "
        "(a dead centre, a locked linkage or redundant constraints); check the mechanism or stop before it")


# --------------------------------------------------------------------------- one compiled function
def _has_special(exprs):
    return any(sp.sympify(e).has(sp.Piecewise, sp.Heaviside, sp.Min, sp.Max, sp.sign, sp.Abs) for e in exprs)


def fused_function(args, exprs):
    """A function ``fn(x) -> ndarray`` of the flat argument vector ``x`` (the symbols ``args`` in order)
    giving every expression of ``exprs``; symengine LLVM where it can, sympy ``lambdify`` otherwise.

    >>> a, b = sp.symbols("a b")
    >>> fused_function([a, b], [a * b, sp.sin(a) + b])(np.array([2.0, 3.0])).round(6).tolist()
    [6.0, 3.909297]
    """
    exprs = [sp.sympify(e) for e in exprs]
    if not exprs:
        return lambda x: np.zeros(0)
    if not _has_special(exprs):
        try:
            return _llvm(args, exprs)
        except Exception:  # no symengine, no LLVM backend, an unsupported function: the sympy path below
            pass
    fn = _lambdify([list(args)], exprs)
    return lambda x: np.asarray(fn(x), dtype=float).reshape(-1)


def _llvm(args, exprs):
    fn = compile_llvm(args, exprs, opt_level=0)  # the one LLVM compile helper (renames x0, x1, ... first)
    if fn is None:
        raise ValueError("symengine's LLVM backend cannot compile these expressions")
    size = len(exprs)

    def call(x):
        out = np.empty(size)
        fn.unsafe_real(np.ascontiguousarray(x, dtype=float), out)
        return out
    return call


# --------------------------------------------------------------------------- banded Gram matrices
class Gram:
    """``C W Cᵀ`` for a sparse ``C`` of fixed pattern (COO ``rows``, ``cols``) and a diagonal ``W``, in band
    storage with its rows in reverse Cuthill–McKee order, factorised by banded Cholesky.

    >>> g = Gram(np.array([0, 0, 1]), np.array([0, 1, 1]), 2, 2)
    >>> g.factor(np.array([1.0, 1.0, 2.0]), np.ones(2))            # C = [[1, 1], [0, 2]]
    True
    >>> g.solve(np.array([2.0, 2.0])).round(12).tolist()           # C Cᵀ = [[2, 2], [2, 4]]
    [1.0, 0.0]
    """

    def __init__(self, rows, cols, m, n):
        self.m, self.n = m, n
        self.rows, self.cols = np.asarray(rows, dtype=np.intp), np.asarray(cols, dtype=np.intp)
        pattern = coo_matrix((np.ones(self.rows.size), (self.rows, self.cols)), shape=(m, n)).tocsr()
        gram = (pattern @ pattern.T).tocsr()
        perm = reverse_cuthill_mckee(gram, symmetric_mode=True) if m else np.zeros(0, dtype=np.intp)
        self.perm = np.asarray(perm, dtype=np.intp)            # band position -> constraint row
        self.position = np.empty(m, dtype=np.intp)
        self.position[self.perm] = np.arange(m)
        k1, k2 = [], []
        by_col = {}
        for k, c in enumerate(self.cols):
            by_col.setdefault(int(c), []).append(k)
        for ks in by_col.values():
            for a in ks:
                for b in ks:
                    if self.position[self.rows[a]] >= self.position[self.rows[b]]:
                        k1.append(a)
                        k2.append(b)
        self.k1, self.k2 = np.array(k1, dtype=np.intp), np.array(k2, dtype=np.intp)
        pi, pj = self.position[self.rows[self.k1]], self.position[self.rows[self.k2]]
        self.kd = int(np.max(pi - pj)) if pi.size else 0
        self.slot = (pi - pj) * m + pj                          # flat index into the (kd + 1) × m band
        self.pair_col = self.cols[self.k1]
        self.band_i, self.band_j = (pi - pj).astype(np.intp), pj.astype(np.intp)
        self.prow = self.position[self.rows] if m else self.rows  # rows renumbered in band order
        self.size = (self.kd + 1) * m
        self.banded = m > 0 and (m <= 12 or self.kd <= m // 3)
        self.c = None

    def factor(self, vals, w):
        """Factorise ``C W Cᵀ`` for the entries ``vals`` of ``C`` and the diagonal ``w``; False if singular."""
        if not self.m:
            self.c = np.zeros((1, 0))
            return True
        band = np.bincount(self.slot, weights=vals[self.k1] * vals[self.k2] * w[self.pair_col],
                           minlength=self.size).reshape(self.kd + 1, self.m)
        c, info = lapack.dpbtrf(band, lower=1, overwrite_ab=1)
        if info != 0:
            self.c = None
            return False
        d = c[0]  # the Cholesky diagonal: the pivots are its squares
        self.c, self._last = c, (vals, w)
        return bool(d.min() > np.sqrt(PIVOT_RATIO) * d.max())

    def last_matvec(self, x):
        """``C W Cᵀ x`` for the matrix of the last :meth:`factor`."""
        return self.matvec(*self._last, x)

    def solve(self, b):
        """``(C W Cᵀ)⁻¹ b`` with the last factorisation (``b`` in constraint order)."""
        if not self.m:
            return np.zeros(0)
        x, _ = lapack.dpbtrs(self.c, b[self.perm], lower=1)
        out = np.empty(self.m)
        out[self.perm] = x
        return out

    def matvec(self, vals, w, x):
        """``C W Cᵀ x`` (constraint order)."""
        y = np.bincount(self.cols, weights=vals * x[self.rows], minlength=self.n) * w
        return np.bincount(self.rows, weights=vals * y[self.cols], minlength=self.m)

    def apply(self, vals, x):
        """``C x`` for the entries ``vals``."""
        return np.bincount(self.rows, weights=vals * x[self.cols], minlength=self.m)

    def apply_t(self, vals, lam):
        """``Cᵀ λ``."""
        return np.bincount(self.cols, weights=vals * lam[self.rows], minlength=self.n)


# --------------------------------------------------------------------------- the KKT system
class FastKKT:
    """The KKT system ``[[M, Cᵀ], [C, 0]] [q̈; λ; μ] = [−h; −γ]`` of a compiled model with parameters ``p``.

    ``structured`` says whether the banded Schur-complement solve applies (diagonal ``M``, no servo
    constraints, a narrow band); otherwise :meth:`solve` assembles the KKT matrix from the one compiled
    function and hands it to ``dense_solve(K, r, tt)``.
    """

    def __init__(self, cm, p, dense_solve=None):
        eq = cm.eq
        if eq.R is not None:
            raise ValueError("servo constraints: the multipliers act along R, not along C")
        self.cm, self.p, self.n, self.m1, self.m2 = cm, p, cm.n, cm.m1, cm.m2
        self.dense_solve = dense_solve
        self.args = [t] + list(eq.q) + list(eq.f) + list(cm.parameters) + list(cm.inputs)
        n, m1, m2 = self.n, self.m1, self.m2
        # output order M, h, φ, Φ_q, A, Φ_t, a, γ_φ, γ_ψ: C's entries, [Φ_t; a] and γ are contiguous slices
        order = [0, 1, 2, 3, 6, 4, 7, 5, 8]
        parts = [list(eq.M.values()), list(eq.h), list(eq.phi), list(eq.Phi_q.values()), list(eq.Phi_t),
                 list(eq.gamma_phi), list(eq.A.values()), list(eq.a0), list(eq.gamma_psi)]
        sizes = np.cumsum([0] + [len(parts[k]) for k in order])
        self.sl = [None] * 9
        for k, a, b in zip(order, sizes[:-1], sizes[1:]):
            self.sl[k] = slice(int(a), int(b))
        self.c_slice = slice(self.sl[3].start, self.sl[6].stop)         # entries of C = [Φ_q; A]
        self.vel_slice = slice(self.sl[4].start, self.sl[7].stop)       # [Φ_t; a]
        self.gamma_slice = slice(self.sl[5].start, self.sl[8].stop)     # [γ_φ; γ_ψ]
        parts = [parts[k] for k in order]
        self.fn = fused_function(self.args, [e for part in parts for e in part])
        self.M_idx = np.array(list(eq.M.keys()), dtype=np.intp).reshape(-1, 2)
        Pq_idx = np.array(list(eq.Phi_q.keys()), dtype=np.intp).reshape(-1, 2)
        A_idx = np.array(list(eq.A.keys()), dtype=np.intp).reshape(-1, 2)
        self.rows = np.concatenate([Pq_idx[:, 0], A_idx[:, 0] + m1]).astype(np.intp)
        self.cols = np.concatenate([Pq_idx[:, 1], A_idx[:, 1]]).astype(np.intp)
        self.C = Gram(self.rows, self.cols, m1 + m2, n)                      # C M⁻¹ Cᵀ of the solve
        self.Cp = Gram(self.rows, self.cols, m1 + m2, n)                     # C Cᵀ of the projection
        self.Phi = Gram(Pq_idx[:, 0], Pq_idx[:, 1], m1, n) if m2 else self.Cp  # Φ_q Φ_qᵀ (position projection)
        self.diagonal = bool(self.M_idx.size) and bool(np.all(self.M_idx[:, 0] == self.M_idx[:, 1])) \
            and self.M_idx.shape[0] == n
        if self.diagonal:
            self.M_pos = np.empty(n, dtype=np.intp)
            self.M_pos[self.M_idx[:, 0]] = np.arange(n)
        self.structured = self.diagonal and (self.C.banded or not self.C.m)
        self.ones = np.ones(n)
        self._band = np.zeros((self.C.kd + 1, self.C.m))
        self._power = None
        self._check()

    # ------------------------------------------------------------------ evaluation
    def values(self, tt, q, f):
        """The flat vector of every term at ``(tt, q, f)``."""
        p = self.p
        x = np.concatenate(([tt], q, f, p.vector, p.inputs(tt) if p.input_functions else ()))
        return self.fn(x)

    def _check(self):
        """One state's values against the reference functions; a disagreement falls back to sympy."""
        rng = np.random.default_rng(7)
        q, f = rng.uniform(-1, 1, self.n), rng.uniform(-1, 1, self.n)
        try:
            v = self.values(0.3, q, f)
            M, h = self.cm.dynamics(0.3, q, f, self.p)
            ref = np.concatenate([M[self.M_idx[:, 0], self.M_idx[:, 1]], h])
            got = v[:self.sl[1].stop]
            if self.cm.has_constraints:
                c = self.cm.constraints(0.3, q, f, self.p)
                ref = np.concatenate([ref, c.phi, c.Phi_t, c.gamma_phi, c.a, c.gamma_psi])
                got = np.concatenate([got, v[self.sl[2]], v[self.sl[4]], v[self.sl[5]], v[self.sl[7]], v[self.sl[8]]])
            ok = got.shape == ref.shape and np.all(np.abs(got - ref) <= 1e-9 * (1 + np.abs(ref)))
        except (ValueError, TypeError, ZeroDivisionError, FloatingPointError):
            ok = True  # the state is outside the model's domain: nothing learnt, keep the compiled function
        if not ok:  # a miscompilation: the caller keeps the reference functions
            raise RuntimeError("compiled KKT terms disagree with the reference functions")

    def constraint_values(self, v):
        """The :class:`~netdyn.numerics.functions.compiled.ConstraintValues` of a flat vector (dense matrices)."""
        n, m1, m2 = self.n, self.m1, self.m2
        Pq = np.zeros((m1, n))
        A = np.zeros((m2, n))
        k = self.sl[3].stop - self.sl[3].start
        Pq[self.rows[:k], self.cols[:k]] = v[self.sl[3]]
        A[self.rows[k:] - m1, self.cols[k:]] = v[self.sl[6]]
        return ConstraintValues(v[self.sl[2]], Pq, v[self.sl[4]], v[self.sl[5]], A, v[self.sl[7]], v[self.sl[8]])

    def c_values(self, v):
        """The entries of ``C = [Φ_q; A]`` in :attr:`rows`/:attr:`cols` order."""
        return v[self.c_slice]

    # ------------------------------------------------------------------ solving
    def solve(self, tt, q, f, v=None):
        """``(q̈, λ, μ)`` at one state; a lost rank is a :class:`SingularSystemError`."""
        v = self.values(tt, q, f) if v is None else v
        n, m1 = self.n, self.m1
        h = v[self.sl[1]]
        if self.structured:
            dm = v[self.sl[0]]
            if not dm.min() > 0:  # a body without inertia (or NaN): the structured solve does not apply
                raise singular(tt)
            if not self.C.m:
                return -h / dm[self.M_pos], np.zeros(0), np.zeros(0)
            C = self.C
            acc, lam = np.empty(n), np.empty(C.m)
            if not schur_solve(dm[self.M_pos], h, v[self.c_slice], v[self.gamma_slice][C.perm], C.prow, C.cols,
                               C.k1, C.k2, C.band_i, C.band_j, C.kd, self._band, acc, lam):
                raise singular(tt)
            lam = lam[C.position]
            return acc, lam[:m1], lam[m1:]
        K, r = self.kkt_matrix(v)
        z = self.dense_solve(K, r, tt)
        return z[:n], z[n:n + m1], z[n + m1:]

    def kkt_matrix(self, v):
        """The KKT matrix and right-hand side (dense) of a flat vector."""
        n, m = self.n, self.m1 + self.m2
        K = np.zeros((n + m, n + m))
        K[self.M_idx[:, 0], self.M_idx[:, 1]] = v[self.sl[0]]
        if m:
            cv = self.c_values(v)
            K[n + self.rows, self.cols] = cv
            K[self.cols, n + self.rows] = cv
        r = -np.concatenate([v[self.sl[1]], v[self.gamma_slice]])
        return K, r

    # ------------------------------------------------------------------ projection
    def project(self, tt, q, f, iterations=8):
        """``(q, f)`` moved onto ``φ = 0`` (Gauss–Newton, minimal Euclidean change) and onto the velocity
        constraints; returns ``(q, f, gram)`` with ``gram`` the factorised ``C Cᵀ`` at the new ``q``
        (for the singularity watch), or None when the dense path was used."""
        q, f = q.copy(), f.copy()
        v = self.values(tt, q, f)
        for _ in range(iterations if self.m1 else 0):
            phi = v[self.sl[2]]
            if np.max(np.abs(phi)) < 1e-14 * (1 + np.max(np.abs(q))):
                break
            pv = v[self.sl[3]]
            if self.Phi.banded and self.Phi.factor(pv, self.ones):
                q -= self.Phi.apply_t(pv, self.Phi.solve(phi))
            else:
                c = self.constraint_values(v)
                q -= c.Phi_q.T @ np.linalg.solve(c.Phi_q @ c.Phi_q.T, c.phi)
            v = self.values(tt, q, f)
        cv = self.c_values(v)
        b = self.Cp.apply(cv, f) + v[self.vel_slice]
        if self.Cp.banded and self.Cp.factor(cv, self.ones):
            f -= self.Cp.apply_t(cv, self.Cp.solve(b))
            return q, f, self.Cp
        c = self.constraint_values(v)
        C = c.jacobian
        f -= C.T @ np.linalg.solve(C @ C.T, b)
        return q, f, None

    # ------------------------------------------------------------------ power
    def power(self, tt, q, f, lam, mu):
        """Dissipated and supplied power (0, 0 without a single dissipating or supplying term)."""
        if self._power is None:
            exprs = [sp.sympify(dissipated_power(self.cm.model)), sp.sympify(supplied_power(self.cm.model))]
            if all(e == 0 for e in exprs):
                self._power = False
            else:
                eq = self.cm.eq
                self._power = fused_function(self.args + list(eq.lam) + list(eq.mu), exprs)
        if self._power is False:
            return 0.0, 0.0
        p = self.p
        x = np.concatenate(([tt], q, f, p.vector, p.inputs(tt) if p.input_functions else (), lam, mu))
        pd, ps = self._power(x)
        return float(pd), float(ps)


def fast_kkt(cm, p, dense_solve):
    """The :class:`FastKKT` of a compiled model, or None where the reference path must serve (servo
    constraints, a compiled function that disagrees with the reference at the check state)."""
    if getattr(cm, "_tree", None) is not None:  # an open tree on the recursive path: the articulated-body algorithm
        return cm.tree_kernel(p)
    try:
        return FastKKT(cm, p, dense_solve)
    except (ValueError, RuntimeError):
        return None
