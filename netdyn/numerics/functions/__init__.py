"""Shared room: a model made into numbers once — compiled functions and what they are built from.

:mod:`.compiled` (``CompiledModel``: lambdified terms, parameters, inputs), :mod:`.kernel` (the fused
symengine-LLVM state kernel), :mod:`.pwtable` (PULSE/PWL tables), :mod:`.energy` (stored energy, dissipated
and supplied power as expressions), :mod:`.treedynamics` + :mod:`.treeloads` (a planar relative tree's M and h
by the recursive algorithms, behind the same ``CompiledModel``), :mod:`.assembly` (element templates: the
residual and its sparse Jacobian term by term). Every path builds on these; they know no path.
"""
