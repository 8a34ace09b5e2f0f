"""``kill --pid P --start-time T``: signal a process only if it is still the one the user saw.

The identity is (pid, start ticks: field 22 of /proc/PID/stat), compared as integers. A pid
whose start ticks differ was reused by another process and is refused. Where the kernel and
Python offer pidfds (Linux 5.3, Python 3.9), the process is pinned by a pidfd before its start
time is checked and signalled through it, so not even a pid reused in between can be hit.

Prints one JSON object::

    {"pid": P, "result": "exited"|"still_running"|"refused"|"not_found"|"permission_denied",
     "signal": "TERM", "elapsed_s": 1.2, "message": "..."}

and exits 0 exited, 5 refused, 6 permission denied, 7 still running, 8 not found (the numbers
of gui/gpufleet/cli/errors.py). TERM is sent, then the process is watched for ``--grace``
seconds; KILL is sent only when asked for with ``--signal KILL``. On EPERM, ``--sudo`` retries
with ``sudo -n kill`` (never prompting); without it the answer is permission_denied.

Python 3.8, stdlib only.
"""

import argparse
import errno
import json
import os
import signal
import subprocess
import sys
import time
from typing import Any, Dict, Optional

from gpufleet_sampler import procfs

EXIT_OK = 0
EXIT_REFUSED = 5
EXIT_PERMISSION = 6
EXIT_STILL_RUNNING = 7
EXIT_NOT_FOUND = 8

EXIT_CODES = {
    "exited": EXIT_OK,
    "refused": EXIT_REFUSED,
    "permission_denied": EXIT_PERMISSION,
    "still_running": EXIT_STILL_RUNNING,
    "not_found": EXIT_NOT_FOUND,
}
SIGNALS = {"TERM": signal.SIGTERM, "KILL": signal.SIGKILL, "INT": signal.SIGINT}
POLL_S = 0.05


def _gone(pid: int, ticks: int) -> bool:
    """The process has exited: no such pid, another process under it, or a zombie (it has
    ended; only its parent's wait is missing)."""
    fields = procfs.stat_fields(pid)
    if not fields or len(fields) < 20:
        return True
    if fields[19] != str(ticks):
        return True
    return fields[0] in ("Z", "X", "x")


def _owner(pid: int) -> str:
    user = procfs.proc_user(pid)
    return "user {}".format(user) if user else "another user"


def _open_pidfd(pid: int) -> Optional[int]:
    opener = getattr(os, "pidfd_open", None)
    if opener is None:
        return None
    try:
        return int(opener(pid))
    except OSError:
        # ESRCH is answered by the start-time check below; ENOSYS etc.: plain kill.
        return None


def _send(pid: int, sig: int, pidfd: Optional[int]) -> None:
    sender = getattr(signal, "pidfd_send_signal", None)
    if pidfd is not None and sender is not None:
        sender(pidfd, sig)
    else:
        os.kill(pid, sig)


def _sudo_kill(pid: int, name: str) -> Optional[str]:
    """Send the signal with ``sudo -n``. None on success, else why not (one line)."""
    try:
        p = subprocess.run(
            ["sudo", "-n", "kill", "-s", name, str(pid)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            timeout=10,
        )
    except FileNotFoundError:
        return "sudo is not installed on this host"
    except OSError as e:
        return "sudo could not be run: {}".format(e.strerror or e)
    except subprocess.TimeoutExpired:
        return "sudo -n did not answer within 10 s"
    if p.returncode == 0:
        return None
    err = p.stderr.decode("utf-8", "replace").strip().splitlines()
    text = err[-1] if err else "exit status {}".format(p.returncode)
    low = text.lower()
    if "password" in low or "terminal" in low:
        return "sudo needs a password here (sudo -n refused: {}); allow NOPASSWD for kill".format(
            text
        )
    return "sudo kill failed: {}".format(text)


def kill_process(
    pid: int, start_ticks: int, sig_name: str, grace: float, sudo: bool
) -> Dict[str, Any]:
    """Do the kill; returns the result object (see the module docstring)."""
    res: Dict[str, Any] = {
        "pid": pid,
        "result": "refused",
        "signal": sig_name,
        "elapsed_s": 0.0,
        "message": "",
    }
    sig = SIGNALS.get(sig_name)
    if sig is None:
        res["message"] = "unknown signal {!r}".format(sig_name)
        return res
    # 0 and negative pids address process groups (-1: every process we may signal).
    if pid <= 1:
        res["message"] = "refusing to signal pid {}".format(pid)
        return res
    if pid == os.getpid():
        res["message"] = "refusing to signal the sampler itself"
        return res
    pidfd = _open_pidfd(pid)
    try:
        actual = procfs.start_ticks(pid)
        if actual is None:
            res["result"] = "not_found"
            res["message"] = "no process {} (it has already exited)".format(pid)
            return res
        if actual != start_ticks:
            res["message"] = (
                "process {} started at tick {}, not {}: the pid was reused by another "
                "process; nothing sent".format(pid, actual, start_ticks)
            )
            return res
        if procfs.proc_state(pid) in ("Z", "X"):
            res["result"] = "exited"
            res["message"] = "process {} had already exited (zombie)".format(pid)
            return res
        t0 = time.monotonic()
        try:
            _send(pid, sig, pidfd)
        except ProcessLookupError:
            res["result"] = "not_found"
            res["message"] = "process {} exited before the signal".format(pid)
            return res
        except PermissionError:
            if not sudo:
                res["result"] = "permission_denied"
                res["message"] = (
                    "process {} belongs to {}; this account may not signal it (the host is "
                    "not set up to use sudo)".format(pid, _owner(pid))
                )
                return res
            # Check again right before handing the pid to sudo: sudo cannot use our pidfd.
            if procfs.start_ticks(pid) != start_ticks:
                res["result"] = "not_found"
                res["message"] = "process {} exited before the signal".format(pid)
                return res
            why = _sudo_kill(pid, sig_name)
            if why is not None:
                res["result"] = "permission_denied"
                res["message"] = "process {} belongs to {}: {}".format(pid, _owner(pid), why)
                return res
        except OSError as e:
            res["result"] = "not_found" if e.errno == errno.ESRCH else "permission_denied"
            res["message"] = "signal failed: {}".format(e.strerror or e)
            return res
        deadline = t0 + max(0.0, grace)
        while True:
            if _gone(pid, start_ticks):
                res["result"] = "exited"
                res["message"] = "process {} ended after SIG{}".format(pid, sig_name)
                break
            now = time.monotonic()
            if now >= deadline:
                res["result"] = "still_running"
                res["message"] = "process {} is still running {:.1f} s after SIG{}{}".format(
                    pid,
                    now - t0,
                    sig_name,
                    "; send KILL to force it" if sig_name != "KILL" else "",
                )
                break
            time.sleep(min(POLL_S, deadline - now))
        res["elapsed_s"] = round(time.monotonic() - t0, 3)
        return res
    finally:
        if pidfd is not None:
            os.close(pidfd)


def run(args: argparse.Namespace) -> int:
    """The ``kill`` subcommand."""
    res = kill_process(
        int(args.pid), int(args.start_time), str(args.signal), float(args.grace), bool(args.sudo)
    )
    sys.stdout.write(json.dumps(res) + "\n")
    sys.stdout.flush()
    return EXIT_CODES.get(str(res["result"]), 1)
