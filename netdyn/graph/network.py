"""``Network``: elements on a networkx graph.

Nodes are terminals (ground is ``"0"``); every port of an element is an edge
from its first terminal to its second, keyed by ``"<element>"`` (or
``"<element>:<k>"`` for the k-th port of a multi-port element), with the element
object in the edge data. ``net.graph`` is a plain ``networkx.MultiDiGraph``.

>>> from netdyn import Network
>>> from netdyn.components.electrical import VoltageSource, Resistor, Capacitor
>>> net = Network()
>>> _ = net.add(VoltageSource("V1", "in", "0", 1.0), Resistor("R1", "in", "out", 1e3),
...             Capacitor("C1", "out", "0", 1e-6))
>>> sorted(net.graph.nodes)
['0', 'in', 'out']
"""
from __future__ import annotations

import networkx as nx

from netdyn.components.base import port_key
from netdyn.graph.assemble import assemble, structural_check
from netdyn.graph.assembly import Assembly, checked, checked_assembly
from netdyn.graph.gcpause import paused_gc
from netdyn.errors import ElementError, ModelError, TopologyError

from typing import TYPE_CHECKING, Any, TypeVar, overload

if TYPE_CHECKING:  # names for the hints only (annotations are not evaluated)
    from netdyn.hints import Formulation, Initial
    from collections.abc import Sequence
    from netdyn.lagrange.model import LagrangianModel


#: an element or body given to :meth:`Network.add` (the one returned)
E = TypeVar("E")


_DOMAIN_SETS = {}


def _domain_set(domains):
    """The shared frozenset of these domains (a 10^5-node circuit keeps one, not 10^5 sets)."""
    return _DOMAIN_SETS.setdefault(frozenset(domains), frozenset(domains))


class Network:
    """A thin owner of a ``networkx.MultiDiGraph`` of elements; ``model()`` assembles its
    :class:`~netdyn.lagrange.model.LagrangianModel` in a formulation (loop charges by default for circuits,
    ``"branch"``, ``"node"``; ``"absolute"``/``"relative"`` for mechanisms).

    >>> from netdyn.components.electrical import VoltageSource, Resistor, Capacitor
    >>> net = Network("rc")
    >>> _ = net.add(VoltageSource("V1", "in", "0", 1.0), Resistor("R1", "in", "out", 1e3),
    ...             Capacitor("C1", "out", "0", 1e-6))
    >>> net.model().coordinate_names, net.model(formulation="node").coordinate_names
    (['q_R1'], ['phi_in', 'phi_out'])
    """

    def __init__(self, name: str = "network") -> None:
        self.name = name
        self.graph = nx.MultiDiGraph(name=name)
        self.elements = {}
        self.bodies = {}  # planar/spatial bodies (graph nodes with coordinates of their own)
        self._version = 0  # bumped by every add/remove: the key of the derived-graph cache
        self._derived = {}  # (what, version) -> graph derived from self.graph (see domain_graph)
        self._node_domains = {}  # node -> the set of domains of its ports (the graph node's "domains")
        self._ports_per_domain = {}  # domain -> number of ports in it (see `domains`)
        self._assembly = Assembly()  # how it assembles: guess, q0, f0 (netdyn.graph.assembly)

    @overload
    def add(self) -> None: ...
    @overload
    def add(self, *elements: E) -> E: ...

    def add(self, *elements: Any) -> Any:
        """Add elements; returns the last one added (so ``r = net.add(Resistor(...))`` works)."""
        last = None
        self._version += 1
        graph, node_domains, counts = self.graph, self._node_domains, self._ports_per_domain
        for el in elements:
            if getattr(el, "is_body", False):
                self._add_body(el)
                last = el
                continue
            name = el.name
            if name in self.elements or name in self.bodies:
                raise ElementError(f"duplicate name {name!r}: every element needs its own name")
            ports = el.ports
            for port in ports:
                for node in (port.a, port.b):
                    doms = node_domains.get(node)
                    if doms and port.domain not in doms and node != "0" and node not in self.bodies:
                        raise ElementError(
                            f"{name}: node {node!r} already belongs to the {sorted(doms)[0]} domain but "
                            f"{name} is {port.domain}; give it a node of its own and couple the domains "
                            "with a transducer")
            for k, port in enumerate(ports):
                domain = port.domain
                graph.add_edge(port.a, port.b, key=port_key(el, k), element=el, port=k, domain=domain)
                for node in (port.a, port.b):
                    doms = node_domains.get(node)
                    if doms is None or domain not in doms:  # one shared frozenset a combination, not a set a node
                        doms = _domain_set((doms or frozenset()) | {domain})
                        node_domains[node] = graph.nodes[node]["domains"] = doms
                counts[domain] = counts.get(domain, 0) + 1
            self.elements[name] = el
            last = el
        return last

    def _add_body(self, body):
        if body.name in self.elements or body.name in self.bodies:
            raise ElementError(f"duplicate name {body.name!r}: every element needs its own name")
        self.bodies[body.name] = body
        self._version += 1
        doms = _domain_set(self._node_domains.get(body.name, frozenset()) | {getattr(body, "domain", "planar")})
        self._node_domains[body.name] = doms
        self.graph.add_node(body.name, body=body, domains=doms)

    def __getitem__(self, name):
        if name in self.elements:
            return self.elements[name]
        if name in self.bodies:
            return self.bodies[name]
        raise KeyError(f"no element or body named {name!r}")

    def __contains__(self, name):
        return name in self.elements or name in self.bodies

    def remove(self, name: str) -> None:
        """Remove an element by name."""
        el = self.elements.pop(name)
        self._version += 1
        for k, port in enumerate(el.ports):
            self.graph.remove_edge(port.a, port.b, key=port_key(el, k))
            self._ports_per_domain[port.domain] -= 1
        for n in [n for n in self.graph.nodes if self.graph.degree(n) == 0 and n not in self.bodies]:
            self.graph.remove_node(n)
            self._node_domains.pop(n, None)

    @property
    def assembly(self) -> Assembly:
        """How the network assembles: an :class:`~netdyn.graph.assembly.Assembly` with ``guess`` (starting
        values of the position solve: which branch a linkage starts on), ``q0`` and ``f0`` (initial values),
        each ``None`` unless set. ``simulate`` and the analyses use them where the caller gives none;
        model files save them. Assigning an ``Assembly`` checks it against the network.

        >>> from netdyn.linkages import four_bar
        >>> round(four_bar().assembly.guess["theta_rod"], 4)
        0.7476
        """
        return self._assembly

    @assembly.setter
    def assembly(self, value):
        self._assembly = checked_assembly(self, Assembly() if value is None else value)

    def set_assembly(self, guess: Initial | None = None, q0: Initial | None = None,
                     f0: Initial | None = None) -> Assembly:
        """Store how the network assembles; returns the :class:`~netdyn.graph.assembly.Assembly`.

        Each part given replaces the stored one (``{}`` clears it); a part not given (``None``) is kept, so
        ``four_bar().set_assembly(q0={"O": 0.4})`` keeps the linkage's guess. Names must be coordinates or
        joint coordinates of the network (``x_rod``, ``theta_rod``, ``"O"``, ``theta_O``; ``f0`` also
        ``<name>_dot``), values finite numbers: anything else is a :class:`~netdyn.errors.NetdynError`.

        >>> from netdyn.components.planar import RigidBody, Revolute
        >>> net = Network("pendulum")
        >>> _ = net.add(RigidBody("bar", 1.0, 0.1), Revolute("O", "ground", (0, 0), "bar", (-0.5, 0)))
        >>> net.set_assembly(q0={"O": -1.2}, f0={"O_dot": 0.5})
        Assembly(q0={'O': -1.2}, f0={'O_dot': 0.5})
        >>> net.set_assembly(q0={"theta_arm": 0.3})
        Traceback (most recent call last):
        ...
        netdyn.errors.ModelError: assembly q0: 'theta_arm' is not a coordinate or joint coordinate of 'pendulum' (bodies: bar; joints: O); body coordinates are x_<body>, y_<body>, theta_<body> (spatial: x_, y_, z_, e0_..e3_), joint coordinates <joint>, theta_<joint>, s_<joint>
        """
        parts = {part: checked(self, part, values) for part, values in (("guess", guess), ("q0", q0), ("f0", f0))}
        self._assembly = self._assembly.replace(**parts)
        return self._assembly

    @property
    def nodes(self) -> list[Any]:
        return list(self.graph.nodes)

    def domain_graph(self, domain: str) -> nx.MultiDiGraph:
        """The sub-multigraph of one domain's ports (edges keyed by port key).

        Built once per state of the network (in bulk) and shared: ``add``/``remove`` invalidate it,
        and callers must not modify it (copy it first). A network with ports in one domain only (and no
        bodies) answers with its own graph: no copy of every edge.

        >>> from netdyn.components.electrical import Resistor
        >>> net = Network()
        >>> _ = net.add(Resistor("R1", "a", "0", 1.0))
        >>> net.domain_graph("electrical") is net.domain_graph("electrical")
        True
        """
        key = ("domain", domain, self._version, len(self.graph))
        g = self._derived.get(key)
        if g is None and not self.bodies and self.domains == [domain]:
            return self.graph  # every port is in this domain: the graph itself, not a copy of every edge
        if g is None:
            g = nx.MultiDiGraph()
            g.add_edges_from((u, v, k, d) for u, v, k, d in self.graph.edges(keys=True, data=True)
                             if d["domain"] == domain)
            self._derived = {k: v for k, v in self._derived.items() if k[2:] == key[2:]}
            self._derived[key] = g
        return g

    @property
    def domains(self) -> list[str]:
        """The domains that have ports, sorted (counted as elements are added and removed)."""
        return sorted(d for d, count in self._ports_per_domain.items() if count)

    def model(self, formulation: Formulation = None, symbolic: bool | str = False, check: bool = True,
              cut: Sequence[str] | None = None) -> LagrangianModel:
        """Assemble the network's :class:`~netdyn.lagrange.model.LagrangianModel`.

        Parameters
        ----------
        formulation : str or dict, optional
            Which coordinates, for every domain (a string) or per domain (a dict such as
            ``{"electrical": "branch", "translational": "node", "planar": "relative"}``):

            * ``"loop"`` (default for circuits) — one charge per fundamental loop of a normal spanning
              tree: KCL holds exactly, no flow constraints;
            * ``"branch"`` — one charge per element, KCL as flow constraints with multipliers μ (the node
              voltages): the book's Example 4.4;
            * ``"node"`` (default for 1-D mechanical domains) — node fluxes / positions / angles, the dual;
            * planar bodies: ``"absolute"`` (default; x, y, θ of every body, joints as constraints) or
              ``"relative"`` (joint coordinates on a spanning tree, cut joints close the loops).
        symbolic : bool or "params"
            Replace numeric element values by symbols (``R1``, ``<element>_<parameter>``), the numbers
            becoming default parameter values (for sweeps and printed equations). Values a netlist wrote
            as ``{expressions}`` of ``.param`` names (``net.value_expressions``) become those expressions,
            the ``.param`` values their defaults; ``"params"`` does only that (what exports use).
        check : bool
            Run the structural checks first (floating nodes, source loops, ...).
        cut : list of str, optional
            Planar joints the relative formulation cuts (the rest of the tree follows the rule of
            :func:`netdyn.graph.planar.spanning_tree`).

        Returns
        -------
        LagrangianModel

        >>> from netdyn.components.electrical import VoltageSource, Resistor, Capacitor
        >>> net = Network()
        >>> _ = net.add(VoltageSource("V1", "a", "0", 1.0), Resistor("R1", "a", "b", 1.0), Capacitor("C1", "b", "0", 1.0))
        >>> net.model(formulation="branch").coordinate_names
        ['q_V1', 'q_R1', 'q_C1']
        """
        with paused_gc():
            if cut is None:
                return assemble(self, formulation=formulation, symbolic=symbolic, check=check)
            return assemble(self, formulation=formulation, symbolic=symbolic, check=check, cut=cut)

    def check(self) -> None:
        """Run the structural checks; raises a :class:`~netdyn.errors.TopologyError` on the first problem."""
        structural_check(self)

    def __repr__(self):
        return f"Network({self.name!r}: {len(self.elements)} elements, {self.graph.number_of_nodes()} nodes)"


__all__ = ["Network", "TopologyError"]


def as_model(system, formulation=None):
    """A ``LagrangianModel`` from a model or a :class:`Network` (assembled in ``formulation``).

    >>> from netdyn.components.electrical import Resistor, Capacitor
    >>> net = Network()
    >>> _ = net.add(Resistor("R1", "a", "0", 1.0), Capacitor("C1", "a", "0", 1.0))
    >>> as_model(net).coordinate_names
    ['q_R1']
    """
    if hasattr(system, "derive"):
        return system
    if hasattr(system, "model"):
        if getattr(system, "value_expressions", None):  # a netlist's .param names stay parameters
            return system.model(formulation=formulation, symbolic="params")
        return system.model(formulation=formulation)
    raise ModelError(f"expected a LagrangianModel or a Network, got {type(system).__name__}")
