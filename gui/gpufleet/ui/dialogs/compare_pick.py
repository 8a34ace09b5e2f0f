"""Pick the two windows to compare: a host and a start for A and for B, one length, or a
preset ("this hour vs the same hour yesterday", "this hour vs the hour before"). The
windows are the history store's, so the two can be of two hosts (which rental is better)."""

from __future__ import annotations

import time
from collections.abc import Sequence

from PySide6.QtCore import QDateTime
from PySide6.QtWidgets import (
    QComboBox,
    QDateTimeEdit,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFormLayout,
    QHBoxLayout,
    QPushButton,
    QWidget,
)

from gpufleet.core.verdicts.compare.spec import StoreSpec

HOUR = 3600.0
DAY = 86_400.0


class ComparePicker(QDialog):
    """``specs()`` after ``exec()``: A (the reference) and B (the run in question)."""

    def __init__(
        self, hosts: Sequence[str], host: str | None, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle(self.tr("Compare two runs"))
        form = QFormLayout(self)
        self.host_a, self.host_b = QComboBox(), QComboBox()
        for box in (self.host_a, self.host_b):
            box.addItems(list(hosts))
            if host is not None and host in hosts:
                box.setCurrentText(host)
        self.start_a, self.start_b = QDateTimeEdit(), QDateTimeEdit()
        for edit in (self.start_a, self.start_b):
            edit.setDisplayFormat("yyyy-MM-dd HH:mm")
            edit.setCalendarPopup(True)
        self.hours = QDoubleSpinBox()
        self.hours.setRange(0.1, 48.0)
        self.hours.setSuffix(" h")
        self.hours.setValue(1.0)
        presets = QHBoxLayout()
        yesterday = QPushButton(self.tr("This hour vs the same hour yesterday"))
        yesterday.clicked.connect(lambda: self.preset(DAY))
        before = QPushButton(self.tr("This hour vs the hour before"))
        before.clicked.connect(lambda: self.preset(HOUR))
        presets.addWidget(yesterday)
        presets.addWidget(before)
        form.addRow(presets)
        form.addRow(self.tr("A, the reference: host"), self.host_a)
        form.addRow(self.tr("A starts at"), self.start_a)
        form.addRow(self.tr("B, the run in question: host"), self.host_b)
        form.addRow(self.tr("B starts at"), self.start_b)
        form.addRow(self.tr("Length of each window"), self.hours)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        buttons.button(QDialogButtonBox.StandardButton.Ok).setText(self.tr("Compare"))
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        form.addRow(buttons)
        self.preset(DAY)

    def preset(self, back_s: float, now: float | None = None) -> None:
        """B: the last hour; A: the same hour ``back_s`` earlier (on A's host)."""
        t = time.time() if now is None else now
        self.hours.setValue(1.0)
        self.start_b.setDateTime(QDateTime.fromSecsSinceEpoch(int(t - HOUR)))
        self.start_a.setDateTime(QDateTime.fromSecsSinceEpoch(int(t - HOUR - back_s)))

    def specs(self) -> tuple[StoreSpec, StoreSpec]:
        length = self.hours.value() * HOUR
        ta = float(self.start_a.dateTime().toSecsSinceEpoch())
        tb = float(self.start_b.dateTime().toSecsSinceEpoch())
        return (
            StoreSpec(self.host_a.currentText(), ta, ta + length),
            StoreSpec(self.host_b.currentText(), tb, tb + length),
        )
