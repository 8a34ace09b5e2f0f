"""The client's parser: every bad line is counted and skipped, never raised; the fast path for
the sampler's own sample lines gives exactly what the general path gives."""

from __future__ import annotations

import subprocess
import sys

import orjson
import pytest
from gpufleet.core.wire.messages import (
    Procs,
    Sample,
    StreamDecoder,
    VersionError,
    parse_object,
)
from gpufleet_sampler import protocol


def _stream(count: int) -> list[bytes]:
    out = subprocess.run(
        [sys.executable, "-m", "gpufleet_sampler", "stream", "--backend", "sim",
         "--scenario", "power-capped-4090", "--no-wait", "--count", str(count)],
        check=True, capture_output=True,
    ).stdout  # fmt: skip
    return out.splitlines()


@pytest.fixture(scope="module")
def lines() -> list[bytes]:
    return _stream(20)


def test_fast_path_equals_general_path(lines: list[bytes]) -> None:
    d = StreamDecoder()
    hello = d.feed(lines[0])
    assert hello is not None
    for line in lines[1:]:
        fast = d.feed(line)
        general = parse_object(orjson.loads(line), d.hello)
        assert fast == general
    assert d.bad_lines == 0


def _sample_line(hello_cols: int, row: list[object]) -> bytes:
    return orjson.dumps({"kind": "sample", "seq": 5, "t": 1.0, "mono": 2.0, "gpus": [row]})


@pytest.mark.parametrize(
    "bad_value, expected",
    [(True, None), (1.5, 1.5), (None, None), (-3e-5, -3e-5), (2**64 - 1, 2**64 - 1)],
)
def test_booleans_in_a_row_become_null(
    lines: list[bytes], bad_value: object, expected: object
) -> None:
    d = StreamDecoder()
    d.feed(lines[0])
    assert d.hello is not None
    width = len(d.hello.columns)
    row = [0, bad_value] + [1] * (width - 1)
    msg = d.feed(_sample_line(width, row))
    assert isinstance(msg, Sample)
    assert msg.rows[0][1] == expected
    assert msg.rows[0][2:] == (1,) * (width - 1)


@pytest.mark.parametrize(
    "line, reason",
    [
        (b"not json at all", "not JSON"),
        (b"[1, 2]", "JSON object"),
        (b'{"kind": "mystery"}', "unknown kind"),
        (b'{"kind": "sample", "seq": 1, "t": 1, "mono": 1, "gpus": [[0, 1]]}', "values"),
        (b'{"kind": "sample", "seq": 1, "t": 1, "mono": 1, "gpus": [["a"]]}', "GPU index"),
        (b'{"kind": "sample", "seq": "x", "t": 1, "mono": 1, "gpus": []}', "seq"),
        (b'{"kind": "procs", "seq": 1, "t": 1, "procs": [{"gpu": 0, "pid": "1"}]}', "pid"),
        (b'{"kind": "event", "seq": 1, "t": 1}', "type"),
        (b"x" * (protocol.MAX_LINE_BYTES + 1), "exceeds"),
    ],
)
def test_bad_lines_are_counted_not_raised(lines: list[bytes], line: bytes, reason: str) -> None:
    d = StreamDecoder()
    d.feed(lines[0])
    assert d.feed(line) is None
    assert d.bad_lines == 1
    assert d.last_error is not None and reason in d.last_error
    # The stream goes on.
    assert isinstance(d.feed(lines[1]), Sample)


def test_sample_before_hello_is_a_bad_line(lines: list[bytes]) -> None:
    d = StreamDecoder()
    assert d.feed(lines[1]) is None and d.bad_lines == 1


def test_unsupported_protocol_version_raises(lines: list[bytes]) -> None:
    hello = orjson.loads(lines[0])
    hello["protocol"] = protocol.PROTOCOL_MAX + 1
    with pytest.raises(VersionError, match="upgrade"):
        StreamDecoder().feed(orjson.dumps(hello))


def test_unchanged_process_snapshot_is_reused_changed_one_is_not(lines: list[bytes]) -> None:
    d = StreamDecoder()
    d.feed(lines[0])
    entry = {"gpu": 0, "pid": 42, "start_ticks": 7, "user": "u", "name": "python",
             "cmd": "python x.py", "mem_bytes": 10, "sm_pct": 50, "type": "compute"}  # fmt: skip
    a = d.feed(orjson.dumps({"kind": "procs", "seq": 1, "t": 1, "procs": [entry]}))
    b = d.feed(orjson.dumps({"kind": "procs", "seq": 2, "t": 2, "procs": [entry]}))
    entry["sm_pct"] = 60
    c = d.feed(orjson.dumps({"kind": "procs", "seq": 3, "t": 3, "procs": [entry]}))
    assert isinstance(a, Procs) and isinstance(b, Procs) and isinstance(c, Procs)
    assert b.seq == 2 and b.procs is a.procs
    assert c.procs[0].sm_pct == 60.0 and a.procs[0].sm_pct == 50.0
