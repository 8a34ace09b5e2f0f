"""What a host's rental cost says: what it cost busy, idle and unobserved, its projection
and its budget, followed by the cost advice (worded as findings)."""

from __future__ import annotations

from typing import Any, Final

from gpufleet.core.model.findings import Finding
from gpufleet.core.text.findings import finding_sentence
from gpufleet.core.text.format import clock_time, duration, money, pct
from gpufleet.core.text.translate import QT_TRANSLATE_NOOP, fill, join_sentences

COST_LINE: Final = QT_TRANSLATE_NOOP(
    "Cost",
    "{host}: {total} over {billed} at {price}/h: busy {busy} ({busy_time}), idle {idle} "
    "({idle_time}), not observed {unknown} ({unknown_time}); effective compute {effective}.",
)
COST_LINE_NO_PRICE: Final = QT_TRANSLATE_NOOP(
    "Cost",
    "{host}: {billed} observed: busy {busy_time}, idle {idle_time}, not observed "
    "{unknown_time}; effective compute {effective}. Set a price per hour to see the cost.",
)
COST_BUDGET: Final = QT_TRANSLATE_NOOP(
    "Cost", "Budget {budget}: {budget_pct} used; at this rate it runs out at {exhausted}."
)
COST_PROJECTION: Final = QT_TRANSLATE_NOOP("Cost", "In 24 h at this rate: {projection}.")


def cost_sentence(summary: Any) -> str:
    """One or two sentences for a ``gpufleet.core.cost.rental.CostSummary``."""
    s = summary
    cur = s.currency
    values = {
        "host": s.host,
        "total": money(s.total, cur),
        "billed": duration(s.billed_s),
        "price": money(s.price_per_hour, cur),
        "busy": money(s.busy, cur),
        "idle": money(s.idle, cur),
        "unknown": money(s.unknown, cur),
        "busy_time": duration(s.busy_s),
        "idle_time": duration(s.idle_s),
        "unknown_time": duration(s.unknown_s),
        "effective": pct(s.effective_ratio),
        "budget": money(s.budget, cur),
        "budget_pct": pct(s.budget_used_frac),
        "exhausted": clock_time(s.budget_exhausted_t),
        "projection": money(s.projection_24h, cur),
    }
    parts = [
        fill("Cost", COST_LINE if s.price_per_hour is not None else COST_LINE_NO_PRICE, values)
    ]
    if s.price_per_hour is not None:
        parts.append(fill("Cost", COST_PROJECTION, values))
    if s.budget:
        parts.append(fill("Cost", COST_BUDGET, values))
    for a in s.advice:
        parts.append(finding_sentence(Finding(a.id, "info", None, a.values)))
    return join_sentences(parts)
