"""File formats: SPICE netlists in (:func:`read_netlist`) and out (:func:`write_netlist`, :func:`run_ngspice`).

>>> from netdyn.io import read_netlist
>>> sorted(read_netlist("divider\\nV1 1 0 10\\nR1 1 2 1k\\nR2 2 0 1k\\n").elements)
['R1', 'R2', 'V1']
"""
from .netlist import parse_value, read_netlist
from .spice import run_ngspice, spice_names, write_netlist

__all__ = ["read_netlist", "parse_value", "write_netlist", "run_ngspice", "spice_names"]
