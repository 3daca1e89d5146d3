"""The energy model and its derivation: ``LagrangianModel`` (T*, V, D, efforts, constraints), the
term-by-term derivation into ``M q̈ + h + Φ_qᵀλ + Aᵀμ = 0`` (:mod:`.equations`, :mod:`.fastdiff`),
time functions of sources (:mod:`.sources`) and expressions as text (:mod:`.exprtext`).

Depends only on :mod:`netdyn.errors`, :mod:`netdyn.symbols` and sympy/symengine.
"""
