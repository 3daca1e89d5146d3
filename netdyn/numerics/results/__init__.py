"""Shared room: what a simulation returns.

:mod:`.trajectory` (``Trajectory``: what every integrator returns), :mod:`.solution` (``Solution``: named
access, constraint residuals, plots, ``to_pandas``), :mod:`.index` (``ResultIndex``: where each named quantity
lives, made once per solution so that a read is O(1)), :mod:`.bookkeeping` (energy by element),
:mod:`.reactions` (planar joint reactions from the multipliers), :mod:`.quantities` (what a named series
measures, in which unit).
"""
