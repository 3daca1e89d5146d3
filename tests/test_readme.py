"""The Python examples of README.md and docs/*.md run as written, each block on its own in a fresh namespace
(blocks with ``...`` placeholders are sketches and skipped)."""
import os
import re
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
BLOCKS = [(page.relative_to(ROOT).as_posix(), k, code) for page in PAGES
          for k, code in enumerate(re.findall(r"```python\n(.*?)^ *```", page.read_text(), flags=re.S | re.M))]


@pytest.mark.parametrize("page, k, code", BLOCKS, ids=[f"{p}#{k}" for p, k, _ in BLOCKS])
def test_block_runs_on_its_own(page, k, code, tmp_path, monkeypatch):
    if "..." in code:
        pytest.skip("sketch with placeholders")
    monkeypatch.chdir(tmp_path)
    os.environ.setdefault("MPLBACKEND", "Agg")
    exec(compile(textwrap.dedent(code), f"{page} block {k}", "exec"), {"__name__": "__readme__"})
