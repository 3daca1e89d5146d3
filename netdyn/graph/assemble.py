"""From a ``Network`` to a ``LagrangianModel``: coordinates and constraints generated from the graph.

Formulations, chosen per domain (a string applies to every 1-D domain, a dict
maps domain names to formulations):

* ``"branch"``: one displacement per branch (charge, impulse) and one KCL flow
  constraint per node other than the reference, ``Σ inflow − Σ outflow = 0``
  (the book's Example 4.4; multiplier μ of node n = its potential);
* ``"loop"``: one displacement per fundamental loop of a normal spanning tree
  (voltage sources and capacitors in the tree), so KCL holds identically and no
  constraint is left;
* ``"node"``: one displacement per node other than ground: flux linkage
  ``phi_<node>`` for circuits, position ``x_<node>`` or angle
  ``theta_<node>`` for mechanical networks.

The default is ``"loop"`` for circuits and ``"node"`` for mechanical networks.

>>> from netdyn import Network
>>> from netdyn.components.electrical import VoltageSource, Resistor, Capacitor
>>> net = Network()
>>> _ = net.add(VoltageSource("V1", "a", "0", 1), Resistor("R1", "a", "b", 1), Capacitor("C1", "b", "0", 1))
>>> [str(c) for c in net.model(formulation="branch").coordinates]
['q_V1(t)', 'q_R1(t)', 'q_C1(t)']
>>> net.model(formulation="loop").coordinate_names
['q_R1']
"""
from __future__ import annotations

import sympy as sp
from sympy.physics.mechanics import dynamicsymbols

from netdyn.graph import topology
from netdyn.components.base import (port_key, ACROSS, DOMAINS, THROUGH, AcrossSource, DisplacementSource, EnergyLaw,
                                    LinearLaw, PortVariables, ThroughSource)
from netdyn.errors import ModelError, TopologyError
from netdyn.lagrange.fastdiff import rate
from netdyn.lagrange.model import LagrangianModel
from netdyn.symbols import identifier, t
from netdyn.graph import planar, spatial
from netdyn.graph.deferred import DeferredTermsModel, eager, has_deferred, written
from netdyn.graph.recursive_links import RecursiveBuilder

DEFAULT_FORMULATION = {"electrical": "loop", "translational": "node", "rotational": "node"}
FORMULATIONS = ("branch", "loop", "node")


def role(element, kind):
    """What an element is, structurally, in a domain of the given kind.

    One of ``across_source``, ``through_source``, ``across_storage`` (inductor,
    spring), ``through_storage`` (capacitor, mass), ``dissipator`` or ``None``.
    """
    if isinstance(element, (AcrossSource, DisplacementSource)):
        return "across_source"
    if isinstance(element, ThroughSource):
        return "through_source"
    if isinstance(element, LinearLaw):
        return element.law
    if isinstance(element, EnergyLaw):
        if element.role == "D":
            return "dissipator"
        natural_inductive = (element.role == "T") == (element.natural_kind == THROUGH)
        return "across_storage" if natural_inductive else "through_storage"
    return None


def resolve_formulation(formulation, domains, net=None):
    """Per-domain formulation from a string, a dict or ``None`` (defaults).

    A domain with an element that works only in across coordinates (``prefers_kind``, e.g. a diode)
    defaults to the node formulation."""
    out = {d: DEFAULT_FORMULATION.get(d, "node") for d in domains}
    for el in (net.elements.values() if net is not None else ()):
        if getattr(el, "prefers_kind", None) == ACROSS:
            for p in el.ports:
                if p.domain in out:
                    out[p.domain] = "node"
    if formulation is None:
        return out
    if isinstance(formulation, str):
        if formulation not in FORMULATIONS:
            raise ModelError(f"unknown formulation {formulation!r}; use one of {FORMULATIONS}")
        return {d: formulation for d in domains}
    for d, f in dict(formulation).items():
        if f not in FORMULATIONS:
            raise ModelError(f"unknown formulation {f!r} for domain {d!r}; use one of {FORMULATIONS}")
        out[d] = f
    return out


# ------------------------------------------------------------------------------------------ checks

def structural_check(net, kinds=None):
    """Structural errors that make a network unsolvable: every one found, in one :class:`TopologyError`
    (its ``faults`` list; one line each, naming the elements or nodes at fault)."""
    faults = _transducer_port_faults(net)
    for domain in [d for d in net.domains if d in DOMAINS]:
        g = net.domain_graph(domain)
        if any(b in g for b in net.bodies):
            g = g.copy()  # the shared domain graph is read-only
        for b in net.bodies:  # a body's inertia ties a rotational node that names it to ground
            if b in g:
                g.add_edge(b, "0", key=f"<body {b}>", element=net.bodies[b], domain=domain)
        kind = (kinds or {}).get(domain, THROUGH if DEFAULT_FORMULATION.get(domain) != "node" else ACROSS)
        el = {k: d["element"] for _, _, k, d in g.edges(keys=True, data=True)}
        r = {k: role(e, kind) for k, e in el.items()}
        words = DOMAINS[domain]
        faults += [f"loop of {words['across']} sources: {', '.join(_names(el, loop))}; their sum is fixed by KVL, "
                   "so remove one or put a resistance in the loop"
                   for key, loop in topology.source_loops(g, lambda k: r[k] == "across_source", lambda k: True)]
        faults += [f"{el[key].name} is in a cut-set of {words['through']} sources only: KCL fixes its value; "
                   "remove it or add a parallel path"
                   for key in topology.source_cutsets(g, lambda k: r[k] == "through_source", lambda k: True)]
        if domain == "electrical":
            faults += [f"floating sub-network: nodes {sorted(comp)} have no path to ground '0'; "
                       "connect one of them to '0' (directly or through an element)"
                       for comp in topology.components_without(g, "0")]
    if faults:
        raise TopologyError.listing(faults)


def _transducer_port_faults(net):
    """Every port of a transducer (an element with ports in two domains) must reach some other element,
    unless the transducer loads that port itself (``loaded_ports``: a motor with its own rotor inertia).
    Returns one sentence per unconnected port."""
    faults = []
    for el in net.elements.values():
        if not getattr(el, "is_transducer", False):
            continue
        for k, port in enumerate(el.ports):
            for node in (port.a, port.b):
                if node == "0" or node in net.bodies or k in getattr(el, "loaded_ports", ()) or \
                        getattr(net.elements.get(node), "is_joint", False):
                    continue
                others = {d["element"].name for *_, d in net.graph.in_edges(node, data=True)} | \
                         {d["element"].name for *_, d in net.graph.out_edges(node, data=True)}
                if others <= {el.name}:
                    faults.append(f"{el.name}: its {port.domain} port is unconnected (node {node!r} has nothing "
                                  f"else attached); connect a {port.domain} element to {node!r} or ground that "
                                  "terminal")
    return faults


def _names(el, keys):
    return [el[k].name for k in keys]


# ------------------------------------------------------------------------------------------ assembly

class _Coordinates:
    """Coordinates created so far, with each port's displacement as a linear combination."""

    def __init__(self, make=dynamicsymbols):
        self.list = []
        self.names = set()
        self.make = make

    def new(self, name):
        if name in self.names:
            raise ModelError(f"two coordinates would be called {name!r}; rename a node or an element")
        self.names.add(name)
        c = self.make(name)
        self.list.append(c)
        return c


def coordinate_plan(net, domains, forms, coords, body_angle=None, paths=True):
    """Coordinates of every one-dimensional domain and each port's displacement as a combination of them.

    ``coords.new(name)`` makes a coordinate (a sympy function of t for the model,
    a plain name for numeric assembly); ``body_angle`` maps rotational nodes that
    are planar bodies to their angle coordinate. Returns ``combos`` (port key ->
    {coordinate: coefficient}), the KCL rows of branch formulations as
    ``(label, [(port key, sign), ...])`` and the tree paths from ground per domain (empty with
    ``paths=False``: the numeric stamp does not need them).
    """
    body_angle = body_angle or {}
    combos, kcl, node_paths = {}, [], {}
    order = {}
    for i, el in enumerate(net.elements.values()):
        for k in range(len(el.ports)):
            order[_key(el, k)] = (i, k)
    for domain in domains:
        g = net.domain_graph(domain)
        words = DOMAINS[domain]
        edges = sorted(topology.branches(g), key=lambda e: order[e[2]])
        if forms[domain] == "node":
            cmap = {n: body_angle[n] if domain == "rotational" and n in body_angle else
                    coords.new(f"{words['node_prefix']}_{identifier(n)}") for n in g.nodes if n != "0"}
            for u, v, k in edges:
                combo = {}
                if u in cmap:
                    combo[cmap[u]] = combo.get(cmap[u], 0) + 1
                if v in cmap:
                    combo[cmap[v]] = combo.get(cmap[v], 0) - 1
                combos[k] = combo
        elif forms[domain] == "branch":
            for u, v, k in edges:
                combos[k] = {coords.new(f"{words['branch_prefix']}_{identifier(k)}"): 1}
            A, nodes, _ = topology.reduced_incidence(g, ground="0", edges=edges, sparse=True)
            A = A.tocsr()
            for i, node in enumerate(nodes):
                row = A[[i], :]
                kcl.append((f"KCL at node {node}",
                            [(edges[j][2], int(v)) for j, v in zip(row.indices, row.data) if v != 0]))
        else:  # loop
            el = {k: d["element"] for _, _, k, d in g.edges(keys=True, data=True)}
            weight = {"across_source": 0, "through_storage": 1, "dissipator": 2, None: 2, "across_storage": 3,
                      "through_source": 4}
            tree = topology.spanning_tree(g, weight=lambda k: weight[role(el[k], THROUGH)], edges=edges)
            B, cotree = topology.fundamental_loops(g, tree, edges=edges, sparse=True)
            loop_coords = [coords.new(f"{words['branch_prefix']}_{identifier(k)}") for k in cotree]
            indptr, indices, data = B.indptr.tolist(), B.indices.tolist(), B.data.tolist()  # lists: cheap slices
            for j, (_, _, k) in enumerate(edges):
                a, b = indptr[j], indptr[j + 1]
                combos[k] = {loop_coords[l]: int(v) for l, v in zip(indices[a:b], data[a:b]) if v != 0}
        if paths:
            node_paths[domain] = topology.tree_paths(g, "0")
    return combos, kcl, node_paths


def assemble(net, formulation=None, symbolic=False, check=True, cut=None):
    """Assemble the :class:`LagrangianModel` of a network.

    ``symbolic=True`` replaces numeric element values by symbols named after the
    element (``R1``) or ``<element>_<parameter>`` for multi-parameter elements,
    with the numbers as default parameter values. ``cut`` names planar joints the
    relative formulation cuts (:func:`netdyn.graph.mechanism.spanning_tree`), planar or spatial.
    """
    if not net.elements and not net.bodies:
        raise ModelError("the network is empty; add elements first")
    if isinstance(formulation, dict) and "spatial" in formulation:  # the mechanism formulation, by either name
        formulation = {("planar" if k == "spatial" else k): v for k, v in formulation.items()}
    planar_form, formulation = planar.split_formulation(formulation)
    domains = [d for d in net.domains if d in DOMAINS]
    forms = resolve_formulation(formulation, domains, net)
    kinds = {d: ACROSS if forms[d] == "node" else THROUGH for d in domains}
    if check:
        structural_check(net, kinds)
    coords = _Coordinates()
    parameters = {}
    part = None
    if spatial.is_spatial(net):
        part = spatial.assemble_spatial(net, planar_form, coords.new,
                                        lambda el: _resolve_values(el, symbolic, parameters, net), cut=cut)
    elif net.bodies or planar.planar_elements(net):
        part = planar.assemble_planar(net, planar_form, coords.new,
                                      lambda el: _resolve_values(el, symbolic, parameters, net), cut=cut)
    elif cut:
        raise ModelError(f"cut={cut} names joints, but the network has no bodies and joints")
    body_angle = part.angles if part else {}
    flow_constraints, flow_labels = (list(part.flow_constraints), list(part.flow_labels)) if part else ([], [])
    combos, kcl, node_paths = coordinate_plan(net, domains, forms, coords, body_angle)
    for label, row in kcl:
        flow_constraints.append(sp.Add(*[sign * rate(next(iter(combos[k]))) for k, sign in row]))
        flow_labels.append(label)

    T, V, D = (part.T, part.V, part.D) if part else ([], [], [])
    efforts = dict(part.efforts) if part else {}
    constraints, labels = (list(part.constraints), list(part.labels)) if part else ([], [])
    coordset = set(coords.list)
    info = {}
    reactions = {}
    port_of = {}
    for name, el in net.elements.items():
        for k in range(len(el.ports)):
            port_of[_key(el, k)] = (name, k)
    for name, el in net.elements.items():
        if getattr(el, "planar", False) or getattr(el, "spatial", False):
            continue
        values = _resolve_values(el, symbolic, parameters, net)
        keys, ports = element_ports(net, el, port_of)
        Q = [sp.Dummy(f"Q{i}") for i in range(len(keys))]
        F = [sp.Dummy(f"F{i}") for i in range(len(keys))]
        pvs = [PortVariables(kinds[p.domain], Q[i], F[i]) for i, p in enumerate(ports)]
        contrib = el.contribute(pvs, values)
        qx = [_combination(combos[k]) for k in keys]
        sub = {}
        for i in range(len(keys)):
            sub[Q[i]] = qx[i]
            sub[F[i]] = _combination({_rate(c): coeff for c, coeff in combos[keys[i]].items()})
        T.append(sp.sympify(contrib.T).xreplace(sub))
        V.append(sp.sympify(contrib.V).xreplace(sub))
        D.append(sp.sympify(contrib.D).xreplace(sub))
        for i, e in contrib.efforts.items():
            e = sp.sympify(e).xreplace(sub)
            for c, coeff in combos[keys[i]].items():
                planar.distribute(efforts, coordset, coeff * c, e)
        first_c, first_f = len(constraints), len(flow_constraints)
        for j, c in enumerate(contrib.constraints):
            constraints.append(sp.sympify(c).xreplace(sub))
            labels.append(f"{name}" if len(contrib.constraints) == 1 else f"{name}[{j}]")
        for j, c in enumerate(contrib.flow_constraints):
            flow_constraints.append(sp.sympify(c).xreplace(sub))
            flow_labels.append(f"{name}" if len(contrib.flow_constraints) == 1 else f"{name}[{j}]")
            if j in contrib.reactions:  # a servo constraint: its multiplier acts along these port combinations
                reactions[flow_labels[-1]] = _reaction(contrib.reactions[j], [combos[k] for k in keys])
        info[name] = {
            "element": el, "keys": keys, "kinds": [pv.kind for pv in pvs], "Q": Q, "F": F, "contribution": contrib,
            "port_displacements": qx, "constraints": list(range(first_c, len(constraints))),
            "flow_constraints": list(range(first_f, len(flow_constraints))),
        }
    for name, entry in info.items():  # a sensed source's multiplier also acts on a controlled source's ports
        for s, coeffs in entry["contribution"].sensed_reactions.items():
            label, g = _sensed_constraint(name, port_of[entry["keys"][s]], info, flow_constraints, flow_labels)
            base = reactions.get(label)
            if base is None:
                psi = flow_constraints[flow_labels.index(label)]
                base = {c: psi.diff(rate(c)) for c in coords.list if psi.has(rate(c))}
            extra = _reaction({i: g * c for i, c in coeffs.items()}, [combos[k] for k in entry["keys"]])
            reactions[label] = {c: base.get(c, 0) + extra.get(c, 0) for c in {**base, **extra}}
    recursive = None
    if part is not None and part.metadata.formulation == "relative":  # the recursive form's rest: unmarked terms
        recursive = RecursiveBuilder(part.kind, eager(T), eager(V), eager(D))
    deferred = any(has_deferred(x) for x in (T, V, D))
    if deferred:  # the bodies' kinetic terms, gravity deferred (netdyn.graph.deferred): a tree joint's
        # coordinates move its child body (a mass), the others are checked without those terms
        tree_coords = {c for qs in part.metadata.tree_coordinates.values() for c in qs}
        try:
            _check_coordinates_used([c for c in coords.list if c not in tree_coords], [], eager(V), D, efforts,
                                    constraints, flow_constraints)
        except TopologyError:  # a coordinate only they hold: write them now
            T, V, D, deferred = written(T), written(V), written(D), False
    if not deferred:
        _check_coordinates_used(coords.list, T, V, D, efforts, constraints, flow_constraints)
    metadata = {"network": net, "formulation": forms, "kinds": kinds, "elements": info, "node_paths": node_paths,
                "port_of": port_of, "flow_reactions": reactions}
    if part:
        metadata[part.kind] = part.metadata
    if recursive is not None:
        metadata["recursive_form"] = recursive
    kwargs = dict(T=T, V=V, D=D, efforts=efforts, constraints=constraints, flow_constraints=flow_constraints,
                  parameters=parameters, name=net.name, metadata=metadata, constraint_labels=labels,
                  flow_constraint_labels=flow_labels)
    if deferred:
        return DeferredTermsModel(coords.list, **kwargs)
    return LagrangianModel(coords.list, **kwargs)


def element_ports(net, el, port_of):
    """The port keys an element acts on (its own, or the coupled elements' ports) and those ports."""
    if not el.couples:  # its own ports only (almost every element)
        return [port_key(el, k) for k in range(len(el.ports))], list(el.ports)
    keys = [_key(el, k) for k in range(len(el.ports))] + [_key(_coupled(net, el, c), 0) for c in el.couples]
    return keys, [net.elements[port_of[k][0]].ports[port_of[k][1]] for k in keys]


def _key(el, k):
    return port_key(el, k)


def _coupled(net, el, name):
    other = net.elements.get(name)
    if other is None:
        raise ModelError(f"{el.name} couples {name!r}, which is not an element of the network; add it first")
    if len(other.ports) != 1:
        raise ModelError(f"{el.name} couples {name!r}, which is not a two-terminal element")
    return other


def _sensed_constraint(name, port, info, flow_constraints, flow_labels):
    """Label of the flow constraint of the element ``name`` senses, and the coefficient of the sensed port's
    flow in it (the current that port absorbs per unit multiplier)."""
    other, j = port
    entry = info.get(other)
    c = entry["contribution"] if entry else None
    if c is None or len(c.flow_constraints) != 1 or c.reactions:
        raise ModelError(f"{name} senses the current of {other}, which is not a voltage source (one flow "
                         "constraint on its port) here; sense a voltage source (a 0 V one as an ammeter)")
    g = sp.sympify(c.flow_constraints[0]).diff(entry["F"][j])
    return flow_labels[entry["flow_constraints"][0]], g


def _reaction(coeffs, port_combos):
    """{coordinate: coefficient} of a servo constraint's reaction, from its {port index: coefficient}."""
    out = {}
    for i, c in coeffs.items():
        for coord, k in port_combos[i].items():
            out[coord] = out.get(coord, 0) + k * sp.sympify(c)
    return out


def _rate(c):
    """Rate of a port displacement: a coordinate's derivative, or the time derivative of an expression of
    coordinates (a spatial joint's angle acting as a rotational node)."""
    return rate(c) if isinstance(c, sp.core.function.AppliedUndef) else sp.sympify(c).diff(t)


def _combination(combo):
    return sp.Add(*[coeff * c for c, coeff in combo.items()])


def _resolve_values(el, symbolic, parameters, net):
    """An element's values for its contribution: as given, or (``symbolic``) as parameters. A value the
    network knows as an expression of named parameters (``net.value_expressions``: a netlist's ``.param``
    names, whose values ``net.params`` holds) is that expression under ``symbolic=True`` and
    ``symbolic="params"``; other numbers become symbols named after the element under ``symbolic=True`` only."""
    values = {}
    multi = len(el.values) > 1
    for pname, v in el.values.items():
        values[pname] = _parameter(net, el.name, pname, v, el.name if not multi else f"{el.name}_{pname}",
                                   symbolic, parameters)
    for i, cname in enumerate(el.couples if getattr(el, "couples_need_inductance", True) else ()):
        other = _coupled(net, el, cname)
        L = other.values.get("L")
        if L is None:
            raise ModelError(f"{el.name} couples {cname!r}, which has no inductance L")
        values[f"L_{i + 1}"] = _parameter(net, cname, "L", L, cname, symbolic, parameters)
    return values


def _parameter(net, element, pname, v, name, symbolic, parameters):
    """One element value under ``symbolic`` (see :func:`_resolve_values`), its parameters entered with their
    default values."""
    if not symbolic:
        return v
    expr = (getattr(net, "value_expressions", None) or {}).get(element, {}).get(pname)
    if expr is not None:
        for sym in expr.free_symbols:
            parameters[sym] = sp.Float(net.params[sym.name if sym.name in net.params else "t"])
        return expr
    if symbolic is True and v.is_number:
        sym = sp.Symbol(name)
        parameters[sym] = v
        return sym
    return v


def _check_coordinates_used(coords, T, V, D, efforts, constraints, flow_constraints):
    if not coords:
        return
    used = set()
    for e in list(T) + list(V) + list(D) + list(efforts.values()) + list(constraints) + list(flow_constraints):
        used |= sp.sympify(e).atoms(sp.core.function.AppliedUndef)
    for c in coords:
        if c not in used:
            raise TopologyError(f"coordinate {c.func.__name__} appears in no energy and no constraint: "
                                "the node or loop it belongs to has nothing attached; remove it")
