"""The numeric fast path of ``simulate``: a linear network straight to sparse matrices and Radau IIA.

``simulate(net, ...)`` takes this path by itself (``method="auto"``) when
:func:`netdyn.stamp.linear_network` can stamp the network and its DAE is of
index one; ``method="linear"`` insists on it. The equations are those of
``net.model(formulation)`` (same coordinates, same multipliers), written as
the first-order DAE ``E ẏ = J y + G u(t)`` in ``y = [q, f_I, μ]``: the flows
``f_I`` of coordinates with inertia are states, the others are ``q̇`` itself
(an RC ladder in loop charges is then ``D q̇ + K q = B u``, one unknown per loop).

>>> from netdyn import Network, simulate
>>> from netdyn.components.electrical import VoltageSource, Resistor, Capacitor
>>> net = Network()
>>> _ = net.add(VoltageSource("V1", "a", "0", 1.0), Resistor("R1", "a", "b", 1.0), Capacitor("C1", "b", "0", 1.0))
>>> sol = simulate(net, (0, 1))
>>> sol.method, round(float(sol["q_R1"][-1]), 9)    # 1 - exp(-1)
('linear', 0.632120559)
"""
from __future__ import annotations

import numpy as np

from netdyn.graph.gcpause import paused_gc
from netdyn.errors import ModelError, NetdynError, SingularSystemError
from netdyn.numerics.circuit.linear import LinearRadau, linear_dae, prepared_dae
from netdyn.numerics.integrators.radau import consistent_rates
from netdyn.numerics.results.index import ResultIndex
from netdyn.numerics.results.solution import Solution
from netdyn.numerics.integrators.sensed import sensed_columns
from netdyn.numerics.circuit.spice_start import StateBeforeJump
from netdyn.numerics.circuit.stamp import LinearNetwork, NotLinear, linear_network, release_stamp
from netdyn.lagrange.sources import corners
from netdyn.numerics.functions.compiled import compile_model

__all__ = ["linear_dae", "simulate_linear", "LinearSolution", "try_linear"]

#: a pencil this close to singular (smallest over largest singular value, columns equilibrated) whose null
#: vectors run through a controlled source is a gain loop: its solution would hang on the gain's last digits.
#: The verdict is taken on the node formulation's pencil whatever formulation runs (see :func:`check_gain_loops`),
#: so every formulation refuses the same circuits: ``v = g·v + …`` is refused when ``|g − 1|`` is below about
#: 2e-7 (the node pencil's ratio is ``|g − 1| / 2`` there), which covers the gains where the charge
#: formulations' own index-one test (rank decisions at 1e-9) already fails
GAIN_LOOP_TOL = 1e-7
#: above this many unknowns the gain-loop test runs only when the formulation's own DAE is found singular
#: (two dense SVDs of the pencil: ~1 ms at 100 unknowns, ~0.1 s at 300)
GAIN_LOOP_PRECHECK = 300


def try_linear(net, formulation=None):
    """The :class:`~netdyn.stamp.LinearNetwork` of a network, or ``None`` when it has no index-1 linear form."""
    if hasattr(net, "linear_form"):   # another front end (a bond graph) writes its matrices itself
        form, _ = net.linear_form(formulation)
        if form is None:
            return None
    elif not hasattr(net, "elements") or not hasattr(net, "bodies"):
        return None
    elif any(getattr(el, "prefers_kind", None) for el in net.elements.values()):
        return None  # a semiconductor device (diode): never linear, the circuit path takes it
    release_stamp()  # the SPICE start's stamp is the circuit path's; this path makes its own
    lin = None
    checked = False
    try:
        with paused_gc():  # a large build allocates many objects and frees none: no cyclic collection
            lin = LinearNetwork(**form) if hasattr(net, "linear_form") else linear_network(net, formulation)
            checked = check_gain_loops(net, lin)
            prepared_dae(lin)  # the DAE and its solver, kept on lin for the integrator
    except NotLinear:
        return None
    except SingularSystemError:
        if lin is not None and not checked:
            refuse_gain_loop(net, lin)  # no unique solution at all: no other path would find one
        return None
    return lin


def _controlled(net):
    from netdyn.components.controlled import CCCS, CCVS, VCCS, VCVS
    elements = getattr(net, "elements", None)
    return isinstance(elements, dict) and any(isinstance(el, (VCVS, VCCS, CCCS, CCVS)) for el in elements.values())


def check_gain_loops(net, lin):
    """Refuse a gain loop of controlled sources by one verdict for every formulation; ``True`` when tested.

    The test (:func:`refuse_gain_loop`, threshold :data:`GAIN_LOOP_TOL`) is taken on the node formulation's
    pencil, whichever formulation ``lin`` is: the ratio of singular values differs between formulations by
    their coordinates (measured on ``v = g·v``: ``|g − 1|`` times 0.15 in branch charges, 0.09 in loop charges,
    0.5 in node fluxes), so one threshold on each formulation's own pencil gave three verdicts. Networks
    without controlled sources, above :data:`GAIN_LOOP_PRECHECK` unknowns or without a node form are not
    tested here (``False``).

    >>> import netdyn
    >>> from netdyn.components.electrical import VoltageSource, Resistor
    >>> from netdyn.components.controlled import VCVS
    >>> net = netdyn.Network()
    >>> _ = net.add(VoltageSource("V1", "a", "0", 1.0), Resistor("R1", "a", "b", 1e3), VCVS("E1", "b", "0", "b", "0", 1))
    >>> check_gain_loops(net, linear_network(net, "loop"))
    Traceback (most recent call last):
    ...
    netdyn.errors.SingularSystemError: E1: the gain loop of the controlled source E1 with V1, R1 leaves the circuit ...
    """
    if not _controlled(net) or lin.n + lin.m > GAIN_LOOP_PRECHECK:
        return False
    node = lin
    if any(f != "node" for d, f in lin.formulation.items() if d == "electrical"):
        try:
            node = linear_network(net, "node")
        except NetdynError:  # no node form (an element without one): the formulation's own test, on failure
            return False
    refuse_gain_loop(net, node)
    return True


def refuse_gain_loop(net, lin):
    """Raise :class:`~netdyn.errors.SingularSystemError` naming the controlled sources of a singular pencil.

    A controlled source whose gain cancels a passive path (an ``E`` driving the
    node it senses with gain 1: ``v₂ = 1·v₂``) leaves a combination of the
    unknowns free at every instant (``det(sE − J) ≡ 0``, SPICE's "singular
    matrix"); no method can integrate it. Returns quietly when the pencil is
    regular or no controlled source takes part (the caller goes on).
    """
    from netdyn.components.controlled import CCCS, CCVS, VCCS, VCVS
    from netdyn.numerics.dae.higherindex import singular_pencil
    dae, I = linear_dae(lin, reduce=False)
    found = singular_pencil(dae.E, dae.J, tol=GAIN_LOOP_TOL)
    if found is None or not isinstance(getattr(net, "elements", None), dict):  # (a bond graph's are a list)
        return
    v, w = found
    n, nI = lin.n, I.size
    big = lambda x: set(np.flatnonzero(np.abs(x) > 1e-8 * np.max(np.abs(x))).tolist())
    free_q = {i for i in big(v) if i < n} | {int(I[k - n]) for k in big(v) if n <= k < n + nI}
    rows = {int(I[k]) for k in big(w) if k < nI} | {k - nI for k in big(w) if nI <= k < nI + n}
    labels = {str(lin.flow_labels[k - n - nI]) for k in big(v) if k >= n + nI} | \
        {str(lin.flow_labels[k - n - nI]) for k in big(w) if k >= n + nI}
    involved = [name for name in net.elements
                if name in labels or any(set(combo) & (free_q | rows) for _, combo in lin.ports.get(name, ()))]
    controlled = [nm for nm in involved if isinstance(net.elements[nm], (VCVS, VCCS, CCCS, CCVS))]
    if not controlled:
        return
    others = [nm for nm in involved if nm not in controlled]
    raise SingularSystemError(
        f"{', '.join(controlled)}: the gain loop of the controlled source{'s' if len(controlled) > 1 else ''} "
        f"{', '.join(controlled)}{' with ' + ', '.join(others) if others else ''} leaves the circuit without a "
        "unique solution, or with one that hangs on the gain's last digits (det(sE − J) ≈ 0 for every s, SPICE's singular matrix: the gain cancels the path it "
        "senses); change the gain or add an element that breaks the loop")


def explain_not_linear(system, formulation=None, params=None):
    """Raise the error that says why ``method="linear"`` cannot run on ``system``."""
    if params:
        raise ModelError("method='linear' takes the element values as they are; params= needs the symbolic path")
    if hasattr(system, "linear_form"):
        form, why = system.linear_form(formulation)
        if form is None:
            raise ModelError(f"method='linear' needs every element linear with numeric values; {why}")
        consistent_rates(linear_dae(LinearNetwork(**form))[0])  # raises SingularSystemError: not of index one
        return
    if not hasattr(system, "elements"):
        raise ModelError("method='linear' needs a Network (a hand-written LagrangianModel takes the symbolic path)")
    lin = linear_network(system, formulation)  # raises NotLinear naming the element
    check_gain_loops(system, lin)
    try:
        consistent_rates(linear_dae(lin)[0])  # raises SingularSystemError: not of index one
    except SingularSystemError:
        refuse_gain_loop(system, lin)
        raise


def simulate_linear(net, t_span, q0=None, f0=None, t_eval=None, rtol=1e-8, atol=None, max_step=np.inf,
                    formulation=None, lin=None, progress=None, save=None, output=None):
    """Integrate a linear network on the numeric path; returns a :class:`LinearSolution`.

    ``progress(t)`` (optional) is called as each output interval is reached. ``save`` (names, optional)
    keeps only the rows those series need while integrating; outputs above
    :func:`~netdyn.numerics.results.store.output_limit` bytes, or any when ``output`` (an HDF5 file name)
    is given, stream to an HDF5 file (:func:`storage_for`)."""
    lin = lin or linear_network(net, formulation)
    t0, t1 = float(t_span[0]), float(t_span[1])
    t_eval = np.linspace(t0, t1, 1001) if t_eval is None else np.asarray(t_eval, dtype=float)
    if hasattr(net, "linear_start"):   # a front end's energy variables (a bond graph's p_<I>) as coordinates
        q0, f0 = net.linear_start(q0, f0)
    q0, q_given = _values(lin.names, q0, "q")
    f0, f_given = _values(lin.names, f0, "f")
    integrator = LinearRadau(lin, max_step=max_step, corners=_corners(lin.inputs, t0, t1), given=(q_given, f_given),
                             sensed=sensed_columns(lin, net))
    store = storage_for(net, lin, integrator, t_eval, save, output)
    sol = LinearSolution(net, lin, integrator.integrate(t0, t1, q0, f0, t_eval, rtol, atol, progress, store=store))
    sol.storage = store
    if save is not None:
        sol.keep_only(save)
    return sol


def storage_for(net, lin, integrator, t_eval, save=None, output=None):
    """The :class:`~netdyn.numerics.results.store.Storage` of a run, or ``None`` for the dense arrays of old.

    With ``save`` the rows kept are those the named series read (found by reading each series once on a
    recording stand-in of the solution, which also checks the names before integrating). Without it every
    row is kept, in memory up to the output limit and streamed to an HDF5 file above it, with an
    :class:`~netdyn.errors.OutputWarning` saying so.
    """
    import warnings

    from netdyn.errors import OutputWarning
    from netdyn.numerics.results.store import Storage, output_limit, temporary_path
    n, m, nI, K = lin.n, lin.m, integrator.I.size, len(t_eval)
    names = {"coordinate_names": lin.names, "multiplier_names": [f"mu_{k + 1}" for k in range(m)]}
    if save is not None:
        layout = _saved_rows(net, lin, t_eval, save)
        store = Storage(layout, None, save, names)
        if output is not None:
            store.path = str(output)
        elif store.bytes_per_time() * K > output_limit():
            store.path = temporary_path(store)
        return store
    want_acc = nI > 0 or not integrator.differential.all()  # (inductors, masses: port efforts read them)
    layout = {"q": (n, None), "f": (n, None), "mu": (m, None)}
    if want_acc:
        layout["acc"] = (n, None)
    store = Storage(layout, None, (), names)
    size = store.bytes_per_time() * K
    if output is not None:
        store.path = str(output)
        return store
    if size <= output_limit():
        return None
    store.path = temporary_path(store)
    warnings.warn(f"the outputs ({size / 1e6:.0f} MB: {n + n + m + (n if want_acc else 0)} rows × {K} times) exceed "
                  f"the output limit ({output_limit() / 1e6:.0f} MB, NETDYN_OUTPUT_LIMIT): they stream to {store.path}, "
                  "read lazily with the same accessors; pass save=[...] to keep only some quantities, or output= to "
                  "choose the file", OutputWarning, stacklevel=7)
    return store


class _Recorder:
    """A block that notes the rows read from it (and returns zeros): which rows a series needs."""

    def __init__(self, n, K):
        self.rows, self.shape, self.ndim = set(), (n, K), 2

    def __getitem__(self, i):
        self.rows.add(int(i))
        return np.zeros(self.shape[1])


def _saved_rows(net, lin, t_eval, save):
    from netdyn.numerics.results.trajectory import Trajectory
    n, m, K = lin.n, lin.m, 1
    blocks = {b: _Recorder(size, K) for b, size in (("q", n), ("f", n), ("acc", n), ("mu", m))}
    probe = Trajectory(np.asarray(t_eval[:1], dtype=float), blocks["q"], blocks["f"], blocks["acc"],
                       np.zeros((0, K)), blocks["mu"])
    stand_in = LinearSolution(net, lin, probe)
    for name in save:
        try:
            stand_in.series(stand_in.saved_key(name))
        except KeyError as err:
            raise ModelError(f"save={list(save)}: {name!r} names no quantity of this network ({err.args[0]}); "
                             "use v(node), v(element), i(element) or a coordinate name") from None
    return {b: (rec.shape[0], sorted(rec.rows)) for b, rec in blocks.items() if rec.rows}


def _corners(inputs, t0, t1):
    return np.array(corners(inputs, t0, t1))


def _values(names, given, what):
    index = {nm: i for i, nm in enumerate(names)}
    out = np.zeros(len(names))
    mask = np.zeros(len(names), dtype=bool)
    for k, v in (given or {}).items():
        key = k if isinstance(k, str) else getattr(getattr(k, "func", None), "__name__", str(k))
        if what == "f" and key.endswith("_dot") and key[:-4] in index:
            key = key[:-4]
        if key not in index:
            raise ModelError(f"unknown coordinate {key!r} in the initial {what}; the coordinates are {names}")
        out[index[key]] = float(v)
        mask[index[key]] = True
    if isinstance(given, StateBeforeJump):  # a uic deck's stored state: the start jumps from it by impulses
        mask[:] = False
    return out, mask


class LinearSolution(Solution):
    """A :class:`~netdyn.solution.Solution` of the numeric path.

    Coordinates, flows and multipliers are at hand at once; the symbolic model
    (``sol.model``), needed only for energies and element quantities, is
    assembled on first use.
    """

    def __init__(self, net, lin, trajectory):
        self.net, self.linear = net, lin
        self._model = self._compiled = self._p = None
        self._init_trajectory(trajectory, "linear")

    @property
    def model(self):
        if self._model is None:
            self._model = self.net.model(formulation=self.linear.formulation)
        return self._model

    @property
    def compiled(self):
        if self._compiled is None:
            self._compiled = compile_model(self.model)
        return self._compiled

    @property
    def p(self):
        if self._p is None:
            self._p = self.compiled.parameter_vector()
        return self._p

    def port_displacement(self, name, k=0):
        """Displacement of port ``k`` of an element (a capacitor's charge, a spring's stretch), numerically.

        Unlike ``voltage``/``current`` it needs no symbolic model (large networks).
        """
        return self._port(name, k, self.q)

    def port_flow(self, name, k=0):
        """Flow of port ``k`` of an element (current in charge coordinates, velocity in node ones)."""
        return self._port(name, k, self.f)

    def _port(self, name, k, X):
        ports = self.linear.ports.get(name)
        if ports is None:
            raise KeyError(f"no element named {name!r}")
        out = np.zeros(self.t.size)
        for i, c in ports[k][1].items():
            out += c * X[i]
        return out

    @property
    def coordinate_names(self):
        return list(self.linear.names)

    @property
    def multiplier_names(self):
        return [f"mu_{k + 1}" for k in range(self.linear.m)]

    # ------------------------------------------------------------ element and node quantities, numerically
    def _inputs_at_t(self):
        if "inputs" not in self._cache:
            from netdyn.numerics.functions.compiled import time_function
            fns = [time_function(u) for u in self.linear.inputs]
            self._cache["inputs"] = np.vstack([np.broadcast_to(np.asarray(fn(self.t), dtype=float), self.t.shape)
                                               for fn in fns]) if fns else np.zeros((0, self.t.size))
        return self._cache["inputs"]

    def _pose_names(self):
        return []  # a network of one-dimensional elements: no joints, and no symbolic model to build for a table

    def _joint_coordinate(self, name):
        return None if not getattr(self.net, "bodies", None) else super()._joint_coordinate(name)

    def _title(self):
        return getattr(self.net, "name", None)

    def _front_end_quantity(self, name, which):
        """A bond graph's element or bond (its flow or effort, from the symbolic model made on first use); a
        network's names never build that model here."""
        if isinstance(getattr(self.net, "elements", None), dict):
            return None
        return super()._front_end_quantity(name, which)

    def _front_end_state(self, name):
        return None if isinstance(getattr(self.net, "elements", None), dict) else super()._front_end_state(name)

    def _front_end_names(self):
        return [] if isinstance(getattr(self.net, "elements", None), dict) else super()._front_end_names()

    def _signal(self):
        # a network's series are v(), i() and coordinates: no symbolic model is built to ask (a bond graph's
        # front end names its own, e(X), f(X), ...)
        return super()._signal() if hasattr(self.net, "linear_form") else None

    def _make_index(self):
        """The index from the network and the stamp: no symbolic model is built for a read."""
        return ResultIndex.of_network(self.net, self.linear.names, self.multiplier_names, self.linear.ports)

    def _port_quantity(self, name, k, which):
        """Through or across variable of port ``k`` of an element from the stamped matrices (no symbolic model)."""
        if self.linear.R is not None or name in self.linear.skipped:
            # controlled sources push where their control is not (R ≠ Aᵀ): the stamp's own entries do not
            # hold those efforts, so ask the symbolic model
            return super()._port_quantity(name, k, which)
        rows = self.result_index.rows
        key = (name, k, which)
        terms = rows.get(key)
        if terms is None:
            from netdyn.components.base import THROUGH
            from netdyn.numerics.circuit.stamp import flow_terms, port_terms
            if name not in self.linear.stamps:
                raise KeyError(f"no element named {name!r}")
            kind = self.linear.stamps[name]["kinds"][k]
            if (which == "through") == (kind == THROUGH):
                terms = flow_terms(self.linear, name, k)
            else:
                terms = port_terms(self.linear, self.result_index.sharing[(name, k)])
            rows[key] = terms
        from netdyn.numerics.circuit.stamp import evaluate_port
        return evaluate_port(terms, self._stamp_block, self.t.size)

    def _stamp_block(self, block):
        if block == "q":
            return self.q
        if block == "f":
            return self.f
        if block == "u":
            return self._inputs_at_t()
        return self.mu if block == "mu" else self.acc  # (the rates computed only when a term has them)

    def through(self, name):
        """Through variable (current, force, torque) of an element, first terminal to second (an inductor's
        with the current circulating around its loop, :mod:`netdyn.numerics.circuit.loop_flux`)."""
        out = self._front_end_quantity(name, "through")
        if out is not None:
            return out
        out = self._element_quantity(name, "through")
        offsets = getattr(self, "loop_offsets", None)
        return out + offsets[name] if offsets and name in offsets else out

    current = force = torque = through

    def energy(self):
        """Stored energy ``½ fᵀM f + ½ qᵀK q`` along the trajectory (from the stamped matrices)."""
        M, K = self.linear.M, self.linear.K
        f, q = np.asarray(self.f), np.asarray(self.q)  # (rows streamed to a file are read whole here)
        E = 0.5 * np.sum(f * (M @ f), axis=0) + 0.5 * np.sum(q * (K @ q), axis=0)
        if getattr(self, "loop_offsets", None):
            from netdyn.numerics.circuit.loop_flux import stored
            E = E + stored(self)  # the flux circulating around loops of inductors
        return E
