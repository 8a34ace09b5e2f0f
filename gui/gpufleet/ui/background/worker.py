"""Run a blocking call (kill, check, connection test, store query) in the QThreadPool and get
its result or its exception back on the GUI thread as a signal."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, QRunnable, QThreadPool, Signal


class _Signals(QObject):
    done = Signal(object)
    failed = Signal(object)


class Job(QRunnable):
    def __init__(self, fn: Callable[[], Any]) -> None:
        super().__init__()
        self.fn = fn
        self.signals = _Signals()
        self.setAutoDelete(False)  # the caller keeps it until a signal arrived

    def run(self) -> None:
        try:
            res = self.fn()
        except Exception as e:
            self._tell("failed", e)
        else:
            self._tell("done", res)

    def _tell(self, signal: str, value: Any) -> None:
        # RuntimeError: the signals' QObject is gone: the app quit (SIGTERM, the window
        # closed) or the dialog that asked was destroyed while the call ran. Nobody is left
        # to tell, and a traceback on the way out would only alarm.
        with contextlib.suppress(RuntimeError):
            getattr(self.signals, signal).emit(value)


_running: set[Job] = set()


def run_in_pool(
    fn: Callable[[], Any],
    on_done: Callable[[Any], None],
    on_error: Callable[[BaseException], None],
    pool: QThreadPool | None = None,
) -> Job:
    job = Job(fn)
    _running.add(job)

    def done(res: Any) -> None:
        _running.discard(job)
        on_done(res)

    def failed(e: BaseException) -> None:
        _running.discard(job)
        on_error(e)

    job.signals.done.connect(done)
    job.signals.failed.connect(failed)
    (pool or QThreadPool.globalInstance()).start(job)
    return job
