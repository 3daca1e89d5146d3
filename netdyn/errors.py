"""The one family of errors netdyn raises.

Every error names the element, node, coordinate or parameter at fault and says
what to do about it.

>>> from netdyn.errors import NetdynError, TopologyError
>>> issubclass(TopologyError, NetdynError)
True
"""
from __future__ import annotations


class NetdynError(Exception):
    """Base class of every error netdyn raises on bad input or a failed solve.

    >>> import netdyn
    >>> try:
    ...     netdyn.LagrangianModel([])
    ... except netdyn.NetdynError as err:      # one except clause catches them all
    ...     print(type(err).__name__, "-", err)
    ModelError - a model needs at least one coordinate
    """


class ModelError(NetdynError):
    """A model (hand-typed or assembled) is malformed: unknown coordinate, non-Pfaffian flow constraint, ...

    >>> import netdyn
    >>> x, = netdyn.coordinates("x,")
    >>> netdyn.LagrangianModel([x], T=x.diff(netdyn.t)**2/2).coordinate("y")
    Traceback (most recent call last):
    ...
    netdyn.errors.ModelError: unknown coordinate 'y'; the model's coordinates are ['x']
    """


class ElementError(NetdynError):
    """An element was given bad values (negative inductance, shorted terminals, duplicate name, ...).

    >>> from netdyn.components.electrical import Resistor
    >>> Resistor("R1", "a", "a", 1.0)
    Traceback (most recent call last):
    ...
    netdyn.errors.ElementError: R1 is shorted to itself: both terminals are node 'a'; connect its terminals to two different nodes
    """


class TopologyError(NetdynError):
    """The graph is structurally wrong: floating node, loop of voltage sources, cut-set of current sources, ...

    ``faults`` lists every problem the check found (one sentence each, naming the elements or nodes at
    fault); :meth:`listing` makes one error of them all so that a user fixes everything in one pass.

    >>> err = TopologyError.listing(["V1, V2 close a loop", "I1 is in a cut-set"])
    >>> print(err)
    2 structural problems; fix them all:
      - V1, V2 close a loop
      - I1 is in a cut-set
    >>> err.faults
    ['V1, V2 close a loop', 'I1 is in a cut-set']
    """

    def __init__(self, message: str, faults: list[str] | None = None) -> None:
        super().__init__(message)
        self.faults = list(faults) if faults else [message]

    @classmethod
    def listing(cls, faults):
        """One error for all of ``faults`` (at least one): the sentence itself for one, a numbered list for more."""
        faults = list(faults)
        if len(faults) == 1:
            return cls(faults[0], faults)
        return cls(f"{len(faults)} structural problems; fix them all:\n" + "\n".join(f"  - {f}" for f in faults),
                   faults)


class ParameterError(NetdynError):
    """A symbol has no value at simulation time, or an unknown parameter was given.

    >>> import netdyn
    >>> from netdyn.components.electrical import Resistor, Capacitor
    >>> net = netdyn.Network()
    >>> _ = net.add(Resistor("R1", "a", "0", 1.0), Capacitor("C1", "a", "0", 1.0))
    >>> netdyn.simulate(net, (0, 1), params={"Z": 1})
    Traceback (most recent call last):
    ...
    netdyn.errors.ParameterError: unknown parameter 'Z'; the model's parameters are none
    """


class InvalidValueError(ElementError, ParameterError):
    """A value cannot be a parameter: NaN, infinite, complex, not a number, or not physical (negative mass).

    Both an :class:`ElementError` (raised by constructors) and a :class:`ParameterError`
    (raised for ``params=`` overrides and simulation arguments); the message names the element
    and the parameter.

    >>> from netdyn.components.electrical import Capacitor
    >>> Capacitor("C1", "a", "0", -1.0)
    Traceback (most recent call last):
    ...
    netdyn.errors.InvalidValueError: C1: C = -1.0 is not physical; give a positive value
    """


class InitialConditionError(NetdynError):
    """Initial values cannot be made consistent with the constraints.

    >>> import netdyn
    >>> x, = netdyn.coordinates("x,")
    >>> pinned = netdyn.LagrangianModel([x], T=x.diff(netdyn.t)**2/2, constraints=[x - 1])
    >>> netdyn.simulate(pinned, (0, 1), q0={"x": 0})
    Traceback (most recent call last):
    ...
    netdyn.errors.InitialConditionError: initial positions cannot satisfy constraint phi_1 (residual 1) with the given values {'x': 0.0}; change them, give fewer, or pass a closer guess=
    """


class SingularSystemError(NetdynError):
    """A singular configuration or a redundant constraint stopped the solve.

    Its subclass :class:`LockedMechanismError` is a mechanism that cannot move; the others name the time or
    the configuration (a change point where links align, a gain loop of controlled sources).

    >>> issubclass(LockedMechanismError, SingularSystemError)
    True
    """


class LoopClosureError(InitialConditionError):
    """A closed loop of a mechanism cannot be assembled; the message names its joints and bodies, the
    residual, and (for a loop of pins) the side lengths that make it impossible.

    >>> import netdyn
    >>> from netdyn.components.planar import RigidBody, Revolute
    >>> net = netdyn.Network("too short")
    >>> _ = net.add(RigidBody("a", 1.0, 0.1), RigidBody("b", 1.0, 0.1),
    ...             Revolute("O", "ground", (0, 0), "a", (-0.5, 0)), Revolute("P", "a", (0.5, 0), "b", (-0.5, 0)),
    ...             Revolute("Q", "b", (0.5, 0), "ground", (3.0, 0)))
    >>> try:
    ...     netdyn.simulate(net, (0, 1))
    ... except LoopClosureError as err:
    ...     print(str(err)[:120])
    initial positions: loop ground -O- a -P- b -Q- ground does not close (residual 0.333): its pin-to-pin sides are ground 3
    """


class LockedMechanismError(SingularSystemError):
    """A mechanism without a degree of freedom (its constraints fix every coordinate and none moves with
    time) was given to an integrator; the message names its bodies, joints and Grübler count.

    >>> import math, netdyn
    >>> from netdyn.components.planar import RigidBody, Revolute
    >>> net = netdyn.Network("triangle")
    >>> _ = net.add(RigidBody("a", 1.0, 0.1), RigidBody("b", 1.0, 0.1),
    ...             Revolute("O", "ground", (0, 0), "a", (-0.5, 0)), Revolute("P", "a", (0.5, 0), "b", (-0.5, 0)),
    ...             Revolute("Q", "b", (0.5, 0), "ground", (1.0, 0)))
    >>> h = math.sqrt(3) / 4
    >>> try:
    ...     netdyn.simulate(net, (0, 1), guess={"theta_a": math.pi / 3, "x_a": 0.25, "y_a": h,
    ...                                         "theta_b": -math.pi / 3, "x_b": 0.75, "y_b": h})
    ... except LockedMechanismError as err:
    ...     print(str(err)[:50])
    the mechanism 'triangle' cannot move: its 6 indepe
    """


class IntegrationError(NetdynError):
    """The integrator failed (step size underflow, convergence failure) or cannot be set up as asked.

    >>> import netdyn
    >>> x, = netdyn.coordinates("x,")
    >>> netdyn.simulate(netdyn.LagrangianModel([x], T=x.diff(netdyn.t)**2/2), (0, 1), solver="Euler")
    Traceback (most recent call last):
    ...
    netdyn.errors.IntegrationError: unknown solver 'Euler'; use one of ['DOP853', 'RK45', 'Radau']
    """


class ParseError(NetdynError):
    """A netlist or model file could not be read; the message gives the line.

    >>> import netdyn
    >>> netdyn.read_netlist("title\\nR1 a 0 1k\\nC1 a 0 1u\\nQ1 c b e qmod\\n")
    Traceback (most recent call last):
    ...
    netdyn.errors.ParseError: line 4: Q1: bipolar transistor elements are not supported (netdyn reads R, L, C, V, I, E, F, G, H, D, S, W, K and X)
    """

    def __init__(self, message: str, line: int | None = None) -> None:
        self.line = line
        super().__init__(f"line {line}: {message}" if line is not None else message)


class ExportError(NetdynError):
    """Equations cannot be exported in the requested format (unknown format or option, unprintable term), or a
    file cannot be written where asked (a path below a file, no permission: :mod:`netdyn.files`).

    >>> import netdyn
    >>> x, = netdyn.coordinates("x,")
    >>> netdyn.export_equations(netdyn.LagrangianModel([x], T=x.diff(netdyn.t)**2/2), "pdf")
    Traceback (most recent call last):
    ...
    netdyn.errors.ExportError: unknown export format 'pdf'; use one of ['c', 'json', 'latex', 'matrices', 'python', 'sympy']
    """


class OperatingPointError(NetdynError):
    """An operating point is not an equilibrium (or violates the constraints); the message says by how much.

    >>> import netdyn
    >>> x, = netdyn.coordinates("x,")
    >>> spring = netdyn.LagrangianModel([x], T=x.diff(netdyn.t)**2/2, V=x**2/2)
    >>> try:
    ...     netdyn.linearize(spring, {"x": 1.0})
    ... except OperatingPointError as err:
    ...     print(str(err)[:97])
    the operating point is not an equilibrium: the accelerations there are not zero: max |x_ddot| = 1
    """


class OptionError(NetdynError):
    """A keyword option was given that the chosen path cannot honour (``solver="RK45"`` with
    ``method="ida"``, ``formulation=`` with a model already formulated); the message names the option,
    says what the path does instead and which call honours it.

    >>> import netdyn
    >>> x, = netdyn.coordinates("x,")
    >>> model = netdyn.LagrangianModel([x], T=x.diff(netdyn.t)**2/2, V=x**2/2)
    >>> netdyn.simulate(model, (0, 1), q0={"x": 1}, method="ida", solver="RK45")
    Traceback (most recent call last):
    ...
    netdyn.errors.OptionError: solver='RK45' was given, but method='ida' integrates with IDA (BDF); solver= picks the Runge–Kutta method of method='projection' only: drop it or pass method='projection'
    """


class IdleFreedomWarning(UserWarning):
    """A freedom that moves no inertia and that the answer does not depend on (a thin rod's spin between
    two ball joints) was held, and is named.

    >>> issubclass(IdleFreedomWarning, UserWarning)
    True
    """


class OptionWarning(UserWarning):
    """A keyword option the path netdyn chose (``method="auto"``) does not use; the answer is unaffected
    (it is within the tolerance asked for), the option had no effect. The message names the option and
    the call that honours it.

    >>> import warnings, netdyn
    >>> from netdyn.components.electrical import VoltageSource, Resistor, Capacitor
    >>> net = netdyn.Network()
    >>> _ = net.add(VoltageSource("V1", "a", "0", 1.0), Resistor("R1", "a", "b", 1.0), Capacitor("C1", "b", "0", 1.0))
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     _ = netdyn.simulate(net, (0, 1), solver="RK45")      # auto picks the linear path: no solver there
    >>> caught[0].category.__name__, str(caught[0].message)[:58]
    ('OptionWarning', "solver='RK45' was given, but method='auto' chose 'linear',")
    """


class UnsavedError(NetdynError):
    """A quantity was read that the simulation did not keep: ``simulate(..., save=[...])`` (or a netlist's
    ``.save`` card, the command's ``--save``) keeps only the quantities named; the message says to add it.

    >>> import netdyn
    >>> from netdyn.components.electrical import VoltageSource, Resistor, Capacitor
    >>> net = netdyn.Network()
    >>> _ = net.add(VoltageSource("V1", "a", "0", 1.0), Resistor("R1", "a", "b", 1.0), Capacitor("C1", "b", "0", 1.0))
    >>> sol = netdyn.simulate(net, (0, 1), save=["v(b)"])
    >>> sol.current("R1")
    Traceback (most recent call last):
    ...
    netdyn.errors.UnsavedError: i(R1) was not saved (save=['v(b)']); add 'i(R1)' to save= (or the netlist's .save card, --save on the command line) to keep it
    """


class OutputWarning(UserWarning):
    """The outputs of a simulation were too large to keep in memory and stream to an HDF5 file instead
    (:mod:`netdyn.numerics.results.store`); the message says how large, where, and how to keep fewer.

    >>> issubclass(OutputWarning, UserWarning)
    True
    """
