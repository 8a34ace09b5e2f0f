"""Where things are, for a test wherever it sits: the repository root, the fakes, the fixtures,
the scripts of tests/support that tests run as subprocesses, the real captures.

A test imports these instead of counting ``Path(__file__).parents``, so moving it to another
stage folder changes nothing in it.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[2]
TESTS = ROOT / "tests"
SUPPORT = TESTS / "support"
# The fake pynvml and torch: first on a subprocess's PYTHONPATH, they stand in for the real ones.
FAKES = TESTS / "fakes"
FIXTURES = TESTS / "fixtures"
REMOTE = ROOT / "remote"
# Real captures (nvidia-smi dumps, provider API bodies), beside the repository; a test that
# reads them skips with a reason where they are absent.
REAL = ROOT.parent / "shared" / "real"


def load_script(name: str, path: Path) -> ModuleType:
    """A script outside the packages (a ``bench/`` or ``tools/`` file) imported as module
    ``name``, registered in ``sys.modules`` first (dataclasses and pickling look it up)."""
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None, path
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod
