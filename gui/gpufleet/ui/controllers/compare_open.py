""" "Compare…" in the Hosts menu and the fleet list's context menu: pick two windows of the
history (``ComparePicker``), read and compare them off the GUI thread (the store through
its own read-only connection in the pool), then show ``CompareView``; an error (no history
for that host or window) is said in the status bar, and nothing else changes."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QObject
from PySide6.QtGui import QAction

from gpufleet.core.config import paths
from gpufleet.core.history.store import Store
from gpufleet.core.verdicts.compare import Comparison, compare
from gpufleet.core.verdicts.compare.spec import StoreSpec, read_window
from gpufleet.core.verdicts.window import RunWindow
from gpufleet.ui.background.worker import run_in_pool
from gpufleet.ui.dialogs.compare_pick import ComparePicker
from gpufleet.ui.dialogs.compare_view import CompareView


def load_and_compare(
    store_path: Any, a: StoreSpec, b: StoreSpec
) -> tuple[RunWindow, RunWindow, Comparison]:
    store = Store(store_path, read_only=True)
    try:
        wa, wb = read_window(a, lambda: store), read_window(b, lambda: store)
    finally:
        store.close()
    return wa, wb, compare(wa, wb)


class CompareOpener(QObject):
    def __init__(self, window: Any, demo: bool = False) -> None:
        super().__init__(window)
        self.window, self.demo = window, demo
        self.views: list[CompareView] = []
        self.action = QAction(self.tr("&Compare…"), window)
        self.action.setToolTip(self.tr("Slower than yesterday? Put two runs side by side"))
        self.action.triggered.connect(self.open)
        window.menu_hosts.addAction(self.action)
        window.panel.table.addAction(self.action)

    def open(self) -> None:
        picker = ComparePicker(sorted(self.window.hosts), self.window.selected_host, self.window)
        if not picker.exec():
            return
        a, b = picker.specs()
        path = paths.history_file(demo=self.demo)
        self.window.show_outcome(self.tr("Comparing {b} with {a}…").format(a=a.host, b=b.host))
        run_in_pool(lambda: load_and_compare(path, a, b), self._show, self._failed)

    def _show(self, res: tuple[RunWindow, RunWindow, Comparison]) -> None:
        view = CompareView(*res, parent=self.window)
        view.resize(1366, 768)
        self.views = [v for v in self.views if v.isVisible()] + [view]
        view.show()
        self.window.show_outcome("")

    def _failed(self, e: BaseException) -> None:
        self.window.show_outcome(self.tr("Cannot compare: {error}").format(error=e), ok=False)
