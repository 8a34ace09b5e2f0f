"""Window specs as ``gpufleet compare`` takes them: a recorded stream file, or
``HOST:START/DURATION`` of the history store (``h100-a:2026-11-30T10:00/2h``, and relative
``h100-a:-1d/2h``: from a day ago, two hours). START is any time ``timeparse`` reads, so
both windows of ``A B`` given relative are taken against the same "now"."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from gpufleet.core.history.store import Store
from gpufleet.core.history.timeparse import TimeParseError, parse_duration, parse_time
from gpufleet.core.verdicts.window import RunWindow, from_store, from_stream_file

# The host is everything up to the first colon (host names have none; ISO times do).
_SPEC = re.compile(r"^(?P<host>[^:/\s]+):(?P<start>[^/]+)/(?P<dur>[^/]+)$")
STREAM_SUFFIXES = (".jsonl", ".json", ".ndjson", ".log", ".txt")


class SpecError(ValueError):
    """A window spec that is neither a file nor HOST:START/DURATION (the text says which)."""


@dataclass(frozen=True)
class StoreSpec:
    host: str
    t0: float
    t1: float


def parse_spec(text: str, now: float) -> Path | StoreSpec:
    """A file path (one that exists, or ends like a stream file) or a store window."""
    path = Path(text)
    if path.exists() or path.suffix.lower() in STREAM_SUFFIXES:
        return path
    m = _SPEC.match(text.strip())
    if m is None:
        raise SpecError(
            f"{text!r} is neither a stream file nor a window: use FILE.jsonl or "
            "HOST:START/DURATION (h100-a:2026-11-30T10:00/2h, h100-a:-1d/2h)"
        )
    try:
        t0 = parse_time(m["start"], now)
        length = parse_duration(m["dur"])
    except TimeParseError as e:
        raise SpecError(f"{text!r}: {e}") from None
    if length <= 0:
        raise SpecError(f"{text!r}: the duration must be more than 0")
    return StoreSpec(m["host"], t0, t0 + length)


def read_window(spec: Path | StoreSpec, store: Callable[[], Store]) -> RunWindow:
    """The window a spec names; ``store`` opens the history store only when needed."""
    if isinstance(spec, Path):
        return from_stream_file(spec)
    return from_store(store(), spec.host, spec.t0, spec.t1)
