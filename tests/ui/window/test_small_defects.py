"""The small things a user notices: sentences that read as bugs ("SM clocks 1410–1410 MHz",
"0 °C below its slowdown point", "uses the most memory: 0.0 of 80 GiB"), raw reason ids in
the read-out, "1 hosts", a crosshair that stays after the pointer left."""

from __future__ import annotations

import time

import numpy as np
from gpufleet.core.config.hostconfig import HostConfig
from gpufleet.core.live.buffers import LiveBuffers
from gpufleet.core.model.stats import HubStats
from gpufleet.ui.app import make_qapp, setup_theme
from gpufleet.ui.tabs.clocks import _readout_line
from gpufleet.ui.tabs.sentences import clocks_sentence, memory_sentence, thermal_sentence
from gpufleet.ui.window.main_window import MainWindow
from PySide6.QtCore import QCoreApplication, QEvent
from pytestqt.qtbot import QtBot


def test_sentences_that_used_to_read_as_bugs() -> None:
    flat = {0: np.full(10, 1410.0), 1: np.full(10, 1410.0)}
    zero = {0: np.zeros(10), 1: np.zeros(10)}
    text = clocks_sentence([0, 1], flat, zero, {}, {0: 1410.0, 1: 1410.0}, 1.0)
    assert "1410–1410" not in text and "steady at 1410 MHz" in text
    at_slowdown = thermal_sentence(
        [0], {0: np.array([86.8, 87.2])}, {0: 87.0}, {0: np.array([300.0])}, {}, {}
    )
    assert "0 °C" not in at_slowdown and "right at its slowdown point" in at_slowdown
    empty = memory_sentence(
        [0, 1], {0: np.zeros(3), 1: np.zeros(3)}, {0: 80 * 2**30, 1: 80 * 2**30}
    )
    assert "0.0 of" not in empty and "all 80 GiB" in empty


def test_readout_says_reasons_in_words() -> None:
    values = {"sm_clock_mhz": 1620.0, "temp_gpu_c": 87.0, "pstate": 0.0, "clock_reasons": 0x68}
    line = _readout_line(5, values.get)
    assert "hw_slowdown" not in line and "sw_thermal" not in line
    assert "HW slowdown" in line and "SW thermal" in line and "HW thermal" in line


def test_one_host_and_a_crosshair_that_leaves(qtbot: QtBot) -> None:
    theme = setup_theme(make_qapp())
    w = MainWindow(LiveBuffers(), [HostConfig(name="solo")], theme, remember=False)
    qtbot.addWidget(w)
    w._timer.stop()
    w.show()
    w.update_summaries()
    w.on_stats(HubStats(3.0, 0, None, 0, 0))
    assert "1 host " in w.status_label.text() + " " and "1 hosts" not in w.status_label.text()
    assert "1 hosts" not in w.panel.title.text() and "1 host" in w.panel.title.text()
    w.select_tab("clocks")
    ch = w.clocks.crosshair
    ch.show_at(time.time() - 60)
    assert ch.text.isVisible() or ch.t is not None
    view = w.clocks.glw
    QCoreApplication.sendEvent(view.viewport(), QEvent(QEvent.Type.Leave))
    assert ch.t is None and not ch.text.isVisible()
    assert not any(p.vline.isVisible() for p in ch.plots)
    w.close()
