"""Conditions on who uses a GPU and whether anyone does: the idle billed host, foreign and
mining processes, an idle P-state under a process."""

from __future__ import annotations

import fnmatch
import os

from gpufleet.core.alerts.conditions.base import (
    CLEAR,
    GPU,
    HOLD,
    HOST,
    MINER_NAMES,
    GpuView,
    HostState,
    Params,
    condition,
)
from gpufleet.core.cost.idle import gpu_is_idle
from gpufleet.core.model.evidence import (
    ForeignProcessEvidence,
    IdleBilledEvidence,
    MinerProcessEvidence,
    P8WithProcessEvidence,
    ProcEvidence,
)
from gpufleet.core.wire.messages import Proc

# --- idle while billed -------------------------------------------------------------------


@condition("idle_billed", HOST, ("sample",), {"util_below_pct": 5.0, "mem_below_frac": 0.10})
def idle_billed(h: HostState, g: GpuView, t: float, p: Params) -> IdleBilledEvidence | int:
    rows = h.row_by_gpu
    iu, im = h.pos.get("util_gpu_pct"), h.pos.get("mem_used_bytes")
    if not rows or iu is None:
        return HOLD
    util_max: float = 0.0
    mem_frac_max: float | None = None
    il = h.pos.get("lost")
    for gpu, row in rows.items():
        if il is not None and row[il]:
            continue  # a lost GPU does no work: it counts as idle (and still costs)
        util = row[iu]
        mem = row[im] if im is not None else None
        total = h.nominal.get(gpu, {}).get("mem_total_bytes")
        if not gpu_is_idle(util, mem, total, p):
            return CLEAR  # one busy (or unknown) GPU is enough: the host is working
        util_max = max(util_max, float(util or 0))
        if mem is not None and total:
            mem_frac_max = max(mem_frac_max or 0.0, mem / total)
    return {
        "gpus": len(rows),
        "util_max_pct": util_max,
        "mem_used_max_frac": None if mem_frac_max is None else round(mem_frac_max, 4),
        "util_below_pct": p["util_below_pct"],
        "mem_below_frac": p["mem_below_frac"],
    }


# --- processes -----------------------------------------------------------------------------


def proc_names(proc: Proc) -> list[str]:
    """The names a process is known by: its comm and its command's program name."""
    names = []
    if proc.name:
        names.append(proc.name.lower())
    if proc.cmd:
        first = proc.cmd.split()[0] if proc.cmd.split() else ""
        base = os.path.basename(first).lower()
        if base and base not in names:
            names.append(base)
    return names


def _matches(proc: Proc, patterns: tuple[str, ...] | list[str]) -> bool:
    names = proc_names(proc)
    return any(fnmatch.fnmatchcase(n, pat.lower()) for n in names for pat in patterns)


def proc_evidence(procs: list[Proc]) -> list[ProcEvidence]:
    return [
        {"pid": p.pid, "name": p.name, "user": p.user, "mem_bytes": p.mem_bytes, "cmd": p.cmd}
        for p in procs
    ]


def _allowed(h: HostState, p: Params) -> list[str]:
    allowed = list(p.get("allowed", ()))
    if h.cfg is not None:
        allowed.extend(h.cfg.allowed_processes)
    return allowed


@condition("foreign_process", GPU, ("procs",), {"allowed": []})
def foreign_process(h: HostState, g: GpuView, t: float, p: Params) -> ForeignProcessEvidence | int:
    """A process not in the host's allow-list (only when the host has one)."""
    allowed = _allowed(h, p)
    if not allowed:
        return HOLD
    strays = [
        pr
        for pr in h.procs.get(g.gpu, ())
        if not _matches(pr, allowed) and not _matches(pr, MINER_NAMES)
    ]
    if strays:
        return {"processes": proc_evidence(strays), "allowed": allowed}
    return CLEAR


@condition("miner_process", GPU, ("procs",), {"names": list(MINER_NAMES)})
def miner_process(h: HostState, g: GpuView, t: float, p: Params) -> MinerProcessEvidence | int:
    allowed = _allowed(h, {})
    names = [str(n).lower() for n in p["names"]]
    found = []
    for pr in h.procs.get(g.gpu, ()):
        # Only the name that looks like a miner can be allowed: allowing "python" must not
        # let "python ./xmrig" through.
        hits = [n for n in proc_names(pr) if any(fnmatch.fnmatchcase(n, m) for m in names)]
        stratum = bool(pr.cmd and "stratum+" in pr.cmd)
        allowed_hit = any(fnmatch.fnmatchcase(n, a.lower()) for n in hits for a in allowed)
        if (hits or stratum) and not allowed_hit:
            found.append(pr)
    if found:
        return {"processes": proc_evidence(found)}
    return CLEAR


@condition("p8_with_process", GPU, ("sample", "procs"), {"pstate_min": 8})
def p8_with_process(h: HostState, g: GpuView, t: float, p: Params) -> P8WithProcessEvidence | int:
    """A low-power P-state while a process is working on the GPU (a driver or job problem).

    "Working" = the GPU reports some utilization or a process some SM share: a Jupyter kernel
    that only holds memory legitimately sits in P8."""
    pstate = g.v("pstate")
    if pstate is None or not g.row:
        return HOLD
    procs = h.procs.get(g.gpu, ())
    util = g.v("util_gpu_pct") or 0
    active = util >= 1 or any((pr.sm_pct or 0) >= 1 for pr in procs)
    if pstate >= int(p["pstate_min"]) and procs and active:
        return {
            "pstate": pstate,
            "util_gpu_pct": g.v("util_gpu_pct"),
            "sm_clock_mhz": g.v("sm_clock_mhz"),
            "processes": proc_evidence(list(procs)),
        }
    return CLEAR
