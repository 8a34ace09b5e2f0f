"""The on-instance watchdog: a real detached daemon on the crashed-idle scenario, no client
attached, arms, warns, and acts exactly once after the grace period; cancelled it does not
act; a provider stop reaches a local server with the instance's own scoped key; its state
survives a daemon restart."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from gpufleet_sampler import protocol, state_dir
from gpufleet_sampler.daemon import client
from gpufleet_sampler.watchdog import Watchdog, host_idle, parse_config

from tests.support.paths import REMOTE
from tests.support.provider_server import ProviderServer, Reply, serve
from tests.support.waiting import wait_until

SCENARIO = "crashed-idle"
# The job dies 180 scenario-seconds in: at this scale 1.8 s after the daemon starts.
SCALE = "0.01"


def _env(**extra: str) -> dict[str, str]:
    env = dict(os.environ, PYTHONPATH=str(REMOTE), GPUFLEET_SIM_TIME_SCALE=SCALE)
    for k in ("RUNPOD_POD_ID", "RUNPOD_API_KEY", "CONTAINER_ID", "CONTAINER_API_KEY"):
        env.pop(k, None)
    env.update(extra)
    return env


def _common(sd: Path) -> list[str]:
    return ["--backend", "sim", "--scenario", SCENARIO, "--interval", "0.1", "--state-dir", str(sd)]


def sampler(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gpufleet_sampler", *args],
        capture_output=True,
        text=True,
        env=env or _env(),
        timeout=60,
    )


def wd(sd: Path, *args: str) -> dict[str, Any]:
    r = sampler("watchdog", *_common(sd), *args)
    assert r.stdout, r.stderr
    return json.loads(r.stdout)


def _paths(sd: Path) -> state_dir.Paths:
    return state_dir.Paths(str(sd), state_dir.daemon_key("sim", SCENARIO, 0))


def _phase(sd: Path) -> str:
    return str(wd(sd, "status").get("watchdog", {}).get("phase"))


@pytest.fixture
def sd(tmp_path: Path) -> Iterator[Path]:
    d = tmp_path / "state"
    d.mkdir(mode=0o700)
    yield d
    client.request(_paths(d), {"op": "stop"})
    wait_until(lambda: client.request(_paths(d), {"op": "status"}) is None, what="daemon stop")


def _events(sd: Path) -> list[dict[str, Any]]:
    """Everything the daemon's ring holds, through a real attach from seq 0."""
    p = subprocess.Popen(
        [sys.executable, "-m", "gpufleet_sampler", "attach", *_common(sd), "--from-seq", "0"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env=_env(),
    )
    assert p.stdout is not None
    out: list[dict[str, Any]] = []
    last = client.request(_paths(sd), {"op": "status"})["last_seq"]
    while True:
        m = json.loads(p.stdout.readline())
        out.append(m)
        if m.get("seq", 0) >= last and m["kind"] != "hello":
            break
    p.stdin.close()  # type: ignore[union-attr]
    p.wait(10)
    return out


def _start(sd: Path, **env: str) -> None:
    r = sampler("daemon", *_common(sd), env=_env(**env))
    assert r.returncode == 0, r.stderr


def test_arms_warns_and_acts_exactly_once_with_no_client(sd: Path, tmp_path: Path) -> None:
    record = tmp_path / "acted.txt"
    _start(sd)
    cmd = f"sh -c 'echo \"$GPUFLEET_WATCHDOG_ALERT\" >> {record}'"
    reply = wd(
        sd, "arm", "--action", "command", "--command", cmd, "--idle-s", "1", "--grace-s", "1"
    )
    assert reply["ok"] and reply["daemon"] and reply["watchdog"]["phase"] == "watching"
    wait_until(lambda: _phase(sd) == "done", what="the watchdog to act")
    time.sleep(1.0)  # still idle: it must not act again
    lines = record.read_text().splitlines()
    assert len(lines) == 1 and lines[0].startswith("idle_billed@")
    st = wd(sd, "status")["watchdog"]
    assert st["acted"]["ok"] and st["acted"]["outcome"] == "exit status 0"
    events = _events(sd)
    assert events[0]["kind"] == "hello" and events[0]["watchdog"]["phase"] == "done"
    wds = [e for e in events if e["kind"] == "event" and e["type"] == "watchdog"]
    assert [e["phase"] for e in wds] == ["pending", "done"]
    assert "unless cancelled" in wds[0]["message"] and wds[0]["deadline_t"] > wds[0]["t"]
    assert wds[1]["t"] >= wds[0]["deadline_t"] - 0.2  # acted after the grace period
    assert len({e["seq"] for e in events[1:]}) == len(events) - 1  # one sequence, no reuse
    # A restarted daemon keeps "done": the action never runs twice.
    client.request(_paths(sd), {"op": "stop"})
    wait_until(lambda: client.request(_paths(sd), {"op": "status"}) is None, what="daemon stop")
    _start(sd)
    time.sleep(1.5)
    assert _phase(sd) == "done" and len(record.read_text().splitlines()) == 1


def test_cancelled_does_not_act(sd: Path, tmp_path: Path) -> None:
    record = tmp_path / "acted.txt"
    _start(sd)
    cmd = f"touch {record}"
    wd(sd, "arm", "--action", "command", "--command", cmd, "--idle-s", "1", "--grace-s", "3")
    wait_until(lambda: _phase(sd) == "pending", what="the warning")
    reply = wd(sd, "cancel")
    assert reply["ok"] and reply["watchdog"]["phase"] == "cancelled"
    time.sleep(4.0)  # past the deadline
    assert not record.exists() and _phase(sd) == "cancelled"
    again = wd(sd, "cancel")
    assert not again["ok"] and "nothing to cancel" in again["message"]
    # The stream says so at once: a laptop's warning ends with it, not at the deadline.
    wds = [e for e in _events(sd) if e["kind"] == "event" and e["type"] == "watchdog"]
    assert [e["phase"] for e in wds] == ["pending", "cancelled"]
    assert "nothing will be done" in wds[1]["message"]


def test_provider_stop_uses_the_instance_scoped_key(sd: Path) -> None:
    server: ProviderServer
    # RunPod as it is since 2026-11-15: REST v2 answers, REST v1 is 410 Gone.
    for server in serve(retired=("/v1",)):
        pod = {"id": "pod-abc123", "status": "RUNNING"}
        server.route("POST", "/v2/pods/pod-abc123/action", Reply(200, dict(pod, status="EXITED")))
        server.route("GET", "/v2/pods/pod-abc123", Reply(200, pod))
        _start(sd, RUNPOD_POD_ID="pod-abc123", RUNPOD_API_KEY="pod-scoped-key")
        reply = wd(sd, "arm", "--idle-s", "1", "--grace-s", "0.5", "--api-url", server.url)
        assert reply["watchdog"]["action"] == "provider"
        assert reply["watchdog"]["ready"]["ok"]  # checked with a harmless read first
        wait_until(lambda: _phase(sd) == "done", what="the provider stop")
        (call,) = server.calls("POST", "/v2/pods/pod-abc123/action")
        assert call.body == {"action": "stop"}
        assert call.headers["authorization"] == "Bearer pod-scoped-key"
        assert [s.path for s in server.seen if s.path.startswith("/v1/")] == []
        acted = wd(sd, "status")["watchdog"]["acted"]
        assert acted["ok"] and acted["outcome"] == "HTTP 200"
        assert "pod-scoped-key" not in json.dumps(wd(sd, "status"))


def test_dry_run_records_and_arming_survives_a_restart(sd: Path) -> None:
    # Armed with no daemon running: written to the state file, taken up by the next daemon.
    reply = wd(sd, "arm", "--action", "shutdown", "--idle-s", "1", "--grace-s", "0", "--dry-run")
    assert reply["ok"] and not reply["daemon"]
    _start(sd)
    wait_until(lambda: _phase(sd) == "done", what="the dry run")
    acted = wd(sd, "status")["watchdog"]["acted"]
    assert acted["dry_run"] and acted["outcome"] == "dry run: would power off (shutdown -h now)"


def test_bad_config_and_idle_definition() -> None:
    with pytest.raises(ValueError, match="needs a command"):
        parse_config({"action": "command"})
    with pytest.raises(ValueError, match="`grace_s` must be a number"):
        parse_config({"grace_s": -1})
    total = {0: 80e9, 1: 80e9}
    idle = [0, 1.0] + [None] * 14 + [2e9]
    busy_mem = [1, 0.0] + [None] * 14 + [20e9]
    assert host_idle([idle + [None] * 18], total) is True
    assert host_idle([idle + [None] * 18, busy_mem + [None] * 18], total) is False
    assert host_idle([], total) is None


def test_a_pending_action_survives_a_daemon_restart(sd: Path, tmp_path: Path) -> None:
    record = tmp_path / "acted.txt"
    # The job dies at once, so the restarted simulation is idle from its first sample too
    # (a real GPU stays idle across a daemon restart).
    idle_env = {"GPUFLEET_SIM_TIME_SCALE": "0.0001"}
    _start(sd, **idle_env)
    cmd = f"sh -c 'echo once >> {record}'"
    wd(sd, "arm", "--action", "command", "--command", cmd, "--idle-s", "1", "--grace-s", "4")
    wait_until(lambda: _phase(sd) == "pending", what="the warning")
    before = wd(sd, "status")["watchdog"]
    client.request(_paths(sd), {"op": "stop"})
    wait_until(lambda: client.request(_paths(sd), {"op": "status"}) is None, what="daemon stop")
    assert _phase(sd) == "pending"  # read from the state file, no daemon running
    _start(sd, **idle_env)
    wait_until(lambda: _phase(sd) == "done", what="the action after the restart")
    assert record.read_text().splitlines() == ["once"]
    after = wd(sd, "status")["watchdog"]
    assert after["acted"]["alert"] == before["alert"]  # the same alert, not a new one
    assert after["acted"]["t"] >= before["deadline_t"] - 0.5  # its deadline kept


def _rows(util: float) -> list[list[Any]]:
    r: list[Any] = [0] + [None] * len(protocol.COLUMN_NAMES)
    r[protocol.ROW_POS["util_gpu_pct"]] = util
    r[protocol.ROW_POS["mem_used_bytes"]] = 1e9
    return [r]


def test_pending_stands_down_only_after_working_for_clear_s(tmp_path: Path) -> None:
    w = Watchdog(str(tmp_path / "wd.json"), {0: 80e9}, env={})
    w.arm({"action": "shutdown", "idle_s": 10, "grace_s": 100, "clear_s": 30, "dry_run": True})
    events = []
    for t in range(0, 12):
        events += w.observe(_rows(0.0), 1000.0 + t, 1.7e9 + t)
    assert w.phase == "pending" and [e["phase"] for e in events] == ["pending"]
    assert w.observe(_rows(95.0), 1012.0, 1.7e9 + 12) == []  # one busy sample: still pending
    assert w.observe(_rows(0.0), 1013.0, 1.7e9 + 13) == [] and w.phase == "pending"
    out = []
    for t in range(14, 50):
        out += w.observe(_rows(95.0), 1000.0 + t, 1.7e9 + t)
    assert w.phase == "watching"
    assert [e["message"] for e in out] == ["the host is working again: nothing done"]
    # A state file reloaded by a restarted daemon carries on where it was.
    again = Watchdog(str(tmp_path / "wd.json"), {0: 80e9}, env={})
    assert again.phase == "watching" and again.summary()["action"] == "shutdown"
