"""Hosts ▸ Remove selected host…: a host taken out of gpufleet from the window, as
``gpufleet hosts remove`` does (config.toml, its stored secrets, its host key), after asking
whether its recorded history stays (to read later with ``gpufleet export``) or goes.

The fleet stops watching it at once; the files are written in the pool. Deleting the history
goes through the running history store (its writer thread owns the file)."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QObject
from PySide6.QtWidgets import QAbstractButton, QMessageBox

from gpufleet.core.cost.billing import BillingFileError, BillingLedger
from gpufleet.core.fleet.fleet import Fleet, FleetError
from gpufleet.core.fleet.removal import Removed, remove_host
from gpufleet.ui.background.worker import run_in_pool
from gpufleet.ui.controllers.bridge import FleetBridge

KEEP = "keep"
DELETE = "delete"


class HostRemoval(QObject):
    def __init__(self, window: Any, fleet: Fleet, bridge: FleetBridge, pool: Any) -> None:
        super().__init__(window)
        self.window = window
        self.fleet = fleet
        self.bridge = bridge
        self.pool = pool
        self.box: QMessageBox | None = None

    def ask(self) -> QMessageBox | None:
        """Ask about the selected host (non-blocking); the answer removes it."""
        name = self.window.selected_host
        if not name or name not in {h.name for h in self.fleet.hosts()}:
            self.window.show_outcome(self.tr("select a host first"), ok=False)
            return None
        box = QMessageBox(self.window)
        box.setIcon(QMessageBox.Icon.Question)
        box.setWindowTitle(self.tr("Remove {host}").format(host=name))
        box.setText(self.tr("Remove {host} from gpufleet?").format(host=name))
        box.setInformativeText(
            self.tr(
                "gpufleet stops watching it and forgets its settings, its stored password or "
                "passphrase and its host key. Its recorded history (samples, alerts, kills) can "
                "stay, for `gpufleet export {host}` to read later, or be deleted now."
            ).format(host=name)
        )
        keep = box.addButton(self.tr("Remove, keep its history"), QMessageBox.ButtonRole.AcceptRole)
        delete = box.addButton(
            self.tr("Remove and delete its history"), QMessageBox.ButtonRole.DestructiveRole
        )
        box.addButton(QMessageBox.StandardButton.Cancel)
        box.setDefaultButton(keep)
        answers: dict[QAbstractButton, str] = {keep: KEEP, delete: DELETE}
        box.buttonClicked.connect(lambda b: self._answered(name, answers.get(b)))
        self.box = box
        box.open()
        return box

    def _answered(self, name: str, answer: str | None) -> None:
        self.box = None
        if answer is not None:
            self.remove(name, delete_history=answer == DELETE)

    def remove(self, name: str, *, delete_history: bool) -> None:
        """Stop watching ``name`` now; its files in the pool."""
        try:
            self.fleet.remove_host(name)
        except FleetError as e:
            self.window.show_outcome(str(e), ok=False)
            return
        alerting = self.bridge.hub.alerting
        if alerting is not None:
            self.bridge.post(lambda: alerting.remove_host(name))
        self.window.set_hosts(self.fleet.hosts())
        store = self.bridge.hub.store if delete_history else None

        def work() -> Removed:
            removed = remove_host(name)
            try:
                ledger = BillingLedger.load()
                ledger.forget(name)
                ledger.save()
            except BillingFileError:
                pass  # a damaged billing.json is reported where billing is shown
            if store is not None:
                store.forget_host(name)
            return removed

        def done(removed: Any) -> None:
            text = (
                self.tr("{host} removed, and its history deleted")
                if delete_history
                else self.tr("{host} removed; its history is kept")
            ).format(host=name)
            if removed.secrets_note:
                text += " — " + self.tr("stored secrets not deleted: {why}").format(
                    why=removed.secrets_note
                )
            self.window.show_outcome(text, ok=not removed.secrets_note)

        def failed(e: BaseException) -> None:
            self.window.show_outcome(
                self.tr("{host}: not removed from the config: {error}").format(host=name, error=e),
                ok=False,
            )

        run_in_pool(work, done, failed, self.pool)
