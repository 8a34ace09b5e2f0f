""" "Open" on the miner alert opens the Memory & processes tab with the miner's process row
selected, ready for Kill…, on the real demo app as it opens: the alert fired in the
prefilled half hour, whose simulated miner had another PID than the live one now on the GPU,
so the row is found by the process's name on that GPU when its PID is gone."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
from gpufleet.ui.app import App
from gpufleet.ui.window.fleet_panel import ALERT_ROLE
from pytestqt.qtbot import QtBot

from tests.support.ui_helpers import prefilled_demo_app


@pytest.fixture
def app(qtbot: QtBot, monkeypatch: pytest.MonkeyPatch) -> Iterator[App]:
    a = prefilled_demo_app(qtbot, monkeypatch, "a100-shared")
    yield a
    a.stop()


def test_open_on_the_miner_alert_selects_its_process(qtbot: QtBot, app: App) -> None:
    started = time.time()
    app.start()
    app.window.show()

    def miner() -> object:
        return next((a for a in app.window.alerts.values() if a.rule_id == "miner_process"), None)

    qtbot.waitUntil(lambda: miner() is not None, timeout=90_000)
    # The live process list (the live sampler's, after the prefill).
    qtbot.waitUntil(
        lambda: (p := app.live.procs("a100-shared")) is not None and p.t > started, timeout=60_000
    )
    alert = miner()
    app.window.update_summaries()
    panel = app.window.panel
    rows = [
        i for i in range(panel.alerts.count()) if panel.alerts.item(i).data(ALERT_ROLE) is alert
    ]
    panel.alerts.setCurrentRow(rows[0])
    panel.open_alert_btn.click()
    assert app.window.tabs.currentWidget() is app.window.memory
    qtbot.waitUntil(lambda: app.window.memory.selected_proc() is not None, timeout=10_000)
    host, proc = app.window.memory.selected_proc()  # type: ignore[misc]
    assert host == "a100-shared" and proc.name == "xmrig"
    assert proc.gpu == alert.gpu  # type: ignore[attr-defined]
