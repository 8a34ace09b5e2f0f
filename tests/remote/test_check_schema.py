"""One schema for the ``check`` facts (``protocol.CHECK_KEYS`` / ``CHECK_GPU_KEYS``): the three
backends that answer ``check`` (NVML through the fake pynvml, the simulator, the nvidia-smi
path on a real H200 capture) say every key of it and no other, with values of one kind per key
wherever two of them know it (a number is a number, a list a list)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from gpufleet.core.wire.nvidia_smi_xml import check_facts
from gpufleet_sampler import protocol
from gpufleet_sampler.backends.sim import SimBackend
from nvml_fake import fake_nvml

ROOT = Path(__file__).resolve().parents[2]
SMI_XML = ROOT / "tests" / "fixtures" / "nvidia-smi" / "h200-q.xml"


def _nvml() -> dict[str, Any]:
    with fake_nvml("h200x1"):
        from gpufleet_sampler.backends.nvml import NvmlBackend

        b = NvmlBackend(events=False, workers=1)
        try:
            return b.check()
        finally:
            b.close()


def _sim() -> dict[str, Any]:
    b = SimBackend(scenario="healthy-8xa100")
    try:
        return b.check()
    finally:
        b.close()


def _smi() -> dict[str, Any]:
    return check_facts(SMI_XML.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def facts() -> Iterator[dict[str, dict[str, Any]]]:
    yield {"nvml": _nvml(), "sim": _sim(), "nvidia-smi": _smi()}


def _kind(v: Any) -> str:
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, int | float):
        return "number"
    return type(v).__name__


@pytest.mark.parametrize("backend", ["nvml", "sim", "nvidia-smi"])
def test_every_backend_says_every_key_of_the_schema(
    facts: dict[str, dict[str, Any]], backend: str
) -> None:
    f = facts[backend]
    assert set(protocol.CHECK_KEYS) <= set(f), set(protocol.CHECK_KEYS) - set(f)
    assert f["gpus"] and f["gpu_count"] == len(f["gpus"])
    for g in f["gpus"]:
        assert list(g) == list(protocol.CHECK_GPU_KEYS)


# Facts the backends already disagree on the kind of (found by this test; the laptop's verdicts
# read each through its own normalisation today). Each is to be made one kind in the backends;
# the test fails on any other disagreement, and when one of these is fixed (drop it here).
KNOWN_KIND_DIFFERENCES = {
    "compute_mode": "NVML's enum number; the simulator's name ('default')",
    "ecc_mode": "a bool (NVML, simulator); nvidia-smi's 0/1",
    "mig_mode": "NVML's and nvidia-smi's 0/1; the simulator's bool",
    "persistence_mode": "NVML's and nvidia-smi's 0/1; the simulator's bool",
    "virtualization_mode": "NVML's enum number; the simulator's and nvidia-smi's names",
}


def test_a_key_has_one_kind_of_value_across_the_backends(
    facts: dict[str, dict[str, Any]],
) -> None:
    kinds: dict[str, dict[str, str]] = {}
    for backend, f in facts.items():
        for key, v in f["gpus"][0].items():
            if v is not None:
                kinds.setdefault(key, {})[backend] = _kind(v)
    mixed = {k: by for k, by in kinds.items() if len(set(by.values())) > 1}
    assert set(mixed) == set(KNOWN_KIND_DIFFERENCES), mixed


def test_a_fact_outside_the_schema_is_refused_by_name() -> None:
    with pytest.raises(ValueError, match="fan_pct"):
        protocol.check_gpu({"index": 0, "fan_pct": 30})
    assert protocol.check_gpu({"index": 0})["uuid"] is None
