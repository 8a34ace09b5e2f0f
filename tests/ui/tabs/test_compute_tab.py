"""The Compute tab, the Overview's SM-active column and the GPU cards on the demo fleet's
simulated data (real sampler sim loop, real live buffers, Qt offscreen): the H100 host shows
SM active, occupancy, tensor and DRAM activity; the A100 and the 4090 hosts get the one line
saying GPM is not available and the power-draw stand-in instead of empty plots."""

from __future__ import annotations

import time

import numpy as np
from gpufleet.core.fleet.demo import demo_hosts
from gpufleet.ui.offscreen.screenshots import build_window, prefill
from gpufleet.ui.tabs.compute import ComputeTab
from gpufleet.ui.window.main_window import MainWindow
from PySide6.QtCore import QCoreApplication, Qt
from pytestqt.qtbot import QtBot

HOSTS = ("h100-a", "a100-train", "4090-x2")


def _window(qtbot: QtBot) -> MainWindow:
    hosts = [h for h in demo_hosts() if h.name in HOSTS]
    now = time.time()
    live, rules, _ = prefill(hosts, 420.0, now)
    w = build_window(hosts, live, rules, (1400, 900), now)
    qtbot.addWidget(w)
    w.set_range(300.0)
    return w


def _show(w: MainWindow, host: str) -> ComputeTab:
    w.select_host(host)
    w.select_tab("compute")
    tab = w.current_tab()
    assert isinstance(tab, ComputeTab)
    tab.invalidate()
    tab._sentence_key = None  # the sentence at once, not within 2 s
    w.redraw()
    QCoreApplication.processEvents()
    return tab


def _finite_curves(tab: ComputeTab, plot: object) -> int:
    n = 0
    for key, c in plot.curves.items():  # type: ignore[attr-defined]
        if key[0] == "main":
            _x, y = c.getData()
            n += int(y is not None and np.isfinite(y).any())
    return n


def test_h100_shows_gpm_and_a100_and_4090_the_not_available_line(qtbot: QtBot) -> None:
    w = _window(qtbot)
    tab = _show(w, "h100-a")
    assert tab.populated and not tab.gpm_note.isVisibleTo(tab)
    assert tab.pipes.plot.isVisible() and tab.dram.plot.isVisible()
    assert _finite_curves(tab, tab.act) == 8 and _finite_curves(tab, tab.pipes) == 8
    assert _finite_curves(tab, tab.dram) == 8 and _finite_curves(tab, tab.fp) == 8
    text = tab.sentence.text()
    assert "SM active" in text and "tensor" in text and "a quarter of the GPU" in text
    # The crosshair reads every GPM metric at a moment.
    line = tab.readout(time.time() - 100)
    assert "SM 7" in line and "tensor" in line and "FP64/32/16 0/" in line, line
    assert "FP32 pipes were busy" in text

    for host in ("a100-train", "4090-x2"):
        tab = _show(w, host)
        assert tab.gpm_note.isVisibleTo(tab), host
        assert "not available on this GPU" in tab.gpm_note.text()
        assert "Hopper" in tab.gpm_note.text() and "Power draw" in tab.gpm_note.text()
        # No empty plots: the GPM-only ones are gone, the stand-in is drawn.
        assert not tab.pipes.plot.isVisible() and not tab.dram.plot.isVisible()
        assert not tab.fp.plot.isVisible()
        assert _finite_curves(tab, tab.act) == len(w.live.gpus(host))
        assert "power limit" in tab.sentence.text()
        assert "of limit" in tab.readout(time.time() - 100)
    # Back to the H100: the GPM plots return.
    tab = _show(w, "h100-a")
    assert tab.pipes.plot.isVisible() and not tab.gpm_note.isVisibleTo(tab)


def test_overview_column_and_cards_show_sm_active_where_reported(qtbot: QtBot) -> None:
    w = _window(qtbot)
    w.select_tab("overview")
    w.update_summaries()
    w.redraw(force=True)
    QCoreApplication.processEvents()
    m = w.overview.model
    headers = [m.headerData(i, Qt.Orientation.Horizontal) for i in range(m.columnCount())]
    col = headers.index("SM active")
    by_host: dict[str, list[str]] = {}
    for r in range(m.rowCount()):
        by_host.setdefault(m.cell(r, 1).text, []).append(m.cell(r, col).text)
    assert all(v.endswith("%") for v in by_host["h100-a"]) and len(by_host["h100-a"]) == 8
    assert set(by_host["a100-train"]) == {"—"} and set(by_host["4090-x2"]) == {"—"}
    w.select_host("h100-a")
    w.update_summaries()
    QCoreApplication.processEvents()
    assert "SM act" in w.panel.cards[0].label.text()
    w.select_host("a100-train")
    w.update_summaries()
    QCoreApplication.processEvents()
    assert "SM act" not in w.panel.cards[0].label.text()
