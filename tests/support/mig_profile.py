"""The fake pynvml's profile of an H100 split into three MIG slices (3g.40gb, 2g.20gb,
1g.10gb), each with its own memory, SM share and one process; the MIG tests, the protocol
conformance test and bench/sampler.py run the NVML backend on it."""

from __future__ import annotations

from typing import Any

from tests.support.nvml_fake import profile

GIB = 1 << 30
MIB = 1 << 20
# name, SMs, memory (MiB, as NVML reports the H100's profiles), used (bytes), one process.
SLICES = (
    ("3g.40gb", 60, 40448, 12 * GIB),
    ("2g.20gb", 32, 20096, 3 * GIB),
    ("1g.10gb", 16, 9856, 8871 * MIB),  # 90.0 % of the slice
)


def mig_profile() -> dict[str, Any]:
    p = profile("h100x8")
    devices = []
    for k, (name, sms, mib, used) in enumerate(SLICES):
        devices.append(
            {
                "nvmlDeviceGetName": f"NVIDIA H100 80GB HBM3 MIG {name}",
                "nvmlDeviceGetUUID": f"MIG-7f3e9a2c-1b4d-5e6f-8a9b-0c1d2e3f4a5{k}",
                "nvmlDeviceGetGpuInstanceId": [2, 5, 13][k],
                "nvmlDeviceGetComputeInstanceId": 0,
                "nvmlDeviceGetAttributes_v2": {
                    "multiprocessorCount": sms,
                    "gpuInstanceSliceCount": int(name[0]),
                    "computeInstanceSliceCount": int(name[0]),
                    "memorySizeMB": mib,
                },
                "nvmlDeviceGetMemoryInfo_v2": {
                    "total": mib * MIB,
                    "reserved": 0,
                    "used": used,
                },
                "nvmlDeviceGetComputeRunningProcesses": [
                    {"pid": "$self" if k == 2 else 40000 + k, "usedGpuMemory": used - 300 * MIB}
                ],
            }
        )
    card_used = sum(u for *_, u in SLICES)
    p["gpus"] = [
        {
            "nvmlDeviceGetMigMode": [1, 1],
            "nvmlDeviceGetAttributes_v2": {"multiprocessorCount": 132},
            # In MIG mode the card-wide utilization is not reported.
            "nvmlDeviceGetUtilizationRates": {"error": "NotSupported"},
            "nvmlDeviceGetMemoryInfo_v2": {
                "total": 80 * GIB,
                "reserved": 570425344,
                "used": card_used,
            },
            "nvmlDeviceGetComputeRunningProcesses": [],
            "mig_devices": devices,
        }
    ]
    return p
