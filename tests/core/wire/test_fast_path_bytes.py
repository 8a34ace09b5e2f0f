"""The sample fast path's byte check: a real sampler line with one value replaced by
something the check must not let through gives what the general path gives (the same
Sample, or the same refusal), and a value beyond the protocol's range is refused either way."""

from __future__ import annotations

import subprocess
import sys

import orjson
import pytest
from gpufleet.core.wire.messages import Sample, StreamDecoder, parse_object


@pytest.fixture(scope="module")
def lines() -> list[bytes]:
    out = subprocess.run(
        [sys.executable, "-m", "gpufleet_sampler", "stream", "--backend", "sim",
         "--scenario", "healthy-8xa100", "--no-wait", "--count", "3"],
        check=True, capture_output=True,
    ).stdout  # fmt: skip
    return out.splitlines()


def _with_value(line: bytes, text: bytes) -> bytes:
    """``line`` with the second value of its third row written as ``text`` (raw bytes, so
    that forms orjson.dumps never writes, like an exponent, can be tried)."""
    head, rows = line.split(b'"gpus":[', 1)
    parts = rows.split(b"],[")
    first, rest = parts[2].split(b",", 2)[0], parts[2].split(b",", 2)[2]
    parts[2] = first + b"," + text + b"," + rest
    return head + b'"gpus":[' + b"],[".join(parts)


@pytest.mark.parametrize(
    "text",
    [b"7", b"7.25", b"-0.5", b"null", b"true", b'"7"', b"[7]", b"[]", b'{"a":1}',
     b"7e2", b"7E-2", b"1e25", b"18446744073709551615", b"18446744073709551617",
     b"123456789012345678901234.5", b"-9223372036854775809", b" 7"],
)  # fmt: skip
def test_fast_path_gives_what_the_general_path_gives(lines: list[bytes], text: bytes) -> None:
    d = StreamDecoder()
    d.feed(lines[0])
    sample = next(ln for ln in lines[1:] if b'"kind":"sample"' in ln[:20])
    line = _with_value(sample, text)
    got = d.feed(line)
    try:
        want: object = parse_object(orjson.loads(line), d.hello)
    except ValueError:
        want = None
    assert got == want
    assert (got is None) == (d.bad_lines == 1)


@pytest.mark.parametrize(
    "text", [b"1e25", b"28446744073709551617", b"123456789012345678901234.5", b'"7"', b"[7]"]
)
def test_values_out_of_range_or_of_another_type_make_the_line_bad(
    lines: list[bytes], text: bytes
) -> None:
    d = StreamDecoder()
    d.feed(lines[0])
    sample = next(ln for ln in lines[1:] if b'"kind":"sample"' in ln[:20])
    assert d.feed(_with_value(sample, text)) is None
    assert d.bad_lines == 1 and d.last_error is not None
    assert isinstance(d.feed(sample), Sample)  # and the stream goes on
