"""Names of netdyn 0.1 that moved, kept importable with a ``DeprecationWarning`` that names the new home.

0.2 put the flat package into layer sub-packages (``netdyn/model.py`` became ``netdyn/lagrange/model.py``,
``netdyn/sources.py`` ``netdyn/lagrange/sources.py``, ...). Code written for 0.1 still imports the old
module paths: an import finder answers them with a light stand-in module that imports nothing until a
name is read from it, then warns and hands out the object from its new home. The aliases go in 0.4.

>>> import warnings
>>> from netdyn import _compat
>>> with warnings.catch_warnings(record=True) as caught:
...     warnings.simplefilter("always")
...     from netdyn.sources import sine
>>> sine.__module__
'netdyn.lagrange.sources'
>>> print(caught[0].message)
netdyn.sources moved in 0.2 (deprecated alias, goes in 0.4): use 'from netdyn.lagrange.sources import sine'

Modules of :mod:`netdyn.numerics` are internal (their layout changes), so a name that moved there is named
with that caveat; where a name is public at the package root, the warning names the root.

The table is this module's only knowledge of the package: it imports nothing of netdyn at module level
(the lookups are by name, on first use), so it sits outside the layers like the package root.
"""
import importlib
import importlib.abc
import importlib.machinery
import sys
import types
import warnings

#: the version that drops these aliases
REMOVAL = "0.4"

#: 0.1 module -> the modules its public names live in now (searched in order)
MOVED_MODULES = {
    "netdyn.analog": ("netdyn.analysis.analog",),
    "netdyn.assemble": ("netdyn.graph.assemble", "netdyn.symbols"),
    "netdyn.bookkeeping": ("netdyn.numerics.results.bookkeeping",),
    "netdyn.compare": ("netdyn.analysis.compare",),
    "netdyn.energy": ("netdyn.numerics.functions.energy",),
    "netdyn.equations": ("netdyn.lagrange.equations",),
    "netdyn.exprtext": ("netdyn.lagrange.exprtext",),
    "netdyn.fastdiff": ("netdyn.lagrange.fastdiff",),
    "netdyn.initial": ("netdyn.numerics.dae.initial",),
    "netdyn.integrability": ("netdyn.analysis.integrability",),
    "netdyn.inverse": ("netdyn.analysis.inverse", "netdyn.numerics.results.reactions"),
    "netdyn.kinematics": ("netdyn.analysis.kinematics",),
    "netdyn.linear": ("netdyn.analysis.linear",),
    "netdyn.lineardae": ("netdyn.numerics.integrators.radau",),
    "netdyn.linearize": ("netdyn.analysis.linearize",),
    "netdyn.linearsim": ("netdyn.numerics.circuit.linearsim",),
    "netdyn.model": ("netdyn.lagrange.model",),
    "netdyn.network": ("netdyn.graph.network", "netdyn.components.base"),
    "netdyn.numeric": ("netdyn.numerics.functions.compiled",),
    "netdyn.planar": ("netdyn.graph.planar", "netdyn.graph.mechanism"),
    "netdyn.plotting": ("netdyn.viz.plotting",),
    "netdyn.simulate": ("netdyn.numerics.simulate", "netdyn.graph.network", "netdyn.numerics.paths",
                        "netdyn.numerics.mechanics.projection"),
    "netdyn.solution": ("netdyn.numerics.results.solution",),
    "netdyn.sources": ("netdyn.lagrange.sources",),
    "netdyn.stamp": ("netdyn.numerics.circuit.stamp",),
    "netdyn.structure": ("netdyn.numerics.dae.structure",),
    "netdyn.sweep": ("netdyn.analysis.sweep",),
    "netdyn.topology": ("netdyn.graph.topology",),
}

INTERNAL = "netdyn.numerics"


def new_home(old, name):
    """``(object, sentence)``: where ``name`` of the 0.1 module ``old`` lives now, and how to import it.

    >>> obj, how = new_home("netdyn.model", "LagrangianModel")
    >>> how
    "use 'from netdyn import LagrangianModel'"
    """
    found = []
    for module_name in MOVED_MODULES[old]:
        module = _import(module_name)
        if hasattr(module, name):
            found.append((module.__name__, getattr(module, name)))
    if found:
        obj = found[0][1]
        root = sys.modules["netdyn"]
        if name in getattr(root, "__all__", ()) and getattr(root, name) is obj:
            return obj, f"use 'from netdyn import {name}'"
        public = [m for m, o in found if o is obj and not _internal(m)]
        if public:
            return obj, f"use 'from {public[0]} import {name}'"
        return obj, (f"it is internal now ({found[0][0]}.{name}; netdyn.numerics modules move without "
                     f"notice): see docs/api.md for the public API")
    raise AttributeError(f"module {old!r} (deprecated; its names moved to {', '.join(MOVED_MODULES[old])}) "
                         f"has no attribute {name!r}")


def _import(module_name):
    """The module at ``module_name``. Where that path is itself an alias (a module the numerics rooms moved
    later, answered by their own finder with a warning), the alias is followed silently: the user hears one
    warning, and it names the module's real home (its ``__name__``)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return importlib.import_module(module_name)


def _internal(module_name):
    return module_name == INTERNAL or module_name.startswith(INTERNAL + ".")


class MovedModule(types.ModuleType):
    """A 0.1 module path: each name read from it warns and comes from its new home."""

    def __getattr__(self, name):
        if name.startswith("__") and name.endswith("__") and name != "__all__":
            raise AttributeError(name)  # the import system's probes (__path__, __file__, ...): no warning
        if name == "__all__":
            return sorted(self.__dir__())
        obj, how = new_home(self.__name__, name)
        warnings.warn(f"{self.__name__} moved in 0.2 (deprecated alias, goes in {REMOVAL}): {how}",
                      DeprecationWarning, stacklevel=2)
        return obj

    def __dir__(self):
        names = set()
        for module_name in MOVED_MODULES[self.__name__]:
            module = _import(module_name)
            names |= set(getattr(module, "__all__", [n for n in vars(module) if not n.startswith("_")]))
        return sorted(names)


class _MovedFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Answers ``import netdyn.<0.1 module>`` with a :class:`MovedModule` (after the ordinary finders)."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname in MOVED_MODULES:
            return importlib.machinery.ModuleSpec(fullname, self, origin="deprecated alias (netdyn._compat)")
        return None

    def create_module(self, spec):
        return MovedModule(spec.name, f"Deprecated alias of {', '.join(MOVED_MODULES[spec.name])} (netdyn 0.1).")

    def exec_module(self, module):
        pass


FINDER = _MovedFinder()


def install():
    """Put the finder on ``sys.meta_path`` right after the path finder (once)."""
    if any(isinstance(f, _MovedFinder) for f in sys.meta_path):
        return
    place = next((k + 1 for k, f in enumerate(sys.meta_path) if f is importlib.machinery.PathFinder),
                 len(sys.meta_path))
    sys.meta_path.insert(place, FINDER)
