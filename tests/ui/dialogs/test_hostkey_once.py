"""Two hosts behind one address meet the same unknown key at once: one dialog, one answer
for both (the real QMessageBox, answered by a click)."""

from __future__ import annotations

import threading

from gpufleet.ui.app import make_qapp
from gpufleet.ui.dialogs.hostkey import HostKeyPrompt
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication, QMessageBox
from pytestqt.qtbot import QtBot

FP = "SHA256:WTUphznpN0zikMp+L5EtQ9sX1z7w0b3a6lQ2eQmUOaA"


def test_one_dialog_for_one_key(qtbot: QtBot) -> None:
    make_qapp()
    prompt = HostKeyPrompt()
    shown: list[str] = []

    def answer() -> None:
        for w in QApplication.topLevelWidgets():
            if isinstance(w, QMessageBox) and w.isVisible():
                shown.append(w.text())
                w.button(QMessageBox.StandardButton.Yes).click()

    timer = QTimer()
    timer.timeout.connect(answer)
    timer.start(100)
    results: dict[str, bool] = {}

    def connect(label: str) -> None:
        results[label] = prompt.ask(label, "ssh-ed25519", FP)

    threads = [
        threading.Thread(target=connect, args=(f"pod{i}@ssh.example-gw.net:22",)) for i in range(2)
    ]
    for t in threads:
        t.start()
    qtbot.waitUntil(lambda: len(results) == 2, timeout=20_000)
    for t in threads:
        t.join(5)
    timer.stop()
    assert results == {"pod0@ssh.example-gw.net:22": True, "pod1@ssh.example-gw.net:22": True}
    assert len(shown) == 1, shown
    # Another key is another question.
    timer.start(100)
    other: list[bool] = []
    t = threading.Thread(target=lambda: other.append(prompt.ask("x:22", "ssh-rsa", "SHA256:x")))
    t.start()
    qtbot.waitUntil(lambda: bool(other), timeout=20_000)
    t.join(5)
    timer.stop()
    assert other == [True] and len(shown) == 2
