"""Export a host's history: CSV (one row per GPU per sample) and JSONL (protocol lines).

CSV columns: ``t`` (ISO 8601, UTC), ``host``, ``gpu``, then every protocol column in wire
order; a null is an empty cell. JSONL is what the sampler sent, re-encoded: the ``hello`` in
effect first, then ``sample``, ``procs`` and ``event`` lines in time order (a new run's hello
where it began), so the file can be fed to ``gpufleet replay``.
"""

from __future__ import annotations

import csv
import heapq
from collections.abc import Iterator
from typing import IO

from gpufleet_sampler import protocol

from gpufleet.core.history.store import Store
from gpufleet.core.history.timeparse import format_utc
from gpufleet.core.wire.encode import encode_line
from gpufleet.core.wire.messages import Message, Sample, Value

CSV_FIXED = ("t", "host", "gpu")


def csv_columns(store: Store, host: str, t0: float, t1: float) -> tuple[str, ...]:
    """The metric columns of the export: the protocol's, plus any a newer sampler added."""
    cols = list(protocol.COLUMN_NAMES)
    for _, hello in store.hellos(host, t0, t1):
        cols.extend(c for c in hello.columns if c not in cols)
    return tuple(cols)


def _cell(v: Value) -> Value | str:
    return "" if v is None else v


def csv_rows(
    host: str, samples: Iterator[Sample], columns: tuple[str, ...]
) -> Iterator[list[Value | str]]:
    """One list per GPU per sample, in ``CSV_FIXED + columns`` order."""
    cache: dict[tuple[str, ...], list[int | None]] = {}
    for s in samples:
        where = cache.get(s.columns)
        if where is None:
            pos = {c: i + 1 for i, c in enumerate(s.columns)}
            where = cache[s.columns] = [pos.get(c) for c in columns]
        stamp = format_utc(s.t, "microseconds")  # the store keeps sub-ms times: so does the CSV
        for r in s.rows:
            yield [stamp, host, r[0], *(_cell(r[p]) if p is not None else "" for p in where)]


def export_csv(store: Store, host: str, t0: float, t1: float, out: IO[str]) -> int:
    """Write the CSV of [t0, t1] to ``out``; returns the number of data rows."""
    columns = csv_columns(store, host, t0, t1)
    w = csv.writer(out, lineterminator="\n")
    w.writerow([*CSV_FIXED, *columns])
    n = 0
    for row in csv_rows(host, store.samples(host, t0, t1), columns):
        w.writerow(row)
        n += 1
    return n


def messages(store: Store, host: str, t0: float, t1: float) -> Iterator[Message]:
    """Every stored message of [t0, t1] in time order, each run's ``hello`` first."""
    hellos = store.hellos(host, t0, t1)
    streams: list[Iterator[tuple[float, int, int, Message]]] = [
        ((max(t, t0) if i == 0 else t, -1, 0, h) for i, (t, h) in enumerate(hellos)),
        ((s.t, s.seq, 1, s) for s in store.samples(host, t0, t1)),
        ((max(p.t, t0), p.seq, 2, p) for p in store.procs(host, t0, t1)),
        ((e.t, e.seq, 3, e) for e in store.events(host, t0, t1)),
    ]
    merged = heapq.merge(*streams, key=lambda x: (x[0], x[2] != 0, x[1], x[2]))
    for _t, _seq, _k, msg in merged:
        yield msg


def export_jsonl(store: Store, host: str, t0: float, t1: float, out: IO[bytes]) -> int:
    """Write protocol lines of [t0, t1] to ``out``; returns the number of lines."""
    n = 0
    for msg in messages(store, host, t0, t1):
        out.write(encode_line(msg))
        n += 1
    return n
