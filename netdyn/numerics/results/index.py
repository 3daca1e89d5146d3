"""``ResultIndex``: where every named quantity of a solution lives, built once so that each read is O(1).

A solution answers ``sol["x"]``, ``sol.voltage(node)``, ``sol.current(element)`` and ``sol.series(spec)``
by name. Finding what a name stands for — a coordinate's row, a multiplier's, an element's ports, the
ports on the tree path from ground to a node, every element acting on a port (a mutual inductance
acts on its coupled inductors') — takes a walk over the network. The index makes those walks once per
solution, on the first read, in time linear in the network; afterwards a read costs only its own
output (its path and port rows times the output times), whatever the network's size.

It is built from either source a solution has: a network model's metadata (:meth:`ResultIndex.of_model`,
the symbolic paths) or the network and its stamp (:meth:`ResultIndex.of_network`, the linear and circuit
paths, which never build the symbolic model for a read).

>>> import netdyn
>>> from netdyn.components.electrical import VoltageSource, Resistor, Capacitor
>>> net = netdyn.Network()
>>> _ = net.add(VoltageSource("V1", "a", "0", 1.0), Resistor("R1", "a", "b", 1.0), Capacitor("C1", "b", "0", 1.0))
>>> index = ResultIndex.of_model(net.model())
>>> index.nodes["b"]                      # potential of b = -(sign x across) summed along the path from ground
('electrical', (('C1', 0, -1),))
>>> index.sharing[("C1", 0)], index.domain("R1"), index.coordinates["q_R1"]
((('C1', 0),), 'electrical', 0)
"""
from __future__ import annotations

from collections.abc import Mapping

from netdyn.components.base import DOMAINS, port_key
from netdyn.graph.gcpause import paused_gc


class ResultIndex:
    """Names of a solution mapped to rows, made once (O(network)) and read in O(1).

    Attributes
    ----------
    coordinates : dict — coordinate name -> row of ``q``/``f``/``acc``
    multipliers : dict — multiplier name -> ``("lam" | "mu", row)``
    elements : dict — element name -> element, for the elements with port quantities (network order)
    nodes : dict — node -> ``(domain, ((element, port, sign), ...))``: the ports on the tree path from
        ground; the node's across value (potential) is ``−Σ sign · across(element, port)``
    sharing : dict — ``(element, port)`` -> ``((element, slot), ...)``: every element acting on that port,
        in network order (its effort is their sum)
    rows : dict — ``(element, port, "through" | "across")`` -> the port quantity's rows over the solution's
        blocks, filled on first read by the solution class that knows them (the stamp's terms on the
        linear and circuit paths, :func:`netdyn.numerics.circuit.stamp.port_terms`)
    symbols : dict or None — internal symbol -> ``(block, row)`` for ``Solution.evaluate``, made on its first use
    """

    def __init__(self, coordinates, multipliers, elements, keys, node_paths, port_of):
        self.coordinates = {name: i for i, name in enumerate(coordinates)}
        self.multipliers = dict(multipliers)
        self.elements = dict(elements)
        slots = {}
        for name, ks in keys.items():
            for slot, key in enumerate(ks):
                slots.setdefault(key, []).append((name, slot))
        self.sharing = {port_of[key]: tuple(on) for key, on in slots.items() if key in port_of}
        self.nodes = _NodePaths(node_paths, port_of)
        self.symbols = None  # internal symbol -> (block, row), made by the symbolic solution's first evaluation
        self.rows = {}  # (element, port, "through" | "across") -> its rows, as the solution class writes them

    @classmethod
    @paused_gc()  # many small containers, none garbage: no cyclic collection while they are made
    def of_model(cls, model):
        """The index of a model's solution (the node paths and ports the network assembly recorded)."""
        md = model.metadata
        info = md.get("elements", {})
        multipliers = [(s.func.__name__, ("lam", i)) for i, s in enumerate(model.lambdas)] + \
            [(s.func.__name__, ("mu", i)) for i, s in enumerate(model.mus)]
        return cls(model.coordinate_names, multipliers, {n: e["element"] for n, e in info.items()},
                   {n: e["keys"] for n, e in info.items()}, md.get("node_paths", {}), md.get("port_of", {}))

    @classmethod
    @paused_gc()
    def of_network(cls, net, coordinates, multipliers, ports):
        """The index of a numeric-path solution: the network's elements and node paths (one tree walk per
        domain, here), ``ports`` the stamp's ``{element: [(port key, combination), ...]}``."""
        from netdyn.graph import topology
        elements = getattr(net, "elements", None)
        if not isinstance(elements, dict):  # a bond graph names no network elements and nodes
            return cls(coordinates, [(m, ("mu", i)) for i, m in enumerate(multipliers)], {}, {}, {}, {})
        port_of = {port_key(el, k): (nm, k) for nm, el in elements.items() for k in range(len(el.ports))}
        paths = {d: topology.tree_paths(net.domain_graph(d), "0") for d in net.domains if d in DOMAINS}
        keys = getattr(ports, "keys_of", None)  # the stamp's lazy ports: their keys, no combination made
        if keys is None:
            keys = {n: [k for k, _ in p] for n, p in ports.items()}
        return cls(coordinates, [(m, ("mu", i)) for i, m in enumerate(multipliers)], elements, keys, paths, port_of)

    def domain(self, name):
        """The domain of an element's first port or of a node, or ``None``."""
        el = self.elements.get(name)
        if el is not None:
            return el.ports[0].domain if el.ports else None
        node = self.nodes.get(name)
        return node[0] if node is not None else None

    def element(self, name):
        """The element called ``name`` that has ports of its own (``KeyError`` naming why not)."""
        el = self.elements.get(name)
        if el is None:
            raise KeyError(f"no element named {name!r} in this network")
        if el.couples and not el.ports:
            raise KeyError(f"{name} has no port of its own; ask for the coupled elements {el.couples}")
        return el

    def quantity_names(self):
        """The series names of every node's across value, ``v(node)`` (ground left out), and every element's
        across and through values, ``v(name)`` and ``i(name)`` (``f(name)`` for a force or torque), in order."""
        out = [f"v({node})" for node in self.nodes if node != "0" and node not in self.elements]
        for name, el in self.elements.items():
            if el.ports:
                out += [f"v({name})", f"{'i' if el.ports[0].domain == 'electrical' else 'f'}({name})"]
        return out


class _NodePaths(Mapping):
    """Node -> ``(domain, ((element, port, sign), ...))``, each path made when it is first read (a series
    chain's paths add up to N²/2 ports; the mapping itself is made in one pass over the nodes)."""

    def __init__(self, node_paths, port_of):
        self._paths, self._port_of, self._made = node_paths, port_of, {}
        self._domain = {}
        for domain, paths in node_paths.items():
            for node in paths:
                self._domain.setdefault(node, domain)  # the first domain that has the node answers for it

    def __getitem__(self, node):
        made = self._made.get(node)
        if made is None:
            domain = self._domain[node]
            port_of = self._port_of
            made = self._made[node] = (domain, tuple((*port_of[key], sign) for key, sign in self._paths[domain][node]))
        return made

    def __iter__(self):
        return iter(self._domain)

    def __len__(self):
        return len(self._domain)

    def __contains__(self, node):
        return node in self._domain

