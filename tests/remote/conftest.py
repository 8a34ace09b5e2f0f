"""Fixtures for the sampler's tests."""

from __future__ import annotations

import pytest

BUDGET_ENV = "GPUFLEET_CPU_BUDGET_PCT"


@pytest.fixture
def generous_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests that compare exact values: the NVML backend plans its tiers from call times it
    measures at start, and the fake pynvml's own Python (not NVML's cost) measured on a loaded
    machine could stretch a tier and change which source a value comes from. A budget no
    timing reaches keeps every tier at the period it is needed at."""
    monkeypatch.setenv(BUDGET_ENV, "100")
