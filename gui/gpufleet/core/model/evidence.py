"""What each built-in condition puts in its alert's evidence ``values``, one record each.

A condition that holds answers a dict of values; the engine stores it as
``alert.evidence["values"]``, and the sentences, the verdicts and the GUI read it back,
from a live alert or from a record of the history store or a bundle (JSON). Read as a bare
``Mapping[str, Any]``, each reader guessed which condition's key it had
(``v.get("power_limit_w", v.get("limit_c"))``). Here each condition's values are one
TypedDict: the condition builds it (mypy checks every key and type), the readers take it
with ``values_of(alert, Record)`` and read the fields that record has.

TypedDicts are dicts at run time: the JSON stored and exported keeps its shape, and an old
record reads as it did (readers use ``.get``: a record from an older version may lack a
key). A condition not named in ``RECORDS`` (a user's, or one being written) may still
answer a plain mapping; its readers see ``Mapping[str, Any]``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NotRequired, TypedDict, TypeVar, cast

from gpufleet.core.model.alert import Alert

Value = float | int | None  # as gpufleet.core.wire.messages.Value (model imports no wire)


class ProcEvidence(TypedDict):
    """A process named in the evidence (``processes``)."""

    pid: int
    name: str | None
    user: str | None
    mem_bytes: int | None
    cmd: str | None


# ----------------------------------------------------------------------------- clocks


class ClockValues(TypedDict):
    """The clock now and its max: every clock condition says them."""

    sm_clock_mhz: Value
    sm_clock_max_mhz: Value
    clock_pct: float | None


class ThermalThrottleEvidence(ClockValues):
    reasons: list[str]
    temp_gpu_c: Value
    temp_slowdown_c: Value
    viol_thermal_pct: Value


class HwSlowdownEvidence(ClockValues):
    reasons: list[str]
    power_brake: bool
    util_gpu_pct: Value
    temp_gpu_c: Value
    temp_slowdown_c: Value
    power_w: Value
    power_limit_w: Value
    viol_power_pct: Value


class ClockSettingLowEvidence(ClockValues):
    reasons: list[str]
    util_gpu_pct: Value


class PowerLimitLowEvidence(ClockValues):
    power_limit_w: float
    power_default_w: float
    limit_pct: float | None
    power_w: Value
    power_cap_active: bool
    binding: bool


class PowerCapActiveEvidence(ClockValues):
    power_w: Value
    power_limit_w: Value
    power_default_w: Value
    viol_power_pct: Value


class ClocksBelowNominalEvidence(ClockValues):
    util_gpu_pct: Value
    reasons_reported: bool
    temp_gpu_c: Value
    power_w: Value


class NearLimitEvidence(TypedDict):
    """``temp_near_slowdown`` (the GPU's temperature) and ``mem_temp_near_max`` (its
    memory's), each against its own limit."""

    temp_c: float | int
    limit_c: float | int
    fire_at_c: float
    over: bool


class MemTempHighEvidence(TypedDict):
    temp_mem_c: float | int
    limit_c: Value
    above_c: float
    own_limit: bool
    util_gpu_pct: Value


# ----------------------------------------------------------------------------- faults


class EccDbeEvidence(TypedDict):
    ecc_dbe_before: float
    ecc_dbe_after: float
    at_t: float


class XidEvidence(TypedDict):
    xid: int
    count: int
    first_t: float
    last_t: float
    message: str
    critical: bool
    _severity: NotRequired[str]  # taken out by the engine: the alert's severity


class GpuLostEvidence(TypedDict):
    lost_since_t: float


class MemUnaccountedEvidence(TypedDict):
    mem_used_bytes: float | int
    mem_procs_bytes: float
    mem_hidden_bytes: float
    mem_total_bytes: float | int
    hidden_frac: float
    processes: list[ProcEvidence]


# ----------------------------------------------------------------------------- links


class PcieDowntrainedEvidence(TypedDict):
    pcie_gen: Value
    pcie_width: Value
    pcie_max_gen: Value
    pcie_max_width: Value
    util_gpu_pct: Value


class PcieReplaysEvidence(TypedDict):
    pcie_replays: float | int
    replays_rise: float
    from_t: float
    window_s: float
    pcie_gen: Value
    pcie_width: Value


class NvlinkDownEvidence(TypedDict):
    nvlink_up: Value
    nvlink_links: Value


class NvlinkSlowEvidence(TypedDict, total=False):
    """One of three ``variant``s, each with its own keys: "peers" (this GPU carries under
    half what its peers carry), "lane" (a dead link), "errors" (error counters rising)."""

    variant: str
    nvlink_bps: int
    peers_bps: int
    peers: int
    peer_frac: float
    links_slow: list[int]
    link_median_bps: int
    nvlink_up: int
    errors: int
    window_s: float
    nvlink_errors: int
    nvlink_links: Value


# ----------------------------------------------------------------------------- usage


class IdleBilledEvidence(TypedDict):
    gpus: int
    util_max_pct: Value
    mem_used_max_frac: float | None
    util_below_pct: float
    mem_below_frac: float


class ForeignProcessEvidence(TypedDict):
    processes: list[ProcEvidence]
    allowed: list[str]


class MinerProcessEvidence(TypedDict):
    processes: list[ProcEvidence]


class P8WithProcessEvidence(TypedDict):
    pstate: Value
    util_gpu_pct: Value
    sm_clock_mhz: Value
    processes: list[ProcEvidence]


# ----------------------------------------------------------------------------- host


class HostUnreachableEvidence(TypedDict):
    status: str
    reason: str | None
    since_t: float | None


class SamplerStalledEvidence(TypedDict):
    last_sample_t: float | None
    gap_s: float


class SamplerRestartedEvidence(TypedDict):
    old_run_id: str
    new_run_id: str
    last_sample_t: float | None
    first_t: float | None
    gap_s: float | None
    lost: bool


class WatchdogEvidence(TypedDict):
    """What the instance's watchdog said last, as the state a rule asks for."""

    state: str  # "pending" | "unready" | "done" | "failed"
    action: str | None
    deadline_t: float | None
    dry_run: bool
    outcome: str | None
    message: str | None
    event_t: float


class BudgetEvidence(TypedDict):
    budget_frac: float
    budget_used: float | None
    budget: float | None
    threshold_frac: float


class MemNearlyFullEvidence(TypedDict):
    mem_used_bytes: float | int
    mem_total_bytes: float | int
    used_frac: float
    card_frac: float | None
    mig_profile: str | None


class MetricAboveEvidence(TypedDict):
    metric: str
    value: float | int
    above: float


class MetricBelowEvidence(TypedDict):
    metric: str
    value: float | int
    below: float


class FlagEvidence(TypedDict, total=False):
    """``remap_pending``, ``remap_failed``, ``retired_pending``: the flag column's value
    under its own name."""

    remap_pending: float | int
    remap_failed: float | int
    retired_pending: float | int


# ------------------------------------------------------------- held, growing, suspect


class IdleHeldEvidence(TypedDict):
    """``idle_held``: no work while a process holds the memory (a hung job, a notebook)."""

    kind: str  # "hung", "notebook" or "plain"
    quiet_since_t: float
    idle_s: float
    worked_t: float | None
    mem_used_bytes: Value
    mem_total_bytes: Value
    used_frac: float
    util_gpu_pct: Value
    sm_active_pct: Value
    pstate: Value
    sm_clock_mhz: Value
    power_w: Value
    processes: list[ProcEvidence]
    cost_so_far: float | None


class MemGrowthEvidence(TypedDict):
    """``mem_growth``: used memory rising steadily towards the usable total."""

    mem_used_bytes: Value
    mem_usable_bytes: float
    mem_total_bytes: Value
    used_frac: float
    growth_bps: float
    fit_span_s: float
    rise_bytes: float
    eta_s: float
    full_at_t: float
    processes: list[ProcEvidence]


class SuspectProcEvidence(TypedDict):
    """One process ``proc_suspect`` names, with why it looks foreign."""

    pid: int
    name: str | None
    user: str | None
    mem_bytes: int | None
    sm_pct: float | None
    cmd: str | None
    why: str
    first_seen_t: float | None


class ProcSuspectEvidence(TypedDict):
    """``proc_suspect``: a kernel thread's name holding memory, or a late outsider."""

    processes: list[SuspectProcEvidence]
    why: str
    job_user: str | None
    job_t: float | None


# Condition -> its record. A condition missing here answers a plain mapping.
RECORDS: Mapping[str, type[Mapping[str, Any]]] = {
    "thermal_throttle": ThermalThrottleEvidence,
    "hw_slowdown": HwSlowdownEvidence,
    "clock_setting_low": ClockSettingLowEvidence,
    "power_limit_low": PowerLimitLowEvidence,
    "power_cap_active": PowerCapActiveEvidence,
    "clocks_below_nominal": ClocksBelowNominalEvidence,
    "temp_near_slowdown": NearLimitEvidence,
    "mem_temp_near_max": NearLimitEvidence,
    "mem_temp_high": MemTempHighEvidence,
    "ecc_dbe_increase": EccDbeEvidence,
    "remap_pending": FlagEvidence,
    "remap_failed": FlagEvidence,
    "retired_pending": FlagEvidence,
    "xid": XidEvidence,
    "gpu_lost": GpuLostEvidence,
    "mem_unaccounted": MemUnaccountedEvidence,
    "pcie_downtrained": PcieDowntrainedEvidence,
    "pcie_replays": PcieReplaysEvidence,
    "nvlink_down": NvlinkDownEvidence,
    "nvlink_slow": NvlinkSlowEvidence,
    "idle_billed": IdleBilledEvidence,
    "foreign_process": ForeignProcessEvidence,
    "miner_process": MinerProcessEvidence,
    "p8_with_process": P8WithProcessEvidence,
    "host_unreachable": HostUnreachableEvidence,
    "sampler_stalled": SamplerStalledEvidence,
    "sampler_restarted": SamplerRestartedEvidence,
    "watchdog": WatchdogEvidence,
    "budget": BudgetEvidence,
    "mem_nearly_full": MemNearlyFullEvidence,
    "metric_above": MetricAboveEvidence,
    "metric_below": MetricBelowEvidence,
    "idle_held": IdleHeldEvidence,
    "mem_growth": MemGrowthEvidence,
    "proc_suspect": ProcSuspectEvidence,
}

R = TypeVar("R", bound=Mapping[str, Any])


def values_of(alert: Alert, record: type[R]) -> R:
    """The alert's ``values`` as ``record`` (the caller has checked its condition). Not a
    validation: a record from an older version may lack a key, so read it with ``.get``."""
    v = alert.evidence.get("values")
    return cast(R, v if isinstance(v, Mapping) else {})


def raw_values(alert: Alert) -> Mapping[str, Any]:
    """The ``values`` of an alert whose condition declares no record (or any alert, for a
    reader that only shows them)."""
    v = alert.evidence.get("values")
    return v if isinstance(v, Mapping) else {}
