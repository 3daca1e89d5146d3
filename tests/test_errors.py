"""Bad input gets a NetdynError that names the element or node at fault."""
import pytest
import sympy as sp

import netdyn
from netdyn.components.electrical import (Capacitor, CurrentSource, Inductor, MutualInductance, Resistor,
                                          VoltageSource)
from netdyn.components.translational import Mass, Spring
from netdyn.errors import (ElementError, InitialConditionError, ModelError, NetdynError, ParameterError,
                           TopologyError)


def net_of(*elements):
    net = netdyn.Network()
    net.add(*elements)
    return net


def test_every_error_is_a_netdyn_error():
    for cls in (ElementError, TopologyError, ParameterError, InitialConditionError, ModelError):
        assert issubclass(cls, NetdynError)


def test_a_node_only_one_element_touches_is_valid():
    """A dead end carries no current and takes its neighbour's potential (it used to be refused)."""
    net = net_of(VoltageSource("V1", "a", "0", 1), Resistor("R1", "a", "0", 1), Resistor("R2", "a", "dangle", 1))
    for form in ("branch", "loop", "node"):
        sol = netdyn.simulate(net, (0, 1), formulation=form)
        assert abs(sol.voltage("dangle") - 1).max() < 1e-12 and abs(sol.current("R2")).max() < 1e-12


def test_floating_subnetwork():
    net = net_of(VoltageSource("V1", "a", "0", 1), Resistor("R1", "a", "0", 1),
                 Resistor("R2", "x", "y", 1), Capacitor("C2", "x", "y", 1))
    with pytest.raises(TopologyError, match=r"floating sub-network.*'x', 'y'"):
        net.model()


def test_element_shorted_to_itself():
    with pytest.raises(ElementError, match=r"R1 is shorted.*'a'"):
        Resistor("R1", "a", "a", 1)


def test_loop_of_voltage_sources():
    net = net_of(VoltageSource("V1", "a", "0", 1), VoltageSource("V2", "a", "0", 2), Resistor("R1", "a", "0", 1))
    with pytest.raises(TopologyError, match=r"loop of voltage sources: .*V2.*V1|loop of voltage sources: .*V1.*V2"):
        net.model()


def test_loop_of_voltage_source_and_capacitor_is_valid():
    """A capacitor straight across a supply is charged by it at t = 0 (it used to be refused)."""
    net = net_of(VoltageSource("V1", "a", "0", 1), Capacitor("C1", "a", "0", 1), Resistor("R1", "a", "0", 1))
    for form in ("branch", "loop", "node"):
        sol = netdyn.simulate(net, (0, 1), formulation=form)
        assert abs(sol.voltage("C1") - 1).max() < 1e-12 and abs(sol.current("V1") + 1).max() < 1e-9


def test_cutset_of_current_sources():
    net = net_of(CurrentSource("I1", "0", "a", 1), CurrentSource("I2", "a", "b", 1), Resistor("R1", "b", "0", 1),
                 Resistor("R0", "b", "0", 2))
    with pytest.raises(TopologyError, match=r"I1 is in a cut-set of current sources"):
        net.model()


def test_cutset_of_current_source_and_inductor_is_valid():
    """An inductor in series with a current source carries its current (it used to be refused)."""
    net = net_of(CurrentSource("I1", "0", "a", 1), Inductor("L1", "a", "0", 1))
    for form in ("branch", "loop", "node"):
        sol = netdyn.simulate(net, (0, 1), formulation=form)
        assert abs(sol.current("L1") - 1).max() < 1e-12 and abs(sol.voltage("a")).max() < 1e-9


def test_duplicate_names():
    net = net_of(Resistor("R1", "a", "0", 1))
    with pytest.raises(ElementError, match=r"duplicate name 'R1'"):
        net.add(Resistor("R1", "a", "b", 2))


def test_symbol_without_value_at_simulation():
    R = sp.Symbol("R_load")
    net = net_of(VoltageSource("V1", "a", "0", 1), Resistor("R1", "a", "b", R), Capacitor("C1", "b", "0", 1))
    with pytest.raises(ParameterError, match=r"no value for parameter\(s\) \['R_load'\]"):
        netdyn.simulate(net, (0, 1))
    sol = netdyn.simulate(net, (0, 1), params={"R_load": 2.0})
    assert abs(sol.voltage("C1")[-1] - (1 - sp.exp(-0.5))) < 1e-7


def test_unknown_parameter():
    net = net_of(VoltageSource("V1", "a", "0", 1), Resistor("R1", "a", "b", 1), Capacitor("C1", "b", "0", 1))
    with pytest.raises(ParameterError, match=r"unknown parameter 'Rx'"):
        netdyn.simulate(net.model(symbolic=True), (0, 1), params={"Rx": 1})


@pytest.mark.parametrize("make", [lambda: Inductor("L1", "a", "b", -1e-3), lambda: Capacitor("C1", "a", "b", 0),
                                  lambda: Resistor("R1", "a", "b", -5), lambda: Mass("m", "x", -1),
                                  lambda: Spring("k", "x", "0", k=-2)])
def test_non_physical_values(make):
    with pytest.raises(ElementError, match=r"not physical"):
        make()


def test_coupling_coefficient_out_of_range():
    with pytest.raises(ElementError, match=r"K1: coupling coefficient k = 1.5"):
        MutualInductance("K1", "L1", "L2", k=1.5)


def test_mutual_inductance_naming_a_missing_inductor():
    net = net_of(VoltageSource("V1", "a", "0", 1), Inductor("L1", "a", "0", 1), MutualInductance("K1", "L1", "L9", k=0.5))
    with pytest.raises(ModelError, match=r"K1 couples 'L9'"):
        net.model()


def test_inconsistent_initial_conditions():
    x, y = netdyn.coordinates("x y")
    model = netdyn.LagrangianModel([x, y], T=(x.diff(netdyn.t)**2 + y.diff(netdyn.t)**2) / 2,
                                   constraints=[x**2 + y**2 - 1])
    with pytest.raises(InitialConditionError, match=r"phi_1"):
        netdyn.simulate(model, (0, 1), q0={"x": 0.6, "y": 0.6})
    with pytest.raises(InitialConditionError, match=r"velocity level"):
        netdyn.simulate(model, (0, 1), q0={"x": 0.6}, f0={"x": 1.0, "y": 1.0}, guess={"y": -0.8})


def test_unknown_coordinate_in_initial_conditions():
    x, = netdyn.coordinates("x,")
    model = netdyn.LagrangianModel([x], T=x.diff(netdyn.t)**2 / 2, V=x**2 / 2)
    with pytest.raises(ModelError, match=r"unknown coordinate 'z'"):
        netdyn.simulate(model, (0, 1), q0={"z": 1})


def test_node_in_two_domains():
    net = net_of(Resistor("R1", "a", "0", 1))
    with pytest.raises(ElementError, match=r"node 'a' already belongs to the electrical domain"):
        net.add(Mass("m", "a", 1.0))


def test_non_pfaffian_flow_constraint():
    x, y = netdyn.coordinates("x y")
    model = netdyn.LagrangianModel([x, y], T=(x.diff(netdyn.t)**2 + y.diff(netdyn.t)**2) / 2,
                                   flow_constraints=[x.diff(netdyn.t)**2 - y.diff(netdyn.t)])
    with pytest.raises(ModelError, match=r"not Pfaffian"):
        model.equations()


def test_structural_check_lists_every_fault_at_once():
    """Two loops of voltage sources, a cut-set of current sources and a floating sub-network: one error, a
    line each, every element and node named, so that one pass fixes them all."""
    net = net_of(VoltageSource("V1", "a", "0", 1), VoltageSource("V2", "a", "0", 2), Resistor("R1", "a", "0", 1),
                 VoltageSource("V3", "b", "0", 1), VoltageSource("V4", "b", "0", 3), Resistor("R2", "b", "0", 1),
                 CurrentSource("I1", "0", "c", 1), CurrentSource("I2", "c", "d", 1), Resistor("R3", "d", "0", 1),
                 Resistor("R4", "x", "y", 1), Capacitor("C4", "x", "y", 1))
    with pytest.raises(TopologyError) as err:
        net.model()
    faults = err.value.faults
    assert [f.split(":")[0] for f in faults] == ["loop of voltage sources", "loop of voltage sources",
                                                 "I1 is in a cut-set of current sources only",
                                                 "I2 is in a cut-set of current sources only",
                                                 "floating sub-network"]
    assert {"V1", "V2"} <= set(faults[0].replace(",", " ").replace(";", " ").split())
    assert {"V3", "V4"} <= set(faults[1].replace(",", " ").replace(";", " ").split())
    assert "['x', 'y']" in faults[4]
    text = str(err.value)
    assert text.startswith("5 structural problems; fix them all:") and all(f"  - {f}" in text for f in faults)
    with pytest.raises(TopologyError) as one:  # a single fault keeps its one-line message
        net_of(VoltageSource("V1", "a", "0", 1), VoltageSource("V2", "a", "0", 2), Resistor("R1", "a", "0", 1)).model()
    assert one.value.faults == [str(one.value)] and "\n" not in str(one.value)


def test_mechanism_checks_list_every_unknown_name_and_floating_body():
    from netdyn.components.planar import Revolute, RigidBody, Torque
    net = netdyn.Network("two faults of each kind")
    net.add(RigidBody("a", 1, 1), Revolute("O", "ground", (0, 0), "a", (0, 0)),
            Revolute("P", "a", (1, 0), "ghost", (0, 0)), Torque("T", "phantom", 1.0))
    with pytest.raises(TopologyError) as err:
        net.model()
    assert len(err.value.faults) == 2
    assert "'ghost'" in err.value.faults[0] and "'phantom'" in err.value.faults[1]
    lost = netdyn.Network("two floating bodies")
    lost.add(RigidBody("a", 1, 1), RigidBody("b", 1, 1), RigidBody("c", 1, 1), Revolute("O", "ground", (0, 0), "a", (0, 0)))
    with pytest.raises(TopologyError) as err:
        lost.model()
    assert [f.split(" is floating")[0] for f in err.value.faults] == ["body 'b'", "body 'c'"]
