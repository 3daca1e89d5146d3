"""The element library of netdyn, one module a domain.

``electrical``, ``translational``, ``rotational`` (and the modules added by
later layers) each state their sign conventions in their docstring.
"""
from . import base, electrical, nonholonomic, planar, rotational, switch, transducers, translational  # noqa: F401
