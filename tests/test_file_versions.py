"""One file-version key across netdyn's file formats (issue 26): model files and bond-graph files write
``format_version``; bond-graph files written before (``version:``) still load, to the same graph."""
import json

import pytest
import sympy as sp

import netdyn
from netdyn.bondgraph.fileformat import VERSION, dumps, loads
from netdyn.io.modelfile import FORMAT_VERSION


def rc_bond_graph():
    bg = netdyn.BondGraph("RC")
    bg.add("Se", "u", effort=sp.sin(3 * netdyn.t))
    bg.add("1", "J")
    bg.add("C", "C1", C=0.1)
    bg.add("R", "R1", R=2.0)
    bg.chain("u", "J", "C1")
    bg.bond("J", "R1")
    return bg


def test_every_file_format_writes_format_version(tmp_path):
    netdyn.save_bond_graph(rc_bond_graph(), tmp_path / "rc.json")
    netdyn.save_model(netdyn.linkages.four_bar(), tmp_path / "fb.json")
    for name, newest in (("rc.json", VERSION), ("fb.json", FORMAT_VERSION)):
        doc = json.loads((tmp_path / name).read_text())
        assert doc["format_version"] == newest and "version" not in doc


@pytest.mark.parametrize("version", [1, 2])
def test_a_bond_graph_file_with_the_old_version_key_loads_the_same(version):
    doc = json.loads(dumps(rc_bond_graph(), "json"))
    doc["version"] = version
    del doc["format_version"]
    old = loads(json.dumps(doc))
    new = loads(dumps(rc_bond_graph(), "json"))
    assert dumps(old, "json") == dumps(new, "json")
    assert old.bond_names == new.bond_names and old.params("C1") == new.params("C1")


def test_file_version_keys_that_disagree_or_are_missing_are_parse_errors():
    doc = json.loads(dumps(rc_bond_graph(), "json"))
    doc["version"] = 1
    with pytest.raises(netdyn.ParseError, match="needs one integer format_version"):
        loads(json.dumps(doc))
    del doc["version"], doc["format_version"]
    with pytest.raises(netdyn.ParseError, match="needs one integer format_version"):
        loads(json.dumps(doc))
    doc["format_version"] = VERSION + 1
    with pytest.raises(netdyn.ParseError, match="is newer than this netdyn reads"):
        loads(json.dumps(doc))
