"""Networks and their formulations: the ``Network`` (a networkx MultiDiGraph of elements), pure graph
algorithms (:mod:`.topology`), and the assembly of a network into a ``LagrangianModel`` — circuits and
1-D networks in branch, loop or node coordinates (:mod:`.assemble`), planar linkages in absolute or
relative coordinates (:mod:`.planar`).

A new formulation or a new kind of body goes here; a new element type goes in ``netdyn.components``.
"""
