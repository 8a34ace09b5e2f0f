"""The main window: the fleet on the left, the selected host's tabs on the right, what the app
is doing in the status bar.

Redraws happen on a timer, at a fixed rate, for the visible tab only (the budgets in
docs/benchmarks.md); fleet summaries (list, cards, overview rows, tray) are recomputed once a
second. Data arrives through the FleetBridge's signals; the window never reads a socket or a
file.
"""

from __future__ import annotations

import dataclasses
import gc
import math
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from PySide6.QtCore import QCoreApplication, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QCloseEvent, QKeySequence
from PySide6.QtWidgets import (
    QCheckBox,
    QHBoxLayout,
    QLabel,
    QMainWindow,
    QPushButton,
    QSizePolicy,
    QSplitter,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from gpufleet.core.config.hostconfig import HostConfig
from gpufleet.core.cost.totals import fleet_totals
from gpufleet.core.live.buffers import LiveBuffers
from gpufleet.core.model.stats import HubStats
from gpufleet.core.text.catalogue import QT_TRANSLATE_NOOP
from gpufleet.core.wire.gpu_kind import count_units, mig_slice, virtualization_name
from gpufleet.core.wire.messages import Hello
from gpufleet.ui import i18n
from gpufleet.ui.background.history import HistoryCache
from gpufleet.ui.desktop.memtrim import start_trimmer
from gpufleet.ui.desktop.ui_state import UiState
from gpufleet.ui.dialogs.settings import apply_at_start, open_settings_dialog
from gpufleet.ui.tabs.base import Tab
from gpufleet.ui.tabs.clocks import ClocksTab
from gpufleet.ui.tabs.compute import ComputeTab
from gpufleet.ui.tabs.cost import CostTab
from gpufleet.ui.tabs.interconnect import InterconnectTab
from gpufleet.ui.tabs.memory import MemoryTab
from gpufleet.ui.tabs.overview import OverviewTab
from gpufleet.ui.tabs.thermal import ThermalTab
from gpufleet.ui.viewmodel.alerts import alert_text, alert_title
from gpufleet.ui.viewmodel.summary import HostSummary, money, summarize_host
from gpufleet.ui.viewmodel.view import View
from gpufleet.ui.widgets.elided import ElidedLabel, Part
from gpufleet.ui.widgets.theme import CRIT, OK, SEVERITY_RANK, WARN, Theme
from gpufleet.ui.window.fleet_panel import FleetPanel
from gpufleet.ui.window.range_selector import RangeSelector

RANGES = (
    (QT_TRANSLATE_NOOP("MainWindow", "5 min"), 300.0),
    (QT_TRANSLATE_NOOP("MainWindow", "30 min"), 1800.0),
    (QT_TRANSLATE_NOOP("MainWindow", "1 h"), 3600.0),
    (QT_TRANSLATE_NOOP("MainWindow", "6 h"), 6 * 3600.0),
    (QT_TRANSLATE_NOOP("MainWindow", "24 h"), 24 * 3600.0),
)
REDRAW_HZ = 3.0
LIVE_STEPS = 1000  # the live edge moves in steps of range / LIVE_STEPS (at least 1 s)
TAB_NAMES = ("overview", "clocks", "thermal", "memory", "interconnect", "cost", "compute")


class MainWindow(QMainWindow):
    # Emitted after each redraw of the visible tab (tests and the benchmark wait on it).
    redrawn = Signal(str)
    summaries_updated = Signal(object)  # tuple[HostSummary, ...]
    # "Export evidence…": of a host over a window, or of an alert (its own window); the
    # controller (ui.controllers.evidence_export) writes the bundle.
    evidence_requested = Signal(str, float, float)
    alert_evidence_requested = Signal(object)

    def __init__(
        self,
        live: LiveBuffers,
        hosts: Sequence[HostConfig],
        theme: Theme,
        *,
        demo: bool = False,
        history: HistoryCache | None = None,
        redraw_hz: float = REDRAW_HZ,
        clock: Callable[[], float] = time.time,
        ui_state: UiState | None = None,
        remember: bool = True,
    ) -> None:
        super().__init__()
        self.live = live
        self.theme = theme
        self.demo = demo
        self.history = history
        self.clock = clock
        self.hosts: dict[str, HostConfig] = {h.name: h for h in hosts}
        self.states: dict[str, tuple[str, str | None]] = {
            h: ("connecting", None) for h in self.hosts
        }
        self.alerts: dict[str, Any] = {}
        self.cost: dict[str, Any] = {}
        self.summaries: tuple[HostSummary, ...] = ()
        # Each host's latest arrival benchmark in one line (set by the bench controller).
        self.bench_lines: dict[str, str] = {}
        # Host → the sentence of its provider's API change (set by the app: the drift board).
        self.provider_notes: Callable[[], Mapping[str, str]] = dict
        # The demo opens on the half hour its history is pre-filled with (simfeed).
        self.range_s = 1800.0 if demo else 3600.0
        self.follow_live = True
        self.custom: tuple[float, float] | None = None
        self.stats_text = ""
        self._rate_mark: tuple[float, int] | None = None
        self._texts: dict[str, tuple[Any, int, str, str]] = {}
        self.hide_on_close = False  # True when a tray icon keeps the app running
        self.setWindowTitle(self.tr("gpufleet — demo fleet") if demo else "gpufleet")
        self._build()
        self._wire_evidence()
        # Splitter positions and sort columns as the user left them (not for a still
        # picture: screenshots show the defaults).
        self.ui_state = ui_state or (UiState() if remember else None)
        if self.ui_state is not None:
            self.ui_state.keep_splitter("main", self.split)
            self.ui_state.keep_splitter("fleet", self.panel.split)
            self.ui_state.keep_sort("fleet", self.panel.table.horizontalHeader())
            self.ui_state.keep_sort("overview", self.overview.table.horizontalHeader())
        self.resize(*self.default_size())
        self._timer = QTimer(self)
        self._timer.setInterval(int(1000 / redraw_hz))
        self._timer.timeout.connect(self._on_timer)
        self._ticks = 0
        self._drawn_once = False
        self._timer.start()
        self._trimmer = start_trimmer(self)
        if history is not None:
            history.updated.connect(self.redraw)
        # Everything built so far (modules, Qt wrappers, the plot items) lives as long as the
        # app: move it out of the garbage collector's sight, so that a full collection scans
        # only what came later (measured: a full collection stopped every thread for
        # ~100 ms, past the 50 ms budget for a GUI-thread stall).
        gc.freeze()

    # -- layout ----------------------------------------------------------------------------

    def default_size(self) -> tuple[int, int]:
        """1600×1000, or the screen's available area when that is smaller (a 1366×768
        laptop): the window never opens wider than the screen."""
        w, h = 1600, 1000
        screen = self.screen()
        if screen is not None:
            avail = screen.availableGeometry()
            if avail.width() >= 640 and avail.height() >= 480:
                w, h = min(w, avail.width()), min(h, avail.height())
        return w, h

    def _build(self) -> None:
        self.split = split = QSplitter(Qt.Orientation.Horizontal)
        split.setChildrenCollapsible(False)
        self.panel = FleetPanel(self.theme)
        self.panel.host_selected.connect(self._host_selected)
        self.panel.alert_activated.connect(self.open_alert)
        split.addWidget(self.panel)
        right = QWidget()
        rl = QVBoxLayout(right)
        rl.setContentsMargins(4, 4, 4, 4)
        head = QHBoxLayout()
        # The header names the host and what it runs, elided when the window is narrow
        # (the whole line is its tooltip); the range buttons fold into a menu after that.
        self.host_label = ElidedLabel(min_chars=20)
        head.addWidget(self.host_label, 1)
        self.range_selector = RangeSelector(
            [(QCoreApplication.translate("MainWindow", label), secs) for label, secs in RANGES],
            self.range_s,
        )
        self.range_selector.range_picked.connect(self.set_range)
        self.range_group = self.range_selector.group
        head.addWidget(self.range_selector)
        self.follow = QCheckBox(self.tr("follow live"))
        self.follow.setChecked(True)
        self.follow.toggled.connect(self._follow_toggled)
        head.addWidget(self.follow)
        rl.addLayout(head)
        self.tabs = QTabWidget()
        self.tab_list: list[Tab] = [
            OverviewTab(self.theme),
            ClocksTab(self.theme),
            ThermalTab(self.theme),
            MemoryTab(self.theme),
            InterconnectTab(self.theme),
            CostTab(self.theme),
            ComputeTab(self.theme),
        ]
        for t in self.tab_list:
            self.tabs.addTab(t, QCoreApplication.translate("Tabs", t.title))
            t.range_changed_by_user.connect(self._user_range)
        self.overview: OverviewTab = self.tab_list[0]  # type: ignore[assignment]
        self.clocks: ClocksTab = self.tab_list[1]  # type: ignore[assignment]
        self.memory: MemoryTab = self.tab_list[3]  # type: ignore[assignment]
        self.interconnect: InterconnectTab = self.tab_list[4]  # type: ignore[assignment]
        self.overview.host_activated.connect(self.select_host)
        self.tabs.setCurrentIndex(1)
        self.tabs.currentChanged.connect(lambda _i: self.redraw())
        rl.addWidget(self.tabs, 1)
        split.addWidget(right)
        # The fleet panel keeps its width when the window is resized (the plots take the
        # difference) and moves only when the user drags the handle.
        split.setStretchFactor(0, 0)
        split.setStretchFactor(1, 1)
        split.setSizes([470, 1130])
        self.setCentralWidget(split)
        self.status_label = QLabel(self.tr("starting…"))
        # The status line may be cut rather than widen the window.
        self.status_label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.statusBar().addWidget(self.status_label, 1)
        self.outcome_label = QLabel("")
        self.statusBar().addPermanentWidget(self.outcome_label)
        self.menu_hosts = self.menuBar().addMenu(self.tr("&Hosts"))
        self.menu_view = self.menuBar().addMenu(self.tr("&View"))
        for i, t in enumerate(self.tab_list):
            act = QAction(QCoreApplication.translate("Tabs", t.title), self)
            act.setShortcut(QKeySequence(f"Ctrl+{i + 1}"))
            act.triggered.connect(lambda _=False, i=i: self.tabs.setCurrentIndex(i))
            self.menu_view.addAction(act)
        # Settings: the dialog lives in gpufleet.ui.dialogs.settings; the saved refresh rate
        # applies from the start.
        self.menu_settings = self.menuBar().addMenu(self.tr("&Settings"))
        act_settings = QAction(self.tr("&Preferences…"), self)
        act_settings.setShortcut(QKeySequence.StandardKey.Preferences)
        act_settings.setMenuRole(QAction.MenuRole.PreferencesRole)
        act_settings.triggered.connect(lambda: open_settings_dialog(self, self))
        self.menu_settings.addAction(act_settings)
        apply_at_start(self, self)

    def _wire_evidence(self) -> None:
        """ "Export evidence…" on the selected alert, the Clocks tab, the host menu and the
        fleet list's context menu."""
        self.export_alert_btn = QPushButton(self.tr("Export evidence…"))
        self.export_alert_btn.setToolTip(
            self.tr("Save a zip of this host's data around the alert: metrics, plots, events")
        )
        self.export_alert_btn.setEnabled(False)
        self.export_alert_btn.clicked.connect(self.export_current_alert)
        self.panel.alert_buttons.insertWidget(1, self.export_alert_btn)
        self.panel.alert_current.connect(lambda a: self.export_alert_btn.setEnabled(a is not None))
        self.clocks.export_requested.connect(self.export_selected_host)
        self.act_export = QAction(self.tr("E&xport evidence for the selected host…"), self)
        self.act_export.triggered.connect(self.export_selected_host)
        self.menu_hosts.addAction(self.act_export)
        table = self.panel.table
        table.setContextMenuPolicy(Qt.ContextMenuPolicy.ActionsContextMenu)
        table.addAction(self.act_export)

    def export_current_alert(self) -> None:
        a = self.panel.current_alert()
        if a is not None:
            self.alert_evidence_requested.emit(a)

    def export_selected_host(self) -> None:
        host = self.selected_host
        if host is not None:
            t0, t1 = self.time_range()
            self.evidence_requested.emit(host, t0, t1)

    # -- data in (slots for FleetBridge signals) -----------------------------------------

    def set_bench_line(self, host: str, line: str) -> None:
        """The host's latest benchmark in one line: its tooltip, card and Overview row."""
        self.bench_lines[host] = line
        self.update_summaries()

    def on_status(self, st: Any) -> None:
        self.states[st.host] = (st.state, st.reason)

    def on_alerts(self, active: Sequence[Any]) -> None:
        self.alerts = {a.id: a for a in active if a.firing}

    def on_cost(self, cost: dict[str, Any]) -> None:
        self.cost = cost

    def on_stats(self, st: HubStats) -> None:
        streaming = sum(1 for s, _ in self.states.values() if s == "streaming")
        down = sum(1 for s, _ in self.states.values() if s in ("reconnecting", "failed"))
        n_hosts = len(self.hosts)
        parts = [
            (self.tr("{n} host") if n_hosts == 1 else self.tr("{n} hosts")).format(n=n_hosts),
            self.tr("{n} streaming").format(n=streaming),
        ]
        if down:
            parts.append(self.tr("{n} down").format(n=down))
        parts.append(self.tr("{n} samples/s").format(n=f"{self._sample_rate(st):.0f}"))
        if st.history_bytes is not None:
            parts.append(
                self.tr("history {size} MiB").format(size=f"{st.history_bytes / 2**20:.1f}")
            )
        if st.dropped:
            parts.append(self.tr("{n} events dropped (the app fell behind)").format(n=st.dropped))
        if st.store_errors:
            parts.append(self.tr("{n} history write errors").format(n=st.store_errors))
        if st.rate_limited:
            parts.append(self.tr("{n} events not recorded (flood limit)").format(n=st.rate_limited))
        if st.bad_batches:
            parts.append(self.tr("{n} failed batches (see the log)").format(n=st.bad_batches))
        self.stats_text = " · ".join(parts)
        self.status_label.setText(self.stats_text)
        # The reason of the latest history failure, for whoever hovers the status line.
        self.status_label.setToolTip(st.store_last_error or "")

    def _sample_rate(self, st: HubStats) -> float:
        """Samples per second (one per host and interval), from the live buffers' count of
        samples: the bridge's own rate counts every message, procs, links and events too."""
        now = time.monotonic()
        total = self.live.samples_total
        last = self._rate_mark
        self._rate_mark = (now, total)
        if last is None or now - last[0] <= 0 or total < last[1]:
            return st.samples_per_s
        return (total - last[1]) / (now - last[0])

    def set_hosts(self, hosts: Sequence[HostConfig]) -> None:
        self.hosts = {h.name: h for h in hosts}
        for h in self.hosts:
            self.states.setdefault(h, ("connecting", None))
        for h in [h for h in self.states if h not in self.hosts]:
            del self.states[h]
        self.update_summaries()

    def show_outcome(self, text: str, ok: bool = True) -> None:
        colour = self.theme.state_hex(OK if ok else CRIT)
        self.outcome_label.setText(f'<span style="color:{colour}">{text}</span>')
        self.statusBar().showMessage(text, 15000)

    # -- time range ------------------------------------------------------------------------

    def set_range(self, seconds: float) -> None:
        self.range_s = seconds
        self.range_selector.set_current(seconds)
        if not self.follow_live and self.custom is not None:
            mid = (self.custom[0] + self.custom[1]) / 2
            self.custom = (mid - seconds / 2, mid + seconds / 2)
        self.redraw()

    def _follow_toggled(self, on: bool) -> None:
        self.follow_live = on
        if on:
            self.custom = None
        elif self.custom is None:
            t1 = self.now()
            self.custom = (t1 - self.range_s, t1)
        self.redraw()

    def _user_range(self, t0: float, t1: float) -> None:
        self.custom = (t0, t1)
        if self.follow_live:
            self.follow_live = False
            self.follow.blockSignals(True)
            self.follow.setChecked(False)
            self.follow.blockSignals(False)

    def show_moment(self, t: float) -> None:
        """Stop following live and centre the range on ``t`` (an alert's start)."""
        self.follow_live = False
        self.follow.blockSignals(True)
        self.follow.setChecked(False)
        self.follow.blockSignals(False)
        span = self.range_s if self.range_s <= 3600 else 3600.0
        self.custom = (t - span * 0.7, t + span * 0.3)
        self.redraw()

    def now(self) -> float:
        """The right edge of a live view: wall time, unless the data run on simulated time
        (a --no-wait sim or a replay), then the newest sample."""
        wall = self.clock()
        newest = None
        for h in self.hosts:
            s = self.live.latest(h)
            if s is not None and (newest is None or s.t > newest):
                newest = s.t
        if newest is None or abs(wall - newest) < 600:
            return wall
        return newest

    def time_range(self) -> tuple[float, float]:
        if self.follow_live or self.custom is None:
            # The live edge moves in steps of about a pixel's worth of time (at least the
            # 1 s sampling interval), rounded up so the newest sample is on screen: between
            # steps the axes keep their ticks and a redraw without new data is skipped.
            step = max(1.0, self.range_s / LIVE_STEPS)
            t1 = math.ceil(self.now() / step) * step
            return t1 - self.range_s, t1
        return self.custom

    # -- selection and navigation ----------------------------------------------------------

    @property
    def selected_host(self) -> str | None:
        return self.panel.selected

    def select_host(self, host: str) -> None:
        self.panel.select_host(host)

    def _host_selected(self, host: str) -> None:
        # The header names the host at once, not at the next 1 Hz summaries update.
        self._update_header()
        self.redraw()

    def open_alert(self, alert: Any) -> None:
        """Open the alert's host at the alert's moment, on the tab that shows it."""
        self.show()
        self.raise_()
        self.activateWindow()
        self.select_host(alert.host)
        rule = str(getattr(alert, "rule_id", ""))
        tab = 1
        if "power" in rule or "temp" in rule:
            tab = 2
        elif "proc" in rule or "mem" in rule:
            tab = 3
        elif "idle" in rule or "cost" in rule or "budget" in rule:
            tab = 5
        elif "pcie" in rule or "nvlink" in rule:
            tab = 4
        self.tabs.setCurrentIndex(tab)
        self.show_moment(float(alert.started_t))
        # A process alert (a miner, a stranger on the GPU): its process row selected, ready
        # for Kill…, when the process is still in the table.
        ev = dict(getattr(alert, "evidence", {}) or {})
        values = ev.get("values")
        procs = (values if isinstance(values, dict) else ev).get("processes")
        if tab == 3 and isinstance(procs, (list, tuple)) and procs:
            pid = procs[0].get("pid") if isinstance(procs[0], dict) else None
            if isinstance(pid, int):
                self.memory.select_pid(pid)

    def select_tab(self, name: str) -> None:
        key = name.lower()
        for i, n in enumerate(TAB_NAMES):
            if n.startswith(key) or key in self.tab_list[i].title.lower():
                self.tabs.setCurrentIndex(i)
                return
        raise ValueError(f"no tab named {name!r}; the tabs are: {', '.join(TAB_NAMES)}")

    # -- redraw ----------------------------------------------------------------------------

    def _on_timer(self) -> None:
        self._ticks += 1
        if self._ticks % max(1, round(REDRAW_HZ)) == 1 or not self.summaries:
            # The fleet summaries (list, cards, overview rows; once a second) and the visible
            # tab's redraw go on different ticks: back to back, with their paints, they held
            # the GUI thread ~70 ms at 32 hosts (a queued call runs before any timer, so
            # "a later turn of the event loop" was no gap). The tab redraws on the next tick,
            # a third of a second later, well inside the 1 s sample-to-screen budget.
            self.update_summaries()
            if self._drawn_once:
                return
        self._drawn_once = True
        self._timed_redraw()

    def _timed_redraw(self) -> None:
        if self.isVisible() and not self.isMinimized():
            self.redraw(force=False)

    def update_summaries(self) -> None:
        by_host: dict[str, list[Any]] = {}
        for a in self.alerts.values():
            by_host.setdefault(a.host, []).append(a)
        titles = {a.id: self._text(a)[0] for a in self.alerts.values()}
        now = self.clock()
        drift = self.provider_notes()
        self.summaries = tuple(
            dataclasses.replace(
                summarize_host(
                    cfg,
                    self.live,
                    *self.states.get(name, ("connecting", None)),
                    by_host.get(name, ()),
                    titles,
                    now,
                ),
                bench=self.bench_lines.get(name, ""),
                provider=drift.get(name, ""),
            )
            for name, cfg in self.hosts.items()
        )
        n_gpu = sum(len(s.gpus) for s in self.summaries)
        # Per currency, never added across currencies (core.cost.totals).
        rates: dict[str, float] = {}
        for h in self.hosts.values():
            if h.price_per_hour:
                rates[h.currency] = rates.get(h.currency, 0.0) + h.price_per_hour
        rate_text = ", ".join(money(v, c) for c, v in sorted(rates.items())) or money(0, "USD")
        by_cur = fleet_totals(self.cost.values()).by_currency
        spent = ", ".join(money(t.total, c) for c, t in by_cur.items() if t.total)
        m = self.theme.muted
        self.panel.set_hosts(
            self.summaries,
            "<b>" + self.tr("Fleet") + "</b> "
            f'<span style="color:{m}">'
            + (
                self.tr("{hosts} host · {gpus} GPUs · {rate}/h")
                if len(self.hosts) == 1
                else self.tr("{hosts} hosts · {gpus} GPUs · {rate}/h")
            ).format(hosts=len(self.hosts), gpus=n_gpu, rate=rate_text)
            + (self.tr(" · spent {money}").format(money=spent) if spent else "")
            + "</span>",
        )
        self.overview.set_summaries(sorted(self.summaries, key=lambda s: -s.rank))
        items = sorted(
            self.alerts.values(),
            key=lambda a: (-{"critical": 2, "warning": 1}.get(a.severity, 0), -a.started_t),
        )
        self.panel.set_alerts(
            [
                (
                    a,
                    CRIT if a.severity == "critical" else WARN if a.severity == "warning" else OK,
                    *self._text(a),
                )
                for a in items
            ],
            self.now(),
        )
        self._update_header()
        self.summaries_updated.emit(self.summaries)

    def _text(self, a: Any) -> tuple[str, str]:
        """(title, sentence) of an alert, made once per alert state: the catalogue's
        sentences are not free, and a large fleet can have hundreds of active alerts."""
        # Made again each minute too: the sentence's "for 31 min" counts as the list does.
        now = self.now()
        minute = int(now // 60)
        hit = self._texts.get(a.id)
        if hit is None or hit[0] is not a or hit[1] != minute:
            hit = (a, minute, alert_title(a), alert_text(a, now))
            if len(self._texts) > 5000:
                self._texts.clear()
            self._texts[a.id] = hit
        return hit[2], hit[3]

    def worst_state(self) -> str:
        return max((s.state for s in self.summaries), key=lambda s: SEVERITY_RANK[s], default=OK)

    def _kind_bits(self, h: Hello) -> list[str]:
        """What the GPUs are: pass-through or a vGPU guest, and MIG slices."""
        out = []
        virt = {virtualization_name(g.extra.get("virtualization_mode")) for g in h.gpus}
        virt -= {None, "none"}
        if virt == {"passthrough"}:
            out.append(self.tr("pass-through"))
        elif "vgpu" in virt:
            out.append(self.tr("vGPU guest"))
        _units, slices = count_units(h.gpus)
        if slices:
            out.append(self.tr("MIG: {n} slices").format(n=slices))
        return out

    def _update_header(self) -> None:
        host = self.selected_host
        h = self.live.hello(host) if host else None
        if host is None:
            self.host_label.set_parts([])
            return
        m = self.theme.muted
        bits = []
        if h is not None:
            cards = [g for g in h.gpus if mig_slice(g) is None]  # MIG slices: below
            names = {g.name for g in cards}
            bits.append(
                f"{len(cards)}× " + (names.pop() if len(names) == 1 else self.tr("mixed GPUs"))
            )
            drv = h.host.get("driver_version") or h.host.get("driver")
            if drv:
                bits.append(self.tr("driver {version}").format(version=drv))
            cuda = h.host.get("cuda_version") or h.host.get("cuda")
            if cuda:
                bits.append(f"CUDA {cuda}")
            bits.extend(self._kind_bits(h))
            s = self.live.latest(host)
            if s is not None:
                ps = sorted(
                    {
                        int(p)
                        for g in s.gpu_indices()
                        if isinstance(p := s.value(g, "pstate"), (int, float))
                    }
                )
                if ps:
                    bits.append("/".join(f"P{p}" for p in ps))
            if h.backend == "nvidia-smi":
                bits.append(self.tr("read through nvidia-smi: no offline ring, no kill"))
            else:
                bits.append(
                    self.tr("{backend} sampler {version}").format(
                        backend=h.backend, version=h.sampler_version
                    )
                )
        state, reason = self.states.get(host, ("connecting", None))
        if state != "streaming":
            name = i18n.session_state_name(state)
            bits.append(f"{name}{': ' + reason if reason else ''}")
        self.host_label.set_parts([Part(host, bold=True), Part(" " + " · ".join(bits), colour=m)])

    def view(self) -> View:
        t0, t1 = self.time_range()
        return View(
            live=self.live,
            host=self.selected_host,
            hosts=self.hosts,
            t0=t0,
            t1=t1,
            theme=self.theme,
            history=self.history,
            cost=self.cost,
            states={h: s for h, (s, _) in self.states.items()},
            provider_notes=self.provider_notes(),
        )

    def current_tab(self) -> Tab:
        return self.tab_list[self.tabs.currentIndex()]

    def redraw(self, force: bool = True) -> bool:
        """Refresh the visible tab; ``force=False`` (the timer) skips it when nothing it
        shows changed. True when it redrew."""
        tab = self.current_tab()
        if force:
            tab.invalidate()
        if not tab.refresh_if_changed(self.view()):
            return False
        self.redrawn.emit(TAB_NAMES[self.tabs.currentIndex()])
        return True

    # -- closing ---------------------------------------------------------------------------

    quit_requested = Signal()
    # Settings saved in the dialog, applied while the app runs: the app connects the tray's
    # notifications switch and the alert wiring (rate limits, webhooks) to it.
    settings_applied = Signal(object)  # Settings

    def set_redraw_hz(self, hz: float) -> None:
        """The redraw rate of the visible tab (at most every 30 ms)."""
        self._timer.setInterval(max(30, int(1000 / hz)))

    def closeEvent(self, event: QCloseEvent) -> None:
        # With a tray icon the window hides and the app keeps watching; app.py decides.
        if self.hide_on_close:
            event.ignore()
            self.hide()
            return
        self._timer.stop()
        self.quit_requested.emit()
        event.accept()
