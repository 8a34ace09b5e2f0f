"""The real NVML backend: reads what each GPU supports, in tiers, through pynvml.

Tiers:

- once: inventory, nominal values, and a probe of every call and field this backend uses. A
  call that fails with NotSupported / NoPermission / FunctionNotFound is dropped for good and
  its reason kept for ``hello`` (``unsupported``: {column: reason}; ``probes``: {call: reason});
  its column is ``null`` on the wire, never 0.
- every tick: the cheap calls (clocks, temperature, utilization, P-state, clock event
  reasons, memory v2, power, fan) and GPM on Hopper+ (SM activity, tensor, DRAM; PCIe and
  NVLink throughput too); what the GUI plots as curves is read here, never less often.
- the ``fields`` tier (every tick if the budget allows, else up to 30 s): one
  ``nvmlDeviceGetFieldValues`` for the counters whose rate is exact however seldom they are
  read (energy, throttle time) and HBM temperature; PCIe / NVLink byte counters join it every
  tick where GPM does not give their throughput (a 32-bit counter read less often under-reads).
- the ``medium`` tier (5 s, up to 30 s): current PCIe generation/width, NVLink link states,
  enforced power limit, the error counters that change rarely (PCIe replays 94, volatile ECC
  3/4: in the same field read, no extra call).
- the ``links`` tier (5 s, up to 300 s unless a client watches, see ``watch_links``, or a
  link went down or its errors rose here: 10 min at 5 s): the per-link counters, states and
  speeds of the ``links`` message.
- the ``slow`` tier (60 s, up to 600 s): row remapping, retired pages, ECC totals, NVLink error
  totals; a change produces an event.
- process lists only when the loop asks (``procs``, every few seconds); per-process
  utilization (~1.8 ms a call on an H200) on its own ``putil`` tier (2 s, up to 30 s), and only
  while a process is on the GPU.

What each tier costs is timed once at start on each GPU (µs of the thread's CPU: NVML's time
is CPU time). The plan (``_plan``, hello's ``cpu_budget``) starts from the periods above and,
where they cost more than the CPU budget (1 % of a core per 8 GPUs at 1 Hz), takes throughput
from GPM instead of the byte-counter fields and stretches the slow tiers first. Between reads
of a tier its last values are sent. GPUs are read side by side on a small pool of threads, and
each GPU takes its costly tiers at its own phase, so that a tick's wall time is about one
GPU's and its costly reads do not all land on one tick.

Rates come from counter deltas over NVML's own timestamps (µs). A 64-bit counter that goes
down was reset: that tick's rate is ``null``, never negative, and an implausible jump is
``null`` too. A 32-bit one (valueType 1: the H200's PCIe byte counters 197/198 are) that goes
down wrapped once, and is counted so. A GPU that raises ``NVMLError_GpuIsLost`` gets a row
of nulls with ``lost`` = 1 and one ``gpu_lost`` event; the others go on.

The field read: on a real H200 (driver 580) it took ~4 ms, the most of any call of a tick
(tools/nvml_call_times.py). Whether that is per call or per field was not bisected
(``--bisect-fields`` of that tool answers it); the start-up timing of a one-field and an
all-field read tells the two apart on the GPU itself, and the plan follows (per call: the
groups share one read; per field: the link states come from one call per link instead).

Python 3.8, stdlib + pynvml only. ``nvmlDeviceGetPcieThroughput`` is never called (it blocks
for ~20 ms) and no process is ever spawned.
"""

import contextlib
import ctypes
import os
import socket
import struct
import time
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, Deque, Dict, List, Optional, Set, Tuple

from gpufleet_sampler import protocol
from gpufleet_sampler.backends import nvml_mig, nvml_pool
from gpufleet_sampler.backends.base import Backend
from gpufleet_sampler.backends.nvml_events import EventThread, _short
from gpufleet_sampler.procs import holders as gpu_holders
from gpufleet_sampler.procs import procfs

try:
    import pynvml as N

    _IMPORT_ERROR: Optional[str] = None
except ImportError as _e:  # pragma: no cover - exercised only where pynvml is missing
    N = None
    _IMPORT_ERROR = str(_e)


class NvmlUnavailable(RuntimeError):
    """NVML cannot be used here (no pynvml, no driver, no GPU); the text says which."""


# The wire order this module builds rows in; checked against the protocol at import so that a
# protocol change cannot silently shift columns.
_ROW_ORDER = (
    "util_gpu_pct",
    "util_mem_pct",
    "sm_clock_mhz",
    "mem_clock_mhz",
    "gfx_clock_mhz",
    "temp_gpu_c",
    "temp_mem_c",
    "power_w",
    "power_limit_w",
    "energy_j",
    "pstate",
    "clock_reasons",
    "viol_power_pct",
    "viol_thermal_pct",
    "fan_pct",
    "mem_used_bytes",
    "pcie_tx_bps",
    "pcie_rx_bps",
    "pcie_gen",
    "pcie_width",
    "pcie_replays",
    "nvlink_tx_bps",
    "nvlink_rx_bps",
    "nvlink_up",
    "sm_active_pct",
    "sm_occupancy_pct",
    "tensor_active_pct",
    "dram_active_pct",
    "fp64_active_pct",
    "fp32_active_pct",
    "fp16_active_pct",
    "ecc_sbe_vol",
    "ecc_dbe_vol",
    "remap_pending",
    "remap_failed",
    "retired_pending",
    "lost",
)
if _ROW_ORDER != protocol.COLUMN_NAMES:  # pragma: no cover - guards a protocol edit
    raise ImportError("backends/nvml.py builds rows in an order protocol.COLUMNS no longer has")

_NCOL = len(_ROW_ORDER)
_ALL_LINKS = 0xFFFFFFFF

# The default CPU budget: % of one core for 8 GPUs at 1 Hz, NVML's time included, so 1.25 ms
# of CPU per GPU per tick; it grows with the GPU count and the sampling rate.
CPU_BUDGET_PCT = 1.0
CPU_BUDGET_ENV = "GPUFLEET_CPU_BUDGET_PCT"
# A link that went down or NVLink errors that rose: the per-link values at their wanted
# period for this long, whoever looks, so that the daemon's ring holds the detail of the
# moment for a laptop that was asleep (the plan may read them every 300 s otherwise).
LINK_TROUBLE_WATCH_S = 600.0
# The periods (s) a stretched tier steps through.
_PERIODS = (1.0, 2.0, 3.0, 5.0, 10.0, 15.0, 20.0, 30.0, 60.0, 120.0, 300.0, 600.0)
# The share of the budget the plan fills (the rest: what the start-up timing cannot see).
_PLAN_SHARE = 0.8
# How often the reads' CPU is measured against the plan (s); the plan follows the measure
# when the reads cost more than the budget, or under half of it with a tier stretched (the
# start-up timing on a loaded machine, or a driver whose calls got dearer or cheaper).
BUDGET_CHECK_S = 120.0
# The factor between what the reads measured and what the start-up timing predicted, bounded.
_SCALE_RANGE = (0.25, 16.0)
# How far each tier may be stretched to fit the budget (s), in the order they are stretched:
# the slowest first, the per-tick calls never.
_STRETCH = (
    ("slow", 600.0),
    ("links", 300.0),
    ("putil", 30.0),
    ("medium", 30.0),
    ("fields", 30.0),
)

# Field ids (numbers from the NVML header; the names are pynvml's NVML_FI_DEV_*).
FI_ECC_SBE_VOL = 3
FI_ECC_DBE_VOL = 4
FI_ECC_SBE_AGG = 5
FI_ECC_DBE_AGG = 6
FI_NVLINK_CRC_FLIT_TOTAL = 38
FI_NVLINK_CRC_DATA_TOTAL = 45
FI_NVLINK_REPLAY_TOTAL = 52
FI_NVLINK_RECOVERY_TOTAL = 59
FI_VIOL_POWER = 74  # ns clocks were held by the power cap (CLOCKS_EVENT_REASON_SW_POWER_CAP)
FI_VIOL_THERMAL_OLD = 75  # PERF_POLICY_THERMAL: thermal time before 269/270 existed
FI_MEMORY_TEMP = 82
FI_ENERGY = 83
FI_NVLINK_LINK_COUNT = 91
FI_PCIE_REPLAY = 94
FI_NVLINK_TX_KIB = 138
FI_NVLINK_RX_KIB = 139
FI_NVLINK_ECC_DATA_TOTAL = 160
FI_NVLINK_SPEED_MBPS = 164
FI_NVLINK_STATE = 165
FI_POWER_INSTANT = 186
FI_PCIE_TX_BYTES = 197
FI_PCIE_RX_BYTES = 198
FI_VIOL_SW_THERM = 269
FI_VIOL_HW_THERM = 270
FI_VIOL_HW_POWER_BRAKE = 271

# GPM metric ids (NVML_GPM_METRIC_*).
GPM_SM_UTIL = 2
GPM_SM_OCCUPANCY = 3
GPM_ANY_TENSOR = 5
GPM_DRAM_BW = 10
GPM_FP64 = 11
GPM_FP32 = 12
GPM_FP16 = 13
GPM_PCIE_TX = 20
GPM_PCIE_RX = 21
GPM_NVLINK_RX = 60
GPM_NVLINK_TX = 61
_MIB = 1048576.0

# Sanity caps on rates (B/s): a "rate" above these comes from a counter glitch, not traffic.
_PCIE_CAP = 2.0e11  # PCIe 6.0 x16 is ~128 GB/s per direction
_NVLINK_CAP = 1.0e13  # B200: 1.8 TB/s per direction

# Roles of the fast-tier fields; each GPU keeps the ones its driver answers.
_R_ENERGY, _R_MEMTEMP, _R_PCIE_TX, _R_PCIE_RX, _R_REPLAY = 0, 1, 2, 3, 4
_R_NVL_TX, _R_NVL_RX, _R_VPOW, _R_VBRAKE, _R_VSW, _R_VHW, _R_VOLD = 5, 6, 7, 8, 9, 10, 11
_R_SBE, _R_DBE, _R_PINST = 12, 13, 14
_NROLES = 15
# Error counters that change rarely: read on medium ticks only (appended to that tick's
# field read), their last values sent in between.
_MED_ROLES = (_R_REPLAY, _R_SBE, _R_DBE)
# Field groups, read together in one call when several are due on a tick (bits of a mask):
# _G_FAST the byte counters whose rate is plotted per tick (PCIe / NVLink, where GPM does not
# give them) and instant power where there is no power getter; _G_COUNTERS the cumulative
# counters whose rate stays exact however seldom they are read (energy, throttle time) and
# HBM temperature; _G_ERRORS the error counters (and, where fields are the cheaper way, the
# NVLink link states) of the medium tier.
_G_FAST, _G_COUNTERS, _G_ERRORS = 1, 2, 4
_G_ALL = 7
_FAST_ROLES = (_R_PCIE_TX, _R_PCIE_RX, _R_NVL_TX, _R_NVL_RX, _R_PINST)
# Slots of _Gpu.fv_held: what the field read gave last, sent on the ticks it is not read.
_H_TMEM, _H_ENERGY, _H_VPOW, _H_VTH, _H_PTX, _H_PRX, _H_NTX, _H_NRX, _H_PINST = range(9)
_NHELD = 9
# A layout (_Gpu.fv_layouts[mask]): the reads of that tick, the field ids, the struct that
# unpacks them, their value types, each role's offset (-1: not in it), where the link
# states start (-1: none) and how many.
_L_READS, _L_IDS, _L_STRUCT, _L_TYPES, _L_ROLE, _L_STATES, _L_NSTATES = range(7)
# A 32-bit counter (valueType 1: unsigned int; the H200's PCIe byte counters 197/198 are) wraps
# every 4 GiB: a decrease is a wrap, not a reset. 64-bit counters have no entry.
_WRAP = {1: 1 << 32, 6: 1 << 16}

# Slots of the per-tick calls (_Gpu.reads), in the order they are made.
_S_UTIL, _S_SM, _S_MEMCLK, _S_GFX, _S_TEMP, _S_PSTATE, _S_REASONS = 0, 1, 2, 3, 4, 5, 6
_S_FAN, _S_POWER, _S_MEM, _S_ENERGY, _S_FIELDS = 7, 8, 9, 10, 11

# Counter slots for rate state (prev value, prev timestamp, last rate).
_C_PCIE_TX, _C_PCIE_RX, _C_NVL_TX, _C_NVL_RX, _C_VPOW, _C_VTHERM = 0, 1, 2, 3, 4, 5
_NCOUNTERS = 6

_VALUE_FMT = {0: "d", 1: "I4x", 2: "Q", 3: "Q", 4: "q", 5: "i4x", 6: "H6x"}
if ctypes.sizeof(ctypes.c_ulong) == 4:  # pragma: no cover - 32-bit / Windows ABI
    _VALUE_FMT[2] = "I4x"


def _reason(e: BaseException, call: str) -> str:
    return "{}: {}".format(_short(N, e), call)


class _Lost(Exception):
    """Raised inside a tick when NVML says the GPU is lost."""


class _Gpu(object):
    """Everything the backend keeps about one GPU, slot-based to keep ticks cheap."""

    __slots__ = (
        "clk_gfx",
        "clk_mem",
        "clk_sm",
        # rate state
        "cnt",
        # what each kind of read cost at start (µs of this thread's CPU), for the plan
        "cost",
        "dbe_events",
        "ecc_agg",
        "ecc_vol",
        "ecc_vol_call",
        "errors",
        "f_energy",
        "f_fan",
        "f_mem",
        "f_power",
        # processes
        "f_procs_c",
        "f_procs_g",
        "f_pstate",
        "f_putil",
        "f_reasons",
        "f_temp",
        # per-tick callables (None = unsupported)
        "f_util",
        # field reads
        "fv_held",
        "fv_keep",
        "fv_layouts",
        "fv_merge",
        "fv_state_type",
        # GPM
        "gpm",
        "gpm_checks",
        "gpm_covers",
        "gpm_flip",
        "gpm_has",
        "gpm_ids",
        "gpm_new",
        "gpm_offset",
        "gpm_old",
        "gpm_req",
        "gpm_req2",
        "gpm_struct",
        "gpm_t",
        "gpm_vals",
        "h",
        "index",
        "info",
        "last_dbe",
        # per-link NVLink (the ``links`` message)
        "link_cnt",
        "link_fields",
        "link_row",
        "link_states",
        "link_states_via",
        "links_why",
        "lost",
        "m_struct",
        "m_used",
        "mem_v2",
        # the minor number N of /dev/nvidiaN (None when NVML cannot say)
        "minor",
        "next_fields",
        "next_links",
        "next_medium",
        "next_putil",
        "next_slow",
        "nominal",
        "nvlink_errors",
        "nvlink_links",
        "nvlink_state_fields",
        "nvlink_up",
        "pcie_gen",
        "pcie_replays_call",
        "pcie_width",
        "phase",
        # cached medium / slow tier values
        "power_limit_w",
        "probes",
        "putil_due",
        "putil_sm",
        "putil_ts",
        "reads",
        "remap",
        "retired_pending",
        "role",
        "slow_fields",
        # µs of this GPU's reads since the last budget check (its threads' CPU clocks)
        "spent",
        "u_struct",
        "unsupported",
    )

    def __init__(self, index: int, h: Any) -> None:
        self.index = index
        self.h = h
        self.lost = False
        self.info: Dict[str, Any] = {}
        self.nominal: Dict[str, Any] = {k: None for k, _ in protocol.NOMINAL_KEYS}
        self.unsupported: Dict[str, str] = {}
        self.probes: Dict[str, str] = {}
        self.errors: Dict[str, int] = {}
        self.f_util: Optional[Callable[..., Any]] = None
        self.f_temp: Optional[Callable[..., Any]] = None
        self.f_reasons: Optional[Callable[..., Any]] = None
        self.f_pstate: Optional[Callable[..., Any]] = None
        self.f_power: Optional[Callable[..., Any]] = None
        self.f_fan: Optional[Callable[..., Any]] = None
        self.f_mem: Optional[Callable[..., Any]] = None
        self.mem_v2 = False
        self.clk_sm = False
        self.clk_mem = False
        self.clk_gfx = False
        self.f_energy: Optional[Callable[..., Any]] = None
        self.reads: List[Tuple[Optional[Callable[..., Any]], Tuple[Any, ...]]] = []
        self.u_struct: Optional[struct.Struct] = None
        self.m_struct: Optional[struct.Struct] = None
        self.m_used = 0
        self.fv_state_type = 1
        self.fv_merge = False  # read counters and error counters together (per-call cost)
        self.role: List[int] = [-1] * _NROLES
        self.cnt: List[Optional[List[Any]]] = [None] * _NCOUNTERS
        self.power_limit_w: Optional[float] = None
        self.pcie_gen: Optional[int] = None
        self.pcie_width: Optional[int] = None
        self.pcie_replays_call: Optional[int] = None
        self.nvlink_links = 0
        self.nvlink_up: Optional[int] = None
        self.nvlink_state_fields: Optional[List[Tuple[int, int]]] = None
        self.link_fields: Optional[List[Tuple[int, int]]] = None
        self.link_cnt: List[Optional[List[Any]]] = []
        self.link_states: Optional[List[Optional[int]]] = None
        self.link_row: Optional[List[Any]] = None
        self.links_why: Optional[str] = None  # why this GPU sends no links rows
        self.remap: Optional[Tuple[int, int, int, int]] = None
        self.retired_pending: Optional[int] = None
        self.ecc_vol_call = False
        self.ecc_vol: Tuple[Optional[int], Optional[int]] = (None, None)
        self.ecc_agg: Tuple[Optional[int], Optional[int]] = (None, None)
        self.nvlink_errors: Optional[int] = None
        self.slow_fields: List[Any] = []
        self.last_dbe: Optional[int] = None
        self.dbe_events = True
        self.gpm = False
        self.gpm_old: Any = None
        self.gpm_new: Any = None
        self.gpm_req: Any = None
        self.gpm_req2: Any = None
        self.gpm_flip = True
        self.gpm_struct: Optional[struct.Struct] = None
        self.gpm_offset = 0
        self.gpm_t = 0.0
        self.gpm_ids: List[int] = []
        self.gpm_vals: Dict[int, Optional[float]] = {}
        self.f_procs_c: Optional[Callable[..., Any]] = None
        self.f_procs_g: Optional[Callable[..., Any]] = None
        self.f_putil: Optional[Callable[..., Any]] = None
        self.putil_ts = 0
        self.minor: Optional[int] = None
        # Scheduling: per GPU, so that GPUs take their costly reads on different ticks.
        self.phase = 0
        self.next_fields: Optional[float] = None
        self.next_medium = 0.0
        self.next_slow = 0.0
        self.next_links = 0.0
        self.next_putil = 0.0
        self.putil_due = True
        self.putil_sm: Dict[int, int] = {}
        self.cost: Dict[str, float] = {}
        self.spent = 0.0
        # Field reads: (role, field id, valueType, group) kept at start; one layout per set
        # of groups read together (mask of _G_* bits): (ids, struct, types, role offsets).
        self.fv_keep: List[Tuple[int, Any, int, int]] = []
        self.fv_layouts: Dict[int, Any] = {}
        # Last values of what the field read gives, sent on ticks it is not read.
        self.fv_held: List[Any] = [None] * _NHELD
        self.gpm_covers: Dict[str, bool] = {"pcie": False, "nvlink": False}
        # First GPM reads left that time it and ask whether it gives PCIe / NVLink (None:
        # none made yet).
        self.gpm_checks: Optional[int] = None
        self.gpm_has: Dict[str, bool] = {"pcie": False, "nvlink": False}
        self.link_states_via = "fields"


def _lost_row(index: int) -> List[Any]:
    row: List[Any] = [None] * (_NCOL + 1)
    row[0] = index
    row[_NCOL] = 1
    return row


class NvmlBackend(Backend):
    """Samples every NVIDIA GPU of this host through pynvml."""

    name = "nvml"

    def __init__(
        self,
        interval: float = 1.0,
        medium_s: float = 5.0,
        slow_s: float = 60.0,
        events: bool = True,
        event_wait_ms: int = 500,
        cpu_budget_pct: Optional[float] = None,
        workers: Optional[int] = None,
        putil_s: float = 2.0,
        pool_every: Optional[bool] = None,
        cpu_clock: Optional[Callable[[], float]] = None,
    ) -> None:
        if N is None:
            raise NvmlUnavailable(
                "pynvml (nvidia-ml-py) is not importable here: {}".format(_IMPORT_ERROR)
            )
        self.interval = float(interval)
        # Where the reads' CPU time is read (s): this thread's CPU clock; a test gives the
        # fake pynvml's virtual one, so the plan's logic is tested on exact timings.
        self._cpu_clock = cpu_clock or _cpu
        self.medium_s = float(medium_s)
        # How often the links message comes: the per-link read rides on the medium tier.
        self.links_interval = self.medium_s
        self.slow_s = float(slow_s)
        if cpu_budget_pct is None:
            # The user's budget for this host's sampler, else 1 % of a core per 8 GPUs.
            cpu_budget_pct = _env_float(CPU_BUDGET_ENV, CPU_BUDGET_PCT)
        if not cpu_budget_pct > 0:
            raise ValueError(
                "the CPU budget must be > 0 % of a core (got {})".format(cpu_budget_pct)
            )
        self.cpu_budget_pct = float(cpu_budget_pct)
        # The period each tier is needed at (what a user sees change at; see the module
        # docstring); the plan stretches them to fit the CPU budget.
        self._needed: Dict[str, float] = {
            "fields": self.interval,
            "medium": self.medium_s,
            "slow": self.slow_s,
            "links": self.medium_s,
            "putil": float(putil_s),
        }
        self.tiers: Dict[str, float] = dict(self._needed)
        self.plan_facts: Dict[str, Any] = {}
        self._replan = False
        # The measured correction of the start-up timing (see BUDGET_CHECK_S), the plan's
        # number (a new plan: a new hello), and where the current measure began (monotonic).
        self._cost_scale = 1.0
        self.plan_version = 0
        self.budget_check_s = BUDGET_CHECK_S
        self._measure_from: Optional[float] = None
        # Until when someone watches the per-link NVLink values (watch_links): read at the
        # period they are wanted at, whatever the plan.
        self._links_watch_until = -1.0
        # Set (from any reader thread) when a link went down or NVLink errors rose: the tick
        # then watches the per-link values itself (LINK_TROUBLE_WATCH_S).
        self._link_trouble = False
        self._pool: Optional[ThreadPoolExecutor] = None
        self._workers = 1
        self._cpus = 1
        self._pool_all = False
        try:
            N.nvmlInit()
        except N.NVMLError as e:
            raise NvmlUnavailable(
                "NVML could not start ({}): is the NVIDIA driver installed and loaded?".format(e)
            ) from None
        self._closed = False
        self._events: Deque[Dict[str, Any]] = deque()
        self._lost_reported: Dict[int, bool] = {}
        self._next_medium: Optional[float] = None
        self._next_slow: Optional[float] = None
        # Keyed by (pid, start ticks) and re-read when the comm in stat changes, so a
        # process that exec()s shows its new name and command line.
        self._proc_cache = procfs.ProcCache()
        # Where the sampler runs decides what NVML's PIDs mean here (read once: a process
        # does not change PID namespace).
        self._where = gpu_holders.detect_where()
        self._dev_dir = gpu_holders.dev_dir()
        self._scanner = gpu_holders.Scanner(self._dev_dir)
        # In the host's namespace NVML's PIDs need no matching: the scan only finds holders
        # with no memory and orphans, so it runs on the slow tier there (a host has thousands
        # of processes); in a container of its own, on every process listing.
        self._holders_host_s = 30.0
        self._last_scan: Optional[gpu_holders.Scan] = None
        self._next_scan = 0.0
        # The loop's clock as last seen: hello asks for a listing on the same clock.
        self._last_mono = 0.0
        self._nvml_pids: Optional[Dict[str, int]] = None
        self._host = self._read_host()
        self._gpus: List[_Gpu] = []
        count = int(N.nvmlDeviceGetCount())
        for i in range(count):
            try:
                h = N.nvmlDeviceGetHandleByIndex(i)
            except N.NVMLError as e:
                g = _Gpu(i, None)
                g.lost = True
                g.probes["nvmlDeviceGetHandleByIndex"] = _reason(e, "nvmlDeviceGetHandleByIndex")
                self._gpus.append(g)
                continue
            g = _Gpu(i, h)
            g.phase = len(self._gpus)
            self._gpus.append(g)
        n = sum(1 for g in self._gpus if not g.lost)
        self._cpus = nvml_pool.usable_cpus()
        self._workers = nvml_pool.pool_size(n, workers, self._cpus)
        # Only the GPUs with a long read due on the pool, unless asked for every GPU (see
        # nvml_pool for why).
        self._pool_all = bool(pool_every) and self._workers > 1
        if self._workers > 1:
            nvml_pool.one_malloc_arena()
            self._pool = ThreadPoolExecutor(
                max_workers=self._workers, thread_name_prefix="gpufleet-nvml"
            )
            list(self._pool.map(self._probe_safe, self._gpus))
        else:
            for g in self._gpus:
                self._probe_safe(g)
        for g in self._gpus:
            if g.lost:
                self._mark_lost(g, "during start-up")
        # MIG slices of the GPUs in MIG mode: GPUs of their own on the wire (nvml_mig).
        self._mig: List[nvml_mig.MigSlice] = [
            s for g in self._gpus if not g.lost for s in nvml_mig.probe(N, g.index, g.h)
        ]
        self._plan()
        self._event_thread: Optional[EventThread] = None
        if events:
            live = [(g.index, g.h) for g in self._gpus if not g.lost]
            et = EventThread(N, live, self._events, self._on_event_lost, wait_ms=event_wait_ms)
            et.start()
            for g in self._gpus:
                if g.index in et.reasons:
                    g.probes["xid_events"] = et.reasons[g.index]
                mask = et.registered.get(g.index, 0)
                g.dbe_events = not (mask & int(getattr(N, "nvmlEventTypeDoubleBitEccError", 0)))
            self._event_thread = et

    # ------------------------------------------------------------------ start-up

    def _read_host(self) -> Dict[str, Any]:
        host: Dict[str, Any] = {"hostname": socket.gethostname(), "backend": "nvml"}
        for key, fn_name in (
            ("driver_version", "nvmlSystemGetDriverVersion"),
            ("nvml_version", "nvmlSystemGetNVMLVersion"),
        ):
            try:
                host[key] = str(getattr(N, fn_name)())
            except (N.NVMLError, AttributeError):
                host[key] = None
        cuda = None
        for fn_name in ("nvmlSystemGetCudaDriverVersion_v2", "nvmlSystemGetCudaDriverVersion"):
            try:
                v = int(getattr(N, fn_name)())
                cuda = "{}.{}".format(v // 1000, (v % 1000) // 10)
                break
            except (N.NVMLError, AttributeError):
                continue
        host["cuda_version"] = cuda
        return host

    def _probe_safe(self, g: _Gpu) -> None:
        """Probe one GPU (on the pool at start-up); a lost GPU is marked, not raised."""
        if g.lost:
            return
        try:
            self._probe(g)
        except _Lost:
            g.lost = True

    def _try(self, g: _Gpu, call: str, fn: Callable[..., Any], *args: Any) -> Any:
        """Call once at start-up; on failure record why and return None. GpuIsLost -> _Lost."""
        try:
            return fn(g.h, *args)
        except N.NVMLError_GpuIsLost:
            raise _Lost() from None
        except (N.NVMLError, N.NVMLLibraryMismatchError, AttributeError) as e:
            g.probes[call] = _reason(e, call)
            return None

    def _fn(self, name: str) -> Optional[Callable[..., Any]]:
        return getattr(N, name, None)

    def _pick(
        self, g: _Gpu, column: Optional[str], choices: List[Tuple[str, Tuple[Any, ...]]]
    ) -> Tuple[Optional[Callable[..., Any]], Any]:
        """The first call of ``choices`` (name, extra args) that answers; its first value."""
        last = ""
        for name, args in choices:
            fn = self._fn(name)
            if fn is None:
                g.probes[name] = "FunctionNotFound: {} (not in this pynvml)".format(name)
                last = g.probes[name]
                continue
            try:
                v = fn(g.h, *args)
            except N.NVMLError_GpuIsLost:
                raise _Lost() from None
            except (N.NVMLError, N.NVMLLibraryMismatchError) as e:
                g.probes[name] = _reason(e, name)
                last = g.probes[name]
                continue
            return fn, v
        if column:
            g.unsupported[column] = last
        return None, None

    def _probe(self, g: _Gpu) -> None:
        h = g.h
        info = g.info
        for key, call in (
            ("name", "nvmlDeviceGetName"),
            ("uuid", "nvmlDeviceGetUUID"),
            ("serial", "nvmlDeviceGetSerial"),
            ("vbios", "nvmlDeviceGetVbiosVersion"),
        ):
            fn = self._fn(call)
            v = self._try(g, call, fn) if fn else None
            info[key] = _text(v)
        pci = self._try(g, "nvmlDeviceGetPciInfo_v3", N.nvmlDeviceGetPciInfo_v3)
        info["pci_bus_id"] = _text(getattr(pci, "busId", None)) if pci is not None else None
        for key, call in (
            ("arch", "nvmlDeviceGetArchitecture"),
            ("brand", "nvmlDeviceGetBrand"),
            ("persistence_mode", "nvmlDeviceGetPersistenceMode"),
            ("compute_mode", "nvmlDeviceGetComputeMode"),
            ("virtualization_mode", "nvmlDeviceGetVirtualizationMode"),
        ):
            fn = self._fn(call)
            v = self._try(g, call, fn) if fn else None
            info[key] = int(v) if v is not None else None
        cc = self._try(
            g, "nvmlDeviceGetCudaComputeCapability", N.nvmlDeviceGetCudaComputeCapability
        )
        info["compute_capability"] = "{}.{}".format(cc[0], cc[1]) if cc else None
        mig = self._try(g, "nvmlDeviceGetMigMode", N.nvmlDeviceGetMigMode)
        info["mig_mode"] = int(mig[0]) if mig else None
        ecc = self._try(g, "nvmlDeviceGetEccMode", N.nvmlDeviceGetEccMode)
        info["ecc_mode"] = int(ecc[0]) if ecc else None

        nom = g.nominal
        v = self._try(g, "nvmlDeviceGetMaxClockInfo", N.nvmlDeviceGetMaxClockInfo, N.NVML_CLOCK_SM)
        nom["sm_clock_max_mhz"] = _int(v)
        v = self._try(g, "nvmlDeviceGetMaxClockInfo", N.nvmlDeviceGetMaxClockInfo, N.NVML_CLOCK_MEM)
        nom["mem_clock_max_mhz"] = _int(v)
        fn = self._fn("nvmlDeviceGetDefaultApplicationsClock")
        if fn is not None:
            v = self._try(g, "nvmlDeviceGetDefaultApplicationsClock", fn, N.NVML_CLOCK_SM)
            nom["sm_clock_base_mhz"] = _int(v)
        v = self._try(
            g,
            "nvmlDeviceGetPowerManagementDefaultLimit",
            N.nvmlDeviceGetPowerManagementDefaultLimit,
        )
        nom["power_default_w"] = _watts(v)
        v = self._try(g, "nvmlDeviceGetEnforcedPowerLimit", N.nvmlDeviceGetEnforcedPowerLimit)
        nom["power_enforced_w"] = _watts(v)
        g.power_limit_w = nom["power_enforced_w"]
        if v is None:
            g.unsupported["power_limit_w"] = g.probes.get("nvmlDeviceGetEnforcedPowerLimit", "")
        v = self._try(
            g,
            "nvmlDeviceGetPowerManagementLimitConstraints",
            N.nvmlDeviceGetPowerManagementLimitConstraints,
        )
        if v:
            nom["power_min_w"], nom["power_max_w"] = _watts(v[0]), _watts(v[1])
        for key, thr in (
            ("temp_slowdown_c", "NVML_TEMPERATURE_THRESHOLD_SLOWDOWN"),
            ("temp_shutdown_c", "NVML_TEMPERATURE_THRESHOLD_SHUTDOWN"),
            ("temp_mem_max_c", "NVML_TEMPERATURE_THRESHOLD_MEM_MAX"),
        ):
            v = self._try(
                g,
                "nvmlDeviceGetTemperatureThreshold:" + thr,
                N.nvmlDeviceGetTemperatureThreshold,
                getattr(N, thr),
            )
            nom[key] = _int(v)
        v = self._try(g, "nvmlDeviceGetMaxPcieLinkGeneration", N.nvmlDeviceGetMaxPcieLinkGeneration)
        nom["pcie_max_gen"] = _int(v)
        v = self._try(g, "nvmlDeviceGetMaxPcieLinkWidth", N.nvmlDeviceGetMaxPcieLinkWidth)
        nom["pcie_max_width"] = _int(v)

        # Per-tick calls, each with its fallback.
        g.f_util, _ = self._pick(g, "util_gpu_pct", [("nvmlDeviceGetUtilizationRates", ())])
        if g.f_util is None:
            g.unsupported["util_mem_pct"] = g.unsupported["util_gpu_pct"]
        for attr, col, typ in (
            ("clk_sm", "sm_clock_mhz", N.NVML_CLOCK_SM),
            ("clk_mem", "mem_clock_mhz", N.NVML_CLOCK_MEM),
            ("clk_gfx", "gfx_clock_mhz", N.NVML_CLOCK_GRAPHICS),
        ):
            fn, _ = self._pick(g, col, [("nvmlDeviceGetClockInfo", (typ,))])
            setattr(g, attr, fn is not None)
        g.f_temp, _ = self._pick(
            g,
            "temp_gpu_c",
            [
                ("nvmlDeviceGetTemperatureV", (N.NVML_TEMPERATURE_GPU,)),
                ("nvmlDeviceGetTemperature", (N.NVML_TEMPERATURE_GPU,)),
            ],
        )
        g.f_pstate, _ = self._pick(g, "pstate", [("nvmlDeviceGetPerformanceState", ())])
        g.f_reasons, _ = self._pick(
            g,
            "clock_reasons",
            [
                ("nvmlDeviceGetCurrentClocksEventReasons", ()),
                ("nvmlDeviceGetCurrentClocksThrottleReasons", ()),
            ],
        )
        g.f_power, _ = self._pick(g, None, [("nvmlDeviceGetPowerUsage", ())])
        g.f_fan, _ = self._pick(g, "fan_pct", [("nvmlDeviceGetFanSpeed", ())])
        v2 = getattr(N, "nvmlMemory_v2", None)
        mem = None
        if v2 is not None:
            try:
                mem = N.nvmlDeviceGetMemoryInfo(h, v2)
                g.mem_v2 = True
            except N.NVMLError_GpuIsLost:
                raise _Lost() from None
            except (N.NVMLError, AttributeError) as e:
                g.probes["nvmlDeviceGetMemoryInfo_v2"] = _reason(e, "nvmlDeviceGetMemoryInfo_v2")
        if mem is None:
            # v1's "used" includes what the driver reserves; better than nothing, noted.
            mem = self._try(g, "nvmlDeviceGetMemoryInfo", N.nvmlDeviceGetMemoryInfo)
        if mem is not None:
            g.f_mem = N.nvmlDeviceGetMemoryInfo
            nom["mem_total_bytes"] = int(mem.total)
            nom["mem_reserved_bytes"] = int(mem.reserved) if g.mem_v2 else None
        else:
            g.unsupported["mem_used_bytes"] = g.probes.get("nvmlDeviceGetMemoryInfo", "")

        self._probe_fields(g)
        self._probe_gpm(g)

        # Columns that have no source at all after fields, calls and GPM.
        if g.f_power is None and g.role[_R_PINST] < 0:
            g.unsupported["power_w"] = g.probes.get("nvmlDeviceGetPowerUsage", "")
        if g.role[_R_ENERGY] < 0:
            g.f_energy, _ = self._pick(g, "energy_j", [("nvmlDeviceGetTotalEnergyConsumption", ())])

        # Medium tier: read now, so the first rows are complete.
        t0 = self._cpu()
        self._medium(g, first=True)
        # The link states are timed on their own (_time_reads): they may ride in a field read.
        g.cost["medium"] = max(0.0, self._us(t0) - g.cost.pop("link_states_read", 0.0))
        if g.pcie_gen is None:
            g.unsupported["pcie_gen"] = g.probes.get("nvmlDeviceGetCurrPcieLinkGeneration", "")
        if g.pcie_width is None:
            g.unsupported["pcie_width"] = g.probes.get("nvmlDeviceGetCurrPcieLinkWidth", "")
        if g.role[_R_REPLAY] < 0 and g.pcie_replays_call is None:
            g.unsupported["pcie_replays"] = g.probes.get("nvmlDeviceGetPcieReplayCounter", "")
        if g.nvlink_up is None:
            g.unsupported["nvlink_up"] = g.probes.get(
                "nvmlDeviceGetNvLinkState", "NotSupported: no NVLink links"
            )

        # Slow tier.
        self._probe_slow(g)

        # Processes. The minor number names the device file whose holders are this GPU's
        # processes as a container sees them.
        minor_fn = self._fn("nvmlDeviceGetMinorNumber")
        minor = None
        if minor_fn is not None:
            minor = self._try(g, "nvmlDeviceGetMinorNumber", minor_fn)
        g.minor = int(minor) if minor is not None else None
        g.f_procs_c, _ = self._pick(
            g,
            None,
            [
                ("nvmlDeviceGetComputeRunningProcesses_v3", ()),
                ("nvmlDeviceGetComputeRunningProcesses_v2", ()),
                ("nvmlDeviceGetComputeRunningProcesses", ()),
            ],
        )
        g.f_procs_g, _ = self._pick(
            g,
            None,
            [
                ("nvmlDeviceGetGraphicsRunningProcesses_v3", ()),
                ("nvmlDeviceGetGraphicsRunningProcesses_v2", ()),
                ("nvmlDeviceGetGraphicsRunningProcesses", ()),
            ],
        )
        t0 = self._cpu()
        for f in (g.f_procs_c, g.f_procs_g):
            if f is not None:
                self._call(g, getattr(f, "__name__", "processes"), f)
        g.cost["procs"] = self._us(t0)
        fn = self._fn("nvmlDeviceGetProcessUtilization")
        if fn is not None:
            t0 = self._cpu()
            try:
                fn(g.h, 0)
                g.f_putil = fn
            except N.NVMLError_GpuIsLost:
                raise _Lost() from None
            except N.NVMLError_NotFound:
                g.f_putil = fn  # supported, just no samples yet
            except N.NVMLError as e:
                if getattr(e, "value", None) == N.NVML_SUCCESS:
                    g.f_putil = fn  # the wrapper's way of saying "no samples"
                else:
                    g.probes["nvmlDeviceGetProcessUtilization"] = _reason(
                        e, "nvmlDeviceGetProcessUtilization"
                    )
            g.cost["putil"] = self._us(t0)

        self._build_reads(g)
        self._time_reads(g)
        if g.link_fields is not None:
            # Primes the per-link counters (the first links message has states and speeds).
            t0 = self._cpu()
            self._links_read(g)
            g.cost["links"] = self._us(t0)

    def _time_reads(self, g: _Gpu) -> None:
        """Time the per-tick reads on this GPU (µs of this thread's CPU): the calls
        alone, then with every field group, then a one-field read, from which the field
        read's cost per call and per field follow. The plan (_plan) is made from these. The
        read with every group also primes the counters, so the first tick has rates."""
        calls = []
        for _ in range(2):  # the cheaper of two: a first call can pay one-off costs
            t0 = self._cpu()
            self._row(g, 0.0, gpm=False, mask=0)
            calls.append(self._us(t0))
        g.cost["calls"] = min(calls)
        # Each the cheaper of two as well: CPU time only grows with what else runs here
        # (caches, a shared core), so the cheaper one is nearer what the read costs. What the
        # timing still gets wrong, the measure of the running reads corrects (_check_budget).
        full = []
        for _ in range(2):
            t0 = self._cpu()
            self._row(g, 0.0, gpm=False, mask=_G_ALL)
            full.append(self._us(t0))
        fields_all = max(0.0, min(full) - g.cost["calls"])
        ids = g.fv_layouts[_G_ALL][_L_IDS]
        base, per = fields_all, 0.0
        if len(ids) > 1:
            ones = []
            for _ in range(2):
                t0 = self._cpu()
                _fields(g.h, ids[:1])
                ones.append(self._us(t0))
            one = min(ones)
            per = max(0.0, (fields_all - one) / (len(ids) - 1))
            base = max(0.0, one - per)
        g.cost["fv_call"] = round(base, 1)
        g.cost["fv_field"] = round(per, 1)
        if g.nvlink_state_fields is not None:
            # The cheaper way to read the link states: one call per link, or their fields
            # added to the medium tier's field read (which costs per field, if anything).
            t0 = self._cpu()
            self._call(g, "nvmlDeviceGetNvLinkState", N.nvmlDeviceGetNvLinkState, 0)
            getter = self._us(t0)
            n = len(g.nvlink_state_fields)
            g.link_states_via = "fields" if per * n <= getter * n else "calls"
            g.cost["link_states"] = round(min(per, getter) * n, 1)
            self._build_layouts(g)

    def _fv_cost(self, g: _Gpu, mask: int) -> float:
        """µs of a field read of the groups in ``mask`` (0 when it asks for nothing)."""
        n = len(g.fv_layouts[mask][_L_IDS])
        return g.cost.get("fv_call", 0.0) + g.cost.get("fv_field", 0.0) * n if n else 0.0

    def _merge_fields(self, g: _Gpu) -> bool:
        """Whether the counters and the error counters are best read in one call whenever
        either is due: where a field read costs per call rather than per field."""
        per = g.cost.get("fv_field", 0.0)
        n = len(g.fv_layouts[_G_COUNTERS | _G_ERRORS][_L_IDS])
        return g.cost.get("fv_call", 0.0) > 4.0 * per * max(1, n)

    def _gpu_cost(self, g: _Gpu, tiers: Dict[str, float]) -> float:
        """µs per second this GPU costs under ``tiers`` (periods in s), from the timings."""
        c = g.cost
        every = self.interval
        fast = self._fv_cost(g, _G_FAST)
        per_s = (c.get("calls", 0.0) + c.get("gpm", 0.0) + fast) / every
        # A group read with the per-tick fast fields shares their call; alone it pays one.
        cnt = self._fv_cost(g, _G_FAST | _G_COUNTERS) - fast
        err = self._fv_cost(g, _G_FAST | _G_ERRORS) - fast
        t_cnt = max(every, tiers["fields"])
        if g.fv_merge:
            both = self._fv_cost(g, _G_ALL) - fast
            per_s += both / min(t_cnt, tiers["medium"])
        else:
            per_s += cnt / t_cnt + err / tiers["medium"]
        per_s += c.get("medium", 0.0) / tiers["medium"]
        if g.link_states_via == "calls":
            per_s += c.get("link_states", 0.0) / tiers["medium"]
        per_s += c.get("slow", 0.0) / tiers["slow"]
        if g.link_fields is not None:
            per_s += c.get("links", 0.0) / tiers["links"]
        # Process lists come every procs interval (the loop's, 2 s by default).
        per_s += c.get("procs", 0.0) / self._needed["putil"]
        if g.f_putil is not None:
            # Only paid while a process is on the GPU; planned as if one always were.
            per_s += c.get("putil", 0.0) / tiers["putil"]
        return per_s

    def _plan(self) -> None:
        """Fit the CPU budget: start from the periods each tier is needed at, and stretch
        the slow tiers first (error totals, per-link NVLink, per-process utilization, the
        medium tier, the counters), each doubled up to its limit, until the GPUs' cost fits.
        The per-tick calls are never stretched: they are what the plots show."""
        live = [g for g in self._gpus if not g.lost]
        tiers = dict(self._needed)
        # µs of CPU per second: the budget is per GPU and per tick (1.25 ms by default).
        budget = self.cpu_budget_pct / 100.0 / 8.0 * 1e6 * max(1, len(live)) / self.interval
        # Planned to 80 % of it: the rest is for what no start-up timing sees (encoding the
        # messages, /proc reads of new processes, the event thread).
        target = budget * _PLAN_SHARE
        for g in live:
            g.fv_merge = self._merge_fields(g)

        scale = self._cost_scale

        def total() -> float:
            return sum(self._gpu_cost(g, tiers) for g in live) * scale

        if total() > target:
            # The cheaper source first: throughput from GPM frees the per-tick field read.
            for g in live:
                self._use_gpm_throughput(g)
        for name, limit in _STRETCH:
            while total() > target and tiers[name] < limit:
                longer = [p for p in _PERIODS if p > tiers[name] * 1.0001]
                tiers[name] = min(limit, longer[0] if longer else limit)
        self.tiers = tiers
        self.links_interval = tiers["links"]
        spent = total()
        self.plan_version += 1
        measured = self.plan_facts.get("measured_pct")
        self.plan_facts = {
            "version": self.plan_version,
            "budget_pct": round(budget / 1e4, 3),
            "planned_pct": round(spent / 1e4, 3),
            "within": spent <= target * 1.0001,
            "per_gpu_us_per_s": round(spent / max(1, len(live)), 1),
            "tiers_s": {k: round(v, 3) for k, v in sorted(tiers.items())},
            "needed_s": {k: round(v, 3) for k, v in sorted(self._needed.items())},
            "workers": self._workers,
            "cpus": self._cpus,
            # Which GPUs of a tick the reader threads take (see nvml_pool).
            "pooled": "every GPU" if self._pool_all else "long reads" if self._pool else "none",
            # False until the first ticks have timed GPM and seen what it answers: the plan
            # of a hello written at start-up is provisional.
            "settled": all(g.gpm_checks == 0 for g in live if g.gpm),
            # What the reads cost over the last BUDGET_CHECK_S (% of a core; None before the
            # first measure) and the factor the plan applies to its start-up timing.
            "measured_pct": measured,
            "cost_scale": round(scale, 3),
        }

    def _build_reads(self, g: _Gpu) -> None:
        """The per-tick calls as (function, extra args), None where unsupported, plus the
        struct layouts that read their results in one C call instead of attribute by
        attribute (pynvml's structs resolve every attribute in Python)."""
        ci = N.nvmlDeviceGetClockInfo
        g.reads = [
            (g.f_util, ()),
            (ci if g.clk_sm else None, (N.NVML_CLOCK_SM,)),
            (ci if g.clk_mem else None, (N.NVML_CLOCK_MEM,)),
            (ci if g.clk_gfx else None, (N.NVML_CLOCK_GRAPHICS,)),
            (g.f_temp, (N.NVML_TEMPERATURE_GPU,)),
            (g.f_pstate, ()),
            (g.f_reasons, ()),
            (g.f_fan, ()),
            (g.f_power, ()),
            (g.f_mem, (N.nvmlMemory_v2,) if g.mem_v2 else ()),
            (g.f_energy, ()),
            (None, ()),
        ]
        self._build_layouts(g)
        g.u_struct = _layout(getattr(N, "c_nvmlUtilization_t", None), "=II")
        if g.mem_v2:
            g.m_struct = _layout(getattr(N, "c_nvmlMemory_v2_t", None), "=I4xQQQQ")
            g.m_used = 4
        else:
            g.m_struct = _layout(getattr(N, "c_nvmlMemory_t", None), "=QQQ")
            g.m_used = 2

    def _build_layouts(self, g: _Gpu) -> None:
        """One field read per combination of due groups (see _G_*): its ids, its struct and
        where each role sits in it. The link states join the medium tier's group when the
        start-up timing found fields the cheaper way to read them."""
        g.fv_layouts = {}
        states = g.nvlink_state_fields if g.link_states_via == "fields" else None
        for mask in range(_G_ALL + 1):
            keep = sorted((k for k in g.fv_keep if k[3] & mask), key=lambda k: k[3])
            ids: List[Any] = [k[1] for k in keep]
            types = [k[2] for k in keep]
            role = [-1] * _NROLES
            for pos, k in enumerate(keep):
                role[k[0]] = pos * 7
            st_pos = -1
            n_st = 0
            if states and mask & _G_ERRORS:
                st_pos = len(ids) * 7
                n_st = len(states)
                ids = ids + list(states)
                # Link states are unsigned ints; the struct reads them that way.
                types = types + [g.fv_state_type] * n_st
            reads = list(g.reads)
            reads[_S_FIELDS] = (N.nvmlDeviceGetFieldValues if ids else None, (ids,))
            g.fv_layouts[mask] = (
                reads,
                ids,
                _fv_struct(types),
                tuple(types),
                role,
                st_pos,
                n_st,
            )

    def _probe_fields(self, g: _Gpu) -> None:
        """Ask for every candidate field once; keep those that answer."""
        links_fv = _fields(g.h, [FI_NVLINK_LINK_COUNT])
        links = 0
        if links_fv is not None and links_fv[0].nvmlReturn == N.NVML_SUCCESS:
            links = int(_fv_value(links_fv[0]) or 0)
        g.nvlink_links = links
        g.nominal["nvlink_links"] = links
        if links:
            sp = _fields(g.h, [(FI_NVLINK_SPEED_MBPS, 0)])
            if sp is not None and sp[0].nvmlReturn == N.NVML_SUCCESS:
                g.nominal["nvlink_link_bps"] = int(_fv_value(sp[0]) or 0) * 1000000
            ids = [(FI_NVLINK_STATE, link) for link in range(links)]
            st = _fields(g.h, ids)
            if st is not None and all(r.nvmlReturn == N.NVML_SUCCESS for r in st):
                g.nvlink_state_fields = ids
                g.fv_state_type = int(st[0].valueType)
            self._probe_links(g, links)
        else:
            why = "NotSupported: this GPU has no NVLink links (field 91 = 0)"
            if links_fv is None or links_fv[0].nvmlReturn != N.NVML_SUCCESS:
                code = _code_name(int(links_fv[0].nvmlReturn)) if links_fv is not None else ""
                why = "{}: field 91 (NVLink link count): no NVLink here, PCIe only".format(
                    code or "NotSupported"
                )
            g.links_why = why
        cand: List[Tuple[int, Any]] = [
            (_R_ENERGY, FI_ENERGY),
            (_R_MEMTEMP, FI_MEMORY_TEMP),
            (_R_PCIE_TX, FI_PCIE_TX_BYTES),
            (_R_PCIE_RX, FI_PCIE_RX_BYTES),
            (_R_REPLAY, FI_PCIE_REPLAY),
            (_R_VPOW, FI_VIOL_POWER),
            (_R_VBRAKE, FI_VIOL_HW_POWER_BRAKE),
            (_R_VSW, FI_VIOL_SW_THERM),
            (_R_VHW, FI_VIOL_HW_THERM),
            (_R_VOLD, FI_VIOL_THERMAL_OLD),
            (_R_SBE, FI_ECC_SBE_VOL),
            (_R_DBE, FI_ECC_DBE_VOL),
        ]
        if links:
            cand.append((_R_NVL_TX, (FI_NVLINK_TX_KIB, _ALL_LINKS)))
            cand.append((_R_NVL_RX, (FI_NVLINK_RX_KIB, _ALL_LINKS)))
        if g.f_power is None:
            cand.append((_R_PINST, FI_POWER_INSTANT))
        fv = _fields(g.h, [c[1] for c in cand], g)
        keep: List[Tuple[int, Any, int]] = []
        if fv is not None:
            for (role, fid), r in zip(cand, fv):  # noqa: B905 - Python 3.8
                ret = int(r.nvmlReturn)
                if ret == N.NVML_SUCCESS:
                    keep.append((role, fid, int(r.valueType)))
                else:
                    g.probes["field {}".format(_fid_text(fid))] = "{}: field {}".format(
                        _code_name(ret), _fid_text(fid)
                    )
        # Thermal time: 269/270 where the driver has them, else the older 75.
        roles = {k[0] for k in keep}
        if _R_VSW in roles or _R_VHW in roles:
            keep = [k for k in keep if k[0] != _R_VOLD]
        g.fv_keep = [
            (
                role,
                fid,
                vt,
                _G_FAST
                if role in _FAST_ROLES
                else _G_ERRORS
                if role in _MED_ROLES
                else _G_COUNTERS,
            )
            for role, fid, vt in keep
        ]
        for pos, k in enumerate(sorted(g.fv_keep, key=lambda k: k[3])):
            g.role[k[0]] = pos * 7
        why = g.probes.get("nvmlDeviceGetFieldValues", "")

        def gone(col: str, *fids: Any) -> None:
            reasons = [g.probes.get("field {}".format(_fid_text(f)), why) for f in fids]
            g.unsupported[col] = "; ".join(r for r in reasons if r) or why

        if g.role[_R_MEMTEMP] < 0:
            gone("temp_mem_c", FI_MEMORY_TEMP)
        if g.role[_R_VPOW] < 0:
            gone("viol_power_pct", FI_VIOL_POWER)
        if g.role[_R_VSW] < 0 and g.role[_R_VHW] < 0 and g.role[_R_VOLD] < 0:
            gone("viol_thermal_pct", FI_VIOL_SW_THERM, FI_VIOL_THERMAL_OLD)
        if not links:
            for col in ("nvlink_tx_bps", "nvlink_rx_bps"):
                g.unsupported[col] = "NotSupported: no NVLink links (field 91)"
        else:
            if g.role[_R_NVL_TX] < 0:
                gone("nvlink_tx_bps", (FI_NVLINK_TX_KIB, _ALL_LINKS))
            if g.role[_R_NVL_RX] < 0:
                gone("nvlink_rx_bps", (FI_NVLINK_RX_KIB, _ALL_LINKS))
        g.ecc_vol_call = g.role[_R_SBE] < 0 or g.role[_R_DBE] < 0

    def _probe_links(self, g: _Gpu, links: int) -> None:
        """Per-link TX/RX KiB counters (138/139) and speeds (164), scope = link: kept when
        the driver answers any link's counter, else ``links_why`` says why (hello's
        ``links_unsupported``)."""
        ids: List[Tuple[int, int]] = []
        for link in range(links):
            ids += [
                (FI_NVLINK_TX_KIB, link),
                (FI_NVLINK_RX_KIB, link),
                (FI_NVLINK_SPEED_MBPS, link),
            ]
        fv = _fields(g.h, ids)
        if fv is None:
            g.links_why = g.probes.get(
                "nvmlDeviceGetFieldValues", "nvmlDeviceGetFieldValues failed"
            )
            return
        rets = [int(r.nvmlReturn) for r in fv]
        if any(rets[i] == N.NVML_SUCCESS for i in range(len(rets)) if i % 3 != 2):
            g.link_fields = ids
            g.link_cnt = [None] * (2 * links)
            return
        g.links_why = "{}: fields 138/139 per link".format(
            _code_name(rets[0]) if rets else "NotSupported"
        )

    def _probe_gpm(self, g: _Gpu) -> None:
        cols = (
            "sm_active_pct",
            "sm_occupancy_pct",
            "tensor_active_pct",
            "dram_active_pct",
            "fp64_active_pct",
            "fp32_active_pct",
            "fp16_active_pct",
        )
        fn = self._fn("nvmlGpmQueryDeviceSupport")
        reason = ""
        if fn is None:
            reason = "FunctionNotFound: nvmlGpmQueryDeviceSupport (not in this pynvml)"
        else:
            try:
                sup = fn(g.h)
                if not int(sup.isSupportedDevice):
                    reason = "NotSupported: GPM (Hopper and newer only)"
            except N.NVMLError_GpuIsLost:
                raise _Lost() from None
            except (N.NVMLError, AttributeError) as e:
                reason = _reason(e, "nvmlGpmQueryDeviceSupport")
        if not reason:
            try:
                g.gpm_old = N.nvmlGpmSampleAlloc()
                g.gpm_new = N.nvmlGpmSampleAlloc()
                N.nvmlGpmSampleGet(g.h, g.gpm_old)
            except N.NVMLError_GpuIsLost:
                raise _Lost() from None
            except (N.NVMLError, AttributeError) as e:
                reason = _reason(e, "nvmlGpmSampleGet")
        if reason:
            g.probes["gpm"] = reason
            for c in cols:
                g.unsupported[c] = reason
            if g.role[_R_PCIE_TX] < 0:
                g.unsupported["pcie_tx_bps"] = g.probes.get(
                    "field {}".format(FI_PCIE_TX_BYTES), reason
                )
            if g.role[_R_PCIE_RX] < 0:
                g.unsupported["pcie_rx_bps"] = g.probes.get(
                    "field {}".format(FI_PCIE_RX_BYTES), reason
                )
            return
        g.gpm = True
        g.gpm_t = -1.0  # taken at start-up; the first tick's sample is far enough apart
        ids = [GPM_SM_UTIL, GPM_SM_OCCUPANCY, GPM_ANY_TENSOR, GPM_DRAM_BW]
        ids += [GPM_FP64, GPM_FP32, GPM_FP16]
        # PCIe and NVLink throughput from GPM too: it is read every tick anyway, and where it
        # answers them (seen at its first read) the byte-counter fields leave the per-tick
        # field read, the costliest call of a tick.
        ids += [GPM_PCIE_TX, GPM_PCIE_RX]
        if g.nvlink_links:
            ids += [GPM_NVLINK_TX, GPM_NVLINK_RX]
        reqs = []
        for first, second in ((g.gpm_old, g.gpm_new), (g.gpm_new, g.gpm_old)):
            req = N.c_nvmlGpmMetricsGet_t()
            req.version = N.NVML_GPM_METRICS_GET_VERSION
            req.numMetrics = len(ids)
            req.sample1 = first
            req.sample2 = second
            for i, mid in enumerate(ids):
                req.metrics[i].metricId = mid
            reqs.append(req)
        g.gpm_req, g.gpm_req2 = reqs
        g.gpm_flip = True
        g.gpm_ids = ids
        g.gpm_vals = {mid: None for mid in ids}
        g.gpm_struct, g.gpm_offset = _gpm_layout(len(ids))

    def _probe_slow(self, g: _Gpu) -> None:
        cand = [FI_ECC_SBE_AGG, FI_ECC_DBE_AGG]
        if g.nvlink_links:
            cand += [
                FI_NVLINK_CRC_FLIT_TOTAL,
                FI_NVLINK_CRC_DATA_TOTAL,
                FI_NVLINK_REPLAY_TOTAL,
                FI_NVLINK_RECOVERY_TOTAL,
                FI_NVLINK_ECC_DATA_TOTAL,
            ]
        fv = _fields(g.h, cand)
        if fv is not None:
            ok = N.NVML_SUCCESS
            g.slow_fields = [f for f, r in zip(cand, fv) if r.nvmlReturn == ok]  # noqa: B905
        t0 = self._cpu()
        self._slow(g, first=True)
        g.cost["slow"] = self._us(t0)
        if g.remap is None:
            reason = g.probes.get("nvmlDeviceGetRemappedRows", "")
            g.unsupported["remap_pending"] = reason
            g.unsupported["remap_failed"] = reason
        if g.retired_pending is None:
            g.unsupported["retired_pending"] = g.probes.get(
                "nvmlDeviceGetRetiredPagesPendingStatus", ""
            )
        if g.ecc_vol_call and g.ecc_vol[0] is None and g.role[_R_SBE] < 0:
            g.unsupported["ecc_sbe_vol"] = g.probes.get(
                "nvmlDeviceGetTotalEccErrors", g.probes.get("field 3", "")
            )
        if g.ecc_vol_call and g.ecc_vol[1] is None and g.role[_R_DBE] < 0:
            g.unsupported["ecc_dbe_vol"] = g.probes.get(
                "nvmlDeviceGetTotalEccErrors", g.probes.get("field 4", "")
            )

    # ------------------------------------------------------------------ tiers

    def _call(self, g: _Gpu, name: str, fn: Callable[..., Any], *args: Any) -> Any:
        """A call in the medium/slow tiers: None on error, _Lost when the GPU is lost."""
        try:
            return fn(g.h, *args)
        except N.NVMLError_GpuIsLost:
            raise _Lost() from None
        except (N.NVMLError, N.NVMLLibraryMismatchError, AttributeError) as e:
            if name not in g.probes:
                g.probes[name] = _reason(e, name)
            g.errors[name] = g.errors.get(name, 0) + 1
            return None

    def _medium(self, g: _Gpu, first: bool = False) -> None:
        v = self._call(
            g, "nvmlDeviceGetCurrPcieLinkGeneration", N.nvmlDeviceGetCurrPcieLinkGeneration
        )
        g.pcie_gen = _int(v)
        v = self._call(g, "nvmlDeviceGetCurrPcieLinkWidth", N.nvmlDeviceGetCurrPcieLinkWidth)
        g.pcie_width = _int(v)
        if "power_limit_w" not in g.unsupported:
            v = self._call(g, "nvmlDeviceGetEnforcedPowerLimit", N.nvmlDeviceGetEnforcedPowerLimit)
            g.power_limit_w = _watts(v)
        if g.role[_R_REPLAY] < 0 and "pcie_replays" not in g.unsupported:
            v = self._call(g, "nvmlDeviceGetPcieReplayCounter", N.nvmlDeviceGetPcieReplayCounter)
            g.pcie_replays_call = _int(v)
        # Else the states come with this tick's field read (the medium tier's group).
        merged = g.nvlink_state_fields is not None and g.link_states_via == "fields"
        if g.nvlink_links and "nvlink_up" not in g.unsupported and (first or not merged):
            t0 = self._cpu()
            self._read_link_states(g)
            if first:
                g.cost["link_states_read"] = self._us(t0)

    def _read_link_states(self, g: _Gpu) -> None:
        """Every link's state: one field read for all links where fields answer and the
        start-up timing found them the cheaper way (and at start-up, to time them), else one
        call per link."""
        fv = None
        if g.nvlink_state_fields is not None and g.link_states_via == "fields":
            fv = self._call(
                g, "nvmlDeviceGetFieldValues", N.nvmlDeviceGetFieldValues, g.nvlink_state_fields
            )
        states: List[Optional[int]] = []  # per link, for the links message
        if fv is not None:
            for r in fv:
                if r.nvmlReturn == N.NVML_SUCCESS:
                    states.append(1 if _fv_value(r) else 0)
                else:
                    states.append(None)
        else:
            for link in range(g.nvlink_links):
                st = self._call(g, "nvmlDeviceGetNvLinkState", N.nvmlDeviceGetNvLinkState, link)
                states.append(None if st is None else 1 if int(st) else 0)
        self._apply_link_states(g, states)

    def _apply_link_states(self, g: _Gpu, states: List[Optional[int]]) -> None:
        """Links up from per-link states (None: that link did not answer); an event when
        fewer are up than at the last read."""
        g.link_states = states
        ok = any(v is not None for v in states)
        up = sum(1 for v in states if v)
        prev = g.nvlink_up
        g.nvlink_up = up if ok else None
        if prev is not None and ok and up < prev:
            self._link_trouble = True
            self._events.append(
                {
                    "type": protocol.EVENT_NVLINK,
                    "gpu": g.index,
                    "code": up,
                    "message": "GPU {}: NVLink links up fell from {} to {} of {}".format(
                        g.index, prev, up, g.nvlink_links
                    ),
                }
            )

    def _links_read(self, g: _Gpu) -> None:
        """The per-link row of the ``links`` message. Cost: one extra nvmlDeviceGetFieldValues
        per NVLink GPU per medium tick (5 s), 3 fields per link (54 on an H100); the link
        states come from the medium tier's state read just before."""
        fv = self._call(g, "nvmlDeviceGetFieldValues", N.nvmlDeviceGetFieldValues, g.link_fields)
        n = g.nvlink_links
        states = g.link_states or []
        up: List[Optional[int]] = [states[k] if k < len(states) else None for k in range(n)]
        tx: List[Optional[int]] = [None] * n
        rx: List[Optional[int]] = [None] * n
        speed: List[Optional[int]] = [None] * n
        if fv is not None:
            cnt = g.link_cnt
            for i, r in enumerate(fv):
                ret = int(r.nvmlReturn)
                if ret == N.NVML_ERROR_GPU_IS_LOST:
                    raise _Lost() from None
                if ret != N.NVML_SUCCESS:
                    continue
                link, what = divmod(i, 3)
                v = _fv_value(r)
                if v is None:
                    continue
                if what == 2:
                    speed[link] = int(v) * 1000000  # MB/s -> B/s
                    continue
                # Counted like the per-GPU totals: KiB deltas over NVML's µs timestamps,
                # a counter that went down (wrap, reset) gives null, never a negative rate.
                rate = _rate(cnt, 2 * link + what, v, int(r.timestamp), 1024.0, _NVLINK_CAP)
                if what == 0:
                    tx[link] = rate
                else:
                    rx[link] = rate
        g.link_row = [g.index, tx, rx, up, speed]

    def watch_links(self, seconds: float, mono: float) -> None:
        """Per-link reads at their wanted period (medium_s) for ``seconds`` from ``mono``,
        the first at the next tick (see base). Not counted against the CPU budget: someone
        asked for them."""
        self._links_watch_until = max(self._links_watch_until, mono + float(seconds))
        for g in self._gpus:
            if g.link_fields is not None and g.next_fields is not None:
                g.next_links = min(g.next_links, mono)

    def links(self, mono: float) -> List[List[Any]]:
        """The per-link rows read by the medium tiers since the last call (see base)."""
        rows: List[List[Any]] = []
        for g in self._gpus:
            if g.link_row is not None:
                if not g.lost:
                    rows.append(g.link_row)
                g.link_row = None
        return rows

    def _slow(self, g: _Gpu, first: bool = False) -> None:
        idx = g.index
        fn = self._fn("nvmlDeviceGetRemappedRows")
        rr = self._call(g, "nvmlDeviceGetRemappedRows", fn) if fn else None
        if rr is not None:
            cur = (int(rr[0]), int(rr[1]), int(rr[2]), int(rr[3]))
            prev = g.remap
            g.remap = cur
            if not first and prev is not None and cur != prev:
                self._events.append(
                    {
                        "type": protocol.EVENT_REMAP,
                        "gpu": idx,
                        "code": cur[2],
                        "message": (
                            "GPU {}: remapped rows changed (correctable {}, uncorrectable {}, "
                            "pending {}, failed {}){}".format(
                                idx,
                                cur[0],
                                cur[1],
                                cur[2],
                                cur[3],
                                ": reset the GPU to apply" if cur[2] else "",
                            )
                        ),
                    }
                )
        fn = self._fn("nvmlDeviceGetRetiredPagesPendingStatus")
        rp = self._call(g, "nvmlDeviceGetRetiredPagesPendingStatus", fn) if fn else None
        if rp is not None:
            prev_rp = g.retired_pending
            g.retired_pending = int(rp)
            if not first and prev_rp is not None and int(rp) and not prev_rp:
                self._events.append(
                    {
                        "type": protocol.EVENT_RETIRED,
                        "gpu": idx,
                        "code": 1,
                        "message": "GPU {}: a page retirement is pending (reset the GPU)".format(
                            idx
                        ),
                    }
                )
        if g.ecc_vol_call and "ecc_sbe_vol" not in g.unsupported:
            f = N.nvmlDeviceGetTotalEccErrors
            s = self._call(
                g,
                "nvmlDeviceGetTotalEccErrors",
                f,
                N.NVML_MEMORY_ERROR_TYPE_CORRECTED,
                N.NVML_VOLATILE_ECC,
            )
            d = self._call(
                g,
                "nvmlDeviceGetTotalEccErrors",
                f,
                N.NVML_MEMORY_ERROR_TYPE_UNCORRECTED,
                N.NVML_VOLATILE_ECC,
            )
            g.ecc_vol = (_int(s), _int(d))
            if d is not None:
                self._dbe_check(g, int(d), first)
        if g.slow_fields:
            fv = _fields(g.h, g.slow_fields)
            if fv is not None:
                vals = {}
                for fid, r in zip(g.slow_fields, fv):  # noqa: B905 - Python 3.8
                    ret = int(r.nvmlReturn)
                    if ret == N.NVML_ERROR_GPU_IS_LOST:
                        raise _Lost() from None
                    if ret == N.NVML_SUCCESS:
                        vals[fid] = _fv_value(r)
                g.ecc_agg = (_int(vals.get(FI_ECC_SBE_AGG)), _int(vals.get(FI_ECC_DBE_AGG)))
                nvl = [
                    vals[f]
                    for f in (
                        FI_NVLINK_CRC_FLIT_TOTAL,
                        FI_NVLINK_CRC_DATA_TOTAL,
                        FI_NVLINK_REPLAY_TOTAL,
                        FI_NVLINK_RECOVERY_TOTAL,
                        FI_NVLINK_ECC_DATA_TOTAL,
                    )
                    if f in vals
                ]
                if nvl:
                    total = int(sum(int(x) for x in nvl))
                    prev_total = g.nvlink_errors
                    g.nvlink_errors = total
                    if not first and prev_total is not None and total > prev_total:
                        self._link_trouble = True
                        self._events.append(
                            {
                                "type": protocol.EVENT_NVLINK,
                                "gpu": idx,
                                "code": total - prev_total,
                                "message": "GPU {}: {} new NVLink errors (CRC, replay, recovery, "
                                "ECC) in the last {:.0f} s".format(
                                    idx, total - prev_total, self.slow_s
                                ),
                            }
                        )

    def _dbe_check(self, g: _Gpu, dbe: int, first: bool) -> None:
        prev = g.last_dbe
        g.last_dbe = dbe
        if first or prev is None or not g.dbe_events:
            return
        if dbe > prev:
            self._events.append(
                {
                    "type": protocol.EVENT_ECC,
                    "gpu": g.index,
                    "code": dbe - prev,
                    "message": "GPU {}: {} new uncorrectable (double-bit) ECC errors".format(
                        g.index, dbe - prev
                    ),
                }
            )

    # ------------------------------------------------------------------ per tick

    def tick(self, mono: float) -> List[List[Any]]:
        gpus = self._gpus
        pool = self._pool
        # The tick returns when every GPU's part is done, so a tick never overlaps the next
        # (a late one is skipped by the loop, never queued). Which GPUs go to the reader
        # threads: see nvml_pool.
        if pool is None:
            out = [self._gpu_tick(g, mono) for g in gpus]
        elif self._pool_all:
            out = list(pool.map(self._gpu_tick, gpus, [mono] * len(gpus)))
        else:
            futures = {
                g.index: pool.submit(self._gpu_tick, g, mono)
                for g in gpus
                if self._long_due(g, mono)
            }
            here = {g.index: self._gpu_tick(g, mono) for g in gpus if g.index not in futures}
            out = [futures[g.index].result() if g.index in futures else here[g.index] for g in gpus]
        rows: List[List[Any]] = []
        for g, (row, lost) in zip(gpus, out):  # noqa: B905 - Python 3.8
            if lost:
                self._mark_lost(g, "while sampling")
            rows.append(row)
        rows.extend(nvml_mig.row(N, s) for s in self._mig)
        if self._link_trouble:
            self._link_trouble = False
            self.watch_links(LINK_TROUBLE_WATCH_S, mono)
        if self._measure_from is None:
            if self.plan_facts.get("settled"):
                self._start_measure(mono)
        elif mono - self._measure_from >= self.budget_check_s:
            self._check_budget(mono)
        if self._replan:
            self._replan = False
            self._plan_again(mono)
        return rows

    def _cpu(self) -> float:
        return self._cpu_clock()

    def _us(self, t0: float) -> float:
        """µs of CPU this thread spent since ``t0`` (a reading of ``_cpu``)."""
        return (self._cpu_clock() - t0) * 1e6

    def _plan_again(self, mono: float) -> None:
        """A new plan, in force at once: no tier waits longer than its new period."""
        self._plan()
        for g in self._gpus:
            if g.next_fields is not None:
                self._clamp_schedule(g, mono)

    def _start_measure(self, mono: float) -> None:
        self._measure_from = mono
        for g in self._gpus:
            g.spent = 0.0

    def _check_budget(self, mono: float) -> None:
        """Compare what the reads cost since the last check (their threads' CPU, the same
        work the start-up timing priced) with the plan, and plan again from the measure
        where the plan is off: over the budget, or under half of it with a tier stretched."""
        start = self._measure_from
        used = sum(g.spent for g in self._gpus)
        self._start_measure(mono)
        span = mono - start if start is not None else 0.0
        if span <= 0:
            return
        measured = used / span / 1e4  # µs per s -> % of a core
        facts = self.plan_facts
        facts["measured_pct"] = round(measured, 3)
        planned = float(facts.get("planned_pct") or 0.0)
        budget = float(facts.get("budget_pct") or 0.0)
        if planned <= 0 or budget <= 0:
            return
        stretched = any(self.tiers[k] > self._needed[k] * 1.0001 for k in self._needed)
        if measured > budget or (measured < 0.5 * budget and stretched):
            lo, hi = _SCALE_RANGE
            scale = min(hi, max(lo, self._cost_scale * measured / planned))
            if abs(scale - self._cost_scale) > 0.05 * self._cost_scale:
                self._cost_scale = scale
                self._plan_again(mono)  # the new plan keeps the measured figure

    def _long_due(self, g: _Gpu, mono: float) -> bool:
        """Whether this GPU's part of the tick holds a long read (its due tiers add
        LONG_READ_US or more to the per-tick calls, by the start-up timing): the first tick,
        a due medium, slow or per-link read, or counters whose field read is dear."""
        if g.lost:
            return False
        if g.next_fields is None:
            return True
        c = g.cost
        extra = 0.0
        if self._due(mono, g.next_medium):
            extra += c.get("medium", 0.0) + self._fv_cost(g, _G_ERRORS)
        if self._due(mono, g.next_slow):
            extra += c.get("slow", 0.0)
        if g.link_fields is not None and self._due(mono, g.next_links):
            extra += c.get("links", 0.0)
        if self.tiers["fields"] <= self.interval or self._due(mono, g.next_fields):
            extra += self._fv_cost(g, _G_FAST | _G_COUNTERS)
        else:
            extra += self._fv_cost(g, _G_FAST)
        return extra >= nvml_pool.LONG_READ_US

    def _clamp_schedule(self, g: _Gpu, mono: float) -> None:
        """After a new plan: no tier waits longer than its new period (plus its phase)."""
        for tier, nxt in (
            ("fields", g.next_fields or 0.0),
            ("medium", g.next_medium),
            ("slow", g.next_slow),
            ("links", g.next_links),
        ):
            if nxt > mono + self.tiers[tier] + 1e-6:
                self._schedule(g, tier, mono, first=True)

    def _due(self, mono: float, when: float) -> bool:
        # Half a tick of slack: a tick that comes a little early must not push a tier a
        # whole tick late.
        return mono >= when - 0.5 * self.interval

    def _gpu_tick(self, g: _Gpu, mono: float) -> Tuple[List[Any], bool]:
        """One GPU's part of a tick (run on the pool): its due tiers, then its row."""
        if g.lost:
            return _lost_row(g.index), False
        t0 = self._cpu()
        try:
            return self._gpu_tick_reads(g, mono)
        finally:
            g.spent += self._us(t0)

    def _gpu_tick_reads(self, g: _Gpu, mono: float) -> Tuple[List[Any], bool]:
        tiers = self.tiers
        every = self.interval
        try:
            if g.next_fields is None:
                # First tick: start-up read every tier; from here each GPU keeps its own
                # phase, so that GPUs take their costly reads on different ticks.
                for name in ("fields", "medium", "slow", "links"):
                    self._schedule(g, name, mono, first=True)
                mask = _G_FAST
                medium = slow = links = False
                if tiers["fields"] <= every:
                    mask |= _G_COUNTERS
            else:
                medium = self._due(mono, g.next_medium)
                slow = self._due(mono, g.next_slow)
                links = g.link_fields is not None and self._due(mono, g.next_links)
                mask = _G_FAST
                if tiers["fields"] <= every or self._due(mono, g.next_fields):
                    mask |= _G_COUNTERS
                    self._schedule(g, "fields", mono)
                if medium:
                    mask |= _G_ERRORS
                    self._schedule(g, "medium", mono)
                if g.fv_merge and mask & (_G_COUNTERS | _G_ERRORS):
                    # A field read costs per call here: whichever group is due, read both.
                    if not mask & _G_COUNTERS:
                        self._schedule(g, "fields", mono)
                    mask |= _G_COUNTERS | _G_ERRORS
                if slow:
                    self._schedule(g, "slow", mono)
                if links:
                    self._schedule(g, "links", mono)
            if medium:
                self._medium(g)
            if slow:
                self._slow(g)
            row = self._row(g, mono, mask=mask)
            if links:
                self._links_read(g)
            return row, False
        except _Lost:
            return _lost_row(g.index), True

    def _schedule(self, g: _Gpu, tier: str, mono: float, first: bool = False) -> None:
        """Set when ``tier`` is next due for this GPU: one period on, and on the first tick
        less this GPU's share of the period (GPU k of n: k/n of it, in whole ticks), so that
        the costly reads of different GPUs fall on different ticks."""
        period = self.tiers[tier]
        if tier == "links" and mono < self._links_watch_until:
            period = min(period, self._needed["links"])
        nxt = mono + period
        # Not the per-link reads: one links message carries every GPU's rows.
        if first and tier != "links":
            ticks = max(1, round(period / self.interval))
            n = max(1, len(self._gpus))
            # Earlier, not later: no GPU waits longer than the period for its first read.
            nxt -= int(g.phase * ticks // n) * self.interval
        if tier == "fields":
            g.next_fields = nxt
        elif tier == "medium":
            g.next_medium = nxt
        elif tier == "slow":
            g.next_slow = nxt
        elif tier == "links":
            g.next_links = nxt
        else:
            g.next_putil = nxt

    def _row(self, g: _Gpu, mono: float, gpm: bool = True, mask: int = _G_ALL) -> List[Any]:
        """One GPU's sample row; ``mask``: the field groups (_G_*) read on this tick."""
        h = g.h
        lay = g.fv_layouts[mask]
        reads = lay[_L_READS]
        try:
            # Fast path: every per-tick call straight, in one comprehension.
            raw = [fn(h, *args) if fn is not None else None for fn, args in reads]
        except N.NVMLError_GpuIsLost:
            raise _Lost() from None
        except (N.NVMLError, N.NVMLLibraryMismatchError):
            # A transient error somewhere: redo the calls one by one, each failing alone.
            raw = [self._tick_call(g, fn, args) for fn, args in reads]

        u = raw[_S_UTIL]
        if u is not None:
            if g.u_struct is not None:
                ug, um = g.u_struct.unpack_from(u)
            else:
                ug, um = u.gpu, u.memory
        else:
            ug = um = None
        pstate = raw[_S_PSTATE]
        if pstate == 32:  # NVML_PSTATE_UNKNOWN
            pstate = None
        pw = raw[_S_POWER]
        power = pw / 1000.0 if pw is not None else None
        m = raw[_S_MEM]
        if m is not None:
            used = g.m_struct.unpack_from(m)[g.m_used] if g.m_struct is not None else m.used
        else:
            used = None
        e = raw[_S_ENERGY]
        energy = e // 1000 if e is not None else None

        held = g.fv_held
        tmem, energy_f, vpow, vth, ptx, prx, ntx, nrx, pinst = held
        replays = sbe = dbe = None
        fv = raw[_S_FIELDS]
        if fv is not None:
            t = _unpack(lay, fv)
            role = lay[_L_ROLE]
            cnt = g.cnt
            b = role[_R_ENERGY]
            if b >= 0:
                energy_f = t[b + 6] // 1000 if t[b + 5] == 0 else None
            b = role[_R_MEMTEMP]
            if b >= 0:
                tmem = t[b + 6] if t[b + 5] == 0 else None
            b = role[_R_PCIE_TX]
            if b >= 0:
                ptx = _field_rate(t, b, cnt, _C_PCIE_TX, 1.0, _PCIE_CAP)
            b = role[_R_PCIE_RX]
            if b >= 0:
                prx = _field_rate(t, b, cnt, _C_PCIE_RX, 1.0, _PCIE_CAP)
            b = role[_R_REPLAY]
            if b >= 0 and t[b + 5] == 0:
                replays = t[b + 6]
                g.pcie_replays_call = replays  # (from field 94 here) sent until the next read
            b = role[_R_NVL_TX]
            if b >= 0:
                ntx = _field_rate(t, b, cnt, _C_NVL_TX, 1024.0, _NVLINK_CAP)
            b = role[_R_NVL_RX]
            if b >= 0:
                nrx = _field_rate(t, b, cnt, _C_NVL_RX, 1024.0, _NVLINK_CAP)
            b = role[_R_VPOW]
            if b >= 0:
                vpow = None
                if t[b + 5] == 0:
                    ns = t[b + 6]
                    b2 = role[_R_VBRAKE]
                    if b2 >= 0 and t[b2 + 5] == 0:
                        ns += t[b2 + 6]
                    vpow = _pct(cnt, _C_VPOW, ns, t[b + 2])
            ns = None
            ts = 0
            seen = False
            b = role[_R_VSW]
            if b >= 0:
                seen = True
                if t[b + 5] == 0:
                    ns = t[b + 6]
                    ts = t[b + 2]
            b = role[_R_VHW]
            if b >= 0:
                seen = True
                if t[b + 5] == 0:
                    ns = t[b + 6] + (ns or 0)
                    ts = t[b + 2]
            b = role[_R_VOLD]
            if b >= 0:
                seen = True
                if t[b + 5] == 0:
                    ns = t[b + 6]
                    ts = t[b + 2]
            if seen:
                vth = _pct(cnt, _C_VTHERM, ns, ts) if ns is not None else None
            b = role[_R_SBE]
            if b >= 0 and t[b + 5] == 0:
                sbe = t[b + 6]
                g.ecc_vol = (sbe, g.ecc_vol[1])
            b = role[_R_DBE]
            if b >= 0 and t[b + 5] == 0:
                dbe = t[b + 6]
                g.ecc_vol = (g.ecc_vol[0], dbe)
                if dbe != g.last_dbe:
                    self._dbe_check(g, dbe, g.last_dbe is None)
            b = role[_R_PINST]
            if b >= 0:
                pinst = t[b + 6] / 1000.0 if t[b + 5] == 0 else None
            b = lay[_L_STATES]
            if b >= 0:
                self._apply_link_states(
                    g,
                    [
                        (1 if t[b + 7 * k + 6] else 0) if t[b + 7 * k + 5] == 0 else None
                        for k in range(lay[_L_NSTATES])
                    ],
                )
            held[:] = [tmem, energy_f, vpow, vth, ptx, prx, ntx, nrx, pinst]
        r_all = g.role
        if r_all[_R_ENERGY] >= 0:
            energy = energy_f
        if r_all[_R_PINST] >= 0:
            power = pinst
        # Between medium ticks (or from the slow tier's call): the last values read.
        if sbe is None:
            sbe = g.ecc_vol[0]
        if dbe is None:
            dbe = g.ecc_vol[1]
        if replays is None:
            replays = g.pcie_replays_call

        sma = smo = tens = dram = fp64 = fp32 = fp16 = None
        if g.gpm and gpm:
            if g.gpm_t < 0 or g.gpm_checks:
                # The first reads: timed for the plan (the cheapest of them: a first call
                # pays one-off costs), and asked whether GPM gives PCIe and NVLink
                # throughput (the first one may come too soon after start-up).
                t0 = self._cpu()
                self._gpm(g, mono)
                took = self._us(t0)
                g.cost["gpm"] = min(took, g.cost.get("gpm", took))
                self._gpm_covers(g)
            elif mono - g.gpm_t >= 0.1:
                self._gpm(g, mono)
            gv = g.gpm_vals
            sma = gv[GPM_SM_UTIL]
            smo = gv[GPM_SM_OCCUPANCY]
            tens = gv[GPM_ANY_TENSOR]
            dram = gv[GPM_DRAM_BW]
            fp64, fp32, fp16 = gv[GPM_FP64], gv[GPM_FP32], gv[GPM_FP16]
            # GPM's throughput where the plan chose it, or where there are no such fields.
            if g.role[_R_PCIE_TX] < 0 and GPM_PCIE_TX in gv:
                v = gv[GPM_PCIE_TX]
                ptx = int(v * _MIB) if v is not None else None
                v = gv[GPM_PCIE_RX]
                prx = int(v * _MIB) if v is not None else None
            if g.role[_R_NVL_TX] < 0 and GPM_NVLINK_TX in gv:
                v = gv[GPM_NVLINK_TX]
                ntx = int(v * _MIB) if v is not None else None
                v = gv[GPM_NVLINK_RX]
                nrx = int(v * _MIB) if v is not None else None
        rm = g.remap
        return [
            g.index,
            ug,
            um,
            raw[_S_SM],
            raw[_S_MEMCLK],
            raw[_S_GFX],
            raw[_S_TEMP],
            tmem,
            power,
            g.power_limit_w,
            energy,
            pstate,
            raw[_S_REASONS],
            vpow,
            vth,
            raw[_S_FAN],
            used,
            ptx,
            prx,
            g.pcie_gen,
            g.pcie_width,
            replays,
            ntx,
            nrx,
            g.nvlink_up,
            sma,
            smo,
            tens,
            dram,
            fp64,
            fp32,
            fp16,
            sbe,
            dbe,
            rm[2] if rm is not None else None,
            rm[3] if rm is not None else None,
            g.retired_pending,
            0,
        ]

    def _tick_call(self, g: _Gpu, fn: Optional[Callable[..., Any]], args: Tuple[Any, ...]) -> Any:
        """One per-tick call on the slow path; a transient error is null for this tick only."""
        if fn is None:
            return None
        try:
            return fn(g.h, *args)
        except N.NVMLError_GpuIsLost:
            raise _Lost() from None
        except (N.NVMLError, N.NVMLLibraryMismatchError) as e:
            name = getattr(fn, "__name__", "?")
            g.errors[name] = g.errors.get(name, 0) + 1
            if name not in g.probes:
                g.probes[name] = _reason(e, name) + " (while sampling)"
            return None

    def _gpm_covers(self, g: _Gpu) -> None:
        """After the first GPM reads: note whether GPM answers PCIe (NVLink) throughput, and
        have the CPU plan made again with this GPU's GPM cost known (_plan may then take
        throughput from GPM instead of the per-tick byte-counter fields)."""
        vals = g.gpm_vals
        has = g.gpm_has
        if vals.get(GPM_PCIE_TX) is not None and vals.get(GPM_PCIE_RX) is not None:
            has["pcie"] = True
        if vals.get(GPM_NVLINK_TX) is not None and vals.get(GPM_NVLINK_RX) is not None:
            has["nvlink"] = True
        # Three reads are asked in all (timed each); fewer are not enough to time it.
        g.gpm_checks = 2 if g.gpm_checks is None else max(0, g.gpm_checks - 1)
        self._replan = True

    def _use_gpm_throughput(self, g: _Gpu) -> bool:
        """Take PCIe / NVLink throughput from GPM (which is read every tick anyway) instead of
        the byte-counter fields, which then leave the per-tick field read. GPM's rate is an
        average over the tick, exact whatever the traffic; a 32-bit byte counter read once a
        second under-reads above 4 GiB/s. True when something changed."""
        drop: List[int] = []
        held: List[int] = []
        cov = g.gpm_covers
        for what, roles, slots in (
            ("pcie", (_R_PCIE_TX, _R_PCIE_RX), (_H_PTX, _H_PRX)),
            ("nvlink", (_R_NVL_TX, _R_NVL_RX), (_H_NTX, _H_NRX)),
        ):
            if g.gpm_has[what] and not cov[what]:
                cov[what] = True
                drop += roles
                held += slots
        if not drop:
            return False
        g.fv_keep = [k for k in g.fv_keep if k[0] not in drop]
        for r in drop:
            g.role[r] = -1
        for h in held:
            g.fv_held[h] = None
        self._build_layouts(g)
        return True

    def _gpm(self, g: _Gpu, mono: float) -> None:
        # Two requests, one per order of the two samples, so no field is written per tick.
        req = g.gpm_req if g.gpm_flip else g.gpm_req2
        try:
            N.nvmlGpmSampleGet(g.h, g.gpm_new)
            N.nvmlGpmMetricsGet(req)
        except N.NVMLError_GpuIsLost:
            raise _Lost() from None
        except N.NVMLError:
            g.errors["gpm"] = g.errors.get("gpm", 0) + 1
            for k in g.gpm_vals:
                g.gpm_vals[k] = None
            return
        vals = g.gpm_vals
        ids = g.gpm_ids
        s = g.gpm_struct
        if s is not None:
            t = s.unpack_from(req, g.gpm_offset)
            for i in range(len(ids)):
                v = t[3 * i + 2]
                vals[ids[i]] = round(v, 1) if t[3 * i + 1] == 0 and v == v else None
        else:
            metrics = req.metrics
            for i in range(len(ids)):
                m = metrics[i]
                v = m.value
                vals[ids[i]] = round(v, 1) if m.nvmlReturn == 0 and v == v else None
        g.gpm_old, g.gpm_new = g.gpm_new, g.gpm_old
        g.gpm_flip = not g.gpm_flip
        g.gpm_t = mono

    # ------------------------------------------------------------------ lost GPUs, events

    def _mark_lost(self, g: _Gpu, when: str) -> None:
        g.lost = True
        if self._lost_reported.get(g.index):
            return
        self._lost_reported[g.index] = True
        self._events.append(
            {
                "type": protocol.EVENT_GPU_LOST,
                "gpu": g.index,
                "code": None,
                "message": "GPU {} is lost ({}): NVML reports it fell off the bus; "
                "the other GPUs are still sampled".format(g.index, when),
            }
        )

    def _on_event_lost(self, index: int) -> None:
        # Called from the event thread on Xid 79. The next tick's calls will raise GpuIsLost
        # and mark it; nothing to do here but let that happen (no shared state is touched).
        return None

    def events(self, mono: float) -> List[Dict[str, Any]]:
        out: List[Dict[str, Any]] = []
        q = self._events
        while q:
            out.append(q.popleft())
        return out

    # ------------------------------------------------------------------ processes

    def procs(self, mono: float) -> List[Dict[str, Any]]:
        """NVML's entries of every GPU, matched to the processes here that hold the GPUs'
        device files (gpu_holders: in a container NVML's PIDs are the host's), plus the
        holders NVML has no entry for."""
        self._last_mono = mono
        entries: List[gpu_holders.Entry] = []
        for g in self._gpus:
            if g.lost:
                continue
            # Per-process utilization (~1.8 ms a call on an H200) on its own tier: in between,
            # each process keeps the SM share last read.
            g.putil_due = self._due(mono, g.next_putil)
            if g.putil_due:
                self._schedule(g, "putil", mono, first=not g.next_putil)
            t0 = self._cpu()
            try:
                entries.extend(self._gpu_entries(g))
            except _Lost:
                self._mark_lost(g, "while listing processes")
            finally:
                g.spent += self._us(t0)
        gpu_of_minor = {g.minor: g.index for g in self._gpus if g.minor is not None}
        # The fd tables of every process: the process tier's extra cost, never per tick.
        own_ns = bool(self._where["own_pid_namespace"])
        found = self._last_scan
        if found is None or own_ns or mono >= self._next_scan:
            found = self._last_scan = self._scanner.scan(mono)
            self._next_scan = mono + self._holders_host_s
        holders = found.holders
        self._nvml_pids = gpu_holders.nvml_pid_verdict(entries, holders, gpu_of_minor)
        # Processes whose fds we may not read (another user's, without root) may hold a GPU
        # unseen: their NVML entries then look "not here".
        self._nvml_pids["unreadable"] = found.unreadable
        rows = gpu_holders.match(entries, holders, gpu_of_minor, own_ns)
        cache = self._proc_cache
        out: List[Dict[str, Any]] = []
        # One process can use several GPUs: read its stat once per snapshot.
        info_seen: Dict[int, Any] = {}
        for r in rows:
            e = r.entry
            st = user = name = cmd = None
            if r.pid is not None:
                info = info_seen.get(r.pid, False)
                if info is False:
                    info = info_seen[r.pid] = cache.lookup(r.pid)
                if info is not None:
                    st, user, name, cmd = info.start_ticks, info.user, info.name, info.cmd
            mapping = r.mapping
            if e is None and st is None:
                continue  # a holder of an earlier scan that has ended since
            if not own_ns and e is not None and st is None:
                # Same namespace and no such process: it has ended (or is hidden from us).
                mapping = gpu_holders.MAP_NOT_HERE
            h = holders.get(r.pid) if r.pid is not None else None
            out.append(
                {
                    "gpu": r.gpu,
                    # The PID here (what kill addresses); NVML's own where it is not here.
                    "pid": r.pid if r.pid is not None else r.host_pid,
                    "start_ticks": st,
                    "user": user,
                    "name": name,
                    "cmd": cmd,
                    "mem_bytes": e.mem if e is not None else None,
                    "sm_pct": e.sm if e is not None else None,
                    "type": e.kind if e is not None else None,
                    "host_pid": r.host_pid,
                    "mapping": mapping,
                    "holds_device": h is not None and r.gpu in _gpus_held(h, gpu_of_minor),
                    "orphan": h is not None and gpu_holders.is_orphan(h, holders),
                }
            )
        if self._mig:
            out = self._with_mig_procs(out, cache, info_seen)
        return out

    def _with_mig_procs(
        self, out: List[Dict[str, Any]], cache: Any, info_seen: Dict[int, Any]
    ) -> List[Dict[str, Any]]:
        """Processes of the MIG slices under the slices' indices; a process the parent GPU
        lists too is shown on its slice only."""

        def lookup(pid: int) -> Any:
            if pid not in info_seen:
                info_seen[pid] = cache.lookup(pid)
            return info_seen[pid]

        on_slice: Dict[int, Set[int]] = {}
        extra: List[Dict[str, Any]] = []
        for s in self._mig:
            mine = nvml_mig.procs(N, s, lookup)
            on_slice.setdefault(s.parent, set()).update(p["pid"] for p in mine)
            extra.extend(mine)
        kept = [p for p in out if p["pid"] not in on_slice.get(p["gpu"], ())]
        return kept + extra

    def _gpu_entries(self, g: _Gpu) -> List[gpu_holders.Entry]:
        by_pid: Dict[int, List[Any]] = {}  # pid -> [mem, type]
        for fn, kind in ((g.f_procs_c, "C"), (g.f_procs_g, "G")):
            if fn is None:
                continue
            plist = self._call(g, getattr(fn, "__name__", "processes"), fn)
            for p in plist or ():
                pid = int(p.pid)
                mem = p.usedGpuMemory
                ent = by_pid.get(pid)
                if ent is None:
                    by_pid[pid] = [mem, kind]
                else:
                    if ent[1] != kind:
                        ent[1] = "C+G"
                    if mem is not None:
                        ent[0] = max(ent[0] or 0, mem)
        sm: Dict[int, int] = {}
        putil_ok = g.f_putil is not None
        if putil_ok and by_pid and not g.putil_due:
            sm = {pid: v for pid, v in g.putil_sm.items() if pid in by_pid}
        elif putil_ok and by_pid:
            try:
                samples = g.f_putil(g.h, g.putil_ts)  # type: ignore[misc]
            except N.NVMLError_GpuIsLost:
                raise _Lost() from None
            except N.NVMLError_NotFound:
                samples = []
            except N.NVMLError as e:
                samples = []
                if getattr(e, "value", None) != N.NVML_SUCCESS:
                    putil_ok = False
                    g.errors["nvmlDeviceGetProcessUtilization"] = (
                        g.errors.get("nvmlDeviceGetProcessUtilization", 0) + 1
                    )
            newest = g.putil_ts
            best: Dict[int, int] = {}
            for s in samples:
                ts = int(s.timeStamp)
                pid = int(s.pid)
                if ts > newest:
                    newest = ts
                # The newest sample of each pid wins: it is what the process does now.
                if ts >= best.get(pid, -1):
                    best[pid] = ts
                    sm[pid] = int(s.smUtil)
            g.putil_ts = newest
            g.putil_sm = sm
        return [
            gpu_holders.Entry(
                g.index,
                pid,
                int(mem) if mem is not None else None,
                kind,
                sm.get(pid, 0) if putil_ok else None,
            )
            for pid, (mem, kind) in sorted(by_pid.items())
        ]

    # ------------------------------------------------------------------ hello, info, check

    def _gpu_hello(self, g: _Gpu) -> Dict[str, Any]:
        info = g.info
        unsupported = dict(g.unsupported)
        if g.lost:
            unsupported = {c: "GpuIsLost" for c in _ROW_ORDER if c != "lost"}
        return {
            "index": g.index,
            "uuid": info.get("uuid") or "",
            "name": info.get("name") or "GPU",
            "pci_bus_id": info.get("pci_bus_id") or "",
            "nominal": dict(g.nominal),
            "unsupported": unsupported,
            "serial": info.get("serial"),
            "vbios": info.get("vbios"),
            "arch": info.get("arch"),
            "compute_capability": info.get("compute_capability"),
            "brand": info.get("brand"),
            "persistence_mode": info.get("persistence_mode"),
            "mig_mode": info.get("mig_mode"),
            "virtualization_mode": info.get("virtualization_mode"),
            "ecc_mode": info.get("ecc_mode"),
            "gpm": g.gpm,
            "memory_info": "v2" if g.mem_v2 else "v1",
            "probes": dict(g.probes),
            "lost": 1 if g.lost else 0,
            "minor": g.minor,
            "device": gpu_holders.device_path(g.minor, self._dev_dir)
            if g.minor is not None
            else None,
            # What each kind of read cost at start-up (µs of CPU), and which reads GPM
            # replaced: what the CPU plan (hello's cpu_budget) was made from.
            protocol.GPU_COST_KEY: {k: round(v, 1) for k, v in sorted(g.cost.items())},
            "gpm_throughput": sorted(k for k, v in g.gpm_covers.items() if v),
        }

    def _where_facts(self) -> Dict[str, Any]:
        """Where the sampler runs, for hello and check: the /proc evidence, and how NVML's
        PIDs of the latest process listing look from here."""
        if self._nvml_pids is None:
            self.procs(self._last_mono)
        return {
            "where": self._where["where"],
            "own_pid_namespace": self._where["own_pid_namespace"],
            "where_evidence": list(self._where["evidence"]),
            "nvml_pids": dict(self._nvml_pids or {}),
        }

    def hello(self) -> Dict[str, Any]:
        gpus = [self._gpu_hello(g) for g in self._gpus]
        for g, out in zip(self._gpus, gpus):  # noqa: B905 - Python 3.8
            if g.links_why is not None:
                out[protocol.LINKS_UNSUPPORTED_KEY] = g.links_why
        by_index = {g["index"]: g for g in gpus}
        gpus.extend(nvml_mig.hello(s, by_index.get(s.parent, {})) for s in self._mig)
        host = dict(self._host)
        host.update(self._where_facts())
        return {"host": host, "gpus": gpus, protocol.CPU_BUDGET_KEY: self.cpu_plan()}

    def cpu_plan(self) -> Dict[str, Any]:
        """The CPU budget and the plan that fits it (hello's ``cpu_budget``)."""
        return dict(self.plan_facts, tiers_s=dict(self.plan_facts.get("tiers_s") or {}))

    def info(self) -> Dict[str, Any]:
        host = dict(self._host)
        host.update(self._where_facts())
        return {
            "backend": "nvml",
            "host": host,
            "gpu_count": len(self._gpus),
            "gpus": [self._gpu_hello(g) for g in self._gpus],
        }

    def check(self) -> Dict[str, Any]:
        """Facts for the start-of-rental check; the laptop turns them into verdicts."""
        rows = {r[0]: r for r in self.tick(_monotonic())}
        procs = self.procs(_monotonic())
        pos = protocol.ROW_POS
        gpus: List[Dict[str, Any]] = []
        for g in self._gpus:
            r = rows.get(g.index) or _lost_row(g.index)
            nom = g.nominal
            rm = g.remap
            ecc_mode = g.info.get("ecc_mode")
            mine = [p for p in procs if p["gpu"] == g.index]
            away = [p for p in mine if p.get("mapping") == gpu_holders.MAP_NOT_HERE]
            gpus.append(
                {
                    "index": g.index,
                    "uuid": g.info.get("uuid"),
                    "name": g.info.get("name"),
                    "pci_bus_id": g.info.get("pci_bus_id"),
                    "lost": 1 if g.lost else 0,
                    "persistence_mode": g.info.get("persistence_mode"),
                    "pstate": r[pos["pstate"]],
                    "clock_reasons": r[pos["clock_reasons"]],
                    "util_gpu_pct": r[pos["util_gpu_pct"]],
                    "power_w": r[pos["power_w"]],
                    "power_enforced_w": r[pos["power_limit_w"]],
                    "power_default_w": nom.get("power_default_w"),
                    "power_max_w": nom.get("power_max_w"),
                    "temp_gpu_c": r[pos["temp_gpu_c"]],
                    "temp_mem_c": r[pos["temp_mem_c"]],
                    "temp_slowdown_c": nom.get("temp_slowdown_c"),
                    "temp_shutdown_c": nom.get("temp_shutdown_c"),
                    "temp_mem_max_c": nom.get("temp_mem_max_c"),
                    "sm_clock_mhz": r[pos["sm_clock_mhz"]],
                    "sm_clock_max_mhz": nom.get("sm_clock_max_mhz"),
                    "pcie_gen": r[pos["pcie_gen"]],
                    "pcie_max_gen": nom.get("pcie_max_gen"),
                    "pcie_width": r[pos["pcie_width"]],
                    "pcie_max_width": nom.get("pcie_max_width"),
                    "pcie_replays": r[pos["pcie_replays"]],
                    "nvlink_links": nom.get("nvlink_links"),
                    "nvlink_up": r[pos["nvlink_up"]],
                    "nvlink_errors": g.nvlink_errors,
                    "ecc_mode": None if ecc_mode is None else bool(ecc_mode),
                    "ecc_sbe_vol": r[pos["ecc_sbe_vol"]],
                    "ecc_dbe_vol": r[pos["ecc_dbe_vol"]],
                    "ecc_sbe_agg": g.ecc_agg[0],
                    "ecc_dbe_agg": g.ecc_agg[1],
                    "remapped_rows_correctable": rm[0] if rm else None,
                    "remapped_rows_uncorrectable": rm[1] if rm else None,
                    "remap_pending": rm[2] if rm else None,
                    "remap_failed": rm[3] if rm else None,
                    "retired_pending": g.retired_pending,
                    # Xids are only known while a daemon watches; a one-shot check cannot say.
                    "xid_seen": "unknown",
                    "processes": len(mine),
                    "process_list": mine,
                    "minor": g.minor,
                    "device": gpu_holders.device_path(g.minor, self._dev_dir)
                    if g.minor is not None
                    else None,
                    # NVML entries with no process here: another tenant or the host.
                    "processes_not_here": len(away),
                    "mem_not_here_bytes": sum(p.get("mem_bytes") or 0 for p in away),
                    "mem_total_bytes": nom.get("mem_total_bytes"),
                    "mem_reserved_bytes": nom.get("mem_reserved_bytes"),
                    "mem_used_bytes": r[pos["mem_used_bytes"]],
                    "virtualization_mode": g.info.get("virtualization_mode"),
                    "mig_mode": g.info.get("mig_mode"),
                    "compute_mode": g.info.get("compute_mode"),
                    "unsupported": dict(g.unsupported),
                }
            )
        host = dict(self._host)
        host.update(self._where_facts())
        return {
            "backend": "nvml",
            "host": host,
            "driver_version": host.get("driver_version"),
            "cuda_version": host.get("cuda_version"),
            "gpu_count": len(gpus),
            "gpus": gpus,
            "events": self.events(_monotonic()),
        }

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self._event_thread is not None:
            self._event_thread.stop()
            self._event_thread = None
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None
        for g in self._gpus:
            for s in (g.gpm_old, g.gpm_new):
                if s is not None:
                    with contextlib.suppress(N.NVMLError):
                        N.nvmlGpmSampleFree(s)
            g.gpm_old = g.gpm_new = None
        with contextlib.suppress(N.NVMLError):
            N.nvmlShutdown()


# ---------------------------------------------------------------------- helpers


def _env_float(name: str, default: float) -> float:
    """A number from the environment, or ``default`` when unset or not a number."""
    try:
        return float(os.environ.get(name, ""))
    except ValueError:
        return default


def _monotonic() -> float:
    return time.monotonic()


def _gpus_held(h: gpu_holders.Holder, gpu_of_minor: Dict[int, int]) -> List[int]:
    return [gpu_of_minor[m] for m in h.minors if m in gpu_of_minor]


def _cpu() -> float:
    """This thread's CPU clock (s): NVML's time is CPU time, and other threads' is not ours."""
    return time.thread_time()


def _text(v: Any) -> Optional[str]:
    if v is None:
        return None
    if isinstance(v, bytes):
        return v.decode("utf-8", "replace")
    return str(v)


def _int(v: Any) -> Optional[int]:
    return int(v) if v is not None else None


def _watts(mw: Any) -> Optional[float]:
    return mw / 1000.0 if mw is not None else None


def _fid_text(fid: Any) -> str:
    if isinstance(fid, tuple):
        scope = "all" if fid[1] == _ALL_LINKS else str(fid[1])
        return "{}/{}".format(fid[0], scope)
    return str(fid)


def _code_name(ret: int) -> str:
    cls = getattr(N.NVMLError, "_valClassMapping", {}).get(ret)
    name = getattr(cls, "__name__", "")
    if name.startswith("NVMLError_"):
        return str(name[len("NVMLError_") :])
    return "NVMLError {}".format(ret)


def _fields(h: Any, ids: List[Any], g: Optional[_Gpu] = None) -> Any:
    """A start-up ``nvmlDeviceGetFieldValues``: None (reason noted) if the call itself fails."""
    try:
        return N.nvmlDeviceGetFieldValues(h, ids)
    except N.NVMLError_GpuIsLost:
        raise _Lost() from None
    except (N.NVMLError, AttributeError) as e:
        if g is not None:
            g.probes["nvmlDeviceGetFieldValues"] = _reason(e, "nvmlDeviceGetFieldValues")
        return None


def _fv_value(r: Any) -> Any:
    """A field's value read through the union member its ``valueType`` names."""
    t = int(r.valueType)
    v = r.value
    if t == 0:
        return v.dVal
    if t == 1:
        return v.uiVal
    if t == 2:
        return v.ulVal
    if t == 3:
        return v.ullVal
    if t == 4:
        return v.sllVal
    if t == 5:
        return v.siVal
    if t == 6:
        return v.usVal
    return None


def _layout(ctype: Any, fmt: str) -> Optional[struct.Struct]:
    """``struct.Struct(fmt)`` if it has the size of ``ctype`` (else None: read attributes)."""
    s = struct.Struct(fmt)
    try:
        return s if ctype is not None and ctypes.sizeof(ctype) == s.size else None
    except TypeError:
        return None


def _gpm_layout(n: int) -> Tuple[Optional[struct.Struct], int]:
    """A Struct reading (metricId, nvmlReturn, value) of the first ``n`` GPM metrics of a
    ``c_nvmlGpmMetricsGet_t``, and the offset of its metrics array; (None, 0) if the layout
    is not the one expected."""
    try:
        m = N.c_nvmlGpmMetric_t
        size = ctypes.sizeof(m)
        if (m.metricId.offset, m.nvmlReturn.offset, m.value.offset) != (0, 4, 8) or size < 16:
            return None, 0
        offset = int(N.c_nvmlGpmMetricsGet_t.metrics.offset)
    except (AttributeError, TypeError):
        return None, 0
    pad = "{}x".format(size - 16) if size > 16 else ""
    return struct.Struct("=" + ("IId" + pad) * n), offset


def _fv_struct(types: List[int]) -> Optional[struct.Struct]:
    """A struct.Struct reading a whole c_nvmlFieldValue_t array in one call.

    Layout: fieldId u32, scopeId u32, timestamp i64, latencyUsec i64, valueType u32,
    nvmlReturn u32, value (8-byte union). Used only if its size matches ctypes' own."""
    if not types:
        return None
    fmt = "=" + "".join("IIqqII" + _VALUE_FMT.get(t, "Q") for t in types)
    s = struct.Struct(fmt)
    try:
        if s.size != ctypes.sizeof(N.c_nvmlFieldValue_t) * len(types):
            return None
    except (AttributeError, TypeError):
        return None
    return s


def _unpack(lay: Any, fv: Any) -> Tuple[Any, ...]:
    """Flat tuple, 7 items per field: id, scope, ts, latency, type, return, value."""
    s = lay[_L_STRUCT]
    if s is not None:
        t: Tuple[Any, ...] = s.unpack_from(fv)
        # Every entry still has the value type seen at start-up (else read it the slow way).
        if t[4::7] == lay[_L_TYPES]:
            return t
    out: List[Any] = []
    for r in fv:
        out.extend((r.fieldId, r.scopeId, r.timestamp, r.latencyUsec, r.valueType, r.nvmlReturn))
        out.append(_fv_value(r) if r.nvmlReturn == 0 else None)
    return tuple(out)


def _field_rate(
    t: Tuple[Any, ...], b: int, cnt: List[Optional[List[Any]]], slot: int, unit: float, cap: float
) -> Optional[int]:
    """The rate of the byte counter at offset ``b`` of an unpacked field read (its value,
    NVML timestamp and value type there), or None where that field failed this time."""
    if t[b + 5] != 0:
        return None
    return _rate(cnt, slot, t[b + 6], t[b + 2], unit, cap, _WRAP.get(t[b + 4], 0))


def _rate(
    cnt: List[Optional[List[Any]]],
    slot: int,
    v: Any,
    ts: int,
    scale: float,
    cap: float,
    wrap: int = 0,
) -> Optional[int]:
    """Bytes/s from a cumulative counter and its µs timestamp; None on reset/glitch.

    ``wrap``: the modulus of a narrow counter (2**32 for a 32-bit one), whose decrease is
    taken as one wrap. More than one wrap between two reads cannot be seen: a 32-bit byte
    counter read once a second under-reads above 4 GiB/s."""
    st = cnt[slot]
    if st is None:
        cnt[slot] = [v, ts, None]
        return None
    pv, pts, last = st
    dt = ts - pts
    if dt <= 0:
        # NVML served a cached value: nothing new, keep showing the last rate.
        return last  # type: ignore[no-any-return]
    st[0] = v
    st[1] = ts
    dv = v - pv
    if dv < 0 and wrap:
        dv += wrap
    if dv < 0:
        st[2] = None
        return None
    r = dv * scale * 1e6 / dt
    if r > cap:
        st[2] = None
        return None
    r_int = int(r)
    st[2] = r_int
    return r_int


def _pct(cnt: List[Optional[List[Any]]], slot: int, ns: Any, ts: int) -> Optional[float]:
    """Share of the interval (%) from a cumulative ns counter and its µs timestamp."""
    st = cnt[slot]
    if st is None:
        cnt[slot] = [ns, ts, None]
        return None
    pv, pts, last = st
    dt = ts - pts
    if dt <= 0:
        return last  # type: ignore[no-any-return]
    st[0] = ns
    st[1] = ts
    dv = ns - pv
    if dv < 0:
        st[2] = None
        return None
    p = dv / (dt * 10.0)  # ns / (µs * 1000) * 100
    out: Optional[float] = round(p, 1)
    if p > 100.0:
        # Two overlapping reasons can add past 100 %; more than a little is a glitch.
        out = 100.0 if p < 110.0 else None
    st[2] = out
    return out


__all__ = ["NvmlBackend", "NvmlUnavailable"]
