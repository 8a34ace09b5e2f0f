"""Every tab populates from the demo fleet; the thermal scenario draws its throttle band and
raises a throttling notification (real Fleet, sampler daemons, rules, Qt offscreen)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
from gpufleet.core.config.hostconfig import HostConfig
from gpufleet.ui.app import App
from gpufleet.ui.desktop.tray import Notification
from gpufleet.ui.tabs.thermal import ThermalTab
from gpufleet.ui.window.main_window import TAB_NAMES
from pytestqt.qtbot import QtBot

from tests.support.ui_helpers import demo, wait_streaming


def test_every_tab_populates_and_the_throttle_band_and_notification_appear(
    qtbot: QtBot, start_app: Callable[[list[HostConfig]], App], fast_rules: Path
) -> None:
    notes: list[Notification] = []
    app = start_app(demo("h100-a", "4090-x2"))
    app.tray.notifier.notified.connect(notes.append)
    w = app.window
    wait_streaming(qtbot, app)
    w.select_host("h100-a")
    for i, name in enumerate(TAB_NAMES):
        w.tabs.setCurrentIndex(i)
        qtbot.waitUntil(lambda: w.current_tab().populated, timeout=30_000)
        assert w.redrawn is not None and TAB_NAMES[w.tabs.currentIndex()] == name
        if w.current_tab() is w.overview:
            # A host that streams but has not sent its first sample yet has one placeholder
            # row; wait (while the Overview is the visible, refreshed tab) for both hosts' GPUs.
            qtbot.waitUntil(lambda: w.overview.model.rowCount() == 10, timeout=30_000)
    # Overview: one row per GPU of both hosts (8 + 2).
    assert w.overview.model.rowCount() == 10
    # Memory tab: the sim's training process is listed.
    assert w.memory.model.rowCount() >= 1
    # Clocks: GPU 5's airflow is blocked; its row of the reason bands turns thermal-red.
    w.select_tab("clocks")
    qtbot.waitUntil(lambda: w.clocks.bands.any_band, timeout=30_000)
    img = w.clocks.bands.image.image
    assert img is not None
    rows_with_band = {int(r) // 4 for r in np.nonzero(img[..., 3].any(axis=1))[0]}
    assert rows_with_band == {5}, rows_with_band
    # The sentence under the plots names it (recomputed every 2 s).
    qtbot.waitUntil(lambda: "GPU 5" in w.clocks.sentence.text(), timeout=10_000)
    # The rule fires (for_s shortened by the user rules file) and the notifier speaks.
    qtbot.waitUntil(
        lambda: any(n.host == "h100-a" and "thermal" in n.title.lower() for n in notes),
        timeout=30_000,
    )
    # The 4090 reports no memory temperature: said in words, not drawn as a flat 0.
    w.select_host("4090-x2")
    w.select_tab("thermal")
    w.redraw()
    thermal = w.tab_list[2]
    assert isinstance(thermal, ThermalTab)
    assert "not reported" in thermal.temp.plot.titleLabel.text
