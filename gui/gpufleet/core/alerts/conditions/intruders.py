"""A GPU process that should not be there, told without an allow-list.

``foreign_process`` needs the user's allow-list and ``miner_process`` a known miner's name;
a disguised process has neither. Two signs need no list:

- **a kernel thread's name** (``[kworker/u16:3]``, ``kswapd0``): kernel threads never open a
  GPU, so a process that holds GPU memory under such a name is hiding what it is;
- **a late outsider**: it appeared ``late_s`` or more after the job's first process, and it
  is not of the job's session: another user than the job's, or an NVML entry no process in
  this container accounts for.

Known miners stay with ``miner_process`` (critical); a process the user marked as theirs
(``allowed_processes``, which "This is mine" on the alert adds to) is left alone.
"""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass, field
from typing import Final

from gpufleet_sampler import protocol

from gpufleet.core.alerts.conditions.base import (
    CLEAR,
    GPU,
    HOLD,
    MINER_NAMES,
    GpuView,
    HostState,
    Params,
    condition,
)
from gpufleet.core.alerts.conditions.usage import (
    _allowed,
    _matches,
    proc_names,
)
from gpufleet.core.model.evidence import ProcSuspectEvidence, SuspectProcEvidence
from gpufleet.core.wire.messages import Proc

# What the kernel's own threads are called (``ps`` shows them in brackets).
KERNEL_THREAD: Final = re.compile(
    r"^\[.*\]$|^(kworker|ksoftirqd|kthreadd|kswapd|migration|rcu_|watchdog|kcompactd|khugepaged|"
    r"kblockd|irq/|jbd2|kdevtmpfs|cpuhp|idle_inject|oom_reaper|writeback|kauditd)"
)
KERNEL_NAME: Final = "kernel_name"
LATE_OUTSIDER: Final = "late_outsider"


@dataclass
class _Seen:
    """The host's job as first seen, and when each process was first seen."""

    job_t: float | None = None
    job_user: str | None = None
    noted_t: float | None = None  # the snapshot last noted (one note per snapshot)
    first: dict[tuple[int, int | None], float] = field(default_factory=dict)


def kernel_named(proc: Proc) -> bool:
    names = [proc.name or "", (proc.cmd or "").split(" ")[0]]
    return any(n and KERNEL_THREAD.match(n.strip().lower()) for n in names)


def _mine(name: str, pattern: str) -> bool:
    """A name the user marked as theirs: the very name ("[kworker/u16:3]", whose brackets
    a glob would read as a set), or a glob of it."""
    p = pattern.lower()
    return name == p or fnmatch.fnmatchcase(name, p)


def _seen(h: HostState) -> _Seen:
    memo = h.memo.setdefault("proc_suspect", {})
    st = memo.get(-1)
    if st is None:
        st = memo[-1] = _Seen()
    return st


def _note(st: _Seen, h: HostState, t: float) -> None:
    """Remember the job (the first process holding memory) and first sightings."""
    for procs in h.procs.values():
        for pr in procs:
            st.first.setdefault((pr.pid, pr.start_ticks), t)
            if st.job_t is None and (pr.mem_bytes or 0) > 0 and not kernel_named(pr):
                st.job_t, st.job_user = t, pr.user


def _why(pr: Proc, st: _Seen, p: Params) -> str | None:
    if kernel_named(pr):
        return KERNEL_NAME
    first = st.first.get((pr.pid, pr.start_ticks))
    if st.job_t is None or first is None or first - st.job_t < float(p["late_s"]):
        return None
    other_user = pr.user is not None and st.job_user is not None and pr.user != st.job_user
    if other_user or pr.mapping == protocol.MAP_NOT_HERE:
        return LATE_OUTSIDER
    return None


def _evidence(pr: Proc, why: str, first_t: float | None) -> SuspectProcEvidence:
    return {
        "pid": pr.pid,
        "name": pr.name,
        "user": pr.user,
        "mem_bytes": pr.mem_bytes,
        "sm_pct": pr.sm_pct,
        "cmd": pr.cmd,
        "why": why,
        "first_seen_t": first_t,
    }


@condition("proc_suspect", GPU, ("procs",), {"late_s": 1800.0, "min_mem_bytes": float(64 << 20)})
def proc_suspect(h: HostState, g: GpuView, t: float, p: Params) -> ProcSuspectEvidence | int:
    """A process on this GPU under a kernel thread's name, or a late outsider."""
    st = _seen(h)
    if st.noted_t != h.procs_t:
        st.noted_t = h.procs_t
        _note(st, h, t)
    procs = h.procs.get(g.gpu, ())
    if not h.procs_seen:
        return HOLD
    allowed = _allowed(h, {})
    found = []
    for pr in procs:
        if (pr.mem_bytes or 0) < float(p["min_mem_bytes"]) or _matches(pr, MINER_NAMES):
            continue
        if allowed and any(_mine(n, a) for n in proc_names(pr) for a in allowed):
            continue
        why = _why(pr, st, p)
        if why is not None:
            found.append(_evidence(pr, why, st.first.get((pr.pid, pr.start_ticks))))
    if found:
        return {
            "processes": found,
            "why": found[0]["why"],
            "job_user": st.job_user,
            "job_t": st.job_t,
        }
    return CLEAR
