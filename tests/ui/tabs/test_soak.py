"""Thousands of repaints of every tab: a Qt/pyqtgraph reference-count regression (PySide6
6.12's "Fatal Python error: bool_dealloc" after a few hundred repaints, pinned out in
pyproject.toml) must kill this test in CI, not a user's app."""

from __future__ import annotations

import time

import pytest
from gpufleet.core.fleet.demo import demo_hosts
from gpufleet.ui.app import make_qapp
from gpufleet.ui.offscreen.screenshots import build_window, prefill
from pytestqt.qtbot import QtBot

REPAINTS = 1200


@pytest.mark.slow
def test_thousands_of_repaints_of_every_tab(qtbot: QtBot) -> None:
    hosts = [h for h in demo_hosts() if h.name in ("h100-a", "4090-x2")]
    now = time.time()
    live, rules, n = prefill(hosts, 300.0, now)
    assert n > 600
    w = build_window(hosts, live, rules, (640, 440), now)
    qtbot.addWidget(w)
    app = make_qapp()
    painted = 0
    for i in range(REPAINTS):
        # New data and a moved crosshair on every tenth paint (setData churns the items'
        # Python objects); the paints in between redraw the same items.
        if i % 10 == 0:
            w.tabs.setCurrentIndex((i // 10) % len(w.tab_list))
            if i % 60 == 0:
                w.select_host(hosts[(i // 60) % len(hosts)].name)
                w.update_summaries()
            w.redraw()
            ch = getattr(w.current_tab(), "crosshair", None)
            if ch is not None:
                ch.show_at(now - 10 - i % 200)
        tab = w.current_tab()
        # A synchronous paint of every plot item (or table cell) of the visible tab.
        view = getattr(tab, "glw", None) or getattr(tab, "table", None)
        assert view is not None
        view.viewport().repaint()
        painted += 1
        if i % 100 == 0:
            app.processEvents()
    assert painted == REPAINTS
    w.close()
