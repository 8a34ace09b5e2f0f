"""``nvidia-smi`` output turned into the sampler's own protocol messages (laptop side).

An instance without python3 >= 3.8 (a minimal CUDA image) cannot run the sampler, but it has
``nvidia-smi``. Its documented machine-readable outputs are parsed here into the very
``hello`` / ``sample`` / ``procs`` objects the sampler would send, so everything downstream
(live buffers, store, rules, plots) works unchanged:

- ``nvidia-smi -q -x`` (once): the XML inventory (nvsmi_device DTD): names, UUIDs, bus ids,
  memory total and reserved, max clocks, power limits, temperature thresholds (or, on newer
  drivers, their margins to T.Limit), PCIe maximum, MIG and virtualization mode;
- ``nvidia-smi --query-gpu=FIELDS --format=csv,noheader,nounits -lms N`` (one long-lived
  process): one CSV line per GPU per tick (``QUERY``: which field feeds which column);
- ``nvidia-smi --query-compute-apps=gpu_uuid,pid,process_name,used_memory
  --format=csv,noheader,nounits`` (every few seconds): the processes.

What nvidia-smi cannot give is ``null`` with its reason in ``hello``'s ``unsupported``: GPM
(SM activity, tensor, DRAM), the energy counter, the throttle-time shares, PCIe and NVLink
rates, per-process SM %, process owners and start times (so no safe kill).
"""

from __future__ import annotations

import os
import re
import xml.etree.ElementTree as ET
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from gpufleet_sampler import protocol

from gpufleet.core.wire.gpu_kind import virtualization_name

BACKEND: Final = "nvidia-smi"
MIB: Final = 1 << 20

# What a value of "[N/A]" or "[Not Supported]" in the CSV becomes in hello's reasons.
NOT_SUPPORTED: Final = "NotSupported: nvidia-smi reports it as not supported on this GPU"
NOT_AVAILABLE: Final = "NotSupported: nvidia-smi reports [N/A] for it on this GPU"
NO_FIELD: Final = (
    "NotSupported: not among nvidia-smi's --query-gpu fields (the NVML sampler reads it; this "
    "host has no python3 >= 3.8 to run it)"
)
FIELD_UNKNOWN: Final = "NotSupported: this nvidia-smi does not know the query field {field}"

# Sample column -> the --query-gpu fields that give it, newest name first (a driver that
# refuses the first name is asked for the next), and how its text becomes a value.
QUERY: Final[tuple[tuple[str, tuple[str, ...], str], ...]] = (
    ("util_gpu_pct", ("utilization.gpu",), "num"),
    ("util_mem_pct", ("utilization.memory",), "num"),
    ("sm_clock_mhz", ("clocks.sm",), "num"),
    ("mem_clock_mhz", ("clocks.mem",), "num"),
    ("gfx_clock_mhz", ("clocks.gr",), "num"),
    ("temp_gpu_c", ("temperature.gpu",), "num"),
    ("temp_mem_c", ("temperature.memory",), "num"),
    ("power_w", ("power.draw",), "num"),
    ("power_limit_w", ("enforced.power.limit", "power.limit"), "num"),
    ("pstate", ("pstate",), "pstate"),
    ("clock_reasons", ("clocks_event_reasons.active", "clocks_throttle_reasons.active"), "hex"),
    ("fan_pct", ("fan.speed",), "num"),
    ("mem_used_bytes", ("memory.used",), "mib"),
    ("pcie_gen", ("pcie.link.gen.gpucurrent", "pcie.link.gen.current"), "int"),
    ("pcie_width", ("pcie.link.width.current",), "int"),
    ("ecc_sbe_vol", ("ecc.errors.corrected.volatile.total",), "int"),
    ("ecc_dbe_vol", ("ecc.errors.uncorrected.volatile.total",), "int"),
    ("remap_pending", ("remapped_rows.pending",), "bool"),
    ("remap_failed", ("remapped_rows.failure",), "bool"),
    ("retired_pending", ("retired_pages.pending",), "bool"),
)
APPS_FIELDS: Final = ("gpu_uuid", "pid", "process_name", "used_memory")
# Columns no nvidia-smi query gives (``lost`` is derived: a GPU whose line says it is lost).
_DERIVED: Final = frozenset(("lost",))
# What the host's status says this path cannot do, in one sentence.
LIMITS: Final = (
    "read through nvidia-smi (no python3 >= 3.8 for the sampler): nothing is recorded while "
    "the laptop is away (no offline ring, no Xid events), the sampler's watchdog and safe kill "
    "are not available, and GPM (SM activity), energy, PCIe/NVLink rates and per-process SM % "
    "are not reported"
)

_INVALID_FIELD = re.compile(r'Field "([^"]+)" is not a valid field to query')
_NUM = re.compile(r"^\s*(-?\d+(?:\.\d+)?)")


class SmiError(ValueError):
    """nvidia-smi output this module cannot use (the message says what and why)."""


def invalid_field(output: str) -> str | None:
    """The field nvidia-smi refused ("Field "x" is not a valid field to query."), if any."""
    m = _INVALID_FIELD.search(output)
    return m.group(1) if m else None


@dataclass
class FieldPlan:
    """Which query field each column uses, after the drivers' refusals (``refuse``)."""

    chosen: dict[str, str] = field(default_factory=dict)
    dropped: dict[str, str] = field(default_factory=dict)  # column -> reason

    @classmethod
    def initial(cls) -> FieldPlan:
        return cls({col: names[0] for col, names, _ in QUERY})

    def fields(self) -> list[str]:
        return ["index", *(self.chosen[c] for c, _, _ in QUERY if c in self.chosen)]

    def columns(self) -> list[str]:
        return [c for c, _, _ in QUERY if c in self.chosen]

    def refuse(self, name: str) -> bool:
        """nvidia-smi refused field ``name``: use the column's next name, or drop the column.
        False when no column asked for it (then retrying would not help)."""
        for col, names, _ in QUERY:
            if self.chosen.get(col) == name:
                i = names.index(name)
                if i + 1 < len(names):
                    self.chosen[col] = names[i + 1]
                else:
                    del self.chosen[col]
                    self.dropped[col] = FIELD_UNKNOWN.format(field=name)
                return True
        return False


def _missing(text: str) -> str | None:
    """The reason a CSV cell holds no value, or None when it holds one."""
    t = text.strip()
    if not t or t.startswith("["):
        low = t.lower()
        if "not supported" in low:
            return NOT_SUPPORTED
        return NOT_AVAILABLE
    if t in ("N/A", "Unknown"):
        return NOT_AVAILABLE
    return None


def _to_num(text: str) -> float | None:
    m = _NUM.match(text)
    return float(m.group(1)) if m else None


def _to_int(text: str) -> int | None:
    v = _to_num(text)
    return int(v) if v is not None else None


def _to_pstate(text: str) -> int | None:
    t = text.strip().upper()
    return int(t[1:]) if t.startswith("P") and t[1:].isdigit() else _to_int(t)


def _to_hex(text: str) -> int | None:
    try:
        return int(text.strip(), 16 if text.strip().lower().startswith("0x") else 10)
    except ValueError:
        return None


def _to_mib(text: str) -> int | None:
    v = _to_num(text)
    return int(v * MIB) if v is not None else None


def _to_bool(text: str) -> int | None:
    t = text.strip().lower()
    if t in ("yes", "true", "enabled", "active"):
        return 1
    if t in ("no", "false", "disabled", "not active"):
        return 0
    return _to_int(t)


_CONVERT: Final[dict[str, Callable[[str], float | int | None]]] = {
    "num": _to_num,
    "int": _to_int,
    "pstate": _to_pstate,
    "hex": _to_hex,
    "mib": _to_mib,
    "bool": _to_bool,
}
_KIND: Final = {col: kind for col, _, kind in QUERY}


def split_csv(line: str) -> list[str]:
    """A ``--format=csv,noheader`` line: fields separated by ", " (nvidia-smi does not quote;
    a process name with a comma is rejoined by the caller that knows the field count)."""
    return [f.strip() for f in line.rstrip("\r\n").split(",")]


@dataclass(frozen=True)
class GpuRow:
    """One GPU's values of one query line: column -> value (None: not reported), and the
    reasons of the cells that held no value."""

    index: int
    values: Mapping[str, float | int | None]
    missing: Mapping[str, str]
    lost: bool = False


def parse_query_line(line: str, columns: Sequence[str]) -> GpuRow:
    """One line of ``--query-gpu=index,<columns' fields>``."""
    cells = split_csv(line)
    if len(cells) != len(columns) + 1:
        raise SmiError(
            f"nvidia-smi query line has {len(cells)} fields, expected {len(columns) + 1}: "
            f"{line.strip()[:120]!r}"
        )
    idx = _to_int(cells[0])
    if idx is None:
        raise SmiError(f"nvidia-smi query line does not start with a GPU index: {line[:120]!r}")
    values: dict[str, float | int | None] = {}
    missing: dict[str, str] = {}
    lost = False
    for col, text in zip(columns, cells[1:], strict=True):
        why = _missing(text)
        if why is not None:
            values[col] = None
            missing[col] = why
            lost = lost or "gpu is lost" in text.lower()
        else:
            values[col] = _CONVERT[_KIND[col]](text)
    return GpuRow(idx, values, missing, lost)


def sample_row(row: GpuRow) -> list[Any]:
    """The protocol's positional row of one GPU (``[index, *COLUMNS]``)."""
    out: list[Any] = [row.index]
    for name in protocol.COLUMN_NAMES:
        if name == "lost":
            out.append(1 if row.lost else 0)
        else:
            v = None if row.lost else row.values.get(name)
            out.append(v)
    return out


class QueryAssembler:
    """Groups the per-GPU lines of the long-lived query into ticks: a tick is complete when
    every GPU of the inventory has reported, or when a GPU reports a second time (a GPU
    missing from one loop does not hold the stream back)."""

    def __init__(self, columns: Sequence[str], gpu_indices: Sequence[int]) -> None:
        self.columns = list(columns)
        self.want = set(gpu_indices)
        self.rows: dict[int, GpuRow] = {}
        self.bad_lines = 0
        self.last_error: str | None = None

    def feed(self, line: str) -> list[dict[int, GpuRow]]:
        """Ticks completed by this line (zero, one, or two when a repeat closes one)."""
        if not line.strip():
            return []
        try:
            row = parse_query_line(line, self.columns)
        except SmiError as e:
            self.bad_lines += 1
            self.last_error = str(e)
            return []
        out = []
        if row.index in self.rows:
            out.append(self.rows)
            self.rows = {}
        self.rows[row.index] = row
        if self.want and self.want <= set(self.rows):
            out.append(self.rows)
            self.rows = {}
        return out


@dataclass(frozen=True)
class SmiGpu:
    index: int
    uuid: str
    name: str
    pci_bus_id: str
    nominal: Mapping[str, float | int | None]
    extra: Mapping[str, Any]


@dataclass(frozen=True)
class Inventory:
    driver_version: str | None
    cuda_version: str | None
    gpus: tuple[SmiGpu, ...]

    def uuid_index(self) -> dict[str, int]:
        return {g.uuid: g.index for g in self.gpus}


def _text(el: ET.Element | None, path: str) -> str | None:
    if el is None:
        return None
    node = el.find(path)
    if node is None or node.text is None:
        return None
    t = node.text.strip()
    return None if not t or t in ("N/A", "[N/A]") or t.startswith("[") else t


def _num_at(el: ET.Element | None, *paths: str) -> float | None:
    for p in paths:
        t = _text(el, p)
        v = _to_num(t) if t is not None else None
        if v is not None:
            return v
    return None


def _temp_limits(t: ET.Element | None) -> tuple[float | None, float | None, float | None]:
    """(slowdown, shutdown, memory max) in °C. Newer drivers give the thresholds as margins
    to T.Limit ("GPU Slowdown T.Limit Temp: -2 C": slowdown 2 °C above T.Limit) and the
    current margin ("GPU T.Limit Temp: 54 C" at 33 °C: T.Limit is 87 °C)."""
    slow = _num_at(t, "gpu_temp_slow_threshold")
    shut = _num_at(t, "gpu_temp_max_threshold")
    mem_max = _num_at(t, "gpu_temp_max_mem_threshold")
    cur = _num_at(t, "gpu_temp")
    margin = _num_at(t, "gpu_temp_tlimit")
    if cur is not None and margin is not None:
        tlimit = cur + margin
        if slow is None:
            off = _num_at(t, "gpu_temp_slow_tlimit_threshold")
            slow = tlimit - off if off is not None else None
        if shut is None:
            off = _num_at(t, "gpu_temp_max_tlimit_threshold")
            shut = tlimit - off if off is not None else None
    return slow, shut, mem_max


def parse_inventory(xml: bytes | str) -> Inventory:
    """``nvidia-smi -q -x`` output."""
    try:
        root = ET.fromstring(xml)
    except ET.ParseError as e:
        raise SmiError(f"nvidia-smi -q -x did not print valid XML: {e}") from None
    if root.tag != "nvidia_smi_log":
        raise SmiError(f"nvidia-smi -q -x printed <{root.tag}>, not <nvidia_smi_log>")
    gpus = []
    for i, g in enumerate(root.findall("gpu")):
        # -q -x lists the GPUs in NVML index order, the order of --query-gpu's "index"; the
        # minor number (/dev/nvidiaN) can differ from it.
        index = i
        power = g.find("gpu_power_readings")
        if power is None:
            power = g.find("power_readings")
        slow, shut, mem_max = _temp_limits(g.find("temperature"))
        width = _text(g, "pci/pci_gpu_link_info/link_widths/max_link_width")
        nominal: dict[str, float | int | None] = {
            "sm_clock_max_mhz": _num_at(g, "max_clocks/sm_clock"),
            "mem_clock_max_mhz": _num_at(g, "max_clocks/mem_clock"),
            "sm_clock_base_mhz": _num_at(g, "default_applications_clocks/graphics_clock"),
            "power_default_w": _num_at(power, "default_power_limit"),
            "power_enforced_w": _num_at(power, "enforced_power_limit", "current_power_limit"),
            "power_min_w": _num_at(power, "min_power_limit"),
            "power_max_w": _num_at(power, "max_power_limit"),
            "temp_slowdown_c": slow,
            "temp_shutdown_c": shut,
            "temp_mem_max_c": mem_max,
            "pcie_max_gen": _to_int(_text(g, "pci/pci_gpu_link_info/pcie_gen/max_link_gen") or ""),
            "pcie_max_width": _to_int(width or ""),
            "nvlink_links": None,
            "nvlink_link_bps": None,
            "mem_total_bytes": _mib(_num_at(g, "fb_memory_usage/total")),
            "mem_reserved_bytes": _mib(_num_at(g, "fb_memory_usage/reserved")),
        }
        extra: dict[str, Any] = {
            "arch": _text(g, "product_architecture"),
            "mig_mode": _to_bool(_text(g, "mig_mode/current_mig") or ""),
            "virtualization_mode": virtualization_name(
                _text(g, "gpu_virtualization_mode/virtualization_mode")
            ),
            "persistence_mode": _to_bool(_text(g, "persistence_mode") or ""),
            "serial": _text(g, "serial"),
            "vbios_version": _text(g, "vbios_version"),
        }
        gpus.append(
            SmiGpu(
                index=index,
                uuid=_text(g, "uuid") or f"GPU-unknown-{index}",
                name=_text(g, "product_name") or "GPU",
                pci_bus_id=_text(g, "pci/pci_bus_id") or str(g.get("id") or ""),
                nominal=nominal,
                extra={k: v for k, v in extra.items() if v is not None},
            )
        )
    if not gpus:
        raise SmiError("nvidia-smi -q -x lists no GPU")
    return Inventory(_text(root, "driver_version"), _text(root, "cuda_version"), tuple(gpus))


def _mib(v: float | None) -> int | None:
    return int(v * MIB) if v is not None else None


def hello_obj(
    inv: Inventory,
    plan: FieldPlan,
    first: Mapping[int, GpuRow],
    run_id: str,
    interval_s: float,
    hostname: str,
) -> dict[str, Any]:
    """The ``hello`` the sampler would send, from the inventory and the first query's values
    (a column whose cell said "[Not Supported]" is unsupported on that GPU)."""
    asked = set(plan.chosen)
    gpus = []
    for g in inv.gpus:
        row = first.get(g.index)
        unsupported: dict[str, str] = {}
        for name in protocol.COLUMN_NAMES:
            if name in _DERIVED:
                continue
            if name in plan.dropped:
                unsupported[name] = plan.dropped[name]
            elif name not in asked and name not in _KIND:
                unsupported[name] = NO_FIELD
            elif row is not None and name in row.missing:
                unsupported[name] = row.missing[name]
        gpus.append(
            {
                "index": g.index,
                "uuid": g.uuid,
                "name": g.name,
                "pci_bus_id": g.pci_bus_id,
                "nominal": dict(g.nominal),
                "unsupported": unsupported,
                "links_unsupported": "NotSupported: nvidia-smi gives no per-link NVLink rates",
                **g.extra,
            }
        )
    return {
        "kind": protocol.KIND_HELLO,
        "protocol": protocol.PROTOCOL_VERSION,
        "sampler_version": "nvidia-smi",
        "run_id": run_id,
        "backend": BACKEND,
        "interval_s": interval_s,
        "columns": protocol.hello_columns(),
        "host": {
            "hostname": hostname,
            "driver_version": inv.driver_version,
            "cuda_version": inv.cuda_version,
        },
        "gpus": gpus,
        "limits": LIMITS,
    }


def apps_procs(lines: Sequence[str], uuid_index: Mapping[str, int]) -> list[dict[str, Any]]:
    """``--query-compute-apps=gpu_uuid,pid,process_name,used_memory`` lines as ``procs``
    entries. A process name holding commas is rejoined; lines of unknown GPUs are skipped."""
    out: list[dict[str, Any]] = []
    for line in lines:
        cells = split_csv(line)
        if len(cells) < len(APPS_FIELDS):
            continue
        uuid, pid_text = cells[0], cells[1]
        name_cells, mem_text = cells[2:-1], cells[-1]
        gpu = uuid_index.get(uuid)
        pid = _to_int(pid_text)
        if gpu is None or pid is None:
            continue
        cmd = ", ".join(name_cells)
        mem = None if _missing(mem_text) else _to_mib(mem_text)
        out.append(
            {
                "gpu": gpu,
                "pid": pid,
                "start_ticks": None,
                "user": None,
                "name": os.path.basename(cmd.split(" ")[0]) if cmd else None,
                "cmd": cmd or None,
                "mem_bytes": mem,
                "sm_pct": None,
                "type": "compute",
            }
        )
    return out


def _sum_at(el: ET.Element | None, *paths: str) -> int | None:
    """The sum of the counters found at ``paths`` (None when none is there)."""
    vals = [_num_at(el, p) for p in paths]
    found = [v for v in vals if v is not None]
    return int(sum(found)) if found else None


def _gpu_processes(g: ET.Element, index: int) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for p in g.findall("processes/process_info"):
        pid = _to_int(_text(p, "pid") or "")
        if pid is None:
            continue
        cmd = _text(p, "process_name")
        out.append(
            {
                "gpu": index,
                "pid": pid,
                "start_ticks": None,
                "user": None,
                "name": os.path.basename(cmd.split(" ")[0]) if cmd else None,
                "cmd": cmd,
                "mem_bytes": _mib(_num_at(p, "used_memory")),
                "sm_pct": None,
                "type": _text(p, "type"),
            }
        )
    return out


def check_facts(xml: bytes | str) -> dict[str, Any]:
    """The facts of the start-of-rental check, as the sampler's ``check`` prints them, from
    one ``nvidia-smi -q -x``: what it has (P-state, power limits, temperatures, PCIe link,
    ECC, row remapping, memory, processes, virtualization, MIG); what it has not (Xids, NVLink
    state) stays unknown."""
    inv = parse_inventory(xml)
    root = ET.fromstring(xml)
    gpus: list[dict[str, Any]] = []
    for inv_gpu, g in zip(inv.gpus, root.findall("gpu"), strict=True):
        n = inv_gpu.nominal
        i = inv_gpu.index
        ecc_on = _to_bool(_text(g, "ecc_mode/current_ecc") or "")
        gpus.append(
            {
                "index": i,
                "name": inv_gpu.name,
                "uuid": inv_gpu.uuid,
                "lost": 0,
                "util_gpu_pct": _num_at(g, "utilization/gpu_util"),
                "persistence_mode": inv_gpu.extra.get("persistence_mode"),
                "pstate": _to_pstate(_text(g, "performance_state") or ""),
                "power_enforced_w": n.get("power_enforced_w"),
                "power_default_w": n.get("power_default_w"),
                "temp_gpu_c": _num_at(g, "temperature/gpu_temp"),
                "temp_slowdown_c": n.get("temp_slowdown_c"),
                "temp_mem_c": _num_at(g, "temperature/memory_temp"),
                "temp_mem_max_c": n.get("temp_mem_max_c"),
                "pcie_gen": _to_int(
                    _text(g, "pci/pci_gpu_link_info/pcie_gen/current_link_gen") or ""
                ),
                "pcie_max_gen": n.get("pcie_max_gen"),
                "pcie_width": _to_int(
                    _text(g, "pci/pci_gpu_link_info/link_widths/current_link_width") or ""
                ),
                "pcie_max_width": n.get("pcie_max_width"),
                "ecc_mode": ecc_on,
                # Older drivers count single/double-bit errors; newer ones DRAM and SRAM.
                "ecc_dbe_vol": _sum_at(
                    g,
                    "ecc_errors/volatile/double_bit/total",
                    "ecc_errors/volatile/dram_uncorrectable",
                    "ecc_errors/volatile/sram_uncorrectable_secded",
                    "ecc_errors/volatile/sram_uncorrectable_parity",
                )
                if ecc_on
                else None,
                "ecc_sbe_agg": _sum_at(
                    g,
                    "ecc_errors/aggregate/single_bit/total",
                    "ecc_errors/aggregate/dram_correctable",
                    "ecc_errors/aggregate/sram_correctable",
                )
                if ecc_on
                else None,
                "ecc_dbe_agg": _sum_at(
                    g,
                    "ecc_errors/aggregate/double_bit/total",
                    "ecc_errors/aggregate/dram_uncorrectable",
                    "ecc_errors/aggregate/sram_uncorrectable_secded",
                    "ecc_errors/aggregate/sram_uncorrectable_parity",
                )
                if ecc_on
                else None,
                "remapped_rows_correctable": _to_int(
                    _text(g, "remapped_rows/remapped_row_corr") or ""
                ),
                "remapped_rows_uncorrectable": _to_int(
                    _text(g, "remapped_rows/remapped_row_unc") or ""
                ),
                "remap_pending": _to_bool(_text(g, "remapped_rows/remapped_row_pending") or ""),
                "remap_failed": _to_bool(_text(g, "remapped_rows/remapped_row_failure") or ""),
                "mem_total_bytes": n.get("mem_total_bytes"),
                "mem_reserved_bytes": n.get("mem_reserved_bytes"),
                "mem_used_bytes": _mib(_num_at(g, "fb_memory_usage/used")),
                "process_list": _gpu_processes(g, i),
                "virtualization_mode": inv_gpu.extra.get("virtualization_mode"),
                "mig_mode": inv_gpu.extra.get("mig_mode"),
            }
        )
    return {
        "backend": BACKEND,
        "host": {"driver_version": inv.driver_version, "cuda_version": inv.cuda_version},
        "driver_version": inv.driver_version,
        "cuda_version": inv.cuda_version,
        "gpu_count": len(gpus),
        "gpus": gpus,
        # nvidia-smi keeps no record of Xids: a one-shot check cannot say.
        "xid": {"seen": "unknown", "source": "none"},
    }
