"""The keeper: an armed watchdog survives its daemon being killed (SIGKILL, the OOM killer, a
crash), because a second small process starts the daemon again, and the daemon starts the
keeper again when it is the one killed.

Why not a crontab entry: the instances gpufleet watches are mostly containers (RunPod pods,
vast.ai instances, Docker images) where no cron daemon runs, so an entry would be written
and silently never run; systemd (user units, ``Restart=``) is absent there too, and both
need what a user may not have. Two processes that watch each other need only Python and the
state dir, work the same as root or not, in a container or on a VM, and go away by
themselves when the watchdog is disarmed.

- While its watchdog is armed (watching, pending, cancelled, acting), the daemon checks
  every ``KEEP_S`` that a keeper holds ``keeper-<key>.lock`` and starts one (detached, in a
  session of its own, so one signal to a process group does not take both) when none does.
- The keeper, every ``KEEP_S``: exits once the watchdog is not armed (disarmed, done) or its
  state file is gone; starts the daemon, with the arguments and the environment the daemon
  had (the instance's credentials come along), when no daemon holds the daemon lock. The
  restarted daemon loads the watchdog's state: the same alert, its deadline, and the time
  no daemon watched is not counted as idle time (``watchdog._skip_downtime``).
- A deliberate stop (``stop``, the socket's ``{"op": "stop"}``) ends the keeper first, so a
  stop is not undone.

Not covered: both processes killed at once, and a reboot (neither runs until the laptop
connects again; the boot id changed, so the watch starts over then).

Python 3.8, stdlib only.
"""

import argparse
import contextlib
import errno
import json
import os
import signal
import time
from typing import TYPE_CHECKING, List, Optional

from gpufleet_sampler.daemon import spawn
from gpufleet_sampler.state_dir import Paths, lock_holder_of, paths_for

if TYPE_CHECKING:
    import subprocess

KEEP_S = 10.0  # how long a killed daemon (or keeper) may stay dead
ARMED = ("watching", "pending", "cancelled", "acting")


def keep_s() -> float:
    """``KEEP_S``, or ``$GPUFLEET_WATCHDOG_KEEP_S`` (tests: a shorter wait)."""
    try:
        v = float(os.environ.get("GPUFLEET_WATCHDOG_KEEP_S") or KEEP_S)
    except ValueError:
        return KEEP_S
    return v if v > 0 else KEEP_S


def lock_path(p: Paths) -> str:
    return os.path.join(p.dir, "keeper-{}.lock".format(p.key))


def holder(p: Paths) -> Optional[int]:
    """The running keeper's pid, or None."""
    return lock_holder_of(lock_path(p))


def _armed(p: Paths) -> bool:
    try:
        with open(os.path.join(p.dir, "watchdog-{}.json".format(p.key)), encoding="utf-8") as f:
            st = json.load(f)
    except (OSError, ValueError):
        return False
    return isinstance(st, dict) and st.get("phase") in ARMED


def keeper_argv(args: argparse.Namespace, p: Paths) -> List[str]:
    return [*spawn.sampler_prefix(), "keeper", *spawn.daemon_options(args, p)]


class Ensurer(object):
    """The daemon's side: a keeper runs while the watchdog is armed (checked every KEEP_S)."""

    def __init__(self, args: argparse.Namespace, p: Paths) -> None:
        self.args = args
        self.p = p
        self.every = keep_s()
        self.next_mono = 0.0
        self.child: Optional["subprocess.Popen[bytes]"] = None

    def tick(self, armed: bool, mono: float) -> Optional[str]:
        """Starts a keeper when none runs; what happened, for the daemon's log, or None."""
        if not armed or mono < self.next_mono:
            return None
        self.next_mono = mono + self.every
        if self.child is not None and self.child.poll() is not None:
            self.child = None  # reaped: a killed keeper is no zombie of ours
        if holder(self.p) is not None:
            return None
        try:
            self.child = spawn.detached(keeper_argv(self.args, self.p), self.p.log)
        except OSError as e:
            return "cannot start the watchdog's keeper: {}".format(e)
        return "started the watchdog's keeper"

    def stop(self) -> None:
        """A deliberate stop: the keeper must not start the daemon again."""
        pid = holder(self.p)
        if pid is not None and pid > 0:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGTERM)


def _take(path: str) -> Optional[int]:
    import fcntl

    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as e:
        os.close(fd)
        if e.errno in (errno.EAGAIN, errno.EACCES):
            return None
        raise
    os.ftruncate(fd, 0)
    os.pwrite(fd, str(os.getpid()).encode("ascii"), 0)
    return fd


def _log(message: str) -> None:
    print("gpufleet_sampler keeper {}: {}".format(os.getpid(), message), flush=True)


def run(args: argparse.Namespace) -> int:
    """The ``keeper`` subcommand (started by the daemon, not by hand)."""
    p = paths_for(args)
    fd = _take(lock_path(p))
    if fd is None:
        return 0  # another keeper watches this daemon
    every = keep_s()
    child: Optional["subprocess.Popen[bytes]"] = None
    try:
        while _armed(p):
            if child is not None and child.poll() is not None:
                child = None  # reaped: a killed daemon is no zombie of ours
            if lock_holder_of(p.lock) is None:
                try:
                    child = spawn.detached(spawn.daemon_argv(args, p), p.log)
                    _log("the daemon was gone: started it again (pid {})".format(child.pid))
                except OSError as e:
                    _log("the daemon was gone and cannot be started: {}".format(e))
            time.sleep(every)
        _log("the watchdog is no longer armed: exiting")
        return 0
    finally:
        os.close(fd)
