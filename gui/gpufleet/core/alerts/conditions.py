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

import fnmatch
import os
import statistics
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from gpufleet_sampler import protocol

from gpufleet.core.alerts import throttle
from gpufleet.core.alerts.clock_history import ClockHistory
from gpufleet.core.alerts.throttle import ThrottleShare, throttled_share
from gpufleet.core.config.hostconfig import HostConfig
from gpufleet.core.cost.idle import gpu_is_idle
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
    restart: dict[str, Any] | None = None  # the latest sampler restart (new run_id)
    # The latest event of the instance's watchdog: t, phase, action, deadline_t, ok, ...
    watchdog: dict[str, Any] | None = None
    # Per condition of the later modules (``alerts.held``, ``alerts.intruders``): their own
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


def _condition(
    name: str, scope: str, triggers: tuple[str, ...], params: Mapping[str, Any], multi: bool = False
) -> Callable[[ConditionFn], ConditionFn]:
    def deco(fn: ConditionFn) -> ConditionFn:
        CONDITIONS[name] = Condition(name, scope, frozenset(triggers), fn, dict(params), multi)
        return fn

    return deco


def _busy(g: GpuView, p: Params) -> bool | None:
    util = g.v("util_gpu_pct")
    if util is None:
        return None
    return util >= float(p.get("busy_util_pct", 50.0))


def _pct(a: float, b: float) -> float:
    return round(100.0 * a / b, 1) if b else 0.0


# --- clocks, power, temperature ------------------------------------------------------------


def clock_window(h: HostState, gpu: int, t0: float, t1: float) -> ThrottleShare | None:
    """The throttled share of one GPU over [t0, t1] from the engine's recent history (the
    same computation as the diagnosis, the evidence bundle and the Clocks tab)."""
    hist = h.clock_hist.get(gpu)
    cols = hist.window(t0, t1) if hist is not None else None
    if cols is None:
        return None
    t, reasons, viol_power, viol_thermal = cols
    return throttled_share(
        t,
        reasons,
        viol_power_pct=viol_power,
        viol_thermal_pct=viol_thermal,
        interval_s=h.interval_s,
    )


def _recent_bits(h: HostState, gpu: int, t: float, mask: int, window: float) -> bool:
    """True when a bit of ``mask`` was set in the last ``window`` seconds: a reason that
    flickers sample by sample (thermal slowdown often does) is one episode, not many."""
    hist = h.clock_hist.get(gpu)
    return hist is not None and hist.any_bits_since(t - window, mask)


def _clock_values(g: GpuView) -> dict[str, Any]:
    clock, cmax = g.v("sm_clock_mhz"), g.nom("sm_clock_max_mhz")
    return {
        "sm_clock_mhz": clock,
        "sm_clock_max_mhz": cmax,
        "clock_pct": _pct(clock, cmax) if clock is not None and cmax else None,
    }


@_condition(
    "thermal_throttle",
    GPU,
    ("sample",),
    {"mask": protocol.REASON_THERMAL_MASK, "flicker_s": 10.0},
)
def thermal_throttle(h: HostState, g: GpuView, t: float, p: Params) -> Answer:
    reasons = g.v("clock_reasons")
    if reasons is None:
        return HOLD
    if not int(reasons) & int(p["mask"]) and _recent_bits(
        h, g.gpu, t, int(p["mask"]), float(p["flicker_s"])
    ):
        return HOLD
    if int(reasons) & int(p["mask"]):
        return {
            "reasons": protocol.reason_labels(int(reasons) & int(p["mask"])),
            **_clock_values(g),
            "temp_gpu_c": g.v("temp_gpu_c"),
            "temp_slowdown_c": g.nom("temp_slowdown_c"),
            "viol_thermal_pct": g.v("viol_thermal_pct"),
        }
    return CLEAR


@_condition("hw_slowdown", GPU, ("sample",), {"mask": throttle.HW_SLOWDOWN_MASK, "flicker_s": 10.0})
def hw_slowdown(h: HostState, g: GpuView, t: float, p: Params) -> Answer:
    """HW slowdown (0x8) or HW power brake (0x80): the board's own protection signals,
    asserted by its power supply or an over-temperature input. Busy or not, a healthy
    GPU never shows them; they are the classic sign of a provider-side power or cooling
    fault."""
    reasons = g.v("clock_reasons")
    if reasons is None:
        return HOLD
    bits = int(reasons) & int(p["mask"])
    if bits == throttle.REASON_HW_SLOWDOWN and int(reasons) & throttle.THERMAL_MASK:
        # HW slowdown asserted with a thermal reason: the temperature is the cause, and
        # thermal_throttle says so. Alone, or with the power brake, it is this rule's.
        bits = 0
    if not bits and _recent_bits(h, g.gpu, t, int(p["mask"]), float(p["flicker_s"])):
        return HOLD
    if bits:
        return {
            "reasons": protocol.reason_labels(bits),
            "power_brake": bool(bits & throttle.REASON_HW_POWER_BRAKE),
            **_clock_values(g),
            "util_gpu_pct": g.v("util_gpu_pct"),
            "temp_gpu_c": g.v("temp_gpu_c"),
            "temp_slowdown_c": g.nom("temp_slowdown_c"),
            "power_w": g.v("power_w"),
            "power_limit_w": g.v("power_limit_w"),
            "viol_power_pct": g.v("viol_power_pct"),
        }
    return CLEAR


@_condition(
    "clock_setting_low",
    GPU,
    ("sample",),
    {"mask": throttle.SETTING_MASK, "busy_util_pct": 80.0, "below_frac": 0.85},
)
def clock_setting_low(h: HostState, g: GpuView, t: float, p: Params) -> Answer:
    """Busy, well under the max clock, held there by a setting: applications clocks set
    below the maximum (nvidia-smi -ac), a sync boost group, or the display clock. Each is
    deliberate, but on a rented GPU it is someone else's choice and costs you speed."""
    busy = _busy(g, p)
    clock, cmax = g.v("sm_clock_mhz"), g.nom("sm_clock_max_mhz")
    reasons = g.v("clock_reasons")
    if busy is None or clock is None or not cmax or reasons is None:
        return HOLD
    bits = int(reasons) & int(p["mask"])
    limited = int(reasons) & throttle.THROTTLE_MASK
    if busy and bits and not limited and clock < float(p["below_frac"]) * cmax:
        return {
            "reasons": protocol.reason_labels(bits),
            **_clock_values(g),
            "util_gpu_pct": g.v("util_gpu_pct"),
        }
    if not bits or clock >= float(p["below_frac"]) * cmax:
        return CLEAR
    return HOLD


def _limit_and_default(g: GpuView) -> tuple[Value, Value]:
    limit = g.v("power_limit_w")
    if limit is None:
        limit = g.nom("power_enforced_w")
    return limit, g.nom("power_default_w")


@_condition("power_limit_low", GPU, ("sample",), {"below_frac": 0.95, "binding_frac": 0.9})
def power_limit_low(h: HostState, g: GpuView, t: float, p: Params) -> Answer:
    """An enforced limit under the default. Whether it slows the job now depends on the
    draw: "binding" when the power-cap bit is set or the card draws near the limit."""
    limit, default = _limit_and_default(g)
    if limit is None or not default:
        return HOLD
    if limit < float(p["below_frac"]) * default:
        power = g.v("power_w")
        cap = bool(int(g.v("clock_reasons") or 0) & REASON_POWER_CAP)
        binding = cap or (power is not None and power >= float(p["binding_frac"]) * limit)
        return {
            "power_limit_w": limit,
            "power_default_w": default,
            "limit_pct": _pct(limit, default),
            "power_w": power,
            "power_cap_active": cap,
            "binding": binding,
            **_clock_values(g),
        }
    return CLEAR


@_condition("power_cap_active", GPU, ("sample",), {"busy_util_pct": 50.0, "below_frac": 0.95})
def power_cap_active(h: HostState, g: GpuView, t: float, p: Params) -> Answer:
    """The power-cap bit while busy at the default limit: working as designed, a note."""
    reasons = g.v("clock_reasons")
    busy = _busy(g, p)
    if reasons is None or busy is None:
        return HOLD
    limit, default = _limit_and_default(g)
    if limit is not None and default and limit < float(p["below_frac"]) * default:
        return CLEAR  # power_limit_low is the finding then
    if busy and int(reasons) & REASON_POWER_CAP:
        return {
            "power_w": g.v("power_w"),
            "power_limit_w": limit,
            "power_default_w": default,
            **_clock_values(g),
            "viol_power_pct": g.v("viol_power_pct"),
        }
    return CLEAR


@_condition("clocks_below_nominal", GPU, ("sample",), {"busy_util_pct": 80.0, "below_frac": 0.85})
def clocks_below_nominal(h: HostState, g: GpuView, t: float, p: Params) -> Answer:
    """Busy, clocks well under the max, and no reason reported: an invisible cap (often a
    host-side limit that a virtualized guest cannot see). Every reason but "GPU idle" has
    a rule of its own, so any of them explains the clock here."""
    busy = _busy(g, p)
    clock, cmax = g.v("sm_clock_mhz"), g.nom("sm_clock_max_mhz")
    if busy is None or clock is None or not cmax:
        return HOLD
    reasons = g.v("clock_reasons")
    explained = reasons is not None and int(reasons) & REASON_EXPLAINING_MASK
    if busy and not explained and clock < float(p["below_frac"]) * cmax:
        return {
            "sm_clock_mhz": clock,
            "sm_clock_max_mhz": cmax,
            "clock_pct": _pct(clock, cmax),
            "util_gpu_pct": g.v("util_gpu_pct"),
            "reasons_reported": reasons is not None,
            "temp_gpu_c": g.v("temp_gpu_c"),
            "power_w": g.v("power_w"),
        }
    return CLEAR


def _near(value: Value, limit: Value, p: Params) -> Answer:
    if value is None or not limit:
        return HOLD
    fire_at = limit - float(p["margin_c"])
    if value >= fire_at:
        return {"temp_c": value, "limit_c": limit, "fire_at_c": fire_at, "over": value >= limit}
    if value <= fire_at - float(p["hysteresis_c"]):
        return CLEAR
    return HOLD


@_condition("temp_near_slowdown", GPU, ("sample",), {"margin_c": 5.0, "hysteresis_c": 3.0})
def temp_near_slowdown(h: HostState, g: GpuView, t: float, p: Params) -> Answer:
    return _near(g.v("temp_gpu_c"), g.nom("temp_slowdown_c"), p)


@_condition("mem_temp_near_max", GPU, ("sample",), {"margin_c": 5.0, "hysteresis_c": 3.0})
def mem_temp_near_max(h: HostState, g: GpuView, t: float, p: Params) -> Answer:
    """Within ``margin_c`` of the memory's own limit (NVML's MEM_MAX threshold), below it:
    at or over the limit, ``mem_temp_high`` speaks instead."""
    temp, limit = g.v("temp_mem_c"), g.nom("temp_mem_max_c")
    if temp is not None and limit and temp >= limit:
        return CLEAR
    return _near(temp, limit, p)


@_condition(
    "mem_temp_high",
    GPU,
    ("sample",),
    {"above_c": 100.0, "clear_below_c": 95.0, "hysteresis_c": 3.0},
)
def mem_temp_high(h: HostState, g: GpuView, t: float, p: Params) -> Answer:
    """Memory at or over its own limit where the GPU reports one (NVML's MEM_MAX
    threshold: 95 °C on an H200), else over ``above_c`` (the guide's 100 °C for GDDR6X)."""
    temp = g.v("temp_mem_c")
    if temp is None:
        return HOLD  # not reported (GDDR6X boards): nothing to say
    limit = g.nom("temp_mem_max_c")
    if limit:
        fire_at, clear_at = float(limit), float(limit) - float(p["hysteresis_c"])
    else:
        fire_at, clear_at = float(p["above_c"]), float(p["clear_below_c"])
    if temp >= fire_at if limit else temp > fire_at:
        return {
            "temp_mem_c": temp,
            "limit_c": limit,
            "above_c": fire_at,
            "own_limit": bool(limit),
            "util_gpu_pct": g.v("util_gpu_pct"),
        }
    if temp <= clear_at:
        return CLEAR
    return HOLD


# --- idle while billed -------------------------------------------------------------------


@_condition("idle_billed", HOST, ("sample",), {"util_below_pct": 5.0, "mem_below_frac": 0.10})
def idle_billed(h: HostState, g: GpuView, t: float, p: Params) -> Answer:
    rows = h.row_by_gpu
    iu, im = h.pos.get("util_gpu_pct"), h.pos.get("mem_used_bytes")
    if not rows or iu is None:
        return HOLD
    util_max: float = 0.0
    mem_frac_max: float | None = None
    il = h.pos.get("lost")
    for gpu, row in rows.items():
        if il is not None and row[il]:
            continue  # a lost GPU does no work: it counts as idle (and still costs)
        util = row[iu]
        mem = row[im] if im is not None else None
        total = h.nominal.get(gpu, {}).get("mem_total_bytes")
        if not gpu_is_idle(util, mem, total, p):
            return CLEAR  # one busy (or unknown) GPU is enough: the host is working
        util_max = max(util_max, float(util or 0))
        if mem is not None and total:
            mem_frac_max = max(mem_frac_max or 0.0, mem / total)
    return {
        "gpus": len(rows),
        "util_max_pct": util_max,
        "mem_used_max_frac": None if mem_frac_max is None else round(mem_frac_max, 4),
        "util_below_pct": p["util_below_pct"],
        "mem_below_frac": p["mem_below_frac"],
    }


def _row_v(h: HostState, gpu: int, metric: str) -> Value:
    row, i = h.row_by_gpu.get(gpu), h.pos.get(metric)
    if row is None or i is None or i >= len(row):
        return None
    return row[i]


# --- processes -----------------------------------------------------------------------------


def proc_names(proc: Proc) -> list[str]:
    """The names a process is known by: its comm and its command's program name."""
    names = []
    if proc.name:
        names.append(proc.name.lower())
    if proc.cmd:
        first = proc.cmd.split()[0] if proc.cmd.split() else ""
        base = os.path.basename(first).lower()
        if base and base not in names:
            names.append(base)
    return names


def _matches(proc: Proc, patterns: tuple[str, ...] | list[str]) -> bool:
    names = proc_names(proc)
    return any(fnmatch.fnmatchcase(n, pat.lower()) for n in names for pat in patterns)


def _proc_evidence(procs: list[Proc]) -> list[dict[str, Any]]:
    return [
        {"pid": p.pid, "name": p.name, "user": p.user, "mem_bytes": p.mem_bytes, "cmd": p.cmd}
        for p in procs
    ]


def _allowed(h: HostState, p: Params) -> list[str]:
    allowed = list(p.get("allowed", ()))
    if h.cfg is not None:
        allowed.extend(h.cfg.allowed_processes)
    return allowed


@_condition("foreign_process", GPU, ("procs",), {"allowed": []})
def foreign_process(h: HostState, g: GpuView, t: float, p: Params) -> Answer:
    """A process not in the host's allow-list (only when the host has one)."""
    allowed = _allowed(h, p)
    if not allowed:
        return HOLD
    strays = [
        pr
        for pr in h.procs.get(g.gpu, ())
        if not _matches(pr, allowed) and not _matches(pr, MINER_NAMES)
    ]
    if strays:
        return {"processes": _proc_evidence(strays), "allowed": allowed}
    return CLEAR


@_condition("miner_process", GPU, ("procs",), {"names": list(MINER_NAMES)})
def miner_process(h: HostState, g: GpuView, t: float, p: Params) -> Answer:
    allowed = _allowed(h, {})
    names = [str(n).lower() for n in p["names"]]
    found = []
    for pr in h.procs.get(g.gpu, ()):
        # Only the name that looks like a miner can be allowed: allowing "python" must not
        # let "python ./xmrig" through.
        hits = [n for n in proc_names(pr) if any(fnmatch.fnmatchcase(n, m) for m in names)]
        stratum = bool(pr.cmd and "stratum+" in pr.cmd)
        allowed_hit = any(fnmatch.fnmatchcase(n, a.lower()) for n in hits for a in allowed)
        if (hits or stratum) and not allowed_hit:
            found.append(pr)
    if found:
        return {"processes": _proc_evidence(found)}
    return CLEAR


@_condition("p8_with_process", GPU, ("sample", "procs"), {"pstate_min": 8})
def p8_with_process(h: HostState, g: GpuView, t: float, p: Params) -> Answer:
    """A low-power P-state while a process is working on the GPU (a driver or job problem).

    "Working" = the GPU reports some utilization or a process some SM share: a Jupyter kernel
    that only holds memory legitimately sits in P8."""
    pstate = g.v("pstate")
    if pstate is None or not g.row:
        return HOLD
    procs = h.procs.get(g.gpu, ())
    util = g.v("util_gpu_pct") or 0
    active = util >= 1 or any((pr.sm_pct or 0) >= 1 for pr in procs)
    if pstate >= int(p["pstate_min"]) and procs and active:
        return {
            "pstate": pstate,
            "util_gpu_pct": g.v("util_gpu_pct"),
            "sm_clock_mhz": g.v("sm_clock_mhz"),
            "processes": _proc_evidence(list(procs)),
        }
    return CLEAR


# --- memory errors, Xid, lost GPU ----------------------------------------------------------


@_condition("ecc_dbe_increase", GPU, ("sample", "event"), {"hold_s": EVENT_HOLD_S})
def ecc_dbe_increase(h: HostState, g: GpuView, t: float, p: Params) -> Answer:
    jump = h.dbe_jump.get(g.gpu)
    if jump is None:
        return CLEAR
    jt, before, after = jump
    if t - jt <= float(p["hold_s"]):
        return {"ecc_dbe_before": before, "ecc_dbe_after": after, "at_t": jt}
    return CLEAR


def _flag(column: str) -> ConditionFn:
    def fn(h: HostState, g: GpuView, t: float, p: Params) -> Answer:
        v = g.v(column)
        if v is None:
            return HOLD
        return {column: v} if v else CLEAR

    return fn


_condition("remap_pending", GPU, ("sample",), {})(_flag("remap_pending"))
_condition("remap_failed", GPU, ("sample",), {})(_flag("remap_failed"))
_condition("retired_pending", GPU, ("sample",), {})(_flag("retired_pending"))


@_condition(
    "xid",
    GPU,
    ("sample", "event"),
    {"hold_s": EVENT_HOLD_S, "critical_codes": list(XID_CRITICAL), "ignore_codes": []},
    multi=True,
)
def xid(h: HostState, g: GpuView, t: float, p: Params) -> list[tuple[str, Answer]]:
    seen = h.xids.get(g.gpu)
    if not seen:
        return []
    out: list[tuple[str, Answer]] = []
    critical = set(p["critical_codes"])
    ignore = set(p["ignore_codes"])
    hold = float(p["hold_s"])
    for code, x in seen.items():
        if code in ignore:
            continue
        if t - x.last_t <= hold:
            ans: Answer = {
                "xid": code,
                "count": x.count,
                "first_t": x.first_t,
                "last_t": x.last_t,
                "message": x.message,
                "critical": code in critical,
                "_severity": "critical" if code in critical else "warning",
            }
        else:
            ans = CLEAR
        out.append((str(code), ans))
    return out


@_condition("gpu_lost", GPU, ("sample", "event"), {})
def gpu_lost(h: HostState, g: GpuView, t: float, p: Params) -> Answer:
    lost = g.v("lost")
    if lost or g.gpu in h.lost_t:
        return {"lost_since_t": h.lost_t.get(g.gpu, t)}
    return CLEAR if lost is not None else HOLD


# --- memory held by nothing visible ------------------------------------------------------


@_condition(
    "mem_unaccounted",
    GPU,
    ("sample", "procs"),
    {"min_bytes": float(2 << 30), "min_frac": 0.03, "procs_age_s": 30.0},
)
def mem_unaccounted(h: HostState, g: GpuView, t: float, p: Params) -> Answer:
    """Memory in use that no listed process holds (used - sum of the processes' memory):
    another tenant's job, a hidden reservation of the virtualization layer, or a context
    leaked by a killed process. A top cause of out-of-memory errors on rented cards.

    Judged only against a recent process snapshot (the day tier keeps snapshots only when
    the process set changes, so their memory figures go stale)."""
    if not h.procs_seen or h.procs_t is None or t - h.procs_t > float(p["procs_age_s"]):
        return HOLD
    used, total = g.v("mem_used_bytes"), g.nom("mem_total_bytes")
    if used is None or not total:
        return HOLD
    procs = h.procs.get(g.gpu, ())
    if any(pr.mem_bytes is None for pr in procs):
        return HOLD  # a process whose memory the driver does not report
    held = float(sum(int(pr.mem_bytes or 0) for pr in procs))
    hidden = float(used) - held
    threshold = max(float(p["min_bytes"]), float(p["min_frac"]) * float(total))
    if hidden >= threshold:
        return {
            "mem_used_bytes": used,
            "mem_procs_bytes": held,
            "mem_hidden_bytes": hidden,
            "mem_total_bytes": total,
            "hidden_frac": round(hidden / float(total), 4),
            "processes": _proc_evidence(list(procs)),
        }
    if hidden < 0.5 * threshold:
        return CLEAR
    return HOLD


# --- PCIe and NVLink -----------------------------------------------------------------------


@_condition("pcie_downtrained", GPU, ("sample",), {"busy_util_pct": 50.0, "pstate_max": 2})
def pcie_downtrained(h: HostState, g: GpuView, t: float, p: Params) -> Answer:
    """Link below its max while busy. Idle GPUs drop to Gen1 on purpose (P8), so idle
    moments neither fire nor clear."""
    gen, width = g.v("pcie_gen"), g.v("pcie_width")
    max_gen, max_width = g.nom("pcie_max_gen"), g.nom("pcie_max_width")
    busy, pstate = _busy(g, p), g.v("pstate")
    if gen is None or width is None or not max_gen or not max_width or not busy:
        return HOLD
    if pstate is not None and pstate > int(p["pstate_max"]):
        return HOLD
    if gen < max_gen or width < max_width:
        return {
            "pcie_gen": gen,
            "pcie_width": width,
            "pcie_max_gen": max_gen,
            "pcie_max_width": max_width,
            "util_gpu_pct": g.v("util_gpu_pct"),
        }
    return CLEAR


@_condition("pcie_replays", GPU, ("sample",), {"min_replays": 100.0, "window_s": 600.0})
def pcie_replays(h: HostState, g: GpuView, t: float, p: Params) -> Answer:
    """The PCIe replay counter rising: link-level retransmissions (signal integrity, a bad
    riser or slot). A healthy link replays rarely, if ever; judged on the rise over
    ``window_s``, not on the count since boot."""
    now = g.v("pcie_replays")
    hist = h.pcie_replays.get(g.gpu)
    if now is None or not hist:
        return HOLD
    window = float(p["window_s"])
    base = hist[0]
    for pt in hist:
        if pt[0] <= t - window:
            base = pt
        else:
            break
    rise = float(now) - base[1]
    if rise >= float(p["min_replays"]):
        return {
            "pcie_replays": now,
            "replays_rise": rise,
            "from_t": base[0],
            "window_s": window,
            "pcie_gen": g.v("pcie_gen"),
            "pcie_width": g.v("pcie_width"),
        }
    if rise < 1:
        return CLEAR
    return HOLD


@_condition("nvlink_down", GPU, ("sample",), {})
def nvlink_down(h: HostState, g: GpuView, t: float, p: Params) -> Answer:
    links, up = g.nom("nvlink_links"), g.v("nvlink_up")
    if not links or up is None:
        return HOLD
    if up < links:
        return {"nvlink_up": up, "nvlink_links": links}
    return CLEAR


@_condition(
    "nvlink_slow",
    GPU,
    ("sample",),
    {
        "min_traffic_bps": 1e9,
        "below_frac": 0.5,
        "clear_frac": 0.75,
        "lane_below_frac": 0.1,
        "errors_min": 100.0,
        "errors_window_s": 600.0,
    },
)
def nvlink_slow(h: HostState, g: GpuView, t: float, p: Params) -> Answer:
    """NVLink judged against what the job asks, never against nominal alone: an all-reduce
    that carries 35 % of nominal on every GPU is a normal job. It fires when this GPU
    carries under half what the host's other NVLink GPUs carry (smoothed over a minute),
    when one of its links that is up carries next to nothing while its other links are
    busy (a dead lane), or when its NVLink error counters (CRC, replay, recovery) rise."""
    links = g.nom("nvlink_links")
    if not links:
        return HOLD
    judged = False
    found: dict[str, Any] | None = None
    mine = h.nvlink_ema.get(g.gpu)
    peers = [v for k, v in h.nvlink_ema.items() if k != g.gpu]
    min_traffic = float(p["min_traffic_bps"])
    if mine is not None and peers:
        ref = statistics.median(peers)
        if ref >= min_traffic:
            if mine < float(p["below_frac"]) * ref:
                found = {
                    "variant": "peers",
                    "nvlink_bps": round(mine),
                    "peers_bps": round(ref),
                    "peers": len(peers),
                    "peer_frac": round(mine / ref, 3),
                }
            elif mine >= float(p["clear_frac"]) * ref:
                judged = True
    lr = h.links.get(g.gpu)
    lanes_ok = False
    if found is None and lr is not None:
        per: list[tuple[int, float]] = []
        for i, up in enumerate(lr.up):
            tx = lr.tx_bps[i] if i < len(lr.tx_bps) else None
            rx = lr.rx_bps[i] if i < len(lr.rx_bps) else None
            if up and (tx is not None or rx is not None):
                per.append((i, max(float(tx or 0.0), float(rx or 0.0))))
        total = sum(v for _, v in per)
        if len(per) >= 2 and total >= min_traffic:
            med = statistics.median(v for _, v in per)
            dead = [i for i, v in per if v < float(p["lane_below_frac"]) * med]
            if dead:
                found = {
                    "variant": "lane",
                    "links_slow": dead,
                    "nvlink_bps": round(total),
                    "link_median_bps": round(med),
                    "nvlink_up": len(per),
                }
            else:
                judged = True
                lanes_ok = True
    errs = h.nvlink_errors.get(g.gpu)
    if errs:
        window = float(p["errors_window_s"])
        while errs and errs[0][0] < t - window:
            errs.popleft()
    # Each entry is (time, new errors) from one of the sampler's nvlink events.
    n_err = float(sum(n for _, n in errs)) if errs else 0.0
    if found is None and n_err >= float(p["errors_min"]):
        found = {"variant": "errors", "errors": int(n_err), "window_s": p["errors_window_s"]}
    if found is not None:
        found.setdefault("nvlink_errors", int(n_err))
        found["nvlink_links"] = links
        return found
    if lr is not None and not lanes_ok:
        return HOLD  # the lanes cannot be judged now (little traffic): neither way
    return CLEAR if judged else HOLD


# --- host-level: link, sampler, budget -----------------------------------------------------

UNREACHABLE_STATES: Final = frozenset({"reconnecting", "failed"})


@_condition("host_unreachable", HOST, ("status", "tick"), {})
def host_unreachable(h: HostState, g: GpuView, t: float, p: Params) -> Answer:
    if h.status in UNREACHABLE_STATES:
        return {"status": h.status, "reason": h.status_reason, "since_t": h.status_since}
    if h.status in ("streaming", "stopped"):
        return CLEAR
    return HOLD


@_condition("sampler_stalled", HOST, ("tick", "sample"), {"stall_s": 30.0, "stall_intervals": 5.0})
def sampler_stalled(h: HostState, g: GpuView, t: float, p: Params) -> Answer:
    """No sample for a while although the link is up and the sampler did not restart.

    Live, the fleet calls ``RuleEngine.tick(now)``: ``now`` and the arrival times are the
    laptop's clock, so a skewed clock on the host cannot fake a stall. A gap inside a stream
    (a replay) is judged by the engine when the next sample arrives: it is a stall only when
    the sampler produced nothing in between (its ``seq`` barely moved); a gap that the
    sequence numbers span was recorded but not delivered (a disconnect, the daemon's
    thinned day tier), and a new ``run_id`` is a restart. Any sample clears."""
    if h.trigger == "sample":
        return CLEAR
    if h.last_arrival_t is None or h.status != "streaming":
        return HOLD
    gap = t - h.last_arrival_t
    if gap > stall_threshold(h, p):
        return {"last_sample_t": h.last_sample_t, "gap_s": round(gap, 1)}
    return CLEAR


@_condition("sampler_restarted", HOST, ("sample",), {"hold_s": 600.0})
def sampler_restarted(h: HostState, g: GpuView, t: float, p: Params) -> Answer:
    """The sampler started a new run (a new ``run_id`` in a new ``hello``): the daemon or
    the host restarted, or a plain ``stream`` sampler was started again. A note, shown for
    ``hold_s``: what was not recorded before the restart is gone."""
    r = h.restart
    if r is None or r.get("first_t") is None:
        return CLEAR
    if t - float(r["first_t"]) <= float(p["hold_s"]):
        return dict(r)
    return CLEAR


# After its deadline, a watchdog that said it would act and said nothing more (cancelled
# from the laptop, its daemon gone with the instance) is no longer taken at its word.
WATCHDOG_LATE_S = 300.0


@_condition("watchdog", HOST, ("event", "sample", "tick"), {"on": "pending", "hold_s": 3600.0})
def watchdog(h: HostState, g: GpuView, t: float, p: Params) -> Answer:
    """What the instance's own watchdog said last, as one of three states a rule asks for
    (``on``): ``pending`` (the host was idle while billed; it will act at its deadline
    unless cancelled or the host works again), ``done`` (it acted: the instance stopped,
    powered off or the user's command ran) and ``failed`` (its action did not work: the
    instance is still billed). Works while the laptop was asleep: the events wait in the
    daemon's ring and arrive on reconnect. ``done`` and ``failed`` are held ``hold_s``."""
    w = h.watchdog
    if w is None:
        return CLEAR
    phase = w.get("phase")
    if phase == "pending":
        state = "pending"
    elif phase == "done":
        state = "done" if w.get("ok") else "failed"
    else:
        return CLEAR
    if state != p["on"]:
        return CLEAR
    ev_t = float(w.get("t") or t)
    deadline = w.get("deadline_t")
    if state == "pending":
        until = float(deadline) + WATCHDOG_LATE_S if isinstance(deadline, (int, float)) else ev_t
        if t > until:
            return CLEAR
    elif t - ev_t > float(p["hold_s"]):
        return CLEAR
    return {
        "state": state,
        "action": w.get("action"),
        "deadline_t": deadline,
        "dry_run": bool(w.get("dry_run")),
        "outcome": w.get("outcome"),
        "message": w.get("message"),
        "event_t": ev_t,
    }


def stall_threshold(h: HostState, p: Params) -> float:
    return max(float(p["stall_s"]), float(p["stall_intervals"]) * h.interval_s)


@_condition("budget", HOST, ("sample",), {"frac": 0.8})
def budget(h: HostState, g: GpuView, t: float, p: Params) -> Answer:
    if h.budget_frac is None:
        return HOLD
    if h.budget_frac >= float(p["frac"]):
        return {
            "budget_frac": round(h.budget_frac, 4),
            "budget_used": h.budget_used,
            "budget": h.cfg.budget if h.cfg else None,
            "threshold_frac": p["frac"],
        }
    return CLEAR


# --- memory against its own capacity (a MIG slice: the slice's) ---------------------------


@_condition(
    "mem_nearly_full",
    GPU,
    ("sample",),
    {"above_frac": 0.90, "clear_below_frac": 0.85, "slices_only": False},
)
def mem_nearly_full(h: HostState, g: GpuView, t: float, p: Params) -> Answer:
    """Memory used over a share of the GPU's own capacity. A MIG slice is judged against its
    own size (10 GB of a 1g.10gb slice), not the card's; with ``slices_only`` whole cards are
    left alone (a framework's caching allocator holds most of a card on purpose)."""
    info = h.hello.gpu(g.gpu) if h.hello is not None else None
    mig = info.extra.get(protocol.MIG_KEY) if info is not None else None
    if p.get("slices_only") and not isinstance(mig, Mapping):
        return HOLD
    used, total = g.v("mem_used_bytes"), g.nom("mem_total_bytes")
    if used is None or not total:
        return HOLD
    frac = float(used) / float(total)
    if frac >= float(p["above_frac"]):
        card_frac = None
        if isinstance(mig, Mapping) and isinstance(mig.get("parent"), int):
            parent = int(mig["parent"])
            pu = _row_v(h, parent, "mem_used_bytes")
            pt = h.nominal.get(parent, {}).get("mem_total_bytes")
            card_frac = round(float(pu) / float(pt), 4) if pu is not None and pt else None
        return {
            "mem_used_bytes": used,
            "mem_total_bytes": total,
            "used_frac": round(frac, 4),
            "card_frac": card_frac,
            "mig_profile": mig.get("profile") if isinstance(mig, Mapping) else None,
        }
    if frac < float(p["clear_below_frac"]):
        return CLEAR
    return HOLD


# --- generic, for the user's own rules -----------------------------------------------------


@_condition("metric_above", GPU, ("sample",), {"metric": "", "above": 0.0, "clear_below": 0.0})
def metric_above(h: HostState, g: GpuView, t: float, p: Params) -> Answer:
    v = g.v(str(p["metric"]))
    if v is None:
        return HOLD
    if v > float(p["above"]):
        return {"metric": p["metric"], "value": v, "above": p["above"]}
    if v <= float(p["clear_below"]):
        return CLEAR
    return HOLD


@_condition("metric_below", GPU, ("sample",), {"metric": "", "below": 0.0, "clear_above": 0.0})
def metric_below(h: HostState, g: GpuView, t: float, p: Params) -> Answer:
    v = g.v(str(p["metric"]))
    if v is None:
        return HOLD
    if v < float(p["below"]):
        return {"metric": p["metric"], "value": v, "below": p["below"]}
    if v >= float(p["clear_above"]):
        return CLEAR
    return HOLD
