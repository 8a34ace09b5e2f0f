"""What every condition reads and how it is registered: the per-host state the engine keeps,
one GPU's view of a sample, the answers (a dict of values, ``CLEAR``, ``HOLD``), the
registry ``CONDITIONS`` and its decorator, and the thresholds shared with the verdicts."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from gpufleet.core.alerts import throttle
from gpufleet.core.alerts.clock_history import ClockHistory
from gpufleet.core.config.hostconfig import HostConfig
from gpufleet.core.model.evidence import SamplerRestartedEvidence
from gpufleet.core.wire.messages import Hello, LinkRow, Proc, Value

CLEAR: Final = 0
HOLD: Final = 1
Answer = dict[str, Any] | int
Params = Mapping[str, Any]

GPU: Final = "gpu"
HOST: Final = "host"

# Reasons that explain a lower clock: everything but "GPU idle" (each has its own rule:
# thermal, power, HW slowdown / power brake, and the deliberate settings).
REASON_EXPLAINING_MASK: Final = throttle.EXPLAINING_MASK
REASON_POWER_CAP: Final = throttle.REASON_POWER_CAP
# Per GPU, the recent clock state kept for the alerts' evidence (time held per reason).
CLOCK_HISTORY: Final = 3600
# Alerts about clocks carry the throttled share of their window in their evidence.
CLOCK_CONDITIONS: Final = frozenset(
    {
        "thermal_throttle",
        "hw_slowdown",
        "power_cap_active",
        "power_limit_low",
        "clocks_below_nominal",
        "clock_setting_low",
    }
)
# NVLink traffic is smoothed over about a minute before GPUs are compared: an all-reduce
# comes in bursts, and a 1 s sample may fall between them on one GPU but not another.
NVLINK_TAU_S: Final = 60.0

# Xids that mean the hardware or the driver is in trouble (a reset, a reboot or a new
# instance), as opposed to an application fault (13, 31, 43, 45: usually the user's code).
XID_CRITICAL: Final = (48, 62, 63, 64, 74, 79, 92, 94, 95, 109, 119, 120, 121, 140, 143, 154)

# Names of well-known mining programs (a stray or hostile process on a rented GPU).
MINER_NAMES: Final = (
    "xmrig*",
    "t-rex",
    "nbminer",
    "lolminer",
    "phoenixminer",
    "ethminer",
    "gminer",
    "miner",
    "nanominer",
    "teamredminer",
    "bminer",
    "ccminer",
    "cgminer",
    "bfgminer",
    "srbminer*",
    "rigel",
    "bzminer",
    "onezerominer",
)

EVENT_HOLD_S: Final = 3600.0


@dataclass
class XidSeen:
    """The latest occurrence of one Xid code on one GPU."""

    first_t: float
    last_t: float
    count: int
    message: str


@dataclass
class HostState:
    """Everything the conditions know about one host, updated by the engine per message."""

    name: str
    cfg: HostConfig | None
    hello: Hello | None = None
    pos: dict[str, int] = field(default_factory=dict)
    nominal: dict[int, Mapping[str, Value]] = field(default_factory=dict)
    interval_s: float = 1.0
    row_by_gpu: dict[int, tuple[Value, ...]] = field(default_factory=dict)
    last_sample_t: float | None = None
    procs: dict[int, tuple[Proc, ...]] = field(default_factory=dict)
    dbe_last: dict[int, float] = field(default_factory=dict)
    dbe_jump: dict[int, tuple[float, float, float]] = field(default_factory=dict)
    xids: dict[int, dict[int, XidSeen]] = field(default_factory=dict)
    lost_t: dict[int, float] = field(default_factory=dict)
    trigger: str = "sample"
    last_arrival_t: float | None = None
    status: str = "streaming"
    status_reason: str | None = None
    status_since: float | None = None
    budget_frac: float | None = None
    budget_used: float | None = None
    # Per GPU: its recent clock reasons and violation shares (the throttle evidence).
    clock_hist: dict[int, ClockHistory] = field(default_factory=dict)
    procs_seen: bool = False
    procs_t: float | None = None
    nvlink_ema: dict[int, float] = field(default_factory=dict)
    nvlink_ema_t: float | None = None
    links: dict[int, LinkRow] = field(default_factory=dict)
    nvlink_errors: dict[int, deque[tuple[float, int]]] = field(default_factory=dict)
    # Per GPU, the PCIe replay counter at each change: (t, value), oldest first.
    pcie_replays: dict[int, deque[tuple[float, float]]] = field(default_factory=dict)
    last_seq: int | None = None
    thinned_to_seq: int | None = None  # a daemon note: samples up to here are the day tier
    restart: SamplerRestartedEvidence | None = None  # the latest sampler restart (new run_id)
    # The latest event of the instance's watchdog: t, phase, action, deadline_t, ok, ...
    watchdog: dict[str, Any] | None = None
    # Per condition of the later modules (``held``, ``intruders``): their own
    # per-GPU memory of the stream, kept here so that each engine has its own.
    memo: dict[str, dict[int, Any]] = field(default_factory=dict)

    def gpus(self) -> list[int]:
        if self.hello is not None:
            return [g.index for g in self.hello.gpus]
        return sorted(self.row_by_gpu)


class GpuView:
    """One GPU's row of the current sample, with its nominal values (reused, not copied)."""

    __slots__ = ("gpu", "nominal", "pos", "row")

    def __init__(self) -> None:
        self.gpu = 0
        self.row: tuple[Value, ...] = ()
        self.pos: dict[str, int] = {}
        self.nominal: Mapping[str, Value] = {}

    def v(self, metric: str) -> Value:
        i = self.pos.get(metric)
        if i is None or i >= len(self.row):
            return None
        return self.row[i]

    def nom(self, key: str) -> Value:
        return self.nominal.get(key)


ConditionFn = Callable[[HostState, GpuView, float, Params], Any]


@dataclass(frozen=True)
class Condition:
    name: str
    scope: str
    triggers: frozenset[str]
    fn: ConditionFn
    params: Mapping[str, Any]
    multi: bool = False


CONDITIONS: dict[str, Condition] = {}


def condition(
    name: str, scope: str, triggers: tuple[str, ...], params: Mapping[str, Any], multi: bool = False
) -> Callable[[ConditionFn], ConditionFn]:
    def deco(fn: ConditionFn) -> ConditionFn:
        CONDITIONS[name] = Condition(name, scope, frozenset(triggers), fn, dict(params), multi)
        return fn

    return deco


def is_busy(g: GpuView, p: Params) -> bool | None:
    util = g.v("util_gpu_pct")
    if util is None:
        return None
    return util >= float(p.get("busy_util_pct", 50.0))


def row_value(h: HostState, gpu: int, metric: str) -> Value:
    row, i = h.row_by_gpu.get(gpu), h.pos.get(metric)
    if row is None or i is None or i >= len(row):
        return None
    return row[i]
