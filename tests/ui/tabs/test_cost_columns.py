"""The Cost tab's table in a laptop-wide window: every column inside the table (the Billing
column, with the watchdog's state, ran past the right edge at 1366×768 and showed "runi"),
every figure whole, and a Billing text too long for its column whole in its tooltip.

The window is the real one on the demo fleet's real sampler loop, on Qt offscreen; one host's
hello says its watchdog is armed and an event says it can no longer act (the longest text
the column shows for a running host).
"""

from __future__ import annotations

import time
from typing import Any

import pytest
from gpufleet.core.fleet.demo import demo_hosts
from gpufleet.core.wire.messages import parse_object
from gpufleet.ui.offscreen.screenshots import build_window, prefill
from gpufleet.ui.tabs.cost import TOTAL_HEADERS, two_lines
from gpufleet.ui.widgets.fast_table import PAD
from PySide6.QtCore import Qt
from PySide6.QtGui import QFontMetrics
from pytestqt.qtbot import QtBot

BILLING = len(TOTAL_HEADERS) - 1


def _watchdog_cannot_act(live: Any, host: str, now: float) -> None:
    hello = live.hello(host)
    raw = dict(hello.raw, watchdog={"armed": True, "phase": "watching", "action": "provider",
               "ready": {"ok": True, "reason": "key accepted", "t": now - 60}})  # fmt: skip
    live.feed(host, parse_object(raw))
    ev = {"kind": "event", "seq": 10**9, "t": now, "type": "watchdog", "gpu": None,
          "code": None, "message": "the action can no longer run: HTTP 410", "phase": "watching",
          "ready": False, "outcome": "HTTP 410"}  # fmt: skip
    live.feed(host, parse_object(ev, live.hello(host)))


@pytest.mark.parametrize("size", [(1366, 768), (1280, 720)])
def test_every_cost_column_is_inside_the_table(qtbot: QtBot, size: tuple[int, int]) -> None:
    hosts = demo_hosts()
    priced = [h for h in hosts if h.price_per_hour]
    now = time.time()
    live, rules, _ = prefill(hosts, 120.0, now)
    _watchdog_cannot_act(live, "a100-eval", now)
    w = build_window(hosts, live, rules, size, now)
    qtbot.addWidget(w)
    w.set_range(1800.0)
    w.select_tab("cost")
    tab = w.current_tab()
    qtbot.waitUntil(lambda: (w.redraw(), tab.model.rowCount() == len(priced))[1], timeout=20_000)
    for _ in range(3):
        qtbot.wait(1)
        w.redraw()
    t = tab.table
    widths = [t.columnWidth(c) for c in range(len(TOTAL_HEADERS))]
    assert sum(widths) <= t.viewport().width(), (widths, t.viewport().width())
    assert t.horizontalScrollBar().maximum() == 0
    fm = QFontMetrics(t.font())

    def whole(text: str, c: int) -> bool:  # as the view draws it (FastTableView._render)
        return fm.elidedText(text, Qt.TextElideMode.ElideRight, widths[c] - 2 * PAD) == text

    for row in tab.model.rows:
        for c, cell in enumerate(row[:BILLING]):
            assert whole(cell.text, c), (c, cell.text, widths[c])
    billing = [row[BILLING] for row in tab.model.rows]
    assert whole("running · watchdog armed", BILLING), widths
    long = next(c for c in billing if "cannot act" in c.text)
    assert long.text == "running · watchdog armed but cannot act"
    assert (long.tooltip or "").startswith(long.text + "\n")


def test_a_header_of_several_words_goes_on_two_lines_near_its_middle() -> None:
    assert two_lines("Since billing start") == "Since billing\nstart"
    assert two_lines("of which idle") == "of which\nidle"
    assert two_lines("Next 24 h") == "Next\n24 h"
    assert two_lines("Host") == "Host"
    assert two_lines("开始计费以来") == "开始计费以来"
