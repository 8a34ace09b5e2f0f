"""Arrival benchmark results kept with the host: a table of their own in the history file.

Why apart from ``store.py``: a benchmark is a rare one-shot record (a few per rental) read by
host and by GPU model, not part of the sample path; a connection of its own with the store's
pragmas writes one row and closes, beside a running store (WAL: one writer at a time waits).
Comparisons: the same host's earlier runs, and the user's other rentals of the same model.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from gpufleet.core.history.schema import PRAGMAS

TABLE = """
CREATE TABLE IF NOT EXISTS bench_runs (
    id INTEGER PRIMARY KEY,
    host TEXT NOT NULL,
    t REAL NOT NULL,
    model TEXT,
    verdict TEXT NOT NULL,
    result BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS bench_runs_host ON bench_runs (host, t);
CREATE INDEX IF NOT EXISTS bench_runs_model ON bench_runs (model, t);
"""


@dataclass(frozen=True)
class BenchRecord:
    host: str
    t: float
    model: str | None
    verdict: str
    result: dict[str, Any]


@contextmanager
def _connect(path: Path) -> Iterator[sqlite3.Connection]:
    path.parent.mkdir(parents=True, exist_ok=True)
    con = sqlite3.connect(str(path), isolation_level=None)
    try:
        for p in PRAGMAS:
            con.execute(p)
        con.executescript(TABLE)
        yield con
    finally:
        con.close()


def model_of(result: Mapping[str, Any]) -> str | None:
    """The host's GPU model (its first GPU's name): what other rentals are compared by."""
    gpus = result.get("gpus") or []
    return str(gpus[0].get("name")) if gpus and isinstance(gpus[0], Mapping) else None


def record(path: Path, result: Mapping[str, Any], t: float | None = None) -> None:
    """Keep one judged result (``core.verdicts.arrival.judge``'s dict)."""
    with _connect(path) as con:
        con.execute(
            "INSERT INTO bench_runs (host, t, model, verdict, result) VALUES (?, ?, ?, ?, ?)",
            (
                str(result["host"]),
                time.time() if t is None else t,
                model_of(result),
                str(result["verdict"]),
                orjson.dumps(dict(result)),
            ),
        )


def _rows(
    con: sqlite3.Connection, where: str, args: tuple[Any, ...], limit: int
) -> list[BenchRecord]:
    cur = con.execute(
        f"SELECT host, t, model, verdict, result FROM bench_runs WHERE {where} "
        "ORDER BY t DESC LIMIT ?",
        (*args, limit),
    )
    return [BenchRecord(h, t, m, v, orjson.loads(r)) for h, t, m, v, r in cur]


def runs_of_host(path: Path, host: str, limit: int = 20) -> list[BenchRecord]:
    """The host's runs, newest first."""
    if not path.exists():
        return []
    with _connect(path) as con:
        return _rows(con, "host = ?", (host,), limit)


def runs_for_window(path: Path, host: str, t0: float, t1: float) -> list[BenchRecord]:
    """The host's runs in [t0, t1], or else its latest before t1 (the card it was judged to
    be when the window began): what an evidence bundle shows. Newest first."""
    if not path.exists():
        return []
    with _connect(path) as con:
        inside = _rows(con, "host = ? AND t >= ? AND t <= ?", (host, t0, t1), 20)
        return inside or _rows(con, "host = ? AND t < ?", (host, t0), 1)


def runs_of_model(
    path: Path, model: str, exclude_host: str | None = None, limit: int = 50
) -> list[BenchRecord]:
    """The newest run of each other host with this GPU model (the user's other rentals)."""
    if not path.exists():
        return []
    with _connect(path) as con:
        rows = _rows(con, "model = ? AND host != ?", (model, exclude_host or ""), limit)
    newest: dict[str, BenchRecord] = {}
    for r in rows:
        newest.setdefault(r.host, r)
    return list(newest.values())


def median_of(records: list[BenchRecord], metric: str) -> float | None:
    """The median over records of each run's GPU-median figure for ``metric``."""
    per_run = []
    for r in records:
        vals = sorted(
            g["measured"][metric]
            for g in r.result.get("gpus", [])
            if isinstance(g.get("measured"), dict) and metric in g["measured"]
        )
        if vals:
            per_run.append(vals[len(vals) // 2])
    per_run.sort()
    return per_run[len(per_run) // 2] if per_run else None
