"""Binary encoding of the history store's chunks and rollups (NumPy + zstd, lossless).

A *chunk* holds the samples of one GPU within one minute: ``n`` timestamps, sequence numbers,
monotonic times and an ``n × c`` matrix of metric values (NaN = null). Each column is stored
in the cheapest lossless form that reproduces its floats exactly:

- ``MODE_INT``: every value is an integer → int64, delta-coded down the column;
- ``MODE_MILLI``: every value is a multiple of 1/1000 (NVML reports mW, mJ) → int64 of the
  value × 1000, delta-coded;
- ``MODE_FLOAT``: anything else → the float64 bits, unchanged.

The deltas after the first row go in the narrowest of int8/16/32/64 that holds a column's
deltas, or nowhere at all when they are all zero (a constant column: most of them within a
minute). Slowly changing counters (ECC, PCIe gen, energy) become runs of small deltas that
the compressor shrinks to almost nothing; that is what keeps a GPU-day at 1 Hz to a few MB.
Times are delta-coded as whole milliseconds or microseconds when that is exact (the sampler
rounds both clocks to the millisecond), else as the integer view of their float64 bits.

Layout of a chunk (format 4; format 3 is the same bytes under zlib), all little-endian, then
zstd (level ``_CHUNK_LEVEL``)::

    version u8, n u16, c u16 | mode u8 × c | width code u8 × c (0-3: int8..int64, 4: zero)
    | time mode u8 × 2 (t, mono: 0 bits, 1 ms, 2 µs) | width code u8 × 3 (t, seq, mono)
    | first t, seq, mono i64 × 3 | their deltas (n - 1 each) | null bits (column-major)
    | first row of the int columns i64 | int column deltas, by width code then column
    | float columns f64 × n each

Formats 3 and 2 (times as full int64 bit deltas, no zero width), both under zlib level 1,
are still read.

A *rollup* is the min / mean / max (and count of non-null values) of each column over one
chunk, float64, for queries over long ranges. Format 3 (format 2 is the same bytes under
zlib level 1), then zstd (level ``_ROLLUP_LEVEL``)::

    version u8, n u16, c u16 | kind u8 × c | per column, in order: nothing (kind 0: no
    value), the value f64 (kind 1: all n rows hold it, so min = mean = max, bit for bit),
    or count u16, min, mean, max f64 (kind 2)

Most columns are constant within a minute, so this is a third of format 1 (count i64, min,
mean, max f64 of every column; still read) before compression and an eighth smaller after
zlib; zlib took a tenth less time on it (its time follows the bytes it puts out more than
those it is given: the repeats format 1 held were cheap for it).

Why zstd (chunk format 4, rollup format 3): zlib was a third of the writer's time, about
70 µs a chunk and 20 µs a rollup whatever its level; zstd takes 13-16 µs and 2 µs on the
same bytes, for about the same size (docs/benchmarks.md, "Issue 28: store insert, zstd").
Which compressor wrote a blob is told by its first bytes: a zstd frame starts with the magic
``28 B5 2F FD``, which no zlib stream can (a zlib header's first two bytes are a multiple of
31 as a big-endian u16; 0x28B5 is not). zstd's compressor and decompressor objects keep
their state between calls and are not thread-safe, so each thread (the writer, every
reader connection's thread) gets its own, made on its first use.

Everything is vectorised over all the GPUs of a host-minute at once (``encode_block``): the
store must encode well over 100,000 GPU-samples a second on one core.
"""

from __future__ import annotations

import math
import struct
import threading
import zlib
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import zstandard

F64 = npt.NDArray[np.float64]
I64 = npt.NDArray[np.int64]
U8 = npt.NDArray[np.uint8]

CHUNK_VERSION = 4  # written; formats 2 and 3 (zlib) are still read
CHUNK_VERSIONS = (2, 3, 4)
ROLLUP_VERSION = 3  # written; formats 1 (every column's count, min, mean, max) and 2 are read
ROLLUP_VERSIONS = (1, 2, 3)
MODE_INT = 0
MODE_MILLI = 1
MODE_FLOAT = 2
WIDTH_ZERO = 4  # every delta is 0: nothing stored

# Scaled integers must stay exact in both int64 and float64 (2**53).
_INT_LIMIT = 2.0**52
_HEADER = struct.Struct("<BHH")  # version, n, c
_ZLEVEL = 1  # what formats 1-3 used (and the tests' old files use): ~3x faster than 6
# zstd levels, as measured on the bench's blobs (docs/benchmarks.md): chunks at 3 are 1-2 %
# smaller than zlib 1 and 2.5 µs slower than zstd 1; rollups (420 bytes, mostly float bits)
# are as small at -1 as at 1 and 3x faster there (negative levels skip literal compression).
_CHUNK_LEVEL = 3
_ROLLUP_LEVEL = -1
_ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
# What a damaged zstd header may claim before it is refused: far beyond any blob the writer
# makes (a chunk is one minute: at 10 Hz and 100 columns about 0.5 MB before compression).
_MAX_RAW = 256 << 20
_WIDTHS: tuple[type[np.signedinteger[Any]], ...] = (np.int8, np.int16, np.int32, np.int64)
_CODES = np.arange(len(_WIDTHS))
_ITEMSIZES = np.array([np.dtype(w).itemsize for w in _WIDTHS])
_TIME_BITS = 0
_TIME_SCALES = {1: 1e3, 2: 1e6}  # time mode -> scale
# A rollup (format 2) column's kind, and the bytes of its record that are stored.
_ROLL_EMPTY, _ROLL_SAME, _ROLL_FULL = 0, 1, 2
_ROLLUP_RECORD = np.dtype([("count", "<u2"), ("min", "<f8"), ("mean", "<f8"), ("max", "<f8")])
_ROLL_KEEP = np.zeros((3, _ROLLUP_RECORD.itemsize), dtype=bool)
_ROLL_KEEP[_ROLL_SAME, 2:10] = True  # the value (as min)
_ROLL_KEEP[_ROLL_FULL] = True
_ROLL_SAME_VALUE = struct.Struct("<d")
_ROLL_FULL_VALUES = struct.Struct("<Hddd")


class _Zstd(threading.local):
    """This thread's zstd objects (``__init__`` runs once in each thread that uses them)."""

    def __init__(self) -> None:
        self.chunk = zstandard.ZstdCompressor(level=_CHUNK_LEVEL)
        self.rollup = zstandard.ZstdCompressor(level=_ROLLUP_LEVEL)
        self.inflate = zstandard.ZstdDecompressor()


_zstd = _Zstd()


def inflate(blob: bytes) -> bytes:
    """The uncompressed bytes of a stored chunk or rollup, whichever compressor wrote it
    (zstd: chunk format 4, rollup format 3; zlib: the formats before). A damaged blob is a
    ``ValueError`` whichever it is, and a zstd header that claims more than any chunk holds
    is refused before anything is allocated for it."""
    try:
        if blob[:4] != _ZSTD_MAGIC:
            return zlib.decompress(blob)
        if zstandard.frame_content_size(blob) > _MAX_RAW:
            raise ValueError(f"a chunk or rollup claims {zstandard.frame_content_size(blob)} bytes")
        return _zstd.inflate.decompress(blob)
    except (zlib.error, zstandard.ZstdError) as e:
        raise ValueError(f"a damaged chunk or rollup in the history file ({e})") from e


@dataclass(frozen=True)
class Chunk:
    """Decoded samples of one GPU: ``values[i, j]`` is column ``j`` at time ``t[i]``."""

    t: F64
    seq: I64
    mono: F64
    values: F64
    modes: U8


def _delta(a: I64) -> I64:
    out = np.empty_like(a)
    if a.shape[0]:
        out[0] = a[0]
        np.subtract(a[1:], a[:-1], out=out[1:])
    return out


def _bits(a: F64) -> I64:
    return np.ascontiguousarray(a, dtype=np.float64).view(np.int64)


def _width_codes(mx: I64) -> U8:
    """Width code of deltas whose largest magnitude is ``mx`` (any shape)."""
    mx = np.asarray(mx)
    code = (mx > 0x7F).astype(np.uint8) + (mx > 0x7FFF) + (mx > 0x7FFFFFFF)
    return np.where(mx == 0, WIDTH_ZERO, code).astype(np.uint8)


def _time_ints(a: F64) -> tuple[int, I64]:
    """(time mode, int64 values): whole ms or µs where exact, else the float64 bits."""
    mag = float(np.abs(a).max(initial=0.0))  # NaN or inf: no scale fits
    for mode, scale in _TIME_SCALES.items():
        if mag < _INT_LIMIT / scale:
            k = np.round(a * scale)
            if bool((k / scale == a).all()):
                return mode, k.astype(np.int64)
    return _TIME_BITS, _bits(a)


def _encode_times(t: F64, seq: I64, mono: F64) -> list[bytes]:
    """The times section of each of ``m`` minutes (``t``, ``seq``, ``mono`` are m × n):
    modes and widths are chosen for the whole group, so it is a few array operations."""
    m, n = t.shape
    series = np.empty((m, 3, n), dtype=np.int64)
    t_mode, series[:, 0] = _time_ints(t)
    series[:, 1] = seq
    m_mode, series[:, 2] = _time_ints(mono)
    deltas = series[:, :, 1:] - series[:, :, :-1]
    codes = _width_codes(np.abs(deltas).max(axis=(0, 2), initial=0)).tolist()
    # Float bits can differ by more than int64 holds (a sign change): the wrapped int64
    # deltas still add back exactly, but only at full width.
    if n > 1:
        codes[0] = 3 if t_mode == _TIME_BITS else codes[0]
        codes[2] = 3 if m_mode == _TIME_BITS else codes[2]
    head = bytes((t_mode, m_mode, *codes))
    firsts = series[:, :, 0].tobytes()
    cols = [
        (deltas[:, i].astype(_WIDTHS[code]).tobytes(), (n - 1) * int(_ITEMSIZES[code]))
        for i, code in enumerate(codes)
        if code != WIDTH_ZERO
    ]
    return [
        b"".join([head, firsts[24 * i : 24 * i + 24], *(b[i * k : (i + 1) * k] for b, k in cols)])
        for i in range(m)
    ]


def encode_block(t: F64, seq: I64, mono: F64, values: F64) -> tuple[list[bytes], list[bytes]]:
    """Chunks and rollups (encoded) of each GPU of an ``n × g × c`` block of samples, built
    with a fixed number of whole-block NumPy operations (not a few dozen per GPU), so that
    only the compressor calls remain per GPU. ``t``, ``seq``, ``mono`` are ``n`` times shared by
    all the GPUs, or ``m × n`` for ``m`` groups of ``g / m`` consecutive GPUs each (several
    minutes of a host in one call: per-call overhead is most of the cost at 8 GPUs)."""
    n, g, c = values.shape
    t, seq, mono = np.atleast_2d(t), np.atleast_2d(seq), np.atleast_2d(mono)
    per_time = g // t.shape[0]
    nan = np.isnan(values)
    filled = np.where(nan, 0.0, values)
    finite = np.isfinite(filled)
    all_finite = finite.all(axis=0)
    safe = filled if bool(all_finite.all()) else np.where(finite, filled, 0.0)
    whole = np.round(safe)
    mag = np.abs(safe).max(axis=0, initial=0.0)
    is_int = all_finite & (mag < _INT_LIMIT) & (whole == safe).all(axis=0)
    with np.errstate(invalid="ignore"):
        ints = whole.astype(np.int64)  # float columns' int view is garbage, never written
    # Milli-units only where it can matter: finite columns that are not whole numbers.
    maybe = all_finite & ~is_int & (mag < _INT_LIMIT / 1000.0)
    is_milli = np.zeros_like(is_int)
    if maybe.any():
        cand = safe[:, maybe]  # n × k
        milli = np.round(cand * 1000.0)
        ok = (milli / 1000.0 == cand).all(axis=0)
        is_milli[maybe] = ok
        ints[:, is_milli] = milli[:, ok].astype(np.int64)
    modes = np.full((g, c), MODE_FLOAT, dtype=np.uint8)
    modes[is_milli] = MODE_MILLI
    modes[is_int] = MODE_INT
    int_cols = modes != MODE_FLOAT
    rest = ints[1:] - ints[:-1]  # (n - 1) × g × c deltas, |d| < 2**53 in int columns
    wcode = _width_codes(np.abs(rest).max(axis=0, initial=0))
    wcode[~int_cols] = 0  # not read for float columns
    # Deltas, column-major, grouped by width (column order within a width): one cast and
    # one selection per width for all GPUs, then each GPU's share is a slice of the bytes.
    by_width = (wcode[:, :, None] == _CODES) & int_cols[:, :, None]  # g × c × 4
    ends_w = np.cumsum(by_width.sum(axis=1) * ((n - 1) * _ITEMSIZES), axis=0).T.tolist()
    rest_t = rest.transpose(1, 2, 0)  # g × c × (n - 1), a view
    deltas = [
        rest_t[by_width[:, :, code]].astype(dtype).tobytes() if ends_w[code][-1] else b""
        for code, dtype in enumerate(_WIDTHS)
    ]
    first = ints[0][int_cols].tobytes()
    floats = np.ascontiguousarray(filled.transpose(1, 2, 0))[~int_cols].tobytes()
    nan_bits = np.packbits(nan.transpose(1, 2, 0).reshape(g, c * n), axis=1).tobytes()
    n_int = int_cols.sum(axis=1)
    ends_i = np.cumsum(8 * n_int).tolist()
    ends_f = np.cumsum(8 * n * (c - n_int)).tolist()
    head = _HEADER.pack(CHUNK_VERSION, n, c)
    times = _encode_times(t, seq, mono)
    mb, wb = modes.tobytes(), wcode.tobytes()
    nb = len(nan_bits) // g if g else 0
    rolls = _encode_rollups(values, filled, nan)
    compress = _zstd.chunk.compress
    chunks: list[bytes] = []
    i0 = f0 = 0
    for gi in range(g):
        i1, f1 = ends_i[gi], ends_f[gi]
        parts = [
            head,
            mb[gi * c : (gi + 1) * c],
            wb[gi * c : (gi + 1) * c],
            times[gi // per_time],
            nan_bits[gi * nb : (gi + 1) * nb],
            first[i0:i1],
        ]
        for buf, ends in zip(deltas, ends_w, strict=True):
            if buf:
                parts.append(buf[ends[gi - 1] if gi else 0 : ends[gi]])
        parts.append(floats[f0:f1])
        chunks.append(compress(b"".join(parts)))
        i0, f0 = i1, f1
    return chunks, rolls


def _encode_rollups(values: F64, filled: F64, nan: npt.NDArray[np.bool_]) -> list[bytes]:
    """Rollups (format 3) of each GPU of an ``n × g × c`` block: count, min, mean and max of
    each column (NaN ignored), kept only where they say something (see ``ROLLUP_VERSION``)."""
    n, g, c = values.shape
    count = (~nan).sum(axis=0)
    rec = np.empty((g, c), dtype=_ROLLUP_RECORD)
    rec["count"] = count
    with np.errstate(invalid="ignore", divide="ignore"):
        vmin = np.fmin.reduce(values, axis=0)
        mean = filled.sum(axis=0) / count
        vmax = np.fmax.reduce(values, axis=0)
    rec["min"], rec["mean"], rec["max"] = vmin, mean, vmax
    # Bit for bit (-0.0 is not 0.0 here), so that one value stands for all three exactly.
    same = (_bits(vmin) == _bits(mean)) & (_bits(vmax) == _bits(mean))
    kinds = np.where(count == 0, _ROLL_EMPTY, np.where(same & (count == n), _ROLL_SAME, _ROLL_FULL))
    kinds = kinds.astype(np.uint8)
    keep = _ROLL_KEEP[kinds]  # g × c × 26: which bytes of each record are stored
    body = rec.view(np.uint8).reshape(g, c, _ROLLUP_RECORD.itemsize)[keep].tobytes()
    ends = np.cumsum(keep.sum(axis=(1, 2))).tolist()
    head = _HEADER.pack(ROLLUP_VERSION, n, c)
    kb = kinds.tobytes()
    compress = _zstd.rollup.compress
    out: list[bytes] = []
    start = 0
    for gi in range(g):
        raw = b"".join((head, kb[gi * c : (gi + 1) * c], body[start : ends[gi]]))
        out.append(compress(raw))
        start = ends[gi]
    return out


def encode_chunk(t: F64, seq: I64, mono: F64, values: F64) -> bytes:
    """Encode one GPU's samples (``values`` is ``n × c`` float64, NaN = null)."""
    return encode_block(t, seq, mono, values[:, None, :])[0][0]


def _open(blob: bytes) -> tuple[bytes, int, int, int, bytes, bytes]:
    """(raw, version, n, c, modes, widths) of a chunk; offset of what follows: 5 + 2c."""
    raw = inflate(blob)
    version, n, c = _HEADER.unpack_from(raw, 0)
    if version not in CHUNK_VERSIONS:
        raise ValueError(f"chunk format {version} is not supported")
    off = _HEADER.size
    return raw, version, n, c, raw[off : off + c], raw[off + c : off + 2 * c]


def _times(raw: bytes, version: int, n: int, off: int, all3: bool) -> tuple[list[Any], int]:
    """Decode t (and seq, mono when ``all3``) at ``off``; returns them and the offset after."""
    out: list[Any]
    if version == 2:
        out = [np.cumsum(np.frombuffer(raw, np.int64, n, off)).view(np.float64)]
        if all3:
            out.append(np.cumsum(np.frombuffer(raw, np.int64, n, off + 8 * n)))
            out.append(np.cumsum(np.frombuffer(raw, np.int64, n, off + 16 * n)).view(np.float64))
        return out, off + 24 * n
    t_mode, m_mode, *codes = raw[off : off + 5]
    firsts = struct.unpack_from("<3q", raw, off + 5)
    off += 29
    out = []
    for i, (first, code) in enumerate(zip(firsts, codes, strict=True)):
        size = 0 if code == WIDTH_ZERO else (n - 1) * _ITEMSIZES[code]
        if i == 0 or all3:
            a = np.empty(n, dtype=np.int64)
            a[:1] = first
            a[1:] = 0 if code == WIDTH_ZERO else np.frombuffer(raw, _WIDTHS[code], n - 1, off)
            np.cumsum(a, out=a)
            out.append(a if i == 1 else _from_time(m_mode if i else t_mode, a))
        off += size
    return out, off


def decode_chunk(blob: bytes) -> Chunk:
    raw, version, n, c, modes_b, widths_b = _open(blob)
    modes = np.frombuffer(modes_b, np.uint8).copy()
    widths = np.frombuffer(widths_b, np.uint8)
    (t, seq, mono), off = _times(raw, version, n, _HEADER.size + 2 * c, all3=True)

    def take(dtype: type[np.signedinteger[Any]], count: int) -> npt.NDArray[Any]:
        nonlocal off
        a = np.frombuffer(raw, dtype, count, off)
        off += count * a.itemsize
        return a

    nbits = (n * c + 7) // 8
    nan = np.unpackbits(np.frombuffer(raw, np.uint8, nbits, off), count=n * c).reshape(c, n).T
    off += nbits
    int_cols = modes != MODE_FLOAT
    k = int(int_cols.sum())
    values = np.empty((n, c), dtype=np.float64)
    if k:
        ints = np.zeros((n, k), dtype=np.int64)
        ints[0] = take(np.int64, k)
        wk = widths[int_cols]
        for code, dtype in enumerate(_WIDTHS):
            sel = wk == code
            cnt = int(sel.sum())
            if cnt:
                ints[1:, sel] = take(dtype, cnt * (n - 1)).reshape(cnt, n - 1).T
        np.cumsum(ints, axis=0, out=ints)
        scale = np.where(modes == MODE_MILLI, 1000.0, 1.0)[int_cols]
        values[:, int_cols] = ints / scale
    f = c - k
    if f:
        values[:, ~int_cols] = np.frombuffer(raw, np.float64, n * f, off).reshape(f, n).T
    values[nan.astype(bool)] = np.nan
    return Chunk(t=t, seq=seq, mono=mono, values=values, modes=modes)


def decode_column(blob: bytes, j: int) -> tuple[F64, F64]:
    """``(t, values of column j)`` of a chunk, reading only that column's bytes: what a
    plot of one metric needs, several times cheaper than ``decode_chunk``."""
    raw, version, n, c, modes, widths = _open(blob)
    (t,), off = _times(raw, version, n, _HEADER.size + 2 * c, all3=False)
    bit0 = j * n
    nulls = np.unpackbits(
        np.frombuffer(raw, np.uint8, (bit0 + n + 7) // 8 - bit0 // 8, off + bit0 // 8),
        count=bit0 % 8 + n,
    )[bit0 % 8 :].astype(bool)
    off += (n * c + 7) // 8
    mode = modes[j]
    int_idx = [i for i in range(c) if modes[i] != MODE_FLOAT]
    k = len(int_idx)
    rows = (n - 1) * _ITEMSIZES
    # Deltas are grouped by width code (0-3; 4 stores nothing), then by column.
    counts = [0, 0, 0, 0, 0]
    for i in int_idx:
        counts[widths[i]] += 1
    if mode == MODE_FLOAT:
        f_before = j - sum(1 for i in int_idx if i < j)
        end = off + 8 * k + sum(int(counts[w] * rows[w]) for w in range(4))
        values = np.frombuffer(raw, np.float64, n, end + 8 * n * f_before).copy()
    else:
        pos = int_idx.index(j)
        w = widths[j]
        a = np.empty(n, dtype=np.int64)
        a[0] = struct.unpack_from("<q", raw, off + 8 * pos)[0]
        if w == WIDTH_ZERO:
            a[1:] = a[0]
        else:
            same = sum(1 for i in int_idx if i < j and widths[i] == w)
            start = off + 8 * k + sum(int(counts[x] * rows[x]) for x in range(w))
            start += int(same * rows[w])
            a[1:] = np.frombuffer(raw, _WIDTHS[w], n - 1, start)
            np.cumsum(a, out=a)
        values = a / 1000.0 if mode == MODE_MILLI else a.astype(np.float64)
    values[nulls] = np.nan
    return t, values


def _from_time(mode: int, a: I64) -> F64:
    if mode == _TIME_BITS:
        return a.view(np.float64)
    return a / _TIME_SCALES[mode]


@dataclass(frozen=True)
class Rollup:
    """Per-column count of non-null values, min, mean and max (NaN where count is 0)."""

    count: I64
    vmin: F64
    mean: F64
    vmax: F64


def compute_rollups(values: F64) -> list[Rollup]:
    """Rollups of each GPU of an ``n × g × c`` block (reduced over the n samples)."""
    ok = ~np.isnan(values)
    count = ok.sum(axis=0).astype(np.int64)
    with np.errstate(invalid="ignore", divide="ignore"):
        vmin = np.where(ok, values, np.inf).min(axis=0, initial=np.inf)
        vmax = np.where(ok, values, -np.inf).max(axis=0, initial=-np.inf)
        mean = np.where(ok, values, 0.0).sum(axis=0) / count
    empty = count == 0
    vmin[empty] = np.nan
    vmax[empty] = np.nan
    mean[empty] = np.nan
    return [
        Rollup(count=count[i], vmin=vmin[i], mean=mean[i], vmax=vmax[i])
        for i in range(values.shape[1])
    ]


def compute_rollup(values: F64) -> Rollup:
    """The rollup of one GPU's ``n × c`` block."""
    return compute_rollups(values[:, None, :])[0]


def encode_rollup(r: Rollup) -> bytes:
    """A rollup in format 1, as files written before format 2 hold (the writer writes format
    3 through ``encode_block``; this one is kept to make old files in tests)."""
    c = r.count.shape[0]
    body = b"".join(
        (
            _HEADER.pack(1, 0, c),
            r.count.astype(np.int64).tobytes(),
            r.vmin.tobytes(),
            r.mean.tobytes(),
            r.vmax.tobytes(),
        )
    )
    return zlib.compress(body, _ZLEVEL)


def decode_rollup(blob: bytes) -> Rollup:
    raw = inflate(blob)
    version, n, c = _HEADER.unpack_from(raw, 0)
    if version not in ROLLUP_VERSIONS:
        raise ValueError(f"rollup format {version} is not supported")
    off = _HEADER.size
    if version != 1:
        cols = [_rollup_v2_column(raw, n, c, j) for j in range(c)]
        a = np.array(cols, dtype=np.float64).reshape(c, 4)
        return Rollup(count=a[:, 0].astype(np.int64), vmin=a[:, 1], mean=a[:, 2], vmax=a[:, 3])
    count = np.frombuffer(raw, np.int64, c, off)
    off += 8 * c
    vmin = np.frombuffer(raw, np.float64, c, off)
    vmean = np.frombuffer(raw, np.float64, c, off + 8 * c)
    vmax = np.frombuffer(raw, np.float64, c, off + 16 * c)
    return Rollup(count=count, vmin=vmin, mean=vmean, vmax=vmax)


def _rollup_v2_column(raw: bytes, n: int, c: int, j: int) -> tuple[int, float, float, float]:
    """``(count, min, mean, max)`` of column ``j`` of a decompressed format 2 or 3 rollup: its
    offset is the sizes of the kinds before it (two C-level counts, no loop)."""
    kinds = raw[_HEADER.size : _HEADER.size + c]
    before = kinds[:j]
    off = _HEADER.size + c + 8 * before.count(_ROLL_SAME) + 26 * before.count(_ROLL_FULL)
    kind = kinds[j]
    if kind == _ROLL_SAME:
        (v,) = _ROLL_SAME_VALUE.unpack_from(raw, off)
        return n, v, v, v
    if kind == _ROLL_FULL:
        count, vmin, mean, vmax = _ROLL_FULL_VALUES.unpack_from(raw, off)
        return count, vmin, mean, vmax
    if kind == _ROLL_EMPTY:
        return 0, math.nan, math.nan, math.nan
    raise ValueError(f"rollup column kind {kind} is not supported")


_ROLLUP_COLUMNS: dict[tuple[int, int], struct.Struct] = {}  # format 1: (c, j) -> layout


def rollup_column(blob: bytes, j: int, c: int) -> tuple[int, int, float, float, float]:
    """``(version, count, min, mean, max)`` of column ``j`` of a rollup of ``c`` columns,
    unpacked in one call without building arrays (a day of 8 GPUs is 11,520 rollups)."""
    raw = inflate(blob)
    if raw[0] != 1:
        version, n, c2 = _HEADER.unpack_from(raw, 0)
        if c2 != c:
            raise ValueError(f"rollup of {c2} columns read as {c}")
        return (version, *_rollup_v2_column(raw, n, c, j))
    st = _ROLLUP_COLUMNS.get((c, j))
    if st is None:
        gap = f"{8 * c - 8}x" if c > 1 else ""
        st = struct.Struct(f"<B{4 + 8 * j}xq{gap}d{gap}d{gap}d")
        _ROLLUP_COLUMNS[(c, j)] = st
    version, count, vmin, mean, vmax = st.unpack_from(raw)
    return version, count, vmin, mean, vmax
