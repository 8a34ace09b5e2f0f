"""Issue 23's provider acceptance, through the CLI and the provider actions against a local
server that answers 410 on the retired endpoints and serves the recorded bodies: imports
with the right SSH, price, GPU and state; a gone instance ended (exit 0); drift said as
drift; a stop that the answer does not confirm is a failed stop (billing unchanged,
retried, an alert naming the host); a dripping body, a huge Retry-After and a huge body fail
within the deadline; a hostile import leaves config.toml loadable."""

from __future__ import annotations

import io
import json
import math
import time
import tracemalloc
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from gpufleet.cli.main import main
from gpufleet.core.config import configfile
from gpufleet.core.config.hostconfig import HostConfig
from gpufleet.core.cost.billing import BillingLedger
from gpufleet.core.providers.actions import (
    FileActionRecord,
    ProviderActions,
    RetryPolicy,
    failed_action_alert,
)
from gpufleet.core.providers.base import Provider, ProviderError
from gpufleet.core.providers.http import HttpSettings
from gpufleet.core.providers.lambda_cloud import LambdaCloud
from gpufleet.core.providers.runpod import RunPod
from gpufleet.core.providers.vast import Vast
from gpufleet.core.text.catalogue import alert_sentence, alert_title

from tests.support import paths
from tests.support.provider_payloads import VAST_INSTANCES
from tests.support.provider_server import RETIRED, ProviderServer, Reply, serve

REAL = paths.REAL / "providers"
KEY = "test-key-not-real-23"
FAST = HttpSettings(connect_timeout_s=2.0, read_timeout_s=2.0, retries=2, backoff_s=0.05)
POD = "5xpma5eg46tqjq"
needs_real = pytest.mark.skipif(not REAL.is_dir(), reason=f"no real captures at {REAL}")


def capture(provider: str, name: str) -> Any:
    return json.loads((REAL / provider / name).read_text(encoding="utf-8"))


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[ProviderServer]:
    for var in ("VAST_API_KEY", "RUNPOD_API_KEY", "LAMBDA_API_KEY"):
        monkeypatch.setenv(var, KEY)
    monkeypatch.setattr("sys.stdin", io.StringIO(""))  # no terminal: never prompts
    yield from serve(RETIRED)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    rc = main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


def _hosts() -> dict[str, HostConfig]:
    return {h.name: h for h in configfile.load_config().hosts}


# -- import, bill --sync, drift through the CLI ----------------------------------------------


@needs_real
def test_import_runpod_and_vast_with_the_old_endpoints_gone(server, capsys):
    pod = capture("runpod", "image-toolbox__v2-pod-running.json")
    server.route("GET", "/v2/pods", Reply(200, [pod]))
    graphql = capture("runpod", "image-toolbox__graphql-pod.json")
    server.route("POST", "/graphql", Reply(200, {"data": {"myself": {"pods": [graphql]}}}))
    rc, out, _ = run(
        capsys, "hosts", "import", "--provider", "runpod", "--api-url", server.url, "--yes"
    )
    assert rc == 0, out
    assert (
        "add     imgtbx-v2-probe: ssh -p 35558 root@213.173.104.74, 1x RTX PRO 4500, "
        "0.72 USD/h (RUNNING)" in out
    )
    inst883 = capture("vast", "utopia-scala__v0-get-instance-883.json")["instances"]
    server.route(
        "GET", "/api/v1/instances/", Reply(200, {"instances": [inst883], "next_token": None})
    )
    rc, out, _ = run(
        capsys, "hosts", "import", "--provider", "vast", "--api-url", server.url, "--yes"
    )
    assert rc == 0, out
    hosts = _hosts()
    r, v = hosts["imgtbx-v2-probe"], hosts["vast-883"]
    assert (r.host, r.port, r.user, r.price_per_hour, r.provider_id) == (
        "213.173.104.74",
        35558,
        "root",
        0.72,
        POD,
    )
    assert (v.host, v.port, v.user, v.provider_id) == ("ssh2281.vast.ai", 10882, "root", "883")
    assert v.storage_per_hour == 0.002074074074074074
    assert BillingLedger.load().state("imgtbx-v2-probe") == "running"
    assert not [
        c for c in server.seen if c.path.startswith("/v1/") or c.path == "/api/v0/instances/"
    ]


def test_bill_sync_of_a_gone_vast_instance_says_ended(server, capsys):
    server.route("GET", "/api/v1/instances/", Reply(200, VAST_INSTANCES))
    assert (
        run(capsys, "hosts", "import", "--provider", "vast", "--api-url", server.url, "--yes")[0]
        == 0
    )
    # The instance's path answers 200 {"instances": null} (vast's own handling), the list
    # no longer has it.
    server.route("GET", "/api/v0/instances/4242001/", Reply(200, {"instances": None}))
    server.route("GET", "/api/v1/instances/", Reply(200, {"instances": [], "next_token": None}))
    rc, out, err = run(capsys, "hosts", "bill", "train-a", "--sync", "--api-url", server.url)
    assert rc == 0, err
    assert "train-a: ended" in out
    assert BillingLedger.load().state("train-a") == "ended"


def test_a_410_prints_the_drift_message(server, capsys):
    server.route("GET", "/v2/pods", Reply(410, {"detail": "Gone", "status": 410, "title": "Gone"}))
    rc, _out, err = run(capsys, "hosts", "import", "--provider", "runpod", "--api-url", server.url)
    assert rc == 1
    assert (
        "the provider's API changed (GET /v2/pods: HTTP 410: Gone); gpufleet needs an update" in err
    )
    assert "refused" not in err and "check it" not in err
    rc, _out, err = run(capsys, "providers", "list", "runpod", "--api-url", server.url)
    assert rc == 1 and "the provider's API changed" in err


def test_hostile_import_is_skipped_and_named_and_config_stays_loadable(server, capsys):
    good = dict(VAST_INSTANCES["instances"][0])
    hostile = [
        dict(good, id=1, label="badport", ssh_port=99999),
        dict(good, id=2, label="nanprice", dph_total=math.nan),
        dict(good, id=3, label="option", ssh_host="-oProxyCommand=touch /tmp/x"),
        dict(good, id=4, label="\x1b[2J\n  add     forged: ssh evil", ssh_host="ssh9.vast.ai"),
    ]
    server.route(
        "GET", "/api/v1/instances/", Reply(200, {"instances": hostile, "next_token": None})
    )
    rc, out, _ = run(
        capsys, "hosts", "import", "--provider", "vast", "--api-url", server.url, "--yes"
    )
    assert rc == 0
    for name, why in (("badport", "port"), ("nanprice", "price_per_hour"), ("option", "host")):
        (line,) = [x for x in out.splitlines() if x.startswith(f"  skip    {name} ")]
        assert why in line and "not imported" in line
    assert "\x1b" not in out and "forged:" not in out.split("\n  add ")[0]
    hosts = _hosts()  # loads: nothing the loader refuses was written
    (only,) = hosts.values()  # the one sound instance, its name made a host name
    assert only.host == "ssh9.vast.ai" and "\n" not in only.name


# -- provider actions that cannot lie --------------------------------------------------------


class Acts:
    """ProviderActions on the local server, billing changes and sleeps recorded."""

    def __init__(self, server: ProviderServer, tmp: Path, host: HostConfig, tries: int = 2) -> None:
        self.billing: list[tuple[str, str]] = []
        self.slept: list[float] = []

        def opener(name: str) -> Provider:
            cls = {"vast": Vast, "runpod": RunPod, "lambda": LambdaCloud}[name]
            return cls(KEY, server.url, FAST)

        self.acts = ProviderActions(
            {host.name: host}.get,
            FileActionRecord(tmp / "actions.json"),
            opener=opener,
            on_billing=lambda h, st: self.billing.append((h, st)),
            policy=RetryPolicy(tries=tries, wait_s=7.0, rereads=2, reread_wait_s=3.0),
            sleep=self.slept.append,
        )


RUNPOD_HOST = HostConfig(name="pod-a", host="213.173.104.74", provider="runpod", provider_id=POD)


@needs_real
def test_runpod_stop_goes_through_the_v2_action_endpoint_exactly_once(server, tmp_path):
    pod = capture("runpod", "image-toolbox__v2-pod-running.json")
    server.route("POST", f"/v2/pods/{POD}/action", Reply(200, None))  # no documented body
    server.route("GET", f"/v2/pods/{POD}", Reply(200, dict(pod, status="EXITED")))
    h = Acts(server, tmp_path, RUNPOD_HOST)
    out = h.acts.run("alert-1", "pod-a", "stop", False, False)
    assert out.rc == 0, out.message
    (call,) = server.calls("POST", f"/v2/pods/{POD}/action")
    assert call.body == {"action": "stop"}
    assert h.billing == [("pod-a", "storage")]  # after the re-read said EXITED
    assert h.acts.run("alert-1", "pod-a", "stop", False, False).rc == 3  # once per alert
    assert len(server.calls("POST", f"/v2/pods/{POD}/action")) == 1


@needs_real
def test_a_200_with_an_error_body_is_a_failed_stop(server, tmp_path):
    pod = capture("runpod", "image-toolbox__v2-pod-running.json")
    server.route(
        "POST", f"/v2/pods/{POD}/action", Reply(200, {"error": "pod is locked; not stopped"})
    )
    server.route("GET", f"/v2/pods/{POD}", Reply(200, pod))
    h = Acts(server, tmp_path, RUNPOD_HOST, tries=3)
    out = h.acts.run("alert-2", "pod-a", "stop", False, False)
    assert out.rc == 1
    assert "pod is locked; not stopped" in out.message and "still billed" in out.message
    assert h.billing == []  # billing unchanged
    assert len(server.calls("POST", f"/v2/pods/{POD}/action")) == 3  # retried per the policy
    assert h.slept == [7.0, 7.0]
    alert = failed_action_alert("pod-a", "stop", out.message, 100.0)
    assert alert.severity == "critical" and alert.host == "pod-a"
    assert alert_title(alert) == "pod-a: the provider did not stop the instance"
    assert "pod is locked" in alert_sentence(alert) and "still billed" in alert_sentence(alert)


@needs_real
def test_a_200_that_says_nothing_and_a_pod_still_running_is_not_a_stop(server, tmp_path):
    pod = capture("runpod", "image-toolbox__v2-pod-running.json")
    server.route("POST", f"/v2/pods/{POD}/action", Reply(200, {}))
    server.route("GET", f"/v2/pods/{POD}", Reply(200, pod))  # still RUNNING
    h = Acts(server, tmp_path, RUNPOD_HOST, tries=1)
    out = h.acts.run("alert-3", "pod-a", "stop", False, False)
    assert out.rc == 1 and "not confirmed" in out.message and "'RUNNING'" in out.message
    assert h.billing == [] and h.slept == [3.0]  # two re-reads, 3 s apart


def test_an_armed_stop_that_hits_drift_fails_at_once_with_the_drift_alert(server, tmp_path):
    server.route("POST", f"/v2/pods/{POD}/action", Reply(410, {"detail": "Gone"}))
    h = Acts(server, tmp_path, RUNPOD_HOST, tries=3)
    out = h.acts.run("alert-4", "pod-a", "stop", False, False)
    assert out.rc == 1 and "the provider's API changed" in out.message
    assert len(server.seen) == 1 and h.slept == []  # another try cannot help
    sentence = alert_sentence(failed_action_alert("pod-a", "stop", out.message, 1.0))
    assert "pod-a" in sentence and "gpufleet is updated" in sentence


def test_lambda_terminate_without_terminated_instances_is_failed(server, tmp_path):
    server.route("POST", "/api/v1/instance-operations/terminate", Reply(200, {"data": {}}))
    with pytest.raises(ProviderError, match="no `terminated_instances`") as e:
        LambdaCloud(KEY, server.url, FAST).terminate("abc")
    assert e.value.kind == "failed"


# -- calls that cannot hang or swell -----------------------------------------------------------


def test_a_dripping_body_fails_within_the_deadline(server):
    settings = HttpSettings(read_timeout_s=5.0, retries=0, deadline_s=1.0)
    server.route("GET", "/api/v1/instances/", Reply(200, b'{"instances": []}' * 20, drip_s=0.2))
    t0 = time.monotonic()
    with pytest.raises(ProviderError, match="no complete answer within the 1 s deadline") as e:
        Vast(KEY, server.url, settings).list_instances()
    # The whole body would take 68 s; the bound is generous for a loaded machine.
    assert e.value.kind == "timeout" and time.monotonic() - t0 < 20


def test_a_huge_retry_after_is_not_waited_for(server):
    server.route("GET", "/api/v1/instances/", Reply(429, b"slow down", {"Retry-After": "100000"}))
    t0 = time.monotonic()
    with pytest.raises(ProviderError) as e:
        Vast(KEY, server.url, FAST).list_instances()
    assert e.value.kind == "rate_limited" and time.monotonic() - t0 < 20
    assert len(server.seen) == 1  # not retried: the wait is past the cap


def test_a_600_mib_answer_is_refused_without_taking_memory(server):
    server.route("GET", "/api/v1/instances/", Reply(200, b"", size=600 * 1024 * 1024))
    settings = HttpSettings(retries=0, max_body_bytes=1024 * 1024)
    tracemalloc.start()
    try:
        with pytest.raises(ProviderError, match="larger than 1 MiB") as e:
            Vast(KEY, server.url, settings).list_instances()
        _now, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert e.value.kind == "bad_response" and peak < 32 * 1024 * 1024
