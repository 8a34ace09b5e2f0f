"""The sampler runs on whatever Python the rented instance has, down to 3.8, with the stdlib
and pynvml only: checked by parsing every module with 3.8's grammar, by vermin, and by walking
every import (there is no 3.8 interpreter on this machine)."""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.paths import ROOT

PKG = ROOT / "remote" / "gpufleet_sampler"
FILES = sorted(PKG.rglob("*.py"))
ALLOWED_THIRD_PARTY = {"pynvml"}


def test_there_are_modules_to_check() -> None:
    names = {p.name for p in FILES}
    assert {"__main__.py", "protocol.py", "loop.py", "stream.py", "sim.py"} <= names


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(PKG)))
def test_parses_as_python_38(path: Path) -> None:
    ast.parse(path.read_text(encoding="utf-8"), filename=str(path), feature_version=(3, 8))


def test_vermin_finds_nothing_newer_than_38() -> None:
    vermin = shutil.which("vermin") or str(Path(sys.executable).parent / "vermin")
    r = subprocess.run(
        # --eval-annotations: without ``from __future__ import annotations`` a 3.8 runtime
        # evaluates signatures, so ``list[int]`` there would fail at import.
        [vermin, "-t=3.8-", "--no-tips", "--violations", "--eval-annotations", str(PKG)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert r.returncode == 0, r.stdout + r.stderr


def _imports(tree: ast.AST) -> list[tuple[str, int]]:
    out: list[tuple[str, int]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.extend((a.name, node.lineno) for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                continue  # relative: inside the package
            out.append((node.module or "", node.lineno))
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "import_module"
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            out.append((node.args[0].value, node.lineno))
    return out


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(PKG)))
def test_imports_only_stdlib_and_pynvml(path: Path) -> None:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    in_functions = {
        n.lineno
        for f in ast.walk(tree)
        if isinstance(f, ast.FunctionDef)
        for n in ast.walk(f)
        if isinstance(n, ast.Import | ast.ImportFrom)
    }
    bad = []
    for name, line in _imports(tree):
        top = name.split(".")[0]
        if top == "gpufleet_sampler" or top in ALLOWED_THIRD_PARTY:
            continue
        if top == "torch" and path.parent.name == "benchmark" and line in in_functions:
            continue  # the arrival benchmark imports PyTorch inside the run, where there is one
        if top in sys.stdlib_module_names:
            continue
        bad.append(f"{path.name}:{line}: {name}")
    assert not bad, "the sampler may import only the stdlib and pynvml: " + ", ".join(bad)


# Methods vermin cannot attribute when it does not know the receiver's type (it flags
# ``"x".removeprefix`` but not ``name.removeprefix``).
NEWER_METHODS = {
    "removeprefix": "3.9",
    "removesuffix": "3.9",
    "is_relative_to": "3.9",
    "with_stem": "3.9",
    "randbytes": "3.9",
    "bit_count": "3.10",
    "pairwise": "3.10",
    "to_thread": "3.9",
}


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(PKG)))
def test_no_methods_newer_than_38(path: Path) -> None:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    bad = [
        f"{path.name}:{node.lineno}: .{node.attr} needs Python {NEWER_METHODS[node.attr]}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute) and node.attr in NEWER_METHODS
    ]
    assert not bad, ", ".join(bad)
