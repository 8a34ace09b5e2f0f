"""``nvidia-smi -q -x`` (the nvsmi_device XML, DTD v10 to v13) read into an inventory and the
health check's facts.

The element names moved between drivers, and each move, missed, turns a fact into a silent
pass. What the real dumps of drivers 418 to 595 print, and what is read here:

- power: ``<power_readings>`` with ``enforced_power_limit`` up to 530; from 535
  ``<gpu_power_readings>`` with ``current_power_limit`` (and ``<module_power_readings>``);
- temperature thresholds: absolute (``gpu_temp_slow_threshold``) up to 530; from 535 margins to
  T.Limit only (``gpu_temp_tlimit``, ``gpu_temp_slow_tlimit_threshold``);
- uncorrectable ECC: ``single_bit``/``double_bit`` totals (Pascal-era boards, to 525);
  ``dram_uncorrectable`` + ``sram_uncorrectable`` (510 to 536, and 590 on some boards);
  ``sram_uncorrectable_parity`` + ``sram_uncorrectable_secded`` (570 on; the
  ``aggregate_uncorrectable_sram_sources`` beside them split the same errors by unit and are
  not added again); in MIG mode the volatile SRAM count is per slice
  (``mig_device/ecc_error_count/volatile_count/sram_uncorrectable``) and the card's says N/A;
- MIG slices: ``<mig_devices><mig_device>`` with their index, instance ids, SM count and
  memory (no UUID and no profile name: those come from ``nvidia-smi -L``);
- a GRID vGPU guest prints ``0 MHz`` for every clock and ``0 C`` for the temperature it cannot
  see: on a vGPU guest a zero there is "not reported" (None), and a max clock of 0 is never real.
"""

from __future__ import annotations

import time
import xml.etree.ElementTree as ET
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Final, cast

from gpufleet_sampler import protocol, protocol_schema

from gpufleet.core.wire.facts import CheckFacts, CheckGpuFacts
from gpufleet.core.wire.gpu_kind import virtualization_name
from gpufleet.core.wire.nvidia_smi_cells import (
    MIB,
    SmiError,
    missing,
    program_name,
    to_bool,
    to_num,
    to_pstate,
)

BACKEND: Final = "nvidia-smi"
# Uncorrectable and correctable ECC counters under <volatile> / <aggregate>, every layout.
_UNCORRECTED: Final = (
    "double_bit/total",
    "dram_uncorrectable",
    "sram_uncorrectable",
    "sram_uncorrectable_parity",
    "sram_uncorrectable_secded",
)
_CORRECTED: Final = ("single_bit/total", "dram_correctable", "sram_correctable")
_SLICE_UNCORRECTED: Final = tuple(
    f"ecc_error_count/volatile_count/{n}"
    for n in ("sram_uncorrectable", "sram_uncorrectable_parity", "sram_uncorrectable_secded")
)


@dataclass(frozen=True)
class SmiSlice:
    """One MIG device of a GPU in MIG mode, as ``-q -x`` (and ``-L``) describe it."""

    parent: int
    slot: int
    gpu_instance_id: int | None
    compute_instance_id: int | None
    sm_count: int | None
    mem_total_bytes: int | None
    mem_used_bytes: int | None
    ecc_dbe_vol: int | None
    uuid: str | None = None
    profile: str | None = None


@dataclass(frozen=True)
class SmiGpu:
    index: int
    uuid: str
    name: str
    pci_bus_id: str
    nominal: Mapping[str, float | int | None]
    extra: Mapping[str, Any]
    slices: tuple[SmiSlice, ...] = ()

    @property
    def vgpu_guest(self) -> bool:
        return self.extra.get("virtualization_mode") == "vgpu"


@dataclass(frozen=True)
class Inventory:
    driver_version: str | None
    cuda_version: str | None
    gpus: tuple[SmiGpu, ...]

    def uuid_index(self) -> dict[str, int]:
        return {g.uuid: g.index for g in self.gpus}

    def slices(self) -> list[SmiSlice]:
        return [s for g in self.gpus for s in g.slices]

    def named(self, listing: Mapping[int, Sequence[tuple[str | None, str | None]]]) -> Inventory:
        """The inventory with its slices' (profile, UUID) from ``nvidia-smi -L``, by GPU index
        and slot."""
        gpus = []
        for g in self.gpus:
            names = listing.get(g.index, ())
            slices = tuple(
                replace(s, profile=names[s.slot][0], uuid=names[s.slot][1])
                if s.slot < len(names)
                else s
                for s in g.slices
            )
            gpus.append(replace(g, slices=slices))
        return replace(self, gpus=tuple(gpus))


def _text(el: ET.Element | None, path: str) -> str | None:
    if el is None:
        return None
    node = el.find(path)
    if node is None or node.text is None:
        return None
    t = node.text.strip()
    return None if missing(t) else t


def _num_at(el: ET.Element | None, *paths: str) -> float | None:
    for p in paths:
        t = _text(el, p)
        v = to_num(t) if t is not None else None
        if v is not None:
            return v
    return None


def _int_at(el: ET.Element | None, path: str) -> int | None:
    v = _num_at(el, path)
    return int(v) if v is not None else None


def _mib(v: float | None) -> int | None:
    return int(v * MIB) if v is not None else None


def _seen(v: float | None, vgpu: bool) -> float | None:
    """A clock or temperature as reported: a vGPU guest's 0 is "cannot see it"."""
    return None if v is None or (vgpu and v == 0) else v


def _positive(v: float | None) -> float | None:
    return v if v is not None and v > 0 else None


def _temp_limits(t: ET.Element | None) -> tuple[float | None, float | None, float | None]:
    """(slowdown, shutdown, memory max) in °C. Newer drivers give the thresholds as margins
    to T.Limit ("GPU Slowdown T.Limit Temp: -2 C": slowdown 2 °C above T.Limit) and the
    current margin ("GPU T.Limit Temp: 54 C" at 33 °C: T.Limit is 87 °C)."""
    slow = _num_at(t, "gpu_temp_slow_threshold")
    shut = _num_at(t, "gpu_temp_max_threshold")
    mem_max = _num_at(t, "gpu_temp_max_mem_threshold")
    cur = _positive(_num_at(t, "gpu_temp"))
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


def _power(g: ET.Element) -> ET.Element | None:
    found = g.find("gpu_power_readings")
    return found if found is not None else g.find("power_readings")


def _slices(g: ET.Element, parent: int) -> tuple[SmiSlice, ...]:
    out = []
    for k, m in enumerate(g.findall("mig_devices/mig_device")):
        slot = _int_at(m, "index")
        out.append(
            SmiSlice(
                parent=parent,
                slot=slot if slot is not None else k,
                gpu_instance_id=_int_at(m, "gpu_instance_id"),
                compute_instance_id=_int_at(m, "compute_instance_id"),
                sm_count=_int_at(m, "device_attributes/shared/multiprocessor_count"),
                mem_total_bytes=_mib(_num_at(m, "fb_memory_usage/total")),
                mem_used_bytes=_mib(_num_at(m, "fb_memory_usage/used")),
                ecc_dbe_vol=_sum_at(m, *_SLICE_UNCORRECTED),
            )
        )
    return tuple(out)


def _nominal(g: ET.Element) -> dict[str, float | int | None]:
    power = _power(g)
    slow, shut, mem_max = _temp_limits(g.find("temperature"))
    link = "pci/pci_gpu_link_info/"
    return {
        # A max clock of 0 (a vGPU guest prints "0 MHz") is not a clock.
        "sm_clock_max_mhz": _positive(_num_at(g, "max_clocks/sm_clock")),
        "mem_clock_max_mhz": _positive(_num_at(g, "max_clocks/mem_clock")),
        "sm_clock_base_mhz": _positive(_num_at(g, "default_applications_clocks/graphics_clock")),
        "power_default_w": _num_at(power, "default_power_limit"),
        "power_enforced_w": _num_at(power, "enforced_power_limit", "current_power_limit"),
        "power_min_w": _num_at(power, "min_power_limit"),
        "power_max_w": _num_at(power, "max_power_limit"),
        "temp_slowdown_c": slow,
        "temp_shutdown_c": shut,
        "temp_mem_max_c": mem_max,
        "pcie_max_gen": _int_at(g, link + "pcie_gen/max_link_gen"),
        "pcie_max_width": _int_at(g, link + "link_widths/max_link_width"),
        "nvlink_links": None,
        "nvlink_link_bps": None,
        "mem_total_bytes": _mib(_num_at(g, "fb_memory_usage/total")),
        "mem_reserved_bytes": _mib(_num_at(g, "fb_memory_usage/reserved")),
    }


def _extra(g: ET.Element) -> dict[str, Any]:
    extra: dict[str, Any] = {
        "arch": _text(g, "product_architecture"),
        "mig_mode": to_bool(_text(g, "mig_mode/current_mig") or ""),
        "virtualization_mode": virtualization_name(
            _text(g, "gpu_virtualization_mode/virtualization_mode")
        ),
        "persistence_mode": to_bool(_text(g, "persistence_mode") or ""),
        "ecc_mode": to_bool(_text(g, "ecc_mode/current_ecc") or ""),
        "serial": _text(g, "serial"),
        "vbios": _text(g, "vbios_version"),
    }
    return {k: v for k, v in extra.items() if v is not None}


def _root(xml: bytes | str) -> ET.Element:
    try:
        root = ET.fromstring(xml)
    except ET.ParseError as e:
        raise SmiError(f"nvidia-smi -q -x did not print valid XML: {e}") from None
    if root.tag != "nvidia_smi_log":
        raise SmiError(f"nvidia-smi -q -x printed <{root.tag}>, not <nvidia_smi_log>")
    return root


def _inventory(root: ET.Element) -> Inventory:
    gpus = []
    for i, g in enumerate(root.findall("gpu")):
        # -q -x lists the GPUs in NVML index order, the order of --query-gpu's "index"; the
        # minor number (/dev/nvidiaN) can differ from it.
        gpus.append(
            SmiGpu(
                index=i,
                uuid=_text(g, "uuid") or f"GPU-unknown-{i}",
                name=_text(g, "product_name") or "GPU",
                pci_bus_id=_text(g, "pci/pci_bus_id") or str(g.get("id") or ""),
                nominal=_nominal(g),
                extra=_extra(g),
                slices=_slices(g, i),
            )
        )
    if not gpus:
        raise SmiError("nvidia-smi -q -x lists no GPU")
    return Inventory(_text(root, "driver_version"), _text(root, "cuda_version"), tuple(gpus))


def parse_inventory(xml: bytes | str) -> Inventory:
    """``nvidia-smi -q -x`` output."""
    return _inventory(_root(xml))


def slice_memory(xml: bytes | str) -> dict[tuple[int, int], int | None]:
    """(GPU index, slot) -> memory used, of every MIG slice in one ``-q -x``."""
    inv = parse_inventory(xml)
    return {(s.parent, s.slot): s.mem_used_bytes for s in inv.slices()}


def _sum_at(el: ET.Element | None, *paths: str) -> int | None:
    """The sum of the counters found at ``paths`` (None when none is there)."""
    vals = [_num_at(el, p) for p in paths]
    found = [v for v in vals if v is not None]
    return int(sum(found)) if found else None


def _add(a: int | None, b: int | None) -> int | None:
    return b if a is None else a if b is None else a + b


def _processes(g: ET.Element, index: int) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for p in g.findall("processes/process_info"):
        pid = _int_at(p, "pid")
        if pid is None:
            continue
        cmd = _text(p, "process_name")
        out.append(
            {
                "gpu": index,
                "pid": pid,
                "start_ticks": None,
                "user": None,
                "name": program_name(cmd),
                "cmd": cmd,
                "mem_bytes": _mib(_num_at(p, "used_memory")),
                "sm_pct": None,
                "type": _text(p, "type"),
            }
        )
    return out


def _ecc_facts(g: ET.Element, slices: Sequence[SmiSlice]) -> dict[str, Any]:
    """ECC mode and counts in whichever layout this driver prints (see the module)."""
    on = to_bool(_text(g, "ecc_mode/current_ecc") or "")
    if not on:
        keys = ("ecc_sbe_vol", "ecc_dbe_vol", "ecc_sbe_agg", "ecc_dbe_agg")
        return {"ecc_mode": on, **dict.fromkeys(keys)}
    vol = g.find("ecc_errors/volatile")
    agg = g.find("ecc_errors/aggregate")
    dbe_vol = _sum_at(vol, *_UNCORRECTED)
    for s in slices:
        dbe_vol = _add(dbe_vol, s.ecc_dbe_vol)
    return {
        "ecc_mode": on,
        "ecc_sbe_vol": _sum_at(vol, *_CORRECTED),
        "ecc_dbe_vol": dbe_vol,
        "ecc_sbe_agg": _sum_at(agg, *_CORRECTED),
        "ecc_dbe_agg": _sum_at(agg, *_UNCORRECTED),
    }


# The check facts this path does not read from ``-q -x`` (null, with this reason), so that a
# null here is never taken for "the GPU has none".
_NOT_READ: Final = "not read from nvidia-smi -q -x"
_FACTS_NOT_READ: Final = (
    "clock_reasons",
    "power_w",
    "pcie_replays",
    "nvlink_up",
    "nvlink_errors",
    "retired_pending",
    "compute_mode",
)


def _gpu_facts(g: ET.Element, inv_gpu: SmiGpu) -> CheckGpuFacts:
    n = inv_gpu.nominal
    vgpu = inv_gpu.vgpu_guest
    link = "pci/pci_gpu_link_info/"
    procs = _processes(g, inv_gpu.index)
    facts: dict[str, Any] = {
        "index": inv_gpu.index,
        "name": inv_gpu.name,
        "uuid": inv_gpu.uuid,
        "pci_bus_id": inv_gpu.pci_bus_id,
        "lost": 0,
        "util_gpu_pct": _num_at(g, "utilization/gpu_util"),
        "persistence_mode": inv_gpu.extra.get("persistence_mode"),
        "pstate": to_pstate(_text(g, "performance_state") or ""),
        "power_enforced_w": n.get("power_enforced_w"),
        "power_default_w": n.get("power_default_w"),
        "power_max_w": n.get("power_max_w"),
        "temp_gpu_c": _seen(_num_at(g, "temperature/gpu_temp"), vgpu),
        "temp_slowdown_c": n.get("temp_slowdown_c"),
        "temp_shutdown_c": n.get("temp_shutdown_c"),
        "temp_mem_c": _seen(_num_at(g, "temperature/memory_temp"), vgpu),
        "temp_mem_max_c": n.get("temp_mem_max_c"),
        "sm_clock_mhz": _seen(_num_at(g, "clocks/sm_clock"), vgpu),
        "sm_clock_max_mhz": n.get("sm_clock_max_mhz"),
        "pcie_gen": _int_at(g, link + "pcie_gen/current_link_gen"),
        "pcie_max_gen": n.get("pcie_max_gen"),
        "pcie_width": _int_at(g, link + "link_widths/current_link_width"),
        "pcie_max_width": n.get("pcie_max_width"),
        "nvlink_links": n.get("nvlink_links"),
        **_ecc_facts(g, inv_gpu.slices),
        "remapped_rows_correctable": _int_at(g, "remapped_rows/remapped_row_corr"),
        "remapped_rows_uncorrectable": _int_at(g, "remapped_rows/remapped_row_unc"),
        "remap_pending": to_bool(_text(g, "remapped_rows/remapped_row_pending") or ""),
        "remap_failed": to_bool(_text(g, "remapped_rows/remapped_row_failure") or ""),
        # nvidia-smi keeps no record of Xids, and cannot tell a container's processes apart.
        "xid_seen": "unknown",
        "processes": len(procs),
        "process_list": procs,
        "processes_not_here": None,
        "mem_not_here_bytes": None,
        "minor": None,
        "device": None,
        "mem_total_bytes": n.get("mem_total_bytes"),
        "mem_reserved_bytes": n.get("mem_reserved_bytes"),
        "mem_used_bytes": _mib(_num_at(g, "fb_memory_usage/used")),
        "virtualization_mode": inv_gpu.extra.get("virtualization_mode"),
        "mig_mode": inv_gpu.extra.get("mig_mode"),
        "mig_slices": len(inv_gpu.slices),
        "unsupported": dict.fromkeys(_FACTS_NOT_READ, _NOT_READ),
        **dict.fromkeys(_FACTS_NOT_READ),
    }
    return cast(CheckGpuFacts, protocol_schema.check_gpu(facts))


def check_facts(xml: bytes | str) -> CheckFacts:
    """The facts of the start-of-rental check, as the sampler's ``check`` prints them, from
    one ``nvidia-smi -q -x``: what it has (P-state, power limits, temperatures, PCIe link,
    ECC in every layout, row remapping, memory, processes, virtualization, MIG); what it has
    not (Xids, NVLink state) stays unknown."""
    root = _root(xml)
    inv = _inventory(root)
    gpus = [_gpu_facts(g, i) for i, g in zip(inv.gpus, root.findall("gpu"), strict=True)]
    facts = protocol_schema.check(
        {
            "protocol": protocol.PROTOCOL_VERSION,
            "sampler_version": BACKEND,
            "backend": BACKEND,
            "scenario": None,
            "t": round(time.time(), 3),
            "host": {"driver_version": inv.driver_version, "cuda_version": inv.cuda_version},
            "driver_version": inv.driver_version,
            "cuda_version": inv.cuda_version,
            "gpu_count": len(gpus),
            "gpus": gpus,
            "events": [],
            # nvidia-smi keeps no record of Xids: a one-shot check cannot say.
            "xid": {"seen": "unknown", "source": "none", "events": []},
        }
    )
    return cast(CheckFacts, facts)
