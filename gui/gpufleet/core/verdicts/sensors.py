"""What an instance reports and what it hides: the platform's "transparency", per GPU.

Cheap platforms often run the GPU behind a virtualization layer that answers "not
supported" for temperatures, power, clock reasons or ECC. A judgment that needs a hidden
sensor must say it cannot judge, never pass it: this module says which sensors a window's
GPUs reported, from the hello's ``unsupported`` map and from the samples themselves (a
column that is null in every sample was not reported, whatever the hello says), and which
findings each sensor group is needed for.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from gpufleet.core.wire.messages import Hello, Procs, Sample

# The sensor groups a user compares across providers, and the columns that carry each.
SENSORS: Final[Mapping[str, tuple[str, ...]]] = {
    "temperature": ("temp_gpu_c",),
    "memory_temperature": ("temp_mem_c",),
    "power": ("power_w",),
    "power_limit": ("power_limit_w",),
    "clock_reasons": ("clock_reasons",),
    "ecc": ("ecc_sbe_vol", "ecc_dbe_vol"),
    "nvlink": ("nvlink_up",),
}
PROCESSES: Final = "processes"
ORDER: Final = (*SENSORS, PROCESSES)

# The diagnosis findings (and alert conditions) that need each group: with it hidden they
# cannot be judged here.
NEEDED_BY: Final[Mapping[str, tuple[str, ...]]] = {
    "temperature": ("diag_thermal", "diag_temperature", "thermal_throttle", "temp_near_slowdown"),
    "memory_temperature": ("diag_mem_temp", "mem_temp_near_max", "mem_temp_high"),
    "power": ("diag_power_limit", "diag_power_cap", "power_cap_active"),
    "power_limit": ("diag_power_limit", "power_limit_low"),
    "clock_reasons": (
        "diag_throttled",
        "diag_thermal",
        "diag_hw_slowdown",
        "diag_clock_setting",
        "diag_clocks_unexplained",
        "thermal_throttle",
        "hw_slowdown",
        "clock_setting_low",
        "clocks_below_nominal",
    ),
    "ecc": ("diag_ecc", "ecc_dbe_increase"),
    "processes": ("diag_shared", "diag_hidden_memory", "mem_unaccounted", "proc_suspect"),
}


@dataclass(frozen=True)
class SensorReport:
    """One GPU's sensors: ``reported`` and ``hidden`` are names of ``ORDER``; a group the
    GPU does not have at all (NVLink on a PCIe card) is in neither."""

    gpu: int
    name: str
    reported: tuple[str, ...]
    hidden: tuple[str, ...]

    def cannot_judge(self) -> frozenset[str]:
        """The findings and conditions that need one of the hidden sensors."""
        return frozenset(x for s in self.hidden for x in NEEDED_BY.get(s, ()))


# Consumer cards have no ECC and NVML reads no GDDR memory temperature on them.
CONSUMER_MARKS: Final = ("geforce", "rtx 40", "rtx 30", "rtx 50", " 4090", " 3090", " 5090")


def _absent_by_design(group: str, nominal: Mapping[str, object], name: str) -> bool:
    """What the card does not have is not hidden: NVLink on a card without links, ECC and
    memory temperature on a consumer card."""
    if group == "nvlink":
        return not nominal.get("nvlink_links")
    consumer = any(m in f" {name.lower()}" for m in CONSUMER_MARKS)
    return consumer and group in ("ecc", "memory_temperature")


def _seen_columns(samples: Sequence[Sample], gpu: int) -> set[str]:
    seen: set[str] = set()
    for s in samples:
        row = s.row(gpu)
        if row is None:
            continue
        for i, name in enumerate(s.columns):
            if name not in seen and i + 1 < len(row) and row[i + 1] is not None:
                seen.add(name)
    return seen


def _procs_reported(procs: Iterable[Procs], gpu: int) -> bool:
    """Processes are reported when a snapshot names one on this GPU with its memory."""
    return any(p.gpu == gpu and p.mem_bytes is not None for snap in procs for p in snap.procs)


def sensor_reports(
    hello: Hello | None, samples: Sequence[Sample], procs: Sequence[Procs]
) -> tuple[SensorReport, ...]:
    """Per GPU of the hello (else of the samples), what it reported over these samples."""
    if hello is not None:
        gpus = [(g.index, g.name, g.nominal) for g in hello.gpus]
    else:
        idx = sorted({i for s in samples for i in s.gpu_indices()})
        gpus = [(i, "", {}) for i in idx]
    out = []
    for index, name, nominal in gpus:
        used = any(s.value(index, "mem_used_bytes") for s in samples[-50:])
        named: bool | None = None  # memory in use, snapshots taken: were its holders named?
        if procs and _procs_reported(procs, index):
            named = True
        elif used and procs:
            named = False
        out.append(_report(index, name, nominal, _seen_columns(samples, index), named))
    return tuple(out)


def _report(
    index: int, name: str, nominal: Mapping[str, object], seen: set[str], named: bool | None
) -> SensorReport:
    """``seen``: the columns that had a value; ``named``: whether the processes holding
    memory were named (None: nothing to tell, no process or no snapshot)."""
    reported, hidden = [], []
    for group, cols in SENSORS.items():
        if any(c in seen for c in cols):
            reported.append(group)
        elif not _absent_by_design(group, nominal, name):
            hidden.append(group)
    if named is True:
        reported.append(PROCESSES)
    elif named is False:
        hidden.append(PROCESSES)
    return SensorReport(index, name, tuple(reported), tuple(hidden))


# The check's per-GPU facts that carry each sample column (the rest share the column's name).
CHECK_FACT: Final[Mapping[str, str]] = {"power_limit_w": "power_enforced_w"}


def check_reports(facts: Mapping[str, Any]) -> tuple[SensorReport, ...]:
    """Per GPU of a start-of-rental check (``gpufleet check``'s facts), what it reported:
    a fact with a value is reported; its processes are named when an entry has its
    memory, hidden when the GPU lists processes and none says what it holds."""
    out = []
    gpus = facts.get("gpus")
    for g in gpus if isinstance(gpus, list) else ():
        if not isinstance(g, Mapping) or not isinstance(g.get("index"), int):
            continue
        seen = {
            col
            for cols in SENSORS.values()
            for col in cols
            if g.get(CHECK_FACT.get(col, col)) is not None
        }
        entries = [e for e in g.get("process_list") or () if isinstance(e, Mapping)]
        named: bool | None = None
        if any(e.get("mem_bytes") is not None for e in entries):
            named = True
        elif entries or (g.get("processes") or 0) > 0:
            named = False
        nominal = {"nvlink_links": g.get("nvlink_links")}
        out.append(_report(g["index"], str(g.get("name") or ""), nominal, seen, named))
    return tuple(out)
