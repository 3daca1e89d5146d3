"""From equations to numbers: ``simulate`` over a table of paths, in rooms by what each part serves.

===================================== ========================================================================================
room                                  job
===================================== ========================================================================================
``simulate``, ``problem``, ``paths``  the front door: the call as one record, the table of paths and the walk
``circuit/``                          path: stamps, the linear fast path, the SPICE start, the diode path
``mechanics/``                        path: projection (KKT, Schur kernels, compiled loop), recursive
``ida/``                              path: SUNDIALS IDA, dense and sparse
``results/``                          shared: trajectory, solution, energy bookkeeping, reactions
``integrators/``                      shared: the integrator and path interfaces, the symbolic driver, Radau IIA
``dae/``                              shared: consistent initial conditions, the symbolic start, structure, hidden constraints
``functions/``                        shared: compiled functions of a model (kernels, trees, templates)
===================================== ========================================================================================

A path depends on the shared rooms only, never on another path (import-linter contract in
``pyproject.toml``). A new path is one room and one row of the path table.
"""
from netdyn.numerics import _moved

_moved.install()
