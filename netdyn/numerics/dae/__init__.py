"""Shared room: the structure of the DAE — what must hold at the start and along the way.

Consistent initial conditions (:mod:`.initial`, from the element templates for large models:
:mod:`.template_levels`), loops that cannot close (:mod:`.closure`), mobility, redundant constraints and the
singularity watch (:mod:`.structure`), hidden constraints of linear index-two DAEs (:mod:`.higherindex`) and of
nonlinear ones (:mod:`.hidden`), index reduction to dummy derivatives (:mod:`.index_reduction`).
"""
