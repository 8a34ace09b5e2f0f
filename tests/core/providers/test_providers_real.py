"""The provider adapters against the world as it is: every recorded or documented provider
body under ``../shared/real/providers/`` served by a local server at the path the adapter
calls, with 410 Gone on the retired endpoints (RunPod's REST v1, vast's v0 list), and the
values a person reads in each capture asserted. Skipped, with the reason, where the
captures are absent (a user's clone)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from gpufleet.core.providers.base import ProviderError
from gpufleet.core.providers.http import HttpSettings
from gpufleet.core.providers.lambda_cloud import LambdaCloud
from gpufleet.core.providers.runpod import RunPod
from gpufleet.core.providers.vast import Vast

from tests.support import paths
from tests.support.provider_server import RETIRED, ProviderServer, Reply, serve

REAL = paths.REAL / "providers"
KEY = "sk-test-real-0123456789"
FAST = HttpSettings(connect_timeout_s=2.0, read_timeout_s=2.0, retries=1, backoff_s=0.05)

pytestmark = pytest.mark.skipif(
    not REAL.is_dir(), reason=f"the real provider captures are not here ({REAL})"
)


def capture(provider: str, name: str) -> Any:
    return json.loads((REAL / provider / name).read_text(encoding="utf-8"))


@pytest.fixture
def server() -> Iterator[ProviderServer]:
    yield from serve(RETIRED)


# -- RunPod: the recorded v2 pod, GraphQL's name for its GPU, v1 gone ----------------------

POD = "5xpma5eg46tqjq"


def _graphql_of(pod: Any) -> dict[str, Any]:
    """GraphQL's answer around the recorded pod object (the query's own envelope)."""
    return {"data": {"pod": pod, "myself": {"pods": [pod]}}}


def test_runpod_v2_recorded_pod_reads_as_the_capture_says(server: ProviderServer) -> None:
    v2 = capture("runpod", "image-toolbox__v2-pod-running.json")
    server.route("GET", f"/v2/pods/{POD}", Reply(200, v2))
    server.route("GET", "/v2/pods", Reply(200, [v2]))
    server.route(
        "POST",
        "/graphql",
        Reply(200, _graphql_of(capture("runpod", "image-toolbox__graphql-pod.json"))),
    )
    r = RunPod(KEY, server.url, FAST)
    for inst in (r.get_instance(POD), r.list_instances()[0]):
        assert (inst.id, inst.name, inst.state, inst.billing) == (
            POD,
            "imgtbx-v2-probe",
            "RUNNING",
            "running",
        )
        assert inst.ssh_command == "ssh -p 35558 root@213.173.104.74"
        assert inst.price_per_hour == 0.72
        assert inst.gpu_label == "1x RTX PRO 4500"  # GraphQL's gpuDisplayName
    assert not [c for c in server.seen if c.path.startswith("/v1/")]


def test_runpod_v2_pod_not_ready_has_no_ssh_yet(server: ProviderServer) -> None:
    server.route(
        "GET",
        f"/v2/pods/{POD}",
        Reply(200, capture("runpod", "image-toolbox__v2-pod-not-ready.json")),
    )
    inst = RunPod(KEY, server.url, FAST).get_instance(POD)
    # RUNNING, but runtime and ssh.direct are null: no endpoint (the proxy has no exec).
    assert (inst.state, inst.ssh_command, inst.price_per_hour) == ("RUNNING", None, 0.72)
    assert inst.gpu_name == "NVIDIA RTX PRO 4500 Blackwell"  # no GraphQL here: v2's type


def test_runpod_v1_body_is_read_only_as_a_fallback(server: ProviderServer) -> None:
    # v2 answers 404 (not 410): the old endpoint is tried, and its recorded body read.
    v1 = capture("runpod", "image-toolbox__v1-pod-running.json")
    server.route("GET", "/v1/pods", Reply(200, [v1]))
    (inst,) = RunPod(KEY, server.url, FAST).list_instances()
    assert [c.path for c in server.seen] == ["/v2/pods", "/v1/pods"]
    assert inst.ssh_command == "ssh -p 35558 root@213.173.104.74"
    assert (inst.price_per_hour, inst.billing) == (0.72, "running")  # costPerHr, a number
    assert inst.gpu_label is None  # machine is {} and there is no gpu object: unknown


def test_runpod_v2_errors_say_what_runpod_said(server: ProviderServer) -> None:
    body = capture("runpod", "image-toolbox__v2-error-422.json")
    server.route("POST", f"/v2/pods/{POD}/action", Reply(422, body))
    with pytest.raises(ProviderError, match=r"HTTP 422: Request validation failed") as e:
        RunPod(KEY, server.url, FAST).stop(POD)
    assert e.value.kind == "failed"
    body = capture("runpod", "image-toolbox__v2-error-400.json")
    server.route("GET", "/v2/pods", Reply(400, body))
    with pytest.raises(ProviderError, match="no longer any instances available"):
        RunPod(KEY, server.url, FAST).list_instances()


def test_runpod_both_generations_gone_is_drift(server: ProviderServer) -> None:
    server.route("GET", "/v2/pods", Reply(410, {"detail": "Gone", "status": 410}))
    with pytest.raises(ProviderError) as e:
        RunPod(KEY, server.url, FAST).list_instances()
    assert e.value.kind == "api_changed"
    text = str(e.value)
    assert "the provider's API changed (GET /v2/pods: HTTP 410" in text
    assert "gpufleet needs an update" in text
    assert "refused" not in text and "key" not in text
    # v2 404, v1 410 Gone: drift naming both, never "not found".
    server.route("GET", "/v2/pods", Reply(404, {"detail": "Not Found"}))
    with pytest.raises(ProviderError, match=r"GET /v2/pods: HTTP 404; and REST v1") as e:
        RunPod(KEY, server.url, FAST).list_instances()
    assert e.value.kind == "api_changed"


def test_runpod_v2_body_without_status_is_drift(server: ProviderServer) -> None:
    pod = capture("runpod", "image-toolbox__v2-pod-running.json")
    del pod["status"]
    server.route("GET", f"/v2/pods/{POD}", Reply(200, pod))
    with pytest.raises(ProviderError, match=r"no `status` in the answer") as e:
        RunPod(KEY, server.url, FAST).get_instance(POD)
    assert e.value.kind == "api_changed"


# -- vast.ai: v1 pages, v0 instance bodies, the gone instance ------------------------------


def test_vast_recorded_instance_through_the_paged_v1_list(server: ProviderServer) -> None:
    inst883 = capture("vast", "utopia-scala__v0-get-instance-883.json")["instances"]
    abandoned = capture("vast", "larri__v0-instance-48738927-created-abandoned.json")
    server.route(
        "GET",
        "/api/v1/instances/",
        Reply(200, {"instances": [inst883], "next_token": "tok-2"}),
        Reply(200, {"instances": [abandoned], "next_token": None}),
    )
    a, b = Vast(KEY, server.url, FAST).list_instances()
    first, second = server.calls("GET", "/api/v1/instances/")
    assert first.query == {"limit": ["25"]}
    assert second.query == {"limit": ["25"], "after_token": ["tok-2"]}
    assert a.ssh_command == "ssh -p 10882 root@ssh2281.vast.ai"
    assert (a.gpu_label, a.price_per_hour) == ("1x RTX A5000", 1.0020740740740741)
    # vast's own storage_total_cost, not storage_cost × disk / 730
    assert a.storage_per_hour == 0.002074074074074074
    # actual "created", every intent "stopped": storage only, no GPU bill
    assert (b.id, b.state, b.billing, b.price_per_hour) == ("48738927", "created", "storage", 0.017)
    assert b.ssh_command == "ssh -p 18926 root@ssh4.vast.ai"


def test_vast_v0_list_is_asked_only_when_v1_is_missing(server: ProviderServer) -> None:
    inst883 = capture("vast", "utopia-scala__v0-get-instance-883.json")["instances"]
    server.route("GET", "/api/v1/instances/", Reply(404, {"error": "not_found"}))
    server.route("GET", "/api/v0/instances/", Reply(200, {"instances": [inst883]}))
    (inst,) = Vast(KEY, server.url, FAST).list_instances()
    assert inst.id == "883"
    assert [c.path for c in server.seen] == ["/api/v1/instances/", "/api/v0/instances/"]


def test_vast_v1_missing_and_v0_gone_is_drift(server: ProviderServer) -> None:
    server.route("GET", "/api/v1/instances/", Reply(404, {"error": "not_found"}))
    with pytest.raises(ProviderError, match="the provider's API changed") as e:
        Vast(KEY, server.url, FAST).list_instances()
    assert e.value.kind == "api_changed" and "HTTP 410" in str(e.value)


def test_vast_gone_instance_is_not_found(server: ProviderServer) -> None:
    server.route(
        "GET",
        "/api/v0/instances/7/",
        Reply(200, capture("vast", "vast-cli__v0-get-instance-gone.json")),
    )
    with pytest.raises(ProviderError, match="no longer exists") as e:
        Vast(KEY, server.url, FAST).get_instance("7")
    assert e.value.kind == "not_found"


def test_vast_documented_answers(server: ProviderServer) -> None:
    server.route(
        "PUT",
        "/api/v0/instances/883/",
        Reply(200, capture("vast", "vast-docs__stop-destroy-success.json")),
    )
    assert Vast(KEY, server.url, FAST).stop("883") is True  # {"success": true}: done
    server.route(
        "PUT", "/api/v0/instances/883/", Reply(400, capture("vast", "vast-docs__error-common.json"))
    )
    with pytest.raises(ProviderError, match="Human-readable description") as e:
        Vast(KEY, server.url, FAST).stop("883")
    assert e.value.kind == "failed"
    body = (REAL / "vast" / "vast-docs__429-body.txt").read_bytes()
    server.route("GET", "/api/v1/instances/", Reply(429, body))
    with pytest.raises(ProviderError, match="API requests too frequent") as e:
        Vast(KEY, server.url, FAST).list_instances()
    assert e.value.kind == "rate_limited"


# -- Lambda: the documented bodies and error codes ------------------------------------------


def test_lambda_documented_instance_without_specs_gpus(server: ProviderServer) -> None:
    server.route(
        "GET", "/api/v1/instances", Reply(200, capture("lambda", "docexample__instances-list.json"))
    )
    server.route(
        "GET",
        "/api/v1/instances/0920582c7ff041399e34823a0be62549",
        Reply(200, capture("lambda", "docexample__instance-get.json")),
    )
    lam = LambdaCloud(KEY, server.url, FAST)
    for inst in (lam.list_instances()[0], lam.get_instance("0920582c7ff041399e34823a0be62549")):
        # "1x RTX A100 (24 GB)": one GPU named "RTX A100 (24 GB)", never "1x 1x …"
        assert (inst.gpu_name, inst.gpu_count) == ("RTX A100 (24 GB)", 1)
        assert inst.gpu_label == "1x RTX A100 (24 GB)"
        assert (inst.price_per_hour, inst.billing) == (1.10, "running")
        assert inst.ssh_command == "ssh ubuntu@10.10.10.1"


def test_lambda_prices_from_instance_types_as_strings(server: ProviderServer) -> None:
    doc = capture("lambda", "docexample__instances-list.json")
    del doc["data"][0]["instance_type"]["price_cents_per_hour"]
    server.route("GET", "/api/v1/instances", Reply(200, doc))
    server.route(
        "GET",
        "/api/v1/instance-types",
        Reply(200, capture("lambda", "docexample__instance-types.json")),
    )
    (inst,) = LambdaCloud(KEY, server.url, FAST).list_instances()
    assert inst.price_per_hour == 0.80  # "80" cents, a string in the documented body


def test_lambda_terminate_as_documented_is_done(server: ProviderServer) -> None:
    path = "/api/v1/instance-operations/terminate"
    server.route("POST", path, Reply(200, capture("lambda", "docexample__terminate.json")))
    # The listed instance still says "active": being listed is the answer.
    assert LambdaCloud(KEY, server.url, FAST).terminate("0920582c7ff041399e34823a0be62549")


def test_lambda_error_codes(server: ProviderServer) -> None:
    server.route(
        "GET",
        "/api/v1/instances",
        Reply(403, capture("lambda", "docexample__error-403-account-inactive.json")),
    )
    with pytest.raises(ProviderError) as e:
        LambdaCloud(KEY, server.url, FAST).list_instances()
    assert e.value.kind == "account"
    assert "Your account is inactive" in str(e.value) and "refused" not in str(e.value)
    assert "LAMBDA_API_KEY" not in str(e.value)  # not told to fix a key that works
    server.route(
        "GET",
        "/api/v1/instances",
        Reply(401, capture("lambda", "docexample__error-401-invalid-api-key.json")),
    )
    with pytest.raises(ProviderError, match="the API key was refused") as e:
        LambdaCloud(KEY, server.url, FAST).list_instances()
    assert e.value.kind == "auth"
