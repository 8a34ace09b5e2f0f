"""Fixed-size NumPy ring buffers holding the live window of every host (Qt-free).

``LiveBuffers.feed(host, msg)`` takes the parsed messages of ``gpufleet.core.wire.messages``;
``series(host, gpu, metric, t0, t1, max_points)`` returns what a plot needs, already reduced to
the plot's pixel width with a peak-preserving min/max per bin, so that a one-sample spike in a
one-hour window still shows.

Memory is allocated per host when its ``hello`` arrives (ring of ``window_s`` /
``interval_s`` slots × GPUs) and per metric when its first value does, each metric in the
narrowest type that holds its values exactly (``gpufleet.core.live.columns``: a metric a GPU
never reports costs nothing, a percentage one byte a value), so a fleet that streams for a
day uses exactly as much as one that streamed for an hour. Only the metrics that the UI
plots or summarises are kept (``LIVE_METRICS``); the store keeps every column.

Thread safety: one lock guards everything; a worker thread feeds while the GUI thread reads.
Readers get copies, never views into the ring.
"""

from __future__ import annotations

import functools
import math
import threading
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from gpufleet_sampler import protocol

from gpufleet.core.live.columns import CompactColumns
from gpufleet.core.live.links import LinkBuffers
from gpufleet.core.wire.messages import Event, Hello, Links, Message, Procs, Sample

F64 = npt.NDArray[np.float64]

# The columns the GUI plots or summarises. Everything else goes to the store only.
LIVE_METRICS: tuple[str, ...] = (
    "util_gpu_pct",
    "util_mem_pct",
    "sm_clock_mhz",
    "mem_clock_mhz",
    "temp_gpu_c",
    "temp_mem_c",
    "power_w",
    "power_limit_w",
    "pstate",
    "clock_reasons",
    "fan_pct",
    "mem_used_bytes",
    "pcie_tx_bps",
    "pcie_rx_bps",
    "pcie_gen",
    "pcie_width",
    "nvlink_tx_bps",
    "nvlink_rx_bps",
    "nvlink_up",
    "lost",
    # GPM (Hopper and newer): how much of the GPU works, beside util_gpu_pct's "a kernel ran".
    *protocol.GPM_COLUMNS,
)
_METRIC_POS = {m: i for i, m in enumerate(LIVE_METRICS)}
_NAN = float("nan")
# A time step longer than this many sampling intervals is drawn as a gap, not a line.
GAP_INTERVALS = 3.5
MAX_EVENTS = 1000


@dataclass(frozen=True)
class Series:
    """Times (epoch seconds) and values (NaN = not reported or a gap), ready for setData."""

    t: F64
    v: F64

    def __len__(self) -> int:
        return len(self.t)


class _HostRing:
    """The ring of one host: ``t[cap]`` and ``cols`` (metric, gpu, cap), contiguous in time."""

    def __init__(self, hello: Hello, window_s: float) -> None:
        self.hello = hello
        interval = max(0.05, float(hello.interval_s or 1.0))
        self.interval = interval
        self.cap = max(16, math.ceil(window_s / interval) + 8)
        self.gpu_index = {g.index: i for i, g in enumerate(hello.gpus)}
        n_gpu = max(1, len(hello.gpus))
        self.t = np.full(self.cap, np.nan, dtype=np.float64)
        # Where each live metric sits in this host's sample rows (None: not sent).
        src = [(hello.columns.index(m) + 1) if m in hello.columns else None for m in LIVE_METRICS]
        # Row positions of the metrics this host sends (pos) and where they go (dst).
        self.pos = [p for p in src if p is not None]
        self.dst = np.array([i for i, p in enumerate(src) if p is not None], dtype=np.intp)
        self.cols = CompactColumns(len(LIVE_METRICS), self.dst, n_gpu, self.cap)
        self.n_gpu = n_gpu
        self.blank = [_NAN] * len(self.pos)  # a GPU's row when the sample lacks it
        self.max_pos = max(self.pos, default=0)
        self.head = 0  # next slot to write
        self.count = 0
        self.latest: Sample | None = None
        self.procs: Procs | None = None
        # Bumped by every message that changes what a plot of this host shows: a redraw
        # whose inputs (host, range, version) did not change can be skipped.
        self.version = 0

    def push(self, s: Sample) -> None:
        if self.count and s.t < self.t[(self.head - 1) % self.cap]:
            return  # a replayed older sample (reattach): the store keeps it, the plot must not
        slot = self.head
        self.t[slot] = s.t
        # The live columns of every GPU's row picked in Python (NaN for None, and for a GPU
        # the sample lacks); CompactColumns stores them a batch at a time.
        picked = [self.blank] * self.n_gpu
        for row in s.rows:
            gi = self.gpu_index.get(row[0] if isinstance(row[0], int) else -1)
            if gi is None or len(row) <= self.max_pos:
                continue
            picked[gi] = [_NAN if (x := row[p]) is None else x for p in self.pos]
        self.cols.write(slot, picked)
        self.head = (slot + 1) % self.cap
        self.count = min(self.count + 1, self.cap)
        self.latest = s
        self.version += 1

    def ordered_idx(self) -> tuple[slice, slice]:
        """The ring's filled part in time order, as up to two slices."""
        if self.count < self.cap:
            return slice(0, self.count), slice(0, 0)
        return slice(self.head, self.cap), slice(0, self.head)


def downsample_peak(t: F64, v: F64, max_points: int) -> tuple[F64, F64]:
    """Reduce to about ``max_points`` points keeping each bin's min and max (in time order),
    so spikes survive. NaN values (gaps) are kept as NaN where a whole bin is NaN."""
    out_t, out_v = downsample_peak_rows(t, v.reshape(1, -1), max_points)
    return out_t, out_v[0]


@functools.lru_cache(maxsize=64)
def _bins(n: int, bins: int) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.intp]]:
    """First and last index of each of ``bins`` near-equal bins over ``n`` samples. Cached:
    the window holds about the same number of samples from one redraw to the next."""
    edges = np.linspace(0, n, bins + 1).astype(np.intp)
    starts = edges[:-1][np.diff(edges) > 0]
    ends = np.append(starts[1:], n) - 1
    starts.flags.writeable = False
    ends.flags.writeable = False
    return starts, ends


def downsample_peak_rows(t: F64, v: npt.NDArray[np.floating], max_points: int) -> tuple[F64, F64]:
    """``downsample_peak`` for several rows sharing one time axis (``v`` is rows × samples):
    one reduction per bin edge for all rows at once. Returns the shared times and the
    reduced rows (float64)."""
    n = len(t)
    if max_points <= 0 or n <= max_points:
        return t, v.astype(np.float64, copy=False)
    starts, ends = _bins(n, max(1, max_points // 2))
    out_t = np.empty(2 * len(starts), dtype=np.float64)
    out_t[0::2] = t[starts]
    out_t[1::2] = t[ends]
    out_v = np.empty((v.shape[0], 2 * len(starts)), dtype=np.float64)
    # fmin/fmax ignore NaN unless both are NaN: an all-NaN bin stays NaN (a gap).
    out_v[:, 0::2] = np.fmin.reduceat(v, starts, axis=1)
    out_v[:, 1::2] = np.fmax.reduceat(v, starts, axis=1)
    return out_t, out_v


class LiveBuffers:
    """The live window of every host. ``window_s`` seconds at each host's sampling interval."""

    def __init__(self, window_s: float = 3600.0) -> None:
        self.window_s = float(window_s)
        # Re-entrant: series_multi reads several metrics in one hold through series_many.
        self._lock = threading.RLock()
        self._rings: dict[str, _HostRing] = {}
        self._events: dict[str, list[Event]] = {}
        self.samples_total = 0
        # Per-link NVLink values (``links`` messages), kept apart: see gpufleet.core.live.links.
        self.links = LinkBuffers(window_s)

    # -- writing ---------------------------------------------------------------------------

    def feed(self, host: str, msg: Message) -> None:
        """Take one message of ``host``. A sample before any hello is dropped (the decoder
        never produces one; a replay from the store could)."""
        with self._lock:
            if isinstance(msg, Sample):
                ring = self._rings.get(host)
                if ring is not None:
                    ring.push(msg)
                    self.samples_total += 1
            elif isinstance(msg, Hello):
                old = self._rings.get(host)
                if old is not None and _same_layout(old.hello, msg):
                    old.hello = msg  # a reconnect or a new run: keep the history on screen
                    old.version += 1
                else:
                    ring = self._rings[host] = _HostRing(msg, self.window_s)
                    ring.version = old.version + 1 if old is not None else 0
            elif isinstance(msg, Procs):
                ring = self._rings.get(host)
                if ring is not None:
                    ring.procs = msg
                    ring.version += 1
            elif isinstance(msg, Links):
                ring = self._rings.get(host)
                if ring is not None:
                    self.links.feed(host, msg, ring.hello)
                    ring.version += 1  # tabs redraw when a links message arrived
            elif isinstance(msg, Event):
                evs = self._events.setdefault(host, [])
                evs.append(msg)
                if len(evs) > MAX_EVENTS:
                    del evs[: len(evs) - MAX_EVENTS]

    def remove_host(self, host: str) -> None:
        with self._lock:
            self._rings.pop(host, None)
            self._events.pop(host, None)
        self.links.remove_host(host)

    # -- reading ---------------------------------------------------------------------------

    def hosts(self) -> list[str]:
        with self._lock:
            return list(self._rings)

    def version(self, host: str | None) -> int:
        """A number that changes whenever ``host``'s data (samples, processes, hello) does;
        -1 for an unknown host."""
        with self._lock:
            ring = self._rings.get(host) if host is not None else None
            return ring.version if ring is not None else -1

    def hello(self, host: str) -> Hello | None:
        with self._lock:
            ring = self._rings.get(host)
            return ring.hello if ring else None

    def latest(self, host: str) -> Sample | None:
        with self._lock:
            ring = self._rings.get(host)
            return ring.latest if ring else None

    def procs(self, host: str) -> Procs | None:
        with self._lock:
            ring = self._rings.get(host)
            return ring.procs if ring else None

    def events(self, host: str, t0: float = -math.inf, t1: float = math.inf) -> list[Event]:
        with self._lock:
            return [e for e in self._events.get(host, ()) if t0 <= e.t <= t1]

    def span(self, host: str) -> tuple[float, float] | None:
        """First and last sample time held for ``host``."""
        with self._lock:
            ring = self._rings.get(host)
            if ring is None or ring.count == 0:
                return None
            a, _ = ring.ordered_idx()
            first = ring.t[a.start] if ring.count == ring.cap else ring.t[0]
            return float(first), float(ring.t[(ring.head - 1) % ring.cap])

    def gpus(self, host: str) -> list[int]:
        with self._lock:
            ring = self._rings.get(host)
            return [g.index for g in ring.hello.gpus] if ring else []

    def series(
        self,
        host: str,
        gpu: int,
        metric: str,
        t0: float = -math.inf,
        t1: float = math.inf,
        max_points: int | None = None,
    ) -> Series:
        """The values of one metric of one GPU between t0 and t1, a NaN where the stream had
        a gap, reduced to ``max_points`` with min/max per bin."""
        out = self.series_many(host, [gpu], metric, t0, t1, max_points)
        return out[0]

    def series_many(
        self,
        host: str,
        gpus: Sequence[int],
        metric: str,
        t0: float = -math.inf,
        t1: float = math.inf,
        max_points: int | None = None,
    ) -> list[Series]:
        """``series`` for several GPUs of one host in one lock hold, reduced together (the
        GPUs share one time axis; the Series share its array, which is read-only)."""
        empty = Series(np.empty(0), np.empty(0))
        mi = _METRIC_POS.get(metric)
        with self._lock:
            ring = self._rings.get(host)
            if ring is None or mi is None or ring.count == 0:
                return [empty for _ in gpus]
            a, b = ring.ordered_idx()
            t = np.concatenate((ring.t[a], ring.t[b]))
            # Include one point either side so the line reaches the plot's edges.
            i0 = max(0, int(np.searchsorted(t, t0, "left")) - 1)
            i1 = min(len(t), int(np.searchsorted(t, t1, "right")) + 1)
            t = t[i0:i1]
            gis = [ring.gpu_index.get(g) for g in gpus]
            have = [gi for gi in gis if gi is not None]
            # A copy: GPUs × the slots of [i0, i1) in time order.
            block = ring.cols.read(mi, have, _slots_between(a, b, i0, i1))
            interval = ring.interval
        gap_idx = _gap_positions(t, interval)
        if len(gap_idx):
            t = np.insert(t, gap_idx, t[gap_idx - 1] + interval)
            block = np.insert(block, gap_idx, np.nan, axis=1)
        if max_points:
            t, rows = downsample_peak_rows(t, block, max_points)
        else:
            rows = block.astype(np.float64)
        t.flags.writeable = False
        rows.flags.writeable = False  # shared with the caller: a write would be a bug
        res: list[Series] = []
        k = 0
        for gi in gis:
            if gi is None:
                res.append(empty)
            else:
                res.append(Series(t, rows[k]))
                k += 1
        return res

    def series_multi(
        self,
        host: str,
        gpus: Sequence[int],
        metrics: Sequence[str],
        t0: float = -math.inf,
        t1: float = math.inf,
        max_points: int | None = None,
    ) -> list[list[Series]]:
        """``series_many`` for several metrics from one snapshot of the ring (one lock hold):
        the series line up sample for sample, even while a worker feeds the buffers."""
        with self._lock:
            return [self.series_many(host, gpus, m, t0, t1, max_points) for m in metrics]

    def value_at(self, host: str, gpu: int, metric: str, t: float) -> float | None:
        """The value nearest to time ``t`` (for the crosshair); None when not reported."""
        mi = _METRIC_POS.get(metric)
        with self._lock:
            ring = self._rings.get(host)
            gi = ring.gpu_index.get(gpu) if ring else None
            if ring is None or gi is None or mi is None or ring.count == 0:
                return None
            a, b = ring.ordered_idx()
            ts = np.concatenate((ring.t[a], ring.t[b]))
            i = int(np.searchsorted(ts, t))
            if i >= len(ts) or (i > 0 and abs(ts[i - 1] - t) < abs(ts[i] - t)):
                i -= 1
            if abs(ts[i] - t) > GAP_INTERVALS * ring.interval:
                return None
            slot = (a.start + i) % ring.cap if ring.count == ring.cap else i
            x = ring.cols.value(mi, gi, slot)
            return None if math.isnan(x) else x


def _slots_between(a: slice, b: slice, i0: int, i1: int) -> list[slice]:
    """The ring slots of positions ``i0..i1`` of its time order (the slots of ``a``, then
    those of ``b``)."""
    na = a.stop - a.start
    first = slice(a.start + min(i0, na), a.start + min(i1, na))
    second = slice(b.start + max(0, i0 - na), b.start + max(0, i1 - na))
    return [first, second]


def _gap_positions(t: F64, interval: float) -> npt.NDArray[np.int64]:
    if len(t) < 2:
        return np.empty(0, dtype=np.int64)
    return np.flatnonzero(np.diff(t) > GAP_INTERVALS * interval) + 1


def _same_layout(a: Hello, b: Hello) -> bool:
    return (
        a.columns == b.columns
        and [g.index for g in a.gpus] == [g.index for g in b.gpus]
        and a.interval_s == b.interval_s
    )
