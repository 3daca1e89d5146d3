"""FMI 2.0 FMUs (Model Exchange and Co-Simulation) of a model: ``netdyn.save_fmu(system, "model.fmu")``.

The FMU holds ``modelDescription.xml``, its C sources (the equations from :func:`netdyn.export.c.to_c`, the
tables and extra functions of this model, the runtime ``fmu_runtime.c`` of this package and the three FMI 2.0
headers) and ``binaries/linux64/<id>.so``, compiled at export with ``gcc`` or ``clang`` from ``PATH``
(``compiler=`` or ``$CC`` to choose); nothing prebuilt is shipped. The FMI 2.0 headers (2-clause BSD) are
copied from the installed FMPy (``pip install fmpy``), or from ``headers=`` / ``$NETDYN_FMI2_HEADERS``.

What the FMU integrates. ``M q̈ + h + Φ_qᵀλ + Aᵀμ = 0``, ``φ = 0``, ``A f + a = 0`` as an ODE in its states:

* **coordinate partitioning** — the coordinates are split by Gaussian elimination with complete pivoting of the
  position constraints' Jacobian ``[Φ_q; Φ2_q]`` (coordinates in ``states=``, then those given in ``q0``, taken
  as states before others); with ``stop_time`` the split that stays best conditioned along a coarse first pass
  of the FMU over the experiment: the pivot columns are *dependent* and solved by Newton on ``φ = 0`` inside
  ``fmi2GetDerivatives``, the others are states. ``Φ2`` are the rows of coordinates with neither inertia nor
  dissipation (a loop of voltage sources and capacitors in loop charges, a node between two inductors in node
  fluxes): their equations hold positions only, and are kept as position constraints;
* the **flows** without inertia (a loop of resistors and capacitors, a node without capacitor) and the
  dependent inertial flows are solved in the same call, with the accelerations and multipliers, by Newton on
  the velocity-level constraints, the equations of motion and the acceleration-level constraints free of flows
  without inertia — a single linear solve when the model is linear in the flows (linear circuits, bond
  graphs); the independent inertial flows are states;
* Model Exchange keeps the partition chosen at export (it names the states, listed in the model description's
  ``description``) and ends with an error when its condition estimate falls below 1e-6 of its start value
  (a warning at 1e-3); Co-Simulation integrates with an embedded Dormand–Prince 5(4) (error control per
  state; ``tolerance`` of ``fmi2SetupExperiment``, default 1e-8) and re-selects the partition when it degrades;
* **time events** at the corners of ``PULSE``/``PWL``/``STEP`` sources (``nextEventTime``; Co-Simulation steps
  stop there); the nominal size of each state comes from a coarse first pass over the experiment, as
  ``netdyn.simulate`` scales its absolute tolerances.

Formulation. Without ``formulation=`` a network is tried in its default formulation, then in node fluxes,
loop and branch charges, and the first whose rate equations are regular at the start is exported (the FMU's
own check, run at export). A model whose index-two structure is no single coordinate's row in every
formulation tried (or deeper) is refused with an :class:`~netdyn.errors.ExportError` naming why each was.

>>> import netdyn, zipfile, tempfile, os
>>> from netdyn.components.electrical import VoltageSource, Resistor, Capacitor
>>> net = netdyn.Network("rc")
>>> _ = net.add(VoltageSource("V1", "in", "0", 1.0), Resistor("R1", "in", "out", 1e3), Capacitor("C1", "out", "0", 1e-6))
>>> folder = tempfile.mkdtemp()
>>> fmu = netdyn.save_fmu(net, os.path.join(folder, "rc.fmu"), outputs=["v(C1)"]) if can_export() else None
>>> fmu is None or sorted(n for n in zipfile.ZipFile(fmu.path).namelist() if not n.startswith("sources/"))
['binaries/linux64/rc.so', 'modelDescription.xml']
>>> fmu is None or (fmu.states, [p for p, _ in fmu.parameters])
(['q_R1'], ['C1', 'R1', 'V1'])
"""
from __future__ import annotations

import ctypes
import datetime
import hashlib
import os
import re
import shutil
import subprocess
import tempfile
import time
import uuid
import zipfile
from dataclasses import dataclass, field
from types import SimpleNamespace
from xml.sax.saxutils import quoteattr

import numpy as np
import sympy as sp

from netdyn.errors import ExportError, NetdynError
from netdyn.export._program import Function, Program, c_identifier, parameter_defaults
from netdyn.export.c import _CONSTANTS, _Printer, _function, _is_boolean, c_code
from netdyn.files import output_path
from netdyn.graph.assembly import fill as stored_assembly
from netdyn.lagrange.equations import internalize
from netdyn.lagrange.fastdiff import Differentiator
from netdyn.lagrange.sources import corner_schedule
from netdyn.numerics.dae.initial import joint_table
from netdyn.numerics.dae.start import SymbolicStart
from netdyn.numerics.functions.energy import port_efforts
from netdyn.numerics.results.quantities import quantity
from netdyn.symbols import t as T

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # names for the hints only (annotations are not evaluated)
    from netdyn.bondgraph.graph import BondGraph
    from netdyn.graph.network import Network
    from netdyn.lagrange.model import LagrangianModel
    from netdyn.hints import Formulation, Initial, PathArg
    from collections.abc import Mapping, Sequence

KINDS = ("me", "cs", "both")
#: the FMI 2.0 headers the FMU's sources include
HEADERS = ("fmi2Functions.h", "fmi2FunctionTypes.h", "fmi2TypesPlatform.h")
#: flags of the compile at export (the runtime and the equations compile without a warning under them; only the
#: FMI functions and the export's check are visible outside the binary)
CFLAGS = ("-shared", "-fPIC", "-fvisibility=hidden", "-O2", "-std=c99", "-Wall", "-Wextra", "-pedantic")
_RUNTIME = os.path.join(os.path.dirname(__file__), "fmu_runtime.c")

# SI units of netdyn's quantities as FMI units: name -> exponents of kg, m, s, A, rad
_UNITS = {
    "V": (1, 2, -3, -1, 0), "A": (0, 0, 0, 1, 0), "C": (0, 0, 1, 1, 0), "Wb": (1, 2, -2, -1, 0),
    "m": (0, 1, 0, 0, 0), "rad": (0, 0, 0, 0, 1), "m/s": (0, 1, -1, 0, 0), "rad/s": (0, 0, -1, 0, 1),
    "m/s2": (0, 1, -2, 0, 0), "rad/s2": (0, 0, -2, 0, 1), "N": (1, 1, -2, 0, 0), "N.m": (1, 2, -2, 0, 0),
    "N.s": (1, 1, -1, 0, 0), "N.m.s": (1, 2, -1, 0, 0), "A/s": (0, 0, -1, 1, 0), "V/s": (1, 2, -4, -1, 0),
    "N/s": (1, 1, -3, 0, 0), "N.m/s": (1, 2, -3, 0, 0), "Ohm": (1, 2, -3, -2, 0), "H": (1, 2, -2, -2, 0),
    "F": (-1, -2, 4, 2, 0), "kg": (1, 0, 0, 0, 0), "kg.m2": (1, 2, 0, 0, 0), "N/m": (1, 0, -2, 0, 0),
    "N.s/m": (1, 0, -1, 0, 0), "V.s/rad": (1, 2, -2, -1, -1), "s": (0, 0, 1, 0, 0),
}
_UNIT_NAMES = {"m/s²": "m/s2", "rad/s²": "rad/s2", "N·m": "N.m", "N·s": "N.s", "N·m·s": "N.m.s", "N·m/s": "N.m/s"}
# element class -> value key -> unit (the parameters of ``Network.model(symbolic=True)``)
_PARAMETER_UNITS = {
    "Resistor": {"R": "Ohm"}, "Inductor": {"L": "H"}, "Capacitor": {"C": "F"}, "VoltageSource": {"value": "V"},
    "CurrentSource": {"value": "A"}, "RigidBody": {"m": "kg", "I": "kg.m2"}, "Mass": {"m": "kg"},
    "MovingCoil": {"Bl": "V.s/rad"},
}


@dataclass
class FMU:
    """What :func:`save_fmu` wrote: ``path`` (also the object's ``os.fspath``), the model ``identifier``, the
    ``kind`` (``"me"``, ``"cs"``, ``"both"``), the ``formulation`` exported, the ``states`` (independent
    coordinates, then independent flows ``<coordinate>_dot``), the ``dependent`` coordinates, the
    ``parameters`` and ``inputs`` as ``(name, start)``, the ``outputs``, the ``compiler`` and its
    ``warnings`` (empty: the sources compile clean) and the export time in ``seconds``."""

    path: str
    identifier: str
    kind: str
    formulation: object
    states: list
    dependent: list
    parameters: list
    inputs: list
    outputs: list
    compiler: str
    warnings: str = ""
    seconds: float = 0.0
    refused: list = field(default_factory=list)
    dynamic_states: bool = False

    def __fspath__(self):
        return self.path


def save_fmu(system: Network | LagrangianModel | BondGraph | PathArg, path: PathArg,
             outputs: Sequence[str] | None = None, inputs: Sequence[str] | None = None,
             parameters: Sequence[str] | Mapping[str, float] | None = None, q0: Initial | None = None,
             f0: Initial | None = None, guess: Initial | None = None, kind: str = "me",
             formulation: Formulation = None, states: Sequence[str] | None = None, name: str | None = None,
             t0: float = 0.0, stop_time: float | None = None, tolerance: float = 1e-8, compiler: str | None = None,
             headers: PathArg | None = None, dynamic_states: bool = False) -> FMU:
    """Write an FMI 2.0 FMU of ``system`` to ``path``; returns an :class:`FMU` record.

    Parameters
    ----------
    system : Network, BondGraph, LagrangianModel, or the path of a model, netlist or bond-graph file
    path : str — the ``.fmu`` file to write
    outputs : list of str — series as ``Solution.series`` names them: ``"i(L2)"``, ``"v(C2)"``, a node ``"v(out)"``,
        a coordinate ``"theta_crank"`` (or ``_dot``, ``_ddot``), a planar joint ``"J3"``, a multiplier ``"lambda_1"``;
        the FMI variables carry these names. Every coordinate, flow and multiplier is a variable anyway.
    inputs : list of str or dict — sources of a network (by element name) that become real inputs of the FMU
        (a dict gives their start values, default 0); a model's undefined functions of t are always inputs.
    parameters : list or dict — a list exposes only these parameters (the others keep their values); a dict
        changes start values. Default: every parameter of the model (element values by element name, such as
        ``R1``, or ``<element>_<parameter>``, such as ``crank_m``), tunable, with the model's values.
    q0, f0, guess : dict — the initial state as ``netdyn.simulate`` takes it; the consistent start computed here
        gives the states' start values (coordinates named in ``q0``/``f0`` are preferred as states).
    kind : ``"me"`` (Model Exchange), ``"cs"`` (Co-Simulation) or ``"both"``
    formulation : the network formulation (default: tried in turn, see the module docstring)
    states : list of str — coordinates to keep as states where the constraints allow (``["theta_crank"]``);
        default: with ``stop_time`` the partition that stays best conditioned along a coarse first pass over the
        experiment, else the one pivoting chooses at the start
    dynamic_states : bool — Model Exchange re-selects the partition when it degrades (FMI's dynamic state
        selection): the states are then the abstract variables ``state_1``… with derivatives ``der(state_1)``…,
        whose meaning changes at a step event (``valuesOfContinuousStatesChanged``); the coordinates stay
        variables by name. Default ``False``: the states are coordinates by name, and a partition that degrades
        stops Model Exchange with an error (Co-Simulation always re-selects)
    name : the model name (default the system's); the model identifier is its C identifier
    t0, stop_time, tolerance : the default experiment (start, stop, relative tolerance)
    compiler : the C compiler (default ``$CC``, else ``gcc``, ``clang`` or ``cc`` from ``PATH``)
    headers : a folder holding the FMI 2.0 headers (default: FMPy's)

    >>> import netdyn, os, tempfile
    >>> from netdyn.components.electrical import VoltageSource, Inductor, Resistor
    >>> net = netdyn.Network("rl")
    >>> _ = net.add(VoltageSource("V1", "a", "0", 1.0), Resistor("R1", "a", "b", 2.0), Inductor("L1", "b", "0", 0.5))
    >>> path = os.path.join(tempfile.mkdtemp(), "rl.fmu")
    >>> fmu = netdyn.save_fmu(net, path, outputs=["i(L1)"], inputs=["V1"]) if netdyn.export.fmu.can_export() else None
    >>> fmu is None or (fmu.states, fmu.inputs, fmu.outputs)
    (['q_L1', 'q_L1_dot'], [('V1', 0.0)], ['i(L1)'])
    """
    started = time.perf_counter()
    if kind not in KINDS:
        raise ExportError(f"kind={kind!r}: use 'me' (Model Exchange), 'cs' (Co-Simulation) or 'both'")
    path = str(output_path(path, "FMU"))  # str or PathLike; its folder made before the build, not after
    cc = _compiler(compiler)
    header_dir = _headers(headers)
    system = _load(system)
    input_starts = _inputs(inputs)
    system = _with_inputs(system, input_starts)
    q0, f0, guess = stored_assembly(system, q0, f0, guess)   # what the caller left out: the network's assembly
    outputs = list(outputs or [])
    refused = []
    for form in _formulations(system, formulation):
        try:
            built = _Build(system, form, outputs, input_starts, parameters, q0, f0, guess, t0, states)
            built.dynamic = bool(dynamic_states)
        except NetdynError as exc:
            refused.append((form, str(exc)))
            continue
        ident = c_identifier(name or built.model.name)
        with tempfile.TemporaryDirectory(prefix="netdyn-fmu-") as tmp:
            try:
                result = built.write(tmp, path, ident, name or built.model.name, kind, cc, header_dir, t0,
                                     stop_time, tolerance)
            except _Refused as exc:
                refused.append((form, str(exc)))
                continue
        result.refused = refused
        result.seconds = time.perf_counter() - started
        return result
    reasons = "; ".join(f"formulation {f or 'default'}: {why}" for f, why in refused)
    raise ExportError(f"no FMU could be exported: {reasons}")


def can_export(compiler: str | None = None, headers: PathArg | None = None) -> bool:
    """Whether :func:`save_fmu` can run here: a C compiler on ``PATH`` (or ``compiler``) and the FMI 2.0 headers
    (FMPy's, or ``headers``) found.

    >>> isinstance(can_export(), bool)
    True
    """
    try:
        _compiler(compiler)
        _headers(headers)
    except ExportError:
        return False
    return True


class _Refused(Exception):
    """A formulation whose FMU fails its own check (the next one is tried)."""


# ------------------------------------------------------------------------------------------ inputs of the call

def _compiler(compiler):
    for cand in ([compiler] if compiler else []) + [os.environ.get("CC"), "gcc", "clang", "cc"]:
        if cand and shutil.which(cand):
            return shutil.which(cand)
    if compiler:
        raise ExportError(f"compiler {compiler!r} not found on PATH")
    raise ExportError("no C compiler found on PATH (gcc, clang or cc; or set $CC): an FMU's binary is compiled "
                      "at export (apt-get install gcc)")


def _headers(folder):
    candidates = [folder, os.environ.get("NETDYN_FMI2_HEADERS")]
    try:
        import fmpy  # noqa: F401 - only where its headers are
        candidates.append(os.path.join(os.path.dirname(fmpy.__file__), "c-code"))
    except ImportError:
        pass
    for cand in candidates:
        if cand and all(os.path.isfile(os.path.join(cand, h)) for h in HEADERS):
            return cand
    raise ExportError("the FMI 2.0 headers (fmi2Functions.h, fmi2FunctionTypes.h, fmi2TypesPlatform.h) were not "
                      "found: pip install fmpy (they come with it), or pass headers= (or set "
                      "$NETDYN_FMI2_HEADERS) to a folder holding them")


def _load(system):
    if not isinstance(system, (str, os.PathLike)):
        if not (hasattr(system, "derive") or hasattr(system, "model")):
            raise ExportError(f"expected a Network, BondGraph, LagrangianModel or a file, got {type(system).__name__}")
        return system
    path = os.fspath(system)
    if not os.path.isfile(path):
        raise ExportError(f"{path}: no such file")
    import netdyn  # the public loaders (netdyn.io is a sibling of this layer: reached through the package root)
    from netdyn.bondgraph.fileformat import FORMAT, load_bond_graph
    ext = os.path.splitext(path)[1].lower()
    if ext in (".json", ".yaml", ".yml"):
        with open(path, encoding="utf-8", errors="replace") as fh:
            if FORMAT in fh.read(1 << 16):
                return load_bond_graph(path)
        return netdyn.load_model(path)
    if ext in (".cir", ".sp", ".net", ".spice", ".ckt"):
        return netdyn.read_netlist(path)
    raise ExportError(f"{path}: unknown file type {ext or '(none)'!r}; give a model, netlist or bond-graph file")


def _inputs(inputs):
    if inputs is None:
        return {}
    if isinstance(inputs, str):
        inputs = [inputs]
    if isinstance(inputs, dict):
        return {str(k): float(v) for k, v in inputs.items()}
    return {str(k): 0.0 for k in inputs}


def _with_inputs(system, inputs):
    """The system with the named sources' values replaced by undefined functions of t (FMU inputs)."""
    if not inputs or hasattr(system, "derive"):
        return system
    if hasattr(system, "bond_names"):  # a bond graph: its Se/Sf elements, as its analysis tools do
        sources = system.of_kind("Se", "Sf")
        bad = sorted(set(inputs) - set(sources))
        if bad:
            raise ExportError(f"inputs {bad} are not sources of this bond graph; its sources are {sources}")
        work = system.copy()
        for name in inputs:
            key = "effort" if system.kind(name) == "Se" else "flow"
            work.graph.nodes[name]["params"] = {**system.params(name), key: sp.Function(name)(T)}
        return work
    elements = getattr(system, "elements", None)
    if elements is None or not hasattr(system, "add"):
        raise ExportError(f"inputs= names sources of a Network; a {type(system).__name__} takes none")
    bad = [k for k in inputs if k not in elements or not getattr(elements[k], "is_source", False)]
    if bad:
        raise ExportError(f"inputs {bad} are not sources of this network; its sources are "
                          f"{sorted(k for k, e in elements.items() if getattr(e, 'is_source', False))}")
    out = type(system)(system.name)
    for key in ("tran", "analyses", "notes", "temperature"):
        if hasattr(system, key):
            setattr(out, key, getattr(system, key))
    for body in getattr(system, "bodies", {}).values():
        out.add(body)
    for k, el in elements.items():
        if k in inputs:
            clone = object.__new__(type(el))
            clone.__dict__.update(el.__dict__)
            clone.values = dict(el.values, value=sp.Function(k)(T))
            el = clone
        out.add(el)
    return out


def _formulations(system, formulation):
    if formulation is not None or hasattr(system, "derive"):
        return [formulation]
    if hasattr(system, "bond_names"):
        return [None]
    return [None, "node", "loop", "branch"]


# ------------------------------------------------------------------------------------------ the model's analysis

def _sparse_diff(exprs, symbols):
    """``{(i, j): d exprs[i] / d symbols[j]}`` for the non-zero entries (symengine underneath, as the derivation)."""
    index = {s: j for j, s in enumerate(symbols)}
    d = Differentiator()
    out = {}
    for i, e in enumerate(exprs):
        term = d.term(sp.sympify(e))
        for s in d.free(term) & set(index):
            r = d.sympy(d.diff(term, s))
            if r != 0:
                out[(i, index[s])] = r
    return out


def pivot_columns(A, weights, allowed=None):
    """The dependent columns of ``A`` (rows × n): Gaussian elimination with complete pivoting on
    ``|A_ij| · weights_j`` over the ``allowed`` columns — the same rule as the FMU's runtime.

    >>> pivot_columns(np.array([[1.0, 2.0, 0.0]]), np.ones(3)), pivot_columns(np.array([[1.0, 2.0, 0.0]]), [1, 1e-3, 1])
    ([1], [0])
    """
    A = np.array(A, dtype=float)
    rows, cols = A.shape
    w = np.asarray(weights, dtype=float)
    colused = np.array([False] * cols) if allowed is None else ~np.asarray(allowed, dtype=bool)
    rowused = np.zeros(rows, dtype=bool)
    amax = np.max(np.abs(A)) if A.size else 0.0
    out = []
    for _ in range(rows):
        score = np.abs(A) * w
        score[rowused, :] = 0.0
        score[:, colused] = 0.0
        if not score.size or score.max() <= 0.0:
            break
        pi, pj = np.unravel_index(np.argmax(score), score.shape)
        if abs(A[pi, pj]) <= 1e-12 * amax:
            break
        rowused[pi] = colused[pj] = True
        out.append(int(pj))
        for i in np.flatnonzero(~rowused):
            A[i] -= A[i, pj] / A[pi, pj] * A[pi]
    return out


def _reduce_rows(C, noninertial):
    """Rows ``W`` with ``W C[:, noninertial] = 0`` (the runtime's elimination)."""
    mc = C.shape[0]
    G = C[:, noninertial].copy() if noninertial else np.zeros((mc, 0))
    T = np.eye(mc)
    used = np.zeros(mc, dtype=bool)
    gmax = np.max(np.abs(G)) if G.size else 0.0
    for j in range(G.shape[1]):
        col = np.where(used, 0.0, np.abs(G[:, j]))
        if not col.size or col.max() <= 1e-12 * gmax:
            continue
        p = int(np.argmax(col))
        used[p] = True
        for i in np.flatnonzero(~used):
            l = G[i, j] / G[p, j]
            G[i] -= l * G[p]
            T[i] -= l * T[p]
    return T[~used]


class _Build:
    """One formulation of the system: its model, consistent start, structure, partition and C functions."""

    def __init__(self, system, form, outputs, input_starts, parameters, q0, f0, guess, t0, states=None):
        if hasattr(system, "derive"):
            model = system
        else:
            model = system.model(formulation=form, symbolic=True)
        self.form = form
        eq0 = model.derive()
        names = [str(s.func.__name__) if hasattr(s, "func") and isinstance(s.func, sp.core.function.UndefinedFunction)
                 else str(s) for s in eq0.inputs]
        unknown = sorted(set(input_starts) - set(names))
        if unknown:
            raise ExportError(f"inputs {unknown} are not inputs of the model (its inputs: {names or 'none'})")
        self.input_names = names
        self.input_starts = [input_starts.get(nm, 0.0) for nm in names]
        params, self.exposed = self._parameters(model, eq0, parameters)
        call = SimpleNamespace(system=model, formulation=None, params={**params, **dict(zip(names, self.input_starts))},
                               q0=q0, f0=f0, guess=guess, t_span=(float(t0), float(t0) + 1.0), rtol=None, atol=None)
        start = SymbolicStart(call)
        self.model, self.cm, self.p, self.q, self.f = start.model, start.cm, start.p, start.q, start.f
        self.params = params
        self.eq = eq = self.model.derive()
        self.prog = Program(self.model, form="expanded")  # the FMU integrates the expanded M and h
        self.n = eq.n
        self.names = list(self.model.coordinate_names)
        self.t0 = float(t0)
        self._structure()
        unknown = sorted(set(states or ()) - set(self.names))
        if unknown:
            raise ExportError(f"states {unknown} are not coordinates of the model ({', '.join(self.names)})")
        self.states_given = bool(states)
        self.dynamic = False   # Model Exchange re-selects its states (save_fmu's dynamic_states)
        self._partition(set(q0 or {}) | {k[:-4] for k in (f0 or {}) if str(k).endswith("_dot")} | set(f0 or {}),
                        set(states or ()))
        self.outputs = [self._output(spec) for spec in outputs]
        self._check_inputs_not_differentiated()

    # ---------------------------------------------------------------- parameters
    def _parameters(self, model, eq, parameters):
        defaults = parameter_defaults(model, eq)
        values = dict(defaults)
        exposed = list(defaults)
        if isinstance(parameters, dict):
            unknown = sorted(set(map(str, parameters)) - set(defaults))
            if unknown:
                raise ExportError(f"unknown parameter(s) {unknown}; the model's are {sorted(defaults) or 'none'}")
            values.update({str(k): float(v) for k, v in parameters.items()})
        elif parameters is not None:
            chosen = [str(k) for k in parameters]
            unknown = sorted(set(chosen) - set(defaults))
            if unknown:
                raise ExportError(f"unknown parameter(s) {unknown}; the model's are {sorted(defaults) or 'none'}")
            exposed = chosen
        missing = sorted(k for k, v in values.items() if v is None)
        if missing:
            raise ExportError(f"parameter(s) {missing} have no value; pass parameters={{{missing[0]!r}: ...}}")
        return values, exposed

    # ---------------------------------------------------------------- structure
    def _structure(self):
        eq, n = self.eq, self.n
        fset = set(eq.f)
        self.inertial = sorted({j for (_, j) in eq.M.keys()})
        self.noninertial = [j for j in range(n) if j not in set(self.inertial)]
        constrained = {j for (_, j) in eq.Phi_q.keys()} | {j for (_, j) in eq.reaction.keys()}  # rows with a multiplier
        self.hidden = [i for i in self.noninertial if i not in constrained
                       and not (sp.sympify(eq.h[i]).free_symbols & fset)]
        for i in self.hidden:
            if not (sp.sympify(eq.h[i]).free_symbols & set(eq.q)):
                raise ExportError(f"the equation of {self.names[i]} holds neither its coordinate nor any flow "
                                  "(a loop of sources only?)")
        self.dynrows = [i for i in range(n) if i not in set(self.hidden)]
        phi2 = [sp.sympify(eq.h[i]) for i in self.hidden]
        Phi2_q = _sparse_diff(phi2, eq.q)
        Phi2_t = [sp.diff(e, T) for e in phi2]
        vel2 = [sum((Phi2_q.get((i, j), 0) * eq.f[j] for j in range(n)), sp.S.Zero) + Phi2_t[i]
                for i in range(len(phi2))]
        gamma2 = [sum((sp.diff(v, eq.q[j]) * eq.f[j] for j in range(n) if eq.q[j] in v.free_symbols), sp.S.Zero)
                  + sp.diff(v, T) for v in vel2]
        self.phi2, self.Phi2_q, self.Phi2_t, self.gamma2 = phi2, Phi2_q, Phi2_t, gamma2
        gam = list(eq.gamma_phi) + gamma2 + list(eq.gamma_psi)
        # without flows of no inertia the velocity constraints alone fix the dependent flows, so the Newton
        # of the rates converges without dh/df and dgamma/df (in one more iteration where h or gamma depend on
        # f): they are left out of such models (mechanisms: gyroscopic and quadratic terms, costly for spatial
        # ones)
        self.gamma_f = _sparse_diff(gam, eq.f) if self.noninertial else {}
        self.h_f = _sparse_diff(eq.h, eq.f) if self.noninertial else {}
        self.affine = not any(sp.sympify(e).free_symbols & fset for e in gam) and (
            not any(sp.sympify(e).free_symbols & fset for e in self.h_f.values()) if self.noninertial
            else not any(sp.sympify(e).free_symbols & fset for e in eq.h))
        self.m1, self.m2, self.mp = len(eq.phi), len(eq.a0), len(phi2)

    def _numeric(self, tt, q, f):
        """``[Φ_q; Φ2_q]`` and ``C = [Φ_q; Φ2_q; A]`` at a state."""
        cm, eq, n = self.cm, self.eq, self.n
        con = cm.constraints(tt, q, f, self.p)
        P2 = np.zeros((self.mp, n))
        if self.Phi2_q:
            fn = sp.lambdify([T, list(eq.q), list(eq.f), list(cm.parameters), list(cm.inputs)],
                             list(self.Phi2_q.values()), modules="numpy")
            vals = fn(tt, q, f, self.p.vector, self.p.inputs(tt))
            for (i, j), v in zip(self.Phi2_q, vals):
                P2[i, j] = float(v)
        Pq = np.vstack([np.asarray(con.Phi_q, dtype=float).reshape(self.m1, n), P2])
        return Pq, np.vstack([Pq, np.asarray(con.A, dtype=float).reshape(self.m2, n)])

    def _partition(self, preferred, chosen=()):
        n = self.n
        self.weights = np.array([1e-6 if nm in chosen else 1e-3 if nm in preferred else 1.0 for nm in self.names])
        Pq, C = self._numeric(self.t0, self.q, self.f)
        mpos = self.m1 + self.mp
        self.posdep = pivot_columns(Pq, self.weights) if mpos else []
        if len(self.posdep) != mpos:
            raise ExportError(f"the position constraints are dependent at the start (rank {len(self.posdep)} of "
                              f"{mpos}): a redundant constraint, or a hidden one of index two or more")
        B = self._reduced(C)
        self.nk = B.shape[0]
        allowed = np.zeros(n, dtype=bool)
        allowed[self.inertial] = True
        self.veldep = pivot_columns(B, self.weights, allowed) if self.nk else []
        if len(self.veldep) != self.nk:
            raise ExportError("the flow constraints on inertial flows are dependent at the start")
        self._complete()

    def _complete(self):
        self.posstate = [j for j in range(self.n) if j not in set(self.posdep)]
        self.velstate = [j for j in self.inertial if j not in set(self.veldep)]

    def _reduced(self, C):
        W = _reduce_rows(C, self.noninertial)
        B = np.zeros((W.shape[0], self.n))
        if W.shape[0]:
            B[:, self.inertial] = (W @ C)[:, self.inertial]
        return B

    def choose_partition(self, samples):
        """The partition that stays best conditioned along a coarse first pass (``samples``: rows t, q, f):
        among the pivot choices at the start and at every sample, the one whose dependent blocks' worst
        condition estimate (smallest over the samples of min |u_ii| of their LU over the largest entry) is largest.
        Returns whether it changed."""
        import scipy.linalg as sla
        n = self.n
        mats = [self._numeric(row[0], row[1:n + 1], row[n + 1:]) for row in samples]
        pos = [Pq for Pq, _ in mats]
        vel = [self._reduced(C) for _, C in mats] if self.nk else []
        allowed = np.zeros(n, dtype=bool)
        allowed[self.inertial] = True

        def score(blocks, dep):
            worst = np.inf
            for A in blocks:
                try:
                    lu_, _ = sla.lu_factor(A[:, dep], check_finite=True)
                except (ValueError, sla.LinAlgError):
                    return 0.0
                d = np.abs(np.diag(lu_))   # against the whole Jacobian, as the runtime's estimate
                top = max(d.max(), np.abs(A).max())
                worst = min(worst, d.min() / top if top > 0 else 0.0)
            return worst

        def best(current, blocks, pick):   # the pivots at each sample, unweighted (the start's choice is current)
            cands = [list(current)] + [pick(A) for A in blocks]
            cands = [c for c in cands if len(c) == len(current)]
            unique = list({tuple(sorted(c)): c for c in cands}.values())
            return max(unique, key=lambda dep: (score(blocks, dep), sorted(dep) == sorted(current)))

        old = (sorted(self.posdep), sorted(self.veldep))
        if self.posdep and pos:
            self.posdep = best(self.posdep, pos, lambda A: pivot_columns(A, np.ones(n)))
        if self.veldep and vel:
            same = [j for j in self.posdep if j in set(self.inertial)]
            cur = same if len(same) == self.nk and score(vel, same) > 0 else self.veldep
            self.veldep = best(cur, vel, lambda A: pivot_columns(A, np.ones(n), allowed))
        self._complete()
        return old != (sorted(self.posdep), sorted(self.veldep))

    # ---------------------------------------------------------------- outputs
    def _output(self, spec):
        """``(name, kind, payload)``: a variable of the r vector (``"var"``, its name) or an expression."""
        spec = str(spec)
        model = self.model
        lam_names = [s.func.__name__ for s in model.lambdas] + [s.func.__name__ for s in model.mus]
        base = spec
        for suffix in ("_ddot", "_dot", ""):
            if suffix and spec.endswith(suffix):
                base = spec[: -len(suffix)]
            if (base if suffix else spec) in self.names:
                if suffix == "_ddot" and self.names.index(base) in set(self.noninertial):
                    raise ExportError(f"output {spec!r}: {base} has no inertia; its rate of flow is not computed")
                return (spec, "var", spec)
        if spec in lam_names:
            return (spec, "var", spec)
        signal = (model.metadata or {}).get("signal")
        expr = signal(spec) if callable(signal) else None   # a bond graph's e(X), f(X), q(X), p(X)
        if expr is not None:
            expr = internalize(model, sp.sympify(expr))
        elif len(spec) > 3 and spec[1] == "(" and spec.endswith(")") and spec[0].lower() in "vif":
            expr = self._element_series(spec[0].lower(), spec[2:-1])
        else:
            entry = joint_table(model).get(spec)
            if entry is None or spec.endswith("[all]"):
                raise ExportError(f"unknown output {spec!r}: give v(element or node), i(element), a coordinate "
                                  f"({', '.join(self.names[:6])}{', ...' if len(self.names) > 6 else ''}), its "
                                  "_dot or _ddot, a planar joint or a multiplier")
            expr = internalize(model, sp.sympify(entry[2]))
        return (spec, "expr", expr)

    def _element_series(self, kind, name):
        md = self.model.metadata or {}
        elements = md.get("elements", {})
        if name in elements:
            el = elements[name]["element"]
            which = "across" if kind == "v" else "through"
            flow, effort = port_efforts(self.model, name, 0)
            port_kind = elements[name]["kinds"][0]
            expr = flow if (which == "through") == (port_kind == "through") else effort
            sign = getattr(el, "through_report_signs", el.report_signs)[0] if which == "through" else el.report_signs[0]
            return sign * expr
        if kind == "v":
            for paths in md.get("node_paths", {}).values():
                if name in paths:
                    out = sp.S.Zero
                    for key, sign in paths[name]:
                        el, k = md["port_of"][key]
                        flow, effort = port_efforts(self.model, el, k)
                        across = flow if elements[el]["kinds"][k] == "across" else effort
                        out -= sign * across
                    return out
        raise ExportError(f"no element or node named {name!r} in this model")

    def _check_inputs_not_differentiated(self):
        eq = self.eq
        inputs = set(eq.inputs)
        if not inputs:
            return
        exprs = list(eq.h) + list(eq.Phi_t) + list(eq.gamma_phi) + list(eq.a0) + list(eq.gamma_psi) + self.Phi2_t \
            + self.gamma2 + [o[2] for o in self.outputs if o[1] == "expr"]
        to_time = {s: fn for s, fn in eq.to_time.items() if s in inputs} if hasattr(eq, "to_time") else {}
        for e in exprs:
            e = sp.sympify(e)
            if e.atoms(sp.Derivative) or (to_time and e.xreplace(to_time).atoms(sp.Derivative)):
                raise ExportError("an input enters this formulation's equations through its time derivative (a "
                                  "voltage source in node fluxes, a current source in charges), which an FMU input "
                                  "cannot give")

    # ---------------------------------------------------------------- C
    def _ext(self, expr, where):
        """An expression over ``t, q[i], f[i], a[i], lam[k], mu[k], p[k], u[k]``."""
        eq = self.eq
        sub = dict(self.prog.sub)
        base = {nm: sp.IndexedBase(nm, shape=(max(size, 1),))
                for nm, size in (("a", self.n), ("lam", self.m1), ("mu", self.m2))}
        for i, s in enumerate(eq.a):
            sub[s] = base["a"][i]
        for k, s in enumerate(eq.lam):
            sub[s] = base["lam"][k]
        for k, s in enumerate(eq.mu):
            sub[s] = base["mu"][k]
        e = sp.sympify(expr).xreplace(sub)
        # a value that reaches only outputs (a source in series with the output's path, absent from the
        # equations of this formulation) is no parameter of the model: its value is written in
        given = {sp.Symbol(str(k)): v for k, v in self.model.parameters.items()}
        e = e.xreplace({s: sp.Float(float(given[s])) for s in e.free_symbols if s in given and s not in sub})
        stray = {s for s in e.free_symbols if not isinstance(s, sp.Indexed)} - {T} \
            - {a.base.label for a in e.atoms(sp.Indexed)}
        if stray or e.atoms(sp.Derivative):
            raise ExportError(f"output {where} contains {sorted(map(str, stray)) or 'a derivative'}, which the FMU "
                              "cannot compute")
        for idx in e.atoms(sp.Indexed):
            if idx.base.label.name == "a" and int(idx.indices[0]) in set(self.noninertial):
                raise ExportError(f"output {where} needs the rate of a flow without inertia, which is not computed")
        return e

    def c_sources(self, ident, kind, t0, tolerance):
        """``{file name: text}`` of the model's C sources (the runtime and headers apart)."""
        prog, n = self.prog, self.n
        code = c_code(prog, ident, ident, "nd_")
        ind = lambda e: prog._indexed(e, "FMU functions")  # noqa: E731
        extra = [
            Function("h_f", "dh/df (n x n)", (n, n), sorted((k, ind(v)) for k, v in self.h_f.items())),
            Function("phi2", "hidden position constraints", (self.mp,), [((i,), ind(e)) for i, e in
                                                                         enumerate(self.phi2) if e != 0]),
            Function("Phi2_q", "their Jacobian", (self.mp, n), sorted((k, ind(v)) for k, v in self.Phi2_q.items())),
            Function("Phi2_t", "their time derivative", (self.mp,), [((i,), ind(e)) for i, e in enumerate(self.Phi2_t)
                                                                     if e != 0]),
            Function("gamma2", "their acceleration term", (self.mp,), [((i,), ind(e)) for i, e in
                                                                       enumerate(self.gamma2) if e != 0]),
            Function("gamma_f", "d[gamma_phi; gamma2; gamma_psi]/df", (self.m1 + self.mp + self.m2, n),
                     sorted((k, ind(v)) for k, v in self.gamma_f.items())),
        ]
        printer = _Printer()
        src = ['#include "netdyn_model.h"', "#include <math.h>"]
        for fn in extra:
            src += _function("nd_", fn, printer)
        outs = [(i, o) for i, o in enumerate(o for o in self.outputs if o[1] == "expr")]
        src += _outputs_function([self._ext(o[2], o[0]) for _, o in outs], printer)
        constants = sorted(set(re.findall(r"\bM_[0-9A-Z_]+\b", "\n".join(src))))
        src[2:2] = [f"#ifndef {k}\n#define {k} {_CONSTANTS[k]!r}\n#endif" for k in constants if k in _CONSTANTS]
        layout = self.layout
        fixed, families = corner_schedule(self._time_expressions(), t0)
        h = ["/* This model's tables for the netdyn FMU runtime (generated). */", "#ifndef NETDYN_MODEL_H",
             "#define NETDYN_MODEL_H", f'#include "{ident}.h"',
             f"#define NDF_N {n}", f"#define NDF_NP {len(prog.parameters)}", f"#define NDF_NU {len(prog.inputs)}",
             f"#define NDF_M1 {self.m1}", f"#define NDF_M2 {self.m2}", f"#define NDF_MP {self.mp}",
             f"#define NDF_NI {len(self.inertial)}", f"#define NDF_NN {len(self.noninertial)}",
             f"#define NDF_NS {len(self.posstate)}", f"#define NDF_NJ {len(self.velstate)}",
             f"#define NDF_NK {self.nk}", f"#define NDF_NO {len(outs)}", f"#define NDF_NR {layout['NR']}",
             *(f"#define NDF_{k} {v}" for k, v in layout.items() if k != "NR"),
             f"#define NDF_NFIX {len(fixed)}", f"#define NDF_NPER {len(families)}",
             f"#define NDF_ME {int(kind in ('me', 'both'))}",
             f"#define NDF_CS {int(kind in ('cs', 'both'))}", f"#define NDF_RTOL {float(tolerance)!r}",
             f"#define NDF_T0 {float(t0)!r}", f"#define NDF_AFFINE {int(self.affine)}",
             f"#define NDF_DYNAMIC {int(self.dynamic)}",
             "extern const char ndf_guid[];",
             "extern const int ndf_inertial[], ndf_noninertial[], ndf_dynrow[], ndf_posdep0[], ndf_veldep0[];",
             "extern const double ndf_start[], ndf_ev_fixed[], ndf_ev_offset[], ndf_ev_period[];"]
        sig = "double t, const double *q, const double *f, const double *p, const double *u, double *out"
        for fn in extra:
            h.append(f"void nd_{fn.name}({sig});")
        h += ["void nd_outputs(double t, const double *q, const double *f, const double *a, const double *lam,",
              "                const double *mu, const double *p, const double *u, double *out);", "#endif", ""]
        self._tables = (fixed, families)
        return {f"{ident}.h": code.header, f"{ident}.c": code.source, "netdyn_model.h": "\n".join(h),
                "netdyn_model.c": "\n".join(src) + "\n"}

    def c_tables(self, guid):
        """``netdyn_tables.c``: the GUID, the partition, the start values and the time events."""
        fixed, families = self._tables
        arr = lambda v: "{" + ", ".join(str(int(x)) for x in v) + "}" if len(v) else "{0}"  # noqa: E731
        darr = lambda v: "{" + ", ".join(repr(float(x)) for x in v) + "}" if len(v) else "{0.0}"  # noqa: E731
        return "\n".join([
            "/* This model's tables for the netdyn FMU runtime (generated). */", '#include "netdyn_model.h"', "",
            f'const char ndf_guid[] = "{guid}";',
            f"const int ndf_inertial[] = {arr(self.inertial)};", f"const int ndf_noninertial[] = {arr(self.noninertial)};",
            f"const int ndf_dynrow[] = {arr(self.dynrows)};", f"const int ndf_posdep0[] = {arr(self.posdep)};",
            f"const int ndf_veldep0[] = {arr(self.veldep)};",
            f"const double ndf_start[] = {darr(self.start_vector())};", f"const double ndf_ev_fixed[] = {darr(fixed)};",
            f"const double ndf_ev_offset[] = {darr([o for o, _ in families])};",
            f"const double ndf_ev_period[] = {darr([p for _, p in families])};", ""])

    def _time_expressions(self):
        eq = self.eq
        return list(eq.h) + list(eq.phi) + list(eq.Phi_t) + list(eq.a0) + list(eq.gamma_psi) + self.phi2 \
            + [o[2] for o in self.outputs if o[1] == "expr"]

    @property
    def layout(self):
        n, np_, nu = self.n, len(self.prog.parameters), len(self.prog.inputs)
        P0, U0, Q0 = 0, np_, np_ + nu
        F0, A0 = Q0 + n, Q0 + 2 * n
        L0 = A0 + n
        O0 = L0 + self.m1 + self.m2
        return {"P0": P0, "U0": U0, "Q0": Q0, "F0": F0, "A0": A0, "L0": L0, "O0": O0,
                "NR": O0 + sum(1 for o in self.outputs if o[1] == "expr")}

    def start_vector(self):
        L = self.layout
        r = np.zeros(L["NR"])
        r[L["P0"]:L["U0"]] = [self.params[s] for s in self.prog.parameters]
        r[L["U0"]:L["Q0"]] = self.input_starts
        r[L["Q0"]:L["F0"]] = self.q
        r[L["F0"]:L["A0"]] = self.f
        return r

    # ---------------------------------------------------------------- the FMU
    def write(self, tmp, path, ident, title, kind, cc, header_dir, t0, stop_time, tolerance):
        srcdir = os.path.join(tmp, "sources")
        os.makedirs(srcdir)
        files = self.c_sources(ident, kind, t0, tolerance)
        with open(_RUNTIME) as fh:
            files["fmu_runtime.c"] = fh.read()
        for nm, text in files.items():
            with open(os.path.join(srcdir, nm), "w") as fh:
                fh.write(text)
        for hdr in HEADERS:
            shutil.copy(os.path.join(header_dir, hdr), os.path.join(srcdir, hdr))
        objdir = os.path.join(tmp, "obj")
        os.makedirs(objdir)
        warnings = []
        objects = [self._compile(cc, os.path.join(srcdir, nm), objdir, srcdir, warnings)
                   for nm in (f"{ident}.c", "netdyn_model.c", "fmu_runtime.c")]
        n = self.n
        samples = (ctypes.c_double * (201 * (1 + 2 * n)))() if stop_time is not None and stop_time > t0 else None
        for attempt in range(2):
            guid, so = self._link(cc, tmp, srcdir, objdir, objects, ident, files, attempt, warnings)
            lib = ctypes.CDLL(so)
            lib.netdyn_selfcheck.restype = ctypes.c_int
            lib.netdyn_selfcheck.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.POINTER(ctypes.c_double),
                                             ctypes.c_double, ctypes.POINTER(ctypes.c_double), ctypes.c_int]
            msg = ctypes.create_string_buffer(1024)
            nx = len(self.posstate) + len(self.velstate)
            states = (ctypes.c_double * max(nx, 1))()
            count = lib.netdyn_selfcheck(msg, 1024, states, float(stop_time if stop_time is not None else t0),
                                         samples if attempt == 0 else None, 201)
            if count < 0:
                raise _Refused(msg.value.decode(errors="replace").strip("; ") or "the FMU's start failed")
            if attempt or samples is None or count == 0 or self.states_given or not (self.posdep or self.veldep):
                break
            rows = np.ctypeslib.as_array(samples)[: count * (1 + 2 * n)].reshape(count, 1 + 2 * n)
            if not self.choose_partition(np.vstack([np.r_[t0, self.q, self.f], rows])):
                break
        files["netdyn_tables.c"] = self.c_tables(guid)
        with open(os.path.join(srcdir, "netdyn_tables.c"), "w") as fh:
            fh.write(files["netdyn_tables.c"])
        xml = self.model_description(ident, title, guid, kind, t0, stop_time, tolerance, os.path.basename(cc))
        with open(os.path.join(tmp, "modelDescription.xml"), "w", encoding="utf-8") as fh:
            fh.write(xml)
        try:
            archive = zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED)
        except OSError as exc:
            raise ExportError(f"FMU {path!r}: cannot write it ({exc.strerror or exc})") from None
        with archive as zf:
            zf.write(os.path.join(tmp, "modelDescription.xml"), "modelDescription.xml")
            for nm in sorted(os.listdir(srcdir)):
                zf.write(os.path.join(srcdir, nm), f"sources/{nm}")
            zf.write(so, f"binaries/linux64/{ident}.so")
        names = self.names
        return FMU(os.fspath(path), ident, kind, self.form,
                   [names[j] for j in self.posstate] + [names[j] + "_dot" for j in self.velstate],
                   [names[j] for j in self.posdep], [(k, self.params[k]) for k in self.prog.parameters
                                                      if k in self.exposed],
                   list(zip(self.input_names, self.input_starts)), [o[0] for o in self.outputs],
                   os.path.basename(cc), "\n".join(w for w in warnings if w), dynamic_states=self.dynamic)

    @staticmethod
    def _compile(cc, source, objdir, srcdir, warnings):
        obj = os.path.join(objdir, os.path.basename(source)[:-2] + ".o")
        flags = [f for f in CFLAGS if f != "-shared"]
        proc = subprocess.run([cc, *flags, "-c", "-I", srcdir, "-o", obj, source], capture_output=True, text=True)
        if proc.returncode != 0:
            raise ExportError(f"{os.path.basename(cc)} failed on {os.path.basename(source)}:\n{proc.stderr[-3000:]}")
        warnings.append(proc.stderr.strip())
        return obj

    def _link(self, cc, tmp, srcdir, objdir, objects, ident, files, attempt, warnings):
        """The tables (GUID from every source and this partition) compiled and linked into the binary."""
        digest = hashlib.sha256("".join(files[k] for k in sorted(files)).encode()
                                + self.c_tables("").encode()).hexdigest()
        guid = "{" + str(uuid.uuid5(uuid.NAMESPACE_URL, "netdyn:" + digest)) + "}"
        with open(os.path.join(srcdir, "netdyn_tables.c"), "w") as fh:
            fh.write(self.c_tables(guid))
        tables = self._compile(cc, os.path.join(srcdir, "netdyn_tables.c"), objdir, srcdir, warnings)
        bindir = os.path.join(tmp, f"binaries{attempt}", "linux64")
        os.makedirs(bindir)
        so = os.path.join(bindir, ident + ".so")
        proc = subprocess.run([cc, "-shared", "-o", so, *objects, tables, "-lm"], capture_output=True, text=True)
        if proc.returncode != 0:
            raise ExportError(f"{os.path.basename(cc)} could not link the FMU's binary:\n{proc.stderr[-3000:]}")
        return guid, so

    def _unit(self, spec):
        what, unit = quantity(self.model, spec)
        unit = _UNIT_NAMES.get(unit, unit)
        return unit if unit in _UNITS else None

    def _parameter_unit(self, pname):
        net = (self.model.metadata or {}).get("network")
        if net is None:
            return None
        for group in ("elements", "bodies"):
            for ename, el in (getattr(net, group, None) or {}).items():
                for key in (getattr(el, "values", None) or {}):
                    if pname in (ename, f"{ename}_{key}"):
                        return _PARAMETER_UNITS.get(type(el).__name__, {}).get(key)
        return None

    def model_description(self, ident, title, guid, kind, t0, stop_time, tolerance, cc):
        L, names, n = self.layout, self.names, self.n
        out_specs = {o[0] for o in self.outputs}
        variables = []  # (name, vr, attrs dict, real attrs dict, description)

        def add(name, vr, causality, variability="continuous", initial=None, start=None, unit=None, description=None,
                derivative=None):
            attrs = {"name": name, "valueReference": str(vr), "causality": causality, "variability": variability}
            if description:
                attrs["description"] = description
            if initial:
                attrs["initial"] = initial
            real = {}
            if start is not None:
                real["start"] = repr(float(start))
            if unit:
                real["unit"] = unit
            if derivative is not None:
                real["derivative"] = str(derivative)
            variables.append((attrs, real))
            return len(variables)

        for k, pname in enumerate(self.prog.parameters):
            if pname in self.exposed:
                add(pname, L["P0"] + k, "parameter", "tunable", start=self.params[pname],
                    unit=self._parameter_unit(pname))
        for k, iname in enumerate(self.input_names):
            add(iname, L["U0"] + k, "input", start=self.input_starts[k])
        index = {}
        states_q, states_f = set(self.posstate), set(self.velstate)
        named = not self.dynamic   # the states are these variables (not the abstract state_k)
        for j in range(n):
            nm = names[j]
            state = j in states_q
            index[("q", j)] = add(nm, L["Q0"] + j, "output" if nm in out_specs else "local",
                                  initial="exact" if state else "calculated",
                                  start=self.q[j] if state else None, unit=self._unit(nm),
                                  description=("state" if named else "state at the start") if state
                                  else "dependent coordinate")
        for j in range(n):
            nm = names[j] + "_dot"
            state = j in states_f
            index[("f", j)] = add(nm, L["F0"] + j, "output" if nm in out_specs else "local",
                                  initial="exact" if state else "calculated", start=self.f[j] if state else None,
                                  unit=self._unit(nm), derivative=index[("q", j)] if named and j in states_q else None,
                                  description=("state" if named else "state at the start") if state else None)
        for j in self.inertial:
            nm = names[j] + "_ddot"
            index[("a", j)] = add(nm, L["A0"] + j, "output" if nm in out_specs else "local", initial="calculated",
                                  unit=self._unit(nm), derivative=index[("f", j)] if named and j in states_f else None)
        mults = [s.func.__name__ for s in self.model.lambdas] + [s.func.__name__ for s in self.model.mus]
        for k, nm in enumerate(mults):
            index[("m", k)] = add(nm, L["L0"] + k, "output" if nm in out_specs else "local", initial="calculated")
        k = 0
        for spec, what, _ in self.outputs:
            if what == "expr":
                index[("o", spec)] = add(spec, L["O0"] + k, "output", initial="calculated", unit=self._unit(spec))
                k += 1
        if self.dynamic:   # abstract states after the r vector: state_k, then der(state_k)
            nx = len(self.posstate) + len(self.velstate)
            prefix = "state_"
            while any(nm.startswith(prefix) for nm in names):
                prefix = "_" + prefix
            first = [names[j] for j in self.posstate] + [names[j] + "_dot" for j in self.velstate]
            for k in range(nx):
                index[("x", k)] = add(f"{prefix}{k + 1}", L["NR"] + k, "local", initial="calculated",
                                      description=f"state {k + 1} of the partition in use (at the start: {first[k]}); "
                                      "re-selected at step events")
            for k in range(nx):
                index[("dx", k)] = add(f"der({prefix}{k + 1})", L["NR"] + nx + k, "local", initial="calculated",
                                       derivative=index[("x", k)])
            derivs = [index[("dx", k)] for k in range(nx)]
        else:
            derivs = [index[("f", j)] for j in self.posstate] + [index[("a", j)] for j in self.velstate]
        outputs = sorted(i for i, (a, _) in enumerate(variables, 1) if a["causality"] == "output")
        initial = sorted({i for i in outputs if variables[i - 1][0].get("initial") == "calculated"}
                         | {i for i in derivs if variables[i - 1][0].get("initial") == "calculated"}
                         | {index[("x", k)] for k in range(len(derivs)) if self.dynamic})
        used_units = sorted({r["unit"] for _, r in variables if "unit" in r})
        states = [names[j] for j in self.posstate] + [names[j] + "_dot" for j in self.velstate]
        desc = (f"netdyn export of {title!s}; formulation {self.form or 'default'}; states: {', '.join(states) or 'none'}"
                + (f"; dependent coordinates (Newton on the constraints): {', '.join(names[j] for j in self.posdep)}"
                   if self.posdep else "")
                + (f"; flows without inertia: {', '.join(names[j] + '_dot' for j in self.noninertial)}"
                   if self.noninertial else ""))
        now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        from netdyn import __version__
        src_files = "\n".join(f'      <File name="{nm}"/>' for nm in (f"{ident}.c", "netdyn_model.c", "netdyn_tables.c",
                                                                         "fmu_runtime.c"))
        x = ['<?xml version="1.0" encoding="UTF-8"?>',
             f'<fmiModelDescription fmiVersion="2.0" modelName={quoteattr(str(title))} guid="{guid}"',
             f'  description={quoteattr(desc)}', f'  generationTool="netdyn {__version__} ({cc})"',
             f'  generationDateAndTime="{now}" variableNamingConvention="flat" numberOfEventIndicators="0">']
        if kind in ("me", "both"):
            x += [f'  <ModelExchange modelIdentifier="{ident}" canNotUseMemoryManagementFunctions="false"'
                  ' canGetAndSetFMUstate="true" canSerializeFMUstate="true">',
                  "    <SourceFiles>", src_files, "    </SourceFiles>", "  </ModelExchange>"]
        if kind in ("cs", "both"):
            x += [f'  <CoSimulation modelIdentifier="{ident}" canHandleVariableCommunicationStepSize="true"'
                  ' canNotUseMemoryManagementFunctions="false" canGetAndSetFMUstate="true"'
                  ' canSerializeFMUstate="true">',
                  "    <SourceFiles>", src_files, "    </SourceFiles>", "  </CoSimulation>"]
        if used_units:
            x.append("  <UnitDefinitions>")
            for u in used_units:
                exps = dict(zip(("kg", "m", "s", "A", "rad"), _UNITS[u]))
                base = " ".join(f'{k}="{v}"' for k, v in exps.items() if v)
                x.append(f'    <Unit name="{u}"><BaseUnit {base}/></Unit>')
            x.append("  </UnitDefinitions>")
        x += ["  <LogCategories>", '    <Category name="logStatusWarning"/>', '    <Category name="logStatusError"/>',
              '    <Category name="logAll"/>', "  </LogCategories>"]
        exp = f'startTime="{float(t0)!r}"' + (f' stopTime="{float(stop_time)!r}"' if stop_time is not None else "") \
            + f' tolerance="{float(tolerance)!r}"'
        x += [f"  <DefaultExperiment {exp}/>", "  <ModelVariables>"]
        for attrs, real in variables:
            a = " ".join(f"{k}={quoteattr(v)}" for k, v in attrs.items())
            r = " ".join(f'{k}="{v}"' for k, v in real.items())
            x.append(f"    <ScalarVariable {a}><Real{(' ' + r) if r else ''}/></ScalarVariable>")
        x += ["  </ModelVariables>", "  <ModelStructure>"]
        for tag, items in (("Outputs", outputs), ("Derivatives", derivs), ("InitialUnknowns", initial)):
            if items:
                x.append(f"    <{tag}>")
                x += [f'      <Unknown index="{i}"/>' for i in items]
                x.append(f"    </{tag}>")
        x += ["  </ModelStructure>", "</fmiModelDescription>", ""]
        return "\n".join(x)


def _outputs_function(exprs, printer):
    """``nd_outputs``: the expression outputs over ``t, q, f, a, lam, mu, p, u``."""
    args = ("t", "q", "f", "a", "lam", "mu", "p", "u")
    sig = ("double t, const double *q, const double *f, const double *a, const double *lam, const double *mu, "
           "const double *p, const double *u, double *out")
    body = []
    reps, outs = sp.cse(exprs, symbols=sp.numbered_symbols("cse")) if exprs else ([], [])
    for sym, e in reps:
        body.append(f"    const {'int' if _is_boolean(e) else 'double'} {sym} = {printer.doprint(e)};")
    used = set()
    for e in [e for _, e in reps] + list(outs):
        used |= {x.base.label.name for x in e.atoms(sp.Indexed)}
        if T in e.free_symbols:
            used.add("t")
    unused = [a for a in args if a not in used] + ([] if exprs else ["out"])
    if unused:
        body.append("    " + " ".join(f"(void){a};" for a in unused))
    for i, e in enumerate(outs):
        body.append(f"    out[{i}] = {printer.doprint(e)};")
    return ["", f"void nd_outputs({sig})", "{", *body, "}"]


__all__ = ["save_fmu", "can_export", "FMU", "pivot_columns"]
