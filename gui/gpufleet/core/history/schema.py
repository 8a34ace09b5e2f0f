"""SQLite schema of the history store (``history.sqlite``) and the pragmas it runs under.

Layout, chosen to write fast and stay small:

- ``chunks``: one row per GPU per minute (at most), the samples of that GPU in that minute as
  one compressed columnar blob (see ``store_codec``). A chunk never crosses a minute
  boundary, so a window query can bound its index range by the window's first minute. While
  the minute is still open the writer rewrites the row at each batch (upsert on
  ``host_id, gpu, t0``), so a crash loses at most the last batch.
- ``rollups``: min / mean / max / count per column for each chunk, same key; kept longer
  than the raw chunks and read for long ranges.
- ``hellos`` (inventory per run), ``procs`` (snapshots, an unchanged one only extends the
  previous row's ``t_last``), ``events``, ``alerts`` (upsert by alert id), ``kills`` (audit
  entries), ``checks`` (health check facts).
- ``alert_states`` (the alert lifecycle: one row per firing, keyed by the alert's stable id,
  with its state, acknowledgement and snooze) and ``alert_marks`` (what was done for a
  firing: ``sent`` per channel, ``action`` per action, with time and outcome), so that a
  restart re-notifies, re-posts and re-runs nothing (``gpufleet.core.alerts.lifecycle``).
"""

from __future__ import annotations

import sqlite3

SCHEMA_VERSION = 1
CHUNK_S = 60.0  # a chunk never crosses a minute boundary

PRAGMAS = (
    "PRAGMA journal_mode=WAL",
    # NORMAL is durable against an application crash in WAL mode (only a power loss can
    # roll back the last transactions), and much cheaper than FULL.
    "PRAGMA synchronous=NORMAL",
    "PRAGMA busy_timeout=10000",
    "PRAGMA temp_store=MEMORY",
    "PRAGMA cache_size=-32000",
)

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS hosts (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);
CREATE TABLE IF NOT EXISTS colsets (id INTEGER PRIMARY KEY, names TEXT NOT NULL UNIQUE);
CREATE TABLE IF NOT EXISTS hellos (
    id INTEGER PRIMARY KEY, host_id INTEGER NOT NULL, t_seen REAL NOT NULL, t_first REAL,
    run_id TEXT NOT NULL, raw BLOB NOT NULL);
CREATE INDEX IF NOT EXISTS hellos_host ON hellos (host_id, t_seen);
CREATE TABLE IF NOT EXISTS chunks (
    id INTEGER PRIMARY KEY, host_id INTEGER NOT NULL, gpu INTEGER NOT NULL,
    t0 REAL NOT NULL, t1 REAL NOT NULL, n INTEGER NOT NULL, colset INTEGER NOT NULL,
    data BLOB NOT NULL);
CREATE UNIQUE INDEX IF NOT EXISTS chunks_key ON chunks (host_id, gpu, t0);
CREATE INDEX IF NOT EXISTS chunks_host_t ON chunks (host_id, t0);
CREATE INDEX IF NOT EXISTS chunks_t1 ON chunks (t1);
CREATE TABLE IF NOT EXISTS rollups (
    host_id INTEGER NOT NULL, gpu INTEGER NOT NULL, t0 REAL NOT NULL, t1 REAL NOT NULL,
    n INTEGER NOT NULL, colset INTEGER NOT NULL, data BLOB NOT NULL,
    PRIMARY KEY (host_id, gpu, t0)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS rollups_t1 ON rollups (t1);
CREATE TABLE IF NOT EXISTS procs (
    id INTEGER PRIMARY KEY, host_id INTEGER NOT NULL, t_first REAL NOT NULL,
    t_last REAL NOT NULL, seq_first INTEGER NOT NULL, seq_last INTEGER NOT NULL,
    data BLOB NOT NULL);
CREATE INDEX IF NOT EXISTS procs_host_t ON procs (host_id, t_first);
CREATE INDEX IF NOT EXISTS procs_t_last ON procs (t_last);
CREATE TABLE IF NOT EXISTS events (
    id INTEGER PRIMARY KEY, host_id INTEGER NOT NULL, t REAL NOT NULL, seq INTEGER,
    type TEXT NOT NULL, gpu INTEGER, code INTEGER, raw BLOB NOT NULL);
CREATE INDEX IF NOT EXISTS events_host_t ON events (host_id, t);
CREATE TABLE IF NOT EXISTS alerts (
    id TEXT PRIMARY KEY, host_id INTEGER NOT NULL, rule_id TEXT, severity TEXT, gpu INTEGER,
    state TEXT, started_t REAL NOT NULL, ended_t REAL, updated_t REAL NOT NULL,
    data BLOB NOT NULL);
CREATE INDEX IF NOT EXISTS alerts_host_t ON alerts (host_id, started_t);
CREATE TABLE IF NOT EXISTS kills (
    id INTEGER PRIMARY KEY, host_id INTEGER NOT NULL, t REAL NOT NULL, data BLOB NOT NULL);
CREATE INDEX IF NOT EXISTS kills_host_t ON kills (host_id, t);
CREATE TABLE IF NOT EXISTS checks (
    id INTEGER PRIMARY KEY, host_id INTEGER NOT NULL, t REAL NOT NULL, data BLOB NOT NULL);
CREATE INDEX IF NOT EXISTS checks_host_t ON checks (host_id, t);
CREATE TABLE IF NOT EXISTS alert_states (
    alert_key TEXT PRIMARY KEY, host TEXT NOT NULL, rule_id TEXT NOT NULL, gpu INTEGER,
    key TEXT NOT NULL, state TEXT NOT NULL, fired_t REAL NOT NULL, ended_t REAL,
    acked INTEGER NOT NULL, snoozed_until REAL, updated_t REAL NOT NULL, data BLOB NOT NULL);
CREATE INDEX IF NOT EXISTS alert_states_host_t ON alert_states (host, fired_t);
CREATE TABLE IF NOT EXISTS alert_marks (
    alert_key TEXT NOT NULL, kind TEXT NOT NULL, name TEXT NOT NULL, t REAL NOT NULL,
    outcome TEXT, PRIMARY KEY (alert_key, kind, name)) WITHOUT ROWID;
"""


class StoreError(Exception):
    """The history file cannot be used (message says why, in one line)."""


def init_schema(con: sqlite3.Connection) -> None:
    """Create the tables (idempotent) and check the file's schema version."""
    # auto_vacuum only takes effect before the first table exists: new files get it, so
    # retention can give pages back to the file system with incremental_vacuum.
    con.execute("PRAGMA auto_vacuum=INCREMENTAL")
    con.executescript(SCHEMA)
    row = con.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
    if row is None:
        con.execute(
            "INSERT INTO meta (key, value) VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),)
        )
    elif int(row[0]) > SCHEMA_VERSION:
        raise StoreError(
            f"the history file was written by a newer gpufleet (schema {row[0]}, this one "
            f"reads up to {SCHEMA_VERSION})"
        )
