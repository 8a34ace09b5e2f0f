"""A sampler that sends values nothing downstream can hold (a seq of 2**63, a list where a
metric belongs, a time past year 9999...) over a live session next to a healthy host: the
bad lines are counted and reported, and history keeps recording both hosts."""

from __future__ import annotations

import sys
import time
from pathlib import Path

from gpufleet.core.config.hostconfig import HostConfig
from gpufleet.core.fleet.fleet import Fleet, HostMessage
from gpufleet.core.history.store import Store
from gpufleet.core.link.transport import LocalTransport, Transport
from gpufleet.core.wire.messages import Message, Sample

from tests.support.paths import SUPPORT
from tests.support.sampler_daemons import Recorder, stop_daemons

FAKE = str(SUPPORT / "fake_sampler.py")
N_BAD = 6  # fake_sampler.hostile_lines


def opener(h: HostConfig) -> Transport:
    if h.name == "hostile":
        return LocalTransport(h, prefix=[sys.executable, FAKE, "hostile"])
    return LocalTransport(h)


class StoringRecorder(Recorder):
    """Writes every message it drains to the history store, as the app's hub does."""

    def __init__(self, fleet: Fleet, store: Store) -> None:
        super().__init__(fleet.subscribe())
        self.store = store

    def pump(self, timeout: float = 0.1) -> None:
        n = len(self.events)
        super().pump(timeout)
        for ev in self.events[n:]:
            if isinstance(ev, HostMessage):
                msg: Message = ev.msg
                self.store.write(ev.host, msg)


def test_hostile_values_are_bad_lines_and_history_keeps_recording(tmp_path: Path) -> None:
    sd = str(tmp_path / "state")
    good = HostConfig(name="a", transport="local", backend="sim", scenario="healthy-8xa100")
    hostile = HostConfig(name="hostile", transport="local", backend="sim")
    store = Store(tmp_path / "history.sqlite", flush_interval_s=0.2)
    fleet = Fleet([good, hostile], state_dir=sd, opener=opener)
    rec = StoringRecorder(fleet, store)
    fleet.start()
    try:
        rec.wait(
            lambda: len(rec.samples("hostile")) >= 15 and len(rec.samples("a")) >= 3,
            60,
            "samples of both hosts after the hostile lines",
        )
        t_end = time.time()
        session = fleet.session("hostile")
        assert session is not None
        assert session.bad_lines == N_BAD
        reason = fleet.status("hostile").reason or ""
        assert "bad lines" in reason
    finally:
        fleet.stop()
        stop_daemons([good], sd)
    # Every message that reached the store is one the store can hold.
    got = rec.samples("hostile")
    assert all(isinstance(s, Sample) and s.seq < 2**63 for s in got)
    assert [s.seq for s in got] == list(range(1, len(got) + 1))
    store.flush()
    assert store.errors == 0, store.last_error
    stored = list(store.samples("hostile", 0, t_end + 60))
    assert [s.seq for s in stored][:15] == list(range(1, 16))
    assert len(list(store.samples("a", 0, t_end + 60))) >= 3
    store.close()


def test_a_hand_made_unstorable_sample_costs_only_itself(tmp_path: Path) -> None:
    """Defence in depth behind the decoder (a Sample made in code, not parsed): the writer
    thread survives, counts the failure and keeps the other samples of the batch, of this
    host and of the others."""
    cols = ("util_gpu_pct",)
    # t0 is years ago: the default retention's first pass (as the writer starts) would
    # delete these samples whenever they were queued before it.
    store = Store(
        tmp_path / "h.sqlite",
        flush_interval_s=0.2,
        retention_raw_days=1e5,
        retention_rollup_days=1e5,
    )
    t0 = 1_700_000_000.0

    def s(seq: int, i: int, gpu: int = 0) -> Sample:
        return Sample(seq=seq, t=t0 + i, mono=float(i), columns=cols, rows=((gpu, 50.0),))

    for i in range(1, 6):
        store.write("x", s(i, i))
        store.write("y", s(i, i))
    store.write("x", s(2**63, 6))
    store.write("y", s(6, 6, gpu=2**64))
    store.flush()
    assert store.errors >= 1 and store.last_error
    for i in range(7, 10):
        store.write("x", s(i, i))
        store.write("y", s(i, i))
    store.flush()
    for host in ("x", "y"):
        seqs = [m.seq for m in store.samples(host, t0, t0 + 60)]
        assert seqs == [1, 2, 3, 4, 5, 7, 8, 9], (host, seqs)
    store.close()
