"""From equations to numbers: compiled functions (:mod:`.compiled`), consistent initial conditions
(:mod:`.initial`), the integrator family (:mod:`.integrators`) and the rule that picks one
(:mod:`.choice`), ``simulate`` (:mod:`.simulate`), the linear fast path (:mod:`.stamp`,
:mod:`.linearsim`), results (:mod:`.trajectory`, :mod:`.solution`), energy bookkeeping
(:mod:`.energy`, :mod:`.bookkeeping`), joint reactions (:mod:`.reactions`) and structural
checks during integration (:mod:`.structure`: redundant constraints, singularities).

A new integrator goes in :mod:`.integrators`.
"""
