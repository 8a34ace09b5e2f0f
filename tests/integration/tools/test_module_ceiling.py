"""The module ceiling ``make lint`` keeps (tools/module_ceiling.py): a module of 1,201 lines
fails and is named with its excess, one of 1,200 passes, and the repository as it stands (the
app, the sampler, tools, bench and tests) passes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.support.paths import ROOT

TOOL = ROOT / "tools" / "module_ceiling.py"


def _run(*paths: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(TOOL), *map(str, paths)], capture_output=True, text=True, timeout=60
    )


def _module(path: Path, lines: int) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("x = 1\n" * lines)
    return path


def test_a_module_over_the_ceiling_fails_and_is_named(tmp_path: Path) -> None:
    _module(tmp_path / "pkg" / "fits.py", 1200)
    _module(tmp_path / "pkg" / "sub" / "grown.py", 1201)
    _module(tmp_path / "pkg" / "__pycache__" / "cached.py", 5000)  # not a module of ours
    out = _run(tmp_path / "pkg")
    assert out.returncode == 1
    assert "grown.py: 1201 lines, 1 over the ceiling of 1200" in out.stderr
    assert "fits.py" not in out.stderr and "cached.py" not in out.stderr


def test_a_module_at_the_ceiling_passes(tmp_path: Path) -> None:
    out = _run(_module(tmp_path / "fits.py", 1200))
    assert (out.returncode, out.stderr) == (0, "")


def test_a_missing_path_is_an_error_not_a_pass(tmp_path: Path) -> None:
    out = _run(tmp_path / "nowhere")
    assert out.returncode == 2 and "no such path" in out.stderr


def test_the_app_is_under_the_ceiling() -> None:
    out = _run()
    assert out.returncode == 0, out.stderr
