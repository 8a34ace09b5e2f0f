"""Processes a test leaves behind: sampler daemons (detached in a session of their own, so no
longer our children, and alive for their 24 h idle timeout) and this process's own children.

conftest takes a snapshot before and after each test and notes what is new (a process a
session or module fixture keeps for later tests is new to its first test, and gone by the
end); at the end of the run, after every fixture is torn down, what is still alive of those
is a leak: the run names the test that started each, fails, and stops them (each by its id:
they are ours). Ours: a child of this process, or a sampler process whose environment
carries this run's mark (SESSION_ENV, inherited by what it starts) or whose command line
names this run's temporary folder (a daemon started over SSH), never another user's or
another test run's on a shared machine. One pass over /proc's cmdlines per snapshot (a few
ms).
"""

from __future__ import annotations

import contextlib
import os
import signal
import time

# A sampler started by any path: ``python -m gpufleet_sampler``, the zipapp
# (gpufleet-sampler-*.pyz) or a frozen laptop bundle's ``_sampler``.
_MARKS = (b"gpufleet_sampler", b"gpufleet-sampler", b"\0_sampler\0")
# Set in this process's environment by conftest: every process it starts inherits it.
SESSION_ENV = "GPUFLEET_TEST_SESSION"


def _cmdline(pid: int) -> bytes:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read()
    except OSError:
        return b""


def _started(pid: int) -> int | None:
    """When the process started (clock ticks since boot): with the pid, who it is (a pid is
    used again, a command line changes at exec); None once it is gone or a zombie."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
    except OSError:
        return None
    if len(fields) < 20 or fields[0] in (b"Z", b"X"):
        return None
    return int(fields[19])


def _alive(pid: int) -> bool:
    """Running or asleep, not a zombie waiting to be reaped (that one is gone)."""
    return _started(pid) is not None


def command(pid: int) -> str:
    return _cmdline(pid).replace(b"\0", b" ").decode(errors="replace").strip() or "?"


def _children() -> set[int]:
    out: set[int] = set()
    try:
        tids = os.listdir(f"/proc/{os.getpid()}/task")
    except OSError:
        return out
    for tid in tids:
        try:
            with open(f"/proc/{os.getpid()}/task/{tid}/children", encoding="ascii") as f:
                out.update(int(p) for p in f.read().split())
        except (OSError, ValueError):
            continue
    return out


def _ours(pid: int, cmd: bytes, tmp: bytes) -> bool:
    if tmp and tmp in cmd:
        return True
    mark = f"{SESSION_ENV}={os.environ.get(SESSION_ENV, '')}".encode()
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            return mark in f.read().split(b"\0")
    except OSError:
        return False  # another user's


def snapshot(tmp: str = "") -> dict[int, int]:
    """pid -> start time of every sampler process of this run (see _ours; ``tmp``: this
    run's temporary folder) and of every child of ours."""
    found: dict[int, bytes] = {}
    tmp_b = tmp.encode()
    for name in os.listdir("/proc"):
        if name.isdigit():
            cmd = _cmdline(int(name))
            if any(m in cmd for m in _MARKS) and _ours(int(name), cmd, tmp_b):
                found[int(name)] = cmd
    out = {}
    for pid in set(found) | _children():
        started = _started(pid)
        if started is not None:
            out[pid] = started
    return out


def still_alive(seen: dict[int, int], grace_s: float) -> list[int]:
    """Those of ``seen`` (pid -> start time) still alive, after up to ``grace_s`` for what
    was asked to stop to finish stopping."""
    deadline = time.monotonic() + grace_s
    while True:
        alive = sorted(p for p, started in seen.items() if _started(p) == started)
        if not alive or time.monotonic() > deadline:
            return alive
        time.sleep(0.05)


def stop(pids: list[int], grace_s: float = 5.0) -> None:
    """SIGTERM each, then SIGKILL what is still alive after ``grace_s``."""
    for pid in pids:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + grace_s
    while any(_alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    for pid in pids:
        if _alive(pid):
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
