"""The tray's notifications at start-up: a burst of alerts gives the critical and throttling
ones first, within the per-minute budget, and the rest as one "N more" summary that arrives by
itself once the minute has room (it waited for a later alert before)."""

from __future__ import annotations

from typing import Any

import pytest
from gpufleet.core.model.alert import Alert
from gpufleet.ui.desktop import tray
from gpufleet.ui.desktop.tray import Notifier
from pytestqt.qtbot import QtBot


def alert(i: int, rule: str, severity: str) -> Alert:
    return Alert(
        id=f"h{i}:{rule}",
        rule_id=rule,
        severity=severity,
        host=f"host-{i}",
        gpu=i % 8,
        state="firing",
        started_t=1000.0 + i,
        ended_t=None,
        evidence={},
        condition=rule,
    )


def test_burst_orders_by_severity_and_the_summary_comes_by_itself(
    qtbot: QtBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tray, "BURST_WINDOW_S", 2.0)  # the budget's window: a minute
    clock = [0.0]
    n = Notifier(clock=lambda: clock[0])
    n.set_limits(10.0, 3)
    shown: list[Any] = []
    n.notified.connect(shown.append)
    burst = [
        alert(1, "idle_billed", "warning"),
        alert(2, "mem_unaccounted", "warning"),
        alert(3, "thermal_throttle", "warning"),
        alert(4, "gpu_lost", "critical"),
        alert(5, "foreign_process", "warning"),
    ]
    n.on_alerts_changed(burst)
    # critical, throttling, then the other warnings newest first
    assert [x.alert.rule_id for x in shown] == ["gpu_lost", "thermal_throttle", "foreign_process"]
    assert all(x.host in x.title for x in shown)  # every notification names its host
    # The minute is full: the summary of the other two waits for room, then comes alone.
    clock[0] = 2.5
    qtbot.waitUntil(lambda: len(shown) == 4, timeout=10_000)
    assert "2 more alerts" in shown[3].body
