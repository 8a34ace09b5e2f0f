"""What the pipeline counted reaches the status bar: history write errors (with the latest
reason on hover), events the flood limit kept out of history, and batches a stage failed on.
Fed from a real store that failed a write and rate-limited a flood."""

from __future__ import annotations

from pathlib import Path

from gpufleet.core.history.store import Store
from gpufleet.core.live.buffers import LiveBuffers
from gpufleet.core.model.stats import HubStats
from gpufleet.ui.app import make_qapp, setup_theme
from gpufleet.ui.window.main_window import MainWindow
from pytestqt.qtbot import QtBot


def test_store_failures_and_floods_show_in_the_status_bar(qtbot: QtBot, tmp_path: Path) -> None:
    w = MainWindow(LiveBuffers(window_s=60), [], setup_theme(make_qapp()), demo=True)
    qtbot.addWidget(w)
    w.on_stats(HubStats(8.0, 100, 1 << 20, 0, 0))
    quiet = w.stats_text
    assert "error" not in quiet and "flood" not in quiet
    with Store(tmp_path / "history.sqlite") as store:
        store.errors, store.last_error = 2, "database or disk is full"
        store.rate_limited["h100-a"] = 40
        limited = sum(store.rate_limited.values())
        w.on_stats(HubStats(8.0, 100, 1 << 20, 0, 1, store.errors, store.last_error, limited))
    assert "2 history write errors" in w.stats_text
    assert "40 events not recorded (flood limit)" in w.stats_text
    assert "1 failed batches" in w.stats_text
    assert w.status_label.toolTip() == "database or disk is full"
