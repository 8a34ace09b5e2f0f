"""The Prometheus names of everything gpufleet measures: the one mapping table.

Both exporters render through this module (the sampler's ``exporter`` subcommand and the
app's ``gpufleet serve-metrics``), the rule exporter writes PromQL over these names, and the
Prometheus data source reads them back into protocol columns. Nothing else spells a metric
name.

Names, units, labels and HELP texts follow NVIDIA's dcgm-exporter (``etc/default-counters.csv``
and ``dcp-metrics-included.csv``), so that Grafana dashboard 12239 and existing alert rules
work unchanged: W (not mW), MiB for the framebuffer, MHz, °C, mJ for the energy counter,
``DCGM_FI_PROF_*`` activities as ratios 0..1, PROF byte metrics in bytes per second.

Labels per GPU, in dcgm-exporter's order: ``gpu``, ``UUID``, ``pci_bus_id``, ``device``
(``nvidia<index>``), ``modelName``, ``Hostname``, and ``DCGM_FI_DRIVER_VERSION`` where known.
``Hostname`` is spelled as every released dcgm-exporter up to 3.x spells it (newer main
branches write ``hostname``); existing dashboards and rules match on ``Hostname``.

What dcgm-exporter lacks is exported under ``gpufleet_*`` names in Prometheus' own style
(base units in the name): processes, one series per clock event reason, violation shares,
NVLink link counts and per-link rates and states (label ``link``), lost GPUs, Xid times, and
the app's cost, alerts and host state.

A value the GPU does not report is left out (no series), never written as 0.

Python 3.8, stdlib only: the sampler imports it, and so does the laptop side
(``gpufleet.core`` may import ``gpufleet_sampler``).
"""

import math
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

from gpufleet_sampler import protocol

MIB = float(1 << 20)
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
DEFAULT_SAMPLER_PORT = 9400  # dcgm-exporter's port: a drop-in scrape target
DEFAULT_FLEET_PORT = 9464
HOSTNAME_LABEL = "Hostname"

# Where a per-GPU value comes from.
COL = "col"  # a sample column, times ``scale``
NOM = "nom"  # a nominal value from hello, times ``scale``
SPECIAL = "special"  # computed by the renderer (free memory, reasons, Xids, processes)


class Family(object):
    """One metric family: name, Prometheus type, HELP text, and where its value comes from."""

    __slots__ = ("help", "key", "name", "scale", "source", "type")

    def __init__(
        self,
        name: str,
        mtype: str,
        help_text: str,
        source: str = SPECIAL,
        key: str = "",
        scale: float = 1.0,
    ) -> None:
        self.name = name
        self.type = mtype
        self.help = help_text
        self.source = source
        self.key = key
        self.scale = scale

    def header(self) -> str:
        return "# HELP {0} {1}\n# TYPE {0} {2}\n".format(self.name, self.help, self.type)


F = Family
# dcgm-exporter's metrics, in its CSV's order where it has them.
DCGM_FAMILIES = (
    F("DCGM_FI_DEV_SM_CLOCK", "gauge", "SM clock frequency (in MHz).", COL, "sm_clock_mhz"),
    F("DCGM_FI_DEV_MEM_CLOCK", "gauge", "Memory clock frequency (in MHz).", COL, "mem_clock_mhz"),
    F(
        "DCGM_FI_DEV_MAX_SM_CLOCK",
        "gauge",
        "Maximum supported SM clock (in MHz).",
        NOM,
        "sm_clock_max_mhz",
    ),
    F(
        "DCGM_FI_DEV_MAX_MEM_CLOCK",
        "gauge",
        "Maximum supported memory clock (in MHz).",
        NOM,
        "mem_clock_max_mhz",
    ),
    F(
        "DCGM_FI_DEV_APP_SM_CLOCK",
        "gauge",
        "Default applications SM clock, the base clock (in MHz).",
        NOM,
        "sm_clock_base_mhz",
    ),
    F("DCGM_FI_DEV_MEMORY_TEMP", "gauge", "Memory temperature (in C).", COL, "temp_mem_c"),
    F("DCGM_FI_DEV_GPU_TEMP", "gauge", "GPU temperature (in C).", COL, "temp_gpu_c"),
    F(
        "DCGM_FI_DEV_SLOWDOWN_TEMP",
        "gauge",
        "Slowdown temperature threshold (in C).",
        NOM,
        "temp_slowdown_c",
    ),
    F(
        "DCGM_FI_DEV_SHUTDOWN_TEMP",
        "gauge",
        "Shutdown temperature threshold (in C).",
        NOM,
        "temp_shutdown_c",
    ),
    F(
        "DCGM_FI_DEV_MEM_MAX_OP_TEMP",
        "gauge",
        "Maximum operating memory temperature (in C).",
        NOM,
        "temp_mem_max_c",
    ),
    F("DCGM_FI_DEV_POWER_USAGE", "gauge", "Power draw (in W).", COL, "power_w"),
    F(
        "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION",
        "counter",
        "Total energy consumption since boot (in mJ).",
        COL,
        "energy_j",
        1000.0,
    ),
    F(
        "DCGM_FI_DEV_ENFORCED_POWER_LIMIT",
        "gauge",
        "Effective power limit that the driver enforces (in W).",
        COL,
        "power_limit_w",
    ),
    F(
        "DCGM_FI_DEV_POWER_MGMT_LIMIT_DEF",
        "gauge",
        "Default power management limit (in W).",
        NOM,
        "power_default_w",
    ),
    F(
        "DCGM_FI_DEV_POWER_MGMT_LIMIT_MIN",
        "gauge",
        "Minimum power management limit (in W).",
        NOM,
        "power_min_w",
    ),
    F(
        "DCGM_FI_DEV_POWER_MGMT_LIMIT_MAX",
        "gauge",
        "Maximum power management limit (in W).",
        NOM,
        "power_max_w",
    ),
    F("DCGM_FI_DEV_PSTATE", "gauge", "Performance state (P-State) 0-15. 0=highest.", COL, "pstate"),
    F(
        "DCGM_FI_DEV_CLOCKS_EVENT_REASONS",
        "gauge",
        "Current clock event (throttle) reasons, a bitmask of nvmlClocksEventReason values.",
        COL,
        "clock_reasons",
    ),
    F(
        "DCGM_FI_DEV_PCIE_REPLAY_COUNTER",
        "counter",
        "Total number of PCIe retries.",
        COL,
        "pcie_replays",
    ),
    F("DCGM_FI_DEV_PCIE_LINK_GEN", "gauge", "PCIe current link generation.", COL, "pcie_gen"),
    F("DCGM_FI_DEV_PCIE_LINK_WIDTH", "gauge", "PCIe current link width.", COL, "pcie_width"),
    F(
        "DCGM_FI_DEV_PCIE_MAX_LINK_GEN",
        "gauge",
        "PCIe maximum link generation.",
        NOM,
        "pcie_max_gen",
    ),
    F(
        "DCGM_FI_DEV_PCIE_MAX_LINK_WIDTH",
        "gauge",
        "PCIe maximum link width.",
        NOM,
        "pcie_max_width",
    ),
    F("DCGM_FI_DEV_GPU_UTIL", "gauge", "GPU utilization (in %).", COL, "util_gpu_pct"),
    F("DCGM_FI_DEV_MEM_COPY_UTIL", "gauge", "Memory utilization (in %).", COL, "util_mem_pct"),
    F("DCGM_FI_DEV_FAN_SPEED", "gauge", "Fan speed (in %).", COL, "fan_pct"),
    F("DCGM_FI_DEV_XID_ERRORS", "gauge", "Value of the last XID error encountered."),
    F(
        "DCGM_FI_DEV_FB_TOTAL",
        "gauge",
        "Framebuffer memory total (in MiB).",
        NOM,
        "mem_total_bytes",
        1.0 / MIB,
    ),
    F("DCGM_FI_DEV_FB_FREE", "gauge", "Framebuffer memory free (in MiB)."),
    F(
        "DCGM_FI_DEV_FB_USED",
        "gauge",
        "Framebuffer memory used (in MiB).",
        COL,
        "mem_used_bytes",
        1.0 / MIB,
    ),
    F(
        "DCGM_FI_DEV_FB_RESERVED",
        "gauge",
        "Framebuffer memory reserved (in MiB).",
        NOM,
        "mem_reserved_bytes",
        1.0 / MIB,
    ),
    F(
        "DCGM_FI_DEV_ECC_SBE_VOL_TOTAL",
        "counter",
        "Total number of single-bit volatile ECC errors.",
        COL,
        "ecc_sbe_vol",
    ),
    F(
        "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL",
        "counter",
        "Total number of double-bit volatile ECC errors.",
        COL,
        "ecc_dbe_vol",
    ),
    F(
        "DCGM_FI_DEV_RETIRED_PENDING",
        "gauge",
        "Whether pages are pending retirement.",
        COL,
        "retired_pending",
    ),
    F(
        "DCGM_FI_DEV_ROW_REMAP_PENDING",
        "gauge",
        "Whether a row remapping is pending (needs a GPU reset).",
        COL,
        "remap_pending",
    ),
    F(
        "DCGM_FI_DEV_ROW_REMAP_FAILURE",
        "gauge",
        "Whether remapping of rows has failed",
        COL,
        "remap_failed",
    ),
    F(
        "DCGM_FI_PROF_SM_ACTIVE",
        "gauge",
        "The ratio of cycles an SM has at least 1 warp assigned.",
        COL,
        "sm_active_pct",
        0.01,
    ),
    F(
        "DCGM_FI_PROF_SM_OCCUPANCY",
        "gauge",
        "The ratio of number of warps resident on an SM.",
        COL,
        "sm_occupancy_pct",
        0.01,
    ),
    F(
        "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE",
        "gauge",
        "Ratio of cycles the tensor (HMMA) pipe is active.",
        COL,
        "tensor_active_pct",
        0.01,
    ),
    F(
        "DCGM_FI_PROF_DRAM_ACTIVE",
        "gauge",
        "Ratio of cycles the device memory interface is active sending or receiving data.",
        COL,
        "dram_active_pct",
        0.01,
    ),
    F(
        "DCGM_FI_PROF_PIPE_FP64_ACTIVE",
        "gauge",
        "Ratio of cycles the fp64 pipes are active.",
        COL,
        "fp64_active_pct",
        0.01,
    ),
    F(
        "DCGM_FI_PROF_PIPE_FP32_ACTIVE",
        "gauge",
        "Ratio of cycles the fp32 pipes are active.",
        COL,
        "fp32_active_pct",
        0.01,
    ),
    F(
        "DCGM_FI_PROF_PIPE_FP16_ACTIVE",
        "gauge",
        "Ratio of cycles the fp16 pipes are active.",
        COL,
        "fp16_active_pct",
        0.01,
    ),
    F(
        "DCGM_FI_PROF_PCIE_TX_BYTES",
        "gauge",
        "The rate of data transmitted over the PCIe bus - including both protocol headers and "
        "data payloads - in bytes per second.",
        COL,
        "pcie_tx_bps",
    ),
    F(
        "DCGM_FI_PROF_PCIE_RX_BYTES",
        "gauge",
        "The rate of data received over the PCIe bus - including both protocol headers and "
        "data payloads - in bytes per second.",
        COL,
        "pcie_rx_bps",
    ),
    F(
        "DCGM_FI_PROF_NVLINK_TX_BYTES",
        "gauge",
        "The rate of data transmitted over NVLink, not including protocol headers, in bytes "
        "per second.",
        COL,
        "nvlink_tx_bps",
    ),
    F(
        "DCGM_FI_PROF_NVLINK_RX_BYTES",
        "gauge",
        "The rate of data received over NVLink, not including protocol headers, in bytes per "
        "second.",
        COL,
        "nvlink_rx_bps",
    ),
)

# gpufleet's own per-GPU metrics: what dcgm-exporter does not have.
GPUFLEET_GPU_FAMILIES = (
    F(
        "gpufleet_graphics_clock_mhz",
        "gauge",
        "Current graphics clock (in MHz).",
        COL,
        "gfx_clock_mhz",
    ),
    F(
        "gpufleet_clock_event_reason",
        "gauge",
        "1 while this clock event (throttle) reason is active, else 0; one series per reason "
        "the driver reports (labels as dcgm-exporter names the bits).",
    ),
    F(
        "gpufleet_violation_power_percent",
        "gauge",
        "Share of the last sampling interval the clocks were held by the power cap (in %).",
        COL,
        "viol_power_pct",
    ),
    F(
        "gpufleet_violation_thermal_percent",
        "gauge",
        "Share of the last sampling interval the clocks were held by thermal slowdown (in %).",
        COL,
        "viol_thermal_pct",
    ),
    F("gpufleet_nvlink_links_up", "gauge", "NVLink links currently up.", COL, "nvlink_up"),
    F("gpufleet_nvlink_links", "gauge", "NVLink links the GPU has.", NOM, "nvlink_links"),
    F(
        "gpufleet_nvlink_link_speed_bytes",
        "gauge",
        "Nominal NVLink bandwidth of one link in one direction (in bytes per second).",
        NOM,
        "nvlink_link_bps",
    ),
    F(
        "gpufleet_nvlink_link_tx_bytes_per_second",
        "gauge",
        "Data transmitted on one NVLink link (label link), from its KiB counter, in bytes per "
        "second (every 5 s).",
    ),
    F(
        "gpufleet_nvlink_link_rx_bytes_per_second",
        "gauge",
        "Data received on one NVLink link (label link), from its KiB counter, in bytes per "
        "second (every 5 s).",
    ),
    F(
        "gpufleet_nvlink_link_up",
        "gauge",
        "1 while this NVLink link (label link) is up, 0 while it is down.",
    ),
    F(
        "gpufleet_nvlink_link_nominal_bytes_per_second",
        "gauge",
        "Nominal bandwidth of this NVLink link (label link) in one direction (in bytes per "
        "second).",
    ),
    F(
        "gpufleet_gpu_lost",
        "gauge",
        "1 when NVML reports the GPU lost (fallen off the bus), else 0.",
        COL,
        "lost",
    ),
    F(
        "gpufleet_xid_errors_total",
        "counter",
        "Xid errors reported by the driver since the sampler started, per code.",
    ),
    F(
        "gpufleet_xid_last_timestamp_seconds",
        "gauge",
        "When this Xid code was last reported on this GPU (seconds since the epoch).",
    ),
    F(
        "gpufleet_process_gpu_memory_bytes",
        "gauge",
        "GPU memory used by a process (in bytes).",
    ),
    F(
        "gpufleet_process_sm_percent",
        "gauge",
        "Share of the SMs' time a process used in the last interval (in %).",
    ),
)

# Per host (labels: Hostname, plus what each names).
HOST_FAMILIES = (
    F(
        "gpufleet_sampler_info",
        "gauge",
        "The sampler behind these metrics (always 1; version, backend and run in labels).",
    ),
    F(
        "gpufleet_last_sample_timestamp_seconds",
        "gauge",
        "When the latest sample was taken (seconds since the epoch): staleness shows here.",
    ),
)

# The app's fleet exporter only (gpufleet serve-metrics).
FLEET_FAMILIES = (
    F(
        "gpufleet_host_up",
        "gauge",
        "1 while the app streams from the host, else 0 (state and reason in labels of "
        "gpufleet_host_state).",
    ),
    F(
        "gpufleet_host_state",
        "gauge",
        "1 for the host's current connection state (connecting, deploying, streaming, "
        "reconnecting, failed, stopped).",
    ),
    F("gpufleet_cost_total", "counter", "Cost accrued since the billing start (in currency)."),
    F(
        "gpufleet_cost_idle_total",
        "counter",
        "Part of the cost accrued while every GPU of the host was idle (in currency).",
    ),
    F(
        "gpufleet_cost_rate_per_hour",
        "gauge",
        "The host's price per hour (in currency).",
    ),
    F(
        "gpufleet_cost_budget_used_ratio",
        "gauge",
        "Share of the host's budget spent (0..1; only hosts with a budget).",
    ),
    F(
        "gpufleet_effective_compute_ratio",
        "gauge",
        "Share of the billed time the GPUs spent computing (0..1).",
    ),
    F(
        "gpufleet_alerts",
        "gauge",
        "Active gpufleet alerts in the shape of Prometheus' ALERTS (1 per firing alert).",
    ),
    F(
        "gpufleet_health_check",
        "gauge",
        "Start-of-rental health check verdict per check: 0 pass, 1 warn, 2 fail.",
    ),
    F(
        "gpufleet_bench_verdict",
        "gauge",
        "Latest arrival benchmark verdict per GPU: 0 as expected, 1 not measured, 2 below par.",
    ),
    F(
        "gpufleet_bench_good_card_ratio",
        "gauge",
        "Latest arrival benchmark: measured over what a good card of the model reaches.",
    ),
)
del F

GPU_FAMILIES = DCGM_FAMILIES + GPUFLEET_GPU_FAMILIES
ALL_FAMILIES = GPU_FAMILIES + HOST_FAMILIES + FLEET_FAMILIES
FAMILIES_BY_NAME: Dict[str, Family] = {f.name: f for f in ALL_FAMILIES}

# Reverse maps (for the Prometheus data source): protocol column / nominal key -> family.
COLUMN_FAMILY: Dict[str, Family] = {f.key: f for f in GPU_FAMILIES if f.source == COL}
NOMINAL_FAMILY: Dict[str, Family] = {f.key: f for f in GPU_FAMILIES if f.source == NOM}

# Health-check verdicts as numbers (gpufleet_health_check).
VERDICT_VALUE = {"pass": 0, "info": 0, "warn": 1, "fail": 2}
# Arrival benchmark verdicts as numbers (gpufleet_bench_verdict), ordered as the above.
BENCH_VERDICT_VALUE = {"as_expected": 0, "not_measured": 1, "below_par": 2}


def alert_name(rule_id: str) -> str:
    """The ``alertname`` of a gpufleet rule, the same in exported rules and gpufleet_alerts:
    ``thermal_throttle`` -> ``GpufleetThermalThrottle``."""
    parts = [p for p in rule_id.replace("-", "_").split("_") if p]
    return "Gpufleet" + "".join(p[:1].upper() + p[1:] for p in parts)


# --- rendering -----------------------------------------------------------------------------


def escape(value: Any) -> str:
    """A label value escaped for the text format (backslash, double quote, newline)."""
    s = str(value)
    if "\\" in s or '"' in s or "\n" in s:
        s = s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return s


def labels(pairs: Iterable[Tuple[str, Any]]) -> str:
    """``k="v",...`` (without braces) from pairs, skipping None values."""
    return ",".join('{}="{}"'.format(k, escape(v)) for k, v in pairs if v is not None)


def fmt(value: Any) -> Optional[str]:
    """A sample value as text, or None when there is none (null, NaN, a bool, a string)."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return None
        if math.isinf(value):
            return "+Inf" if value > 0 else "-Inf"
        if value.is_integer() and abs(value) < 1e15:
            return str(int(value))
        return repr(value)
    return None


class Exposition(object):
    """Series collected per family, rendered family by family (the text format wants every
    series of a family together, under one HELP and TYPE), in the table's order."""

    __slots__ = ("_lines",)

    def __init__(self) -> None:
        self._lines: Dict[str, List[str]] = {}

    def add(self, name: str, label_text: str, value: Any) -> None:
        text = fmt(value)
        if text is None:
            return  # never a 0 for a value the GPU does not report
        lines = self._lines.get(name)
        if lines is None:
            lines = self._lines[name] = []
        lines.append("{}{{{}}} {}\n".format(name, label_text, text))

    def render(self) -> str:
        out: List[str] = []
        for fam in ALL_FAMILIES:
            lines = self._lines.get(fam.name)
            if lines:
                out.append(fam.header())
                out.extend(lines)
        return "".join(out)


def gpu_label_text(hostname: str, gpu: Mapping[str, Any], driver: Optional[str] = None) -> str:
    """dcgm-exporter's labels of one GPU (from a hello ``gpus`` entry)."""
    index = gpu.get("index")
    return labels(
        (
            ("gpu", index),
            ("UUID", gpu.get("uuid") or None),
            ("pci_bus_id", gpu.get("pci_bus_id") or None),
            ("device", "nvidia{}".format(index)),
            ("modelName", gpu.get("name") or None),
            (HOSTNAME_LABEL, hostname),
            ("DCGM_FI_DRIVER_VERSION", driver or None),
        )
    )


# (gpu, pid, name, user, mem_bytes, sm_pct): what the renderer needs of a process.
ProcRow = Tuple[int, int, Optional[str], Optional[str], Optional[float], Optional[float]]
# gpu -> code -> (count, last time)
XidTable = Mapping[int, Mapping[int, Tuple[int, float]]]


def render_host(
    exp: Exposition,
    hostname: str,
    gpus: Sequence[Mapping[str, Any]],
    columns: Sequence[str],
    rows: Sequence[Sequence[Any]],
    procs: Sequence[ProcRow] = (),
    xids: Optional[XidTable] = None,
    driver: Optional[str] = None,
    extra_gpu_labels: str = "",
) -> None:
    """Add one host's latest values to ``exp``.

    ``gpus`` are hello's per-GPU entries (index, uuid, name, pci_bus_id, nominal), ``rows``
    the latest sample's rows (``[index, *values in columns order]``), ``procs`` the latest
    process list. ``extra_gpu_labels`` is appended to every GPU's labels (``k="v"`` text)."""
    pos = {name: i + 1 for i, name in enumerate(columns)}
    by_index: Dict[Any, Mapping[str, Any]] = {}
    label_of: Dict[Any, str] = {}
    for g in gpus:
        idx = g.get("index")
        by_index[idx] = g
        text = gpu_label_text(hostname, g, driver)
        label_of[idx] = text + "," + extra_gpu_labels if extra_gpu_labels else text
    i_used = pos.get("mem_used_bytes")
    i_reasons = pos.get("clock_reasons")
    for row in rows:
        if not row:
            continue
        idx = row[0]
        info = by_index.get(idx)
        if info is None:
            continue  # a row for a GPU hello did not name: no labels to give it
        lt = label_of[idx]
        nominal = info.get("nominal") or {}
        n = len(row)
        for fam in GPU_FAMILIES:
            src = fam.source
            if src == COL:
                i = pos.get(fam.key)
                v = row[i] if i is not None and i < n else None
                if v is None and fam.key == "power_limit_w":
                    v = nominal.get("power_enforced_w")
            elif src == NOM:
                v = nominal.get(fam.key)
            else:
                continue
            if v is None or isinstance(v, bool):
                continue
            exp.add(fam.name, lt, v * fam.scale if fam.scale != 1.0 else v)
        # Free = total - reserved - used (NVML's v2 memory info splits it so).
        total = nominal.get("mem_total_bytes")
        used = row[i_used] if i_used is not None and i_used < n else None
        if total is not None and used is not None:
            reserved = nominal.get("mem_reserved_bytes") or 0
            exp.add("DCGM_FI_DEV_FB_FREE", lt, max(0.0, total - reserved - used) / MIB)
        reasons = row[i_reasons] if i_reasons is not None and i_reasons < n else None
        if reasons is not None:
            mask = int(reasons)
            for bit, label, _desc in protocol.REASON_BITS:
                exp.add(
                    "gpufleet_clock_event_reason",
                    '{},reason="{}"'.format(lt, label),
                    1 if mask & bit else 0,
                )
        seen = (xids or {}).get(idx)
        if seen:
            last_code, last_t = None, None  # type: Optional[int], Optional[float]
            for code, (count, t) in seen.items():
                cl = '{},err_code="{}"'.format(lt, code)
                exp.add("gpufleet_xid_errors_total", cl, count)
                exp.add("gpufleet_xid_last_timestamp_seconds", cl, t)
                if last_t is None or t >= last_t:
                    last_code, last_t = code, t
            if last_code is not None:
                exp.add(
                    "DCGM_FI_DEV_XID_ERRORS", '{},err_code="{}"'.format(lt, last_code), last_code
                )
    for gpu, pid, name, user, mem, sm in procs:
        plt = label_of.get(gpu)
        if plt is None:
            continue
        pl = "{},{}".format(
            plt, labels((("pid", pid), ("name", name or "?"), ("user", user or "?")))
        )
        exp.add("gpufleet_process_gpu_memory_bytes", pl, mem)
        exp.add("gpufleet_process_sm_percent", pl, sm)


# Per-link families: (name, links-row position of the value list).
LINK_SERIES = (
    ("gpufleet_nvlink_link_tx_bytes_per_second", protocol.LINK_POS["tx_bps"]),
    ("gpufleet_nvlink_link_rx_bytes_per_second", protocol.LINK_POS["rx_bps"]),
    ("gpufleet_nvlink_link_up", protocol.LINK_POS["up"]),
    ("gpufleet_nvlink_link_nominal_bytes_per_second", protocol.LINK_POS["speed_bps"]),
)


def render_links(
    exp: Exposition,
    hostname: str,
    gpus: Sequence[Mapping[str, Any]],
    link_rows: Sequence[Sequence[Any]],
    driver: Optional[str] = None,
    extra_gpu_labels: str = "",
) -> None:
    """Add one host's latest per-link NVLink values (the rows of its latest ``links``
    message: ``[index, tx_bps[], rx_bps[], up[], speed_bps[]]``), one series per link with
    the GPU's labels plus ``link``. A null (not reported) is left out, never a 0."""
    by_index = {g.get("index"): g for g in gpus}
    for row in link_rows:
        if not row or len(row) <= len(protocol.LINK_COLUMNS):
            continue
        info = by_index.get(row[0])
        if info is None:
            continue
        lt = gpu_label_text(hostname, info, driver)
        if extra_gpu_labels:
            lt += "," + extra_gpu_labels
        for name, pos in LINK_SERIES:
            values = row[pos]
            if not isinstance(values, list):
                continue
            for link, v in enumerate(values):
                if v is None or isinstance(v, bool):
                    continue
                exp.add(name, '{},link="{}"'.format(lt, link), v)


def render_host_info(
    exp: Exposition,
    hostname: str,
    hello: Mapping[str, Any],
    last_sample_t: Optional[float],
    extra_labels: str = "",
) -> None:
    """``gpufleet_sampler_info`` and ``gpufleet_last_sample_timestamp_seconds`` of one host."""
    host_l = labels(((HOSTNAME_LABEL, hostname),))
    if extra_labels:
        host_l += "," + extra_labels
    info = labels(
        (
            ("backend", hello.get("backend")),
            ("scenario", hello.get("scenario")),
            ("sampler_version", hello.get("sampler_version")),
            ("run_id", hello.get("run_id")),
        )
    )
    exp.add("gpufleet_sampler_info", host_l + ("," + info if info else ""), 1)
    exp.add("gpufleet_last_sample_timestamp_seconds", host_l, last_sample_t)
