"""A rule's provider action in the running app: the idle rule of a RunPod-backed demo host
stops the pod through the provider's API (a local server speaking RunPod's REST shapes), once,
and the host's billing turns to "stopped, paying storage"."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

import pytest
from gpufleet.core.config import paths
from gpufleet.core.cost.billing import BillingLedger
from gpufleet.core.fleet.demo import demo_hosts
from gpufleet.ui.app import App, make_qapp, setup_theme
from pytestqt.qtbot import QtBot

from tests.support.provider_payloads import RUNPOD_PODS
from tests.support.provider_server import ProviderServer, Reply, serve


@pytest.fixture
def server() -> Iterator[ProviderServer]:
    yield from serve()


def test_the_idle_rule_stops_the_pod_once(
    qtbot: QtBot, monkeypatch: pytest.MonkeyPatch, server: ProviderServer, isolated_dirs: object
) -> None:
    pod = dict(RUNPOD_PODS[0])
    stop = f"/v2/pods/{pod['id']}/action"
    server.route("GET", "/v2/pods", Reply(200, [pod]))
    server.route("POST", stop, Reply(200, dict(pod, status="EXITED")))
    monkeypatch.setenv("RUNPOD_API_KEY", "k-test")
    monkeypatch.setenv("GPUFLEET_RUNPOD_API_URL", server.url)
    # crashed-idle's job dies 180 s in: 9 s at this scale
    monkeypatch.setenv("GPUFLEET_SIM_TIME_SCALE", "0.05")
    rules = paths.rules_file()
    rules.parent.mkdir(parents=True, exist_ok=True)
    rules.write_text(
        "[rules.idle_billed]\nfor_s = 2\nactions = [\n"
        '  { type = "provider", command = "stop", grace_s = 0.5 },\n]\n',
        encoding="utf-8",
    )
    base = next(h for h in demo_hosts() if h.name == "a100-eval")  # the job crashes, the GPUs idle
    host = dataclasses.replace(base, provider="runpod", provider_id=pod["id"])
    qapp = make_qapp()
    paths.ensure_private_dir(paths.demo_data_dir())
    app = App([host], False, setup_theme(qapp))
    qtbot.addWidget(app.window)
    app.start()
    try:
        qtbot.waitUntil(lambda: bool(server.calls("POST", stop)), timeout=90_000)
        call = server.calls("POST", stop)[0]
        assert call.headers["authorization"] == "Bearer k-test"
        qtbot.waitUntil(
            lambda: BillingLedger.load().state("a100-eval") == "storage", timeout=10_000
        )
        qtbot.wait(3_000)  # the alert stays firing: no second stop
        assert len(server.calls("POST", stop)) == 1
    finally:
        app.stop()
        # Not a demo app (demo=False), so it leaves its local host's daemon sampling, as it
        # would a real host's: the test stops what it started.
        assert app.fleet.stop_samplers([host.name]) == {host.name: None}
