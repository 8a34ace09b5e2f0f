"""One rule engine per process: with ``metrics_listen`` set, the window's alerts and the served
``gpufleet_alerts`` series come from the same engine, so an acknowledgement in the window shows
in what Prometheus scrapes (before the pipeline hub, the exporter ran a second engine whose
ack, snooze and cost state were its own)."""

from __future__ import annotations

import socket
import urllib.request
from collections.abc import Callable
from pathlib import Path

from gpufleet.core.config import paths
from gpufleet.core.config.hostconfig import HostConfig
from gpufleet.ui.app import App
from pytestqt.qtbot import QtBot

from tests.support.ui_helpers import demo


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def scrape(url: str) -> list[str]:
    with urllib.request.urlopen(url, timeout=5) as r:
        text = r.read().decode()
    return [line for line in text.splitlines() if line.startswith("gpufleet_alerts{")]


def test_an_ack_in_the_window_shows_in_the_served_alerts(
    qtbot: QtBot, start_app: Callable[[list[HostConfig]], App], fast_rules: Path
) -> None:
    port = free_port()
    cfg = paths.config_file()
    cfg.parent.mkdir(parents=True, exist_ok=True)
    cfg.write_text(
        f'schema_version = 1\n[settings]\nmetrics_listen = "127.0.0.1:{port}"\n', encoding="utf-8"
    )
    app = start_app(demo("h100-a"))
    url = f"http://127.0.0.1:{port}/metrics"
    assert app.prom.metrics_url == url
    # The exporter is fed by the window's own pipeline: one engine.
    assert app.pipeline.metrics_server is not None
    assert app.pipeline.hub.metrics is app.pipeline.metrics_server.metrics

    def throttle_lines() -> list[str]:
        return [x for x in scrape(url) if 'rule_id="thermal_throttle"' in x]

    qtbot.waitUntil(lambda: bool(throttle_lines()), timeout=90_000)
    assert not any('acknowledged="true"' in x for x in throttle_lines())
    # The window's copy comes through the GUI thread's queue: it may lag the scrape.
    qtbot.waitUntil(
        lambda: any(a.rule_id == "thermal_throttle" for a in app.window.alerts.values()),
        timeout=10_000,
    )
    alert = next(a for a in app.window.alerts.values() if a.rule_id == "thermal_throttle")
    app.alert_wiring.ack(alert)
    qtbot.waitUntil(lambda: app.window.alerts[alert.id].acked, timeout=10_000)
    qtbot.waitUntil(
        lambda: any('acknowledged="true"' in x for x in throttle_lines()), timeout=10_000
    )
    assert 'Hostname="h100-a"' in throttle_lines()[0]
