"""History beyond the live window, read from the store off the GUI thread.

When the shared time range starts before what the ring buffers hold (6 h, 24 h, or a moment
picked from an alert), ``extend`` returns the live series at once and asks a QThreadPool worker
for the older part; when the answer arrives it is cached (per host, GPU, metric and range
rounded to a minute) and the next redraw uses it. The GUI thread never waits on SQLite.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Sequence
from typing import Any, Protocol

import numpy as np
from PySide6.QtCore import QObject, QRunnable, QThreadPool, Signal

from gpufleet.core.live import LiveBuffers, Series, downsample_peak

Key = tuple[str, int, str, int, int]


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
    done = Signal(object, object)  # key, Series | None


class _Query(QRunnable):
    def __init__(self, fn: Callable[[], Series | None], key: Key, sink: _Done) -> None:
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
        self._cache: dict[Key, Series | None] = {}
        self._pending: set[Key] = set()
        self._lock = threading.Lock()
        self._sink = _Done()
        self._sink.done.connect(self._arrived)

    def _arrived(self, key: Key, res: Series | None) -> None:
        self._pending.discard(key)
        if len(self._cache) > 512:
            self._cache.clear()
        self._cache[key] = res
        self.updated.emit()

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
            if key in self._cache:
                old = self._cache[key]
                if old is not None and len(old):
                    keep = old.t < start
                    t = np.concatenate(
                        (old.t[keep], [old.t[keep][-1] + 1e-3] if keep.any() else [], s.t)
                    )
                    v = np.concatenate((old.v[keep], [math.nan] if keep.any() else [], s.v))
                    tt, vv = downsample_peak(t, v, max_points)
                    out.append(Series(tt, vv))
                    continue
            elif key not in self._pending:
                self._pending.add(key)

                def q(
                    g: int = g, a: float = t0, b: float = end, store: StoreLike = self.store
                ) -> Series | None:
                    t, v = store.query(host, g, metric, a, b, max_points)
                    return Series(np.asarray(t, dtype=np.float64), np.asarray(v, dtype=np.float64))

                self.pool.start(_Query(q, key, self._sink))
            out.append(s)
        return out
