"""History store encoding: chunks and rollups are lossless for any floats, old chunks still read,
and sample rows convert to exactly what ``np.array`` gives."""

from __future__ import annotations

import random
import zlib

import numpy as np
import pytest
import zstandard
from gpufleet.core.history import codec
from gpufleet.core.history.rows import RowPacker
from gpufleet.core.wire.messages import Sample, Value

from tests.support import synth

# A format-2 chunk (before narrow times and zero-width columns) written by the previous
# encoder: 3 samples × 5 columns (ints, quarters, all-null, milli, big ints).
V2_CHUNK = bytes.fromhex(
    "780163626660656060626064000246a62dcfd81dfe84dc747cc5e100126048128800d35c6012a8024a3341"
    "6930e5d2ef10b7cb9387898381e16ac54b35436e0606e506984a98c2d8292c10e627562d901ce33f06866c"
    "66f13fec40f6cf93b3ac219217ec21f403fb5030b86a0f0099a518a0"
)
# A format-3 chunk and a format-2 rollup (zlib, before zstd) written by the previous encoder
# (commit 695a549): 3 samples x 6 columns (ints, quarters, all-null, milli, big ints, a
# constant).
V3_VALUES = [
    [1, 0.25, np.nan, 100.125, 2**40, 7.0],
    [2, 0.5, np.nan, 100.25, 2**40 + 3, 7.0],
    [5, 0.75, np.nan, 99.0, 2**41, 7.0],
]
V3_CHUNK = bytes.fromhex(
    "780163666660636060044220c9c2c8ccc2c808e454673c3ddf0d14e2028a8280890b3f987ec99cc0cac8f4"
    "92b99c95b901ac0524fa0b2c852064db4186410190c90e6332ff02aaad6590fbcd0c15f9fb1f08806c006e"
    "991145"
)
V2_ROLLUP = bytes.fromhex(
    "780163626660636062022246660608f8601f0a06ac0e10be88034ce6823d44e401947e610f953910e1b07a"
    "15107c8a80e8118884eb29700a4d051957ea04d1db00a5651c0000e812af"
)


def test_zlib_blobs_of_the_previous_encoder_read_as_todays_zstd_ones() -> None:
    v = np.array(V3_VALUES)
    t = np.array([1700000000.123, 1700000001.124, 1700000002.5])
    seq, mono = np.array([10, 11, 13]), np.array([1000.5, 1001.501, 1002.9])
    chunks, rolls = codec.encode_block(t, seq, mono, v[:, None, :])
    assert chunks[0][:4] == rolls[0][:4] == b"\x28\xb5\x2f\xfd"  # zstd frames now
    assert codec.inflate(chunks[0])[0] == 4 and codec.inflate(rolls[0])[0] == 3
    old, new = codec.decode_chunk(V3_CHUNK), codec.decode_chunk(chunks[0])
    for a, b in ((old.t, t), (old.seq, seq), (old.mono, mono), (old.values, v)):
        np.testing.assert_array_equal(a, b)
    for a, b in ((old.t, new.t), (old.values, new.values), (old.modes, new.modes)):
        np.testing.assert_array_equal(a, b)
    for j in range(v.shape[1]):
        (ta, va), (tb, vb) = codec.decode_column(V3_CHUNK, j), codec.decode_column(chunks[0], j)
        np.testing.assert_array_equal(ta, tb)
        np.testing.assert_array_equal(va, vb)
        a_col, b_col = codec.rollup_column(V2_ROLLUP, j, 6), codec.rollup_column(rolls[0], j, 6)
        assert a_col[0] == 2 and b_col[0] == 3
        np.testing.assert_array_equal(a_col[1:], b_col[1:])
    ra, rb = codec.decode_rollup(V2_ROLLUP), codec.decode_rollup(rolls[0])
    for x, y in ((ra.count, rb.count), (ra.vmin, rb.vmin), (ra.mean, rb.mean), (ra.vmax, rb.vmax)):
        np.testing.assert_array_equal(x, y)


def test_no_zlib_stream_starts_like_a_zstd_frame() -> None:
    """Blobs are told apart by their first bytes: a zlib header (any level, any window) is
    a multiple of 31 as a big-endian u16, and zstd's magic 28 B5 is not."""
    assert int.from_bytes(b"\x28\xb5", "big") % 31 != 0
    for wbits in range(9, 16):
        for level in range(10):
            z = zlib.compressobj(level, zlib.DEFLATED, wbits)
            blob = z.compress(b"gpufleet" * 50) + z.flush()
            assert int.from_bytes(blob[:2], "big") % 31 == 0 and blob[:2] != b"\x28\xb5"
            assert codec.inflate(blob) == b"gpufleet" * 50


def test_format_2_chunks_still_decode() -> None:
    ch = codec.decode_chunk(V2_CHUNK)
    np.testing.assert_array_equal(ch.t, [1700000000.123456, 1700000001.124, 1700000002.5])
    np.testing.assert_array_equal(ch.seq, [10, 11, 13])
    np.testing.assert_array_equal(ch.mono, [1000.5, 1001.501, 1002.9])
    want = [
        [1, 0.25, np.nan, 300.125, 5e9],
        [2, 0.5, np.nan, 301.0, 5e9 + 7],
        [np.nan, 1 / 3, np.nan, 299.999, 6e9],
    ]
    np.testing.assert_array_equal(ch.values, np.array(want))


def _times(n: int, rng: np.random.Generator, decimals: int | None) -> tuple[np.ndarray, ...]:
    t = 1.7e9 + np.cumsum(rng.random(n) + 0.5)
    mono = 1000.0 + np.cumsum(rng.random(n) + 0.5)
    if decimals is not None:
        t, mono = np.round(t, decimals), np.round(mono, decimals)
    seq = np.cumsum(rng.integers(1, 3, n)) + 10**9
    return t, seq, mono


@pytest.mark.parametrize("decimals", [3, 6, None])
def test_block_round_trip_is_exact_for_any_floats(decimals: int | None) -> None:
    rng = np.random.default_rng(decimals or 0)
    pool = [0, 1, -3, 1e3, 2.5e9, 1e12, 0.001, 0.5, np.nan, np.inf, -np.inf, 1e300, 7e15, 2.0**60]
    for _ in range(40):
        n, g, c = int(rng.integers(1, 90)), int(rng.integers(1, 5)), int(rng.integers(1, 12))
        scale = 10.0 ** rng.integers(0, 13, (1, g, c))
        plain = np.round(rng.normal(0, 1, (n, g, c)) * scale, int(rng.integers(0, 5)))
        mixed = np.where(rng.random((n, g, c)) < 0.3, rng.choice(pool, (n, g, c)), plain)
        v = np.asarray(mixed, dtype=np.float64)
        v[:, :, 0] = np.nan  # an all-null column
        if c > 1:
            v[:, :, 1] = 42  # a constant one
        t, seq, mono = _times(n, rng, decimals)
        chunks, rollups = codec.encode_block(t, seq, mono, v)
        want_rolls = codec.compute_rollups(v)
        for gi in range(g):
            ch = codec.decode_chunk(chunks[gi])
            np.testing.assert_array_equal(ch.t, t)
            np.testing.assert_array_equal(ch.seq, seq)
            np.testing.assert_array_equal(ch.mono, mono)
            np.testing.assert_array_equal(ch.values, v[:, gi])
            r, w = codec.decode_rollup(rollups[gi]), want_rolls[gi]
            np.testing.assert_array_equal(r.count, w.count)
            np.testing.assert_array_equal(r.vmin, w.vmin)
            np.testing.assert_array_equal(r.mean, w.mean)
            np.testing.assert_array_equal(r.vmax, w.vmax)


def test_times_that_change_sign_survive_full_width_deltas() -> None:
    t = np.array([-1e300, 1e300, -0.0, 5e-324, 1.7e9 + 1 / 3])
    mono = np.array([np.inf, -np.inf, 0.0, 1.0, 2.0])
    v = np.zeros((5, 1, 2))
    ch = codec.decode_chunk(codec.encode_chunk(t, np.arange(5), mono, v[:, 0]))
    assert ch.t.tobytes() == t.tobytes() and ch.mono.tobytes() == mono.tobytes()


def test_synthetic_minute_uses_narrow_times_and_skips_constant_columns() -> None:
    t, v = synth.sample_values(1.7e9, 60, gpus=2)
    mono = np.round(t - 1.7e9 + 1000, 3)
    t = np.round(t, 3)
    blob = codec.encode_block(t, np.arange(60), mono, v)[0][0]
    raw = codec.inflate(blob)
    c = v.shape[2]
    widths = np.frombuffer(raw, np.uint8, c, 5 + c)
    assert (widths == codec.WIDTH_ZERO).sum() >= 10  # nulls, limits, ECC... within a minute
    assert raw[5 + 2 * c : 5 + 2 * c + 5] == bytes((1, 1, 1, 0, 1))  # ms times, int16/int8
    assert len(raw) < 4000  # format 2 took 5.2 KB before zlib


def _ref(samples: list[Sample]) -> np.ndarray:
    return np.array([s.rows for s in samples], dtype=np.float64)


def _with_rows(s: Sample, rows: list[tuple[Value, ...]]) -> Sample:
    return Sample(seq=s.seq, t=s.t, mono=s.mono, columns=s.columns, rows=tuple(rows))


def test_row_packer_matches_numpy_on_changing_value_types() -> None:
    samples = synth.make_samples(0.0, 600, gpus=4)
    width = len(samples[0].columns) + 1
    packer = RowPacker()
    got = packer.pack(samples, width)
    assert got is not None
    np.testing.assert_array_equal(got, _ref(samples))
    rng = random.Random(1)
    choices: list[Value] = [None, 1, 2.5, 400, 400.0, True, 2**62, 2**63 + 5, -7, float("inf")]
    for start in range(0, 600, 60):
        batch = []
        for s in samples[start : start + 60]:
            rows = []
            for r in s.rows:
                row = list(r)
                for _ in range(rng.choice([0, 0, 0, 1, 3])):
                    row[rng.randrange(1, width)] = rng.choice(choices)
                rows.append(tuple(row))
            batch.append(_with_rows(s, rows))
        got = packer.pack(batch, width)
        assert got is not None
        np.testing.assert_array_equal(got, _ref(batch))


def test_row_packer_declines_what_is_not_uniform() -> None:
    samples = synth.make_samples(0.0, 10, gpus=3)
    width = len(samples[0].columns) + 1
    packer = RowPacker()
    rows = list(samples[5].rows)

    def variant(new_rows: list[tuple[Value, ...]]) -> list[Sample]:
        out = list(samples)
        out[5] = _with_rows(samples[5], new_rows)
        return out

    assert packer.pack(variant(rows[:2]), width) is None  # a GPU missing
    assert packer.pack(variant([rows[1], rows[0], rows[2]]), width) is None  # reordered
    bad = list(rows[2])
    bad[4] = "x"  # type: ignore[call-overload]
    assert packer.pack(variant([*rows[:2], tuple(bad)]), width) is None
    bad[4] = 10**400
    assert packer.pack(variant([*rows[:2], tuple(bad)]), width) is None
    assert packer.pack(samples, width - 1) is None
    got = packer.pack(samples, width)  # and it recovers
    assert got is not None
    np.testing.assert_array_equal(got, _ref(samples))


def test_decode_column_matches_decode_chunk() -> None:
    rng = np.random.default_rng(7)
    blobs = [V2_CHUNK]
    for n in (1, 2, 17, 60):
        t, v = synth.sample_values(1.7e9, n, gpus=2)
        v[:, :, 3] = np.round(rng.normal(0, 1, n), 2)[:, None] / 3  # a float column
        v[n // 2 :, 1, 5] = np.nan  # nulls in part of a column
        t, seq, mono = _times(n, rng, 3)
        blobs += codec.encode_block(t, seq, mono, v)[0]
    for blob in blobs:
        ch = codec.decode_chunk(blob)
        for j in range(ch.values.shape[1]):
            t, col = codec.decode_column(blob, j)
            np.testing.assert_array_equal(t, ch.t)
            np.testing.assert_array_equal(col, ch.values[:, j])


def test_several_minutes_in_one_call_equal_one_call_each() -> None:
    rng = np.random.default_rng(11)
    ta, va = synth.sample_values(1.7e9, 60, gpus=3, seed=1)
    tb, vb = synth.sample_values(1.7e9 + 60, 60, gpus=3, seed=2)
    tb = tb + rng.random(60) * 1e-3  # this minute's times are not whole ms
    seq_a, seq_b = np.arange(60), np.arange(60, 120)
    mono_a, mono_b = ta - 1.7e9, tb - 1.7e9
    both = codec.encode_block(
        np.stack([ta, tb]),
        np.stack([seq_a, seq_b]),
        np.stack([mono_a, mono_b]),
        np.concatenate([va, vb], axis=1),
    )
    one = codec.encode_block(ta, seq_a, mono_a, va)
    two = codec.encode_block(tb, seq_b, mono_b, vb)
    assert both[1] == one[1] + two[1]  # rollups: identical bytes
    for blob, t, seq, mono, v in zip(
        both[0],
        [ta] * 3 + [tb] * 3,
        [seq_a] * 3 + [seq_b] * 3,
        [mono_a] * 3 + [mono_b] * 3,
        [*va.transpose(1, 0, 2), *vb.transpose(1, 0, 2)],
        strict=True,
    ):
        ch = codec.decode_chunk(blob)
        np.testing.assert_array_equal(ch.t, t)
        np.testing.assert_array_equal(ch.seq, seq)
        np.testing.assert_array_equal(ch.mono, mono)
        np.testing.assert_array_equal(ch.values, v)


def test_rollup_column_matches_decode_rollup() -> None:
    rng = np.random.default_rng(5)
    for c in (1, 7, 34):
        v = np.round(rng.normal(0, 10, (30, 3, c)), 1)
        v[:, :, rng.random(c) < 0.2] = np.nan  # empty columns
        v[::4, 1, :] = np.nan  # and some nulls
        for blob in codec.encode_block(np.arange(30.0), np.arange(30), np.arange(30.0), v)[1]:
            r = codec.decode_rollup(blob)
            # Format 1, as files written before format 2 hold: read the same.
            old = codec.encode_rollup(r)
            for version, b in ((codec.ROLLUP_VERSION, blob), (1, old)):
                for j in range(c):
                    want = (version, r.count[j], r.vmin[j], r.mean[j], r.vmax[j])
                    np.testing.assert_array_equal(codec.rollup_column(b, j, c), want)


def test_rollup_keeps_signed_zeros_and_constant_columns_bit_for_bit() -> None:
    v = np.zeros((6, 1, 6))
    v[:, 0, 0] = -0.0  # constant -0.0
    v[::2, 0, 1] = -0.0  # 0.0 and -0.0: min and max differ in sign only
    v[:, 0, 2] = 0.1  # constant, but its mean (sum / n) need not be 0.1 exactly
    v[:, 0, 3] = np.nan  # no value
    v[1, 0, 4] = np.nan  # a null among constant values: count is not n
    v[:, 0, 5] = 7.0  # constant: one value stands for min, mean and max
    blob = codec.encode_block(np.arange(6.0), np.arange(6), np.arange(6.0), v)[1][0]
    got = codec.decode_rollup(blob)
    # What format 1 stored: NaN-ignoring min and max, sum / count, NaN where no value.
    nan = np.isnan(v[:, 0])
    count = (~nan).sum(axis=0)
    with np.errstate(invalid="ignore"):
        vmin, vmax = np.fmin.reduce(v[:, 0], axis=0), np.fmax.reduce(v[:, 0], axis=0)
        mean = np.where(nan, 0.0, v[:, 0]).sum(axis=0) / count
    mean[count == 0] = np.nan
    for a, b in ((got.vmin, vmin), (got.mean, mean), (got.vmax, vmax)):
        np.testing.assert_array_equal(a.view(np.int64), b.view(np.int64))
    np.testing.assert_array_equal(got.count, [6, 6, 6, 0, 5, 6])
    kinds = list(codec.inflate(blob)[5:11])
    assert kinds[1] == 2 and kinds[3:] == [0, 2, 1]


def test_damaged_blobs_are_value_errors_whichever_compressor_wrote_them() -> None:
    v = np.array(V3_VALUES)[:, None, :]
    chunks, rolls = codec.encode_block(np.arange(3.0), np.arange(3), np.arange(3.0), v)
    # A zstd header that claims 2**40 bytes: refused before anything is allocated.
    huge = zstandard.ZstdCompressor().compress(b"x" * 10)
    huge = huge[:4] + bytes((0xE0,)) + (2**40).to_bytes(8, "little") + huge[6:]
    with pytest.raises(ValueError, match="claims 1099511627776 bytes"):
        codec.inflate(huge)
    for blob in (chunks[0][:-3], rolls[0][:9], V3_CHUNK[:-5], V2_ROLLUP[:10], huge, b""):
        for read in (codec.decode_chunk, codec.decode_rollup, lambda b: codec.decode_column(b, 1)):
            with pytest.raises(ValueError, match="chunk or rollup"):
                read(blob)
