"""One BDF step of the circuit path as one compiled call (numba): predictor, Newton, banded LU, error estimate.

:func:`bdf_step` does in one call what :class:`netdyn.numerics.circuit.nonlinearsim._Chord` does in a few hundred
numpy calls: the variable-step BDF weights and predictor from the last accepted points, the Newton
iteration on ``E ẏ − J y − G u(t) + C g(Cᵀ f) = 0`` with every device port evaluated in a loop (a linear
conductance, or a junction: ngspice's law with ``GMIN``, its breakdown, its charge and ``pnjlim``), the
Newton matrix written straight into band storage (LAPACK's, one row per column) (rows and columns renumbered by reverse
Cuthill–McKee before the first step) and factored by a banded LU with partial pivoting kept across
iterations and steps while it serves, and the local error estimate of node voltages and junction charges.
Compiled once per machine (``cache=True``). The Python loop of
:func:`netdyn.numerics.circuit.nonlinearsim.simulate_circuit` keeps what needs Python: the sources' values
at the new time, the output times and the step-size control.

A port table row (:data:`PORT_FIELDS`) describes one device port: ``kind`` 0 is a linear conductance
``G``; ``kind`` 1 a junction of saturation current ``IS``, emission ``N Vt`` (``nvt``), ``gmin``, an
optional breakdown (``has_bv``, knee ``xbv``, ``nbvt``), ``vcrit`` of the limiting and an optional charge
(``has_q``: ``CJO``, ``VJ``, ``M``, ``FC``, ``TT``).

>>> import numpy as np
>>> table = np.zeros((1, len(PORT_FIELDS))); table[0, :5] = 1, 0, 1e-14, 0.025, 0.0
>>> g, h, q, c = np.zeros(1), np.zeros(1), np.zeros(1), np.zeros(1)
>>> port_laws(table, np.array([0.6]), g, h, q, c)
>>> round(float(g[0] / (1e-14 * (np.exp(24.0) - 1))), 12)           # IS (exp(v / N Vt) - 1)
1.0
>>> ab = np.array([[0.0, 0.0, 2.0, 1.0], [0.0, 1.0, 4.0, 0.0]])      # [[2, 1], [1, 4]], kl = ku = 1
>>> ipiv = np.zeros(2, dtype=np.int64)
>>> band_lu(ab, 1, 1, ipiv), band_solve(ab, 1, 1, ipiv, np.array([3.0, 5.0])).round(12).tolist()
(True, [1.0, 1.0])
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from netdyn.components.diode import pnjlim

#: numba caches on disk only under the package name: a cache written by a bare-name import of this file
#: (``python -m doctest path/to/it.py``) is found by the package import and fails to load there
CACHE = __name__.startswith("netdyn.")

#: the columns of a port table row
PORT_FIELDS = ("kind", "G", "IS", "nvt", "gmin", "has_bv", "xbv", "nbvt", "vcrit", "has_q", "CJO", "VJ", "M", "FC",
               "TT")
#: the first step after a source corner (order 1, no history for an error estimate): this fraction of the last
#: step, as SPICE cuts its step at a breakpoint. Its error (backward Euler's, ~ h²) is not controlled and is the
#: power balance's largest term where PULSE corners are (random diode seed 1: 5e-4 of the energy; 8e-6 at 1e-3
#: of the last step), but much shorter steps leave node voltages, BDF differences of node fluxes that grow over
#: the run, with too few digits for the error test at rtol 1e-7 (seeds 18 and 19 then fail)
RESTART_STEP = 0.1
#: Newton's test on the devices' port flows (relative to 1 + |flow|; :func:`_ports_settled`), SPICE-like in
#: size (SPICE: reltol 1e-3 of a junction voltage): it catches a junction left volts off its solution (deck 19),
#: while 1e-7 or 1e-9 stalled Newton on flows that are rates of fluxes at rtol 1e-9 (a rectifier with RS: step
#: too small)
PORT_TOL = 1e-4
EPS = 2.220446049250313e-16
XMAX = 50.0  # netdyn.components.diode.XMAX: the exponent above which a junction's law continues linearly

__all__ = ["PORT_FIELDS", "port_laws", "band_lu", "band_solve", "bdf_step", "bdf_run", "source_values", "step_work",
           "WORK_FIELDS", "GAUSS", "rate_of_rates"]

#: the arrays of a work program (:func:`step_work`): which element's channel each power term feeds
WORK_FIELDS = ("d_row", "d_col", "d_val", "d_ch", "e_row", "e_inp", "e_val", "e_ch", "a_row", "a_inp", "a_val",
               "a_ch", "s_row", "s_col", "s_val", "s_ch", "port_ch", "junction_ch")


@njit(cache=CACHE)
def port_laws(table, F, g, h, q, c):
    """Current ``g``, conductance ``h``, charge ``q`` and capacitance ``c`` of every port at port voltage ``F``."""
    for p in range(F.size):
        v = F[p]
        if table[p, 0] == 0.0:
            g[p] = table[p, 1] * v
            h[p] = table[p, 1]
            q[p] = 0.0
            c[p] = 0.0
            continue
        IS, nvt, gmin = table[p, 2], table[p, 3], table[p, 4]
        x = v / nvt
        ex = math.exp(min(x, XMAX))
        i = IS * (ex * (1.0 + max(x - XMAX, 0.0)) - 1.0)
        di = IS / nvt * ex
        if table[p, 5] != 0.0:
            nbvt = table[p, 7]
            z = -(table[p, 6] + v) / nbvt
            ez = math.exp(min(z, XMAX))
            i -= IS * ez * (1.0 + max(z - XMAX, 0.0))
            di += IS / nbvt * ez
        g[p] = i + gmin * v
        h[p] = di + gmin
        if table[p, 9] == 0.0:
            q[p] = 0.0
            c[p] = 0.0
            continue
        CJO, VJ, M, FC, TT = table[p, 10], table[p, 11], table[p, 12], table[p, 13], table[p, 14]
        d = FC * VJ
        if v < d:
            arg = 1.0 - v / VJ
            qd = VJ * CJO * (1.0 - arg ** (1.0 - M)) / (1.0 - M)
            cd = CJO * arg ** (-M)
        else:
            F1 = VJ * (1.0 - (1.0 - FC) ** (1.0 - M)) / (1.0 - M)
            F2, F3 = (1.0 - FC) ** (1.0 + M), 1.0 - FC * (1.0 + M)
            qd = CJO * F1 + CJO / F2 * (F3 * (v - d) + M / (2.0 * VJ) * (v * v - d * d))
            cd = CJO / F2 * (F3 + M * v / VJ)
        q[p] = TT * i + qd
        c[p] = TT * di + cd


_pnjlim = njit(cache=CACHE)(pnjlim)  # SPICE's junction-voltage limiting: the diode's own, compiled


@njit(cache=CACHE)
def _limited(table, p, vo, vn):
    """SPICE's limiting of a junction's new voltage (``pnjlim``; in breakdown, of the distance past the knee)."""
    nvt, vcrit = table[p, 3], table[p, 8]
    if table[p, 5] != 0.0:
        bv, nbvt = table[p, 6], table[p, 7]
        if vn < min(0.0, -bv + 10.0 * nbvt):
            return -(_pnjlim(-(vn + bv), -(vo + bv), nbvt, vcrit) + bv)
    return _pnjlim(vn, vo, nvt, vcrit)


@njit(cache=CACHE)
def band_lu(ab, kl, ku, ipiv):
    """LU with partial pivoting of a band matrix in LAPACK storage (``dgbtf2``), one row per column:
    ``A[i, j]`` at ``ab[j, kl + ku + i − j]``, ``kl`` entries of fill first. False on a zero pivot."""
    N = ab.shape[0]
    kv = kl + ku
    ju = 0
    for j in range(N):
        km = min(kl, N - 1 - j)
        jp = 0
        big = abs(ab[j, kv])
        for i in range(1, km + 1):
            if abs(ab[j, kv + i]) > big:
                big = abs(ab[j, kv + i])
                jp = i
        ipiv[j] = j + jp
        if big == 0.0 or not math.isfinite(big):
            return False
        ju = max(ju, min(j + ku + jp, N - 1))
        if jp != 0:
            for col in range(j, ju + 1):
                a, b = kv + jp + j - col, kv + j - col
                tmp = ab[col, a]
                ab[col, a] = ab[col, b]
                ab[col, b] = tmp
        if km > 0:
            piv = ab[j, kv]
            for i in range(1, km + 1):
                ab[j, kv + i] /= piv
            for col in range(j + 1, ju + 1):
                tmp = ab[col, kv + j - col]
                if tmp != 0.0:
                    for i in range(1, km + 1):
                        ab[col, kv + j + i - col] -= ab[j, kv + i] * tmp
    return True


@njit(cache=CACHE)
def band_solve(ab, kl, ku, ipiv, b):
    """Solve ``A x = b`` with the factors of :func:`band_lu` (``dgbtrs``); ``b`` is overwritten and returned."""
    N = ab.shape[0]
    kv = kl + ku
    for j in range(N - 1):
        l = ipiv[j]
        if l != j:
            tmp = b[l]
            b[l] = b[j]
            b[j] = tmp
        bj = b[j]
        if bj != 0.0:
            for i in range(1, min(kl, N - 1 - j) + 1):
                b[j + i] -= ab[j, kv + i] * bj
    for j in range(N - 1, -1, -1):
        b[j] /= ab[j, kv]
        bj = b[j]
        if bj != 0.0:
            for i in range(max(0, j - kv), j):
                b[i] -= ab[j, kv + i - j] * bj
    return b


@njit(cache=CACHE)
def _bdf_weights(ht, nh, t_new, order, a, w):
    """BDF weights ``a`` (``ẏ = a0 y_new + Σ a_i y_i``, newest history point first) and predictor weights ``w``
    over the last ``order + 1`` points; returns the error factor ``(t_new − t_last) / (t_new − t_oldest)``.
    The order is at most ``nh − 1`` (at least 1): the error estimate needs one point more than the formula,
    so the step after a restart is the only one without it (and :func:`bdf_run` keeps it short)."""
    order = min(order, max(nh - 1, 1))
    for j in range(order + 1):
        tj = t_new if j == 0 else ht[nh - j]
        if j == 0:
            s = 0.0
            for i in range(1, order + 1):
                s += 1.0 / (t_new - ht[nh - i])
            a[0] = s
        else:
            num, den = 1.0, 1.0
            for i in range(order + 1):
                if i == j:
                    continue
                ti = t_new if i == 0 else ht[nh - i]
                den *= tj - ti
                if i != 0:
                    num *= t_new - ti
            a[j] = num / den
    npts = min(order + 1, nh)
    for j in range(npts):
        tj = ht[nh - 1 - j]
        prod = 1.0
        for i in range(npts):
            if i != j:
                ti = ht[nh - 1 - i]
                prod *= (t_new - ti) / (tj - ti)
        w[j] = prod
    if npts == order + 1:
        return order, npts, (t_new - ht[nh - 1]) / (t_new - ht[nh - npts])
    return order, npts, 0.0


@njit(cache=CACHE)
def _ports(ct_ptr, ct_idx, ct_val, f, F):
    for p in range(F.size):
        s = 0.0
        for k in range(ct_ptr[p], ct_ptr[p + 1]):
            s += ct_val[k] * f[ct_idx[k]]
        F[p] = s


@njit(cache=CACHE)
def _flows(y, yd, fsrc, finert, f):
    for i in range(f.size):
        f[i] = y[fsrc[i]] if finert[i] else yd[i]


@njit(cache=CACHE)
def _ports_settled(n, a0, y, past, fsrc, finert, ct_ptr, ct_idx, ct_val, F, dF, factor, rf):
    """The devices' port flows settled on the last Newton update ``factor · dF`` (``F`` before it): within
    ``PORT_TOL`` of ``1 + |F|``, or within 64 roundoffs of the flows they are made of. The states' test alone is
    not enough: a flow without inertia is the rate ``a0 y + past`` of its displacement, so an update of
    ``y`` within 1e-10 moves it by ``a0`` times that (2 V at a step of 5e-11 s), and a junction left that far
    off its solution stores a charge the next steps cannot reach (random diode deck 19 with ``uic``).
    ``rf`` is scratch (length ``n``)."""
    for i in range(n):  # the rounding of each flow: of a0 y + past, or of the inertial flow's state
        rf[i] = EPS * abs(y[fsrc[i]]) if finert[i] else EPS * (abs(a0 * y[i]) + abs(past[i]))
    for p in range(F.size):
        noise = 0.0
        for k in range(ct_ptr[p], ct_ptr[p + 1]):
            noise += abs(ct_val[k]) * rf[ct_idx[k]]
        if abs(factor * dF[p]) > PORT_TOL * (1.0 + abs(F[p])) + 64.0 * noise:
            return False
    return True


@njit(cache=CACHE)
def bdf_step(t_new, order, ht, hy, hq, nh, hyd, gu,               # the step and the accepted history
             n, nI, fsrc, finert, e_ptr, e_idx, e_val, j_ptr, j_idx, j_val,
             ct_ptr, ct_idx, ct_val, table, charges,
             base_pos, base_E, base_J, nw_port, nw_pos, nw_coef, nw_alpha, kl, ku,
             rperm, cperm, k_ptr, k_idx, k_val, k_diag, ab, ipiv, lu_state, drift, rate,
             err_rows, scale, qscale, rtol, atol, drive, charge_error,
             y, yd, qn, stats):
    """One BDF step attempt from the ``nh`` accepted points ``ht``, ``hy`` (rows), ``hq`` (junction charges,
    rows) to ``t_new`` with the sources' forcing ``gu``; fills ``y``, ``yd``, ``qn`` and returns ``(ok, e)``:
    Newton converged, and the local error over its tolerance (0 when there is not enough history).
    ``hyd``: the rates at the newest accepted point; from one point (after a restart) the displacements are
    predicted along them, so the flows without inertia (``ẏ`` of their displacements) start where they were,
    not at zero.

    The band matrix ``ab`` holds the Newton matrix with rows and columns renumbered: band row ``k`` is
    equation ``rperm[k]``, band column ``k`` state ``cperm[k]``; ``base_pos`` / ``nw_pos`` are flat positions
    in ``ab``. ``lu_state`` = [factored (0/1), the BDF weight it was factored at]; ``stats`` counts iterations
    and factorisations. ``scale`` and ``qscale`` (running maxima of |states| and |charges|) are updated.
    """
    Ny = y.size
    K = F_size = table.shape[0]
    a = np.zeros(5)
    w = np.zeros(5)
    order, npts, Cerr = _bdf_weights(ht, nh, t_new, order, a, w)
    a0 = a[0]
    past = np.zeros(Ny)
    for i in range(1, order + 1):
        row = nh - i
        for k in range(Ny):
            past[k] += a[i] * hy[row, k]
    qpast = np.zeros(K)
    if charges:
        for i in range(1, order + 1):
            row = nh - i
            for p in range(K):
                qpast[p] += a[i] * hq[row, p]
    pred = np.zeros(Ny)
    for j in range(npts):
        row = nh - 1 - j
        for k in range(Ny):
            pred[k] += w[j] * hy[row, k]
    if npts == 1:
        dt = t_new - ht[nh - 1]
        for k in range(n):
            pred[k] += dt * hyd[k]
    for k in range(Ny):
        y[k] = pred[k]
    if lu_state[0] != 0.0 and abs(a0 / lu_state[1] - 1.0) > drift:
        lu_state[0] = 0.0
    f = np.zeros(n)
    df = np.zeros(n)
    F = np.zeros(F_size)
    dF = np.zeros(F_size)
    gp = np.zeros(K)
    hp = np.zeros(K)
    qp = np.zeros(K)
    cp = np.zeros(K)
    r = np.zeros(Ny)
    dy = np.zeros(Ny)
    b = np.zeros(Ny)
    prev = -1.0
    ok = False
    for it in range(30):
        for k in range(Ny):
            yd[k] = a0 * y[k] + past[k]
        _flows(y, yd, fsrc, finert, f)
        _ports(ct_ptr, ct_idx, ct_val, f, F)
        port_laws(table, F, gp, hp, qp, cp)
        if charges:
            for p in range(K):
                gp[p] += a0 * qp[p] + qpast[p]
                hp[p] += a0 * cp[p]
        # r = E ẏ − J y − G u, plus C g on the Lagrange rows
        for i in range(Ny):
            s = -gu[i]
            for k in range(e_ptr[i], e_ptr[i + 1]):
                s += e_val[k] * yd[e_idx[k]]
            for k in range(j_ptr[i], j_ptr[i + 1]):
                s -= j_val[k] * y[j_idx[k]]
            r[i] = s
        for p in range(K):
            for k in range(ct_ptr[p], ct_ptr[p + 1]):
                r[nI + ct_idx[k]] += ct_val[k] * gp[p]
        fresh = False
        for attempt in range(2):
            if lu_state[0] == 0.0:
                ab[:, :] = 0.0
                flat = ab.ravel()
                for s in range(base_pos.size):
                    flat[base_pos[s]] += a0 * base_E[s] - base_J[s]
                for s in range(nw_pos.size):
                    v = nw_coef[s] * hp[nw_port[s]]
                    flat[nw_pos[s]] += a0 * v if nw_alpha[s] else v
                stats[1] += 1
                if not band_lu(ab, kl, ku, ipiv):
                    return False, 0.0
                lu_state[0] = 1.0
                lu_state[1] = a0
                fresh = True
            for k in range(Ny):
                b[k] = -r[rperm[k]]
            band_solve(ab, kl, ku, ipiv, b)
            for k in range(Ny):
                dy[cperm[k]] = b[k]
            size = 0.0
            finite = True
            for k in range(Ny):
                if not math.isfinite(dy[k]):
                    finite = False
                size = max(size, abs(dy[k]))
            if finite and (fresh or prev < 0.0 or size <= rate * prev):
                break
            if fresh:  # a fresh factorisation and still no finite step
                lu_state[0] = 0.0
                return False, 0.0
            lu_state[0] = 0.0  # the Jacobian went stale: factor again at this iterate
        stats[0] += 1
        prev = size
        # limiting: no junction's voltage jumps more than pnjlim allows
        for i in range(n):
            df[i] = dy[fsrc[i]] if finert[i] else a0 * dy[i]
        _ports(ct_ptr, ct_idx, ct_val, df, dF)
        factor = 1.0
        for p in range(K):
            if table[p, 0] != 1.0:
                continue
            vo = F[p]
            vn = vo + dF[p]
            vl = _limited(table, p, vo, vn)
            full, lim = abs(vn - vo), abs(vl - vo)
            if full > 0.0 and lim < full:
                factor = min(factor, max(lim / full, 1e-3))
        ymax, dmax, y2, d2 = 0.0, 0.0, 0.0, 0.0
        for k in range(Ny):
            step = dy[k] * factor
            y[k] += step
            ymax = max(ymax, abs(y[k]))
            dmax = max(dmax, abs(step))
            y2 += y[k] * y[k]
            d2 += step * step
        if dmax <= 1e-10 * (1.0 + ymax) or (it > 0 and math.sqrt(d2) <= 1e-12 * (1.0 + math.sqrt(y2))):
            ok = _ports_settled(n, a0, y, past, fsrc, finert, ct_ptr, ct_idx, ct_val, F, dF, factor, f)
            if ok:
                break
    for k in range(Ny):
        yd[k] = a0 * y[k] + past[k]
    if not ok:
        lu_state[0] = 0.0  # the next try starts from a fresh factorisation
        return False, 0.0
    if charges:
        _flows(y, yd, fsrc, finert, f)
        _ports(ct_ptr, ct_idx, ct_val, f, F)
        port_laws(table, F, gp, hp, qn, cp)
    e = 0.0
    if (err_rows.size or k_ptr.size > 1) and Cerr > 0.0:
        smax = 0.0
        for k in range(err_rows.size):
            scale[k] = max(scale[k], abs(y[err_rows[k]]))
            smax = max(smax, scale[k])
        floor = atol if atol >= 0.0 else rtol * 1e-3 * max(smax, drive, 1e-30)
        s = 0.0
        for k in range(err_rows.size):
            row = err_rows[k]
            z = Cerr * (y[row] - pred[row]) / (floor + rtol * scale[k])
            s += z * z
        # the potentials' efforts K q (rows of K in CSR, their running maxima after the states' in ``scale``):
        # floor rtol 1e-3 of the largest, at least the flows' floor over the step through K
        m, nk = err_rows.size, k_ptr.size - 1
        kn = np.zeros(nk)
        kp = np.zeros(nk)
        kmax = 0.0
        for r in range(nk):
            for jj in range(k_ptr[r], k_ptr[r + 1]):
                kn[r] += k_val[jj] * y[k_idx[jj]]
                kp[r] += k_val[jj] * pred[k_idx[jj]]
            kmax = max(kmax, scale[m + r], abs(kn[r]))
        kfloor = atol if atol >= 0.0 else max(rtol * 1e-3 * kmax, floor * (t_new - ht[nh - 1]) * k_diag)
        for r in range(nk):
            scale[m + r] = max(scale[m + r], abs(kn[r]))
            z = Cerr * (kn[r] - kp[r]) / (kfloor + rtol * scale[m + r])
            s += z * z
        e = math.sqrt(s / max(m + nk, 1))
        if charges and charge_error:
            qmax = 0.0
            for p in range(K):
                qscale[p] = max(qscale[p], abs(qn[p]))
                qmax = max(qmax, qscale[p])
            # the floor: rtol 1e-3 of the largest charge seen, at least the voltages' floor times the capacitance
            qfloor = rtol * 1e-3 * qmax
            s, cnt = 0.0, 0
            for p in range(K):
                if table[p, 9] == 0.0:
                    continue
                qprd = 0.0
                for j in range(npts):
                    qprd += w[j] * hq[nh - 1 - j, p]
                z = Cerr * (qn[p] - qprd) / (max(qfloor, cp[p] * floor) + rtol * qscale[p])
                s += z * z
                cnt += 1
            if cnt:
                e = max(e, math.sqrt(s / cnt))
    return True, e


@njit(cache=CACHE)
def _interpolant(ts, npts, s, w0, w1, w2):
    """Weights of the value, first and second derivative at ``s`` of the polynomial through ``ts[:npts]``."""
    for j in range(npts):
        den = 1.0
        for i in range(npts):
            if i != j:
                den *= ts[j] - ts[i]
        v, d1, d2 = 1.0, 0.0, 0.0  # running product of (s - t_i) and its two derivatives
        for i in range(npts):
            if i == j:
                continue
            x = s - ts[i]
            d2 = d2 * x + 2.0 * d1
            d1 = d1 * x + v
            v = v * x
        w0[j], w1[j], w2[j] = v / den, d1 / den, d2 / den


@njit(cache=CACHE)
def _powers(y, yd, ydd, u, n, nI, fsrc, finert, ct_ptr, ct_idx, ct_val, table, charges,
            d_row, d_col, d_val, d_ch, e_row, e_inp, e_val, e_ch, a_row, a_inp, a_val, a_ch,
            s_row, s_col, s_val, s_ch, port_ch, junction_ch, P):
    """The power of every channel at one point of a step's interpolant (``y`` and its two derivatives)."""
    f = np.empty(n)
    fd = np.empty(n)
    for i in range(n):
        if finert[i]:
            f[i] = y[fsrc[i]]
            fd[i] = yd[fsrc[i]]
        else:
            f[i] = yd[i]
            fd[i] = ydd[i]
    m0 = n + nI
    P[:] = 0.0
    for k in range(d_row.size):  # linear dissipators: f D f
        P[d_ch[k]] += d_val[k] * f[d_row[k]] * f[d_col[k]]
    for k in range(e_row.size):  # applied efforts: f B_e u
        P[e_ch[k]] += e_val[k] * f[e_row[k]] * u[e_inp[k]]
    for k in range(a_row.size):  # driven flow constraints: mu B_a u
        P[a_ch[k]] += a_val[k] * y[m0 + a_row[k]] * u[a_inp[k]]
    for k in range(s_row.size):  # controlled sources: mu (A - R^T) f
        P[s_ch[k]] += s_val[k] * y[m0 + s_row[k]] * f[s_col[k]]
    K = table.shape[0]
    if K:
        F = np.zeros(K)
        dF = np.zeros(K)
        _ports(ct_ptr, ct_idx, ct_val, f, F)
        _ports(ct_ptr, ct_idx, ct_val, fd, dF)
        g, h, q, c = np.zeros(K), np.zeros(K), np.zeros(K), np.zeros(K)
        port_laws(table, F, g, h, q, c)
        for p in range(K):
            P[port_ch[p]] += F[p] * g[p]
            if charges and junction_ch[p] >= 0:
                P[junction_ch[p]] += F[p] * c[p] * dF[p]


#: where the two-point Gauss-Legendre rule samples a step, as fractions of it from its start
GAUSS = (0.5 - 0.5 / math.sqrt(3.0), 0.5 + 0.5 / math.sqrt(3.0))


@njit(cache=CACHE)
def step_work(ht, hy, hr, npts, ua, ub, n, nI, fsrc, finert, ct_ptr, ct_idx, ct_val, table, charges,
              d_row, d_col, d_val, d_ch, e_row, e_inp, e_val, e_ch, a_row, a_inp, a_val, a_ch,
              s_row, s_col, s_val, s_ch, port_ch, junction_ch, W):
    """Add to ``W`` (one entry per channel) the work of the step from ``ht[1]`` to ``ht[0]``, by the two-point
    Gauss-Legendre rule on the step's own interpolants: the polynomial through the ``npts`` points ``ht``,
    ``hy`` (newest first) the BDF formula differentiated gives the states (the flows with inertia and their
    rates, the multipliers); the polynomial through the rates ``hr`` at the same points (each point's own BDF
    ``ẏ``, newest first) gives the flows without inertia (a node voltage, the rate of its flux) and, its
    derivative, their rates. So such a flow runs through the values the steps solved for, continuous from one
    step to the next, and its rate is the derivative of the same path: a junction's ``∫ v dQ`` over it is the
    change of the junction's energy between the values the steps reached (the derivative of the states'
    interpolant at a history point is not that point's ``ẏ``: its second derivative made a junction behind a
    series resistance gain 0.6 % of its energy). ``ua``, ``ub``: the sources at the two Gauss points
    (:data:`GAUSS`).

    A channel's power is a sum of terms: ``d_val f_row f_col`` (a resistor's dissipation), ``e_val f_row u_inp``
    (an applied effort's supply), ``a_val μ_row u_inp`` (a driven flow constraint's supply), ``s_val μ_row f_col``
    (a controlled source's), a device port's ``F g(F)`` (``port_ch``) and its junction charge's ``F c(F) Ḟ``
    (``junction_ch``, −1 for none). Power that is cubic in time along the interpolant (a linear element's, on
    a quadratic) is integrated exactly: a capacitor's work is its energy's change between the step's ends."""
    # the rates' polynomial takes the history points' own rates (their steps' BDF formulas): the flows
    # without inertia then pass through the values solved for, and their rates are that path's derivative
    N = hy.shape[1]
    nch = W.size
    w0, w1, w2 = np.zeros(npts), np.zeros(npts), np.zeros(npts)
    y, yd, ydd = np.zeros(N), np.zeros(N), np.zeros(N)
    P = np.zeros(nch)
    t_old, t_new = ht[1], ht[0]
    h = t_new - t_old
    g0 = 0.5 - 0.5 / math.sqrt(3.0)
    for which in range(2):
        s = t_old + h * (g0 if which == 0 else 1.0 - g0)
        u = ua if which == 0 else ub
        _interpolant(ht, npts, s, w0, w1, w2)
        y[:] = 0.0
        yd[:] = 0.0
        ydd[:] = 0.0
        for j in range(npts):  # only what the powers read: the rates of displacements, the flows and μ
            a0, a1 = w0[j], w1[j]
            for k in range(n):
                yd[k] += a0 * hr[j, k]
            if charges:
                for k in range(n):
                    ydd[k] += a1 * hr[j, k]
            for k in range(n, N):
                y[k] += a0 * hy[j, k]
            for k in range(n, n + nI):
                yd[k] += a1 * hy[j, k]
        _powers(y, yd, ydd, u, n, nI, fsrc, finert, ct_ptr, ct_idx, ct_val, table, charges,
                d_row, d_col, d_val, d_ch, e_row, e_inp, e_val, e_ch, a_row, a_inp, a_val, a_ch,
                s_row, s_col, s_val, s_ch, port_ch, junction_ch, P)
        for k in range(nch):
            W[k] += 0.5 * h * P[k]


@njit(cache=CACHE)
def rate_of_rates(t_new, yd, ht, hr, nh, order, tw, w0, w1, w2, ydd):
    """The rates' own rates at the step's new point into ``ydd``: the derivative at ``t_new`` of the polynomial
    through the rates ``yd`` (new) and ``hr`` (rows of the history ``ht``, ``nh`` points) at the points of the
    step's BDF formula (its order as :func:`_bdf_weights` clips it). A node voltage without capacitance is such
    a rate (of its flux): its rate comes from the step's solution, one-sided after a source corner, never
    from differences of output samples.

    >>> import numpy as np
    >>> ht, hr = np.array([0.0, 1.0, 0.0, 0.0]), np.zeros((4, 1))
    >>> hr[:2, 0] = 0.0, 2.0                                   # ẏ = 2 t at t = 0 and 1
    >>> ydd = np.zeros(1)
    >>> rate_of_rates(2.0, np.array([4.0]), ht, hr, 2, 2, np.zeros(3), np.zeros(3), np.zeros(3), np.zeros(3), ydd)
    >>> ydd.tolist()                                           # ÿ = 2
    [2.0]
    """
    npts = min(order, max(nh - 1, 1)) + 1
    tw[0] = t_new
    for j in range(1, npts):
        tw[j] = ht[nh - j]
    _interpolant(tw, npts, t_new, w0, w1, w2)
    for k in range(yd.size):
        s = w1[0] * yd[k]
        for j in range(1, npts):
            s += w1[j] * hr[nh - j, k]
        ydd[k] = s


@njit(cache=CACHE)
def source_values(ops, args, ptr, t, u):
    """Run the stack programs of :func:`netdyn.numerics.circuit.kernels.source_program.compile_sources` at time ``t`` into ``u``."""
    stack = np.empty(64)
    for j in range(ptr.size - 1):
        start, stop = ptr[j], ptr[j + 1]
        pc = start
        sp_ = 0
        while pc < stop:
            op = ops[pc]
            arg = args[pc]
            pc += 1
            if op == 0:
                stack[sp_] = arg
                sp_ += 1
            elif op == 1:
                stack[sp_] = t
                sp_ += 1
            elif op == 2 or op == 3 or op == 14 or op == 15:  # ADD, MUL, AND, OR over arg operands
                k = int(arg)
                acc = stack[sp_ - k]
                for i in range(sp_ - k + 1, sp_):
                    if op == 2:
                        acc += stack[i]
                    elif op == 3:
                        acc *= stack[i]
                    elif op == 14:
                        acc = 1.0 if (acc != 0.0 and stack[i] != 0.0) else 0.0
                    else:
                        acc = 1.0 if (acc != 0.0 or stack[i] != 0.0) else 0.0
                sp_ -= k
                stack[sp_] = acc
                sp_ += 1
            elif op == 4 or op == 9 or (10 <= op <= 13) or op == 22 or op == 23:  # binary
                b = stack[sp_ - 1]
                a = stack[sp_ - 2]
                sp_ -= 2
                if op == 4:
                    r = a ** b
                elif op == 9:
                    r = a - b * math.floor(a / b)
                elif op == 10:
                    r = 1.0 if a < b else 0.0
                elif op == 11:
                    r = 1.0 if a <= b else 0.0
                elif op == 12:
                    r = 1.0 if a > b else 0.0
                elif op == 13:
                    r = 1.0 if a >= b else 0.0
                elif op == 22:
                    r = 1.0 if a == b else 0.0
                else:
                    r = 1.0 if a != b else 0.0
                stack[sp_] = r
                sp_ += 1
            elif 5 <= op <= 8 or op == 18 or op == 19 or op == 20:  # unary
                a = stack[sp_ - 1]
                if op == 5:
                    a = math.sin(a)
                elif op == 6:
                    a = math.cos(a)
                elif op == 7:
                    a = math.exp(a)
                elif op == 8:
                    a = math.log(a)
                elif op == 18:
                    a = math.floor(a)
                elif op == 19:
                    a = abs(a)
                else:
                    a = 1.0 if a == 0.0 else 0.0
                stack[sp_ - 1] = a
            elif op == 16:  # JZ: pop a condition, jump when false
                sp_ -= 1
                if stack[sp_] == 0.0:
                    pc = start + int(arg)
            elif op == 17:
                pc = start + int(arg)
            else:  # NAN
                stack[sp_] = np.nan
                sp_ += 1
        u[j] = stack[sp_ - 1]


@njit(cache=CACHE)
def bdf_run(t0, t1, h, max_step, targets, is_corner, is_output, ops, args, ptr, G,
            ht, hy, hq, hyd, n, nI, fsrc, finert, e_ptr, e_idx, e_val, j_ptr, j_idx, j_val,
            ct_ptr, ct_idx, ct_val, table, charges,
            base_pos, base_E, base_J, nw_port, nw_pos, nw_coef, nw_alpha, kl, ku,
            rperm, cperm, k_ptr, k_idx, k_val, k_diag, ab, ipiv, lu_state, drift, rate,
            err_rows, scale, qscale, rtol, atol, drive, charge_error,
            out_t, out_y, out_yd, out_ydd, stats, do_work, wprog, W, out_w):
    """The whole transient: :func:`bdf_step` attempts under the step-size control of
    :func:`netdyn.numerics.circuit.nonlinearsim.simulate_circuit` (same rules, same numbers), the sources by
    :func:`source_values`; with ``do_work`` each accepted step adds its work to ``W`` (:func:`step_work`, the
    program ``wprog`` in the order of :data:`WORK_FIELDS`), copied to ``out_w`` at the output times.
    ``out_ydd`` (one row more than ``out_t``): the rates of the rates (:func:`rate_of_rates`) at the start (the
    first step's, one-sided over it) and at the outputs. Returns ``(status, t,
    outputs, steps)``: status 0 done, 1 Newton failed and 2 the error test kept failing with the step below
    1e-14 of the span, at ``t``."""
    N = hy.shape[1]
    K = table.shape[0]
    u = np.zeros(ptr.size - 1)
    u0, um = np.zeros(ptr.size - 1), np.zeros(ptr.size - 1)
    tw, yw, rw = np.zeros(3), np.zeros((3, N)), np.zeros((3, N))
    hr = np.zeros((4, N))  # the rates at the history points (their own BDF formula's), rows as in hy
    hr[0, :] = hyd
    ydd = np.zeros(N)
    w0, w1, w2 = np.zeros(3), np.zeros(3), np.zeros(3)
    gu = np.zeros(N)
    y, yd, qn = np.zeros(N), np.zeros(N), np.zeros(K)
    k, tt, order, nsteps, nout, nh = 0, t0, 1, 0, 0, 1
    span = t1 - t0
    while k < targets.size:
        target = targets[k]
        hit = tt + h >= target - 1e-12 * span
        h_try = target - tt if hit else h
        t_new = tt + h_try
        source_values(ops, args, ptr, t_new, u)
        for i in range(N):
            s = 0.0
            for j in range(u.size):
                s += G[i, j] * u[j]
            gu[i] = s
        ok, e = bdf_step(t_new, order, ht, hy, hq, nh, hyd, gu, n, nI, fsrc, finert, e_ptr, e_idx, e_val,
                         j_ptr, j_idx, j_val, ct_ptr, ct_idx, ct_val, table, charges,
                         base_pos, base_E, base_J, nw_port, nw_pos, nw_coef, nw_alpha, kl, ku,
                         rperm, cperm, k_ptr, k_idx, k_val, k_diag, ab, ipiv, lu_state, drift, rate,
                         err_rows, scale, qscale, rtol, atol, drive, charge_error, y, yd, qn, stats)
        grow = 0.9 * (1.0 / max(e, 1e-10)) ** (1.0 / (order + 1))
        if not ok or e > 1.0:
            h = h_try * (0.25 if not ok else max(0.1, min(0.9, grow)))
            if h < 1e-14 * span:  # of the span, as the docstring says (an absolute 1e-14 s stopped 150 ns runs)
                return (1 if not ok else 2), tt, nout, nsteps
            continue
        if do_work:
            npts = min(order, max(nh - 1, 1)) + 1  # the order the step was taken at (_bdf_weights)
            tw[0] = t_new
            yw[0, :] = y
            rw[0, :] = yd
            for j in range(1, npts):
                tw[j] = ht[nh - j]
                yw[j, :] = hy[nh - j, :]
                rw[j, :] = hr[nh - j, :]
            g0 = 0.5 - 0.5 / math.sqrt(3.0)
            source_values(ops, args, ptr, tt + g0 * (t_new - tt), u0)
            source_values(ops, args, ptr, t_new - g0 * (t_new - tt), um)
            step_work(tw, yw, rw, npts, u0, um, n, nI, fsrc, finert, ct_ptr, ct_idx, ct_val, table, charges,
                      wprog[0], wprog[1], wprog[2], wprog[3], wprog[4], wprog[5], wprog[6], wprog[7],
                      wprog[8], wprog[9], wprog[10], wprog[11], wprog[12], wprog[13], wprog[14], wprog[15],
                      wprog[16], wprog[17], W)
        rate_of_rates(t_new, yd, ht, hr, nh, order, tw, w0, w1, w2, ydd)
        tt = t_new
        nsteps += 1
        if nsteps == 1:
            out_ydd[0, :] = ydd
        restart = hit and is_corner[k] or nsteps == 1  # the first step may jump: no history across it
        if restart:
            nh = 0
        elif nh == 4:
            for r in range(3):
                ht[r] = ht[r + 1]
                hy[r, :] = hy[r + 1, :]
                hq[r, :] = hq[r + 1, :]
                hr[r, :] = hr[r + 1, :]
            nh = 3
        ht[nh] = tt
        hy[nh, :] = y
        hq[nh, :] = qn
        hr[nh, :] = yd
        hyd[:] = yd
        nh += 1
        h_next = min(h_try * min(2.0, max(0.2, grow)), max_step)
        h = max(h, h_next) if hit else h_next
        h = min(h, max_step)
        if restart:  # SPICE's step after a breakpoint: a tenth of the last one (it has no error estimate)
            h = RESTART_STEP * min(h, h_try)
        order = 1 if restart else 2
        if hit:
            if is_output[k]:
                out_t[nout] = tt
                out_y[nout, :] = y
                out_yd[nout, :] = yd
                out_ydd[nout + 1, :] = ydd
                if do_work:
                    out_w[nout, :] = W
                nout += 1
            k += 1
    return 0, tt, nout, nsteps
