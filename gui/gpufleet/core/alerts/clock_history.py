"""One GPU's recent clock state for the rule engine: per sample its time, clock event
reasons and power / thermal violation shares, newest last, at most an hour of samples.

The throttle rules judge a flickering reason by the last few seconds of it, and an alert's
evidence says how long the GPU was held down over the alert's window. Kept as a tuple of
Python objects per GPU-second this was ~120 MB at 50 hosts of 8 GPUs after an hour; kept
here as column arrays (float64 times, float32 values, NaN where a value was not reported)
it is 20 bytes a sample, and arrays grow by doubling so that a GPU seen for a minute holds a
minute's worth.
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

F64 = npt.NDArray[np.float64]
F32 = npt.NDArray[np.float32]

_FIRST = 64  # samples held before the first growth


def _f(x: object) -> float:
    return float(x) if isinstance(x, (int, float)) and not isinstance(x, bool) else math.nan


class ClockHistory:
    """A ring of (t, clock_reasons, viol_power_pct, viol_thermal_pct), at most ``cap``."""

    __slots__ = ("_n", "_r", "_start", "_t", "_vp", "_vt", "cap")

    def __init__(self, cap: int) -> None:
        self.cap = max(1, int(cap))
        size = min(self.cap, _FIRST)
        self._t: F64 = np.empty(size, dtype=np.float64)
        self._r: F32 = np.empty(size, dtype=np.float32)  # reason bits < 2^24: exact
        self._vp: F32 = np.empty(size, dtype=np.float32)
        self._vt: F32 = np.empty(size, dtype=np.float32)
        self._start = 0
        self._n = 0

    def __len__(self) -> int:
        return self._n

    def append(self, t: float, reasons: object, viol_power: object, viol_thermal: object) -> None:
        size = self._t.size
        if self._n == size and size < self.cap:
            self._grow(min(self.cap, size * 2))
            size = self._t.size
        if self._n < size:
            i = (self._start + self._n) % size
            self._n += 1
        else:  # full at its cap: the oldest goes
            i = self._start
            self._start = (self._start + 1) % size
        self._t[i] = t
        self._r[i] = _f(reasons)
        self._vp[i] = _f(viol_power)
        self._vt[i] = _f(viol_thermal)

    def _grow(self, size: int) -> None:
        t, r, vp, vt = self._ordered()
        n = self._n
        self._t = np.empty(size, dtype=np.float64)
        self._r = np.empty(size, dtype=np.float32)
        self._vp = np.empty(size, dtype=np.float32)
        self._vt = np.empty(size, dtype=np.float32)
        self._t[:n], self._r[:n], self._vp[:n], self._vt[:n] = t, r, vp, vt
        self._start = 0

    def _ordered(self) -> tuple[F64, F32, F32, F32]:
        """Copies of the columns, oldest first."""
        idx = (self._start + np.arange(self._n)) % self._t.size
        return self._t[idx], self._r[idx], self._vp[idx], self._vt[idx]

    def window(self, t0: float, t1: float) -> tuple[F64, F64, F64, F64] | None:
        """(t, reasons, viol_power_pct, viol_thermal_pct) of the samples in [t0, t1], oldest
        first, as float64 (NaN: not reported); None when none is."""
        if not self._n:
            return None
        t, r, vp, vt = self._ordered()
        sel = (t >= t0) & (t <= t1)
        if not sel.any():
            return None
        f64 = np.float64
        return t[sel], r[sel].astype(f64), vp[sel].astype(f64), vt[sel].astype(f64)

    def any_bits_since(self, t_from: float, mask: int) -> bool:
        """Whether a reason bit of ``mask`` was set in a sample at ``t_from`` or later
        (walked from the newest: a few samples, whatever the length of the history)."""
        size = self._t.size
        for k in range(self._n - 1, -1, -1):
            i = (self._start + k) % size
            if self._t[i] < t_from:
                break
            r = self._r[i]
            if r == r and int(r) & mask:
                return True
        return False
