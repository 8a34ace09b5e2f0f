"""The watchdog refuses to arm for an action it cannot carry out, fails to arm when its state
cannot be written, never runs an action whose "acting" mark cannot be written, says when an
armed action becomes impossible, and never counts its daemon's downtime as idle time.

Real parts: a detached sim daemon and the sampler's own `watchdog` subcommand, a local HTTP
server speaking RunPod's REST shapes, a real write failure (RLIMIT_FSIZE: the EFBIG a full
disk's ENOSPC looks like to the writer) and a removed state directory."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from gpufleet_sampler.watchdog import Watchdog

from tests.remote.watchdog.test_watchdog import REMOTE, _phase, _rows, _start, sd, wd
from tests.support.provider_server import ProviderServer, Reply, serve
from tests.support.waiting import wait_until

__all__ = ["sd"]  # the fixture, shared with test_watchdog


def test_provider_without_credentials_refuses_to_arm(sd: Path) -> None:
    _start(sd)
    reply = wd(sd, "arm", "--idle-s", "1")
    assert not reply["ok"]
    assert "not armed" in reply["message"] and "no provider credentials" in reply["message"]
    assert "RUNPOD_API_KEY" in reply["message"] and "CONTAINER_API_KEY" in reply["message"]
    assert _phase(sd) == "disarmed"


def test_a_key_the_provider_refuses_refuses_to_arm(sd: Path) -> None:
    for server in serve(retired=("/v1",)):
        server.route("GET", "/v2/pods/pod-1", Reply(401, {"error": "unauthorized"}))
        _start(sd, RUNPOD_POD_ID="pod-1", RUNPOD_API_KEY="revoked-key")
        reply = wd(sd, "arm", "--api-url", server.url)
        assert (
            not reply["ok"]
            and "RunPod refused the instance's key (HTTP 401: unauthorized)" in reply["message"]
        )
        assert "revoked-key" not in json.dumps(reply)
        assert [c for c in server.seen if c.method != "GET"] == []  # the check never stops
        assert _phase(sd) == "disarmed"


def test_a_command_that_cannot_run_refuses_and_a_dry_run_arms_saying_so(sd: Path) -> None:
    reply = wd(sd, "arm", "--action", "command", "--command", "no-such-program-xyz --now")
    assert not reply["ok"] and "no-such-program-xyz is not found on PATH" in reply["message"]
    reply = wd(sd, "arm", "--action", "command", "--command", "no-such-program-xyz", "--dry-run")
    assert reply["ok"] and reply["watchdog"]["ready"]["ok"] is False
    assert "not found" in reply["watchdog"]["ready"]["reason"]


def test_arming_fails_with_the_reason_when_the_state_cannot_be_written(tmp_path: Path) -> None:
    # A child whose file writes fail as on a full disk (SIGXFSZ ignored: EFBIG, not a kill).
    code = (
        "import resource, signal, sys\n"
        "from gpufleet_sampler.watchdog import Watchdog\n"
        "signal.signal(signal.SIGXFSZ, signal.SIG_IGN)\n"
        "resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))\n"
        "w = Watchdog(sys.argv[1], env={})\n"
        "try:\n"
        "    w.arm({'action': 'command', 'command': ['true']})\n"
        "except ValueError as e:\n"
        "    print(e); sys.exit(3)\n"
    )
    (tmp_path / "state").mkdir()
    path = tmp_path / "state" / "watchdog-k.json"
    p = subprocess.run(
        [sys.executable, "-c", code, str(path)],
        capture_output=True,
        text=True,
        env=dict(os.environ, PYTHONPATH=str(REMOTE)),
        timeout=60,
    )
    assert p.returncode == 3, p.stderr
    assert "not armed: its state could not be written" in p.stdout
    assert "free space" in p.stdout
    assert list(path.parent.iterdir()) == []  # no temporary left
    assert Watchdog(str(path), env={}).phase == "disarmed"


def test_an_action_whose_acting_mark_cannot_be_written_is_not_run(tmp_path: Path) -> None:
    state = tmp_path / "state"
    state.mkdir()
    record = tmp_path / "ran.txt"
    w = Watchdog(str(state / "wd.json"), {0: 80e9}, env={})
    w.arm({"action": "command", "command": ["touch", str(record)], "idle_s": 1, "grace_s": 1})
    t0 = time.monotonic()
    events = w.observe(_rows(0.0), t0, 1.7e9) + w.observe(_rows(0.0), t0 + 1.5, 1.7e9 + 1.5)
    assert w.phase == "pending"
    shutil.rmtree(state)  # the state dir is gone: the acting mark cannot be written
    events += w.observe(_rows(0.0), t0 + 3.0, 1.7e9 + 3.0)
    w.wait(10)
    assert not record.exists()
    assert w.phase == "done" and w.state["acted"]["ok"] is False
    assert events[-1]["message"].startswith("the action failed: not run: the watchdog could not")


def test_the_daemon_s_downtime_is_not_idle_time(tmp_path: Path) -> None:
    path = tmp_path / "wd.json"
    w = Watchdog(str(path), {0: 80e9}, env={})
    w.arm({"action": "shutdown", "idle_s": 600, "grace_s": 60, "dry_run": True})
    now = time.monotonic()
    w.observe(_rows(0.0), now - 3600.0, 1.7e9)  # idle from an hour ago (mono in the past)
    # The daemon dies right after that sample: its last heartbeat is an hour old.
    st = json.loads(path.read_text())
    st["updated_mono"] = now - 3600.0
    path.write_text(json.dumps(st))
    again = Watchdog(str(path), {0: 80e9}, env={})
    assert again.observe(_rows(0.0), time.monotonic(), 1.7e9 + 3600) == []
    assert again.phase == "watching"  # idle for seconds as far as anyone saw, not an hour


def test_an_armed_watchdog_says_when_its_action_becomes_impossible(tmp_path: Path) -> None:
    server = ProviderServer(retired=("/v1",))
    try:
        server.route(
            "GET", "/v2/pods/pod-2", Reply(200, {"id": "pod-2"}), Reply(403, {"error": "no"})
        )
        env = {"RUNPOD_POD_ID": "pod-2", "RUNPOD_API_KEY": "k2"}
        w = Watchdog(str(tmp_path / "wd.json"), {0: 80e9}, env=env)
        w.arm({"action": "provider", "idle_s": 900, "api_url": server.url})
        assert w.summary()["ready"]["ok"]
        later = time.monotonic() + 1801.0  # past the re-check period
        assert w.observe(_rows(90.0), later, 1.7e9) == []  # the check starts, off the loop
        got: list[dict[str, Any]] = []

        def rechecked() -> bool:
            got.extend(w.observe(_rows(90.0), later + 1, 1.7e9))
            return bool(got)

        wait_until(rechecked, what="the re-check's event")
        (ev,) = got
        assert ev["type"] == "watchdog" and ev["ready"] is False and ev["phase"] == "watching"
        assert ev["message"] == (
            "the action can no longer run: RunPod refused the instance's key (HTTP 403: no): "
            "the stop would fail"
        )
        assert w.summary()["ready"]["ok"] is False
    finally:
        server.close()
