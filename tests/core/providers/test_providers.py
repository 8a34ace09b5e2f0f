"""The provider adapters against a local server speaking each provider's documented API:
what they send (method, path, headers, body), what they read, and every error path."""

from __future__ import annotations

import copy
from collections.abc import Iterator

import pytest
from gpufleet.core.providers import credentials
from gpufleet.core.providers.base import ProviderError
from gpufleet.core.providers.http import HttpSettings
from gpufleet.core.providers.lambda_cloud import LambdaCloud
from gpufleet.core.providers.registry import open_provider
from gpufleet.core.providers.runpod import RunPod
from gpufleet.core.providers.vast import Vast

from tests.support.provider_payloads import (
    LAMBDA_INSTANCES,
    LAMBDA_TYPES,
    RUNPOD_GRAPHQL,
    RUNPOD_PODS,
    VAST_INSTANCES,
)
from tests.support.provider_server import ProviderServer, Reply, serve

KEY = "sk-test-5ecret-0123456789"
FAST = HttpSettings(connect_timeout_s=2.0, read_timeout_s=0.5, retries=2, backoff_s=0.05)


@pytest.fixture
def server() -> Iterator[ProviderServer]:
    yield from serve()


def _auth_ok(s: ProviderServer) -> None:
    assert s.seen, "nothing was sent"
    for call in s.seen:
        assert call.headers["authorization"] == f"Bearer {KEY}"
        assert KEY not in call.path and not any(KEY in v for vs in call.query.values() for v in vs)


# -- vast.ai -----------------------------------------------------------------------------


def test_vast_lists_instances_with_ssh_price_and_billing(server: ProviderServer) -> None:
    server.route("GET", "/api/v1/instances/", Reply(200, VAST_INSTANCES))
    got = Vast(KEY, server.url, FAST).list_instances()
    (call,) = server.seen
    assert call.query == {"limit": ["25"]}  # v1's page size, no token: the first page
    _auth_ok(server)
    a, b = got
    assert (a.id, a.name, a.state, a.billing) == ("4242001", "train-a", "running", "running")
    assert a.ssh_command == "ssh -p 31922 root@ssh5.vast.ai"
    assert (a.gpu_name, a.gpu_count, a.price_per_hour, a.currency) == ("RTX 4090", 2, 0.412, "USD")
    assert a.storage_per_hour == pytest.approx(0.15 * 73 / 720)
    assert (b.name, b.billing) == ("vast-4242002", "storage")


def test_vast_stop_resume_destroy_send_the_documented_requests(server: ProviderServer) -> None:
    path = "/api/v0/instances/4242001/"
    server.route("PUT", path, Reply(200, {"success": True}))
    server.route("DELETE", path, Reply(200, {"success": True}))
    v = Vast(KEY, server.url, FAST)
    v.stop("4242001")
    v.resume("4242001")
    v.terminate("4242001")
    assert [(c.method, c.body) for c in server.seen] == [
        ("PUT", {"state": "stopped"}),
        ("PUT", {"state": "running"}),
        ("DELETE", None),
    ]
    assert server.seen[0].headers["content-type"] == "application/json"
    _auth_ok(server)


def test_vast_success_false_is_an_error_with_its_message(server: ProviderServer) -> None:
    server.route(
        "PUT",
        "/api/v0/instances/7/",
        Reply(200, {"success": False, "error": "invalid_args", "msg": "no such instance 7"}),
    )
    with pytest.raises(ProviderError, match="no such instance 7") as e:
        Vast(KEY, server.url, FAST).stop("7")
    assert e.value.kind == "failed"


def test_vast_state_of_one_instance(server: ProviderServer) -> None:
    one = {"instances": copy.deepcopy(VAST_INSTANCES["instances"][1])}
    server.route("GET", "/api/v0/instances/4242002/", Reply(200, one))
    inst = Vast(KEY, server.url, FAST).get_instance("4242002")
    assert (inst.state, inst.billing) == ("stopped", "storage")


def test_vast_429_without_retry_after_backs_off_and_succeeds(server: ProviderServer) -> None:
    # vast.ai sends no Retry-After: the client backs off by itself.
    server.route(
        "GET",
        "/api/v1/instances/",
        Reply(429, b"API requests too frequent"),
        Reply(429, b"API requests too frequent"),
        Reply(200, VAST_INSTANCES),
    )
    assert len(Vast(KEY, server.url, FAST).list_instances()) == 2
    assert len(server.seen) == 3


# -- RunPod ------------------------------------------------------------------------------


def test_runpod_lists_pods(server: ProviderServer) -> None:
    server.route("GET", "/v2/pods", Reply(200, RUNPOD_PODS))
    server.route("POST", "/graphql", Reply(200, RUNPOD_GRAPHQL))
    a, b = RunPod(KEY, server.url, FAST).list_instances()
    _auth_ok(server)
    assert [(c.method, c.path) for c in server.seen] == [("GET", "/v2/pods"), ("POST", "/graphql")]
    assert (a.id, a.name, a.state, a.billing) == ("xedezhzb9la3ye", "llm-ft", "RUNNING", "running")
    assert a.price_per_hour == 0.74  # sent as the string "0.74"
    assert a.ssh_command == "ssh -p 22917 root@100.65.0.119"
    assert (a.gpu_name, a.gpu_count) == ("A40", 1)
    assert (b.billing, b.ssh_command, b.price_per_hour) == ("storage", None, 0.34)
    assert b.gpu_label == "1x RTX 4090"


def test_runpod_without_graphql_names_the_gpu_type(server: ProviderServer) -> None:
    # GraphQL down: the list still comes, the GPU named by v2's type.
    server.route("GET", "/v2/pods", Reply(200, RUNPOD_PODS))
    server.route("POST", "/graphql", Reply(500, {"errors": [{"message": "down"}]}))
    a, _b = RunPod(KEY, server.url, FAST).list_instances()
    assert (a.gpu_name, a.ssh_command) == ("NVIDIA A40", "ssh -p 22917 root@100.65.0.119")


def test_runpod_actions_go_through_the_v2_action_endpoint(server: ProviderServer) -> None:
    pid = "xedezhzb9la3ye"
    server.route("POST", f"/v2/pods/{pid}/action", Reply(200, None))
    stopped = dict(RUNPOD_PODS[0], status="EXITED")
    running = dict(RUNPOD_PODS[0], status="RUNNING")
    terminated = dict(RUNPOD_PODS[0], status="TERMINATED")
    server.route(
        "GET", f"/v2/pods/{pid}", Reply(200, stopped), Reply(200, running), Reply(200, terminated)
    )
    r = RunPod(KEY, server.url, FAST)
    for action in ("stop", "resume", "terminate"):
        r.act_confirmed(action, pid, rereads=1)  # type: ignore[arg-type]
    actions = [(c.path, c.body) for c in server.seen if c.method == "POST" and "action" in c.path]
    assert actions == [
        (f"/v2/pods/{pid}/action", {"action": "stop"}),
        (f"/v2/pods/{pid}/action", {"action": "start"}),
        (f"/v2/pods/{pid}/action", {"action": "terminate"}),
    ]
    assert not [c for c in server.seen if c.path.startswith("/v1/")]
    _auth_ok(server)


def test_runpod_stop_post_is_not_retried_on_5xx(server: ProviderServer) -> None:
    # A POST that may have acted must not run twice.
    server.route("POST", "/v2/pods/p1/action", Reply(502, b"Bad Gateway"), Reply(200, None))
    with pytest.raises(ProviderError, match=r"HTTP 502") as e:
        RunPod(KEY, server.url, FAST).stop("p1")
    assert e.value.kind == "server"
    assert len(server.seen) == 1


def test_runpod_post_is_retried_on_429_honouring_retry_after(server: ProviderServer) -> None:
    server.route(
        "POST",
        "/v2/pods/p1/action",
        Reply(429, {"error": "rate limited"}, {"Retry-After": "1"}),
        Reply(200, {"id": "p1", "status": "EXITED"}),
    )
    assert RunPod(KEY, server.url, FAST).stop("p1") is True  # the answer says it stopped
    first, second = server.seen
    assert second.t - first.t >= 0.9  # waited as told, not the 0.05 s backoff


# -- Lambda ------------------------------------------------------------------------------


def test_lambda_lists_instances(server: ProviderServer) -> None:
    server.route("GET", "/api/v1/instances", Reply(200, LAMBDA_INSTANCES))
    (inst,) = LambdaCloud(KEY, server.url, FAST).list_instances()
    _auth_ok(server)
    assert (inst.name, inst.state, inst.billing) == ("h100-box", "active", "running")
    assert inst.ssh_command == "ssh ubuntu@198.51.100.2"
    assert (inst.price_per_hour, inst.gpu_name, inst.gpu_count) == (2.49, "H100 (80 GB PCIe)", 1)
    assert [c.path for c in server.seen] == ["/api/v1/instances"]  # price was in the answer


def test_lambda_price_from_instance_types_when_missing(server: ProviderServer) -> None:
    doc = copy.deepcopy(LAMBDA_INSTANCES)
    doc["data"][0]["instance_type"] = {"name": "gpu_8x_a100", "description": "8x A100"}
    server.route("GET", "/api/v1/instances", Reply(200, doc))
    server.route("GET", "/api/v1/instance-types", Reply(200, LAMBDA_TYPES))
    (inst,) = LambdaCloud(KEY, server.url, FAST).list_instances()
    assert inst.price_per_hour == 10.32


def test_lambda_terminate_and_no_stop(server: ProviderServer) -> None:
    iid = LAMBDA_INSTANCES["data"][0]["id"]
    done = dict(LAMBDA_INSTANCES["data"][0], status="terminated")
    server.route(
        "POST",
        "/api/v1/instance-operations/terminate",
        Reply(200, {"data": {"terminated_instances": [done]}}),
    )
    lam = LambdaCloud(KEY, server.url, FAST)
    lam.terminate(iid)
    (call,) = server.seen
    assert call.body == {"instance_ids": [iid]}
    _auth_ok(server)
    with pytest.raises(ProviderError, match="Lambda has no stop action") as e:
        lam.stop(iid)
    assert e.value.kind == "not_supported"
    assert len(server.seen) == 1  # nothing sent for the missing action


def test_lambda_401_names_the_fix_not_the_key(server: ProviderServer) -> None:
    body = {
        "error": {
            "code": "global/invalid-api-key",
            "message": "API key was invalid, expired, or deleted.",
            "suggestion": "Check your API key or create a new one, then try again.",
        }
    }
    server.route("GET", "/api/v1/instances", Reply(401, body))
    with pytest.raises(ProviderError) as e:
        LambdaCloud(KEY, server.url, FAST).list_instances()
    assert e.value.kind == "auth"
    msg = str(e.value)
    assert "API key was invalid" in msg and "LAMBDA_API_KEY" in msg
    assert KEY not in msg
    assert len(server.seen) == 1  # a refused key is not retried


# -- errors common to all ----------------------------------------------------------------


def test_error_echoing_the_key_is_scrubbed(server: ProviderServer) -> None:
    server.route("GET", "/v2/pods", Reply(400, {"error": f"bad token {KEY}"}))
    with pytest.raises(ProviderError) as e:
        RunPod(KEY, server.url, FAST).list_instances()
    assert KEY not in str(e.value) and "***" in str(e.value)


def test_5xx_on_get_is_retried_then_reported(server: ProviderServer) -> None:
    server.route("GET", "/v2/pods", Reply(503, {"error": "maintenance"}))
    with pytest.raises(ProviderError, match=r"RunPod: GET /v2/pods: the provider failed") as e:
        RunPod(KEY, server.url, FAST).list_instances()
    assert e.value.kind == "server" and e.value.status == 503
    assert len(server.seen) == 3  # 1 + 2 retries


def test_429_forever_is_a_rate_limit_error(server: ProviderServer) -> None:
    server.route("GET", "/api/v1/instances/", Reply(429, b"API requests too frequent"))
    with pytest.raises(ProviderError, match=r"rate limited .* after up to 3 tries") as e:
        Vast(KEY, server.url, FAST).list_instances()
    assert e.value.kind == "rate_limited"


def test_timeout_is_reported_as_such(server: ProviderServer) -> None:
    server.route("GET", "/api/v1/instances", Reply(200, LAMBDA_INSTANCES, hang_s=10))
    with pytest.raises(ProviderError, match=r"no answer within 0.5 s \(after 3 tries\)") as e:
        LambdaCloud(KEY, server.url, FAST).list_instances()
    assert e.value.kind == "timeout"


def test_unreachable_and_bad_url() -> None:
    with pytest.raises(ProviderError, match=r"cannot reach 127\.0\.0\.1:9") as e:
        Vast(KEY, "http://127.0.0.1:9", FAST).list_instances()
    assert e.value.kind == "network"
    with pytest.raises(ProviderError, match="bad API URL"):
        Vast(KEY, "ftp:/x", FAST)


def test_not_json_and_wrong_shape(server: ProviderServer) -> None:
    server.route("GET", "/v2/pods", Reply(200, b"<html>login</html>"))
    with pytest.raises(ProviderError, match="not JSON") as e:
        RunPod(KEY, server.url, FAST).list_instances()
    assert e.value.kind == "bad_response"
    server.route("GET", "/api/v1/instances/", Reply(200, {"instances": "nope"}))
    with pytest.raises(ProviderError, match="expected a list in `instances`"):
        Vast(KEY, server.url, FAST).list_instances()


def test_key_from_environment_and_missing(
    server: ProviderServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    server.route("GET", "/v2/pods", Reply(200, RUNPOD_PODS))
    monkeypatch.setenv("RUNPOD_API_KEY", KEY)
    assert len(open_provider("runpod", server.url, FAST).list_instances()) == 2
    _auth_ok(server)
    with pytest.raises(ProviderError, match="AutoDL has no public API") as e:
        open_provider("autodl")
    assert e.value.kind == "not_supported"


def test_key_from_keyring_and_missing(
    server: ProviderServer, monkeypatch: pytest.MonkeyPatch, secret_service: None
) -> None:
    monkeypatch.delenv("VAST_API_KEY", raising=False)
    with pytest.raises(
        ProviderError, match="set VAST_API_KEY, or enter the key in Settings ▸ Providers"
    ):
        open_provider("vast", server.url, FAST)
    credentials.store_key("vast", KEY)
    try:
        server.route("GET", "/api/v1/instances/", Reply(200, VAST_INSTANCES))
        assert len(open_provider("vast", server.url, FAST).list_instances()) == 2
        _auth_ok(server)
        assert KEY not in repr(credentials.find_key("vast"))
    finally:
        assert credentials.delete_key("vast")
