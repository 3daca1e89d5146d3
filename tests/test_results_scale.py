"""Reading results costs O(outputs), not O(network), on every solution class (issue 26, part 1).

Operation counts, not timings: every public function of :mod:`netdyn.graph.topology` and the networkx
traversals are counted, and so are the walks over a network's element tables, while every node voltage
and every element current and voltage of an RC ladder is read. The counts are the same at N = 50 and
N = 400 (the index of a solution is built once, on the first read) although the reads grow eightfold.
The values are the old path's (``tree_paths`` per read, the effort searched over every element: computed
here with those functions) bit for bit, and a closed form's; ``to_pandas`` has a column per series with
its unit.
"""
import collections
import inspect
import sys

import networkx as nx
import numpy as np
import pytest
import sympy as sp

import netdyn
from netdyn.components import electrical as el
from netdyn.graph import topology
from netdyn.numerics.circuit.stamp import port_effort
from netdyn.numerics.functions.energy import port_efforts

TRAVERSALS = ("single_source_shortest_path", "shortest_path", "bfs_edges", "bfs_tree", "dfs_edges", "has_path",
              "connected_components", "node_connected_component", "all_simple_paths")


def ladder(N, R=1.0, C=1.0, load=None, source=1.0):
    """N sections of series R and shunt C from a source at n0, optionally a load resistor at the far end."""
    net = netdyn.Network(f"ladder_{N}")
    net.add(el.VoltageSource("V1", "n0", "0", source))
    for k in range(1, N + 1):
        net.add(el.Resistor(f"R{k}", f"n{k - 1}", f"n{k}", R), el.Capacitor(f"C{k}", f"n{k}", "0", C))
    if load is not None:
        net.add(el.Resistor("RL", f"n{N}", "0", load))
    return net


class CountingDict(dict):
    """A dict that counts every walk over it (iteration, keys, values, items); lookups are free."""

    def __init__(self, data, counts, label):
        super().__init__(data)
        self._counts, self._label = counts, label

    def _walk(self):
        self._counts[self._label] += 1

    def __iter__(self):
        self._walk()
        return super().__iter__()

    def keys(self):
        self._walk()
        return super().keys()

    def values(self):
        self._walk()
        return super().values()

    def items(self):
        self._walk()
        return super().items()


def count_walks(monkeypatch):
    """Count calls of every topology function and networkx traversal from now on."""
    counts = collections.Counter()

    def counted(fn, label):
        def wrapper(*args, **kwargs):
            counts[label] += 1
            return fn(*args, **kwargs)
        return wrapper

    for name, fn in inspect.getmembers(topology, inspect.isfunction):
        if fn.__module__ == topology.__name__:
            monkeypatch.setattr(topology, name, counted(fn, f"topology.{name}"))
    for name in TRAVERSALS:
        monkeypatch.setattr(nx, name, counted(getattr(nx, name), f"nx.{name}"))
    return counts


def quantities_of(net):
    """The node and element names of a network (listed before any counting starts)."""
    return [n for n in net.nodes if n != "0"], list(net.elements)


def read_everything(sol, names, element_voltages=True):
    """Every node voltage and every element current (and voltage): the reads whose cost is at issue."""
    nodes, elements = names
    out = {}
    for node in nodes:
        out[f"v({node})"] = sol.voltage(node)
    for name in elements:
        out[f"i({name})"] = sol.current(name)
        if element_voltages:
            out[f"v({name})"] = sol.voltage(name)
    return out


def walks_while_reading(monkeypatch, N, method, element_voltages=True):
    net = ladder(N)
    sol = netdyn.simulate(net, (0.0, 2.0), t_eval=np.linspace(0.0, 2.0, 21), method=method)
    assert sol.method == method
    names = quantities_of(net)
    counts = count_walks(monkeypatch)
    if hasattr(sol, "linear"):  # the numeric paths read the network and the stamp
        sol.net.elements = CountingDict(sol.net.elements, counts, "net.elements")
        sol.linear.ports = CountingDict(sol.linear.ports, counts, "stamp ports")
    else:
        md = sol.model.metadata
        md["elements"] = CountingDict(md["elements"], counts, "model elements")
    values = read_everything(sol, names, element_voltages)
    again = read_everything(sol, names, element_voltages)
    assert all(np.array_equal(values[k], again[k]) for k in values)
    return counts, len(values), sol, values


@pytest.mark.parametrize("method", ["linear", "ida"])
def test_reading_every_quantity_walks_the_network_a_constant_number_of_times(monkeypatch, method):
    """Counts at N = 50 and N = 400 are equal and small: the index's one tree walk per domain (numeric
    path; the symbolic path's paths were made with its model) and its one pass over each element table."""
    found = {}
    for N in (50, 400):
        with monkeypatch.context() as mp:
            counts, reads, _, _ = walks_while_reading(mp, N, method, element_voltages=(method == "linear"))
        found[N] = dict(counts)
        assert reads >= 2 * N
        assert sum(counts.values()) <= 8, counts
    assert found[50] == found[400], found
    if method == "linear":
        assert found[400].get("topology.tree_paths") == 1  # one electrical domain, one walk, whatever is read


def test_a_circuit_path_solution_reads_in_constant_walks_too(monkeypatch):
    """The circuit path (a diode at the head of the ladder): its ports on the stamp, the diode's from the
    symbolic model built once; the walks do not grow with the reads."""
    from netdyn.components.diode import Diode
    found = {}
    for N in (50, 400):
        net = netdyn.Network(f"diode_ladder_{N}")
        net.add(el.VoltageSource("V1", "in", "0", 1.0), Diode("D1", "in", "n0"))
        for k in range(1, N + 1):
            net.add(el.Resistor(f"R{k}", f"n{k - 1}", f"n{k}", 1e3), el.Capacitor(f"C{k}", f"n{k}", "0", 1e-9))
        sol = netdyn.simulate(net, (0.0, 1e-6), t_eval=np.linspace(0.0, 1e-6, 5))
        assert sol.method == "circuit"
        sol.voltage("in"), sol.current("D1")  # the index; the diode's port from the symbolic model, built once
        names = quantities_of(net)
        with monkeypatch.context() as mp:
            counts = count_walks(mp)
            sol.net.elements = CountingDict(sol.net.elements, counts, "net.elements")
            sol.linear.ports = CountingDict(sol.linear.ports, counts, "stamp ports")
            read_everything(sol, names)
        found[N] = dict(counts)
    assert found[50] == found[400] and sum(found[400].values()) == 0, found


def old_linear_across(sol, node):
    """The 0.3.0 reading of a node voltage on the linear path: a tree walk per call, the effort of each port
    searched over every element of the stamp."""
    from netdyn.components.base import port_key
    net, lin = sol.net, sol.linear
    port_of = {port_key(e, k): (nm, k) for nm, e in net.elements.items() for k in range(len(e.ports))}
    out = np.zeros_like(sol.t, dtype=float)
    for key, sign in topology.tree_paths(net.domain_graph("electrical"), "0")[node]:
        name, k = port_of[key]
        out -= sign * port_effort(lin, name, k, sol.q, sol.f, sol.acc, sol.mu, sol._inputs_at_t())
    return out


def old_evaluate(sol, expr):
    """The 0.3.0 ``Solution.evaluate``: one function of every internal symbol, called at each output time."""
    eq, cm = sol.compiled.eq, sol.compiled
    fn = sp.lambdify([netdyn.t, eq.q, eq.f, eq.a, eq.lam, eq.mu, cm.parameters, cm.inputs], expr, modules="numpy",
                     cse=True)
    return np.array([fn(tt, sol.q[:, k], sol.f[:, k], sol.acc[:, k], sol.lam[:, k], sol.mu[:, k], sol.p.vector,
                        sol.p.inputs(tt)) for k, tt in enumerate(sol.t)], dtype=float)


def old_symbolic_across(sol, node):
    md = sol.model.metadata
    out = np.zeros_like(sol.t, dtype=float)
    for key, sign in md["node_paths"]["electrical"][node]:
        name, k = md["port_of"][key]
        _, effort = port_efforts(sol.model, name, k)  # the search over every element
        out -= sign * old_evaluate(sol, sol._internal(effort))
    return out


def test_the_values_are_the_old_paths_bit_for_bit():
    net = ladder(12, R=1e3, C=1e-9)
    lin = netdyn.simulate(net, (0.0, 1e-5), t_eval=np.linspace(0.0, 1e-5, 31), method="linear")
    sym = netdyn.simulate(net, (0.0, 1e-5), t_eval=np.linspace(0.0, 1e-5, 31), method="ida")
    for node in ("n0", "n1", "n7", "n12"):
        assert np.array_equal(lin.voltage(node), old_linear_across(lin, node))
        assert np.array_equal(sym.voltage(node), old_symbolic_across(sym, node))
    for name in ("R1", "R12", "C5"):
        flow, effort = port_efforts(sym.model, name, 0)
        el_ = net.elements[name]
        assert np.array_equal(sym.current(name), el_.report_signs[0] * old_evaluate(sym, sym._internal(flow)))
        assert np.array_equal(sym.voltage(name), el_.report_signs[0] * old_evaluate(sym, sym._internal(effort)))
        assert np.array_equal(lin.current(name), el_.report_signs[0] * lin.port_flow(name))


@pytest.mark.parametrize("method", ["linear", "ida"])
def test_a_loaded_ladder_settles_on_its_divider(method):
    """DC steady state of N sections with a load R_L: the series current is V / (N R + R_L) and node k sits at
    V (1 − k R / (N R + R_L)); every capacitor carries none."""
    N, R, RL = 40 if method == "ida" else 400, 1.0, 10.0
    net = ladder(N, R=R, C=1e-3 / N, load=RL)
    sol = netdyn.simulate(net, (0.0, 60.0 * N * R * 1e-3), t_eval=np.linspace(0.0, 60.0 * N * R * 1e-3, 7),
                          method=method, rtol=1e-9)
    current = 1.0 / (N * R + RL)
    for k in (1, N // 2, N):
        assert sol.voltage(f"n{k}")[-1] == pytest.approx(1.0 - k * R * current, rel=1e-6)
        assert sol.current(f"R{k}")[-1] == pytest.approx(current, rel=1e-6)
        assert abs(sol.current(f"C{k}")[-1]) < 1e-6 * current
    assert sol.current("V1")[-1] == pytest.approx(-current, rel=1e-6)  # SPICE sign: plus -> minus inside, delivering


@pytest.mark.parametrize("method", ["linear", "ida"])
def test_a_single_rc_charges_as_its_exponential(method):
    net = ladder(1, R=2.0, C=0.5)
    sol = netdyn.simulate(net, (0.0, 3.0), t_eval=np.linspace(0.0, 3.0, 13), method=method, rtol=1e-10)
    v = 1.0 - np.exp(-sol.t)  # RC = 1
    np.testing.assert_allclose(sol.voltage("n1"), v, atol=1e-7)
    np.testing.assert_allclose(sol.series("v(C1)"), v, atol=1e-7)
    np.testing.assert_allclose(sol.current("C1"), np.exp(-sol.t) / 2.0, atol=1e-7)


def test_every_solution_class_builds_its_index_once():
    from netdyn.linkages import pendulum
    net = ladder(5)
    for method in ("linear", "ida"):
        sol = netdyn.simulate(net, (0.0, 1.0), t_eval=np.linspace(0.0, 1.0, 5), method=method)
        sol.voltage("n3")
        index = sol.result_index
        sol.current("R2"), sol.series("v(n4)"), sol["q_R1"]
        assert sol.result_index is index and index.nodes["n3"][0] == "electrical"
    sol = netdyn.simulate(pendulum([1.0] * 4, [1.0] * 4), (0, 0.2), q0={"theta_J1": -1.0}, method="recursive",
                          t_eval=np.linspace(0, 0.2, 5))
    calls = collections.Counter()
    original = sol._pose_values
    sol._pose_values = lambda: calls.update(["poses"]) or original()
    for name in sol.series_names():
        sol[name]
    assert calls["poses"] == 1


def test_to_pandas_has_a_column_per_series_with_its_unit():
    pd = pytest.importorskip("pandas")
    from netdyn.components.translational import Damper, Force, Mass, Spring
    net = ladder(3)
    for method in ("linear", "ida"):
        sol = netdyn.simulate(net, (0.0, 1.0), t_eval=np.linspace(0.0, 1.0, 6), method=method)
        df = sol.to_pandas()
        assert isinstance(df, pd.DataFrame) and df.index.name == "t" and np.array_equal(df.index, sol.t)
        assert list(df.columns) == sol.series_names()
        assert {"v(n0)", "v(n3)", "i(R1)", "v(C3)", "i(V1)", "q_R1", "q_R1_dot"} <= set(df.columns)
        assert "v(0)" not in df.columns
        for column in df.columns:
            assert np.array_equal(df[column].to_numpy(), sol.series(column)), column
        units = df.attrs["units"]
        assert units["v(n2)"] == "V" and units["i(R2)"] == "A" and units["q_R1"] == "C" and units["q_R1_dot"] == "A"
        assert df.attrs["quantities"]["v(n2)"] == "voltage" and df.attrs["name"] == "ladder_3"
    mech = netdyn.Network("oscillator")
    mech.add(Mass("m", "x", m=1.0), Spring("k", "x", "0", k=4.0), Damper("c", "x", "0", c=0.5), Force("F", "x", 1.0))
    df = netdyn.simulate(mech, (0.0, 1.0), t_eval=np.linspace(0.0, 1.0, 4)).to_pandas(["v(x)", "f(k)", "x_x"])
    assert list(df.columns) == ["v(x)", "f(k)", "x_x"]
    assert df.attrs["units"] == {"v(x)": "m/s", "f(k)": "N", "x_x": "m"}


def test_to_pandas_of_a_mechanism_and_of_the_recursive_path():
    pytest.importorskip("pandas")
    from netdyn.linkages import pendulum, slider_crank
    net = slider_crank(tau=1.0)
    sol = netdyn.simulate(net.model(formulation={"planar": "relative"}), (0, 0.05), t_eval=np.linspace(0, 0.05, 3))
    df = sol.to_pandas()
    assert {"theta_O", "theta_O_dot", "x_rod", "y_rod_dot", "theta_crank"} <= set(df.columns)
    assert df.attrs["units"]["x_rod"] == "m" and df.attrs["units"]["theta_crank_dot"] == "rad/s"
    np.testing.assert_array_equal(df["x_block"], sol["x_block"])
    rec = netdyn.simulate(pendulum([1.0, 1.0], [1.0, 1.0]), (0, 0.2), q0={"theta_J1": -1.0}, method="recursive",
                          t_eval=np.linspace(0, 0.2, 3))
    df = rec.to_pandas()
    assert list(df.columns)[:4] == ["theta_J1", "theta_J2", "theta_J1_dot", "theta_J2_dot"]
    assert df.attrs["units"]["x_link2"] == "m" and df.attrs["units"]["theta_link1_dot"] == "rad/s"
    np.testing.assert_array_equal(df["y_link2"], rec["y_link2"])


def test_to_pandas_without_pandas_says_how_to_install_it(monkeypatch):
    sol = netdyn.simulate(ladder(2), (0.0, 1.0), t_eval=np.linspace(0.0, 1.0, 3))
    monkeypatch.setitem(sys.modules, "pandas", None)  # import pandas now raises ImportError
    with pytest.raises(netdyn.NetdynError, match=r"pip install netdyn\[frames\]"):
        sol.to_pandas()


def test_units_from_the_index_are_the_models():
    """The index answers ``quantity`` without the model, and the same."""
    from netdyn.components.translational import Damper, Force, Mass, Spring
    from netdyn.numerics.results.index import ResultIndex
    from netdyn.numerics.results.quantities import quantity
    net = netdyn.Network("mixed")
    net.add(Mass("m", "x", m=1.0), Spring("k", "x", "y", k=4.0), Damper("c", "y", "0", c=0.5), Force("F", "x", 1.0))
    for formulation in ("node", "loop"):
        model = net.model(formulation=formulation)
        index = ResultIndex.of_model(model)
        names = list(index.coordinates) + [f"{c}_dot" for c in index.coordinates] + index.quantity_names()
        assert [quantity(None, n, index) for n in names] == [quantity(model, n) for n in names]


def test_a_frame_shares_its_units_with_the_frames_made_from_it():
    """pandas deep-copies ``attrs`` into every derived frame: the units of a large table are shared instead,
    so reading one column does not copy a unit for every column."""
    pytest.importorskip("pandas")
    df = netdyn.simulate(ladder(50), (0.0, 1.0), t_eval=np.linspace(0.0, 1.0, 3)).to_pandas()
    column, rows = df["v(n7)"], df.iloc[:2]
    assert column.attrs["units"] is df.attrs["units"] and rows.attrs["quantities"] is df.attrs["quantities"]
    assert column.attrs["units"]["v(n7)"] == "V"
    with pytest.raises(TypeError, match="read-only"):
        df.attrs["units"]["v(n7)"] = "mV"


def test_every_node_voltage_of_an_ac_sweep_walks_the_network_once(monkeypatch):
    from netdyn.analysis.ac import ac
    found = {}
    for N in (50, 400):
        net = ladder(N, R=1e3, C=1e-9)
        with monkeypatch.context() as mp:
            counts = count_walks(mp)
            result = ac(net, [1e3, 1e5, 1e7])
        found[N] = counts["topology.tree_paths"]
        assert len(result.values) == N + 1
    assert found == {50: 1, 400: 1}
