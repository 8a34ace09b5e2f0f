"""Run a provider call on a daemon thread and get its result or exception back on the GUI
thread as a signal.

Provider calls go here, not to the QThreadPool: the app waits for the pool when it quits,
and a provider that hangs (a body dripping a byte at a time, a long Retry-After) must never
hold the quit. Each call has its own deadline (``core.providers.http``); a thread still
running at quit simply dies with the process, having changed nothing of ours.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, Signal


class _Carrier(QObject):
    done = Signal(object)
    failed = Signal(object)


_alive: set[_Carrier] = set()  # kept until its signal arrived (Qt would drop it otherwise)


def run_detached(
    fn: Callable[[], Any],
    on_done: Callable[[Any], None],
    on_error: Callable[[BaseException], None],
    name: str = "gpufleet-provider",
) -> threading.Thread:
    carrier = _Carrier()
    _alive.add(carrier)

    def done(res: Any) -> None:
        _alive.discard(carrier)
        on_done(res)

    def failed(e: BaseException) -> None:
        _alive.discard(carrier)
        on_error(e)

    carrier.done.connect(done)
    carrier.failed.connect(failed)

    def work() -> None:
        try:
            res = fn()
        except Exception as e:  # handed to the GUI thread, never a dead thread's traceback
            carrier.failed.emit(e)
        else:
            carrier.done.emit(res)

    t = threading.Thread(target=work, name=name, daemon=True)
    t.start()
    return t
