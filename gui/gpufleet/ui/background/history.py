"""History beyond the live window, read from the store off the GUI thread.

When the shared time range starts before what the ring buffers hold (6 h, 24 h, or a moment
picked from an alert), ``extend`` returns the live series at once and asks a QThreadPool worker
for the older part; when the answer arrives it is cached (per host, GPU, metric and range
rounded to a minute) and the next redraw uses it. The GUI thread never waits on SQLite.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt
from PySide6.QtCore import QObject, QRunnable, QThreadPool, Signal

from gpufleet.core.live.buffers import GAP_INTERVALS, LiveBuffers, Series

Key = tuple[str, int, str, int, int]  # host, GPU, metric, range start and end in minutes
F64 = npt.NDArray[np.float64]
MAX_ENTRIES = 512  # cached answers (least recently drawn dropped first)


class StoreLike(Protocol):
    def query(
        self,
        host: str,
        gpu: int,
        metric: str,
        t0: float,
        t1: float,
        max_points: int | None = None,
    ) -> tuple[Any, Any]: ...


class _Done(QObject):
    done = Signal(object, object)  # key, _Part | None


@dataclass(frozen=True)
class _Part:
    """The stored part of one series: times, values (NaN breaks the line at each gap) and
    the usual spacing of its points (1 s raw, 60 s rollups, or a plot bucket)."""

    t: F64
    v: F64
    step: float


def with_gaps(t: F64, v: F64) -> tuple[F64, F64, float]:
    """Insert a NaN where consecutive points are further apart than GAP_INTERVALS times the
    usual spacing (the median step), as the live buffers do: the store returns only the
    points it has, and a plot would join the two sides of a hole with a straight line."""
    if t.size < 2:
        return t, v, 0.0
    d = np.diff(t)
    step = float(np.median(d))
    if step <= 0:
        return t, v, step
    idx = np.flatnonzero(d > GAP_INTERVALS * step) + 1
    if idx.size:
        t = np.insert(t, idx, t[idx - 1] + step)
        v = np.insert(v, idx, math.nan)
    return t, v, step


class _Query(QRunnable):
    def __init__(self, fn: Callable[[], _Part | None], key: Key, sink: _Done) -> None:
        super().__init__()
        self.fn, self.key, self.sink = fn, key, sink

    def run(self) -> None:
        try:
            res = self.fn()
        except Exception:  # a store error leaves the older part blank, never the app broken
            res = None
        self.sink.done.emit(self.key, res)


class HistoryCache(QObject):
    updated = Signal()

    def __init__(
        self, store: StoreLike, live: LiveBuffers, pool: QThreadPool | None = None
    ) -> None:
        super().__init__()
        self.store = store
        self.live = live
        self.pool = pool or QThreadPool.globalInstance()
        self._cache: OrderedDict[Key, _Part | None] = OrderedDict()
        # The newest answer per (host, GPU, metric): drawn while the query for a moved range
        # is out (a followed range moves every minute; blanking the history until the new
        # answer arrives made the older part blink).
        self._latest: dict[tuple[str, int, str], Key] = {}
        self._pending: set[Key] = set()
        self._sink = _Done()
        self._sink.done.connect(self._arrived)

    @property
    def pending(self) -> bool:
        """True while a store query is out (tests wait on it)."""
        return bool(self._pending)

    def _arrived(self, key: Key, res: _Part | None) -> None:
        self._pending.discard(key)
        self._cache[key] = res
        while len(self._cache) > MAX_ENTRIES:
            self._cache.popitem(last=False)
        self._latest[key[:3]] = key
        self.updated.emit()

    def _part(self, key: Key) -> _Part | None:
        if key in self._cache:
            self._cache.move_to_end(key)
            return self._cache[key]
        latest = self._latest.get(key[:3])
        return self._cache.get(latest) if latest is not None else None

    def value_at(self, host: str, gpu: int, metric: str, t: float) -> float | None:
        """The stored value nearest to ``t`` from the newest answer for this series (for a
        crosshair on the older part); None where nothing was stored near ``t``."""
        latest = self._latest.get((host, gpu, metric))
        part = self._cache.get(latest) if latest is not None else None
        if part is None or not len(part.t):
            return None
        i = int(np.searchsorted(part.t, t))
        cands = [j for j in (i - 1, i) if 0 <= j < len(part.t) and not math.isnan(part.v[j])]
        if not cands:
            return None
        j = min(cands, key=lambda j: abs(part.t[j] - t))
        if abs(part.t[j] - t) > GAP_INTERVALS * max(part.step, 1.0):
            return None
        return float(part.v[j])

    def extend(
        self,
        host: str,
        gpus: Sequence[int],
        metric: str,
        t0: float,
        t1: float,
        live: list[Series],
        max_points: int,
    ) -> list[Series]:
        span = self.live.span(host)
        start = span[0] if span else t1
        if t0 >= start - 5:
            return live
        out = []
        end = min(start, t1)
        for g, s in zip(gpus, live, strict=True):
            key: Key = (host, g, metric, int(t0 // 60), int(end // 60))
            if key not in self._cache and key not in self._pending:
                self._pending.add(key)

                def q(
                    g: int = g, a: float = t0, b: float = end, store: StoreLike = self.store
                ) -> _Part | None:
                    t, v = store.query(host, g, metric, a, b, max_points)
                    tt, vv, step = with_gaps(
                        np.asarray(t, dtype=np.float64), np.asarray(v, dtype=np.float64)
                    )
                    return _Part(tt, vv, step)

                self.pool.start(_Query(q, key, self._sink))
            old = self._part(key)
            if old is None or not len(old.t):
                out.append(s)
                continue
            # An answer drawn while a moved range's query is out may reach further back.
            keep = (old.t < start) & (old.t >= t0 - old.step)
            if not keep.any():
                out.append(s)
                continue
            ot, ov = old.t[keep], old.v[keep]
            # A NaN between the stored part and the live one unless they meet: the app was
            # not running (or the host was down) in between.
            if not len(s.t) or s.t[0] - ot[-1] > GAP_INTERVALS * max(old.step, 1.0):
                ot, ov = np.append(ot, ot[-1] + 1e-3), np.append(ov, math.nan)
            # Both parts are already reduced to about the plot's width: joined, not reduced
            # again (a min/max pass over the joint would swallow the NaNs that mark gaps).
            out.append(Series(np.concatenate((ot, s.t)), np.concatenate((ov, s.v))))
        return out
