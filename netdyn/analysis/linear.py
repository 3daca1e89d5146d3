"""Linear time-invariant models: state space ``ẋ = A x + B u, y = C x + D u`` and descriptor form.

:class:`StateSpace` carries names of states, inputs and outputs and gives
poles, natural frequencies, damping ratios, static gains, transfer functions
(through ``scipy.signal``), Bode data and a Bode plot. :class:`Descriptor`
is ``E ẋ = A x + B u`` with a singular ``E`` (algebraic variables kept); its
poles are the finite generalized eigenvalues.

>>> import numpy as np
>>> ss = StateSpace([[0, 1], [-4, -0.4]], [[0], [1]], [[1, 0]], [[0]])
>>> [round(float(w), 6) for w in ss.natural_frequencies()], [round(float(z), 6) for z in ss.damping_ratios()]
([2.0], [0.1])
>>> round(float(ss.static_gain()[0, 0]), 6)
0.25
"""
from __future__ import annotations

import numpy as np
import scipy.linalg as sla
from scipy import signal

from netdyn.errors import ModelError, SingularSystemError

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # names for the hints only (annotations are not evaluated)
    from collections.abc import Sequence
    from typing import Any
    from netdyn.hints import ArrayLike, PathArg


def _matrix(m, rows, cols):
    m = np.asarray(m, dtype=float)
    return m.reshape(rows, cols)


def sort_poles(poles):
    """Poles by real part, then imaginary part (real parts equal to 1e-9 relative count as equal).

    >>> sort_poles(np.array([1j, -1.0, -1j])).imag
    array([ 0., -1.,  1.])
    """
    ev = np.asarray(poles, dtype=complex)
    scale = max(1.0, float(np.max(np.abs(ev)))) if ev.size else 1.0
    return ev[np.lexsort((ev.imag, np.round(ev.real / (1e-9 * scale))))]


def modes(poles, tol=1e-9):
    """Natural frequencies and damping ratios of a set of poles, one entry per mode.

    A complex pair counts once; a real pole ``p`` is a first-order mode of
    frequency ``|p|`` and damping ratio ``1`` (``-1`` when unstable); poles at 0 are skipped.

    >>> modes(np.array([-1 + 2j, -1 - 2j, -3.0]))
    (array([2.23606798, 3.        ]), array([0.4472136, 1.       ]))
    """
    poles = np.asarray(poles, dtype=complex)
    scale = max(1.0, float(np.max(np.abs(poles)))) if poles.size else 1.0
    out = []
    for p in poles:
        if abs(p) <= tol * scale or p.imag < -tol * scale:
            continue
        wn = abs(p)
        out.append((wn, -p.real / wn))
    out.sort()
    return np.array([w for w, _ in out]), np.array([z for _, z in out])


class StateSpace:
    """``ẋ = A x + B u``, ``y = C x + D u`` with named states, inputs and outputs.

    >>> ss = StateSpace([[0, 1], [-4, -0.4]], [[0], [1]], [[1, 0]], [[0]], states=["x", "x_dot"])
    >>> ss.poles().round(4), float(ss.static_gain()[0, 0])
    (array([-0.2-1.99j, -0.2+1.99j]), 0.25)
    """

    def __init__(self, A: ArrayLike, B: ArrayLike, C: ArrayLike, D: ArrayLike, states: Sequence[str] | None = None,
                 inputs: Sequence[str] | None = None, outputs: Sequence[str] | None = None) -> None:
        A = np.atleast_2d(np.asarray(A, dtype=float))
        n = A.shape[0]
        B = np.asarray(B, dtype=float)
        m = B.shape[1] if B.ndim == 2 else (0 if B.size == 0 else 1)
        B = _matrix(B, n, m)
        C = np.asarray(C, dtype=float)
        p = C.shape[0] if C.ndim == 2 else (0 if C.size == 0 else 1)
        self.A, self.B, self.C = A, B, _matrix(C, p, n)
        self.D = _matrix(D, p, m) if np.size(D) else np.zeros((p, m))
        self.states = list(states or [f"x{i}" for i in range(n)])
        self.inputs = list(inputs or [f"u{i}" for i in range(m)])
        self.outputs = list(outputs or [f"y{i}" for i in range(p)])

    @property
    def n(self) -> int:
        return self.A.shape[0]

    def poles(self) -> np.ndarray:
        """Eigenvalues of A, sorted by real part then imaginary part."""
        return sort_poles(np.linalg.eigvals(self.A) if self.n else np.zeros(0, complex))

    def natural_frequencies(self) -> np.ndarray:
        """Natural frequency of each mode (rad per unit time), ascending."""
        return modes(self.poles())[0]

    def damping_ratios(self) -> np.ndarray:
        """Damping ratio of each mode, in the order of :meth:`natural_frequencies`."""
        return modes(self.poles())[1]

    def static_gain(self) -> np.ndarray:
        """``D − C A⁻¹ B``: the steady response to unit constant inputs (A must be regular)."""
        try:
            return self.D - self.C @ np.linalg.solve(self.A, self.B)
        except np.linalg.LinAlgError:
            raise SingularSystemError("the static gain is infinite: A is singular (a free rigid-body mode or an "
                                      "integrator); pick outputs that do not drift or add a spring") from None

    def _index(self, names, which, item):
        if isinstance(item, int):
            return item
        if item not in names:
            raise ModelError(f"unknown {which} {item!r}; the {which}s are {names}")
        return names.index(item)

    def transfer_function(self, output: int | str = 0, input: int | str = 0) -> signal.TransferFunction:
        """``scipy.signal.TransferFunction`` from one input to one output (names or indices)."""
        i = self._index(self.outputs, "output", output)
        j = self._index(self.inputs, "input", input)
        num, den = signal.ss2tf(self.A, self.B[:, [j]], self.C[[i], :], self.D[[i], [j]].reshape(1, 1))
        return signal.TransferFunction(np.trim_zeros(num[0], "f") if np.any(num[0]) else [0.0], den)

    def frequency_response(self, w: ArrayLike, output: int | str = 0, input: int | str = 0) -> np.ndarray:
        """Complex ``G(jω)`` at the frequencies ``w`` (computed from (A, B, C, D) directly)."""
        i = self._index(self.outputs, "output", output)
        j = self._index(self.inputs, "input", input)
        w = np.asarray(w, dtype=float)
        eye = np.eye(self.n)
        return np.array([self.C[i] @ np.linalg.solve(1j * wk * eye - self.A, self.B[:, j]) + self.D[i, j]
                         for wk in w])

    def bode(self, w: ArrayLike | None = None, output: int | str = 0,
             input: int | str = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(w, magnitude in dB, phase in degrees)``; ``w`` spans the modes by default."""
        if w is None:
            wn = self.natural_frequencies()
            lo, hi = (wn.min(), wn.max()) if wn.size else (1.0, 1.0)
            w = np.logspace(np.log10(lo) - 2, np.log10(hi) + 2, 400)
        w = np.asarray(w, dtype=float)
        G = self.frequency_response(w, output, input)
        return w, 20 * np.log10(np.maximum(np.abs(G), 1e-300)), np.degrees(np.unwrap(np.angle(G)))

    def plot_bode(self, path: PathArg | None = None, w: ArrayLike | None = None, output: int | str = 0,
                  input: int | str = 0, label: str | None = None, axes: Any = None) -> Any:
        """Bode plot (magnitude and phase); saves to ``path`` when given. Returns the two axes."""
        import matplotlib
        if path is not None:
            matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        w, mag, ph = self.bode(w, output, input)
        if axes is None:
            fig, axes = plt.subplots(2, 1, sharex=True, figsize=(7, 5))
        axes[0].semilogx(w, mag, label=label)
        axes[1].semilogx(w, ph, label=label)
        axes[0].set_ylabel("|G| [dB]")
        axes[1].set_ylabel("phase [deg]")
        axes[1].set_xlabel("ω [rad/s]")
        for ax in axes:
            ax.grid(True, which="both", alpha=0.3)
        if label:
            axes[0].legend(fontsize="small")
        if path is not None:
            axes[0].figure.tight_layout()
            axes[0].figure.savefig(path, dpi=110)
            plt.close(axes[0].figure)
        return axes

    def step(self, t: ArrayLike, input: int | str = 0, x0: ArrayLike | None = None) -> np.ndarray:
        """Outputs (one row each) for a unit step on one input, from ``x0`` (default zero)."""
        j = self._index(self.inputs, "input", input)
        t = np.asarray(t, dtype=float)
        u = np.zeros((len(t), self.B.shape[1]))
        u[:, j] = 1.0
        return self.simulate(t, u, x0)

    def simulate(self, t: ArrayLike, u: ArrayLike, x0: ArrayLike | None = None) -> np.ndarray:
        """Outputs (rows) for inputs ``u`` (one row per time, one column per input) by exact discretization."""
        t = np.asarray(t, dtype=float)
        u = np.asarray(u, dtype=float).reshape(len(t), -1)
        x = np.zeros(self.n) if x0 is None else np.asarray(x0, dtype=float)
        ys = [self.C @ x + self.D @ u[0]]
        steps = {}  # one matrix exponential per distinct step (uniform grids need one)
        for k in range(1, len(t)):
            h = t[k] - t[k - 1]
            key = float(f"{h:.12g}")
            ex = steps.get(key)
            if ex is None:  # zero-order hold of the input over the interval
                big = np.zeros((self.n + u.shape[1],) * 2)
                big[: self.n, : self.n] = self.A * h
                big[: self.n, self.n:] = self.B * h
                ex = steps[key] = sla.expm(big)
            x = ex[: self.n, : self.n] @ x + ex[: self.n, self.n:] @ u[k - 1]
            ys.append(self.C @ x + self.D @ u[k])
        return np.array(ys).T

    def __repr__(self):
        return f"StateSpace({self.n} states {self.states}, inputs {self.inputs}, outputs {self.outputs})"


class Descriptor:
    """``E ẋ = A x + B u``, ``y = C x + D u``: the linearization with the algebraic variables kept
    (``linearize(...).descriptor``).

    >>> d = Descriptor([[1, 0], [0, 0]], [[-2, 1], [1, -1]], [[0], [1]], [[1, 0]], [[0]])   # x2 algebraic
    >>> d.poles()
    array([-1.+0.j])
    """

    def __init__(self, E: ArrayLike, A: ArrayLike, B: ArrayLike, C: ArrayLike, D: ArrayLike,
                 variables: Sequence[str] | None = None, inputs: Sequence[str] | None = None,
                 outputs: Sequence[str] | None = None) -> None:
        self.E, self.A = np.asarray(E, dtype=float), np.asarray(A, dtype=float)
        self.B, self.C, self.D = np.asarray(B, dtype=float), np.asarray(C, dtype=float), np.asarray(D, dtype=float)
        self.variables = list(variables or [])
        self.inputs = list(inputs or [])
        self.outputs = list(outputs or [])

    n_finite = None  #: number of finite poles (the minimal state dimension), when known

    def poles(self) -> np.ndarray:
        """Finite generalized eigenvalues of the pencil ``(A, E)``, sorted as :meth:`StateSpace.poles`.

        The infinite eigenvalues of the algebraic part come out of QZ as huge
        or non-finite numbers; the ``n_finite`` smallest in modulus are kept.
        """
        ev = sla.eigvals(self.A, self.E)
        ev = ev[np.isfinite(ev)]
        if self.n_finite is not None:
            ev = ev[np.argsort(np.abs(ev))][: self.n_finite]
        return sort_poles(ev)

    def __repr__(self):
        return f"Descriptor({len(self.variables)} variables, inputs {self.inputs}, outputs {self.outputs})"
