"""The one family of errors netdyn raises.

Every error names the element, node, coordinate or parameter at fault and says
what to do about it.

>>> from netdyn.errors import NetdynError, TopologyError
>>> issubclass(TopologyError, NetdynError)
True
"""


class NetdynError(Exception):
    """Base class of every error netdyn raises on bad input or a failed solve."""


class ModelError(NetdynError):
    """A model (hand-typed or assembled) is malformed: unknown coordinate, non-Pfaffian flow constraint, ..."""


class ElementError(NetdynError):
    """An element was given bad values (negative inductance, shorted terminals, duplicate name, ...)."""


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

    def __init__(self, message, faults=None):
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
    """A symbol has no value at simulation time, or an unknown parameter was given."""


class InvalidValueError(ElementError, ParameterError):
    """A value cannot be a parameter: NaN, infinite, complex, not a number, or not physical (negative mass).

    Both an :class:`ElementError` (raised by constructors) and a :class:`ParameterError`
    (raised for ``params=`` overrides and simulation arguments); the message names the element
    and the parameter.
    """


class InitialConditionError(NetdynError):
    """Initial values cannot be made consistent with the constraints."""


class SingularSystemError(NetdynError):
    """A singular configuration or a redundant constraint stopped the solve."""


class LoopClosureError(InitialConditionError):
    """A closed loop of a mechanism cannot be assembled; the message names its joints and bodies, the
    residual, and (for a loop of pins) the side lengths that make it impossible."""


class LockedMechanismError(SingularSystemError):
    """A mechanism without a degree of freedom (its constraints fix every coordinate and none moves with
    time) was given to an integrator; the message names its bodies, joints and Grübler count."""


class IntegrationError(NetdynError):
    """The integrator failed (step size underflow, convergence failure)."""


class ParseError(NetdynError):
    """A netlist or model file could not be read; the message gives the line."""

    def __init__(self, message, line=None):
        self.line = line
        super().__init__(f"line {line}: {message}" if line is not None else message)


class ExportError(NetdynError):
    """Equations cannot be exported in the requested format (unknown format or option, unprintable term)."""


class OperatingPointError(NetdynError):
    """An operating point is not an equilibrium (or violates the constraints); the message says by how much."""


class OptionError(NetdynError):
    """A keyword option was given that the chosen path cannot honour (``solver="RK45"`` with
    ``method="ida"``, ``formulation=`` with a model already formulated); the message names the option,
    says what the path does instead and which call honours it."""


class OptionWarning(UserWarning):
    """A keyword option the path netdyn chose (``method="auto"``) does not use; the answer is unaffected
    (it is within the tolerance asked for), the option had no effect. The message names the option and
    the call that honours it."""
