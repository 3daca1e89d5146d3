"""The circuit path (two rows of the path table: ``linear`` and ``circuit``): networks straight to numbers.

Stamps (:mod:`.stamp`) and the linear fast path (:mod:`.linearsim`, integrated by :mod:`.linear` on the shared
Radau IIA); the SPICE start — DC operating point (:mod:`.operating_point`), ``uic`` holds and jumps
(:mod:`.spice_start`), flux circulating around loops of inductors (:mod:`.loop_flux`); the diode path
(:mod:`.nonlinearsim`) with its compiled kernels (:mod:`.kernels`), work integrals (:mod:`.energy.circuit_work`) and
the per-element energy report from numbers (:mod:`.energy.circuit_report`); circuits whose nonlinear resistors
and capacitors are given by their own dissipation or energy functions (:mod:`.laws`: each law compiled once, no
symbolic model). Depends on the shared rooms only.
"""
