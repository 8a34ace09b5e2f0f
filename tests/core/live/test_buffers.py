"""LiveBuffers: ring wrap-around, gaps, nulls, peak-preserving downsampling."""

from __future__ import annotations

import numpy as np
from gpufleet.core.live.buffers import LiveBuffers, downsample_peak
from gpufleet.core.wire.messages import Hello, Procs, Sample, parse_object
from gpufleet_sampler import protocol


def _hello(n_gpus: int = 2, interval: float = 1.0) -> Hello:
    obj = {
        "kind": "hello",
        "protocol": protocol.PROTOCOL_VERSION,
        "sampler_version": "t",
        "run_id": "r1",
        "backend": "sim",
        "interval_s": interval,
        "columns": protocol.hello_columns(),
        "host": {"hostname": "x"},
        "gpus": [
            {"index": i, "uuid": f"GPU-{i}", "name": "Sim", "nominal": {}, "unsupported": {}}
            for i in range(n_gpus)
        ],
    }
    msg = parse_object(obj)
    assert isinstance(msg, Hello)
    return msg


def _sample(hello: Hello, seq: int, t: float, clock: float | None, temp_mem: None = None) -> Sample:
    rows = []
    for g in hello.gpus:
        row: list[float | int | None] = [g.index] + [None] * len(hello.columns)
        row[protocol.ROW_POS["sm_clock_mhz"]] = None if clock is None else clock + g.index
        row[protocol.ROW_POS["temp_mem_c"]] = temp_mem
        rows.append(row)
    msg = parse_object({"kind": "sample", "seq": seq, "t": t, "mono": t, "gpus": rows}, hello)
    assert isinstance(msg, Sample)
    return msg


def test_ring_wraps_and_keeps_the_newest_window() -> None:
    live = LiveBuffers(window_s=60)
    h = _hello()
    live.feed("a", h)
    for i in range(500):
        live.feed("a", _sample(h, i + 1, 1000.0 + i, 1000.0 + i))
    s = live.series("a", 1, "sm_clock_mhz")
    assert len(s) <= 60 + 8
    assert s.t[-1] == 1499.0 and s.v[-1] == 1500.0  # GPU 1 = clock + 1
    assert np.all(np.diff(s.t) > 0)
    span = live.span("a")
    assert span is not None and span[1] == 1499.0 and span[0] == s.t[0]
    latest = live.latest("a")
    assert latest is not None and latest.seq == 500


def test_time_range_nulls_and_gaps() -> None:
    live = LiveBuffers(window_s=600)
    h = _hello(1)
    live.feed("a", h)
    for i in range(100):
        t = 1000.0 + i + (50 if i >= 50 else 0)  # a 50 s outage after 50 samples
        live.feed("a", _sample(h, i + 1, t, 1500.0))
    s = live.series("a", 0, "sm_clock_mhz", 1010.0, 1020.0)
    assert s.t[0] <= 1010.0 and s.t[-1] >= 1020.0 and len(s) == 13
    full = live.series("a", 0, "sm_clock_mhz")
    assert np.isnan(full.v).sum() == 1  # the outage is one NaN, so the line breaks there
    mem = live.series("a", 0, "temp_mem_c")
    assert np.isnan(mem.v).all()  # null stays null, never 0
    assert live.value_at("a", 0, "temp_mem_c", 1005.0) is None
    assert live.value_at("a", 0, "sm_clock_mhz", 1005.2) == 1500.0
    assert live.value_at("a", 0, "sm_clock_mhz", 1075.0) is None  # inside the outage


def test_downsampling_keeps_a_single_spike() -> None:
    t = np.arange(10_000, dtype=np.float64)
    v = np.zeros(10_000)
    v[4321] = 99.0
    tt, vv = downsample_peak(t, v, 200)
    assert len(tt) <= 200 and vv.max() == 99.0 and np.all(np.diff(tt) >= 0)


def test_unknown_host_metric_and_procs() -> None:
    live = LiveBuffers()
    assert len(live.series("nope", 0, "sm_clock_mhz")) == 0
    h = _hello(1)
    live.feed("a", h)
    assert len(live.series("a", 0, "no_such_metric")) == 0
    p = parse_object({"kind": "procs", "seq": 2, "t": 1.0, "procs": []})
    assert isinstance(p, Procs)
    live.feed("a", p)
    assert live.procs("a") == p
    assert live.hello("a") == h and live.gpus("a") == [0]


def test_version_and_series_multi_read_one_snapshot() -> None:
    """A redraw is skipped while a host's version is unchanged; several metrics read in one
    lock hold line up even while another thread feeds the ring."""
    import threading

    live = LiveBuffers(window_s=600)
    h = _hello()
    assert live.version("a") == -1
    live.feed("a", h)
    v0 = live.version("a")
    live.feed("a", _sample(h, 1, 1000.0, 1500.0))
    assert live.version("a") == v0 + 1
    stop = threading.Event()

    def feeder() -> None:
        i = 2
        while not stop.is_set():
            live.feed("a", _sample(h, i, 1000.0 + i, 1500.0))
            i += 1

    th = threading.Thread(target=feeder)
    th.start()
    try:
        for _ in range(200):
            clk, temp = live.series_multi("a", [0, 1], ("sm_clock_mhz", "temp_mem_c"))
            assert len(clk[0]) == len(temp[0]) == len(clk[1]) == len(temp[1])
    finally:
        stop.set()
        th.join()
