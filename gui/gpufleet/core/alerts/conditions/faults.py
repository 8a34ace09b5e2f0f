"""Conditions on faults: uncorrectable ECC errors, row remapping and page retirement, Xid
errors, a GPU lost, memory held by no visible process."""

from __future__ import annotations

from gpufleet.core.alerts.conditions.base import (
    CLEAR,
    EVENT_HOLD_S,
    GPU,
    HOLD,
    XID_CRITICAL,
    Answer,
    ConditionFn,
    GpuView,
    HostState,
    Params,
    condition,
)
from gpufleet.core.alerts.conditions.usage import proc_evidence
from gpufleet.core.model.evidence import (
    EccDbeEvidence,
    GpuLostEvidence,
    MemUnaccountedEvidence,
    XidEvidence,
)

# --- memory errors, Xid, lost GPU ----------------------------------------------------------


@condition("ecc_dbe_increase", GPU, ("sample", "event"), {"hold_s": EVENT_HOLD_S})
def ecc_dbe_increase(h: HostState, g: GpuView, t: float, p: Params) -> EccDbeEvidence | int:
    jump = h.dbe_jump.get(g.gpu)
    if jump is None:
        return CLEAR
    jt, before, after = jump
    if t - jt <= float(p["hold_s"]):
        return {"ecc_dbe_before": before, "ecc_dbe_after": after, "at_t": jt}
    return CLEAR


def _flag(column: str) -> ConditionFn:
    def fn(h: HostState, g: GpuView, t: float, p: Params) -> Answer:
        v = g.v(column)
        if v is None:
            return HOLD
        return {column: v} if v else CLEAR

    return fn


condition("remap_pending", GPU, ("sample",), {})(_flag("remap_pending"))
condition("remap_failed", GPU, ("sample",), {})(_flag("remap_failed"))
condition("retired_pending", GPU, ("sample",), {})(_flag("retired_pending"))


@condition(
    "xid",
    GPU,
    ("sample", "event"),
    {"hold_s": EVENT_HOLD_S, "critical_codes": list(XID_CRITICAL), "ignore_codes": []},
    multi=True,
)
def xid(h: HostState, g: GpuView, t: float, p: Params) -> list[tuple[str, XidEvidence | int]]:
    seen = h.xids.get(g.gpu)
    if not seen:
        return []
    out: list[tuple[str, XidEvidence | int]] = []
    critical = set(p["critical_codes"])
    ignore = set(p["ignore_codes"])
    hold = float(p["hold_s"])
    for code, x in seen.items():
        if code in ignore:
            continue
        if t - x.last_t <= hold:
            ans: XidEvidence | int = {
                "xid": code,
                "count": x.count,
                "first_t": x.first_t,
                "last_t": x.last_t,
                "message": x.message,
                "critical": code in critical,
                "_severity": "critical" if code in critical else "warning",
            }
        else:
            ans = CLEAR
        out.append((str(code), ans))
    return out


@condition("gpu_lost", GPU, ("sample", "event"), {})
def gpu_lost(h: HostState, g: GpuView, t: float, p: Params) -> GpuLostEvidence | int:
    lost = g.v("lost")
    if lost or g.gpu in h.lost_t:
        return {"lost_since_t": h.lost_t.get(g.gpu, t)}
    return CLEAR if lost is not None else HOLD


# --- memory held by nothing visible ------------------------------------------------------


@condition(
    "mem_unaccounted",
    GPU,
    ("sample", "procs"),
    {"min_bytes": float(2 << 30), "min_frac": 0.03, "procs_age_s": 30.0},
)
def mem_unaccounted(h: HostState, g: GpuView, t: float, p: Params) -> MemUnaccountedEvidence | int:
    """Memory in use that no listed process holds (used - sum of the processes' memory):
    another tenant's job, a hidden reservation of the virtualization layer, or a context
    leaked by a killed process. A top cause of out-of-memory errors on rented cards.

    Judged only against a recent process snapshot (the day tier keeps snapshots only when
    the process set changes, so their memory figures go stale)."""
    if not h.procs_seen or h.procs_t is None or t - h.procs_t > float(p["procs_age_s"]):
        return HOLD
    used, total = g.v("mem_used_bytes"), g.nom("mem_total_bytes")
    if used is None or not total:
        return HOLD
    procs = h.procs.get(g.gpu, ())
    if any(pr.mem_bytes is None for pr in procs):
        return HOLD  # a process whose memory the driver does not report
    held = float(sum(int(pr.mem_bytes or 0) for pr in procs))
    hidden = float(used) - held
    threshold = max(float(p["min_bytes"]), float(p["min_frac"]) * float(total))
    if hidden >= threshold:
        return {
            "mem_used_bytes": used,
            "mem_procs_bytes": held,
            "mem_hidden_bytes": hidden,
            "mem_total_bytes": total,
            "hidden_frac": round(hidden / float(total), 4),
            "processes": proc_evidence(list(procs)),
        }
    if hidden < 0.5 * threshold:
        return CLEAR
    return HOLD
