"""The IDA room's row of the path table: ``ida``, which takes every model the others decline.

SUNDIALS IDA on the stabilized index-2 form: the dense IDA for small constrained models, the sparse one
(analytic Jacobian from the element templates) for the rest
(:func:`~netdyn.numerics.ida.sparse_ida.ida_for`); index two and up through the shared
:mod:`netdyn.numerics.dae` room.

>>> IDA.symbolic, IDA.auto
(True, True)
"""
from __future__ import annotations

from netdyn.numerics.dae.start import STIFFNESS_RATIO
from netdyn.numerics.ida.sparse_ida import ida_for
from netdyn.numerics.integrators.driver import run_symbolic, step_bound
from netdyn.numerics.integrators.path import Path, Verdict


def _ida_accepts(problem, start):
    if problem.named:
        return Verdict(True, "method='ida' was named")
    if not start.kkt_regular:
        return Verdict(True, "the constrained mass matrix is singular (flows without inertia): a DAE for IDA")
    if start.stiff:
        return Verdict(True, f"stiff: fastest decay rate × span = {start.stiffness:.3g} > {STIFFNESS_RATIO:g}")
    return Verdict(True, "IDA (BDF) takes every model")


def _ida_run(problem, start, plan):
    return run_symbolic(problem, start, ida_for(start.cm, start.p, step_bound(problem, start.cm)), "ida")


IDA = Path("ida", _ida_accepts, _ida_run, symbolic=True, integrates_with="IDA (BDF)")
