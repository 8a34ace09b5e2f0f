"""The desktop app's Prometheus pieces, all opt-in from config.toml:

    [settings]
    metrics_listen = "127.0.0.1:9464"        # serve the fleet to Prometheus (as serve-metrics)
    alertmanager_listen = "127.0.0.1:9466"   # accept Alertmanager's webhook (token: keyring)

    [[prometheus]]                           # a host group read from a Prometheus server
    name = "team"
    url = "http://prometheus.example:9090"

- Prometheus host groups: a ``PromPoller`` per ``[[prometheus]]`` entry publishes into the same
  event queue the Fleet fills, so the pipeline hub, live buffers, rules and cost treat its
  instances as hosts (named ``<group>/<Hostname>``, priced from the entry). The group itself is
  listed as a host, so a Prometheus that is down shows its one-line reason in the fleet list.
  The queries run on the poller's thread, never on the GUI thread.
- Alertmanager: the receiver's alerts go to the hub (``post_external``), which merges them
  into the alert list and passes them to the tray.
- The fleet exporter: a ``MetricsServer`` fed by the app's own pipeline hub, so the alerts it
  serves are the window's (one rule engine: an ack in the window shows in the series).

A piece that cannot start (no token in the keyring, an address in use) is logged and shown in
the status bar; the app runs on without it.
"""

from __future__ import annotations

import logging
from typing import Any

from PySide6.QtCore import QObject

from gpufleet.core.config.configfile import AppConfig, load_config
from gpufleet.core.config.prometheus_sources import PromSourceConfig
from gpufleet.core.fleet.fleet import Fleet
from gpufleet.core.pipeline.build import Pipeline
from gpufleet.core.pipeline.prom_consumers import PromSources, start_am_receiver
from gpufleet.core.prometheus.am_receiver import AlertmanagerReceiver, ReceiverError
from gpufleet.core.prometheus.source import PromPoller
from gpufleet.core.wire.messages import Hello
from gpufleet.ui.controllers.bridge import FleetBridge
from gpufleet.ui.window.main_window import MainWindow

log = logging.getLogger(__name__)


class PromWiring(QObject):
    def __init__(
        self,
        window: MainWindow,
        bridge: FleetBridge,
        pipeline: Pipeline,
        fleet: Fleet,
        config: AppConfig | None = None,
    ) -> None:
        super().__init__()
        self.window = window
        self.bridge = bridge
        self.pipeline = pipeline
        self.fleet = fleet
        self.config = config
        self.pollers: list[PromPoller] = []
        self.sources: dict[str, PromSourceConfig] = {}  # group name -> its config
        self.receiver: AlertmanagerReceiver | None = None
        self.prom: PromSources | None = None
        self.metrics_url: str | None = None
        self.problems: list[str] = []

    def _load(self) -> AppConfig | None:
        if self.config is not None:
            return self.config
        try:
            return load_config()
        except Exception as e:  # the app already reports a bad config; do not add a trace
            log.warning("prometheus wiring: no config: %s", e)
            return None

    def start(self) -> None:
        cfg = self._load()
        if cfg is None:
            return
        settings = cfg.settings or {}
        self._start_sources(getattr(cfg, "prometheus", []) or [])
        if settings.get("alertmanager_listen"):
            self._start_receiver(str(settings["alertmanager_listen"]))
        if settings.get("metrics_listen"):
            self._start_metrics(str(settings["metrics_listen"]))
        for p in self.problems:
            self.window.show_outcome(p, ok=False)

    # -- Prometheus host groups ------------------------------------------------------------

    def _start_sources(self, tables: list[dict[str, Any]]) -> None:
        if not tables:
            return
        try:
            self.prom = PromSources.from_tables(self.pipeline.hub, tables)
        except ValueError as e:
            self.problems.append(str(e))
            return
        self.sources = self.prom.sources
        win = self.window
        win.set_hosts([*win.hosts.values(), *self.prom.groups()])
        self.bridge.hello_received.connect(self._on_hello)
        self.prom.start()
        self.pollers = self.prom.pollers

    def _on_hello(self, host: str, hello: Hello) -> None:
        """A Prometheus instance seen for the first time becomes a host of the window, priced
        from its group's entry (the rule engine's cost tracker learns the price too)."""
        win = self.window
        hc = self.prom.new_instance(host, known=host in win.hosts) if self.prom else None
        if hc is None:
            return
        win.set_hosts([*win.hosts.values(), hc])
        alerting = self.pipeline.alerting
        self.pipeline.hub.post(lambda: alerting.set_host(hc))

    # -- Alertmanager ----------------------------------------------------------------------

    def _start_receiver(self, listen: str) -> None:
        try:
            rx = start_am_receiver(self.pipeline.hub, listen)
        except Exception as e:  # ReceiverError, or a keyring that cannot be read
            msg = str(e) if isinstance(e, ReceiverError) else f"Alertmanager receiver: {e}"
            self.problems.append(
                msg
                if isinstance(e, ReceiverError)
                else self.tr("Alertmanager receiver: {error}").format(error=e)
            )
            log.warning("%s", msg)
            return
        self.receiver = rx
        log.info("Alertmanager receiver on %s", rx.url)

    # -- the fleet exporter ----------------------------------------------------------------

    def _start_metrics(self, listen: str) -> None:
        try:
            url = self.pipeline.start_metrics(self.fleet, listen)
        except (OSError, ValueError) as e:
            why = getattr(e, "strerror", None) or e
            msg = f"cannot serve metrics on {listen}: {why}"
            self.problems.append(
                self.tr("cannot serve metrics on {address}: {error}").format(
                    address=listen, error=why
                )
            )
            log.warning("%s", msg)
            return
        self.metrics_url = url
        log.info("serving metrics on %s", url)

    def stop(self) -> None:
        if self.prom is not None:
            self.prom.stop()
        self.pollers = []
        if self.receiver is not None:
            self.receiver.stop()
            self.receiver = None
        # The metrics server stops with the pipeline (after the hub that feeds it).
