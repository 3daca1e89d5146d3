"""netdyn: physical systems as networks, equations of motion from energy.

The package is layered; each folder is one stage of the pipeline
(graph → energy model → equations → numbers), and imports point down only
(checked by import-linter, see ``pyproject.toml``):

==================== ===========================================================
``components/``      the element library (``netdyn.components``), one module a domain
``netdyn.lagrange``  the energy model ``LagrangianModel`` and its derivation
``netdyn.graph``     ``Network`` and its formulations (circuits, 1-D, planar linkages)
``netdyn.numerics``  compiled functions, initial conditions, integrators, ``simulate``, ``Solution``
``netdyn.analysis``  linearization, comparison, analogies, kinematics, inverse dynamics, sweeps
``netdyn.io``,       netlists and model files; export of equations; pictures
``netdyn.export``,
``netdyn.viz``
``netdyn.cli``       the ``netdyn`` command
==================== ===========================================================

Public names are imported on first use, so ``import netdyn`` stays fast; ``docs/api.md`` lists them all.
Exports start at ``netdyn.export_equations(model, "c")``. Module paths of 0.1 that moved (``netdyn.sources``,
``netdyn.model``, ...) still import, with a ``DeprecationWarning`` naming the new home (:mod:`netdyn._compat`).

>>> import netdyn
>>> from netdyn.components.electrical import VoltageSource, Resistor, Capacitor
>>> net = netdyn.Network()
>>> _ = net.add(VoltageSource("V1", "in", "0", 1.0), Resistor("R1", "in", "out", 1.0),
...             Capacitor("C1", "out", "0", 1.0))
>>> sol = netdyn.simulate(net, (0, 1))
>>> round(float(sol.voltage("C1")[-1]), 6)   # 1 - exp(-1)
0.632121
"""
import importlib
import sys
import types

from netdyn import _compat
from netdyn.errors import (ElementError, ExportError, InitialConditionError, IntegrationError,  # noqa: F401
                           InvalidValueError, LockedMechanismError, LoopClosureError, ModelError, NetdynError,
                           OperatingPointError, OptionError, OptionWarning, OutputWarning, ParameterError,
                           ParseError, SingularSystemError, TopologyError, UnsavedError)
from netdyn.lagrange import slots as _slots

__version__ = "0.3.0"

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # what type checkers see of the lazy names below (nothing is imported at run time)
    from netdyn.symbols import t as t
    from netdyn.symbols import coordinates as coordinates
    from netdyn.symbols import symbols as symbols
    from netdyn.graph.network import Network as Network
    from netdyn.graph.assembly import Assembly as Assembly
    from netdyn.lagrange.model import LagrangianModel as LagrangianModel
    from netdyn.numerics.simulate import simulate as simulate
    from netdyn.numerics.results.solution import Solution as Solution
    from netdyn.analysis.sweep import sweep as sweep
    from netdyn.analysis.linear import StateSpace as StateSpace
    from netdyn.analysis.linear import Descriptor as Descriptor
    from netdyn.analysis.linearize import OperatingPoint as OperatingPoint
    from netdyn.analysis.linearize import equilibrium as equilibrium
    from netdyn.analysis.linearize import linearize as linearize
    from netdyn.analysis.linearize import transfer_function as transfer_function
    from netdyn.analysis.integrability import is_integrable as is_integrable
    from netdyn.analysis.analog import analog as analog
    from netdyn.analysis.compare import analogy as analogy
    from netdyn.analysis.compare import compare as compare
    from netdyn.numerics.dae.structure import mobility as mobility
    from netdyn.analysis.kinematics import assemble_configuration as assemble_configuration
    from netdyn.analysis.kinematics import kinematics as kinematics
    from netdyn.analysis.inverse import inverse_dynamics as inverse_dynamics
    from netdyn.viz.plotting import plot_mechanism as plot_mechanism
    from netdyn.viz.plotting import animate_mechanism as animate_mechanism
    from netdyn.viz.plot3d import plot_spatial as plot_spatial
    from netdyn.viz.plot3d import animate_spatial as animate_spatial
    from netdyn.io.netlist import read_netlist as read_netlist
    from netdyn.io.spice import write_netlist as write_netlist
    from netdyn.io.modelfile import load_model as load_model
    from netdyn.io.modelfile import save_model as save_model
    from netdyn.numerics.circuit.operating_point import operating_point as operating_point
    from netdyn.analysis.ac import ac as ac
    from netdyn.bondgraph.graph import BondGraph as BondGraph
    from netdyn.bondgraph.network import to_bond_graph as to_bond_graph
    from netdyn.bondgraph.network import to_network as to_network
    from netdyn.bondgraph.fileformat import load_bond_graph as load_bond_graph
    from netdyn.bondgraph.fileformat import save_bond_graph as save_bond_graph
    from netdyn.export import export_equations as export_equations
    from netdyn.export.fmu import save_fmu as save_fmu
    from netdyn import (analysis as analysis, bondgraph as bondgraph, components as components, export as export,
                        graph as graph, io as io, lagrange as lagrange, linkages as linkages, models as models,
                        numerics as numerics, viz as viz)
    _SEEN_BY_TYPE_CHECKERS = (t, coordinates, symbols, Network, Assembly, LagrangianModel, simulate, Solution, sweep, StateSpace,
                              Descriptor, OperatingPoint, equilibrium, linearize, transfer_function,
                              is_integrable, analog, analogy, compare, mobility, assemble_configuration,
                              kinematics, inverse_dynamics, plot_mechanism, animate_mechanism, plot_spatial,
                              animate_spatial, read_netlist, write_netlist, load_model, save_model,
                              ac, BondGraph, to_bond_graph, to_network, load_bond_graph,
                              save_bond_graph, export_equations, save_fmu, analysis, bondgraph, components,
                              export, graph, io, lagrange, linkages, models, numerics, viz)  # the names are used
    _SEEN_TOO = operating_point  # type: ignore[has-type]  # (a module of the same name on the way)

#: public name -> module that defines it (imported on first access)
_LAZY = {
    "t": "netdyn.symbols",  # (sympy loads with the first of these: `netdyn --help` does without it)
    "coordinates": "netdyn.symbols",
    "symbols": "netdyn.symbols",
    "Network": "netdyn.graph.network",
    "Assembly": "netdyn.graph.assembly",
    "LagrangianModel": "netdyn.lagrange.model",
    "RecursiveEquations": "netdyn.lagrange.newton_euler",
    "RecursiveForm": "netdyn.lagrange.newton_euler",
    "simulate": "netdyn.numerics.simulate",
    "Solution": "netdyn.numerics.results.solution",
    "Event": "netdyn.numerics.results.events",
    "sweep": "netdyn.analysis.sweep",
    "StateSpace": "netdyn.analysis.linear",
    "Descriptor": "netdyn.analysis.linear",
    "OperatingPoint": "netdyn.analysis.linearize",
    "equilibrium": "netdyn.analysis.linearize",
    "linearize": "netdyn.analysis.linearize",
    "transfer_function": "netdyn.analysis.linearize",
    "is_integrable": "netdyn.analysis.integrability",
    "analog": "netdyn.analysis.analog",
    "analogy": "netdyn.analysis.compare",
    "compare": "netdyn.analysis.compare",
    "mobility": "netdyn.numerics.dae.structure",
    "assemble_configuration": "netdyn.analysis.kinematics",
    "kinematics": "netdyn.analysis.kinematics",
    "inverse_dynamics": "netdyn.analysis.inverse",
    "accelerations": "netdyn.analysis.accelerations",
    "plot_mechanism": "netdyn.viz.plotting",
    "animate_mechanism": "netdyn.viz.plotting",
    "plot_spatial": "netdyn.viz.plot3d",
    "animate_spatial": "netdyn.viz.plot3d",
    "read_netlist": "netdyn.io.netlist",
    "write_netlist": "netdyn.io.spice",
    "load_model": "netdyn.io.modelfile",
    "save_model": "netdyn.io.modelfile",
    "operating_point": "netdyn.numerics.circuit.operating_point",
    "ac": "netdyn.analysis.ac",
    "BondGraph": "netdyn.bondgraph.graph",
    "to_bond_graph": "netdyn.bondgraph.network",
    "to_network": "netdyn.bondgraph.network",
    "load_bond_graph": "netdyn.bondgraph.fileformat",
    "save_bond_graph": "netdyn.bondgraph.fileformat",
    "export_equations": "netdyn.export",
    "save_fmu": "netdyn.export.fmu",
}
#: sub-packages reachable as attributes (``netdyn.export.json``, ``netdyn.linkages.four_bar()``)
_SUBPACKAGES = ("components", "export", "io", "linkages", "models", "lagrange", "graph", "numerics", "analysis",
                "viz", "bondgraph")

__all__ = ["NetdynError", "ModelError", "ElementError", "TopologyError", "ParameterError", "InitialConditionError",
           "SingularSystemError", "IntegrationError", "ParseError", "ExportError", "OperatingPointError",
           "InvalidValueError", "LoopClosureError", "LockedMechanismError", "OptionError", "OptionWarning",
           "UnsavedError", "OutputWarning", "coordinates", "symbols", "t", *_LAZY]


def __getattr__(name):
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
    elif name in _SUBPACKAGES:
        value = importlib.import_module(f"netdyn.{name}")
    elif f"netdyn.{name}" in _compat.MOVED_MODULES:
        return importlib.import_module(f"netdyn.{name}")  # a 0.1 module: its names warn when read
    else:
        raise AttributeError(f"module 'netdyn' has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_LAZY) | set(_SUBPACKAGES))


def _export_equations(model, format="latex", **options):
    """The exporter the energy model's slot calls (deprecated ``LagrangianModel.export``): the root belongs to
    no layer, so it may hand the model to :mod:`netdyn.export`, a layer above the model's."""
    return __getattr__("export_equations")(model, format, **options)


_slots.set_exporter(_export_equations)


class _Package(types.ModuleType):
    """The package module: importing a 0.1 module path whose name is also a public function
    (``import netdyn.simulate``) must not replace the function ``netdyn.simulate`` by the alias module."""

    def __setattr__(self, name, value):
        if isinstance(value, _compat.MovedModule) and name in _LAZY:
            return
        if isinstance(value, types.ModuleType) and name in _LAZY and value.__name__ == f"netdyn.{name}":
            return  # importing netdyn.symbols (the module) leaves netdyn.symbols the function
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
_compat.install()
