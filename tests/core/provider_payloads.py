"""Provider answers as their API documentation shows them (fields we read and some we do
not, values in the types the providers send: RunPod's costPerHr is a string)."""

from __future__ import annotations

from typing import Any

VAST_INSTANCES: dict[str, Any] = {
    "instances": [
        {
            "id": 4242001,
            "label": "train-a",
            "actual_status": "running",
            "intended_status": "running",
            "cur_state": "running",
            "dph_total": 0.412,
            "storage_cost": 0.15,
            "disk_space": 73.0,
            "ssh_host": "ssh5.vast.ai",
            "ssh_port": 31922,
            "public_ipaddr": "203.0.113.9",
            "gpu_name": "RTX 4090",
            "num_gpus": 2,
            "duration": 8123.4,
            "image_uuid": "pytorch/pytorch",
        },
        {
            "id": 4242002,
            "label": None,
            "actual_status": "stopped",
            "intended_status": "stopped",
            "dph_total": 1.2,
            "storage_cost": 0.1,
            "disk_space": 100.0,
            "ssh_host": "ssh7.vast.ai",
            "ssh_port": 40001,
            "gpu_name": "A100 SXM4",
            "num_gpus": 1,
        },
    ]
}

RUNPOD_PODS: list[dict[str, Any]] = [
    {
        "id": "xedezhzb9la3ye",
        "name": "llm-ft",
        "desiredStatus": "RUNNING",
        "costPerHr": "0.74",
        "adjustedCostPerHr": 0.69,
        "gpuCount": 1,
        "gpu": {"id": "NVIDIA A40", "count": 1, "displayName": "A40"},
        "machine": {"gpuTypeId": "NVIDIA A40", "gpuType": {"displayName": "A40"}},
        "publicIp": "100.65.0.119",
        "portMappings": {"22": 22917, "8888": 8888},
        "lastStatusChange": "Rented by User: Fri Jul 12 2024 15:14:40 GMT-0400",
        "interruptible": False,
        "locked": False,
    },
    {
        "id": "a1b2c3d4e5f6g7",
        "name": "stopped-one",
        "desiredStatus": "EXITED",
        "costPerHr": 0.34,
        "gpuCount": 1,
        "gpu": {"displayName": "RTX 4090", "count": 1},
        "publicIp": None,
        "portMappings": None,
    },
]

LAMBDA_INSTANCES: dict[str, Any] = {
    "data": [
        {
            "id": "0920582c7ff041399e34823a0be62549",
            "name": "h100-box",
            "ip": "198.51.100.2",
            "private_ip": "10.19.60.24",
            "status": "active",
            "ssh_key_names": ["laptop"],
            "file_system_names": ["shared-fs"],
            "region": {"name": "us-east-1", "description": "Virginia, USA"},
            "instance_type": {
                "name": "gpu_1x_h100_pcie",
                "description": "1x H100 (80 GB PCIe)",
                "gpu_description": "H100 (80 GB PCIe)",
                "price_cents_per_hour": 249,
                "specs": {"vcpus": 26, "memory_gib": 200, "storage_gib": 1024, "gpus": 1},
            },
            "hostname": "192-0-2-2.cloud.lambda.ai",
            "is_reserved": False,
        }
    ]
}

LAMBDA_TYPES: dict[str, Any] = {
    "data": {
        "gpu_8x_a100": {
            "instance_type": {
                "name": "gpu_8x_a100",
                "description": "8x A100 (40 GB SXM4)",
                "gpu_description": "A100 (40 GB SXM4)",
                "price_cents_per_hour": 1032,
                "specs": {"vcpus": 124, "memory_gib": 1800, "storage_gib": 6144, "gpus": 8},
            },
            "regions_with_capacity_available": [],
        }
    }
}
