"""``Trajectory``: what every integrator returns — states, multipliers and work integrals at output times.

One small record instead of a dict built in several places; :class:`~netdyn.numerics.results.solution.Solution`
wraps it with names, energies and element quantities.

>>> import numpy as np
>>> tr = Trajectory.empty(n=1, m1=0, m2=0)
>>> tr.t.size, tr.q.shape
(0, (1, 0))
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

SUCCESS = "The solver successfully reached the end of the integration interval."
#: ``status`` of a run stopped by Ctrl-C (KeyboardInterrupt): what was computed up to then is kept
INTERRUPTED = -2


def interrupted_message(tt):
    """The closing message of a run stopped by Ctrl-C at time ``tt``."""
    return f"Interrupted by the user (Ctrl-C) at t = {tt:.6g}; the solution holds the times reached."


@dataclass
class Trajectory:
    """Columns are output times.

    Attributes
    ----------
    t : (K,) output times
    q, f, acc : (n, K) displacements, flows and their rates (``acc`` may be a function of no argument that
        returns them: an integrator that would pay a solve over every output for rates few callers read
        defers them; :meth:`accelerations` computes and keeps them)
    lam, mu : (m1, K), (m2, K) multipliers of the displacement and flow constraints
    dissipated, supplied : (K,) or None
        energy dissipated and supplied since the start, integrated with the state (None when the
        integrator does not carry them; ``Solution.power_balance`` then evaluates them by quadrature)
    nsteps : int or None
        accepted integrator steps, the same count on every path; None where the integrator does not
        report it (SUNDIALS IDA through scikit-sundae gives residual evaluations only)
    message : str
        the integrator's closing message
    """

    t: np.ndarray
    q: np.ndarray
    f: np.ndarray
    acc: np.ndarray
    lam: np.ndarray
    mu: np.ndarray
    dissipated: np.ndarray | None = None
    supplied: np.ndarray | None = None
    nsteps: int | None = 0
    message: str = SUCCESS
    status: int = field(default=0)

    @classmethod
    def empty(cls, n, m1, m2):
        z = lambda rows: np.zeros((rows, 0))
        return cls(np.zeros(0), z(n), z(n), z(n), z(m1), z(m2), np.zeros(0), np.zeros(0))

    @property
    def work(self):
        """``{"dissipated": ..., "supplied": ...}`` or None."""
        if self.dissipated is None:
            return None
        return {"dissipated": self.dissipated, "supplied": self.supplied}

    def accelerations(self):
        """``acc`` as an array, computed now (and kept) if the integrator deferred it."""
        if callable(self.acc):
            self.acc = self.acc()
        return self.acc

    def take(self, keep):
        """The trajectory at a subset of its output times (a boolean mask or index array)."""
        pick = lambda a: None if a is None else a[..., keep]
        acc = (lambda: self.accelerations()[..., keep]) if callable(self.acc) else pick(self.acc)
        return replace(self, t=self.t[keep], q=pick(self.q), f=pick(self.f), acc=acc,
                       lam=pick(self.lam), mu=pick(self.mu), dissipated=pick(self.dissipated),
                       supplied=pick(self.supplied))

    def shift_work(self, dissipated0, supplied0):
        """The same trajectory with its work integrals counted from earlier totals."""
        if self.dissipated is None:
            return self
        return replace(self, dissipated=self.dissipated + dissipated0, supplied=self.supplied + supplied0)

    @classmethod
    def join(cls, parts):
        """One trajectory from consecutive pieces (steps added, the last message kept)."""
        if len(parts) == 1:
            return parts[0]
        cat = lambda name: np.concatenate([p.accelerations() if name == "acc" else getattr(p, name)
                                           for p in parts], axis=-1)
        has_work = all(p.dissipated is not None for p in parts)
        return cls(cat("t"), cat("q"), cat("f"), cat("acc"), cat("lam"), cat("mu"),
                   cat("dissipated") if has_work else None, cat("supplied") if has_work else None,
                   nsteps=None if any(p.nsteps is None for p in parts) else sum(p.nsteps for p in parts), message=parts[-1].message, status=parts[-1].status)
