"""A call run in the pool whose asker is gone by the time it returns (the app quitting on
SIGTERM, a dialog closed during a key look-up) ends quietly: its signals' QObject was
deleted, and emitting on it would print a traceback from the pool's thread."""

from __future__ import annotations

import threading

import pytest
import shiboken6
from gpufleet.ui.background.worker import run_in_pool
from PySide6.QtCore import QThreadPool
from pytestqt.qtbot import QtBot


def _orphaned_job_runs(fn: object) -> None:
    gate = threading.Event()

    def call() -> object:
        gate.wait(10)
        return fn() if callable(fn) else fn

    job = run_in_pool(call, lambda _r: None, lambda _e: None)
    shiboken6.delete(job.signals)  # what Qt does to it when its owner goes first
    gate.set()
    assert QThreadPool.globalInstance().waitForDone(10_000)


def test_a_result_nobody_waits_for_any_more_is_dropped_without_a_traceback(
    qtbot: QtBot, capfd: pytest.CaptureFixture[str]
) -> None:
    errors: list[BaseException | None] = []
    hook = threading.excepthook
    threading.excepthook = lambda args: errors.append(args.exc_value)
    try:
        _orphaned_job_runs(42)

        def boom() -> object:
            raise OSError("the host went away")

        _orphaned_job_runs(boom)
    finally:
        threading.excepthook = hook
    out, err = capfd.readouterr()
    assert "Traceback" not in out + err and "Signal source" not in out + err
    assert errors == []


def test_a_result_someone_waits_for_still_arrives(qtbot: QtBot) -> None:
    got: list[object] = []
    run_in_pool(lambda: 7, got.append, got.append)
    qtbot.waitUntil(lambda: got == [7], timeout=10_000)
