"""Rollup formats: files written before format 2 (every column's count, min, mean, max) must
answer long-range queries exactly as the same data in today's format does."""

from __future__ import annotations

import shutil
import sqlite3
import time
import zlib
from pathlib import Path

import numpy as np
from gpufleet.core.history import codec
from gpufleet.core.history.store import Store
from gpufleet_sampler import protocol

from tests.support import synth

HOST = "a100-old"
GPUS = 2
SECONDS = 4 * 3600  # more minutes than RAW_BUCKET_CHUNKS: long queries read the rollups


def _to_format_1(path: Path) -> int:
    """Rewrite every rollup of the file in format 1, as the writer before format 2 did."""
    con = sqlite3.connect(path)
    rows = con.execute("SELECT host_id, gpu, t0, data FROM rollups").fetchall()
    for hid, gpu, t0, data in rows:
        assert codec.inflate(data)[0] == codec.ROLLUP_VERSION  # what the writer writes now
        old = codec.encode_rollup(codec.decode_rollup(data))
        assert zlib.decompress(old)[0] == 1
        con.execute(
            "UPDATE rollups SET data=? WHERE host_id=? AND gpu=? AND t0=?", (old, hid, gpu, t0)
        )
    con.commit()
    con.close()
    return len(rows)


def test_format_1_rollups_answer_as_todays(tmp_path: Path) -> None:
    t0 = synth.floor_minute(time.time() - SECONDS - 120)
    new = tmp_path / "new.sqlite"
    with Store(new) as st:
        st.write(HOST, synth.make_hello(HOST, GPUS))
        for s in synth.make_samples(t0, SECONDS, gpus=GPUS):
            st.write(HOST, s)
        st.flush()
        assert st.errors == 0
    old = tmp_path / "old.sqlite"
    shutil.copy(new, old)
    assert _to_format_1(old) == GPUS * SECONDS // 60
    a, b = Store(new, read_only=True), Store(old, read_only=True)
    try:
        t1 = t0 + SECONDS
        for metric in protocol.COLUMN_NAMES:
            for gpu in range(GPUS):
                wa = a.query_window(HOST, gpu, metric, t0, t1, max_points=100)
                wb = b.query_window(HOST, gpu, metric, t0, t1, max_points=100)
                assert not wa.raw and not wb.raw
                for x, y in (
                    (wa.t, wb.t),
                    (wa.mean, wb.mean),
                    (wa.vmin, wb.vmin),
                    (wa.vmax, wb.vmax),
                ):
                    np.testing.assert_array_equal(x, y)
        # The envelope of a metric that moves is the raw data's.
        pos = protocol.ROW_POS["power_w"]
        raw = [s.rows[1][pos] for s in synth.make_samples(t0, SECONDS, gpus=GPUS)]
        w = b.query_window(HOST, 1, "power_w", t0, t1, max_points=100)
        assert w.vmax.max() == max(raw) and w.vmin.min() == min(raw)
    finally:
        a.close()
        b.close()
