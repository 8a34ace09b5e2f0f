"""The sample fast path (a typed decode that checks every value's type and range while it
parses): a real sampler line with one value replaced by something it must not let through
gives what the general path gives (the same Sample, or the same refusal), a value beyond
the protocol's range is refused either way, and the numbers it parses are the very values
orjson parses for the general path."""

from __future__ import annotations

import random
import re
import subprocess
import sys

import msgspec
import orjson
import pytest
from gpufleet.core.wire.messages import (
    Sample,
    StreamDecoder,
    _sample_layout,
    parse_object,
)


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
     b"123456789012345678901234.5", b"-9223372036854775809", b" 7",
     b"0.12345678901234567890123", b"12345678901234567890", b"1234567890123456789"],
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


def _sample_line(lines: list[bytes]) -> bytes:
    return next(ln for ln in lines[1:] if b'"kind":"sample"' in ln[:20])


def _both_paths(lines: list[bytes], line: bytes) -> tuple[object, object, StreamDecoder]:
    """What the decoder gives for ``line`` and what the general path gives for it."""
    d = StreamDecoder()
    d.feed(lines[0])
    got = d.feed(line)
    try:
        want: object = parse_object(orjson.loads(line), d.hello)
    except ValueError:
        want = None
    return got, want, d


@pytest.mark.parametrize("index", [b"0.0", b"2.0", b"-1", b"true", b"null", b"[2]"])
def test_a_gpu_index_that_is_no_plain_integer_is_refused(lines: list[bytes], index: bytes) -> None:
    head, rows = _sample_line(lines).split(b'"gpus":[[', 1)
    _, rest = rows.split(b",", 1)
    got, want, d = _both_paths(lines, head + b'"gpus":[[' + index + b"," + rest)
    assert got is None and want is None and d.bad_lines == 1


def test_a_sample_built_on_the_decoded_object_is_a_plain_sample(lines: list[bytes]) -> None:
    d = StreamDecoder()
    d.feed(lines[0])
    got = d.feed(_sample_line(lines))
    assert isinstance(got, Sample)
    built = Sample(seq=got.seq, t=got.t, mono=got.mono, columns=got.columns, rows=got.rows)
    assert got == built and hash(got) == hash(built)
    assert sorted(vars(got)) == ["columns", "mono", "rows", "seq", "t"]
    assert all(type(r) is tuple for r in got.rows)


@pytest.mark.parametrize(
    "change",
    [
        # Another key after the array, or before it: what the general path gives.
        lambda ln: ln[:-1] + b',"extra":1}',
        # Negative values (the signed bounds).
        lambda ln: ln.replace(b",0,", b",-3,", 1).replace(b",0.0,", b",-0.5,", 1),
        lambda ln: ln.replace(b'"seq":', b'"extra":[1],"seq":', 1),
        # An earlier "gpus" array the decoded object does not keep (JSON's last key wins):
        # the byte check runs from the first one to the end of the line.
        lambda ln: ln.replace(b'"gpus":[', b'"gpus":[[0,"x"]],"gpus":[', 1),
        lambda ln: (
            ln[:-1]
            + b',"gpus":'
            + ln[ln.index(b'"gpus":[') + 7 : -1].replace(b"[1,", b"[9,")
            + b"}"
        ),
        # Times written as integers, spaces after the separators, a trailing newline.
        lambda ln: re.sub(rb'"(t|mono)":([0-9]+)\.[0-9]+', rb'"\1":\2', ln),
        lambda ln: ln.replace(b",", b", ").replace(b":", b": "),
        lambda ln: ln + b"\n",
    ],
)
def test_lines_off_the_sampler_s_own_shape_give_what_the_general_path_gives(
    lines: list[bytes], change: object
) -> None:
    line = change(_sample_line(lines))  # type: ignore[operator]
    got, want, d = _both_paths(lines, line)
    assert isinstance(want, Sample) and got == want and d.bad_lines == 0


def test_numbers_parse_to_the_values_the_general_path_gets(lines: list[bytes]) -> None:
    """Floats of every magnitude in range (17 significant digits, subnormal, negative zero)
    and integers up to int64's ends, written as Python's json writes them."""
    rnd = random.Random(28)
    sample = _sample_line(lines)
    values = [-0.0, 5e-324, 2.2250738585072014e-308, 0.1, 1 / 3, 2.0**53 + 1.0, 1e16, 1.8e19]
    values += [2**63 - 1, -(2**63), 2**53 + 1, 0]
    values += [rnd.uniform(-1, 1) * 10 ** rnd.randint(-30, 19) for _ in range(200)]
    values += [rnd.randint(-(2**63), 2**63 - 1) for _ in range(50)]
    d = StreamDecoder()
    d.feed(lines[0])
    assert d.hello is not None
    layout = _sample_layout(d.hello)
    for v in values:
        line = _with_value(sample, repr(v).encode())
        decode = layout.decode_signed if b"-" in line else layout.decode_unsigned
        decoded = msgspec.structs.asdict(decode(line))  # the fast path's own parse
        want = parse_object(orjson.loads(line), d.hello)
        assert isinstance(want, Sample) and decoded["rows"] == want.rows, v
        assert type(decoded["rows"][2][1]) is type(want.rows[2][1])
        assert d.feed(line) == want


@pytest.mark.parametrize("rows", [0, 128, 129])
def test_row_counts_at_and_past_the_limit_give_what_the_general_path_gives(
    lines: list[bytes], rows: int
) -> None:
    sample = _sample_line(lines)
    head, body = sample.split(b'"gpus":[', 1)
    first = body[: body.index(b"]") + 1]
    got, want, d = _both_paths(lines, head + b'"gpus":[' + b",".join([first] * rows) + b"]}")
    assert got == want and (want is None) == (rows > 128) and (got is None) == (d.bad_lines == 1)


def test_a_second_kind_is_what_the_line_is(lines: list[bytes]) -> None:
    """JSON's last key wins: a sample line with a later "kind" of "event" is an event (here
    one without a type, so a bad line), on the fast path as on the general one."""
    got, want, d = _both_paths(lines, _sample_line(lines)[:-1] + b',"kind":"event"}')
    assert got is None and want is None and d.bad_lines == 1
