"""The whole app as a user starts it: ``gpufleet --demo`` in a subprocess (Qt offscreen), left
running until the demo fleet's history is being written, then SIGTERM: it must quit cleanly
(exit 0) and leave no process behind (the demo's local sampler daemons and their simulated
jobs stop with the app)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from gpufleet.core.config import paths
from gpufleet.core.history.store import Store, StoreError

from tests.support.paths import ROOT


def _processes_with(marker: str) -> list[str]:
    """Processes whose environment carries ``marker`` (our private data dir): every child
    the app started, however detached, inherited it."""
    found = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit() or int(d.name) == os.getpid():
            continue
        try:
            env = (d / "environ").read_bytes()
            cmd = (d / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            state = (d / "stat").read_text().rsplit(")", 1)[-1].split()[0]
        except OSError:
            continue
        if marker.encode() in env and state != "Z":
            found.append(f"{d.name}: {cmd}")
    return found


def _streamed_hosts(history: Path) -> int:
    """Hosts with at least 3 s of samples in the app's history file."""
    if not history.exists():
        return 0
    try:
        store = Store(history, read_only=True)
    except StoreError:
        return 0
    try:
        spans = [store.time_range(h) for h in store.hosts()]
    finally:
        store.close()
    return sum(1 for s in spans if s is not None and s[1] - s[0] >= 3)


def _wait(cond: object, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not cond():  # type: ignore[operator]
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(0.2)  # polling a subprocess's files: no signal to wait on


@pytest.mark.slow
def test_demo_app_starts_streams_and_quits_cleanly_on_sigterm(isolated_dirs: Path) -> None:
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", GPUFLEET_THEME="dark")
    marker = str(paths.data_dir())
    proc = subprocess.Popen(
        [sys.executable, "-m", "gpufleet", "--demo"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    try:
        history = paths.history_file(demo=True)
        # The store holds a few seconds of every demo host: the app is up and streaming.
        _wait(lambda: _streamed_hosts(history) >= 6, 90, "the demo fleet's history")
        assert proc.poll() is None, proc.stdout.read() if proc.stdout else ""
        proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    text = out.decode(errors="replace")
    assert proc.returncode == 0, text
    assert "Traceback" not in text, text
    _wait(lambda: not _processes_with(marker), 15, "the app's children to exit")
    assert not _processes_with(marker)
