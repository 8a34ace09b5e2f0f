"""The one place where the Fleet's events cross into Qt.

A worker thread drains the Fleet's subscription queue and does everything that costs time
there: the live ring buffers, the history store (a non-blocking enqueue), the rule engine and
cost tracker (pure, but not free at 128 hosts). It then emits Qt signals carrying plain
immutable objects (HostStatus, Alert tuples, CostSummary dicts, BridgeStats); Qt queues them
to the GUI thread. The GUI thread never blocks on the queue, the network or the disk; it only
reads the ring buffers at its own redraw rate.

Commands that must touch the rule engine (ack, snooze) are posted to the worker, which owns
the engine (it is not thread-safe).
"""

from __future__ import annotations

import contextlib
import logging
import os
import queue
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, Signal

from gpufleet.core.fleet.events import HostGap, HostMessage, HostStatus
from gpufleet.core.live.buffers import LiveBuffers
from gpufleet.core.wire.messages import ErrorMsg, Hello, Sample

log = logging.getLogger(__name__)
STATS_EVERY_S = 1.0
TICK_EVERY_S = 2.0
MAX_BATCH = 20_000


@dataclass(frozen=True)
class BridgeStats:
    samples_per_s: float
    samples_total: int
    history_bytes: int | None
    dropped: int
    bad_messages: int


class FleetBridge(QObject):
    status_changed = Signal(object)  # HostStatus
    hello_received = Signal(str, object)  # host, Hello
    alerts_changed = Signal(object)  # tuple[Alert, ...] whose state changed
    alerts_snapshot = Signal(object)  # tuple[Alert, ...] active now
    cost_updated = Signal(object)  # dict host -> CostSummary
    gap = Signal(object)  # HostGap
    error_message = Signal(str, str)  # host, message
    stats = Signal(object)  # BridgeStats

    def __init__(
        self,
        events: queue.Queue[Any],
        live: LiveBuffers,
        *,
        store: Any | None = None,
        rules: Any | None = None,
        history_path: Path | None = None,
        dropped: Callable[[], int] | None = None,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self.events = events
        self.live = live
        self.store = store
        self.rules = rules
        self.history_path = history_path
        self._dropped = dropped or (lambda: 0)
        self._commands: queue.Queue[Callable[[], None]] = queue.Queue()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._arrivals: deque[tuple[float, int]] = deque()
        self.bad = 0
        self.external: dict[str, Any] = {}  # alerts from Alertmanager (issue 7), by id
        # Called on this worker with the rule engine's state changes (not ack/snooze): the
        # webhooks and rule actions (gpufleet.ui.controllers.alert_wiring); set before start().
        self.on_alert_changes: Callable[[list[Any]], None] | None = None

    # -- life --------------------------------------------------------------------------------

    def start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="gpufleet-bridge", daemon=False)
            self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None

    def post(self, fn: Callable[[], None]) -> None:
        """Run ``fn`` on the worker thread (it owns the rule engine)."""
        self._commands.put(fn)

    def ack(self, alert_id: str) -> None:
        if self.rules is not None:
            rules = self.rules
            self.post(lambda: self._emit_alerts([a for a in [rules.ack(alert_id)] if a]))

    def snooze(self, alert_id: str, until_t: float) -> None:
        if self.rules is not None:
            rules = self.rules
            self.post(
                lambda: self._emit_alerts([a for a in [rules.snooze(alert_id, until_t)] if a])
            )

    def post_external(self, alerts: Any) -> None:
        """Alerts received from Alertmanager (any thread): merged into the alert list and
        passed to the tray like the rule engine's (issue 7)."""
        alerts = tuple(alerts)
        self.post(lambda: self._external(alerts))

    def _external(self, alerts: tuple[Any, ...]) -> None:
        for a in alerts:
            if a.state == "firing":
                self.external[a.id] = a
            else:
                self.external.pop(a.id, None)
        self._emit_alerts(list(alerts))

    # -- worker ------------------------------------------------------------------------------

    def _run(self) -> None:
        next_stats = time.monotonic() + STATS_EVERY_S
        next_tick = time.monotonic() + TICK_EVERY_S
        while not self._stop.is_set():
            try:
                ev = self.events.get(timeout=0.1)
            except queue.Empty:
                ev = None
            batch = [] if ev is None else [ev]
            while ev is not None and len(batch) < MAX_BATCH:
                try:
                    batch.append(self.events.get_nowait())
                except queue.Empty:
                    break
            try:
                self._handle(batch)
                while True:
                    try:
                        self._commands.get_nowait()()
                    except queue.Empty:
                        break
                now = time.monotonic()
                if now >= next_tick:
                    next_tick = now + TICK_EVERY_S
                    self._tick()
                if now >= next_stats:
                    next_stats = now + STATS_EVERY_S
                    self._emit_stats(now)
            except Exception:  # one bad event must not stop the app's data flow
                self.bad += 1
                log.exception("bridge: failed to handle a batch of fleet events")

    def _handle(self, batch: list[Any]) -> None:
        changed: list[Any] = []
        n_samples = 0
        for ev in batch:
            if isinstance(ev, HostMessage):
                msg = ev.msg
                self.live.feed(ev.host, msg)
                if self.store is not None:
                    self.store.write(ev.host, msg)
                if self.rules is not None:
                    changed.extend(self.rules.feed(ev.host, msg))
                if isinstance(msg, Sample):
                    n_samples += 1
                elif isinstance(msg, Hello):
                    self.hello_received.emit(ev.host, msg)
                elif isinstance(msg, ErrorMsg):
                    self.error_message.emit(ev.host, msg.message)
                # Hand the GIL over between messages (~1 ms of work each): a GUI thread that
                # wants it to paint waits at most that long, not Python's 5 ms switch
                # interval per hand-over (docs/benchmarks.md, GUI).
                time.sleep(0)
            elif isinstance(ev, HostStatus):
                if self.rules is not None:
                    changed.extend(self.rules.host_status(ev.host, ev.state, ev.t, ev.reason))
                self.status_changed.emit(ev)
            elif isinstance(ev, HostGap):
                self.gap.emit(ev)
        if n_samples:
            self._arrivals.append((time.monotonic(), n_samples))
        if changed:
            self._dispatch(changed)
            self._emit_alerts(changed)

    def _dispatch(self, changed: list[Any]) -> None:
        if changed and self.on_alert_changes is not None:
            try:
                self.on_alert_changes(changed)
            except Exception:  # a webhook or action bug must not stop the data flow
                log.exception("bridge: alert dispatch failed")

    def _emit_alerts(self, changed: list[Any]) -> None:
        if changed:
            self.alerts_changed.emit(tuple(changed))
        active = tuple(self.rules.active()) if self.rules is not None else ()
        if self.rules is not None or self.external:
            self.alerts_snapshot.emit(active + tuple(self.external.values()))

    def _tick(self) -> None:
        if self.rules is None:
            return
        changed = self.rules.tick(time.time())
        self._dispatch(changed)
        self._emit_alerts(changed)
        cost = getattr(self.rules, "cost", None)
        if cost is not None:
            self.cost_updated.emit({h: cost.summary(h) for h in cost.hosts()})

    def _emit_stats(self, now: float) -> None:
        while self._arrivals and self._arrivals[0][0] < now - 5.0:
            self._arrivals.popleft()
        span = max(1.0, min(5.0, now - self._arrivals[0][0])) if self._arrivals else 1.0
        rate = sum(n for _, n in self._arrivals) / span
        size = None
        if self.history_path is not None:
            with contextlib.suppress(OSError):
                size = sum(
                    os.stat(p).st_size
                    for p in (self.history_path, Path(str(self.history_path) + "-wal"))
                    if p.exists()
                )
        self.stats.emit(BridgeStats(rate, self.live.samples_total, size, self._dropped(), self.bad))
