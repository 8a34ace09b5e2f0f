"""The desktop app: ``run_app(demo)`` builds the Qt application around the core's Fleet.

Wiring (docs/architecture.md): Fleet (sessions, own threads) → subscription queue → the
pipeline hub (``gpufleet.core.pipeline``, its own thread: live buffers, store, alerting and
cost, the exporter) → FleetBridge (the hub's outputs as Qt signals) → MainWindow / tray /
notifier on the GUI thread. Commands (kill, check, store queries) run in a QThreadPool,
never on the GUI thread.

The demo fleet (``--demo``, or offered on a first run with no hosts) keeps its history under
``paths.demo_data_dir()``; the local sampler daemons it started are stopped when the app
quits (real hosts' daemons outlive the app by design: they keep the ring while the laptop
sleeps; demo daemons that ``gpufleet serve-metrics`` started are left to it).
"""

from __future__ import annotations

import logging
import os
import signal
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from PySide6.QtCore import QCoreApplication, QObject, QThreadPool, QTimer
from PySide6.QtWidgets import QApplication, QMessageBox

from gpufleet.core.config import instance_lock, paths
from gpufleet.core.config.configfile import load_config
from gpufleet.core.config.hostconfig import HostConfig
from gpufleet.core.config.instance_lock import InstanceLock
from gpufleet.core.cost.billing import BillingState
from gpufleet.core.fleet.demo import demo_hosts
from gpufleet.core.fleet.events import STREAMING
from gpufleet.core.fleet.fleet import Fleet
from gpufleet.core.live.buffers import LiveBuffers
from gpufleet.core.pipeline.build import build_pipeline, demo_daemons_running, stop_demo_daemons
from gpufleet.core.providers.drift_board import DriftBoard
from gpufleet.core.text import instance as instance_text
from gpufleet.ui import i18n
from gpufleet.ui.background.history import HistoryCache
from gpufleet.ui.controllers.actions import Actions
from gpufleet.ui.controllers.alert_wiring import (
    ActionEvents,
    AlertWiring,
    chosen_dark,
    load_app_settings,
    make_action_runner,
)
from gpufleet.ui.controllers.bench import BenchController
from gpufleet.ui.controllers.bridge import FleetBridge
from gpufleet.ui.controllers.compare_open import CompareOpener
from gpufleet.ui.controllers.config_watch import ConfigWatch
from gpufleet.ui.controllers.evidence_export import EvidenceExporter
from gpufleet.ui.controllers.link_watch import LinkWatch
from gpufleet.ui.controllers.mark_mine import MarkMine
from gpufleet.ui.controllers.prom_wiring import PromWiring
from gpufleet.ui.desktop.tray import Tray
from gpufleet.ui.dialogs.hostkey import HostKeyPrompt
from gpufleet.ui.offscreen.simfeed import DEMO_PREFILL_S, prefill_then
from gpufleet.ui.widgets.theme import Theme, apply_pyqtgraph, dark_palette, make_theme
from gpufleet.ui.window.main_window import MainWindow

log = logging.getLogger(__name__)


def make_qapp(argv: Sequence[str] | None = None) -> QApplication:
    app = QApplication.instance()
    if not isinstance(app, QApplication):
        app = QApplication(list(argv) if argv is not None else sys.argv[:1])
        # The language (setting, else system locale) before any window is built.
        i18n.install(app)
    app.setApplicationName("gpufleet")
    app.setOrganizationName("gpufleet")
    # The freedesktop id of resources/io.github.gpufleet.GpuFleet.desktop: Wayland compositors
    # and docks match the window to its launcher entry and icon.
    app.setDesktopFileName("io.github.gpufleet.GpuFleet")
    return app


def setup_theme(app: QApplication, dark: bool | None = None) -> Theme:
    """The theme chosen in the settings, else the system's light or dark scheme; Fusion + a
    dark palette where the platform style has none (and for headless screenshots), Fusion's
    light palette where the user chose light on a dark system."""
    dark = chosen_dark() if dark is None else dark
    lightness = app.palette().window().color().lightness()
    if dark and lightness >= 128:
        app.setStyle("Fusion")
        app.setPalette(dark_palette())
    elif not dark and lightness < 128:
        app.setStyle("Fusion")
        app.setPalette(app.style().standardPalette())
    theme = make_theme(dark)
    apply_pyqtgraph(theme)
    return theme


def load_hosts() -> tuple[list[HostConfig], str | None]:
    """The configured hosts, or ([], reason) when there is no usable config."""
    try:
        return list(load_config().hosts), None
    except Exception as e:  # a malformed config is shown, never a traceback
        return [], str(e)


class App(QObject):
    """Owns the running pieces and stops them in order."""

    def __init__(self, hosts: Sequence[HostConfig], demo: bool, theme: Theme) -> None:
        super().__init__()
        self.demo = demo
        self.theme = theme
        self.settings = load_app_settings()
        self.pool = QThreadPool.globalInstance()
        self.live = LiveBuffers(window_s=3600)
        self.keyprompt = HostKeyPrompt()
        self.fleet = Fleet(hosts, on_unknown_key=self.keyprompt.ask, demo=demo)
        self.action_events = ActionEvents()
        # Hosts whose provider's API changed under gpufleet, as the last calls found.
        self.drift = DriftBoard()
        self.pipeline = build_pipeline(
            self.fleet,
            demo=demo,
            settings=self.settings,
            live=self.live,
            runner=make_action_runner(
                self.fleet, self.action_events, demo, self.live, self._set_billing, self.drift
            ),
            on_scheduled=self.action_events.changed.emit,
            yield_between_messages=True,
        )
        self.store = self.pipeline.store
        self.bridge = FleetBridge(self.pipeline.hub)
        history = HistoryCache(self.store, self.live, self.pool) if self.store else None
        self.window = MainWindow(self.live, hosts, theme, demo=demo, history=history)
        self.keyprompt.parent_widget = self.window
        b, w = self.bridge, self.window
        b.status_changed.connect(w.on_status)
        b.alerts_snapshot.connect(w.on_alerts)
        b.cost_updated.connect(w.on_cost)
        b.stats.connect(w.on_stats)
        self.actions = Actions(self.window, self.fleet, self.bridge, self.pool, demo, self.drift)
        self.window.provider_notes = self.drift.sentences
        self.link_watch = LinkWatch(self.fleet.watch_links, self.pool)
        self.window.interconnect.links_watched.connect(self.link_watch.shown)
        self.tray = Tray(self.window, theme)
        b.alerts_changed.connect(self.tray.notifier.on_alerts_changed)
        self.window.summaries_updated.connect(self.tray.update_state)
        self.tray.quit_requested.connect(self.quit)
        self.window.quit_requested.connect(self.quit)
        self._stopped = False
        self.alert_wiring = AlertWiring(
            self.window,
            self.pipeline,
            self.action_events,
            self.tray.notifier,
            self.pool,
            self.settings,
        )
        self._daemons_before: set[str] | None = None
        # Opt-in from config: Prometheus host groups, Alertmanager's alerts and the fleet
        # exporter, all fed by (or feeding) this app's one pipeline.
        self.prom = PromWiring(self.window, self.bridge, self.pipeline, self.fleet)
        # "Export evidence…" on alerts, the Clocks tab and the host menu.
        self.evidence = EvidenceExporter(self.window, demo=demo)
        # "Mark as mine" on the alert of a process that is not the job's.
        engine = self.pipeline.engine
        self.mark_mine = MarkMine(
            self.window, lambda h: self.bridge.post(lambda: engine.set_host(h))
        )
        # "Compare…" on the host menu: two windows of the history side by side.
        self.compare = CompareOpener(self.window, demo=demo)
        # "Benchmark the selected host…": is this the card I paid for?
        self.bench = BenchController(
            self.window, self.fleet, self.pool, self.store.path if self.store else None,
            lambda: self.pipeline.hub.metrics,
        )  # fmt: skip
        b.status_changed.connect(
            lambda st: self.bench.host_streaming(st.host) if st.state == STREAMING else None
        )
        # Hosts added or edited elsewhere (`gpufleet hosts add`, an editor) join at once.
        self.config_watch = (
            None
            if demo
            else ConfigWatch(
                self.fleet, self.window, bridge=self.bridge, rules=self.pipeline.engine
            )
        )

    def _set_billing(self, host: str, state: BillingState) -> None:
        """A provider action changed a host's billing: the cost tracker (owned by the hub's
        thread) learns it there."""
        cost = self.pipeline.engine.cost
        self.pipeline.hub.post(lambda: cost.set_billing(host, state))

    def start(self) -> None:
        if self.demo:  # the demo daemons already running belong to someone else
            self._daemons_before = demo_daemons_running(self.fleet.hosts())
        self.window.show()
        if self.demo:
            # Half an hour of history first (off the GUI thread), so the plots are full at
            # once; the fleet and the hub start when it is in (nothing else may feed the
            # rule engine meanwhile). GPUFLEET_DEMO_PREFILL_S=0 starts empty (tests).
            seconds = float(os.environ.get("GPUFLEET_DEMO_PREFILL_S", DEMO_PREFILL_S))
            prefill_then(
                self.fleet.hosts(),
                self.live,
                self.pipeline.engine,
                self._start_streams,
                seconds,
                store=self.store,
                lifecycle=self.pipeline.alerting.lifecycle,
            )
        else:
            self._start_streams()
        if self.config_watch is not None:
            self.config_watch.start()

    def _start_streams(self) -> None:
        if self._stopped:  # quit while the demo history was still being made
            return
        self.prom.start()
        self.bridge.start([h.name for h in self.fleet.hosts()])
        self.fleet.start()

    def quit(self) -> None:
        QApplication.quit()

    def stop(self) -> None:
        if self._stopped:
            return
        self._stopped = True
        self.window.hide()
        self.tray.hide()
        if self.config_watch is not None:
            self.config_watch.stop()
        self.prom.stop()
        self.fleet.stop(timeout=8.0)
        if self.demo:
            for name, problem in stop_demo_daemons(self.fleet, self._daemons_before).items():
                log.warning("could not stop the demo sampler of %s: %s", name, problem)
        self.alert_wiring.stop()
        self.pipeline.stop()
        self.pool.waitForDone(10_000)


def _install_signal_handlers(app: QApplication) -> QTimer:
    """SIGTERM / SIGINT quit cleanly (samplers stopped, store flushed). Qt's loop does not run
    Python signal handlers by itself: a short timer lets the interpreter look."""

    def handler(_sig: int, _frame: Any) -> None:
        QTimer.singleShot(0, app.quit)

    signal.signal(signal.SIGTERM, handler)
    signal.signal(signal.SIGINT, handler)
    timer = QTimer()
    timer.start(200)
    timer.timeout.connect(lambda: None)
    return timer


def offer_demo(reason: str | None) -> bool:
    text = QCoreApplication.translate("App", "No hosts are configured yet.")
    if reason:
        text = QCoreApplication.translate(
            "App", "The host configuration could not be read:\n{reason}"
        ).format(reason=reason)
    box = QMessageBox(QMessageBox.Icon.Question, "gpufleet", text)
    box.setInformativeText(
        QCoreApplication.translate(
            "App",
            "Open the demo fleet (six simulated rentals, with their own history) to look "
            "around? You can add your own hosts from the Hosts menu at any time.",
        )
    )
    box.setStandardButtons(QMessageBox.StandardButton.Open | QMessageBox.StandardButton.Close)
    box.button(QMessageBox.StandardButton.Open).setText(
        QCoreApplication.translate("App", "Open the demo fleet")
    )
    box.button(QMessageBox.StandardButton.Close).setText(
        QCoreApplication.translate("App", "Add a host…")
    )
    return box.exec() == QMessageBox.StandardButton.Open


def refuse_second_instance(demo: bool) -> InstanceLock | None:
    """This window's hold on its data dir; None when another gpufleet has it, after saying
    so (on stderr and in a message box): two would notify and act twice."""
    try:
        return instance_lock.for_fleet(demo, instance_lock.ROLE_WINDOW).acquire()
    except instance_lock.InstanceBusy as e:
        print(f"gpufleet: {e}", file=sys.stderr)
        text = str(e)
        if text.startswith(("the ", "another ")):  # a sentence opens the box ("gpufleet" stays)
            text = text[:1].upper() + text[1:]
        QMessageBox.warning(None, instance_text.busy_title(), text)
        return None


def run_app(demo: bool) -> int:
    """The GUI entry point (``gpufleet`` without a subcommand)."""
    qapp = make_qapp()
    theme = setup_theme(qapp)
    hosts: list[HostConfig] = []
    if not demo:
        hosts, problem = load_hosts()
        if not hosts and offer_demo(problem):
            demo = True
    if demo:
        paths.ensure_private_dir(paths.demo_data_dir())
        hosts = demo_hosts()
    lock = refuse_second_instance(demo)
    if lock is None:
        return 1
    try:
        return _run_window(qapp, hosts, demo, theme)
    finally:
        lock.release()


def _run_window(qapp: QApplication, hosts: list[HostConfig], demo: bool, theme: Theme) -> int:
    app = App(hosts, demo, theme)
    keep = _install_signal_handlers(qapp)
    qapp.setQuitOnLastWindowClosed(not app.tray.available)
    app.window.hide_on_close = app.tray.available
    app.start()
    if not hosts:
        QTimer.singleShot(0, app.actions.add_host)
    quit_after = os.environ.get("GPUFLEET_QUIT_AFTER")
    if quit_after:
        QTimer.singleShot(int(float(quit_after) * 1000), qapp.quit)
    try:
        rc = qapp.exec()
    finally:
        app.stop()
        keep.stop()
    return int(rc)


_ = Path
