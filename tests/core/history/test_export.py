"""Export: CSV matches the store, JSONL replays as the same messages, CLI errors are one line."""

from __future__ import annotations

import csv
import io
import time
from datetime import datetime
from pathlib import Path

import pytest
from gpufleet.cli.main import main
from gpufleet.core.config import paths
from gpufleet.core.history.export import export_csv, export_jsonl
from gpufleet.core.history.store import Store
from gpufleet.core.wire.messages import Event, Hello, Procs, Sample, StreamDecoder
from gpufleet_sampler import protocol

from tests.support import synth

HOST = "h100-a"


@pytest.fixture
def recorded() -> tuple[list[Sample], float]:
    """30 minutes of 4 GPUs in the (isolated) real history file, with procs and an Xid."""
    t0 = synth.floor_minute(time.time() - 3600)
    samples = synth.make_samples(t0, 1800, gpus=4)
    with Store(paths.history_file()) as st:
        st.write(HOST, synth.make_hello(HOST, 4))
        for i, s in enumerate(samples):
            st.write(HOST, s)
            if i == 100:
                st.write(HOST, synth.make_procs(s.t + 0.1, 10**6, gpus=4))
            if i == 900:
                st.write(HOST, synth.make_event(s.t + 0.2, 10**6 + 1, gpu=2, code=48))
    return samples, t0


def test_csv_matches_the_store(recorded: tuple[list[Sample], float]) -> None:
    samples, t0 = recorded
    t1 = t0 + 600
    with Store(paths.history_file(), read_only=True) as st:
        buf = io.StringIO()
        n = export_csv(st, HOST, t0, t1, buf)
        stored = list(st.samples(HOST, t0, t1))
    rows = list(csv.reader(io.StringIO(buf.getvalue())))
    head, body = rows[0], rows[1:]
    assert head == ["t", "host", "gpu", *protocol.COLUMN_NAMES]
    want = [s for s in samples if t0 <= s.t <= t1]
    assert n == len(body) == 4 * len(want) == 4 * len(stored)
    for i, s in enumerate(want):
        for g in range(4):
            row = body[4 * i + g]
            when = datetime.fromisoformat(row[0].replace("Z", "+00:00")).timestamp()
            assert when == pytest.approx(s.t, abs=1e-6) and row[0].endswith("Z")
            assert row[1] == HOST and int(row[2]) == g
            for col, cell in zip(protocol.COLUMN_NAMES, row[3:], strict=True):
                v = s.value(g, col)
                assert (cell == "") if v is None else (float(cell) == v), (col, cell, v)


def test_jsonl_replays_as_the_same_messages(recorded: tuple[list[Sample], float]) -> None:
    samples, t0 = recorded
    with Store(paths.history_file(), read_only=True) as st:
        out = io.BytesIO()
        n = export_jsonl(st, HOST, t0, t0 + 1800, out)
    lines = out.getvalue().splitlines()
    assert len(lines) == n
    dec = StreamDecoder()
    msgs = dec.feed_many(lines)
    assert dec.bad_lines == 0
    assert isinstance(msgs[0], Hello) and msgs[0].run_id == "run-1"
    got = [m for m in msgs if isinstance(m, Sample)]
    assert [(m.seq, m.t, m.rows) for m in got] == [(s.seq, s.t, s.rows) for s in samples]
    procs = [m for m in msgs if isinstance(m, Procs)]
    events = [m for m in msgs if isinstance(m, Event)]
    assert len(procs) == 1 and len(procs[0].procs) == 4
    assert [(e.type, e.gpu, e.code) for e in events] == [("xid", 2, 48)]
    # Time order: the event sits between the samples around it.
    i = msgs.index(events[0])
    assert msgs[i - 1].t <= events[0].t <= msgs[i + 1].t  # type: ignore[union-attr]


def test_cli_csv_and_jsonl_files(
    recorded: tuple[list[Sample], float], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    samples, t0 = recorded
    out = tmp_path / "x.csv"
    since = datetime.fromtimestamp(t0).isoformat()  # naive = local time
    assert main(["export", HOST, f"--since={since}", "--until", "now", "--out", str(out)]) == 0
    assert len(out.read_text().splitlines()) == 1 + 4 * len(samples)
    assert main(["export", HOST, "--since=-2h", "--format", "jsonl"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith('{"kind":"hello"') and len(lines) == 1 + len(samples) + 2


@pytest.mark.parametrize(
    ("argv", "code", "words"),
    [
        (["export", "nope", "--since=-1h"], 8, ["no history for host 'nope'", HOST]),
        (["export", HOST, "--since=-10s"], 8, ["no samples of", "its history covers"]),
        (["export", HOST, "--since", "yesterday"], 2, ["bad time 'yesterday'", "ISO 8601"]),
        (["export", HOST, "--around", "now", "--window", "5"], 2, ["bad duration"]),
        (["export", HOST], 2, ["--since"]),
        (["export", HOST, "--since=-1h", "--until=-2h"], 2, ["is not after"]),
    ],
)
def test_cli_errors_are_one_line(
    recorded: tuple[list[Sample], float],
    capsys: pytest.CaptureFixture[str],
    argv: list[str],
    code: int,
    words: list[str],
) -> None:
    assert main(argv) == code
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and err.startswith("gpufleet: ")
    for w in words:
        assert w in err


def test_cli_without_any_history(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["export", "h", "--since=-1h"]) == 8
    err = capsys.readouterr().err
    assert "no history at" in err and err.count("\n") == 1
    assert main(["export", "h", "--since=-1h", "--demo"]) == 8
    assert str(paths.history_file(demo=True)) in capsys.readouterr().err
