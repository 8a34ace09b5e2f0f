"""Compare two runs, A (the reference, "yesterday") and B (the run in question), and say
whether B's loss of GPU throughput came from the platform (the card or the host) or the job.

``compare(a, b)`` takes two ``RunWindow``s (of one host or two), matches the same GPUs'
work phases (pauses left out: ``series.work_mask``), models each GPU's throughput from the
hardware data (``gpu_run``), attributes B's loss to causes (``attribute``) and returns a
``Comparison``: the verdict the rental guide's FAQ reasons to ("99 % utilization but 30 %
slower than yesterday": are the clocks at nominal, and if not why; is another process on
the GPU; is the data path congested), ``slower_by_pct`` with a range, and the causes with
their numbers. ``as_json`` is the documented interface (docs/cli.md); the words come from
``core/text/compare.py``.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Final

import numpy as np

from gpufleet.core.verdicts.compare.attribute import (
    CAUSES,
    PLATFORM,
    GpuLoss,
    carry_waits,
    gpu_loss,
)
from gpufleet.core.verdicts.compare.gpu_run import GpuRun, gpu_run, nominal_clock, snapshots
from gpufleet.core.verdicts.compare.series import series_of
from gpufleet.core.verdicts.window import RunWindow

PLATFORM_VERDICT: Final = "platform"
JOB_VERDICT: Final = "job"
UNCLEAR_VERDICT: Final = "unclear"
MIN_GPU_POINTS: Final = 3.0  # a cause is named where it cost a GPU this many points ...
MIN_SHARE: Final = 1.0  # ... and the job this many
MIN_WORK_S: Final = 120.0  # a GPU needs this much work in both windows to be compared
# The figures each cause shows for A and B (keys of GpuRun.fig).
CAUSE_FIGURES: Final[dict[str, tuple[str, ...]]] = {
    "power_limit": ("power_limit_w", "power_w", "sm_clock_mhz", "held_power_pct"),
    "power_cap": ("held_power_pct", "power_w", "power_limit_w", "sm_clock_mhz", "temp_gpu_c"),
    "thermal": ("held_thermal_pct", "temp_gpu_c", "temp_max_c", "sm_clock_mhz"),
    "hw_slowdown": ("held_hw_slowdown_pct", "sm_clock_mhz", "power_w"),
    "clocks_unexplained": ("sm_clock_mhz", "sm_clock_max_mhz", "held_unexplained_pct"),
    "shared_gpu": ("own_share_pct", "util_gpu_pct"),
    "data_wait": ("util_gpu_pct", "sm_active_pct", "pcie_rx_bps"),
    "nvlink": ("nvlink_up", "nvlink_links", "nvlink_bps", "util_gpu_pct"),
    "pcie_link": ("pcie_gen", "pcie_width", "pcie_rx_bps", "util_gpu_pct"),
    "memory_pressure": ("mem_used_pct", "util_gpu_pct"),
    "ecc": ("ecc_sbe_new", "ecc_dbe_new", "remap_pending", "util_gpu_pct"),
}
# What "the hardware ran the same" is shown with.
SAME_FIGURES: Final = (
    "util_gpu_pct",
    "sm_active_pct",
    "sm_clock_mhz",
    "power_w",
    "power_limit_w",
    "temp_gpu_c",
    "own_share_pct",
    "pcie_rx_bps",
    "nvlink_bps",
)


@dataclass(frozen=True)
class Cause:
    cause: str
    gpus: tuple[int, ...]
    share_pct: float  # points of A's throughput B lost to this cause
    a: dict[str, Any]
    b: dict[str, Any]
    waited: tuple[int, ...] = ()  # GPUs that waited for these ones (synchronous training)


@dataclass(frozen=True)
class Side:
    host: str
    t0: float
    t1: float
    work_s: float  # seconds of work per compared GPU
    gpu_name: str


@dataclass(frozen=True)
class Comparison:
    verdict: str
    slower_by_pct: float | None
    slower_range: tuple[float, float] | None
    causes: tuple[Cause, ...]
    reason: str | None  # why unclear (a cause or a condition), None otherwise
    gpus: tuple[int, ...]
    a: Side
    b: Side
    same: dict[str, tuple[float | None, float | None]] = field(default_factory=dict)
    not_compared: tuple[int, ...] = ()
    runs_a: dict[int, GpuRun] = field(default_factory=dict)
    runs_b: dict[int, GpuRun] = field(default_factory=dict)


def _gpu_name(w: RunWindow, gpus: list[int]) -> str:
    names = sorted({g.name for g in w.hello.gpus if g.index in gpus})
    return ", ".join(names)


def _runs(w: RunWindow, nominal: dict[int, float], gpus: list[int]) -> dict[int, GpuRun]:
    s = series_of(w, gpus)
    snaps = snapshots(w.procs, gpus)
    return {g: gpu_run(s, g, snaps, nominal[g], w.hello) for g in gpus}


def _nominals(a: RunWindow, b: RunWindow, gpus: list[int]) -> dict[int, float]:
    """Each GPU's nominal clock: A's hello's, else B's, else the highest clock seen."""
    out: dict[int, float] = {}
    for g in gpus:
        v = nominal_clock(a.hello, g) or nominal_clock(b.hello, g)
        if v is None:
            seen = [s.value(g, "sm_clock_mhz") for w in (a, b) for s in w.samples[::60]]
            v = float(max((x for x in seen if isinstance(x, int | float)), default=1.0))
        out[g] = v
    return out


def _mean_fig(runs: list[GpuRun], key: str) -> float | None:
    vals = [r.fig.get(key) for r in runs]
    ok = [float(v) for v in vals if isinstance(v, int | float)]
    return round(sum(ok) / len(ok), 3) if ok else None


def _causes(losses: list[GpuLoss], ra: dict[int, GpuRun], rb: dict[int, GpuRun]) -> list[Cause]:
    """The causes named, largest first. A cause's share is what it took from the GPU it
    slowed most: a synchronous job runs at the pace of its slowest GPU."""
    out: list[Cause] = []
    for name in CAUSES:
        origin = [x.gpu for x in losses if x.points.get(name, 0.0) >= MIN_GPU_POINTS]
        share = max(x.points.get(name, 0.0) + x.carried.get(name, 0.0) for x in losses)
        if not origin or share < MIN_SHARE:
            continue
        waited = tuple(x.gpu for x in losses if x.carried.get(name, 0.0) >= MIN_GPU_POINTS)
        a_runs, b_runs = [ra[g] for g in origin], [rb[g] for g in origin]
        a: dict[str, Any] = {k: _mean_fig(a_runs, k) for k in CAUSE_FIGURES[name]}
        b: dict[str, Any] = {k: _mean_fig(b_runs, k) for k in CAUSE_FIGURES[name]}
        if name == "shared_gpu":
            b["processes"] = [p for r in b_runs for p in r.others][:5]
        out.append(Cause(name, tuple(origin), round(share, 1), a, b, waited))
    out.sort(key=lambda c: -c.share_pct)
    return out


def _halves(run: GpuRun) -> tuple[float, float]:
    h = len(run.rate) // 2
    if h < 1:
        return run.mean_rate, run.mean_rate
    return float(run.rate[:h].mean()), float(run.rate[h:].mean())


def _loss(a: list[float], b: list[float]) -> tuple[float, float] | None:
    """(slowest GPU's loss, the GPUs' summed loss) in %, for matching rates of A and B."""
    if not a or min(a) <= 0:
        return None
    ratios = [y / x for x, y in zip(a, b, strict=True)]
    return 100.0 * (1.0 - min(ratios)), 100.0 * (1.0 - sum(b) / sum(a))


def _estimate(
    ra: dict[int, GpuRun], rb: dict[int, GpuRun], gpus: list[int]
) -> tuple[float | None, tuple[float, float] | None]:
    """B's loss in % of A's throughput at the pace of the slowest GPU (a synchronous job),
    and its range: down to the GPUs' summed loss (independent work on each), and as far as
    the rates moved between the halves of each window (the estimate is no finer)."""
    full = _loss([ra[g].mean_rate for g in gpus], [rb[g].mean_rate for g in gpus])
    if full is None or not all(np.isfinite(full)):
        return None, None
    ha = [_halves(ra[g]) for g in gpus]
    hb = [_halves(rb[g]) for g in gpus]
    ests = list(full)
    for i in (0, 1):
        for j in (0, 1):
            part = _loss([x[i] for x in ha], [y[j] for y in hb])
            if part is not None and np.isfinite(part[0]):
                ests.append(part[0])
    return round(full[0], 1), (round(min(ests), 1), round(max(ests), 1))


def _verdict(causes: list[Cause]) -> tuple[str, str | None]:
    if not causes:
        return JOB_VERDICT, None
    platform = sum(c.share_pct for c in causes if c.cause in PLATFORM)
    other = [c for c in causes if c.cause not in PLATFORM]
    if platform >= sum(c.share_pct for c in other):
        return PLATFORM_VERDICT, None
    return UNCLEAR_VERDICT, other[0].cause


def compare(a: RunWindow, b: RunWindow) -> Comparison:
    """B (the run in question) against A (the reference); see the module docstring."""
    gpus_a, gpus_b = a.gpus, b.gpus  # (each a pass over the samples)
    both = sorted(set(gpus_a) & set(gpus_b))
    nominal = _nominals(a, b, both)
    ra, rb = _runs(a, nominal, both), _runs(b, nominal, both)
    gpus = [
        g for g in both if g in ra and g in rb and min(ra[g].work_s, rb[g].work_s) >= MIN_WORK_S
    ]
    per = max(1, len(gpus))
    side_a = Side(a.host, a.t0, a.t1, sum(ra[g].work_s for g in gpus) / per, _gpu_name(a, both))
    side_b = Side(b.host, b.t0, b.t1, sum(rb[g].work_s for g in gpus) / per, _gpu_name(b, both))
    not_compared = tuple(sorted((set(gpus_a) | set(gpus_b)) - set(gpus)))
    same = {
        k: (_mean_fig([ra[g] for g in gpus], k), _mean_fig([rb[g] for g in gpus], k))
        for k in SAME_FIGURES
    }
    nothing = Comparison(
        UNCLEAR_VERDICT, None, None, (), "no_common_work", (), side_a, side_b, same,
        not_compared, ra, rb,
    )  # fmt: skip
    if not gpus:
        return nothing
    if side_a.gpu_name != side_b.gpu_name:
        return replace(nothing, reason="different_gpus", gpus=tuple(gpus))
    losses = [gpu_loss(ra[g], rb[g]) for g in gpus]
    carry_waits(losses)
    causes = _causes(losses, ra, rb)
    slower, rng = _estimate(ra, rb, gpus)
    verdict, reason = _verdict(causes)
    if slower is None:
        verdict, reason = UNCLEAR_VERDICT, "no_rate"
    return replace(
        nothing,
        verdict=verdict,
        slower_by_pct=slower,
        slower_range=rng,
        causes=tuple(causes),
        reason=reason,
        gpus=tuple(gpus),
    )
