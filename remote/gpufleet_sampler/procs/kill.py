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

The PID is the one of the sampler's own PID namespace (inside a container, the container's
PID, never the host PID NVML reports), and the start time is read from this namespace's /proc.

``--tree`` signals the process's descendants too, and the other members of its process group
when it leads the group or the group's leader is gone (dataloader workers keep GPU memory
after their parent has died); each member is pinned by its own (pid, start ticks) before any
signal is sent. ``tree`` in the result lists them with what became of each.

``--watch S`` then watches NVML for up to S seconds until the GPU memory NVML listed for the
killed processes is released; ``memory`` in the result says how much was freed on which GPU,
or that it was not within S s (a context held by another process).

Python 3.8, stdlib only.
"""

import argparse
import contextlib
import errno
import json
import os
import signal
import subprocess
import sys
import time
from typing import Any, Dict, List, Optional, Set, Tuple

from gpufleet_sampler.procs import holders as gpu_holders
from gpufleet_sampler.procs import procfs

try:
    import pynvml as N

    _NVML_IMPORT_ERROR: Optional[str] = None
except ImportError as _e:  # pragma: no cover - only where nvidia-ml-py is missing
    N = None
    _NVML_IMPORT_ERROR = str(_e)

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
WATCH_POLL_S = 0.2
GIB = float(1 << 30)
_LISTS = ("nvmlDeviceGetComputeRunningProcesses", "nvmlDeviceGetGraphicsRunningProcesses")


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
    pid, ticks = int(args.pid), int(args.start_time)
    tree = bool(getattr(args, "tree", False))
    watch_s = float(getattr(args, "watch", 0.0) or 0.0)
    members = [(pid, ticks)]
    if tree and procfs.start_ticks(pid) == ticks:
        members = tree_members(pid, ticks)
    watcher: Optional[MemoryWatch] = None
    watch_error: Optional[str] = None
    if watch_s > 0:
        try:
            watcher = MemoryWatch([p for p, _ in members])
        except Exception as e:  # watching must never cost the kill itself
            watch_error = "NVML could not be read: {}".format(e or e.__class__.__name__)
    if tree:
        res = kill_tree(members, str(args.signal), float(args.grace), bool(args.sudo))
    else:
        res = kill_process(pid, ticks, str(args.signal), float(args.grace), bool(args.sudo))
    signalled = res["result"] in ("exited", "still_running") or (
        res.get("tree") and res["result"] == "permission_denied"
    )
    if watcher is not None:
        try:
            if signalled:
                res["memory"] = watcher.wait(watch_s)
            else:
                res["memory"] = watcher.skip("nothing was killed")
        except Exception as e:  # the kill's result is reported whatever NVML does
            res["memory"] = watcher.skip("NVML failed while watching: {}".format(e))
        finally:
            watcher.close()
    elif watch_error is not None:
        res["memory"] = {"watched": False, "message": "GPU memory not watched: " + watch_error}
    sys.stdout.write(json.dumps(res) + "\n")
    sys.stdout.flush()
    return EXIT_CODES.get(str(res["result"]), 1)


# ---- the process tree ------------------------------------------------------------------------


def _ancestors() -> Set[int]:
    """The sampler and its ancestors: a tree kill never signals the chain it runs under."""
    out: Set[int] = set()
    pid = os.getpid()
    while pid > 0 and pid not in out:
        out.add(pid)
        st = gpu_holders.stat_tree(pid)
        if st is None:
            break
        pid = st[1]
    return out


def tree_members(pid: int, start_ticks: int) -> List[Tuple[int, int]]:
    """(pid, start ticks) of the process, its descendants, and its process group's other
    members when it leads the group or the group's leader has gone; the process first."""
    table: Dict[int, Tuple[str, int, int, int]] = {}
    for name in os.listdir(procfs.PROC):
        if name.isdigit():
            st = gpu_holders.stat_tree(int(name))
            if st is not None:
                table[int(name)] = st
    root = table.get(pid)
    if root is None or root[3] != start_ticks:
        return [(pid, start_ticks)]
    children: Dict[int, List[int]] = {}
    for p, st in table.items():
        children.setdefault(st[1], []).append(p)
    chosen: List[int] = [pid]
    seen = {pid}
    todo = [pid]
    while todo:
        for c in sorted(children.get(todo.pop(), ())):
            if c not in seen:
                seen.add(c)
                chosen.append(c)
                todo.append(c)
    pgid = root[2]
    leader = table.get(pgid)
    if pgid == pid or leader is None or leader[0] in ("Z", "X"):
        for p in sorted(table):
            if table[p][2] == pgid and p not in seen:
                seen.add(p)
                chosen.append(p)
    never = _ancestors() | {0, 1}
    return [(p, table[p][3]) for p in chosen if p not in never or p == pid]


def kill_tree(
    members: List[Tuple[int, int]], sig_name: str, grace: float, sudo: bool
) -> Dict[str, Any]:
    """Signal every member (each checked by its start ticks), then wait for all to end."""
    root, root_ticks = members[0]
    res = kill_process(root, root_ticks, sig_name, 0.0, sudo)
    first = res["result"]
    if first in ("refused", "permission_denied") or (first == "not_found" and len(members) == 1):
        return res
    sig = SIGNALS[sig_name]
    t0 = time.monotonic()
    report: List[Dict[str, Any]] = [
        {"pid": root, "start_ticks": root_ticks, "result": first, "message": res["message"]}
    ]
    pending: List[Tuple[int, int]] = [(root, root_ticks)] if first == "still_running" else []
    for pid, ticks in members[1:]:
        one = {"pid": pid, "start_ticks": ticks, "name": procfs.proc_name(pid)}
        pidfd = _open_pidfd(pid)
        try:
            if procfs.start_ticks(pid) != ticks:
                one.update(result="not_found", message="ended before the signal")
            else:
                try:
                    _send(pid, sig, pidfd)
                    one.update(result="still_running", message="")
                    pending.append((pid, ticks))
                except ProcessLookupError:
                    one.update(result="not_found", message="ended before the signal")
                except PermissionError:
                    why = _sudo_kill(pid, sig_name) if sudo else "not permitted"
                    if why is None:
                        one.update(result="still_running", message="")
                        pending.append((pid, ticks))
                    else:
                        one.update(result="permission_denied", message=why)
        finally:
            if pidfd is not None:
                os.close(pidfd)
        report.append(one)
    report[0]["name"] = procfs.proc_name(root)
    deadline = t0 + max(0.0, grace)
    while pending:
        pending = [(p, t) for p, t in pending if not _gone(p, t)]
        if not pending or time.monotonic() >= deadline:
            break
        time.sleep(POLL_S)
    left = {p for p, _ in pending}
    for one in report:
        if one["result"] == "still_running" and one["pid"] not in left:
            one["result"] = "exited"
    ended = sum(1 for one in report if one["result"] in ("exited", "not_found"))
    denied = [one for one in report if one["result"] == "permission_denied"]
    if left:
        result = "still_running"
        message = "{} of {} processes still running {:.1f} s after SIG{}{}".format(
            len(left),
            len(report),
            time.monotonic() - t0,
            sig_name,
            "; send KILL to force them" if sig_name != "KILL" else "",
        )
    elif denied:
        result = "permission_denied"
        message = "{} of {} processes ended; {} may not be signalled by this account".format(
            ended, len(report), len(denied)
        )
    else:
        result = "exited"
        message = "process {} and {} more of its tree ended after SIG{}".format(
            root, len(report) - 1, sig_name
        )
    return {
        "pid": root,
        "result": result,
        "signal": sig_name,
        "elapsed_s": round(time.monotonic() - t0, 3),
        "message": message,
        "tree": report,
    }


# ---- watching NVML until the memory is freed ----------------------------------------------------


def _gib(b: int) -> str:
    return "{:.1f} GiB".format(b / GIB)


class MemoryWatch(object):
    """What NVML says the processes about to be killed hold, and whether it goes away.

    Read before the signal: NVML's entries matched to the processes here (gpu_holders), so
    that inside a container the host PIDs to watch for are known. After it: NVML is polled
    until none of those entries is listed any more, or the time is up."""

    def __init__(self, pids: List[int]) -> None:
        self.why: Optional[str] = None
        self.handles: List[Tuple[int, Any]] = []
        self.tracked: List[Tuple[int, int, int]] = []  # (gpu, host pid, bytes)
        self.before: Dict[int, Optional[int]] = {}
        self._init = False
        if N is None:
            self.why = "NVML is not available here ({})".format(_NVML_IMPORT_ERROR)
            return
        try:
            N.nvmlInit()
            self._init = True
            count = int(N.nvmlDeviceGetCount())
            self.handles = [(i, N.nvmlDeviceGetHandleByIndex(i)) for i in range(count)]
        except N.NVMLError as e:
            self.why = "NVML could not be read: {}".format(e)
            return
        gpu_of_minor: Dict[int, int] = {}
        entries: List[gpu_holders.Entry] = []
        for i, h in self.handles:
            with contextlib.suppress(N.NVMLError):
                gpu_of_minor[int(N.nvmlDeviceGetMinorNumber(h))] = i
            for host_pid, mem in self._listed(h):
                entries.append(gpu_holders.Entry(i, host_pid, mem, "C", None))
        found = gpu_holders.scan()
        where = gpu_holders.detect_where()
        rows = gpu_holders.match(entries, found.holders, gpu_of_minor, where["own_pid_namespace"])
        mine = set(pids)
        gpus: Set[int] = set()
        for r in rows:
            if r.pid in mine:
                gpus.add(r.gpu)
                if r.entry is not None and r.host_pid is not None:
                    self.tracked.append((r.gpu, r.host_pid, r.entry.mem or 0))
        self.before = {i: self._used(h) for i, h in self.handles if i in gpus}

    def _listed(self, h: Any) -> List[Tuple[int, int]]:
        out: Dict[int, int] = {}
        for base in _LISTS:
            for name in (base + "_v3", base + "_v2", base):
                fn = getattr(N, name, None)
                if fn is None:
                    continue
                try:
                    plist = fn(h)
                except (N.NVMLError, getattr(N, "NVMLLibraryMismatchError", N.NVMLError)):
                    continue
                for p in plist or ():
                    out[int(p.pid)] = max(out.get(int(p.pid), 0), int(p.usedGpuMemory or 0))
                break
        return sorted(out.items())

    def _used(self, h: Any) -> Optional[int]:
        try:
            return int(N.nvmlDeviceGetMemoryInfo(h, version=N.nvmlMemory_v2).used)
        except (N.NVMLError, AttributeError, TypeError):
            try:
                return int(N.nvmlDeviceGetMemoryInfo(h).used)
            except N.NVMLError:
                return None

    def skip(self, why: str) -> Dict[str, Any]:
        return {"watched": False, "message": "GPU memory not watched: {}".format(why)}

    def wait(self, seconds: float) -> Dict[str, Any]:
        """Poll NVML until the tracked entries are gone or ``seconds`` have passed."""
        if self.why is not None:
            return self.skip(self.why)
        t0 = time.monotonic()
        handles = dict(self.handles)
        left = list(self.tracked)
        while True:
            listed = {i: {p for p, _ in self._listed(handles[i])} for i in {g for g, _, _ in left}}
            left = [(g, p, b) for g, p, b in left if p in listed.get(g, set())]
            if not left or time.monotonic() - t0 >= seconds or not self.tracked:
                break
            time.sleep(WATCH_POLL_S)
        waited = round(time.monotonic() - t0, 3)
        after = {i: self._used(handles[i]) for i in self.before}
        gpus = [
            {"gpu": i, "before_bytes": self.before[i], "after_bytes": after[i]}
            for i in sorted(self.before)
        ]
        released = sum(b for g, p, b in self.tracked if (g, p, b) not in left)
        out: Dict[str, Any] = {
            "watched": True,
            "waited_s": waited,
            "released_bytes": released,
            "gpus": gpus,
            "still_held": [{"gpu": g, "host_pid": p, "mem_bytes": b} for g, p, b in left],
        }
        if not self.tracked:
            out["freed"] = None
            out["message"] = "NVML listed no GPU memory for these processes"
        elif left:
            out["freed"] = False
            out["message"] = (
                "GPU memory still held {:.0f} s after the kill: {} (a context held by another "
                "process?)".format(
                    seconds, ", ".join("{} on GPU {}".format(_gib(b), g) for g, _, b in left)
                )
            )
        else:
            out["freed"] = True
            per: Dict[int, int] = {}
            for g, _, b in self.tracked:
                per[g] = per.get(g, 0) + b
            out["message"] = "GPU memory freed within {:.1f} s: {}".format(
                waited, ", ".join("{} on GPU {}".format(_gib(b), g) for g, b in sorted(per.items()))
            )
        return out

    def close(self) -> None:
        if self._init:
            with contextlib.suppress(N.NVMLError):
                N.nvmlShutdown()
