"""Give freed heap memory back to the system now and then (glibc only).

The app allocates and frees steadily on three threads (the bridge parsing samples, the store
writer, the GUI redrawing). glibc keeps freed memory in per-thread arenas instead of
returning it, so RSS crept up for the first hour as fragmentation settled (~55 MiB per
simulated hour in bench/gui.py at 32 hosts × 8 GPUs, 6× feed). ``malloc_trim(0)`` every
minute releases it: the same run stayed flat (+8 MiB per simulated hour, within the
saw-tooth of the store's flushes), at ~1 ms of GUI time per call (docs/benchmarks.md, GUI).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import sys
from collections.abc import Callable

from PySide6.QtCore import QObject, QTimer

TRIM_EVERY_S = 60.0


def _malloc_trim() -> Callable[[], None] | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        fn = libc.malloc_trim  # absent on musl
    except (OSError, AttributeError):
        return None
    fn.argtypes = [ctypes.c_size_t]
    fn.restype = ctypes.c_int

    def trim() -> None:
        fn(0)

    return trim


def start_trimmer(parent: QObject, every_s: float = TRIM_EVERY_S) -> QTimer | None:
    """A timer owned by ``parent`` that trims the heap every ``every_s`` seconds; None where
    the C library has no malloc_trim (macOS, Windows, musl)."""
    trim = _malloc_trim()
    if trim is None:
        return None
    timer = QTimer(parent)
    timer.setInterval(int(every_s * 1000))
    timer.timeout.connect(trim)
    timer.start()
    return timer
