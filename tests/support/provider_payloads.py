"""Provider answers in the shapes the real APIs give (checked against the recorded bodies:
vast's v1 list page with ``next_token`` and its ``storage_total_cost``, RunPod's REST v2 pod
with ``status``, ``cost``, ``gpu.{id,count}``, ``ssh.direct`` and ``runtime.ports``, Lambda
with and without ``specs.gpus``); values are ours. RunPod's cost is sent as a string in one
pod and a number in the other: its own docs give both."""

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
            "storage_total_cost": 0.15 * 73 / 720,
            "ports": [8080, 8081],
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
    ],
    "instances_found": 2,
    "next_token": None,
}

RUNPOD_PODS: list[dict[str, Any]] = [
    {
        "id": "xedezhzb9la3ye",
        "name": "llm-ft",
        "status": "RUNNING",
        "actions": ["stop", "restart", "terminate"],
        "cost": "0.74",
        "dataCenterId": "EU-RO-1",
        "gpu": {"count": 1, "id": "NVIDIA A40"},
        "locked": False,
        "runtime": {
            "ports": [
                {"ip": "100.65.0.119", "private": 22, "public": 22917, "type": "tcp"},
                {"ip": "100.65.0.119", "private": 8888, "public": 60821, "type": "http"},
            ],
            "uptime": 300,
        },
        "ssh": {
            "direct": {
                "command": "ssh root@100.65.0.119 -p 22917",
                "host": "100.65.0.119",
                "port": 22917,
                "username": "root",
            },
            "proxy": {"host": "ssh.runpod.io", "port": 22, "username": "xedezhzb9la3ye-64411f"},
        },
    },
    {
        "id": "a1b2c3d4e5f6g7",
        "name": "stopped-one",
        "status": "EXITED",
        "cost": 0.34,
        "gpu": {"count": 1, "id": "NVIDIA GeForce RTX 4090"},
        "runtime": None,
        "ssh": {"direct": None, "proxy": None},
    },
]

# GraphQL's answer for the GPU's display name (the field the recorded query selected).
RUNPOD_GRAPHQL: dict[str, Any] = {
    "data": {
        "myself": {
            "pods": [
                {"id": "xedezhzb9la3ye", "machine": {"gpuDisplayName": "A40"}},
                {"id": "a1b2c3d4e5f6g7", "machine": {"gpuDisplayName": "RTX 4090"}},
            ]
        }
    }
}

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
