"""Clock event reasons: what each one means, and the one computation of "throttled share".

NVML reports why the SM clock is below its maximum as a bitmask (``clock_reasons``) and, on
most data-centre GPUs, as violation counters: the time clocks were held by the power cap and
by thermal slowdown (``viol_power_pct`` / ``viol_thermal_pct``, the share of each sampling
interval). The bits are instantaneous (a 200 ms power excursion between two 1 s samples leaves
no bit behind); the counters are not. ``throttled_share`` uses both: a sample counts as held
for the larger of its bit (0 or 1) and its counters' share.

The alert rules, the diagnosis, the evidence bundle and the Clocks tab all call
``throttled_share`` so that the same window gives the same number everywhere.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

import numpy as np
import numpy.typing as npt
from gpufleet_sampler import protocol

F64 = npt.NDArray[np.float64]

REASON_IDLE: Final = 0x1
REASON_APP_CLOCKS: Final = 0x2
REASON_POWER_CAP: Final = 0x4
REASON_HW_SLOWDOWN: Final = 0x8
REASON_SYNC_BOOST: Final = 0x10
REASON_SW_THERMAL: Final = 0x20
REASON_HW_THERMAL: Final = 0x40
REASON_HW_POWER_BRAKE: Final = 0x80
REASON_DISPLAY_CLOCKS: Final = 0x100

# Limits that hold the clock under what the job asks for: power, temperature, and the
# hardware slowdown signals (HW slowdown is asserted by an external power brake or an
# over-temperature input; HW power brake by the board's power supply). "GPU idle" is no
# limit, and the three settings below are deliberate choices, not throttling.
THROTTLE_MASK: Final = (
    REASON_POWER_CAP
    | REASON_HW_SLOWDOWN
    | REASON_SW_THERMAL
    | REASON_HW_THERMAL
    | REASON_HW_POWER_BRAKE
)
THERMAL_MASK: Final = REASON_SW_THERMAL | REASON_HW_THERMAL
POWER_MASK: Final = REASON_POWER_CAP | REASON_HW_POWER_BRAKE
HW_SLOWDOWN_MASK: Final = REASON_HW_SLOWDOWN | REASON_HW_POWER_BRAKE
# Settings that lower the clock on purpose: applications clocks (nvidia-smi -ac), a sync
# boost group (every member runs at the slowest one's clock), the display clock setting.
SETTING_MASK: Final = REASON_APP_CLOCKS | REASON_SYNC_BOOST | REASON_DISPLAY_CLOCKS
# Every reason but "GPU idle" explains a lower clock (each has its own rule).
EXPLAINING_MASK: Final = 0x1FF & ~REASON_IDLE

# What kind of cause each reason is: "idle", "setting", "power", "thermal", "hardware".
REASON_KIND: Final[dict[int, str]] = {
    REASON_IDLE: "idle",
    REASON_APP_CLOCKS: "setting",
    REASON_POWER_CAP: "power",
    REASON_HW_SLOWDOWN: "hardware",
    REASON_SYNC_BOOST: "setting",
    REASON_SW_THERMAL: "thermal",
    REASON_HW_THERMAL: "thermal",
    REASON_HW_POWER_BRAKE: "hardware",
    REASON_DISPLAY_CLOCKS: "setting",
}
assert set(REASON_KIND) == {bit for bit, _, _ in protocol.REASON_BITS}

BUSY_PCT: Final = 50.0
GAP_FACTOR: Final = 5.0  # an interval longer than 5 median intervals is a gap, not time held


@dataclass(frozen=True)
class ThrottleShare:
    """How long clocks were held down over a window.

    ``span_s`` is the time observed (the busy time when a busy mask was given); ``held_s``
    the part of it with a limiting reason; ``share`` = held / span. ``by_reason`` gives the
    seconds per reason label from the bits; ``counter_s`` the seconds from the violation
    counters ("power", "thermal"), where the GPU has them."""

    held_s: float
    span_s: float
    share: float
    by_reason: Mapping[str, float] = field(default_factory=dict)
    counter_s: Mapping[str, float] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "held_s": round(self.held_s, 3),
            "span_s": round(self.span_s, 3),
            "share": round(self.share, 4),
            "by_reason": {k: round(v, 3) for k, v in self.by_reason.items()},
            "counter_s": {k: round(v, 3) for k, v in self.counter_s.items()},
        }


def reason_bits(masks: F64) -> npt.NDArray[np.int64]:
    """The reason masks as integers; 0 (no reason) for a value that is no mask NVML sends:
    NaN, negative, or 2**63 and above (the wire takes any number up to 2**64 in a column,
    and a cast of those to int64 is undefined)."""
    ok = np.isfinite(masks) & (masks >= 0) & (masks < 2.0**63)
    return np.where(ok, masks, 0.0).astype(np.int64)


def _arr(x: Any, n: int) -> F64:
    if x is None:
        return np.full(n, np.nan)
    a = np.asarray(x, dtype=np.float64)
    if a.shape != (n,):
        raise ValueError(f"series of length {a.shape} against {n} times")
    return a


def weights(t: F64, interval_s: float | None = None) -> F64:
    """Seconds each sample stands for: up to the next sample, gaps capped (a hole in the
    data is not time spent in any state); the last sample gets the typical interval."""
    n = t.size
    if n == 0:
        return np.empty(0)
    if n == 1:
        return np.array([interval_s or 1.0])
    dt = np.diff(t)
    typical = interval_s or float(np.median(dt)) or 1.0
    w = np.minimum(np.maximum(dt, 0.0), GAP_FACTOR * typical)
    return np.append(w, typical)


def throttled_share(
    t: Any,
    reasons: Any,
    *,
    util: Any = None,
    viol_power_pct: Any = None,
    viol_thermal_pct: Any = None,
    interval_s: float | None = None,
    mask: int = THROTTLE_MASK,
) -> ThrottleShare:
    """The share of the (busy) time clocks were held down, time-weighted.

    ``t`` sample times; ``reasons`` the ``clock_reasons`` bitmasks (NaN = not reported);
    ``util`` utilization (when given, only samples at >= 50 % count: an idle GPU's low
    clock is no loss); the violation counters where reported (NaN elsewhere)."""
    ta = np.asarray(t, dtype=np.float64)
    n = ta.size
    r = _arr(reasons, n)
    vp, vt = _arr(viol_power_pct, n), _arr(viol_thermal_pct, n)
    w = weights(ta, interval_s)
    sel = np.ones(n, dtype=bool)
    if util is not None:
        u = _arr(util, n)
        sel = ~np.isnan(u) & (u >= BUSY_PCT)
    known = ~np.isnan(r) | ~np.isnan(vp) | ~np.isnan(vt)
    sel &= known
    span = float(w[sel].sum())
    bits = reason_bits(r)
    held_bits = ((bits & mask) != 0).astype(np.float64)
    counters = np.zeros(n)
    counter_s: dict[str, float] = {}
    if mask & POWER_MASK and not np.isnan(vp[sel]).all():
        p = np.clip(np.nan_to_num(vp) / 100.0, 0.0, 1.0)
        counters += p
        counter_s["power"] = float((p * w)[sel].sum())
    if mask & THERMAL_MASK and not np.isnan(vt[sel]).all():
        q = np.clip(np.nan_to_num(vt) / 100.0, 0.0, 1.0)
        counters += q
        counter_s["thermal"] = float((q * w)[sel].sum())
    frac = np.maximum(held_bits, np.minimum(counters, 1.0))
    held = float((frac * w)[sel].sum())
    by_reason: dict[str, float] = {}
    for bit, label, _ in protocol.REASON_BITS:
        if not bit & mask:
            continue
        s = float(w[sel & ((bits & bit) != 0)].sum())
        if s > 0:
            by_reason[label] = s
    return ThrottleShare(held, span, held / span if span > 0 else 0.0, by_reason, counter_s)


def sustained_level(t: Any, x: Any, hold_s: float, interval_s: float | None = None) -> float | None:
    """The highest level ``x`` stayed at or above for ``hold_s`` seconds in a row: a
    one-sample sensor spike does not count, a minute at that temperature does. None when
    the series never covers ``hold_s``."""
    ta = np.asarray(t, dtype=np.float64)
    xa = np.asarray(x, dtype=np.float64)
    if ta.size == 0:
        return None
    w = weights(ta, interval_s)
    typical = float(np.median(w)) or 1.0
    k = max(1, int(np.ceil(hold_s / typical)))
    if k > xa.size:
        return None
    filled = np.where(np.isnan(xa), -np.inf, xa)
    windows = np.lib.stride_tricks.sliding_window_view(filled, k)
    lows = windows.min(axis=1)
    # A window that spans a gap in the data is not "in a row".
    if k > 1:
        gaps = np.lib.stride_tricks.sliding_window_view(np.diff(ta), k - 1).max(axis=1)
        ok = gaps <= GAP_FACTOR * typical
    else:
        ok = np.ones(lows.size, dtype=bool)
    lows = lows[ok & np.isfinite(lows)]
    return float(lows.max()) if lows.size else None
