"""The circuit path for networks whose nonlinear elements are given by their own energy or dissipation
functions (``Resistor(dissipation=...)``, ``Capacitor(energy=...)``): each distinct law compiled once
(:mod:`.templates`), elements as numbers and incidences, Newton + variable-step BDF on the stamped equations
(:mod:`.energysim`). No symbolic model of the network is built."""
