"""Headless rendering of the main window to PNG, on simulated demo history (used by
``gpufleet screenshot`` and the docs)."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from PySide6.QtWidgets import QApplication

from gpufleet.core.config.hostconfig import HostConfig
from gpufleet.core.fleet.demo import demo_hosts
from gpufleet.core.fleet.events import HostStatus
from gpufleet.core.live.buffers import LiveBuffers
from gpufleet.core.model.stats import HubStats
from gpufleet.core.pipeline.build import load_rule_engine
from gpufleet.ui.offscreen.simfeed import feed
from gpufleet.ui.tabs.interconnect import InterconnectTab
from gpufleet.ui.widgets.theme import (
    Theme,
    apply_pyqtgraph,
    dark_palette,
    make_theme,
    system_is_dark,
)
from gpufleet.ui.window.main_window import TAB_NAMES, MainWindow


def prefill(
    hosts: Sequence[HostConfig], seconds: float, end_t: float, window_s: float = 3600.0
) -> tuple[LiveBuffers, Any, int]:
    """Live buffers (and the rule engine) fed with ``seconds`` of each host's simulation."""
    live = LiveBuffers(window_s=window_s)
    rules = load_rule_engine(hosts, strict=False)
    n = feed(hosts, live, rules, seconds, end_t)
    return live, rules, n


def plain_theme() -> Theme:
    """The theme without the app's settings: the system's (or GPUFLEET_THEME's) light or
    dark, Fusion's dark palette where the style has none. The CLI passes the app's own
    (``ui.app.setup_theme``); importing the app here would tie offscreen rendering to
    everything the app wires up (an import cycle through the controllers)."""
    app = QApplication.instance()
    if not isinstance(app, QApplication):
        app = QApplication([])
    dark = system_is_dark()
    if dark and app.palette().window().color().lightness() >= 128:
        app.setStyle("Fusion")
        app.setPalette(dark_palette())
    theme = make_theme(dark)
    apply_pyqtgraph(theme)
    return theme


def build_window(
    hosts: Sequence[HostConfig],
    live: LiveBuffers,
    rules: Any,
    size: tuple[int, int],
    now: float,
    theme: Theme | None = None,
) -> MainWindow:
    theme = theme or plain_theme()
    app = QApplication.instance()
    assert app is not None
    w = MainWindow(live, hosts, theme, demo=True, clock=lambda: now, remember=False)
    w._timer.stop()  # a still picture: redraws happen when asked
    for h in hosts:
        w.on_status(HostStatus(h.name, "streaming", None, now))
    if rules is not None:
        w.on_alerts(rules.active())
        cost = getattr(rules, "cost", None)
        if cost is not None:
            w.on_cost({h: cost.summary(h) for h in cost.hosts()})
    rate = sum(1.0 / h.interval_s for h in hosts)  # one sample per host and interval
    w.on_stats(HubStats(rate, live.samples_total, None, 0, 0))
    w.resize(*size)
    w.show()
    w.update_summaries()
    app.processEvents()
    return w


def render_tabs(
    out: Path,
    size: tuple[int, int],
    only: str | None,
    seconds: float,
    tab_host: Mapping[str, str],
    theme: Theme | None = None,
) -> list[Path]:
    hosts = demo_hosts()
    now = time.time()
    live, rules, _ = prefill(hosts, seconds, now)
    w = build_window(hosts, live, rules, size, now, theme)
    app = QApplication.instance()
    assert app is not None
    names = list(TAB_NAMES)
    if only:
        w.select_tab(only)  # raises ValueError for an unknown name
        names = [TAB_NAMES[w.tabs.currentIndex()]]
    files = []
    range_s = min(seconds, 3600.0)
    w.set_range(1800.0 if range_s <= 1800 else 3600.0)
    for name in names:
        w.select_host(tab_host.get(name, hosts[0].name))
        w.select_tab(name)
        w.update_summaries()
        for _ in range(3):  # layouts settle over a few passes (plot widths feed downsampling)
            app.processEvents()
            w.redraw()
        tab = w.current_tab()
        ch = getattr(tab, "crosshair", None)
        if ch is not None and name == "clocks":
            ch.show_at(now - 240)
        app.processEvents()
        path = out / f"{name}.png"
        if not w.grab().save(str(path)):
            raise OSError(f"could not write {path}")
        if ch is not None:
            ch.hide()
        files.append(path)
    if not only or names == ["interconnect"]:
        files += _render_per_link(w, out, tab_host.get("interconnect-links", "a100-ecc"))
    w.close()
    return files


def busy_link_moment(live: LiveBuffers, host: str, t0: float, t1: float) -> float | None:
    """A moment in [t0, t1] whose per-link values show the job at work: every GPU reporting
    and every up link carrying more than 1 GB/s (not a checkpoint, when NVLink rests), two
    thirds of the way through such moments (the middle of the run, not its last seconds).
    None when the host never had traffic there."""
    step = 5.0
    found: list[float] = []
    seen: set[float] = set()
    t = t0
    while t <= t1:
        snap = live.links.at(host, t)
        t += step
        if snap is None or snap.t in seen or not t0 <= snap.t <= t1:
            continue
        seen.add(snap.t)
        total = snap.tx + snap.rx
        up = snap.up == 1
        if np.isnan(snap.up).any() or not up.any():
            continue
        if float(np.min(total[up])) > 1e9:
            found.append(snap.t)
    return found[len(found) * 2 // 3] if found else None


def _render_per_link(w: MainWindow, out: Path, host: str) -> list[Path]:
    """``interconnect-links.png``: the Interconnect tab with its per-link NVLink grid shown
    (the demo's a100-ecc host: GPU 1 has a link down), the crosshair on a moment when the job
    was training, so the grid shows real per-link traffic beside the down link."""
    app = QApplication.instance()
    if host not in w.hosts or app is None:
        return []
    w.select_host(host)
    w.select_tab("interconnect")
    tab = w.current_tab()
    if not isinstance(tab, InterconnectTab):
        return []
    w.redraw()
    tab.per_link.setChecked(True)
    for _ in range(3):
        app.processEvents()
        w.redraw()
    t0, t1 = w.time_range()
    moment = busy_link_moment(w.live, host, t0, t1)
    ch = tab.crosshair
    if ch is not None and moment is not None:
        ch.show_at(moment - 1.0)  # inside the message's interval, as a mouse would be
    app.processEvents()
    path = out / "interconnect-links.png"
    ok = w.grab().save(str(path))
    if ch is not None:
        ch.hide()
    tab.per_link.setChecked(False)
    if not ok:
        raise OSError(f"could not write {path}")
    return [path]
