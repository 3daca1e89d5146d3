"""Side-by-side comparison of two systems, and detection of analogies between them.

:func:`analogy` puts each system in its linear normal form
``M q̈ + D q̇ + K q = b`` (symbolic: a network is assembled with its element
values as symbols) and searches a mapping of coordinates (a permutation with
signs) and of parameters (each parameter of ``a`` to a power-law expression of
those of ``b``) under which the two forms are identical. :func:`compare`
reports degrees of freedom, stored-energy elements, natural frequencies,
damping ratios, static gains, step responses on common axes, and the analogy.

>>> from netdyn import Network
>>> from netdyn.components.electrical import VoltageSource, Resistor, Inductor, Capacitor
>>> from netdyn.components.translational import Mass, Spring, Damper, Force
>>> rlc = Network("RLC")
>>> _ = rlc.add(VoltageSource("V1", "a", "0", 1), Resistor("R1", "a", "b", 1), Inductor("L1", "b", "c", 0.5),
...             Capacitor("C1", "c", "0", 0.02))
>>> msd = Network("MSD")
>>> _ = msd.add(Mass("m", "x", m=0.5), Damper("c", "x", "0", c=1), Spring("k", "x", "0", k=50), Force("F", "x", 1))
>>> print(analogy(rlc, msd))
analogous: q_L1 ↔ x_x; L1 ↔ m, R1 ↔ c, C1 ↔ 1/k, V1 ↔ F
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass, field

import numpy as np
import sympy as sp

from netdyn.errors import ModelError, NetdynError
from netdyn.graph.assemble import role
from netdyn.components.base import THROUGH
from netdyn.analysis.linearize import linearize

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # names for the hints only (annotations are not evaluated)
    from netdyn.bondgraph.graph import BondGraph
    from netdyn.graph.network import Network
    from netdyn.lagrange.model import LagrangianModel
    from netdyn.hints import Formulation
    from collections.abc import Sequence

MAX_SEARCH = 6  # coordinates; beyond this the permutation search is not attempted


@dataclass
class Analogy:
    """Result of :func:`analogy`: ``analogous``, the coordinate and parameter mappings, and the reason."""

    analogous: bool
    coordinates: dict = field(default_factory=dict)
    parameters: dict = field(default_factory=dict)
    reason: str = ""

    def __bool__(self):
        return self.analogous

    def __str__(self):
        if not self.analogous:
            return f"not analogous: {self.reason}"
        coords = ", ".join(f"{a} ↔ {b}" for a, b in self.coordinates.items())
        params = ", ".join(f"{a} ↔ {b}" for a, b in self.parameters.items())
        return f"analogous: {coords}; {params}"


def _symbolic_model(system):
    """The model with element values as symbols, in the first formulation that leaves no constraint."""
    if hasattr(system, "derive"):
        return system
    for formulation in (None, "node", "loop"):
        model = system.model(formulation=formulation, symbolic=True)
        if not (model.constraints or model.flow_constraints):
            break
    return model


def normal_form(system):
    """``(names, M, D, K, b)``: the linear normal form at rest, symbolic where the system is.

    Raises :class:`~netdyn.errors.ModelError` for constrained or nonlinear systems.
    """
    model = _symbolic_model(system)
    eq = model.derive()
    if eq.phi or eq.a0:
        raise ModelError(f"{model.name} has constraints; the normal form needs independent coordinates "
                         "(circuits in loop or node form, mechanical networks in node form)")
    h = sp.Matrix(eq.h)
    zero = {s: 0 for s in eq.q + eq.f}
    M = sp.Matrix(eq.matrix("M"))
    K, D = h.jacobian(eq.q), h.jacobian(eq.f)
    b = -h.xreplace(zero)
    for mat, what in ((M, "mass"), (K, "stiffness"), (D, "damping")):
        if any(e.free_symbols & set(eq.q + eq.f) for e in mat):
            raise ModelError(f"{model.name} is nonlinear (its {what} matrix depends on the state); analogies "
                             "are detected between linear systems")
    inputs = {u: sp.Symbol(str(u)) for u in eq.inputs}
    return model.coordinate_names, M, D, K, b.xreplace(inputs)


def _monomial(e):
    """``(coefficient, symbol, exponent)`` when e = c·p^k with one symbol p, else None."""
    c, rest = e.as_coeff_Mul()
    syms = rest.free_symbols
    if len(syms) != 1:
        return None
    p = next(iter(syms))
    base, k = rest.as_base_exp()
    return (c, p, k) if base == p else None


def _match(pairs, max_passes=4):
    """A parameter map σ with σ(a) = b for every pair of entries, or None."""
    sigma = {}
    todo = list(pairs)
    for _ in range(max_passes):
        left = []
        for ea, eb in todo:
            ea_s = ea.xreplace(sigma)
            unknown = ea.free_symbols - set(sigma)
            if not unknown:
                if sp.simplify(ea_s - eb) != 0:
                    return None
                continue
            mono = _monomial(ea)
            if mono is not None and not (ea.free_symbols & set(sigma)):
                c, p, k = mono
                val = sp.powsimp(sp.powdenest((eb / c)**(1 / k), force=True), force=True)
                sigma[p] = val
            else:
                left.append((ea, eb))
        if not left:
            return sigma
        if len(left) == len(todo):
            return None
        todo = left
    return None


def analogy(a: Network | LagrangianModel | BondGraph, b: Network | LagrangianModel | BondGraph) -> Analogy:
    """Whether two systems have the same normal form under a mapping of coordinates and parameters.

    >>> from netdyn import Network
    >>> from netdyn.components.electrical import CurrentSource, Resistor, Capacitor
    >>> from netdyn.components.translational import Mass, Damper, Force
    >>> rc = Network("RC")
    >>> _ = rc.add(CurrentSource("I1", "0", "a", 1), Resistor("R1", "a", "0", 2), Capacitor("C1", "a", "0", 3))
    >>> md = Network("mass-damper")
    >>> _ = md.add(Mass("m", "x", m=3), Damper("c", "x", "0", c=0.5), Force("F", "x", 1))
    >>> bool(analogy(rc, md))
    True
    """
    try:
        na, Ma, Da, Ka, ba = normal_form(a)
        nb, Mb, Db, Kb, bb = normal_form(b)
    except ModelError as err:
        return Analogy(False, reason=str(err))
    n = len(na)
    if n != len(nb):
        return Analogy(False, reason=f"{len(na)} coordinates against {len(nb)}: different numbers of degrees of "
                                     "freedom")
    if n > MAX_SEARCH:
        return Analogy(False, reason=f"{n} coordinates: too many to search a mapping (limit {MAX_SEARCH})")
    mats = [("mass", Ma, Mb), ("damping", Da, Db), ("stiffness", Ka, Kb)]
    pattern = lambda m: tuple(tuple(e != 0 for e in m.row(i)) for i in range(m.rows))  # noqa: E731
    best, reason = None, None
    for perm in itertools.permutations(range(n)):
        P = sp.Matrix(n, n, lambda i, j: 1 if perm[i] == j else 0)
        if any(pattern(A) != pattern(P * B * P.T) for _, A, B in mats) or \
                tuple(e != 0 for e in ba) != tuple(e != 0 for e in P * bb):
            if reason is None:
                reason = _structure_difference(mats, ba, bb, P)
            continue
        for signs in itertools.product((1, -1), repeat=n):
            S = sp.diag(*signs) * P
            pairs = []
            for _, A, B in mats:
                SB = S * B * S.T
                pairs += [(A[i, j], SB[i, j]) for i in range(n) for j in range(n) if A[i, j] != 0]
            Sb = S * bb
            pairs += [(ba[i], Sb[i]) for i in range(n) if ba[i] != 0]
            sigma = _match(pairs)
            if sigma is None:
                continue
            positive = all(sp.sympify(v).as_coeff_Mul()[0] > 0 for v in sigma.values())
            cand = ({na[i]: (nb[perm[i]] if signs[i] > 0 else f"-{nb[perm[i]]}") for i in range(n)},
                    {str(k): v for k, v in sorted(sigma.items(), key=lambda kv: _order(kv[0], Ma, Da, Ka, ba))})
            if positive:
                return Analogy(True, *cand, reason="same normal form")
            best = best or cand
    if best:
        return Analogy(True, *best, reason="same normal form (with a sign change)")
    return Analogy(False, reason=reason or "no mapping of coordinates and parameters makes the normal forms equal")


def _order(sym, M, D, K, b):
    for rank, mat in enumerate((M, D, K, sp.Matrix(b))):
        if any(sym in e.free_symbols for e in mat):
            return (rank, str(sym))
    return (4, str(sym))


def _structure_difference(mats, ba, bb, P):
    for what, A, B in mats:
        PB = P * B * P.T
        for i in range(A.rows):
            for j in range(A.cols):
                if (A[i, j] != 0) != (PB[i, j] != 0):
                    return (f"the {what} matrices differ in structure: entry ({i + 1}, {j + 1}) is {A[i, j]} in the "
                            f"first system and {PB[i, j]} in the second")
    return "the inputs act on different coordinates"


# ------------------------------------------------------------------------------------------ compare

def _sources(system):
    if hasattr(system, "source_names"):
        return system.source_names()
    if hasattr(system, "derive"):
        return [str(u) for u in system.derive().inputs]
    return [n for n, e in system.elements.items() if e.is_source]


def _storage(system):
    if hasattr(system, "storage_names"):
        return system.storage_names()
    if hasattr(system, "derive"):
        return [f"{len(system.T_terms)} T* terms", f"{len(system.V_terms)} V terms"]
    return [n for n, e in system.elements.items() if role(e, THROUGH) in ("across_storage", "through_storage")
            or getattr(e, "is_transducer", False) and any(getattr(p, "law", "").endswith("storage")
                                                          for p, _ in getattr(e, "parts", []))]


def _name(system):
    return getattr(system, "name", type(system).__name__)


@dataclass
class Comparison:
    """Result of :func:`compare`: ``rows`` of the table, the two linear models, the analogy and responses."""

    names: tuple
    rows: list
    linear: tuple
    analogy: Analogy
    t: np.ndarray
    responses: tuple

    @property
    def table(self):
        w0 = max(len(r[0]) for r in self.rows)
        w1 = max(max(len(str(r[1])) for r in self.rows), len(self.names[0]))
        lines = [f"{'':{w0}}  {self.names[0]:{w1}}  {self.names[1]}"]
        lines += [f"{r[0]:{w0}}  {str(r[1]):{w1}}  {r[2]}" for r in self.rows]
        return "\n".join(lines + ["", str(self.analogy)])

    def __str__(self):
        return self.table

    def plot(self, path=None):
        """Step responses on common axes and Bode magnitudes; saves to ``path`` when given."""
        import matplotlib
        if path is not None:
            matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(7, 6))
        for name, y, lin in zip(self.names, self.responses, self.linear):
            ax1.plot(self.t, y, label=f"{name}: {lin.outputs[0]} / {lin.inputs[0]}")
            w, mag, _ = lin.bode()
            ax2.semilogx(w, mag, label=name)
        ax1.set_xlabel("t")
        ax1.set_title("unit step response")
        ax2.set_xlabel("ω [rad/s]")
        ax2.set_ylabel("|G| [dB]")
        for ax in (ax1, ax2):
            ax.grid(True, alpha=0.3)
            ax.legend(fontsize="small")
        fig.tight_layout()
        if path is not None:
            fig.savefig(path, dpi=110)
            plt.close(fig)
        return fig


def compare(a: Network | LagrangianModel | BondGraph, b: Network | LagrangianModel | BondGraph,
            inputs: Sequence[str] | None = None, outputs: Sequence[str] | None = None, t_end: float | None = None,
            formulation: Formulation = None) -> Comparison:
    """Compare two systems (networks or models) side by side; returns a :class:`Comparison`.

    ``inputs``/``outputs`` are pairs (one name for each system); by default the
    first source or input of each, and its first coordinate. Both are
    linearized at rest with zero inputs.

    >>> from netdyn import Network
    >>> from netdyn.components.electrical import VoltageSource, Resistor, Inductor, Capacitor
    >>> from netdyn.components.translational import Mass, Spring, Damper, Force
    >>> rlc = Network("RLC")
    >>> _ = rlc.add(VoltageSource("V1", "a", "0", 1), Resistor("R1", "a", "b", 1), Inductor("L1", "b", "c", 0.5),
    ...             Capacitor("C1", "c", "0", 0.02))
    >>> msd = Network("MSD")
    >>> _ = msd.add(Mass("m", "x", m=0.5), Damper("c", "x", "0", c=1), Spring("k", "x", "0", k=50), Force("F", "x", 1))
    >>> cmp = compare(rlc, msd)
    >>> bool(cmp.analogy)
    True
    """
    ins = inputs or (_first(_sources(a), a), _first(_sources(b), b))
    an = analogy(a, b)
    # a front end whose analysis default differs from the coordinates the analogy reads (a bond graph's state
    # equations in p and q) says which of its formulations compares: its ``compare_formulation``
    forms = tuple(formulation if formulation is not None else getattr(s, "compare_formulation", None) for s in (a, b))
    if outputs is None:
        first_a, first_b = _coords(a, forms[0])[0], _coords(b, forms[1])[0]
        outputs = (first_a, str(an.coordinates.get(first_a, first_b)).lstrip("-")) if an else (first_a, first_b)
    lins = tuple(linearize(s, inputs=[i], outputs=[o], u=_zero_inputs(s, i), formulation=f)
                 for s, i, o, f in zip((a, b), ins, outputs, forms))
    dof = [len(lin.states) for lin in lins]
    slow = min([abs(p.real) for lin in lins for p in lin.poles() if abs(p.real) > 1e-12] or [1.0])
    t_end = t_end or 6.0 / slow
    tt = np.linspace(0.0, t_end, 600)
    resp = tuple(lin.step(tt, input=lin.inputs.index(i))[0] for lin, i in zip(lins, ins))
    rows = [("states (minimal)", dof[0], dof[1]),
            ("coordinates", len(lins[0].model.coordinates), len(lins[1].model.coordinates)),
            ("stored-energy elements", ", ".join(_storage(a)), ", ".join(_storage(b))),
            ("input → output", f"{ins[0]} → {outputs[0]}", f"{ins[1]} → {outputs[1]}"),
            ("natural frequencies [rad/s]", _fmt(lins[0].natural_frequencies()), _fmt(lins[1].natural_frequencies())),
            ("damping ratios", _fmt(lins[0].damping_ratios()), _fmt(lins[1].damping_ratios())),
            ("static gain", _gain(lins[0], ins[0]), _gain(lins[1], ins[1])),
            ("peak of step response", f"{np.max(np.abs(resp[0])):.4g}", f"{np.max(np.abs(resp[1])):.4g}")]
    return Comparison((_name(a), _name(b)), rows, lins, an, tt, resp)


def _first(names, system):
    if not names:
        raise ModelError(f"{_name(system)} has no source or input to drive it; add one or pass inputs=(...)")
    return names[0]


def _coords(system, formulation=None):
    if hasattr(system, "with_inputs"):  # the coordinates linearize will see
        return system.with_inputs([], formulation)[0].coordinate_names
    return (system if hasattr(system, "derive") else system.model()).coordinate_names


def _zero_inputs(system, name):
    return {u: 0.0 for u in _sources(system)} if not hasattr(system, "derive") else \
        {str(u): 0.0 for u in system.derive().inputs}


def _fmt(values):
    return ", ".join(f"{v:.4g}" for v in values) or "-"


def _gain(lin, name):
    try:
        return f"{lin.static_gain()[0, lin.inputs.index(name)]:.4g}"
    except NetdynError:
        return "∞ (integrator)"
