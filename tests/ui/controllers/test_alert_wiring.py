"""The running app acts on its alerts and obeys its settings
(gpufleet.ui.controllers.alert_wiring), with real parts: the demo fleet's sim daemons, the rule
engine, a real local HTTP server for the webhook, real shell commands for the actions, the real
keyring (under tools/run-tests).

- a webhook configured in the settings receives a demo alert when it fires in the app;
- rule actions: a dry run is logged and does nothing, a real local and a real remote one run
  after their grace period, one cancelled from the alert list's menu never runs;
- the alert list's menu acknowledges and snoozes an alert;
- theme, retention and notification rate limits from the settings take effect.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from gpufleet.core.alerts.actions import CANCELLED, DRY_RUN, RAN
from gpufleet.core.config import paths
from gpufleet.core.config.hostconfig import HostConfig
from gpufleet.core.config.settings import Settings, WebhookSetting, save_settings, store_webhook_url
from gpufleet.ui.app import App, make_qapp, setup_theme
from gpufleet.ui.dialogs.settings import apply_live
from pytestqt.qtbot import QtBot

from tests.support.ui_helpers import demo, wait_streaming
from tests.support.webhook_sink import WebhookSink


def _write_rules(text: str) -> None:
    f = paths.rules_file()
    f.parent.mkdir(parents=True, exist_ok=True)
    f.write_text(text, encoding="utf-8")


def _firing(app: App, rule_id: str) -> list[Any]:
    return [a for a in app.window.alerts.values() if a.rule_id == rule_id]


def _audit() -> list[dict[str, Any]]:
    f = paths.audit_file(True)
    if not f.exists():
        return []
    return [json.loads(line) for line in f.read_text("utf-8").splitlines() if line.strip()]


def _menu_action(menu: Any, starts: str) -> Any:
    for act in menu.actions():
        if act.text().startswith(starts):
            return act
        sub = act.menu()
        if sub is not None:
            found = _menu_action(sub, starts)
            if found is not None:
                return found
    return None


def test_settings_webhook_gets_the_demo_alert(
    qtbot: QtBot,
    start_app: Callable[[list[HostConfig]], App],
    webhook_sink: WebhookSink,
    secret_service: None,
) -> None:
    url, bodies = webhook_sink.url, webhook_sink.bodies
    name = f"test-hook-{os.getpid()}"
    store_webhook_url(name, url)
    try:
        save_settings(Settings(webhooks=(WebhookSetting(name, "json", "warning"),)))
        # No rule names the webhook: a webhook from the settings gets every alert.
        _write_rules("[rules.thermal_throttle]\nfor_s = 2\nclear_for_s = 2\n")
        app = start_app(demo("h100-a"))
        qtbot.waitUntil(lambda: app.pipeline.alerting.subscribed == {name}, timeout=30_000)
        qtbot.waitUntil(
            lambda: any(b["alert"]["rule_id"] == "thermal_throttle" for b in bodies),
            timeout=90_000,
        )
        body = next(b for b in bodies if b["alert"]["rule_id"] == "thermal_throttle")
        assert body["alert"]["host"] == "h100-a" and body["alert"]["state"] == "firing"
        assert body["title"] and body["text"]
    finally:
        from gpufleet.core.config.settings import forget_webhook_url

        forget_webhook_url(name)


def test_rule_actions_dry_run_real_and_cancelled(
    qtbot: QtBot, start_app: Callable[[list[HostConfig]], App], tmp_path: Path
) -> None:
    out = tmp_path / "out"
    out.mkdir()
    _write_rules(
        f"""
[rules.thermal_throttle]
for_s = 2
clear_for_s = 600
actions = [
  {{ type = "local", command = "touch {out}/dry", grace_s = 0.5, dry_run = true }},
  {{ type = "local", command = "echo $GPUFLEET_ALERT_RULE > {out}/local", grace_s = 1 }},
  {{ type = "remote", command = "touch {out}/remote", grace_s = 1 }},
  {{ type = "local", command = "touch {out}/cancelled", grace_s = 600 }},
]
"""
    )
    app = start_app(demo("h100-a"))
    w, wiring = app.window, app.alert_wiring
    wait_streaming(qtbot, app)
    qtbot.waitUntil(lambda: bool(_firing(app, "thermal_throttle")), timeout=90_000)
    alert = _firing(app, "thermal_throttle")[0]
    # The slow one waits for the user: cancel it from the alert's context menu.
    qtbot.waitUntil(lambda: bool(wiring.pending_for(alert.id)), timeout=10_000)
    slow = [r for r in wiring.pending_for(alert.id) if r.spec.grace_s == 600]
    assert len(slow) == 1
    w.update_summaries()
    assert "command pending" in w.panel.alert_rows()[0][1]
    menu = wiring.alert_menu(alert)
    act = next(a for a in menu.actions() if a.text().endswith("/cancelled”"))
    assert act.text().startswith("Cancel the local command")
    act.trigger()
    qtbot.waitUntil(
        lambda: (r := wiring.runner.get(slow[0].id)) is not None and r.state == CANCELLED,
        timeout=10_000,
    )
    qtbot.waitUntil(lambda: (out / "local").exists() and (out / "remote").exists(), timeout=30_000)
    assert (out / "local").read_text().strip() == "thermal_throttle"
    qtbot.waitUntil(lambda: len(_audit()) >= 4, timeout=10_000)
    by_cmd = {e["command"].split("/")[-1]: e for e in _audit() if e.get("kind") == "action"}
    assert by_cmd["dry"]["result"] == DRY_RUN
    assert by_cmd["local"]["result"] == RAN and by_cmd["remote"]["result"] == RAN
    assert by_cmd["cancelled"]["result"] == CANCELLED
    assert not (out / "dry").exists() and not (out / "cancelled").exists()


def test_alert_menu_acknowledges_and_snoozes(
    qtbot: QtBot, start_app: Callable[[list[HostConfig]], App], fast_rules: Path
) -> None:
    app = start_app(demo("h100-a"))
    w, wiring = app.window, app.alert_wiring
    qtbot.waitUntil(lambda: bool(_firing(app, "thermal_throttle")), timeout=90_000)
    alert = _firing(app, "thermal_throttle")[0]
    _menu_action(wiring.alert_menu(alert), "Acknowledge").trigger()
    qtbot.waitUntil(lambda: w.alerts[alert.id].acked, timeout=10_000)
    acked = w.alerts[alert.id]
    assert not _menu_action(wiring.alert_menu(acked), "Acknowledge").isEnabled()
    _menu_action(wiring.alert_menu(acked), "for 8 hour").trigger()
    qtbot.waitUntil(lambda: w.alerts[alert.id].snoozed_until is not None, timeout=10_000)
    w.update_summaries()
    text = next(line for _a, line in w.panel.alert_rows() if "acknowledged" in line)
    assert "snoozed until" in text


def test_theme_retention_and_rate_limits_from_the_settings(
    qtbot: QtBot, start_app: Callable[[list[HostConfig]], App], monkeypatch: pytest.MonkeyPatch
) -> None:
    save_settings(
        Settings(
            theme="light",
            retention_raw_days=3,
            retention_rollup_days=30,
            notify_repeat_min=2.5,
            notify_max_per_min=12,
        )
    )
    app = start_app(demo("a100-train"))
    assert app.store is not None
    assert (app.store.retention_raw_days, app.store.retention_rollup_days) == (3.0, 30.0)
    n = app.tray.notifier
    assert (n.per_key_s, n.burst) == (150.0, 12)
    apply_live(app.window, Settings(notify_repeat_min=1.0, notify_max_per_min=2))
    assert (n.per_key_s, n.burst) == (60.0, 2)
    # The theme: the saved choice over the system's (GPUFLEET_THEME, the tests' own
    # override, is lifted here).
    monkeypatch.delenv("GPUFLEET_THEME", raising=False)
    qapp = make_qapp()
    theme = setup_theme(qapp)
    assert not theme.dark and qapp.palette().window().color().lightness() >= 128
    save_settings(Settings(theme="dark"))
    theme = setup_theme(qapp)
    assert theme.dark and qapp.palette().window().color().lightness() < 128
