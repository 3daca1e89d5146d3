"""IDA's residual and its analytic Jacobian ``∂F/∂y + c_j ∂F/∂ẏ`` from the compiled state kernel.

:class:`~netdyn.numerics.ida.ida.IDA` evaluates its residual through
:class:`~netdyn.numerics.functions.compiled.CompiledModel`'s records (``M, h``, the
constraint record twice, the powers). :meth:`IDAKernel.residual` computes the same
numbers from one KKT matrix of the fused :class:`~netdyn.numerics.functions.kernel.StateKernel`
(``K[:n] @ [a; λ; μ] = M a + Φ_qᵀλ + Rᵀμ``, ``K[n:, :n] @ f = [Φ_q f; A f]``),
at a fraction of the cost.

Without the analytic Jacobian SUNDIALS builds the dense Jacobian by finite differences: one
residual evaluation per unknown (38 for a four-bar driven by a motor), which
made two thirds of IDA's residual calls. Here the pieces are differentiated
symbolically once (each row only with respect to the symbols it contains),
compiled with the LLVM backend of :func:`~netdyn.numerics.functions.kernel.compile_llvm`
and combined with the chain rule through the flows. With
``y = [q, f_I, λ, μ, η, W]`` (:mod:`~netdyn.numerics.ida.ida`):

* flows: ``f_I = y_f``; ``f_R = q̇_R + (Φ_qᵀη)_R`` (the flows without inertia), so
  ``∂f/∂y`` carries ``c_j`` on ``q̇_R``, ``H_η = ∂(Φ_qᵀη)/∂q`` and ``Φ_qᵀ`` on η;
* Lagrange rows ``M a + h + Φ_qᵀλ + Rᵀμ``: ``G_q = ∂/∂q`` of the whole row at fixed
  ``a, λ, μ``, ``∂h/∂f ∂f/∂y``, ``c_j M`` on ``f_I``, ``Φ_qᵀ`` and ``Rᵀ``;
* ``q̇_I − f_I + (Φ_qᵀη)_I``, ``φ``, ``A f + a``, ``Φ_q f + Φ_t`` and the work rows
  ``Ẇ − P(q, f, λ, μ)``.

Dense, for up to :data:`MAX_UNKNOWNS` unknowns (larger constrained models keep
SUNDIALS' own differences). Checked against a finite-difference Jacobian in
``tests/test_mixed.py``.

>>> import numpy as np
>>> from netdyn import LagrangianModel, coordinates, t
>>> from netdyn.numerics.functions.compiled import compile_model
>>> from netdyn.numerics.ida.ida import IDA
>>> x, y = coordinates("x, y")
>>> model = LagrangianModel([x, y], T=(x.diff(t)**2 + y.diff(t)**2) / 2, V=9.81 * y,
...                         constraints=[x**2 + y**2 - 1])
>>> cm = compile_model(model)
>>> ida = IDA(cm, cm.parameter_vector())
>>> fast = ida_kernel(ida)
>>> y0 = np.r_[0.6, -0.8, 0.1, 0.2, 1.5, 0.0, 0.0, 0.0]
>>> J = fast.matrix(0.0, y0, np.full(8, 0.3), 2.0)
>>> J.shape, float(J[0, 0])   # ∂(ẍ + 2λx)/∂x = 2λ
((8, 8), 3.0)
>>> r1, r2 = np.zeros(8), np.zeros(8)
>>> fast.residual(0.0, y0, np.full(8, 0.3), r1); ida.residual(0.0, y0, np.full(8, 0.3), r2)
>>> bool(np.allclose(r1, r2, rtol=1e-14, atol=1e-14))
True
"""
from __future__ import annotations

import numpy as np
import sympy as sp

from netdyn.numerics.functions.compiled import _lambdify
from netdyn.numerics.functions.energy import dissipated_power, supplied_power
from netdyn.numerics.functions.kernel import compile_llvm
from netdyn.symbols import t

__all__ = ["IDAKernel", "ida_kernel", "MAX_UNKNOWNS"]

MAX_UNKNOWNS = 400  # dense Jacobian: above this, SUNDIALS' own finite differences


def _sparse_diff(rows, wrt):
    """``{(i, j): ∂rows[i]/∂wrt[j]}`` over the nonzero entries only."""
    index = {s: j for j, s in enumerate(wrt)}
    out = {}
    for i, e in enumerate(rows):
        e = sp.sympify(e)
        for s in e.free_symbols:
            j = index.get(s)
            if j is not None:
                d = sp.diff(e, s)
                if d != 0:
                    out[(i, j)] = d
    return out


class IDAKernel:
    """IDA's residual from the state kernel, and its compiled Jacobian pieces (see the module docstring).

    ``jacfn`` is None when the model has more than :data:`MAX_UNKNOWNS` unknowns.
    """

    def __init__(self, ida, fn, blocks, nargs):
        self.ida, self._fn, self._blocks = ida, fn, blocks
        self.kernel = ida.cm.kernel
        if self.kernel is None:  # (PWL/PULSE sources) the residual from CompiledModel's records
            self.residual = ida.residual
        if fn is not None:
            self._x = np.empty(nargs)
            self._buf = np.empty(sum(len(b[2]) for b in blocks.values()))
        else:
            self.jacfn = None
        n = ida.cm.n
        self._zero = np.zeros(n)
        self._z = np.zeros(n + ida.cm.m1 + ida.cm.m2)

    def residual(self, tt, y, yp, res):
        """``F(t, y, ẏ)`` exactly as :meth:`IDA.residual <netdyn.numerics.ida.ida.IDA.residual>`."""
        ida, k = self.ida, self.kernel
        cm, p = ida.cm, ida.p
        n, m1, I = cm.n, cm.m1, ida.inertial
        nI = I.size
        u = p.inputs(tt)
        q = y[:n]
        R = ida.rest
        f = np.empty(n)
        f[I] = y[n:n + nI]
        if R.size:
            f[R] = yp[R]
            if m1:  # Φ_q (q only) before the flows: the GGL term of the flows without inertia
                K0, _ = k.kkt(tt, q, self._zero, p.vector, u)
                f[R] += (K0[:n, n:n + m1] @ y[ida.se])[R]
        K, r = k.kkt(tt, q, f, p.vector, u)
        b = k._buf
        z = self._z
        z[:n] = 0.0
        z[I] = yp[n:n + nI]
        z[n:] = y[n + nI:n + nI + cm.m1 + cm.m2]
        res[:n] = K[:n] @ z - r[:n]
        if cm.has_constraints:
            Cf = K[n:, :n] @ f
            res[ida.sl] = b[k.part("phi")]
            res[ida.sm] = Cf[m1:] + b[k.part("a")]
            res[ida.se] = Cf[:m1] + b[k.part("Phi_t")]
            res[n:n + nI] = yp[I] - f[I] + (K[:n, n:n + m1] @ y[ida.se])[I]
        else:
            res[n:n + nI] = yp[I] - f[I]
        lam, mu = y[ida.sl], y[ida.sm]
        pd, ps = k.power(tt, q, f, lam, mu, p.vector, u)
        res[ida.N - 2] = yp[ida.N - 2] - pd
        res[ida.N - 1] = yp[ida.N - 1] - ps

    def _pieces(self, tt, q, f, a, lam, mu, eta):
        p = self.ida.p
        x = self._x
        k = 0
        for part in ([tt], q, f, a, lam, mu, eta, p.vector, p.inputs(tt)):
            m = len(part)
            x[k:k + m] = part
            k += m
        self._fn.unsafe_real(x, self._buf)
        out, k = {}, 0
        for name, (rows, cols, idx) in self._blocks.items():
            B = np.zeros((rows, cols))
            if len(idx):
                B[idx[:, 0], idx[:, 1]] = self._buf[k:k + len(idx)]
            k += len(idx)
            out[name] = B
        return out

    def matrix(self, tt, y, yp, cj):
        """``∂F/∂y + cj ∂F/∂ẏ`` (dense N×N) at ``(tt, y, ẏ)``."""
        ida = self.ida
        cm, n, N = ida.cm, ida.cm.n, ida.N
        I, Rn = ida.inertial, ida.rest
        nI = I.size
        sq, sf, sl, sm, se, sw = ida.sq, ida.sf, ida.sl, ida.sm, ida.se, ida.sw
        q, lam, mu, eta = y[sq], y[sl], y[sm], y[se]
        # Φ_q (q only) is needed before the flows, for the GGL term on the flows without inertia
        P0 = self._pieces(tt, q, np.zeros(n), np.zeros(n), lam, mu, eta)
        f = ida.flows(y, yp, P0["Pq"] if cm.m1 else None)
        a = np.zeros(n)
        a[I] = yp[sf]
        P = self._pieces(tt, q, f, a, lam, mu, eta)
        Pq = P["Pq"]
        # ∂f/∂y: f_I = y_f; f_R = q̇_R + (Φ_qᵀη)_R
        Df = np.zeros((n, N))
        Df[I, n + np.arange(nI)] = 1.0
        if Rn.size:
            Df[Rn, Rn] = cj
            if cm.m1:
                Df[Rn, sq] += P["Heta"][Rn]
                Df[Rn, se] = Pq[:, Rn].T
        J = np.zeros((N, N))
        J[:n, sq] = P["Gq"]
        J[:n] += P["Gf"] @ Df
        J[:n, sf] += cj * P["M"][:, I]
        J[:n, sl] = Pq.T
        J[:n, sm] = P["R"].T
        rows = slice(n, n + nI)
        J[n + np.arange(nI), I] = cj
        J[rows, sf] = -np.eye(nI)
        if cm.m1:
            J[rows, sq] += P["Heta"][I]
            J[rows, se] = Pq[:, I].T
            J[sl, sq] = Pq
            J[se, sq] = P["Gphi"]
            J[se] += Pq @ Df
        if cm.m2:
            J[sm, sq] = P["Gpsi"]
            J[sm] += P["A"] @ Df
        W = np.zeros((2, N))
        W[:, sq] = P["Wq"]
        W += P["Wf"] @ Df
        W[:, sl] += P["Wl"]
        W[:, sm] += P["Wm"]
        J[sw] = -W
        J[sw, sw] += cj * np.eye(2)
        return J

    def jacfn(self, tt, y, yp, res, cj, JJ):
        """scikit-sundae's ``jacfn`` (dense linear solver)."""
        JJ[:, :] = self.matrix(tt, y, yp, cj)


def ida_kernel(ida):
    """An :class:`IDAKernel` for an :class:`~netdyn.numerics.ida.ida.IDA`, or None where the compiled
    kernel does not apply (PWL/PULSE sources: :func:`~netdyn.numerics.functions.kernel.state_kernel`); its ``jacfn`` is
    None above :data:`MAX_UNKNOWNS` unknowns."""
    cm = ida.cm
    if ida.N > MAX_UNKNOWNS:
        return IDAKernel(ida, None, None, 0) if cm.kernel is not None else None
    eq, n, m1, m2 = cm.eq, cm.n, cm.m1, cm.m2
    eta = [sp.Symbol(f"_eta{j}") for j in range(m1)]
    lagrange = eq.lagrange_rows()  # M a + h + Φ_qᵀλ + Rᵀμ
    heta = [sp.S.Zero] * n
    for (j, i), v in eq.Phi_q.items():
        heta[i] += eta[j] * v
    ggl = list(eq.Phi_t)
    for (j, i), v in eq.Phi_q.items():
        ggl[j] += v * eq.f[i]
    reaction = eq.reaction
    power = [dissipated_power(cm.model), supplied_power(cm.model)]
    blocks = {  # name: (rows, cols, {(i, j): expression})
        "Gq": (n, n, _sparse_diff(lagrange, eq.q)),
        "Gf": (n, n, _sparse_diff(lagrange, eq.f)),
        "M": (n, n, dict(eq.M)),
        "Pq": (m1, n, dict(eq.Phi_q)),
        "R": (m2, n, dict(reaction)),
        "A": (m2, n, dict(eq.A)),
        "Heta": (n, n, _sparse_diff(heta, eq.q)),
        "Gphi": (m1, n, _sparse_diff(ggl, eq.q)),
        "Gpsi": (m2, n, _sparse_diff(eq.flow_constraint_rows(), eq.q)),
        "Wq": (2, n, _sparse_diff(power, eq.q)),
        "Wf": (2, n, _sparse_diff(power, eq.f)),
        "Wl": (2, m1, _sparse_diff(power, eq.lam)),
        "Wm": (2, m2, _sparse_diff(power, eq.mu)),
    }
    exprs, layout = [], {}
    for name, (rows, cols, entries) in blocks.items():
        layout[name] = (rows, cols, np.array(list(entries.keys()), dtype=np.intp).reshape(-1, 2))
        exprs.extend(entries.values())
    args = [t, *eq.q, *eq.f, *eq.a, *eq.lam, *eq.mu, *eta, *cm.parameters, *cm.inputs]
    fn = compile_llvm(args, exprs) if cm.kernel is not None else None
    return IDAKernel(ida, fn or _Lambdified(args, exprs), layout, len(args))


class _Lambdified:
    """The Jacobian pieces by ``lambdify`` where LLVM does not compile them (``Piecewise`` sources: PULSE,
    PWL), called like the LLVM function: ``unsafe_real(x, out)``. Without them SUNDIALS differences the
    residual, and a floating group of capacitors (a singular capacitance matrix: its common voltage is
    algebraic, hidden among columns scaled by IDA's ``c_j``) made its Newton iteration fail at ever
    smaller steps on random circuits in node fluxes."""

    def __init__(self, args, exprs):
        self._fn = _lambdify(args, exprs) if exprs else None

    def unsafe_real(self, x, out):
        if self._fn is not None:
            out[:] = self._fn(*x)
