"""The header follows the host selection at once, and the Interconnect tab's per-link NVLink
grid shows the crosshair's moment (the latest values otherwise). The window is fed with
simulated history of the demo's a100-ecc host in-process (the real sampler loop over the sim
backend, as ``gpufleet screenshot`` does), so 30 min of scenario take a second; Qt offscreen."""

from __future__ import annotations

import time
from collections.abc import Iterator

import numpy as np
import pytest
from gpufleet.core.config.hostconfig import HostConfig
from gpufleet.core.live.buffers import LiveBuffers
from gpufleet.ui.offscreen.screenshots import build_window, busy_link_moment, prefill
from gpufleet.ui.tabs.interconnect import InterconnectTab
from gpufleet.ui.window.main_window import MainWindow
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from tests.support.ui_helpers import demo

MINUTES = 25.0  # past the scenario's crash (21 min): traffic first, then none


@pytest.fixture(scope="module")
def fed() -> tuple[list[HostConfig], LiveBuffers, float]:
    hosts = demo("a100-ecc", "a100-eval")
    now = time.time()
    live, _rules, _n = prefill(hosts, MINUTES * 60.0, now)
    return hosts, live, now


@pytest.fixture
def window(qtbot: QtBot, fed: tuple[list[HostConfig], LiveBuffers, float]) -> Iterator[MainWindow]:
    hosts, live, now = fed
    w = build_window(hosts, live, None, (1400, 900), now)
    qtbot.addWidget(w)
    yield w
    w.close()


def test_header_names_the_selected_host_at_once(window: MainWindow) -> None:
    w = window
    w.select_host("a100-eval")
    w.update_summaries()
    assert w.host_label.text().startswith("a100-eval ")
    # No summaries tick in between: selecting a host alone must update the header.
    w.select_host("a100-ecc")
    assert w.selected_host == "a100-ecc"
    assert w.host_label.text().startswith("a100-ecc ")
    assert "4× NVIDIA A100-SXM4-80GB" in w.host_label.text()


def _per_link_tab(w: MainWindow) -> InterconnectTab:
    w.select_host("a100-ecc")
    w.select_tab("interconnect")
    tab = w.current_tab()
    assert isinstance(tab, InterconnectTab)
    w.redraw()
    tab.per_link.setChecked(True)
    w.redraw()
    assert tab.links_populated
    return tab


def test_per_link_grid_shows_the_crosshair_moment(
    window: MainWindow, fed: tuple[list[HostConfig], LiveBuffers, float]
) -> None:
    _hosts, live, now = fed
    w = window
    tab = _per_link_tab(w)
    # Latest values: the job died at 21 min, so no traffic now; GPU 2 is lost (unknown).
    latest, newest = tab.grid.snap, live.links.latest("a100-ecc")
    assert latest is not None and newest is not None and latest.t == newest.t
    assert np.isnan(latest.up[latest.gpus.index(2)]).all()
    assert np.nansum(latest.tx + latest.rx) == 0
    assert "at " + time.strftime("%H:%M:%S", time.localtime(latest.t)) in tab.link_key.text()
    # The crosshair 8 min into the window: the job is training there, degraded (and not
    # writing its checkpoint, every 10 min, when NVLink rests).
    t = now - (MINUTES - 8) * 60.0
    ch = tab.crosshair
    assert ch is not None
    ch.show_at(t)
    snap = tab.grid.snap
    assert snap is not None and abs(snap.t - t) <= 5.0
    assert snap.gpus == (0, 1, 2, 3)
    row = snap.gpus.index(1)
    assert snap.up[row, 5] == 0 and tab.grid.cell_text(row, 5) == "down"
    total = snap.tx + snap.rx
    assert np.all(total[snap.up == 1] > 1e9)  # every up link carries the all-reduce
    assert "at " + time.strftime("%H:%M:%S", time.localtime(snap.t)) in tab.link_key.text()
    assert "GPU 1 link 5" in tab.link_text.text()
    # Hidden again: back to the latest values at the next timer redraw, even without new
    # samples (here none come: a still window).
    ch.hide()
    assert not w.redraw(force=False)
    assert tab.grid.snap is not None and tab.grid.snap.t == latest.t
    # A new redraw (e.g. the 1 Hz timer) keeps the moment while the crosshair is shown.
    ch.show_at(t)
    w.redraw()
    assert tab.grid.snap is not None and abs(tab.grid.snap.t - t) <= 5.0


def test_screenshot_puts_the_crosshair_where_the_job_trains(
    fed: tuple[list[HostConfig], LiveBuffers, float],
) -> None:
    _hosts, live, now = fed
    t0 = now - MINUTES * 60.0
    t = busy_link_moment(live, "a100-ecc", t0, now)
    assert t is not None
    assert t0 + 60 < t < t0 + 21 * 60  # during the degraded run, before GPU 2 fails
    snap = live.links.at("a100-ecc", t - 1.0)
    assert snap is not None and snap.t == t
    total = snap.tx + snap.rx
    assert float(np.min(total[snap.up == 1])) > 1e9
    assert snap.up[snap.gpus.index(1), 5] == 0
    # a100-eval's job dies 3 min in: a busy moment in those minutes, none after them.
    early = busy_link_moment(live, "a100-eval", t0, now)
    assert early is not None and early < t0 + 180
    assert busy_link_moment(live, "a100-eval", t0 + 200, now) is None


def test_the_crosshair_read_out_stays_inside_the_plot_on_a_small_screen(
    qtbot: QtBot, fed: tuple[list[HostConfig], LiveBuffers, float]
) -> None:
    """At 1366x768 the Interconnect read-out (four GPUs' PCIe and NVLink) is wider than the
    room right of a crosshair in the middle, and than the room left of it: it sits against
    the plot's left edge then, whole, rather than run off the right."""
    hosts, live, now = fed
    w = build_window(hosts, live, None, (1366, 768), now)
    qtbot.addWidget(w)
    try:
        tab = _per_link_tab(w)
        ch = tab.crosshair
        assert ch is not None
        top = ch.plots[0]
        for frac in (0.1, 0.45, 0.55, 0.62, 0.9):
            (x0, x1), _ = top.vb.viewRange()
            ch.show_at(x0 + frac * (x1 - x0))
            QApplication.processEvents()  # the scene lays the item out
            box = ch.text.sceneBoundingRect()
            area = top.vb.sceneBoundingRect()
            assert box.left() >= area.left() - 1 and box.right() <= area.right() + 1, frac
    finally:
        w.close()
