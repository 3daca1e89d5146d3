"""A model whose costly terms are written only when something reads them.

In the relative (spanning-tree) formulation every body's pose is a sum over all the joints between it
and ground, so the bodies' kinetic terms ``m|v_c|²/2 + I θ̇²/2`` and gravity's ``Σ m g y_c`` grow like
n² in symbols for an n-link chain, while the numeric path of an open tree
(:mod:`netdyn.numerics.functions.treedynamics`) never needs them: it evaluates ``M`` and ``h`` by the recursive
algorithms. An assembler puts a :class:`Deferred` marker where such terms belong in its list of ``T``,
``V`` or ``D`` pieces; :class:`DeferredTermsModel` is an ordinary
:class:`~netdyn.lagrange.model.LagrangianModel` that writes a role's markers on the first read of its
terms (the derivation, an export, ``model.T``), identical to those an eager assembly writes, in the same
order.

>>> from netdyn import Network
>>> from netdyn.components.planar import RigidBody, Revolute, Gravity
>>> net = Network()
>>> _ = net.add(RigidBody("l1", 1, 0.1), Gravity(), Revolute("A", "ground", (0, 0), "l1", (-0.5, 0)))
>>> model = net.model(formulation="relative")
>>> model.kinetic_deferred, model.potential_deferred
(True, True)
>>> len(model.T_terms), model.kinetic_deferred, model.potential_deferred
(3, False, True)
"""
from __future__ import annotations

from netdyn.lagrange.model import LagrangianModel, _terms

ROLES = ("T", "V", "D")


class Deferred:
    """A marker in a list of ``T``/``V``/``D`` pieces: ``write()`` returns the pieces it stands for.

    ``write`` must be picklable (a bound method or a ``functools.partial``, not a closure): a model
    pickles (a parallel sweep) with its markers unwritten.

    >>> import sympy as sp
    >>> x = sp.Symbol("x")
    >>> written([1, Deferred(lambda: [x, x ** 2]), 2])
    [1, x, x**2, 2]
    """

    def __init__(self, write):
        self.write = write

    def __repr__(self):
        return f"Deferred({self.write!r})"


def has_deferred(pieces):
    """Whether a list of pieces holds a :class:`Deferred` marker.

    >>> has_deferred([1, Deferred(list)]), has_deferred([1, 2])
    (True, False)
    """
    return any(isinstance(p, Deferred) for p in pieces)


def eager(pieces):
    """The pieces without the markers (what is written already).

    >>> eager([1, Deferred(list), 2])
    [1, 2]
    """
    return [p for p in pieces if not isinstance(p, Deferred)]


def written(pieces):
    """The pieces with every marker replaced by what it writes.

    >>> written([Deferred(lambda: [3, 4]), 5])
    [3, 4, 5]
    """
    out = []
    for p in pieces:
        out.extend(p.write() if isinstance(p, Deferred) else [p])
    return out


class DeferredTermsModel(LagrangianModel):
    """A :class:`LagrangianModel` whose ``T``, ``V`` and ``D`` lists may hold :class:`Deferred` markers,
    written on the first read of that role's terms (``T_terms``, ``V_terms``, ``D_terms``)."""

    def __init__(self, coordinates, T=(), V=(), D=(), **kwargs):
        super().__init__(coordinates, **kwargs)
        self._pending = {}
        for role, pieces in zip(ROLES, (T, V, D)):
            segments, run = [], []
            for p in pieces:  # each run of written pieces checked now, as LagrangianModel does
                if isinstance(p, Deferred):
                    segments += [_terms(run), p] if run else [p]
                    run = []
                else:
                    run.append(p)
            segments.append(_terms(run))
            self._pending[role] = segments if has_deferred(segments) else None
            setattr(self, f"_{role}_written", [term for s in segments if not isinstance(s, Deferred) for term in s])

    def _read(self, role):
        segments = self._pending.get(role) if "_pending" in self.__dict__ else None
        if segments is not None:
            self._pending[role] = None
            setattr(self, f"_{role}_written", [term for s in segments
                                               for term in (_terms(list(s.write())) if isinstance(s, Deferred) else s)])
        return getattr(self, f"_{role}_written")

    def _write(self, role, terms):
        if "_pending" in self.__dict__:
            self._pending[role] = None
        setattr(self, f"_{role}_written", list(terms))

    T_terms = property(lambda self: self._read("T"), lambda self, v: self._write("T", v))
    V_terms = property(lambda self: self._read("V"), lambda self, v: self._write("V", v))
    D_terms = property(lambda self: self._read("D"), lambda self, v: self._write("D", v))

    @property
    def kinetic_deferred(self):
        """Whether some kinetic terms (the bodies') are still unwritten."""
        return self._pending["T"] is not None

    @property
    def potential_deferred(self):
        """Whether some potential terms (gravity's) are still unwritten."""
        return self._pending["V"] is not None

    @property
    def deferred(self):
        """Whether any term is still unwritten."""
        return any(s is not None for s in self._pending.values())
