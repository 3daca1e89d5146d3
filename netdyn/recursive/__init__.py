"""Recursive (O(n)) dynamics of kinematic trees and closed chains: a numeric layer.

* :class:`TreeModel` / :class:`TreeData` — the constant tree and its reusable workspace;
* :func:`rnea`, :func:`aba`, :func:`crba`, :func:`forward_kinematics`, :func:`energy` —
  compiled recursive algorithms (numba), with a numpy reference in :mod:`netdyn.recursive.reference`;
* :mod:`netdyn.recursive.constraints` — the cut joints' constraint rows, Jacobian, bias and reactions
  (compiled in :mod:`netdyn.recursive.cut_kernels`);
* :mod:`netdyn.recursive.closed` — closed-chain kinematics, DeNOC inverse dynamics, forward dynamics;
* :mod:`netdyn.recursive.inverse` — inverse dynamics of a planar network (``netdyn.inverse_dynamics``);
* :mod:`netdyn.recursive.planar` — a :class:`TreeModel` from a planar network;
* :mod:`netdyn.recursive.integrate` — time integration in joint coordinates;
  :mod:`netdyn.recursive.joint_space` — a planar network integrated that way.
"""
from .algorithms import aba, bias_forces, com_motion, crba, energy, forward_kinematics, rnea
from .model import CutJoint, TreeData, TreeModel

__all__ = ["TreeModel", "TreeData", "CutJoint", "rnea", "aba", "crba", "bias_forces", "forward_kinematics",
           "energy", "com_motion"]
