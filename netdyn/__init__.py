"""netdyn: physical systems as networks, equations of motion from energy.

>>> import netdyn
>>> from netdyn.components.electrical import VoltageSource, Resistor, Capacitor
>>> net = netdyn.Network()
>>> _ = net.add(VoltageSource("V1", "in", "0", 1.0), Resistor("R1", "in", "out", 1.0),
...             Capacitor("C1", "out", "0", 1.0))
>>> sol = netdyn.simulate(net, (0, 1))
>>> round(float(sol.voltage("C1")[-1]), 6)   # 1 - exp(-1)
0.632121
"""
from netdyn import components  # noqa: F401  (netdyn.components)
from netdyn.errors import (ElementError, ExportError, InitialConditionError, IntegrationError, ModelError, NetdynError,
                           OperatingPointError, ParameterError, ParseError, SingularSystemError, TopologyError)
from netdyn.linear import Descriptor, StateSpace
from netdyn.linearize import OperatingPoint, equilibrium, linearize, transfer_function
from netdyn.integrability import is_integrable
from netdyn import linkages, models  # noqa: F401  (ready-made networks and LagrangianModel builders)
from netdyn.analog import analog
from netdyn.compare import analogy, compare
from netdyn.model import LagrangianModel
from netdyn.network import Network
from netdyn.simulate import simulate
from netdyn.sweep import sweep  # noqa: E402  (the function shadows the module name on purpose)
from netdyn.structure import mobility
from netdyn.kinematics import assemble_configuration, kinematics
from netdyn.inverse import inverse_dynamics
from netdyn.plotting import animate_mechanism, plot_mechanism
from netdyn.solution import Solution
from netdyn.symbols import coordinates, symbols, t
from netdyn.io import read_netlist, write_netlist  # noqa: F401  (SPICE netlists in and out)
from netdyn.io.modelfile import load_model, save_model  # noqa: F401  (model files, JSON or YAML)
from netdyn import export  # noqa: F401,E402  (netdyn.export.export(model, format); model.export(format))

__version__ = "0.1.0"

__all__ = ["Network", "LagrangianModel", "Solution", "simulate", "sweep", "coordinates", "symbols", "t", "NetdynError",
           "ModelError", "ElementError", "TopologyError", "ParameterError", "InitialConditionError",
           "SingularSystemError", "IntegrationError", "ParseError", "ExportError", "read_netlist", "write_netlist",
           "save_model", "load_model", "OperatingPointError", "StateSpace", "Descriptor", "OperatingPoint",
           "equilibrium", "linearize", "transfer_function"]

# mixed-domain analysis (issue 4)
__all__ += ["is_integrable", "models", "analog", "analogy", "compare"]

# planar linkages (issue 3)
__all__ += ["mobility", "assemble_configuration", "kinematics", "inverse_dynamics", "plot_mechanism",
            "animate_mechanism"]

# spatial mechanisms (issue 13)
from netdyn import linkages_spatial  # noqa: F401,E402  (ready-made spatial mechanisms)
from netdyn.plot3d import animate_spatial, plot_spatial  # noqa: E402

__all__ += ["linkages_spatial", "plot_spatial", "animate_spatial"]
