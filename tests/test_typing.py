"""The public API's type hints (issue 26): ``py.typed`` ships, mypy accepts a user's script written against
them (``tests/typing_user.py``) and rejects one that misuses them, the script's values are what the hints
say at run time, and every function of the package root (docs/api.md's first table) is annotated whole."""
import importlib
import inspect
import pathlib
import re
import subprocess
import sys

import pytest

import netdyn

ROOT = pathlib.Path(__file__).resolve().parents[1]
pytest.importorskip("mypy")


def mypy(*files):
    """mypy with the project's configuration on ``files`` (no cache written: runs may overlap)."""
    out = subprocess.run([sys.executable, "-m", "mypy", "--config-file", str(ROOT / "pyproject.toml"),
                          "--cache-dir", "/dev/null", "--no-error-summary", *map(str, files)],
                         cwd=ROOT, capture_output=True, text=True, timeout=600)
    return out.returncode, out.stdout + out.stderr


def test_the_package_ships_py_typed():
    assert (ROOT / "netdyn" / "py.typed").is_file()
    assert '"netdyn" = ["py.typed"]' in (ROOT / "pyproject.toml").read_text()


def test_a_users_script_type_checks_against_the_hints():
    code, out = mypy(ROOT / "tests" / "typing_user.py")
    assert code == 0, out


def test_a_script_that_misuses_the_api_does_not(tmp_path):
    """The hints are not ``Any``: wrong argument and result types are caught (one error a line)."""
    bad = tmp_path / "misuse.py"
    bad.write_text("import netdyn\n"
                   "net = netdyn.Network(3)\n"                                  # name: str
                   "sol = netdyn.simulate(net, (0, 1), q0=[1.0])\n"             # q0: a mapping
                   "n: int = sol.voltage('a')\n"                                # an array, not an int
                   "m: str = netdyn.load_model('m.yaml').model()\n"             # a LagrangianModel
                   "c: str = netdyn.export_equations(net, 'c')\n"               # a CCode
                   "netdyn.read_netlist(12)\n"                                  # a path, text or file
                   "g: int = netdyn.to_bond_graph(net)\n")                      # a BondGraph
    code, out = mypy(bad)
    assert code == 1, out
    lines = sorted({int(m) for m in re.findall(r"misuse\.py:(\d+): error", out)})
    assert lines == [2, 3, 4, 5, 6, 7, 8], out


def test_the_users_script_runs_and_every_value_is_what_its_hint_says(tmp_path):
    sys.path.insert(0, str(ROOT / "tests"))
    try:
        importlib.import_module("typing_user").main(str(tmp_path))
    finally:
        sys.path.remove(str(ROOT / "tests"))


def root_functions():
    text = (ROOT / "docs" / "api.md").read_text()
    table = text.split("## The package root")[1].split("\n## ")[0]
    return re.findall(r"^\| `netdyn\.(\w+)` \|", table, re.M)


def listed_callables():
    """Every function and class docs/api.md lists, as ``(name, module, attribute)``."""
    text = (ROOT / "docs" / "api.md").read_text()
    return re.findall(r"^\| `([\w.]+)` \| `from ([\w.]+) import (\w+)` \|", text, re.M)


@pytest.mark.parametrize("full, module, attribute", listed_callables(), ids=lambda x: x if "." in x else None)
def test_every_listed_function_and_constructor_is_annotated(full, module, attribute):
    obj = getattr(importlib.import_module(module), attribute)
    if inspect.isclass(obj):
        if issubclass(obj, BaseException) and "__init__" not in vars(obj):
            return  # Exception's own constructor
        fn = obj.__init__
        if not inspect.isfunction(fn):
            return  # object's (a class without a constructor of its own)
    elif inspect.isfunction(obj):
        fn = obj
    else:
        return  # a value (a type alias, a constant)
    sig = inspect.signature(fn)
    missing = [p for p, par in sig.parameters.items() if p not in ("self", "cls") and par.annotation is par.empty]
    assert not missing and sig.return_annotation is not sig.empty, f"{full}: no hint for {missing or 'the return'}"


@pytest.mark.parametrize("name", root_functions())
def test_every_root_function_and_method_is_annotated(name):
    obj = getattr(netdyn, name)
    if not callable(obj):
        return
    if inspect.isclass(obj):
        targets = [("__init__", obj.__init__)] + [
            (n, v.fget if isinstance(v, property) else v) for n, v in vars(obj).items()
            if not n.startswith("_") and (inspect.isfunction(v) or isinstance(v, property))]
        targets = [(n, f) for n, f in targets if inspect.isfunction(f) and f.__qualname__.startswith(obj.__name__)]
    else:
        targets = [(name, obj)]
    for label, fn in targets:
        sig = inspect.signature(fn)
        missing = [p for p, par in sig.parameters.items() if p not in ("self", "cls") and par.annotation is par.empty]
        assert not missing, f"{name}.{label}: parameters without a hint {missing}"
        assert sig.return_annotation is not sig.empty, f"{name}.{label}: no return hint"
