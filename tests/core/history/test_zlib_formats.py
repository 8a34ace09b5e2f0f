"""Files written before zstd (chunk format 3, rollup format 2, both under zlib) must answer
every query exactly as the same data in today's formats does: a user's history outlives the
upgrade, and an upgraded app appends zstd minutes to a file whose older minutes are zlib.

The old files are made from a new one by putting each blob's bytes back under zlib level 1
with the previous version byte: the layouts did not change, only the compressor (and
tests/core/history/test_codec.py decodes blobs written by the previous encoder itself)."""

from __future__ import annotations

import io
import shutil
import sqlite3
import threading
import time
import zlib
from pathlib import Path

import numpy as np
from gpufleet.core.history import codec
from gpufleet.core.history.export import export_csv, export_jsonl
from gpufleet.core.history.store import Store
from gpufleet.core.wire.messages import Sample
from gpufleet_sampler import protocol

from tests.support import synth

HOST = "a100-old"
GPUS = 2
SECONDS = 3 * 3600  # more minutes than RAW_BUCKET_CHUNKS: long queries read the rollups
TABLES = (("chunks", codec.CHUNK_VERSION), ("rollups", codec.ROLLUP_VERSION))


def _to_zlib(path: Path, before: float) -> int:
    """Rewrite the chunks and rollups of minutes starting before ``before`` in the zlib
    formats (chunk 3, rollup 2), as the writer before zstd wrote them; returns how many."""
    con = sqlite3.connect(path)
    done = 0
    for table, version in TABLES:
        rows = con.execute(
            f"SELECT host_id, gpu, t0, data FROM {table} WHERE t0 < ?", (before,)
        ).fetchall()
        for hid, gpu, t0, data in rows:
            assert data[:4] == b"\x28\xb5\x2f\xfd"  # a zstd frame: what the writer writes
            raw = codec.inflate(data)
            assert raw[0] == version
            old = zlib.compress(bytes((version - 1,)) + raw[1:], 1)
            con.execute(
                f"UPDATE {table} SET data=? WHERE host_id=? AND gpu=? AND t0=?",
                (old, hid, gpu, t0),
            )
            done += 1
    con.commit()
    con.close()
    return done


def _windows(st: Store, t0: float, t1: float) -> list[np.ndarray]:
    """What every query path gives for every metric and GPU: raw, bucketed from raw (an
    hour), bucketed from the rollups (the whole file), the envelope."""
    out: list[np.ndarray] = []
    hour = (t1 - 3600, t1)
    for metric in protocol.COLUMN_NAMES:
        for gpu in range(GPUS):
            out.extend(st.query(HOST, gpu, metric, *hour))
            out.extend(st.query(HOST, gpu, metric, *hour, max_points=100))
            w = st.query_window(HOST, gpu, metric, t0, t1, max_points=100)
            assert not w.raw
            out.extend((w.t, w.mean, w.vmin, w.vmax))
            out.extend(st.query_minmax(HOST, gpu, metric, t0, t1, max_points=300))
    return out


def _exports(st: Store, t0: float, t1: float) -> tuple[str, bytes]:
    text, lines = io.StringIO(), io.BytesIO()
    export_csv(st, HOST, t0, t1, text)
    export_jsonl(st, HOST, t0, t1, lines)
    return text.getvalue(), lines.getvalue()


def _same(a: list[np.ndarray], b: list[np.ndarray]) -> None:
    assert len(a) == len(b)
    for x, y in zip(a, b, strict=True):
        np.testing.assert_array_equal(x, y)


def _record(path: Path, samples: list[Sample], hello: bool = True) -> None:
    with Store(path) as st:
        if hello:
            st.write(HOST, synth.make_hello(HOST, GPUS))
        for s in samples:
            st.write(HOST, s)
        st.flush()
        assert st.errors == 0 and st.dropped == 0


def test_zlib_files_answer_every_query_as_zstd_ones(tmp_path: Path) -> None:
    t0 = synth.floor_minute(time.time() - SECONDS - 120)
    t1 = t0 + SECONDS
    samples = synth.make_samples(t0, SECONDS, gpus=GPUS)
    new, old, mixed = tmp_path / "new.sqlite", tmp_path / "old.sqlite", tmp_path / "mixed.sqlite"
    _record(new, samples)
    shutil.copy(new, old)
    shutil.copy(new, mixed)
    minutes = SECONDS // 60
    assert _to_zlib(old, t1 + 60) == 2 * GPUS * minutes
    # Half the minutes zlib, half zstd: a file the app went on writing after the upgrade.
    assert _to_zlib(mixed, t0 + SECONDS / 2) == 2 * GPUS * minutes // 2
    stores = [Store(p, read_only=True) for p in (new, old, mixed)]
    try:
        want = _windows(stores[0], t0, t1)
        exported = _exports(stores[0], t0, t1)
        assert exported[0].count("\n") == 1 + GPUS * SECONDS
        got = list(stores[0].samples(HOST, t0, t1))
        assert [s.rows for s in got] == [s.rows for s in samples]
        for st in stores[1:]:
            _same(_windows(st, t0, t1), want)
            assert _exports(st, t0, t1) == exported
            assert [s.rows for s in st.samples(HOST, t0, t1)] == [s.rows for s in got]
    finally:
        for st in stores:
            st.close()


def test_the_writer_appends_zstd_minutes_to_a_zlib_file(tmp_path: Path) -> None:
    t0 = synth.floor_minute(time.time() - 7200)
    samples = synth.make_samples(t0, 7200, gpus=GPUS)
    first, rest = samples[:3600], samples[3600:]
    new, old = tmp_path / "new.sqlite", tmp_path / "old.sqlite"
    _record(old, first)
    assert _to_zlib(old, t0 + 7200) == 2 * GPUS * 60
    _record(old, rest, hello=False)  # the upgraded app opens the old file and goes on
    _record(new, samples)
    con = sqlite3.connect(old)
    kinds = {bytes(r[0][:1]) for r in con.execute("SELECT data FROM chunks")}
    con.close()
    assert kinds == {b"\x78", b"\x28"}  # zlib minutes, then zstd ones
    a, b = Store(new, read_only=True), Store(old, read_only=True)
    try:
        _same(_windows(b, t0, t0 + 7200), _windows(a, t0, t0 + 7200))
        assert _exports(b, t0, t0 + 7200) == _exports(a, t0, t0 + 7200)
    finally:
        a.close()
        b.close()


def test_reader_threads_each_decode_with_their_own_zstd_objects(tmp_path: Path) -> None:
    """zstd's decompressor is not thread-safe: readers on several threads at once (the GUI's
    plots, an export, the evidence bundle) must each get the answers one thread gets."""
    t0 = synth.floor_minute(time.time() - 3 * 3600)
    path = tmp_path / "h.sqlite"
    _record(path, synth.make_samples(t0, 3 * 3600 - 60, gpus=GPUS))
    with Store(path, read_only=True) as st:
        want = _windows(st, t0, t0 + 3 * 3600)
        results: list[list[np.ndarray] | BaseException] = []

        def read() -> None:
            try:
                for _ in range(2):
                    results.append(_windows(st, t0, t0 + 3 * 3600))
            except BaseException as e:  # reported below, on the test's thread
                results.append(e)

        threads = [threading.Thread(target=read) for _ in range(4)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
    assert len(results) == 8
    for r in results:
        assert not isinstance(r, BaseException), r
        _same(r, want)
