"""History store: a day of 8 GPUs at 1 Hz, read back exactly (raw) and through rollups."""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from gpufleet.core.history.store import CHUNK_S, Store, StoreError
from gpufleet.core.wire.messages import Sample
from gpufleet_sampler import protocol

from tests.support import synth

HOST = "a100-train"
GPUS = 8
DAY = 86400


class Day:
    def __init__(self, store: Store, samples: list[Sample], t0: float) -> None:
        self.store = store
        self.samples = samples
        self.t0 = t0
        self.t = np.array([s.t for s in samples])

    def raw(self, gpu: int, metric: str) -> np.ndarray:
        pos = protocol.ROW_POS[metric]
        return np.array(
            [np.nan if s.rows[gpu][pos] is None else s.rows[gpu][pos] for s in self.samples],
            dtype=np.float64,
        )


@pytest.fixture(scope="module")
def day(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Day]:
    # Recent times: the background retention (7 days raw) must not touch them.
    t0 = synth.floor_minute(time.time() - DAY - 120)
    samples = synth.make_samples(t0, DAY, gpus=GPUS)
    store = Store(tmp_path_factory.mktemp("day") / "history.sqlite")
    store.write(HOST, synth.make_hello(HOST, GPUS))
    for s in samples:
        store.write(HOST, s)
    store.flush()
    assert store.dropped == 0
    yield Day(store, samples, t0)
    store.close()


def test_catalogue(day: Day) -> None:
    st = day.store
    assert st.hosts() == [HOST]
    assert st.gpus(HOST) == list(range(GPUS))
    first, last = st.time_range(HOST) or (0.0, 0.0)
    assert first == pytest.approx(day.samples[0].t, abs=1e-6)
    assert last == pytest.approx(day.samples[-1].t, abs=1e-6)
    hello = st.hello(HOST)
    assert hello is not None and hello.run_id == "run-1" and len(hello.gpus) == GPUS
    assert st.hello("no-such-host") is None
    t, v = st.query("no-such-host", 0, "power_w", day.t0, day.t0 + 60)
    assert t.size == 0 and v.size == 0


@pytest.mark.parametrize("metric", ["power_w", "temp_gpu_c", "energy_j", "fan_pct"])
def test_raw_hour_is_exact(day: Day, metric: str) -> None:
    t0 = day.t0 + 5 * 3600 + 17.5  # not on a minute boundary
    t1 = t0 + 3600
    t, v = day.store.query(HOST, 3, metric, t0, t1)
    sel = (day.t >= t0) & (day.t <= t1)
    want = day.raw(3, metric)[sel]
    assert t.size == want.size == sel.sum()
    np.testing.assert_allclose(t, day.t[sel], rtol=0, atol=1e-6)
    np.testing.assert_array_equal(v, want)  # exact, NaN where null (fan_pct)
    # max_points larger than the window: still raw.
    _t2, v2 = day.store.query(HOST, 3, metric, t0, t1, max_points=5000)
    np.testing.assert_array_equal(v2, v)


def test_samples_rebuild_protocol_messages(day: Day) -> None:
    t0 = day.t0 + 7200 - 30  # crosses a minute and an hour boundary
    got = list(day.store.samples(HOST, t0, t0 + 120))
    want = [s for s in day.samples if t0 <= s.t <= t0 + 120]
    assert [s.seq for s in got] == [s.seq for s in want]
    for g, w in zip(got, want, strict=True):
        assert g.columns == w.columns
        assert g.t == pytest.approx(w.t, abs=1e-6)
        assert g.mono == pytest.approx(w.mono, abs=1e-6)
        assert g.rows == w.rows
        # Integral columns come back as ints, so a re-encoded line looks like the original.
        assert type(g.value(0, "sm_clock_mhz")) is int
        assert g.value(0, "fan_pct") is None


def _expected_buckets(day: Day, gpu: int, metric: str, t0: float, t1: float, n: int):
    """Rollups are per chunk (one minute): bucket each minute's min/max by its midpoint."""
    v = day.raw(gpu, metric)
    minute = np.floor(day.t / CHUNK_S)
    edges = np.linspace(t0, t1, n + 1)
    out: dict[int, tuple[float, float]] = {}
    for m in np.unique(minute):
        sel = minute == m
        mid = (day.t[sel][0] + day.t[sel][-1]) / 2
        if not (day.t[sel][-1] >= t0 and day.t[sel][0] <= t1):
            continue
        b = int(np.clip(np.searchsorted(edges, mid, side="right") - 1, 0, n - 1))
        lo, hi = out.get(b, (math.inf, -math.inf))
        out[b] = (min(lo, np.nanmin(v[sel])), max(hi, np.nanmax(v[sel])))
    return out


def test_day_of_eight_gpus_through_rollups(day: Day) -> None:
    t0, t1 = day.t0, day.t0 + DAY
    for gpu in range(GPUS):
        w = day.store.query_window(HOST, gpu, "temp_gpu_c", t0, t1, max_points=600)
        assert not w.raw and 0 < w.t.size <= 600
        assert np.all(w.vmin <= w.mean) and np.all(w.mean <= w.vmax)
        raw = day.raw(gpu, "temp_gpu_c")
        # Peaks survive downsampling: the envelope holds the true extremes.
        assert w.vmax.max() == np.nanmax(raw) and w.vmin.min() == np.nanmin(raw)
        assert np.average(w.mean) == pytest.approx(np.nanmean(raw), rel=0.01)
    # Per bucket, min/max are exactly those of the minutes it covers.
    w = day.store.query_window(HOST, 0, "temp_gpu_c", t0, t1, max_points=600)
    want = _expected_buckets(day, 0, "temp_gpu_c", t0, t1, 600)
    assert len(want) == w.t.size
    for i, b in enumerate(sorted(want)):
        assert (w.vmin[i], w.vmax[i]) == want[b]
    _t, mn, mx = day.store.query_minmax(HOST, 0, "temp_gpu_c", t0, t1, max_points=600)
    np.testing.assert_array_equal(mn, w.vmin)
    np.testing.assert_array_equal(mx, w.vmax)


def test_hour_downsampled_from_raw_keeps_envelope(day: Day) -> None:
    t0 = day.t0 + 12 * 3600
    t1 = t0 + 3600
    w = day.store.query_window(HOST, 0, "sm_clock_mhz", t0, t1, max_points=400)
    assert not w.raw and w.t.size <= 400
    sel = (day.t >= t0) & (day.t <= t1)
    raw = day.raw(0, "sm_clock_mhz")[sel]
    assert w.vmin.min() == raw.min() and w.vmax.max() == raw.max()
    assert np.all((w.t >= t0) & (w.t <= t1))
    assert np.all(np.diff(w.t) > 0)


def test_readers_in_other_threads(day: Day) -> None:
    results: list[int] = []

    def read() -> None:
        t, _ = day.store.query(HOST, 1, "util_gpu_pct", day.t0, day.t0 + 600)
        results.append(t.size)

    threads = [threading.Thread(target=read) for _ in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert results == [results[0]] * 4 and results[0] > 500


def test_records(tmp_path: Path) -> None:
    now = time.time()
    with Store(tmp_path / "h.sqlite") as st:
        hello = synth.make_hello("h", 2)
        st.write("h", hello)
        st.write("h", hello)  # a reconnect re-sends it: kept once
        samples = synth.make_samples(now - 100, 50, gpus=2)
        for i, s in enumerate(samples):
            st.write("h", s)
            if i % 2 == 0:  # unchanged snapshots are stored once
                st.write("h", synth.make_procs(s.t, s.seq + 10_000, gpus=2))
        changed = synth.make_procs(now - 40, 20_000, gpus=2, user="bob")
        st.write("h", changed)
        st.write("h", synth.make_event(now - 60, 30_000, gpu=1, code=79))
        alert = {
            "id": "a1",
            "rule_id": "thermal",
            "severity": "warning",
            "host": "h",
            "gpu": 0,
            "state": "firing",
            "started_t": now - 90,
            "ended_t": None,
            "evidence": {"temp_gpu_c": 88, "threshold": 85},
        }
        st.write_alert(alert)
        st.write_alert({**alert, "state": "resolved", "ended_t": now - 70})
        st.write_kill({"host": "h", "t": now - 50, "pid": 4001, "result": "exited"})
        st.write_check("h", {"gpus": [{"index": 0, "ecc": "ok"}]}, t=now - 95)
        st.flush()
        assert st.hello("h") == hello or st.hello("h").raw == hello.raw
        snaps = st.procs("h", now - 200, now)
        assert [p.procs[0].user for p in snaps] == ["alice", "bob"]
        assert snaps[0].t == pytest.approx(samples[0].t)
        assert st.procs("h", now - 45, now - 44)[0].procs[0].user == "alice"  # still in effect
        (ev,) = st.events("h", now - 100, now)
        assert (ev.type, ev.gpu, ev.code) == ("xid", 1, 79)
        (al,) = st.alerts("h", now - 100, now)
        assert al["state"] == "resolved" and al["evidence"]["threshold"] == 85
        assert st.alerts("h", now - 60, now) == []
        assert st.kills("h", now - 100, now)[0]["pid"] == 4001
        t, facts = st.last_check("h") or (0.0, {})
        assert t == now - 95 and facts["gpus"][0]["ecc"] == "ok"
        con = st._reader()
        assert con.execute("SELECT count(*) FROM hellos").fetchone()[0] == 1


def test_uneven_gpu_rows(tmp_path: Path) -> None:
    """A GPU missing from some samples (fell off the bus) takes the per-GPU path."""
    now = synth.floor_minute(time.time() - 300)
    full = synth.make_samples(now, 20, gpus=3)
    mixed = [
        s if i % 3 else Sample(s.seq, s.t, s.mono, s.columns, s.rows[:2])
        for i, s in enumerate(full)
    ]
    with Store(tmp_path / "h.sqlite") as st:
        for s in mixed:
            st.write("h", s)
        st.flush()
        got = list(st.samples("h", now, now + 60))
        assert [g.rows for g in got] == [s.rows for s in mixed]
        t, _ = st.query("h", 2, "power_w", now, now + 60)
        assert t.size == sum(1 for s in mixed if len(s.rows) == 3)


def test_read_only_missing_file(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="no history"):
        Store(tmp_path / "absent.sqlite", read_only=True)


def _rows_with(s: Sample, gpu: int, pos: int, value: Any) -> Sample:
    rows: list[list[Any]] = [list(r) for r in s.rows]
    rows[gpu][pos] = value
    return Sample(s.seq, s.t, s.mono, s.columns, tuple(tuple(r) for r in rows))


def test_open_minute_rewritten_batch_by_batch_with_changing_value_types(tmp_path: Path) -> None:
    """The open minute is converted incrementally between batches; value types switching
    (int / float / None) and a GPU dropping out mid-minute must all read back exactly."""
    now = synth.floor_minute(time.time() - 300)
    base = synth.make_samples(now, 50, gpus=3)
    power, fan = protocol.ROW_POS["power_w"], protocol.ROW_POS["fan_pct"]
    written = []
    for i, s in enumerate(base):
        if i % 7 == 3:
            s = _rows_with(s, 1, power, 400)  # an int where floats were
        if i % 11 == 5:
            s = _rows_with(s, 2, fan, 55)  # a number where nulls were
        if i % 13 == 6:
            s = _rows_with(s, 0, power, None)
        if i >= 40:  # GPU 2 falls off the bus for the rest of the minute
            s = Sample(s.seq, s.t, s.mono, s.columns, s.rows[:2])
        written.append(s)
    with Store(tmp_path / "h.sqlite") as st:
        for lo, hi in ((0, 10), (10, 25), (25, 40), (40, 50)):
            for s in written[lo:hi]:
                st.write("h", s)
            st.flush()
            got = list(st.samples("h", now, now + 60))
            assert [g.rows for g in got] == [s.rows for s in written[:hi]]
            _t, v = st.query("h", 1, "power_w", now, now + 60)
            want = [np.nan if s.rows[1][power] is None else s.rows[1][power] for s in written[:hi]]
            np.testing.assert_array_equal(v, np.array(want, dtype=np.float64))


def test_values_that_are_not_numbers_are_stored_as_null(tmp_path: Path) -> None:
    now = synth.floor_minute(time.time() - 300)
    base = synth.make_samples(now, 5, gpus=2)
    power = protocol.ROW_POS["power_w"]
    odd = [_rows_with(base[1], 0, power, "n/a"), _rows_with(base[2], 1, power, 10**400)]
    written = [base[0], *odd, *base[3:]]
    with Store(tmp_path / "h.sqlite") as st:
        for s in written:
            st.write("h", s)
        st.flush()
        assert st.errors == 0
        t, v = st.query("h", 0, "power_w", now, now + 60)
        assert t.size == 5 and np.isnan(v[1]) and v[0] == base[0].rows[0][power]
        t, v = st.query("h", 1, "power_w", now, now + 60)
        assert np.isnan(v[2]) and v[4] == base[4].rows[1][power]


def test_new_column_set_after_a_query_is_read(tmp_path: Path) -> None:
    """Column sets are cached by readers; one written after a query must still be found."""
    now = synth.floor_minute(time.time() - 600)
    first = synth.make_samples(now, 60, gpus=2)
    cols = first[0].columns
    keep = [i for i, name in enumerate(cols) if name != "fan_pct"]
    later = [
        Sample(
            s.seq + 100,
            s.t + 60,
            s.mono + 60,
            tuple(cols[i] for i in keep),
            tuple((r[0], *(r[i + 1] for i in keep)) for r in s.rows),
        )
        for s in first
    ]
    with Store(tmp_path / "h.sqlite") as st:
        for s in first:
            st.write("h", s)
        st.flush()
        assert st.query("h", 1, "power_w", now, now + 120)[0].size == 60
        for s in later:
            st.write("h", s)
        st.flush()
        t, v = st.query("h", 1, "power_w", now, now + 120)
        assert t.size == 120 and not np.isnan(v).any()
        _t, fan = st.query("h", 1, "fan_pct", now, now + 120)
        assert fan.size == 60  # only the first minute has the column
        t, _v = st.query("h", 1, "power_w", now, now + 120, max_points=10)
        assert 0 < t.size <= 10
        assert [s.columns for s in st.samples("h", now + 60, now + 120)] == [
            s.columns for s in later
        ]
