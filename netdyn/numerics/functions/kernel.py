"""One compiled call for every number an integrator needs at a state: the fused state kernel.

The general integrators (:mod:`~netdyn.numerics.mechanics.projection`,
:mod:`~netdyn.numerics.ida.ida`) ask a
:class:`~netdyn.numerics.functions.compiled.CompiledModel` for ``M, h``, the constraint
values and Jacobians, the KKT matrix and the powers at every right-hand side.
Through sympy's ``lambdify`` each of those is a separate Python function, and
packing its list of numbers into matrices costs more than computing them
(~60 µs a right-hand side for a four-bar). :class:`StateKernel` compiles the
whole list once with symengine's LLVM backend (common sub-expressions shared)
into one machine-code function of ``x = [t, q, f, p, u]`` that writes into a
preallocated buffer, and places the numbers into ``M``, ``Φ_q``, ``A`` and the KKT
matrix with flat index arrays fixed at construction: one call and a few numpy
scatters, ~5 µs.

It applies to models whose expressions symengine compiles as they are: no
``Piecewise``/``Heaviside`` (PWL and PULSE sources keep the table lookup of
:mod:`~netdyn.numerics.functions.pwtable`) and at most :data:`MAX_EXPRESSIONS`
expressions (LLVM's compile time grows faster than the expression count);
:func:`state_kernel` returns ``None`` otherwise and the caller keeps
``lambdify``. Arguments are renamed ``_nd0, _nd1, …`` before compiling:
symengine 0.15 with ``cse=True`` mixes up arguments named like its temporaries
(``x0``, ``x1``; NUMERICS.md).

>>> import numpy as np
>>> from netdyn import LagrangianModel, coordinates, t
>>> x, y = coordinates("x, y")
>>> model = LagrangianModel([x, y], T=(x.diff(t)**2 + y.diff(t)**2) / 2, V=9.81 * y,
...                         constraints=[x**2 + y**2 - 1])
>>> k = state_kernel(model.derive(), [], [], ())
>>> K, r = k.kkt(0.0, np.array([0.6, -0.8]), np.zeros(2), np.zeros(0), np.zeros(0))
>>> K.tolist()
[[1.0, 0.0, 1.2], [0.0, 1.0, -1.6], [1.2, -1.6, 0.0]]
>>> r.tolist()
[-0.0, -9.81, -0.0]
"""
from __future__ import annotations

import numpy as np
import sympy as sp

from netdyn.symbols import t

__all__ = ["StateKernel", "state_kernel", "compile_llvm", "MAX_EXPRESSIONS"]

MAX_EXPRESSIONS = 4000  # above this LLVM's compile time (superlinear) outweighs what the fused call saves
_UNSUPPORTED = (sp.Piecewise, sp.Heaviside, sp.DiracDelta)


def compile_llvm(args, exprs, opt_level=None):
    """symengine LLVM ``Lambdify`` of ``exprs`` in ``args`` (renamed to safe names), or None.

    None when an expression holds a ``Piecewise``/``Heaviside`` or a symbol outside ``args``, or symengine
    cannot compile it (or is not installed). ``opt_level`` is LLVM's (``0`` compiles fastest; default:
    symengine's). Call the result as ``fn.unsafe_real(x, out)`` (float64 arrays of the right sizes).

    >>> import numpy as np
    >>> x0, x1 = sp.symbols("x0 x1")   # named like symengine's temporaries: renamed before compiling
    >>> fn = compile_llvm([x0, x1], [x0 * x1 + sp.sin(x0), (x0 * x1)**2])
    >>> out = np.empty(2)
    >>> fn.unsafe_real(np.array([2.0, 3.0]), out)
    >>> bool(np.allclose(out, [6 + np.sin(2), 36]))
    True
    >>> compile_llvm([x0], [sp.Heaviside(x0)]) is None
    True
    """
    try:
        import symengine as se
    except ImportError:
        return None
    safe = {a: sp.Symbol(f"_nd{k}") for k, a in enumerate(args)}
    allowed = set(safe.values())
    out = []
    for e in exprs:
        e = sp.sympify(e)
        if e.has(*_UNSUPPORTED):
            return None
        e = e.xreplace(safe)
        if not e.free_symbols <= allowed:
            return None
        out.append(e)
    if not out:
        return _Empty()
    try:
        options = {} if opt_level is None else {"opt_level": opt_level}
        return se.Lambdify([se.sympify(s) for s in safe.values()], [se.sympify(e) for e in out], backend="llvm",
                           cse=True, **options)
    except (RuntimeError, TypeError, ValueError, NotImplementedError, AttributeError):
        return None


class _Empty:
    def unsafe_real(self, x, out):
        pass


class StateKernel:
    """``M``, ``h``, the constraint values and Jacobians (and the KKT system) from one compiled call.

    Built by :func:`state_kernel`. Every method takes ``(tt, q, f, pvec, u)``: time, displacements, flows,
    the parameter vector and the input values at ``tt``.
    """

    def __init__(self, eq, fn, power_fn, nparams, ninputs):
        n, m1, m2 = eq.n, len(eq.phi), len(eq.a0)
        self.n, self.m1, self.m2 = n, m1, m2
        self._fn, self._power_fn = fn, power_fn
        self._x = np.empty(1 + 2 * n + nparams + ninputs)
        self._xp = np.empty(1 + 2 * n + m1 + m2 + nparams + ninputs)
        self._np, self._nu = nparams, ninputs
        sizes = [len(eq.M), n, m1, len(eq.Phi_q), m1, m1, len(eq.A), m2, m2, len(eq.R or {})]
        edges = np.concatenate([[0], np.cumsum(sizes)])
        (self._sM, self._sh, self._sphi, self._sPq, self._sPt, self._sgphi, self._sA, self._sa, self._sgpsi,
         self._sR) = [slice(int(a), int(b)) for a, b in zip(edges[:-1], edges[1:])]
        self._buf = np.empty(int(edges[-1]))
        self.servo = eq.R is not None
        idx = lambda d: np.array(list(d.keys()), dtype=np.intp).reshape(-1, 2)
        iM, iPq, iA, iR = idx(eq.M), idx(eq.Phi_q), idx(eq.A), idx(eq.R or {})
        self._flatM = iM[:, 0] * n + iM[:, 1]
        self._flatPq = iPq[:, 0] * n + iPq[:, 1]
        self._flatA = iA[:, 0] * n + iA[:, 1]
        self._flatR = iR[:, 0] * n + iR[:, 1]
        # the KKT matrix [[M, [Φ_q; R]ᵀ], [[Φ_q; A], 0]]: where each buffer value lands (flat indices)
        N = n + m1 + m2
        self.size = N
        src, dst = [np.arange(self._sM.start, self._sM.stop)], [iM[:, 0] * N + iM[:, 1]]
        pq = np.arange(self._sPq.start, self._sPq.stop)
        src += [pq, pq]
        dst += [iPq[:, 1] * N + n + iPq[:, 0], (n + iPq[:, 0]) * N + iPq[:, 1]]
        a = np.arange(self._sA.start, self._sA.stop)
        src.append(a)
        dst.append((n + m1 + iA[:, 0]) * N + iA[:, 1])
        if self.servo:  # μ acts along R, not along A
            rr = np.arange(self._sR.start, self._sR.stop)
            src.append(rr)
            dst.append(iR[:, 1] * N + n + m1 + iR[:, 0])
        else:
            src.append(a)
            dst.append(iA[:, 1] * N + n + m1 + iA[:, 0])
        self._kkt_src = np.concatenate(src).astype(np.intp)
        self._kkt_dst = np.concatenate(dst).astype(np.intp)

    # ------------------------------------------------------------------ evaluation
    def values(self, tt, q, f, pvec, u):
        """The raw buffer ``[M entries, h, φ, Φ_q entries, Φ_t, γ_φ, A entries, a, γ_ψ, R entries]``."""
        x, n = self._x, self.n
        x[0] = tt
        x[1:1 + n] = q
        x[1 + n:1 + 2 * n] = f
        x[1 + 2 * n:1 + 2 * n + self._np] = pvec
        if self._nu:
            x[1 + 2 * n + self._np:] = u
        self._fn.unsafe_real(x, self._buf)
        return self._buf

    def part(self, name):
        """The slice of the buffer of :meth:`values` holding ``"h"``, ``"phi"``, ``"Phi_t"``, ``"a"``, …."""
        return {"h": self._sh, "phi": self._sphi, "Phi_t": self._sPt, "gamma_phi": self._sgphi, "a": self._sa,
                "gamma_psi": self._sgpsi}[name]

    def kkt(self, tt, q, f, pvec, u):
        """``K, r`` of the index-1 system ``K [q̈; λ; μ] = r`` (``K = M``, ``r = −h`` without constraints)."""
        b = self.values(tt, q, f, pvec, u)
        N = self.size
        K = np.zeros(N * N)
        K[self._kkt_dst] = b[self._kkt_src]
        r = np.empty(N)
        r[:self.n] = -b[self._sh]
        r[self.n:self.n + self.m1] = -b[self._sgphi]
        r[self.n + self.m1:] = -b[self._sgpsi]
        return K.reshape(N, N), r

    def dynamics(self, tt, q, f, pvec, u):
        """``M`` (n×n) and ``h`` (n)."""
        b = self.values(tt, q, f, pvec, u)
        n = self.n
        M = np.zeros(n * n)
        M[self._flatM] = b[self._sM]
        return M.reshape(n, n), b[self._sh].copy()

    def constraints(self, tt, q, f, pvec, u):
        """``(φ, Φ_q, Φ_t, γ_φ, A, a, γ_ψ, R)``, ``R`` None without servo constraints."""
        b = self.values(tt, q, f, pvec, u)
        n, m1, m2 = self.n, self.m1, self.m2
        Pq = np.zeros(m1 * n)
        Pq[self._flatPq] = b[self._sPq]
        A = np.zeros(m2 * n)
        A[self._flatA] = b[self._sA]
        R = None
        if self.servo:
            R = np.zeros(m2 * n)
            R[self._flatR] = b[self._sR]
            R = R.reshape(m2, n)
        return (b[self._sphi].copy(), Pq.reshape(m1, n), b[self._sPt].copy(), b[self._sgphi].copy(),
                A.reshape(m2, n), b[self._sa].copy(), b[self._sgpsi].copy(), R)

    def power(self, tt, q, f, lam, mu, pvec, u):
        """Dissipated and supplied power."""
        x, n, m1, m2 = self._xp, self.n, self.m1, self.m2
        x[0] = tt
        x[1:1 + n] = q
        x[1 + n:1 + 2 * n] = f
        x[1 + 2 * n:1 + 2 * n + m1] = lam
        x[1 + 2 * n + m1:1 + 2 * n + m1 + m2] = mu
        k = 1 + 2 * n + m1 + m2
        x[k:k + self._np] = pvec
        if self._nu:
            x[k + self._np:] = u
        out = np.zeros(2)
        self._power_fn.unsafe_real(x, out)
        return float(out[0]), float(out[1])


def state_kernel(eq, parameters, inputs, power_exprs):
    """A :class:`StateKernel` for derived equations ``eq``, or None where it does not apply.

    Parameters
    ----------
    eq : Equations
        ``model.derive()``.
    parameters, inputs : list of Symbol
        The free parameters and input symbols, in the order of the parameter and input vectors.
    power_exprs : sequence of two expressions, or ()
        Dissipated and supplied power in ``eq``'s symbols (with ``λ``, ``μ``); ``()`` for none.

    Returns
    -------
    StateKernel or None
        None if an expression holds a ``Piecewise``/``Heaviside``, a symbol outside the arguments, or
        the model has more than :data:`MAX_EXPRESSIONS` expressions.
    """
    exprs = (list(eq.M.values()) + list(eq.h) + list(eq.phi) + list(eq.Phi_q.values()) + list(eq.Phi_t)
             + list(eq.gamma_phi) + list(eq.A.values()) + list(eq.a0) + list(eq.gamma_psi)
             + list((eq.R or {}).values()))
    if len(exprs) > MAX_EXPRESSIONS:
        return None
    args = [t, *eq.q, *eq.f, *parameters, *inputs]
    fn = compile_llvm(args, exprs)
    if fn is None:
        return None
    pargs = [t, *eq.q, *eq.f, *eq.lam, *eq.mu, *parameters, *inputs]
    power_fn = compile_llvm(pargs, list(power_exprs) or [sp.S.Zero, sp.S.Zero])
    if power_fn is None:
        return None
    return StateKernel(eq, fn, power_fn, len(parameters), len(inputs))
