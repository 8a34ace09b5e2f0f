"""Host-level conditions (the link, the sampler, the watchdog, the budget), memory against
its own capacity, and the generic metric thresholds of the user's own rules."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from gpufleet_sampler import protocol

from gpufleet.core.alerts.conditions.base import (
    CLEAR,
    GPU,
    HOLD,
    HOST,
    GpuView,
    HostState,
    Params,
    condition,
    row_value,
)
from gpufleet.core.model.evidence import (
    BudgetEvidence,
    HostUnreachableEvidence,
    MemNearlyFullEvidence,
    MetricAboveEvidence,
    MetricBelowEvidence,
    SamplerRestartedEvidence,
    SamplerStalledEvidence,
    WatchdogEvidence,
)

# --- host-level: link, sampler, budget -----------------------------------------------------

UNREACHABLE_STATES: Final = frozenset({"reconnecting", "failed"})


@condition("host_unreachable", HOST, ("status", "tick"), {})
def host_unreachable(
    h: HostState, g: GpuView, t: float, p: Params
) -> HostUnreachableEvidence | int:
    if h.status in UNREACHABLE_STATES:
        return {"status": h.status, "reason": h.status_reason, "since_t": h.status_since}
    if h.status in ("streaming", "stopped"):
        return CLEAR
    return HOLD


@condition("sampler_stalled", HOST, ("tick", "sample"), {"stall_s": 30.0, "stall_intervals": 5.0})
def sampler_stalled(h: HostState, g: GpuView, t: float, p: Params) -> SamplerStalledEvidence | int:
    """No sample for a while although the link is up and the sampler did not restart.

    Live, the fleet calls ``RuleEngine.tick(now)``: ``now`` and the arrival times are the
    laptop's clock, so a skewed clock on the host cannot fake a stall. A gap inside a stream
    (a replay) is judged by the engine when the next sample arrives: it is a stall only when
    the sampler produced nothing in between (its ``seq`` barely moved); a gap that the
    sequence numbers span was recorded but not delivered (a disconnect, the daemon's
    thinned day tier), and a new ``run_id`` is a restart. Any sample clears."""
    if h.trigger == "sample":
        return CLEAR
    if h.last_arrival_t is None or h.status != "streaming":
        return HOLD
    gap = t - h.last_arrival_t
    if gap > stall_threshold(h, p):
        return {"last_sample_t": h.last_sample_t, "gap_s": round(gap, 1)}
    return CLEAR


@condition("sampler_restarted", HOST, ("sample",), {"hold_s": 600.0})
def sampler_restarted(
    h: HostState, g: GpuView, t: float, p: Params
) -> SamplerRestartedEvidence | int:
    """The sampler started a new run (a new ``run_id`` in a new ``hello``): the daemon or
    the host restarted, or a plain ``stream`` sampler was started again. A note, shown for
    ``hold_s``: what was not recorded before the restart is gone."""
    r = h.restart
    first = None if r is None else r.get("first_t")
    if r is None or first is None:
        return CLEAR
    if t - first <= float(p["hold_s"]):
        return r.copy()
    return CLEAR


# After its deadline, a watchdog that said it would act and said nothing more (cancelled
# from the laptop, its daemon gone with the instance) is no longer taken at its word.
WATCHDOG_LATE_S = 300.0


@condition("watchdog", HOST, ("event", "sample", "tick"), {"on": "pending", "hold_s": 3600.0})
def watchdog(h: HostState, g: GpuView, t: float, p: Params) -> WatchdogEvidence | int:
    """What the instance's own watchdog said last, as one of three states a rule asks for
    (``on``): ``unready`` (armed, but the action it would take cannot run now: a revoked
    key, a changed API), ``pending`` (the host was idle while billed; it will act at its deadline
    unless cancelled or the host works again), ``done`` (it acted: the instance stopped,
    powered off or the user's command ran) and ``failed`` (its action did not work: the
    instance is still billed). Works while the laptop was asleep: the events wait in the
    daemon's ring and arrive on reconnect. ``done`` and ``failed`` are held ``hold_s``."""
    w = h.watchdog
    if w is None:
        return CLEAR
    phase = w.get("phase")
    if phase == "pending":
        state = "pending"
    elif phase in ("watching", "cancelled") and w.get("ready") is False:
        state = "unready"  # armed, but its re-check found the action impossible now
    elif phase == "done":
        state = "done" if w.get("ok") else "failed"
    else:
        return CLEAR
    if state != p["on"]:
        return CLEAR
    ev_t = float(w.get("t") or t)
    deadline = w.get("deadline_t")
    if state == "pending":
        until = float(deadline) + WATCHDOG_LATE_S if isinstance(deadline, (int, float)) else ev_t
        if t > until:
            return CLEAR
    elif state != "unready" and t - ev_t > float(p["hold_s"]):
        return CLEAR
    return {
        "state": state,
        "action": w.get("action"),
        "deadline_t": deadline,
        "dry_run": bool(w.get("dry_run")),
        "outcome": w.get("outcome"),
        "message": w.get("message"),
        "event_t": ev_t,
    }


def stall_threshold(h: HostState, p: Params) -> float:
    return max(float(p["stall_s"]), float(p["stall_intervals"]) * h.interval_s)


@condition("budget", HOST, ("sample",), {"frac": 0.8})
def budget(h: HostState, g: GpuView, t: float, p: Params) -> BudgetEvidence | int:
    if h.budget_frac is None:
        return HOLD
    if h.budget_frac >= float(p["frac"]):
        return {
            "budget_frac": round(h.budget_frac, 4),
            "budget_used": h.budget_used,
            "budget": h.cfg.budget if h.cfg else None,
            "threshold_frac": p["frac"],
        }
    return CLEAR


# --- memory against its own capacity (a MIG slice: the slice's) ---------------------------


@condition(
    "mem_nearly_full",
    GPU,
    ("sample",),
    {"above_frac": 0.90, "clear_below_frac": 0.85, "slices_only": False},
)
def mem_nearly_full(h: HostState, g: GpuView, t: float, p: Params) -> MemNearlyFullEvidence | int:
    """Memory used over a share of the GPU's own capacity. A MIG slice is judged against its
    own size (10 GB of a 1g.10gb slice), not the card's; with ``slices_only`` whole cards are
    left alone (a framework's caching allocator holds most of a card on purpose)."""
    info = h.hello.gpu(g.gpu) if h.hello is not None else None
    mig = info.extra.get(protocol.MIG_KEY) if info is not None else None
    if p.get("slices_only") and not isinstance(mig, Mapping):
        return HOLD
    used, total = g.v("mem_used_bytes"), g.nom("mem_total_bytes")
    if used is None or not total:
        return HOLD
    frac = float(used) / float(total)
    if frac >= float(p["above_frac"]):
        card_frac = None
        if isinstance(mig, Mapping) and isinstance(mig.get("parent"), int):
            parent = int(mig["parent"])
            pu = row_value(h, parent, "mem_used_bytes")
            pt = h.nominal.get(parent, {}).get("mem_total_bytes")
            card_frac = round(float(pu) / float(pt), 4) if pu is not None and pt else None
        return {
            "mem_used_bytes": used,
            "mem_total_bytes": total,
            "used_frac": round(frac, 4),
            "card_frac": card_frac,
            "mig_profile": mig.get("profile") if isinstance(mig, Mapping) else None,
        }
    if frac < float(p["clear_below_frac"]):
        return CLEAR
    return HOLD


# --- generic, for the user's own rules -----------------------------------------------------


@condition("metric_above", GPU, ("sample",), {"metric": "", "above": 0.0, "clear_below": 0.0})
def metric_above(h: HostState, g: GpuView, t: float, p: Params) -> MetricAboveEvidence | int:
    v = g.v(str(p["metric"]))
    if v is None:
        return HOLD
    if v > float(p["above"]):
        return {"metric": p["metric"], "value": v, "above": p["above"]}
    if v <= float(p["clear_below"]):
        return CLEAR
    return HOLD


@condition("metric_below", GPU, ("sample",), {"metric": "", "below": 0.0, "clear_above": 0.0})
def metric_below(h: HostState, g: GpuView, t: float, p: Params) -> MetricBelowEvidence | int:
    v = g.v(str(p["metric"]))
    if v is None:
        return HOLD
    if v < float(p["below"]):
        return {"metric": p["metric"], "value": v, "below": p["below"]}
    if v >= float(p["clear_above"]):
        return CLEAR
    return HOLD
