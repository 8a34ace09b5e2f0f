"""Waiting in tests for something another process does: poll a condition until it holds or a
deadline passes, then fail saying what was awaited. Any test folder imports it (pytest puts
``tests/`` on the path for its conftest)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any


def wait_until(
    cond: Callable[[], Any], timeout: float = 30.0, what: str = "condition", every: float = 0.05
) -> Any:
    """``cond()``'s first true value; AssertionError naming ``what`` after ``timeout`` s."""
    deadline = time.monotonic() + timeout
    while True:
        v = cond()
        if v:
            return v
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(every)
