"""The Fleet over real OpenSSH sshd on 127.0.0.1, with the sampler deployed as the zipapp
and run on its sim backend: several hosts at once, a 20 s link outage backfilled without a
gap, a host without python3, a host that never answers, and safe kill with its audit trail.

Each sshd gives its sessions a HOME of the test's own (``SetEnv HOME=...``), so the upload
(``~/.cache/gpufleet/gpufleet-sampler-<hash>.pyz``) and the daemons' state stay in tmp_path.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from gpufleet.core.config.hostconfig import HostConfig
from gpufleet.core.fleet.events import FAILED, RECONNECTING, STREAMING, HostGap, HostStatus
from gpufleet.core.fleet.fleet import Fleet
from gpufleet.core.fleet.session import BACKOFF_CAP_NETWORK_S
from gpufleet.core.history.audit import read_audit
from gpufleet.core.link.zipapp import sampler_zipapp_bytes
from gpufleet.core.wire.messages import Procs

from tests.support.sampler_daemons import Recorder, contiguous, stop_daemons

OUTAGE_S = 20.0


@pytest.fixture
def remote(
    tmp_path: Path, sshd_factory: Callable[..., Any], ssh_host_config: Callable[..., HostConfig]
) -> Iterator[Callable[..., HostConfig]]:
    """``remote(name, scenario, seed, env=, via=, known=)``: a sim host behind an sshd of its
    own (``env``: more variables for its sessions; ``via``: makes a proxy in front of it)."""
    made: list[tuple[HostConfig, str]] = []

    def make(
        name: str,
        scenario: str = "healthy-8xa100",
        seed: int = 0,
        env: dict[str, str] | None = None,
        via: Callable[[Any], Any] | None = None,
        known: bool = True,
    ) -> HostConfig:
        home = tmp_path / f"home-{name}"
        home.mkdir(mode=0o700)
        # One SetEnv line: sshd keeps only the first one.
        setenv = " ".join(f"{k}={v}" for k, v in {"HOME": str(home), **(env or {})}.items())
        server = sshd_factory(extra_config=(f"SetEnv {setenv}",))
        overrides: dict[str, Any] = {"backend": "sim", "scenario": scenario, "seed": seed}
        if via is not None:
            proxy = via(server)
            h = ssh_host_config(
                server, name, known_as_port=proxy.port, port=proxy.port, **overrides
            )
        else:
            h = ssh_host_config(server, name, known=known, **overrides)
        made.append((h, str(home / ".cache" / "gpufleet")))
        return h

    yield make
    for h, state in made:
        stop_daemons([h], state)


def process_state(pid: int) -> str | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return None
    return stat[stat.rindex(")") + 2]


def states(rec: Recorder, host: str) -> list[HostStatus]:
    return rec.of(host, HostStatus)


@pytest.mark.slow
def test_many_hosts_outage_no_python_and_silent_host_at_once(
    remote: Callable[..., HostConfig],
    tcp_proxy: Callable[..., Any],
    silent_server: tuple[str, int],
    tmp_path: Path,
) -> None:
    proxies: list[Any] = []

    def via_proxy(server: Any) -> Any:
        proxies.append(tcp_proxy(server))
        return proxies[-1]

    good = [
        remote("a100", "healthy-8xa100", 31),
        remote("h100", "thermal-throttle-h100", 32),
        remote("flaky", "power-capped-4090", 33, via=via_proxy),
    ]
    nopy = remote("nopython", env={"PATH": "/nonexistent"})
    silent = HostConfig(
        name="silent", host=silent_server[0], port=silent_server[1], user="root", auth="key"
    )
    fleet = Fleet([*good, nopy, silent], connect_timeout=4.0)
    rec = Recorder(fleet.subscribe())
    fleet.start()
    # The retry delays the flaky host's session waits between attempts (its stop event's
    # waits: nothing else waits on it here), to check the backoff's cap without a clock.
    waits = _RecordedWaits()
    flaky = fleet.session("flaky")
    assert flaky is not None
    flaky._stop = waits
    try:
        rec.wait(
            lambda: all(len(rec.samples(h.name)) >= 3 for h in good),
            60,
            "three samples from each good host",
        )
        # Cut the link to one host for 20 s (a blackhole: nothing flows, nothing is refused).
        proxies[0].cut()
        cut_at = time.monotonic()
        n_cut = {h.name: len(rec.samples(h.name)) for h in good}
        rec.wait(lambda: time.monotonic() - cut_at >= OUTAGE_S, OUTAGE_S + 5, "the outage")
        assert fleet.status("flaky").state == RECONNECTING
        for h in good[:2]:  # the others kept streaming through it
            assert len(rec.samples(h.name)) >= n_cut[h.name] + OUTAGE_S / 2
        proxies[0].restore()
        restored_wall = time.time()
        rec.wait(
            lambda: (
                fleet.status("flaky").state == STREAMING
                and any(s.t > restored_wall for s in rec.samples("flaky"))
            ),
            30,
            "the host behind the proxy to stream live again",
        )
        n_back = len(rec.samples("flaky"))
        rec.wait(lambda: len(rec.samples("flaky")) >= n_back + 2, 20, "two more live samples")
    finally:
        fleet.stop()
    # It retried through the outage, never waiting longer than the cap between attempts
    # (the wait above for it to stream again is a hang guard only: how long a reconnect
    # takes depends on this machine's speed).
    assert waits.timeouts and max(waits.timeouts) <= BACKOFF_CAP_NETWORK_S, waits.timeouts
    # No sample lost: the outage was backfilled from the daemon's ring.
    for h in good:
        seqs = rec.seqs(h.name)
        assert contiguous(seqs), (h.name, seqs)
        assert not rec.of(h.name, HostGap), h.name
    flaky_samples = rec.samples("flaky")
    assert flaky_samples[-1].t - flaky_samples[0].t >= OUTAGE_S
    # No python3: failed for good, with a message that says what to do.
    st = [s for s in states(rec, "nopython") if s.state == FAILED]
    assert st and st[-1].kind == "no_python", states(rec, "nopython")
    assert "python3 (>= 3.8) not found on nopython" in (st[-1].reason or "")
    assert "apt-get install python3" in (st[-1].reason or "")
    # The host that never answers: retried, with the reason in plain words.
    silent_reasons = [s.reason or "" for s in states(rec, "silent") if s.state == RECONNECTING]
    assert any("no answer" in r or "timed out" in r for r in silent_reasons), silent_reasons


def test_kill_over_ssh_ends_a_sim_process_refuses_a_wrong_start_and_audits(
    remote: Callable[..., HostConfig],
) -> None:
    host = remote("shared", "foreign-process", 34)
    fleet = Fleet([host])
    rec = Recorder(fleet.subscribe())
    fleet.start()
    try:
        rec.wait(lambda: any(m.procs for m in rec.msgs("shared", Procs)), 60, "processes")
        proc = next(m for m in rec.msgs("shared", Procs) if m.procs).procs[-1]
        assert proc.start_ticks is not None
        wrong = fleet.kill("shared", proc.pid, proc.start_ticks - 1)
        right = fleet.kill("shared", proc.pid, proc.start_ticks, "TERM", 5.0)
    finally:
        fleet.stop()
    assert wrong.result == "refused", wrong
    assert right.result == "exited", right
    # The process is really gone (this test's "remote" is this machine): no such PID, or a
    # zombie its parent (the sim daemon) has not reaped yet.
    assert process_state(proc.pid) in (None, "Z")
    log = read_audit()
    assert [(e["pid"], e["result"]) for e in log] == [
        (proc.pid, "refused"),
        (proc.pid, "exited"),
    ]


def test_deploy_uploads_once_and_retires_older_samplers(
    remote: Callable[..., HostConfig], tmp_path: Path
) -> None:
    from gpufleet.core.link.transport import SshTransport

    host = remote("fresh")
    cache = tmp_path / "home-fresh" / ".cache" / "gpufleet"
    cache.mkdir(parents=True)
    old = cache / "gpufleet-sampler-0000000000000000.pyz"
    old.write_bytes(b"an older sampler")
    name, data = sampler_zipapp_bytes()
    t = SshTransport.open(host)
    try:
        prefix = t.ensure_sampler()
    finally:
        t.close()
    assert prefix[-1] == str(cache / name)
    assert (cache / name).read_bytes() == data
    assert not old.exists()
    mtime = (cache / name).stat().st_mtime_ns
    t = SshTransport.open(host)
    try:
        assert t.ensure_sampler() == prefix
    finally:
        t.close()
    assert (cache / name).stat().st_mtime_ns == mtime  # present: not uploaded again
    assert oct(cache.stat().st_mode & 0o777) == oct(0o700)


def test_removing_a_host_with_undeploy_stops_its_daemon_and_deletes_the_upload(
    remote: Callable[..., HostConfig], tmp_path: Path
) -> None:
    from gpufleet_sampler.state_dir import read_state

    host = remote("gone", "crashed-idle", 36)
    cache = tmp_path / "home-gone" / ".cache" / "gpufleet"
    fleet = Fleet([host])
    rec = Recorder(fleet.subscribe())
    fleet.start()
    try:
        rec.wait(lambda: len(rec.samples("gone")) >= 1, 60, "a sample")
        assert read_state("sim", "crashed-idle", 36, str(cache)) is not None
        fleet.remove_host("gone", undeploy=True)
    finally:
        fleet.stop()
    assert fleet.hosts() == []
    assert read_state("sim", "crashed-idle", 36, str(cache)) is None
    assert not list(cache.glob("gpufleet-sampler-*.pyz"))


def test_cli_stream_and_check_over_ssh_with_a_configured_host(
    remote: Callable[..., HostConfig],
) -> None:
    """The CLI on a host from config.toml: an unknown key is refused without a terminal
    (exit 4, one line), ``--accept-new`` streams; then check and kill's error paths."""
    import os
    import subprocess

    from gpufleet.cli.errors import EXIT_HOSTKEY, EXIT_NOT_FOUND
    from gpufleet.core.config.configfile import AppConfig, save_config

    host = remote("cfg", "power-capped-4090", 37, known=False)
    save_config(AppConfig(hosts=[host]))

    def gpufleet(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "gpufleet", *args],
            capture_output=True,
            text=True,
            timeout=120,
            stdin=subprocess.DEVNULL,
            env=dict(os.environ),
            check=False,
        )

    p = gpufleet("stream", "cfg", "--seconds", "20")
    assert p.returncode == EXIT_HOSTKEY, p.stderr
    assert "--accept-new" in p.stderr and "Traceback" not in p.stderr
    assert len(p.stderr.strip().splitlines()) == 1, p.stderr
    p = gpufleet("stream", "cfg", "--seconds", "4", "--accept-new", "--no-record")
    assert p.returncode == 0, p.stderr
    assert '"kind":"hello"' in p.stdout.splitlines()[0]
    assert '"kind":"sample"' in p.stdout
    p = gpufleet("check", "cfg", "--format", "json")  # the key is known now
    assert p.returncode in (0, 1), p.stderr
    assert '"facts"' in p.stdout
    p = gpufleet("kill", "cfg", "999999999", "--yes")
    assert p.returncode == EXIT_NOT_FOUND, p.stderr


def test_watching_per_link_values_reaches_the_daemon_over_ssh_and_outlives_a_restart(
    remote: Callable[..., HostConfig], tmp_path: Path
) -> None:
    """The per-link view asks over the attach's own SSH channel (a line on its stdin, no new
    process on the host); a daemon started afresh while the watch lasts is asked at attach."""
    from gpufleet_sampler import state_dir
    from gpufleet_sampler.daemon import client

    host = remote("links", "healthy-8xa100", 40)
    cache = tmp_path / "home-links" / ".cache" / "gpufleet"
    p = state_dir.Paths(str(cache), state_dir.daemon_key("sim", "healthy-8xa100", 40))

    def status() -> dict[str, Any]:
        return client.request(p, {"op": "status"}) or {}

    fleet = Fleet([host])
    rec = Recorder(fleet.subscribe())
    fleet.start()
    try:
        rec.wait(lambda: len(rec.samples("links")) >= 1, 60, "a sample")
        first = status()
        assert first["links_watched_s"] == 0.0
        assert fleet.watch_links("links", 300.0) is True
        rec.wait(lambda: status().get("links_watched_s", 0) > 250, 20, "the watch")
        assert status()["pid"] == first["pid"]  # the same daemon, asked in its stream
        assert client.request(p, {"op": "stop"}) is not None
        rec.wait(
            lambda: (
                status().get("pid") not in (None, first["pid"])
                and status().get("links_watched_s", 0) > 200
            ),
            60,
            "a new daemon asked at attach",
        )
    finally:
        fleet.stop()
        # The daemon started afresh during the test is the test's: stop it (the run-end check
        # found it left sampling).
        assert fleet.stop_samplers(["links"]) == {"links": None}
    assert fleet.watch_links("no-such-host", 60.0) is False


class _RecordedWaits(threading.Event):
    """An event that records the timeout of every wait on it (behaving as any event)."""

    def __init__(self) -> None:
        super().__init__()
        self.timeouts: list[float] = []

    def wait(self, timeout: float | None = None) -> bool:
        if timeout is not None:
            self.timeouts.append(timeout)
        return super().wait(timeout)
