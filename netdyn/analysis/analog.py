"""Analogous networks: a mechanical network as a circuit and back.

* ``kind="force-current"`` (mobility analogy): same graph, same nodes; force ↔
  current, velocity ↔ voltage; mass m ↔ capacitor C = m to ground, spring k ↔
  inductor L = 1/k, damper c ↔ resistor R = 1/c, force source ↔ current source,
  velocity source ↔ voltage source, lever/gear ↔ ideal transformer.
* ``kind="force-voltage"`` (impedance analogy): the planar *dual* graph
  (each mesh becomes a node, series ↔ parallel); force ↔ voltage, velocity ↔
  current; mass ↔ inductor L = m, spring ↔ capacitor C = 1/k, damper ↔
  resistor R = c. Computed as the dual of the force-current analogue.

Element names are kept, so the analogue of ``m1`` is the capacitor ``m1``.

>>> from netdyn import Network
>>> from netdyn.components.translational import Mass, Spring, Damper, Force
>>> net = Network("msd")
>>> _ = net.add(Mass("m1", "x", m=2.0), Spring("k1", "x", "0", k=8.0), Damper("c1", "x", "0", c=0.4),
...             Force("F1", "x", 1.0))
>>> sorted(type(e).__name__ for e in analog(net, "force-current").elements.values())
['Capacitor', 'CurrentSource', 'Inductor', 'Resistor']
>>> fv = analog(net, "force-voltage")
>>> fv["m1"].values["L"], fv["c1"].values["R"], len(fv.nodes)   # one mesh: a series RLC loop
(2.00000000000000, 0.400000000000000, 4)
"""
from __future__ import annotations

import networkx as nx

from netdyn.components import electrical, rotational, translational
from netdyn.components.base import AcrossSource, DisplacementSource, LinearLaw, ThroughSource, TwoPort
from netdyn.errors import ElementError, ModelError, TopologyError
from netdyn.graph.network import Network

KINDS = ("force-voltage", "force-current")
MECHANICAL = {"translational": translational, "rotational": rotational}
_MECH_NAMES = {"translational": ("Mass", "m", "Spring", "Damper", "Force", "VelocitySource", "Lever"),
               "rotational": ("Inertia", "J", "TorsionSpring", "RotationalDamper", "Torque",
                              "AngularVelocitySource", "Gear")}


def analog(network: Network, kind: str = "force-current", domain: str = "translational") -> Network:
    """The analogous ``Network``: mechanical → electrical, or electrical → mechanical (``domain`` of the result).

    >>> from netdyn import Network
    >>> from netdyn.components.translational import Mass, Spring
    >>> net = Network("mass on a spring")
    >>> _ = net.add(Mass("m1", "x", m=2.0), Spring("k1", "x", "0", k=8.0))
    >>> sorted(type(e).__name__ for e in analog(net).elements.values())     # force-current: C = m, L = 1/k
    ['Capacitor', 'Inductor']
    """
    if kind not in KINDS:
        raise ModelError(f"unknown analogy {kind!r}; use one of {KINDS}")
    domains = set(network.domains)
    if domains == {"electrical"}:
        if domain not in MECHANICAL:
            raise ModelError(f"unknown mechanical domain {domain!r}; use one of {sorted(MECHANICAL)}")
        source = dual(network) if kind == "force-voltage" else network
        return _to_mechanical(source, domain, f"{network.name} ({kind} analogue)")
    if domains and domains <= set(MECHANICAL):
        fc = _to_electrical(network, f"{network.name} ({kind} analogue)")
        return dual(fc, name=fc.name) if kind == "force-voltage" else fc
    raise ModelError(f"{network.name} mixes domains {sorted(domains)}; analog() converts a purely mechanical or "
                     "a purely electrical network")


def _coefficient(el):
    return el.coefficient(el.values)


def _to_electrical(net, name):
    out = Network(name)
    for el in net.elements.values():
        if isinstance(el, LinearLaw):
            (p,) = el.ports
            c = _coefficient(el)  # C-, L- or R-analogue coefficient in the mobility sense
            cls = {"through_storage": electrical.Capacitor, "across_storage": electrical.Inductor,
                   "dissipator": electrical.Resistor}[el.law]
            out.add(cls(el.name, p.a, p.b, c))
        elif isinstance(el, ThroughSource):
            (p,) = el.ports
            out.add(electrical.CurrentSource(el.name, p.a, p.b, el.values["value"]))
        elif isinstance(el, AcrossSource) and not isinstance(el, DisplacementSource):
            (p,) = el.ports
            out.add(electrical.VoltageSource(el.name, p.b, p.a, el.values["value"]))
        elif isinstance(el, TwoPort) and el.coupling == "transformer" and len(el.values) == 1:
            p1, p2 = el.ports
            out.add(electrical.IdealTransformer(el.name, p1.a, p1.b, p2.a, p2.b, el.values["ratio"]))
        else:
            raise ElementError(f"{el.name} ({type(el).__name__}) has no electrical analogue in the library; "
                               "analog() converts linear masses, springs, dampers, sources and levers/gears")
    return out


def _to_mechanical(net, domain, name):
    lib = MECHANICAL[domain]
    inertia, param, spring, damper, effort, flow, lever = (getattr(lib, n) if i != 1 else n
                                                           for i, n in enumerate(_MECH_NAMES[domain]))
    out = Network(name)
    for el in net.elements.values():
        if isinstance(el, LinearLaw):
            (p,) = el.ports
            c = _coefficient(el)
            if el.law == "through_storage":
                if "0" not in (p.a, p.b):
                    raise ElementError(
                        f"{el.name} lies between nodes {p.a!r} and {p.b!r}; its analogue would be a mass between two "
                        "moving points, but a mass is referenced to the inertial frame; ground one terminal or use "
                        "the other analogy")
                node = p.a if p.b == "0" else p.b
                out.add(inertia(el.name, node, **{param: c}))
            elif el.law == "across_storage":
                out.add(spring(el.name, p.a, p.b, 1 / c))
            else:
                out.add(damper(el.name, p.a, p.b, 1 / c))
        elif isinstance(el, ThroughSource):
            (p,) = el.ports
            out.add(effort(el.name, p.b, el.values["value"], reference=p.a))
        elif isinstance(el, AcrossSource) and not isinstance(el, DisplacementSource):
            (p,) = el.ports
            out.add(flow(el.name, p.b, el.values["value"], reference=p.a))
        elif isinstance(el, TwoPort) and el.coupling == "transformer":
            p1, p2 = el.ports
            out.add(lever(el.name, p1.a, p2.a, el.values["ratio"], reference_a=p1.b, reference_b=p2.b))
        else:
            raise ElementError(f"{el.name} ({type(el).__name__}) has no mechanical analogue in the library")
    return out


def dual(network, name=None):
    """The planar dual of a circuit of two-terminal linear elements and sources.

    Every mesh becomes a node (the largest face is ground ``"0"``, the others
    ``f1, f2, ...``); an element between two meshes becomes its dual between the
    two nodes: inductor L ↔ capacitor C = L, resistor R ↔ resistor 1/R,
    voltage source ↔ current source of the same value.
    """
    half, elements = _embedding(network)
    faces, face_of = [], {}
    for he in half.edges():
        if he in face_of:
            continue
        marked = set()
        nodes = half.traverse_face(*he, mark_half_edges=marked)
        for m in marked:
            face_of[m] = len(faces)
        faces.append(nodes)
    ground = max(range(len(faces)), key=lambda k: len(faces[k]))
    others = iter(range(1, len(faces)))
    label = {k: "0" if k == ground else f"f{next(others)}" for k in range(len(faces))}
    out = Network(name or f"{network.name} (dual)")
    for el, (u, mid) in elements:
        right, left = label[face_of[(u, mid)]], label[face_of[(mid, u)]]
        if right == left:
            raise TopologyError(f"{el.name} is a bridge (it separates the network); it has no dual element")
        if isinstance(el, LinearLaw):
            c = _coefficient(el)
            if el.law == "through_storage":
                out.add(electrical.Inductor(el.name, right, left, c))
            elif el.law == "across_storage":
                out.add(electrical.Capacitor(el.name, right, left, c))
            else:
                out.add(electrical.Resistor(el.name, right, left, 1 / c))
        elif isinstance(el, AcrossSource) and not isinstance(el, DisplacementSource):
            out.add(electrical.CurrentSource(el.name, left, right, el.values["value"]))
        elif isinstance(el, ThroughSource):
            out.add(electrical.VoltageSource(el.name, right, left, el.values["value"]))
        else:
            raise ElementError(f"{el.name} ({type(el).__name__}) has no dual in the library (only two-terminal "
                               "linear elements and sources have)")
    return out


def _embedding(network):
    """A planar embedding of the network with every branch subdivided (so parallel branches are simple edges)."""
    g = nx.Graph()
    elements = []
    for u, v, key, d in network.graph.edges(keys=True, data=True):
        el = d["element"]
        if len(el.ports) != 1:
            raise ElementError(f"{el.name} has {len(el.ports)} ports; the dual is defined for two-terminal elements")
        mid = ("branch", key)
        g.add_edge(u, mid)
        g.add_edge(mid, v)
        elements.append((el, (u, mid)))
    planar, emb = nx.check_planarity(g)
    if not planar:
        raise TopologyError(f"{network.name} is not planar, so it has no dual network: no force-voltage analogue; "
                            "use kind='force-current'")
    return emb, elements
