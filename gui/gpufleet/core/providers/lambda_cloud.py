"""Lambda Cloud (API v1 at ``cloud.lambda.ai``).

- list: ``GET /api/v1/instances`` → ``{"data": [...]}``; one: ``GET /api/v1/instances/{id}``
  → ``{"data": {...}}``; prices: ``instance_type.price_cents_per_hour`` in the instance,
  else from ``GET /api/v1/instance-types`` → ``{"data": {NAME: {"instance_type": {…}}}}``;
- terminate: ``POST /api/v1/instance-operations/terminate`` with ``{"instance_ids": [id]}``
  → ``{"data": {"terminated_instances": [...]}}``. There is no stop: terminate only
  (persistent filesystems survive it), so an automatic action must be an explicit opt-in;
- states: active, booting, unhealthy, terminating bill; terminated does not. SSH is to
  ``ip`` as ``ubuntu``. Errors: ``{"error": {"code", "message", "suggestion"}}``, read by
  code (``global/account-inactive`` is not a refused key: see ``http``);
- the GPU: ``gpu_description`` and ``specs.gpus`` where the API gives them; the older
  documented body has only ``description`` ("1x RTX A100 (24 GB)"), whose leading count is
  the GPU count and is not part of the name.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from gpufleet.core.providers import parse
from gpufleet.core.providers.base import Action, Instance, Provider, ProviderError, require
from gpufleet.core.providers.credentials import hint
from gpufleet.core.providers.http import ApiClient, HttpSettings

DEFAULT_URL = "https://cloud.lambda.ai"
_COUNT_PREFIX = re.compile(r"^\s*(\d+)\s*x\s+(.+)$")


def _gpu(itype: Mapping[str, Any]) -> tuple[str | None, int | None]:
    """(name, count): ``gpu_description`` + ``specs.gpus``, else "Nx NAME" of ``description``."""
    count = parse.integer(parse.table(itype, "specs"), "gpus")
    name = parse.text(itype, "gpu_description")
    desc = parse.text(itype, "description")
    m = _COUNT_PREFIX.match(name or desc or "")
    if m:
        name = m.group(2).strip()
        count = count if count is not None else int(m.group(1))
    return name or desc, count


def instance_from(d: Mapping[str, Any], prices: Mapping[str, float] | None = None) -> Instance:
    status = parse.text(d, "status") or "unknown"
    itype = parse.table(d, "instance_type")
    type_name = parse.text(itype, "name")
    cents = parse.num(itype, "price_cents_per_hour")
    price = cents / 100.0 if cents is not None else None
    if price is None and prices and type_name is not None and type_name in prices:
        price = prices[type_name]
    gpu_name, gpu_count = _gpu(itype)
    require("Lambda", "instance", d, ("id", "status"))
    iid = str(parse.text(d, "id"))
    return Instance(
        provider="lambda",
        id=iid,
        name=parse.text(d, "name") or f"lambda-{iid[:8]}",
        state=status,
        billing="ended" if status == "terminated" else "running",
        ssh_host=parse.text(d, "ip"),
        ssh_port=22 if parse.text(d, "ip") else None,
        ssh_user="ubuntu",
        gpu_name=gpu_name,
        gpu_count=gpu_count,
        price_per_hour=price,
        currency="USD",
    )


class LambdaCloud(Provider):
    name = "lambda"
    label = "Lambda"
    actions: frozenset[Action] = frozenset({"terminate"})

    def __init__(
        self, api_key: str, base_url: str | None = None, settings: HttpSettings | None = None
    ) -> None:
        self.http = ApiClient(
            self.label, base_url or DEFAULT_URL, api_key, hint("lambda"), settings
        )

    def _prices(self) -> dict[str, float]:
        doc = self.http.request("GET", "/api/v1/instance-types", relied_on=True)
        data = doc.get("data") if isinstance(doc, dict) else None
        out: dict[str, float] = {}
        if isinstance(data, dict):
            for name, entry in data.items():
                it = parse.table(entry, "instance_type") if isinstance(entry, dict) else {}
                cents = parse.num(it, "price_cents_per_hour")
                if cents is not None:
                    out[str(name)] = cents / 100.0
        return out

    def _with_prices(self, items: list[Mapping[str, Any]]) -> list[Instance]:
        missing = any(
            parse.num(parse.table(d, "instance_type"), "price_cents_per_hour") is None
            for d in items
        )
        prices = self._prices() if missing else None
        return [instance_from(d, prices) for d in items]

    def list_instances(self) -> list[Instance]:
        doc = self.http.request("GET", "/api/v1/instances", relied_on=True)
        return self._with_prices(parse.records(self.label, "instances", doc, "data"))

    def get_instance(self, instance_id: str) -> Instance:
        doc = self.http.request("GET", f"/api/v1/instances/{instance_id}")
        return self._with_prices([parse.record(self.label, instance_id, doc, "data")])[0]

    def terminate(self, instance_id: str) -> bool:
        doc = self.http.request(
            "POST",
            "/api/v1/instance-operations/terminate",
            body={"instance_ids": [instance_id]},
            relied_on=True,
        )
        data = parse.table(doc, "data") if isinstance(doc, dict) else {}
        done = data.get("terminated_instances")
        # Done only when the answer lists the instance (its own "status" there may still say
        # active: Lambda's documented example does); an answer without the list is no answer.
        if isinstance(done, list) and any(
            isinstance(x, dict) and x.get("id") == instance_id for x in done
        ):
            return True
        said = (
            "not in `terminated_instances`"
            if isinstance(done, list)
            else "no `terminated_instances`"
        )
        raise ProviderError(
            f"{self.label}: instance {instance_id} was not terminated ({said} in the answer)",
            "failed",
        )
