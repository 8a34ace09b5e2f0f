"""Memory held by work that is not happening: the two conditions the plain rules miss.

- ``idle_held``: the GPU does no work (utilization and SM activity near zero, P8 or a draw
  near idle, no PCIe traffic) while a process holds a real share of its memory. The plain
  idle rule (``idle_billed``) needs memory under 10 %, so it never fires for the two
  commonest ways to pay for nothing: a job hung in a collective or a dead dataloader that
  keeps its memory, and a forgotten notebook kernel. A GPU that had been working recently is
  judged sooner (``after_work_s``) than one never seen working (``cold_s``): a job that
  stops working mid-run is the hang, and every minute of it is paid.
- ``mem_growth``: used memory rising steadily towards the usable total (a leak), with the
  projected time to full, before it gets there. "Steadily" is a straight-line fit over the
  last ``window_s`` that explains the points (``r2_min``) and whose rise is spread over the
  window (an allocator filling the card at start rises in one step, not steadily).

Both keep their per-GPU memory of the stream in ``HostState.memo`` (one per engine), and
register in ``conditions.CONDITIONS`` like the built-ins.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any, Final

from gpufleet.core.alerts.conditions.base import (
    CLEAR,
    GPU,
    HOLD,
    GpuView,
    HostState,
    Params,
    condition,
)
from gpufleet.core.alerts.conditions.usage import (
    proc_evidence,
    proc_names,
)
from gpufleet.core.model.evidence import IdleHeldEvidence, MemGrowthEvidence

# Names that say "a notebook kernel": a forgotten notebook, not a hung job.
NOTEBOOK_MARKS: Final = ("ipykernel", "jupyter", "colab_kernel", "spyder_kernels")
KIND_NOTEBOOK: Final = "notebook"
KIND_HUNG: Final = "hung"
KIND_HELD: Final = "held"


@dataclass
class _Quiet:
    """One GPU's recent story for ``idle_held``."""

    last_work_t: float | None = None
    quiet_since: float | None = None


def _memo(h: HostState, name: str) -> dict[int, Any]:
    return h.memo.setdefault(name, {})


def _power_near_idle(g: GpuView, p: Params) -> bool:
    """P8 or deeper, or a draw under a share of the limit; unknown power and P-state (a
    platform that hides them) leave the decision to utilization."""
    pstate, power = g.v("pstate"), g.v("power_w")
    if pstate is not None and pstate >= 8:
        return True
    limit = g.v("power_limit_w") or g.nom("power_enforced_w") or g.nom("power_default_w")
    if power is None or not limit:
        return pstate is None
    return float(power) < float(p["power_below_frac"]) * float(limit)


def _no_work(g: GpuView, p: Params) -> bool | None:
    util = g.v("util_gpu_pct")
    if util is None:
        return None
    sm = g.v("sm_active_pct")
    pcie = (g.v("pcie_tx_bps") or 0.0) + (g.v("pcie_rx_bps") or 0.0)
    return (
        util < float(p["util_below_pct"])
        and (sm is None or sm < float(p["sm_below_pct"]))
        and pcie < float(p["pcie_below_bps"])  # a checkpoint being written is work
        and _power_near_idle(g, p)
    )


def _holders(h: HostState, gpu: int) -> list[Any]:
    return [pr for pr in h.procs.get(gpu, ()) if (pr.mem_bytes or 0) > 0]


def held_kind(procs: list[Any], worked: bool) -> str:
    """A notebook kernel where a holder's name says so; a hung job where the GPU had been
    working; else memory held by a job seen doing nothing."""
    for pr in procs:
        text = " ".join([*proc_names(pr), (pr.cmd or "").lower()])
        if any(m in text for m in NOTEBOOK_MARKS):
            return KIND_NOTEBOOK
    return KIND_HUNG if worked else KIND_HELD


@condition(
    "idle_held",
    GPU,
    ("sample",),
    {
        "util_below_pct": 5.0,
        "sm_below_pct": 5.0,
        "mem_above_frac": 0.10,
        "power_below_frac": 0.3,
        "pcie_below_bps": 100e6,
        "worked_util_pct": 50.0,
        "worked_within_s": 3600.0,
        "after_work_s": 300.0,
        "cold_s": 900.0,
    },
)
def idle_held(h: HostState, g: GpuView, t: float, p: Params) -> IdleHeldEvidence | int:
    """No work while memory is held; held ``after_work_s`` when the GPU had worked within
    ``worked_within_s`` before it went quiet, else ``cold_s``."""
    st: _Quiet = _memo(h, "idle_held").setdefault(g.gpu, _Quiet())
    util = g.v("util_gpu_pct")
    if util is not None and util >= float(p["worked_util_pct"]):
        st.last_work_t = t
    used, total = g.v("mem_used_bytes"), g.nom("mem_total_bytes")
    quiet = _no_work(g, p)
    if quiet is None or used is None or not total:
        return HOLD
    holders = _holders(h, g.gpu)
    held = float(used) >= float(p["mem_above_frac"]) * float(total)
    # Where processes are reported, someone must hold the memory (else it is another rule's).
    if not quiet or not held or (h.procs_seen and not holders):
        st.quiet_since = None
        return CLEAR
    if st.quiet_since is None or st.quiet_since > t:
        st.quiet_since = t
    worked = st.last_work_t is not None and st.quiet_since - st.last_work_t <= float(
        p["worked_within_s"]
    )
    idle_s = t - st.quiet_since
    if idle_s < float(p["after_work_s"] if worked else p["cold_s"]):
        return HOLD
    price = h.cfg.price_per_hour if h.cfg is not None else None
    return {
        "kind": held_kind(holders, worked),
        "quiet_since_t": st.quiet_since,
        "idle_s": round(idle_s, 3),
        "worked_t": st.last_work_t if worked else None,
        "mem_used_bytes": used,
        "mem_total_bytes": total,
        "used_frac": round(float(used) / float(total), 4),
        "util_gpu_pct": util,
        "sm_active_pct": g.v("sm_active_pct"),
        "pstate": g.v("pstate"),
        "sm_clock_mhz": g.v("sm_clock_mhz"),
        "power_w": g.v("power_w"),
        "processes": proc_evidence(holders),
        "cost_so_far": None if price is None else round(idle_s / 3600.0 * float(price), 4),
    }


# --- memory growing to full ----------------------------------------------------------------


@dataclass
class _Growth:
    points: deque[tuple[float, float]] = field(default_factory=deque)


@dataclass(frozen=True)
class Trend:
    """A straight line through (t, used): slope in bytes/s, how well it fits, the rise it
    explains over the window and in each half of it."""

    slope_bps: float
    r2: float
    span_s: float
    rise: float
    rise_first: float
    rise_second: float
    now: float


def fit_trend(points: list[tuple[float, float]]) -> Trend | None:
    """The least-squares line through the points (None for fewer than 5 or no spread)."""
    n = len(points)
    if n < 5:
        return None
    ts = [p[0] for p in points]
    ys = [p[1] for p in points]
    mt, my = sum(ts) / n, sum(ys) / n
    stt = sum((x - mt) ** 2 for x in ts)
    syy = sum((y - my) ** 2 for y in ys)
    if stt <= 0:
        return None
    slope = sum((x - mt) * (y - my) for x, y in zip(ts, ys, strict=True)) / stt
    r2 = 1.0 if syy <= 0 else min(1.0, slope * slope * stt / syy)
    half = n // 2
    return Trend(
        slope_bps=slope,
        r2=r2,
        span_s=ts[-1] - ts[0],
        rise=ys[-1] - ys[0],
        rise_first=ys[half] - ys[0],
        rise_second=ys[-1] - ys[half],
        now=ys[-1],
    )


def usable_bytes(g: GpuView) -> float | None:
    """What a job can fill: the total less what the driver reserves for itself."""
    total = g.nom("mem_total_bytes")
    if not total:
        return None
    return float(total) - float(g.nom("mem_reserved_bytes") or 0.0)


def _steady(tr: Trend, usable: float, p: Params) -> bool:
    spread = float(p["spread_frac"]) * tr.rise
    return (
        tr.slope_bps > 0
        and tr.r2 >= float(p["r2_min"])
        and tr.rise >= float(p["min_rise_frac"]) * usable
        and tr.rise_first >= spread
        and tr.rise_second >= spread
    )


@condition(
    "mem_growth",
    GPU,
    ("sample",),
    {
        "window_s": 1800.0,
        "min_span_s": 600.0,
        "step_s": 30.0,
        "horizon_s": 7200.0,
        "min_rise_frac": 0.05,
        "spread_frac": 0.25,
        "r2_min": 0.9,
    },
)
def mem_growth(h: HostState, g: GpuView, t: float, p: Params) -> MemGrowthEvidence | int:
    """Used memory rising steadily: fires while the projected time to full is within
    ``horizon_s``; clears when the rise stops (the process died, or the growth settled)."""
    st: _Growth = _memo(h, "mem_growth").setdefault(g.gpu, _Growth())
    used, usable = g.v("mem_used_bytes"), usable_bytes(g)
    if used is None or not usable:
        return HOLD
    pts = st.points
    if pts and t < pts[-1][0]:
        pts.clear()  # the stream went back in time (a replay from the start): start again
    if not pts or t - pts[-1][0] >= float(p["step_s"]):
        pts.append((t, float(used)))
    while pts and t - pts[0][0] > float(p["window_s"]):
        pts.popleft()
    tr = fit_trend(list(pts))
    if tr is None or tr.span_s < float(p["min_span_s"]):
        return HOLD
    if not _steady(tr, usable, p):
        return CLEAR
    eta = max(0.0, (usable - float(used)) / tr.slope_bps)
    if eta > float(p["horizon_s"]):
        return HOLD
    return {
        "mem_used_bytes": used,
        "mem_usable_bytes": usable,
        "mem_total_bytes": g.nom("mem_total_bytes"),
        "used_frac": round(float(used) / usable, 4),
        "growth_bps": round(tr.slope_bps, 1),
        "fit_span_s": round(tr.span_s, 1),
        "rise_bytes": tr.rise,
        "eta_s": round(eta, 1),
        "full_at_t": round(t + eta, 3),
        "processes": proc_evidence(_holders(h, g.gpu)),
    }
