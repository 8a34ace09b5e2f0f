"""RunPod: REST v2 at ``api.runpod.io/v2``, GraphQL for the GPU's display name, REST v1 only
as a fallback.

RunPod retired REST v1 (``rest.runpod.io/v1``) on 2026-11-15: it answers 410 Gone (RunPod's
API reference and migration guide). What v2 offers, as a recorded pod shows it:

- one pod: ``GET /v2/pods/{id}`` → ``status`` (RUNNING, EXITED, TERMINATED; PROVISIONING,
  STARTING, ERROR while it starts), ``cost`` ($/h, a number; read as string-or-number),
  ``gpu.{id,count}`` (``id`` is the type, "NVIDIA RTX PRO 4500 Blackwell"),
  ``ssh.direct.{host,port,username}`` (null until the pod is reachable) and
  ``runtime.ports[]`` (``ip``, ``private``, ``public``, ``type``);
- the list: ``GET /v2/pods``. No recorded answer was found; it is read as v1's was (a bare
  array of pods), and a ``pods``/``data`` envelope is taken too;
- lifecycle: ``POST /v2/pods/{id}/action`` with ``{"action": "stop"|"start"|"terminate"}``
  (the migration guide consolidates the lifecycle there; the body's shape rests on v2's own
  recorded 422: "$.action: value must be one of 'start', 'stop', 'restart', 'terminate'").
  No recorded answer either: a pod in the answer says whether it stopped, an ``error`` says
  it did not, anything else is confirmed by re-reading the pod (``Provider.act_confirmed``);
- the GPU's name as RunPod shows it ("RTX PRO 4500"): GraphQL ``machine.gpuDisplayName``
  (``POST /graphql``, the recorded query's field); when GraphQL fails the type from v2 is
  shown instead, the list is not lost.

Direct TCP SSH only: RunPod's SSH proxy gives a terminal, not the exec channel the sampler
needs, so a pod without ``ssh.direct`` (or a public port 22 in ``runtime.ports``) has no SSH
endpoint yet. A stopped pod keeps paying for its volume disk.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from gpufleet.core.providers import parse
from gpufleet.core.providers.base import (
    LEADS_TO,
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

log = logging.getLogger(__name__)

DEFAULT_URL = "https://api.runpod.io"
LEGACY_URL = "https://rest.runpod.io"  # REST v1: 410 Gone since 2026-11-15

_BILLING: dict[str, BillingState] = {
    "RUNNING": "running",
    # Starting: the GPU is held for the pod, so it is billed (the safe side for a budget).
    "PROVISIONING": "running",
    "STARTING": "running",
    "EXITED": "storage",
    "STOPPED": "storage",
    "TERMINATED": "ended",
}
_V2_ACTION: dict[Action, str] = {"stop": "stop", "resume": "start", "terminate": "terminate"}
_POD_QUERY = (
    "query Pod($podId: String!) { pod(input: {podId: $podId}) { id machine { gpuDisplayName } } }"
)
_PODS_QUERY = "query Pods { myself { pods { id machine { gpuDisplayName } } } }"

T = TypeVar("T")


def _direct_ssh(d: Mapping[str, Any]) -> tuple[str | None, int | None, str | None]:
    """(host, port, user) for direct TCP SSH: ``ssh.direct``, else the public mapping of
    port 22 in ``runtime.ports``."""
    direct = parse.table(parse.table(d, "ssh"), "direct")
    host, port = parse.text(direct, "host"), parse.integer(direct, "port")
    if host and port:
        return host, port, parse.text(direct, "username") or "root"
    ports = parse.table(d, "runtime").get("ports")
    for p in ports if isinstance(ports, list) else []:
        if isinstance(p, dict) and parse.integer(p, "private") == 22 and p.get("type") == "tcp":
            ip, public = parse.text(p, "ip"), parse.integer(p, "public")
            if ip and public:
                return ip, public, "root"
    return None, None, None


def instance_from_v2(d: Mapping[str, Any], gpu_names: Mapping[str, str] | None = None) -> Instance:
    require("RunPod", "GET /v2/pods", d, ("id", "status"))
    pid = str(parse.text(d, "id"))
    status = parse.text(d, "status") or "UNKNOWN"
    gpu = parse.table(d, "gpu")
    host, port, user = _direct_ssh(d)
    name = (gpu_names or {}).get(pid) or parse.text(gpu, "displayName") or parse.text(gpu, "id")
    return Instance(
        provider="runpod",
        id=pid,
        name=parse.text(d, "name") or f"runpod-{pid}",
        state=status,
        billing=_BILLING.get(status),
        ssh_host=host,
        ssh_port=port,
        ssh_user=user,
        gpu_name=name,
        gpu_count=parse.integer(gpu, "count") or parse.integer(d, "gpuCount"),
        price_per_hour=parse.num(d, "cost"),
        currency="USD",
    )


def instance_from(d: Mapping[str, Any]) -> Instance:
    """A REST v1 pod (the fallback): ``desiredStatus``, ``costPerHr`` (a number in the
    recorded body, a string in v1's own example), ``publicIp`` + ``portMappings["22"]``; the
    recorded body has ``machine: {}`` and no ``gpu`` object, so the GPU may be unknown."""
    require("RunPod", "GET /v1/pods", d, ("id", "desiredStatus"))
    status = parse.text(d, "desiredStatus") or "UNKNOWN"
    gpu = parse.table(d, "gpu")
    machine = parse.table(d, "machine")
    ssh_port = parse.integer(parse.table(d, "portMappings"), "22")
    public_ip = parse.text(d, "publicIp")
    pid = str(parse.text(d, "id"))
    return Instance(
        provider="runpod",
        id=pid,
        name=parse.text(d, "name") or f"runpod-{pid}",
        state=status,
        billing=_BILLING.get(status),
        ssh_host=public_ip if ssh_port is not None else None,
        ssh_port=ssh_port,
        ssh_user="root",
        gpu_name=parse.text(gpu, "displayName")
        or parse.text(machine, "gpuDisplayName")
        or parse.text(parse.table(machine, "gpuType"), "displayName"),
        gpu_count=parse.integer(d, "gpuCount") or parse.integer(gpu, "count"),
        price_per_hour=parse.num(d, "costPerHr"),
        currency="USD",
    )


def _pod_list(doc: Any) -> Any:
    if isinstance(doc, dict):
        for key in ("pods", "data"):
            if isinstance(doc.get(key), list):
                return doc[key]
    return doc


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
        # An overridden base URL (a proxy, a test server) serves both generations.
        self.legacy = (
            self.http
            if base_url
            else ApiClient(self.label, LEGACY_URL, api_key, hint("runpod"), settings)
        )

    def _v2_else_v1(self, v2: Callable[[], T], v1: Callable[[], T], v2_what: str) -> T:
        """v2; v1 only where v2 answers 404. A v1 that is gone too (410) after a v2 404 on
        an endpoint we rely on is drift naming both."""
        try:
            return v2()
        except ProviderError as e:
            if e.status != 404:
                raise
            first = e
        try:
            return v1()
        except ProviderError as e:
            if e.kind == "api_changed":
                raise drift(self.label, v2_what, f"HTTP 404; and REST v1: {e}", 404) from None
            if e.kind == "not_found":
                raise first from None
            raise

    def _gpu_names(self, query: str, variables: Mapping[str, str] | None = None) -> dict[str, str]:
        """Pod id → GPU display name from GraphQL; {} (logged) when GraphQL fails."""
        body: dict[str, Any] = {"query": query}
        if variables:
            body["variables"] = dict(variables)
        try:
            doc = self.http.request("POST", "/graphql", body=body)
        except ProviderError as e:
            log.info("RunPod GraphQL (GPU names) failed, showing the GPU type instead: %s", e)
            return {}
        data = parse.table(doc, "data") if isinstance(doc, dict) else {}
        pods: Any = parse.table(data, "myself").get("pods") or [data.get("pod")]
        out: dict[str, str] = {}
        for p in pods if isinstance(pods, list) else []:
            if isinstance(p, dict):
                pid, name = (
                    parse.text(p, "id"),
                    parse.text(parse.table(p, "machine"), "gpuDisplayName"),
                )
                if pid and name:
                    out[pid] = name
        return out

    def list_instances(self) -> list[Instance]:
        def v2() -> list[Instance]:
            doc = self.http.request("GET", "/v2/pods")
            pods = parse.records(self.label, "GET /v2/pods", _pod_list(doc), None)
            names = self._gpu_names(_PODS_QUERY) if pods else {}
            return [instance_from_v2(d, names) for d in pods]

        def v1() -> list[Instance]:
            doc = self.legacy.request("GET", "/v1/pods", relied_on=True)
            return [instance_from(d) for d in parse.records(self.label, "GET /v1/pods", doc, None)]

        return self._v2_else_v1(v2, v1, "GET /v2/pods")

    def get_instance(self, instance_id: str) -> Instance:
        def v2() -> Instance:
            doc = self.http.request("GET", f"/v2/pods/{instance_id}")
            pod = parse.record(self.label, f"GET /v2/pods/{instance_id}", doc, None)
            return instance_from_v2(pod, self._gpu_names(_POD_QUERY, {"podId": instance_id}))

        def v1() -> Instance:
            doc = self.legacy.request("GET", f"/v1/pods/{instance_id}")
            return instance_from(parse.record(self.label, f"pod {instance_id}", doc, None))

        return self._v2_else_v1(v2, v1, f"GET /v2/pods/{instance_id}")

    def _act_v2(self, action: Action, instance_id: str) -> bool:
        what = f"{action} pod {instance_id}"

        def v2() -> Any:
            return self.http.request(
                "POST", f"/v2/pods/{instance_id}/action", body={"action": _V2_ACTION[action]}
            )

        def v1() -> Any:
            if action == "terminate":
                return self.legacy.request("DELETE", f"/v1/pods/{instance_id}")
            verb = "stop" if action == "stop" else "start"
            return self.legacy.request("POST", f"/v1/pods/{instance_id}/{verb}")

        doc = self._v2_else_v1(v2, v1, f"POST /v2/pods/{instance_id}/action")
        if isinstance(doc, dict) and doc.get("error"):
            # A 200 with an error ("pod is locked; not stopped"): it did not happen.
            why = parse.text(doc, "error") or "an error without text"
            raise ProviderError(f"{self.label}: {what}: refused: {why}", "failed", 200)
        status = (
            parse.text(doc, "status") or parse.text(doc, "desiredStatus")
            if isinstance(doc, dict)
            else None
        )
        if status is None:
            return False  # the answer says nothing: the pod is re-read
        return _BILLING.get(status) in LEADS_TO[action]

    def stop(self, instance_id: str) -> bool:
        return self._act_v2("stop", instance_id)

    def resume(self, instance_id: str) -> bool:
        return self._act_v2("resume", instance_id)

    def terminate(self, instance_id: str) -> bool:
        return self._act_v2("terminate", instance_id)
