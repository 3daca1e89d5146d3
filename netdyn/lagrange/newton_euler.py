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
from netdyn.lagrange.sparsepoly import Ring, add, mul, rate_of_coordinate, scale, total, variables
from netdyn.symbols import identifier

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
    """A straight-line program over a :class:`~netdyn.lagrange.sparsepoly.Ring`: ``steps`` is a list of
    ``(variable index, polynomial)`` (or a sympy expression: the sines and cosines), each over the inputs and the
    variables named before it. :meth:`name` names a polynomial unless it is trivial (zero, a number, one variable or
    a number times one): those are used as they are. :meth:`finish` gives the steps as sympy ``(symbol, expression)``.

    >>> x = sp.Symbol("x")
    >>> prog = StraightLine()
    >>> X = prog.ring.symbol(x)
    >>> a, b = prog.name(scale(X, 2), "a"), prog.name(add(X, {(): 1}), "b")
    >>> prog.prune([b]); prog.finish()
    [(b, x + 1)]
    """

    def __init__(self, taken=(), ring=None):
        self.ring = ring or Ring()
        self.steps = []
        self.taken = set(taken)

    def label(self, label):
        """A fresh name (``_`` appended while it is taken)."""
        while label in self.taken:
            label += "_"
        self.taken.add(label)
        return sp.Symbol(label)

    def name(self, p, label):
        if trivial(p):
            return p
        k = self.ring.var(self.label(label))
        self.steps.append((k, p))
        return {((k, 1),): 1}

    def vector(self, v, label, where):
        return [self.name(x, f"{label}_{a}_{where}") for x, a in zip(v, AXES)]

    def prune(self, outputs):
        """Drop the steps no output needs (dead code: a leaf's force component its joint does not see)."""
        need = set()
        for p in outputs:
            need |= variables(p)
        kept = []
        for k, p in reversed(self.steps):
            if k in need:
                kept.append((k, p))
                if isinstance(p, dict):
                    need |= variables(p)
        self.steps = kept[::-1]

    def finish(self):
        """The steps as sympy ``(symbol, expression)`` pairs."""
        objs = self.ring.objects
        return [(objs[k], p if not isinstance(p, dict) else self.ring.to_sympy(p)) for k, p in self.steps]


def trivial(p):
    """Whether a polynomial is used as it is in a program (no name needed).

    >>> trivial({}), trivial({((0, 1),): -1}), trivial({(): 3}), trivial({((0, 1),): 1, (): 1})
    (True, True, True, False)
    """
    if len(p) > 1:
        return False
    for m in p:
        return len(m) == 0 or (len(m) == 1 and m[0][1] == 1)
    return True


def _matvec(L, v, transpose=False):
    """``L v`` (or ``Lᵀ v``) for ``L`` a row-major list of nine polynomials."""
    if transpose:
        return [total(*(mul(L[3 * r + c], v[r]) for r in range(3))) for c in range(3)]
    return [total(*(mul(L[3 * r + c], v[c]) for c in range(3))) for r in range(3)]


def _cross(a, b):
    return [add(mul(a[1], b[2]), scale(mul(a[2], b[1]), -1)), add(mul(a[2], b[0]), scale(mul(a[0], b[2]), -1)),
            add(mul(a[0], b[1]), scale(mul(a[1], b[0]), -1))]


def _dot(a, b):
    return total(*(mul(x, y) for x, y in zip(a, b)))


def _vadd(*vs):
    return [total(*xs) for xs in zip(*vs)]


def _is_trig(o):
    return isinstance(o, (sp.sin, sp.cos))


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
        ring, still = Ring(), not velocities
        index = {c: k for k, c in enumerate(self.coordinates)}
        n = len(self.links)
        raw = []
        for link in self.links:  # every link's inputs in the ring first: the names they use are taken
            raw.append(([ring.from_sympy(x) for x in link.L], [ring.from_sympy(x) for x in link.rho],
                        [ring.from_sympy(x) for x in link.omega], ring.from_sympy(link.mass),
                        [ring.from_sympy(x) for x in link.com], [ring.from_sympy(x) for x in link.inertia]))
        taken = {s.name for s in self.rest.parameters} | {c.func.__name__ for c in self.coordinates}
        taken |= {o.name for o in ring.objects if isinstance(o, sp.Symbol)}
        for o in list(ring.objects):
            if not isinstance(o, sp.Symbol):
                taken |= {s.name for s in o.free_symbols}
        prog = StraightLine(taken, ring)
        tau = [{} for _ in self.coordinates]
        w, dw, acc, local = [None] * n, [None] * n, [None] * n, [None] * n
        force, moment = [None] * n, [None] * n
        g = [ring.from_sympy(x) for x in self.gravity] if gravity else [{}, {}, {}]
        zero = [{}, {}, {}]
        for i, link in enumerate(self.links):
            where = identifier(link.body)
            L, rho, om, m, c, J = raw[i]
            Qs = [ring.var(q) for q in link.coordinates]
            QDs = [ring.var(rate_of_coordinate(q)) for q in link.coordinates]
            drho = [ring.rate(x) for x in rho]
            parts = {"L": L, "rho": rho, "drho": drho, "ddrho": [ring.rate(x) for x in drho], "omega": om,
                     "domega": [ring.rate(x) for x in om],
                     "J": [[ring.pythagoras(x) for x in _matvec(L, [ring.diff(y, Q) for y in rho], True)] for Q in Qs]}
            W = [[ring.diff(y, QD) for y in om] for QD in QDs]
            if still:
                rates = set(QDs)
                parts = {k: _map(v, lambda p: {mo: x for mo, x in p.items() if not any(a in rates for a, _ in mo)})
                         for k, v in parts.items()}
            trig = set()
            _walk(list(parts.values()), lambda p: trig.update(k for mo in p for k, _ in mo if _is_trig(ring.objects[k])))
            rename = {}
            for k in sorted(trig, key=lambda k: sp.default_sort_key(ring.objects[k])):
                o = ring.objects[k]
                arg = o.args[0]
                tag = arg.func.__name__ if isinstance(arg, AppliedUndef) else f"{len(rename)}_{where}"
                s = ring.var(prog.label(f"{'c' if isinstance(o, sp.cos) else 's'}_{tag}"))
                prog.steps.append((s, o))
                rename[k] = s
            if rename:
                parts = {k: _map(v, lambda p: _rename(p, rename)) for k, v in parts.items()}
            L = [prog.name(parts["L"][3 * r + cc], f"L_{r}{cc}_{where}") for r in range(3) for cc in range(3)]
            rho = prog.vector(parts["rho"], "rho", where)
            if link.parent < 0:
                wp, dwp, ap = zero, zero, [scale(x, -1) for x in g]
            else:
                wp, dwp, ap = w[link.parent], dw[link.parent], acc[link.parent]
            wj = prog.vector(parts["omega"], "omegaj", where)
            wpl = prog.vector(_matvec(L, wp, True), "omegap", where)
            w[i] = prog.vector(_vadd(wpl, wj), "omega", where)
            dw[i] = prog.vector(_vadd(_matvec(L, dwp, True), _cross(wpl, wj), parts["domega"]), "omegadot", where)
            drho = prog.vector(parts["drho"], "rhodot", where)
            u = _vadd(ap, _cross(dwp, rho), _cross(wp, _cross(wp, rho)), [scale(x, 2) for x in _cross(wp, drho)],
                      parts["ddrho"])
            acc[i] = prog.vector(_matvec(L, prog.vector(u, "ap", where), True), "a", where)
            ac = _vadd(acc[i], _cross(dw[i], c), _cross(w[i], _cross(w[i], c)))
            force[i] = prog.vector([mul(m, x) for x in ac], "F", where)
            Jw = prog.vector(_matvec(J, w[i]), "Jomega", where)
            moment[i] = _vadd(_matvec(J, dw[i]), _cross(w[i], Jw), _cross(c, force[i]))
            local[i] = (L, rho, parts["J"], W)
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
                fd = prog.vector(_matvec(Ld, f_tot[d]), "fp", identifier(self.links[d].body))
                fi = _vadd(fi, fd)
                ni = _vadd(ni, _matvec(Ld, n_tot[d]), _cross(rhod, fd))
            f_tot[i] = prog.vector(fi, "f", where)
            n_tot[i] = prog.vector(ni, "n", where)
            _, _, Jrho, Wom = local[i]
            for q, jr, wo in zip(self.links[i].coordinates, Jrho, Wom):
                k = index.get(q)
                if k is None:
                    raise ModelError(f"body {self.links[i].body}: joint coordinate {q} is not a coordinate of the "
                                     "model; this is a netdyn bug, please report it")
                tau[k] = total(tau[k], _dot(jr, f_tot[i]), _dot(wo, n_tot[i]))
        prog.prune(tau)
        prog.steps = prog.finish()
        return prog, [ring.to_sympy(p) for p in tau]

    def equations(self) -> RecursiveEquations:
        """The equations of the model in recursive form (:class:`RecursiveEquations`), made once."""
        if self._equations is None:
            prog, tau = self.program()
            rest = self.rest.derive().as_time_functions()
            rows = [tk + r for tk, r in zip(tau, rest)] + rest[len(tau):]
            self._equations = RecursiveEquations(rows, prog.steps, self.coordinates)
        return self._equations


def _map(v, fn):
    """``fn`` on every polynomial of a part (a polynomial, a list of them, or a list of lists)."""
    return [_map(x, fn) for x in v] if isinstance(v, list) else fn(v)


def _walk(v, fn):
    """``fn`` on every polynomial of a part (see :func:`_map`)."""
    for x in (v if isinstance(v, list) else [v]):
        _walk(x, fn) if isinstance(x, list) else fn(x)


def _rename(p, rename):
    """``p`` with variables renamed (a sine or cosine by its named symbol)."""
    out = {}
    for m, c in p.items():
        mm = tuple(sorted((rename.get(k, k), e) for k, e in m))
        out[mm] = out.get(mm, 0) + c
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
