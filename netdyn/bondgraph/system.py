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
>>> model, nominal = with_inputs(bg, ["u"])       # the state equations in the energy variables
>>> model.coordinate_names, nominal
(['q_C1'], {'u': 1.0})
>>> lin = netdyn.linearize(bg, inputs=["u"], u={"u": 0}, outputs=["e(C1)"])
>>> lin.poles(), float(lin.static_gain()[0, 0])        # -1/(RC), unit gain to the capacitor voltage
(array([-1.+0.j]), 1.0)
"""
from __future__ import annotations

import re

import sympy as sp

from netdyn.bondgraph.laws import CausalSystem
from netdyn.bondgraph.kinds import field_function
from netdyn.errors import InitialConditionError, ModelError, NetdynError
from netdyn.symbols import t

#: the formulation the analysis tools use when none is asked for: the explicit state equations in the energy
#: variables (``q_<C>``, ``p_<I>``), or, where the graph has none (a field in mixed causality, a wrapped network
#: element), the junction constraints eliminated exactly
ANALYSIS_FORMULATION = "state"
FALLBACK_FORMULATION = "reduced"


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
    if formulation is None:
        try:
            model = work.model(formulation=ANALYSIS_FORMULATION)
        except NetdynError:
            model = work.model(formulation=FALLBACK_FORMULATION)
    else:
        model = work.model(formulation=formulation)
    model.metadata["input_functions"] = [sp.Symbol(name) for name in inputs]   # in the order given
    return model, nominal


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


#: the series a solution's ``through(X)`` and ``across(X)`` read on a bond graph: its flow and its effort (the
#: electrical reading of a bond: current through a port, voltage across it — a converted mechanical network's
#: forces are efforts, so there ``across`` is the force; ``e(X)``, ``f(X)`` say it without an analogy)
THROUGH_ACROSS = ("f", "e")


def signal_names(bg):
    """The named signals of a bond graph, in graph order: ``e(X)``, ``f(X)`` of every one-port element and of
    every bond not named after one, ``q(C)``, ``p(I)`` and ``E(X)`` of its one-port storage elements.

    >>> import netdyn
    >>> bg = netdyn.BondGraph("RC")
    >>> for k, n, p in [("Se", "u", {"effort": 1.0}), ("1", "J", {}), ("C", "C1", {"C": 0.5})]:
    ...     bg.add(k, n, **p)
    >>> _ = bg.chain("u", "J", "C1")
    >>> signal_names(bg)
    ['e(u)', 'f(u)', 'e(C1)', 'f(C1)', 'q(C1)', 'E(C1)']
    """
    out = []
    for n in bg.graph.nodes:
        if len(bg.bonds_of(n)) == 1 and bg.kind(n) not in ("port",):
            out += [f"e({n})", f"f({n})"]
            if bg.kind(n) in ("C", "I") and not bg.is_field(n):
                out += [f"{'q' if bg.kind(n) == 'C' else 'p'}({n})", f"E({n})"]
    for b in bg.bond_names:
        if b not in bg.graph:
            out += [f"e({b})", f"f({b})"]
    return out


def state_series(bg):
    """``name -> series`` for the energy variables of a bond graph's one-port storage elements: ``p_<I>`` reads
    ``p(I)`` and ``q_<C>`` reads ``q(C)`` wherever the formulation has no coordinate of that name (the bond
    formulation's coordinate of an I is its displacement q_<I>, the integral of its flow), so ``sol["p_L1"]``
    is the inductor's flux linkage on every path, as ``q0={"p_L1": ...}`` sets it on every path.

    >>> import netdyn
    >>> bg = netdyn.BondGraph("mass")
    >>> bg.add("Se", "F", effort=2.0); bg.add("I", "m", I=4.0); _ = bg.bond("F", "m")
    >>> state_series(bg)("p_m"), state_series(bg)("p_F")
    ('p(m)', None)
    """
    names = {}
    for n in bg.of_kind("C", "I"):
        if not bg.is_field(n):
            names[("q_" if bg.kind(n) == "C" else "p_") + re.sub(r"\W", "_", n)] = \
                f"{'q' if bg.kind(n) == 'C' else 'p'}({n})"
    return names.get


def parse_signal(bg, spec):
    """``(which, target, bond)`` of a named signal ``e(X)``, ``f(X)``, ``p(X)``, ``q(X)``, ``E(X)`` (X an element
    or a bond), or None when ``spec`` is no such name."""
    if not (isinstance(spec, str) and len(spec) > 3 and spec[1] == "(" and spec.endswith(")")
            and spec[0] in "efqpE"):
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
    return which, target, b


def field_effort(bg, n, b, which, x, spec, vals=None):
    """A multiport field's displacement, momentum or effort on its bond ``b`` (``x``: bond -> port displacement)."""
    kind, bonds = bg.kind(n), bg.bonds_of(n)
    vals = bg.params(n) if vals is None else vals
    xs = [x[bb] for bb in bonds]
    if which == "q":
        return x[b]
    if which == "E":
        if kind == "C":
            return field_function(kind, vals, xs)
        raise ModelError(f"output {spec!r}: E(X) of a field is given for C fields")
    if kind == "C":
        if which == "p":
            raise ModelError(f"output {spec!r}: a momentum belongs to an I element; {n} is a C field")
        return _partial(field_function(kind, vals, xs), xs, bonds.index(b))
    fs = [v.diff(t) for v in xs]
    grad = _partial(field_function(kind, vals, fs), fs, bonds.index(b))
    if kind == "R":
        if which == "p":
            raise ModelError(f"output {spec!r}: a momentum belongs to an I element; {n} is an R field")
        return grad
    return grad if which == "p" else grad.diff(t)


def _partial(expr, variables, k):
    """∂expr/∂variables[k] for variables that are functions of t or their derivatives."""
    dummies = [sp.Dummy() for _ in variables]
    return sp.diff(expr.xreplace(dict(zip(variables, dummies))), dummies[k]).xreplace(dict(zip(dummies, variables)))


def bond_signal_function(info):
    """The ``metadata["signal"]`` hook of a bond-graph model (``info``: its :class:`~netdyn.bondgraph.convert.BondModelInfo`)."""
    return info.signal


def state_signal_function(bg, se, laws, sub):
    """The ``metadata["signal"]`` hook of the state formulation: ``e(X)``/``f(X)`` of every bond, ``q(C)``,
    ``p(I)`` and ``E(X)`` of the storage elements, from the state equations ``se`` (``sub``: its symbols ->
    the model's coordinate functions and their rates)."""
    state_of = se.variables.get("state_of", {})

    def signal(spec):
        parsed = parse_signal(bg, spec)
        if parsed is None:
            return None
        which, target, b = parsed
        if which in "ef":
            return sp.sympify(se.signals[(which, b)]).xreplace(sub)
        n = target if target in bg.graph else None
        kind = bg.kind(n) if n is not None else None
        if which == "E" and n in se.energies:
            return sp.sympify(se.energies[n]).xreplace(sub)
        if which == "q" and ("x", target) in state_of:   # a displacement kept as a state (it modulates a two-port)
            return state_of[("x", target)].xreplace(sub)
        if kind in ("C", "I") and not bg.is_field(n) and which == ("q" if kind == "C" else "p"):
            if n in state_of:
                return state_of[n].xreplace(sub)
            s = bg.sign(n, b)
            x = se.signals[("e", b)] if kind == "C" else s * se.signals[("f", b)]
            return laws[n].G(sp.sympify(x)).xreplace(sub)
        if which == "p" and kind != "I":
            raise ModelError(f"output {spec!r}: p(X), the integral of the effort (a momentum), is a state of an I element here; "
                             f"{target} is {'a ' + kind + ' element' if kind else 'a bond'}: the state formulation "
                             "integrates only the storage states; simulate the bond formulation (the default), which "
                             "has p(R) = R q(R) of a linear R and the dual coordinate of an element given its effort")
        raise ModelError(f"output {spec!r}: the state formulation has the energy variables of the storage "
                         f"elements (q(C), p(I)), E(X) and every bond's e and f; for {which}({target}) use the "
                         "bond formulation")

    return signal


class CausalStart:
    """Numbers of the causal evaluation at one instant: from the storage states, every effort and flow, the
    storage elements' momenta ``("p", I)`` and displacements ``("q", C)``; nonlinear algebraic loops solved
    by Newton's method. ``system`` is None when the graph has no causal evaluation here."""

    def __init__(self, bg, symbolic=False, system=None):
        self.bg = bg
        try:
            self.system = CausalSystem(bg, symbolic) if system is None else system
            self.se = self.system.equations()
        except NetdynError:
            self.system = None
            return
        se = self.se
        self.states = list(se.states)
        self.state_key = {}
        for key, sym in self.system.state_of.items():
            self.state_key[sym] = ("el", key) if isinstance(key, str) else key
        exprs = dict(se.signals)
        for n, law in self.system.laws.items():
            if bg.kind(n) not in ("C", "I"):
                continue
            b = bg.bond_of(n)
            if n in self.system.state_of:
                exprs[("q" if bg.kind(n) == "C" else "p", n)] = self.system.state_of[n]
            elif bg.kind(n) == "C" and ("e", b) in exprs:
                exprs[("q", n)] = law.G(sp.sympify(exprs[("e", b)]))
            elif bg.kind(n) == "I" and ("f", b) in exprs:
                exprs[("p", n)] = law.G(bg.sign(n, b) * sp.sympify(exprs[("f", b)]))
        for k, r in zip(self.states, se.rhs):
            exprs[("rate", k)] = r
        rates = set(se.variables.get("rates", {}).values())
        self.keys = [k for k, v in exprs.items() if not _has_rate(sp.sympify(v), rates)]
        self.exprs = [sp.sympify(exprs[k]) for k in self.keys]
        self.algebraic = list(se.algebraic)
        self._fns = None

    def _compile(self, cm):
        if self._fns is not None and self._fns[0] is cm:
            return self._fns[1:]
        inputs = {}
        for e in self.exprs + list(self.se.residuals):
            for u in e.atoms(sp.core.function.AppliedUndef):
                inputs[u] = sp.Symbol(u.func.__name__)
        args = [t, self.states, self.algebraic, list(cm.parameters), list(cm.inputs)]
        sub = lambda e: e.xreplace(inputs)
        values = sp.lambdify(args, [sub(e) for e in self.exprs], modules="numpy")
        g = [sub(r) for r in self.se.residuals]
        res = sp.lambdify(args, g, modules="numpy") if g else None
        jac = sp.lambdify(args, [[sp.diff(r, z) for z in self.algebraic] for r in g], modules="numpy") if g else None
        self._fns = (cm, values, res, jac)
        return values, res, jac

    def _args(self, state, t0, cm, p):
        x = [float(state[s]) for s in self.states]
        return x, list(p.vector), list(p.inputs(t0))

    def evaluate(self, state, t0, cm, p):
        """``{key: value}`` at the states ``state`` (symbol -> number); None when the loops do not solve."""
        import numpy as np
        values, res, jac = self._compile(cm)
        x, pv, uv = self._args(state, t0, cm, p)
        z = np.zeros(len(self.algebraic))
        if res is not None:
            z = _newton(lambda zz: np.asarray(res(t0, x, zz, pv, uv), dtype=float),
                        lambda zz: np.asarray(jac(t0, x, zz, pv, uv), dtype=float).reshape(len(z), len(z)), z)
            if z is None:
                return None
        with np.errstate(all="ignore"):
            out = values(t0, x, z, pv, uv)
        result = {}
        for k, v in zip(self.keys, out):
            try:
                v = float(v)
            except (TypeError, ValueError):
                continue
            if np.isfinite(v):
                result[k] = v
        for zk, zv in zip(self.algebraic, z):
            result[("z", zk)] = float(zv)
        return result

    def number(self, expr, t0, cm, p):
        """One expression of the parameters and inputs at ``t0``."""
        inputs = {u: sp.Symbol(u.func.__name__) for u in sp.sympify(expr).atoms(sp.core.function.AppliedUndef)}
        fn = sp.lambdify([t, list(cm.parameters), list(cm.inputs)], sp.sympify(expr).xreplace(inputs), modules="numpy")
        return float(fn(t0, list(p.vector), list(p.inputs(t0))))

    def field_momentum(self, n, b, f0, names, t0, cm, p):
        """The momentum on port ``b`` of an I field at the flows given (0 where none is)."""
        bg = self.bg
        bonds = bg.bonds_of(n)
        fs = [bg.sign(n, bb) * float(f0.get(names[bb], 0.0)) for bb in bonds]
        dummies = [sp.Dummy() for _ in bonds]
        T = field_function("I", self.system.vals[n], dummies)
        return self.number(sp.diff(T, dummies[bonds.index(b)]).xreplace(dict(zip(dummies, fs))), t0, cm, p)


def check_slopes(bg, system, values, t0):
    """An :class:`~netdyn.errors.InitialConditionError` for a law whose slope, in the causality assigned, is
    unbounded at the start (``f = k·sign(e)·√|e|`` given e = 0: an empty tank's orifice): every implicit
    integrator's Newton iteration needs that slope. Names the element, the law and the point."""
    import numpy as np
    from netdyn.bondgraph.laws.forms import derivative, plain
    z = sp.Dummy("z")
    for n, law in system.laws.items():
        if law.is_linear():
            continue
        b = bg.bond_of(n)
        s = bg.sign(n, b)
        kind = bg.kind(n)
        if kind == "R":
            forward = system.setter[b] == n          # given its flow: e = F(f)
            at = s * values.get(("f", b), np.nan) if forward else values.get(("e", b), np.nan)
        else:
            forward = n in system.state_of           # integral causality: e = F(q), f = F(p)
            if forward:
                at = values.get(("q" if kind == "C" else "p", n), np.nan)
            else:
                at = values.get(("e", b), np.nan) if kind == "C" else s * values.get(("f", b), np.nan)
        if not np.isfinite(at):
            continue
        fn = law.F(z) if forward else law.G(z)
        try:
            slope = complex(sp.lambdify([z], plain(derivative(fn, z)), modules=["math", "mpmath", "sympy"])(at))
        except (ZeroDivisionError, ValueError, OverflowError):
            slope = complex(float("inf"))
        except Exception:  # noqa: BLE001 - a numeric law: its slope is its own business
            continue
        if not (np.isfinite(slope.real) and abs(slope.imag) <= 1e-12 * (1 + abs(slope.real))):
            x, y = law.x, law.y
            var, out = (x, y) if forward else (y, x)
            raise InitialConditionError(
                f"{n}: its law {out} = {law.F(x) if forward else law.G(y)} has an unbounded slope at {var} = {at:g}, "
                f"where the simulation starts (t = {t0:g}); the implicit integrators' Newton iteration needs a finite "
                f"slope: start off that point (change the initial state), or give the law a finite slope there "
                f"(a laminar part near 0, e.g. a Piecewise law)")


def _has_rate(expr, rates):
    return bool(expr.free_symbols & rates) or bool(expr.atoms(sp.Derivative))


def _newton(fun, jac, z, max_iter=100):
    """Newton's method with a halving line search; scipy's hybrid method where it stalls. None: no solution.

    Where the analytic Jacobian is not finite (a law with an unbounded slope at the iterate: √|e| at e = 0)
    a step of central differences stands in for it."""
    import numpy as np

    def jacobian(zz):
        with np.errstate(all="ignore"):
            J = jac(zz)
        if np.all(np.isfinite(J)):
            return J
        J = np.empty((zz.size, zz.size))
        for j in range(zz.size):
            h = 1e-7 * max(1.0, abs(zz[j]))
            a, b = zz.copy(), zz.copy()
            a[j] += h
            b[j] -= h
            J[:, j] = (fun(a) - fun(b)) / (2 * h)
        return J

    r = fun(z)
    for _ in range(max_iter):
        size = np.max(np.abs(r)) if r.size else 0.0
        if not np.isfinite(size):
            break
        if size <= 1e-14 * (1.0 + np.max(np.abs(z))):
            return z
        J = jacobian(z)
        if not np.all(np.isfinite(J)):
            break
        dz = np.linalg.lstsq(J, -r, rcond=None)[0]
        step = 1.0
        while step > 1e-6:
            trial = z + step * dz
            rt = fun(trial)
            if np.all(np.isfinite(rt)) and np.linalg.norm(rt) < np.linalg.norm(r):
                break
            step /= 2
        else:
            break
        if np.max(np.abs(trial - z)) <= 4e-16 * (1.0 + np.max(np.abs(z))):
            return trial
        z, r = trial, rt
    from scipy.optimize import root
    sol = root(fun, z if np.all(np.isfinite(z)) else np.zeros_like(z), jac=jacobian, method="hybr", tol=1e-14)
    if sol.success or np.max(np.abs(fun(sol.x))) <= 1e-9 * (1.0 + np.max(np.abs(sol.x))):
        return sol.x
    return None


__all__ = ["with_inputs", "source_names", "storage_names", "parse_signal", "signal_names", "state_series", "THROUGH_ACROSS",
           "bond_signal_function",
           "state_signal_function", "CausalStart", "ANALYSIS_FORMULATION"]
