"""The contact set of a network: every :class:`~netdyn.components.contact.Contact` on one model, and the
events that change it.

A network's contacts are open or closed at any instant, so the model the path integrates changes with them.
The impact law needs more than that model: the gaps of the open contacts, the Jacobians of all of them and
the joints, the mass matrix. :class:`ContactSet` builds the network once with *every* contact closed (each
a constraint row ``g = 0`` labelled ``name[gap]``) and compiles it; evaluated at a state, its rows give

* the gap ``g`` (the row's value ``φ``; the constraint is not enforced here, only measured),
* the normal velocity ``γ = ∂g/∂q · f + ∂g/∂t`` and its Jacobian ``W = ∂g/∂q``,
* the normal forces of a set of closed contacts: the KKT solve with the joints' rows and theirs
  (``N = −λ``), and the normal accelerations of the others.

Its events (:meth:`ContactSet.events`, made for the network's current contact states): an open contact
fires when its gap falls through zero (``direction=-1``, action: close it — the impact law then decides),
a closed one when its normal force would pull (``−N`` rises through zero; action: open it). A zero gap
that is not closing (two balls touching and moving together) is no impact: its roundoff around zero fires
nothing.

>>> import netdyn
>>> from netdyn.components.planar import RigidBody, Gravity
>>> from netdyn.components.contact import Contact
>>> from netdyn.numerics.problem import Problem
>>> net = netdyn.Network("ball")
>>> _ = net.add(RigidBody("ball", 1.0, 0.01), Gravity(g=10.0), Contact("floor", "ground", (0, 0), "ball", (0, 0)))
>>> cs = ContactSet(Problem.from_call(net, (0, 1)))
>>> at = cs.at(0.0, [0.0, 0.3, 0.0], [0.0, -2.0, 0.0])
>>> float(at.gap[0]), float(at.rate[0]), [ev.name for ev in cs.events(net)]
(0.3, -2.0, ['floor impact'])
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from netdyn.components.contact import contact_label
from netdyn.errors import IntegrationError
from netdyn.numerics.functions.compiled import CompiledModel
from netdyn.numerics.results.events import Event

__all__ = ["ContactSet", "contacts_of", "with_states", "ContactFormulationError"]


class ContactFormulationError(IntegrationError):
    """A network of contacts in a formulation whose coordinates the contact model cannot share."""


def contacts_of(system) -> list:
    """The network's contact elements (none for a model or a bond graph)."""
    elements = getattr(system, "elements", None)
    if not isinstance(elements, dict):
        return []
    return [el for el in elements.values() if getattr(el, "is_contact", False)]


def with_states(system, states: dict):
    """``system`` with its contacts' states set (``{name: closed}``): a new network, the old one untouched
    (the same network when nothing changes)."""
    elements = system.elements
    if all(elements[n].closed == bool(s) for n, s in states.items()):
        return system
    new = type(system)(system.name)
    for attr, value in vars(system).items():
        if attr not in vars(new):
            setattr(new, attr, value)
    new.add(*[el.with_state(states[n]) if n in states else el for n, el in elements.items()],
            *system.bodies.values())
    return new


@dataclass
class ContactState:
    """The contact rows at one state: ``gap``, normal velocity ``rate``, Jacobian ``W`` (contacts × n), the
    bilateral rows' Jacobian ``B`` and velocity terms ``b`` (joints, drivers, flow constraints: ``B f + b = 0``),
    their acceleration terms, ``M`` and ``h``."""

    q: np.ndarray
    f: np.ndarray
    M: np.ndarray
    h: np.ndarray
    gap: np.ndarray
    rate: np.ndarray
    W: np.ndarray
    w_t: np.ndarray
    w_acc: np.ndarray
    B: np.ndarray
    b: np.ndarray
    b_acc: np.ndarray


class ContactSet:
    """A network's contacts over one compiled model with all of them closed (see the module docstring)."""

    def __init__(self, problem):
        system = problem.system
        self.elements = contacts_of(system)
        self.names = [c.name for c in self.elements]
        self.restitution = np.array([c.e for c in self.elements])
        net = with_states(system, {n: True for n in self.names})
        formulation = problem.formulation
        try:
            model = net.model(formulation=formulation, check=False)
        except TypeError:  # pragma: no cover - a network whose model takes no check flag
            model = net.model(formulation=formulation)
        labels = list(model.constraint_labels)
        self.rows = np.array([labels.index(contact_label(n)) for n in self.names], dtype=int)
        self.bilateral = np.setdiff1d(np.arange(len(labels)), self.rows).astype(int)
        self.coordinate_names = list(model.coordinate_names)
        self.cm = CompiledModel(model)
        self.cm.kernel = None  # a few evaluations an event: lambdify serves, no fused kernel to compile
        self.p = self.cm.parameter_vector(problem.params)
        self._memo = self._gap_memo = (None, None)

    # --------------------------------------------------------------- one state
    def order(self, names) -> np.ndarray:
        """The positions of this model's coordinates among ``names`` (a segment's coordinate order)."""
        names = list(names)
        try:
            return np.array([names.index(n) for n in self.coordinate_names], dtype=int)
        except ValueError:
            raise ContactFormulationError(
                f"contacts {', '.join(self.names)}: the run's coordinates {names} are not the contact model's "
                f"{self.coordinate_names}; use the absolute planar formulation (the default)") from None

    def at(self, tt: float, q, f) -> ContactState:
        """The contact rows, M and h at ``(tt, q, f)`` in this model's coordinate order."""
        q = np.asarray(q, dtype=float)
        f = np.asarray(f, dtype=float)
        M, h = self.cm.dynamics(tt, q, f, self.p)
        c = self.cm.constraints(tt, q, f, self.p)
        r, k = self.rows, self.bilateral
        B = np.vstack([c.Phi_q[k], c.A])
        return ContactState(q, f, M, h, c.phi[r], c.Phi_q[r] @ f + c.Phi_t[r], c.Phi_q[r], c.Phi_t[r],
                            c.gamma_phi[r], B, np.concatenate([c.Phi_t[k], c.a]),
                            np.concatenate([c.gamma_phi[k], c.gamma_psi]))

    def normal_forces(self, st: ContactState, closed) -> tuple:
        """``(N, a)`` at ``st`` with the contacts ``closed`` (indices) held: the normal forces of those
        (``N = −λ``; positive pushes) and the normal accelerations of every contact (those of the closed
        ones are 0)."""
        closed = list(closed)
        C = np.vstack([st.B, st.W[closed]])
        gam = np.concatenate([st.b_acc, st.w_acc[closed]])
        n, m = st.M.shape[0], C.shape[0]
        K = np.zeros((n + m, n + m))
        K[:n, :n], K[:n, n:], K[n:, :n] = st.M, C.T, C
        z = np.linalg.lstsq(K, np.concatenate([-st.h, -gam]), rcond=None)[0]
        acc, lam = z[:n], z[n:]
        return -lam[st.B.shape[0]:], st.W @ acc + st.w_acc

    # --------------------------------------------------------------- events
    def gaps(self, tt: float, q, f) -> tuple:
        """``(gap, rate)`` of every contact at ``(tt, q, f)`` (the constraint rows only: an event's scan)."""
        c = self.cm.constraints(tt, np.asarray(q, dtype=float), np.asarray(f, dtype=float), self.p)
        r = self.rows
        return c.phi[r], c.Phi_q[r] @ np.asarray(f, dtype=float) + c.Phi_t[r]

    def _memoized(self, slot, fn, tt, s):
        """``fn(tt, q, f)`` at the column ``s``, kept in ``slot``: each event of the set reads the same column."""
        names = self.coordinate_names
        key = (tt, tuple(s[n] for n in names), tuple(s[f"{n}_dot"] for n in names))
        memo = getattr(self, slot)
        if memo[0] != key:
            memo = (key, fn(*key))
            setattr(self, slot, memo)
        return memo[1]

    def _gaps(self, tt, s):
        return self._memoized("_gap_memo", self.gaps, tt, s)

    def _state(self, tt, s):
        return self._memoized("_memo", self.at, tt, s)

    def events(self, system) -> list:
        """The events of ``system``'s contacts in their current states: an open contact's impact (its gap
        falls through zero), a closed contact's lift-off (its normal force would pull)."""
        out = []
        closed = [i for i, n in enumerate(self.names) if system.elements[n].closed]
        for i, name in enumerate(self.names):
            if system.elements[name].closed:
                k = closed.index(i)

                def pull(tt, s, k=k):
                    return -self.normal_forces(self._state(tt, s), closed)[0][k]
                out.append(Event(pull, name=f"{name} lifts off", direction=1, action={name: False}))
            else:
                def gap(tt, s, i=i):
                    g, rate = self._gaps(tt, s)
                    if g[i] <= 0 and rate[i] >= -1e-9 * max(abs(s[f"{n}_dot"]) for n in self.coordinate_names):
                        # touching and not approaching (two balls moving together): the gap's roundoff
                        # around zero is no impact
                        return max(abs(float(g[i])), 1e-300)
                    return float(g[i])
                out.append(Event(gap, name=f"{name} impact", direction=-1, action={name: True}))
        return out
