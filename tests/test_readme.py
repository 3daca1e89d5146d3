"""The README's Python examples run as written (blocks with ``...`` placeholders are sketches and skipped)."""
import os
import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)


@pytest.mark.parametrize("k", range(len(BLOCKS)))
def test_readme_block_runs(k, tmp_path, monkeypatch):
    code = BLOCKS[k]
    if "..." in code:
        pytest.skip("sketch with placeholders")
    monkeypatch.chdir(tmp_path)
    os.environ.setdefault("MPLBACKEND", "Agg")
    namespace = {}
    exec(compile("import numpy as np, sympy as sp, netdyn\n" + code, f"README block {k}", "exec"), namespace)
