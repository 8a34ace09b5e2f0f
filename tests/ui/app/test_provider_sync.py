"""Billing follows the instance in the running app: a provider-backed host whose pod the
provider reports stopped is billed as "stopped, paying storage" (billing.json and the cost
tracker), asked through a local server speaking RunPod's API."""

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


def test_the_app_takes_the_billing_state_from_the_provider(
    qtbot: QtBot, monkeypatch: pytest.MonkeyPatch, server: ProviderServer
) -> None:
    pod = dict(RUNPOD_PODS[0], status="EXITED")
    server.route("GET", "/v2/pods", Reply(200, [pod]))
    monkeypatch.setenv("RUNPOD_API_KEY", "k-test")
    monkeypatch.setenv("GPUFLEET_RUNPOD_API_URL", server.url)
    monkeypatch.setenv("GPUFLEET_SIM_TIME_SCALE", "0.2")
    base = next(h for h in demo_hosts() if h.name == "a100-eval")
    host = dataclasses.replace(base, provider="runpod", provider_id=pod["id"])
    qapp = make_qapp()
    paths.ensure_private_dir(paths.demo_data_dir())
    app = App([host], False, setup_theme(qapp))
    qtbot.addWidget(app.window)
    app.start()
    try:
        qtbot.waitUntil(lambda: "a100-eval" in app.window.cost, timeout=60_000)
        app.actions.sync_providers()
        qtbot.waitUntil(lambda: app.window.cost["a100-eval"].billing == "storage", timeout=30_000)
        assert BillingLedger.load().state("a100-eval") == "storage"
        # (the app's own first sync, 5 s after the start, may have asked too)
        assert server.seen and all(
            c.headers["authorization"] == "Bearer k-test" for c in server.seen
        )
    finally:
        app.stop()
        # Not a demo app (demo=False), so it leaves its local host's daemon sampling, as it
        # would a real host's: the test stops what it started.
        assert app.fleet.stop_samplers([host.name]) == {host.name: None}
