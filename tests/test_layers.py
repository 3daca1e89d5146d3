"""The package's shape: no import cycles among its modules, every sub-package installed, a light import.

The layer order itself is import-linter's contract in pyproject.toml (run by .ci/run); this test finds
cycles with its own reading of the import statements (including imports inside functions), so a
cycle shows up in the plain test run too.
"""
import ast
import subprocess
import sys
import tomllib
from pathlib import Path

import networkx as nx

ROOT = Path(__file__).resolve().parents[1]
SOURCES = {"netdyn": ROOT / "netdyn", "netdyn.components": ROOT / "components"}


def module_name(package, folder, path):
    rel = path.relative_to(folder).with_suffix("")
    parts = [p for p in rel.parts if p != "__init__"]
    return ".".join([package, *parts])


def runtime_nodes(tree):
    """Every node of ``tree`` but those under ``if TYPE_CHECKING:`` (imports for type hints only, which never
    run; import-linter's ``exclude_type_checking_imports`` likewise)."""
    skip = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and getattr(node.test, "id", getattr(node.test, "attr", None)) == "TYPE_CHECKING":
            skip.update(id(n) for stmt in node.body for n in ast.walk(stmt))
    return [n for n in ast.walk(tree) if id(n) not in skip]


def import_graph():
    graph = nx.DiGraph()
    for package, folder in SOURCES.items():
        for path in folder.rglob("*.py"):
            if package == "netdyn" and path.is_relative_to(folder / "components"):
                continue  # a developer's symlink to components/
            name = module_name(package, folder, path)
            is_package = path.name == "__init__.py"
            graph.add_node(name)
            for node in runtime_nodes(ast.parse(path.read_text())):
                targets = []
                if isinstance(node, ast.ImportFrom):
                    if node.level:
                        base = name.split(".") if is_package else name.split(".")[:-1]
                        base = base[:len(base) - node.level + 1]
                        module = ".".join(base + ([node.module] if node.module else []))
                    else:
                        module = node.module or ""
                    targets = [module] + [f"{module}.{a.name}" for a in node.names]
                elif isinstance(node, ast.Import):
                    targets = [a.name for a in node.names]
                for target in targets:
                    if target.startswith("netdyn") and target != name:
                        graph.add_edge(name, target)
    return graph.subgraph([n for n in graph if n in set(graph.nodes) and n != "netdyn"]).copy()


def test_the_import_graph_reaches_every_module_and_has_no_cycle():
    graph = import_graph()
    modules = {n for n in graph if n.startswith("netdyn.")}
    assert {"netdyn.numerics.simulate", "netdyn.components.base", "netdyn.graph.network"} <= modules
    cycles = list(nx.simple_cycles(graph, length_bound=12))
    assert cycles == [], f"import cycles: {cycles[:5]}"


def test_every_sub_package_is_installed():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    listed = set(config["tool"]["setuptools"]["packages"])
    found = {module_name("netdyn", ROOT / "netdyn", p.parent / "__init__.py")
             for p in (ROOT / "netdyn").rglob("__init__.py") if not p.is_relative_to(ROOT / "netdyn" / "components")}
    assert found - listed == set(), "add these packages to [tool.setuptools] packages in pyproject.toml"


def test_import_netdyn_leaves_plotting_files_and_exporters_for_later():
    code = ("import sys, netdyn; heavy = ['matplotlib', 'scipy.signal', 'netdyn.io.netlist', 'netdyn.export', "
            "'sksundae']; print([m for m in heavy if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


MAX_MODULES, MAX_LINES = 15, 4000


def folder_sizes():
    """``{folder: (modules, lines)}`` of every package folder, counting its own ``.py`` files only."""
    sizes = {}
    for folder in (ROOT / "netdyn", ROOT / "components"):
        for init in folder.rglob("__init__.py"):
            files = sorted(init.parent.glob("*.py"))
            sizes[str(init.parent.relative_to(ROOT))] = (len(files), sum(len(f.read_text().splitlines())
                                                                         for f in files))
    return sizes


def test_no_folder_is_a_warehouse():
    sizes = folder_sizes()
    assert "netdyn/numerics/circuit" in sizes and len(sizes) >= 15
    big = {k: v for k, v in sizes.items() if v[0] > MAX_MODULES or v[1] > MAX_LINES}
    assert big == {}, f"split these folders (modules, lines) into rooms of <= {MAX_MODULES} modules and " \
                      f"<= {MAX_LINES} lines: {big}"


def test_a_numerics_path_imports_no_other_path():
    """The contract's rule, read from the source as well (imports inside functions included)."""
    graph = import_graph()
    paths = ("circuit", "mechanics", "ida", "nonsmooth")
    room = lambda module: next((p for p in paths if module.startswith(f"netdyn.numerics.{p}.")
                                or module == f"netdyn.numerics.{p}"), None)
    crossing = [(a, b) for a, b in graph.edges if room(a) and room(b) and room(a) != room(b)]
    assert crossing == []
