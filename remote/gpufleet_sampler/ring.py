"""The daemon's memory of what it emitted: encoded message lines keyed by sequence number.

Two tiers:

- raw: every message, for at least ``raw_seconds`` (an hour) of samples at the daemon's
  interval, plus a margin. A client that was away for less than that gets every line back.
- day: what leaves the raw tier is thinned, not dropped: every ``downsample``-th sample (one a
  minute by default), every event (an Xid while the laptop slept is never lost) and every
  process snapshot whose set of processes differs from the previous one kept (per-link NVLink
  ``links`` messages are live detail and are dropped: a day of them every 5 s would crowd
  the events out of the kept tier's cap). It covers
  ``day_seconds`` (a day) by message time, with hard caps on counts so memory stays bounded
  whatever the interval.

Lines are handed in and out as bytes with their newline, ready to write to a socket. They are
held zlib-compressed (level 1): a sample line of 8 GPUs shrinks about 5x (1.5 kB to 0.3 kB) for
about 30 us per tick, which keeps an hour of 8 GPUs near 2 MiB instead of 8 MiB of the
sampler's 30 MiB budget. Python 3.8, stdlib only.
"""

import bisect
import math
import zlib
from collections import deque
from typing import Deque, List, Optional, Tuple

KIND_SAMPLE = "sample"
KIND_PROCS = "procs"
KIND_EVENT = "event"
KIND_LINKS = "links"

# Extra samples kept above the hour, so "at least an hour" holds even with jitter.
RAW_MARGIN = 120
# Hard caps of the day tier (counts), whatever its time span says.
DAY_SAMPLES_MAX = 20000
DAY_KEPT_MAX = 50000


class _Entry(object):
    __slots__ = ("fingerprint", "kind", "line", "seq", "t")

    def __init__(
        self, seq: int, t: float, kind: str, line: bytes, fingerprint: Optional[str]
    ) -> None:
        self.seq = seq
        self.t = t
        self.kind = kind
        self.line = line
        self.fingerprint = fingerprint


class Ring(object):
    """Encoded lines keyed by a strictly increasing sequence number."""

    def __init__(
        self,
        interval: float = 1.0,
        raw_seconds: float = 3600.0,
        day_seconds: float = 86400.0,
        raw_samples: Optional[int] = None,
        downsample: Optional[int] = None,
        compress: bool = True,
    ) -> None:
        self.compress = compress
        interval = max(float(interval), 1e-3)
        # Capacity counts samples, not messages: process snapshots and events ride along with
        # the samples around them, so an hour of samples is an hour of everything.
        self.raw_samples = (
            raw_samples
            if raw_samples is not None
            else math.ceil(raw_seconds / interval) + RAW_MARGIN
        )
        self.downsample = downsample if downsample is not None else max(1, int(60.0 / interval))
        self.day_seconds = day_seconds
        # Raw tier: parallel lists with a moving head (bisectable, O(1) amortized trim).
        self._seqs: List[int] = []
        # Entries before the head are None: their lines are released as soon as they leave.
        self._entries: List[Optional[_Entry]] = []
        self._head = 0
        self._raw_sample_count = 0
        # Day tier: thinned samples, and the events / process changes kept in full.
        self._day_samples: Deque[_Entry] = deque()
        self._day_kept: Deque[_Entry] = deque()
        self._evicted_samples = 0
        self._last_kept_procs: Optional[str] = None
        self.first_seq: Optional[int] = None  # the first seq ever appended (run start)
        self.last_seq: Optional[int] = None
        self.last_t = 0.0

    # ---- writing ---------------------------------------------------------------------------

    def append(
        self, seq: int, t: float, kind: str, line: bytes, fingerprint: Optional[str] = None
    ) -> None:
        """Add one encoded line (with its newline). ``fingerprint`` identifies the set of
        processes of a ``procs`` line: a snapshot is kept in the day tier when it differs
        from the previous one kept."""
        if self.last_seq is not None and seq <= self.last_seq:
            raise ValueError(
                "sequence numbers must increase: {} after {}".format(seq, self.last_seq)
            )
        if self.first_seq is None:
            self.first_seq = seq
        self.last_seq = seq
        self.last_t = t
        data = zlib.compress(line, 1) if self.compress else line
        e = _Entry(seq, t, kind, data, fingerprint if kind == KIND_PROCS else None)
        self._seqs.append(seq)
        self._entries.append(e)
        if kind == KIND_SAMPLE:
            self._raw_sample_count += 1
            if self._raw_sample_count > self.raw_samples:
                self._evict()
        self._trim_day(t)

    def _evict(self) -> None:
        """Move the oldest raw entries up to and including the oldest sample to the day tier."""
        entries = self._entries
        while self._raw_sample_count > self.raw_samples and self._head < len(entries):
            e = entries[self._head]
            entries[self._head] = None
            self._head += 1
            if e is None:
                continue
            if e.kind == KIND_SAMPLE:
                self._raw_sample_count -= 1
                if self._evicted_samples % self.downsample == 0:
                    self._day_samples.append(e)
                    if len(self._day_samples) > DAY_SAMPLES_MAX:
                        self._day_samples.popleft()
                self._evicted_samples += 1
            elif e.kind == KIND_PROCS:
                fp = e.fingerprint or ""
                if fp != self._last_kept_procs:
                    self._last_kept_procs = fp
                    self._keep(e)
            elif e.kind == KIND_LINKS:
                continue  # live detail only (see the module docstring)
            else:
                self._keep(e)
        if self._head > 4096 and self._head * 2 > len(entries):
            del self._entries[: self._head]
            del self._seqs[: self._head]
            self._head = 0

    def _keep(self, e: _Entry) -> None:
        self._day_kept.append(e)
        if len(self._day_kept) > DAY_KEPT_MAX:
            self._day_kept.popleft()

    def _trim_day(self, now: float) -> None:
        cutoff = now - self.day_seconds
        for dq in (self._day_samples, self._day_kept):
            while dq and dq[0].t < cutoff:
                dq.popleft()

    # ---- reading ---------------------------------------------------------------------------

    def raw_first_seq(self) -> Optional[int]:
        """The oldest seq still held in full."""
        return self._seqs[self._head] if self._head < len(self._seqs) else None

    def since(self, seq: int) -> Tuple[List[bytes], bool]:
        """Every held line with a sequence number above ``seq``, oldest first, and whether
        some of the messages after ``seq`` of this run are missing (thinned or dropped)."""
        raw_first = self.raw_first_seq()
        out: List[bytes] = []
        if raw_first is None or seq + 1 < raw_first:
            day = [e for e in self._day_samples if e.seq > seq]
            day.extend(e for e in self._day_kept if e.seq > seq)
            day.sort(key=lambda e: e.seq)
            out.extend(self._line(e) for e in day)
        if raw_first is not None:
            i = bisect.bisect_right(self._seqs, seq, self._head)
            out.extend(self._line(e) for e in self._entries[i:] if e is not None)
        return out, self.has_gap(seq, len(out))

    def has_gap(self, seq: int, count: int) -> bool:
        """True when ``count`` lines after ``seq`` are fewer than the sequence numbers after
        it: thinned or dropped here, or emitted by a previous run (a restarted daemon goes on
        from the last seq of the one before)."""
        if self.last_seq is None or seq >= self.last_seq:
            return False
        return count < self.last_seq - seq

    def tail_after(self, seq: int) -> List[bytes]:
        """Raw lines after ``seq`` (for live fan-out, where ``seq`` is recent)."""
        i = bisect.bisect_right(self._seqs, seq, self._head)
        return [self._line(e) for e in self._entries[i:] if e is not None]

    def _line(self, e: _Entry) -> bytes:
        return zlib.decompress(e.line) if self.compress else e.line

    def __len__(self) -> int:
        return len(self._entries) - self._head + len(self._day_samples) + len(self._day_kept)

    def nbytes(self) -> int:
        """Bytes of (compressed) line data held (for the benchmark and the state file)."""
        n = sum(len(e.line) for e in self._entries[self._head :] if e is not None)
        n += sum(len(e.line) for e in self._day_samples)
        return n + sum(len(e.line) for e in self._day_kept)
