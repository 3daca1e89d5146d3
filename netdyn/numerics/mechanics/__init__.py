"""The constrained-mechanics paths (rows ``projection`` and ``recursive`` of the path table).

Explicit Runge–Kutta on the index-1 form projected onto the constraints (:mod:`.projection`, its stepping loop
compiled in :mod:`.compiled_projection`), the KKT terms and their banded Schur solve (:mod:`.fastkkt`,
:mod:`.schur_kernel`), and joint-coordinate dynamics with the O(n) recursive right-hand side
(:mod:`.recursive`). Depends on the shared rooms only.
"""
