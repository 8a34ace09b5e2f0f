"""The watchdog on an instance, from the GUI: see its state, arm it (what to do, after how
long idle, with which grace period, or only record), cancel a pending action, disarm it.
Every request runs off the GUI thread (``Fleet.watchdog`` over the host's transport)."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QThreadPool, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QVBoxLayout,
    QWidget,
)

from gpufleet.core.fleet.fleet import Fleet
from gpufleet.core.providers.watchdog import WATCHDOG_ACTIONS, arm_options, describe
from gpufleet.ui.background.worker import run_in_pool


class WatchdogDialog(QDialog):
    changed = Signal(object)  # the watchdog's state (a dict) after each answer

    def __init__(
        self, parent: QWidget | None, fleet: Fleet, host: str, pool: QThreadPool | None = None
    ) -> None:
        super().__init__(parent)
        self.fleet = fleet
        self.host = host
        self.pool = pool or QThreadPool.globalInstance()
        self.state: dict[str, Any] = {}
        self.setWindowTitle(self.tr("Watchdog on {host}").format(host=host))
        lay = QVBoxLayout(self)
        intro = QLabel(
            self.tr(
                "Armed, the sampler on the instance watches for idleness itself (all GPUs "
                "under 5 % utilization and 10 % memory), warns, waits the grace period, then "
                "acts once, also while this laptop sleeps."
            )
        )
        intro.setWordWrap(True)
        lay.addWidget(intro)
        form = QFormLayout()
        self.action = QComboBox()
        self.action.addItems(WATCHDOG_ACTIONS)
        self.command = QLineEdit()
        self.command.setPlaceholderText(self.tr("for the command action, e.g. /root/stop.sh"))
        self.idle = QDoubleSpinBox()
        self.idle.setRange(0, 7 * 24 * 60)
        self.idle.setValue(15)
        self.idle.setSuffix(self.tr(" min"))
        self.grace = QDoubleSpinBox()
        self.grace.setRange(0, 24 * 60)
        self.grace.setValue(5)
        self.grace.setSuffix(self.tr(" min"))
        self.dry_run = QCheckBox(self.tr("only record what it would do"))
        for label, w in (
            (self.tr("Action"), self.action),
            (self.tr("Command"), self.command),
            (self.tr("Idle for"), self.idle),
            (self.tr("Grace period"), self.grace),
            (self.tr("Dry run"), self.dry_run),
        ):
            form.addRow(label, w)
        lay.addLayout(form)
        self.status = QLabel(self.tr("asking the instance…"))
        self.status.setWordWrap(True)
        lay.addWidget(self.status)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        role = QDialogButtonBox.ButtonRole.ActionRole
        self.arm_button = buttons.addButton(self.tr("Arm"), role)
        self.cancel_button = buttons.addButton(self.tr("Cancel pending action"), role)
        self.disarm_button = buttons.addButton(self.tr("Disarm"), role)
        self.refresh_button = buttons.addButton(self.tr("Refresh"), role)
        self.arm_button.clicked.connect(self.arm)
        self.cancel_button.clicked.connect(lambda: self.request("cancel"))
        self.disarm_button.clicked.connect(lambda: self.request("disarm"))
        self.refresh_button.clicked.connect(lambda: self.request("status"))
        buttons.rejected.connect(self.reject)
        lay.addWidget(buttons)
        self.request("status")

    def arm(self) -> None:
        try:
            opts = arm_options(
                self.action.currentText(),
                self.command.text().strip() or None,
                self.idle.value() * 60.0,
                self.grace.value() * 60.0,
                self.dry_run.isChecked(),
            )
        except ValueError as e:
            self.status.setText(str(e))
            return
        self.request("arm", opts)

    def request(self, cmd: str, options: list[str] | None = None) -> None:
        fleet, host = self.fleet, self.host
        self._busy(True)
        run_in_pool(
            lambda: fleet.watchdog(host, cmd, options), self._answer, self._failed, self.pool
        )

    def _busy(self, busy: bool) -> None:
        for b in (self.arm_button, self.cancel_button, self.disarm_button, self.refresh_button):
            b.setEnabled(not busy)

    def _answer(self, reply: Any) -> None:
        self._busy(False)
        st = reply.get("watchdog") if isinstance(reply, dict) else None
        self.state = dict(st) if isinstance(st, dict) else {}
        text = describe(self.host, self.state)
        if isinstance(reply, dict) and not reply.get("ok"):
            text = f"{reply.get('message', '')}\n{text}"
        self.status.setText(text)
        self.cancel_button.setEnabled(self.state.get("phase") == "pending")
        self.changed.emit(self.state)

    def _failed(self, e: BaseException) -> None:
        self._busy(False)
        self.status.setText(str(e))
