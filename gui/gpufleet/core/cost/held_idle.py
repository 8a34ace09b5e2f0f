"""Time paid for nothing while memory was held, counted as idle in the cost breakdown.

The tracker's idle (``cost.idle.gpu_is_idle``: memory under 10 %) calls a hung job or a
forgotten notebook that keeps its memory "busy". The ``idle_held`` rule finds such a GPU doing
no work; the rule engine tells its ``CostTracker`` (``hold`` when the alert fires, from when
the GPU went quiet; ``release`` when it resolves), and from then on an interval in which every
GPU of the host was idle or held counts idle. The minutes between the GPU going quiet and the
alert firing (5 or 15 min) were counted busy when they passed: the tracker keeps its recent
busy intervals, and ``hold`` moves those the held GPUs make idle. The live Cost tab and the
one judgment of a window read the same tracker, so the alert, the diagnosis and the cost say
the same thing; the tab's range plot redraws its idle part from the samples with the same
judgment (``host_idle``, over the hold periods the tracker reports), so plot and totals agree.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final

import numpy as np
import numpy.typing as npt

# How far back ``hold`` may look: the longest the rule waits before it fires (``cold_s``,
# 15 min), with room for a rule file that waits longer.
KEEP_S: Final = 3600.0
# Utilization from which a GPU is working, held or not (the idle_held rule's own mark).
WORK_PCT: Final = 5.0
# Ended hold periods a host keeps for the Cost tab's plot (an hour's live window holds few).
KEEP_PERIODS: Final = 256

# (gpu, held since, released at; None: still held)
Period = tuple[int, float, float | None]
BoolArray = npt.NDArray[np.bool_]
FloatArray = npt.NDArray[np.float64]


@dataclass
class HeldIdle:
    """One host's held GPUs (since when) and its recent busy intervals: (start, length,
    the GPUs that were not idle)."""

    since: dict[int, float] = field(default_factory=dict)
    recent: deque[tuple[float, float, frozenset[int]]] = field(default_factory=deque)
    ended: deque[Period] = field(default_factory=lambda: deque(maxlen=KEEP_PERIODS))

    def _quiet(self, gpus: frozenset[int], t: float) -> bool:
        return bool(gpus) and all(self.since.get(g, t + 1.0) <= t for g in gpus)

    def busy_interval(self, t: float, dt: float, active: frozenset[int], working: bool) -> bool:
        """An interval from ``t`` the plain idle test calls busy, ``active`` its GPUs that
        were not idle, ``working``: one of them did work (utilization from ``WORK_PCT``: the
        job works again while the alert waits to resolve). True when the held GPUs make it
        idle; else it is kept for ``hold``, unless it was work."""
        if working:
            return False
        if self._quiet(active, t):
            return True
        self.recent.append((t, dt, active))
        while self.recent and self.recent[0][0] < t - KEEP_S:
            self.recent.popleft()
        return False

    def hold(self, gpu: int, since_t: float) -> float:
        """``gpu`` does no work while holding memory since ``since_t``: the seconds of the
        recent busy intervals that this makes idle (taken out of ``recent``)."""
        self.since[gpu] = min(since_t, self.since.get(gpu, since_t))
        moved = 0.0
        keep: deque[tuple[float, float, frozenset[int]]] = deque()
        for t, dt, active in self.recent:
            if self._quiet(active, t):
                moved += dt
            else:
                keep.append((t, dt, active))
        self.recent = keep
        return moved

    def release(self, gpu: int, t: float | None = None) -> None:
        """The GPU works again (or is gone): its time from ``t`` (the latest sample's) is
        judged by the plain test again."""
        since = self.since.pop(gpu, None)
        if since is not None and t is not None:
            self.ended.append((gpu, since, max(since, t)))

    def periods(self) -> tuple[Period, ...]:
        """Every hold kept: the ended ones, then those still held."""
        return (*self.ended, *((g, s, None) for g, s in sorted(self.since.items())))


def held_at(t: FloatArray, gpu: int, periods: Sequence[Period]) -> BoolArray:
    """Whether ``gpu`` was held at each time of ``t`` (from its start, up to its release)."""
    out = np.zeros(len(t), dtype=bool)
    for g, start, end in periods:
        if g == gpu:
            out |= (t >= start) & (t < end if end is not None else True)
    return out


def host_idle(
    t: FloatArray,
    gpus: Sequence[int],
    plain: Sequence[BoolArray],
    util: Sequence[FloatArray],
    periods: Sequence[Period],
) -> BoolArray:
    """The tracker's judgment over arrays of one host (the state at each sample holds until
    the next): idle where no GPU is busy by the plain test, unless it is held and does no
    work (utilization under ``WORK_PCT``; unreported counts as work)."""
    blocked = np.zeros(len(t), dtype=bool)
    for g, p, u in zip(gpus, plain, util, strict=True):
        with np.errstate(invalid="ignore"):
            working = np.isnan(u) | (u >= WORK_PCT)
        blocked |= ~p & (working | ~held_at(t, g, periods))
    return ~blocked
