"""RunPod (REST v1 at ``rest.runpod.io``).

- list: ``GET /v1/pods`` → a JSON array of pods; one pod: ``GET /v1/pods/{id}``;
- stop / resume: ``POST /v1/pods/{id}/stop`` / ``POST /v1/pods/{id}/start``; terminate:
  ``DELETE /v1/pods/{id}``;
- fields: ``desiredStatus`` (RUNNING, EXITED = stopped, TERMINATED), ``costPerHr`` (a
  string such as ``"0.74"`` or a number, $/h), ``publicIp`` + ``portMappings["22"]`` for
  direct TCP SSH as root, ``gpu.displayName`` / ``machine.gpuType.displayName``,
  ``gpuCount``. A stopped pod keeps paying for its volume disk.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gpufleet.core.providers import parse
from gpufleet.core.providers.base import Action, BillingState, Instance, Provider
from gpufleet.core.providers.credentials import hint
from gpufleet.core.providers.http import ApiClient, HttpSettings

DEFAULT_URL = "https://rest.runpod.io"

_BILLING: dict[str, BillingState] = {
    "RUNNING": "running",
    "EXITED": "storage",
    "TERMINATED": "ended",
}


def instance_from(d: Mapping[str, Any]) -> Instance:
    status = parse.text(d, "desiredStatus") or "UNKNOWN"
    gpu = parse.table(d, "gpu")
    gpu_type = parse.table(parse.table(d, "machine"), "gpuType")
    ports = parse.table(d, "portMappings")
    ssh_port = parse.integer(ports, "22")
    public_ip = parse.text(d, "publicIp")
    pid = parse.text(d, "id") or "?"
    return Instance(
        provider="runpod",
        id=pid,
        name=parse.text(d, "name") or f"runpod-{pid}",
        state=status,
        billing=_BILLING.get(status),
        ssh_host=public_ip if ssh_port is not None else None,
        ssh_port=ssh_port,
        ssh_user="root",
        gpu_name=parse.text(gpu, "displayName") or parse.text(gpu_type, "displayName"),
        gpu_count=parse.integer(d, "gpuCount") or parse.integer(gpu, "count"),
        price_per_hour=parse.num(d, "costPerHr"),
        currency="USD",
    )


class RunPod(Provider):
    name = "runpod"
    label = "RunPod"
    actions: frozenset[Action] = frozenset({"stop", "resume", "terminate"})

    def __init__(
        self, api_key: str, base_url: str | None = None, settings: HttpSettings | None = None
    ) -> None:
        self.http = ApiClient(
            self.label, base_url or DEFAULT_URL, api_key, hint("runpod"), settings
        )

    def list_instances(self) -> list[Instance]:
        doc = self.http.request("GET", "/v1/pods")
        return [instance_from(d) for d in parse.records(self.label, "pods", doc, None)]

    def get_instance(self, instance_id: str) -> Instance:
        doc = self.http.request("GET", f"/v1/pods/{instance_id}")
        return instance_from(parse.record(self.label, f"pod {instance_id}", doc, None))

    def stop(self, instance_id: str) -> None:
        self.http.request("POST", f"/v1/pods/{instance_id}/stop")

    def resume(self, instance_id: str) -> None:
        self.http.request("POST", f"/v1/pods/{instance_id}/start")

    def terminate(self, instance_id: str) -> None:
        self.http.request("DELETE", f"/v1/pods/{instance_id}")
