"""What the NVML backend knows about one GPU and how it lays out a row: the wire order,
the field and GPM ids, the named offsets into its tuples (roles, tiers, held values, layouts,
calls, counters), the per-GPU state (``_Gpu``), and the helpers that decode NVML's values.

Python 3.8, stdlib + pynvml only.
"""

import ctypes
import os
import struct
import time
from typing import Any, Callable, Dict, List, Optional, Tuple

from gpufleet_sampler import protocol
from gpufleet_sampler.backends import nvml_lib as lib
from gpufleet_sampler.backends.nvml_events import _short
from gpufleet_sampler.procs import holders as gpu_holders

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
    ("rates", 10.0),
)
# The byte counters' tier ("rates", _G_FAST) stretches no further than 10 s: the longest a
# throughput value on the plot still shows a job's phases (the rate over the period is exact,
# a mean, whatever its length). Only 64-bit counters stretch: a 32-bit one wraps every 4 GiB,
# more than once between two reads at full PCIe speed (_PCIE_CAP), which no rate can see.

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
# One field value in an unpacked field read (``_unpack``: _FV_ITEMS items per field, from its
# offset): fieldId, scopeId, timestamp, latencyUsec, valueType, nvmlReturn, value.
_FV_TS, _FV_TYPE, _FV_RET, _FV_VAL = 2, 4, 5, 6
_FV_ITEMS = 7
# _Gpu.remap: (correctable rows, uncorrectable rows, a remap pending, a remap failed).
_RM_PENDING, _RM_FAILED = 2, 3
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


def rates_limit_s(g: "_Gpu", interval: float, longest: float) -> float:
    """The longest period this GPU's per-tick field group (_G_FAST) may be read at: the
    interval where it holds instant power (no power getter: a value, not a counter) or a
    narrow byte counter (see _WRAP), else ``longest``; the interval where it reads nothing."""
    fast = [k for k in g.fv_keep if k[3] == _G_FAST]
    if not fast:
        return longest
    for role, _fid, vt, _grp in fast:
        if role == _R_PINST or vt in _WRAP:
            return interval
    return longest


def _reason(e: BaseException, call: str) -> str:
    return "{}: {}".format(_short(lib.N, e), call)


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
        "next_rates",
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
        # When the byte counters (PCIe / NVLink, _G_FAST) are next read: every tick unless
        # the plan stretched the "rates" tier (see rates_limit_s).
        self.next_rates = 0.0
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
    cls = getattr(lib.N.NVMLError, "_valClassMapping", {}).get(ret)
    name = getattr(cls, "__name__", "")
    if name.startswith("NVMLError_"):
        return str(name[len("NVMLError_") :])
    return "NVMLError {}".format(ret)


def _fields(h: Any, ids: List[Any], g: Optional[_Gpu] = None) -> Any:
    """A start-up ``nvmlDeviceGetFieldValues``: None (reason noted) if the call itself fails."""
    try:
        return lib.N.nvmlDeviceGetFieldValues(h, ids)
    except lib.N.NVMLError_GpuIsLost:
        raise _Lost() from None
    except (lib.N.NVMLError, AttributeError) as e:
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
        m = lib.N.c_nvmlGpmMetric_t
        size = ctypes.sizeof(m)
        if (m.metricId.offset, m.nvmlReturn.offset, m.value.offset) != (0, 4, 8) or size < 16:
            return None, 0
        offset = int(lib.N.c_nvmlGpmMetricsGet_t.metrics.offset)
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
        if s.size != ctypes.sizeof(lib.N.c_nvmlFieldValue_t) * len(types):
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
        if t[_FV_TYPE::_FV_ITEMS] == lay[_L_TYPES]:
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
    if t[b + _FV_RET] != 0:
        return None
    return _rate(cnt, slot, t[b + _FV_VAL], t[b + _FV_TS], unit, cap, _WRAP.get(t[b + _FV_TYPE], 0))


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
