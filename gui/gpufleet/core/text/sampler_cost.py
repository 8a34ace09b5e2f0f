"""What the sampler costs a host, in words: its CPU use against its budget and the reads it
makes less often to stay within it (from hello's ``cpu_budget``). Shown in the fleet list's
host tooltip and by ``gpufleet stream``; translated like the alert catalogue."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gpufleet_sampler import protocol

from gpufleet.core.text.catalogue import QT_TRANSLATE_NOOP, translated

# The sampler's tiers as a user knows what they hold (hello's cpu_budget names them).
_TIER_NAMES = {
    "fields": QT_TRANSLATE_NOOP("Summary", "energy, throttle time and HBM temperature"),
    # The same tier on a card without a memory temperature (GeForce GDDR6X): not promised.
    "fields_no_hbm": QT_TRANSLATE_NOOP("Summary", "energy and throttle time"),
    "medium": QT_TRANSLATE_NOOP("Summary", "PCIe link, link states and error counters"),
    "slow": QT_TRANSLATE_NOOP("Summary", "ECC, row remapping and NVLink error totals"),
    "links": QT_TRANSLATE_NOOP("Summary", "per-link NVLink traffic"),
    "putil": QT_TRANSLATE_NOOP("Summary", "per-process GPU use"),
    "rates": QT_TRANSLATE_NOOP("Summary", "PCIe and NVLink throughput"),
}
_USES = QT_TRANSLATE_NOOP(
    "Summary", "The sampler uses {used} % of one CPU core here (its budget: {budget} %)."
)
_TIMING = QT_TRANSLATE_NOOP(
    "Summary",
    "The sampler is still timing its reads here against its budget ({budget} % of one CPU core).",
)
_EVERY = QT_TRANSLATE_NOOP("Summary", "{what} every {t} s")
_TO_STAY = QT_TRANSLATE_NOOP("Summary", "To stay within it, it reads {list}.")


def _num(x: Any) -> float | None:
    return float(x) if isinstance(x, (int, float)) and not isinstance(x, bool) else None


def _reports_mem_temp(raw: Mapping[str, Any]) -> bool:
    """Whether any GPU of the hello reads a memory temperature (hello lists per GPU what
    it cannot read; an old or odd hello without that list is taken to read it)."""
    gpus = raw.get("gpus")
    if not isinstance(gpus, list) or not gpus:
        return True
    for g in gpus:
        unsupported = g.get("unsupported") if isinstance(g, Mapping) else None
        if not isinstance(unsupported, Mapping) or "temp_mem_c" not in unsupported:
            return True
    return False


def sampler_cost_text(raw: Mapping[str, Any] | None) -> str:
    """The sentence for a hello's raw fields; empty where the sampler does not plan (the
    simulator, nvidia-smi) or the plan is malformed. What the reads measured where a measure
    was made, else what the plan expects; no figure while the plan is provisional."""
    plan = (raw or {}).get(protocol.CPU_BUDGET_KEY)
    if not isinstance(plan, Mapping):
        return ""
    used = _num(plan.get("measured_pct"))
    if used is None:
        used = _num(plan.get("planned_pct"))
    budget = _num(plan.get("budget_pct"))
    if used is None or budget is None:
        return ""
    if plan.get("settled") is False:
        # A hello made before the first ticks timed GPM: its plan is provisional (often over
        # the budget until throughput moves to GPM); a daemon's next hello has the real one.
        return translated("Summary", _TIMING).format(budget=f"{budget:g}")
    text = translated("Summary", _USES).format(used=f"{used:.2f}", budget=f"{budget:g}")
    tiers, needed = plan.get("tiers_s"), plan.get("needed_s")
    if not isinstance(tiers, Mapping) or not isinstance(needed, Mapping):
        return text
    slower = []
    names = dict(_TIER_NAMES)
    hbm = names.pop("fields_no_hbm")
    if not _reports_mem_temp(raw or {}):
        names["fields"] = hbm
    for key, name in names.items():
        t, n = _num(tiers.get(key)), _num(needed.get(key))
        if t is not None and n is not None and t > n * 1.0001:
            what = translated("Summary", name)
            slower.append(translated("Summary", _EVERY).format(what=what, t=f"{t:g}"))
    if slower:
        text += " " + translated("Summary", _TO_STAY).format(list=", ".join(slower))
    return text
