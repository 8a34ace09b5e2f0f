"""Binary encoding of the history store's chunks and rollups (NumPy + zlib, lossless).

A *chunk* holds the samples of one GPU within one minute: ``n`` timestamps, sequence numbers,
monotonic times and an ``n × c`` matrix of metric values (NaN = null). Each column is stored
in the cheapest lossless form that reproduces its floats exactly:

- ``MODE_INT``: every value is an integer → int64, delta-coded down the column;
- ``MODE_MILLI``: every value is a multiple of 1/1000 (NVML reports mW, mJ) → int64 of the
  value × 1000, delta-coded;
- ``MODE_FLOAT``: anything else → the float64 bits, unchanged.

Slowly changing counters (ECC, PCIe gen, energy) become runs of small deltas that zlib
shrinks to almost nothing; that is what keeps a GPU-day at 1 Hz to a few MB. Timestamps are
delta-coded as the integer view of their float64 bits: exact, and for epoch times (one
binary exponent from 2004 to 2038) each delta is just the step in units of 0.24 µs.

A *rollup* is the min / mean / max (and count of non-null values) of each column over one
chunk, float64, for queries over long ranges.

Everything is vectorised over the whole matrix: the store must encode well over 100,000
GPU-samples a second on one core.
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

F64 = npt.NDArray[np.float64]
I64 = npt.NDArray[np.int64]

CHUNK_VERSION = 2
ROLLUP_VERSION = 1
MODE_INT = 0
MODE_MILLI = 1
MODE_FLOAT = 2

# Scaled integers must stay exact in both int64 and float64 (2**53).
_INT_LIMIT = 2.0**52
_HEADER = struct.Struct("<BHH")  # version, n, c
_ZLEVEL = 1  # level 1 is ~3x faster than 6 and within a few % of its size on this data
_WIDTHS: tuple[type[np.signedinteger[Any]], ...] = (np.int8, np.int16, np.int32, np.int64)


@dataclass(frozen=True)
class Chunk:
    """Decoded samples of one GPU: ``values[i, j]`` is column ``j`` at time ``t[i]``."""

    t: F64
    seq: I64
    mono: F64
    values: F64
    modes: npt.NDArray[np.uint8]


def _delta(a: I64) -> I64:
    out = np.empty_like(a)
    if a.shape[0]:
        out[0] = a[0]
        np.subtract(a[1:], a[:-1], out=out[1:])
    return out


def _bits(a: F64) -> I64:
    return np.ascontiguousarray(a, dtype=np.float64).view(np.int64)


def column_modes(values: F64) -> npt.NDArray[np.uint8]:
    """The lossless mode of each column: ``values`` is ``n × ... × c``, reduced over axis 0
    (NaN ignored; an infinity forces float)."""
    filled = np.where(np.isnan(values), 0.0, values)
    finite = np.isfinite(filled)
    all_finite = finite.all(axis=0)
    safe = np.where(finite, filled, 0.0)
    mag = np.abs(safe).max(axis=0, initial=0.0)
    is_int = all_finite & (mag < _INT_LIMIT) & (safe == np.round(safe)).all(axis=0)
    is_milli = (
        all_finite
        & (mag < _INT_LIMIT / 1000.0)
        & ((np.round(safe * 1000.0) / 1000.0) == safe).all(axis=0)
    )
    modes = np.full(values.shape[1:], MODE_FLOAT, dtype=np.uint8)
    modes[is_milli] = MODE_MILLI
    modes[is_int] = MODE_INT
    return modes


def encode_chunks(t: F64, seq: I64, mono: F64, values: F64) -> list[bytes]:
    """Encode the samples of several GPUs that share timestamps: ``values`` is
    ``n × g × c`` float64 (NaN = null); returns one chunk per GPU. Doing all GPUs of a host
    at once keeps the per-call NumPy overhead off the per-GPU path."""
    n, g, c = values.shape
    nan = np.isnan(values)
    modes = column_modes(values)  # g × c
    filled = np.where(nan, 0.0, values)
    scale = np.where(modes == MODE_MILLI, 1000.0, 1.0)
    # Rounding a float column too is harmless: its int view is simply not written.
    with np.errstate(invalid="ignore", over="ignore"):
        ints = np.round(filled * scale).astype(np.int64)
    dints = _delta(ints)
    nan_bits = np.packbits(nan.transpose(1, 2, 0).reshape(g, c * n), axis=1)
    head = _HEADER.pack(CHUNK_VERSION, n, c)
    times = b"".join(
        (
            _delta(_bits(t)).tobytes(),
            _delta(seq.astype(np.int64)).tobytes(),
            _delta(_bits(mono)).tobytes(),
        )
    )
    # Deltas after the first row, stored in the narrowest integer type that holds each
    # column's deltas: most are 0 or small, and narrower input also makes zlib faster.
    rest = dints[1:]
    mx = np.abs(rest).max(axis=0, initial=0)  # g × c
    wcode = ((mx > 0x7F).astype(np.uint8) + (mx > 0x7FFF) + (mx > 0x7FFFFFFF)).astype(np.uint8)
    out: list[bytes] = []
    for gi in range(g):
        m = modes[gi]
        w = wcode[gi]
        int_cols = m != MODE_FLOAT
        parts = [head, m.tobytes(), w.tobytes(), times, nan_bits[gi].tobytes()]
        parts.append(ints[0, gi, int_cols].tobytes())
        block = rest[:, gi, :]
        for code, dtype in enumerate(_WIDTHS):
            sel = int_cols & (w == code)
            if sel.any():
                parts.append(np.ascontiguousarray(block[:, sel].T).astype(dtype).tobytes())
        if not int_cols.all():
            parts.append(np.ascontiguousarray(filled[:, gi, ~int_cols].T).tobytes())
        out.append(zlib.compress(b"".join(parts), _ZLEVEL))
    return out


def encode_chunk(t: F64, seq: I64, mono: F64, values: F64) -> bytes:
    """Encode one GPU's samples (``values`` is ``n × c`` float64, NaN = null)."""
    return encode_chunks(t, seq, mono, values[:, None, :])[0]


def decode_chunk(blob: bytes) -> Chunk:
    raw = zlib.decompress(blob)
    version, n, c = _HEADER.unpack_from(raw, 0)
    if version != CHUNK_VERSION:
        raise ValueError(f"chunk format {version} is not supported")
    off = _HEADER.size
    modes = np.frombuffer(raw, np.uint8, c, off).copy()
    widths = np.frombuffer(raw, np.uint8, c, off + c)
    off += 2 * c

    def take(dtype: type[np.signedinteger[Any]], count: int) -> npt.NDArray[Any]:
        nonlocal off
        a = np.frombuffer(raw, dtype, count, off)
        off += count * a.itemsize
        return a

    t = np.cumsum(take(np.int64, n)).view(np.float64)
    seq = np.cumsum(take(np.int64, n))
    mono = np.cumsum(take(np.int64, n)).view(np.float64)
    nbits = (n * c + 7) // 8
    nan = np.unpackbits(np.frombuffer(raw, np.uint8, nbits, off), count=n * c).reshape(c, n).T
    off += nbits
    int_cols = modes != MODE_FLOAT
    k = int(int_cols.sum())
    values = np.empty((n, c), dtype=np.float64)
    if k:
        ints = np.empty((n, k), dtype=np.int64)
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
    c = r.count.shape[0]
    body = b"".join(
        (
            _HEADER.pack(ROLLUP_VERSION, 0, c),
            r.count.astype(np.int64).tobytes(),
            r.vmin.tobytes(),
            r.mean.tobytes(),
            r.vmax.tobytes(),
        )
    )
    return zlib.compress(body, _ZLEVEL)


def decode_rollup(blob: bytes) -> Rollup:
    raw = zlib.decompress(blob)
    version, _, c = _HEADER.unpack_from(raw, 0)
    if version != ROLLUP_VERSION:
        raise ValueError(f"rollup format {version} is not supported")
    off = _HEADER.size
    count = np.frombuffer(raw, np.int64, c, off)
    off += 8 * c
    vmin = np.frombuffer(raw, np.float64, c, off)
    vmean = np.frombuffer(raw, np.float64, c, off + 8 * c)
    vmax = np.frombuffer(raw, np.float64, c, off + 16 * c)
    return Rollup(count=count, vmin=vmin, mean=vmean, vmax=vmax)
