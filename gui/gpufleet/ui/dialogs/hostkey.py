"""The host-key fingerprint confirmation, asked from a session's worker thread.

``HostKeyPrompt.ask(label, key_type, fingerprint)`` is the Fleet's ``on_unknown_key``
callback: it runs on a session thread, so it hands the question to the GUI thread through a
queued signal and waits for the answer (bounded: no answer in five minutes means "no").

Several hosts behind one address (a provider's SSH gateway: pods as users of
``ssh.runpod.io``) meet the same key at the same moment: one question per key, asked once;
the others wait for that answer and take it (for ``REMEMBER_S``), instead of a second dialog
popping up over the first.
"""

from __future__ import annotations

import threading
import time

from PySide6.QtCore import QCoreApplication, QObject, QThread, Signal, Slot
from PySide6.QtWidgets import QMessageBox, QWidget

WAIT_S = 300.0
REMEMBER_S = 600.0


def confirm_host_key(parent: QWidget | None, label: str, key_type: str, fingerprint: str) -> bool:
    box = QMessageBox(parent)
    box.setIcon(QMessageBox.Icon.Warning)
    box.setWindowTitle(QCoreApplication.translate("HostKeyPrompt", "Unknown host key"))
    box.setText(
        QCoreApplication.translate(
            "HostKeyPrompt", "gpufleet has never connected to {label} before."
        ).format(label=label)
    )
    box.setInformativeText(
        QCoreApplication.translate(
            "HostKeyPrompt",
            "Its {key_type} key fingerprint is:\n\n{fingerprint}\n\n"
            "Compare it with the one your provider shows (or `ssh-keygen -lf` on the host) "
            "before trusting it. Trusted keys are saved to known_hosts; a key that later "
            "changes is refused.",
        ).format(key_type=key_type, fingerprint=fingerprint)
    )
    box.setStandardButtons(QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No)
    box.button(QMessageBox.StandardButton.Yes).setText(
        QCoreApplication.translate("HostKeyPrompt", "Trust and connect")
    )
    box.button(QMessageBox.StandardButton.No).setText(
        QCoreApplication.translate("HostKeyPrompt", "Do not connect")
    )
    box.setDefaultButton(QMessageBox.StandardButton.No)
    return box.exec() == QMessageBox.StandardButton.Yes


class HostKeyPrompt(QObject):
    _asked = Signal(object)

    def __init__(self) -> None:
        super().__init__()
        self.parent_widget: QWidget | None = None
        self._asked.connect(self._on_gui_thread)
        self._guard = threading.Lock()
        self._locks: dict[tuple[str, str], threading.Lock] = {}
        self._answers: dict[tuple[str, str], tuple[bool, float]] = {}

    def ask(self, label: str, key_type: str, fingerprint: str) -> bool:
        key = (key_type, fingerprint)
        with self._guard:
            lock = self._locks.setdefault(key, threading.Lock())
        with lock:  # one question per key at a time; the others wait for its answer
            hit = self._answers.get(key)
            if hit is not None and time.monotonic() - hit[1] < REMEMBER_S:
                return hit[0]
            ok = self._ask(label, key_type, fingerprint)
            self._answers[key] = (ok, time.monotonic())
            return ok

    def _ask(self, label: str, key_type: str, fingerprint: str) -> bool:
        if QThread.currentThread() is self.thread():
            return confirm_host_key(self.parent_widget, label, key_type, fingerprint)
        req = {"args": (label, key_type, fingerprint), "done": threading.Event(), "ok": False}
        self._asked.emit(req)
        req["done"].wait(WAIT_S)  # type: ignore[attr-defined]
        return bool(req["ok"])

    @Slot(object)
    def _on_gui_thread(self, req: dict[str, object]) -> None:
        try:
            req["ok"] = confirm_host_key(self.parent_widget, *req["args"])  # type: ignore[misc]
        finally:
            req["done"].set()  # type: ignore[attr-defined]
