"""What "idle" means, the one definition every stage uses: the idle rule, the cost tracker's
idle share and the Cost tab all call ``gpu_is_idle`` (the sampler's watchdog, which cannot
import the app, keeps the same thresholds).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gpufleet.core.wire.messages import Value


def gpu_is_idle(
    util: Value, mem_used: Value, mem_total: Value, p: Mapping[str, Any] | None = None
) -> bool:
    """Idle: utilization < 5 % and memory used < 10 % of capacity.

    Unknown memory capacity leaves the decision to utilization; unknown utilization is not
    idle (no evidence of idleness)."""
    util_max = 5.0 if p is None else float(p.get("util_below_pct", 5.0))
    mem_frac = 0.10 if p is None else float(p.get("mem_below_frac", 0.10))
    if util is None or util >= util_max:
        return False
    if mem_used is None or not mem_total:
        return True
    return mem_used < mem_frac * mem_total
