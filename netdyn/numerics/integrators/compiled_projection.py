"""``Projection``'s stepping loop compiled: DOP853, projection, outputs and the singularity watch in one numba loop.

:class:`~netdyn.numerics.integrators.projection.Projection` drives scipy's
DOP853 from Python: every stage, every projection and every dense output goes
through the interpreter, ~1 ms a step for a four-bar, which is why 100 s of a
four-bar turning ever faster took minutes. :class:`CompiledProjection` runs the
same algorithm — scipy's DOP853 (its coefficients, error norm, step-size
control and 7th-order dense output), projection of ``q`` onto ``φ = 0`` and of
``f`` onto the velocity constraints after every accepted step and at every
output, and the test of :class:`~netdyn.numerics.structure.SingularityWatch`
(``σ_min/σ_max`` of ``Φ_q`` at every step; at a local minimum below ``suspect``
it is minimised over the neighbouring steps, and below ``tol`` the run stops
with a :class:`~netdyn.errors.SingularSystemError`) — inside one compiled loop.
The model enters as the machine-code functions of the fused
:class:`~netdyn.numerics.kernel.StateKernel` (symengine LLVM), called through
their addresses, so the loop is compiled once (and cached on disk) for every
model.

``simulate(..., compiled_loop=True)`` uses it (or ``"auto"``: only when
:func:`loop_cached` finds the loop already compiled, in this process or in
numba's on-disk cache; :func:`warm_up` — ``netdyn warmup`` — fills that cache
once, ~20 s of CPU). It takes over when the kernel exists, the model has no input functions (Python
callables), the method is DOP853 and no ``progress`` callback is asked for; the
KKT system is solved by LU with partial pivoting (a lost pivot is the same
dead-centre error as :func:`~netdyn.numerics.integrators.projection.solve_kkt`).
Otherwise :class:`Projection`'s Python loop runs. ``tests/test_mixed.py``
checks the two loops agree to 1e-9.

>>> import numpy as np
>>> from netdyn import LagrangianModel, coordinates, t
>>> from netdyn.numerics.compiled import compile_model
>>> x, y = coordinates("x, y")
>>> cm = compile_model(LagrangianModel([x, y], T=(x.diff(t)**2 + y.diff(t)**2) / 2, V=9.81 * y,
...                                    constraints=[x**2 + y**2 - 1]))
>>> tr = CompiledProjection(cm, cm.parameter_vector()).integrate(
...     0, 1, np.array([0.6, -0.8]), np.zeros(2), np.array([0.5, 1.0]), 1e-10, 1e-12)
>>> bool(abs(tr.q[0, -1]**2 + tr.q[1, -1]**2 - 1) < 1e-13)
True
"""
from __future__ import annotations

import ctypes

import numpy as np
from numba import njit

#: numba caches on disk only under the package name: a cache written by a bare-name import of this file
#: (``python -m doctest path/to/it.py``) is found by the package import and fails to load there
CACHE = __name__.startswith("netdyn.")
from scipy.integrate._ivp import dop853_coefficients as _dop
from scipy.integrate._ivp.common import select_initial_step

from netdyn.errors import SingularSystemError
from netdyn.numerics.integrators.base import split_atol, work_atol
from netdyn.numerics.fastkkt import singular
from netdyn.numerics.integrators.projection import SPARSE_KKT, Projection, kkt_solutions
from netdyn.numerics.structure import SingularityWatch, integration_failure
from netdyn.numerics.trajectory import SUCCESS, Trajectory

_NS = _dop.N_STAGES
_A = np.ascontiguousarray(_dop.A, dtype=float)
_B = np.ascontiguousarray(_dop.B, dtype=float)
_C = np.ascontiguousarray(_dop.C, dtype=float)
_E3 = np.ascontiguousarray(_dop.E3, dtype=float)
_E5 = np.ascontiguousarray(_dop.E5, dtype=float)
_D = np.ascontiguousarray(_dop.D, dtype=float)
_EXPONENT = -1.0 / 8.0  # DOP853's error estimator is of order 7
OK, TOO_SMALL, SINGULAR_KKT, CHANGE_POINT = 0, 1, 2, 3


# ----------------------------------------------------------------------------- model evaluation
@njit(cache=CACHE)
def _lu_solve(K, r):
    """``K z = r`` by LU with partial pivoting; ok False when a pivot is lost (``|u_ii| ≤ 1e-12 max|u_jj|``)."""
    N = r.size
    U = K.copy()
    z = r.copy()
    for k in range(N):
        p = k
        best = abs(U[k, k])
        for i in range(k + 1, N):
            if abs(U[i, k]) > best:
                best, p = abs(U[i, k]), i
        if p != k:
            for j in range(N):
                U[k, j], U[p, j] = U[p, j], U[k, j]
            z[k], z[p] = z[p], z[k]
        if U[k, k] == 0.0:
            return z, False
        for i in range(k + 1, N):
            m = U[i, k] / U[k, k]
            if m != 0.0:
                for j in range(k + 1, N):
                    U[i, j] -= m * U[k, j]
                z[i] -= m * z[k]
    dmax, dmin = 0.0, np.inf
    for k in range(N):
        d = abs(U[k, k])
        dmax, dmin = max(dmax, d), min(dmin, d)
    if N and dmin <= 1e-12 * dmax:
        return z, False
    for k in range(N - 1, -1, -1):
        s = z[k]
        for j in range(k + 1, N):
            s -= U[k, j] * z[j]
        z[k] = s / U[k, k]
    return z, True


@njit(cache=CACHE)
def _values(ctx, t, q, f):
    """Run the kernel at ``(t, q, f)``; the buffer holds M, h, φ, Φ_q, … (:class:`StateKernel` layout)."""
    kfn, kud, pfn, pud, x, buf, xp, pbuf, pvec, n = ctx[0], ctx[1], ctx[2], ctx[3], ctx[4], ctx[5], ctx[6], \
        ctx[7], ctx[8], ctx[9]
    x[0] = t
    x[1:1 + n] = q
    x[1 + n:1 + 2 * n] = f
    x[1 + 2 * n:] = pvec
    kfn(buf.ctypes, x.ctypes, kud)
    return buf


@njit(cache=CACHE)
def _constraint_matrix(buf, lay, n, m1, m2):
    """``C = [Φ_q; A]`` ((m1+m2)×n) and ``[Φ_t; a]`` from the buffer."""
    C = np.zeros((m1 + m2) * n)
    s0, fl = lay[0], lay[1]
    for k in range(fl.size):
        C[fl[k]] += buf[s0[k]]
    vt = np.empty(m1 + m2)
    sl = lay[2]
    vt[:m1] = buf[sl[0]:sl[0] + m1]          # Φ_t
    vt[m1:] = buf[sl[1]:sl[1] + m2]          # a
    return C.reshape(m1 + m2, n), vt


@njit(cache=CACHE)
def _rhs(ctx, lay, kk, t, y, dy):
    """The index-1 right-hand side ``[f, q̈, P_d, P_s]``; False when the KKT matrix lost a pivot."""
    n, m1, m2 = ctx[9], ctx[10], ctx[11]
    buf = _values(ctx, t, y[:n], y[n:2 * n])
    N = n + m1 + m2
    K = np.zeros(N * N)
    src, dst = kk[0], kk[1]
    for k in range(src.size):
        K[dst[k]] = buf[src[k]]
    sl = lay[2]
    r = np.empty(N)
    r[:n] = -buf[sl[2]:sl[2] + n]                  # −h
    r[n:n + m1] = -buf[sl[3]:sl[3] + m1]           # −γ_φ
    r[n + m1:] = -buf[sl[4]:sl[4] + m2]            # −γ_ψ
    z, ok = _lu_solve(K.reshape(N, N), r)
    xp, pbuf = ctx[6], ctx[7]
    xp[0] = t
    xp[1:1 + 2 * n] = y[:2 * n]
    xp[1 + 2 * n:1 + 2 * n + m1 + m2] = z[n:]
    xp[1 + 2 * n + m1 + m2:] = ctx[8]
    ctx[2](pbuf.ctypes, xp.ctypes, ctx[3])
    dy[:n] = y[n:2 * n]
    dy[n:2 * n] = z[:n]
    dy[2 * n] = pbuf[0]
    dy[2 * n + 1] = pbuf[1]
    return ok


@njit(cache=CACHE)
def _project(ctx, lay, t, y):
    """``y`` with q on φ = 0 (Gauss–Newton) and f on the velocity constraints (as ``Projection.project``)."""
    n, m1, m2 = ctx[9], ctx[10], ctx[11]
    q, f = y[:n].copy(), y[n:2 * n].copy()
    if m1:
        for _ in range(8):
            buf = _values(ctx, t, q, f)
            phi = buf[lay[2][5]:lay[2][5] + m1].copy()
            if np.max(np.abs(phi)) < 1e-14 * (1.0 + np.max(np.abs(q))):
                break
            C, _vt = _constraint_matrix(buf, lay, n, m1, m2)
            P = np.ascontiguousarray(C[:m1])
            q -= P.T @ np.linalg.solve(P @ P.T, phi)
    buf = _values(ctx, t, q, f)
    C, vt = _constraint_matrix(buf, lay, n, m1, m2)
    f -= C.T @ np.linalg.solve(C @ C.T, C @ f + vt)
    out = y.copy()
    out[:n] = q
    out[n:2 * n] = f
    return out


@njit(cache=CACHE)
def _ratio(ctx, lay, t, q):
    """σ_min/σ_max of Φ_q at ``(t, q)`` (the singularity watch's measure)."""
    n, m1, m2 = ctx[9], ctx[10], ctx[11]
    buf = _values(ctx, t, q, np.zeros(n))
    C, _vt = _constraint_matrix(buf, lay, n, m1, m2)
    s = np.linalg.svd(np.ascontiguousarray(C[:m1]))[1]
    return s[-1] / s[0] if s.size and s[0] > 0 else 1.0


# ----------------------------------------------------------------------------- DOP853
@njit(cache=CACHE)
def _dense(t_old, h, y_old, F, tt):
    x = (tt - t_old) / h
    y = np.zeros(y_old.size)
    for i in range(F.shape[0]):
        y += F[F.shape[0] - 1 - i]
        if i % 2 == 0:
            y *= x
        else:
            y *= 1 - x
    return y + y_old


@njit(cache=CACHE)
def _golden(ctx, lay, t_old, h, y_old, F, a, b, xatol):
    """min over [a, b] of the watch's ratio along a step's dense output (golden section)."""
    n = ctx[9]
    g = (np.sqrt(5.0) - 1) / 2
    c, d = b - g * (b - a), a + g * (b - a)
    fc = _ratio(ctx, lay, c, _dense(t_old, h, y_old, F, c)[:n])
    fd = _ratio(ctx, lay, d, _dense(t_old, h, y_old, F, d)[:n])
    while b - a > xatol:
        if fc < fd:
            b, d, fd = d, c, fc
            c = b - g * (b - a)
            fc = _ratio(ctx, lay, c, _dense(t_old, h, y_old, F, c)[:n])
        else:
            a, c, fc = c, d, fd
            d = a + g * (b - a)
            fd = _ratio(ctx, lay, d, _dense(t_old, h, y_old, F, d)[:n])
    return (fc, c) if fc < fd else (fd, d)


@njit(cache=CACHE)
def _stages(ctx, lay, kk, A, C, K, t, y, h, tmp, first, last):
    """Stages ``K[first:last]`` of the tableau ``A``, ``C`` from the stages before them; NaN, or the stage
    time at which the KKT matrix lost rank."""
    for s in range(first, last):
        dy = np.zeros(y.size)
        for j in range(s):
            dy += A[s, j] * K[j]
        if not _rhs(ctx, lay, kk, t + C[s] * h, y + dy * h, tmp):
            return t + C[s] * h
        K[s] = tmp
    return np.nan


@njit(cache=CACHE)
def _integrate(ctx, lay, kk, t0, t1, y0, f0, h_abs, rtol, atol, max_step, t_eval, watch, tol, suspect,
               A, B, C, E3, E5, D, out, tout):
    """The loop. Returns ``(status, outputs written, accepted steps, t, y)``; ``y`` and ``t`` say where it
    stopped (the singular configuration for CHANGE_POINT)."""
    n, m1, m2 = ctx[9], ctx[10], ctx[11]
    ny = y0.size
    constrained = m1 + m2 > 0
    K = np.empty((16, ny))
    F = np.empty((7, ny))
    hist_t, hist_r = np.zeros(3), np.zeros(3)
    hist_F = np.zeros((3, 7, ny))
    hist_y = np.zeros((3, ny))
    hist_told, hist_h = np.zeros(3), np.zeros(3)
    nh = 0
    t, y, f = t0, y0.copy(), f0.copy()
    i, nout, nsteps = 0, 0, 0
    if t_eval.size and t_eval[0] <= t0:
        out[:, 0] = y0
        tout[0] = t0
        nout = 1
        while i < t_eval.size and t_eval[i] <= t0:
            i += 1
    tmp = np.empty(ny)
    while t < t1:
        min_step = 10 * abs(np.nextafter(t, np.inf) - t)
        h_abs = min(max(h_abs, min_step), max_step)
        rejected = False
        while True:
            if h_abs < min_step:
                return TOO_SMALL, nout, nsteps, t, y
            h = h_abs
            t_new = t + h
            if t_new > t1:
                t_new = t1
            h = t_new - t
            h_abs = abs(h)
            K[0] = f
            failed = _stages(ctx, lay, kk, A, C, K, t, y, h, tmp, 1, _NS)
            if failed == failed:  # not NaN: the KKT matrix lost rank at that stage time
                return SINGULAR_KKT, nout, nsteps, failed, y
            incr = np.zeros(ny)
            for j in range(_NS):
                incr += B[j] * K[j]
            y_new = y + h * incr
            if not _rhs(ctx, lay, kk, t_new, y_new, tmp):
                return SINGULAR_KKT, nout, nsteps, t_new, y_new
            f_new = tmp.copy()
            K[_NS] = f_new
            scale = atol + np.maximum(np.abs(y), np.abs(y_new)) * rtol
            e5 = np.zeros(ny)
            e3 = np.zeros(ny)
            for j in range(_NS + 1):
                e5 += E5[j] * K[j]
                e3 += E3[j] * K[j]
            e5 /= scale
            e3 /= scale
            n5, n3 = np.sum(e5 * e5), np.sum(e3 * e3)
            if n5 == 0 and n3 == 0:
                err = 0.0
            else:
                err = abs(h) * n5 / np.sqrt((n5 + 0.01 * n3) * ny)
            if err < 1:
                factor = 10.0 if err == 0 else min(10.0, 0.9 * err ** _EXPONENT)
                if rejected:
                    factor = min(1.0, factor)
                h_abs *= factor
                break
            h_abs *= max(0.2, 0.9 * err ** _EXPONENT)
            rejected = True
        nsteps += 1
        # dense output of the step (scipy's DOP853 interpolant), from the unprojected end point
        failed = _stages(ctx, lay, kk, A, C, K, t, y, h, tmp, _NS + 1, 16)
        if failed == failed:
            return SINGULAR_KKT, nout, nsteps, failed, y
        delta = y_new - y
        F[0] = delta
        F[1] = h * K[0] - delta
        F[2] = 2 * delta - h * (f_new + K[0])
        for r in range(D.shape[0]):
            acc = np.zeros(ny)
            for j in range(16):
                acc += D[r, j] * K[j]
            F[3 + r] = h * acc
        if watch:
            k = nh if nh < 3 else 2
            if nh == 3:  # drop the oldest
                for w in range(2):
                    hist_t[w], hist_r[w], hist_told[w], hist_h[w] = hist_t[w + 1], hist_r[w + 1], hist_told[w + 1], \
                        hist_h[w + 1]
                    hist_F[w] = hist_F[w + 1]
                    hist_y[w] = hist_y[w + 1]
            hist_t[k], hist_r[k] = t_new, _ratio(ctx, lay, t_new, y_new[:n])
            hist_told[k], hist_h[k] = t, h
            hist_F[k] = F
            hist_y[k] = y
            nh = min(nh + 1, 3)
            if nh == 3 and hist_r[1] < suspect and hist_r[1] <= hist_r[0] and hist_r[1] <= hist_r[2]:
                best_r, best_t, best_w = hist_r[1], hist_t[1], -1
                for w in range(1, 3):
                    a, b = hist_t[w - 1], hist_t[w]
                    val, at = _golden(ctx, lay, hist_told[w], hist_h[w], hist_y[w], hist_F[w], a, b,
                                      1e-10 * max(1.0, abs(b)))
                    if val < best_r:
                        best_r, best_t, best_w = val, at, w
                if best_r < tol:
                    if best_w < 0:  # at the step itself: its end point
                        return CHANGE_POINT, nout, nsteps, best_t, hist_y[2]
                    w = best_w
                    return CHANGE_POINT, nout, nsteps, best_t, _dense(hist_told[w], hist_h[w], hist_y[w],
                                                                        hist_F[w], best_t)
        j = i
        while j < t_eval.size and t_eval[j] <= t_new:
            j += 1
        for k in range(i, j):
            yk = _dense(t, h, y, F, t_eval[k])
            out[:, nout] = _project(ctx, lay, t_eval[k], yk) if constrained else yk
            tout[nout] = t_eval[k]
            nout += 1
        i = j
        t, y = t_new, y_new
        if constrained:
            y = _project(ctx, lay, t, y)
            if not _rhs(ctx, lay, kk, t, y, tmp):
                return SINGULAR_KKT, nout, nsteps, t, y
            f = tmp.copy()
        else:
            f = f_new
    return OK, nout, nsteps, t, y


# ----------------------------------------------------------------------------- the integrator
def _address(fn):
    """The ctypes function and its user-data pointer of a symengine LLVM function."""
    cfn, ud = fn.as_ctypes()
    return cfn, ctypes.cast(ud, ctypes.c_void_p).value or 0


class CompiledProjection(Projection):
    """:class:`Projection` with its stepping loop compiled (see the module docstring); same results."""

    def compiled_ok(self, progress):
        """Whether the compiled loop applies (else :meth:`Projection.integrate` runs)."""
        k = self.cm.kernel
        return (k is not None and not self.cm.inputs and self.solver_cls.__name__ == "DOP853" and progress is None
                and k.size <= SPARSE_KKT and hasattr(k._fn, "as_ctypes") and hasattr(k._power_fn, "as_ctypes"))

    def integrate(self, t0, t1, q0, f0, t_eval, rtol, atol, progress=None):
        if not self.compiled_ok(progress):
            return super().integrate(t0, t1, q0, f0, t_eval, rtol, atol, progress)
        cm, k, n = self.cm, self.cm.kernel, self.cm.n
        kfn, kud = _address(k._fn)
        pfn, pud = _address(k._power_fn)
        ctx = (kfn, kud, pfn, pud, k._x.copy(), k._buf.copy(), k._xp.copy(), np.zeros(2),
               np.ascontiguousarray(self.p.vector, dtype=float), n, cm.m1, cm.m2)
        flat = np.concatenate([k._flatPq, cm.m1 * n + k._flatA]).astype(np.int64)
        srcs = np.concatenate([np.arange(k._sPq.start, k._sPq.stop), np.arange(k._sA.start, k._sA.stop)])
        starts = np.array([k._sPt.start, k._sa.start, k._sh.start, k._sgphi.start, k._sgpsi.start, k._sphi.start],
                          dtype=np.int64)
        lay = (srcs.astype(np.int64), flat, starts)
        kk = (k._kkt_src.astype(np.int64), k._kkt_dst.astype(np.int64))
        y0 = np.concatenate([q0, f0, [0.0, 0.0]]).astype(float)
        at = split_atol(atol, n)
        at = np.concatenate([at, work_atol(atol, n)]) if np.ndim(at) else np.full(2 * n + 2, float(at))
        f_0 = self.rhs(t0, y0)
        h0 = select_initial_step(self.rhs, t0, y0, t1, self.max_step, f_0, 1, 7, rtol, at)
        watch = SingularityWatch(cm, self.p) if self.watch_singularities and cm.m1 else None
        te = np.ascontiguousarray(t_eval, dtype=float)
        out = np.empty((2 * n + 2, te.size + 1))
        tout = np.empty(te.size + 1)
        status, nout, nsteps, tt, yy = _integrate(
            ctx, lay, kk, float(t0), float(t1), y0, f_0, float(h0), float(rtol), at, float(self.max_step), te,
            watch is not None and watch.active, watch.tol if watch else 0.0, watch.suspect if watch else 0.0,
            _A, _B, _C, _E3, _E5, _D, out, tout)
        if status == TOO_SMALL:
            raise integration_failure(cm, tt, yy[:n], self.p, "Required step size is less than spacing between "
                                                            "numbers.")
        if status == SINGULAR_KKT:
            raise singular(tt)
        if status == CHANGE_POINT:
            err = SingularSystemError(
                f"singular configuration at t = {tt:.6g}: the constraint Jacobian loses rank there (smallest/"
                f"largest singular value below {watch.tol:.2g}), a change point where assembly branches cross; the "
                "motion past it is not determined by the model — stop before it or change the geometry")
            err.time, err.q = tt, dict(zip(cm.model.coordinate_names, yy[:n]))
            raise err
        Y, T = out[:, :nout], tout[:nout].copy()
        acc, lam, mu = kkt_solutions(cm, self.p, T, Y[:n], Y[n:2 * n])
        return Trajectory(T, Y[:n].copy(), Y[n:2 * n].copy(), acc, lam, mu, Y[2 * n].copy(), Y[2 * n + 1].copy(),
                          nsteps=nsteps, message=SUCCESS, status=0)


# ----------------------------------------------------------------------------- the cache
def loop_cached():
    """Whether the compiled loop is ready without compiling: already compiled in this process, or in
    numba's on-disk cache for this numba, this machine and this source (reads the cache's index only).

    >>> isinstance(loop_cached(), bool)
    True
    """
    if _integrate.signatures:
        return True
    cache = getattr(_integrate, "_cache", None)
    try:
        index = cache._cache_file._load_index()
        magic = _integrate.targetctx.codegen().magic_tuple()
        code = cache._index_key(None, _integrate.targetctx.codegen())[2]
    except Exception:  # no cache (unwritable location) or another numba's internals: not warm
        return False
    return any(key[1] == magic and key[2] == code for key in index)


def warm_up():
    """Compile the loop once (a constrained pendulum for 0.1 s) so that numba caches it on disk; returns the
    seconds it took (~20 s of CPU the first time, ~0.3 s once cached).

    >>> warm_up() >= 0 and loop_cached()
    True
    """
    import time

    import sympy as sp

    from netdyn.lagrange.model import LagrangianModel
    from netdyn.numerics.compiled import compile_model
    from netdyn.symbols import coordinates, t
    start = time.perf_counter()
    x, y = coordinates("x, y")
    cm = compile_model(LagrangianModel([x, y], T=(x.diff(t) ** 2 + y.diff(t) ** 2) / 2, V=sp.Float(9.81) * y,
                                       constraints=[x ** 2 + y ** 2 - 1]))
    CompiledProjection(cm, cm.parameter_vector()).integrate(0, 0.1, np.array([0.6, -0.8]), np.zeros(2),
                                                            np.array([0.1]), 1e-8, 1e-10)
    return time.perf_counter() - start
