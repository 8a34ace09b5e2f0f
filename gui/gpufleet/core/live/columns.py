"""The live ring's values, each metric kept in the narrowest type that holds it exactly.

A host's live window was one float32 block (27 metrics × GPUs × an hour of slots): 3 MiB
per 8-GPU host, 96 MiB of a 32-host GUI's ~400 MiB (docs/benchmarks.md, "Issue 28: GUI
memory, session 6"). Most of it held either nothing (the GPM columns of a card without GPM,
the fan of a passively cooled board: NaN for an hour) or small integers (percentages,
temperatures, P-states, PCIe generation and width, links up, the lost flag, clock MHz,
reason bits) in four bytes each.

Here a metric gets storage only when its first value arrives, in the first of three
classes that holds every value it has had exactly: ``uint8`` (integers 0..254; 255 marks
"not reported"), ``float16`` (what float32 would hold, when float16 holds it too: integers
up to 2048, halves, quarters...), else ``float32`` as before. A value that does not fit its
metric's class moves the metric, once, to the next class (its history copied over). Read
back, every value is the float32 it was before, NaN where not reported; nothing is rounded
that float32 did not round.

Not thread-safe on its own: ``LiveBuffers``' lock guards it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

F32 = npt.NDArray[np.float32]
Idx = npt.NDArray[np.intp]
Mask = npt.NDArray[np.bool_]
_U8_BLANK = 255
_F16_MAX = 65504.0
# Samples written at once (see CompactColumns): 8 makes the NumPy calls' share small, and
# what waits holds a sample's Python values (~30 KiB for a host of 8 GPUs).
BATCH = 8


@dataclass(frozen=True)
class _Kind:
    """One storage class: its dtype and the value that marks a slot with no value."""

    dtype: type[np.generic]
    blank: float

    def encode(self, x: F32) -> tuple[npt.NDArray[np.generic], Mask]:
        """``x`` (float32, one metric per row: GPUs × slots; NaN = not reported) in this
        class, and per row whether a value did not fit (its metric needs a wider class)."""
        if self.dtype is np.float32:
            return x, np.zeros(len(x), dtype=np.bool_)
        nan = np.isnan(x)
        # Clipped into the type's range first: the cast then never overflows (a value
        # outside it differs from its clipped self, so it does not fit).
        if self.dtype is np.uint8:
            e = np.clip(np.where(nan, _U8_BLANK, x), 0, _U8_BLANK).astype(np.uint8)
            held = ((e == x) & (x < _U8_BLANK)) | nan
        else:
            e = np.clip(x, -_F16_MAX, _F16_MAX).astype(np.float16)
            held = (e == x) | nan
        return e, ~held.reshape(len(x), -1).all(axis=1)

    def decode(self, raw: npt.NDArray[np.generic]) -> F32:
        out = raw.astype(np.float32)
        if self.dtype is np.uint8:
            out[raw == _U8_BLANK] = np.nan
        return out


KINDS: tuple[_Kind, ...] = (
    _Kind(np.uint8, _U8_BLANK),
    _Kind(np.float16, np.nan),
    _Kind(np.float32, np.nan),
)


class CompactColumns:
    """``metrics × gpus × cap`` values, a ring's columns: ``write`` one slot, ``read`` one
    metric's rows (float32 copies). ``sent`` are the metrics a host's samples carry.

    Writes are kept as Python lists and stored a batch at a time (``flush``, also before
    any read): the type checks and casts are a dozen NumPy calls whatever their size, which
    per sample made a write ~3x slower than the one float32 store it replaced."""

    def __init__(self, n_metrics: int, sent: Idx, n_gpu: int, cap: int) -> None:
        self.n_gpu, self.cap = n_gpu, cap
        self.sent = np.asarray(sent, dtype=np.intp)
        self.kind_of = np.full(n_metrics, -1, dtype=np.intp)  # -1: no value yet
        self.row_of = np.full(n_metrics, -1, dtype=np.intp)
        self.blocks = [np.empty((0, n_gpu, cap), dtype=k.dtype) for k in KINDS]
        # At most half the ring: a batch never writes one slot twice.
        self.batch = max(1, min(BATCH, cap // 2))
        self._slots: list[int] = []
        self._rows: list[list[list[float]]] = []
        self._plan()

    @property
    def nbytes(self) -> int:
        self.flush()
        return sum(b.nbytes for b in self.blocks)

    def kinds(self) -> dict[int, str]:
        """Metric index → its storage type's name (the metrics that have one)."""
        self.flush()
        return {int(m): np.dtype(KINDS[k].dtype).name for m, k in enumerate(self.kind_of) if k >= 0}

    def _plan(self) -> None:
        """Per kind: the positions in ``sent`` of its metrics (its block's rows, in order)."""
        kinds = self.kind_of[self.sent]
        self.unplaced: Idx = np.flatnonzero(kinds < 0)
        self.groups = [(k, np.flatnonzero(kinds == k)) for k in range(len(KINDS))]
        self.groups = [(k, pos) for k, pos in self.groups if len(pos)]

    def write(self, slot: int, rows: list[list[float]]) -> None:
        """Slot ``slot`` holds ``rows``: one per GPU (``n_gpu``), each the values of
        ``sent`` in order, NaN where not reported."""
        self._slots.append(slot)
        self._rows.append(rows)
        if len(self._slots) >= self.batch:
            self.flush()

    def flush(self) -> None:
        """Store the writes kept so far."""
        if not self._slots:
            return
        slots = np.array(self._slots, dtype=np.intp)
        # samples × GPUs × sent → sent × GPUs × samples, the blocks' order
        vals = np.array(self._rows, dtype=np.float32).reshape(
            len(slots), self.n_gpu, len(self.sent)
        )
        vals = vals.transpose(2, 1, 0)
        self._slots, self._rows = [], []
        encoded = [(k, *KINDS[k].encode(vals[pos])) for k, pos in self.groups]
        moves: dict[int, int] = {}
        for (k, pos), (_k, _e, misfit) in zip(self.groups, encoded, strict=True):
            for p in pos[misfit]:
                moves[int(self.sent[p])] = self._narrowest(vals[p : p + 1], k + 1)
        if len(self.unplaced):
            x = vals[self.unplaced].reshape(len(self.unplaced), -1)
            for p in self.unplaced[~np.isnan(x).all(axis=1)]:
                moves[int(self.sent[p])] = self._narrowest(vals[p : p + 1], 0)
        if moves:
            self._relayout(moves)
            encoded = [(k, *KINDS[k].encode(vals[pos])) for k, pos in self.groups]
        for k, e, _misfit in encoded:
            self.blocks[k][:, :, slots] = e

    @staticmethod
    def _narrowest(x: F32, first: int) -> int:
        for k in range(first, len(KINDS) - 1):
            if not KINDS[k].encode(x)[1].any():
                return k
        return len(KINDS) - 1

    def _relayout(self, moves: dict[int, int]) -> None:
        """Give the metrics in ``moves`` their new kind (new blocks, the history kept). A
        block's rows follow ``sent``, so a slot's values are written in one piece."""
        old_kind, old_row, old_blocks = self.kind_of.copy(), self.row_of.copy(), self.blocks
        for m, k in moves.items():
            self.kind_of[m] = k
        blocks = []
        for k, kind in enumerate(KINDS):
            members = [int(m) for m in self.sent if self.kind_of[m] == k]
            block = np.full((len(members), self.n_gpu, self.cap), kind.blank, dtype=kind.dtype)
            for r, m in enumerate(members):
                self.row_of[m] = r
                was = int(old_kind[m])
                if was == k:
                    block[r] = old_blocks[k][old_row[m]]
                elif was >= 0:
                    block[r] = kind.encode(KINDS[was].decode(old_blocks[was][old_row[m]]))[0]
            blocks.append(block)
        self.blocks = blocks
        self._plan()

    def read(self, metric: int, gis: list[int], slots: Sequence[slice]) -> F32:
        """``metric``'s values of the GPUs ``gis`` in ``slots`` (joined in that order), as
        float32 (a copy; NaN: not reported)."""
        self.flush()
        n = sum(s.stop - s.start for s in slots)
        k = int(self.kind_of[metric])
        if k < 0:
            return np.full((len(gis), n), np.nan, dtype=np.float32)
        row = self.blocks[k][self.row_of[metric]]
        if gis != list(range(self.n_gpu)):
            row = row[gis]  # a copy of these GPUs' rows only
        parts = [row[:, s] for s in slots if s.stop > s.start]
        if len(parts) != 1:
            return KINDS[k].decode(np.concatenate([row[:, :0], *parts], axis=1))
        return KINDS[k].decode(parts[0])

    def value(self, metric: int, gi: int, slot: int) -> float:
        """One value (NaN: not reported)."""
        self.flush()
        k = int(self.kind_of[metric])
        if k < 0:
            return float("nan")
        raw = self.blocks[k][self.row_of[metric], gi, slot]
        if KINDS[k].dtype is np.uint8 and raw == _U8_BLANK:
            return float("nan")
        return float(raw)
