"""The Interconnect tab's per-link NVLink grid: hidden by default, populated on demand for the
demo's a100-ecc host (whose GPU 1 has link 5 down), the down link red and worded, the sentence
naming it; disabled with a reason on a host without NVLink (real Fleet, sampler daemons, Qt
offscreen)."""

from __future__ import annotations

from collections.abc import Callable

from gpufleet.core.config.hostconfig import HostConfig
from gpufleet.ui.app import App
from gpufleet.ui.tabs.interconnect import InterconnectTab
from gpufleet.ui.tabs.link_grid import DOWN_COLOUR
from gpufleet_sampler import state_dir
from gpufleet_sampler.daemon import client
from PySide6.QtGui import QColor
from pytestqt.qtbot import QtBot

from tests.support.ui_helpers import demo, wait_streaming


def test_per_link_grid_names_the_down_link_and_is_disabled_without_nvlink(
    qtbot: QtBot, start_app: Callable[[list[HostConfig]], App]
) -> None:
    app = start_app(demo("a100-ecc", "4090-x2"))
    w = app.window
    wait_streaming(qtbot, app)
    w.select_host("a100-ecc")
    w.select_tab("interconnect")
    tab = w.current_tab()
    assert isinstance(tab, InterconnectTab)
    w.redraw()
    # Hidden by default; enabled because the host has NVLink.
    assert not tab.link_panel.isVisible() and not tab.per_link.isChecked()
    qtbot.waitUntil(lambda: tab.per_link.isEnabled(), timeout=30_000)
    tab.per_link.setChecked(True)
    qtbot.waitUntil(lambda: tab.links_populated, timeout=30_000)
    assert tab.link_panel.isVisible()
    # While the grid shows, the host's sampler daemon was asked (over the attach's stdin)
    # to read the per-link values at their full rate.
    qtbot.waitUntil(lambda: _links_watched_s(app, "a100-ecc") > 60.0, timeout=15_000)
    snap = tab.grid.snap
    assert snap is not None and snap.n_links == 12
    # GPU 2 may already be lost (the scenario runs 5x fast): it then has no row.
    assert {0, 1, 3} <= set(snap.gpus)
    row = snap.gpus.index(1)
    assert snap.up[row, 5] == 0 and (snap.up[row] == 1).sum() == 11
    assert tab.grid.cell_text(row, 5) == "down"
    assert tab.grid.cell_text(row, 4) != "down"
    text = tab.link_text.text()
    assert "GPU 1 link 5" in text and "nvidia-smi nvlink -s" in text
    assert "move you to another node" in text
    # The down cell is painted red (render the widget and look at the cell's centre).
    img = tab.grid.grab().toImage()
    cw = (tab.grid.width() - 56 - 2) / 12
    x, y = int(56 + 5.5 * cw), int(18 + row * 20 + 4)
    assert QColor(img.pixel(x, y)).name() == QColor(DOWN_COLOUR).name()
    # Redrawn only when a new links message arrives, not on every sample.
    paints = tab.grid.paints
    seen = app.live.links.version("a100-ecc")
    qtbot.waitUntil(lambda: app.live.links.version("a100-ecc") > seen, timeout=30_000)
    w.redraw()
    qtbot.waitUntil(lambda: tab.grid.paints > paints, timeout=10_000)
    # A host without NVLink: the toggle is disabled and says why; the grid is hidden.
    w.select_host("4090-x2")
    w.redraw()
    qtbot.waitUntil(lambda: not tab.per_link.isEnabled(), timeout=10_000)
    assert "No NVLink" in tab.per_link.toolTip() and "no NVLink" in tab.per_link.toolTip()
    assert not tab.link_panel.isVisible()


def _links_watched_s(app: App, host: str) -> float:
    """What the host's sampler daemon says of the per-link watch (its status request)."""
    session = app.fleet.session(host)
    assert session is not None
    cfg = session.host
    paths = state_dir.Paths(
        state_dir.resolve_state_dir(session.state_dir),
        state_dir.daemon_key(cfg.backend, cfg.scenario, cfg.seed),
    )
    status = client.request(paths, {"op": "status"}) or {}
    return float(status.get("links_watched_s", 0.0))
