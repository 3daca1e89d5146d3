"""A bond graph as a *system* of the analysis tools: inputs, sources, storage, named signals.

The analysis layer (``linearize``, ``equilibrium``, ``compare``) asks a system
for its model through a small duck-typed protocol that a ``Network`` and a
``BondGraph`` both follow:

* ``system.model(formulation=...)`` — the ``LagrangianModel``;
* ``system.with_inputs(names, formulation)`` — the model with the named sources
  turned into input functions ``name(t)``, and their nominal values;
* ``system.source_names()``, ``system.storage_names()`` — for reports;
* ``model.metadata["signal"](spec)`` — an output such as ``"f(L1)"`` as an
  expression in the model's coordinate functions (or ``None``).

This module implements them for bond graphs: ``e(X)`` and ``f(X)``, the
power variables of the bond of element X (or of the bond X): ``e·f`` is the
power along its half-arrow, so a source's flow is the flow it delivers and a
storage element's the flow into it; ``q(X)`` and ``p(X)``, the energy
variables of an element (a C's displacement, an I's momentum, seen from the
element). Either formulation works (the reduced one writes eliminated bonds
through the independent ones).

>>> import netdyn, sympy as sp
>>> bg = netdyn.BondGraph("RC")
>>> for k, n, p in [("Se", "u", {"effort": 1.0}), ("1", "J", {}), ("C", "C1", {"C": 0.5}), ("R", "R1", {"R": 2.0})]:
...     bg.add(k, n, **p)
>>> _ = bg.chain("u", "J", "C1"); _ = bg.bond("J", "R1")
>>> model, nominal = with_inputs(bg, ["u"])
>>> model.coordinate_names, nominal
(['q_C1'], {'u': 1.0})
>>> lin = netdyn.linearize(bg, inputs=["u"], u={"u": 0}, outputs=["e(C1)"])
>>> lin.poles(), float(lin.static_gain()[0, 0])        # -1/(RC), unit gain to the capacitor voltage
(array([-1.+0.j]), 1.0)
"""
from __future__ import annotations

import sympy as sp

from netdyn.bondgraph.kinds import F, Q, field_function
from netdyn.errors import ModelError
from netdyn.symbols import t

#: the formulation the analysis tools use when none is asked for: junction constraints eliminated exactly
ANALYSIS_FORMULATION = "reduced"


def with_inputs(bg, inputs, formulation=None):
    """``(model, nominal)``: the model with sources ``inputs`` as input functions of t, and their values at t = 0.

    Raises :class:`~netdyn.errors.ModelError` naming an input that is not a
    source of the graph.
    """
    inputs = list(inputs or [])
    sources = source_names(bg)
    for name in inputs:
        if name not in sources:
            raise ModelError(f"{name!r} is not a source of bond graph {bg.name!r}; inputs are its Se and Sf "
                             f"elements: {sources or 'none'}")
    work = bg.copy() if inputs else bg
    nominal = {}
    for name in inputs:
        key = "effort" if bg.kind(name) == "Se" else "flow"
        value = sp.sympify(bg.params(name)[key])
        if value.atoms(sp.core.function.AppliedUndef):
            nominal[name] = 0.0
        else:
            nominal[name] = float(value.subs(t, 0))
        work.graph.nodes[name]["params"] = {**bg.params(name), key: sp.Function(name)(t)}
    return work.model(formulation=formulation or ANALYSIS_FORMULATION), nominal


def source_names(bg):
    """The ``Se`` and ``Sf`` elements."""
    return bg.of_kind("Se", "Sf")


def storage_names(bg):
    """The elements that store energy: ``C``, ``I`` and storage fields."""
    out = []
    for n in bg.graph.nodes:
        kind = bg.kind(n)
        if kind in ("C", "I"):
            out.append(n)
        elif kind == "field" and any(getattr(el, "role", None) != "R" for el in bg.params(n)["element"]):
            out.append(n)
    return out


def signal_function(bg, q, dependent):
    """The ``metadata["signal"]`` hook of a bond-graph model: ``spec -> expression`` or ``None``.

    ``q``: bond -> its coordinate function; ``dependent``: coordinate name ->
    ``{coordinate name: coefficient}`` for bonds the reduced formulation eliminated.
    """
    by_name = {bg.coordinate_name(b): fn for b, fn in q.items()}

    def disp(b):
        name = bg.coordinate_name(b)
        if name in dependent:
            return sp.Add(*[c * by_name[k] for k, c in dependent[name].items()])
        return by_name[name]

    def signal(spec):
        if not (isinstance(spec, str) and len(spec) > 3 and spec[1] == "(" and spec.endswith(")")
                and spec[0] in "efqp"):
            return None
        which, target = spec[0], spec[2:-1]
        if target not in bg.graph and target not in bg.bond_names:
            return None
        if target in bg.graph and len(bg.bonds_of(target)) != 1:
            if target not in bg.bond_names:
                raise ModelError(f"output {spec!r}: {target} has {len(bg.bonds_of(target))} bonds; name one of "
                                 f"them ({bg.bonds_of(target)}) instead")
            b = target   # a field's first bond carries the field's name
        else:
            b = bg.bond_of(target)
        if which == "f":
            return disp(b).diff(t)
        field = next((n for n in bg.ends(b) if bg.is_field(n)), None)
        if field is not None:
            return _field_effort(bg, field, b, which, {bb: bg.sign(field, bb) * disp(bb) for bb in bg.bonds_of(field)},
                                 spec)
        sign = bg.sign(target, b) if target in bg.graph else 1
        x = sign * disp(b)
        if which == "q":
            return x
        return _effort(bg, target if target in bg.graph else None, which, x, spec, b)

    return signal


def _field_effort(bg, n, b, which, x, spec):
    """A multiport field's displacement, momentum or effort on its bond ``b`` (``x``: bond -> port displacement)."""
    kind, bonds = bg.kind(n), bg.bonds_of(n)
    xs = [x[bb] for bb in bonds]
    if which == "q":
        return x[b]
    if kind == "C":
        if which == "p":
            raise ModelError(f"output {spec!r}: a momentum belongs to an I element; {n} is a C field")
        return _partial(field_function(kind, bg.params(n), xs), xs, bonds.index(b))
    fs = [v.diff(t) for v in xs]
    grad = _partial(field_function(kind, bg.params(n), fs), fs, bonds.index(b))
    if kind == "R":
        if which == "p":
            raise ModelError(f"output {spec!r}: a momentum belongs to an I element; {n} is an R field")
        return grad
    return grad if which == "p" else grad.diff(t)


def _partial(expr, variables, k):
    """∂expr/∂variables[k] for variables that are functions of t or their derivatives."""
    dummies = [sp.Dummy() for _ in variables]
    return sp.diff(expr.xreplace(dict(zip(variables, dummies))), dummies[k]).xreplace(dict(zip(dummies, variables)))


def _effort(bg, n, which, x, spec, bond=None):
    """Effort (``e``) or momentum (``p``) of a one-port element from its constitutive law."""
    kind = bg.kind(n) if n is not None else None
    vals = bg.params(n) if kind else {}
    what = f"element {n}" if kind else f"bond {bond}"
    fx = x.diff(t)
    if kind == "I":
        p = vals["I"] * fx if "I" in vals else sp.diff(vals["coenergy"], F).xreplace({F: fx})
        return p if which == "p" else p.diff(t)
    if which == "p":
        raise ModelError(f"output {spec!r}: a momentum belongs to an I element; {what} is not one")
    if kind == "C":
        return x / vals["C"] if "C" in vals else sp.diff(vals["energy"], Q).xreplace({Q: x})
    if kind == "R":
        return vals["R"] * fx if "R" in vals else sp.diff(vals["content"], F).xreplace({F: fx})
    if kind == "Se":
        return vals["effort"]
    raise ModelError(f"output {spec!r}: the effort of {what} is a multiplier of the model, not an "
                     "element law; ask for the effort of a C, I, R or Se element on the same junction")


__all__ = ["with_inputs", "source_names", "storage_names", "signal_function", "ANALYSIS_FORMULATION"]
