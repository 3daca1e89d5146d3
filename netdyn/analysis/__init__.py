"""What is done with a model besides simulating it: equilibria and linearization (:mod:`.linearize`,
:mod:`.linear`), comparison and analogies (:mod:`.compare`, :mod:`.analog`), integrability of flow
constraints (:mod:`.integrability`), kinematics and inverse dynamics of linkages (:mod:`.kinematics`,
:mod:`.inverse`) and parameter sweeps (:mod:`.sweep`).
"""
