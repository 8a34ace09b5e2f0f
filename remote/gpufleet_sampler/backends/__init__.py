"""The sampler's backends by name: ``nvml`` reads the real driver, ``sim`` simulates GPUs
for the demo and the tests. Both implement ``backends.base.Backend``.

Python 3.8, stdlib only (pynvml for ``nvml``).
"""

from typing import Optional

from gpufleet_sampler.backends.base import Backend

NAMES = ("nvml", "sim")


def make_backend(
    name: str,
    scenario: Optional[str] = None,
    seed: int = 0,
    interval: float = 1.0,
    events: bool = True,
    cpu_budget_pct: Optional[float] = None,
) -> Backend:
    """Build a backend by name. ``events=False``: no Xid event thread (a one-shot command
    that exits at once would only wait for it to stop). ``cpu_budget_pct``: the nvml
    backend's CPU budget (None: its default)."""
    # Each backend is imported only when chosen: pynvml is an optional dependency that only
    # the real driver backend needs (the demo runs where there is no NVIDIA library), and a
    # sampler on a real GPU does not carry the simulator's code.
    if name == "nvml":
        from gpufleet_sampler.backends.nvml import NvmlBackend

        return NvmlBackend(interval=interval, events=events, cpu_budget_pct=cpu_budget_pct)
    if name == "sim":
        from gpufleet_sampler.backends.sim import SimBackend

        return SimBackend(scenario=scenario or "healthy-8xa100", seed=seed, interval=interval)
    raise ValueError("unknown backend {!r} (expected nvml or sim)".format(name))
