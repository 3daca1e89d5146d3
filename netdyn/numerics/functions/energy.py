"""Energy bookkeeping: stored energy, dissipated and supplied power, element port efforts.

All functions return sympy expressions in the model's internal symbols
(``x``, ``x_dot``, ``x_ddot``, multipliers, parameters, ``t``) that
:meth:`netdyn.solution.Solution.evaluate` turns into numbers.

The balance they close is, for any model,

    d/dt (Σ f ∂T*/∂f − T* + V) = − f·∂D/∂f + f·e^s + λᵀΦ_t + μᵀa − ∂(T* − V)/∂t

>>> import sympy as sp
>>> from netdyn import LagrangianModel, coordinates, t
>>> x, = coordinates("x,")
>>> m, k, c = sp.symbols("m k c")
>>> model = LagrangianModel([x], T=m*x.diff(t)**2/2, V=k*x**2/2, D=c*x.diff(t)**2/2)
>>> stored_energy(model), dissipated_power(model)
(k*x**2/2 + m*x_dot**2/2, c*x_dot**2)
"""
import sympy as sp

from netdyn.lagrange.equations import internalize
from netdyn.lagrange.fastdiff import Differentiator
from netdyn.errors import ModelError
from netdyn.symbols import t


def stored_energy(model):
    """Σ f ∂T*/∂f − T* + V (equal to T* + V for quadratic coenergy)."""
    eq = model.derive()
    T = internalize(model, model.T)
    E = -T + internalize(model, model.V)
    for fi in eq.f:
        if fi in T.free_symbols:
            E += fi * sp.diff(T, fi)
    return sp.expand(E) if len(eq.f) < 50 else E


def dissipated_power(model):
    """f·∂D/∂f.

    Built term by term: each term of ``D`` (one element's dissipation) is
    differentiated only with respect to the flows it contains (in symengine
    where that is exact, :class:`~netdyn.lagrange.fastdiff.Differentiator`), so
    the cost grows linearly with the number of elements; the value is that of
    ``Σ_i f_i ∂D/∂f_i`` on the whole sum.
    """
    eq = model.derive()
    D = internalize(model, model.D)
    flows = set(eq.f)
    d = Differentiator()
    pieces = []
    for term in sp.Add.make_args(D):
        e = d.term(term)
        for fi in sorted(d.free(e) & flows, key=eq.f.index):
            pieces.append(d.times(d.diff(e, fi), fi))
    return d.sympy(pieces)


def supplied_power(model):
    """Power put in by applied efforts, rheonomic constraints and explicitly time-varying energies."""
    eq = model.derive()
    P = sp.S.Zero
    for c, e in model.efforts.items():
        P += internalize(model, e) * eq.f[model.coordinates.index(c)]
    P += sp.Add(*[l * pt for l, pt in zip(eq.lam, eq.Phi_t)])
    P += sp.Add(*[m * a for m, a in zip(eq.mu, eq.a0)])
    if eq.R is not None:  # servo constraints (controlled sources) work: μ·(A − R) f
        for (k, i), v in eq.A.items():
            P += eq.mu[k] * v * eq.f[i]
        for (k, i), v in eq.R.items():
            P -= eq.mu[k] * v * eq.f[i]
    L = internalize(model, model.T) - internalize(model, model.V)
    if t in L.free_symbols:
        P -= sp.diff(L, t)
    return P


def port_efforts(model, name, k, sharing=None):
    """(flow, conjugate effort) of port ``k`` of a network element, internal symbols.

    The conjugate effort is what the element absorbs on that port: its own
    ``d/dt ∂T/∂f − ∂T/∂q + ∂D/∂f + ∂V/∂q − e`` plus its constraint forces, plus the
    terms of coupling elements acting on the same port (mutual inductance). ``sharing``, the
    ``((element, slot), ...)`` acting on the port in network order (a solution's
    :class:`~netdyn.numerics.results.index.ResultIndex` has them for every port), spares the search
    over every element.
    """
    return port_flow(model, name, k), port_effort(model, name, k, sharing)


def port_flow(model, name, k):
    """The flow of port ``k`` of a network element (the rate of its displacement), internal symbols."""
    return internalize(model, model.metadata["elements"][name]["port_displacements"][k].diff(t))


def port_effort(model, name, k, sharing=None):
    """The conjugate effort of port ``k`` of a network element, internal symbols (see :func:`port_efforts`)."""
    md = model.metadata
    if sharing is None:
        key = md["elements"][name]["keys"][k]
        sharing = [(other, slot) for other, info in md["elements"].items()
                   for slot, kk in enumerate(info["keys"]) if kk == key]
    effort = sp.S.Zero
    for other, slot in sharing:
        effort += internalize(model, _slot_effort(model, md["elements"][other], slot))
    return effort


def _slot_effort(model, info, i):
    c = info["contribution"]
    Q, F = info["Q"], info["F"]
    Acc = [sp.Dummy(f"A{j}") for j in range(len(Q))]
    T, V, D = sp.sympify(c.T), sp.sympify(c.V), sp.sympify(c.D)
    p = sp.diff(T, F[i])
    dp = sp.diff(p, t) + sp.Add(*[sp.diff(p, Q[j]) * F[j] + sp.diff(p, F[j]) * Acc[j] for j in range(len(Q))])
    e = dp - sp.diff(T, Q[i]) + sp.diff(D, F[i]) + sp.diff(V, Q[i]) - sp.sympify(c.efforts.get(i, 0))
    for idx, phi in zip(info["constraints"], c.constraints):
        e += model.lambdas[idx] * sp.diff(sp.sympify(phi), Q[i])
    for j, (idx, psi) in enumerate(zip(info["flow_constraints"], c.flow_constraints)):
        servo = getattr(c, "reactions", {}).get(j)
        e += model.mus[idx] * (sp.sympify(servo.get(i, 0)) if servo is not None else sp.diff(sp.sympify(psi), F[i]))
    for s, coeffs in getattr(c, "sensed_reactions", {}).items():  # a sensed source's multiplier acting here
        if i in coeffs:
            other = model.metadata["elements"][model.metadata["port_of"][info["keys"][s]][0]]
            j = model.metadata["port_of"][info["keys"][s]][1]
            g = sp.diff(sp.sympify(other["contribution"].flow_constraints[0]), other["F"][j])
            e += model.mus[other["flow_constraints"][0]] * sp.sympify(coeffs[i]) * g
    free = e.free_symbols
    sub = {}  # (the rates of a port's displacement only where the effort has them: each is a sympy diff)
    for j, qx in enumerate(info["port_displacements"]):
        for sym, order in ((Q[j], 0), (F[j], 1), (Acc[j], 2)):
            if sym in free:
                sub[sym] = qx.diff(t, order) if order else qx
    return e.xreplace(sub)


def element_energy(model, name):
    """``(stored energy, dissipated power, absorbed power)`` of one network element, internal symbols.

    The absorbed power is Σ over the element's ports of flow × the element's own
    effort on that port (its constraint forces included), so for every element
    ``d/dt stored + dissipated = absorbed``; sources absorb negative power, an
    ideal transducer none.
    """
    md = model.metadata
    info = md.get("elements", {}).get(name)
    if info is None:
        raise ModelError(f"no element {name!r} in {model.name}; per-element energy needs a model assembled from a "
                         f"network (its elements are {sorted(md.get('elements', {})) or 'none'})")
    c, Q, F = info["contribution"], info["Q"], info["F"]
    T, V, D = sp.sympify(c.T), sp.sympify(c.V), sp.sympify(c.D)
    stored = -T + V + sp.Add(*[f * sp.diff(T, f) for f in F])
    dissipated = sp.Add(*[f * sp.diff(D, f) for f in F])
    sub = {}
    for j, qx in enumerate(info["port_displacements"]):
        sub[Q[j]] = qx
        sub[F[j]] = qx.diff(t)
    absorbed = sp.Add(*[info["port_displacements"][i].diff(t) * _slot_effort(model, info, i) for i in range(len(Q))])
    return tuple(internalize(model, e.xreplace(sub)) for e in (stored, dissipated, absorbed))
