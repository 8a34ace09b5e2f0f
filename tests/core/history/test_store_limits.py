"""The history store under a flood: one host's events and errors are rate-limited (counted,
and said in a note event), the others' are not; and the file is kept under its size cap by
deleting the oldest data first (raw before rollups)."""

from __future__ import annotations

import time
from pathlib import Path

from gpufleet.core.history.store import Store
from gpufleet.core.wire.messages import ErrorMsg, Event
from gpufleet_sampler import protocol

from tests.support.synth import make_hello, make_samples


def test_an_event_flood_is_rate_limited_counted_and_noted(tmp_path: Path) -> None:
    store = Store(tmp_path / "h.sqlite", event_rate_per_s=2.0, event_burst=50)
    t0 = time.time() - 600
    for h in ("flood", "calm"):
        store.write(h, make_hello(gpus=1))
    for i in range(5000):
        store.write("flood", Event(i + 1, t0 + i * 0.01, "xid", 0, 13, f"flood {i}", {}))
        if i % 5 == 0:
            store.write("flood", ErrorMsg(f"error {i}", "x", {"kind": "error", "t": t0}))
    for i in range(10):
        store.write("calm", Event(i + 1, t0 + i, "xid", 0, 79, f"real {i}", {}))
    store.flush()
    store.close()  # the final flush notes what was left out since the last note
    total = 5000 + 1000
    assert 5800 <= store.rate_limited["flood"] < total
    assert "calm" not in store.rate_limited
    ro = Store(tmp_path / "h.sqlite", read_only=True)
    try:
        calm = ro.events("calm", t0 - 1, t0 + 100)
        assert [e.message for e in calm] == [f"real {i}" for i in range(10)]
        flood = ro.events("flood", t0 - 1, time.time() + 1)
        notes = [e for e in flood if e.type == protocol.EVENT_NOTE]
        kept = [e for e in flood if e.type != protocol.EVENT_NOTE]
        assert notes and all("not recorded" in e.message for e in notes)
        # Nothing vanishes without a trace: recorded + noted = received.
        assert len(kept) + sum(int(e.raw["rate_limited"]) for e in notes) == total
        assert sum(int(e.raw["rate_limited"]) for e in notes) == store.rate_limited["flood"]
    finally:
        ro.close()


def test_the_size_cap_deletes_the_oldest_data_first(tmp_path: Path) -> None:
    cap = 3 << 20
    store = Store(tmp_path / "h.sqlite", max_bytes=None, retention_raw_days=3650)
    t0 = time.time() - 6 * 3600
    store.write("a", make_hello(gpus=8))
    for k in range(6):  # six hours of 8 GPUs at 1 Hz, distinct values
        for s in make_samples(t0 + k * 3600, 3600, gpus=8, seed=k, seq0=1 + k * 3600):
            store.write("a", s)
        store.flush()
    store.write("a", Event(99999, t0 + 10, "xid", 0, 79, "old xid", {}))
    store.flush()
    store._writer.con.execute("PRAGMA incremental_vacuum")
    assert store._writer.used_bytes() > cap  # the test needs data over the cap
    first, last = store.time_range("a") or (0.0, 0.0)
    store.max_bytes = cap
    store.apply_retention(now=time.time())
    assert store._writer.used_bytes() <= cap
    assert store.trimmed_for_size > 0
    new_first, new_last = store.time_range("a") or (0.0, 0.0)
    assert new_first == first  # the rollups of the oldest hours are kept
    assert new_last == last  # the newest data stays
    raw = list(store.samples("a", t0 - 1, time.time()))
    assert raw and raw[0].t > first + 3600  # the oldest raw data went first
    assert raw[-1].t >= last - 1
    assert store.events("a", t0, t0 + 20) == []
    store.close()
