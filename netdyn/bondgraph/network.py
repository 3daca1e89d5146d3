"""Networks to bond graphs and back.

:func:`to_bond_graph` is the standard construction: in a domain whose across
variable is the effort (electrical: voltage) every node is a 0-junction and
every element port a 1-junction; in a domain whose across variable is the flow
(translational, rotational: velocity) every node is a 1-junction and every
port a 0-junction. Elements hang on their port junctions, ground is removed,
then trivial junctions (two bonds, one in and one out) are replaced by a bond
and bonded junctions of one kind merged. Linear elements become ``C``/``I``/``R``
(a mass is an ``I``, a spring a ``C`` of compliance 1/k, a damper an ``R`` of
resistance c), sources ``Se``/``Sf``, transformers and transducers ``TF``/``GY``;
multiport storage (coupled inductors, electrostatic and electromagnetic
transducers) becomes a ``field`` element carrying the network element itself,
so the bond graph's model is the network's model, term for term.

:func:`to_network` goes back where a network exists: each 0-junction (electrical)
or 1-junction (mechanical) a node, each junction of the other kind a series
branch between at most two nodes.

>>> import netdyn
>>> from netdyn.components.electrical import VoltageSource, Resistor, Capacitor
>>> net = netdyn.Network("RC")
>>> _ = net.add(VoltageSource("V1", "in", "0", 1.0), Resistor("R1", "in", "out", 1.0), Capacitor("C1", "out", "0", 1.0))
>>> bg = to_bond_graph(net)
>>> sorted((bg.kind(n), n) for n in bg.elements)
[('1', '1_R1'), ('C', 'C1'), ('R', 'R1'), ('Se', 'V1')]
"""
from __future__ import annotations

import sympy as sp

from netdyn.bondgraph.graph import BondGraph
from netdyn.bondgraph.kinds import JUNCTIONS, F, Q
from netdyn.components import electrical, rotational, translational
from netdyn.components.base import (ACROSS, THROUGH, AcrossSource, DisplacementSource, EnergyLaw, LinearLaw, Port,
                                    ThroughSource, TwoPort)
from netdyn.errors import ModelError, TopologyError
from netdyn.graph.network import Network
from netdyn.symbols import t

#: per domain: (effort is the across variable?, bond-flow port kind of the netdyn element protocol)
_EFFORT_ACROSS = {"electrical": True, "translational": False, "rotational": False}


def _domain_info(domain):
    if domain not in _EFFORT_ACROSS:
        raise ModelError(f"the {domain} domain has no bond-graph form here (electrical, translational and "
                         "rotational networks convert; planar linkages do not)")
    across = _EFFORT_ACROSS[domain]
    return ("0", "1") if across else ("1", "0")  # node junction kind, port junction kind


def _flow_kind(domain):
    return THROUGH if _EFFORT_ACROSS[domain] else ACROSS


# ----------------------------------------------------------------------------------- network -> bond graph
def to_bond_graph(net: Network, simplify: bool = True) -> BondGraph:
    """The bond graph of an electrical, 1-D mechanical or mixed network.

    Element names are kept (``C1``, ``m1``, ...); node junctions are called
    ``0_<node>`` (electrical) or ``1_<node>`` (mechanical), port junctions
    ``1_<element>`` / ``0_<element>``; each junction records its ``domain``.

    >>> import netdyn
    >>> from netdyn.components.translational import Mass, Spring, Force
    >>> net = netdyn.Network("mass on a spring")
    >>> _ = net.add(Mass("m", "x", m=1.0), Spring("k", "x", "0", k=4.0), Force("F", "x", 1.0))
    >>> bg = netdyn.to_bond_graph(net)
    >>> sorted((bg.kind(n), n) for n in bg.elements)
    [('1', '1_x'), ('C', 'k'), ('I', 'm'), ('Se', 'F')]
    """
    if getattr(net, "bodies", None):
        raise ModelError(f"{net.name}: planar bodies have no bond-graph form here; convert electrical and 1-D "
                         "mechanical networks")
    switches = sorted(n for n, el in net.elements.items() if hasattr(el, "closed"))
    if switches:
        raise ModelError(f"{switches[0]}: a switch changes the graph when it switches, so a network with switches "
                         f"({', '.join(switches)}) has no single bond graph; simulate the network itself")
    bg = BondGraph(net.name)
    node_j = {}

    def node(domain, n):
        if n == "0":
            return None
        key = (domain, n)
        if key not in node_j:
            kind, _ = _domain_info(domain)
            name = _fresh(bg, f"{kind}_{n}")
            bg.add(kind, name)
            bg.graph.nodes[name]["domain"] = domain
            bg.graph.nodes[name]["network_node"] = n
            node_j[key] = name
        return node_j[key]

    def port_junction(domain, a, b, label):
        _, kind = _domain_info(domain)
        name = _fresh(bg, f"{kind}_{label}")
        bg.add(kind, name)
        bg.graph.nodes[name]["domain"] = domain
        ja, jb = node(domain, a), node(domain, b)
        if ja is not None:
            bg.bond(ja, name, name=_fresh_bond(bg, f"{ja}_{name}"))
        if jb is not None:
            bg.bond(name, jb, name=_fresh_bond(bg, f"{name}_{jb}"))
        return name

    coupled = {}
    for el in net.elements.values():
        for c in el.couples:
            coupled.setdefault(c, []).append(el)
    done = set()
    for el in list(net.elements.values()):
        if el.name in done:
            continue
        for p in el.ports:
            _domain_info(p.domain)
        group = _group(net, el, coupled)
        if len(group) > 1 or (el.couples and not el.ports):
            _add_field(bg, group, port_junction)
            done.update(g.name for g in group)
            continue
        parts = getattr(el, "parts", None)
        if not parts:
            _add_element(bg, el, el.ports, port_junction, AcrossSource, ThroughSource, DisplacementSource, LinearLaw,
                         EnergyLaw, TwoPort)
            done.add(el.name)
            continue
        # parts of a composite element share its ports: same flow, efforts add -> one 1-junction per port
        hubs = {}
        for k, p in enumerate(el.ports):
            j = port_junction(p.domain, p.a, p.b, f"{el.name}_{k + 1}")
            if bg.kind(j) == "1":
                hubs[(p.domain, p.a, p.b)] = hubs[(p.domain, p.b, p.a)] = j
            else:
                hub = _fresh(bg, f"1_{el.name}_{k + 1}")
                bg.add("1", hub)
                bg.graph.nodes[hub]["domain"] = p.domain
                bg.bond(j, hub, name=_fresh_bond(bg, f"{j}_{hub}"))
                hubs[(p.domain, p.a, p.b)] = hubs[(p.domain, p.b, p.a)] = hub
        for part, slots in parts:
            _add_element(bg, part, [el.ports[s] for s in slots], lambda d, a, b, label: hubs[(d, a, b)],
                         AcrossSource, ThroughSource, DisplacementSource, LinearLaw, EnergyLaw, TwoPort)
        done.add(el.name)
    if simplify:
        simplify_junctions(bg)
    return bg


def _group(net, el, coupled):
    """An element together with the elements coupled to it (mutual inductances and their inductors)."""
    group, todo = {}, [el]
    while todo:
        x = todo.pop()
        if x.name in group:
            continue
        group[x.name] = x
        todo.extend(net.elements[c] for c in x.couples)
        todo.extend(coupled.get(x.name, []))
    return list(group.values())


def _fresh(bg, name):
    out, k = name, 2
    while out in bg.graph:
        out, k = f"{name}_{k}", k + 1
    return out


def _fresh_bond(bg, name):
    out, k = name, 2
    while out in bg.bond_names:
        out, k = f"{name}_{k}", k + 1
    return out


def _add_element(bg, el, ports, port_junction, AcrossSource, ThroughSource, DisplacementSource, LinearLaw,
                 EnergyLaw, TwoPort):
    name = _fresh(bg, el.name)
    if len(ports) == 1:
        p = ports[0]
        across = _EFFORT_ACROSS[p.domain]
        if isinstance(el, DisplacementSource):
            # an Sf of the motion's rate; exact when the motion starts at 0 (the attached storage starts unstretched)
            x = el.values["value"]
            if sp.sympify(x).subs(t, 0) != 0:
                raise ModelError(f"{el.name}: a prescribed displacement becomes a flow source of its rate, which "
                                 f"loses its initial value {x.subs(t, 0)}; give a motion that starts at 0")
            bg.add("Sf", name, flow=sp.diff(x, t))
            j = port_junction(p.domain, p.a, p.b, el.name)
            bg.bond(name, j, name=_fresh_bond(bg, el.name))
            return
        if isinstance(el, (AcrossSource, ThroughSource)):
            effort = isinstance(el, AcrossSource) == across
            bg.add("Se" if effort else "Sf", name, **{"effort" if effort else "flow": el.values["value"]})
            j = port_junction(p.domain, p.a, p.b, el.name)
            bg.bond(name, j, name=_fresh_bond(bg, el.name))
            return
        if isinstance(el, LinearLaw):
            coef = el.coefficient(el.values)
            kind, value = {("across_storage", True): ("I", coef), ("through_storage", True): ("C", coef),
                           ("dissipator", True): ("R", coef), ("across_storage", False): ("C", coef),
                           ("through_storage", False): ("I", coef), ("dissipator", False): ("R", 1 / coef)}[
                (el.law, across)]
            bg.add(kind, name, **{kind: value})
        elif isinstance(el, EnergyLaw):
            if el.natural_kind != _flow_kind(p.domain):
                raise ModelError(f"{el.name}: its {el.role} function is written in the {el.natural_kind} variable "
                                 f"of the {p.domain} domain, which is not a bond-graph displacement or flow; give it "
                                 "as a function of the element's displacement (V) or flow (T, D)")
            kind, param = {"V": ("C", "energy"), "T": ("I", "coenergy"), "D": ("R", "content")}[el.role]
            bg.add(kind, name, **{param: el.function})
        else:
            _add_field(bg, [el], port_junction)
            return
        j = port_junction(p.domain, p.a, p.b, el.name)
        bg.bond(j, name, name=_fresh_bond(bg, el.name))
        return
    if isinstance(el, TwoPort) and len(ports) == 2 and el.coupling == "transformer":
        d1, d2 = ports[0].domain, ports[1].domain
        a1, a2 = _EFFORT_ACROSS[d1], _EFFORT_ACROSS[d2]
        n = 1 / el.values["Bl"] if "Bl" in el.values else el.values["ratio"]
        # port 1: bond in from its junction; port 2: bond out into the junction of the reversed port
        if a1 and a2:
            kind, r = "TF", 1 / n
        elif not a1 and not a2:
            kind, r = "TF", n
        elif a1:
            kind, r = "GY", 1 / n
        else:
            kind, r = "GY", n
        bg.add(kind, name, ratio=r)
        j1 = port_junction(d1, ports[0].a, ports[0].b, f"{el.name}_1")
        j2 = port_junction(d2, ports[1].b, ports[1].a, f"{el.name}_2")
        bg.bond(j1, name, name=_fresh_bond(bg, f"{el.name}_1"))
        bg.bond(name, j2, name=_fresh_bond(bg, f"{el.name}_2"))
        return
    _add_field(bg, [el], port_junction)


def _add_field(bg, group, port_junction):
    """Elements with several ports (or coupled together) as one ``field`` carrying the elements themselves."""
    owners = [e for e in group if e.ports]
    name = _fresh(bg, "+".join(e.name for e in owners) if len(group) > 1 else group[0].name)
    domains = {p.domain for e in owners for p in e.ports}
    bg.add("field", name, element=list(group), kinds={d: _flow_kind(d) for d in domains},
           label=type(group[0]).__name__ if len(group) == 1 else "coupled")
    for e in owners:
        for k, p in enumerate(e.ports):
            if getattr(e, "internal_node", None) in (p.a, p.b):
                # a port to the element's own internal node (a CCVS's ``<name>#r``): nothing else touches it, so
                # in the bond graph's charges it carries no flow; the field sees it as a port at rest
                continue
            j = port_junction(p.domain, p.a, p.b, f"{e.name}_{k + 1}" if len(e.ports) > 1 else e.name)
            b = bg.bond(j, name, name=_fresh_bond(bg, f"{e.name}_{k + 1}" if len(e.ports) > 1 else e.name))
            bg.graph.edges[j, name, b]["port"] = (e.name, k)


# ----------------------------------------------------------------------------------- simplification
def simplify_junctions(bg: BondGraph) -> BondGraph:
    """Replace two-bond junctions (one bond in, one out) by one bond; merge bonded junctions of one kind.

    Exact: both steps leave every element's effort and flow unchanged.

    >>> import netdyn
    >>> bg = netdyn.BondGraph("chain")
    >>> bg.add("Se", "u", effort=1.0); bg.add("0", "A"); bg.add("1", "B"); bg.add("C", "C1", C=1.0)
    >>> _ = bg.chain("u", "A", "B", "C1")       # A and B only pass the power on
    >>> sorted(simplify_junctions(bg).graph.nodes)
    ['C1', 'u']
    """
    changed = True
    while changed:
        changed = False
        for j in [n for n in bg.elements if bg.kind(n) in JUNCTIONS]:
            bonds = bg.bonds_of(j)
            if len(bonds) == 2:
                b_in = [b for b in bonds if bg.ends(b)[1] == j]
                b_out = [b for b in bonds if bg.ends(b)[0] == j]
                if len(b_in) == 1 and len(b_out) == 1:
                    _short(bg, j, b_in[0], b_out[0])
                    changed = True
                    break
            for b in bonds:
                other = bg.other_end(j, b)
                if bg.kind(other) == bg.kind(j) and other != j:
                    _merge(bg, j, other, b)
                    changed = True
                    break
            if changed:
                break
    return bg


def _edge_data(bg, b):
    tail, head = bg.ends(b)
    return dict(bg.graph.edges[tail, head, b])


def _remove_bond(bg, b):
    tail, head = bg.ends(b)
    bg.graph.remove_edge(tail, head, key=b)
    del bg._bond_ends[b]
    for e in (tail, head):
        bg.graph.nodes[e]["bonds"].remove(b)


def _replace_end(bg, b, old, new):
    """Re-point bond ``b``'s end at ``old`` to ``new``, keeping its place in the other end's port order."""
    tail, head = bg.ends(b)
    data = _edge_data(bg, b)
    bg.graph.remove_edge(tail, head, key=b)
    tail, head = (new if tail == old else tail), (new if head == old else head)
    bg.graph.add_edge(tail, head, key=b, **data)
    bg._bond_ends[b] = (tail, head)
    bg.graph.nodes[old]["bonds"].remove(b)
    bg.graph.nodes[new]["bonds"].append(b)


def _short(bg, j, b_in, b_out):
    """X -b_in-> j -b_out-> Y becomes one bond X -> Y (named after the bond at an element's end)."""
    x, y = bg.ends(b_in)[0], bg.ends(b_out)[1]
    keep_out = bg.kind(y) not in JUNCTIONS or bg.kind(x) in JUNCTIONS
    keep, drop = (b_out, b_in) if keep_out else (b_in, b_out)
    far = x if keep_out else y   # the end of the dropped bond that the kept bond must now reach
    near_list = bg.graph.nodes[far]["bonds"]
    pos = near_list.index(drop)
    _remove_bond(bg, drop)
    _replace_end(bg, keep, j, far)
    lst = bg.graph.nodes[far]["bonds"]
    lst.remove(keep)
    lst.insert(pos, keep)
    bg.graph.remove_node(j)


def _merge(bg, j, other, b):
    """Two junctions of one kind joined by bond ``b`` become one (``j``)."""
    _remove_bond(bg, b)
    for bb in bg.bonds_of(other):
        _replace_end(bg, bb, other, j)
    bg.graph.remove_node(other)


# ----------------------------------------------------------------------------------- bond graph -> network
def to_network(bg: BondGraph, domain: str | None = None) -> Network:
    """The network of a bond graph, when one exists.

    Node junctions (0-junctions for electrical, 1-junctions for mechanical
    domains; a junction's ``domain`` attribute, else ``domain``, else
    electrical) become nodes; 1-port elements on a node junction go to ground,
    those on a junction of the other kind form a series branch between the (at
    most two) nodes it joins. Raises :class:`~netdyn.errors.TopologyError` saying
    why there is no network (a branch joining three nodes, a field or modulated
    two-port, bonded junctions without a node between them).

    >>> import netdyn
    >>> bg = netdyn.BondGraph("RC")
    >>> bg.add("Se", "u", effort=1.0); bg.add("1", "J"); bg.add("C", "C1", C=1.0); bg.add("R", "R1", R=1.0)
    >>> _ = bg.chain("u", "J", "C1"); _ = bg.bond("J", "R1")
    >>> sorted(type(e).__name__ for e in netdyn.to_network(bg).elements.values())
    ['Capacitor', 'Resistor', 'VoltageSource']
    """
    bg.check()
    for n in bg.elements:
        if bg.kind(n) in ("field", "MTF", "MGY", "port"):
            raise TopologyError(f"{n}: a {bg.kind(n)} element has no network element here; keep it a bond graph")
        if bg.is_field(n):
            raise TopologyError(f"{n}: a {len(bg.bonds_of(n))}-port {bg.kind(n)} field has no network element "
                                "here; keep it a bond graph")
    net = Network(bg.name)
    dom = {}
    for j in bg.elements:
        if bg.kind(j) in JUNCTIONS:
            dom[j] = bg.graph.nodes[j].get("domain") or domain or "electrical"
            _domain_info(dom[j])
    # domains of elements: from their junction
    nodekind = {j: _domain_info(dom[j])[0] for j in dom}
    is_node = {j: bg.kind(j) == nodekind[j] for j in dom}
    node_name = {j: (bg.graph.nodes[j].get("network_node") or j) for j in dom if is_node[j]}
    placement = {}  # (element, bond) -> (domain, a, b)
    for j in dom:
        if is_node[j]:
            for b in bg.bonds_of(j):
                e = bg.other_end(j, b)
                if e in dom:
                    if is_node[e] and bg.kind(e) != bg.kind(j):
                        raise TopologyError(f"junctions {j} and {e} are bonded directly; no network element joins "
                                            "two nodes without an element between them")
                    continue
                a, bb = node_name[j], "0"
                placement[(e, b)] = _orient(bg, j, e, b, dom[j], a, bb)
            continue
        # a series branch
        ends = [(b, bg.other_end(j, b)) for b in bg.bonds_of(j) if bg.other_end(j, b) in dom]
        for b, e in ends:
            if not is_node[e]:
                raise TopologyError(f"junctions {j} and {e} are bonded directly and neither is a node; "
                                    "this bond graph has no network form")
        if len(ends) > 2:
            raise TopologyError(f"{j} joins {len(ends)} nodes ({', '.join(e for _, e in ends)}); a network "
                                "element joins two nodes, so this bond graph has no network form")
        a = b_ = "0"
        for b, e in ends:
            if bg.ends(b)[1] == j:
                if a != "0":
                    raise TopologyError(f"{j}: both node bonds point into it; orient one out")
                a = node_name[e]
            else:
                if b_ != "0":
                    raise TopologyError(f"{j}: both node bonds point out of it; orient one in")
                b_ = node_name[e]
        elems = [(b, bg.other_end(j, b)) for b in bg.bonds_of(j) if bg.other_end(j, b) not in dom]
        chain = [a] + [f"{j}.{k}" for k in range(1, len(elems))] + [b_]
        for k, (b, e) in enumerate(elems):
            placement[(e, b)] = _orient(bg, j, e, b, dom[j], chain[k], chain[k + 1])
    for n in bg.elements:
        kind = bg.kind(n)
        if kind in JUNCTIONS:
            continue
        p = bg.params(n)
        bl = bg.bonds_of(n)
        if kind in ("field", "MTF", "MGY", "port"):
            raise TopologyError(f"{n}: a {kind} element has no network element here; keep it a bond graph")
        if kind in ("TF", "GY"):
            (d1, a1, b1), (d2, a2, b2) = placement[(n, bl[0])], placement[(n, bl[1])]
            s1, s2 = bg.sign(n, bl[0]), bg.sign(n, bl[1])
            r = p["ratio"]
            acr1, acr2 = _EFFORT_ACROSS[d1], _EFFORT_ACROSS[d2]
            if kind == "TF" and acr1 == acr2:
                # F2 = s1 s2 r F1 in network flows (current or velocity)
                n_ = -s1 * s2 / r if acr1 else s1 * s2 * r
                net.add(TwoPort(n, Port(d1, a1, b1), Port(d2, a2, b2), "transformer", n_))
            elif kind == "GY" and acr1 != acr2:
                # e1 = r s2 F2: transformer with v_elec = (r s2) v_mech, i.e. ratio 1/(r s2) elec -> mech
                if acr1:
                    net.add(TwoPort(n, Port(d1, a1, b1), Port(d2, a2, b2), "transformer", 1 / (r * s2)))
                else:
                    net.add(TwoPort(n, Port(d1, a1, b1), Port(d2, a2, b2), "transformer", -r * s2))
            else:
                raise TopologyError(f"{n}: a {kind} between {d1} and {d2} ports has no network element here")
            continue
        (b,) = bl
        if (n, b) not in placement:
            raise TopologyError(f"{n} is bonded to {bg.other_end(n, b)} directly, not through a junction; "
                                "this bond graph has no network form")
        d, a, bb = placement[(n, b)]
        across = _EFFORT_ACROSS[d]
        s = bg.sign(n, b)
        lib = {"electrical": electrical, "translational": translational, "rotational": rotational}[d]
        if kind == "Se":
            v = p["effort"]
            if across:
                net.add(electrical.VoltageSource(n, a, bb, v))
            else:
                net.add(lib.Force(n, bb, v, reference=a) if d == "translational" else lib.Torque(n, bb, v, reference=a))
        elif kind == "Sf":
            v = s * p["flow"]
            if across:
                net.add(electrical.CurrentSource(n, a, bb, v))
            else:
                cls = lib.VelocitySource if d == "translational" else lib.AngularVelocitySource
                net.add(cls(n, a, v, reference=bb))
        elif kind in ("C", "I", "R"):
            net.add(_one_port(n, kind, p, d, a, bb, lib))
    return net


def _orient(bg, j, e, b, domain, a, bb):
    """Terminal order of element ``e`` on junction ``j``: reversed when it delivers power into a 1-junction."""
    if bg.kind(j) == "1" and bg.sign(e, b) == -1:
        a, bb = bb, a
    return domain, a, bb


def _one_port(n, kind, p, d, a, b, lib):
    if d == "electrical":
        if kind == "C":
            return lib.Capacitor(n, a, b, C=p["C"]) if "C" in p else \
                EnergyLaw(n, a, b, "V", _fn(p["energy"], Q), THROUGH, domain=d)
        if kind == "I":
            return lib.Inductor(n, a, b, L=p["I"]) if "I" in p else \
                EnergyLaw(n, a, b, "T", _fn(p["coenergy"], F), THROUGH, domain=d)
        return lib.Resistor(n, a, b, R=p["R"]) if "R" in p else \
            EnergyLaw(n, a, b, "D", _fn(p["content"], F), THROUGH, domain=d)
    names = {"translational": ("Mass", "Spring", "Damper"), "rotational": ("Inertia", "TorsionSpring",
                                                                          "RotationalDamper")}[d]
    if kind == "I":
        if "I" not in p:
            return EnergyLaw(n, a, b, "T", _fn(p["coenergy"], F), ACROSS, domain=d)
        if b != "0" and a == "0":
            a, b = b, a
        return getattr(lib, names[0])(n, a, p["I"], reference=b)
    if kind == "C":
        return getattr(lib, names[1])(n, a, b, 1 / p["C"]) if "C" in p else \
            EnergyLaw(n, a, b, "V", _fn(p["energy"], Q), ACROSS, domain=d)
    return getattr(lib, names[2])(n, a, b, p["R"]) if "R" in p else \
        EnergyLaw(n, a, b, "D", _fn(p["content"], F), ACROSS, domain=d)


def _fn(expr, var):
    return lambda x: expr.xreplace({var: x})
