"""Forgetting a host's history: all of it (the user removed the host and asked for its data
to go), or from a time on (the demo's prefilled half hour replaces what an earlier demo run
left for the same minutes, so that one time never holds two runs' samples).

The writer thread runs these statements in one transaction (``Writer.forget``); the reading
side never deletes anything.
"""

from __future__ import annotations

import sqlite3

# (table, the column whose time decides) of every table keyed by host id. A minute chunk or
# a rollup that reaches ``since`` goes whole: half a minute of one run is not worth keeping.
_BY_HOST_ID = (
    ("chunks", "t1"),
    ("rollups", "t1"),
    ("procs", "t_last"),
    ("events", "t"),
    ("alerts", "started_t"),
    ("kills", "t"),
    ("checks", "t"),
    ("hellos", "t_seen"),
)


def forget_host(con: sqlite3.Connection, host: str, since: float | None) -> None:
    """Delete what the store holds of ``host`` (from ``since`` on, when given) in one
    transaction; the host's name goes too when everything does."""
    row = con.execute("SELECT id FROM hosts WHERE name=?", (host,)).fetchone()
    con.execute("BEGIN IMMEDIATE")
    try:
        if row is not None:
            hid = int(row[0])
            for table, col in _BY_HOST_ID:
                if since is None:
                    con.execute(f"DELETE FROM {table} WHERE host_id=?", (hid,))
                else:
                    con.execute(f"DELETE FROM {table} WHERE host_id=? AND {col}>=?", (hid, since))
        # Alert states are keyed by the host's name (they outlive a renamed host id).
        keys = "SELECT alert_key FROM alert_states WHERE host=?" + (
            "" if since is None else " AND fired_t>=?"
        )
        args: tuple[object, ...] = (host,) if since is None else (host, since)
        con.execute(f"DELETE FROM alert_marks WHERE alert_key IN ({keys})", args)
        con.execute(f"DELETE FROM alert_states WHERE alert_key IN ({keys})", args)
        if since is None and row is not None:
            con.execute("DELETE FROM hosts WHERE id=?", (int(row[0]),))
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise
