"""Give freed heap memory back to the system now and then (glibc only).

The app allocates and frees steadily on three threads (the bridge parsing samples, the store
writer, the GUI redrawing). glibc keeps freed memory in per-thread arenas instead of
returning it, so RSS crept up for the first hour as fragmentation settled (~55 MiB per
simulated hour in bench/gui.py at 32 hosts × 8 GPUs, 6× feed). ``malloc_trim(0)`` every
minute releases it: the same run stayed flat (+8 MiB per simulated hour, within the
saw-tooth of the store's flushes), at ~1 ms of GUI time per call (docs/benchmarks.md, GUI).

The same tick empties Python's ``linecache``: PySide6's import hook (shiboken's
``__feature_import__``) reads the source of every Python module imported after PySide6 to
look for ``from __feature__``, through ``inspect.getsource``, which leaves each file's lines
in ``linecache``: ~700 modules, ~20 MiB of strings held for nothing (a traceback reads the
lines it needs again). Emptied once at start and after each later import's refill.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import linecache
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


def start_trimmer(parent: QObject, every_s: float = TRIM_EVERY_S) -> QTimer:
    """A timer owned by ``parent`` that empties ``linecache`` and trims the heap (where the
    C library has malloc_trim: not on macOS, Windows, musl) every ``every_s`` seconds, the
    first time now."""
    trim = _malloc_trim()

    def tick() -> None:
        linecache.clearcache()
        if trim is not None:
            trim()

    tick()
    timer = QTimer(parent)
    timer.setInterval(int(every_s * 1000))
    timer.timeout.connect(tick)
    timer.start()
    return timer
