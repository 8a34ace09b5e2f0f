"""The main window on a laptop screen: at 1366×768 and 1280×720 every control is inside the
window on every tab and for every host, selecting hosts never changes the window's size, the
fleet list opens worst first, and every alert row names its host.

The window is the real one, fed with half an hour of the demo fleet's real sampler loop (as
``gpufleet screenshot`` does), on Qt offscreen.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from gpufleet.core.fleet.demo import demo_hosts
from gpufleet.ui.offscreen.screenshots import build_window, prefill
from gpufleet.ui.widgets.elided import ElidedLabel
from gpufleet.ui.widgets.theme import CRIT
from gpufleet.ui.window.main_window import TAB_NAMES, MainWindow
from PySide6.QtCore import QPoint, QRect, Qt
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractItemView,
    QApplication,
    QTabBar,
    QWidget,
)

SIZES = ((1366, 768), (1280, 720))
CONTROLS = (QAbstractButton, QTabBar, QAbstractItemView, ElidedLabel)


@pytest.fixture(scope="module")
def fed() -> Iterator[tuple[list, object, object, float]]:
    hosts = demo_hosts()
    now = time.time()
    live, rules, _ = prefill(hosts, 1800.0, now)
    yield hosts, live, rules, now


def window(fed: tuple, size: tuple[int, int]) -> MainWindow:
    hosts, live, rules, now = fed
    w = build_window(hosts, live, rules, size, now)
    w.set_range(1800.0)
    settle(w)
    return w


def settle(w: MainWindow) -> None:
    app = QApplication.instance()
    assert app is not None
    for _ in range(3):
        app.processEvents()
        w.redraw()


def off_window(w: MainWindow) -> list[str]:
    """The visible controls that are not wholly inside the window."""
    inside = QRect(QPoint(0, 0), w.size())
    bad = []
    for c in w.findChildren(QWidget):
        if not isinstance(c, CONTROLS) or not c.isVisibleTo(w) or c.width() <= 0:
            continue
        if c.window() is not w:  # menus, tooltips
            continue
        rect = QRect(c.mapTo(w, QPoint(0, 0)), c.size())
        # Clipped by a parent (a scrolled area) is fine; outside the window is not.
        parent = c.parentWidget()
        while parent is not None and parent is not w:
            rect = rect.intersected(QRect(parent.mapTo(w, QPoint(0, 0)), parent.size()))
            parent = parent.parentWidget()
        full = QRect(c.mapTo(w, QPoint(0, 0)), c.size())
        if not inside.contains(full) and not inside.contains(rect):
            bad.append(f"{type(c).__name__} {c.objectName()!r} at {full}")
        elif rect.isEmpty() and isinstance(c, QAbstractButton) and c.isVisibleTo(w):
            bad.append(f"{type(c).__name__} {getattr(c, 'text', lambda: '')()!r} hidden at {full}")
    return bad


@pytest.mark.parametrize("size", SIZES)
def test_every_control_is_on_screen_and_the_size_holds(fed: tuple, size: tuple[int, int]) -> None:
    w = window(fed, size)
    try:
        assert w.minimumSizeHint().width() <= size[0]
        assert (w.width(), w.height()) == size
        panel_width = w.panel.width()
        for name in TAB_NAMES:
            w.select_tab(name)
            for host in w.hosts:
                w.select_host(host)
                w.update_summaries()
                settle(w)
                assert (w.width(), w.height()) == size, (name, host)
                # The splitter stays where it was: a host's long texts do not move it.
                assert w.panel.width() == panel_width, (name, host)
                bad = off_window(w)
                assert not bad, (size, name, host, bad)
        # The range buttons are all reachable: as buttons, or folded into one menu.
        rs = w.range_selector
        assert rs.is_folded() or all(b.isVisibleTo(w) for b in rs.buttons)
    finally:
        w.close()


def test_worst_first_and_every_alert_row_names_its_host(fed: tuple) -> None:
    w = window(fed, SIZES[0])
    try:
        order = w.panel.host_order()
        states = {s.host: s.state for s in w.summaries}
        critical = [h for h in order if states[h] == CRIT]
        # The demo's critical hosts (the ECC/Xid machine and the one running a miner among
        # them) come first, before the warnings, the unreachable and the healthy.
        assert {"a100-ecc", "a100-shared"} <= set(critical)
        assert set(order[: len(critical)]) == set(critical)
        ranks = [w.summaries[[s.host for s in w.summaries].index(h)].order for h in order]
        assert ranks == sorted(ranks, reverse=True)
        rows = w.panel.alert_rows()
        assert len(rows) >= 5
        for alert, line in rows:
            assert alert.host in line, line
            assert "\n" not in line
        # Grouped by host (more than a handful of alerts over several hosts), worst first.
        heads = [
            w.panel.alerts.item(i).text()
            for i in range(w.panel.alerts.count())
            if w.panel.alerts.item(i).data(256) is None
        ]
        assert heads and heads[0].split(":")[0] in critical
    finally:
        w.close()


def test_a_long_status_does_not_widen_the_window(fed: tuple) -> None:
    w = window(fed, SIZES[0])
    try:
        host = "h100-a"
        w.select_host(host)
        reason = "connection refused by 2001:db8::1 port 14561 " * 6
        w.on_status(type("S", (), {"host": host, "state": "reconnecting", "reason": reason})())
        w.update_summaries()
        settle(w)
        assert w.width() == SIZES[0][0]
        assert w.host_label.is_elided() and reason.strip() in w.host_label.toolTip()
    finally:
        w.close()


def test_the_sort_and_the_splitter_are_remembered(tmp_path: Path, fed: tuple) -> None:
    from gpufleet.ui.desktop.ui_state import UiState
    from PySide6.QtCore import QSettings, Qt

    hosts, live, _rules, _now = fed
    ini = QSettings(str(tmp_path / "window.ini"), QSettings.Format.IniFormat)
    w = MainWindow(live, hosts, build_window_theme(), ui_state=UiState(ini))
    w._timer.stop()
    w.update_summaries()
    hh = w.panel.table.horizontalHeader()
    assert (hh.sortIndicatorSection(), hh.sortIndicatorOrder()) == (0, Qt.SortOrder.AscendingOrder)
    w.panel.table.sortByColumn(4, Qt.SortOrder.DescendingOrder)  # by price, as a click does
    w.close()
    ini.sync()
    again = MainWindow(live, hosts, build_window_theme(), ui_state=UiState(ini))
    again._timer.stop()
    hh = again.panel.table.horizontalHeader()
    assert (hh.sortIndicatorSection(), hh.sortIndicatorOrder()) == (
        4,
        Qt.SortOrder.DescendingOrder,
    )
    again.close()


def build_window_theme():  # type: ignore[no-untyped-def]
    from gpufleet.ui.app import make_qapp, setup_theme

    return setup_theme(make_qapp())


def test_no_gpu_is_its_own_state_with_its_own_advice(fed: tuple) -> None:
    from gpufleet.core.fleet.events import NO_GPU, HostStatus

    w = window(fed, SIZES[0])
    try:
        reason = "no NVIDIA driver on this host (NVML: Driver Not Loaded)"
        w.on_status(HostStatus("a100-train", NO_GPU, reason, time.time(), "no_gpu"))
        w.select_host("a100-train")
        w.update_summaries()
        settle(w)
        s = next(s for s in w.summaries if s.host == "a100-train")
        assert s.state == CRIT and s.reason == reason
        assert w.panel.cards_note.isVisibleTo(w)
        note = w.panel.cards_note.text()
        assert "no usable NVIDIA GPU" in note and "network" not in note
        assert "no GPU: " + reason in w.host_label.text()
    finally:
        w.close()


def test_open_a_process_alert_selects_host_tab_moment_and_process(fed: tuple) -> None:
    w = window(fed, SIZES[0])
    try:
        miner = next(a for a in w.alerts.values() if a.condition == "miner_process")
        pid = miner.evidence["values"]["processes"][0]["pid"]
        w.select_host("h100-a")
        w.open_alert(miner)
        settle(w)
        assert w.selected_host == miner.host == "a100-shared"
        assert w.current_tab() is w.memory
        assert not w.follow_live and w.custom is not None
        assert w.custom[0] < miner.started_t < w.custom[1]
        sel = w.memory.selected_proc()
        assert sel is not None and sel[1].pid == pid
    finally:
        w.close()


def test_kill_confirmation_of_an_eight_gpu_process_lists_every_gpu(fed: tuple) -> None:
    from gpufleet.ui.dialogs.kill import KillDialog
    from PySide6.QtWidgets import QLabel

    w = window(fed, SIZES[0])
    try:
        snap = w.live.procs("h100-a")
        assert snap is not None
        train = next(p for p in snap.procs if p.gpu == 0)
        dlg = KillDialog(w, "h100-a", train)
        text = " ".join(lbl.text() for lbl in dlg.findChildren(QLabel))
        assert "0, 1, 2, 3, 4, 5, 6, 7 (8 GPUs)" in text
        assert "on each GPU" in text and "in all" in text
        dlg.close()
    finally:
        w.close()


def test_screenshot_command_writes_laptop_wide_images(tmp_path: Path) -> None:
    import struct
    import subprocess
    import sys

    out = tmp_path / "shots"
    res = subprocess.run(
        [
            sys.executable,
            "-m",
            "gpufleet",
            "screenshot",
            "--size",
            "1366x768",
            "--tab",
            "clocks",
            "--minutes",
            "5",
            "--out",
            str(out),
        ],
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert res.returncode == 0, res.stderr.decode()[-2000:]
    png = (out / "clocks.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    assert struct.unpack(">II", png[16:24]) == (1366, 768)


def test_the_overview_gives_why_its_room_and_cuts_no_number_host_or_header(fed: tuple) -> None:
    """At 1366×768 the Overview's Why column gets the room the numbers leave (their headers
    need the sort arrow's room only where it is drawn) and what Model gives up down to the
    short model names; every number, host name and header stays whole, nothing runs past
    the right edge, and a Why cut short says itself whole on hover."""
    from gpufleet.ui.tabs import overview as ov

    w = window(fed, SIZES[0])
    try:
        w.select_tab("overview")
        w.update_summaries()
        settle(w)
        tab = w.overview
        t = tab.table
        avg = t.fontMetrics().averageCharWidth()
        for sort_col in (0, ov.HEADERS.index("SM active")):
            t.sortByColumn(sort_col, Qt.SortOrder.DescendingOrder)
            settle(w)
            widths = [t.columnWidth(c) for c in range(len(ov.HEADERS))]
            assert sum(widths) <= t.viewport().width(), widths
            for c, name in enumerate(ov.HEADERS):
                if c not in (ov.MODEL, ov.WHY):
                    need = t.content_width(c, ov.COLUMN_CAP.get(c), sort_arrow=c == sort_col)
                    assert widths[c] >= need, (name, widths[c], need)
            assert widths[ov.MODEL] >= tab._short_model_width()
            why = widths[ov.WHY]
            assert why >= ov.WHY_MIN_CHARS * avg
            # Short of its share, Why has all Model could give.
            assert (
                why >= ov.WHY_SHARE * t.viewport().width()
                or widths[ov.MODEL] == tab._short_model_width()
            )
        cut = [r[ov.WHY] for r in tab.model.rows if r[ov.WHY].text]
        assert cut and all(c.tooltip == c.text for c in cut)
    finally:
        w.close()


def test_range_buttons_fold_into_a_menu_on_a_narrow_window(fed: tuple) -> None:
    w = window(fed, (820, 600))
    try:
        rs = w.range_selector
        assert rs.is_folded() and not any(b.isVisibleTo(w) for b in rs.buttons)
        assert rs.folded.isVisibleTo(w) and not off_window(w)
        assert [a.text() for a in rs.menu_actions] == ["5 min", "30 min", "1 h", "6 h", "24 h"]
        rs.menu_actions[2].trigger()
        assert w.range_s == 3600.0 and rs.folded.text().startswith("1 h")
        w.resize(1600, 1000)
        settle(w)
        assert not rs.is_folded() and rs.buttons[2].isChecked()
    finally:
        w.close()


def test_an_alert_line_names_its_host_once() -> None:
    """The titles name the host ("… on GPU 2 of a100-ecc"); the one-line list puts the host
    first and does not say it again."""
    from types import SimpleNamespace

    from gpufleet.ui.window.fleet_panel import alert_line

    a = SimpleNamespace(host="a100-ecc", gpu=2, started_t=0.0)
    assert alert_line(a, "GPU 2 of a100-ecc lost", 540.0) == "a100-ecc · GPU 2 lost · 9 min"
    line = alert_line(a, "Xid 79 on GPU 2 of a100-ecc: GPU has fallen off the bus", 60.0)
    assert line == "a100-ecc · Xid 79 on GPU 2: GPU has fallen off the bus · 1 min"
    # A title that starts with the host keeps it where it is (zh_CN: "a100-ecc 的 GPU 2 掉卡").
    assert alert_line(a, "a100-ecc 的 GPU 2 掉卡", 60.0) == "a100-ecc 的 GPU 2 掉卡 · 1 min"
