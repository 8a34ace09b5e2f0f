"""The built-in alert conditions and the per-host state they read.

A condition is a pure function of the host's current state and the rule's parameters that
answers, at one moment, one of three things:

- a dict of values: the condition holds (the dict becomes the alert's evidence ``values``);
- ``CLEAR``: the clear condition holds (the alert may resolve);
- ``HOLD``: neither (inside the hysteresis band, or no data): timers do not move.

The rule engine (``gpufleet.core.alerts.rules``) turns these answers into alerts with for-durations,
clear-durations and cooldowns. Conditions share these definitions (``core.cost.idle``): "nominal" SM
clock = the max clock; a GPU is idle when utilization < 5 % and memory used < 10 % of its
capacity; a host is idle when all its GPUs are.

``GPU`` conditions run once per GPU of a message, ``HOST`` conditions once per message. Each
declares the messages that trigger it ("sample", "procs", "event", "status", "tick").
A ``multi`` condition returns ``[(key, answer), ...]`` (one alert per key: the Xid code).
"""

from __future__ import annotations

# Each group registers its conditions in CONDITIONS on import: in this order, that of the
# one module they were before the split, so CONDITIONS iterates as it did.
# isort: off
from gpufleet.core.alerts.conditions import clocks, usage, faults, links, host  # noqa: F401

# The conditions of the one judgment (issue 25) come after the old module's.
from gpufleet.core.alerts.conditions import held, intruders  # noqa: F401

# isort: on
from gpufleet.core.alerts.conditions.base import (
    CLEAR,
    CLOCK_CONDITIONS,
    CLOCK_HISTORY,
    CONDITIONS,
    GPU,
    HOLD,
    HOST,
    MINER_NAMES,
    NVLINK_TAU_S,
    REASON_EXPLAINING_MASK,
    REASON_POWER_CAP,
    XID_CRITICAL,
    Answer,
    Condition,
    ConditionFn,
    GpuView,
    HostState,
    Params,
    XidSeen,
)
from gpufleet.core.alerts.conditions.clocks import clock_window
from gpufleet.core.alerts.conditions.host import stall_threshold

__all__ = [
    "CLEAR",
    "CLOCK_CONDITIONS",
    "CLOCK_HISTORY",
    "CONDITIONS",
    "GPU",
    "HOLD",
    "HOST",
    "MINER_NAMES",
    "NVLINK_TAU_S",
    "REASON_EXPLAINING_MASK",
    "REASON_POWER_CAP",
    "XID_CRITICAL",
    "Answer",
    "Condition",
    "ConditionFn",
    "GpuView",
    "HostState",
    "Params",
    "XidSeen",
    "clock_window",
    "stall_threshold",
]
