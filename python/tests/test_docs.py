"""Every ```python block of README.md and docs/**/*.md runs, each as its own script in a
scratch directory that holds the repository's examples/ and python/examples/ (so the paths
the snippets use resolve as from the repository root).

A block whose info string is `python no-run` is not run; it must need what the package's
tests cannot provide (FMPy, OMSimulator, matplotlib, or a Dask cluster at an address), and
the test fails for a `no-run` block that needs none of these. The Rust side (```sh and
```json blocks, links) is tests/readme.rs.
"""

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO

# The generated reference pages hold no Python (tests/reference.rs checks them).
GENERATED = {"docs/reference/components.md", "docs/reference/cli.md"}
# What justifies `no-run`: a tool that is not a dependency of the package or its tests.
NO_RUN_REASONS = ("fmpy", "OMSimulator", "matplotlib", "tcp://")


def _pages():
    pages = [REPO / "README.md"] + sorted((REPO / "docs").rglob("*.md"))
    return [p for p in pages if p.relative_to(REPO).as_posix() not in GENERATED]


def _blocks():
    """(id, info, code) of every ```python block, indented ones included."""
    out = []
    for page in _pages():
        rel = page.relative_to(REPO).as_posix()
        lines = page.read_text(encoding="utf-8").splitlines()
        i = 0
        while i < len(lines):
            m = re.match(r"^(\s*)```(.*)$", lines[i])
            if m:
                indent, info, start = len(m.group(1)), m.group(2).strip(), i + 1
                body = []
                i += 1
                while i < len(lines) and not lines[i].lstrip().startswith("```"):
                    body.append(lines[i][indent:] if lines[i][:indent].strip() == "" else lines[i])
                    i += 1
                if info.split(" ")[0] == "python":
                    out.append((f"{rel}:{start}", info, "\n".join(body) + "\n"))
            i += 1
    return out


BLOCKS = _blocks()


def test_the_guide_has_python_to_run():
    runnable = [b for b in BLOCKS if "no-run" not in b[1]]
    assert len(runnable) >= 6, [b[0] for b in runnable]


@pytest.mark.parametrize("where,info,code", BLOCKS, ids=[b[0] for b in BLOCKS])
def test_python_snippet_runs(where, info, code, tmp_path):
    if "no-run" in info:
        assert any(r in code for r in NO_RUN_REASONS), (
            f"{where}: a `python no-run` block must need FMPy, OMSimulator, matplotlib or a "
            f"Dask cluster at an address; run it instead"
        )
        pytest.skip(f"{where}: needs {[r for r in NO_RUN_REASONS if r in code]}")
    if "dask" in code and importlib.util.find_spec("distributed") is None:
        pytest.skip("dask[distributed] is not installed (the `dask` extra)")
    (tmp_path / "examples").symlink_to(REPO / "examples")
    (tmp_path / "python").mkdir()
    (tmp_path / "python" / "examples").symlink_to(REPO / "python" / "examples")
    script = tmp_path / "snippet.py"
    script.write_text(code, encoding="utf-8")
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    r = subprocess.run(
        [sys.executable, str(script)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=240
    )
    assert r.returncode == 0, f"{where} failed:\n{code}\n--- stderr ---\n{r.stderr}"
