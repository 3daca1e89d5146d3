"""numba's on-disk cache survives a kernel module run under its bare name.

numba names a cache file by the source file's base name, the function and its line, but the cached
code re-imports the module by the name it was compiled under. ``python -m doctest
netdyn/numerics/mechanics/schur_kernel.py`` imports the file as ``schur_kernel``; a cache written then is found by
``netdyn.numerics.mechanics.schur_kernel`` later and fails to load (``ModuleNotFoundError: No module named
'schur_kernel'``) — every later run of the package broke until the cache was deleted. The kernel modules
cache only when imported under the package name (``CACHE = __name__.startswith("netdyn.")``).
"""
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CALL = """
import numpy as np
from netdyn.numerics.mechanics.schur_kernel import schur_solve
acc, lam = np.zeros(2), np.zeros(1)
ok = schur_solve(np.array([1.0, 2.0]), np.array([1.0, 0.0]), np.array([1.0, 1.0]), np.array([0.0]),
                 np.array([0, 0]), np.array([0, 1]), np.array([0, 1]), np.array([0, 1]), np.array([0, 0]),
                 np.array([0, 0]), 0, np.zeros((1, 1)), acc, lam)
print(ok, round(float(lam[0]), 9))
"""


def test_a_bare_name_doctest_run_leaves_the_package_import_working(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT), "NUMBA_CACHE_DIR": str(tmp_path)}  # a cache of its own
    bare = subprocess.run([sys.executable, "-m", "doctest", "netdyn/numerics/mechanics/schur_kernel.py"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=600)
    assert bare.returncode == 0, bare.stdout + bare.stderr
    run = subprocess.run([sys.executable, "-c", CALL], cwd=tmp_path, env=env, capture_output=True, text=True,
                         timeout=600)  # the package import, after the bare run
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.split() == ["True", "-0.666666667"]
    assert list(tmp_path.rglob("schur_kernel.schur_solve-*.nbi")), "the package import did not cache"


def test_every_cached_kernel_is_guarded():
    """A new kernel with a literal ``cache=True`` would bring the pitfall back: use the module's ``CACHE``."""
    literal = re.compile(r"@(?:numba\.)?n?jit\([^)]*cache\s*=\s*True")
    found = [f"{p.relative_to(ROOT)}:{i}" for folder in ("netdyn", "components") for p in (ROOT / folder).rglob("*.py")
             if not (folder == "netdyn" and p.is_relative_to(ROOT / "netdyn" / "components"))
             for i, line in enumerate(p.read_text().splitlines(), 1) if literal.search(line)]
    assert found == [], ("cache=True caches under a bare module name too; define "
                         "CACHE = __name__.startswith('netdyn.') and use @njit(cache=CACHE): " + ", ".join(found))
