"""Time paid for nothing while memory was held, counted as idle in the cost breakdown.

The tracker's idle (``cost.idle.gpu_is_idle``: memory under 10 %) calls a hung job or a
forgotten notebook that keeps its memory "busy". The ``idle_held`` rule finds such a GPU doing
no work; the rule engine tells its ``CostTracker`` (``hold`` when the alert fires, from when
the GPU went quiet; ``release`` when it resolves), and from then on an interval in which every
GPU of the host was idle or held counts idle. The minutes between the GPU going quiet and the
alert firing (5 or 15 min) were counted busy when they passed: the tracker keeps its recent
busy intervals, and ``hold`` moves those the held GPUs make idle. The live Cost tab and the
one judgment of a window read the same tracker, so the alert, the diagnosis and the cost say
the same thing.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Final

# How far back ``hold`` may look: the longest the rule waits before it fires (``cold_s``,
# 15 min), with room for a rule file that waits longer.
KEEP_S: Final = 3600.0
# Utilization from which a GPU is working, held or not (the idle_held rule's own mark).
WORK_PCT: Final = 5.0


@dataclass
class HeldIdle:
    """One host's held GPUs (since when) and its recent busy intervals: (start, length,
    the GPUs that were not idle)."""

    since: dict[int, float] = field(default_factory=dict)
    recent: deque[tuple[float, float, frozenset[int]]] = field(default_factory=deque)

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

    def release(self, gpu: int) -> None:
        """The GPU works again (or is gone): its time is judged by the plain test again."""
        self.since.pop(gpu, None)
