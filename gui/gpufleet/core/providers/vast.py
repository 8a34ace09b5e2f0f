"""vast.ai (REST ``/api/v0``; the ``vastai`` CLI is a thin client over it).

- list: ``GET /api/v0/instances/?owner=me`` → ``{"instances": [...]}``; one instance:
  ``GET /api/v0/instances/{id}/`` → ``{"instances": {...}}``;
- stop / resume: ``PUT /api/v0/instances/{id}/`` with ``{"state": "stopped"}`` /
  ``{"state": "running"}``; destroy: ``DELETE /api/v0/instances/{id}/``. Answers
  ``{"success": true}``, or ``{"success": false, "msg": …}`` with a 200;
- prices: ``dph_total`` ($/h, all-in, while running); a stopped instance pays storage:
  ``storage_cost`` ($/GB/month) × ``disk_space`` (GB);
- states (``actual_status``): running and frozen bill the GPU; stopped, loading and a
  fresh (null) instance bill storage only; exited bills the GPU unless the user asked for
  stopped (``intended_status``): it still holds its GPU; unknown and offline say nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gpufleet.core.providers import parse
from gpufleet.core.providers.base import Action, BillingState, Instance, Provider, ProviderError
from gpufleet.core.providers.credentials import hint
from gpufleet.core.providers.http import ApiClient, HttpSettings

DEFAULT_URL = "https://console.vast.ai"
_HOURS_PER_MONTH = 730.0


def _billing(actual: str | None, intended: str | None) -> BillingState | None:
    if actual in ("running", "frozen", "rebooting"):
        return "running"
    if actual == "exited":
        return "storage" if intended == "stopped" else "running"
    if actual in (None, "created", "loading", "stopped", "scheduling"):
        return "storage"
    return None  # unknown, offline: the last known state holds


def instance_from(d: Mapping[str, Any]) -> Instance:
    actual = parse.text(d, "actual_status")
    storage = parse.num(d, "storage_cost")
    disk = parse.num(d, "disk_space")
    iid = parse.text(d, "id") or "?"
    return Instance(
        provider="vast",
        id=iid,
        name=parse.text(d, "label") or f"vast-{iid}",
        state=actual or "created",
        billing=_billing(actual, parse.text(d, "intended_status")),
        ssh_host=parse.text(d, "ssh_host") or parse.text(d, "public_ipaddr"),
        ssh_port=parse.integer(d, "ssh_port"),
        ssh_user="root",
        gpu_name=parse.text(d, "gpu_name"),
        gpu_count=parse.integer(d, "num_gpus"),
        price_per_hour=parse.num(d, "dph_total"),
        currency="USD",
        storage_per_hour=storage * disk / _HOURS_PER_MONTH
        if storage is not None and disk is not None
        else None,
    )


class Vast(Provider):
    name = "vast"
    label = "vast.ai"
    actions: frozenset[Action] = frozenset({"stop", "resume", "terminate"})

    def __init__(
        self, api_key: str, base_url: str | None = None, settings: HttpSettings | None = None
    ) -> None:
        self.http = ApiClient(self.label, base_url or DEFAULT_URL, api_key, hint("vast"), settings)

    def list_instances(self) -> list[Instance]:
        doc = self.http.request("GET", "/api/v0/instances/", query={"owner": "me"})
        return [instance_from(d) for d in parse.records(self.label, "instances", doc, "instances")]

    def get_instance(self, instance_id: str) -> Instance:
        doc = self.http.request("GET", f"/api/v0/instances/{instance_id}/")
        return instance_from(parse.record(self.label, f"instance {instance_id}", doc, "instances"))

    def _change(self, method: str, instance_id: str, body: dict[str, str] | None) -> None:
        doc = self.http.request(method, f"/api/v0/instances/{instance_id}/", body=body)
        if isinstance(doc, dict) and doc.get("success") is False:
            why = parse.text(doc, "msg") or parse.text(doc, "error") or "no reason given"
            raise ProviderError(f"{self.label}: instance {instance_id}: refused: {why}", "failed")

    def stop(self, instance_id: str) -> None:
        self._change("PUT", instance_id, {"state": "stopped"})

    def resume(self, instance_id: str) -> None:
        self._change("PUT", instance_id, {"state": "running"})

    def terminate(self, instance_id: str) -> None:
        self._change("DELETE", instance_id, None)
