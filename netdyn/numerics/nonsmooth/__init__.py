"""Nonsmooth mechanics: unilateral contacts and impacts (issue 27, item 3), a room of its own.

* :mod:`~netdyn.numerics.nonsmooth.contacts` — a network's contact set on one model with every contact
  closed: gaps, normal velocities, Jacobians, normal forces; the events that change the set (an open
  contact's gap falling through zero, a closed contact's force that would pull);
* :mod:`~netdyn.numerics.nonsmooth.impact` — Newton's impact law through the constraint Jacobian over the
  contacts closing at one instant (the joints kept), the Zeno cut, which contacts stay closed, the kinetic
  energy lost;
* :mod:`~netdyn.numerics.nonsmooth.lcp` — the small linear complementarity problem of the impulses;
* :mod:`~netdyn.numerics.nonsmooth.friction` — Coulomb friction contacts (item 4): stick and slip states, their
  events, the states settled after a switch.

The event loop (:mod:`netdyn.numerics.events`) calls them; ``netdyn.simulate`` reaches them with no extra
call when a network holds a :class:`~netdyn.components.contact.Contact` or a friction contact.
"""
from netdyn.numerics.nonsmooth.contacts import ContactSet, contacts_of, with_states
from netdyn.numerics.nonsmooth.impact import Impact, ImpactOutcome, impact_state
from netdyn.numerics.nonsmooth.lcp import LCPError, solve_lcp

__all__ = ["ContactSet", "contacts_of", "with_states", "Impact", "ImpactOutcome", "impact_state", "LCPError",
           "solve_lcp"]
