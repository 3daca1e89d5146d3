"""``Projection``'s stepping loop compiled: DOP853, projection, outputs and the singularity watch in numba.

:class:`~netdyn.numerics.mechanics.projection.Projection` drives scipy's
DOP853 from Python: every stage, every projection and every dense output goes
through the interpreter, ~1 ms a step for a four-bar, which is why 100 s of a
four-bar turning ever faster took minutes. :class:`CompiledProjection` runs the
same algorithm — scipy's DOP853 (its coefficients, error norm, step-size
control and 7th-order dense output), projection of ``q`` onto ``φ = 0`` and of
``f`` onto the velocity constraints after every accepted step and at every
output, and :class:`~netdyn.numerics.dae.structure.SingularityWatch`'s test
(``σ_min/σ_max`` of ``Φ_q`` at every projected step, from the step's own kernel
call; a local minimum below ``suspect`` steep enough to reach zero between the
steps is minimised over the neighbouring steps by :func:`_search`, its own
kernel, and below ``tol`` the run stops with a
:class:`~netdyn.errors.SingularSystemError`) — in compiled code, about 50 µs a
step. The model enters as the machine-code functions of the fused
:class:`~netdyn.numerics.functions.kernel.StateKernel` (symengine LLVM), called through
their addresses, so the loop is compiled once (and cached on disk) for every
model; the KKT system is solved by LU with partial pivoting (a lost pivot is the
same dead-centre error as :func:`~netdyn.numerics.mechanics.projection.solve_kkt`).

The loop runs in chunks of accepted steps (~50 ms each) and carries its whole
state from one call to the next, so a chunked run is the unchunked one to the
last bit; between chunks Python reports ``progress`` and honours a Ctrl-C (the
outputs reached come back with status ``INTERRUPTED``, as from the Python loop).

``simulate`` uses it for DOP853 on a model with a kernel and no input functions
(Python callables) when ``compiled_loop`` says so: ``True``; ``"auto"`` (the
default without a progress callback, and ``netdyn simulate``'s) only when
:func:`loop_cached` finds it compiled, in this process or in numba's on-disk
cache; :func:`warm_up` — ``netdyn warmup`` — fills that cache once, ~12 s of
CPU. Otherwise :class:`Projection`'s Python loop runs. ``tests/test_mixed.py``
checks the two loops agree to 1e-9, ``tests/test_compiled_loop.py`` the chunks.

>>> import numpy as np
>>> from netdyn import LagrangianModel, coordinates, t
>>> from netdyn.numerics.functions.compiled import compile_model
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
import signal
import threading
import time

import numpy as np
from numba import njit
from scipy.integrate._ivp import dop853_coefficients as _dop
from scipy.integrate._ivp.common import select_initial_step

from netdyn.errors import SingularSystemError
from netdyn.numerics.integrators.base import split_atol, work_atol
from netdyn.numerics.mechanics.fastkkt import singular
from netdyn.numerics.mechanics.projection import SPARSE_KKT, Projection, kkt_solutions
from netdyn.numerics.dae.structure import SingularityWatch, integration_failure
from netdyn.numerics.results.trajectory import INTERRUPTED, SUCCESS, Trajectory, interrupted_message

_NS = _dop.N_STAGES
_A = np.ascontiguousarray(_dop.A, dtype=float)
_B = np.ascontiguousarray(_dop.B, dtype=float)
_C = np.ascontiguousarray(_dop.C, dtype=float)
_E3 = np.ascontiguousarray(_dop.E3, dtype=float)
_E5 = np.ascontiguousarray(_dop.E5, dtype=float)
_D = np.ascontiguousarray(_dop.D, dtype=float)
_EXPONENT = -1.0 / 8.0  # DOP853's error estimator is of order 7
OK, TOO_SMALL, SINGULAR_KKT, CHANGE_POINT, CHUNK, SEARCH = 0, 1, 2, 3, 4, 5


# ----------------------------------------------------------------------------- model evaluation
# error_model="numpy": a division by zero gives inf or nan as in numpy, no ZeroDivisionError branches to compile
#: numba caches on disk only under the package name: a cache written by a bare-name import of this file
#: (``python -m doctest path/to/it.py``) is found by the package import and fails to load there
CACHE = __name__.startswith("netdyn.")
_jit = njit(cache=CACHE, error_model="numpy")

# Written as scalar loops, without numpy array expressions, slice assignments, reshapes or np.linalg:
# numba compiles each of those with its broadcasting and error-message code (a third of the first
# compilation before, docs/performance.md), and LLVM optimises it again in every caller.
@_jit
def _lu_solve(K, r, pivot_tol):
    """``K z = r`` by LU with partial pivoting (``K`` is overwritten); ok False when a pivot is lost
    (``|u_ii| ≤ pivot_tol · max|u_jj|``, or exactly zero)."""
    N = r.size
    U = K
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
    if N and dmin <= pivot_tol * dmax:
        return z, False
    for k in range(N - 1, -1, -1):
        s = z[k]
        for j in range(k + 1, N):
            s -= U[k, j] * z[j]
        z[k] = s / U[k, k]
    return z, True


@_jit
def _values(ctx, t, q, f):
    """Run the kernel at ``(t, q, f)``; the buffer holds M, h, φ, Φ_q, … (:class:`StateKernel` layout)."""
    kfn, kud, x, buf, pvec, n = ctx[0], ctx[1], ctx[4], ctx[5], ctx[8], ctx[9]
    x[0] = t
    for c in range(n):
        x[1 + c] = q[c]
        x[1 + n + c] = f[c]
    for c in range(pvec.size):
        x[1 + 2 * n + c] = pvec[c]
    kfn(buf.ctypes, x.ctypes, kud)
    return buf


@_jit
def _constraint_matrix(buf, lay, n, m1, m2):
    """``C = [Φ_q; A]`` ((m1+m2)×n) and ``[Φ_t; a]`` from the buffer."""
    C = np.zeros((m1 + m2, n))
    s0, fl = lay[0], lay[1]
    for k in range(fl.size):
        C[fl[k] // n, fl[k] % n] += buf[s0[k]]
    vt = np.empty(m1 + m2)
    sl = lay[2]
    for c in range(m1):
        vt[c] = buf[sl[0] + c]               # Φ_t
    for c in range(m2):
        vt[m1 + c] = buf[sl[1] + c]          # a
    return C, vt


@_jit
def _rhs(ctx, lay, kk, t, y, dy):
    """The index-1 right-hand side ``[f, q̈, P_d, P_s]``; False when the KKT matrix lost a pivot."""
    n, m1, m2 = ctx[9], ctx[10], ctx[11]
    buf = _values(ctx, t, y[:n], y[n:2 * n])
    N = n + m1 + m2
    K = np.zeros((N, N))
    src, dst = kk[0], kk[1]
    for k in range(src.size):
        K[dst[k] // N, dst[k] % N] = buf[src[k]]
    sl = lay[2]
    r = np.empty(N)
    for c in range(n):
        r[c] = -buf[sl[2] + c]                     # −h
    for c in range(m1):
        r[n + c] = -buf[sl[3] + c]                 # −γ_φ
    for c in range(m2):
        r[n + m1 + c] = -buf[sl[4] + c]            # −γ_ψ
    z, ok = _lu_solve(K, r, 1e-12)
    xp, pbuf, pvec = ctx[6], ctx[7], ctx[8]
    xp[0] = t
    for c in range(2 * n):
        xp[1 + c] = y[c]
    for c in range(m1 + m2):
        xp[1 + 2 * n + c] = z[n + c]
    for c in range(pvec.size):
        xp[1 + 2 * n + m1 + m2 + c] = pvec[c]
    ctx[2](pbuf.ctypes, xp.ctypes, ctx[3])
    for c in range(n):
        dy[c] = y[n + c]
        dy[n + c] = z[c]
    dy[2 * n] = pbuf[0]
    dy[2 * n + 1] = pbuf[1]
    return ok


@_jit
def _least_change(C, rows, v, x):
    """``x -= Cᵀ (C Cᵀ)⁻¹ v`` over the first ``rows`` rows of ``C`` (the minimum-norm correction)."""
    n = x.size
    G = np.empty((rows, rows))
    for i in range(rows):
        for j in range(rows):
            s = 0.0
            for c in range(n):
                s += C[i, c] * C[j, c]
            G[i, j] = s
    w, ok = _lu_solve(G, v, 0.0)
    for c in range(n):
        s = 0.0
        for i in range(rows):
            s += C[i, c] * w[i]
        x[c] -= s
    return ok


@_jit
def _project(ctx, lay, t, y):
    """``y`` with q on φ = 0 (Gauss–Newton) and f on the velocity constraints (as ``Projection.project``),
    and False when a Gram matrix ``C Cᵀ`` was exactly singular."""
    n, m1, m2 = ctx[9], ctx[10], ctx[11]
    out = y.copy()
    q, f = out[:n], out[n:2 * n]
    ok = True
    if m1:
        phi = np.empty(m1)
        for _ in range(8):
            buf = _values(ctx, t, q, f)
            big, qmax = 0.0, 0.0
            for c in range(m1):
                phi[c] = buf[lay[2][5] + c]
                big = max(big, abs(phi[c]))
            for c in range(n):
                qmax = max(qmax, abs(q[c]))
            if big < 1e-14 * (1.0 + qmax):
                break
            C, _vt = _constraint_matrix(buf, lay, n, m1, m2)
            ok = _least_change(C, m1, phi, q) and ok
    buf = _values(ctx, t, q, f)
    C, vt = _constraint_matrix(buf, lay, n, m1, m2)
    v = vt.copy()
    for i in range(m1 + m2):
        for c in range(n):
            v[i] += C[i, c] * f[c]
    ok = _least_change(C, m1 + m2, v, f) and ok
    return out, ok


@_jit
def _ratio_of(buf, lay, n, m1, m2):
    """σ_min/σ_max of Φ_q from a buffer (the singularity watch's measure): one-sided Jacobi (Hestenes) on
    the rows of Φ_q, or of Φ_qᵀ when it is the shorter way, to full orthogonality."""
    C, _vt = _constraint_matrix(buf, lay, n, m1, m2)
    rows, cols = min(m1, n), max(m1, n)
    W = np.empty((rows, cols))
    for i in range(m1):
        for c in range(n):
            if m1 <= n:
                W[i, c] = C[i, c]
            else:
                W[c, i] = C[i, c]
    for _sweep in range(60):
        rotated = False
        for i in range(rows - 1):
            for j in range(i + 1, rows):
                a, b, g = 0.0, 0.0, 0.0
                for c in range(cols):
                    a += W[i, c] * W[i, c]
                    b += W[j, c] * W[j, c]
                    g += W[i, c] * W[j, c]
                if g == 0.0 or abs(g) <= 1e-15 * np.sqrt(a * b):
                    continue
                rotated = True
                zeta = (b - a) / (2.0 * g)
                tn = (1.0 if zeta >= 0 else -1.0) / (abs(zeta) + np.sqrt(1.0 + zeta * zeta))
                cs = 1.0 / np.sqrt(1.0 + tn * tn)
                sn = cs * tn
                for c in range(cols):
                    wi, wj = W[i, c], W[j, c]
                    W[i, c] = cs * wi - sn * wj
                    W[j, c] = sn * wi + cs * wj
        if not rotated:
            break
    smin, smax = np.inf, 0.0
    for i in range(rows):
        s = 0.0
        for c in range(cols):
            s += W[i, c] * W[i, c]
        s = np.sqrt(s)
        smin, smax = min(smin, s), max(smax, s)
    return smin / smax if rows and smax > 0 else 1.0


@_jit
def _ratio(ctx, lay, t, q):
    """σ_min/σ_max of Φ_q at ``(t, q)``."""
    n = ctx[9]
    return _ratio_of(_values(ctx, t, q, np.zeros(n)), lay, n, ctx[10], ctx[11])


# ----------------------------------------------------------------------------- DOP853
@_jit
def _dense(t_old, h, y_old, F, tt):
    x = (tt - t_old) / h
    ny = y_old.size
    y = np.empty(ny)
    last = F.shape[0] - 1
    for c in range(ny):
        v = 0.0
        for i in range(F.shape[0]):
            v += F[last - i, c]
            if i % 2 == 0:
                v *= x
            else:
                v *= 1 - x
        y[c] = v + y_old[c]
    return y


@_jit
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


@_jit
def _stages(ctx, lay, kk, A, C, K, t, y, h, tmp, first, last):
    """Stages ``K[first:last]`` of the tableau ``A``, ``C`` from the stages before them; NaN, or the stage
    time at which the KKT matrix lost rank."""
    ny = y.size
    ys = np.empty(ny)
    for s in range(first, last):
        for c in range(ny):
            dy = 0.0
            for j in range(s):
                dy += A[s, j] * K[j, c]
            ys[c] = y[c] + dy * h
        if not _rhs(ctx, lay, kk, t + C[s] * h, ys, tmp):
            return t + C[s] * h
        for c in range(ny):
            K[s, c] = tmp[c]
    return np.nan


@_jit
def _integrate(ctx, lay, kk, t1, rtol, atol, max_step, t_eval, watch, tol, suspect, A, B, C, E3, E5, D, out, tout,
               state, max_steps):
    """The loop, from and into ``state`` (see :func:`_start`), for at most ``max_steps`` accepted steps.
    Returns ``(status, t, y)``: CHUNK when it stopped for ``max_steps`` (``state`` holds where it is; call
    again to go on), SEARCH when the watch's cheap test fired (the state is stored too: run :func:`_search`,
    then go on), OK at ``t1``, else a failure at ``(t, y)``. Outputs so far are ``out[:, :state[1][1]]``, accepted steps ``state[1][2]``."""
    sf, si, hist, hist_F, hist_y = state[0], state[1], state[4], state[5], state[6]
    y, f = state[2].copy(), state[3].copy()
    n, m1, m2 = ctx[9], ctx[10], ctx[11]
    ny = y.size
    constrained = m1 + m2 > 0
    K = np.empty((16, ny))
    F = np.empty((7, ny))
    hist_t, hist_r, hist_told, hist_h = hist[0], hist[1], hist[2], hist[3]
    t, h_abs = sf[0], sf[1]
    i, nout, nsteps, nh = si[0], si[1], si[2], si[3]
    tmp = np.empty(ny)
    y_new = np.empty(ny)
    taken = 0
    while t < t1:
        if taken == max_steps:  # hand back to Python (progress, Ctrl-C); the state says where to go on
            _keep(state, t, h_abs, i, nout, nsteps, nh, y, f)
            return CHUNK, t, y
        taken += 1
        min_step = 10 * abs(np.nextafter(t, np.inf) - t)
        h_abs = min(max(h_abs, min_step), max_step)
        rejected = False
        while True:
            if h_abs < min_step:
                si[1], si[2] = nout, nsteps
                return TOO_SMALL, t, y
            h = h_abs
            t_new = t + h
            if t_new > t1:
                t_new = t1
            h = t_new - t
            h_abs = abs(h)
            for c in range(ny):
                K[0, c] = f[c]
            failed = _stages(ctx, lay, kk, A, C, K, t, y, h, tmp, 1, _NS)
            if failed == failed:  # not NaN: the KKT matrix lost rank at that stage time
                si[1], si[2] = nout, nsteps
                return SINGULAR_KKT, failed, y
            y_new = np.empty(ny)
            for c in range(ny):
                incr = 0.0
                for j in range(_NS):
                    incr += B[j] * K[j, c]
                y_new[c] = y[c] + h * incr
            if not _rhs(ctx, lay, kk, t_new, y_new, tmp):
                si[1], si[2] = nout, nsteps
                return SINGULAR_KKT, t_new, y_new
            for c in range(ny):
                K[_NS, c] = tmp[c]
            n5, n3 = 0.0, 0.0
            for c in range(ny):
                scale = atol[c] + max(abs(y[c]), abs(y_new[c])) * rtol
                e5, e3 = 0.0, 0.0
                for j in range(_NS + 1):
                    e5 += E5[j] * K[j, c]
                    e3 += E3[j] * K[j, c]
                e5 /= scale
                e3 /= scale
                n5 += e5 * e5
                n3 += e3 * e3
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
            si[1], si[2] = nout, nsteps
            return SINGULAR_KKT, failed, y
        for c in range(ny):
            delta = y_new[c] - y[c]
            F[0, c] = delta
            F[1, c] = h * K[0, c] - delta
            F[2, c] = 2 * delta - h * (K[_NS, c] + K[0, c])
            for r in range(D.shape[0]):
                acc = 0.0
                for j in range(16):
                    acc += D[r, j] * K[j, c]
                F[3 + r, c] = h * acc
        j = i
        while j < t_eval.size and t_eval[j] <= t_new:
            j += 1
        for k in range(i, j):
            yk = _dense(t, h, y, F, t_eval[k])
            if constrained:
                yk, _ok = _project(ctx, lay, t_eval[k], yk)
            for c in range(ny):
                out[c, nout] = yk[c]
            tout[nout] = t_eval[k]
            nout += 1
        i = j
        t_old, y_old = t, y
        t, y = t_new, y_new
        if constrained:
            y, ok = _project(ctx, lay, t, y)
            if not ok or not _rhs(ctx, lay, kk, t, y, tmp):
                si[1], si[2] = nout, nsteps
                return SINGULAR_KKT, t, y
            f = tmp.copy()  # (the kernel's buffer now holds Φ_q at the projected state: the watch's)
        else:
            f = K[_NS].copy()
        if watch:  # σ_min/σ_max of Φ_q at the projected step; at a local minimum below suspect, minimised
            k = nh if nh < 3 else 2
            if nh == 3:  # drop the oldest
                for w in range(2):
                    hist_t[w], hist_r[w], hist_told[w], hist_h[w] = hist_t[w + 1], hist_r[w + 1], hist_told[w + 1], \
                        hist_h[w + 1]
                    for c in range(ny):
                        hist_y[w, c] = hist_y[w + 1, c]
                        for r in range(7):
                            hist_F[w, r, c] = hist_F[w + 1, r, c]
            hist_t[k], hist_r[k] = t, _ratio_of(ctx[5], lay, n, m1, m2)
            hist_told[k], hist_h[k] = t_old, h
            for c in range(ny):
                hist_y[k, c] = y_old[c]
                for r in range(7):
                    hist_F[k, r, c] = F[r, c]
            nh = min(nh + 1, 3)
            r1 = hist_r[1]
            steep = False
            if nh == 3 and r1 < suspect and r1 <= hist_r[0] and r1 <= hist_r[2]:
                # SingularityWatch's cheap test: only a minimum steep enough to reach zero between the
                # steps (lines through the neighbours drop below r1/2 within half a step) is searched
                d0, d2 = hist_t[1] - hist_t[0], hist_t[2] - hist_t[1]
                slope = max((hist_r[0] - r1) / d0, (hist_r[2] - r1) / d2)
                steep = r1 - slope * max(d0, d2) / 2 <= r1 / 2
            if steep:  # the expensive test, in its own kernel (:func:`_search`, compiled when first needed)
                _keep(state, t, h_abs, i, nout, nsteps, nh, y, f)
                return SEARCH, t, y
    _keep(state, t, h_abs, i, nout, nsteps, nh, y, f)
    return OK, t, y


@_jit
def _search(ctx, lay, state):
    """The watch's expensive test after :func:`_integrate` returned SEARCH: the exact ratio minimised
    (golden section) along the dense output of the two steps around the suspect minimum. Returns the
    minimum ratio, its time and the configuration there."""
    hist, hist_F, hist_y = state[4], state[5], state[6]
    hist_t, hist_r, hist_told, hist_h = hist[0], hist[1], hist[2], hist[3]
    best_r, best_t, best_w = hist_r[1], hist_t[1], -1
    for w in range(1, 3):
        a, b = hist_t[w - 1], hist_t[w]
        val, at = _golden(ctx, lay, hist_told[w], hist_h[w], hist_y[w], hist_F[w], a, b, 1e-10 * max(1.0, abs(b)))
        if val < best_r:
            best_r, best_t, best_w = val, at, w
    if best_w < 0:  # at the middle step itself: its end point (the last step's start)
        return best_r, best_t, hist_y[2].copy()
    w = best_w
    return best_r, best_t, _dense(hist_told[w], hist_h[w], hist_y[w], hist_F[w], best_t)


@_jit
def _keep(state, t, h_abs, i, nout, nsteps, nh, y, f):
    """Store the loop's variables in ``state`` (where the next call goes on)."""
    sf, si, ys, fs = state[0], state[1], state[2], state[3]
    sf[0], sf[1] = t, h_abs
    si[0], si[1], si[2], si[3] = i, nout, nsteps, nh
    for c in range(ys.size):
        ys[c] = y[c]
        fs[c] = f[c]


# ----------------------------------------------------------------------------- the integrator
def _address(fn):
    """The ctypes function and its user-data pointer of a symengine LLVM function."""
    cfn, ud = fn.as_ctypes()
    return cfn, ctypes.cast(ud, ctypes.c_void_p).value or 0


class CompiledProjection(Projection):
    """:class:`Projection` with its stepping loop compiled (see the module docstring); same results.

    ``chunk_steps``: accepted steps per call into the compiled loop (``None``: adapted so that a call
    takes ~:data:`CHUNK_SECONDS` of wall time). Between calls Python reports ``progress(t)`` and honours
    a Ctrl-C; the chunks carry the loop's whole state, so the result does not depend on them.
    """

    def __init__(self, cm, p, solver="DOP853", max_step=np.inf, watch_singularities=True, fast=True,
                 chunk_steps=None):
        super().__init__(cm, p, solver, max_step, watch_singularities, fast)
        self.chunk_steps = chunk_steps
        self.chunks = 0  # calls into the compiled loop by the last integrate

    def compiled_ok(self, progress=None):
        """Whether the compiled loop applies (else :meth:`Projection.integrate` runs)."""
        k = self.cm.kernel
        return (k is not None and not self.cm.inputs and self.solver_cls.__name__ == "DOP853"
                and k.size <= SPARSE_KKT and hasattr(k._fn, "as_ctypes") and hasattr(k._power_fn, "as_ctypes"))

    def integrate(self, t0, t1, q0, f0, t_eval, rtol, atol, progress=None):
        if not self.compiled_ok():
            return super().integrate(t0, t1, q0, f0, t_eval, rtol, atol, progress)
        cm, n = self.cm, self.cm.n
        args, state, watch = self._arguments(t0, t1, q0, f0, t_eval, rtol, atol)
        out, tout = args[-3], args[-2]
        status, tt, yy = self._run(args, state, progress)
        nsteps, nout = int(state[1][2]), int(state[1][1])
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
        acc, lam, mu = kkt_solutions(cm, self.p, T, Y[:n], Y[n:2 * n], self.fast)  # (the fast KKT solve)
        interrupted = status == CHUNK  # stopped between chunks by a Ctrl-C
        return Trajectory(T, Y[:n].copy(), Y[n:2 * n].copy(), acc, lam, mu, Y[2 * n].copy(), Y[2 * n + 1].copy(),
                          nsteps=nsteps, message=interrupted_message(T[-1] if T.size else t0) if interrupted
                          else SUCCESS, status=INTERRUPTED if interrupted else 0)

    def _arguments(self, t0, t1, q0, f0, t_eval, rtol, atol):
        """The compiled loop's arguments (the kernel's addresses and layout, tolerances, output arrays and
        the state at ``t0``), the state, and the singularity watch (or None)."""
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
        state = _start(t0, y0, f_0, h0, te, out, tout)
        args = (ctx, lay, kk, float(t1), float(rtol), at, float(self.max_step), te,
                watch is not None and watch.active, watch.tol if watch else 0.0, watch.suspect if watch else 0.0,
                _A, _B, _C, _E3, _E5, _D, out, tout, state)
        return args, state, watch

    def _run(self, args, state, progress):
        """Call the compiled loop chunk by chunk until it ends; ``(status, t, y)`` of the last call, status
        CHUNK if a Ctrl-C stopped it (the outputs and counts in ``state`` are those reached).

        While it runs, Python's default SIGINT handler is replaced by one that only notes the Ctrl-C:
        the default one raises KeyboardInterrupt from whatever Python code runs next, which can be inside
        numba's dispatcher on the way into or out of a chunk (a ``SystemError`` there). The loop stops at
        the end of the chunk in which the Ctrl-C came.
        """
        steps = self.chunk_steps or 32
        status, tt, yy = CHUNK, state[0][0], state[2]
        self.chunks = 0
        caught = []
        previous = None
        if threading.current_thread() is threading.main_thread() and \
                signal.getsignal(signal.SIGINT) is signal.default_int_handler:
            previous = signal.signal(signal.SIGINT, lambda *args: caught.append(True))
        try:
            while status == CHUNK and not caught:
                start = time.perf_counter()
                status, tt, yy = _integrate(*args, steps)
                self.chunks += 1
                if status == SEARCH:
                    r, tt, yy = _search(args[0], args[1], state)
                    status = CHANGE_POINT if r < args[9] else CHUNK
                if status in (CHUNK, OK) and progress is not None:  # (as the Python loop: up to t1)
                    progress(state[0][0])
                if self.chunk_steps is None:  # ~CHUNK_SECONDS a call: a prompt Ctrl-C, a negligible dispatch
                    took = time.perf_counter() - start
                    steps = max(8, steps // 2) if took > 2 * CHUNK_SECONDS else \
                        min(1 << 20, 2 * steps) if took < CHUNK_SECONDS / 2 else steps
        except KeyboardInterrupt:  # (another SIGINT handler, or a thread's run): between chunks, the state is whole
            caught.append(True)
        except SystemError as exc:  # such a handler's KeyboardInterrupt raised inside numba's dispatcher
            if not isinstance(exc.__cause__ or exc.__context__, KeyboardInterrupt):
                raise
            caught.append(True)
        finally:
            if previous is not None:
                signal.signal(signal.SIGINT, previous)
        return (CHUNK if caught else status), tt, yy


CHUNK_SECONDS = 0.05  # wall time of one call into the compiled loop (the latency of progress and Ctrl-C)


def _start(t0, y0, f0, h0, t_eval, out, tout):
    """The compiled loop's state at ``t0`` (the outputs at or before ``t0`` written): ``([t, h], [next
    output, outputs written, accepted steps, watched steps], y, f, watch history (4×3), its dense output
    coefficients (3×7×ny), its step starts (3×ny))``."""
    ny = y0.size
    si = np.zeros(4, dtype=np.int64)
    if t_eval.size and t_eval[0] <= t0:
        out[:, 0] = y0
        tout[0] = t0
        si[1] = 1
        si[0] = int(np.searchsorted(t_eval, t0, side="right"))
    return (np.array([float(t0), float(h0)]), si, y0.copy(), np.asarray(f0, dtype=float).copy(), np.zeros((4, 3)),
            np.zeros((3, 7, ny)), np.zeros((3, ny)))


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
    seconds it took (~12 s of CPU the first time, ~0.2 s once cached).

    >>> warm_up() >= 0 and loop_cached()
    True
    """
    import sympy as sp

    from netdyn.lagrange.model import LagrangianModel
    from netdyn.numerics.functions.compiled import compile_model
    from netdyn.symbols import coordinates, t
    start = time.perf_counter()
    x, y = coordinates("x, y")
    cm = compile_model(LagrangianModel([x, y], T=(x.diff(t) ** 2 + y.diff(t) ** 2) / 2, V=sp.Float(9.81) * y,
                                       constraints=[x ** 2 + y ** 2 - 1]))
    loop = CompiledProjection(cm, cm.parameter_vector())
    run = (0, 0.1, np.array([0.6, -0.8]), np.zeros(2), np.array([0.1]), 1e-8, 1e-10)
    loop.integrate(*run)
    args, state, _watch = loop._arguments(*run)
    state[4][0], state[4][2], state[4][3] = [0.0, 0.05, 0.1], [-0.05, 0.0, 0.05], 0.05  # three steps of 0.05
    state[6][:] = state[2]
    _search(args[0], args[1], state)  # the watch's expensive test, compiled only when first needed otherwise
    return time.perf_counter() - start
