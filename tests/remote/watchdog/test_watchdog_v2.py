"""The watchdog speaks RunPod's REST v2 (REST v1 answers 410 Gone since 2026-11-15): its
readiness read is ``GET /v2/pods/{id}``, its stop ``POST /v2/pods/{id}/action``
``{"action": "stop"}``, v1 only where v2 answers 404. An endpoint that answers 404/410 is
said as "the provider's API changed (endpoint, what it said); update gpufleet", in the
refusal to arm, in the re-check's event and so in the laptop's ``watchdog_unready`` alert.

Real parts: a local HTTP server speaking RunPod's v2 shapes (the recorded v2 pod where the
captures are here) and 410 on v1, the sampler's own watchdog, the laptop's rule engine fed
the very event the watchdog made."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from gpufleet.core.alerts.rules import RuleEngine, load_rules
from gpufleet.core.text.catalogue import alert_sentence
from gpufleet_sampler.watchdog import Watchdog

from tests.remote.watchdog.test_watchdog import _phase, _rows, _start, sd, wd
from tests.support import paths
from tests.support.provider_server import ProviderServer, Reply, serve
from tests.support.rules_support import BUSY, Stream
from tests.support.waiting import wait_until

__all__ = ["sd"]  # the fixture, shared with test_watchdog

REAL = paths.REAL / "providers" / "runpod"
GONE = ("/v1",)  # RunPod since 2026-11-15: every v1 path answers 410 Gone
# v2's errors are problem+json (the recorded 400 and 422 have this shape).
NOT_FOUND = Reply(404, {"detail": "Not Found", "status": 404, "title": "Not Found"})


def _v2_pod(pod_id: str) -> dict[str, Any]:
    """The recorded v2 pod (image-toolbox), with this test's id."""
    f = REAL / "image-toolbox__v2-pod-running.json"
    if not f.is_file():
        pytest.skip(f"the RunPod captures are absent ({f})")
    return dict(json.loads(f.read_text()), id=pod_id)


def _act(w: Watchdog) -> dict[str, Any]:
    """Idle past idle_s and grace_s (both 1 s), then the action's record."""
    t0 = time.monotonic()
    for k in range(4):
        w.observe(_rows(0.0), t0 + 1.5 * k, 1.7e9 + 1.5 * k)
    w.wait(60)
    w.observe(_rows(0.0), t0 + 7.0, 1.7e9 + 7.0)
    assert w.phase == "done", w.state
    return dict(w.state["acted"])


def test_arms_on_v2_and_never_asks_v1(sd: Path) -> None:
    for server in serve(retired=GONE):
        server.route("GET", "/v2/pods/pod-v2", Reply(200, _v2_pod("pod-v2")))
        _start(sd, RUNPOD_POD_ID="pod-v2", RUNPOD_API_KEY="scoped")
        reply = wd(sd, "arm", "--api-url", server.url)
        assert reply["ok"], reply
        assert (
            reply["watchdog"]["ready"]["reason"] == "RunPod accepted the instance's key (HTTP 200)"
        )
        assert [c.path for c in server.seen] == ["/v2/pods/pod-v2"]


def test_an_endpoint_gone_on_both_generations_is_an_api_change(sd: Path) -> None:
    # v2 moved (404, as a route it no longer has) and v1 is retired (410).
    for server in serve(retired=GONE):
        server.route("GET", "/v2/pods/pod-x", NOT_FOUND)
        _start(sd, RUNPOD_POD_ID="pod-x", RUNPOD_API_KEY="scoped")
        reply = wd(sd, "arm", "--api-url", server.url)
        assert not reply["ok"]
        assert reply["message"] == (
            "watchdog: not armed: RunPod: the provider's API changed (GET /v2/pods/pod-x: "
            "HTTP 404: Not Found; GET /v1/pods/pod-x: HTTP 410: Gone); update gpufleet: "
            "the stop would fail"
        )
        assert [c.path for c in server.seen] == ["/v2/pods/pod-x", "/v1/pods/pod-x"]
        assert _phase(sd) == "disarmed"


def test_the_stop_goes_to_v2_s_action_endpoint(tmp_path: Path) -> None:
    for server in serve(retired=GONE):
        pod = _v2_pod("pod-s")
        server.route("GET", "/v2/pods/pod-s", Reply(200, pod))
        server.route("POST", "/v2/pods/pod-s/action", Reply(200, dict(pod, status="EXITED")))
        env = {"RUNPOD_POD_ID": "pod-s", "RUNPOD_API_KEY": "scoped"}
        w = Watchdog(str(tmp_path / "wd.json"), {0: 80e9}, env=env)
        w.arm({"action": "provider", "idle_s": 1, "grace_s": 1, "api_url": server.url})
        acted = _act(w)
        assert acted["ok"] and acted["outcome"] == "HTTP 200"
        (call,) = server.calls("POST", "/v2/pods/pod-s/action")
        assert call.body == {"action": "stop"}
        assert call.headers["content-type"] == "application/json"
        assert not [c for c in server.seen if c.path.startswith("/v1/")]


def test_v1_is_the_fallback_only_where_v2_answers_404(tmp_path: Path) -> None:
    # A deployment where v2 lacks the action endpoint but v1 still works (before the cut-off).
    for server in serve():
        server.route("GET", "/v2/pods/pod-o", Reply(200, {"id": "pod-o", "status": "RUNNING"}))
        server.route("POST", "/v2/pods/pod-o/action", NOT_FOUND)
        server.route("POST", "/v1/pods/pod-o/stop", Reply(200, None))
        env = {"RUNPOD_POD_ID": "pod-o", "RUNPOD_API_KEY": "scoped"}
        w = Watchdog(str(tmp_path / "wd.json"), {0: 80e9}, env=env)
        w.arm({"action": "provider", "idle_s": 1, "grace_s": 1, "api_url": server.url})
        acted = _act(w)
        assert acted["ok"], acted
        assert acted["outcome"] == (
            "POST /v2/pods/pod-o/action: HTTP 404: Not Found; POST /v1/pods/pod-o/stop: HTTP 200"
        )
        assert [c.path for c in server.seen if c.method == "POST"] == [
            "/v2/pods/pod-o/action",
            "/v1/pods/pod-o/stop",
        ]


def test_a_stop_on_a_retired_endpoint_fails_saying_the_api_changed(tmp_path: Path) -> None:
    for server in serve(retired=GONE):
        server.route("GET", "/v2/pods/pod-g", Reply(200, {"id": "pod-g", "status": "RUNNING"}))
        server.route("POST", "/v2/pods/pod-g/action", Reply(410, {"detail": "Gone"}))
        env = {"RUNPOD_POD_ID": "pod-g", "RUNPOD_API_KEY": "scoped"}
        w = Watchdog(str(tmp_path / "wd.json"), {0: 80e9}, env=env)
        w.arm({"action": "provider", "idle_s": 1, "grace_s": 1, "api_url": server.url})
        acted = _act(w)
        assert acted["ok"] is False
        assert acted["outcome"] == (
            "RunPod: the provider's API changed (POST /v2/pods/pod-g/action: HTTP 410: Gone); "
            "update gpufleet"
        )
        assert len(server.calls("POST", "/v2/pods/pod-g/action")) == 1  # no retry on a 410


def test_a_key_refused_on_v2_is_not_an_api_change(tmp_path: Path) -> None:
    """False alarms count too: a 401/403 is a key problem, never "update gpufleet"."""
    for server in serve(retired=GONE):
        server.route("GET", "/v2/pods/pod-k", Reply(403, {"error": "forbidden"}))
        w = Watchdog(str(tmp_path / "wd.json"), {0: 80e9}, env={})
        w.env = {"RUNPOD_POD_ID": "pod-k", "RUNPOD_API_KEY": "scoped"}
        with pytest.raises(ValueError) as e:
            w.arm({"action": "provider", "api_url": server.url})
        assert "refused the instance's key (HTTP 403: forbidden)" in str(e.value)
        assert "API changed" not in str(e.value)
        assert [c.path for c in server.seen] == ["/v2/pods/pod-k"]  # no v1 after a 403


def test_the_api_change_found_by_the_recheck_reaches_the_laptop_s_alert(tmp_path: Path) -> None:
    server = ProviderServer(retired=GONE)
    try:
        # Armed while v2 answered; at the re-check the read is gone (410) too.
        server.route(
            "GET",
            "/v2/pods/pod-r",
            Reply(200, {"id": "pod-r", "status": "RUNNING"}),
            Reply(410, {"detail": "Gone", "status": 410, "title": "Gone"}),
        )
        env = {"RUNPOD_POD_ID": "pod-r", "RUNPOD_API_KEY": "scoped"}
        w = Watchdog(str(tmp_path / "wd.json"), {0: 80e9}, env=env)
        w.arm({"action": "provider", "idle_s": 900, "api_url": server.url})
        later = time.monotonic() + 1801.0  # past the re-check period
        assert w.observe(_rows(90.0), later, 1.7e9) == []
        got: list[dict[str, Any]] = []
        wait_until(
            lambda: bool(got.extend(w.observe(_rows(90.0), later + 1, 1.7e9)) or got),
            what="the re-check's event",
        )
    finally:
        server.close()
    (ev,) = got
    said = (
        "RunPod: the provider's API changed (GET /v2/pods/pod-r: HTTP 410: Gone); update "
        "gpufleet: the stop would fail"
    )
    assert ev["message"] == "the action can no longer run: " + said and ev["ready"] is False
    # The laptop's rule engine, fed that very event in a stream of a busy host.
    s = Stream(n_gpus=1)
    fields = {k: v for k, v in ev.items() if k not in ("kind", "type", "gpu", "code")}
    msgs = [s.hello, *(s.sample(t, **BUSY) for t in range(0, 30))]
    msgs.append(s.event(30.0, "watchdog", gpu=None, **fields))
    msgs += [s.sample(t, **BUSY) for t in range(30, 40)]
    eng = RuleEngine(load_rules(include_user=False))
    alerts = [a for m in msgs for a in eng.feed("pod-r-host", m)]
    (unready,) = [a for a in alerts if a.rule_id == "watchdog_unready"]
    text = alert_sentence(unready)
    assert "pod-r-host" in text and said in text, text
