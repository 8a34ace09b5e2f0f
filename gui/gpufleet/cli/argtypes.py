"""Argument types that check a flag's value when the command line is parsed: a bad value is
a usage error (exit 2) naming the flag, before anything connects or starts."""

from __future__ import annotations

import argparse
import math
from pathlib import Path

from gpufleet_sampler import protocol


def _number(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not math.isfinite(v):
        raise argparse.ArgumentTypeError(f"not a finite number: {text!r}")
    return v


def non_negative(text: str) -> float:
    """A number ≥ 0 (seconds, minutes, prices)."""
    v = _number(text)
    if v < 0:
        raise argparse.ArgumentTypeError(f"must not be negative, not {text}")
    return v


def positive(text: str) -> float:
    """A number > 0 (a duration that must pass)."""
    v = _number(text)
    if v <= 0:
        raise argparse.ArgumentTypeError(f"must be greater than 0, not {text}")
    return v


def scenario(text: str) -> str:
    """A sim scenario the sampler knows."""
    if text not in protocol.SIM_SCENARIOS:
        known = ", ".join(protocol.SIM_SCENARIOS)
        raise argparse.ArgumentTypeError(f"no scenario {text!r} (known: {known})")
    return text


def existing_file(text: str) -> str:
    """A path (``~`` expanded) to a file that exists now, kept as typed."""
    p = Path(text).expanduser()
    if not p.is_file():
        raise argparse.ArgumentTypeError(f"no such file: {text}")
    return text


def bench_seconds(text: str) -> float:
    """A benchmark's run time: 1 s to an hour (``bench --seconds``, ``check --bench-seconds``)."""
    v = _number(text)
    if not 1.0 <= v <= 3600.0:
        raise argparse.ArgumentTypeError(f"must be between 1 and 3600 seconds, not {text}")
    return v


def gpu_indices(text: str) -> list[int]:
    """``0,1,3``: GPU indices, each once, in the order given."""
    try:
        indices = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        indices = []
    if not indices or min(indices) < 0:
        raise argparse.ArgumentTypeError(f"expected indices like 0,1,3, not {text!r}")
    return list(dict.fromkeys(indices))


def pid(text: str) -> int:
    """A process id: a whole number > 0."""
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a process id: {text!r}") from None
    if v <= 0:
        raise argparse.ArgumentTypeError(f"a process id is greater than 0, not {text}")
    return v
