""" "Compare…" from the Hosts menu: the picker's "this hour vs the same hour yesterday" reads
two windows of the history off the GUI thread and shows the view, whose verdict, causes and
six plots all fit 1366x768 without scrolling; the picker's presets give the right windows."""

from __future__ import annotations

import time

import pytest
from gpufleet.core.config import paths
from gpufleet.core.config.hostconfig import HostConfig
from gpufleet.core.history.store import Store
from gpufleet.core.live.buffers import LiveBuffers
from gpufleet.core.wire.messages import StreamDecoder
from gpufleet.ui.app import make_qapp, setup_theme
from gpufleet.ui.controllers import compare_open
from gpufleet.ui.controllers.compare_open import CompareOpener
from gpufleet.ui.dialogs.compare_pick import DAY, HOUR, ComparePicker
from gpufleet.ui.window.main_window import MainWindow
from PySide6.QtCore import QRect
from pytestqt.qtbot import QtBot

from tests.support import compare_streams as cs

HOST = "h100-a"


def _record(store: Store, run: cs.Run) -> None:
    dec = StreamDecoder()
    for line in cs.lines(run):
        m = dec.feed(line)
        if m is not None:
            store.write(HOST, m)


def test_the_picker_presets(qtbot: QtBot) -> None:
    make_qapp()
    p = ComparePicker([HOST, "other"], HOST)
    qtbot.addWidget(p)
    now = 1_800_000_000.0
    p.preset(DAY, now)
    a, b = p.specs()
    assert (a.host, b.host) == (HOST, HOST)
    assert (b.t0, b.t1) == (now - HOUR, now)
    assert (a.t0, a.t1) == (now - HOUR - DAY, now - DAY)
    p.preset(HOUR, now)
    assert p.specs()[0].t1 == now - HOUR


def test_compare_from_the_hosts_menu_fits_the_screen(
    qtbot: QtBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    now = time.time()
    with Store(paths.history_file(demo=True)) as st:
        _record(st, cs.Run(seconds=1500, seed=1, t0=now - DAY - 1600))
        _record(st, cs.Run(seconds=1500, seed=2, t0=now - 1600, effects=[cs.thermal((1,))]))
    theme = setup_theme(make_qapp())
    w = MainWindow(
        LiveBuffers(window_s=600), [HostConfig(name=HOST)], theme, demo=True, remember=False
    )
    qtbot.addWidget(w)
    w._timer.stop()
    w.resize(1366, 768)
    w.show()
    opener = CompareOpener(w, demo=True)
    assert opener.action in w.menu_hosts.actions()
    assert opener.action in w.panel.table.actions()
    # The user accepts the picker as it opens: this hour against the same hour yesterday.
    monkeypatch.setattr(compare_open.ComparePicker, "exec", lambda self: 1)
    opener.action.trigger()
    qtbot.waitUntil(lambda: bool(opener.views), timeout=60_000)
    view = opener.views[-1]
    qtbot.waitExposed(view)
    assert view.cmp.verdict == "platform"
    assert view.cmp.causes[0].cause == "thermal" and view.cmp.causes[0].gpus == (1,)
    assert view.current_gpu() == 1
    assert (view.width(), view.height()) == (1366, 768)
    frame = QRect(0, 0, 1366, 768)
    assert frame.contains(view.head.geometry()) and "thermal" in view.head.text()
    for plot in view.plots:
        r = QRect(plot.mapTo(view, plot.rect().topLeft()), plot.size())
        assert frame.contains(r), r
        assert r.height() >= 100 and r.width() >= 400
    assert all(len(p.listDataItems()) >= 2 for p in view.plots)  # A and B on every plot
    view.close()
