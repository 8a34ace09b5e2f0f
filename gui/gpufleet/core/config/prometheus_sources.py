"""The ``[[prometheus]]`` tables of config.toml: host groups read from a Prometheus server,
validated where the config file is loaded (the poller lives in ``core.prometheus.source``).
"""

from __future__ import annotations

import urllib.parse
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from gpufleet.core.config.hostconfig import HostConfig


@dataclass(frozen=True)
class PromSourceConfig:
    """One ``[[prometheus]]`` table of config.toml."""

    name: str
    url: str
    auth: str = "none"  # none | bearer | basic
    user: str | None = None  # basic auth; the password is in the keyring
    interval_s: float = 5.0
    backfill_s: float = 3600.0
    timeout_s: float = 10.0
    price_per_hour: float | None = None  # for every instance, unless in `prices`
    currency: str = "USD"
    prices: Mapping[str, float] = field(default_factory=dict)  # Hostname -> price per hour

    @property
    def secret_name(self) -> str:
        return f"prometheus:{self.name}"

    def host_name(self, hostname: str) -> str:
        """The app's name of an instance: the group's name, a slash, its Hostname."""
        return f"{self.name}/{hostname}"

    def host_config(self, hostname: str) -> HostConfig:
        """A HostConfig for an instance (its price; tagged so the UI knows its source)."""
        price = self.prices.get(hostname, self.price_per_hour)
        return HostConfig(
            name=self.host_name(hostname),
            host=hostname,
            transport="local",
            backend="nvml",
            interval_s=self.interval_s,
            price_per_hour=price,
            currency=self.currency,
            tags=("prometheus", self.name),
        )


_KEYS: Final = {
    "name": str,
    "url": str,
    "auth": str,
    "user": str,
    "interval_s": float,
    "backfill_s": float,
    "timeout_s": float,
    "price_per_hour": float,
    "currency": str,
    "prices": dict,
}


def parse_sources(
    tables: Iterable[Mapping[str, Any]], where: str = "config.toml"
) -> list[PromSourceConfig]:
    """Validate ``[[prometheus]]`` tables; ValueError with one line naming the entry."""
    out: list[PromSourceConfig] = []
    names: set[str] = set()
    for i, t in enumerate(tables):
        at = f"{where}: [[prometheus]] #{i + 1}"
        if not isinstance(t, Mapping):
            raise ValueError(f"{at}: must be a table")
        kw: dict[str, Any] = {}
        for k, v in t.items():
            if k in ("token", "password", "secret"):
                raise ValueError(
                    f"{at}: `{k}` must not be stored in the config file; store it in the "
                    "keyring (`gpufleet hosts set-secret`-style: see docs/prometheus.md)"
                )
            tp = _KEYS.get(k)
            if tp is None:
                raise ValueError(f"{at}: unknown field `{k}` (known: {', '.join(sorted(_KEYS))})")
            if tp is float and isinstance(v, int) and not isinstance(v, bool):
                v = float(v)
            if not isinstance(v, tp) or isinstance(v, bool):
                raise ValueError(f"{at}: field `{k}` has the wrong type ({v!r})")
            kw[k] = v
        if not kw.get("name") or not kw.get("url"):
            raise ValueError(f"{at}: needs a `name` and a `url`")
        url = urllib.parse.urlsplit(kw["url"])
        if url.scheme not in ("http", "https") or not url.netloc:
            raise ValueError(f"{at}: `url` must be http(s)://host:port, not {kw['url']!r}")
        if kw.get("auth", "none") not in ("none", "bearer", "basic"):
            raise ValueError(f"{at}: `auth` must be none, bearer or basic")
        if kw.get("auth") == "basic" and not kw.get("user"):
            raise ValueError(f"{at}: basic auth needs a `user`")
        if kw["name"] in names:
            raise ValueError(f"{at}: duplicate name {kw['name']!r}")
        names.add(kw["name"])
        prices = kw.get("prices", {})
        if not all(isinstance(p, (int, float)) for p in prices.values()):
            raise ValueError(f"{at}: `prices` must map Hostname to a price per hour")
        kw["prices"] = {str(k): float(p) for k, p in prices.items()}
        out.append(PromSourceConfig(**kw))
    return out
