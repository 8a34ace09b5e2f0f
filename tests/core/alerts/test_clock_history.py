"""The rule engine's per-GPU clock history: growth by doubling up to its cap, the oldest
dropped past it, windows oldest first with NaN where nothing was reported, and the recent
reason bits walked from the newest."""

from __future__ import annotations

import math

from gpufleet.core.alerts.clock_history import ClockHistory


def test_it_grows_to_its_cap_then_keeps_the_newest_in_order() -> None:
    h = ClockHistory(100)
    for k in range(250):
        h.append(1000.0 + k, k % 7, None if k % 5 else 12.5, 0.0)
    assert len(h) == 100
    cols = h.window(0.0, 1e12)
    assert cols is not None
    t, reasons, vp, vt = cols
    assert list(t) == [1000.0 + k for k in range(150, 250)]
    assert list(reasons) == [float(k % 7) for k in range(150, 250)]
    assert [math.isnan(x) for x in vp] == [bool(k % 5) for k in range(150, 250)]
    assert vp[0] == 12.5 and vt.sum() == 0.0
    assert h.window(2000.0, 3000.0) is None
    w = h.window(1200.0, 1202.0)
    assert w is not None and list(w[0]) == [1200.0, 1201.0, 1202.0]


def test_recent_bits_look_back_from_the_newest_only_as_far_as_asked() -> None:
    h = ClockHistory(3600)
    assert not h.any_bits_since(0.0, 0x20)
    h.append(10.0, 0x20, None, None)  # thermal slowdown at t=10
    for t in range(11, 30):
        h.append(float(t), 0 if t % 3 else None, None, None)
    assert h.any_bits_since(10.0, 0x20)
    assert not h.any_bits_since(11.0, 0x20)
    assert not h.any_bits_since(0.0, 0x08)  # another bit
    # Reasons too wide for float32 would be wrong: NVML's reach 0x1000, far under 2^24.
    h.append(30.0, 0x1000 | 0x4, None, None)
    assert h.any_bits_since(30.0, 0x1000)
