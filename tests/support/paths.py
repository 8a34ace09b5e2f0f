"""Where things are, for a test wherever it sits: the repository root, the fakes, the fixtures,
the scripts of tests/support that tests run as subprocesses, the real captures.

A test imports these instead of counting ``Path(__file__).parents``, so moving it to another
stage folder changes nothing in it.
"""

from __future__ import annotations

from pathlib import Path

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
