"""The local history store: every sample, process snapshot, event, alert and kill, in SQLite.

``Store.write`` never blocks: it puts the message on a bounded queue (a full queue drops the
message and counts it in ``dropped``). One writer thread owns the write connection and
commits in batches, one transaction each (every ~1 s or ``batch_rows`` GPU-samples), so a
crash (kill -9) loses at most the batch in flight and WAL keeps the file intact.

Readers (``query``, ``samples``, ``events``...) use a connection of their own per thread and
see what has been committed. The reading methods are ``reader.StoreReader``'s, the writer
thread is ``writer.Writer``; layout and encoding: ``schema`` and ``codec``.
"""

from __future__ import annotations

import collections
import contextlib
import sqlite3
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from gpufleet.core.config import paths
from gpufleet.core.history.reader import StoreReader, Window
from gpufleet.core.history.records import as_dict
from gpufleet.core.history.schema import CHUNK_S, PRAGMAS, StoreError, init_schema
from gpufleet.core.history.writer import (
    DAY_S,
    EVENT_RATE_PER_S,
    OP_ALERT,
    OP_CHECK,
    OP_FLUSH,
    OP_FORGET,
    OP_KILL,
    OP_LIFECYCLE,
    OP_MSG,
    OP_RETENTION,
    OP_STOP,
    Writer,
)
from gpufleet.core.wire.messages import Message

__all__ = ["CHUNK_S", "DAY_S", "Store", "StoreError", "Window"]

# The burst the event rate limit takes (``writer.EVENT_RATE_PER_S``: a reconnect's backfill).
EVENT_BURST = 600
# The history file's default size cap, on top of the age limits: the oldest data goes first.
DEFAULT_MAX_BYTES = 8 << 30
# SQLite's page cache, per connection: it fills up to this over the first hour of a large
# fleet and then stays (bench/memory50.py: +30 MB over 45 minutes with 32 MB, flat with
# these). The writer appends to the open minutes, a small working set; a reader (one per
# thread) scans chunks that the OS caches anyway.
WRITER_CACHE_KIB = 8 * 1024
READER_CACHE_KIB = 8 * 1024


class Store(StoreReader):
    """SQLite WAL history file with a batching writer thread and per-thread readers."""

    def __init__(
        self,
        path: Path,
        *,
        retention_raw_days: float = 7,
        retention_rollup_days: float = 90,
        read_only: bool = False,
        queue_size: int = 200_000,
        flush_interval_s: float = 1.0,
        batch_rows: int = 50_000,
        max_bytes: int | None = DEFAULT_MAX_BYTES,
        event_rate_per_s: float = EVENT_RATE_PER_S,
        event_burst: int = EVENT_BURST,
    ) -> None:
        self.path = Path(path)
        self.retention_raw_days = float(retention_raw_days)
        self.retention_rollup_days = float(retention_rollup_days)
        self.max_bytes = max_bytes
        self.event_rate_per_s = float(event_rate_per_s)
        self.event_burst = int(event_burst)
        # Per host: events and error messages not recorded because of the rate limit.
        self.rate_limited: dict[str, int] = {}
        self.trimmed_for_size = 0  # retention passes that deleted data to keep under max_bytes
        self.read_only = read_only
        self.dropped = 0  # messages refused because the queue was full
        self.errors = 0  # batches or records that failed to commit (logged)
        self.last_error: str | None = None  # the reason of the latest such failure
        self._flush_interval = flush_interval_s
        self._batch_rows = batch_rows
        self._local = threading.local()
        self._readers: list[sqlite3.Connection] = []
        self._readers_lock = threading.Lock()
        self._closed = False
        self._colset_cache: dict[int, tuple[str, ...]] | None = None
        # A deque, not queue.Queue: append/popleft need no lock (the GIL makes them atomic),
        # which took 15 % of the writer's time at 100,000 GPU-samples/s. The writer sleeps
        # on ``_wake`` only when the deque is empty; ``_idle`` tells writers to ring it.
        self._queue: collections.deque[tuple[Any, ...]] = collections.deque()
        self._queue_size = queue_size
        self._wake = threading.Event()
        self._idle = False
        self._thread: threading.Thread | None = None
        if read_only:
            if not self.path.exists():
                raise StoreError(f"no history at {self.path}")
            self._wcon: sqlite3.Connection | None = None
            self._reader()  # fail now, not at the first query
            return
        # 0600 before SQLite opens it: its -wal and -shm files take the database's mode.
        paths.private_file(self.path)
        try:
            self._wcon = self._connect(create=True)
            init_schema(self._wcon)
        except sqlite3.DatabaseError as e:
            raise StoreError(f"cannot open the history file {self.path}: {e}") from e
        self._writer = Writer(self, self._wcon)
        self._thread = threading.Thread(target=self._writer.run, name="gpufleet-store", daemon=True)
        self._thread.start()

    # -- connections -------------------------------------------------------------------

    def _connect(self, create: bool = False) -> sqlite3.Connection:
        uri = f"file:{self.path}?mode={'rwc' if create else 'rw'}"
        con = sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=False)
        if create:
            # Both only take effect on a new, empty file. Chunks are 1-3 KB blobs: 4 KB pages
            # would waste a third of the file on page remainders, 16 KB pages a few percent.
            con.execute("PRAGMA page_size=16384")
            con.execute("PRAGMA auto_vacuum=INCREMENTAL")
        for p in PRAGMAS:
            con.execute(p)
        con.execute(f"PRAGMA cache_size=-{WRITER_CACHE_KIB if create else READER_CACHE_KIB}")
        return con

    def _reader(self) -> sqlite3.Connection:
        if self._closed:
            raise StoreError("the history store is closed")
        con: sqlite3.Connection | None = getattr(self._local, "con", None)
        if con is None:
            try:
                con = self._connect()
                con.execute("SELECT 1 FROM meta LIMIT 1").fetchall()
            except sqlite3.DatabaseError as e:
                raise StoreError(f"cannot read the history file {self.path}: {e}") from e
            self._local.con = con
            with self._readers_lock:
                self._readers.append(con)
        return con

    # -- writing -----------------------------------------------------------------------

    def _put(self, item: tuple[Any, ...]) -> None:
        if self._thread is None:
            raise StoreError("the history store was opened read-only")
        if len(self._queue) >= self._queue_size:
            self.dropped += 1
            return
        self._queue.append(item)
        if self._idle:
            self._wake.set()

    def write(self, host: str, msg: Message) -> None:
        """Enqueue one received message; never blocks (a full queue drops and counts)."""
        self._put((OP_MSG, host, msg))

    def write_alert(self, alert: Any) -> None:
        """Record an alert (a rules ``Alert`` or a dict with the same fields); a later write
        with the same id (resolved, acked) replaces it."""
        self._put((OP_ALERT, as_dict(alert)))

    def write_kill(self, entry: Mapping[str, Any]) -> None:
        """Record a kill from the audit log (needs ``host``; ``t`` defaults to now)."""
        self._put((OP_KILL, dict(entry)))

    def write_check(self, host: str, facts: Mapping[str, Any], t: float | None = None) -> None:
        """Record the facts of a health check (``sampler check``) of ``host``."""
        self._put((OP_CHECK, host, dict(facts), time.time() if t is None else t))

    def write_lifecycle(self, kind: str, row: Mapping[str, Any]) -> None:
        """Record an alert state (``kind`` "state": an alert's dict) or a mark ("mark":
        alert_key, kind, name, t, outcome) and wait until it is committed: what the
        lifecycle says was sent or run must survive a kill -9 right after. Never dropped."""
        if self._thread is None:
            raise StoreError("the history store was opened read-only")
        self._wait(OP_LIFECYCLE, kind, dict(row))

    def _wait(self, op: int, *args: Any) -> None:
        if self._thread is None or not self._thread.is_alive():
            return
        done = threading.Event()
        self._queue.append((op, done, *args))  # control items are never dropped
        self._wake.set()
        while not done.wait(0.5):
            if not self._thread.is_alive():
                return

    def writing(self) -> bool:
        """Whether the writer thread runs (open for writing, not closed, not dead)."""
        th = self._thread
        return not self._closed and th is not None and th.is_alive()

    def flush(self) -> None:
        """Wait until everything written before this call is committed."""
        self._wait(OP_FLUSH)

    def forget_host(self, host: str, since: float | None = None) -> None:
        """Delete ``host``'s history (from ``since`` on, when given) and wait until done."""
        self._wait(OP_FORGET, host, since)

    def apply_retention(self, now: float | None = None) -> None:
        """Delete raw data older than ``retention_raw_days`` and the rest older than
        ``retention_rollup_days``, then the oldest data until the file holds at most
        ``max_bytes`` (also done in the background every 10 minutes)."""
        self._wait(OP_RETENTION, time.time() if now is None else now)

    def close(self) -> None:
        """Commit what is queued, stop the writer and close every connection."""
        if self._closed:
            return
        if self._thread is not None:
            self._wait(OP_STOP)
            self._thread.join(timeout=30)
        self._closed = True
        if self._wcon is not None:
            self._wcon.close()
        with self._readers_lock:
            for con in self._readers:
                with contextlib.suppress(sqlite3.ProgrammingError):
                    con.close()
            self._readers.clear()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
