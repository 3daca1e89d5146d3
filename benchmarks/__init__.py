"""netdyn's benchmark suite: ``python -m benchmarks [--quick] [--cap SECONDS]``.

Every case runs in its own process under a time cap and is compared with a peer measured in
the same run (sympy.physics.mechanics, Pinocchio, ngspice). See :mod:`benchmarks.run`.
"""
