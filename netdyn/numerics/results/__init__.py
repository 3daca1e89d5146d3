"""Shared room: what a simulation returns.

:mod:`.trajectory` (``Trajectory``: what every integrator returns), :mod:`.solution` (``Solution``: named
access, constraint residuals, plots), :mod:`.bookkeeping` (energy by element), :mod:`.reactions` (planar joint
reactions from the multipliers), :mod:`.quantities` (what a named series measures, in which unit).
"""
