"""Integration of linear DAEs ``E ẏ = J y + G u(t)`` with sparse factorizations reused across steps.

The integrator is the 3-stage Radau IIA collocation method (order 5, L-stable,
stiffly accurate, so index-1 DAEs need no special care). For a linear system
its stage equations decouple, through the eigenvectors of the Butcher matrix,
into one real and one complex sparse system with the matrices
``γ/h E − J`` and ``(α + iβ)/h E − J``: factored once per step size
(``scipy.sparse.linalg.splu``) and reused for every step of that size. Steps
land on the output times; each output interval is split into 2^k equal
steps. The embedded error estimate is Hairer's filtered one (one more real
solve; filtered twice on a run's first step and after a rejection, as in
RADAU5), and k moves by Hairer's factor ``0.9 e^(-1/4)`` rounded to a power of
two, up to three levels at once either way. At the run's start and at source
corners a jumping input is taken as its right limit and the algebraic part
made consistent with it (:func:`_right_limit`): the step's start rate must be
the one it integrates from, or the estimate never falls with the step.

>>> import numpy as np, scipy.sparse as sps
>>> dae = LinearDAE(sps.eye(1), sps.csr_array([[-1.0]]), sps.csr_array((1, 0)), [])
>>> T, Y = radau(dae, np.linspace(0, 1, 11), np.array([1.0]), rtol=1e-10)
>>> bool(abs(Y[0, -1] - np.exp(-1)) < 1e-10)
True
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sps
import scipy.sparse.linalg as spla

from netdyn.errors import IntegrationError, SingularSystemError

__all__ = ["LinearDAE", "radau", "consistent_rates"]

_S6 = np.sqrt(6.0)
_A = np.array([[(88 - 7 * _S6) / 360, (296 - 169 * _S6) / 1800, (-2 + 3 * _S6) / 225],
               [(296 + 169 * _S6) / 1800, (88 + 7 * _S6) / 360, (-2 - 3 * _S6) / 225],
               [(16 - _S6) / 36, (16 + _S6) / 36, 1 / 9]])
_C = np.array([(4 - _S6) / 10, (4 + _S6) / 10, 1.0])
_INSIDE = np.array([1e-8, (4 - np.sqrt(6.0)) / 10, (4 + np.sqrt(6.0)) / 10, 1 - 1e-8])  # 0 and the stages
_ERR = np.array([-13 - 7 * _S6, -13 + 7 * _S6, -1.0]) / 3
_LAM, _T = np.linalg.eig(np.linalg.inv(_A))
_order = np.argsort(np.abs(_LAM.imag))  # the real eigenvalue first, then the complex pair
_LAM, _T = _LAM[_order], _T[:, _order]
if _LAM[1].imag < 0:
    _LAM[[1, 2]], _T[:, [1, 2]] = _LAM[[2, 1]], _T[:, [2, 1]]
_TI = np.linalg.inv(_T)
_ERR_T0, _ERR_T1 = float(_ERR @ _T[:, 0].real), complex(_ERR @ _T[:, 1])
_Z1, _Z2 = _T[:, 0].real, _T[:, 1]  # stage increments Z_i from the transformed solutions w1, w2
_ZD1, _ZD2 = (_T[:, 0] * _LAM[0]).real, _T[:, 1] * _LAM[1]  # and their derivatives (times h)
#: [w1, Re w2, Im w2] → [Z | h Ż] at the three stages: Z = w1 Z1 + 2 Re(w2 Z2), likewise Ż
_STAGE_MAP = np.array([np.r_[_Z1, _ZD1], 2 * np.r_[_Z2.real, _ZD2.real], -2 * np.r_[_Z2.imag, _ZD2.imag]])


#: below this many unknowns the per-step products use dense arrays: a scipy.sparse product of a small
#: matrix costs ~10 µs of Python overhead, a dense one ~1 µs (a long run takes millions of steps)
DENSE_BELOW = 200


def fast(M):
    """``M`` as a dense array when it is small (see :data:`DENSE_BELOW`), else unchanged."""
    return M.toarray() if sps.issparse(M) and max(M.shape) < DENSE_BELOW else M


@dataclass
class LinearDAE:
    """``E ẏ = J y + G u(t)`` with sparse ``E``, ``J``, ``G`` and input functions ``u_k(t)``.

    ``error_rows`` selects the components in the error test (default: all); ``rate_rows``, when given, says
    which of them are rates of others (flows beside charges): the default tolerances then measure both
    kinds in one unit (a displacement over the time span is a rate).
    """

    E: sps.csr_array
    J: sps.csr_array
    G: sps.csr_array
    inputs: list  # callables t -> float (vectorized over numpy arrays)
    error_rows: np.ndarray | None = None
    jumps: np.ndarray | None = None  # inputs that may jump at source corners (sources' derivatives)
    corners: np.ndarray | None = None  # the source corners (sorted)
    rate_rows: np.ndarray | None = None  # error rows that are rates of displacements (see default_atol)

    @property
    def size(self):
        return self.E.shape[0]

    def u(self, tt):
        tt = np.atleast_1d(np.asarray(tt, dtype=float))
        if not self.inputs:
            return np.zeros((0, tt.size))
        return np.vstack([np.broadcast_to(np.asarray(fn(tt), dtype=float), tt.shape) for fn in self.inputs])

    @property
    def G_fast(self):
        """:attr:`G` for products in the step loop (dense when small)."""
        if getattr(self, "_G_fast", None) is None or self._G_fast_of is not self.G:
            self._G_fast, self._G_fast_of = fast(self.G), self.G
        return self._G_fast

    def forcing(self, tt):
        """``G u(t)`` for an array of times (one column each)."""
        return self.G_fast @ self.u(tt)

    def inputs_after(self, t, eps):
        """The inputs at ``t`` (a column), those that jump at corners (:attr:`jumps`) at ``t + eps``."""
        u = self.u(t)
        if self.jumps is not None and len(self.jumps):
            late = self.u(t + eps)
            u[self.jumps] = late[self.jumps]
        return u

    def step_forcing(self, t0, h):
        """``G u`` at a step's start and its three stages; inputs that jump at corners (:attr:`jumps`) are
        taken from inside the step at both its ends, where a corner may sit."""
        u = self.u(t0 + h * np.concatenate([[0.0], _C]))
        self.last_inputs = u  # at the step's start and stages (the power integrals reuse them)
        if self.jumps is not None and len(self.jumps) and self.corners is not None and len(self.corners):
            tt = t0 + h * np.concatenate([[0.0], _C])
            near = np.abs(self.corners[np.clip(np.searchsorted(self.corners, tt[[0, 3]]), 0, len(self.corners) - 1)]
                          - tt[[0, 3]]) <= 1e-6 * h
            near |= np.abs(self.corners[np.clip(np.searchsorted(self.corners, tt[[0, 3]]) - 1, 0,
                                                len(self.corners) - 1)] - tt[[0, 3]]) <= 1e-6 * h
            if not near.any():
                return self.G_fast @ u
            u = u.copy()
            tt[[0, 3]] = np.where(near, (t0 + h * _INSIDE)[[0, 3]], tt[[0, 3]])
            for j in self.jumps:
                u[j] = np.broadcast_to(np.asarray(self.inputs[j](tt), dtype=float), tt.shape)
        return self.G_fast @ u


def consistent_rates(dae):
    """The solver of ``E[:, d] ẏ_d − J[:, a] y_a = J[:, d] y_d + G u`` (d: columns of E, a: the others).

    Given the differential components ``y_d`` it returns their rates and the
    algebraic components: exactly what consistent initial values and outputs
    need. Returns ``(solve, differential mask)``; ``solve(t, Y) -> (rates, Y_full)``
    for states as columns of ``Y``. A singular matrix means the DAE is not of
    index one (:class:`~netdyn.errors.SingularSystemError`).
    """
    E, J = dae.E.tocsc(), dae.J.tocsc()
    diff = np.asarray(abs(E).sum(axis=0)).ravel() > 0
    S = sps.hstack([E[:, np.flatnonzero(diff)], -J[:, np.flatnonzero(~diff)]]).tocsc()
    S.eliminate_zeros()
    from scipy.sparse.csgraph import structural_rank
    if S.shape[0] and structural_rank(S) < S.shape[0]:  # SuperLU may crash on these instead of raising
        raise SingularSystemError("the linear DAE is not of index one (its algebraic part is structurally "
                                  "singular)")
    try:
        lu = spla.splu(S)
    except RuntimeError as exc:
        raise SingularSystemError(f"the linear DAE is not of index one ({exc}); use the symbolic path") from None
    d = np.abs(lu.U.diagonal())
    if d.size and d.min() <= 1e-13 * d.max():
        raise SingularSystemError("the linear DAE is not of index one (its algebraic part is singular)")
    Jd = J[:, np.flatnonzero(diff)]

    def solve(tt, Y, forcing=None):
        Y = np.array(Y, dtype=float, copy=True)
        rhs = Jd @ Y[diff] + (dae.forcing(tt) if forcing is None else forcing)
        z = lu.solve(rhs)
        nd = int(diff.sum())
        rates = np.zeros_like(Y)
        rates[diff] = z[:nd]
        Y[~diff] = z[nd:]
        return rates, Y

    return solve, diff


class _Stepper:
    """Radau IIA steps of one size ``h`` with their two factorizations."""

    def __init__(self, dae, h):
        E, J = dae.E.tocsc(), dae.J.tocsc()
        self.h = h
        self.E, self.J = fast(dae.E), fast(dae.J)
        try:
            self.lu_real = spla.splu((_LAM[0].real / h * E - J).tocsc())
            self.lu_complex = spla.splu((_LAM[1] / h * E.astype(complex) - J.astype(complex)).tocsc())
        except RuntimeError as exc:
            raise SingularSystemError(f"the linear DAE is singular at step {h:.3g} ({exc})") from None

    def step(self, y0, f0, g0, g, refine=False):
        """One step from ``y0``: ``f0 = J y0 + g0`` with ``g0`` the forcing at t0, ``g`` at the three stages.

        The error estimate is Hairer's filtered one, ``(γ/h E − J)⁻¹ (f0 + E ΣeᵢZᵢ / h)``; ``refine`` (the
        first step of a run, a step after a rejection) filters it once more, ``f0`` replaced by
        ``f(y0 + err) = f0 + J err`` (Hairer & Wanner IV.8, RADAU5): stiff components' contributions, which
        the first estimate can overstate by ``‖hJ‖``, are damped again."""
        Jy0 = f0 - g0
        r1 = Jy0 * _TI[0].sum().real + g @ _TI[0].real  # stage right-hand sides J y0 + G u(t_i), transformed
        # real and imaginary parts apart: a real-by-complex matmul has no BLAS path (28 ms at 20,000 rows)
        r2 = Jy0 * _TI[1].sum() + (g @ _TI[1].real + 1j * (g @ _TI[1].imag))
        w1 = self.lu_real.solve(r1)
        w2 = self.lu_complex.solve(r2)
        z3 = _T[2, 0].real * w1 + 2 * (_T[2, 1] * w2).real  # the last stage increment: y1 - y0
        ze = _ERR_T0 * w1 + 2 * (_ERR_T1 * w2).real  # Σ e_i Z_i
        Eze = self.E @ ze / self.h
        err = self.lu_real.solve(f0 + Eze)
        if refine:
            err = self.lu_real.solve(f0 + self.J @ err + Eze)
        self.last = (w1, w2)
        return y0 + z3, err

    def maps(self):
        """Dense ``(Ar, Ac, Φ)``: the inverses of the two stage matrices and the step map ``y1 = Φ y0 + ...``
        (small systems only: :func:`_batch`)."""
        if getattr(self, "_maps", None) is None:
            E, J = np.asarray(self.E, dtype=float), np.asarray(self.J, dtype=float)
            Ar = np.linalg.inv(_LAM[0].real / self.h * E - J)
            Ac = np.linalg.inv(_LAM[1] / self.h * E - J)
            Phi = np.eye(J.shape[0]) + _T[2, 0].real * _TI[0].sum().real * (Ar @ J) \
                + 2 * (_T[2, 1] * _TI[1].sum() * (Ac @ J)).real
            self._maps = (Ar, Ac, Phi, J, E)
        return self._maps

    def end_rate(self):
        """``ẏ`` at the end of the last step taken: the collocation polynomial's derivative at its last stage
        (``c₃ = 1``), where the DAE holds exactly (``E ẏ₁ = J y₁ + G u(t₁)``, the method being stiffly
        accurate); the rates at an output time without one more solve."""
        w1, w2 = self.last
        return (_ZD1[2] * w1 + 2 * (_ZD2[2] * w2).real) / self.h

    def stages(self, y0):
        """Stage values ``Y_i`` and stage derivatives ``Ẏ_i`` (columns) of the last step taken from ``y0``.

        ``Ẏ = (A⁻¹ ⊗ I) Z / h`` is the derivative of the collocation polynomial at the stages, where the
        DAE holds exactly."""
        w1, w2 = self.last
        # one (6, 3) @ (3, N) product for both (was six outers), rows contiguous: the columns returned are
        # transposed views (a row-major (N, 3) product and its strided updates cost twice as much at N = 10,000)
        ZZ = _STAGE_MAP.T @ np.vstack([w1, w2.real, w2.imag])
        ZZ[:3] += y0
        ZZ[3:] /= self.h
        return ZZ[:3].T, ZZ[3:].T


#: systems up to this size integrate a whole run of equal steps at once (:func:`_batch`)
BATCH_BELOW = 33


def _batch(st, dae, y, t0, h, S, rows, atol, rtol, power, g_start=None, refine=False, every=False):
    """``S`` equal Radau steps from ``y`` at ``t0`` at once, for a small system without jumping inputs.

    For a linear DAE a step is an affine map ``y₁ = Φ y₀ + c(u at the step's times)``: the inputs at
    every step's times in one call, the ``c`` in one product, the recursion by a doubling scan (log₂ S
    dense products), then the error estimates and the stage values (for the power) of all steps in
    products again. ``g_start`` replaces the first step's forcing at its start (the right limit at a
    jump, :func:`_right_limit`); ``refine`` filters the first step's estimate once more (see
    :meth:`_Stepper.step`). Returns ``(m, y, e, work)``: the steps accepted before the first whose error
    test fails (``m < S`` then), the state after them, their error norms (and the failing step's, last) and
    the work integrated over them; with ``every``, the states after each of them (columns) and the work
    integrated up to each.
    """
    Ar, Ac, Phi, J, E = st.maps()
    N = y.size
    times = t0 + h * (np.arange(S)[:, None] + np.concatenate([[0.0], _C])[None, :])  # (S, 4)
    u = dae.u(times.ravel())
    g = (dae.G_fast @ u).reshape(N, S, 4)
    if g_start is not None:
        g[:, 0, 0] = g_start
    g0, gs = g[:, :, 0], g[:, :, 1:]
    gT0, gT1 = gs @ _TI[0].real, gs @ _TI[1].real + 1j * (gs @ _TI[1].imag)
    C = _T[2, 0].real * (Ar @ gT0) + 2 * (_T[2, 1] * (Ac @ gT1)).real
    C[:, 0] += Phi @ y
    P, shift = Phi, 1
    while shift < S:  # C[:, j] becomes y after step j: Σ_{i ≤ j} Φ^{j−i} c_i (y folded into c_0)
        C[:, shift:] = C[:, shift:] + P @ C[:, :-shift]
        P, shift = P @ P, 2 * shift
    Yprev = np.concatenate([y[:, None], C[:, :-1]], axis=1)
    JY = J @ Yprev
    w1 = Ar @ (_TI[0].sum().real * JY + gT0)
    w2 = Ac @ (_TI[1].sum() * JY + gT1)
    ze = _ERR_T0 * w1 + 2 * (_ERR_T1 * w2).real
    Eze = E @ ze / h
    err = Ar @ (JY + g0 + Eze)
    if refine:
        err[:, 0] = Ar @ (JY[:, 0] + g0[:, 0] + J @ err[:, 0] + Eze[:, 0])
    e = np.zeros(S)
    if np.isfinite(rtol) and rows.size:
        sc = np.reshape(atol, (-1, 1)) + rtol * np.maximum(np.abs(Yprev[rows]), np.abs(C[rows]))
        e = np.sqrt(np.mean((err[rows] / sc) ** 2, axis=0))
    bad = ~np.isfinite(e) | (e > 1.0)
    m = int(np.argmax(bad)) if bad.any() else S
    work = None
    if power is not None and m:
        Z = w1[:, :m, None] * _Z1 + 2 * (w2[:, :m, None] * _Z2).real  # (N, m, 3) stage increments
        Zd = (w1[:, :m, None] * _ZD1 + 2 * (w2[:, :m, None] * _ZD2).real) / h
        Ys = (Yprev[:, :m, None] + Z).reshape(N, 3 * m)
        Pw = np.atleast_2d(power(times[:m, 1:].ravel(), Ys, Zd.reshape(N, 3 * m),
                                 u.reshape(u.shape[0], S, 4)[:, :m, 1:].reshape(u.shape[0], 3 * m)))
        work = h * (Pw.reshape(Pw.shape[0], m, 3) @ _A[2])
        work = np.cumsum(work, axis=1) if every else work.sum(axis=1)
    if every:
        return m, C[:, :m], e[:m + 1], work
    return m, (C[:, m - 1].copy() if m else y), e[:m + 1], work


#: the most steps :func:`_batch` takes at once, and the first batch after a rejection (then x4 per batch accepted)
BATCH_MOST, BATCH_AFTER_REJECT = 4096, 16
#: the step-size factor ``0.9 e^(-1/4)`` of an error norm ``e`` is applied as a power of two (a level), at most
#: this many at once either way (Hairer's bounds on the factor are 1/10 and 8: 2^-3 and 2^3)
MOST_LEVELS = 3


def _levels(e):
    """The levels (halvings of the step) an error norm ``e`` asks for: positive to shrink after a rejection,
    negative to grow; ``0.9 e^(-1/4)`` rounded to a power of two (down when growing, up when shrinking).

    >>> _levels(2.0), _levels(0.5), _levels(1e-3), _levels(1e-12)
    (1, 0, -2, -3)
    """
    if not np.isfinite(e):
        return 1
    if e <= 0:  # an exact step (a state at rest): as much growth as allowed
        return -MOST_LEVELS
    fac = 0.9 * e ** -0.25
    if fac < 1:
        return min(MOST_LEVELS, int(np.ceil(-np.log2(fac))))
    return -min(MOST_LEVELS, int(np.floor(np.log2(fac))))


def _grow(level, done, e):
    """``(level, done)`` after an accepted step of error norm ``e`` at ``done`` steps into the interval: as many
    levels down as ``e`` allows and ``done`` is divisible by (the steps of the coarser size land on the same
    times)."""
    d = min(-_levels(e), level)
    while d > 0 and done % (1 << d):
        d -= 1
    return (level - d, done >> d) if d > 0 else (level, done)


def _right_limit(dae, y, t0, t1, solve):
    """At an interval's start ``t0`` where inputs may jump (the run's start, a source corner): ``(y, g)`` with
    ``g`` the forcing just after ``t0`` and ``y``'s algebraic components made consistent with it, or
    ``(y, None)`` where no input jumps there.

    A step's start forcing enters its error estimate as the rate ``ẏ₀``; at a jump the value at ``t0`` may
    be the left limit (a PWM or PULSE at its corner), and a rate off by a jump makes the estimate O(1) in
    the algebraic rows and O(h) in the others at every step size: the step size falls by halvings to
    1e-11 s and back by doublings (the PWM-switched RC of issue 27: 450,000 steps for 7 events). A jump is
    told from a slope by comparing ``u(t0 + ε) − u(t0)`` with the change over half the interval.
    ``solve`` is a one-element list holding :func:`consistent_rates`' solver (made on first use; ``False``
    where the DAE has none: the rate is then corrected, the state left)."""
    span = t1 - t0
    u = dae.u(np.array([t0, t0 + 1e-8 * span, t0 + 0.5 * span]))
    if not np.any(np.abs(u[:, 1] - u[:, 0]) > 1e-4 * np.abs(u[:, 2] - u[:, 0])):
        return y, None
    g = dae.G_fast @ u[:, 1]
    if solve[0] is None:
        try:
            solve[0] = consistent_rates(dae)[0]
        except SingularSystemError:
            solve[0] = False
    if solve[0]:
        y = solve[0](t0 + 1e-8 * span, y[:, None], forcing=g[:, None])[1][:, 0]
    return y, g


def _stepper(steppers, dae, h):
    """The :class:`_Stepper` of step ``h`` (its factorizations made once; sizes equal to 12 digits share one)."""
    key = float(f"{h:.12g}")
    st = steppers.get(key)
    if st is None:
        st = steppers[key] = _Stepper(dae, h)
    return st


def _equal_run(dt, corner, k, most):
    """How many output intervals from ``k`` have the length of interval ``k`` (to 1e-9) with no source corner
    inside the run (at most ``most``): one step each, :func:`_batch` takes them at once."""
    seg = dt[k:k + most]
    ok = np.abs(seg - seg[0]) <= 1e-9 * seg[0]
    if corner is not None:
        ok[1:] &= ~corner[k + 1:k + seg.size]
    return int(np.argmin(ok)) if not ok.all() else int(seg.size)


#: components held at zero carry the factorization's roundoff, amplified by the system's conditioning (a gain
#: loop of controlled sources: ~1e-13 of the largest magnitude); no step size removes it, so no component is
#: asked for less than this absolute accuracy (in units of the largest magnitude)
ROUNDOFF = 1e-13


def default_atol(dae, rows, scale, rtol, span):
    """Absolute tolerances from each error row's magnitude ``scale`` (a first pass without error control).

    Each row gets ``rtol · 1e-2`` of its magnitude, floored at 1e-9 of the largest magnitude (components held
    at zero by a constraint, a dead-end branch) and at :data:`ROUNDOFF` of it; displacements and rates
    (``dae.rate_rows``) are compared in one unit, a displacement over ``span`` being a rate. A system at rest
    (scale 0) keeps an absolute 1e-12 (a relative floor would underflow to atol = 0).

    >>> import numpy as np, scipy.sparse as sps
    >>> dae = LinearDAE(sps.eye(2, format="csr"), sps.eye(2, format="csr"), sps.csr_array((2, 0)), [],
    ...                 rate_rows=np.array([1]))
    >>> atol = default_atol(dae, np.arange(2), np.array([1e-6, 0.0]), 1e-8, 1e-3)  # q: 1e-6, its rate: 0
    >>> [float(f"{a:.3g}") for a in atol]  # q: rtol 1e-2 of itself; its rate: ROUNDOFF of 1e-6 / 1e-3
    [1e-16, 1e-16]
    """
    unit = np.ones(rows.size)
    if dae.rate_rows is not None and span > 0:
        unit[~np.isin(rows, dae.rate_rows)] = span
    top = float(np.max(scale / unit, initial=0.0))  # (no rows: a network without unknowns)
    if top == 0:
        return np.full(rows.size, 1e-12)
    return np.maximum(np.maximum(scale, top * unit * 1e-9) * rtol * 1e-2, top * unit * ROUNDOFF)


def radau(dae, t_out, y0, rtol=1e-8, atol=None, max_step=np.inf, max_level=24, progress=None, stats=None,
          power=None, restart=None, rates=None, sink=None):
    """Integrate from ``y0`` at ``t_out[0]``; returns ``(t_out, Y)`` with one column per output time.

    ``power(t_stages, Y_stages, Ydot_stages) -> P`` (``P`` of shape ``(k, 3)``), when given, is integrated
    along with the solution by the method's own quadrature (weights ``b`` at the three stages, where the
    DAE holds exactly); the integrals at the output times are returned as a third value ``(k, len(t_out))``.
    ``restart(t, eps, y) -> y``, when given, makes the state consistent again at the start ``t`` of every
    output interval, the inputs that jump taken at ``t + eps``: inputs that are sources' derivatives jump
    at source corners, and so do the algebraic components that depend on them.

    ``y0`` should be consistent (see :func:`consistent_rates`); ``atol`` is a
    scalar or a vector over ``dae.error_rows``; by default each component's
    magnitude is found by a first pass without error control (one step per
    output interval, the same factorizations), as ``simulate`` does for the
    symbolic path. ``max_step`` caps the step. ``stats`` (a dict, optional) receives ``nsteps``, the
    number of accepted steps; given ``stats``, a Ctrl-C returns the output times reached so far and
    sets ``stats["interrupted"]`` to the last of them. ``rates`` (optional, an array of shape
    ``(dae.size, len(t_out))``, best in Fortran order) receives at each output time after the first the rates
    ``ẏ`` of the step that ended there (:meth:`_Stepper.end_rate`), NaN where none was taken one by one (small
    systems' batches); its first column is left as it is. ``sink(k, y, rate)`` (optional) receives each output
    column instead of a dense array (``rate`` ``None`` where ``rates`` would hold NaN; column 0 with ``None``):
    the state is then not kept here and ``Y`` is returned as ``None`` (long outputs of large networks,
    :mod:`netdyn.numerics.results.store`).
    """
    if atol is None:
        rows = np.arange(dae.size) if dae.error_rows is None else np.asarray(dae.error_rows)
        stage = getattr(progress, "stage", None)  # a bar that labels the passes is told of this one too
        if stage is not None:
            stage("first pass")
        top = np.zeros(rows.size)  # each component's largest magnitude: a running maximum, no dense array

        def biggest(k, y, rate):
            np.maximum(top, np.abs(y[rows]), out=top)
        radau(dae, t_out, y0, rtol=np.inf, atol=np.inf, max_step=max_step, restart=restart, sink=biggest,
              progress=progress if stage is not None else None)  # no error control
        atol = default_atol(dae, rows, top, rtol, t_out[-1] - t_out[0])
        if stage is not None:
            stage("refining")
    t_out = np.asarray(t_out, dtype=float)
    if t_out.ndim != 1 or t_out.size < 1 or np.any(np.diff(t_out) <= 0):
        raise IntegrationError("output times must increase strictly")
    rows = np.arange(dae.size) if dae.error_rows is None else np.asarray(dae.error_rows)
    control = np.isfinite(rtol)
    y = np.asarray(y0, dtype=float).copy()
    if sink is None:
        Y = np.empty((dae.size, t_out.size), order="F")  # filled a column at a time: contiguous columns
        Y[:, 0] = y
    else:
        Y = None
        sink(0, y, None)
    work = None
    if power is not None:
        work = np.zeros((0, t_out.size))
        acc = None
    steppers = {}
    J_fast = fast(dae.J)
    batch = dae.size < BATCH_BELOW and restart is None and (dae.jumps is None or not len(dae.jumps))
    corner = np.isin(t_out, dae.corners) if dae.corners is not None and len(dae.corners) else None
    solve = [None]  # consistent_rates' solver, for the right limits at jumps (made on first use)
    level = 0
    accepted = rejected = 0
    refine = True  # the first step, and a step after a rejection: the estimate filtered twice (_Stepper.step)
    most = BATCH_MOST
    dt = np.diff(t_out)
    skip = 0  # output intervals up to here were taken by a batch across intervals
    k = reached = 0  # reached: the last output column written (what Ctrl-C returns)
    # a batch across intervals reports progress (and may be interrupted) at its end: ~64 reports a run
    span_most = most if progress is None else max(8, (t_out.size - 1) // 64)
    try:
        for k in range(t_out.size - 1):
            if k < skip:
                continue
            t0, t1 = t_out[k], t_out[k + 1]
            base = max(1, int(np.ceil((t1 - t0) / max_step * (1 - 1e-12))))
            done = 0  # steps of the current size taken in this interval
            g_start = None  # the first step's start forcing when an input jumps at t0 (_right_limit)
            if restart is not None and k:
                y = restart(t0, 1e-8 * (t1 - t0), y)
            elif restart is None and (k == 0 or (corner is not None and corner[k])):
                y, g_start = _right_limit(dae, y, t0, t1, solve)
            if batch and level == 0 and np.isinf(max_step):  # one step an interval: equal intervals at once
                run = _equal_run(dt, corner, k, min(most, span_most))
                if run >= 8:
                    m, Ys, es, w = _batch(_stepper(steppers, dae, dt[k]), dae, y, t0, dt[k], run, rows, atol, rtol,
                                          power, g_start, refine, every=True)
                    if m:
                        y = Ys[:, -1].copy()
                        accepted += m
                        skip = k + m
                        for j in range(m):  # the outputs: columns k+1 .. k+m
                            if sink is not None:
                                sink(k + 1 + j, Ys[:, j], None)
                            else:
                                Y[:, k + 1 + j] = Ys[:, j]
                        if rates is not None and sink is None:
                            rates[:, k + 1:k + 1 + m] = np.nan
                        if w is not None:
                            base_acc = np.zeros(w.shape[0]) if acc is None else acc
                            if work.shape[0] != w.shape[0]:
                                work = np.zeros((w.shape[0], t_out.size))
                            work[:, k + 1:k + 1 + m] = base_acc[:, None] + w
                            acc = base_acc + w[:, -1]
                        reached = k + m
                        if progress is not None:
                            progress(t_out[k + m])
                    if m == run:
                        refine, most = False, min(BATCH_MOST, 4 * most)
                        continue
                    rejected += 1
                    refine, most = True, BATCH_AFTER_REJECT
                    if m:  # interval k + m, where the step failed, is taken one level finer
                        level = _levels(float(es[m]))
                        continue
                    level = _levels(float(es[0]))
            last = None  # the stepper of the step that ends the interval, when taken one by one
            while done < base << level:
                h = (t1 - t0) / (base << level)
                st = _stepper(steppers, dae, h)
                tt = t0 + done * h
                first = g_start if done == 0 else None
                if batch and (base << level) - done >= 8:  # many equal steps of a small system: at once
                    S = min((base << level) - done, most)
                    align = 1 << min(level, MOST_LEVELS)  # end on a step of the coarser sizes: they may follow
                    if (done + S) % align and (done + S) - (done + S) % align > done:
                        S -= (done + S) % align
                    m, y, es, w = _batch(st, dae, y, tt, h, S, rows, atol, rtol, power, first, refine)
                    last = None
                    done += m
                    accepted += m
                    if w is not None:
                        acc = w if acc is None else acc + w
                    if m < S:  # the first failing step: a smaller step from there, in short batches
                        rejected += 1
                        up = _levels(float(es[m]))
                        level += up
                        done <<= up
                        refine, most = True, BATCH_AFTER_REJECT
                        if level > max_level:
                            raise IntegrationError(f"step size too small near t = {tt + m * h:.6g}: the error "
                                                   "test keeps failing")
                    else:
                        refine, most = False, min(BATCH_MOST, 4 * most)
                        if level and es.size:
                            level, done = _grow(level, done, float(es.max()))
                    continue
                g = dae.step_forcing(tt, h)
                if first is not None:
                    g[:, 0] = first
                f0 = J_fast @ y + g[:, 0]
                y1, err = st.step(y, f0, g[:, 0], g[:, 1:], refine=refine)
                e = 0.0
                if control and rows.size:
                    sc = atol + rtol * np.maximum(np.abs(y[rows]), np.abs(y1[rows]))
                    e = float(np.sqrt(np.mean((err[rows] / sc) ** 2)))
                if not np.isfinite(e) or e > 1.0:  # reject: a smaller step by the error's factor
                    rejected += 1
                    up = _levels(e)
                    level += up
                    done <<= up
                    refine = True
                    if level > max_level:
                        raise IntegrationError(f"step size too small near t = {tt:.6g}: the error test keeps failing")
                    continue
                refine = False
                if power is not None:
                    Ys, Yd = st.stages(y)
                    P = np.atleast_2d(power(tt + _C * h, Ys, Yd, dae.last_inputs[:, 1:]))
                    acc = (np.zeros(P.shape[0]) if acc is None else acc) + h * (P @ _A[2])
                y = y1
                last = st
                done += 1
                accepted += 1
                if level:  # accurate enough: a larger step, by the error's factor
                    level, done = _grow(level, done, e)
            if sink is not None:
                sink(k + 1, y, last.end_rate() if last is not None and rates is not None else None)
            else:
                Y[:, k + 1] = y
            if rates is not None and sink is None:
                rates[:, k + 1] = last.end_rate() if last is not None else np.nan
            if power is not None and acc is not None:
                if work.shape[0] != acc.size:
                    work = np.zeros((acc.size, t_out.size))
                work[:, k + 1] = acc
            reached = k + 1
            if progress is not None:
                progress(t1)
    except KeyboardInterrupt:  # Ctrl-C: the output times reached so far (columns 0..reached), stats["interrupted"]
        if stats is None:
            raise
        k = reached
        stats["nsteps"], stats["nrejected"], stats["interrupted"] = accepted, rejected, float(t_out[k])
        if power is not None:
            if not work.shape[0]:  # interrupted before the first step: no energy moved yet
                work = np.zeros((2, t_out.size))
            return t_out[:k + 1], None if Y is None else Y[:, :k + 1], work[:, :k + 1]
        return t_out[:k + 1], None if Y is None else Y[:, :k + 1]
    if stats is not None:
        stats["nsteps"], stats["nrejected"] = accepted, rejected
    if power is not None:
        return t_out, Y, work
    return t_out, Y
