"""Which causes B's loss of throughput came from, in percentage points of A's throughput.

Per GPU, B's rate over A's is the product of three factors (duty, clock, own share of the
GPU; see ``gpu_run``). The losing factors' points are split by their logarithms, so they add
up to the loss they make together. A lost clock is split further by the reasons the driver
gave (the rise of each reason's clock deficit from A to B); a lost own share is
``shared_gpu``; a lost duty is the GPU waiting: for a degraded PCIe or NVLink link, nearly
full memory or new ECC errors where B shows them, else for its input (``data_wait``).

In synchronous data-parallel training the GPUs wait for the slowest at every step, so a
thermal throttle on one GPU shows as waiting on all the others. A GPU's ``data_wait`` is
therefore given to the host's largest hardware cause when that cause lost at least half as
much on its own GPU: the whole job was slowed by that GPU, and that is what to report.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Final

from gpufleet.core.verdicts.compare.gpu_run import UNEXPLAINED, GpuRun

CAUSES: Final = (
    "power_limit",
    "power_cap",
    "thermal",
    "hw_slowdown",
    "clocks_unexplained",
    "shared_gpu",
    "data_wait",
    "nvlink",
    "pcie_link",
    "memory_pressure",
    "ecc",
)
# The card or the host: the provider's to fix (the guide's "platform" side).
PLATFORM: Final = frozenset(
    {
        "power_limit",
        "thermal",
        "hw_slowdown",
        "clocks_unexplained",
        "shared_gpu",
        "nvlink",
        "pcie_link",
        "ecc",
    }
)
POWER_LIMIT_LOWER: Final = 0.97  # B's limit under this share of A's is a lowered limit
MEM_FULL_PCT: Final = 95.0
STRAGGLER_MIN: Final = 0.5


@dataclass
class GpuLoss:
    """One GPU's factors (B over A) and the points each cause took."""

    gpu: int
    ratio: float
    duty: float
    clock: float
    share: float
    points: dict[str, float] = field(default_factory=dict)  # where the loss arose
    carried: dict[str, float] = field(default_factory=dict)  # waiting for another GPU


def _split_points(factors: dict[str, float]) -> dict[str, float]:
    """Points (0..100) of the losing factors, split by their logarithms."""
    logs = {k: -math.log(f) for k, f in factors.items() if 0 < f < 1}
    total = sum(logs.values())
    if total <= 0:
        return {}
    loss = 100.0 * (1.0 - math.exp(-total))
    return {k: loss * v / total for k, v in logs.items()}


def _clock_causes(a: GpuRun, b: GpuRun, points: float) -> dict[str, float]:
    rises = {k: max(0.0, b.deficit.get(k, 0.0) - a.deficit.get(k, 0.0)) for k in b.deficit}
    total = sum(rises.values())
    if total <= 0:
        return {"clocks_unexplained": points}
    out: dict[str, float] = {}
    lowered = _lower_limit(a, b)
    for k, r in rises.items():
        name = {
            "power": "power_limit" if lowered else "power_cap",
            UNEXPLAINED: "clocks_unexplained",
        }.get(k, k)
        out[name] = out.get(name, 0.0) + points * r / total
    return out


def _lower_limit(a: GpuRun, b: GpuRun) -> bool:
    la, lb = a.fig.get("power_limit_w"), b.fig.get("power_limit_w")
    return la is not None and lb is not None and lb < POWER_LIMIT_LOWER * la


def _below(a: float | None, b: float | None) -> bool:
    return a is not None and b is not None and b < a


def _duty_cause(a: GpuRun, b: GpuRun) -> str:
    """Why the GPU waited more in B (see the module docstring)."""
    fa, fb = a.fig, b.fig
    if _below(fa.get("pcie_width"), fb.get("pcie_width")) or _below(
        fa.get("pcie_gen"), fb.get("pcie_gen")
    ):
        return "pcie_link"
    if _below(fa.get("nvlink_up"), fb.get("nvlink_up")):
        return "nvlink"
    mem_a, mem_b = fa.get("mem_used_pct"), fb.get("mem_used_pct")
    if mem_b is not None and mem_b >= MEM_FULL_PCT and (mem_a is None or mem_a < MEM_FULL_PCT):
        return "memory_pressure"
    if (fb.get("ecc_dbe_new") or 0) > (fa.get("ecc_dbe_new") or 0) or (
        (fb.get("remap_pending") or 0) > (fa.get("remap_pending") or 0)
    ):
        return "ecc"
    return "data_wait"


def gpu_loss(a: GpuRun, b: GpuRun) -> GpuLoss:
    duty = b.duty / a.duty if a.duty > 0 else 1.0
    clock = b.clock / a.clock if a.clock > 0 else 1.0
    share = b.own / a.own if a.own > 0 else 1.0
    ratio = b.mean_rate / a.mean_rate if a.mean_rate > 0 else float("nan")
    loss = GpuLoss(gpu=a.gpu, ratio=ratio, duty=duty, clock=clock, share=share)
    split = _split_points({"duty": duty, "clock": clock, "share": share})
    points: dict[str, float] = {}
    if "clock" in split:
        points.update(_clock_causes(a, b, split["clock"]))
    if "share" in split:
        points["shared_gpu"] = split["share"]
    if "duty" in split:
        name = _duty_cause(a, b)
        points[name] = points.get(name, 0.0) + split["duty"]
    loss.points = points
    return loss


def carry_waits(losses: list[GpuLoss]) -> None:
    """Give each GPU's data_wait to the host's largest hardware cause when that GPU held
    the others back (see the module docstring)."""
    hardware = [(sum(v for k, v in x.points.items() if k != "data_wait"), x) for x in losses]
    for x in losses:
        wait = x.points.get("data_wait", 0.0)
        if wait <= 0:
            continue
        worst = max(((p, y) for p, y in hardware if y is not x), default=None, key=lambda t: t[0])
        if worst is None or worst[0] < STRAGGLER_MIN * wait:
            continue
        src = {k: v for k, v in worst[1].points.items() if k != "data_wait"}
        total = sum(src.values())
        for k, v in src.items():
            x.carried[k] = x.carried.get(k, 0.0) + wait * v / total
        del x.points["data_wait"]
