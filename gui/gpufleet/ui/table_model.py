"""A small table model fed with rows of immutable cells, for the host list, the overview,
the process table and the cost totals.

``set_rows`` replaces the content; when the shape is unchanged it emits one ``dataChanged``
for the whole table (cheap: the view repaints only visible cells) instead of a model reset,
so selection and scroll position survive the 2–4 Hz refresh.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import (
    QAbstractTableModel,
    QModelIndex,
    QPersistentModelIndex,
    QSortFilterProxyModel,
    Qt,
)
from PySide6.QtGui import QColor

SORT_ROLE = Qt.ItemDataRole.UserRole + 1
KEY_ROLE = Qt.ItemDataRole.UserRole + 2

Index = QModelIndex | QPersistentModelIndex


@dataclass(frozen=True)
class Cell:
    text: str
    sort: Any = None  # the value sorted on (defaults to the text)
    colour: str | None = None
    tooltip: str | None = None
    align_right: bool = False


class RowsModel(QAbstractTableModel):
    def __init__(self, headers: Sequence[str]) -> None:
        super().__init__()
        self.headers = list(headers)
        self.rows: list[tuple[Cell, ...]] = []
        self.keys: list[Any] = []

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.rows)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.headers)

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        if role == Qt.ItemDataRole.DisplayRole and orientation == Qt.Orientation.Horizontal:
            return self.headers[section]
        return None

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        cell = self.rows[index.row()][index.column()]
        if role == Qt.ItemDataRole.DisplayRole:
            return cell.text
        if role == SORT_ROLE:
            return cell.sort if cell.sort is not None else cell.text
        if role == KEY_ROLE:
            return self.keys[index.row()]
        if role == Qt.ItemDataRole.ForegroundRole and cell.colour:
            return QColor(cell.colour)
        if role == Qt.ItemDataRole.ToolTipRole:
            return cell.tooltip
        if role == Qt.ItemDataRole.TextAlignmentRole and cell.align_right:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None

    def set_rows(self, rows: Sequence[tuple[Cell, ...]], keys: Sequence[Any]) -> None:
        rows = list(rows)
        if len(rows) == len(self.rows) and list(keys) == self.keys:
            if rows != self.rows:
                self.rows = rows
                self.dataChanged.emit(
                    self.index(0, 0), self.index(len(rows) - 1, len(self.headers) - 1)
                )
            return
        self.beginResetModel()
        self.rows = rows
        self.keys = list(keys)
        self.endResetModel()

    def cell(self, row: int, col: int) -> Cell:
        return self.rows[row][col]

    def row_of(self, key: Any) -> int | None:
        try:
            return self.keys.index(key)
        except ValueError:
            return None


def sorted_proxy(model: RowsModel) -> QSortFilterProxyModel:
    proxy = QSortFilterProxyModel()
    proxy.setSourceModel(model)
    proxy.setSortRole(SORT_ROLE)
    proxy.setDynamicSortFilter(True)
    return proxy
