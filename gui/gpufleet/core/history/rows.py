"""Fast conversion of protocol sample rows (tuples of int / float / None) into float64 arrays.

``np.array`` over nested tuples costs ~100 ns a value on this project's machines (it
discovers the shape and type of every element), and the history writer converts every value
it stores: that was a third of its time. Here all the rows of a sample are flattened into
one tuple and packed by one ``struct.Struct`` compiled for the sample's *pattern* (which
positions hold None, which ints, which floats); the packed bytes of many samples become one
array through ``np.frombuffer``:

- an int position packs as ``n`` in native mode (``Py_ssize_t``, exact int64 on 64-bit
  builds; turned into float64 afterwards, which rounds exactly as ``float(int)`` does) and
  refuses a float with ``struct.error``. ``q`` would do the same, but CPython converts ints
  of more than one digit for it through a byte array: ``n`` takes a fifth off the packing;
- a float position packs as ``d`` and takes ints too (converted as ``float()`` does);
- a None position packs as ``?7x`` (eight zero bytes; NaN is written there afterwards),
  which would take anything, so an ``itemgetter`` over the None positions and the GPU
  indices checks each sample at C speed before it is packed.

The pattern is kept between samples and calls (consecutive samples of a host almost always
share it). A sample that does not fit gets a new pattern, and a position that once held a
float keeps ``d`` so a column alternating 400 / 400.5 does not recompile at every sample.
Anything unusual (rows of another width, GPUs changing within the samples, values that are
not numbers) makes ``pack`` return None and the caller takes its general path.
"""

from __future__ import annotations

import operator
import struct
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from gpufleet.core.wire.messages import Sample, Value

__all__ = ["RowPacker"]

F64 = npt.NDArray[np.float64]
Rows = tuple[tuple[Value, ...], ...]
_I64_MIN = -(2**63)
_I64_MAX = 2**63 - 1
_NUMBER = (int, float, np.integer, np.floating)
_FLATTENERS: dict[int, Callable[[Rows], tuple[Value, ...]]] = {}
# Struct codes by position kind ("n" None: eight zero bytes). Native mode ("@"): every item
# is 8 bytes, so there is no padding, and the bytes are read back in native order.
_INT_CODE = "n" if struct.calcsize("@n") == 8 else "q"
_STRUCT_CODES = {"q": _INT_CODE, "d": "d", "n": "?7x"}


class _Stale(Exception):
    """A sample does not fit the current pattern (raised and caught within one sample)."""


def _flattener(g: int) -> Callable[[Rows], tuple[Value, ...]]:
    """``lambda rows: (*rows[0], ..., *rows[g-1])``: one tuple display, which builds the
    flat tuple about twice as fast as ``tuple(chain.from_iterable(rows))``."""
    fn = _FLATTENERS.get(g)
    if fn is None:
        body = ", ".join(f"*rows[{i}]" for i in range(g))
        fn = _FLATTENERS[g] = eval(f"lambda rows: ({body},)")
    return fn


@dataclass(frozen=True)
class _Pattern:
    """How to pack the flattened rows of a sample with ``g`` rows of ``width`` values."""

    codes: tuple[str, ...]  # per flat position: "q" int, "d" float, "n" None
    lens: tuple[int, ...]  # (width,) * g
    pack: Callable[..., bytes]
    check: Callable[[tuple[Value, ...]], Any]  # itemgetter(GPU indices, None positions)
    expect: Any  # what ``check`` returns for a fitting sample
    key: int  # index into RowPacker's mask tables


class RowPacker:
    """Converts the rows of a run of samples (one host, one width) into ``n × g × width``
    float64, NaN for None. Keeps its patterns between calls: use one per host."""

    def __init__(self) -> None:
        self._patterns: dict[tuple[Value | str, ...], _Pattern] = {}
        self._int_masks: list[npt.NDArray[np.bool_]] = []  # by pattern key
        self._nan_masks: list[npt.NDArray[np.bool_]] = []
        # By pattern key: the positions of floats and of None (index arrays: cheaper than
        # boolean masks for the few positions they are).
        self._float_at: list[npt.NDArray[np.intp]] = []
        self._nan_at: list[npt.NDArray[np.intp]] = []
        self._current: _Pattern | None = None

    def _pattern(self, rows: Rows, width: int, prev: _Pattern | None) -> _Pattern | None:
        """The pattern that packs ``rows``, or None if they are not ``width`` numbers-or-
        nulls each, starting with an int GPU index."""
        codes: list[str] = []
        sticky = prev.codes if prev is not None else None
        if sticky is not None and len(sticky) != len(rows) * width:
            sticky = None
        for r in rows:
            if len(r) != width or type(r[0]) is not int:
                return None
            for v in r:
                if v is None:
                    codes.append("n")
                elif (
                    type(v) is int
                    and _I64_MIN <= v <= _I64_MAX
                    and (sticky is None or sticky[len(codes)] != "d")
                ):
                    codes.append("q")
                elif isinstance(v, _NUMBER):
                    try:
                        float(v)
                    except OverflowError:
                        return None  # an int beyond float64: the general path decides
                    codes.append("d")
                else:
                    return None
        flat = _flattener(len(rows))(rows)
        gpu_pos = range(0, len(flat), width)
        key = (*(flat[i] for i in gpu_pos), *codes)
        p = self._patterns.get(key)
        if p is None:
            check = operator.itemgetter(*gpu_pos, *(i for i, c in enumerate(codes) if c == "n"))
            fmt = "@" + "".join(_STRUCT_CODES[code] for code in codes)
            p = _Pattern(
                codes=tuple(codes),
                lens=(width,) * len(rows),
                pack=struct.Struct(fmt).pack,
                check=check,
                expect=check(flat),
                key=len(self._int_masks),
            )
            self._patterns[key] = p
            self._int_masks.append(np.array([c == "q" for c in codes]))
            self._nan_masks.append(np.array([c == "n" for c in codes]))
            self._float_at.append(np.flatnonzero(np.array([c == "d" for c in codes])))
            self._nan_at.append(np.flatnonzero(self._nan_masks[-1]))
        return p

    def pack(self, samples: Sequence[Sample], width: int) -> F64 | None:
        """``n × g × width`` float64 of the samples' rows (column 0 is the GPU index), or
        None when they do not all have the same GPUs in the same order and ``width``
        numbers-or-nulls per row."""
        if not samples:
            return None
        first = samples[0].rows
        g = len(first)
        if g == 0:
            return None
        flatten = _flattener(g)
        p = self._current
        lens = tuple(map(len, first))
        if (
            p is None
            or p.lens != lens
            or lens != (width,) * g
            or p.check(flatten(first)) != p.expect
        ):
            p = self._pattern(first, width, p)
        if p is None:
            return None
        self._current = p
        layout = tuple(r[0] for r in first)
        key0 = p.key
        lens, pack, check, expect = p.lens, p.pack, p.check, p.expect
        out: list[bytes] = []
        app = out.append
        changes: list[tuple[int, int]] = []  # (sample index, pattern key from there on)
        for n, s in enumerate(samples):
            rows = s.rows
            try:
                if tuple(map(len, rows)) != lens:
                    raise _Stale
                flat = flatten(rows)
                if check(flat) != expect:
                    raise _Stale
                app(pack(*flat))
            except (_Stale, struct.error, TypeError, OverflowError):
                if len(rows) != g or tuple(r[0] if r else None for r in rows) != layout:
                    return None  # other GPUs, or in another order
                q = self._pattern(rows, width, p)
                if q is None:
                    return None
                p = self._current = q
                lens, pack, check, expect = p.lens, p.pack, p.check, p.expect
                changes.append((n, p.key))
                app(pack(*flatten(rows)))
        count = len(samples)
        raw = np.frombuffer(b"".join(out), np.float64).reshape(count, g * width)
        if changes:
            keys = np.full(count, key0, dtype=np.intp)
            for n, k in changes:
                keys[n:] = k
            used, idx = np.unique(keys, return_inverse=True)
            is_int = np.stack([self._int_masks[k] for k in used])[idx]
            is_nan = np.stack([self._nan_masks[k] for k in used])[idx]
            values: F64 = np.where(is_int, raw.view(np.int64), raw)
            values[is_nan] = np.nan
        else:
            # One pattern (the usual case): convert everything as int64, then put back the
            # float positions and write NaN at the None ones, by index (twice as fast as a
            # broadcast np.where; the None positions need no copy first).
            values = raw.view(np.int64).astype(np.float64)
            floats = self._float_at[key0]
            if floats.size:
                values[:, floats] = raw[:, floats]
            values[:, self._nan_at[key0]] = np.nan
        return values.reshape(count, g, width)
