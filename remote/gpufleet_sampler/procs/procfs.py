"""What /proc says about a process: start time (its identity), user, name, command line.

A process is identified by (pid, start ticks): field 22 of ``/proc/PID/stat``, the start time
in clock ticks since boot, compared as an integer (never as a rounded epoch float), together
with the boot id. A reused pid has different start ticks, so a kill keyed by both never hits
the wrong process.

Command lines can carry secrets (``--api-key=...``, tokens in URLs, ``HF_TOKEN=...``); they are
redacted here (by ``gpufleet_sampler.procs.redact``), on the instance, before they are sent, stored,
logged or shown anywhere.

Python 3.8, stdlib only.
"""

import pwd
from typing import Dict, List, Optional, Tuple

from gpufleet_sampler.procs.redact import DEFAULT_CMD_MAX as DEFAULT_CMD_MAX
from gpufleet_sampler.procs.redact import REDACTED as REDACTED
from gpufleet_sampler.procs.redact import redact_argv as redact_argv
from gpufleet_sampler.procs.redact import redact_cmdline as redact_cmdline

PROC = "/proc"
# The cache is pruned to the live pids when it grows past this many entries.
CACHE_MAX = 4096


def _read(path: str) -> Optional[bytes]:
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError:
        # Gone (ENOENT / ESRCH), or hidden from us (EACCES under hidepid): both mean unknown.
        return None


def stat_fields(pid: int) -> Optional[List[str]]:
    """Fields 3.. of /proc/PID/stat (state first), or None when the process is gone.

    The comm field (2) is in parentheses and may itself hold spaces and parentheses, so the
    split is made at the LAST ')'."""
    raw = _read("{}/{}/stat".format(PROC, pid))
    if raw is None:
        return None
    text = raw.decode("utf-8", "replace")
    close = text.rfind(")")
    if close < 0:
        return None
    return text[close + 1 :].split()


def stat_ident(pid: int) -> Optional[Tuple[int, str]]:
    """(start ticks, comm) from one read of /proc/PID/stat; None if gone.

    The comm is what lies between the FIRST '(' and the LAST ')'. exec() keeps the start
    ticks but sets a new comm (the new program's file name), so a changed comm tells a cache
    keyed by (pid, start ticks) that its name and command line are stale."""
    raw = _read("{}/{}/stat".format(PROC, pid))
    if raw is None:
        return None
    text = raw.decode("utf-8", "replace")
    open_, close = text.find("("), text.rfind(")")
    if open_ < 0 or close < open_:
        return None
    fields = text[close + 1 :].split()
    if len(fields) < 20:
        return None
    try:
        return int(fields[19]), text[open_ + 1 : close]
    except ValueError:
        return None


def start_ticks(pid: int) -> Optional[int]:
    """Field 22 of /proc/PID/stat: start time in clock ticks since boot; None if gone."""
    fields = stat_fields(pid)
    # Field n (1-based) is fields[n - 3].
    if fields is None or len(fields) < 20:
        return None
    try:
        return int(fields[19])
    except ValueError:
        return None


def proc_state(pid: int) -> Optional[str]:
    """Field 3 of /proc/PID/stat ("R", "S", "Z" for a zombie, ...); None if gone."""
    fields = stat_fields(pid)
    if not fields:
        return None
    return fields[0]


_boot_id: Optional[str] = None


def boot_id() -> str:
    """The kernel's boot id: with start ticks, it pins a process to one boot."""
    global _boot_id
    if _boot_id is None:
        raw = _read(PROC + "/sys/kernel/random/boot_id")
        _boot_id = raw.decode("ascii", "replace").strip() if raw else ""
    return _boot_id


def proc_uid(pid: int) -> Optional[int]:
    """The real UID from /proc/PID/status."""
    raw = _read("{}/{}/status".format(PROC, pid))
    if raw is None:
        return None
    for line in raw.split(b"\n"):
        if line.startswith(b"Uid:"):
            parts = line.split()
            if len(parts) >= 2:
                try:
                    return int(parts[1])
                except ValueError:
                    return None
    return None


_user_names: Dict[int, str] = {}


def user_name(uid: int) -> str:
    """The login name of a UID, or the number as text when it has no passwd entry (a
    container's user seen from the host)."""
    name = _user_names.get(uid)
    if name is None:
        try:
            name = pwd.getpwuid(uid).pw_name
        except KeyError:
            name = str(uid)
        _user_names[uid] = name
    return name


def proc_user(pid: int) -> Optional[str]:
    """The login name owning the process (real UID), None if the process is gone."""
    uid = proc_uid(pid)
    return None if uid is None else user_name(uid)


def proc_name(pid: int) -> Optional[str]:
    """The process's comm (at most 15 characters, set by the kernel or prctl)."""
    raw = _read("{}/{}/comm".format(PROC, pid))
    if raw is None:
        return None
    return raw.decode("utf-8", "replace").rstrip("\n")


def proc_argv(pid: int) -> Optional[List[str]]:
    """The raw argument list (unredacted: never send it anywhere), None if gone."""
    raw = _read("{}/{}/cmdline".format(PROC, pid))
    if raw is None:
        return None
    parts = raw.split(b"\0")
    if parts and parts[-1] == b"":
        parts.pop()
    return [p.decode("utf-8", "replace") for p in parts]


def proc_cmdline(pid: int, max_len: int = DEFAULT_CMD_MAX) -> Optional[str]:
    """The command line with secrets redacted, cut to ``max_len``; None if gone. A kernel
    thread (empty cmdline) gives ``[comm]`` as ps shows it."""
    argv = proc_argv(pid)
    if argv is None:
        return None
    if not argv:
        name = proc_name(pid)
        return "[{}]".format(name) if name else ""
    return redact_cmdline(argv, max_len)


class ProcInfo(object):
    """Identity and description of one process; immutable once read."""

    __slots__ = ("cmd", "name", "pid", "start_ticks", "user")

    def __init__(
        self,
        pid: int,
        start_ticks: int,
        user: Optional[str],
        name: Optional[str],
        cmd: Optional[str],
    ) -> None:
        self.pid = pid
        self.start_ticks = start_ticks
        self.user = user
        self.name = name
        self.cmd = cmd


class ProcCache(object):
    """User, name and redacted command line per (pid, start ticks).

    A process's user, comm and cmdline rarely change, so reading /proc three times per
    process per snapshot would be waste. Only stat is read each time: its start ticks form
    the key (which notices a reused pid) and its comm notices an exec() (a shell that execs
    python keeps its pid and start ticks, and would otherwise show as "bash" for good).
    An exec of a program with the same file name (python execs python) is not noticed."""

    def __init__(self, cmd_max: int = DEFAULT_CMD_MAX) -> None:
        self._cmd_max = cmd_max
        self._cache: Dict[Tuple[int, int], ProcInfo] = {}

    def lookup(self, pid: int) -> Optional[ProcInfo]:
        """The process's info, or None when it is gone (or hidden from us)."""
        ident = stat_ident(pid)
        if ident is None:
            return None
        ticks, comm = ident
        key = (pid, ticks)
        info = self._cache.get(key)
        if info is None or info.name != comm:
            if info is None and len(self._cache) >= CACHE_MAX:
                self.prune()
            # The comm just read, not /proc/PID/comm again: the same kernel field.
            info = ProcInfo(pid, ticks, proc_user(pid), comm, proc_cmdline(pid, self._cmd_max))
            self._cache[key] = info
        return info

    def prune(self) -> None:
        """Forget processes that are gone or whose pid was reused."""
        for key in list(self._cache):
            if start_ticks(key[0]) != key[1]:
                del self._cache[key]

    def __len__(self) -> int:
        return len(self._cache)


_default_cache: Optional[ProcCache] = None


def proc_info(pid: int) -> Optional[ProcInfo]:
    """``ProcCache.lookup`` on one shared cache, for backends that need no cache of their own."""
    global _default_cache
    if _default_cache is None:
        _default_cache = ProcCache()
    return _default_cache.lookup(pid)
