"""How often a host's PCIe and NVLink throughput is read, in words, for the Interconnect
tab's plots. Where GPM does not give throughput, the sampler may read the byte counters less
often than every tick to stay within its CPU budget (hello's ``cpu_budget.throughput_s``);
each value is then the mean over that period, and the plot says so rather than look like a
curve with holes."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gpufleet_sampler import protocol

from gpufleet.core.text.catalogue import QT_TRANSLATE_NOOP, translated

_EVERY = QT_TRANSLATE_NOOP(
    "Throughput",
    "{what}: 1 value per {s} s on this host (the sampler reads the byte counters that often "
    "to stay within its CPU budget); each step is the mean over those {s} s.",
)


def throughput_period(raw: Mapping[str, Any] | None, interval: float) -> float | None:
    """Seconds between throughput values where they are sparser than the samples (hello's
    ``cpu_budget.throughput_s`` above ``interval``), else None: every sample has them."""
    plan = (raw or {}).get(protocol.CPU_BUDGET_KEY)
    if not isinstance(plan, Mapping):
        return None
    s = plan.get("throughput_s")
    if not isinstance(s, (int, float)) or isinstance(s, bool) or not s > interval * 1.0001:
        return None
    return float(s)


def throughput_note(what: str, period: float) -> str:
    """The plot's note: ``what`` ("PCIe", "NVLink") comes once every ``period`` seconds."""
    return translated("Throughput", _EVERY).format(what=what, s=f"{period:g}")
