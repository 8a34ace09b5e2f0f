"""What the user arranged in the window, kept between runs: where the splitters are, which
column each list is sorted by. An INI file next to config.toml (``window.ini``), written
through QSettings; only the user's own moves are saved, so a window that never moved a
splitter keeps following the defaults.

Not in config.toml: that file holds what the user wrote (hosts, prices) and is watched for
changes; a splitter dragged many times a minute has no business there.
"""

from __future__ import annotations

from PySide6.QtCore import QByteArray, QSettings, Qt
from PySide6.QtWidgets import QHeaderView, QSplitter

from gpufleet.core.config import paths


class UiState:
    def __init__(self, settings: QSettings | None = None) -> None:
        self.settings = settings or QSettings(
            str(paths.config_dir() / "window.ini"), QSettings.Format.IniFormat
        )

    def keep_splitter(self, name: str, split: QSplitter) -> None:
        """Restore the splitter's saved position, and save it whenever the user drags it."""
        saved = self.settings.value(f"splitters/{name}")
        if isinstance(saved, QByteArray) and not saved.isEmpty():
            split.restoreState(saved)
        split.splitterMoved.connect(
            lambda _pos, _i: self.settings.setValue(f"splitters/{name}", split.saveState())
        )

    def keep_sort(self, name: str, header: QHeaderView) -> None:
        """Restore the list's saved sort column and order, and save the user's next choice.
        The caller has set the default (worst first) before: without a saved choice it
        stays."""
        col = self.settings.value(f"sort/{name}/column")
        order = self.settings.value(f"sort/{name}/order")
        try:
            c, o = int(str(col)), int(str(order))
        except ValueError:
            c, o = -1, -1
        if 0 <= c < header.count() and o in (0, 1):
            header.setSortIndicator(c, Qt.SortOrder(o))

        def save(column: int, sort_order: Qt.SortOrder) -> None:
            self.settings.setValue(f"sort/{name}/column", column)
            self.settings.setValue(f"sort/{name}/order", int(sort_order.value))

        header.sortIndicatorChanged.connect(save)
