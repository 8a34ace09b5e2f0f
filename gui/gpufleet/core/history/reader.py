"""Reading the history: the catalogue (hosts, GPUs, time ranges, inventories), the records
(events, processes, alerts, kills, checks, the alert lifecycle) and the samples, raw or at plot
resolution (``Window``).

``StoreReader`` is the reading half of ``Store``: each thread reads through a connection of
its own (``Store._reader``) and sees what the writer has committed.
"""

from __future__ import annotations

import math
import sqlite3
import zlib
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import orjson

from gpufleet.core.history import codec
from gpufleet.core.history.records import proc_from
from gpufleet.core.history.schema import CHUNK_S
from gpufleet.core.wire.messages import (
    Event,
    Hello,
    Procs,
    Sample,
    Value,
    parse_hello,
)

RAW_BUCKET_CHUNKS = 150  # per GPU: 2.5 h at one chunk a minute

Array = codec.F64


@dataclass(frozen=True)
class Window:
    """A query result at plot resolution: ``mean`` per point, and the ``vmin`` / ``vmax`` of
    the samples it stands for (equal to ``mean`` for raw points)."""

    t: Array
    mean: Array
    vmin: Array
    vmax: Array
    raw: bool  # True when every point is one sample


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


class StoreReader:
    """The reading methods of ``Store`` (which provides the connections)."""

    _colset_cache: dict[int, tuple[str, ...]] | None

    def _reader(self) -> sqlite3.Connection:
        raise NotImplementedError

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
                procs=tuple(proc_from(d) for d in orjson.loads(zlib.decompress(data))),
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
            if v[0] not in codec.ROLLUP_VERSIONS:
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
