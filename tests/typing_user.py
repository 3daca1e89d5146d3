"""A user's script against netdyn's hints: mypy must accept it (tests/test_typing.py), and running it checks at
run time that every value is what its hint says (``assert_type`` for mypy, ``isinstance`` for Python): a hint
that lies fails one or the other.

Not collected by pytest (no ``test_`` prefix); run as ``main(tmp_folder)``.
"""
from __future__ import annotations

import os
import pathlib
from typing import assert_type

import numpy as np
import numpy.typing as npt
import sympy as sp

import netdyn
from netdyn import Assembly, BondGraph, LagrangianModel, Network, Solution, StateSpace
from netdyn.components.electrical import Capacitor, Resistor, VoltageSource
from netdyn.export.c import CCode


def check(value: object, kind: type) -> None:
    assert isinstance(value, kind), f"{type(value).__name__} is not {kind.__name__}"


def circuit() -> Network:
    net = Network("rc")
    net.add(VoltageSource("V1", "in", "0", 1.0), Resistor("R1", "in", "out", 1e3))
    last = net.add(Capacitor("C1", "out", "0", 1e-6))
    check(last, Capacitor)
    return net


def main(folder: str) -> None:
    net = circuit()
    sol = netdyn.simulate(net, (0.0, 2e-3), t_eval=np.linspace(0.0, 2e-3, 5), rtol=1e-8)
    assert_type(sol, Solution)
    check(sol, Solution)
    v = sol.voltage("out")
    assert_type(v, "npt.NDArray[np.float64]")
    check(v, np.ndarray)
    check(sol.t, np.ndarray)
    check(sol.current("R1"), np.ndarray)
    check(sol.series("v(out)"), np.ndarray)
    names: list[str] = sol.series_names()
    check(names, list)
    check(sol.power_balance()["relative"], float)
    check(sol.method, str)

    model = net.model(formulation="branch")
    assert_type(model, LagrangianModel)
    check(model, LagrangianModel)
    check(model.coordinate_names, list)

    path = pathlib.Path(folder) / "files" / "rc.yaml"
    netdyn.save_model(net, path)
    again = netdyn.load_model(os.fspath(path))
    assert_type(again, Network)
    check(again, Network)

    deck = netdyn.write_netlist(net)
    assert_type(deck, str)
    read = netdyn.read_netlist(deck)
    check(read, Network)

    tex = netdyn.export_equations(net, "latex")
    assert_type(tex, str)
    check(tex, str)
    code = netdyn.export_equations(net, "c", name="rc")
    assert_type(code, CCode)
    check(code, CCode)

    bg = netdyn.to_bond_graph(net)
    assert_type(bg, BondGraph)
    check(bg, BondGraph)
    written = netdyn.save_bond_graph(bg, pathlib.Path(folder) / "rc.bg.json")
    check(netdyn.load_bond_graph(written), BondGraph)
    bond = bg.bond_names[0]
    check(bond, str)

    linkage = netdyn.linkages.four_bar()
    check(linkage.assembly, Assembly)
    assembly = linkage.set_assembly(q0={"O": 0.2})
    assert_type(assembly, Assembly)
    check(assembly, Assembly)
    q = netdyn.assemble_configuration(linkage)
    assert_type(q, dict[str, float])
    check(q, dict)

    x, = netdyn.coordinates("x,")
    k = sp.Symbol("k", positive=True)
    osc = LagrangianModel([x], T=x.diff(netdyn.t) ** 2 / 2, V=k * x ** 2 / 2, parameters={k: 4.0})
    op = netdyn.equilibrium(osc)
    check(op, netdyn.OperatingPoint)
    lin = netdyn.linearize(op, outputs=["x"])
    check(lin, StateSpace)
    poles = lin.poles()
    check(poles, np.ndarray)
    check(netdyn.simulate(osc, (0, 1), q0={"x": 1.0}), Solution)


if __name__ == "__main__":
    import tempfile
    main(tempfile.mkdtemp())
