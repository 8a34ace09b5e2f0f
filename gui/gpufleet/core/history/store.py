"""The local history store: every sample, process snapshot, event, alert and kill, in SQLite.

``Store.write`` never blocks: it puts the message on a bounded queue (a full queue drops the
message and counts it in ``dropped``). One writer thread owns the write connection and
commits in batches, one transaction each (every ~1 s or ``batch_rows`` GPU-samples), so a
crash (kill -9) loses at most the batch in flight and WAL keeps the file intact.

Readers (``query``, ``samples``, ``events``...) use a connection of their own per thread and
see what has been committed. Layout and encoding: ``store_schema`` and ``store_codec``.
"""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import logging
import math
import sqlite3
import threading
import time
import zlib
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import orjson
from gpufleet_sampler import protocol

from gpufleet.core.config import paths
from gpufleet.core.history import codec
from gpufleet.core.history.rows import RowPacker
from gpufleet.core.history.schema import PRAGMAS, StoreError, init_schema
from gpufleet.core.wire.messages import (
    ErrorMsg,
    Event,
    Hello,
    Message,
    Proc,
    Procs,
    Sample,
    Value,
    parse_hello,
)

__all__ = ["Store", "StoreError", "Window"]

log = logging.getLogger(__name__)

DAY_S = 86400.0
CHUNK_S = 60.0  # a chunk never crosses a minute boundary
MAX_CHUNK_ROWS = 1200  # caps a chunk at sampling rates above 20 Hz
RETENTION_EVERY_S = 600.0
# Events and error messages of one host are recorded at most this fast (a token bucket on
# the laptop's clock, which a sampler cannot forge; the burst takes a reconnect's backfill
# of real events): a flooding sampler would otherwise grow the file by gigabytes an hour.
# What is left out is counted (``Store.rate_limited``) and said in a note event a minute.
EVENT_RATE_PER_S = 2.0
EVENT_BURST = 600
# The history file's default size cap, on top of the age limits: the oldest data goes first.
DEFAULT_MAX_BYTES = 8 << 30
# SQLite's page cache, per connection: it fills up to this over the first hour of a large
# fleet and then stays (bench/memory50.py: +30 MB over 45 minutes with 32 MB, flat with
# these). The writer appends to the open minutes, a small working set; a reader (one per
# thread) scans chunks that the OS caches anyway.
WRITER_CACHE_KIB = 8 * 1024
READER_CACHE_KIB = 8 * 1024
FLOOD_NOTE_EVERY_S = 60.0
RAW_BUCKET_CHUNKS = 150  # per GPU: 2.5 h at one chunk a minute
ENCODE_MINUTES = 16  # minute buffers encoded per call (bigger arrays fall out of cache)

_OP_MSG = 0
_OP_ALERT = 1
_OP_KILL = 2
_OP_CHECK = 3
_OP_FLUSH = 4
_OP_RETENTION = 5
_OP_STOP = 6
_OP_LIFECYCLE = 7

Array = codec.F64
# The samples of some GPUs sharing timestamps: (gpu indices, n × g × c values, t, seq, mono).
_Group = tuple[tuple[Value, ...], Array, Array, codec.I64, Array]


@dataclass(frozen=True)
class Window:
    """A query result at plot resolution: ``mean`` per point, and the ``vmin`` / ``vmax`` of
    the samples it stands for (equal to ``mean`` for raw points)."""

    t: Array
    mean: Array
    vmin: Array
    vmax: Array
    raw: bool  # True when every point is one sample


@dataclass
class _Buffer:
    """The samples of one host in the minute being filled (not yet a closed chunk)."""

    minute: int
    columns: tuple[str, ...]
    samples: list[Sample] = field(default_factory=list)
    dirty: bool = False
    # The rows of samples[:packed_n] as n × g × (c + 1) float64, kept between batches so
    # that rewriting the open minute converts only the samples added since (None once the
    # minute turned out not to list the same GPUs in every sample).
    packed: Array | None = None
    packed_n: int = 0
    uniform: bool = True


_I64_MIN = -(2**63)
_I64_MAX = 2**63 - 1


def _dumps(obj: Any) -> bytes:
    def default(o: Any) -> Any:
        if isinstance(o, Mapping):
            return dict(o)
        if isinstance(o, (set, frozenset, tuple)):
            return list(o)
        if isinstance(o, float | np.floating):
            return float(o)
        return str(o)

    return orjson.dumps(obj, default=default, option=orjson.OPT_SERIALIZE_NUMPY)


def _as_dict(obj: Any) -> dict[str, Any]:
    """Duck-typed records (helper dataclasses such as Alert, or plain dicts) as a dict."""
    if isinstance(obj, Mapping):
        return dict(obj)
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: getattr(obj, f.name) for f in dataclasses.fields(obj)}
    return {k: v for k, v in vars(obj).items() if not k.startswith("_")}


def _float_or_nan(v: Any) -> float:
    if isinstance(v, int | float | np.number):
        with contextlib.suppress(OverflowError):
            return float(v)
    return math.nan


def _floats(rows: list[tuple[Value, ...]]) -> Array:
    """Rows of numbers and None as float64 (NaN = None); anything that is not a number
    (only a hand-made Sample can carry one) or overflows float64 becomes NaN too."""
    try:
        return np.array(rows, dtype=np.float64)
    except (ValueError, TypeError, OverflowError):
        return np.array([[_float_or_nan(v) for v in r] for r in rows], dtype=np.float64)


def _opt_float(v: Any) -> float | None:
    if isinstance(v, bool) or not isinstance(v, int | float):
        return None
    return float(v)


def _opt_int(v: Any) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def _proc_dict(p: Proc) -> dict[str, Any]:
    return {
        "gpu": p.gpu,
        "pid": p.pid,
        "start_ticks": p.start_ticks,
        "user": p.user,
        "name": p.name,
        "cmd": p.cmd,
        "mem_bytes": p.mem_bytes,
        "sm_pct": p.sm_pct,
        "type": p.type,
        # Only when the sampler told (a container's host PIDs): older rows have none.
        **(
            {
                "host_pid": p.host_pid,
                "mapping": p.mapping,
                "holds_device": p.holds_device,
                "orphan": p.orphan,
            }
            if p.mapping is not None
            else {}
        ),
    }


def _proc_from(d: Mapping[str, Any]) -> Proc:
    return Proc(
        gpu=int(d["gpu"]),
        pid=int(d["pid"]),
        start_ticks=d.get("start_ticks"),
        user=d.get("user"),
        name=d.get("name"),
        cmd=d.get("cmd"),
        mem_bytes=d.get("mem_bytes"),
        sm_pct=d.get("sm_pct"),
        type=d.get("type"),
        host_pid=_opt_int(d.get("host_pid")),
        mapping=d.get("mapping") if d.get("mapping") in protocol.MAPPINGS else None,
        holds_device=d.get("holds_device") if isinstance(d.get("holds_device"), bool) else None,
        orphan=d.get("orphan") is True,
    )


def _flood_note(host: str, n: int, t: float, rate: float) -> Event:
    """The one event that stands for ``n`` events of a flood left out of the history."""
    text = (
        f"{n} events or errors of {host} were not recorded: more than {rate:g} a second "
        "came in (a flooding sampler)"
    )
    note = protocol.EVENT_NOTE
    raw = {"kind": "event", "seq": 0, "t": t, "type": note, "gpu": None, "code": None,
           "message": text, "rate_limited": n}  # fmt: skip
    return Event(seq=0, t=t, type=note, gpu=None, code=None, message=text, raw=raw)


def _storable(s: Sample) -> bool:
    """Whether a sample fits the store's int64 and float64 columns."""
    ok = (
        type(s.seq) is int
        and _I64_MIN <= s.seq <= _I64_MAX
        and math.isfinite(s.t)
        and math.isfinite(s.mono)
    )
    return ok and all(r and type(r[0]) is int and _I64_MIN <= r[0] <= _I64_MAX for r in s.rows)


def bucket(
    t: Array, mean: Array, vmin: Array, vmax: Array, weight: Array, t0: float, t1: float, n: int
) -> tuple[Array, Array, Array, Array]:
    """Reduce sorted points to at most ``n`` buckets spread evenly over [t0, t1]: the
    weighted mean, the min of the mins and the max of the maxes (so peaks survive)."""
    if t.size == 0 or n <= 0:
        return t, mean, vmin, vmax
    edges = np.linspace(t0, t1, n + 1)
    idx = np.clip(np.searchsorted(edges, t, side="right") - 1, 0, n - 1)
    starts = np.flatnonzero(np.r_[True, idx[1:] != idx[:-1]])
    counts = np.diff(np.r_[starts, t.size])
    ok = ~np.isnan(mean)
    w = np.where(ok, weight, 0.0)
    wsum = np.add.reduceat(w, starts)
    with np.errstate(invalid="ignore", divide="ignore"):
        bmean = np.add.reduceat(np.where(ok, mean * w, 0.0), starts) / wsum
    bmean[wsum == 0] = np.nan
    bt = np.add.reduceat(t, starts) / counts
    bmin = np.fmin.reduceat(vmin, starts)
    bmax = np.fmax.reduceat(vmax, starts)
    return bt, bmean, bmin, bmax


class Store:
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
        self._writer = _Writer(self, self._wcon)
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
        self._put((_OP_MSG, host, msg))

    def write_alert(self, alert: Any) -> None:
        """Record an alert (a rules ``Alert`` or a dict with the same fields); a later write
        with the same id (resolved, acked) replaces it."""
        self._put((_OP_ALERT, _as_dict(alert)))

    def write_kill(self, entry: Mapping[str, Any]) -> None:
        """Record a kill from the audit log (needs ``host``; ``t`` defaults to now)."""
        self._put((_OP_KILL, dict(entry)))

    def write_check(self, host: str, facts: Mapping[str, Any], t: float | None = None) -> None:
        """Record the facts of a health check (``sampler check``) of ``host``."""
        self._put((_OP_CHECK, host, dict(facts), time.time() if t is None else t))

    def write_lifecycle(self, kind: str, row: Mapping[str, Any]) -> None:
        """Record an alert state (``kind`` "state": an alert's dict) or a mark ("mark":
        alert_key, kind, name, t, outcome) and wait until it is committed: what the
        lifecycle says was sent or run must survive a kill -9 right after. Never dropped."""
        if self._thread is None:
            raise StoreError("the history store was opened read-only")
        self._wait(_OP_LIFECYCLE, kind, dict(row))

    def alert_states(
        self, host: str | None = None, t0: float = -math.inf, t1: float = math.inf
    ) -> list[dict[str, Any]]:
        """Lifecycle rows (the alert as a dict, with its latest state) of alerts active at
        some point of [t0, t1], oldest first; every host when ``host`` is None."""
        sql = "SELECT data FROM alert_states WHERE fired_t<=? AND (ended_t IS NULL OR ended_t>=?)"
        args: list[Any] = [t1, t0]
        if host is not None:
            sql += " AND host=?"
            args.append(host)
        rows = self._reader().execute(sql + " ORDER BY fired_t, alert_key", args).fetchall()
        return [orjson.loads(r[0]) for r in rows]

    def alert_marks(self) -> list[tuple[str, str, str, float, str | None]]:
        """Every (alert_key, kind, name, t, outcome) mark of the lifecycle."""
        rows = (
            self._reader()
            .execute("SELECT alert_key, kind, name, t, outcome FROM alert_marks")
            .fetchall()
        )
        return [(str(a), str(k), str(n), float(t), o) for a, k, n, t, o in rows]

    def _wait(self, op: int, *args: Any) -> None:
        if self._thread is None or not self._thread.is_alive():
            return
        done = threading.Event()
        self._queue.append((op, done, *args))  # control items are never dropped
        self._wake.set()
        while not done.wait(0.5):
            if not self._thread.is_alive():
                return

    def flush(self) -> None:
        """Wait until everything written before this call is committed."""
        self._wait(_OP_FLUSH)

    def apply_retention(self, now: float | None = None) -> None:
        """Delete raw data older than ``retention_raw_days`` and the rest older than
        ``retention_rollup_days``, then the oldest data until the file holds at most
        ``max_bytes`` (also done in the background every 10 minutes)."""
        self._wait(_OP_RETENTION, time.time() if now is None else now)

    def close(self) -> None:
        """Commit what is queued, stop the writer and close every connection."""
        if self._closed:
            return
        if self._thread is not None:
            self._wait(_OP_STOP)
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

    # -- reading: catalogue ------------------------------------------------------------

    def _host_id(self, host: str) -> int | None:
        row = self._reader().execute("SELECT id FROM hosts WHERE name=?", (host,)).fetchone()
        return int(row[0]) if row else None

    def _colsets(self, need: Iterable[Any] = ()) -> dict[int, tuple[str, ...]]:
        """Column sets by id; cached (a set never changes once written) and re-read when
        ``need`` names one the cache does not know yet."""
        cache = self._colset_cache
        if cache is None or any(int(i) not in cache for i in need):
            rows = self._reader().execute("SELECT id, names FROM colsets").fetchall()
            cache = self._colset_cache = {int(i): tuple(orjson.loads(n)) for i, n in rows}
        return cache

    def _positions(self, metric: str, need: Iterable[Any]) -> dict[int, tuple[int, int]]:
        """``{colset id: (index of metric, number of columns)}`` for the sets that have it."""
        return {
            cid: (cols.index(metric), len(cols))
            for cid, cols in self._colsets(need).items()
            if metric in cols
        }

    def hosts(self) -> list[str]:
        rows = self._reader().execute("SELECT name FROM hosts ORDER BY name").fetchall()
        return [str(r[0]) for r in rows]

    def gpus(self, host: str) -> list[int]:
        hid = self._host_id(host)
        if hid is None:
            return []
        rows = (
            self._reader()
            .execute("SELECT DISTINCT gpu FROM rollups WHERE host_id=? ORDER BY gpu", (hid,))
            .fetchall()
        )
        return [int(r[0]) for r in rows]

    def time_range(self, host: str) -> tuple[float, float] | None:
        """First and last sample time stored for ``host`` (raw or rolled up)."""
        hid = self._host_id(host)
        if hid is None:
            return None
        row = (
            self._reader()
            .execute("SELECT min(t0), max(t1) FROM rollups WHERE host_id=?", (hid,))
            .fetchone()
        )
        if row is None or row[0] is None:
            return None
        return float(row[0]), float(row[1])

    def hello(self, host: str, at: float | None = None) -> Hello | None:
        """The inventory of ``host``: the latest hello, or the one in effect at ``at``."""
        hid = self._host_id(host)
        if hid is None:
            return None
        con = self._reader()
        row = None
        if at is not None:
            row = con.execute(
                "SELECT raw FROM hellos WHERE host_id=? AND coalesce(t_first, t_seen) <= ? "
                "ORDER BY coalesce(t_first, t_seen) DESC, id DESC LIMIT 1",
                (hid, at),
            ).fetchone()
        if row is None:
            order = "ASC" if at is not None else "DESC"
            row = con.execute(
                f"SELECT raw FROM hellos WHERE host_id=? "
                f"ORDER BY coalesce(t_first, t_seen) {order}, id {order} LIMIT 1",
                (hid,),
            ).fetchone()
        if row is None:
            return None
        return parse_hello(orjson.loads(row[0]))

    def hellos(self, host: str, t0: float, t1: float) -> list[tuple[float, Hello]]:
        """``(t, hello)`` of every run of ``host`` that covers part of [t0, t1]: the one in
        effect at t0 and each that started within the window (``t`` = its first sample)."""
        hid = self._host_id(host)
        if hid is None:
            return []
        rows = (
            self._reader()
            .execute(
                "SELECT coalesce(t_first, t_seen) AS t, raw FROM hellos WHERE host_id=? "
                "ORDER BY t, id",
                (hid,),
            )
            .fetchall()
        )
        out: list[tuple[float, Hello]] = []
        for t, raw in rows:
            if t > t1:
                break
            if t <= t0 and out:
                out.clear()  # superseded by a later run that still started before t0
            out.append((float(t), parse_hello(orjson.loads(raw))))
        if not out and rows:  # every run started after t1 (clock skew): take the first
            out.append((float(rows[0][0]), parse_hello(orjson.loads(rows[0][1]))))
        return out

    # -- reading: records --------------------------------------------------------------

    def events(self, host: str, t0: float, t1: float) -> list[Event]:
        hid = self._host_id(host)
        if hid is None:
            return []
        rows = (
            self._reader()
            .execute(
                "SELECT seq, t, type, gpu, code, raw FROM events "
                "WHERE host_id=? AND t>=? AND t<=? ORDER BY t, id",
                (hid, t0, t1),
            )
            .fetchall()
        )
        out = []
        for seq, t, typ, gpu, code, raw in rows:
            d = orjson.loads(raw)
            out.append(
                Event(
                    seq=int(seq) if seq is not None else -1,
                    t=float(t),
                    type=str(typ),
                    gpu=gpu,
                    code=code,
                    message=str(d.get("message") or ""),
                    raw=d,
                )
            )
        return out

    def procs(self, host: str, t0: float, t1: float) -> list[Procs]:
        """Process snapshots in effect during [t0, t1]: the last one taken at or before t0
        and every one seen within the window. An unchanged snapshot is stored once, with
        the time and seq it was first seen."""
        hid = self._host_id(host)
        if hid is None:
            return []
        con = self._reader()
        rows = con.execute(
            "SELECT id, seq_first, t_first, data FROM procs "
            "WHERE host_id=? AND t_first<=? AND t_last>=? ORDER BY t_first, id",
            (hid, t1, t0),
        ).fetchall()
        before = con.execute(
            "SELECT id, seq_first, t_first, data FROM procs WHERE host_id=? AND t_first<=? "
            "ORDER BY t_first DESC, id DESC LIMIT 1",
            (hid, t0),
        ).fetchone()
        if before is not None and all(r[0] != before[0] for r in rows):
            rows.insert(0, before)
        return [
            Procs(
                seq=int(seq),
                t=float(t),
                procs=tuple(_proc_from(d) for d in orjson.loads(zlib.decompress(data))),
            )
            for _id, seq, t, data in rows
        ]

    def _records(self, table: str, tcol: str, host: str, t0: float, t1: float) -> list[Any]:
        hid = self._host_id(host)
        if hid is None:
            return []
        rows = (
            self._reader()
            .execute(
                f"SELECT data FROM {table} WHERE host_id=? AND {tcol}>=? AND {tcol}<=? "
                f"ORDER BY {tcol}",
                (hid, t0, t1),
            )
            .fetchall()
        )
        return [orjson.loads(r[0]) for r in rows]

    def alerts(self, host: str, t0: float, t1: float) -> list[dict[str, Any]]:
        """Alerts of ``host`` active at some point of [t0, t1], as dicts."""
        hid = self._host_id(host)
        if hid is None:
            return []
        rows = (
            self._reader()
            .execute(
                "SELECT data FROM alerts WHERE host_id=? AND started_t<=? "
                "AND (ended_t IS NULL OR ended_t>=?) ORDER BY started_t",
                (hid, t1, t0),
            )
            .fetchall()
        )
        return [orjson.loads(r[0]) for r in rows]

    def kills(self, host: str, t0: float, t1: float) -> list[dict[str, Any]]:
        return self._records("kills", "t", host, t0, t1)

    def last_check(
        self, host: str, before: float | None = None
    ) -> tuple[float, dict[str, Any]] | None:
        """The latest health check facts of ``host`` (at or before ``before``) and their time."""
        hid = self._host_id(host)
        if hid is None:
            return None
        row = (
            self._reader()
            .execute(
                "SELECT t, data FROM checks WHERE host_id=? AND t<=? ORDER BY t DESC LIMIT 1",
                (hid, math.inf if before is None else before),
            )
            .fetchone()
        )
        return (float(row[0]), orjson.loads(row[1])) if row else None

    # -- reading: samples --------------------------------------------------------------

    def _chunk_rows(
        self, hid: int, gpu: int | None, t0: float, t1: float, table: str = "chunks"
    ) -> list[Any]:
        lo = math.floor(t0 / CHUNK_S) * CHUNK_S
        gsql = " AND gpu=?" if gpu is not None else ""
        args: tuple[Any, ...] = (hid, gpu, lo, t1, t0) if gpu is not None else (hid, lo, t1, t0)
        return (
            self._reader()
            .execute(
                f"SELECT gpu, t0, t1, n, colset, data FROM {table} WHERE host_id=?{gsql} "
                "AND t0>=? AND t0<=? AND t1>=? ORDER BY t0, gpu",
                args,
            )
            .fetchall()
        )

    def query(
        self,
        host: str,
        gpu: int,
        metric: str,
        t0: float,
        t1: float,
        max_points: int | None = None,
    ) -> tuple[Array, Array]:
        """``(t, value)`` of one metric of one GPU over [t0, t1], float64, NaN = null: raw
        when it fits in ``max_points`` (or ``max_points`` is None), else bucketed means
        (see ``query_minmax`` for the envelope)."""
        w = self.query_window(host, gpu, metric, t0, t1, max_points)
        return w.t, w.mean

    def query_minmax(
        self,
        host: str,
        gpu: int,
        metric: str,
        t0: float,
        t1: float,
        max_points: int | None = None,
    ) -> tuple[Array, Array, Array]:
        """``(t, min, max)`` at the same points as ``query``: the envelope of the samples
        each point stands for, so a plot can show spikes that the mean smooths away."""
        w = self.query_window(host, gpu, metric, t0, t1, max_points)
        return w.t, w.vmin, w.vmax

    def query_window(
        self,
        host: str,
        gpu: int,
        metric: str,
        t0: float,
        t1: float,
        max_points: int | None = None,
    ) -> Window:
        empty = np.empty(0, dtype=np.float64)
        hid = self._host_id(host)
        if hid is None or t1 < t0:
            return Window(empty, empty, empty, empty, True)
        rolls = self._chunk_rows(hid, gpu, t0, t1, table="rollups")
        pos = self._positions(metric, {r[4] for r in rolls})
        total = sum(int(r[3]) for r in rolls)
        # Raw data bucketed to the plot width is finer than one rollup per minute, but costs
        # a chunk decode per minute: worth it up to a couple of hours, not beyond.
        use_raw = max_points is None or total <= max_points or len(rolls) <= RAW_BUCKET_CHUNKS
        if use_raw:
            w = self._raw_window(hid, gpu, metric, pos, rolls, t0, t1)
        else:
            w = self._rollup_window(pos, rolls)
        if max_points is not None and w.t.size > max_points:
            bt, bm, bmin, bmax = bucket(w.t, w.mean, w.vmin, w.vmax, w.weight, t0, t1, max_points)
            return Window(bt, bm, bmin, bmax, False)
        return Window(w.t, w.mean, w.vmin, w.vmax, w.raw)

    def _rollup_window(self, pos: Mapping[int, tuple[int, int]], rolls: list[Any]) -> _Pts:
        ts: list[float] = []
        vals: list[tuple[int, int, float, float, float]] = []
        for _gpu, c0, c1, _n, cs, data in rolls:
            jc = pos.get(int(cs))
            if jc is None:
                continue
            v = codec.rollup_column(data, *jc)
            if v[0] != codec.ROLLUP_VERSION:
                raise ValueError(f"rollup format {v[0]} is not supported")
            ts.append((c0 + c1) / 2.0)
            vals.append(v)
        f = np.float64
        if not vals:
            e = np.empty(0, f)
            return _Pts(e, e, e, e, e, raw=False)
        a = np.array(vals, dtype=f)
        return _Pts(np.array(ts, f), a[:, 3], a[:, 2], a[:, 4], a[:, 1], raw=False)

    def _raw_window(
        self,
        hid: int,
        gpu: int,
        metric: str,
        pos: Mapping[int, tuple[int, int]],
        rolls: list[Any],
        t0: float,
        t1: float,
    ) -> _Pts:
        chunks = self._chunk_rows(hid, gpu, t0, t1)
        known = self._colset_cache or {}
        if any(int(r[4]) not in known for r in chunks):  # a column set newer than the rollups
            pos = self._positions(metric, {r[4] for r in chunks})
        have = {float(r[1]) for r in chunks}
        parts_t: list[Array] = []
        parts_v: list[Array] = []
        for _gpu, _c0, _c1, _n, cs, data in chunks:
            jc = pos.get(int(cs))
            if jc is None:
                continue
            ct, cv = codec.decode_column(data, jc[0])
            parts_t.append(ct)
            parts_v.append(cv)
        t = np.concatenate(parts_t) if parts_t else np.empty(0)
        v = np.concatenate(parts_v) if parts_v else np.empty(0)
        m = (t >= t0) & (t <= t1)
        t, v = t[m], v[m]
        # Minutes whose raw data retention already removed: their rollup stands in.
        gone = [r for r in rolls if float(r[1]) not in have]
        if gone:
            old = self._rollup_window(pos, gone)
            pts = _Pts(
                np.concatenate([old.t, t]),
                np.concatenate([old.mean, v]),
                np.concatenate([old.vmin, v]),
                np.concatenate([old.vmax, v]),
                np.concatenate([old.weight, np.ones_like(t)]),
                raw=False,
            )
        else:
            pts = _Pts(t, v, v, v, np.ones_like(t), raw=True)
        if pts.t.size > 1 and np.any(np.diff(pts.t) < 0):
            order = np.argsort(pts.t, kind="stable")
            pts = _Pts(
                pts.t[order],
                pts.mean[order],
                pts.vmin[order],
                pts.vmax[order],
                pts.weight[order],
                pts.raw,
            )
        return pts

    def samples(self, host: str, t0: float, t1: float) -> Iterator[Sample]:
        """The raw samples of ``host`` in [t0, t1], rebuilt as protocol ``Sample`` objects
        (a minute at a time, so a long export does not hold everything in memory)."""
        hid = self._host_id(host)
        if hid is None:
            return
        rows = self._chunk_rows(hid, None, t0, t1)
        colsets = self._colsets({r[4] for r in rows})
        i = 0
        while i < len(rows):
            minute = math.floor(float(rows[i][1]) / CHUNK_S)
            j = i
            while j < len(rows) and math.floor(float(rows[j][1]) / CHUNK_S) == minute:
                j += 1
            yield from self._assemble(rows[i:j], colsets, t0, t1)
            i = j

    @staticmethod
    def _assemble(
        rows: list[Any], colsets: Mapping[int, tuple[str, ...]], t0: float, t1: float
    ) -> Iterator[Sample]:
        acc: dict[tuple[int, int, int], tuple[float, float, list[tuple[Value, ...]]]] = {}
        for gpu, _c0, _c1, _n, cs, data in rows:
            ch = codec.decode_chunk(data)
            nan = np.isnan(ch.values)
            obj = ch.values.astype(object)
            ints = ch.modes == codec.MODE_INT
            if ints.any():
                obj[:, ints] = np.where(nan[:, ints], 0, ch.values[:, ints]).astype(np.int64)
            obj[nan] = None
            t_us = np.round(ch.t * 1e6).astype(np.int64).tolist()
            for tu, sq, tv, mono, vals in zip(
                t_us, ch.seq.tolist(), ch.t.tolist(), ch.mono.tolist(), obj.tolist(), strict=True
            ):
                if tv < t0 or tv > t1:
                    continue
                key = (tu, int(sq), int(cs))
                entry = acc.get(key)
                if entry is None:
                    entry = (tv, mono, [])
                    acc[key] = entry
                entry[2].append((int(gpu), *vals))
        for key in sorted(acc):
            tv, mono, grows = acc[key]
            grows.sort(key=lambda r: r[0] if r[0] is not None else -1)
            yield Sample(seq=key[1], t=tv, mono=mono, columns=colsets[key[2]], rows=tuple(grows))


@dataclass(frozen=True)
class _Pts:
    t: Array
    mean: Array
    vmin: Array
    vmax: Array
    weight: Array
    raw: bool


class _Writer:
    """The writer thread's state: open per-host minute buffers and the pending batch."""

    def __init__(self, store: Store, con: sqlite3.Connection) -> None:
        self.store = store
        self.con = con
        self.host_ids: dict[str, int] = {}
        self.colset_ids: dict[tuple[str, ...], int] = {}
        self.open: dict[str, _Buffer] = {}
        self.packers: dict[str, RowPacker] = {}
        self.closed: list[tuple[str, _Buffer]] = []
        self.pending_rows = 0
        # Per host: (content digest, procs row id, t_last, seq_last) of the last snapshot.
        self.last_procs: dict[str, tuple[bytes, int | None, float, int]] = {}
        self.last_hello: dict[str, tuple[str, bytes]] = {}
        self.hello_waiting_first: dict[str, int] = {}  # host -> hellos row id
        self.await_first: set[str] = set()  # hosts whose next sample dates their hello
        self.procs_dirty: set[str] = set()
        self.ops: list[tuple[Any, ...]] = []  # non-sample records of the batch
        self.next_retention = time.monotonic()
        # Per host: (tokens, time of the last refill) of the event rate limit, and how many
        # were left out since the last recorded one.
        self.buckets: dict[str, tuple[float, float]] = {}
        self.held_back: dict[str, int] = {}
        self.noted: dict[str, float] = {}  # host -> monotonic time of its last flood note
        self.last_t: dict[str, float] = {}  # host -> time of its latest event or error

    # -- ids -----------------------------------------------------------------------------

    def host_id(self, host: str) -> int:
        hid = self.host_ids.get(host)
        if hid is None:
            self.con.execute("INSERT OR IGNORE INTO hosts (name) VALUES (?)", (host,))
            row = self.con.execute("SELECT id FROM hosts WHERE name=?", (host,)).fetchone()
            hid = int(row[0])
            self.host_ids[host] = hid
        return hid

    def colset_id(self, cols: tuple[str, ...]) -> int:
        cid = self.colset_ids.get(cols)
        if cid is None:
            names = orjson.dumps(list(cols)).decode()
            self.con.execute("INSERT OR IGNORE INTO colsets (names) VALUES (?)", (names,))
            row = self.con.execute("SELECT id FROM colsets WHERE names=?", (names,)).fetchone()
            cid = int(row[0])
            self.colset_ids[cols] = cid
        return cid

    # -- loop ----------------------------------------------------------------------------

    def run(self) -> None:
        st = self.store
        q = st._queue
        next_flush = time.monotonic() + st._flush_interval
        waiters: list[threading.Event] = []
        stop = False
        while not stop:
            if not q:
                st._wake.clear()
                st._idle = True
                if not q:  # re-check: a write between the test above and _idle = True
                    st._wake.wait(max(0.0, next_flush - time.monotonic()))
                st._idle = False
            item = q.popleft() if q else None
            # Drain what is already queued without going back to the clock for each item.
            while item is not None:
                op = item[0]
                if op == _OP_MSG:
                    try:
                        self.add_msg(item[1], item[2])
                    except Exception as e:  # one bad message, not the thread
                        self.failed(f"cannot buffer a message from {item[1]}", e)
                elif op == _OP_FLUSH:
                    waiters.append(item[1])
                    break
                elif op == _OP_STOP:
                    waiters.append(item[1])
                    stop = True
                    break
                elif op == _OP_LIFECYCLE:
                    self.ops.append((op, *item[2:]))
                    waiters.append(item[1])
                    break
                elif op == _OP_RETENTION:
                    self.safe_flush()
                    self.safe(lambda now=item[2]: self.retention(now))
                    item[1].set()
                else:
                    self.ops.append(item)
                if self.pending_rows >= self.store._batch_rows:
                    break
                item = q.popleft() if q else None
            now = time.monotonic()
            if waiters or stop or now >= next_flush or self.pending_rows >= self.store._batch_rows:
                self.safe_flush(final=stop)
                next_flush = now + self.store._flush_interval
                for w in waiters:
                    w.set()
                waiters.clear()
            if now >= self.next_retention and not stop:
                self.next_retention = now + RETENTION_EVERY_S
                self.safe(lambda: self.retention(time.time()))

    def failed(self, what: str, e: BaseException) -> None:
        """Count and log one failure; the writer thread carries on whatever it was."""
        st = self.store
        st.errors += 1
        st.last_error = f"{what}: {type(e).__name__}: {e}"
        # A full traceback for the first failures, then one line each: a hostile host can
        # make every batch fail, and the log must not grow with it.
        if st.errors <= 5:
            log.error("history store: %s", what, exc_info=e)
        else:
            log.error("history store: %s", st.last_error)

    def safe(self, fn: Any) -> BaseException | None:
        """Run ``fn``; on any failure count it, roll back and return the exception (the
        writer thread must outlive any one batch)."""
        try:
            fn()
        except Exception as e:
            self.failed("write failed", e)
            self.rollback()
            return e
        return None

    def rollback(self) -> None:
        if self.con.in_transaction:
            with contextlib.suppress(sqlite3.Error):
                self.con.execute("ROLLBACK")
        self.forget_ids()
        # Rows these point at may just have been undone.
        self.last_procs.clear()
        self.procs_dirty.clear()

    def forget_ids(self) -> None:
        """Drop the cached row ids: an undone transaction or savepoint may have created
        them."""
        self.host_ids.clear()
        self.colset_ids.clear()
        self.last_hello.clear()
        self.hello_waiting_first.clear()

    def safe_flush(self, final: bool = False) -> None:
        self.flood_notes(force=final)
        e = self.safe(self.flush)
        if e is not None and not isinstance(e, sqlite3.OperationalError):
            # One record of the batch cannot be written (a value SQLite cannot hold, say):
            # write the rest one by one so that the other hosts and the other records of
            # this host are kept. An operational error (disk full, I/O) would fail every
            # record: the batch is dropped, as memory must not grow with it.
            self.flush_each()
        # What failed is not retried.
        self.closed.clear()
        self.ops.clear()
        self.pending_rows = 0

    def flush_each(self) -> None:
        items = [*self.closed, *((h, b) for h, b in self.open.items() if b.dirty)]
        con = self.con
        try:
            con.execute("BEGIN IMMEDIATE")
            for host, buf in items:
                if not self.one(lambda hb=(host, buf): self.write_buffers([hb]), host):
                    self.drop_unstorable(host, buf)
            for item in self.ops:
                self.one(lambda it=item: self.write_op(it), "a record")
            self.one(self.flush_procs_updates, "process snapshots")
            con.execute("COMMIT")
        except sqlite3.Error as e:
            self.failed("write failed (record by record)", e)
            self.rollback()
        for buf in self.open.values():
            buf.dirty = False

    def one(self, fn: Any, what: str) -> bool:
        """Run ``fn`` in a savepoint of the open transaction: undone alone on failure."""
        con = self.con
        con.execute("SAVEPOINT one")
        ok = True
        try:
            fn()
        except Exception as e:  # this record only
            con.execute("ROLLBACK TO one")
            self.forget_ids()
            self.failed(f"cannot store {what}", e)
            ok = False
        con.execute("RELEASE one")
        return ok

    def drop_unstorable(self, host: str, buf: _Buffer) -> None:
        """After a host's minute failed to encode: keep its samples that fit the int64 and
        float64 columns (only a hand-made Sample can carry others: the decoder refuses
        them), write those, and drop the minute if even they fail."""
        keep = [s for s in buf.samples if _storable(s)]
        lost = len(buf.samples) - len(keep)
        if lost:
            log.error("history store: %d unstorable sample(s) of %s dropped", lost, host)
        buf.samples, buf.packed, buf.packed_n, buf.uniform = keep, None, 0, True
        written = bool(keep) and self.one(lambda: self.write_buffers([(host, buf)]), host)
        if not written and self.open.get(host) is buf:
            del self.open[host]

    # -- batching ------------------------------------------------------------------------

    def add_msg(self, host: str, msg: Message) -> None:
        if isinstance(msg, Sample):
            self.add_sample(host, msg)
            return
        if isinstance(msg, Hello):
            self.await_first.add(host)
        elif isinstance(msg, Event | ErrorMsg) and not self.admit(host, msg):
            return
        self.ops.append((_OP_MSG, host, msg))

    def admit(self, host: str, msg: Event | ErrorMsg) -> bool:
        """The event rate limit (see EVENT_RATE_PER_S): False = leave this one out."""
        st = self.store
        now = time.monotonic()
        t = msg.t if isinstance(msg, Event) else time.time()
        tokens, last = self.buckets.get(host, (float(st.event_burst), now))
        tokens = min(float(st.event_burst), tokens + max(0.0, now - last) * st.event_rate_per_s)
        self.buckets[host] = (tokens, now)
        self.last_t[host] = t
        if tokens < 1.0:
            self.held_back[host] = self.held_back.get(host, 0) + 1
            st.rate_limited[host] = st.rate_limited.get(host, 0) + 1
            if st.rate_limited[host] == 1:
                log.warning("history store: %s floods events; recording at most %g/s", host,
                            st.event_rate_per_s)  # fmt: skip
            return False
        self.buckets[host] = (tokens - 1.0, now)
        self.flood_note(host, t)
        return True

    def flood_note(self, host: str, t: float) -> None:
        n = self.held_back.pop(host, 0)
        if n:
            self.noted[host] = time.monotonic()
            self.ops.append((_OP_MSG, host, _flood_note(host, n, t, self.store.event_rate_per_s)))

    def flood_notes(self, force: bool = False) -> None:
        """During a flood, one note a minute says how many were left out (and at the end)."""
        now = time.monotonic()
        for host in list(self.held_back):
            if force or now - self.noted.get(host, 0.0) >= FLOOD_NOTE_EVERY_S:
                self.flood_note(host, self.last_t.get(host, time.time()))

    def add_sample(self, host: str, s: Sample) -> None:
        minute = math.floor(s.t / CHUNK_S)
        buf = self.open.get(host)
        if buf is not None and (
            buf.minute != minute
            or buf.columns != s.columns
            or len(buf.samples) >= MAX_CHUNK_ROWS
            or s.t < buf.samples[-1].t
        ):
            if buf.dirty:
                self.closed.append((host, buf))
            buf = None
        if buf is None:
            buf = _Buffer(minute=minute, columns=s.columns)
            self.open[host] = buf
        if host in self.await_first:
            self.await_first.discard(host)
            self.ops.append((_OP_MSG, host, ("hello_first", s.t)))
        buf.samples.append(s)
        buf.dirty = True
        self.pending_rows += len(s.rows)

    def flush(self) -> None:
        if not (self.ops or self.closed or any(b.dirty for b in self.open.values())):
            return
        con = self.con
        con.execute("BEGIN IMMEDIATE")
        self.write_buffers([*self.closed, *((h, b) for h, b in self.open.items() if b.dirty)])
        for item in self.ops:
            self.write_op(item)
        self.flush_procs_updates()
        con.execute("COMMIT")
        for buf in self.open.values():
            buf.dirty = False
        self.closed.clear()
        self.ops.clear()
        self.pending_rows = 0

    def pack(self, host: str, buf: _Buffer) -> Array | None:
        """The buffer's rows as one n × g × (c + 1) array, converting only the samples
        added since the last call; None when they do not all list the same GPUs."""
        if not buf.uniform:
            return None
        new = buf.samples[buf.packed_n :]
        if not new:
            return buf.packed
        packer = self.packers.get(host)
        if packer is None:
            packer = self.packers[host] = RowPacker()
        arr = packer.pack(new, len(buf.columns) + 1)
        old = buf.packed
        if arr is not None and old is not None:
            if arr.shape[1] == old.shape[1] and np.array_equal(arr[0, :, 0], old[0, :, 0]):
                arr = np.concatenate((old, arr))
            else:
                arr = None
        buf.packed, buf.packed_n, buf.uniform = arr, len(buf.samples), arr is not None
        return arr

    def write_buffers(self, items: list[tuple[str, _Buffer]]) -> None:
        """Encode and upsert the chunk and rollup rows of these minute buffers. Minutes
        that list the same GPUs throughout and have the same shape are encoded together,
        up to ``ENCODE_MINUTES`` per call: NumPy's per-call overhead, not the data, is
        most of the cost of one 8-GPU minute."""
        rows_c: list[tuple[Any, ...]] = []
        rows_r: list[tuple[Any, ...]] = []
        # shape -> [(host id, colset id, GPU indices, values, t, seq, mono)]
        same: dict[tuple[int, ...], list[tuple[Any, ...]]] = {}
        for host, buf in items:
            hid = self.host_id(host)
            cid = self.colset_id(buf.columns)
            samples = buf.samples
            arr = self.pack(host, buf)
            if arr is None:
                for gpus, vals, gt, gseq, gmono in self.split_by_gpu(samples, len(buf.columns)):
                    blobs, rolls = codec.encode_block(gt, gseq, gmono, vals)
                    key = (hid, gpus[0], float(gt[0]), float(gt[-1]), int(gt.size), cid)
                    rows_c.append((*key, blobs[0]))
                    rows_r.append((*key, rolls[0]))
                continue
            n = len(samples)
            same.setdefault(arr.shape, []).append(
                (
                    hid,
                    cid,
                    tuple(r[0] for r in samples[0].rows),
                    arr,
                    np.fromiter((s.t for s in samples), np.float64, n),
                    np.fromiter((s.seq for s in samples), np.int64, n),
                    np.fromiter((s.mono for s in samples), np.float64, n),
                )
            )
        for (n, g, w), group in same.items():
            for i in range(0, len(group), ENCODE_MINUTES):
                part = group[i : i + ENCODE_MINUTES]
                m = len(part)
                if m == 1:
                    vals = part[0][3][:, :, 1:]
                else:  # n × (m·g) × c: GPU k of the call is GPU k % g of minute k // g
                    vals = np.stack([p[3] for p in part], axis=1)[..., 1:].reshape(n, m * g, w - 1)
                blobs, rolls = codec.encode_block(
                    np.stack([p[4] for p in part]),
                    np.stack([p[5] for p in part]),
                    np.stack([p[6] for p in part]),
                    vals,
                )
                k = 0
                for hid, cid, gpus, _arr, t, _seq, _mono in part:
                    c0, c1 = float(t[0]), float(t[-1])
                    for gpu in gpus:
                        rows_c.append((hid, gpu, c0, c1, n, cid, blobs[k]))
                        rows_r.append((hid, gpu, c0, c1, n, cid, rolls[k]))
                        k += 1
        self.con.executemany(
            "INSERT INTO chunks (host_id, gpu, t0, t1, n, colset, data) VALUES (?,?,?,?,?,?,?) "
            "ON CONFLICT (host_id, gpu, t0) DO UPDATE SET t1=excluded.t1, n=excluded.n, "
            "colset=excluded.colset, data=excluded.data",
            rows_c,
        )
        self.con.executemany(
            "INSERT OR REPLACE INTO rollups (host_id, gpu, t0, t1, n, colset, data) "
            "VALUES (?,?,?,?,?,?,?)",
            rows_r,
        )

    @staticmethod
    def split_by_gpu(samples: list[Sample], c: int) -> list[_Group]:
        """The slow path for a minute whose samples do not all list the same GPUs: one
        group per GPU, holding only the samples that have it."""
        per: dict[int, list[tuple[Sample, tuple[Value, ...]]]] = {}
        for s in samples:
            for r in s.rows:
                if r and isinstance(r[0], int) and len(r) == c + 1:
                    per.setdefault(r[0], []).append((s, r))
        out: list[_Group] = []
        for gpu, items in sorted(per.items()):
            vals = _floats([r[1:] for _, r in items]).reshape(len(items), 1, c)
            out.append(
                (
                    (gpu,),
                    vals,
                    np.array([s.t for s, _ in items], np.float64),
                    np.array([s.seq for s, _ in items], np.int64),
                    np.array([s.mono for s, _ in items], np.float64),
                )
            )
        return out

    def write_op(self, item: tuple[Any, ...]) -> None:
        op = item[0]
        con = self.con
        if op == _OP_MSG:
            host, msg = item[1], item[2]
            hid = self.host_id(host)
            if isinstance(msg, Hello):
                self.write_hello(host, hid, msg)
            elif isinstance(msg, tuple):  # ("hello_first", t): first sample after a hello
                rid = self.hello_waiting_first.pop(host, None)
                if rid is not None:
                    con.execute("UPDATE hellos SET t_first=? WHERE id=?", (msg[1], rid))
            elif isinstance(msg, Procs):
                self.write_procs(host, hid, msg)
            elif isinstance(msg, Event):
                raw = dict(msg.raw) or {
                    "kind": "event",
                    "seq": msg.seq,
                    "t": msg.t,
                    "type": msg.type,
                    "gpu": msg.gpu,
                    "code": msg.code,
                    "message": msg.message,
                }
                con.execute(
                    "INSERT INTO events (host_id, t, seq, type, gpu, code, raw) "
                    "VALUES (?,?,?,?,?,?,?)",
                    (hid, msg.t, msg.seq, msg.type, msg.gpu, msg.code, _dumps(raw)),
                )
            elif isinstance(msg, ErrorMsg):
                raw = dict(msg.raw) or {"kind": "error", "message": msg.message}
                con.execute(
                    "INSERT INTO events (host_id, t, seq, type, gpu, code, raw) "
                    "VALUES (?,?,?,?,?,?,?)",
                    (
                        hid,
                        _opt_float(raw.get("t")) or time.time(),
                        None,
                        "error",
                        None,
                        None,
                        _dumps(raw),
                    ),
                )
        elif op == _OP_ALERT:
            a = item[1]
            hid = self.host_id(str(a.get("host") or "?"))
            started = _opt_float(a.get("started_t")) or time.time()
            con.execute(
                "INSERT OR REPLACE INTO alerts (id, host_id, rule_id, severity, gpu, state, "
                "started_t, ended_t, updated_t, data) VALUES (?,?,?,?,?,?,?,?,?,?)",
                (
                    str(a.get("id") or f"{a.get('rule_id')}:{a.get('host')}:{started}"),
                    hid,
                    a.get("rule_id"),
                    a.get("severity"),
                    _opt_int(a.get("gpu")),
                    a.get("state"),
                    started,
                    _opt_float(a.get("ended_t")),
                    time.time(),
                    _dumps(a),
                ),
            )
        elif op == _OP_KILL:
            e = item[1]
            hid = self.host_id(str(e.get("host") or "?"))
            t = _opt_float(e.get("t")) or _opt_float(e.get("time")) or time.time()
            con.execute("INSERT INTO kills (host_id, t, data) VALUES (?,?,?)", (hid, t, _dumps(e)))
        elif op == _OP_LIFECYCLE:
            self.write_lifecycle(item[1], item[2])
        elif op == _OP_CHECK:
            hid = self.host_id(item[1])
            con.execute(
                "INSERT INTO checks (host_id, t, data) VALUES (?,?,?)",
                (hid, item[3], _dumps(item[2])),
            )

    def write_lifecycle(self, kind: str, row: Mapping[str, Any]) -> None:
        if kind == "state":
            self.con.execute(
                "INSERT OR REPLACE INTO alert_states (alert_key, host, rule_id, gpu, key, state, "
                "fired_t, ended_t, acked, snoozed_until, updated_t, data) "
                "VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
                (
                    str(row["id"]),
                    str(row.get("host") or "?"),
                    str(row.get("rule_id") or "?"),
                    _opt_int(row.get("gpu")),
                    str(row.get("key") or ""),
                    str(row.get("state") or "firing"),
                    _opt_float(row.get("started_t")) or time.time(),
                    _opt_float(row.get("ended_t")),
                    1 if row.get("acked") else 0,
                    _opt_float(row.get("snoozed_until")),
                    time.time(),
                    _dumps(row),
                ),
            )
        elif kind == "mark":
            self.con.execute(
                "INSERT OR REPLACE INTO alert_marks (alert_key, kind, name, t, outcome) "
                "VALUES (?,?,?,?,?)",
                (
                    str(row["alert_key"]),
                    str(row["kind"]),
                    str(row["name"]),
                    float(row["t"]),
                    None if row.get("outcome") is None else str(row["outcome"]),
                ),
            )

    def write_hello(self, host: str, hid: int, msg: Hello) -> None:
        raw = _dumps(dict(msg.raw))
        if self.last_hello.get(host) == (msg.run_id, raw):
            return  # a reconnect re-sends the same hello: keep one row per run
        self.last_hello[host] = (msg.run_id, raw)
        row = self.con.execute(
            "SELECT id FROM hellos WHERE host_id=? AND run_id=? AND raw=?", (hid, msg.run_id, raw)
        ).fetchone()
        if row is not None:
            return
        cur = self.con.execute(
            "INSERT INTO hellos (host_id, t_seen, t_first, run_id, raw) VALUES (?,?,?,?,?)",
            (hid, time.time(), None, msg.run_id, raw),
        )
        assert cur.lastrowid is not None
        self.hello_waiting_first[host] = cur.lastrowid

    def write_procs(self, host: str, hid: int, msg: Procs) -> None:
        body = _dumps([_proc_dict(p) for p in msg.procs])
        last = self.last_procs.get(host)
        if last is not None and last[0] == body and last[1] is not None:
            # Unchanged: extend the previous snapshot (written once at the end of the batch).
            self.last_procs[host] = (body, last[1], msg.t, msg.seq)
            self.procs_dirty.add(host)
            return
        cur = self.con.execute(
            "INSERT INTO procs (host_id, t_first, t_last, seq_first, seq_last, data) "
            "VALUES (?,?,?,?,?,?)",
            (hid, msg.t, msg.t, msg.seq, msg.seq, zlib.compress(body)),
        )
        self.last_procs[host] = (body, cur.lastrowid, msg.t, msg.seq)
        self.procs_dirty.discard(host)

    def flush_procs_updates(self) -> None:
        for host in self.procs_dirty:
            _body, rid, t_last, seq_last = self.last_procs[host]
            self.con.execute(
                "UPDATE procs SET t_last=?, seq_last=? WHERE id=?", (t_last, seq_last, rid)
            )
        self.procs_dirty.clear()

    # -- retention -----------------------------------------------------------------------

    def retention(self, now: float) -> None:
        st = self.store
        raw_cut = now - st.retention_raw_days * DAY_S
        roll_cut = now - st.retention_rollup_days * DAY_S
        con = self.con
        con.execute("BEGIN IMMEDIATE")
        con.execute("DELETE FROM chunks WHERE t1 < ?", (raw_cut,))
        con.execute("DELETE FROM procs WHERE t_last < ?", (raw_cut,))
        con.execute("DELETE FROM rollups WHERE t1 < ?", (roll_cut,))
        con.execute("DELETE FROM events WHERE t < ?", (roll_cut,))
        con.execute("DELETE FROM kills WHERE t < ?", (roll_cut,))
        con.execute(
            "DELETE FROM alerts WHERE coalesce(ended_t, updated_t) < ? AND state != 'firing'",
            (roll_cut,),
        )
        con.execute(
            "DELETE FROM alert_marks WHERE alert_key IN (SELECT alert_key FROM alert_states "
            "WHERE coalesce(ended_t, updated_t) < ? AND state != 'firing')",
            (roll_cut,),
        )
        con.execute(
            "DELETE FROM alert_states WHERE coalesce(ended_t, updated_t) < ? AND state != 'firing'",
            (roll_cut,),
        )
        # Old inventories and checks go too, but each host keeps its latest.
        con.execute(
            "DELETE FROM hellos WHERE t_seen < ? AND t_seen < "
            "(SELECT max(h.t_seen) FROM hellos h WHERE h.host_id = hellos.host_id)",
            (roll_cut,),
        )
        con.execute(
            "DELETE FROM checks WHERE t < ? AND t < "
            "(SELECT max(c.t) FROM checks c WHERE c.host_id = checks.host_id)",
            (roll_cut,),
        )
        con.execute("COMMIT")
        # Open procs rows may just have been deleted: start fresh snapshots.
        self.last_procs.clear()
        self.procs_dirty.clear()
        con.execute("PRAGMA incremental_vacuum")
        self.trim_to_size()

    def used_bytes(self) -> int:
        """Bytes of the file in use (free pages excluded: they are reused before it grows)."""
        con = self.con
        pages = int(con.execute("PRAGMA page_count").fetchone()[0])
        free = int(con.execute("PRAGMA freelist_count").fetchone()[0])
        size = int(con.execute("PRAGMA page_size").fetchone()[0])
        return (pages - free) * size

    def trim_to_size(self) -> None:
        """Delete the oldest data, a slice of the span at a time, until the file holds at
        most ``max_bytes``: raw chunks, process snapshots and events first, rollups only
        when that is not enough (a flood of events must not cost the long-term trends)."""
        st = self.store
        limit = st.max_bytes
        if limit is None or self.used_bytes() <= limit:
            return
        con = self.con
        for tables in (
            (("chunks", "t1"), ("procs", "t_last"), ("events", "t")),
            (("chunks", "t1"), ("procs", "t_last"), ("events", "t"), ("rollups", "t1")),
        ):
            for _ in range(40):
                lo_hi = [
                    con.execute(f"SELECT min({c}), max({c}) FROM {t}").fetchone() for t, c in tables
                ]
                lows = [r[0] for r in lo_hi if r[0] is not None]
                highs = [r[1] for r in lo_hi if r[1] is not None]
                if not lows:
                    break
                lo, hi = min(lows), max(highs)
                # A tenth of what is held, at least a minute, never the newest minute.
                cut = min(lo + max((hi - lo) / 10.0, CHUNK_S), hi - CHUNK_S)
                if cut <= lo:
                    break
                con.execute("BEGIN IMMEDIATE")
                for t, c in tables:
                    con.execute(f"DELETE FROM {t} WHERE {c} < ?", (cut,))
                con.execute("COMMIT")
                st.trimmed_for_size += 1
                if self.used_bytes() <= limit:
                    break
            if self.used_bytes() <= limit:
                break
        self.last_procs.clear()
        self.procs_dirty.clear()
        con.execute("PRAGMA incremental_vacuum")
        log.warning(
            "history store: trimmed the oldest data to keep %s under %d MB",
            st.path,
            limit >> 20,
        )
