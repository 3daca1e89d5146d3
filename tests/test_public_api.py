"""docs/api.md is the public API: every name it lists imports as its import line says, is defined where its
module column says, and has a short example in its own docstring that runs (``doctest`` of that object's
docstring alone, in the namespace of its module, as ``--doctest-modules`` runs it).

Names under the heading "Constants and data" are values without a docstring of their own: they are only
imported. A listed name that does not import, or whose docstring has no example, fails here.
"""
import doctest
import importlib
import inspect
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
API = ROOT / "docs" / "api.md"
ROW = re.compile(r"^\|\s*`(?P<name>[\w.]+)`\s*\|\s*`from (?P<module>[\w.]+) import (?P<attr>\w+)`\s*\|"
                 r"(?P<purpose>[^|]+)\|(?P<home>[^|]+)\|\s*$")
DATA_HEADING = "Constants and data"

#: Listed names whose docstring lives in netdyn/numerics, which is frozen while it is split into
#: sub-packages: their examples go in with that move. Strict xfail, so that a name whose example has
#: landed fails here until it is taken off this list.
PENDING_EXAMPLES = set()


def listed():
    """``(name, module, attribute, home, is_data)`` for every table row of docs/api.md."""
    rows, data = [], False
    for line in API.read_text().splitlines():
        if line.startswith("## "):
            data = DATA_HEADING in line
        m = ROW.match(line)
        if m:
            home = re.search(r"`([\w.]+)`", m["home"])
            rows.append((m["name"], m["module"], m["attr"], home[1] if home else None, data))
    return rows


ROWS = listed()
CODE = [r for r in ROWS if not r[4]]


def resolve(module, attr):
    return getattr(importlib.import_module(module), attr)


def test_the_page_lists_the_root_api_and_no_name_twice():
    names = [r[0] for r in ROWS]
    assert len(ROWS) > 150, "docs/api.md: table rows not recognised"
    assert len(names) == len(set(names)), [n for n in names if names.count(n) > 1]
    import netdyn
    at_root = {r[2] for r in ROWS if r[1] == "netdyn"}
    assert set(netdyn.__all__) <= at_root, f"netdyn.__all__ names missing from docs/api.md: " \
                                           f"{sorted(set(netdyn.__all__) - at_root)}"
    assert all(r[0] == f"{r[1]}.{r[2]}" for r in ROWS), "the name column is the import's module + name"


@pytest.mark.parametrize("name, module, attr, home, data", ROWS, ids=[r[0] for r in ROWS])
def test_listed_name_imports_from_its_module(name, module, attr, home, data):
    namespace = {}
    exec(f"from {module} import {attr}", namespace)
    obj = namespace[attr]
    if not data and home and hasattr(obj, "__module__") and not inspect.ismodule(obj):
        defined = obj.__module__
        assert defined == home or defined.startswith(home + "."), f"{name} is defined in {defined}, not {home}"


@pytest.mark.parametrize("name, module, attr", [r[:3] for r in CODE], ids=[r[0] for r in CODE])
def test_listed_name_has_a_running_example(name, module, attr, tmp_path, monkeypatch, request):
    if name in PENDING_EXAMPLES:
        request.applymarker(pytest.mark.xfail(strict=True, reason="example goes in with the numerics move"))
    monkeypatch.setenv("MPLBACKEND", "Agg")
    monkeypatch.chdir(tmp_path)  # examples that write files write them here
    obj = resolve(module, attr)
    home = importlib.import_module(obj.__module__) if getattr(obj, "__module__", None) else None
    globs = dict(vars(home)) if home else {}
    finder = doctest.DocTestFinder(recurse=False)
    tests = [t for t in finder.find(obj, name, module=False, globs=globs) if t.examples]
    assert obj.__doc__ and tests, f"{name}: its docstring has no example (add a short '>>>' one)"
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    for test in tests:
        report = []
        result = runner.run(test, out=report.append)
        assert result.failed == 0, "".join(report)
