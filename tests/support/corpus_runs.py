"""The false-alarm corpus (``bench/alerts_corpus.py``) loaded once, and its faulty hosts'
replays kept for the run: two test modules judge the same replays (one whether each fault
fires its rule and nothing else, one whether each alert's evidence is its declared record),
and each replay pushes thousands of samples through the rule engine."""

from __future__ import annotations

import functools
from types import ModuleType
from typing import Any

from tests.support.paths import ROOT, load_script


@functools.cache
def corpus() -> ModuleType:
    return load_script("alerts_corpus", ROOT / "bench" / "alerts_corpus.py")


@functools.cache
def trace() -> tuple[Any, Any]:
    """The recorded H200 trace's busy and idle ticks."""
    return corpus().load_trace()  # type: ignore[no-any-return]


@functools.cache
def faulty_run(hours: float, seed: int, name: str) -> tuple[Any, list[Any]]:
    """The faulty host ``name`` of ``faulty_hosts(hours, seed)`` and the alerts that fired on
    its stream (a new list each call is not needed: callers only read it)."""
    c = corpus()
    spec = next(s for s in c.faulty_hosts(hours, seed) if s.name == name)
    busy, idle = trace()
    fired, _gh = c.run(spec, busy, idle)
    return spec, fired


def faulty_names(hours: float, seed: int) -> list[str]:
    return [s.name for s in corpus().faulty_hosts(hours, seed)]
