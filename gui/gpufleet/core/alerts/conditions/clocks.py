"""Conditions on clocks, power and temperature: throttling, slowdowns, low power limits,
clocks under nominal, temperatures near their limits."""

from __future__ import annotations

from gpufleet_sampler import protocol

from gpufleet.core.alerts import throttle
from gpufleet.core.alerts.conditions.base import (
    CLEAR,
    GPU,
    HOLD,
    REASON_EXPLAINING_MASK,
    REASON_POWER_CAP,
    GpuView,
    HostState,
    Params,
    condition,
    is_busy,
)
from gpufleet.core.alerts.throttle import ThrottleShare, throttled_share
from gpufleet.core.model.evidence import (
    ClocksBelowNominalEvidence,
    ClockSettingLowEvidence,
    ClockValues,
    HwSlowdownEvidence,
    MemTempHighEvidence,
    NearLimitEvidence,
    PowerCapActiveEvidence,
    PowerLimitLowEvidence,
    ThermalThrottleEvidence,
)
from gpufleet.core.wire.messages import Value


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


def _clock_values(g: GpuView) -> ClockValues:
    clock, cmax = g.v("sm_clock_mhz"), g.nom("sm_clock_max_mhz")
    return {
        "sm_clock_mhz": clock,
        "sm_clock_max_mhz": cmax,
        "clock_pct": _pct(clock, cmax) if clock is not None and cmax else None,
    }


@condition(
    "thermal_throttle",
    GPU,
    ("sample",),
    {"mask": protocol.REASON_THERMAL_MASK, "flicker_s": 10.0},
)
def thermal_throttle(
    h: HostState, g: GpuView, t: float, p: Params
) -> ThermalThrottleEvidence | int:
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


@condition("hw_slowdown", GPU, ("sample",), {"mask": throttle.HW_SLOWDOWN_MASK, "flicker_s": 10.0})
def hw_slowdown(h: HostState, g: GpuView, t: float, p: Params) -> HwSlowdownEvidence | int:
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


@condition(
    "clock_setting_low",
    GPU,
    ("sample",),
    {"mask": throttle.SETTING_MASK, "busy_util_pct": 80.0, "below_frac": 0.85},
)
def clock_setting_low(
    h: HostState, g: GpuView, t: float, p: Params
) -> ClockSettingLowEvidence | int:
    """Busy, well under the max clock, held there by a setting: applications clocks set
    below the maximum (nvidia-smi -ac), a sync boost group, or the display clock. Each is
    deliberate, but on a rented GPU it is someone else's choice and costs you speed."""
    busy = is_busy(g, p)
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


@condition("power_limit_low", GPU, ("sample",), {"below_frac": 0.95, "binding_frac": 0.9})
def power_limit_low(h: HostState, g: GpuView, t: float, p: Params) -> PowerLimitLowEvidence | int:
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


@condition("power_cap_active", GPU, ("sample",), {"busy_util_pct": 50.0, "below_frac": 0.95})
def power_cap_active(h: HostState, g: GpuView, t: float, p: Params) -> PowerCapActiveEvidence | int:
    """The power-cap bit while busy at the default limit: working as designed, a note."""
    reasons = g.v("clock_reasons")
    busy = is_busy(g, p)
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


@condition("clocks_below_nominal", GPU, ("sample",), {"busy_util_pct": 80.0, "below_frac": 0.85})
def clocks_below_nominal(
    h: HostState, g: GpuView, t: float, p: Params
) -> ClocksBelowNominalEvidence | int:
    """Busy, clocks well under the max, and no reason reported: an invisible cap (often a
    host-side limit that a virtualized guest cannot see). Every reason but "GPU idle" has
    a rule of its own, so any of them explains the clock here."""
    busy = is_busy(g, p)
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


def _near(value: Value, limit: Value, p: Params) -> NearLimitEvidence | int:
    if value is None or not limit:
        return HOLD
    fire_at = limit - float(p["margin_c"])
    if value >= fire_at:
        return {"temp_c": value, "limit_c": limit, "fire_at_c": fire_at, "over": value >= limit}
    if value <= fire_at - float(p["hysteresis_c"]):
        return CLEAR
    return HOLD


@condition("temp_near_slowdown", GPU, ("sample",), {"margin_c": 5.0, "hysteresis_c": 3.0})
def temp_near_slowdown(h: HostState, g: GpuView, t: float, p: Params) -> NearLimitEvidence | int:
    return _near(g.v("temp_gpu_c"), g.nom("temp_slowdown_c"), p)


@condition("mem_temp_near_max", GPU, ("sample",), {"margin_c": 5.0, "hysteresis_c": 3.0})
def mem_temp_near_max(h: HostState, g: GpuView, t: float, p: Params) -> NearLimitEvidence | int:
    """Within ``margin_c`` of the memory's own limit (NVML's MEM_MAX threshold), below it:
    at or over the limit, ``mem_temp_high`` speaks instead."""
    temp, limit = g.v("temp_mem_c"), g.nom("temp_mem_max_c")
    if temp is not None and limit and temp >= limit:
        return CLEAR
    return _near(temp, limit, p)


@condition(
    "mem_temp_high",
    GPU,
    ("sample",),
    {"above_c": 100.0, "clear_below_c": 95.0, "hysteresis_c": 3.0},
)
def mem_temp_high(h: HostState, g: GpuView, t: float, p: Params) -> MemTempHighEvidence | int:
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
