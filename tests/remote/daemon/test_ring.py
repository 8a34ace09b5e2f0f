"""The daemon's ring: an hour raw, a day thinned, events never dropped, gaps reported."""

from __future__ import annotations

import json

import pytest
from gpufleet_sampler.ring import Ring


def _line(seq: int, kind: str) -> bytes:
    return (json.dumps({"kind": kind, "seq": seq}) + "\n").encode()


def _seqs(lines: list[bytes]) -> list[int]:
    return [json.loads(x)["seq"] for x in lines]


def _feed(ring: Ring, n_ticks: int, interval: float, procs_every: int = 2) -> dict[int, str]:
    """Samples every tick, a procs line every ``procs_every`` ticks (the process set changes
    every 100 ticks), an Xid event at tick 1000. Returns seq -> kind."""
    kinds: dict[int, str] = {}
    seq = 0
    for tick in range(n_ticks):
        t = tick * interval
        seq += 1
        ring.append(seq, t, "sample", _line(seq, "sample"))
        kinds[seq] = "sample"
        if tick % procs_every == 0:
            seq += 1
            ring.append(seq, t, "procs", _line(seq, "procs"), fingerprint=str(tick // 100))
            kinds[seq] = "procs"
        if tick == 1000:
            seq += 1
            ring.append(seq, t, "event", _line(seq, "event"))
            kinds[seq] = "event"
    return kinds


def test_default_capacity_holds_an_hour_at_1hz() -> None:
    ring = Ring(interval=1.0)
    assert ring.raw_samples >= 3600
    assert Ring(interval=0.5).raw_samples >= 7200
    assert ring.downsample == 60


def test_since_returns_exactly_the_later_seqs() -> None:
    ring = Ring(interval=1.0)
    kinds = _feed(ring, 500, 1.0)
    last = max(kinds)
    for n in (0, 1, 10, last - 1, last):
        lines, gap = ring.since(n)
        assert _seqs(lines) == list(range(n + 1, last + 1))
        assert not gap
    assert ring.since(last + 5) == ([], False)


def test_an_hour_raw_then_thinned_with_every_event_kept() -> None:
    # 3 hours at 1 Hz: the oldest two hours leave the raw tier.
    ring = Ring(interval=1.0)
    kinds = _feed(ring, 3 * 3600, 1.0)
    last = max(kinds)
    raw_first = ring.raw_first_seq()
    assert raw_first is not None
    raw_samples = [s for s in range(raw_first, last + 1) if kinds[s] == "sample"]
    assert len(raw_samples) >= 3600
    lines, gap = ring.since(0)
    assert gap
    got = _seqs(lines)
    assert got == sorted(got) and len(set(got)) == len(got)
    # Everything from the raw tier on is there in full.
    assert [s for s in got if s >= raw_first] == list(range(raw_first, last + 1))
    older = [s for s in got if s < raw_first]
    # The Xid at tick 1000 (two hours ago) survived.
    assert [s for s in older if kinds[s] == "event"] == [s for s in kinds if kinds[s] == "event"]
    # One sample a minute is kept from the thinned part.
    old_samples = [s for s in older if kinds[s] == "sample"]
    n_old = sum(1 for s in kinds if s < raw_first and kinds[s] == "sample")
    assert len(old_samples) == pytest.approx(n_old / 60, abs=2)
    # Process snapshots are kept only when the set changed (every 100 ticks here).
    old_procs = [s for s in older if kinds[s] == "procs"]
    n_changes = len({t // 100 for t in range(0, 3 * 3600 - 3600, 2)})
    assert abs(len(old_procs) - n_changes) <= 2


def test_since_inside_the_raw_tier_is_complete_after_eviction() -> None:
    ring = Ring(interval=1.0, raw_samples=100, downsample=10)
    kinds = _feed(ring, 1000, 1.0)
    last = max(kinds)
    raw_first = ring.raw_first_seq()
    assert raw_first is not None
    lines, gap = ring.since(raw_first - 1)
    assert _seqs(lines) == list(range(raw_first, last + 1))
    assert not gap
    lines, gap = ring.since(raw_first - 5)
    assert gap


def test_day_tier_covers_a_day_only() -> None:
    ring = Ring(interval=60.0, raw_samples=10, downsample=1, day_seconds=3600.0)
    _feed(ring, 200, 60.0)
    lines, _ = ring.since(0)
    data = [json.loads(x) for x in lines]
    assert len(data) < 200 * 2
    # Nothing older than day_seconds before the newest line.
    raw_first = ring.raw_first_seq()
    assert raw_first is not None
    old = [d for d in data if d["seq"] < raw_first]
    assert len(old) <= 3600 / 60 * 2 + 2


def test_memory_is_bounded_by_capacity() -> None:
    ring = Ring(interval=1.0, raw_samples=50, downsample=10, day_seconds=1e9)
    _feed(ring, 20000, 1.0, procs_every=1000)
    # 50 raw samples + their procs, 1 in 10 of the rest, and the few changes.
    assert len(ring) < 50 + 20000 / 10 + 300


def test_seq_must_increase() -> None:
    ring = Ring()
    ring.append(5, 0.0, "sample", b"x\n")
    with pytest.raises(ValueError):
        ring.append(5, 0.0, "sample", b"x\n")


def test_new_run_starting_later_reports_the_restart_as_gap() -> None:
    ring = Ring()
    for s in range(101, 111):
        ring.append(s, float(s), "sample", _line(s, "sample"))
    lines, gap = ring.since(50)
    assert _seqs(lines) == list(range(101, 111))
    assert gap
    assert ring.since(100) == (lines, False)
