"""The history's writer thread: per-host minute buffers packed into compressed chunks and
rollups, records, the event rate limit, and retention (by age, then by size).

It owns the write connection and commits in batches, one transaction each (every ~1 s or
``batch_rows`` GPU-samples), so a crash (kill -9) loses at most the batch in flight.
``Store`` feeds it through a lock-free deque of operations (``OP_*``).
"""

from __future__ import annotations

import collections
import contextlib
import logging
import math
import sqlite3
import threading
import time
import zlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import orjson
from gpufleet_sampler import protocol

from gpufleet.core.history import codec
from gpufleet.core.history.forget import forget_host
from gpufleet.core.history.records import dumps, opt_float, opt_int, proc_dict
from gpufleet.core.history.rows import RowPacker
from gpufleet.core.history.schema import CHUNK_S
from gpufleet.core.wire.messages import (
    ErrorMsg,
    Event,
    Hello,
    Message,
    Procs,
    Sample,
    Value,
)

# The store's logger, as before the writer had a module of its own (log filters name it).
log = logging.getLogger("gpufleet.core.history.store")

DAY_S = 86400.0
MAX_CHUNK_ROWS = 1200  # caps a chunk at sampling rates above 20 Hz
RETENTION_EVERY_S = 600.0

# Events and error messages of one host are recorded at most this fast (a token bucket on
# the laptop's clock, which a sampler cannot forge; the burst takes a reconnect's backfill
# of real events): a flooding sampler would otherwise grow the file by gigabytes an hour.
# What is left out is counted (``Store.rate_limited``) and said in a note event a minute.
EVENT_RATE_PER_S = 2.0
FLOOD_NOTE_EVERY_S = 60.0
ENCODE_MINUTES = 16  # minute buffers encoded per call (bigger arrays fall out of cache)

OP_MSG = 0
OP_ALERT = 1
OP_KILL = 2
OP_CHECK = 3
OP_FLUSH = 4
OP_RETENTION = 5
OP_STOP = 6
OP_LIFECYCLE = 7
OP_FORGET = 8

Array = codec.F64
# The samples of some GPUs sharing timestamps: (gpu indices, n × g × c values, t, seq, mono).
_Group = tuple[tuple[Value, ...], Array, Array, codec.I64, Array]


class StoreState(Protocol):
    """What the writer thread reads and counts on its ``Store`` (the store owns the queue,
    the settings and the counters; the writer imports nothing of it)."""

    path: Path
    retention_raw_days: float
    retention_rollup_days: float
    max_bytes: int | None
    event_rate_per_s: float
    event_burst: int
    rate_limited: dict[str, int]
    trimmed_for_size: int
    errors: int
    last_error: str | None
    _queue: collections.deque[tuple[Any, ...]]
    _wake: threading.Event
    _idle: bool
    _flush_interval: float
    _batch_rows: int


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


class Writer:
    """The writer thread's state: open per-host minute buffers and the pending batch."""

    def __init__(self, store: StoreState, con: sqlite3.Connection) -> None:
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
                if op == OP_MSG:
                    try:
                        self.add_msg(item[1], item[2])
                    except Exception as e:  # one bad message, not the thread
                        self.failed(f"cannot buffer a message from {item[1]}", e)
                elif op == OP_FLUSH:
                    waiters.append(item[1])
                    break
                elif op == OP_STOP:
                    waiters.append(item[1])
                    stop = True
                    break
                elif op == OP_LIFECYCLE:
                    self.ops.append((op, *item[2:]))
                    waiters.append(item[1])
                    break
                elif op == OP_RETENTION:
                    self.safe_flush()
                    self.safe(lambda now=item[2]: self.retention(now))
                    item[1].set()
                elif op == OP_FORGET:
                    self.safe_flush()
                    self.safe(lambda host=item[2], since=item[3]: self.forget(host, since))
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
        self.ops.append((OP_MSG, host, msg))

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
            self.ops.append((OP_MSG, host, _flood_note(host, n, t, self.store.event_rate_per_s)))

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
            self.ops.append((OP_MSG, host, ("hello_first", s.t)))
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
        if op == OP_MSG:
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
                    (hid, msg.t, msg.seq, msg.type, msg.gpu, msg.code, dumps(raw)),
                )
            elif isinstance(msg, ErrorMsg):
                raw = dict(msg.raw) or {"kind": "error", "message": msg.message}
                con.execute(
                    "INSERT INTO events (host_id, t, seq, type, gpu, code, raw) "
                    "VALUES (?,?,?,?,?,?,?)",
                    (
                        hid,
                        opt_float(raw.get("t")) or time.time(),
                        None,
                        "error",
                        None,
                        None,
                        dumps(raw),
                    ),
                )
        elif op == OP_ALERT:
            a = item[1]
            hid = self.host_id(str(a.get("host") or "?"))
            started = opt_float(a.get("started_t")) or time.time()
            con.execute(
                "INSERT OR REPLACE INTO alerts (id, host_id, rule_id, severity, gpu, state, "
                "started_t, ended_t, updated_t, data) VALUES (?,?,?,?,?,?,?,?,?,?)",
                (
                    str(a.get("id") or f"{a.get('rule_id')}:{a.get('host')}:{started}"),
                    hid,
                    a.get("rule_id"),
                    a.get("severity"),
                    opt_int(a.get("gpu")),
                    a.get("state"),
                    started,
                    opt_float(a.get("ended_t")),
                    time.time(),
                    dumps(a),
                ),
            )
        elif op == OP_KILL:
            e = item[1]
            hid = self.host_id(str(e.get("host") or "?"))
            t = opt_float(e.get("t")) or opt_float(e.get("time")) or time.time()
            con.execute("INSERT INTO kills (host_id, t, data) VALUES (?,?,?)", (hid, t, dumps(e)))
        elif op == OP_LIFECYCLE:
            self.write_lifecycle(item[1], item[2])
        elif op == OP_CHECK:
            hid = self.host_id(item[1])
            con.execute(
                "INSERT INTO checks (host_id, t, data) VALUES (?,?,?)",
                (hid, item[3], dumps(item[2])),
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
                    opt_int(row.get("gpu")),
                    str(row.get("key") or ""),
                    str(row.get("state") or "firing"),
                    opt_float(row.get("started_t")) or time.time(),
                    opt_float(row.get("ended_t")),
                    1 if row.get("acked") else 0,
                    opt_float(row.get("snoozed_until")),
                    time.time(),
                    dumps(row),
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
        raw = dumps(dict(msg.raw))
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
        body = dumps([proc_dict(p) for p in msg.procs])
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

    # -- forgetting ----------------------------------------------------------------------

    def forget(self, host: str, since: float | None) -> None:
        """Delete ``host``'s rows (from ``since`` on) and what this thread holds of it."""
        forget_host(self.con, host, since)
        self.open.pop(host, None)
        self.packers.pop(host, None)
        self.last_procs.pop(host, None)
        self.procs_dirty.discard(host)
        self.forget_ids()

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
