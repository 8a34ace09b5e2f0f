"""Fleet totals per currency: never added across currencies.

``fleet_totals(summaries)`` sums the hosts' costs per currency (one ``CurrencyTotal`` per
currency present). Where the user has set exchange rates (``[settings] exchange_rates =
{ EUR = 1.08 }``: what one unit of each currency is worth in ``exchange_base``, USD unless
set), ``converted`` gives one total in the base currency, labelled as converted at the
user's rates; a currency without a rate is left out of it and named in ``missing``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from gpufleet.core.cost.rental import CostSummary


@dataclass
class CurrencyTotal:
    currency: str
    hosts: int = 0
    total: float = 0.0
    idle: float = 0.0
    projection_24h: float = 0.0
    rate_per_h: float = 0.0  # what the fleet costs per hour now, in its billing states


@dataclass(frozen=True)
class Converted:
    currency: str
    total: float
    projection_24h: float
    rates: Mapping[str, float]
    missing: tuple[str, ...] = ()  # currencies present without a rate: not included

    @property
    def label(self) -> str:
        used = ", ".join(f"1 {c} = {r:g} {self.currency}" for c, r in sorted(self.rates.items()))
        return f"converted at your rates ({used})" if used else "converted"


@dataclass(frozen=True)
class FleetTotals:
    by_currency: dict[str, CurrencyTotal] = field(default_factory=dict)
    converted: Converted | None = None

    @property
    def single(self) -> CurrencyTotal | None:
        """The one total when every priced host has the same currency."""
        return next(iter(self.by_currency.values())) if len(self.by_currency) == 1 else None


def parse_rates(settings: Mapping[str, Any]) -> tuple[str, dict[str, float]]:
    """(base currency, rates) from the settings; ValueError with a clear message."""
    base = settings.get("exchange_base", "USD")
    if not isinstance(base, str) or not base.strip():
        raise ValueError('settings: `exchange_base` must be a currency code such as "USD"')
    raw = settings.get("exchange_rates", {})
    if not isinstance(raw, dict):
        raise ValueError("settings: `exchange_rates` must be a table such as { EUR = 1.08 }")
    rates: dict[str, float] = {}
    for cur, r in raw.items():
        if isinstance(r, bool) or not isinstance(r, int | float) or not r > 0:
            raise ValueError(
                f"settings: exchange_rates.{cur} must be a positive number ({base} per {cur}), "
                f"not {r!r}"
            )
        rates[str(cur).upper()] = float(r)
    return base.upper(), rates


def fleet_totals(
    summaries: Iterable[CostSummary],
    rates: Mapping[str, float] | None = None,
    base: str = "USD",
) -> FleetTotals:
    by: dict[str, CurrencyTotal] = {}
    for s in summaries:
        if s.total is None:
            continue  # no price: nothing to add
        ct = by.setdefault(s.currency, CurrencyTotal(s.currency))
        ct.hosts += 1
        ct.total += s.total
        ct.idle += s.idle or 0.0
        ct.projection_24h += s.projection_24h or 0.0
        ct.rate_per_h += s.rate_per_h or 0.0
    converted = None
    if rates and len(by) > 1:
        table = {**{c: r for c, r in rates.items()}, base: 1.0}
        used = {c: table[c] for c in by if c in table and c != base}
        missing = tuple(sorted(c for c in by if c not in table))
        converted = Converted(
            base,
            sum(ct.total * table[c] for c, ct in by.items() if c in table),
            sum(ct.projection_24h * table[c] for c, ct in by.items() if c in table),
            used,
            missing,
        )
    return FleetTotals(dict(sorted(by.items())), converted)
