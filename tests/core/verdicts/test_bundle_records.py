"""Evidence bundles hold what happened in their window: a real CLI kill on a demo host (its
audit line, as every kill writes it), the actions run for alerts, the watchdog's events; and
the zip (and a csv/jsonl export to a named file) is private whatever the umask."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import time
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from gpufleet.cli.errors import EXIT_OK
from gpufleet.cli.main import main
from gpufleet.core.config import paths
from gpufleet.core.fleet.demo import demo_host, demo_hosts, demo_state_dir
from gpufleet.core.fleet.fleet import Fleet
from gpufleet.core.history.audit import append_audit
from gpufleet.core.history.store import Store
from gpufleet.core.wire.messages import Procs, parse_object

from tests.support import synth
from tests.support.sampler_daemons import Recorder, stop_daemons

HOST = "a100-shared"


@pytest.fixture
def demo_daemons() -> Iterator[None]:
    yield
    stop_daemons(demo_hosts(), str(demo_state_dir()))


def gpufleet(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gpufleet", *args],
        capture_output=True,
        text=True,
        timeout=90,
        stdin=subprocess.DEVNULL,
        check=False,
    )


def test_a_cli_kill_is_in_the_bundle_with_who_what_when_and_result(
    demo_daemons: None, tmp_path: Path
) -> None:
    host = demo_host("demo:foreign-process")
    assert host is not None
    fleet = Fleet([host])
    rec = Recorder(fleet.subscribe())
    fleet.start()
    try:
        rec.wait(lambda: any(m.procs for m in rec.msgs(host.name, Procs)), 30, "processes")
    finally:
        fleet.stop()
    proc = next(m for m in rec.msgs(host.name, Procs) if m.procs).procs[-1]
    # Some history of the host first: `stream` records it in the demo's store.
    p = gpufleet("stream", f"demo:{HOST}", "--seconds", "3", "--format", "jsonl")
    assert p.returncode == EXIT_OK, p.stderr
    p = gpufleet("kill", f"demo:{HOST}", str(proc.pid), "--yes", "--grace", "5")
    assert p.returncode == EXIT_OK, p.stderr
    out = tmp_path / "evidence.zip"
    old = os.umask(0o022)
    try:
        rc = main(["export", HOST, "--demo", "--since=-10m", "--bundle", str(out)])
    finally:
        os.umask(old)
    assert rc == 0
    assert stat.S_IMODE(out.stat().st_mode) == 0o600
    z = zipfile.ZipFile(out)
    (kill,) = json.loads(z.read("kills.json"))
    assert kill["pid"] == proc.pid and kill["result"] == "exited"
    assert kill["by"] and kill["name"] == proc.name and kill["signal"] == "TERM"
    assert kill["when"].endswith("Z") and abs(kill["t"] - time.time()) < 600
    summary = z.read("summary.txt").decode()
    assert "Kills: 1:" in summary and f"PID {proc.pid}" in summary


def _box_history(seconds: int) -> tuple[float, Store]:
    """A host "box" with ``seconds`` of samples an hour ago, in the real history store
    (returned open, for more writes)."""
    t0 = synth.floor_minute(time.time() - 3600)
    st = Store(paths.history_file())
    st.write("box", synth.make_hello("box", 1))
    for s in synth.make_samples(t0, seconds, gpus=1):
        st.write("box", s)
    return t0, st


def test_actions_and_watchdog_events_are_in_the_bundle(tmp_path: Path) -> None:
    t0, st = _box_history(600)
    with st:
        # As the daemon streams it (gpufleet_sampler.watchdog._event), decoded as received.
        raw = {"kind": "event", "seq": 10**6, "t": t0 + 300, "type": "watchdog", "gpu": None}
        raw.update(code=None, message="idle for 900 s: ...", phase="pending", action="shutdown")
        st.write("box", parse_object(raw))
    # As the rule actions write it (core/alerts/actions.py), one for this host, one other.
    base = {"kind": "action", "rule_id": "idle_billed", "type": "provider", "result": "done"}
    append_audit({**base, "host": "box", "t": t0 + 400}, demo=False)
    append_audit({**base, "host": "other", "t": t0 + 400}, demo=False)
    out = tmp_path / "b.zip"
    assert main(["export", "box", "--since", str(int(t0)), "--bundle", str(out)]) == 0
    z = zipfile.ZipFile(out)
    (action,) = json.loads(z.read("actions.json"))
    assert action["host"] == "box" and action["rule_id"] == "idle_billed"
    (wd,) = json.loads(z.read("watchdog.json"))
    assert wd["phase"] == "pending"
    assert "Watchdog events: 1:" in z.read("summary.txt").decode()


def test_exports_to_a_named_file_are_private(tmp_path: Path) -> None:
    t0, st = _box_history(60)
    st.close()
    old = os.umask(0o022)
    try:
        for fmt in ("csv", "jsonl"):
            f = tmp_path / f"out.{fmt}"
            args = ["export", "box", "--since", str(int(t0)), "--format", fmt, "--out", str(f)]
            assert main(args) == 0
            assert stat.S_IMODE(f.stat().st_mode) == 0o600, fmt
    finally:
        os.umask(old)
