"""The DC operating point of a network, as SPICE computes it, and the initial state it gives a transient.

:func:`operating_point` solves the network's own equations at rest, sources at
``t0``: every flow is constant and no stored energy changes, so in charge
coordinates capacitors are open (their current is 0, their voltage an
unknown) and inductors carry any current with no voltage; in flux coordinates
the roles swap. Nothing is re-modelled: the linear elements come from the same
sparse stamp as the transient (:func:`netdyn.stamp.linear_network`), the
nonlinear ones (diodes, nonlinear resistors) from their own dissipation
function, solved by Newton's method with SPICE's junction limiting where an
element offers it (``limit_flows``). The unknowns are the flows ``f``, the
efforts ``p`` of the energy-storing ports and the multipliers ``μ``:

    D f + g(f) + C_V p + R μ = B_e u(t0),    A f + B_a u(t0) = 0,    C_Vᵀ f = 0.

The same solve with the storage elements *held* (``hold={element: value}``:
a capacitor's voltage, an inductor's current) is the consistent state at
``t0`` of a transient that starts from given initial conditions (SPICE's
``uic``); ``clamp={node: volts}`` fixes node voltages during the solve
(SPICE's ``.ic`` without ``uic``).

>>> import netdyn
>>> from netdyn.components.electrical import VoltageSource, Resistor, Capacitor, Inductor
>>> net = netdyn.Network("divider")
>>> _ = net.add(VoltageSource("V1", "in", "0", 10.0), Resistor("R1", "in", "out", 1e3),
...             Resistor("R2", "out", "0", 3e3), Capacitor("C1", "out", "0", 1e-6), Inductor("L1", "in", "x", 1e-3),
...             Resistor("R3", "x", "0", 100.0))
>>> op = operating_point(net)
>>> round(op.voltages["out"], 9), round(op.currents["L1"], 9), round(op.currents["V1"], 9)
(7.5, 0.1, -0.1025)
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sps
import scipy.sparse.linalg as spla
import sympy as sp

from netdyn.components.base import _PLAIN, ACROSS, DOMAINS, THROUGH, PortVariables, numeric_values
from netdyn.errors import InitialConditionError, ModelError, SingularSystemError
from netdyn.numerics.circuit.stamp import LAST_STAMP, release_stamp, template_key  # noqa: F401 (release_stamp: its 0.3 dev home)
from netdyn.graph.gcpause import paused_gc
from netdyn.symbols import t

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # names for the hints only (annotations are not evaluated)
    from netdyn.graph.network import Network
    from netdyn.hints import Formulation
    from collections.abc import Mapping

__all__ = ["operating_point", "DCOperatingPoint", "spice_initial_state", "state_before_jump"]


# ------------------------------------------------------------------------------------------ element laws

class _Law:
    """An element type's contribution as numeric functions of its values, port displacements and flows."""

    def __init__(self, el, kinds, value_names):
        P = [sp.Symbol(f"_value_{v}") for v in value_names]
        Q = [sp.Symbol(f"_Q{i}") for i in range(len(kinds))]
        F = [sp.Symbol(f"_F{i}") for i in range(len(kinds))]
        c = el.contribute([PortVariables(k, Q[i], F[i]) for i, k in enumerate(kinds)], dict(zip(value_names, P)))
        if c.constraints:
            raise ModelError(f"{el.name} imposes a displacement constraint; the DC operating point handles "
                             "electrical networks (and 1-D networks without displacement constraints)")
        T, V, D = (sp.sympify(x) for x in (c.T, c.V, c.D))
        n = len(kinds)
        self.vports = [i for i in range(n) if Q[i] in V.free_symbols]
        self.tports = [i for i in range(n) if F[i] in T.free_symbols]
        self.nflow = len(c.flow_constraints)
        self.has_D = D != 0
        args = [P, Q, F, t]
        gD = [sp.diff(D, f) for f in F]
        hD = [[sp.diff(g, f) for f in F] for g in gD]
        gV = [sp.diff(V, q) for q in Q]
        hV = [[sp.diff(g, q) for q in Q] for g in gV]
        eff = [sp.sympify(c.efforts.get(i, 0)) for i in range(n)]
        react = []
        for j, psi in enumerate(c.flow_constraints):
            servo = c.reactions.get(j)
            react.append([sp.sympify(servo.get(i, 0)) if servo is not None else sp.diff(sp.sympify(psi), F[i])
                          for i in range(n)])
        self._f = sp.lambdify(args, [gD, hD, gV, hV, eff, react or [[0] * n]], modules="numpy")
        # small-signal pieces: inertia, effort sensitivities, and the response to each value (a source's drive)
        hT = [[sp.diff(T, a, b) for b in F] for a in F]
        deF = [[sp.diff(e, f) for f in F] for e in eff]
        deQ = [[sp.diff(e, q) for q in Q] for e in eff]
        deP = [[sp.diff(e, v) for v in P] for e in eff] if P else [[0]] * n
        psis = [sp.sympify(x) for x in c.flow_constraints]
        dpsiP = [[sp.diff(x, v) for v in P] for x in psis] if P and psis else [[0] * max(len(P), 1)]
        self._g = sp.lambdify(args, [hT, deF, deQ, deP, dpsiP], modules="numpy")
        self.value_names = tuple(value_names)

    def __call__(self, values, Q, F, tt):
        gD, hD, gV, hV, eff, react = self._f(values, Q, F, tt)
        f = lambda x: np.array(x, dtype=float)
        return {"gD": f(gD), "hD": f(hD), "gV": f(gV), "hV": f(hV), "eff": f(eff), "react": f(react)[:self.nflow]}

    def batch(self, values, F, tt):
        """Dissipation gradients (elements × ports) and Hessians (ports × ports × elements) of many elements
        of this law at once: ``values`` is a list of arrays (one per value), ``F`` an (elements × ports) array."""
        ne, P = F.shape
        Z = [np.zeros(ne)] * P
        gD, hD, *_ = self._f(values, Z, [F[:, i] for i in range(P)], tt)
        g = np.stack([np.broadcast_to(np.asarray(x, dtype=float), (ne,)) for x in gD], axis=1)
        H = np.array([[np.broadcast_to(np.asarray(x, dtype=float), (ne,)) for x in row] for row in hD])
        return g, H

    def small_signal(self, values, Q, F, tt):
        """Inertia ``hT``, effort sensitivities ``deF``/``deQ`` and value sensitivities ``deP``/``dpsiP``."""
        hT, deF, deQ, deP, dpsiP = self._g(values, Q, F, tt)
        f = lambda x: np.array(x, dtype=float)
        return {"hT": f(hT), "deF": f(deF), "deQ": f(deQ), "deP": f(deP), "dpsiP": f(dpsiP)[:self.nflow]}


def _law(cache, el, kinds, values):
    key = template_key(el, kinds, tuple(values))  # (an energy-law element's own function is in it)
    if key not in cache:
        cache[key] = _Law(el, kinds, tuple(values))
    return cache[key]


def _numbers(el, values, t0):
    """The element's values as floats, time functions (source waveforms) taken at ``t0``."""
    from netdyn.numerics.functions.compiled import time_function
    out = []
    for k, v in values.items():
        if type(v) in _PLAIN:  # a kept number (numeric_values): float of its sympy number is itself
            out.append(float(v))
            continue
        v = sp.sympify(v)
        if v.free_symbols - {t}:
            raise ModelError(f"{el.name}: {k} = {v} is not a number; the operating point needs numeric values")
        out.append(float(v) if v.is_number else float(time_function(v)(t0)))
    return out


# ------------------------------------------------------------------------------------------ the solve

class DCOperatingPoint:
    """The DC solution: ``voltages`` (node → V), ``currents`` (element → A, SPICE signs), per-port values.

    ``port_through[name]``/``port_across[name]`` list the through and across values of each port of an
    element; :meth:`initial_conditions` turns them into coordinates of any formulation.
    """

    def __init__(self, net, formulation, t0, voltages, currents, port_through, port_across):
        self.net, self.formulation, self.t0 = net, formulation, t0
        self.voltages, self.currents = voltages, currents
        self.port_through, self.port_across = port_through, port_across

    def initial_conditions(self, formulation=None):
        """``(q0, f0)`` dicts for :func:`netdyn.simulate` in ``formulation`` (default: the network's)."""
        return _initial_conditions(self.net, formulation, self.port_through, self.port_across, self.t0)

    def table(self):
        """The operating point as text: node voltages, then element currents (as ngspice's ``.op`` prints)."""
        width = max([len(str(n)) for n in self.voltages] + [len(n) for n in self.currents] + [8]) + 4
        lines = [f"{'node':<{width}}voltage (V)"]
        lines += [f"{'v(' + str(n) + ')':<{width}}{v: .9e}" for n, v in self.voltages.items()]
        lines += ["", f"{'element':<{width}}current (A)"]
        lines += [f"{'i(' + n + ')':<{width}}{i: .9e}" for n, i in self.currents.items()]
        return "\n".join(lines)

    def __str__(self):
        return self.table()

    def __repr__(self):
        return f"DCOperatingPoint({len(self.voltages)} nodes, {len(self.currents)} elements)"


@paused_gc()
def operating_point(net: Network, formulation: Formulation = None, t0: float = 0.0, hold: Mapping[str, float] | None = None,
                    clamp: Mapping[str, float] | None = None, tol: float = 1e-12,
                    max_iter: int = 200) -> DCOperatingPoint:
    """The DC operating point of a network (sources at ``t0``), or its consistent state with storage held.

    Parameters
    ----------
    net : Network
        The network (its elements numeric).
    formulation : str or dict, optional
        The coordinates the equations are solved in (default: the network's own); the answer is the same.
    t0 : float
        The time at which the sources are evaluated.
    hold : dict, optional
        ``{element: value}``: capacitors held at a voltage, inductors at a current (not DC then: the
        consistent state at ``t0`` of a transient started from those values).
    clamp : dict, optional
        ``{node: volts}``: node voltages forced during the solve (SPICE ``.ic`` without ``uic``).

    Returns
    -------
    DCOperatingPoint

    Examples
    --------
    >>> import netdyn
    >>> from netdyn.components.electrical import VoltageSource, Resistor
    >>> from netdyn.components.diode import Diode
    >>> net = netdyn.Network()
    >>> _ = net.add(VoltageSource("V1", "a", "0", 5.0), Resistor("R1", "a", "d", 1e3), Diode("D1", "d", "0"))
    >>> op = operating_point(net)
    >>> round(op.voltages["d"], 4), round(op.currents["D1"] * 1e3, 4)
    (0.6929, 4.3071)
    """
    from netdyn.graph.assemble import resolve_formulation
    from netdyn.graph.network import Network
    from netdyn.numerics.functions.compiled import time_function

    if not isinstance(net, Network):
        raise ModelError(f"operating_point takes a Network (its elements give the DC laws), not a "
                         f"{type(net).__name__}; for a LagrangianModel use netdyn.equilibrium(model)")
    if not hold and not clamp:  # structure first: a loop or a cut-set makes the DC point singular, named
        from netdyn.numerics.circuit.spice_start import dc_singularities
        if dc_singularities(net, limit=1):
            raise SingularSystemError(_singular_message(net, None, None, None))
    hold = dict(hold or {})
    for name in hold:
        if name not in net.elements:
            raise ModelError(f"hold: no element named {name!r} in the network")
    work = net
    clamp = {str(k): float(v) for k, v in (clamp or {}).items()}
    if clamp:  # clamps are voltage sources of their own, in a copy of the network
        from netdyn.components.electrical import VoltageSource
        work = Network(net.name)
        work.add(*net.elements.values())
        for node, v in clamp.items():
            if node not in net.graph:
                raise ModelError(f"clamp: no node named {node!r} in the network")
            work.add(VoltageSource(f"<ic {node}>", node, "0", v))
    domains = [d for d in work.domains if d in DOMAINS]
    forms = resolve_formulation(formulation, domains, work)
    kinds = {d: ACROSS if forms[d] == "node" else THROUGH for d in domains}

    lin, info, skip = _stamped(work, forms, kinds, t0)
    n, m = lin.n, lin.m
    # storage ports: V-ports get an effort unknown (or a held value), held T-ports a constraint row
    vcols, held_v, trows = [], {}, []
    for name, (el, law, vals, combos, keys, pk) in info.items():
        for i in law.vports:
            if name in hold:
                held_v[(name, i)] = hold[name]
            else:
                vcols.append((name, i))
        if name in hold:
            for i in law.tports:
                trows.append((name, i, hold[name]))
            if not law.vports and not law.tports:
                raise ModelError(f"hold: {name} stores no energy; only capacitors and inductors can be held")
    P, H = len(vcols), len(trows)
    N = n + P + m + H

    def vec(combo):
        idx = np.fromiter(combo.keys(), dtype=int, count=len(combo))
        return idx, np.fromiter(combo.values(), dtype=float, count=len(combo))

    u0 = np.array([float(time_function(u)(t0)) for u in lin.inputs]) if lin.inputs else np.zeros(0)
    rhs = np.zeros(N)
    rhs[:n] = lin.B_e @ u0 if lin.inputs else 0.0
    rhs[n + P:n + P + m] = -(lin.B_a @ u0) if lin.inputs else 0.0

    def put(r, c, v):
        rows.extend(np.broadcast_to(r, np.broadcast(r, c).shape).ravel())
        cols.extend(np.broadcast_to(c, np.broadcast(r, c).shape).ravel())
        data.extend(np.broadcast_to(v, np.broadcast(r, c).shape).ravel())

    # rows: [0, n) Lagrange, [n, n+m) flow constraints, [n+m, n+m+P) stationary storage, [n+m+P, N) held flows
    # columns: [0, n) f, [n, n+P) p, [n+P, n+P+m) μ, [n+P+m, N) multipliers of the held flows
    rows: list[int] = []
    cols: list[int] = []
    data: list[float] = []
    for k, (name, i) in enumerate(vcols):
        idx, cf = vec(info[name][3][i])
        put(idx, n + k, cf)
        put(n + m + k, idx, cf)
    for (name, i), value in held_v.items():
        idx, cf = vec(info[name][3][i])
        rhs[idx] -= cf * value
    for k, (name, i, value) in enumerate(trows):
        idx, cf = vec(info[name][3][i])
        put(idx, n + P + m + k, cf)
        put(n + m + P + k, idx, cf)
        rhs[n + m + P + k] = value
    rhs_lin = np.zeros(N)
    rhs_lin[:n] = rhs[:n]
    rhs_lin[n:n + m] = rhs[n + P:n + P + m]
    rhs_lin[n + m + P:] = rhs[n + m + P:]
    # put the stamp's blocks at their places: rows [0,n) cols f,μ ; rows [n,n+m) cols f
    Dc, Rc, Ac = lin.D.tocoo(), lin.reaction.tocoo(), lin.A.tocoo()
    put(Dc.row, Dc.col, Dc.data)
    put(Rc.row, n + P + Rc.col, Rc.data)
    put(n + Ac.row, Ac.col, Ac.data)
    static = sps.csc_array((np.array(data, dtype=float), (np.array(rows, dtype=int), np.array(cols, dtype=int))),
                           shape=(N, N))

    groups = _device_groups(info, skip, N)
    x = np.zeros(N)
    unlimited = False  # no junction limited on the last update
    for it in range(max_iter):
        A_it, b_it = static, rhs_lin.copy()
        for grp in groups:  # i(F) ~ g + H (F' - F) = H F' + off, for all devices of one law at once
            g, H = grp.evaluate(t0)
            off = g - np.einsum("eab,eb->ea", H, grp.F)
            b_it -= grp.C @ off.ravel()
            A_it = A_it + grp.C @ sps.csc_array((H.ravel(), (grp.hr, grp.hc)), shape=(grp.size, grp.size)) @ grp.Ct
        if it and unlimited and _at_rounding(A_it, b_it, x):
            break  # x solves the nonlinear equations to rounding: the updates left are noise (see below)
        try:
            lu = spla.splu(sps.csc_array(A_it))
        except RuntimeError:
            raise SingularSystemError(_singular_message(net, forms, lin, vcols)) from None
        x_new = lu.solve(b_it)
        if not np.all(np.isfinite(x_new)):
            raise SingularSystemError(_singular_message(net, forms, lin, vcols))
        converged = unlimited = True
        for grp in groups:
            Fnew = (grp.Ct @ x_new).reshape(grp.F.shape)
            limited = grp.limit(grp.F, Fnew)
            if np.max(np.abs(limited - Fnew)) > 0:
                converged = unlimited = False
            elif np.max(np.abs(limited - grp.F)) > tol * 1e3 * (1 + np.max(np.abs(grp.F))):
                converged = False
            grp.F = limited
        dx = np.max(np.abs(x_new - x)) if it else np.inf
        x = x_new
        if not groups or (converged and dx <= 1e-9 * (1 + np.max(np.abs(x)))):
            break
    else:
        raise SingularSystemError(f"the DC operating point did not converge in {max_iter} Newton iterations "
                                  f"(nonlinear elements {', '.join(skip)}); check the circuit or give "
                                  "initial conditions and use uic")
    f, p, mu = x[:n], x[n:n + P], x[n + P:n + P + m]
    lam_held = x[n + P + m:]
    return _report(net, work, forms, kinds, lin, info, f, p, mu, vcols, held_v, trows, lam_held, t0)


def _at_rounding(A, b, x, eps=1e-13):
    """True when ``x`` solves ``A x = b`` (the Newton matrix and right-hand side made at ``x``, so ``A x − b``
    is the nonlinear residual there) to rounding: the componentwise backward error
    ``|A x − b| / (|A| |x| + |b|)`` is below ``eps`` in every row (a row whose terms are all below 1e-3 of
    the largest row's is measured against that one's 1e-3: its residual is rounding from the others).

    A node that only reverse-biased junctions reach (conductance ``GMIN`` = 1e-12 S beside siemens
    elsewhere) has a voltage that the LU solve fixes only to about 1e-16 × 1e12: the Newton updates there
    stay at that noise for ever while every current balances to rounding. SPICE accepts such a point by its
    current test (the device current changes by less than ``reltol·|i| + abstol``); this is the same
    acceptance without a tolerance of its own.

    >>> import scipy.sparse as sps
    >>> A = sps.csc_array(np.array([[1.0, -1.0], [-1.0, 1.0 + 1e-12]]))
    >>> _at_rounding(A, np.array([0.0, 1e-12]), np.array([1.0 + 3e-5, 1.0 + 3e-5]))
    True
    >>> _at_rounding(A, np.array([0.0, 1e-12]), np.array([1.0, 0.5]))
    False
    """
    r = A @ x - b
    scale = abs(A) @ np.abs(x) + np.abs(b)
    return bool(np.all(np.abs(r) <= eps * (scale + 1e-3 * np.max(scale, initial=0.0))))


def port_incidence(combos, N):
    """The sparse ``N × (members·P)`` map from the unknowns to the port flows of a group of devices of one law:
    ``combos[e][a]`` is ``{unknown index: coefficient}`` of member ``e``'s port ``a``.

    >>> port_incidence([[{0: 1.0, 2: -1.0}], [{1: 1.0}]], 3).toarray().tolist()
    [[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0]]
    """
    P = len(combos[0])
    rows, cols, data = [], [], []
    for e, member in enumerate(combos):
        for a, combo in enumerate(member):
            for j, cf in combo.items():
                rows.append(j)
                cols.append(e * P + a)
                data.append(cf)
    return sps.csr_array((np.array(data, dtype=float), (rows, cols)), shape=(N, len(combos) * P))


class _DeviceGroup:
    """The nonlinear elements of one law, evaluated together: ``C`` maps their port flows to the unknowns."""

    def __init__(self, law, members, N):
        P = len(members[0][3])
        ne = len(members)
        self.law, self.size = law, ne * P
        self.C = port_incidence([m[3] for m in members], N).tocsc()
        self.Ct = self.C.T.tocsr()
        self.values = [np.array([mb[2][k] for mb in members]) for k in range(len(members[0][2]))]
        self.named = dict(zip(law.value_names, self.values))
        kind = type(members[0][0])
        self.fast = getattr(kind, "dissipation_batch", None)
        self.limiter = getattr(kind, "limit_flows_batch", None)
        self.hr = np.repeat(np.arange(ne * P).reshape(ne, P), P, axis=1).ravel()
        self.hc = np.tile(np.arange(ne * P).reshape(ne, P), (1, P)).ravel()
        self.F = np.zeros((ne, P))

    def evaluate(self, t0):
        """Dissipation gradients (devices × ports) and Hessians (devices × ports × ports) at :attr:`F`."""
        if self.fast is not None:
            return self.fast(self.named, self.F)
        g, H = self.law.batch(self.values, self.F, t0)
        return g, H.transpose(2, 0, 1)

    def limit(self, old, new):
        return self.limiter(self.named, old, new) if self.limiter is not None else new


def _device_groups(info, skip, N):
    by_law = {}
    for name in skip:
        item = info[name] + (name,)
        by_law.setdefault(id(item[1]), (item[1], []))[1].append(item)
    return [_DeviceGroup(law, members, N) for law, members in by_law.values()]


#: element laws and stamp templates by (type, port kinds, value names, law, coupling), kept across networks:
#: their symbolic work (sympy differentiation and lambdify) is the same for every network
_LAWS, _TEMPLATES = {}, {}


_LAST = LAST_STAMP   # the last stamp made (netdyn.numerics.circuit.stamp.LAST_STAMP); see :func:`_stamped`


def _fingerprint(work, forms, kinds, t0):
    """What a stamp depends on: the network (its identity, its add/remove count, its elements and their
    values), the formulation and ``t0``."""
    return (id(work), getattr(work, "_version", None), tuple(sorted(forms.items())), tuple(sorted(kinds.items())),
            float(t0), len(work.elements),  # the elements' values by their hash: a key of a few numbers kept
            hash(tuple((id(el), tuple(numeric_values(el).items())) for el in work.elements.values())))


@paused_gc()
def _stamped(work, forms, kinds, t0):
    """The network's sparse stamp (nonlinear elements left out) and each element's law, values and ports.

    Made once per network, formulation and ``t0``: a second call with the same ones (the transient after
    its DC operating point) gets the same objects back (callers do not modify them)."""
    key = _fingerprint(work, forms, kinds, t0)
    if _LAST[0] == key:
        return _LAST[1]
    _LAST[0] = _LAST[1] = None
    out = _stamp(work, forms, kinds, t0)
    _LAST[0], _LAST[1] = key, out
    return out


def _stamp(work, forms, kinds, t0):
    from netdyn.graph.assemble import _resolve_values, element_ports
    from netdyn.components.base import port_key
    from netdyn.numerics.circuit.stamp import NotLinear, _template, linear_network, template_key

    # which elements the stamp takes, which are solved by their own law
    skip, templates = [], _TEMPLATES
    if len(_TEMPLATES) > 512 or len(_LAWS) > 512:
        _TEMPLATES.clear()
        _LAWS.clear()
    # (port keys -> element: read for coupled elements only; each element's values made again below, not kept)
    port_of = {port_key(el, k): (name, k) for name, el in work.elements.items() for k in range(len(el.ports))} \
        if any(el.couples for el in work.elements.values()) else {}
    values_of = lambda el: numeric_values(el) if not el.couples else _resolve_values(el, False, {}, work)
    seen = {}
    for name, el in work.elements.items():
        values = values_of(el)
        keys, ports = element_ports(work, el, port_of)
        pk = tuple(kinds[p.domain] for p in ports)
        seen[name] = keys, pk
        key = template_key(el, pk, tuple(values))
        if key not in templates:
            try:
                templates[key] = _template(el, pk, tuple(values))
            except NotLinear:
                templates[key] = None
        if templates[key] is None:
            skip.append(name)
    try:
        lin = linear_network(work, forms, check=False, skip=skip)
    except NotLinear as exc:
        raise ModelError(f"operating point: {exc}") from None
    laws, info = _LAWS, {}
    numbers = {}
    for name, el in work.elements.items():
        keys, pk = seen[name]
        values = values_of(el)
        law = _law(laws, el, pk, values)
        nkey = (type(el), tuple(values.items()))  # a 1,000-section ladder has three distinct value sets
        if nkey not in numbers:
            numbers[nkey] = _numbers(el, values, t0)
        info[name] = (el, law, list(numbers[nkey]), [c for _, c in lin.ports[name]], keys, pk)
    for name in skip:
        el, law = info[name][:2]
        # a charge that is a function of the port's own flow (a junction's T*(v)) carries no current at DC
        stores_charge = law.tports and hasattr(type(el), "charge_batch")
        if law.vports or (law.tports and not stores_charge) or law.nflow or not law.has_D:
            raise ModelError(f"operating point: {name} ({type(el).__name__}) is nonlinear and not a plain "
                             "dissipator; the DC solve takes nonlinear resistors and diodes")

    return lin, info, skip


def _singular_message(net, forms, lin, vcols):
    from netdyn.numerics.circuit.spice_start import dc_singularities
    found = dc_singularities(net)
    what = "; ".join(found[:4]) + ("; ..." if len(found) > 4 else "") if found else \
        ("a node with no DC path to ground (only capacitors reach it), a loop of inductors and voltage sources, "
         "or a cut-set of capacitors and current sources")
    return (f"the DC operating point is singular: {what}; add a resistance, or start the transient from given "
            "initial conditions (.tran ... uic)")


def _evaluate_by_law(info, f, t0):
    """Every element's port flows and its law's ``gD``, ``eff`` and ``react`` at the solution, one vectorised
    call per law: ``{name: (flows, {"gD", "eff", "react"})}``."""
    by_law = {}
    for name, item in info.items():
        by_law.setdefault(id(item[1]), (item[1], []))[1].append(name)
    out = {}
    for law, names in by_law.values():
        ne, P = len(names), len(info[names[0]][4])
        flows = np.array([[sum(c * f[j] for j, c in cb.items()) for cb in info[nm][3]] for nm in names],
                         dtype=float).reshape(ne, P)
        vals = [np.array([info[nm][2][k] for nm in names]) for k in range(len(info[names[0]][2]))]
        gD, _, _, _, eff, react = law._f(vals, [np.zeros(ne)] * P, [flows[:, i] for i in range(P)], t0)
        col = lambda x: np.broadcast_to(np.asarray(x, dtype=float), (ne,))
        G = np.stack([col(x) for x in gD], axis=1) if P else np.zeros((ne, 0))
        Ef = np.stack([col(x) for x in eff], axis=1) if P else np.zeros((ne, 0))
        Rc = np.array([[col(x) for x in row] for row in react], dtype=float)[:law.nflow]  # rows x P x ne
        for e, nm in enumerate(names):
            out[nm] = (flows[e], {"gD": G[e], "eff": Ef[e], "react": Rc[:, :, e] if Rc.size else Rc.reshape(0, P)})
    return out


def _sensed_reactions(el, kinds):
    """``Contribution.sensed_reactions`` of an element (a current-controlled source in flux coordinates)."""
    if not getattr(el, "couples", ()) or any(k != ACROSS for k in kinds):  # only in flux (node) coordinates
        return {}
    c = el.contribute([PortVariables(k, sp.Dummy(), sp.Dummy()) for k in kinds], dict(el.values))
    return getattr(c, "sensed_reactions", {})


def _report(net, work, forms, kinds, lin, info, f, p, mu, vcols, held_v, trows, lam_held, t0):
    from netdyn.graph import topology
    row_of = {}
    for r, label in enumerate(lin.flow_labels):
        name = label.split("[")[0] if label.endswith("]") and "[" in label else label
        row_of.setdefault(name, []).append(r)
    pval = {key: p[k] for k, key in enumerate(vcols)}
    pval.update(held_v)
    lam_of = {(name, i): lam_held[k] for k, (name, i, _) in enumerate(trows)}
    through, across, port_effort = {}, {}, {}
    evaluated = _evaluate_by_law(info, f, t0)
    owner = {keys[i]: (name, i) for name, (el, _, _, _, keys, _) in info.items() for i in range(len(el.ports))}
    for name, (el, law, vals, combos, keys, pk) in info.items():
        flows, ev = evaluated[name]
        eff = ev["gD"] - ev["eff"]
        for i in range(len(keys)):
            if (name, i) in pval:
                eff[i] += pval[(name, i)]
            if (name, i) in lam_of:
                eff[i] += lam_of[(name, i)]
        for j, r in enumerate(row_of.get(name, [])[:ev["react"].shape[0]]):
            eff += ev["react"][j] * mu[r]
        for s, coeffs in _sensed_reactions(el, pk).items():  # a sensed source's multiplier acting here
            other, j = owner[keys[s]]
            g = evaluated[other][1]["react"][0][j]
            for i, c in coeffs.items():
                eff[i] += float(c) * g * mu[row_of[other][0]]
        port_effort[name] = (keys, pk, flows, eff)
    # sum efforts of every element acting on a port (coupled elements act on others' ports)
    by_key = {}
    for name, (keys, pk, flows, eff) in port_effort.items():
        for i, k in enumerate(keys):
            by_key[k] = by_key.get(k, 0.0) + eff[i]
    flow_of = {}
    for name, (keys, pk, flows, eff) in port_effort.items():
        for i, k in enumerate(keys):
            flow_of[k] = (pk[i], flows[i])
    for name, el in net.elements.items():
        keys = info[name][4][:len(el.ports)]
        th, ac = [], []
        for k in keys:
            kind, fl = flow_of[k]
            e = by_key[k]
            th.append(fl if kind == THROUGH else e)
            ac.append(e if kind == THROUGH else fl)
        through[name], across[name] = th, ac
    voltages = {}
    for domain in [d for d in net.domains if d in DOMAINS]:
        paths = topology.tree_paths(net.domain_graph(domain), "0")
        port_of = {}
        for name, el in net.elements.items():
            for i, k in enumerate(info[name][4][:len(el.ports)]):
                port_of[k] = (name, i)
        def down(value, key, sign):
            name, i = port_of[key]
            return value - sign * across[name][i]
        memo = {}  # each node's voltage its parent's minus one branch: linear in the nodes
        for node in paths:
            if node != "0":
                voltages[node] = float(paths.fold(node, memo, 0.0, down))
    currents = {}
    for name, el in net.elements.items():
        if el.ports:
            sign = getattr(el, "through_report_signs", el.report_signs)[0]
            currents[name] = float(sign * through[name][0])
    return DCOperatingPoint(net, forms, t0, voltages, currents, through, across)


# ------------------------------------------------------------------------------------------ initial state

@paused_gc()
def _initial_conditions(net, formulation, port_through, port_across, t0):
    """Coordinates of a formulation reproducing given port values (flows exactly, stored displacements too)."""
    from netdyn.graph.assemble import resolve_formulation
    domains = [d for d in net.domains if d in DOMAINS]
    forms = resolve_formulation(formulation, domains, net)
    kinds = {d: ACROSS if forms[d] == "node" else THROUGH for d in domains}
    lin, info, _ = _stamped(net, forms, kinds, t0)  # the coordinates and port combinations of the stamp
    names = list(lin.names)
    frows, fvals, qrows, qvals, labels = [], [], [], [], []
    for name, el in net.elements.items():
        if not el.ports:
            continue
        _, law, vals, combos, keys, pk = info[name]
        own = len(el.ports)
        flows = np.array([port_through[name][i] if pk[i] == THROUGH else port_across[name][i] for i in range(own)])
        efforts = np.array([port_across[name][i] if pk[i] == THROUGH else port_through[name][i]
                            for i in range(own)])
        for i in range(own):
            frows.append(combos[i])
            fvals.append(flows[i])
        if law.vports and set(law.vports) <= set(range(own)):
            Q = _displacements(el, law, vals, flows, efforts, t0, len(keys))
            for i in law.vports:
                qrows.append(combos[i])
                qvals.append(Q[i])
                labels.append(name)
    f0 = _least_squares(frows, fvals, len(names), "flows", forms)
    q0 = _least_squares(qrows, qvals, len(names), "stored displacements", forms)
    return dict(zip(names, q0)), dict(zip(names, f0))


def _displacements(el, law, vals, flows, efforts, t0, nports):
    """Port displacements whose potential gradient equals the port efforts (Newton; one step when linear)."""
    Q = np.zeros(nports)
    F = np.zeros(nports)
    F[:flows.size] = flows
    target = np.zeros(nports)
    target[:efforts.size] = efforts
    vp = law.vports
    for _ in range(50):
        ev = law(vals, Q, F, t0)
        r = ev["gV"][vp] - target[vp]
        if np.max(np.abs(r)) <= 1e-13 * (1 + np.max(np.abs(target[vp]))):
            break
        Q[vp] -= np.linalg.lstsq(ev["hV"][np.ix_(vp, vp)], r, rcond=None)[0]
    return Q


def _least_squares(rows, values, n, what, forms):
    if not rows:
        return np.zeros(n)
    r, c, d = [], [], []
    for i, row in enumerate(rows):
        for j, v in row.items():
            r.append(i)
            c.append(j)
            d.append(v)
    A = sps.csr_array((d, (r, c)), shape=(len(rows), n))
    b = np.asarray(values, dtype=float)
    sol = spla.lsqr(A, b, atol=1e-15, btol=1e-15, iter_lim=20 * n + 100)[0]
    res = A @ sol - b
    scale = 1e-7 * (1 + np.max(np.abs(b)))
    if np.max(np.abs(res)) > scale:
        if set(forms.values()) == {"node"}:
            raise InitialConditionError(
                f"the initial {what} cannot be represented in the node formulation (residual "
                f"{np.max(np.abs(res)):.3g}): node fluxes carry no flux circulating in a loop of inductors, so "
                "the inductors of each loop need currents with sum(L*i) = 0 around it; give such ic= values, or "
                "use formulation='branch' or 'loop' (a circuit with diodes runs in node coordinates only)")
        raise InitialConditionError(
            f"the initial {what} cannot be represented in the {', '.join(forms.values())} formulation (residual "
            f"{np.max(np.abs(res)):.3g}: charge conservation at a node reached only by capacitors, or flux "
            "through a loop of inductors, fixes them); use formulation='node' or 'branch'")
    return sol


@paused_gc()
def spice_initial_state(net, formulation=None, linear_jump=True):
    """``(q0, f0)`` for a transient of a netlist's network, as SPICE starts it.

    Without ``uic`` on ``.tran``: the DC operating point (``.ic`` node voltages clamped during the solve).
    With ``uic``: capacitors at their ``ic=`` (or the ``.ic`` node voltages across them, 0 otherwise),
    inductors at their ``ic=`` (or 0); every other quantity consistent with them at ``t = 0``. With
    ``linear_jump`` (the transient runs on the linear path) a ``uic`` start is the state before its jump
    (:func:`state_before_jump`), which that path completes by the circuit's impulses; other paths take the
    state after it.

    >>> from netdyn import read_netlist
    >>> net = read_netlist("rc\\nV1 in 0 5\\nR1 in out 1k\\nC1 out 0 1u\\n.tran 1u 1m\\n")
    >>> q0, f0 = spice_initial_state(net)
    >>> round(float(q0["q_R1"]) * 1e6, 9)    # C1 charged to 5 V: 5 µC
    5.0
    """
    tran = getattr(net, "tran", None)
    ics = dict(getattr(net, "initial_voltages", None) or {})
    element_ic = dict(getattr(net, "element_ic", None) or {})
    from netdyn.components.electrical import Capacitor, Inductor
    if not (tran and tran.uic):
        op = operating_point(net, clamp=ics or None)
        if ics:  # the clamps are released at t = 0: keep the stored state they gave, solve the rest again
            hold = {name: (op.port_across if isinstance(el, Capacitor) else op.port_through)[name][0]
                    for name, el in net.elements.items() if isinstance(el, (Capacitor, Inductor))}
            op = operating_point(net, hold=hold)
        return op.initial_conditions(formulation)
    from netdyn.numerics.circuit.linearsim import try_linear
    from netdyn.numerics.circuit.spice_start import uic_hold
    if linear_jump and try_linear(net, formulation) is not None:  # the linear path jumps by its own impulses
        try:
            return state_before_jump(net, formulation, element_ic, ics)
        except InitialConditionError:  # the coordinates cannot hold the state before the jump: after it
            pass
    from netdyn.numerics.circuit.spice_start import junction_hold
    hold = {**uic_hold(net, element_ic, ics), **junction_hold(net, ics)}  # after the jump, none over-determined
    op = operating_point(net, hold=hold)
    try:
        return op.initial_conditions(formulation)
    except InitialConditionError:  # node fluxes and a flux circulating around a loop of inductors
        from netdyn.numerics.circuit.loop_flux import LoopFluxState, loop_network
        loops = loop_network(net, op)
        if loops is None:
            raise
        run, through, across, offsets = loops
        q0, f0 = _initial_conditions(run, formulation, through, across, op.t0)
        return LoopFluxState(q0, run, offsets), f0


def state_before_jump(net, formulation, element_ic, node_ic, t0=0.0):
    """``(q0, f0)`` (:class:`~netdyn.numerics.circuit.spice_start.StateBeforeJump`) holding a ``uic`` deck's capacitor
    voltages as SPICE states them (before any jump) and its inductor currents after their flux-conserving jump
    (the rule of :func:`~netdyn.numerics.circuit.spice_start.uic_hold`), in the coordinates of ``formulation``. The
    linear path then takes the capacitors' jump with every impulse the circuit can carry, through controlled
    sources too (an ``H`` that senses the current of a supply whose
    capacitor jumps puts an impulse on its own output). Raises
    :class:`~netdyn.errors.InitialConditionError` when the coordinates cannot hold that state (node
    voltages cannot hold parallel capacitors at different voltages).

    >>> from netdyn import read_netlist
    >>> net = read_netlist("c\\nV1 a 0 1\\nC1 a 0 1u ic=3\\nR1 a 0 1k\\n.tran 1u 1m uic\\n")
    >>> q0, f0 = state_before_jump(net, "branch", net.element_ic, {})
    >>> round(float(q0["q_C1"]) * 1e6, 9)    # 3 µC before t = 0; the start jumps it to 1 µC
    3.0
    """
    from netdyn.graph.assemble import resolve_formulation
    from netdyn.numerics.circuit.spice_start import StateBeforeJump, kinds as roles, uic_hold
    edges = roles(net)
    after = uic_hold(net, element_ic, node_ic, t0, hold_all=True) if any(k == "L" for _, k, *_ in edges) else {}
    domains = [d for d in net.domains if d in DOMAINS]
    forms = resolve_formulation(formulation, domains, net)
    kinds = {d: ACROSS if forms[d] == "node" else THROUGH for d in domains}
    lin, info, _ = _stamped(net, forms, kinds, t0)
    frows, fvals, qrows, qvals = [], [], [], []
    for name, kind, a, b in edges:
        if kind not in ("C", "L"):
            continue
        if kind == "C":
            through, across = 0.0, float(element_ic.get(name, node_ic.get(a, 0.0) - node_ic.get(b, 0.0)))
        else:
            through, across = float(after[name]), 0.0
        _, law, vals, combos, keys, pk = info[name]
        flow = through if pk[0] == THROUGH else across
        effort = across if pk[0] == THROUGH else through
        if law.vports:
            Q = _displacements(net.elements[name], law, vals, np.array([flow]), np.array([effort]), t0, len(keys))
            qrows.append(combos[0])
            qvals.append(Q[0])
        else:
            frows.append(combos[0])
            fvals.append(flow)
    names = list(lin.names)
    f0 = _least_squares(frows, fvals, len(names), "flows", forms)
    q0 = _least_squares(qrows, qvals, len(names), "stored displacements", forms)
    return StateBeforeJump(zip(names, q0)), StateBeforeJump(zip(names, f0))

