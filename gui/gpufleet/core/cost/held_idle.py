"""Time paid for nothing while memory was held, counted as idle in the cost breakdown.

The tracker's idle (``cost.idle.gpu_is_idle``: memory under 10 %) calls a hung job or a
forgotten notebook that keeps its memory "busy". Where the ``idle_held`` rule found such a
GPU doing no work, the judgment of a window hands its spans here, and the intervals the
tracker counted busy become idle when every GPU of the host was either idle or held idle:
the same alert, diagnosis and cost then say the same thing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from itertools import pairwise

from gpufleet.core.cost.rental import CostSummary, gap_limit, gpu_idle
from gpufleet.core.wire.messages import Sample

Spans = Mapping[int, Sequence[tuple[float, float]]]


def _inside(spans: Sequence[tuple[float, float]], t: float) -> bool:
    return any(a <= t < b for a, b in spans)


def _gpu_quiet(s: Sample, gpu: int, spans: Spans, totals: Mapping[int, float | None]) -> bool:
    if _inside(spans.get(gpu, ()), s.t):
        return True
    return gpu_idle(
        s.value(gpu, "util_gpu_pct"),
        s.value(gpu, "mem_used_bytes"),
        totals.get(gpu),
        s.value(gpu, "lost"),
    )


def _was_idle(s: Sample, totals: Mapping[int, float | None]) -> bool:
    return all(_gpu_quiet(s, g, {}, totals) for g in s.gpu_indices())


def held_idle_seconds(
    samples: Sequence[Sample],
    spans: Spans,
    totals: Mapping[int, float | None],
    interval_s: float,
) -> float:
    """Seconds the tracker counted busy that the held-idle spans make idle: each interval
    between two samples takes the state of its first, one longer than ``gap_limit`` is
    neither (as ``CostTracker`` counts them)."""
    moved = 0.0
    limit = gap_limit(interval_s)
    for a, b in pairwise(samples):
        dt = b.t - a.t
        if dt <= 0 or dt > limit or _was_idle(a, totals):
            continue
        if all(_gpu_quiet(a, g, spans, totals) for g in a.gpu_indices()):
            moved += dt
    return moved


def count_held_idle(
    summary: CostSummary,
    samples: Sequence[Sample],
    spans: Spans,
    totals: Mapping[int, float | None],
    interval_s: float,
) -> CostSummary:
    """The summary with the held-idle time moved from busy to idle (and its money)."""
    if not spans:
        return summary
    moved = min(summary.busy_s, held_idle_seconds(samples, spans, totals, interval_s))
    if moved <= 0:
        return summary
    rate = None if summary.price_per_hour is None else summary.price_per_hour / 3600.0
    busy = idle = None
    if rate is not None and summary.busy is not None and summary.idle is not None:
        busy, idle = max(0.0, summary.busy - moved * rate), summary.idle + moved * rate
    return replace(
        summary,
        busy_s=summary.busy_s - moved,
        idle_s=summary.idle_s + moved,
        busy=busy,
        idle=idle,
    )
