""" "Export evidence…" from the window: the bundle (``core.verdicts.bundle``: metrics.csv,
plots, inventory, alerts, events, processes, summary) of a host over a window, written in
the background with a busy indicator in the status bar and "Open folder" when done.

Reached from the selected alert (its window: from a few minutes before the condition first
held to its end), the Clocks tab (the range on screen) and the host menu (the range on
screen). The store is read through its own read-only connection in the QThreadPool; the
plots are pyqtgraph widgets, which live on the GUI thread only, so the worker asks the GUI
thread to render them (a blocking queued call, ~0.3 s of the GUI thread for six plots) and
goes on with the zip.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from PySide6.QtCore import QObject, Qt, QUrl, Signal, SignalInstance, Slot
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import QFileDialog, QProgressBar, QPushButton, QStatusBar, QWidget

from gpufleet.core.config import paths
from gpufleet.core.history.audit import read_audit
from gpufleet.core.history.store import Store
from gpufleet.core.history.timeparse import format_utc
from gpufleet.core.model.alert import Alert
from gpufleet.core.verdicts.bundle import BundleReport, PlotData, build_bundle
from gpufleet.ui.background.worker import run_in_pool
from gpufleet.ui.offscreen.evidence import render_plots

# An alert's bundle starts this long before its condition first held: what led to it.
BEFORE_S = 600.0
AFTER_S = 60.0


class ExportWindow(Protocol):
    """What the exporter needs of the main window: its status bar, a place to say the
    outcome, and the two requests it answers (a host over a range; an alert)."""

    evidence_requested: SignalInstance  # (host, t0, t1)
    alert_evidence_requested: SignalInstance  # (Alert)

    def statusBar(self) -> QStatusBar: ...  # Qt's name

    def show_outcome(self, text: str, ok: bool = True) -> None: ...


def alert_window(alert: Alert, now: float) -> tuple[float, float]:
    """From BEFORE_S before the condition first held to AFTER_S after the alert ended
    (now, while it fires)."""
    since = alert.evidence.get("since_t")
    start = float(since) if isinstance(since, (int, float)) else float(alert.started_t)
    start = min(start, float(alert.started_t))
    end = float(alert.ended_t) + AFTER_S if alert.ended_t is not None else now
    return start - BEFORE_S, min(end, now)


def default_name(host: str, t1: float) -> str:
    stamp = format_utc(t1, "seconds").replace(":", "").replace("-", "").replace(" ", "-")
    return f"gpufleet-evidence-{host}-{stamp}.zip"


class _Renderer(QObject):
    """Lives on the GUI thread; the worker calls ``render`` through a blocking signal."""

    ask = Signal(object, object)  # PlotData, holder list

    def __init__(self) -> None:
        super().__init__()
        self.ask.connect(self._render, Qt.ConnectionType.BlockingQueuedConnection)

    @Slot(object, object)
    def _render(self, data: PlotData, holder: list[Any]) -> None:
        try:
            holder.append(render_plots(data))
        except Exception as e:  # the zip goes on without plots; the report says why
            holder.append(e)

    def render(self, data: PlotData) -> dict[str, bytes]:
        holder: list[Any] = []
        if threading.current_thread() is threading.main_thread():
            self._render(data, holder)
        else:
            self.ask.emit(data, holder)
        got = holder[0] if holder else RuntimeError("the plots were not rendered")
        if isinstance(got, Exception):
            raise got
        return dict(got)


class EvidenceExporter(QObject):
    started = Signal(str)  # the path being written
    finished = Signal(object)  # BundleReport
    failed = Signal(str)

    def __init__(self, window: ExportWindow, *, demo: bool = False) -> None:
        super().__init__(window if isinstance(window, QObject) else None)
        self.window = window
        self.demo = demo
        self.renderer = _Renderer()
        self.busy: set[str] = set()
        # Where to save: a file dialog (tests and scripts replace it).
        self.choose_path: Callable[[str], str | None] = self._ask_path
        self.last_dir = Path.home()
        bar = window.statusBar()
        self.progress = QProgressBar()
        self.progress.setRange(0, 0)  # busy: the bundle has no steps worth counting
        self.progress.setMaximumWidth(120)
        self.progress.hide()
        bar.addPermanentWidget(self.progress)
        self.open_btn = QPushButton(self.tr("Open folder"))
        self.open_btn.setFlat(True)
        self.open_btn.hide()
        self.open_btn.clicked.connect(self._open_folder)
        bar.addPermanentWidget(self.open_btn)
        self._folder: Path | None = None
        window.evidence_requested.connect(self.export)
        window.alert_evidence_requested.connect(self.export_alert)

    def _ask_path(self, name: str) -> str | None:
        parent = self.window if isinstance(self.window, QWidget) else None
        path, _ = QFileDialog.getSaveFileName(
            parent,
            self.tr("Export evidence"),
            str(self.last_dir / name),
            self.tr("Evidence bundle (*.zip)"),
        )
        return path or None

    def export(self, host: str, t0: float, t1: float) -> str | None:
        """Ask where, then write the bundle in the background; → the path, or None when
        the user cancelled."""
        if host in self.busy:
            self.window.show_outcome(
                self.tr("{host}: an export is already being written").format(host=host), False
            )
            return None
        chosen = self.choose_path(default_name(host, t1))
        if not chosen:
            return None
        out = Path(chosen)
        if out.suffix.lower() != ".zip":
            out = out.with_name(out.name + ".zip")
        self.last_dir = out.parent
        self.busy.add(host)
        self.progress.show()
        self.open_btn.hide()
        self.window.show_outcome(
            self.tr("writing the evidence for {host} to {path}…").format(host=host, path=out)
        )
        self.started.emit(str(out))
        store_path = paths.history_file(self.demo)
        renderer = self.renderer
        demo = self.demo

        def build() -> BundleReport:
            store = Store(store_path, read_only=True)
            try:
                return build_bundle(
                    store, host, t0, t1, out, render_plots=renderer.render, audit=read_audit(demo)
                )
            finally:
                store.close()

        def done(report: BundleReport) -> None:
            self._done(host)
            self._folder = report.path.parent
            self.open_btn.show()
            note = (
                self.tr(" (plots left out: {why})").format(why=report.plot_error)
                if report.plot_error
                else ""
            )
            self.window.show_outcome(
                self.tr("evidence for {host} saved: {path}, {rows} GPU-samples").format(
                    host=host, path=report.path, rows=report.rows
                )
                + note
            )
            self.finished.emit(report)

        def failed(e: BaseException) -> None:
            self._done(host)
            text = self.tr("the evidence for {host} was not written: {error}").format(
                host=host, error=e
            )
            self.window.show_outcome(text, False)
            self.failed.emit(text)

        run_in_pool(build, done, failed)
        return str(out)

    def export_alert(self, alert: Alert) -> str | None:
        t0, t1 = alert_window(alert, time.time())
        return self.export(str(alert.host), t0, t1)

    def _done(self, host: str) -> None:
        self.busy.discard(host)
        if not self.busy:
            self.progress.hide()

    def _open_folder(self) -> None:
        if self._folder is not None:
            QDesktopServices.openUrl(QUrl.fromLocalFile(str(self._folder)))
