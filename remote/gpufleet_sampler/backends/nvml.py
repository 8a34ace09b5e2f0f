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
from GPM instead of the byte-counter fields and stretches the slow tiers first: those no plot
shows per tick, until the plan costs no more than a peer tool's refresh (``nvml_plan``), then,
to fit the budget, those with a curve. Between reads of a tier its last values are sent.
GPUs are read side by side on a small pool of threads, and each GPU takes its costly tiers at
its own phase, so that a tick's wall time is about one GPU's and its costly reads do not all
land on one tick.

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

This module holds the backend's start, its tiers and the per-tick hot path; the start-up
probing is ``nvml_probe``, the CPU plan ``nvml_plan``, the processes tier ``nvml_procs``, the
state they share ``nvml_base``, the row layout and per-GPU state ``nvml_gpu`` (see
``nvml_base`` for how they stack).
"""

import contextlib
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, Deque, Dict, List, Optional, Tuple

from gpufleet_sampler import protocol, protocol_schema
from gpufleet_sampler.backends import nvml_lib as lib
from gpufleet_sampler.backends import nvml_mig, nvml_pool
from gpufleet_sampler.backends.nvml_events import EventThread
from gpufleet_sampler.backends.nvml_gpu import (
    _C_NVL_RX,
    _C_NVL_TX,
    _C_PCIE_RX,
    _C_PCIE_TX,
    _C_VPOW,
    _C_VTHERM,
    _FV_ITEMS,
    _FV_RET,
    _FV_TS,
    _FV_VAL,
    _G_ALL,
    _G_COUNTERS,
    _G_ERRORS,
    _G_FAST,
    _H_NRX,
    _H_NTX,
    _H_PRX,
    _H_PTX,
    _L_IDS,
    _L_NSTATES,
    _L_READS,
    _L_ROLE,
    _L_STATES,
    _MIB,
    _NVLINK_CAP,
    _PCIE_CAP,
    _R_DBE,
    _R_ENERGY,
    _R_MEMTEMP,
    _R_NVL_RX,
    _R_NVL_TX,
    _R_PCIE_RX,
    _R_PCIE_TX,
    _R_PINST,
    _R_REPLAY,
    _R_SBE,
    _R_VBRAKE,
    _R_VHW,
    _R_VOLD,
    _R_VPOW,
    _R_VSW,
    _RM_FAILED,
    _RM_PENDING,
    _S_ENERGY,
    _S_FAN,
    _S_FIELDS,
    _S_GFX,
    _S_MEM,
    _S_MEMCLK,
    _S_POWER,
    _S_PSTATE,
    _S_REASONS,
    _S_SM,
    _S_TEMP,
    _S_UTIL,
    BUDGET_CHECK_S,
    CPU_BUDGET_ENV,
    CPU_BUDGET_PCT,
    FI_ECC_DBE_AGG,
    FI_ECC_SBE_AGG,
    FI_NVLINK_CRC_DATA_TOTAL,
    FI_NVLINK_CRC_FLIT_TOTAL,
    FI_NVLINK_ECC_DATA_TOTAL,
    FI_NVLINK_RECOVERY_TOTAL,
    FI_NVLINK_REPLAY_TOTAL,
    GPM_ANY_TENSOR,
    GPM_DRAM_BW,
    GPM_FP16,
    GPM_FP32,
    GPM_FP64,
    GPM_NVLINK_RX,
    GPM_NVLINK_TX,
    GPM_PCIE_RX,
    GPM_PCIE_TX,
    GPM_SM_OCCUPANCY,
    GPM_SM_UTIL,
    LINK_TROUBLE_WATCH_S,
    _env_float,
    _field_rate,
    _fields,
    _fv_value,
    _Gpu,
    _int,
    _Lost,
    _lost_row,
    _pct,
    _rate,
    _reason,
    _unpack,
    _watts,
)
from gpufleet_sampler.backends.nvml_lib import NvmlUnavailable
from gpufleet_sampler.backends.nvml_procs import NvmlProcs
from gpufleet_sampler.procs import holders as gpu_holders
from gpufleet_sampler.procs import procfs


class NvmlBackend(NvmlProcs):
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
        if lib.N is None:
            raise NvmlUnavailable(
                "pynvml (nvidia-ml-py) is not importable here: {}".format(lib.IMPORT_ERROR)
            )
        self.interval = float(interval)
        if cpu_clock is not None:
            self._cpu_clock = cpu_clock
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
            # The PCIe / NVLink byte counters where GPM does not give their throughput.
            "rates": self.interval,
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
        self.peer_pct = None
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
            lib.N.nvmlInit()
        except lib.N.NVMLError as e:
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
        count = int(lib.N.nvmlDeviceGetCount())
        for i in range(count):
            try:
                h = lib.N.nvmlDeviceGetHandleByIndex(i)
            except lib.N.NVMLError as e:
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
            s for g in self._gpus if not g.lost for s in nvml_mig.probe(lib.N, g.index, g.h)
        ]
        self._plan()
        self._event_thread: Optional[EventThread] = None
        if events:
            live = [(g.index, g.h) for g in self._gpus if not g.lost]
            et = EventThread(lib.N, live, self._events, self._on_event_lost, wait_ms=event_wait_ms)
            et.start()
            for g in self._gpus:
                if g.index in et.reasons:
                    g.probes["xid_events"] = et.reasons[g.index]
                mask = et.registered.get(g.index, 0)
                g.dbe_events = not (mask & int(getattr(lib.N, "nvmlEventTypeDoubleBitEccError", 0)))
            self._event_thread = et

    def _medium(self, g: _Gpu, first: bool = False) -> None:
        v = self._call(
            g, "nvmlDeviceGetCurrPcieLinkGeneration", lib.N.nvmlDeviceGetCurrPcieLinkGeneration
        )
        g.pcie_gen = _int(v)
        v = self._call(g, "nvmlDeviceGetCurrPcieLinkWidth", lib.N.nvmlDeviceGetCurrPcieLinkWidth)
        g.pcie_width = _int(v)
        if "power_limit_w" not in g.unsupported:
            v = self._call(
                g, "nvmlDeviceGetEnforcedPowerLimit", lib.N.nvmlDeviceGetEnforcedPowerLimit
            )
            g.power_limit_w = _watts(v)
        if g.role[_R_REPLAY] < 0 and "pcie_replays" not in g.unsupported:
            v = self._call(
                g, "nvmlDeviceGetPcieReplayCounter", lib.N.nvmlDeviceGetPcieReplayCounter
            )
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
                g, "nvmlDeviceGetFieldValues", lib.N.nvmlDeviceGetFieldValues, g.nvlink_state_fields
            )
        states: List[Optional[int]] = []  # per link, for the links message
        if fv is not None:
            for r in fv:
                if r.nvmlReturn == lib.N.NVML_SUCCESS:
                    states.append(1 if _fv_value(r) else 0)
                else:
                    states.append(None)
        else:
            for link in range(g.nvlink_links):
                st = self._call(g, "nvmlDeviceGetNvLinkState", lib.N.nvmlDeviceGetNvLinkState, link)
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
                protocol_schema.event(
                    protocol.EVENT_NVLINK,
                    g.index,
                    up,
                    "GPU {}: NVLink links up fell from {} to {} of {}".format(
                        g.index, prev, up, g.nvlink_links
                    ),
                )
            )

    def _links_read(self, g: _Gpu) -> None:
        """The per-link row of the ``links`` message. Cost: one extra nvmlDeviceGetFieldValues
        per NVLink GPU per medium tick (5 s), 3 fields per link (54 on an H100); the link
        states come from the medium tier's state read just before."""
        fv = self._call(
            g, "nvmlDeviceGetFieldValues", lib.N.nvmlDeviceGetFieldValues, g.link_fields
        )
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
                if ret == lib.N.NVML_ERROR_GPU_IS_LOST:
                    raise _Lost() from None
                if ret != lib.N.NVML_SUCCESS:
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
                    protocol_schema.event(
                        protocol.EVENT_REMAP,
                        idx,
                        cur[2],
                        "GPU {}: remapped rows changed (correctable {}, uncorrectable {}, "
                        "pending {}, failed {}){}".format(
                            idx,
                            cur[0],
                            cur[1],
                            cur[2],
                            cur[3],
                            ": reset the GPU to apply" if cur[2] else "",
                        ),
                    )
                )
        fn = self._fn("nvmlDeviceGetRetiredPagesPendingStatus")
        rp = self._call(g, "nvmlDeviceGetRetiredPagesPendingStatus", fn) if fn else None
        if rp is not None:
            prev_rp = g.retired_pending
            g.retired_pending = int(rp)
            if not first and prev_rp is not None and int(rp) and not prev_rp:
                self._events.append(
                    protocol_schema.event(
                        protocol.EVENT_RETIRED,
                        idx,
                        1,
                        "GPU {}: a page retirement is pending (reset the GPU)".format(idx),
                    )
                )
        if g.ecc_vol_call and "ecc_sbe_vol" not in g.unsupported:
            f = lib.N.nvmlDeviceGetTotalEccErrors
            s = self._call(
                g,
                "nvmlDeviceGetTotalEccErrors",
                f,
                lib.N.NVML_MEMORY_ERROR_TYPE_CORRECTED,
                lib.N.NVML_VOLATILE_ECC,
            )
            d = self._call(
                g,
                "nvmlDeviceGetTotalEccErrors",
                f,
                lib.N.NVML_MEMORY_ERROR_TYPE_UNCORRECTED,
                lib.N.NVML_VOLATILE_ECC,
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
                    if ret == lib.N.NVML_ERROR_GPU_IS_LOST:
                        raise _Lost() from None
                    if ret == lib.N.NVML_SUCCESS:
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
                            protocol_schema.event(
                                protocol.EVENT_NVLINK,
                                idx,
                                total - prev_total,
                                "GPU {}: {} new NVLink errors (CRC, replay, recovery, "
                                "ECC) in the last {:.0f} s".format(
                                    idx, total - prev_total, self.slow_s
                                ),
                            )
                        )

    def _dbe_check(self, g: _Gpu, dbe: int, first: bool) -> None:
        prev = g.last_dbe
        g.last_dbe = dbe
        if first or prev is None or not g.dbe_events:
            return
        if dbe > prev:
            self._events.append(
                protocol_schema.event(
                    protocol.EVENT_ECC,
                    g.index,
                    dbe - prev,
                    "GPU {}: {} new uncorrectable (double-bit) ECC errors".format(
                        g.index, dbe - prev
                    ),
                )
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
        rows.extend(nvml_mig.row(lib.N, s) for s in self._mig)
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
        mask = self._fv_due(g, mono)
        if mask:
            extra += self._fv_cost(g, mask)
        return extra >= nvml_pool.LONG_READ_US

    def _fv_due(self, g: _Gpu, mono: float) -> int:
        """The field groups (_G_*) due on this tick for this GPU, the ones read with them
        where a field read costs per call (g.fv_merge) included; schedules nothing."""
        every = self.interval
        mask = 0
        if self.tiers["rates"] <= every or self._due(mono, g.next_rates):
            mask |= _G_FAST
        if self.tiers["fields"] <= every or self._due(mono, g.next_fields or 0.0):
            mask |= _G_COUNTERS
        if self._due(mono, g.next_medium):
            mask |= _G_ERRORS
        if g.fv_merge:
            # Whichever group is due, the others ride in the same call; the byte counters
            # only where their tier is stretched (else they are read every tick anyway).
            both = _G_COUNTERS | _G_ERRORS
            if self.tiers["rates"] > every and g.fv_layouts[_G_FAST][_L_IDS]:
                both |= _G_FAST
            if mask & both:
                mask |= both
        return mask

    def _clamp_schedule(self, g: _Gpu, mono: float) -> None:
        """After a new plan: no tier waits longer than its new period (plus its phase)."""
        for tier, nxt in (
            ("fields", g.next_fields or 0.0),
            ("rates", g.next_rates),
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
                for name in ("fields", "rates", "medium", "slow", "links"):
                    self._schedule(g, name, mono, first=True)
                # The byte counters are read on the first tick whatever their tier: their
                # first rate comes one period later.
                mask = _G_FAST
                medium = slow = links = False
                if tiers["fields"] <= every:
                    mask |= _G_COUNTERS
            else:
                slow = self._due(mono, g.next_slow)
                links = g.link_fields is not None and self._due(mono, g.next_links)
                mask = self._fv_due(g, mono)
                medium = self._due(mono, g.next_medium)
                for bit, name in ((_G_FAST, "rates"), (_G_COUNTERS, "fields")):
                    if mask & bit and tiers[name] > every:
                        self._schedule(g, name, mono)
                if medium:
                    # Not when its error counters only rode along (g.fv_merge): the medium
                    # tier's calls are due on its own schedule.
                    self._schedule(g, "medium", mono)
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
        elif tier == "rates":
            g.next_rates = nxt
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
        except lib.N.NVMLError_GpuIsLost:
            raise _Lost() from None
        except (lib.N.NVMLError, lib.N.NVMLLibraryMismatchError):
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

        replays = sbe = dbe = None
        fv = raw[_S_FIELDS]
        if fv is not None:
            replays, sbe, dbe = self._read_fields(g, lay, fv)
        tmem, energy_f, vpow, vth, ptx, prx, ntx, nrx, pinst = g.fv_held
        if not mask & _G_FAST:
            # The byte counters were not read on this tick (their tier is stretched): no
            # throughput value, rather than the last one again or one made up in between.
            ptx = prx = ntx = nrx = None
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
            rm[_RM_PENDING] if rm is not None else None,
            rm[_RM_FAILED] if rm is not None else None,
            g.retired_pending,
            0,
        ]

    def _read_fields(self, g: _Gpu, lay: Any, fv: Any) -> Tuple[Any, Any, Any]:
        """Decode this tick's field read into ``g.fv_held`` (a field that failed keeps its
        last value, or None where that is its meaning); returns (replays, sbe, dbe) where
        this read gave them, else None for each."""
        held = g.fv_held
        tmem, energy_f, vpow, vth, ptx, prx, ntx, nrx, pinst = held
        replays = sbe = dbe = None
        t = _unpack(lay, fv)
        # The offsets of a field's value as locals: read some 40 times a row.
        ret, val, ts_at, items = _FV_RET, _FV_VAL, _FV_TS, _FV_ITEMS
        role = lay[_L_ROLE]
        cnt = g.cnt
        b = role[_R_ENERGY]
        if b >= 0:
            energy_f = t[b + val] // 1000 if t[b + ret] == 0 else None
        b = role[_R_MEMTEMP]
        if b >= 0:
            tmem = t[b + val] if t[b + ret] == 0 else None
        b = role[_R_PCIE_TX]
        if b >= 0:
            ptx = _field_rate(t, b, cnt, _C_PCIE_TX, 1.0, _PCIE_CAP)
        b = role[_R_PCIE_RX]
        if b >= 0:
            prx = _field_rate(t, b, cnt, _C_PCIE_RX, 1.0, _PCIE_CAP)
        b = role[_R_REPLAY]
        if b >= 0 and t[b + ret] == 0:
            replays = t[b + val]
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
            if t[b + ret] == 0:
                ns = t[b + val]
                b2 = role[_R_VBRAKE]
                if b2 >= 0 and t[b2 + ret] == 0:
                    ns += t[b2 + val]
                vpow = _pct(cnt, _C_VPOW, ns, t[b + ts_at])
        ns = None
        ts = 0
        seen = False
        b = role[_R_VSW]
        if b >= 0:
            seen = True
            if t[b + ret] == 0:
                ns = t[b + val]
                ts = t[b + ts_at]
        b = role[_R_VHW]
        if b >= 0:
            seen = True
            if t[b + ret] == 0:
                ns = t[b + val] + (ns or 0)
                ts = t[b + ts_at]
        b = role[_R_VOLD]
        if b >= 0:
            seen = True
            if t[b + ret] == 0:
                ns = t[b + val]
                ts = t[b + ts_at]
        if seen:
            vth = _pct(cnt, _C_VTHERM, ns, ts) if ns is not None else None
        b = role[_R_SBE]
        if b >= 0 and t[b + ret] == 0:
            sbe = t[b + val]
            g.ecc_vol = (sbe, g.ecc_vol[1])
        b = role[_R_DBE]
        if b >= 0 and t[b + ret] == 0:
            dbe = t[b + val]
            g.ecc_vol = (g.ecc_vol[0], dbe)
            if dbe != g.last_dbe:
                self._dbe_check(g, dbe, g.last_dbe is None)
        b = role[_R_PINST]
        if b >= 0:
            pinst = t[b + val] / 1000.0 if t[b + ret] == 0 else None
        b = lay[_L_STATES]
        if b >= 0:
            self._apply_link_states(
                g,
                [
                    (1 if t[b + items * k + val] else 0) if t[b + items * k + ret] == 0 else None
                    for k in range(lay[_L_NSTATES])
                ],
            )
        held[:] = [tmem, energy_f, vpow, vth, ptx, prx, ntx, nrx, pinst]
        return replays, sbe, dbe

    def _tick_call(self, g: _Gpu, fn: Optional[Callable[..., Any]], args: Tuple[Any, ...]) -> Any:
        """One per-tick call on the slow path; a transient error is null for this tick only."""
        if fn is None:
            return None
        try:
            return fn(g.h, *args)
        except lib.N.NVMLError_GpuIsLost:
            raise _Lost() from None
        except (lib.N.NVMLError, lib.N.NVMLLibraryMismatchError) as e:
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
            lib.N.nvmlGpmSampleGet(g.h, g.gpm_new)
            lib.N.nvmlGpmMetricsGet(req)
        except lib.N.NVMLError_GpuIsLost:
            raise _Lost() from None
        except lib.N.NVMLError:
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
            protocol_schema.event(
                protocol.EVENT_GPU_LOST,
                g.index,
                None,
                "GPU {} is lost ({}): NVML reports it fell off the bus; "
                "the other GPUs are still sampled".format(g.index, when),
            )
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
                    with contextlib.suppress(lib.N.NVMLError):
                        lib.N.nvmlGpmSampleFree(s)
            g.gpm_old = g.gpm_new = None
        with contextlib.suppress(lib.N.NVMLError):
            lib.N.nvmlShutdown()


__all__ = ["NvmlBackend", "NvmlUnavailable"]
