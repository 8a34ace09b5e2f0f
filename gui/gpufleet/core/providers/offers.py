"""What the provider advertises for a rented instance's GPUs, where it publishes figures.

vast.ai lists per offer (and repeats on the instance) what its own test measured: memory
bandwidth (``gpu_mem_bw``, GB/s), PCIe bandwidth (``pcie_bw``, GB/s, host to device),
``total_flops`` (FP32 TFLOPS of all the instance's GPUs together) and its DLPerf score. The
arrival benchmark shows them beside its own figures. RunPod and Lambda publish none: None.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gpufleet.core.providers import parse
from gpufleet.core.providers.base import Provider


def advertised_from_vast(d: Mapping[str, Any]) -> dict[str, float] | None:
    """Per-GPU advertised figures from a vast.ai instance or offer object (None: none)."""
    out: dict[str, float] = {}
    mem = parse.num(d, "gpu_mem_bw")
    pcie = parse.num(d, "pcie_bw")
    flops = parse.num(d, "total_flops")
    n = parse.integer(d, "num_gpus") or 1
    dlperf = parse.num(d, "dlperf")
    if mem is not None and mem > 0:
        out["hbm_gbps"] = round(mem, 1)
    if pcie is not None and pcie > 0:
        out["h2d_gbps"] = round(pcie, 1)
    if flops is not None and flops > 0:
        out["fp32_tflops"] = round(flops / max(1, n), 2)
    if dlperf is not None and dlperf > 0:
        out["dlperf"] = round(dlperf, 2)
    return out or None


def fetch_advertised(provider: Provider, instance_id: str) -> dict[str, float] | None:
    """The instance's advertised figures from its provider (raises ProviderError)."""
    if provider.name != "vast":
        return None
    http = getattr(provider, "http", None)
    if http is None:
        return None
    doc = http.request("GET", f"/api/v0/instances/{instance_id}/")
    return advertised_from_vast(
        parse.record(provider.label, f"instance {instance_id}", doc, "instances")
    )
