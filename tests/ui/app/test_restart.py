"""Alert state survives an app restart: the real app (demo daemon, pipeline hub, SQLite store,
a webhook on a local HTTP server, a real shell action) is quit and started again on the same
history file. The acknowledged alert comes back acknowledged, and nothing is sent or run a
second time: no webhook post, no action, no desktop notification."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from gpufleet.core.config.hostconfig import HostConfig
from gpufleet.core.config.settings import (
    Settings,
    WebhookSetting,
    forget_webhook_url,
    save_settings,
    store_webhook_url,
)
from gpufleet.ui.app import App
from pytestqt.qtbot import QtBot

from tests.support.restart_case import firing_posts, write_throttle_rule
from tests.support.ui_helpers import demo, wait_streaming
from tests.support.webhook_sink import WebhookSink


def _throttle(app: App) -> list[Any]:
    return [a for a in app.window.alerts.values() if a.rule_id == "thermal_throttle"]


def test_ack_and_sent_state_hold_across_a_restart(
    qtbot: QtBot,
    start_app: Callable[[list[HostConfig]], App],
    webhook_sink: WebhookSink,
    secret_service: None,
    tmp_path: Path,
) -> None:
    url, bodies = webhook_sink.url, webhook_sink.bodies
    ran = tmp_path / "ran"
    name = f"restart-hook-{os.getpid()}"
    store_webhook_url(name, url)
    try:
        save_settings(Settings(webhooks=(WebhookSetting(name, "json", "warning"),)))
        write_throttle_rule(ran)

        first = start_app(demo("h100-a"))
        qtbot.waitUntil(lambda: bool(_throttle(first)), timeout=90_000)
        qtbot.waitUntil(lambda: firing_posts(bodies) == 1 and ran.exists(), timeout=30_000)
        alert = _throttle(first)[0]
        first.alert_wiring.ack(alert)
        qtbot.waitUntil(lambda: first.window.alerts[alert.id].acked, timeout=10_000)
        first.stop()

        second = start_app(demo("h100-a"))
        shown: list[Any] = []
        second.tray.notifier.notified.connect(shown.append)
        # The previous run's alert is back, acknowledged, before any new data judges it.
        qtbot.waitUntil(lambda: bool(_throttle(second)), timeout=30_000)
        assert _throttle(second)[0].acked
        wait_streaming(qtbot, second)
        # The scenario throttles again from the start: long enough for a second firing, a
        # second post or a second run of the action to have shown up.
        qtbot.wait(15_000)
        assert len(_throttle(second)) == 1 and _throttle(second)[0].acked
        assert firing_posts(bodies) == 1
        assert ran.read_text().splitlines() == ["ran"]
        assert not [n for n in shown if "thermal" in str(getattr(n, "title", "")).lower()]
    finally:
        forget_webhook_url(name)
