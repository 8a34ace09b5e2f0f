"""The time-range buttons of the main window's header, which fold into one menu button when
the header is narrow (a 1280-px laptop screen with the fleet panel open).

Unfolded, the ranges are a row of checkable buttons (one click each, the current one shown
pressed); folded, one button names the current range and opens a menu of all of them. The
widget's minimum width is the folded button's, so the ranges never push the window wider.
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import QSize, Signal
from PySide6.QtGui import QAction, QActionGroup, QResizeEvent
from PySide6.QtWidgets import (
    QButtonGroup,
    QHBoxLayout,
    QMenu,
    QPushButton,
    QSizePolicy,
    QToolButton,
    QWidget,
)


class RangeSelector(QWidget):
    range_picked = Signal(float)

    def __init__(
        self, ranges: Sequence[tuple[str, float]], current: float, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.ranges = tuple(ranges)
        self.current = current
        lay = QHBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(4)
        self.group = QButtonGroup(self)
        self.group.setExclusive(True)
        self.buttons: list[QPushButton] = []
        for i, (label, secs) in enumerate(self.ranges):
            b = QPushButton(label)
            b.setCheckable(True)
            b.setChecked(secs == current)
            b.clicked.connect(lambda _=False, s=secs: self._pick(s))
            self.group.addButton(b, i)
            self.buttons.append(b)
            lay.addWidget(b)
        self.folded = QToolButton()
        self.folded.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        menu = QMenu(self.folded)
        self.actions_group = QActionGroup(self)
        self.actions_group.setExclusive(True)
        self.menu_actions: list[QAction] = []
        for label, secs in self.ranges:
            act = QAction(label, self)
            act.setCheckable(True)
            act.setChecked(secs == current)
            act.triggered.connect(lambda _=False, s=secs: self._pick(s))
            self.actions_group.addAction(act)
            menu.addAction(act)
            self.menu_actions.append(act)
        self.folded.setMenu(menu)
        lay.addWidget(self.folded)
        self.folded.hide()
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Fixed)
        self._show_current()

    def _pick(self, seconds: float) -> None:
        self.set_current(seconds)
        self.range_picked.emit(seconds)

    def set_current(self, seconds: float) -> None:
        self.current = seconds
        for b, act, (_, s) in zip(self.buttons, self.menu_actions, self.ranges, strict=True):
            b.setChecked(s == seconds)
            act.setChecked(s == seconds)
        self._show_current()

    def _show_current(self) -> None:
        label = next((lbl for lbl, s in self.ranges if s == self.current), "")
        self.folded.setText(f"{label} ▾")

    def unfolded_width(self) -> int:
        lay = self.layout()
        spacing = lay.spacing() if lay is not None else 0
        return sum(b.sizeHint().width() for b in self.buttons) + spacing * (len(self.buttons) - 1)

    def is_folded(self) -> bool:
        return not self.folded.isHidden()

    def sizeHint(self) -> QSize:
        h = max((b.sizeHint().height() for b in self.buttons), default=24)
        return QSize(self.unfolded_width(), h)

    def minimumSizeHint(self) -> QSize:
        s = self.folded.sizeHint()
        return QSize(s.width(), max(s.height(), self.sizeHint().height()))

    def resizeEvent(self, event: QResizeEvent) -> None:
        fold = event.size().width() < self.unfolded_width()
        if fold != self.is_folded():
            for b in self.buttons:
                b.setVisible(not fold)
            self.folded.setVisible(fold)
        super().resizeEvent(event)
