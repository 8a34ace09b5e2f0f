"""While the per-link NVLink grid shows a host, that host's sampler reads the per-link values
at their full rate (every 5 s); otherwise its CPU plan may read them only every few minutes.
The Interconnect tab says which host it shows on each refresh; this asks the fleet, renewed
a minute before the ask runs out, off the GUI thread (the ask is a line on an SSH channel)."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from PySide6.QtCore import QObject, QThreadPool

from gpufleet.ui.background.worker import run_in_pool

log = logging.getLogger(__name__)

# How long each ask lasts, and how often it is renewed while the grid is shown: a grid closed
# (or an app that died) stops costing the host CPU within WATCH_S.
WATCH_S = 120.0
RENEW_S = 60.0


class LinkWatch(QObject):
    """Connect ``shown`` to the tab's ``links_watched`` signal (the host whose grid shows)."""

    def __init__(
        self,
        watch_links: Callable[[str, float], bool],
        pool: QThreadPool | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__()
        self._watch_links = watch_links
        self._pool = pool
        self._clock = clock
        self._asked: dict[str, float] = {}

    def shown(self, host: str) -> None:
        now = self._clock()
        if now - self._asked.get(host, float("-inf")) < RENEW_S:
            return
        self._asked[host] = now
        watch = self._watch_links

        def failed(e: BaseException) -> None:
            # Nothing the user must act on: the grid says how old its values are.
            log.warning("asking %s for per-link NVLink values failed: %s", host, e)
            self._asked.pop(host, None)

        run_in_pool(lambda: watch(host, WATCH_S), lambda _sent: None, failed, self._pool)
