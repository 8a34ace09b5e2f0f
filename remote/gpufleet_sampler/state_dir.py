"""Where a sampler daemon keeps its files, and how a daemon is named: the state dir
(default ``~/.cache/gpufleet``, mode 0700), the per-daemon key, lock, socket, state and log
paths, and whether a daemon holds its lock.

Shared with the laptop (which stops only the local demo daemons it started). Python 3.8,
stdlib only.
"""

import argparse
import hashlib
import json
import os
import re
import stat
from typing import Any, Dict, Optional

try:
    import fcntl

    LOCKS_SUPPORTED = True
except ImportError:  # Windows: the laptop app can still name a daemon's files
    LOCKS_SUPPORTED = False

DEFAULT_STATE_DIR = "~/.cache/gpufleet"


# make_backend's default scenario: "--scenario" omitted and given explicitly are one daemon.
SIM_DEFAULT_SCENARIO = "healthy-8xa100"


def daemon_key(backend: str, scenario: Optional[str], seed: int) -> str:
    """The identity of a daemon: backend, and for sim the scenario and seed."""
    if backend == "sim":
        raw = "sim-{}-{}".format(scenario or SIM_DEFAULT_SCENARIO, seed)
    else:
        raw = backend
    return re.sub(r"[^A-Za-z0-9._-]", "_", raw)[:80]


class Paths(object):
    """The files of one daemon in one state dir."""

    def __init__(self, state_dir: str, key: str) -> None:
        self.dir = state_dir
        self.key = key
        self.lock = os.path.join(state_dir, "daemon-{}.lock".format(key))
        short = hashlib.sha1(key.encode("utf-8")).hexdigest()[:12]
        self.sock = os.path.join(state_dir, "d-{}.sock".format(short))
        self.state = os.path.join(state_dir, "daemon-{}.json".format(key))
        self.log = os.path.join(state_dir, "daemon-{}.log".format(key))


def resolve_state_dir(arg: Optional[str]) -> str:
    """The state dir, created 0700 (and tightened to 0700 if it is ours and looser)."""
    path = os.path.abspath(os.path.expanduser(arg or DEFAULT_STATE_DIR))
    os.makedirs(path, mode=0o700, exist_ok=True)
    st = os.stat(path)
    if st.st_uid == os.getuid() and stat.S_IMODE(st.st_mode) != 0o700:
        os.chmod(path, 0o700)
    return path


def paths_for(args: argparse.Namespace) -> Paths:
    sd = resolve_state_dir(getattr(args, "state_dir", None))
    return Paths(sd, daemon_key(args.backend, args.scenario, args.seed))


def sock_addr(path: str) -> str:
    """sun_path holds 107 bytes: a longer path is reached relative to its directory (this
    process's cwd is its own; the daemon and the attach client are separate processes)."""
    if len(path.encode("utf-8")) < 100:
        return path
    os.chdir(os.path.dirname(path))
    return os.path.basename(path)


def read_state(
    backend: str, scenario: Optional[str] = None, seed: int = 0, state_dir: Optional[str] = None
) -> Optional[Dict[str, Any]]:
    """The state of the daemon for this key when one is running (for ``check``: Xids seen),
    else None. Never raises on a missing or damaged file."""
    try:
        p = Paths(resolve_state_dir(state_dir), daemon_key(backend, scenario, seed))
    except OSError:
        return None
    if lock_holder(p) is None:
        return None
    try:
        with open(p.state, "r", encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def lock_holder(p: Paths) -> Optional[int]:
    """The pid of the running daemon (it holds the lock), or None."""
    return lock_holder_of(p.lock)


def lock_holder_of(path: str) -> Optional[int]:
    """The pid written in a lock file whose writer holds its flock (-1: unreadable), or
    None when nobody holds it."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError:
            data = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
            return int(data) if data.isdigit() else -1
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)
