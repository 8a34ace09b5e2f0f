"""A small table model fed with rows of immutable cells, for the host list, the overview,
the process table and the cost totals.

Built on QStandardItemModel on purpose: a Python ``QAbstractTableModel`` answers ~20 virtual
calls per visible cell per paint (data per role, rowCount, columnCount, through the sort
proxy), which measured 80–100 ms per paint of a 256-row overview; with the items held in C++
a paint makes no Python call at all, and an update touches only the cells that changed.

``set_rows`` keeps the items (and with them selection and scroll position) when the keys are
unchanged, and rebuilds otherwise. Sort keys are stored as numbers or strings (tuples are
encoded into strings that sort the same way), so the proxy sorts in C++.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QSortFilterProxyModel, Qt
from PySide6.QtGui import QBrush, QColor, QStandardItem, QStandardItemModel

SORT_ROLE = Qt.ItemDataRole.UserRole + 1
KEY_ROLE = Qt.ItemDataRole.UserRole + 2
_RIGHT = Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
_LEFT = Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter
_BRUSHES: dict[str, QBrush] = {}


@dataclass(frozen=True)
class Cell:
    text: str
    sort: Any = None  # the value sorted on (defaults to the text)
    colour: str | None = None
    tooltip: str | None = None
    align_right: bool = False


def sort_value(x: Any) -> float | str:
    """A value the C++ proxy can compare: numbers stay numbers; tuples become strings whose
    order is the tuples' order (numbers offset and zero-padded)."""
    if isinstance(x, bool):
        return float(x)
    if isinstance(x, (int, float)):
        return float(x)
    if isinstance(x, tuple):
        parts = []
        for p in x:
            if isinstance(p, (int, float)) and not isinstance(p, bool):
                parts.append(f"{float(p) + 1e12:024.6f}")
            else:
                parts.append(str(p))
        return "\x1f".join(parts)
    return "" if x is None else str(x)


def _brush(colour: str) -> QBrush:
    b = _BRUSHES.get(colour)
    if b is None:
        b = _BRUSHES[colour] = QBrush(QColor(colour))
    return b


def _apply(item: QStandardItem, cell: Cell, old: Cell | None = None) -> None:
    """Set the item from ``cell``; with ``old`` (what the item shows now), only the parts
    that differ (each setter is a C++ call; most updates change the text only)."""
    if old is None or cell.text != old.text:
        item.setText(cell.text)
    if old is None or cell.sort != old.sort or (cell.sort is None and cell.text != old.text):
        item.setData(sort_value(cell.sort if cell.sort is not None else cell.text), SORT_ROLE)
    if old is None or cell.colour != old.colour:
        if cell.colour:
            item.setForeground(_brush(cell.colour))
        else:
            item.setData(None, Qt.ItemDataRole.ForegroundRole)
    if old is None or cell.tooltip != old.tooltip:
        item.setToolTip(cell.tooltip or "")
    if old is None or cell.align_right != old.align_right:
        item.setTextAlignment(_RIGHT if cell.align_right else _LEFT)


class RowsModel(QStandardItemModel):
    def __init__(self, headers: Sequence[str]) -> None:
        super().__init__(0, len(headers))
        self.headers = list(headers)
        self.setHorizontalHeaderLabels(self.headers)
        self.rows: list[tuple[Cell, ...]] = []
        self.keys: list[Any] = []
        self._index: dict[Any, int] = {}

    def set_rows(self, rows: Sequence[tuple[Cell, ...]], keys: Sequence[Any]) -> None:
        rows = list(rows)
        keys = list(keys)
        if len(rows) == len(self.rows) and keys == self.keys:
            # Same rows: change only the cells that differ (each item change would make the
            # sort proxy re-sort and the view repaint, 1–2 ms apiece).
            self.update_rows(dict(enumerate(rows)))
            return
        self.removeRows(0, self.rowCount())
        for row, key in zip(rows, keys, strict=True):
            items = []
            for cell in row:
                item = QStandardItem()
                item.setEditable(False)
                item.setData(key, KEY_ROLE)
                _apply(item, cell)
                items.append(item)
            self.appendRow(items)
        self.rows = rows
        self.keys = keys
        self._index = {k: i for i, k in enumerate(keys)}

    def update_rows(self, changed: dict[int, tuple[Cell, ...]]) -> None:
        """Replace some rows (by model row; the keys stay): only the cells that differ are
        touched, and the changed span is announced once."""
        first = last = -1
        self.blockSignals(True)
        try:
            for r in sorted(changed):
                new, old = changed[r], self.rows[r]
                if new == old:
                    continue
                first = r if first < 0 else first
                last = r
                for c, (cn, co) in enumerate(zip(new, old, strict=True)):
                    if cn != co:
                        item = self.item(r, c)
                        if item is not None:
                            _apply(item, cn, co)
                self.rows[r] = new
        finally:
            self.blockSignals(False)
        if first >= 0:
            self.dataChanged.emit(self.index(first, 0), self.index(last, len(self.headers) - 1))

    def cell(self, row: int, col: int) -> Cell:
        return self.rows[row][col]

    def row_of(self, key: Any) -> int | None:
        return self._index.get(key)


def sorted_proxy(model: RowsModel) -> QSortFilterProxyModel:
    proxy = QSortFilterProxyModel()
    proxy.setSourceModel(model)
    proxy.setSortRole(SORT_ROLE)
    proxy.setDynamicSortFilter(True)
    return proxy
