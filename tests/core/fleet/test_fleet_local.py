"""Fleet over the local transport: several real sim daemons at once next to misbehaving
samplers, safe kill of a real simulated process with its audit trail, check, slow
subscribers, and the demo fleet."""

from __future__ import annotations

import sys
from pathlib import Path

from gpufleet.core.config import paths
from gpufleet.core.config.hostconfig import HostConfig
from gpufleet.core.fleet.demo import demo_hosts, demo_state_dir
from gpufleet.core.fleet.events import RECONNECTING, STREAMING
from gpufleet.core.fleet.fleet import Fleet
from gpufleet.core.history.audit import read_audit
from gpufleet.core.link.channel import Transport
from gpufleet.core.link.transport import LocalTransport
from gpufleet.core.wire.messages import Procs
from gpufleet_sampler.sim.scenarios import SCENARIOS

from tests.support.paths import SUPPORT
from tests.support.sampler_daemons import Recorder, contiguous, daemon_pid, stop_daemons

FAKE = str(SUPPORT / "fake_sampler.py")


def sim(name: str, scenario: str, seed: int) -> HostConfig:
    return HostConfig(name=name, transport="local", backend="sim", scenario=scenario, seed=seed)


def opener(h: HostConfig) -> Transport:
    """The real sampler, except for hosts named after a fake_sampler.py mode."""
    if h.name in ("garbage", "die"):
        return LocalTransport(h, prefix=[sys.executable, FAKE, h.name])
    return LocalTransport(h)


def reasons(rec: Recorder, host: str) -> list[str]:
    return [e.reason or "" for e in rec.of(host, object) if getattr(e, "state", None)]


def test_good_hosts_keep_streaming_beside_garbage_and_dying_samplers(tmp_path: Path) -> None:
    sd = str(tmp_path / "state")
    good = [sim("a", "healthy-8xa100", 21), sim("b", "power-capped-4090", 22)]
    bad = [HostConfig(name=n, transport="local", backend="sim") for n in ("garbage", "die")]
    fleet = Fleet(good + bad, state_dir=sd, opener=opener)
    rec = Recorder(fleet.subscribe())
    fleet.start()
    try:
        rec.wait(
            lambda: (
                all(len(rec.samples(h.name)) >= 4 for h in good)
                and any("no valid hello" in r for r in reasons(rec, "garbage"))
                and any("simulated crash" in r for r in reasons(rec, "die"))
            ),
            45,
            "good hosts streaming and bad ones explained",
        )
        assert fleet.status("a").state == STREAMING
        assert fleet.status("b").state == STREAMING
        assert fleet.status("garbage").state == RECONNECTING
    finally:
        fleet.stop()
        stop_daemons(good, sd)
    for h in good:
        assert contiguous(rec.seqs(h.name)), h.name


def test_kill_ends_a_real_sim_process_refuses_a_wrong_start_time_and_audits(
    tmp_path: Path,
) -> None:
    sd = str(tmp_path / "state")
    host = sim("shared", "foreign-process", 23)
    fleet = Fleet([host], state_dir=sd)
    rec = Recorder(fleet.subscribe())
    fleet.start()
    try:
        rec.wait(lambda: any(m.procs for m in rec.msgs("shared", Procs)), 30, "a process snapshot")
        proc = next(m for m in rec.msgs("shared", Procs) if m.procs).procs[-1]
        assert proc.start_ticks is not None
        refused = fleet.kill("shared", proc.pid, proc.start_ticks + 1)
        assert refused.result == "refused"
        killed = fleet.kill("shared", proc.pid)  # start time from the latest snapshot
        assert killed.result == "exited", killed.message
        assert fleet.kill("shared", proc.pid).result in ("exited", "not_found")
    finally:
        fleet.stop()
        stop_daemons([host], sd)
    log = read_audit(demo=False)
    assert [e["result"] for e in log[:2]] == ["refused", "exited"]
    assert log[0]["start_ticks"] == proc.start_ticks + 1
    assert log[1]["start_ticks"] == proc.start_ticks
    assert all(e["pid"] == proc.pid and e["host"] == "shared" for e in log)
    assert paths.audit_file().stat().st_mode & 0o777 == 0o600


def test_check_returns_the_samplers_facts(tmp_path: Path) -> None:
    sd = str(tmp_path / "state")
    host = sim("eval", "ecc-xid", 24)
    fleet = Fleet([host], state_dir=sd)
    facts = fleet.check("eval")
    assert facts["kind"] == "check"
    assert facts["gpus"]


def test_a_slow_subscriber_loses_its_oldest_events_not_the_session(tmp_path: Path) -> None:
    sd = str(tmp_path / "state")
    host = sim("fast", "healthy-8xa100", 25)
    fleet = Fleet([host], state_dir=sd)
    slow = fleet.subscribe(maxsize=3)
    rec = Recorder(fleet.subscribe())
    fleet.start()
    try:
        rec.wait(lambda: len(rec.samples("fast")) >= 3, 30, "three samples")
    finally:
        fleet.stop()
        stop_daemons([host], sd)
    assert slow.qsize() == 3
    assert fleet.dropped(slow) >= len(rec.events) - 3 - 1
    assert fleet.dropped(rec.q) == 0


def test_demo_fleet_one_host_per_scenario_all_streaming() -> None:
    hosts = demo_hosts()
    assert sorted(h.scenario for h in hosts) == sorted(SCENARIOS)
    assert len({h.name for h in hosts}) == len(hosts)
    assert all(h.price_per_hour and 1.5 <= h.price_per_hour <= 30 for h in hosts)
    fleet = Fleet(hosts)
    assert fleet.demo
    rec = Recorder(fleet.subscribe())
    fleet.start()
    try:
        rec.wait(
            lambda: all(rec.samples(h.name) for h in hosts), 60, "a sample from every demo host"
        )
    finally:
        fleet.stop()
        stopped = fleet.stop_samplers()
    assert stopped == {h.name: None for h in hosts}
    assert all(daemon_pid(h, str(demo_state_dir())) is None for h in hosts)
    assert str(demo_state_dir()).startswith(str(paths.demo_data_dir()))
