"""``nvidia-smi`` output turned into the sampler's own protocol messages (laptop side).

An instance without python3 >= 3.8 (a minimal CUDA image) cannot run the sampler, but it has
``nvidia-smi``. Its documented machine-readable outputs are parsed here into the very
``hello`` / ``sample`` / ``procs`` objects the sampler would send, so everything downstream
(live buffers, store, rules, plots) works unchanged:

- ``nvidia-smi -q -x`` (once; ``nvidia_smi_xml``): the XML inventory: names, UUIDs, bus ids,
  memory total and reserved, max clocks, power limits, temperature thresholds (or, on newer
  drivers, their margins to T.Limit), PCIe maximum, MIG and virtualization mode, and the MIG
  slices, named by ``nvidia-smi -L`` (``list_gpus``); on a MIG host it runs again every
  ``SLICE_MEMORY_EVERY_S`` for the slices' memory, which no query field gives;
- ``nvidia-smi --query-gpu=FIELDS --format=csv,noheader,nounits -lms N`` (one long-lived
  process): one CSV line per GPU per tick (``QUERY``: which field feeds which column);
- ``nvidia-smi --query-compute-apps=gpu_uuid,pid,process_name,used_memory
  --format=csv,noheader,nounits`` (every few seconds): the processes.

What nvidia-smi cannot give is ``null`` with its reason in ``hello``'s ``unsupported``: GPM
(SM activity, tensor, DRAM), the energy counter, the throttle-time shares, PCIe and NVLink
rates, per-process SM %, process owners and start times (so no safe kill). Every spelling of
"no value" is null, never 0 (``nvidia_smi_cells``), and so is a vGPU guest's 0 for a clock or
temperature it cannot see.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from gpufleet_sampler import protocol, protocol_schema

from gpufleet.core.wire.nvidia_smi_cells import (
    CONVERT,
    MIB,
    NOT_AVAILABLE,
    NOT_SUPPORTED,
    SmiError,
    missing,
    program_name,
    split_csv,
    to_int,
    to_mib,
)
from gpufleet.core.wire.nvidia_smi_xml import (
    BACKEND,
    Inventory,
    SmiGpu,
    SmiSlice,
    check_facts,
    parse_inventory,
    slice_memory,
)

__all__ = [
    "BACKEND",
    "MIB",
    "NOT_AVAILABLE",
    "NOT_SUPPORTED",
    "Inventory",
    "SmiError",
    "SmiGpu",
    "SmiSlice",
    "check_facts",
    "parse_inventory",
    "slice_memory",
    "split_csv",
]

NO_FIELD: Final = (
    "NotSupported: not among nvidia-smi's --query-gpu fields (the NVML sampler reads it; this "
    "host has no python3 >= 3.8 to run it)"
)
FIELD_UNKNOWN: Final = "NotSupported: this nvidia-smi does not know the query field {field}"
# A GRID vGPU guest prints 0 for what it cannot see (clocks, temperatures): not a reading.
VGPU_ZERO: Final = "NotSupported: a vGPU guest prints 0 for it: the host does not report it"
VGPU_ZERO_COLUMNS: Final = frozenset(
    ("temp_gpu_c", "temp_mem_c", "sm_clock_mhz", "mem_clock_mhz", "gfx_clock_mhz")
)
# A GPU in MIG mode: nvidia-smi prints [N/A] for its utilization (nor gives it per slice).
MIG_UTIL: Final = (
    "NotSupported: the GPU is in MIG mode; nvidia-smi reports no utilization for a split GPU"
)
SLICE_PER_CARD: Final = (
    "NotSupported: a MIG slice reports memory; clocks, power and temperature are GPU {parent}'s"
)
# How often the memory of MIG slices is read again (one -q -x; --query-gpu has no slices).
SLICE_MEMORY_EVERY_S: Final = 12.0

# Sample column -> the --query-gpu fields that give it, newest name first (a driver that
# refuses the first name is asked for the next), and how its text becomes a value.
QUERY: Final[tuple[tuple[str, tuple[str, ...], str], ...]] = (
    ("util_gpu_pct", ("utilization.gpu",), "num"),
    ("util_mem_pct", ("utilization.memory",), "num"),
    # The long names are the same fields; a --format=csv header echoes whichever was asked.
    ("sm_clock_mhz", ("clocks.sm", "clocks.current.sm"), "num"),
    ("mem_clock_mhz", ("clocks.mem", "clocks.current.memory"), "num"),
    ("gfx_clock_mhz", ("clocks.gr", "clocks.current.graphics"), "num"),
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
# --help-query-gpu: each field's line, '"name"' or '"name" or "alias"'.
_HELP_FIELD = re.compile(r'^"([^"]+)"(?: or "([^"]+)")*\s*$')
# nvidia-smi -L: "GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-…)", then one line per MIG device,
# "  MIG 1g.10gb     Device  2: (UUID: MIG-…)".
_LIST_GPU = re.compile(r"^GPU (\d+): ")
_LIST_MIG = re.compile(r"^\s+MIG (\S+)\s+Device\s+(\d+): \(UUID: ([^)]+)\)")


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


_KIND: Final = {col: kind for col, _, kind in QUERY}


def help_fields(text: str) -> set[str]:
    """The field names (and their aliases) ``nvidia-smi --help-query-gpu`` lists."""
    out: set[str] = set()
    for line in text.splitlines():
        if _HELP_FIELD.match(line.strip()):
            out.update(re.findall(r'"([^"]+)"', line))
    return out


def list_gpus(text: str) -> dict[int, list[tuple[str | None, str | None]]]:
    """``nvidia-smi -L``: GPU index -> its MIG devices' (profile, UUID), in slot order."""
    out: dict[int, list[tuple[str | None, str | None]]] = {}
    gpu: int | None = None
    for line in text.splitlines():
        m = _LIST_GPU.match(line)
        if m:
            gpu = int(m.group(1))
            out[gpu] = []
            continue
        m = _LIST_MIG.match(line)
        if m and gpu is not None:
            slots = out[gpu]
            slot = int(m.group(2))
            slots.extend([(None, None)] * (slot + 1 - len(slots)))
            slots[slot] = (m.group(1), m.group(3).strip())
    return out


@dataclass(frozen=True)
class GpuRow:
    """One GPU's values of one query line: column -> value (None: not reported), and the
    reasons of the cells that held no value."""

    index: int
    values: Mapping[str, float | int | None]
    missing: Mapping[str, str]
    lost: bool = False


def _row(idx: int, columns: Sequence[str], cells: Sequence[str], vgpu: bool) -> GpuRow:
    values: dict[str, float | int | None] = {}
    why_missing: dict[str, str] = {}
    lost = False
    for col, text in zip(columns, cells, strict=True):
        why = missing(text)
        value = CONVERT[_KIND[col]](text) if why is None else None
        if why is None and vgpu and value == 0 and col in VGPU_ZERO_COLUMNS:
            why = VGPU_ZERO
            value = None
        if why is not None:
            why_missing[col] = why
            lost = lost or "gpu is lost" in text.lower()
        values[col] = value
    return GpuRow(idx, values, why_missing, lost)


def parse_query_line(line: str, columns: Sequence[str], vgpu: bool = False) -> GpuRow:
    """One line of ``--query-gpu=index,<columns' fields>`` (``vgpu``: of a vGPU guest)."""
    cells = split_csv(line)
    if len(cells) != len(columns) + 1:
        raise SmiError(
            f"nvidia-smi query line has {len(cells)} fields, expected {len(columns) + 1}: "
            f"{line.strip()[:120]!r}"
        )
    idx = to_int(cells[0])
    if idx is None:
        raise SmiError(f"nvidia-smi query line does not start with a GPU index: {line[:120]!r}")
    return _row(idx, columns, cells[1:], vgpu)


def _header_name(cell: str) -> str:
    """A ``--format=csv`` header cell without its unit ("power.draw [W]" -> "power.draw")."""
    return cell.split(" [", 1)[0].strip()


def parse_query_table(text: str, vgpu_guests: Iterable[int] = ()) -> list[GpuRow]:
    """A ``--query-gpu=… --format=csv`` (or ``csv,nounits``) table with its header line: each
    column this module reads is taken from the first of its field names the header has; a GPU
    without an ``index`` field is numbered in row order."""
    lines = [ln for ln in text.splitlines() if ln.strip()]
    if not lines:
        raise SmiError("nvidia-smi printed no --query-gpu table")
    header = [_header_name(c) for c in split_csv(lines[0])]
    pos = {name: i for i, name in enumerate(header)}
    columns = [c for c, names, _ in QUERY if any(n in pos for n in names)]
    where = [next(pos[n] for n in names if n in pos) for c, names, _ in QUERY if c in columns]
    guests = set(vgpu_guests)
    rows = []
    for k, line in enumerate(lines[1:]):
        cells = split_csv(line)
        if len(cells) != len(header):
            raise SmiError(
                f"nvidia-smi --query-gpu row has {len(cells)} fields, its header "
                f"{len(header)}: {line.strip()[:120]!r}"
            )
        idx = to_int(cells[pos["index"]]) if "index" in pos else k
        idx = k if idx is None else idx
        rows.append(_row(idx, columns, [cells[i] for i in where], idx in guests))
    return rows


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


def slice_row(s: SmiSlice, mem_used_bytes: int | None) -> list[Any]:
    """A MIG slice's positional row: its memory used; the rest is its card's (null here)."""
    out: list[Any] = [protocol.mig_index(s.parent, s.slot)] + [None] * len(protocol.COLUMN_NAMES)
    out[protocol.ROW_POS["mem_used_bytes"]] = mem_used_bytes
    out[protocol.ROW_POS["lost"]] = 0
    return out


class QueryAssembler:
    """Groups the per-GPU lines of the long-lived query into ticks: a tick is complete when
    every GPU of the inventory has reported, or when a GPU reports a second time (a GPU
    missing from one loop does not hold the stream back)."""

    def __init__(
        self, columns: Sequence[str], gpu_indices: Sequence[int], vgpu_guests: Iterable[int] = ()
    ) -> None:
        self.columns = list(columns)
        self.want = set(gpu_indices)
        self.vgpu = set(vgpu_guests)
        self.rows: dict[int, GpuRow] = {}
        self.bad_lines = 0
        self.last_error: str | None = None

    def feed(self, line: str) -> list[dict[int, GpuRow]]:
        """Ticks completed by this line (zero, one, or two when a repeat closes one)."""
        if not line.strip():
            return []
        try:
            first = to_int(split_csv(line)[0])
            row = parse_query_line(line, self.columns, first in self.vgpu)
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


def vgpu_guests(inv: Inventory) -> list[int]:
    """The indices of the GPUs that are vGPU guests (their zeros are "not reported")."""
    return [g.index for g in inv.gpus if g.vgpu_guest]


def _unsupported(g: SmiGpu, plan: FieldPlan, row: GpuRow | None) -> dict[str, str]:
    asked = set(plan.chosen)
    out: dict[str, str] = {}
    for name in protocol.COLUMN_NAMES:
        if name in _DERIVED:
            continue
        if name in plan.dropped:
            out[name] = plan.dropped[name]
        elif name not in asked and name not in _KIND:
            out[name] = NO_FIELD
        elif row is not None and name in row.missing:
            split = g.extra.get("mig_mode") == 1 and name in ("util_gpu_pct", "util_mem_pct")
            out[name] = MIG_UTIL if split else row.missing[name]
    return out


def _slice_hello(s: SmiSlice, card: SmiGpu) -> dict[str, Any]:
    """A MIG slice's ``hello`` entry, as the NVML sampler writes it (nvml_mig.hello)."""
    why = SLICE_PER_CARD.format(parent=s.parent)
    kind = f"MIG {s.profile}" if s.profile else f"MIG slice {s.slot}"
    keep = ("mem_used_bytes", "lost")
    entry = {
        "index": protocol.mig_index(s.parent, s.slot),
        "uuid": s.uuid or f"MIG-unknown-{card.uuid}-{s.slot}",
        "name": f"{card.name} {kind}",
        "pci_bus_id": card.pci_bus_id,
        "nominal": {"mem_total_bytes": s.mem_total_bytes},
        "unsupported": {c: why for c in protocol.COLUMN_NAMES if c not in keep},
        protocol.MIG_KEY: {
            "parent": s.parent,
            "slot": s.slot,
            "gpu_instance_id": s.gpu_instance_id,
            "compute_instance_id": s.compute_instance_id,
            "profile": s.profile,
            "sm_count": s.sm_count,
            # -q -x gives no SM count for the whole card, so no share of it.
            "sm_share": None,
        },
        protocol.LINKS_UNSUPPORTED_KEY: "NotSupported: NVLink belongs to the parent GPU",
    }
    return protocol_schema.hello_slice(entry)


def _card_hello(g: SmiGpu, plan: FieldPlan, first: GpuRow | None) -> dict[str, Any]:
    """A card's ``hello`` entry: its inventory from ``-q -x``, null where it prints none."""
    x = g.extra
    return protocol_schema.hello_gpu(
        {
            "index": g.index,
            "uuid": g.uuid,
            "name": g.name,
            "pci_bus_id": g.pci_bus_id,
            "nominal": dict(g.nominal),
            "unsupported": _unsupported(g, plan, first),
            "links_unsupported": "NotSupported: nvidia-smi gives no per-link NVLink rates",
            **{k: x.get(k) for k in _CARD_FROM_XML},
            "compute_capability": None,
            "brand": None,
            "compute_mode": None,
            "lost": 0,
        }
    )


# The card facts ``-q -x`` gives (``nvidia_smi_xml._extra``); the others are null here.
_CARD_FROM_XML: Final = (
    "arch",
    "serial",
    "vbios",
    "persistence_mode",
    "mig_mode",
    "ecc_mode",
    "virtualization_mode",
)


def hello_obj(
    inv: Inventory,
    plan: FieldPlan,
    first: Mapping[int, GpuRow],
    run_id: str,
    interval_s: float,
    hostname: str,
) -> dict[str, Any]:
    """The ``hello`` the sampler would send, from the inventory and the first query's values
    (a column whose cell said "[Not Supported]" is unsupported on that GPU); a GPU in MIG
    mode is followed by its slices."""
    gpus: list[dict[str, Any]] = []
    for g in inv.gpus:
        gpus.append(_card_hello(g, plan, first.get(g.index)))
        gpus.extend(_slice_hello(s, g) for s in g.slices)
    return protocol_schema.hello(
        {
            "protocol": protocol.PROTOCOL_VERSION,
            "sampler_version": "nvidia-smi",
            "run_id": run_id,
            "backend": BACKEND,
            "scenario": None,
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
    )


def _app_cells(line: str, fields: Sequence[str]) -> dict[str, str] | None:
    """One compute-apps line by field name; the process name, which may hold ", ", takes
    the cells the other fields leave."""
    cells = split_csv(line)
    if len(cells) < len(fields) or "process_name" not in fields:
        return None
    at = fields.index("process_name")
    after = len(fields) - at - 1
    name = ", ".join(cells[at : len(cells) - after])
    out = dict(zip(fields[:at], cells[:at], strict=True))
    out.update(zip(fields[at + 1 :], cells[len(cells) - after :], strict=True))
    out["process_name"] = name
    return out


def apps_procs(
    lines: Sequence[str], uuid_index: Mapping[str, int], fields: Sequence[str] = APPS_FIELDS
) -> list[dict[str, Any]]:
    """``--query-compute-apps=<fields>`` lines (ours: ``APPS_FIELDS``) as ``procs`` entries.
    A process name holding commas is rejoined, one holding spaces kept whole; lines of
    unknown GPUs are skipped."""
    out: list[dict[str, Any]] = []
    for line in lines:
        cells = _app_cells(line, fields)
        if cells is None:
            continue
        gpu = uuid_index.get(cells.get("gpu_uuid", ""))
        pid = to_int(cells.get("pid", ""))
        if gpu is None or pid is None:
            continue
        cmd = cells["process_name"] or None
        mem_text = cells.get("used_memory", cells.get("used_gpu_memory", ""))
        out.append(
            {
                "gpu": gpu,
                "pid": pid,
                "start_ticks": None,
                "user": None,
                "name": program_name(cmd),
                "cmd": cmd,
                "mem_bytes": None if missing(mem_text) else to_mib(mem_text),
                "sm_pct": None,
                "type": "compute",
            }
        )
    return out
