"""The Thermal tab's reference labels stay clear of each other and of the other reference
lines: on the demo's RTX 4090s the slowdown (89 °C) and shutdown (92 °C) points are ~15 px
apart in a laptop-sized plot, and with both labels above their lines the shutdown line ran
through the slowdown label; the slowdown label goes under its line. On the H100 (memory
limit 95 °C too) the same holds for all three.

The window is the real one on half an hour of the host's real sampler loop (the range the
screenshot shows: its idle dips set the y scale), on Qt offscreen.
"""

from __future__ import annotations

import time
from itertools import combinations

import pytest
from gpufleet.core.fleet.demo import demo_hosts
from gpufleet.ui.offscreen.screenshots import build_window, prefill
from gpufleet.ui.tabs.thermal import ThermalTab
from PySide6.QtCore import QPointF, QRectF
from pytestqt.qtbot import QtBot


def _text_rect(item: object) -> QRectF:
    """The label's text on the scene, less its document's empty margin."""
    margin = item.textItem.document().documentMargin()  # type: ignore[attr-defined]
    rect = item.mapRectToScene(item.boundingRect())  # type: ignore[attr-defined]
    return rect.adjusted(margin, margin, -margin, -margin)


@pytest.mark.parametrize(
    ("host", "keys"), [("4090-x2", ("slow", "shut")), ("h100-a", ("slow", "shut", "mem_max"))]
)
def test_reference_labels_do_not_overlap(qtbot: QtBot, host: str, keys: tuple[str, ...]) -> None:
    hosts = demo_hosts()
    now = time.time()
    live, rules, _ = prefill([h for h in hosts if h.name == host], 1800.0, now)
    w = build_window([h for h in hosts if h.name == host], live, rules, (1366, 768), now)
    qtbot.addWidget(w)
    w.set_range(1800.0)
    w.select_host(host)
    w.select_tab("thermal")
    tab = w.current_tab()
    assert isinstance(tab, ThermalTab)
    for _ in range(3):
        qtbot.wait(1)
        w.redraw()
    w.grab()  # painted once, as a screenshot is: the labels are placed
    labels = {k: tab.temp.nominals[k].text for k in keys}
    assert all(t.isVisible() for t in labels.values()), list(labels)
    rects = {k: _text_rect(t) for k, t in labels.items()}
    for a, b in combinations(keys, 2):
        assert not rects[a].intersects(rects[b]), (a, rects[a], b, rects[b])
    t0 = w.time_range()[0]
    for k, n in tab.temp.nominals.items():
        if k not in keys or n.drawn is None:
            continue
        y = tab.temp.vb.mapViewToScene(QPointF(t0, n.drawn[0])).y()
        for other, rect in rects.items():
            if other != k:
                assert not rect.top() < y < rect.bottom(), (k, y, other, rect)


def test_the_legend_lists_the_gpus_once_not_their_memory(qtbot: QtBot) -> None:
    """The H100 host reports memory temperature: its dark curves are in the plot, not in the
    legend (16 entries took four rows over the hottest curves); one entry per GPU."""
    host = [h for h in demo_hosts() if h.name == "h100-a"]
    now = time.time()
    live, rules, _ = prefill(host, 120.0, now)
    w = build_window(host, live, rules, (1366, 768), now)
    qtbot.addWidget(w)
    w.select_tab("thermal")
    tab = w.current_tab()
    assert isinstance(tab, ThermalTab)
    w.redraw()
    assert {k for k in tab.temp.curves if k[0] == "mem"} == {("mem", g) for g in range(8)}
    assert tab.temp.legend is not None
    assert tab.temp.legend.names() == [f"GPU {g}" for g in range(8)]
