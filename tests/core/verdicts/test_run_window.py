"""The window of a host read from the history store and from a recorded stream file holds the
same samples, hello and procs: every judgment of the past reads it (diagnosis, compare)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from gpufleet.core.history.store import Store
from gpufleet.core.verdicts.window import (
    WindowError,
    from_messages,
    from_store,
    from_stream_file,
)
from gpufleet.core.wire.encode import encode_line

from tests.support import synth

# Recent: the store keeps raw samples for 7 days.
T0 = synth.floor_minute(time.time() - 7200)


def _messages(n: int = 600) -> list:
    hello = synth.make_hello("w1", gpus=2)
    samples = synth.make_samples(T0, n, gpus=2)
    procs = [synth.make_procs(T0 + 100.5, 10_000, gpus=2)]
    return [hello, *sorted([*samples, *procs], key=lambda m: m.t)]


def test_store_and_file_give_the_same_window(tmp_path: Path) -> None:
    msgs = _messages()
    path = tmp_path / "w1.jsonl"
    path.write_bytes(b"".join(encode_line(m) for m in msgs))
    store = Store(tmp_path / "h.sqlite")
    for m in msgs:
        store.write("w1", m)
    store.flush()
    a = from_store(store, "w1", T0 + 60, T0 + 360)
    b = from_stream_file(path, t0=T0 + 60, t1=T0 + 360)
    store.close()
    assert b.host == "w1"
    assert len(a.samples) == len(b.samples) == 300
    assert a.gpus == b.gpus == [0, 1]
    assert [s.t for s in a.samples] == pytest.approx([s.t for s in b.samples])
    for sa, sb in zip(a.samples, b.samples, strict=True):
        for g in (0, 1):
            assert sa.value(g, "sm_clock_mhz") == sb.value(g, "sm_clock_mhz")
    assert len(a.procs) == len(b.procs) == 1
    assert a.hello.run_id == b.hello.run_id


def test_a_hello_inside_the_window_is_kept_with_its_time() -> None:
    first = synth.make_hello("w1", gpus=1, run_id="run-1")
    second = synth.make_hello("w1", gpus=1, run_id="run-2")
    s1 = synth.make_samples(T0, 100, gpus=1)
    s2 = synth.make_samples(T0 + 100, 100, gpus=1, seq0=1)
    w = from_messages("w1", [first, *s1, second, *s2])
    assert w.hello.run_id == "run-1"
    assert [h.run_id for _, h in w.hellos] == ["run-1", "run-2"]
    assert w.hellos[1][0] == pytest.approx(s1[-1].t)
    assert [m.t for m in w.messages()[1:]] == sorted(m.t for m in w.messages()[1:])


def test_bad_inputs_say_what_is_wrong(tmp_path: Path) -> None:
    with pytest.raises(WindowError, match="no such file"):
        from_stream_file(tmp_path / "missing.jsonl")
    junk = tmp_path / "junk.jsonl"
    junk.write_text(json.dumps({"kind": "sample"}) + "\nnot json\n")
    with pytest.raises(WindowError, match="no hello"):
        from_stream_file(junk)
    store = Store(tmp_path / "h.sqlite")
    with pytest.raises(WindowError, match="hosts with history: none yet"):
        from_store(store, "nope", T0, T0 + 1)
    store.close()
