"""Constitutive laws of one-port ``C``, ``I`` and ``R`` elements in any of their textbook forms.

Each element relates two variables ``x`` and ``y``; ``y = F(x)`` is its law in
the causality the element prefers for a state (a ``C`` given its displacement, an
``I`` its momentum) or for a flow (an ``R`` given its flow):

=====  =====  =====  ============================  ===========================
kind   x      y      forms of y = F(x)              forms of x = G(y)
=====  =====  =====  ============================  ===========================
``C``  ``q``  ``e``  ``energy`` V(q), ``law="e =     ``coenergy`` V*(e),
                     ..."``, ``C`` (e = q/C)        ``law="q = ..."``
``I``  ``p``  ``f``  ``energy`` H(p), ``law="f =     ``coenergy`` T*(f),
                     ..."``, ``I`` (f = p/I)        ``law="p = ..."``
``R``  ``f``  ``e``  ``content`` D(f), ``law="e =    ``cocontent`` D*(e),
                     ..."``, ``R`` (e = R f)        ``law="f = ..."``
=====  =====  =====  ============================  ===========================

From the form given, :class:`Law` derives the other three functions — ``F``,
``G`` (its inverse), the energy-like ``E(x) = ∫F dx`` (energy, content) and the
co-energy-like ``E*(y) = ∫G dy`` (co-energy, co-content) — in closed form where
sympy finds one: polynomial and elementary inverses, and *sign-preserving* laws
(odd, like the orifice ``f = k·sign(e)·√|e|``, inverted on the positive half and
extended by symmetry: ``e = sign(f)·f²/k²``). Where there is no closed form the
function is a :class:`NumericFunction`: its value computed numerically (a
bracketed Newton iteration on the given law with its analytic derivative, or a
quadrature) and its derivative analytic, so that every Jacobian built from it is
exact. ``Abs`` and ``sign`` become real-variable versions (:class:`Abs`,
:class:`sign`) whose derivatives are ``sign`` and 0 — never ``Derivative`` or
``DiracDelta`` objects that no printer can write.

>>> import sympy as sp
>>> law = Law("orifice", "R", "law", "f = 2*sign(e)*sqrt(Abs(e))")
>>> law.F(sp.Symbol("f"))           # the resistance law, inverted in closed form
f**2*sign(f)/4
>>> law.E(sp.Symbol("f"))           # its content
Abs(f)**3/12
>>> law = Law("diode", "R", "law", "f = e + sinh(e)")     # no closed-form inverse: numeric, exact derivative
>>> e = law.F(sp.Symbol("f")); e.func.__name__.startswith("e_of_f_diode"), float(e.subs(sp.Symbol("f"), 0.0))
(True, 0.0)
"""
from __future__ import annotations

import itertools
import math

import numpy as np
import sympy as sp

from netdyn.errors import ElementError, ParameterError

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # names for the hints only (annotations are not evaluated)
    from typing import Any

q, p, e, f = sp.symbols("q p e f")
#: kind -> (x, y): the law y = F(x) takes x
VARIABLES = {"C": (q, e), "I": (p, f), "R": (f, e)}
#: kind -> (parameter of E(x), parameter of E*(y), linear parameter)
ENERGY_FORMS = {"C": ("energy", "coenergy", "C"), "I": ("energy", "coenergy", "I"), "R": ("content", "cocontent", "R")}
#: the variable each function-valued parameter of a one-port element is written in
PARAMETER_VARIABLE = {("C", "energy"): q, ("C", "coenergy"): e, ("I", "energy"): p, ("I", "coenergy"): f,
                      ("R", "content"): f, ("R", "cocontent"): e}
#: what a form is called in messages
FORM_NAMES = {("C", "energy"): "energy V(q)", ("C", "coenergy"): "co-energy V*(e)", ("I", "energy"): "energy H(p)",
              ("I", "coenergy"): "co-energy T*(f)", ("R", "content"): "content D(f)",
              ("R", "cocontent"): "co-content D*(e)"}
LAW_PARAMETERS = ("energy", "coenergy", "content", "cocontent", "law")
_COUNTER = itertools.count(1)


# ----------------------------------------------------------------------------------- real Abs and sign
class sign(sp.sign):  # noqa: N801 - printed as sympy's sign by every printer (numpy, C, LaTeX)
    """``sign`` of a real variable: its derivative is 0 (sympy's: ``DiracDelta`` or an unevaluated ``Derivative``)."""

    def fdiff(self, argindex=1):
        return sp.S.Zero

    def _eval_derivative(self, x):
        return sp.S.Zero


class Abs(sp.Abs):
    """``Abs`` of a real variable: its derivative is ``sign`` (sympy's involves ``re``/``im`` of a complex one)."""

    def fdiff(self, argindex=1):
        return sign(self.args[0])

    def _eval_derivative(self, x):
        return sign(self.args[0]) * self.args[0].diff(x)


def realify(expr):
    """``expr`` with sympy's ``Abs``/``sign`` replaced by the real-variable :class:`Abs`/:class:`sign`.

    >>> x = sp.Symbol("x")
    >>> realify(sp.sign(x) * sp.sqrt(sp.Abs(x))).diff(x)
    sign(x)**2/(2*sqrt(Abs(x)))
    """
    expr = sp.sympify(expr)
    if not expr.has(sp.Abs, sp.sign):
        return expr
    return expr.replace(lambda a: type(a) is sp.Abs, lambda a: Abs(a.args[0])) \
               .replace(lambda a: type(a) is sp.sign, lambda a: sign(a.args[0]))


def derivative(expr, x):
    """d expr / dx for a real ``x`` (``Abs`` and ``sign`` differentiated as real functions), in sympy's functions."""
    return plain(sp.diff(realify(expr), x))


def plain(expr):
    """The inverse of :func:`realify` (sympy's own ``Abs``/``sign``, for solving and integrating)."""
    expr = sp.sympify(expr)
    return expr.replace(lambda a: type(a) is Abs, lambda a: sp.Abs(a.args[0])) \
               .replace(lambda a: type(a) is sign, lambda a: sp.sign(a.args[0]))


# ----------------------------------------------------------------------------------- numeric functions
class NumericFunction(sp.Function):
    """A function of one variable computed numerically, with an analytic derivative.

    Made by :func:`numeric_function`: ``_imp_`` (the numeric value, found by
    ``sympy.lambdify`` and so by every numeric path of netdyn) and ``_derivative``
    (an expression in ``_variable``) are class attributes. Printed by its
    ``label`` (``e_R1(f)``).
    """

    nargs = 1
    label = "F"
    #: ``(law, slope, variable, increasing)`` when the value is the law's inverse (None: an antiderivative)
    inverse_of = None

    def fdiff(self, argindex=1):
        return self._derivative.xreplace({self._variable: self.args[0]})

    @classmethod
    def eval(cls, arg):
        if arg.is_Number:
            return sp.Float(float(cls._imp_(float(arg))))
        return None

    def _sympystr(self, printer):
        return f"{self.label}({printer._print(self.args[0])})"

    def _latex(self, printer):
        return rf"\operatorname{{{self.label}}}\left({printer._print(self.args[0])}\right)"


def numeric_function(name, label, value, derivative, variable):
    """A new :class:`NumericFunction` class: ``value(x)`` numeric (scalars or arrays), ``derivative`` an
    expression in ``variable``."""
    def imp(v):
        if np.ndim(v):
            return np.vectorize(value, otypes=[float])(v)
        return value(float(v))
    cls = type(f"{name}_{next(_COUNTER)}", (NumericFunction,),
               {"_imp_": staticmethod(imp), "_derivative": derivative, "_variable": variable, "label": label,
                "__module__": __name__})
    return cls


def _lambdify1(var, expr):
    fn = sp.lambdify([var], plain_numeric(expr), modules=["math", "mpmath", "sympy"])
    return lambda v: float(fn(v))


def plain_numeric(expr):
    """``expr`` for ``lambdify`` with the math module (sign -> copysign-like, Abs -> abs)."""
    return plain(expr)


def newton_inverse(g, dg, where, increasing=True):
    """``y -> x`` with ``g(x) = y``: Newton steps with ``dg`` inside a bracket, bisection when a step leaves it.

    The law is monotone (a passive element's): the bracket is grown from the last
    solution (kept as the next start) by doubling until it holds ``y``.
    """
    state = {"x": 0.0}

    def solve(y):
        if not math.isfinite(y):
            return float("nan")
        x = state["x"]
        gx = g(x) - y
        if gx == 0.0:
            return x
        sgn = 1.0 if increasing else -1.0
        step = max(1.0, abs(x))
        # grow a bracket [lo, hi] with g(lo) - y < 0 < g(hi) - y (for an increasing g)
        if (gx < 0) == (sgn > 0):
            lo, hi = x, x + step
            while (g(hi) - y) * sgn < 0:
                lo, step = hi, step * 2
                hi = hi + step
                if step > 1e300:
                    raise ElementError(f"{where}: no value of the law reaches {y!r}; is the law bounded?")
        else:
            lo, hi = x - step, x
            while (g(lo) - y) * sgn > 0:
                hi, step = lo, step * 2
                lo = lo - step
                if step > 1e300:
                    raise ElementError(f"{where}: no value of the law reaches {y!r}; is the law bounded?")
        if sgn < 0:
            lo, hi = hi, lo
        x = min(max(x, min(lo, hi)), max(lo, hi))
        for _ in range(400):
            r = g(x) - y
            if r == 0.0:
                break
            if (r < 0) == (sgn > 0):
                lo = x
            else:
                hi = x
            d = dg(x)
            nx = x - r / d if d != 0 and math.isfinite(d) else None
            if nx is None or not (min(lo, hi) < nx < max(lo, hi)):
                nx = 0.5 * (lo + hi)
            if abs(nx - x) <= 4e-16 * max(abs(nx), 1e-300) or nx == x:
                x = nx
                break
            x = nx
            if abs(hi - lo) <= 4e-16 * max(abs(x), 1e-300):
                break
        state["x"] = x
        return x

    return solve


# ----------------------------------------------------------------------------------- closed forms
def _positive_branch(expr, x):
    """``expr`` at ``x = u > 0`` (``Abs(u) = u``, ``sign(u) = 1``) and ``u``."""
    u = sp.Dummy("u", positive=True)
    return plain(expr).xreplace({x: u}).replace(sp.Abs, lambda a: sp.Abs(a)).doit(), u


def is_odd(expr, x):
    """Whether ``expr(−x) = −expr(x)`` (checked symbolically on the positive half, then at sample points)."""
    expr = plain(expr)
    u = sp.Dummy("u", positive=True)
    try:
        if sp.simplify(expr.xreplace({x: -u}) + expr.xreplace({x: u})) == 0:
            return True
    except Exception:  # noqa: BLE001 - sympy could not decide: use numbers
        pass
    try:
        fn = sp.lambdify([x], expr, modules=["math", "mpmath", "sympy"])
        pts = (0.37, 1.9, 7.3, 0.011)
        return all(math.isclose(float(fn(-v)), -float(fn(v)), rel_tol=1e-12, abs_tol=1e-300) for v in pts)
    except Exception:  # noqa: BLE001
        return False


def _numeric_check(inv, F, x, y):
    """Whether ``inv(F(x)) = x`` at sample points of both signs where ``F`` is real (at least three)."""
    try:
        fi = sp.lambdify([y], plain(inv), modules=["math", "mpmath"])
        fF = sp.lambdify([x], plain(F), modules=["math", "mpmath"])
    except Exception:  # noqa: BLE001
        return False
    good = 0
    for xv in (0.05, 0.3, 1.7, 4.0, -0.05, -0.3, -1.7, -4.0):
        try:
            yv = complex(fF(xv))
        except Exception:  # noqa: BLE001 - outside the law's domain
            continue
        if abs(yv.imag) > 1e-12 * (1 + abs(yv.real)) or not math.isfinite(yv.real):
            continue
        try:
            xi = complex(fi(yv.real))
        except Exception:  # noqa: BLE001 - the candidate is not defined where the law is
            return False
        if abs(xi.imag) > 1e-12 * (1 + abs(xi.real)) or not math.isclose(xi.real, xv, rel_tol=1e-9, abs_tol=1e-12):
            return False
        good += 1
    return good >= 3


def closed_inverse(F, x, y):
    """``x = G(y)`` with ``F(G(y)) = y`` in closed form, or ``None``.

    Linear laws directly; odd (sign-preserving) laws by their positive half and
    symmetry; otherwise ``sympy.solve`` with the one real branch that inverts ``F``
    for both signs of ``y``.

    >>> x, y = sp.symbols("x y")
    >>> closed_inverse(3 * x, x, y), closed_inverse(x**3 + x, x, y) is None     # (Cardano's: refused)
    (y/3, True)
    >>> closed_inverse(2 * sp.sign(x) * sp.sqrt(sp.Abs(x)), x, y)
    y**2*sign(y)/4
    """
    F = plain(sp.sympify(F))
    if x not in F.free_symbols:
        return None
    if F.is_polynomial(x) and sp.degree(F, x) == 1:
        a = F.coeff(x, 1)
        return sp.expand((y - F.coeff(x, 0)) / a)
    direct = _structural_inverse(F, x, y)
    if direct is not None and _real_form(direct) and _numeric_check(direct, F, x, y):
        return direct
    if is_odd(F, x):
        Fp, u = _positive_branch(F, x)
        v = sp.Dummy("v", positive=True)
        try:
            sols = sp.solve(sp.Eq(Fp, v), u)
        except Exception:  # noqa: BLE001 - sympy has no method: no closed form
            sols = []
        good = [s for s in sols if _real_form(s) and _numeric_check(
            sp.sign(y) * s.xreplace({v: sp.Abs(y)}), F, x, y)]
        if len(good) == 1:
            s = good[0]
            if s.is_polynomial(v) and _numeric_check(s.xreplace({v: y}), F, x, y):
                return sp.expand(s.xreplace({v: y}))   # odd already
            return _tidy(sp.sign(y) * s.xreplace({v: sp.Abs(y)}))
    try:
        sols = sp.solve(sp.Eq(F, y), x)
    except Exception:  # noqa: BLE001
        return None
    good = [s for s in sols if _real_form(s) and _numeric_check(s, F, x, y)]
    return good[0] if len(good) == 1 else None


#: inverses of the elementary functions a law is written with (their principal, monotone branch)
_INVERSE = {sp.tanh: sp.atanh, sp.atanh: sp.tanh, sp.sinh: sp.asinh, sp.asinh: sp.sinh, sp.exp: sp.log,
            sp.log: sp.exp, sp.atan: sp.tan, sp.erf: sp.erfinv}


def _structural_inverse(F, x, y):
    """``x`` from ``F(x) = y`` when ``x`` occurs once, peeling sums, products, odd powers and elementary
    functions with a known inverse (``p = L0·tanh(f)`` -> ``f = atanh(p/L0)``); None otherwise."""
    expr, target = F, y
    for _ in range(40):
        if expr == x:
            return target
        if expr.is_Add:
            dep, rest = expr.as_independent(x, as_Add=True)[::-1]
            if rest == 0 and dep.is_Add:
                return None
            expr, target = dep, target - rest
        elif expr.is_Mul:
            dep, coeff = expr.as_independent(x, as_Mul=True)[::-1]
            if coeff == 1:
                return None
            expr, target = dep, target / coeff
        elif expr.is_Pow and x not in expr.exp.free_symbols and expr.exp.is_Integer and expr.exp % 2 == 1:
            expr, target = expr.base, sp.sign(target) * sp.Abs(target) ** (1 / expr.exp)
        elif isinstance(expr, sp.Function) and len(expr.args) == 1 and expr.func in _INVERSE:
            expr, target = expr.args[0], _INVERSE[expr.func](target)
        else:
            return None
        if sp.Add.make_args(expr) and sum(1 for a in sp.preorder_traversal(expr) if a == x) != 1:
            return None
    return None


def _tidy(expr):
    """``Abs(y)**2k`` written ``y**2k``."""
    return expr.replace(lambda a: a.is_Pow and isinstance(a.base, sp.Abs) and a.exp.is_even is True,
                        lambda a: a.base.args[0] ** a.exp)


def _real_form(expr):
    """A closed form every numeric path evaluates in real arithmetic and to full precision: no ``I``,
    ``LambertW`` or root objects, and no fractional power of a sum (Cardano's formula for ``x³ + x``: near
    0 its two terms cancel and the result keeps a few digits; Newton on the law keeps them all)."""
    if expr.has(sp.I, sp.LambertW, sp.CRootOf, sp.RootSum, sp.Integral) or expr.is_real is False:
        return False
    return not any(a.is_Pow and a.base.is_Add and not a.exp.is_integer for a in sp.preorder_traversal(expr))


def closed_antiderivative(F, x):
    """``∫₀ˣ F`` in closed form, or ``None`` (odd laws: the even integral of the positive half at ``|x|``).

    >>> x = sp.Symbol("x")
    >>> closed_antiderivative(sp.sign(x) * x**2, x)
    Abs(x)**3/3
    """
    F = plain(sp.sympify(F))
    if x not in F.free_symbols:
        return F * x
    try:
        if F.is_polynomial(x):
            return sp.integrate(F, (x, 0, x))
        if F.has(sp.Abs, sp.sign) and is_odd(F, x):
            Fp, u = _positive_branch(F, x)
            w = sp.Dummy("w", positive=True)
            r = sp.integrate(Fp.xreplace({u: w}), (w, 0, u))
            if r.has(sp.Integral, sp.Piecewise):
                return None
            r = _tidy(r.xreplace({u: sp.Abs(x)}))
        elif F.has(sp.Abs, sp.sign):
            return None
        else:
            r = sp.integrate(F, (x, 0, x))
            if r.has(sp.Integral, sp.Piecewise):
                return None
        r = sp.simplify(r) if sp.count_ops(r) < 40 else r
    except Exception:  # noqa: BLE001 - sympy has no method
        return None
    # check it: dE/dx = F at a few points
    try:
        d = sp.lambdify([x], plain(sp.diff(realify(r), x)) - F, modules=["math", "mpmath"])
        fF = sp.lambdify([x], F, modules=["math", "mpmath"])
        for v in (0.3, 1.7, -0.3, -1.7):
            if abs(complex(d(v))) > 1e-9 * (1 + abs(complex(fF(v)))):
                return None
    except Exception:  # noqa: BLE001
        return None
    return r


# ----------------------------------------------------------------------------------- the law of an element
def parse_relation(name, kind, value):
    """``(lhs variable, rhs expression)`` of a ``law=`` parameter: ``"e = ..."``, ``Eq(e, ...)`` or ``(lhs, rhs)``."""
    x, y = VARIABLES[kind]
    allowed = {str(x): x, str(y): y}
    lhs = rhs = None
    if isinstance(value, str):
        if value.count("=") != 1:
            raise ParameterError(f"{name}: law {value!r} must be one relation '{y} = ...' or '{x} = ...'")
        left, right = (s.strip() for s in value.split("="))
        lhs, rhs = left, right
    elif isinstance(value, sp.Equality):
        lhs, rhs = value.lhs, value.rhs
    elif isinstance(value, (tuple, list)) and len(value) == 2:
        lhs, rhs = value
    else:
        raise ParameterError(f"{name}: law must be a relation such as '{y} = ...' or '{x} = ...' "
                             f"(text, sympy Eq or a pair), got {value!r}")
    key = str(lhs)
    if key not in allowed:
        raise ParameterError(f"{name}: the law of a {kind} element gives {y} or {x} (left-hand side), not {key!r}")
    lhs = allowed[key]
    other = x if lhs == y else y
    if callable(rhs) and not isinstance(rhs, sp.Basic):
        try:
            rhs = rhs(other)
        except Exception as exc:  # noqa: BLE001 - report the user's function failing
            raise ParameterError(f"{name}: the law's right-hand side must be a function of {other} ({exc})") from None
    rhs = sp.sympify(rhs, locals={str(x): x, str(y): y, "sign": sp.sign, "Abs": sp.Abs}) \
        if isinstance(rhs, str) else sp.sympify(rhs)
    if lhs in rhs.free_symbols:
        raise ParameterError(f"{name}: law {lhs} = {rhs} has {lhs} on both sides; give it explicitly")
    return lhs, rhs


class Law:
    """The constitutive law of a one-port ``C``, ``I`` or ``R``: ``F``, ``G``, ``E``, ``E*`` at any argument.

    ``form`` is the parameter given (``"C"``, ``"energy"``, ``"coenergy"``,
    ``"content"``, ``"cocontent"`` or ``"law"``) and ``value`` its sympy value
    (for ``law``, the relation as given). ``F(a)``, ``G(a)``, ``E(a)``, ``Estar(a)``
    return expressions at ``a``; ``closed(which)`` says whether one is in closed form.

    >>> law = Law("C1", "C", "coenergy", e**2 / 2 + e**6 / 6)    # q = e + e**5
    >>> law.G(sp.Symbol("u")), law.closed("F")
    (u**5 + u, False)
    >>> round(float(law.F(sp.Float(2.0))), 14)    # e with e + e**5 = 2
    1.0
    """

    def __init__(self, element: str, kind: str, form: str, value: Any) -> None:
        self.element, self.kind, self.form = element, kind, form
        self.x, self.y = VARIABLES[kind]
        if form == "law" and not isinstance(value, sp.Equality):
            value = sp.Eq(*parse_relation(element, kind, value), evaluate=False)
        self.value = value
        x, y = self.x, self.y
        self._F = self._G = self._E = self._Es = None
        self.linear = None
        if form == kind:   # linear: C, I (compliance, inertance) or R
            k = sp.sympify(value)
            self.linear = k
            if kind == "R":
                self._F, self._G, self._E, self._Es = k * x, y / k, k * x**2 / 2, y**2 / (2 * k)
            else:
                self._F, self._G, self._E, self._Es = x / k, k * y, x**2 / (2 * k), k * y**2 / 2
        elif form in ("energy", "content"):
            self._E = plain(value)
            self._F = derivative(self._E, x)
        elif form in ("coenergy", "cocontent"):
            self._Es = plain(value)
            self._G = derivative(self._Es, y)
        elif form == "law":
            lhs, rhs = (value.lhs, value.rhs) if isinstance(value, sp.Equality) else value
            if lhs == y:
                self._F = plain(rhs)
            else:
                self._G = plain(rhs)
        else:  # pragma: no cover - the parameter table and this switch are kept together
            raise ParameterError(f"{element}: unknown law form {form!r}")
        extra = sorted(map(str, (self._F if self._F is not None else self._G if self._G is not None
                                 else self._E if self._E is not None else self._Es).free_symbols & {q, p, e, f} - {x, y}))
        if extra:
            raise ParameterError(f"{element}: the law of a {kind} element relates {x} and {y}; it uses {extra}")
        self._numeric = {}
        self._done = set()

    # --------------------------------------------------------------- closed forms, found once
    def _closed(self, which):
        if which in self._done:
            return getattr(self, "_" + {"F": "F", "G": "G", "E": "E", "Es": "Es"}[which])
        self._done.add(which)
        x, y = self.x, self.y
        if which == "F" and self._F is None:
            if self._G is None:
                self._closed("G")
            if self._G is not None:
                inv = closed_inverse(self._G, y, x)
                self._F = inv
        elif which == "G" and self._G is None:
            if self._F is None:
                self._closed("F")
            if self._F is not None:
                self._G = closed_inverse(self._F, x, y)
        elif which == "E" and self._E is None:
            F = self._closed("F")
            if F is not None:
                self._E = closed_antiderivative(F, x)
            if self._E is None and F is not None and self._closed("G") is not None and self._Es is not None:
                self._E = sp.expand(x * F - self._Es.xreplace({y: F}))   # Legendre
        elif which == "Es" and self._Es is None:
            G = self._closed("G")
            if G is not None:
                self._Es = closed_antiderivative(G, y)
            if self._Es is None and G is not None and self._E is not None:
                self._Es = sp.expand(y * G - self._E.xreplace({x: G}))
        return getattr(self, "_" + which)

    def closed(self, which):
        """Whether ``F``, ``G``, ``E`` or ``Estar`` has a closed form."""
        return self._closed({"Estar": "Es"}.get(which, which)) is not None

    # --------------------------------------------------------------- numeric fallbacks
    def _function(self, which):
        if which in self._numeric:
            return self._numeric[which]
        x, y = self.x, self.y
        where = f"{self.element}"
        if which in ("F", "G"):
            other = "G" if which == "F" else "F"
            given = self._closed(other)
            if given is None:
                raise ElementError(f"{self.element}: its law has no usable form")
            var, out = (y, x) if which == "F" else (x, y)   # F: x -> y solves G(y) = x
            g = _lambdify1(var, given)
            dexpr = derivative(given, var)
            dg = _lambdify1(var, dexpr)
            _check_monotone(self, which, g, given, var)
            increasing = _increasing(g)
            solve = newton_inverse(g, dg, f"{where}: inverting {out if which == 'G' else y} = ...", increasing)
            label = f"{y}_{self.element}" if which == "F" else f"{x}_{self.element}"
            name = f"{y}_of_{x}_{_ident(self.element)}" if which == "F" else f"{x}_of_{y}_{_ident(self.element)}"
            z = sp.Dummy("z")
            cls = numeric_function(name, label, solve, None, z)
            # d/dz G⁻¹(z) = 1 / G'(G⁻¹(z))
            cls._derivative = 1 / realify(dexpr).xreplace({var: cls(z)})
            # what an exporter writes: the value v with law(v) = argument, the law and its slope in ``var``
            cls.inverse_of = (realify(given), realify(dexpr), var, increasing)
            self._numeric[which] = cls
            return cls
        # energies: the antiderivative of F (or G), its value by a Legendre transform or a quadrature
        fun, var = ("F", x) if which == "E" else ("G", y)
        z = sp.Dummy("z")
        deriv = self.F(z) if which == "E" else self.G(z)
        other_energy = self._Es if which == "E" else self._E
        inverse_fn = self.F if which == "E" else self.G
        if other_energy is not None:   # E(x) = x F(x) − E*(F(x)) with F numeric
            fF = sp.lambdify([z], plain(inverse_fn(z)), modules=["math", "mpmath", "sympy"])
            fO = _lambdify1(y if which == "E" else x, other_energy)

            def value(v):
                w = float(fF(v))
                return v * w - fO(w)
        else:
            from scipy.integrate import quad
            fD = sp.lambdify([z], plain(deriv), modules=["math", "mpmath", "sympy"])

            def value(v):
                if v == 0:
                    return 0.0
                r, _ = quad(lambda s: float(fD(s)), 0.0, v, epsabs=0.0, epsrel=1e-13, limit=200)
                return r
        label = ({"C": "V", "I": "H", "R": "D"}[self.kind] if which == "E" else
                 {"C": "V*", "I": "T*", "R": "D*"}[self.kind]) + f"_{self.element}"
        cls = numeric_function(f"{'E' if which == 'E' else 'Estar'}_{_ident(self.element)}", label, value,
                               realify(deriv), z)
        self._numeric[which] = cls
        return cls

    # --------------------------------------------------------------- at an argument
    def _at(self, which, arg):
        key = {"Estar": "Es"}.get(which, which)
        c = self._closed(key)
        if c is not None:
            var = self.x if which in ("F", "E") else self.y
            return realify(c.xreplace({var: arg}))
        return self._function(which)(arg)

    def F(self, arg):
        """``y = F(x)`` at ``arg``."""
        return self._at("F", arg)

    def G(self, arg):
        """``x = G(y)`` at ``arg``."""
        return self._at("G", arg)

    def E(self, arg):
        """``E(x) = ∫₀ˣ F`` (energy, content) at ``arg``."""
        return self._at("E", arg)

    def Estar(self, arg):
        """``E*(y) = ∫₀ʸ G`` (co-energy, co-content) at ``arg``."""
        return self._at("Estar", arg)

    def given(self):
        """Which direction the law was given in: ``"F"`` (y of x) or ``"G"`` (x of y)."""
        if self.linear is not None:
            return "F"
        if self.form == "law":
            lhs = self.value.lhs if isinstance(self.value, sp.Equality) else self.value[0]
            return "F" if lhs == self.y else "G"
        return "F" if self.form in ("energy", "content") else "G"

    def is_linear(self):
        return self.linear is not None

    def __repr__(self):
        return f"Law({self.element!r}, {self.kind}, {self.form})"


def _ident(name):
    return "".join(c if c.isalnum() else "_" for c in str(name))


def _check_monotone(law, which, g, given, var):
    """A law inverted numerically must be monotone: else one value has two preimages, and the element cannot
    find its input from its output (an ``R`` with e = f²/k²: the same effort for f and −f, and negative power
    for reversed flow). An :class:`~netdyn.errors.ElementError` naming the element, the law and the fix."""
    pts = sorted({s * v for v in (1e-3, 1e-2, 0.1, 0.5, 1.0, 2.0, 5.0, 10.0, 100.0) for s in (1.0, -1.0)})
    vals = []
    for v in pts:
        try:
            gv = g(v)
        except Exception:  # noqa: BLE001 - outside the law's domain
            continue
        if math.isfinite(gv):
            vals.append(gv)
    steps = [b - a for a, b in zip(vals[:-1], vals[1:])]
    if steps and not (all(d > 0 for d in steps) or all(d < 0 for d in steps)):
        out = law.x if which == "F" else law.y
        raise ElementError(
            f"{law.element}: its law {var} ↦ {given} is not monotone (two values of {var} give the same "
            f"{'value' if out is None else out}), so {var} cannot be found from it in the causality this graph "
            f"assigns; a passive element's law keeps the sign of its variable (e·f ≥ 0 for a resistor): write it "
            f"with Abs or sign, e.g. the content Abs(f)**3/(3*k**2) for e = sign(f)·f²/k², or the conductance law "
            f"f = k*sign(e)*sqrt(Abs(e))")


def _increasing(g):
    """Whether the law is increasing (passive elements' laws are); sampled on both sides of 0."""
    pts = [-3.0, -0.5, 0.0, 0.5, 3.0]
    try:
        vals = [g(v) for v in pts]
    except Exception:  # noqa: BLE001 - not defined everywhere: assume the usual
        return True
    return vals[-1] >= vals[0]


def element_law(bg, name, values=None):
    """The :class:`Law` of one-port element ``name`` (its parameters, or ``values`` in their place)."""
    kind = bg.kind(name)
    vals = bg.params(name) if values is None else values
    for form in (kind, *LAW_PARAMETERS):
        if form in vals:
            return Law(name, kind, form, vals[form])
    raise ParameterError(f"{name}: a {kind} element without a law")  # pragma: no cover - add() requires one


__all__ = ["Law", "element_law", "realify", "plain", "sign", "Abs", "NumericFunction", "closed_inverse",
           "closed_antiderivative", "VARIABLES", "PARAMETER_VARIABLE", "LAW_PARAMETERS", "parse_relation"]
