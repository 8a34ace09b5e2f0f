"""History store durability: SIGKILL mid-batch, restart, retention, a full queue."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from gpufleet.core.history.store import DAY_S, Store

from tests.support import synth
from tests.support.paths import ROOT

# The child writes 8-GPU samples as fast as it can, flushing every 500 and printing the last
# seq committed; the parent kills it with SIGKILL while the next batch is in flight.
CHILD = r"""
import sys, time
from tests.support import synth
from gpufleet.core.history.store import Store
st = Store(sys.argv[1], flush_interval_s=0.02, batch_rows=2000)
st.write("h", synth.make_hello("h", 8))
t0 = time.time() - 4 * 3600
samples = synth.make_samples(t0, 12 * 3600, gpus=8)
for i, s in enumerate(samples):
    st.write("h", s)
    if i % 500 == 499:
        st.flush()
        print(s.seq, flush=True)
print("done", flush=True)
time.sleep(60)
"""


def test_sigkill_mid_batch_keeps_everything_committed(tmp_path: Path) -> None:
    path = tmp_path / "history.sqlite"
    # The repository root too: the child imports tests.support, whatever its working directory.
    parts = (ROOT, ROOT / "gui", ROOT / "remote")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(map(str, parts)))
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(path)], stdout=subprocess.PIPE, text=True, env=env
    )
    try:
        assert child.stdout is not None
        committed = 0
        for _ in range(6):
            line = child.stdout.readline()
            assert line.strip().isdigit(), f"child said {line!r}"
            committed = int(line)
        os.kill(child.pid, signal.SIGKILL)
    finally:
        child.kill()
        child.wait()
    assert child.returncode == -signal.SIGKILL
    con = sqlite3.connect(path)
    assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    con.close()
    with Store(path) as st:
        seqs = [s.seq for s in st.samples("h", 0, time.time())]
        assert seqs[:committed] == list(range(1, committed + 1))  # nothing before is lost
        assert seqs == list(range(1, len(seqs) + 1))  # and no holes after it
        assert all(len(s.rows) == 8 for s in st.samples("h", 0, time.time()))
        assert st.hello("h") is not None
        # The store keeps working after the crash.
        more = synth.make_samples(time.time() - 60, 10, gpus=8, seq0=10**6)
        for s in more:
            st.write("h", s)
        st.flush()
        assert [s.seq for s in st.samples("h", more[0].t, more[-1].t)] == [s.seq for s in more]


def test_restart_within_the_same_minute_keeps_both_halves(tmp_path: Path) -> None:
    path = tmp_path / "history.sqlite"
    t0 = synth.floor_minute(time.time() - 600)
    samples = synth.make_samples(t0, 60, gpus=2, interval=0.5)  # two per second
    with Store(path) as st:
        for s in samples[:30]:
            st.write("h", s)
    with Store(path) as st:
        for s in samples[30:]:
            st.write("h", s)
        st.flush()
        t, v = st.query("h", 1, "power_w", t0, t0 + 60)
        assert t.size == 60
        assert v.tolist() == [s.value(1, "power_w") for s in samples]


def test_retention_deletes_what_it_should_and_nothing_else(tmp_path: Path) -> None:
    now = time.time()
    ages = {"fresh": 1, "raw_expired": 10, "all_expired": 100}  # days
    with Store(tmp_path / "h.sqlite", retention_raw_days=7, retention_rollup_days=90) as st:
        st.write("h", synth.make_hello("h", 2))
        for name, age in ages.items():
            t = synth.floor_minute(now - age * DAY_S)
            for s in synth.make_samples(t, 180, gpus=2):
                st.write("h", s)
            st.write("h", synth.make_procs(t + 5, 1, gpus=2, user=name))
            st.write("h", synth.make_event(t + 10, 2, code=age))
            st.write_kill({"host": "h", "t": t + 20, "pid": age})
            st.write_check("h", {"age": age}, t=t + 30)
        st.apply_retention(now)
        first = {name: synth.floor_minute(now - age * DAY_S) for name, age in ages.items()}

        def window(name: str) -> tuple[float, float]:
            return first[name], first[name] + 180

        # Fresh data: untouched, raw and exact.
        w = st.query_window("h", 0, "power_w", *window("fresh"))
        assert w.raw and w.t.size == 180
        assert len(list(st.samples("h", *window("fresh")))) == 180
        assert [p.procs[0].user for p in st.procs("h", *window("fresh"))] == ["fresh"]
        # Past raw retention: the rollups remain (one point per minute), raw samples gone.
        w = st.query_window("h", 0, "power_w", *window("raw_expired"))
        assert not w.raw and w.t.size == 3
        assert list(st.samples("h", *window("raw_expired"))) == []
        assert st.procs("h", *window("raw_expired")) == []
        assert [e.code for e in st.events("h", now - 200 * DAY_S, now)] == [10, 1]
        assert [k["pid"] for k in st.kills("h", now - 200 * DAY_S, now)] == [10, 1]
        # Past rollup retention: nothing left.
        w = st.query_window("h", 0, "power_w", *window("all_expired"))
        assert w.t.size == 0
        assert st.time_range("h") == (
            pytest.approx(first["raw_expired"], abs=0.01),
            pytest.approx(first["fresh"] + 179, abs=0.01),
        )
        assert st.last_check("h") is not None and st.last_check("h")[1] == {"age": 1}
        assert st.hello("h") is not None  # the latest inventory is always kept
        con = st._reader()
        assert con.execute("SELECT count(*) FROM checks").fetchone()[0] == 2


def test_full_queue_drops_and_counts_never_blocks(tmp_path: Path) -> None:
    samples = synth.make_samples(time.time() - 3600, 3000, gpus=8)
    with Store(tmp_path / "h.sqlite", queue_size=50) as st:
        for s in samples:
            st.write("h", s)
        st.flush()
        stored = len(list(st.samples("h", 0, time.time())))
        assert stored + st.dropped == len(samples)
        assert st.dropped > 0


def test_corrupt_file_is_a_clear_error(tmp_path: Path) -> None:
    from gpufleet.core.history.store import StoreError

    path = tmp_path / "history.sqlite"
    path.write_bytes(b"this is not a database" * 100)
    with pytest.raises(StoreError, match="history file"):
        Store(path)
