"""A second window on a data dir another gpufleet holds does not open: it says, in a message
box and on stderr, who holds the data dir and what to do, and builds nothing (no fleet, no
rule engine: nothing that could notify or act twice)."""

from __future__ import annotations

import os

import pytest
from gpufleet.core.config import instance_lock
from gpufleet.ui.app import make_qapp, run_app
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication, QMessageBox
from pytestqt.qtbot import QtBot


@pytest.mark.skipif(not instance_lock.LOCKS_SUPPORTED, reason="no flock here")
def test_a_second_window_on_a_held_data_dir_says_why_and_opens_nothing(
    qtbot: QtBot, capsys: pytest.CaptureFixture[str]
) -> None:
    make_qapp()
    seen: list[str] = []

    def answer() -> None:
        box = QApplication.activeModalWidget()
        if isinstance(box, QMessageBox):
            seen.append(box.text())
            box.accept()
        else:
            QTimer.singleShot(50, answer)

    with instance_lock.for_fleet(True, instance_lock.ROLE_SERVE):
        QTimer.singleShot(50, answer)
        assert run_app(demo=True) == 1
    assert seen, "no message box"
    assert seen[0].startswith(f"gpufleet serve (pid {os.getpid()}, since ")
    assert "GPUFLEET_DATA_DIR" in seen[0]
    assert "twice" in capsys.readouterr().err
    assert not [w for w in QApplication.topLevelWidgets() if w.isVisible()]
