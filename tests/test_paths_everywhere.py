"""Every public function that takes a path takes a ``str`` or an ``os.PathLike`` and answers with the
``NetdynError`` family (issue 26): readers a ``ParseError`` on a missing file, writers make a missing folder
(as ``mkdir -p``) and raise an ``ExportError`` where no folder can be (below a file)."""
import os
import pathlib

import numpy as np
import pytest

import netdyn
from netdyn.components.electrical import Capacitor, Resistor, VoltageSource
from netdyn.export.fmu import can_export


class MyPath(os.PathLike):
    """A PathLike that is not a pathlib.Path (what a user's own path type looks like)."""

    def __init__(self, path):
        self.path = str(path)

    def __fspath__(self):
        return self.path


KINDS = {"str": str, "Path": pathlib.Path, "PathLike": MyPath}


def rc():
    net = netdyn.Network("rc")
    net.add(VoltageSource("V1", "a", "0", 1.0), Resistor("R1", "a", "b", 1.0), Capacitor("C1", "b", "0", 1.0))
    return net


def pendulum_solution():
    from netdyn.components.planar import Gravity, Revolute, RigidBody
    net = netdyn.Network("pendulum")
    net.add(RigidBody("bar", 1, 0.1), Revolute("O", "ground", (0, 0), "bar", (-0.5, 0)), Gravity())
    return netdyn.simulate(net, (0, 0.1), q0={"theta_bar": 0.3}, t_eval=np.linspace(0, 0.1, 3))


# writers: (name, write(path) -> None, read back(path) -> something true, file name)
def _c_write(path):
    netdyn.export_equations(rc(), "c", name="rc").write(path)


WRITERS = {
    "save_model": (lambda p: netdyn.save_model(rc(), p), lambda p: netdyn.load_model(p).name == "rc", "rc.yaml"),
    "save_bond_graph": (lambda p: netdyn.save_bond_graph(netdyn.to_bond_graph(rc()), p),
                        lambda p: {"V1", "R1", "C1"} <= set(netdyn.load_bond_graph(p).elements), "rc.json"),
    "C export write": (_c_write, lambda p: os.path.isfile(os.path.join(os.fspath(p), "rc.c")), "c_out"),
    "BondGraph.draw": (lambda p: netdyn.to_bond_graph(rc()).draw(p), lambda p: os.path.getsize(p) > 0, "bg.png"),
    "plot_mechanism": (lambda p: netdyn.plot_mechanism(netdyn.linkages.four_bar().model(),
                                                       netdyn.linkages.four_bar_pose(angle=0.3), path=p),
                       lambda p: os.path.getsize(p) > 0, "fb.png"),
    "animate_mechanism": (lambda p: netdyn.animate_mechanism(pendulum_solution(), p, dpi=20),
                          lambda p: os.path.getsize(p) > 0, "pend.gif"),
    "save_fmu": (lambda p: netdyn.save_fmu(rc(), p), lambda p: os.path.getsize(p) > 0, "rc.fmu"),
}
READERS = {
    "read_netlist": netdyn.read_netlist,
    "load_model": netdyn.load_model,
    "load_bond_graph": netdyn.load_bond_graph,
}


def skip_without_fmu(name):
    if name == "save_fmu" and not can_export():
        pytest.skip("no C compiler or FMI headers here")


@pytest.mark.parametrize("kind", sorted(KINDS))
@pytest.mark.parametrize("name", sorted(WRITERS))
def test_writers_take_any_path_kind_and_make_missing_folders(tmp_path, name, kind):
    skip_without_fmu(name)
    write, read_back, file = WRITERS[name]
    path = KINDS[kind](tmp_path / "new" / "deeper" / file)
    write(path)
    assert read_back(path)


@pytest.mark.parametrize("name", sorted(WRITERS))
def test_writers_raise_export_error_where_no_folder_can_be(tmp_path, name):
    skip_without_fmu(name)
    write, _, file = WRITERS[name]
    blocker = tmp_path / "a_file"
    blocker.write_text("not a folder")
    with pytest.raises(netdyn.ExportError, match="a_file"):
        write(blocker / "below" / file)


@pytest.mark.parametrize("kind", sorted(KINDS))
@pytest.mark.parametrize("name", sorted(READERS))
def test_readers_take_any_path_kind_and_raise_parse_error_on_missing_files(tmp_path, name, kind):
    suffix = {"read_netlist": ".cir"}.get(name, ".yaml")
    with pytest.raises(netdyn.ParseError, match="missing"):
        READERS[name](KINDS[kind](tmp_path / "no_folder" / f"missing{suffix}"))
    with pytest.raises(netdyn.ParseError):
        READERS[name](KINDS[kind](tmp_path))  # a folder, not a file
    with pytest.raises(netdyn.ParseError):
        READERS[name](12)


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_read_netlist_reads_every_path_kind(tmp_path, kind):
    path = tmp_path / "rc.cir"
    path.write_text("RC\nV1 a 0 DC 1\nR1 a b 1k\nC1 b 0 1u\n.end\n")
    net = netdyn.read_netlist(KINDS[kind](path))
    assert sorted(net.elements) == ["C1", "R1", "V1"] and net.name == "rc"


def test_reading_back_what_was_written_through_each_path_kind_gives_the_same_network(tmp_path):
    texts = set()
    for kind, make in KINDS.items():
        path = make(tmp_path / kind / "rc.json")
        netdyn.save_model(rc(), path)
        texts.add(pathlib.Path(os.fspath(path)).read_text())
    assert len(texts) == 1
