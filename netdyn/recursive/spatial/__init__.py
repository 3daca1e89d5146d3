"""Spatial networks on the recursive engine: the tree (:mod:`.tree`), its loads (:mod:`.loads`), inverse
dynamics (:mod:`.inverse`) and numeric linearization (:mod:`.linear`).

``netdyn.recursive.spatial.tree_from_spatial_network`` is the 0.2 name of :func:`.tree.tree_from_spatial_network`.
"""
from .tree import SpatialTree, coordinates_from_poses, is_ball, joint_steps, tree_from_spatial_network

__all__ = ["SpatialTree", "tree_from_spatial_network", "coordinates_from_poses", "is_ball", "joint_steps"]
