"""One gpufleet instance per data dir: the window or ``gpufleet serve`` holds an
flock on ``instance.lock`` in the data dir it records to, for its whole life.

Two instances on one data dir would each run the rule engine on the same fleet: every
webhook sent twice, every rule action and provider stop run twice, two writers appending
the same samples to one history file. The second one refuses, with who holds the lock
(which command, its pid, since when) and what to do. It does not fall back to a read-only
window: a window that silently neither notifies nor acts looks exactly like one that does,
and the user would trust the wrong one; the one already open is where to look.

The demo fleet records under its own data dir, so a demo window and a real one do not
exclude each other. The lock goes with the process (the kernel drops an flock when its file
is closed, a kill -9 included): no stale lock to clean up. Where flock does not exist
(Windows) no lock is taken.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from gpufleet.core.config import paths
from gpufleet.core.text import instance as text

try:
    import fcntl

    LOCKS_SUPPORTED = True
except ImportError:  # pragma: no cover - Windows
    LOCKS_SUPPORTED = False

LOCK_NAME = "instance.lock"


class InstanceBusy(Exception):
    """Another gpufleet holds the data dir; the message says which and what to do."""


ROLE_WINDOW = text.ROLE_WINDOW
ROLE_SERVE = text.ROLE_SERVE


class InstanceLock:
    """The data dir's instance lock, held from ``acquire`` to ``release`` (or exit).
    ``role`` is ROLE_WINDOW or ROLE_SERVE: what the one refused is told holds it."""

    def __init__(self, data_dir: Path, role: str) -> None:
        self.path = Path(data_dir) / LOCK_NAME
        self.role = role
        self._fd: int | None = None

    def acquire(self) -> InstanceLock:
        """Take the lock, or raise InstanceBusy naming the holder."""
        if not LOCKS_SUPPORTED or self._fd is not None:
            return self
        paths.ensure_private_dir(self.path.parent)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, paths.PRIVATE_FILE)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            holder = _read_holder(fd)
            os.close(fd)
            raise InstanceBusy(busy_message(self.path.parent, holder)) from None
        me = {"pid": os.getpid(), "role": self.role, "since": time.time()}
        os.ftruncate(fd, 0)
        os.pwrite(fd, json.dumps(me).encode(), 0)
        self._fd = fd
        return self

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> InstanceLock:
        return self.acquire()

    def __exit__(self, *_exc: object) -> None:
        self.release()


def _read_holder(fd: int) -> dict[str, object]:
    try:
        data = json.loads(os.pread(fd, 4096, 0) or b"{}")
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def holder(data_dir: Path) -> dict[str, object] | None:
    """What the holder of ``data_dir``'s lock wrote (pid, role, since), or None while nobody
    holds it. For commands that do not take the lock but must not do what its holder does
    (``stream`` recording the samples the window records already)."""
    if not LOCKS_SUPPORTED:
        return None
    try:
        fd = os.open(Path(data_dir) / LOCK_NAME, os.O_RDONLY)
    except OSError:  # no lock file: no instance has ever run on this data dir
        return None
    try:
        try:
            # A shared lock, dropped at once: it is in a starting window's way only for the
            # microseconds of the probe.
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError:
            return _read_holder(fd)
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)


def holder_name(holder: dict[str, object]) -> str:
    """The holder in words: "the gpufleet window (pid 4242, since 2026-12-01 09:14)"."""
    since = holder.get("since")
    stamp = (
        time.strftime("%Y-%m-%d %H:%M", time.localtime(since))
        if isinstance(since, int | float)
        else None
    )
    role = holder.get("role")
    return text.holder_name(role if isinstance(role, str) else None, holder.get("pid"), stamp)


def busy_message(data_dir: Path, holder: dict[str, object]) -> str:
    """Why this instance does not start: who holds ``data_dir`` and what to do."""
    return text.busy_message(str(data_dir), holder_name(holder))


def fleet_data_dir(demo: bool) -> Path:
    """The data dir a fleet records to (the demo's own, or the real one)."""
    return paths.demo_data_dir() if demo else paths.data_dir()


def for_fleet(demo: bool, role: str) -> InstanceLock:
    """The lock of the data dir a fleet records to."""
    return InstanceLock(fleet_data_dir(demo), role)
