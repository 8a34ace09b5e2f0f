"""Stand-in instances for the arrival benchmark: one card description gives both the fake
torch profile (what the card measures) and the fake NVML profile (what it reports while it
runs), so that a slow card's telemetry tells its cause as a real one's does."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.support.paths import FAKES, ROOT

# A good A100 SXM4 80GB as PyTorch measures it (mamf-finder's 86.9 % of 312 TFLOPS; HBM
# at 90 % of 2039 GB/s; pinned PCIe gen 4 copies at 85 % of 31.5 GB/s; NVLink 3 at 88 %).
A100 = {
    "name": "NVIDIA A100-SXM4-80GB", "total_memory": 80 << 30, "l2": 40 << 20,
    "bf16": 271.0, "fp16": 271.0, "tf32": 135.0, "hbm": 1830.0, "h2d": 26.7, "d2h": 26.7,
    "p2p": 262.0, "peer": True,
}  # fmt: skip


def card(**changes: Any) -> dict[str, Any]:
    out = dict(A100)
    out.update(changes)
    return out


def nvml_gpu(c: dict[str, Any], i: int) -> dict[str, Any]:
    """What NVML says of card ``c`` under load: ``clock`` (share of boost), ``reasons``,
    ``limit_w`` / ``default_w``, ``width``, ``procs``."""
    clock = c.get("clock", 1.0)
    return {
        "nvmlDeviceGetName": c["name"],
        "nvmlDeviceGetUUID": f"GPU-standin-{i}",
        "nvmlDeviceGetMemoryInfo_v2": {"total": c["total_memory"], "reserved": 0, "used": 0},
        "nvmlDeviceGetMaxClockInfo:1": 1410,
        "nvmlDeviceGetMaxClockInfo:2": 1593,
        "nvmlDeviceGetClockInfo:1": int(1410 * clock),
        "nvmlDeviceGetClockInfo:2": 1593,
        "nvmlDeviceGetPowerUsage": int(c.get("power_w", 380) * 1000),
        "nvmlDeviceGetEnforcedPowerLimit": int(c.get("limit_w", 400) * 1000),
        "nvmlDeviceGetPowerManagementDefaultLimit": int(c.get("default_w", 400) * 1000),
        "nvmlDeviceGetTemperature:0": c.get("temp", 62),
        "nvmlDeviceGetCurrentClocksEventReasons": c.get("reasons", 0),
        "nvmlDeviceGetCurrPcieLinkGeneration": 4,
        "nvmlDeviceGetCurrPcieLinkWidth": c.get("width", 16),
        "nvmlDeviceGetMaxPcieLinkGeneration": 4,
        "nvmlDeviceGetMaxPcieLinkWidth": 16,
        "nvmlDeviceGetUtilizationRates": {"gpu": 100, "memory": 60},
        "nvmlDeviceGetNvLinkState:*": 1,
        "nvmlDeviceGetComputeRunningProcesses": c.get("procs", []),
        "nvmlDeviceGetGraphicsRunningProcesses": [],
    }


def write_instance(tmp: Path, cards: list[dict[str, Any]], torch: bool = True) -> dict[str, str]:
    """Profiles for ``cards`` under ``tmp``; the environment a payload run needs."""
    nvml = {
        "format": "gpufleet-nvml-profile", "version": 1, "tick_s": 1.0, "count": len(cards),
        "system": {"nvmlSystemGetDriverVersion": "550.54.15"},
        "gpus": [nvml_gpu(c, i) for i, c in enumerate(cards)],
    }  # fmt: skip
    (tmp / "nvml.json").write_text(json.dumps(nvml))
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(FAKES), str(ROOT / "remote")])
    env["GPUFLEET_FAKE_NVML"] = str(tmp / "nvml.json")
    env["GPUFLEET_BENCH_LIBCUDA"] = str(tmp / "no-libcuda.so")  # no driver library here
    env.pop("GPUFLEET_FAKE_TORCH", None)
    if torch:
        (tmp / "torch.json").write_text(json.dumps({"gpus": cards}))
        env["GPUFLEET_FAKE_TORCH"] = str(tmp / "torch.json")
    return env


def bench_argv(seconds: float, *extra: str) -> list[str]:
    return [sys.executable, "-m", "gpufleet_sampler", "bench", "--seconds", f"{seconds:g}", *extra]


def run_bench(env: dict[str, str], seconds: float, *extra: str) -> list[bytes]:
    p = subprocess.run(bench_argv(seconds, *extra), env=env, capture_output=True, timeout=120)
    assert p.returncode == 0, p.stderr.decode()[-2000:]
    return p.stdout.splitlines()
