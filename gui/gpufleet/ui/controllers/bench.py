"""The "Benchmark" action on a host: the Hosts menu and the fleet list's context menu open
the benchmark dialog for the selected host; the run itself is ``core.pipeline.bench`` (the
same as ``gpufleet bench``: judged, kept in the history, handed to a running exporter).

Each host's latest result, read from the history off the GUI thread at start and replaced
after each run, becomes one line on the host (its tooltip, its cards, its Overview rows). A
host that streams for the first time with no benchmark on record is offered one in the
status bar (the moment a new rental's first check runs).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, QThreadPool
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QPushButton

from gpufleet.core.fleet.fleet import Fleet
from gpufleet.core.history import bench_results
from gpufleet.core.pipeline.bench import run_bench
from gpufleet.core.prometheus.exporter import FleetMetrics
from gpufleet.core.text.bench import host_bench_line
from gpufleet.ui.background.worker import run_in_pool
from gpufleet.ui.dialogs.bench import BenchDialog, BenchRunner

log = logging.getLogger(__name__)


class BenchController(QObject):
    def __init__(
        self,
        window: Any,
        fleet: Fleet,
        pool: QThreadPool,
        history: Path | None,
        metrics: Callable[[], FleetMetrics | None] = lambda: None,
        seconds: float = 60.0,
    ) -> None:
        super().__init__(window)
        self.window = window
        self.fleet = fleet
        self.pool = pool
        self.history = history
        self.metrics = metrics
        self.seconds = seconds
        self.dialog: BenchDialog | None = None
        self._known: set[str] = set()  # hosts with a result on record (no offer)
        self._offered: set[str] = set()
        self.act = QAction(self.tr("&Benchmark the selected host…"), window)
        self.act.setToolTip(self.tr("Is this the card you paid for? About a minute."))
        self.act.triggered.connect(self.open_selected)
        window.menu_hosts.insertAction(window.act_export, self.act)
        window.panel.table.addAction(self.act)
        self.offer_btn = QPushButton()
        self.offer_btn.setFlat(True)
        self.offer_btn.hide()
        self.offer_btn.clicked.connect(self._take_offer)
        window.statusBar().addPermanentWidget(self.offer_btn)
        self._offer_host: str | None = None
        if history is not None:
            names = [h.name for h in fleet.hosts()]
            run_in_pool(lambda: self._latest(names), self._show_latest, self._unread, pool)

    # -- the hosts' latest results ---------------------------------------------------------

    def _latest(self, names: list[str]) -> dict[str, bench_results.BenchRecord | None]:
        assert self.history is not None
        out: dict[str, bench_results.BenchRecord | None] = {}
        for name in names:
            runs = bench_results.runs_of_host(self.history, name, limit=1)
            out[name] = runs[0] if runs else None
        return out

    def _show_latest(self, latest: dict[str, bench_results.BenchRecord | None]) -> None:
        now = time.time()
        for name, rec in latest.items():
            if rec is not None:
                self._known.add(name)
            line = host_bench_line(rec.result if rec else None, rec.t if rec else None, now)
            self.window.bench_lines[name] = line
        self.window.update_summaries()

    def _unread(self, e: BaseException) -> None:
        log.warning("benchmark results unreadable: %s", e)

    def host_streaming(self, host: str) -> None:
        """Offer a benchmark to a host that streams with none on record (once a session)."""
        if host in self._known or host in self._offered or self.history is None:
            return
        self._offered.add(host)
        self._offer_host = host
        self.offer_btn.setText(self.tr("Benchmark {host}: is it the card you paid for?").format(
            host=host))  # fmt: skip
        self.offer_btn.show()

    def _take_offer(self) -> None:
        self.offer_btn.hide()
        if self._offer_host is not None:
            self.open(self._offer_host)

    # -- the dialog ------------------------------------------------------------------------

    def open_selected(self) -> None:
        host = self.window.selected_host
        if host is not None:
            self.open(host)

    def runner(self, host: str) -> BenchRunner:
        cfg = next(h for h in self.fleet.hosts() if h.name == host)

        def run(on_message: Callable[[dict[str, Any]], None], _cancel: threading.Event) -> Any:
            return run_bench(
                self.fleet, cfg, self.history, on_message, lambda m: log.info("%s: %s", host, m),
                None, self.seconds, False, self.metrics(),
            )  # fmt: skip

        return run

    def open(self, host: str) -> BenchDialog:
        if self.dialog is not None and self.dialog.running:
            self.dialog.raise_()
            return self.dialog
        self.dialog = BenchDialog(self.window, host, self.runner(host), self.pool)
        self.dialog.finished_result.connect(lambda r: self._recorded(host, r))
        self.dialog.show()
        return self.dialog

    def _recorded(self, host: str, result: dict[str, Any]) -> None:
        self._known.add(host)
        if self._offer_host == host:
            self.offer_btn.hide()
        now = time.time()
        self.window.set_bench_line(host, host_bench_line(result, now, now))
