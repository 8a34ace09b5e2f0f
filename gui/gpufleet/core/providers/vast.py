"""vast.ai (REST; the ``vastai`` CLI is a thin client over it).

- list: ``GET /api/v1/instances/?limit=25`` → ``{"instances": [...], "next_token": …}``,
  the next page with ``after_token=<next_token>`` until no token comes back (vast-cli's
  ``_fetch_all_instances_v1`` since 2026-06-09; vast's spec answers 410 from the v0 list for
  accounts created after 2026-06-02). The v0 list (``GET /api/v0/instances/?owner=me``) is
  asked only where v1 answers 404;
- one instance: ``GET /api/v0/instances/{id}/?owner=me`` → ``{"instances": {...}}``, and
  ``{"instances": null}`` with a 200 for a destroyed one (vast-cli's own handling): gone;
- stop / resume: ``PUT /api/v0/instances/{id}/`` with ``{"state": "stopped"}`` /
  ``{"state": "running"}``; destroy: ``DELETE /api/v0/instances/{id}/``. Answers
  ``{"success": true}`` (vast's docs), or ``{"success": false, "msg": …}`` with a 200;
  anything else is confirmed by re-reading the instance;
- prices: ``dph_total`` ($/h, all-in, while running); a stopped instance pays storage,
  ``storage_total_cost`` ($/h as vast bills it: the recorded body's ``instance.diskHour``),
  else ``storage_cost`` ($/GB/month, vast's 720 h month) × ``disk_space`` (GB);
- states (``actual_status``): running and frozen bill the GPU; stopped, loading and a
  fresh (null) instance bill storage only; exited bills the GPU unless the user asked for
  stopped (``intended_status``): it still holds its GPU; unknown and offline say nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gpufleet.core.providers import parse
from gpufleet.core.providers.base import (
    Action,
    BillingState,
    Instance,
    Provider,
    ProviderError,
    drift,
    require,
)
from gpufleet.core.providers.credentials import hint
from gpufleet.core.providers.http import ApiClient, HttpSettings

DEFAULT_URL = "https://console.vast.ai"
_HOURS_PER_MONTH = 720.0  # vast bills storage by a 720 h month
_PAGE = 25  # the v1 list's largest page
_MAX_PAGES = 400  # 10,000 instances: past that the paging is taken to loop


def _billing(actual: str | None, intended: str | None) -> BillingState | None:
    if actual in ("running", "frozen", "rebooting"):
        return "running"
    if actual == "exited":
        return "storage" if intended == "stopped" else "running"
    if actual in (None, "created", "loading", "stopped", "scheduling"):
        return "storage"
    return None  # unknown, offline: the last known state holds


def _storage_per_hour(d: Mapping[str, Any]) -> float | None:
    total = parse.num(d, "storage_total_cost")
    if total is not None:
        return total
    storage, disk = parse.num(d, "storage_cost"), parse.num(d, "disk_space")
    return storage * disk / _HOURS_PER_MONTH if storage is not None and disk is not None else None


def instance_from(d: Mapping[str, Any]) -> Instance:
    require("vast.ai", "instance", d, ("id",))
    actual = parse.text(d, "actual_status")
    iid = str(parse.text(d, "id"))
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
        storage_per_hour=_storage_per_hour(d),
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
        try:
            return [instance_from(d) for d in self._pages()]
        except ProviderError as e:
            if e.kind == "api_changed" or e.status != 404:
                raise
            first = e
        try:
            doc = self.http.request(
                "GET", "/api/v0/instances/", query={"owner": "me"}, relied_on=True
            )
        except ProviderError as legacy:
            if legacy.kind == "api_changed":
                said = f"{first}; and v0: {legacy}"
                raise drift(self.label, "GET /api/v1/instances/", said) from None
            raise
        return [instance_from(d) for d in parse.records(self.label, "instances", doc, "instances")]

    def _pages(self) -> list[Mapping[str, Any]]:
        """Every instance of the v1 list, page by page."""
        out: list[Mapping[str, Any]] = []
        query = {"limit": str(_PAGE)}
        for _ in range(_MAX_PAGES):
            doc = self.http.request("GET", "/api/v1/instances/", query=query)
            out += parse.records(self.label, "GET /api/v1/instances/", doc, "instances")
            token = parse.text(doc, "next_token") if isinstance(doc, dict) else None
            if not token or token == query.get("after_token"):
                return out
            query = {"limit": str(_PAGE), "after_token": token}
        raise drift(self.label, "GET /api/v1/instances/", f"more than {_MAX_PAGES} pages")

    def get_instance(self, instance_id: str) -> Instance:
        path = f"/api/v0/instances/{instance_id}/"
        doc = self.http.request("GET", path, query={"owner": "me"})
        if isinstance(doc, dict) and "instances" in doc and doc["instances"] is None:
            # A destroyed instance: 200 {"instances": null} (vast-cli: "no longer exists").
            raise ProviderError(
                f"{self.label}: instance {instance_id} no longer exists", "not_found", 200
            )
        return instance_from(parse.record(self.label, f"GET {path}", doc, "instances"))

    def _change(self, method: str, instance_id: str, body: dict[str, str] | None) -> bool:
        doc = self.http.request(method, f"/api/v0/instances/{instance_id}/", body=body)
        if isinstance(doc, dict) and doc.get("success") is False:
            why = parse.text(doc, "msg") or parse.text(doc, "error") or "no reason given"
            raise ProviderError(f"{self.label}: instance {instance_id}: refused: {why}", "failed")
        if (
            isinstance(doc, dict)
            and (doc.get("error") or doc.get("msg"))
            and not doc.get("success")
        ):
            why = parse.text(doc, "msg") or parse.text(doc, "error") or "?"
            raise ProviderError(f"{self.label}: instance {instance_id}: refused: {why}", "failed")
        # {"success": true} is vast's documented word that it was done.
        return isinstance(doc, dict) and doc.get("success") is True

    def stop(self, instance_id: str) -> bool:
        return self._change("PUT", instance_id, {"state": "stopped"})

    def resume(self, instance_id: str) -> bool:
        return self._change("PUT", instance_id, {"state": "running"})

    def terminate(self, instance_id: str) -> bool:
        return self._change("DELETE", instance_id, None)
