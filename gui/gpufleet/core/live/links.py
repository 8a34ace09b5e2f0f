"""Per-link NVLink values of every host: the live window of ``links`` messages (Qt-free).

The sampler sends a ``links`` message on its medium tier (every ~5 s) for the GPUs that have
NVLink: per link, TX and RX rate, up/down and nominal speed. ``LinkBuffers`` keeps, per host,
a fixed-size ring of them covering the live window (``window_s`` / the host's
``links_interval_s`` slots × GPUs × links, float32), allocated on the host's first ``links``
message, so a host without NVLink costs nothing. ``latest`` gives what the Interconnect tab's
per-link grid draws, ``at`` what it draws under the crosshair, ``series`` one link's history;
``link_issues`` names the links that are down or slow, for the sentence under the grid.

Live only: per-link values are not written to the SQLite history (a day of 8 GPUs × 18 links
every 5 s would out-weigh every other column together, and the per-GPU totals are there).

Thread safety: one lock; a worker feeds (through ``LiveBuffers.feed``), the GUI thread reads.
Readers get copies.
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from gpufleet_sampler import protocol

from gpufleet.core.wire.messages import Hello, Links

F64 = npt.NDArray[np.float64]

# A link carrying less than this share of its GPU's median link (while the GPU moves at least
# SLOW_MIN_BPS per link) is "slow": NCCL spreads an all-reduce evenly over the links.
SLOW_FRACTION = 0.5
SLOW_MIN_BPS = 1e9


@dataclass(frozen=True)
class LinkSnapshot:
    """The latest per-link values of one host: arrays of shape (GPUs, links), NaN = not
    reported (or no such link on a GPU with fewer links)."""

    t: float
    seq: int
    gpus: tuple[int, ...]  # the GPU index of each row
    tx: F64  # B/s
    rx: F64  # B/s
    up: F64  # 1 up, 0 down, NaN unknown
    speed: F64  # nominal B/s per direction (the hello's nvlink_link_bps where not sent)

    @property
    def n_links(self) -> int:
        return int(self.up.shape[1]) if self.up.ndim == 2 else 0

    def fraction(self) -> F64:
        """TX+RX of each link against its nominal both ways (0..1, NaN unknown)."""
        with np.errstate(invalid="ignore", divide="ignore"):
            out: F64 = (self.tx + self.rx) / (2.0 * self.speed)
        return out


@dataclass(frozen=True)
class LinkIssue:
    """A link that is down, or slow: trained below its GPU's fastest link (``speed``) or
    carrying far less than its sibling links (``traffic``)."""

    gpu: int
    link: int
    kind: str  # "down" | "slow"
    reason: str  # "state" | "speed" | "traffic"
    value: float | None = None  # the link's B/s (speed or traffic)
    reference: float | None = None  # what it was compared with (B/s)


class _HostLinks:
    """The ring of one host: ``t[cap]``, ``tx/rx/up[cap, gpu, link]``."""

    def __init__(self, gpus: tuple[int, ...], n_links: int, cap: int) -> None:
        self.gpus = gpus
        self.row_of = {g: i for i, g in enumerate(gpus)}
        self.n_links = n_links
        self.cap = cap
        shape = (cap, len(gpus), n_links)
        self.t = np.full(cap, np.nan, dtype=np.float64)
        self.tx = np.full(shape, np.nan, dtype=np.float32)
        self.rx = np.full(shape, np.nan, dtype=np.float32)
        self.up = np.full(shape, np.nan, dtype=np.float32)
        self.speed = np.full((len(gpus), n_links), np.nan, dtype=np.float64)
        self.seqs = [0] * cap
        self.head = 0
        self.count = 0
        self.latest: Links | None = None

    def push(self, msg: Links) -> None:
        if self.count and msg.t < self.t[(self.head - 1) % self.cap]:
            return  # a replayed older message (reattach): the grid shows the newest
        slot = self.head
        self.t[slot] = msg.t
        self.seqs[slot] = msg.seq
        for a in (self.tx, self.rx, self.up):
            a[slot].fill(np.nan)
        for r in msg.rows:
            gi = self.row_of.get(r.gpu)
            if gi is None:
                continue
            n = min(self.n_links, r.n_links)
            self.tx[slot, gi, :n] = _floats(r.tx_bps[:n])
            self.rx[slot, gi, :n] = _floats(r.rx_bps[:n])
            self.up[slot, gi, :n] = _floats(r.up[:n])
            sp = _floats(r.speed_bps[:n])
            known = ~np.isnan(sp)
            self.speed[gi, :n][known] = sp[known]  # a speed once read stays known
        self.head = (slot + 1) % self.cap
        self.count = min(self.count + 1, self.cap)
        self.latest = msg


def _floats(values: tuple[float | int | None, ...]) -> F64:
    return np.array([math.nan if v is None else float(v) for v in values], dtype=np.float64)


def _layout(msg: Links) -> tuple[tuple[int, ...], int]:
    gpus = tuple(sorted({r.gpu for r in msg.rows}))
    return gpus, max((r.n_links for r in msg.rows), default=0)


class LinkBuffers:
    """Per-link NVLink values of every host, ``window_s`` seconds at each host's links rate."""

    def __init__(self, window_s: float = 3600.0) -> None:
        self.window_s = float(window_s)
        self._lock = threading.Lock()
        self._hosts: dict[str, _HostLinks] = {}
        self._hello: dict[str, Hello | None] = {}
        self._version: dict[str, int] = {}
        self.messages_total = 0

    def feed(self, host: str, msg: Links, hello: Hello | None = None) -> None:
        """Take one ``links`` message of ``host`` (``hello``: the host's current one, for the
        links interval and the nominal link speed where a row has none)."""
        if not msg.rows:
            return
        gpus, n_links = _layout(msg)
        with self._lock:
            ring = self._hosts.get(host)
            if ring is None or not set(gpus) <= set(ring.gpus) or n_links > ring.n_links:
                # First message, or more GPUs / links than before (a new run): start over.
                if ring is not None:
                    gpus = tuple(sorted(set(gpus) | set(ring.gpus)))
                    n_links = max(n_links, ring.n_links)
                interval = _interval(hello)
                cap = max(8, math.ceil(self.window_s / interval) + 4)
                ring = self._hosts[host] = _HostLinks(gpus, n_links, cap)
            ring.push(msg)
            self._hello[host] = hello
            self._version[host] = self._version.get(host, 0) + 1
            self.messages_total += 1

    def remove_host(self, host: str) -> None:
        with self._lock:
            self._hosts.pop(host, None)
            self._hello.pop(host, None)
            self._version.pop(host, None)

    # -- reading ---------------------------------------------------------------------------

    def hosts(self) -> list[str]:
        with self._lock:
            return list(self._hosts)

    def version(self, host: str | None) -> int:
        """Changes whenever a ``links`` message of ``host`` arrived (-1: none yet)."""
        with self._lock:
            return self._version.get(host, -1) if host is not None else -1

    def latest(self, host: str | None) -> LinkSnapshot | None:
        """The newest per-link values of ``host``, or None (no NVLink, nothing yet)."""
        if host is None:
            return None
        with self._lock:
            ring = self._hosts.get(host)
            if ring is None or ring.latest is None:
                return None
            return self._snapshot(host, ring, (ring.head - 1) % ring.cap)

    def at(self, host: str | None, t: float) -> LinkSnapshot | None:
        """The per-link values of ``host`` at the moment ``t`` (a crosshair's): the message
        whose interval holds ``t`` (each message's rates cover the time since the one before,
        so the first at or after ``t``); the newest for a ``t`` after it; None for a ``t``
        before the live window (or nothing yet)."""
        if host is None or not math.isfinite(t):
            return None
        with self._lock:
            ring = self._hosts.get(host)
            if ring is None or ring.latest is None:
                return None
            newest = (ring.head - 1) % ring.cap
            if t >= ring.t[newest]:
                return self._snapshot(host, ring, newest)
            order = _ring_order(ring)
            times = ring.t[order]
            k = int(np.searchsorted(times, t, side="left"))
            if k == 0 and times[0] - t > _interval(self._hello.get(host)) * 1.5:
                return None  # before the first message kept
            return self._snapshot(host, ring, int(order[k]))

    def _snapshot(self, host: str, ring: _HostLinks, slot: int) -> LinkSnapshot:
        """The snapshot of one ring slot (called with the lock held)."""
        speed = ring.speed.copy()
        hello = self._hello.get(host)
        t = float(ring.t[slot])
        seq = ring.seqs[slot]
        tx = ring.tx[slot].astype(np.float64)
        rx = ring.rx[slot].astype(np.float64)
        up = ring.up[slot].astype(np.float64)
        gpus = ring.gpus
        if hello is not None:
            for gi, g in enumerate(gpus):
                info = hello.gpu(g)
                nom = info.nominal_value("nvlink_link_bps") if info is not None else None
                if isinstance(nom, (int, float)) and nom > 0:
                    row = speed[gi]
                    row[np.isnan(row)] = float(nom)
        return LinkSnapshot(t, seq, gpus, tx, rx, up, speed)

    def series(
        self, host: str, gpu: int, link: int, t0: float = -math.inf, t1: float = math.inf
    ) -> tuple[F64, F64, F64]:
        """Times, TX and RX (B/s) of one link within [t0, t1], oldest first."""
        empty = np.empty(0, dtype=np.float64)
        with self._lock:
            ring = self._hosts.get(host)
            gi = ring.row_of.get(gpu) if ring is not None else None
            if ring is None or gi is None or not 0 <= link < ring.n_links:
                return empty, empty, empty
            order = _ring_order(ring)
            t = ring.t[order]
            tx = ring.tx[order, gi, link].astype(np.float64)
            rx = ring.rx[order, gi, link].astype(np.float64)
        keep = (t >= t0) & (t <= t1)
        return t[keep], tx[keep], rx[keep]


def _ring_order(ring: _HostLinks) -> npt.NDArray[np.int64]:
    """The ring's filled slots, oldest first."""
    if ring.count < ring.cap:
        return np.arange(ring.count, dtype=np.int64)
    return (np.arange(ring.cap, dtype=np.int64) + ring.head) % ring.cap


def _interval(hello: Hello | None) -> float:
    v = hello.raw.get("links_interval_s") if hello is not None else None
    if isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0:
        return max(0.05, float(v))
    return protocol.LINKS_INTERVAL_S


def link_issues(snap: LinkSnapshot) -> list[LinkIssue]:
    """The links of ``snap`` that are down or slow, GPU by GPU, link by link."""
    out: list[LinkIssue] = []
    total = snap.tx + snap.rx
    for gi, g in enumerate(snap.gpus):
        up = snap.up[gi]
        live = up == 1
        speeds = snap.speed[gi][live & ~np.isnan(snap.speed[gi])]
        fastest = float(speeds.max()) if speeds.size else None
        traffic = total[gi][live & ~np.isnan(total[gi])]
        median = float(np.median(traffic)) if traffic.size else None
        for k in range(len(up)):
            if up[k] == 0:
                out.append(LinkIssue(g, k, "down", "state"))
                continue
            if up[k] != 1:
                continue
            sp = snap.speed[gi, k]
            if fastest is not None and not math.isnan(sp) and sp < 0.99 * fastest:
                out.append(LinkIssue(g, k, "slow", "speed", float(sp), fastest))
                continue
            tr = total[gi, k]
            if (
                median is not None
                and median >= 2 * SLOW_MIN_BPS
                and not math.isnan(tr)
                and tr < SLOW_FRACTION * median
            ):
                out.append(LinkIssue(g, k, "slow", "traffic", float(tr), median))
    return out
