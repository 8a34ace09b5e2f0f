"""The sampler's ``hello`` GPU entries, ``info`` and ``check`` as the laptop types them.

The keys and their JSON types are defined once, in ``gpufleet_sampler.protocol_schema``;
these TypedDicts say the same for mypy (a test keeps them equal, key for key and type for
type), so code that reads facts from the nvidia-smi path or a recorded check is checked
against what the sampler really writes. They describe what a producer built through the
schema holds; a JSON object read from a host is still only a ``Mapping[str, Any]`` until
checked (``verdicts.health`` reads every fact defensively).
"""

from __future__ import annotations

from typing import Any, TypedDict

Nominal = dict[str, float | int | None]


class _HelloGpuOptional(TypedDict, total=False):
    """Keys a ``hello`` GPU entry may add (see ``protocol_schema.GPU_OPTIONAL``)."""

    links_unsupported: str
    minor: int | None
    device: str | None
    gpm: bool | None
    memory_info: str
    probes: dict[str, Any]
    cost_us: dict[str, float]
    gpm_throughput: list[str]


class HelloGpuFacts(_HelloGpuOptional):
    """A card's entry of ``hello["gpus"]`` (``GPU_KEYS`` + ``CARD_KEYS``)."""

    index: int
    uuid: str
    name: str
    pci_bus_id: str
    nominal: Nominal
    unsupported: dict[str, str]
    arch: str | None
    compute_capability: str | None
    brand: str | None
    serial: str | None
    vbios: str | None
    persistence_mode: bool | None
    mig_mode: bool | None
    ecc_mode: bool | None
    virtualization_mode: str | None
    compute_mode: str | None
    lost: int


class HelloSliceFacts(TypedDict):
    """A MIG slice's entry of ``hello["gpus"]`` (``GPU_KEYS`` + ``SLICE_KEYS``)."""

    index: int
    uuid: str
    name: str
    pci_bus_id: str
    nominal: Nominal
    unsupported: dict[str, str]
    mig: dict[str, Any]
    links_unsupported: str


class CheckGpuFacts(TypedDict):
    """One GPU's facts of a ``check`` (``protocol_schema.CHECK_GPU_KEYS``)."""

    index: int
    uuid: str
    name: str
    pci_bus_id: str | None
    lost: int
    persistence_mode: bool | None
    pstate: int | None
    clock_reasons: int | None
    util_gpu_pct: float | None
    power_w: float | None
    power_enforced_w: float | None
    power_default_w: float | None
    power_max_w: float | None
    temp_gpu_c: float | None
    temp_mem_c: float | None
    temp_slowdown_c: float | None
    temp_shutdown_c: float | None
    temp_mem_max_c: float | None
    sm_clock_mhz: float | None
    sm_clock_max_mhz: float | None
    pcie_gen: int | None
    pcie_max_gen: int | None
    pcie_width: int | None
    pcie_max_width: int | None
    pcie_replays: int | None
    nvlink_links: int | None
    nvlink_up: int | None
    nvlink_errors: int | None
    ecc_mode: bool | None
    ecc_sbe_vol: int | None
    ecc_dbe_vol: int | None
    ecc_sbe_agg: int | None
    ecc_dbe_agg: int | None
    remapped_rows_correctable: int | None
    remapped_rows_uncorrectable: int | None
    remap_pending: int | None
    remap_failed: int | None
    retired_pending: int | None
    xid_seen: str | bool
    processes: int | None
    process_list: list[dict[str, Any]]
    processes_not_here: int | None
    mem_not_here_bytes: int | None
    minor: int | None
    device: str | None
    mem_total_bytes: int | None
    mem_reserved_bytes: int | None
    mem_used_bytes: int | None
    virtualization_mode: str | None
    mig_mode: bool | None
    mig_slices: int | None
    compute_mode: str | None
    unsupported: dict[str, str]


class _Answer(TypedDict):
    """What ``info`` and ``check`` both begin with."""

    kind: str
    protocol: int
    sampler_version: str
    backend: str
    scenario: str | None
    t: float
    host: dict[str, Any]


class CheckFacts(_Answer):
    """A ``check`` answer (``protocol_schema.CHECK_KEYS``)."""

    driver_version: str | None
    cuda_version: str | None
    gpu_count: int
    gpus: list[CheckGpuFacts]
    events: list[dict[str, Any]]
    xid: dict[str, Any]


class InfoFacts(_Answer):
    """An ``info`` answer (``protocol_schema.INFO_KEYS``)."""

    gpu_count: int
    gpus: list[HelloGpuFacts]
