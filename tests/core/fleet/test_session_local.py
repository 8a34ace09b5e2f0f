"""HostSession over the local transport: real sampler daemons (sim backend) as subprocesses,
and a misbehaving stand-in sampler (tests/support/fake_sampler.py) for the failure paths."""

from __future__ import annotations

import os
import queue
import signal
import sys
from pathlib import Path

import pytest
from gpufleet.core.config.hostconfig import HostConfig
from gpufleet.core.fleet.events import RECONNECTING, STOPPED, STREAMING, FleetEvent, HostGap
from gpufleet.core.fleet.session import HostSession
from gpufleet.core.link.transport import LocalTransport
from gpufleet.core.wire.messages import Hello

from tests.support.paths import FAKES, FIXTURES, SUPPORT
from tests.support.sampler_daemons import Recorder, contiguous, daemon_pid, stop_daemons

FAKE = str(SUPPORT / "fake_sampler.py")


def sim_host(name: str, scenario: str = "healthy-8xa100", seed: int = 1) -> HostConfig:
    return HostConfig(name=name, transport="local", backend="sim", scenario=scenario, seed=seed)


def make_session(host: HostConfig, **kw: object) -> tuple[HostSession, Recorder]:
    q: queue.Queue[FleetEvent] = queue.Queue()
    return HostSession(host, q.put_nowait, **kw), Recorder(q)  # type: ignore[arg-type]


def fake_opener(mode: str):  # type: ignore[no-untyped-def]
    return lambda h: LocalTransport(h, prefix=[sys.executable, FAKE, mode])


def test_sim_host_streams_contiguous_samples_and_stops_cleanly(tmp_path: Path) -> None:
    sd = str(tmp_path / "state")
    host = sim_host("a100", seed=11)
    session, rec = make_session(host, state_dir=sd)
    session.start()
    try:
        rec.wait(lambda: len(rec.samples("a100")) >= 3, 30, "three samples")
    finally:
        session.stop()
        stop_daemons([host], sd)
    msgs = rec.msgs("a100")
    assert isinstance(msgs[0], Hello) and msgs[0].run_id
    assert len(msgs[0].gpus) == 8
    assert contiguous(rec.seqs("a100"))
    assert session.last_seq == rec.seqs("a100")[-1]
    assert session.status().state == STOPPED
    assert not session.is_alive()


def test_daemon_killed_reconnects_with_a_new_run_and_records_the_gap(tmp_path: Path) -> None:
    sd = str(tmp_path / "state")
    host = sim_host("h100", "thermal-throttle-h100", seed=12)
    session, rec = make_session(host, state_dir=sd)
    session.start()
    try:
        rec.wait(lambda: len(rec.samples("h100")) >= 2, 30, "two samples")
        first_run = session.run_id
        pid = daemon_pid(host, sd)
        assert pid is not None
        os.kill(pid, signal.SIGKILL)
        rec.wait(lambda: session.run_id not in (None, first_run), 30, "a new run")
        n = len(rec.samples("h100"))
        rec.wait(lambda: len(rec.samples("h100")) >= n + 2, 30, "samples of the new run")
    finally:
        session.stop()
        stop_daemons([host], sd)
    gaps = rec.of("h100", HostGap)
    assert len(gaps) == 1 and "restarted" in gaps[0].reason
    assert any(s.state == RECONNECTING for s in rec.events if getattr(s, "state", None))
    hellos = rec.msgs("h100", Hello)
    assert len({h.run_id for h in hellos}) == 2
    # Within each run the sequence is contiguous; the gap between them is the recorded one.
    seqs = rec.seqs("h100")
    cut = next(
        i for i in range(1, len(seqs)) if seqs[i] != seqs[i - 1] + 1 or seqs[i] <= seqs[i - 1]
    )
    assert contiguous(seqs[:cut]) and contiguous(seqs[cut:])
    assert gaps[0].after_seq == seqs[cut - 1]


def test_garbage_sampler_gives_a_clear_status_and_never_crashes() -> None:
    host = HostConfig(name="junk", transport="local", backend="sim")
    session, rec = make_session(host, opener=fake_opener("garbage"))
    session.start()
    try:
        rec.wait(
            lambda: any(
                getattr(e, "state", None) == RECONNECTING and "no valid hello" in (e.reason or "")
                for e in rec.events
            ),
            30,
            "the garbage to be given up on",
        )
    finally:
        session.stop()
    reasons = [e.reason or "" for e in rec.events if getattr(e, "state", None) == RECONNECTING]
    assert any("bad lines" in r and "not the sampler's protocol" in r for r in reasons), reasons
    assert "this is not JSON" in (session.last_bad_line or "") or "nonsense" in (
        session.last_bad_line or ""
    )
    assert session.status().state == STOPPED


def test_dying_sampler_reports_its_stderr_and_keeps_retrying() -> None:
    host = HostConfig(name="dies", transport="local", backend="sim")
    session, rec = make_session(host, opener=fake_opener("die"))
    session.start()
    try:
        rec.wait(
            lambda: any(
                getattr(e, "state", None) == RECONNECTING and "simulated crash" in (e.reason or "")
                for e in rec.events
            ),
            30,
            "a reconnecting status naming the crash",
        )
    finally:
        session.stop()
    assert rec.samples("dies")  # what it sent before dying was delivered


def test_stalled_stream_is_dropped_and_reattached() -> None:
    host = HostConfig(name="stall", transport="local", backend="sim")
    session, rec = make_session(host, opener=fake_opener("silent"))
    session.start()
    try:
        rec.wait(lambda: session.attaches >= 2, 30, "a second attach after the stall")
    finally:
        session.stop()
    reasons = [e.reason or "" for e in rec.events if getattr(e, "state", None) == RECONNECTING]
    assert any("stalled" in r for r in reasons), reasons
    assert any(getattr(e, "state", None) == STREAMING for e in rec.events)


def test_a_hello_sent_again_in_the_stream_is_news_not_a_restart(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A fresh nvml daemon (the fake NVML under the H200 cost model) sends its settled CPU
    plan as a second hello on the same stream: the session passes it on, keeps its run and
    its numbering, and does not attach again."""
    mp = monkeypatch
    mp.setenv("PYTHONPATH", str(FAKES))
    mp.setenv("GPUFLEET_FAKE_NVML", str(FIXTURES / "nvml" / "h100x8.json"))
    mp.setenv("GPUFLEET_FAKE_NVML_COST", "h200")
    sd = str(tmp_path / "state")
    host = HostConfig(name="h100-fresh", transport="local", backend="nvml")
    session, rec = make_session(host, state_dir=sd)
    session.start()
    try:
        rec.wait(
            lambda: any(h.raw["cpu_budget"]["settled"] for h in rec.msgs("h100-fresh", Hello)),
            60,
            "the settled plan",
        )
        n = len(rec.samples("h100-fresh"))
        rec.wait(lambda: len(rec.samples("h100-fresh")) >= n + 2, 30, "samples after it")
    finally:
        session.stop()
        stop_daemons([host], sd)
    hellos = rec.msgs("h100-fresh", Hello)
    assert [h.raw["cpu_budget"]["settled"] for h in hellos][:2] == [False, True]
    assert len({h.run_id for h in hellos}) == 1
    assert session.attaches == 1 and not rec.of("h100-fresh", HostGap)
    assert contiguous(rec.seqs("h100-fresh"))
