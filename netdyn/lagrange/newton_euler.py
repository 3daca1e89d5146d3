"""Equations in recursive form: a customized symbolic Newton–Euler program over a tree of rigid bodies.

The relative-coordinate equations of a mechanism are written the way Khalil and Kleinfinger's customized
symbolic models (and OpenSYMORO) write them, instead of expanding ``M(q)`` and ``h(q, q̇)``: a
*straight-line program* of named auxiliary quantities, body by body, from ground outwards and back.

Forward, for body ``i`` whose parent ``p`` it joins through the joint coordinates ``q_i`` (every vector in
the frame of the body it belongs to; ``L_i`` rotates body ``i``'s frame into ``p``'s, ``ρ_i`` is body
``i``'s origin in ``p``'s frame, ``ω_ji`` the joint's relative angular velocity in ``i``'s frame — all three
expressions of ``q_i`` alone)::

    ω_i = L_iᵀ ω_p + ω_ji
    ω̇_i = L_iᵀ ω̇_p + (L_iᵀ ω_p) × ω_ji + ω̇_ji
    a_i = L_iᵀ (a_p + ω̇_p × ρ_i + ω_p × (ω_p × ρ_i) + 2 ω_p × ρ̇_i + ρ̈_i)        (a_ground = −g)
    F_i = m_i (a_i + ω̇_i × c_i + ω_i × (ω_i × c_i)),   N_i = J_i ω̇_i + ω_i × J_i ω_i + c_i × F_i

and backward, the wrench each joint transmits and its projection on the joint's coordinates::

    f_i = F_i + Σ_children L_d f_d,     n_i = N_i + Σ_children (L_d n_d + ρ_d × L_d f_d)
    τ_k = (L_iᵀ ∂ρ_i/∂q_k) · f_i + (∂ω_ji/∂q̇_k) · n_i          for each coordinate q_k of joint i

(``L_iᵀ ∂ρ_i/∂q_k`` is a local expression of three entries, written with ``sin² = 1 − cos²``).

Every intermediate that is not a number, a symbol or a coordinate gets a name (``omega_x_l1``,
``omegadot_z_l2``, ``F_y_l3``, ``c_theta_A`` for ``cos θ_A``); entries that are zero or one are pruned as they are made
(sympy folds ``0·x`` and ``1·x``; the planar case, embedded in space, keeps only its three non-zero
components). So the program has O(1) lines per body and its size is O(n). It holds for any joint whose
child pose is a rigid motion of local coordinates — revolute, prismatic, sliders, welds, the spatial
general joint with Euler parameters, Universal joints — because the generalized force ``τ_k`` is the
virtual power of the subtree's wrench under the twist ``∂/∂q̇_k`` of the joint, which is Lagrange's
equation for ``q_k`` whatever the coordinates are.

Everything else of the model (springs, dampers, forces, actuators, 1-D elements, the cut joints' constraints
with their multipliers) stays in its Lagrangian form, the *rest* model, derived term by term as usual; each
equation is ``τ_k + rest_k = 0``.

>>> import sympy as sp
>>> from netdyn import coordinates, LagrangianModel, t
>>> th, = coordinates("theta,")
>>> m, l, g = sp.symbols("m l g", positive=True)
>>> L = sp.Matrix([[sp.cos(th), -sp.sin(th), 0], [sp.sin(th), sp.cos(th), 0], [0, 0, 1]])
>>> link = Link("bob", -1, L, sp.zeros(3, 1), sp.Matrix([0, 0, th.diff(t)]), [th], m, sp.Matrix([l, 0, 0]),
...             sp.zeros(3, 3))
>>> form = RecursiveForm([link], sp.Matrix([0, -g, 0]), LagrangianModel([th]))
>>> eqs = form.equations()
>>> sp.simplify(eqs.expanded()[0] - (m*l**2*th.diff(t, 2) + m*g*l*sp.cos(th)))
0
"""
from __future__ import annotations

from typing import Any

from dataclasses import dataclass

import sympy as sp
from sympy.core.function import AppliedUndef

from netdyn.errors import ModelError
from netdyn.symbols import identifier, t

AXES = "xyz"


@dataclass
class Link:
    """One body of the tree and the joint that carries it (see the module docstring for the symbols).

    ``parent`` is the index of the parent link in the list (−1: ground); ``coordinates`` the joint
    coordinates (functions of t) that move this body relative to its parent; ``mass``, ``com`` (body frame)
    and ``inertia`` (about the centre of mass, body frame) the body's inertia.
    """

    body: str
    parent: int
    L: sp.Matrix
    rho: sp.Matrix
    omega: sp.Matrix
    coordinates: list
    mass: object
    com: sp.Matrix
    inertia: sp.Matrix


class StraightLine:
    """A straight-line program: ``steps`` is a list of ``(symbol, expression)``, each expression over the
    inputs and the symbols named before it. :meth:`name` names an expression unless it is trivial (a number,
    a symbol, a coordinate or its derivative, or a number times one of those): those are used as they are.

    >>> x = sp.Symbol("x")
    >>> prog = StraightLine()
    >>> prog.name(2 * x, "a"), prog.name(x + 1, "b"), prog.steps
    (2*x, b, [(b, x + 1)])
    """

    def __init__(self, taken=()):
        self.steps = []
        self.taken = set(taken)

    def name(self, expr, label):
        e = sp.sympify(expr)
        if trivial(e):
            return e
        while label in self.taken:
            label += "_"
        self.taken.add(label)
        s = sp.Symbol(label)
        self.steps.append((s, e))
        return s

    def vector(self, v, label, where):
        return sp.Matrix([self.name(x, f"{label}_{a}_{where}") for x, a in zip(v, AXES)])

    def prune(self, outputs):
        """Drop the steps no output needs (dead code: a leaf's force component its joint does not see).

        >>> x = sp.Symbol("x")
        >>> prog = StraightLine()
        >>> a, b = prog.name(x + 1, "a"), prog.name(x + 2, "b")
        >>> prog.prune([2 * a]); prog.steps
        [(a, x + 1)]
        """
        need = set()
        for e in outputs:
            need |= sp.sympify(e).free_symbols
        kept = []
        for s, e in reversed(self.steps):
            if s in need:
                kept.append((s, e))
                need |= e.free_symbols
        self.steps = kept[::-1]

    def operations(self, outputs=()):
        """The number of operations (``sympy.count_ops``) of the program and ``outputs``."""
        return sum(sp.count_ops(e) for _, e in self.steps) + sum(sp.count_ops(e) for e in outputs)


def trivial(e):
    """Whether an expression is used as it is in a program (no name needed).

    >>> x = sp.Symbol("x")
    >>> trivial(x), trivial(-x), trivial(sp.Integer(3)), trivial(x + 1)
    (True, True, True, False)
    """
    if e.is_Atom or isinstance(e, (AppliedUndef, sp.Derivative)):
        return True
    if e.is_Mul and len(e.args) == 2 and e.args[0].is_Number:
        return trivial(e.args[1])
    return False


def _clean(expr):
    """Floats with integer values as integers (``1.0·x`` → ``x``, ``0.0`` → ``0``): pruned by sympy."""
    e = sp.sympify(expr)
    floats = {f: sp.Integer(int(f)) for f in e.atoms(sp.Float) if f == int(f)}
    return e.xreplace(floats) if floats else e


def _pythagoras(e):
    """``e`` expanded with ``sin²x = 1 − cos²x`` (what makes ``Lᵀ ∂ρ/∂q`` of a revolute constant).

    >>> x = sp.Symbol("x")
    >>> _pythagoras(sp.cos(x)**2 / 4 + sp.sin(x)**2 / 4)
    1/4
    """
    e = sp.expand(e)
    squares = {p: 1 - sp.cos(p.base.args[0]) ** 2 for p in e.atoms(sp.Pow) if p.exp == 2 and isinstance(p.base, sp.sin)}
    return sp.expand(e.xreplace(squares)) if squares else e


def _rate(v, rates):
    """d/dt of the entries of ``v`` (expressions of plain symbols ``q``, ``q_dot``) by the chain rule."""
    out = []
    for e in v:
        d = sp.S.Zero
        for Q, QD, QDD in rates:
            d += sp.diff(e, Q) * QD + sp.diff(e, QD) * QDD
        out.append(d)
    return sp.Matrix(out)


def _diff(v, x):
    """Entry by entry (``Matrix.diff`` takes the slow array-derivative route)."""
    return sp.Matrix([sp.diff(e, x) for e in v])


def _cross(a, b):
    return sp.Matrix([a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]])


def _dot(a, b):
    return sp.Add(*[x * y for x, y in zip(a, b)])


class RecursiveForm:
    """The recursive form of a model: its tree of :class:`Link` s, the gravity vector (ground frame), and the
    ``rest`` :class:`~netdyn.lagrange.model.LagrangianModel` (every term the links do not hold, with the
    constraints and their multipliers). ``coordinates`` orders the equations (default: ``rest``'s).

    >>> from netdyn.linkages import four_bar
    >>> form = four_bar().model(formulation="relative").recursive_form()
    >>> prog, tau = form.program(velocities=False, gravity=False)    # M(q) q'' alone
    >>> len(tau), len(form.rest.constraints)
    (3, 2)
    """

    def __init__(self, links: Any, gravity: Any, rest: Any, coordinates: Any = None) -> None:
        self.links = list(links)
        self.gravity = sp.Matrix(gravity) if gravity is not None else sp.zeros(3, 1)
        self.rest = rest
        self.coordinates = list(coordinates or rest.coordinates)
        self._equations = None

    def program(self, velocities: bool = True, gravity: bool = True) -> Any:
        """``(StraightLine, tau)``: the Newton–Euler program and ``tau[k]``, the bodies' share of the
        generalized effort on coordinate ``k`` (0 for a coordinate no link holds), as functions of ``q(t)``,
        ``q̇(t)``, ``q̈(t)``. ``velocities=False, gravity=False`` gives the program of ``M(q) q̈`` alone."""
        taken = {s.name for s in self.rest.parameters} | {c.func.__name__ for c in self.coordinates}
        for link in self.links:
            for e in (link.mass, *link.com, *link.inertia, *link.L, *link.rho, *link.omega):
                taken |= {s.name for s in sp.sympify(e).free_symbols}
        prog = StraightLine(taken)
        still = not velocities
        index = {c: k for k, c in enumerate(self.coordinates)}
        tau = [sp.S.Zero] * len(self.coordinates)
        n = len(self.links)
        w, dw, acc, local = [None] * n, [None] * n, [None] * n, [None] * n
        force, moment = [None] * n, [None] * n
        g = self.gravity if gravity else sp.zeros(3, 1)
        zero = sp.zeros(3, 1)
        back = {}  # plain symbols -> q(t), q'(t), q''(t): local derivatives by the chain rule on plain symbols
        for i, link in enumerate(self.links):
            where = identifier(link.body)
            plain, rates = {}, []
            for c in link.coordinates:
                nm = c.func.__name__
                Q, QD, QDD = sp.Symbol(nm), sp.Symbol(nm + "_dot"), sp.Symbol(nm + "_ddot")
                plain.update({c.diff(t, 2): QDD, c.diff(t): QD, c: Q})
                back.update({QDD: c.diff(t, 2), QD: c.diff(t), Q: c})
                rates.append((Q, QD, QDD))
            L, rho, om = (_clean(x).xreplace(plain) for x in (link.L, link.rho, link.omega))
            drho, dom = _rate(rho, rates), _rate(om, rates)
            parts = {"rho": rho, "drho": drho, "ddrho": _rate(drho, rates), "omega": om, "domega": dom,
                     "J": [(L.T * _diff(rho, Q)).applyfunc(_pythagoras) for Q, _, _ in rates],
                     "W": [_diff(om, QD) for _, QD, _ in rates]}
            if still:
                parts = _xreplace(parts, {QD: 0 for _, QD, _ in rates})
            trig = {}
            for e in (L, *parts["rho"], *parts["drho"], *parts["ddrho"], *parts["omega"], *parts["domega"],
                      *[x for v in parts["J"] for x in v]):
                for f in sorted(sp.sympify(e).atoms(sp.sin, sp.cos), key=sp.default_sort_key):
                    if f not in trig:
                        arg = f.args[0]
                        tag = arg.name if isinstance(arg, sp.Symbol) else f"{len(trig)}_{where}"
                        trig[f] = prog.name(f, f"{'c' if isinstance(f, sp.cos) else 's'}_{tag}")
            if trig:
                L = L.xreplace(trig)
                parts = _xreplace(parts, trig)
            L = sp.Matrix(3, 3, [prog.name(L[r, c], f"L_{r}{c}_{where}") for r in range(3) for c in range(3)])
            rho = prog.vector(parts["rho"], "rho", where)
            Lt = L.T
            if link.parent < 0:
                wp, dwp, ap = zero, zero, -g
            else:
                wp, dwp, ap = w[link.parent], dw[link.parent], acc[link.parent]
            wj = prog.vector(parts["omega"], "omegaj", where)
            wpl = prog.vector(Lt * wp, "omegap", where)
            w[i] = prog.vector(wpl + wj, "omega", where)
            dw[i] = prog.vector(Lt * dwp + _cross(wpl, wj) + parts["domega"], "omegadot", where)
            drho = prog.vector(parts["drho"], "rhodot", where)
            u = ap + _cross(dwp, rho) + _cross(wp, _cross(wp, rho)) + 2 * _cross(wp, drho) + parts["ddrho"]
            acc[i] = prog.vector(Lt * prog.vector(u, "ap", where), "a", where)
            c, m, J = _clean(link.com), _clean(link.mass), _clean(link.inertia)
            ac = acc[i] + _cross(dw[i], c) + _cross(w[i], _cross(w[i], c))
            force[i] = prog.vector(m * ac, "F", where)
            Jw = prog.vector(J * w[i], "Jomega", where)
            moment[i] = J * dw[i] + _cross(w[i], Jw) + _cross(c, force[i])
            local[i] = (L, rho, parts["J"], parts["W"])
        children = [[] for _ in range(n)]
        for i, link in enumerate(self.links):
            if link.parent >= 0:
                children[link.parent].append(i)
        f_tot, n_tot = [None] * n, [None] * n
        for i in reversed(range(n)):
            where = identifier(self.links[i].body)
            fi, ni = force[i], moment[i]
            for d in children[i]:
                Ld, rhod = local[d][0], local[d][1]
                fd = prog.vector(Ld * f_tot[d], "fp", identifier(self.links[d].body))
                fi = fi + fd
                ni = ni + Ld * n_tot[d] + _cross(rhod, fd)
            f_tot[i] = prog.vector(fi, "f", where)
            n_tot[i] = prog.vector(ni, "n", where)
            L, _, Jrho, Wom = local[i]
            for c, jr, wo in zip(self.links[i].coordinates, Jrho, Wom):
                k = index.get(c)
                if k is None:
                    raise ModelError(f"body {self.links[i].body}: joint coordinate {c} is not a coordinate of the "
                                     "model; this is a netdyn bug, please report it")
                tau[k] += _dot(jr, f_tot[i]) + _dot(wo, n_tot[i])
        prog.prune(tau)
        prog.steps = [(s, e.xreplace(back)) for s, e in prog.steps]
        return prog, [sp.sympify(e).xreplace(back) for e in tau]

    def equations(self) -> RecursiveEquations:
        """The equations of the model in recursive form (:class:`RecursiveEquations`), made once."""
        if self._equations is None:
            prog, tau = self.program()
            rest = self.rest.derive().as_time_functions()
            rows = [tk + r for tk, r in zip(tau, rest)] + rest[len(tau):]
            self._equations = RecursiveEquations(rows, prog.steps, self.coordinates)
        return self._equations


def _xreplace(parts, sub):
    out = {}
    for k, v in parts.items():
        out[k] = [x.xreplace(sub) for x in v] if isinstance(v, list) else v.xreplace(sub)
    return out


class RecursiveEquations(list):
    """The equations of a model in recursive form: a list of expressions, each ``== 0`` (the Lagrange
    equation of every coordinate, then the displacement and the flow constraints, in the order of
    ``model.equations(form="expanded")``), written over the named intermediates of :attr:`definitions`.

    ``definitions`` is the straight-line program, a list of ``(symbol, expression)`` in the order they are
    computed; :meth:`expanded` substitutes it back; :attr:`operations` counts the operations.

    >>> import numpy as np
    >>> from netdyn.linkages.planar import pendulum
    >>> eqs = pendulum(np.ones(3), np.ones(3)).model(formulation="relative").equations()
    >>> len(eqs), eqs.definitions[0]
    (3, (s_theta_J1, sin(theta_J1(t))))
    """

    def __init__(self, rows: Any, definitions: Any, coordinates: Any) -> None:
        super().__init__(rows)
        self.definitions = list(definitions)
        self.coordinates = list(coordinates)

    @property
    def operations(self) -> int:
        """``sympy.count_ops`` of the definitions and the equations together."""
        return sum(sp.count_ops(e) for _, e in self.definitions) + sum(sp.count_ops(e) for e in self)

    def expanded(self) -> list:
        """The equations with every named intermediate substituted: expressions of ``q(t)`` and its derivatives
        only (grows fast with the size of the tree; meant for checks on small ones)."""
        env = {}
        for s, e in self.definitions:
            env[s] = e.xreplace(env)
        return [sp.sympify(r).xreplace(env) for r in self]

    def __repr__(self):
        return (f"RecursiveEquations({len(self)} equations over {len(self.definitions)} named intermediates, "
                f"{self.operations} operations)")
