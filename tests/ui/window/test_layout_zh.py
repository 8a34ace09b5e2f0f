"""The Overview in Chinese on a laptop screen: at 1366×768, with the zh_CN translator and the
font a zh_CN desktop gives Qt (Noto Sans CJK SC, whose average character is about twice
DejaVu's), every column is inside the table and every price whole; Why gives way, its cut
text whole in its tooltip. Before, Why's floor of 14 average characters pushed the Price
column past the right edge.

The window is the real one on the demo fleet's real sampler loop, on Qt offscreen.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
from gpufleet.core.fleet.demo import demo_hosts
from gpufleet.ui import i18n
from gpufleet.ui.offscreen.screenshots import build_window, prefill
from gpufleet.ui.tabs import overview as ov
from gpufleet.ui.widgets.fast_table import PAD
from PySide6.QtCore import QLocale, Qt
from PySide6.QtGui import QFont, QFontDatabase, QFontMetrics
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

CJK = "Noto Sans CJK SC"


@pytest.fixture
def chinese_desktop(qapp: QApplication) -> Iterator[None]:
    if CJK not in QFontDatabase.families():
        pytest.skip(f"{CJK} is not installed (fonts-noto-cjk)")
    before_locale, before_font = QLocale(), qapp.font()
    assert i18n.install(qapp, "zh_CN") == "zh_CN"
    font = QFont(before_font)
    font.setFamily(CJK)
    qapp.setFont(font)
    try:
        yield
    finally:
        qapp.setFont(before_font)
        i18n.install(qapp, "en")  # the other tests read English
        QLocale.setDefault(before_locale)


def test_the_chinese_overview_keeps_every_price_inside(qtbot: QtBot, chinese_desktop: None) -> None:
    hosts = demo_hosts()
    now = time.time()
    live, rules, _ = prefill(hosts, 300.0, now)
    w = build_window(hosts, live, rules, (1366, 768), now)
    qtbot.addWidget(w)
    w.select_tab("overview")
    tab = w.overview
    qtbot.waitUntil(lambda: (w.update_summaries(), w.redraw(), tab.populated)[2], timeout=20_000)
    for _ in range(3):
        qtbot.wait(1)
        w.update_summaries()
        w.redraw()
    t = tab.table
    widths = [t.columnWidth(c) for c in range(len(ov.HEADERS))]
    assert sum(widths) <= t.viewport().width(), (widths, t.viewport().width())
    price = ov.HEADERS.index("Price")
    fm = QFontMetrics(t.font())
    prices = [r[price].text for r in tab.model.rows]
    assert prices and all(p.startswith("$") for p in prices)
    for p in prices:
        assert fm.elidedText(p, Qt.TextElideMode.ElideRight, widths[price] - 2 * PAD) == p
    assert widths[ov.WHY] >= t.header_width(ov.WHY, sort_arrow=False)
    cut = [r[ov.WHY] for r in tab.model.rows if r[ov.WHY].text]
    assert cut and all(c.tooltip == c.text for c in cut)
