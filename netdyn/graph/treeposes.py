"""The bodies' poses of the relative formulation, each written when first read.

A body's pose in the relative formulation is its parent's pose moved by the tree joint between them
(``Joint.child_pose``), so the pose of the k-th link of a chain sums k joints' terms: writing every pose
costs n² in symbols. :class:`TreePoses` is a read-only mapping body → ``(x, y, theta)`` that writes a
pose (and the poses above it that are still unwritten) on first access and keeps it; the expressions are
those an eager walk down the tree writes. Membership, length and iteration write nothing.

>>> from netdyn import Network
>>> from netdyn.components.planar import RigidBody, Revolute
>>> net = Network()
>>> _ = net.add(RigidBody("a", 1, 0.1), RigidBody("b", 1, 0.1), Revolute("A", "ground", (0, 0), "a", (-0.5, 0)),
...             Revolute("B", "a", (0.5, 0), "b", (-0.5, 0)))
>>> poses = net.model(formulation="relative").metadata["planar"].poses
>>> list(poses), sorted(poses.written)
(['a', 'b'], [])
>>> poses["b"][2], sorted(poses.written)
(theta_A(t) + theta_B(t), ['a', 'b'])
"""
from __future__ import annotations

from collections.abc import Mapping

from netdyn.components.planar import GROUND_POSE


class TreePoses(Mapping):
    """Body → pose, written on first read. ``order`` lists the bodies; ``fixed`` maps bodies with their own
    coordinates to their poses; ``links`` maps every other body to ``(joint, parent, qs, values, parent_is_a)``
    (the arguments of ``joint.child_pose``, the parent by name, ``"0"`` for ground)."""

    def __init__(self, order, fixed, links):
        self._order = list(order)
        self._poses = dict(fixed)
        self._links = dict(links)
        self.written = set()  # the bodies whose pose has been written from the tree

    def __getitem__(self, body):
        if body in self._poses:
            return self._poses[body]
        if body not in self._links:
            raise KeyError(body)
        chain = []
        while body != "0" and body not in self._poses:  # up to ground or a written pose (iterative: deep chains)
            chain.append(body)
            body = self._links[body][1]
        for b in reversed(chain):
            joint, parent, qs, values, parent_is_a = self._links[b]
            base = GROUND_POSE if parent == "0" else self._poses[parent]
            self._poses[b] = tuple(joint.child_pose(base, qs, values, parent_is_a))
            self.written.add(b)
        return self._poses[chain[0]]

    def __contains__(self, body):
        return body in self._poses or body in self._links

    def __iter__(self):
        return iter(self._order)

    def __len__(self):
        return len(self._order)

    def angles(self):
        """A mapping body → angle, written (with the pose) on first read."""
        return _Angles(self)

    def __repr__(self):
        return f"TreePoses({len(self)} bodies, {len(self.written)} written from the tree)"


class _Angles(Mapping):
    def __init__(self, poses):
        self._poses = poses

    def __getitem__(self, body):
        return self._poses[body][2]

    def __contains__(self, body):
        return body in self._poses

    def __iter__(self):
        return iter(self._poses)

    def __len__(self):
        return len(self._poses)
