"""The integrator interface every method implements (scipy's ``OdeSolver`` pattern).

An integrator is made once for a system (a compiled model and its parameters,
or a stamped linear network) and then asked for pieces of trajectory between
two times; a path of :mod:`netdyn.numerics.paths` makes one, and the symbolic paths' driver
(:mod:`.driver`) splits the span at source corners and wraps the pieces in a
:class:`~netdyn.numerics.results.solution.Solution`.

>>> from netdyn.numerics.mechanics.projection import Projection
>>> issubclass(Projection, Integrator), Projection.name
(True, 'projection')
"""
from __future__ import annotations

import numpy as np


class Integrator:
    """Base class: ``integrate(t0, t1, q0, f0, t_eval, rtol, atol, progress) -> Trajectory``.

    Subclasses set ``name`` and ``carries_work`` (whether the dissipated and
    supplied energy are integrated with the state), take the system in their
    constructor and implement :meth:`integrate`.
    """

    name = "base"
    carries_work = False

    def integrate(self, t0, t1, q0, f0, t_eval, rtol, atol, progress=None):
        """Integrate from consistent ``(q0, f0)`` at ``t0`` to ``t1``; return a
        :class:`~netdyn.numerics.results.trajectory.Trajectory` at the ``t_eval`` times in ``[t0, t1]``.

        Parameters
        ----------
        t0, t1 : float
            the interval (``t1 > t0``); no source corner lies strictly inside it
        q0, f0 : ndarray
            consistent initial displacements and flows
        t_eval : ndarray
            sorted output times inside ``[t0, t1]``; ``t1`` is always among them
        rtol : float
        atol : float or ndarray of length ``2 n`` (displacements then flows)
        progress : callable(t) or None
        """
        raise NotImplementedError


def split_atol(atol, n):
    """The absolute tolerance of ``[q, f]``: a scalar, or an array of length ``2 n`` (``2 n + 2`` when it
    also holds the work integrals' tolerances, see :func:`work_atol`).

    >>> split_atol(None, 2), split_atol([1, 2, 3, 4, 5, 6], 2).tolist()
    (1e-10, [1.0, 2.0, 3.0, 4.0])
    """
    if atol is None:
        return 1e-10
    atol = np.asarray(atol, dtype=float)
    return atol if atol.ndim == 0 else atol[: 2 * n]


def work_atol(atol, n, default=1e-14):
    """Absolute tolerances (joules) of the two work integrals: the last two entries of an ``atol`` of
    length ``2 n + 2``, else ``default`` (nearly relative error control).

    >>> work_atol([1, 2, 3, 4, 5, 6], 2).tolist(), work_atol(1e-8, 2).tolist()
    ([5.0, 6.0], [1e-14, 1e-14])
    """
    a = np.asarray(atol if atol is not None else 0.0, dtype=float)
    return a[2 * n:2 * n + 2] if a.ndim and a.size == 2 * n + 2 else np.full(2, default)
