"""The wire protocol between the sampler and the laptop: the single source of truth.

Every line the sampler writes is one JSON object with a ``kind``. ``hello`` comes first on
every stream and names the per-GPU columns of ``sample`` lines; ``sample``, ``procs`` and
``event`` share one sequence counter so that a client can prove nothing was lost.

A ``sample`` carries ``gpus`` as a list of positional rows, one per GPU, whose first element
is the GPU index and whose other elements follow ``hello["columns"]`` (``COLUMNS`` below).
Columnar rows are about a third of the size of keyed objects and parse twice as fast (see
docs/benchmarks.md); the names and units travel once, in ``hello``.

A value the GPU does not report is ``null`` (never 0); the reason is given once, in
``hello["gpus"][i]["unsupported"]``.

This module runs on the instance: Python 3.8, stdlib only.
"""

import json
from typing import Any, Dict, List, Optional, Tuple

PROTOCOL_VERSION = 1
# Clients accept hello["protocol"] within this inclusive range.
PROTOCOL_MIN = 1
PROTOCOL_MAX = 1

# A line longer than this is refused by the client and never produced by the sampler
# (process command lines are truncated to keep under it).
MAX_LINE_BYTES = 1 << 20

KIND_HELLO = "hello"
KIND_SAMPLE = "sample"
KIND_PROCS = "procs"
KIND_EVENT = "event"
KIND_ERROR = "error"
KIND_LINKS = "links"
KINDS = (KIND_HELLO, KIND_SAMPLE, KIND_PROCS, KIND_EVENT, KIND_ERROR, KIND_LINKS)

# (name, unit, description). Order is the wire order of a sample row after the index.
# Units live in the names; the unit column is for axis labels and docs.
COLUMNS: Tuple[Tuple[str, str, str], ...] = (
    ("util_gpu_pct", "%", "GPU utilization: share of time a kernel ran (UtilizationRates.gpu)"),
    ("util_mem_pct", "%", "memory bandwidth busy time (UtilizationRates.memory), not capacity"),
    ("sm_clock_mhz", "MHz", "current SM clock"),
    ("mem_clock_mhz", "MHz", "current memory clock"),
    ("gfx_clock_mhz", "MHz", "current graphics clock"),
    ("temp_gpu_c", "°C", "GPU core temperature"),
    ("temp_mem_c", "°C", "memory (HBM) temperature; null on GDDR6X boards, which do not expose it"),
    ("power_w", "W", "power draw (1 s average on Ampere and newer)"),
    ("power_limit_w", "W", "enforced power limit, re-read every 30 s"),
    ("energy_j", "J", "energy counter since driver load"),
    ("pstate", "", "performance state 0..15 (0 = P0, fastest)"),
    ("clock_reasons", "", "clock event (throttle) reasons bitmask, see REASON_BITS"),
    ("viol_power_pct", "%", "share of the last interval clocks were held by the power cap"),
    ("viol_thermal_pct", "%", "share of the last interval clocks were held by thermal slowdown"),
    ("fan_pct", "%", "fan speed, null on passively cooled boards"),
    ("mem_used_bytes", "B", "framebuffer memory used (v2: excludes reserved)"),
    ("pcie_tx_bps", "B/s", "PCIe transmit rate from counter deltas"),
    ("pcie_rx_bps", "B/s", "PCIe receive rate from counter deltas"),
    ("pcie_gen", "", "current PCIe link generation (drops at idle P-states)"),
    ("pcie_width", "", "current PCIe link width"),
    ("pcie_replays", "", "PCIe replay counter"),
    ("nvlink_tx_bps", "B/s", "NVLink transmit rate, all links"),
    ("nvlink_rx_bps", "B/s", "NVLink receive rate, all links"),
    ("nvlink_up", "", "NVLink links currently up"),
    ("sm_active_pct", "%", "GPM SM activity (Hopper and newer)"),
    ("sm_occupancy_pct", "%", "GPM SM occupancy (Hopper and newer)"),
    ("tensor_active_pct", "%", "GPM tensor pipe activity (Hopper and newer)"),
    ("dram_active_pct", "%", "GPM DRAM bandwidth activity (Hopper and newer)"),
    ("fp64_active_pct", "%", "GPM FP64 pipe activity (Hopper and newer)"),
    ("fp32_active_pct", "%", "GPM FP32 pipe activity (Hopper and newer)"),
    ("fp16_active_pct", "%", "GPM FP16 pipe activity (Hopper and newer)"),
    ("ecc_sbe_vol", "", "corrected (single-bit) ECC errors since driver load"),
    ("ecc_dbe_vol", "", "uncorrected (double-bit) ECC errors since driver load"),
    ("remap_pending", "", "1 when a row remapping is pending (needs a GPU reset)"),
    ("remap_failed", "", "1 when a row remapping failed"),
    ("retired_pending", "", "1 when a page retirement is pending"),
    ("lost", "", "1 when NVML reports the GPU lost (all other values null)"),
)
COLUMN_NAMES: Tuple[str, ...] = tuple(c[0] for c in COLUMNS)
# The GPM columns (Hopper and newer: how much of the GPU works), in the order above.
GPM_COLUMNS: Tuple[str, ...] = tuple(c[0] for c in COLUMNS if c[2].startswith("GPM "))
COLUMN_UNITS: Dict[str, str] = {c[0]: c[1] for c in COLUMNS}
# Position of each column in a sample row (the row's element 0 is the GPU index).
ROW_POS: Dict[str, int] = {name: i + 1 for i, name in enumerate(COLUMN_NAMES)}

# Clock event reason bits (nvmlClocksEventReason*), with the dcgm-exporter label.
REASON_BITS: Tuple[Tuple[int, str, str], ...] = (
    (0x1, "gpu_idle", "GPU idle"),
    (0x2, "clocks_setting", "applications clocks setting"),
    (0x4, "power_cap", "SW power cap"),
    (0x8, "hw_slowdown", "HW slowdown"),
    (0x10, "sync_boost", "sync boost"),
    (0x20, "sw_thermal", "SW thermal slowdown"),
    (0x40, "hw_thermal", "HW thermal slowdown"),
    (0x80, "hw_power_brake", "HW power brake"),
    (0x100, "display_clocks", "display clock setting"),
)
REASON_THERMAL_MASK = 0x20 | 0x40
REASON_POWER_MASK = 0x4 | 0x80

# Keys of hello["gpus"][i]["nominal"]: values read once (limits re-sent in samples).
NOMINAL_KEYS: Tuple[Tuple[str, str], ...] = (
    ("sm_clock_max_mhz", "MHz"),
    ("mem_clock_max_mhz", "MHz"),
    ("sm_clock_base_mhz", "MHz"),
    ("power_default_w", "W"),
    ("power_enforced_w", "W"),
    ("power_min_w", "W"),
    ("power_max_w", "W"),
    ("temp_slowdown_c", "°C"),
    ("temp_shutdown_c", "°C"),
    ("temp_mem_max_c", "°C"),
    ("pcie_max_gen", ""),
    ("pcie_max_width", ""),
    ("nvlink_links", ""),
    ("nvlink_link_bps", "B/s"),
    ("mem_total_bytes", "B"),
    ("mem_reserved_bytes", "B"),
)

# event["type"] values.
EVENT_XID = "xid"
EVENT_ECC = "ecc"
EVENT_REMAP = "remap"
EVENT_RETIRED = "retired"
EVENT_GPU_LOST = "gpu_lost"
EVENT_NVLINK = "nvlink"
EVENT_NOTE = "note"
# The on-instance watchdog (watchdog.py): armed, warned, acted; ``phase`` and ``alert`` say
# which, so a laptop that reconnects shows what it did meanwhile.
EVENT_WATCHDOG = "watchdog"
EVENT_TYPES = (
    EVENT_XID,
    EVENT_ECC,
    EVENT_REMAP,
    EVENT_RETIRED,
    EVENT_GPU_LOST,
    EVENT_NVLINK,
    EVENT_NOTE,
    EVENT_WATCHDOG,
)

# Per-link NVLink columns of a ``links`` message (medium tier, every ``links_interval_s``).
# A ``links`` row is ``[gpu_index, [v_link0, v_link1, ...] per column in this order]``: one
# list per column with one value per link (link n at position n), so 18 links cost one
# bracket pair per column, not one per link. Names and units travel once, in
# ``hello["link_columns"]``. Only GPUs with NVLink links get a row; a GPU without any has
# ``hello["gpus"][i]["links_unsupported"]`` saying why (``unsupported`` stays keyed by
# sample column).
LINK_COLUMNS: Tuple[Tuple[str, str, str], ...] = (
    ("tx_bps", "B/s", "data transmitted on this link, from the per-link KiB counter (field 138)"),
    ("rx_bps", "B/s", "data received on this link, from the per-link KiB counter (field 139)"),
    ("up", "", "1 when the link is up (active), 0 when it is down"),
    ("speed_bps", "B/s", "nominal bandwidth of this link per direction (field 164)"),
)
LINK_COLUMN_NAMES: Tuple[str, ...] = tuple(c[0] for c in LINK_COLUMNS)
# Position of each link column in a ``links`` row (element 0 is the GPU index).
LINK_POS: Dict[str, int] = {name: i + 1 for i, name in enumerate(LINK_COLUMN_NAMES)}
# The key of ``hello["gpus"][i]`` that says why a GPU has no ``links`` rows (absent: it has).
LINKS_UNSUPPORTED_KEY = "links_unsupported"
# Default medium-tier period: how often ``links`` is sent (hello ``links_interval_s``).
LINKS_INTERVAL_S = 5.0

# MIG slices are GPUs of their own on the wire: the index of slot k of GPU p is
# MIG_INDEX_BASE * (p + 1) + k (a GPU has at most 7 MIG devices), and their hello entry has a
# ``mig`` object naming the parent (see docs/protocol.md, "MIG slices").
MIG_INDEX_BASE = 100
MIG_KEY = "mig"


def mig_index(parent: int, slot: int) -> int:
    """The wire index of MIG device ``slot`` of GPU ``parent``."""
    return MIG_INDEX_BASE * (parent + 1) + slot


# The hello key with the sampler's CPU budget and the plan that fits it: ``budget_pct`` (% of
# one core), ``planned_pct``, ``within``, ``per_gpu_us_per_s``, ``tiers_s`` (the period each
# tier is read at), ``needed_s`` (the period each is wanted at), ``workers``. Absent: the
# backend does not plan (sim).
CPU_BUDGET_KEY = "cpu_budget"
# The key of ``hello["gpus"][i]`` with what each kind of read cost at start-up (µs of CPU).
GPU_COST_KEY = "cost_us"
# The daemon request key (in ``attach``; or ``{"op": "watch_links", "seconds": S}``) by which
# a client says it looks at the per-link NVLink values for S seconds (at most the cap).
WATCH_LINKS_KEY = "watch_links"
WATCH_LINKS_MAX_S = 600.0
# The longest request line a daemon (or ``attach``, passing one on) takes.
REQUEST_MAX_BYTES = 64 << 10
# The key of a ``sample`` message counting the ticks skipped so far because a tick overran
# (absent while none was).
SKIPPED_KEY = "skipped"

# Keys of each process entry in a ``procs`` message.
PROC_KEYS = ("gpu", "pid", "start_ticks", "user", "name", "cmd", "mem_bytes", "sm_pct", "type")
# Keys a backend that tells the host's PIDs from its own adds to each entry (the nvml one
# does; absent means NVML's PID is the process here, as on bare metal). In a container with
# its own PID namespace NVML reports the host's PIDs: ``pid`` is then the PID here (what
# ``kill`` addresses) and ``host_pid`` NVML's, matched as ``mapping`` says.
PROC_MAP_KEYS = ("host_pid", "mapping", "holds_device", "orphan")
# ``mapping`` values: matched with certainty, matched by creation order, an NVML entry with no
# process here (another tenant or the host; ``pid`` is then NVML's and ``start_ticks`` null),
# a process here that holds the GPU's device file but has no memory NVML reports.
MAP_EXACT = "exact"
MAP_PROBABLE = "probable"
MAP_NOT_HERE = "not_here"
MAP_NO_MEMORY = "no_memory"
MAPPINGS = (MAP_EXACT, MAP_PROBABLE, MAP_NOT_HERE, MAP_NO_MEMORY)
# hello["host"]["where"] values: bare metal or a VM, a container with its own PID namespace,
# a container sharing the host's PID namespace.
WHERE_HOST = "host"
WHERE_CONTAINER = "container"
WHERE_CONTAINER_HOST_PIDS = "container_host_pids"
WHERES = (WHERE_HOST, WHERE_CONTAINER, WHERE_CONTAINER_HOST_PIDS)


def hello_columns() -> List[Dict[str, str]]:
    """The ``columns`` entry of ``hello``: names and units in wire order."""
    return [{"name": n, "unit": u} for n, u, _ in COLUMNS]


def hello_link_columns() -> List[Dict[str, str]]:
    """The ``link_columns`` entry of ``hello``: names and units of a ``links`` row."""
    return [{"name": n, "unit": u} for n, u, _ in LINK_COLUMNS]


def encode(obj: Dict[str, Any]) -> str:
    """One compact JSON line, without the newline."""
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def reason_labels(mask: Optional[int]) -> List[str]:
    """The dcgm-style labels of the bits set in a clock event reasons mask."""
    if not mask:
        return []
    return [label for bit, label, _ in REASON_BITS if mask & bit]


# Names of the sim backend's scenarios (gpufleet_sampler.sim.scenarios, kept equal by a
# test), so that the laptop can check a configured one without importing the simulator.
SIM_SCENARIOS: Tuple[str, ...] = (
    "healthy-8xa100",
    "thermal-throttle-h100",
    "power-capped-4090",
    "crashed-idle",
    "foreign-process",
    "ecc-xid",
)
