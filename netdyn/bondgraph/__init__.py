"""Bond graphs: a second front end into the same energy engine.

``BondGraph`` (elements as nodes, bonds as directed edges of a networkx graph),
SCAP causality analysis (:mod:`~netdyn.bondgraph.causality`), conversion into a
``LagrangianModel`` and explicit state equations (:mod:`~netdyn.bondgraph.convert`),
conversion to and from networks (:mod:`~netdyn.bondgraph.network`), drawing
(:mod:`~netdyn.bondgraph.draw`) and a file format (:mod:`~netdyn.bondgraph.fileformat`).

>>> from netdyn.bondgraph import BondGraph
>>> BondGraph("empty")
BondGraph('empty': 0 elements, 0 bonds)
"""
from netdyn.bondgraph.graph import BondGraph
from netdyn.bondgraph.causality import Causality, CausalConflict, assign_causality
from netdyn.bondgraph.laws.equations import StateEquations, state_equations
from netdyn.bondgraph.convert import to_model
from netdyn.bondgraph.network import simplify_junctions, to_bond_graph, to_network
from netdyn.bondgraph.fileformat import load_bond_graph, save_bond_graph

__all__ = ["BondGraph", "Causality", "CausalConflict", "assign_causality", "StateEquations", "state_equations",
           "to_model", "to_bond_graph", "to_network", "simplify_junctions", "load_bond_graph", "save_bond_graph"]
