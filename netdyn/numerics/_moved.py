"""Old homes of the numerics modules (0.2), kept importing for one minor version with a warning.

0.3 split ``netdyn/numerics/`` into rooms (``circuit/``, ``mechanics/``, ``ida/``, ``dae/``, ``results/``,
``functions/``, ``integrators/``). ``import netdyn.numerics.stamp`` and ``from netdyn.numerics.stamp import x``
still work until 0.4: a finder at the end of ``sys.meta_path`` answers the old names with the module at its new
home and a :class:`DeprecationWarning` that names it. The aliases are looked up by name at run time, so they
are no dependency of the rooms (the import contract does not see them, and should not).

>>> import warnings, importlib, sys
>>> _ = sys.modules.pop("netdyn.numerics.stamp", None)   # (the alias warns when it is first imported)
>>> with warnings.catch_warnings(record=True) as caught:
...     warnings.simplefilter("always")
...     old = importlib.import_module("netdyn.numerics.stamp")
>>> old.__name__, "netdyn.numerics.circuit.stamp" in str(caught[0].message)
('netdyn.numerics.circuit.stamp', True)
"""
from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import warnings

#: old module (below ``netdyn.numerics``) -> its home since 0.3
MOVED = {
    "assembly": "functions.assembly",
    "bookkeeping": "results.bookkeeping",
    "circuit_kernel": "circuit.kernels.circuit_kernel",
    "circuit_report": "circuit.energy.circuit_report",
    "circuit_work": "circuit.energy.circuit_work",
    "closure": "dae.closure",
    "compiled": "functions.compiled",
    "energy": "functions.energy",
    "fastkkt": "mechanics.fastkkt",
    "hidden": "dae.hidden",
    "higherindex": "dae.higherindex",
    "index_reduction": "dae.index_reduction",
    "initial": "dae.initial",
    "kernel": "functions.kernel",
    "linearsim": "circuit.linearsim",
    "loop_flux": "circuit.loop_flux",
    "newton_matrix": "circuit.kernels.newton_matrix",
    "nonlinearsim": "circuit.nonlinearsim",
    "operating_point": "circuit.operating_point",
    "pwtable": "functions.pwtable",
    "quantities": "results.quantities",
    "reactions": "results.reactions",
    "schur_kernel": "mechanics.schur_kernel",
    "sensed": "integrators.sensed",
    "solution": "results.solution",
    "source_program": "circuit.kernels.source_program",
    "spice_start": "circuit.spice_start",
    "stamp": "circuit.stamp",
    "structure": "dae.structure",
    "template_levels": "dae.template_levels",
    "trajectory": "results.trajectory",
    "treedynamics": "functions.treedynamics",
    "treeloads": "functions.treeloads",
    "integrators.compiled_projection": "mechanics.compiled_projection",
    "integrators.ida": "ida.ida",
    "integrators.ida_kernel": "ida.ida_kernel",
    "integrators.linear": "circuit.linear",
    "integrators.projection": "mechanics.projection",
    "integrators.recursive": "mechanics.recursive",
    "integrators.sparse_ida": "ida.sparse_ida",
    "options": "integrators.options",
    "choice": "paths",
}
#: names once re-exported by ``netdyn.numerics.integrators`` -> their homes since 0.3
MOVED_INTEGRATORS = {"Projection": "mechanics.projection", "IDA": "ida.ida", "LinearRadau": "circuit.linear",
                     "INTEGRATORS": "paths"}
PREFIX = "netdyn.numerics."


def warn_moved(old, new, stacklevel=3):
    """Warn that ``old`` (a dotted name) now lives at ``new``."""
    warnings.warn(f"{old} moved to {new} in netdyn 0.3; the old name stops working in 0.4",
                  DeprecationWarning, stacklevel=stacklevel)


class _Alias(importlib.abc.Loader):
    def __init__(self, new):
        self.new = new

    def create_module(self, spec):
        warn_moved(spec.name, self.new, stacklevel=6)
        module = importlib.import_module(self.new)
        self.spec = module.__spec__
        return module

    def exec_module(self, module):
        module.__spec__ = self.spec  # the machinery stamped the old spec on it: the module keeps its own


class MovedFinder(importlib.abc.MetaPathFinder):
    """Finds the 0.2 module names of :data:`MOVED`."""

    def find_spec(self, fullname, path=None, target=None):
        if not fullname.startswith(PREFIX) or fullname[len(PREFIX):] not in MOVED:
            return None
        return importlib.machinery.ModuleSpec(fullname, _Alias(PREFIX + MOVED[fullname[len(PREFIX):]]))


def install():
    """Put the finder at the end of ``sys.meta_path`` (once)."""
    if not any(isinstance(f, MovedFinder) for f in sys.meta_path):
        sys.meta_path.append(MovedFinder())


def moved_integrator(name):
    """``netdyn.numerics.integrators.<name>`` of 0.2, from its new home, with the warning."""
    home = PREFIX + MOVED_INTEGRATORS[name]
    warn_moved(f"netdyn.numerics.integrators.{name}", f"{home}.{name}")
    return getattr(importlib.import_module(home), name)
