"""The pipeline hub: the one consumer of a fleet's events, feeding every stage after it.

One thread drains the fleet's subscription in batches and, per event, feeds the live ring
buffers, the history store (a non-blocking enqueue), the alerting (rule engine, cost tracker,
webhooks and actions) and the Prometheus exporter's latest values; every two seconds it
ticks the time-driven rules and takes a cost snapshot; every second it counts what arrived.
What comes out goes to a ``HubOutputs``: the GUI's bridge turns it into Qt signals,
``serve-metrics`` passes none. Commands that touch the rule engine (ack, snooze, a rule or
host change, Alertmanager's alerts) are posted to this thread, which owns the engine (it is
not thread-safe). While a link rule holds on a host (pending or firing), the hub asks that
host for the per-link NVLink values the rule is judged on.

A stage that raises on one batch is counted (``HubStats.bad_batches``) and logged, and the
hub carries on with the next batch: a bug in one consumer never stops the data flow.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from pathlib import Path

from gpufleet.core.fleet.events import FleetEvent, HostGap, HostMessage, HostStatus
from gpufleet.core.history.store import Store
from gpufleet.core.live.buffers import LiveBuffers
from gpufleet.core.model.alert import Alert
from gpufleet.core.model.stats import HubStats
from gpufleet.core.pipeline.alerting import Alerting
from gpufleet.core.pipeline.outputs import HubOutputs, NoOutputs
from gpufleet.core.prometheus.exporter import FleetMetrics
from gpufleet.core.wire.messages import ErrorMsg, Hello, Sample

log = logging.getLogger(__name__)

STATS_EVERY_S = 1.0
TICK_EVERY_S = 2.0
MAX_BATCH = 20_000
# The rules judged on the per-link NVLink values: while one holds on a host (pending or
# firing), that host is asked for them at their full rate (the sampler reads them far less
# often otherwise), for LINK_WATCH_S, renewed every LINK_RENEW_S.
LINK_CONDITIONS = frozenset({"nvlink_slow", "nvlink_down"})
LINK_WATCH_S = 180.0
LINK_RENEW_S = 60.0


class PipelineHub:
    """Drains ``events`` on its own thread into the stages it was given (any may be None)."""

    def __init__(
        self,
        events: queue.Queue[FleetEvent],
        *,
        live: LiveBuffers | None = None,
        store: Store | None = None,
        alerting: Alerting | None = None,
        metrics: FleetMetrics | None = None,
        history_path: Path | None = None,
        dropped: Callable[[], int] | None = None,
        yield_between_messages: bool = False,
        watch_links: Callable[[str, float], bool] | None = None,
    ) -> None:
        self.events = events
        self.live = live
        self.store = store
        self.alerting = alerting
        self.metrics = metrics
        self.history_path = history_path
        self.outputs: HubOutputs = NoOutputs()
        self._dropped = dropped or (lambda: 0)
        # A GUI thread waiting to paint gets the GIL after each message (~1 ms of work), not
        # after Python's 5 ms switch interval per hand-over (docs/benchmarks.md, GUI).
        self._yield = yield_between_messages
        self._commands: queue.Queue[Callable[[], None]] = queue.Queue()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._arrivals: deque[tuple[float, int]] = deque()
        self.bad_batches = 0
        # Asks a host for its per-link NVLink values (Fleet.watch_links); when each was last
        # asked (monotonic).
        self._watch_links = watch_links
        self._links_asked: dict[str, float] = {}

    # -- life --------------------------------------------------------------------------------

    def start(self, outputs: HubOutputs | None = None, hosts: Sequence[str] = ()) -> None:
        """Start the thread; its first act restores the previous run's alerts of ``hosts``
        (shown as active, notified again nowhere)."""
        if outputs is not None:
            self.outputs = outputs
        if self.alerting is not None:
            alerting, names = self.alerting, list(hosts)
            self.post(lambda: self._publish_alerts(alerting.restore(names), restored=True))
        if self._thread is None:
            self._stop.clear()
            self._thread = threading.Thread(target=self._run, name="gpufleet-hub", daemon=False)
            self._thread.start()

    def running(self) -> bool:
        """Whether the hub's thread is feeding the stages (started, not stopped, alive)."""
        th = self._thread
        return th is not None and th.is_alive()

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None

    # -- commands (any thread) ---------------------------------------------------------------

    def post(self, fn: Callable[[], None]) -> None:
        """Run ``fn`` on the hub's thread (it owns the rule engine)."""
        self._commands.put(fn)

    def ack(self, alert_id: str) -> None:
        if self.alerting is not None:
            alerting = self.alerting
            self.post(lambda: self._publish_alerts(alerting.ack(alert_id)))

    def snooze(self, alert_id: str, until_t: float) -> None:
        if self.alerting is not None:
            alerting = self.alerting
            self.post(lambda: self._publish_alerts(alerting.snooze(alert_id, until_t)))

    def post_external(self, alerts: Sequence[Alert]) -> None:
        """Alerts received from Alertmanager: merged into the alert list and the tray."""
        if self.alerting is not None:
            alerting, batch = self.alerting, tuple(alerts)
            self.post(lambda: self._publish_alerts(alerting.external(batch)))

    # -- the thread --------------------------------------------------------------------------

    def _run(self) -> None:
        next_stats = time.monotonic() + STATS_EVERY_S
        next_tick = time.monotonic() + TICK_EVERY_S
        while not self._stop.is_set():
            batch = self._take_batch()
            self._guarded(self._handle, batch)
            while True:
                try:
                    fn = self._commands.get_nowait()
                except queue.Empty:
                    break
                self._guarded(fn)
            now = time.monotonic()
            if now >= next_tick:
                next_tick = now + TICK_EVERY_S
                self._guarded(self._tick)
            if now >= next_stats:
                next_stats = now + STATS_EVERY_S
                self._guarded(self._stats, now)

    def _take_batch(self) -> list[FleetEvent]:
        try:
            ev = self.events.get(timeout=0.1)
        except queue.Empty:
            return []
        batch = [ev]
        while len(batch) < MAX_BATCH:
            try:
                batch.append(self.events.get_nowait())
            except queue.Empty:
                break
        return batch

    def _guarded(self, fn: Callable[..., None], *args: object) -> None:
        try:
            fn(*args)
        except Exception:  # one bad batch or command must not stop the data flow
            self.bad_batches += 1
            log.exception("pipeline hub: a stage failed; the hub carries on")

    def _handle(self, batch: list[FleetEvent]) -> None:
        changed: list[Alert] = []
        n_samples = 0
        out = self.outputs
        for ev in batch:
            if isinstance(ev, HostMessage):
                msg = ev.msg
                if self.live is not None:
                    self.live.feed(ev.host, msg)
                if self.store is not None:
                    self.store.write(ev.host, msg)
                if self.alerting is not None:
                    changed.extend(self.alerting.feed(ev.host, msg))
                if self.metrics is not None:
                    self.metrics.feed(ev)
                if isinstance(msg, Sample):
                    n_samples += 1
                elif isinstance(msg, Hello):
                    out.on_hello(ev.host, msg)
                elif isinstance(msg, ErrorMsg):
                    out.on_error(ev.host, msg.message)
                if self._yield:
                    time.sleep(0)
            elif isinstance(ev, HostStatus):
                if self.alerting is not None:
                    changed.extend(self.alerting.host_status(ev))
                if self.metrics is not None:
                    self.metrics.feed(ev)
                out.on_status(ev)
            elif isinstance(ev, HostGap):
                out.on_gap(ev)
        if n_samples:
            self._arrivals.append((time.monotonic(), n_samples))
        if changed:
            self._publish_alerts(changed)

    def _publish_alerts(self, changed: Sequence[Alert], restored: bool = False) -> None:
        """The active alerts to the exporter and the outputs; ``changed`` to the outputs as
        news, except for alerts restored from the previous run (already notified then)."""
        if self.alerting is None:
            return
        active = self.alerting.active()
        if self.metrics is not None:
            self.metrics.set_alerts(active)
        if restored:
            if active:
                self.outputs.on_alerts((), active)
        elif changed or self.alerting.has_external():
            self.outputs.on_alerts(tuple(changed), active)

    def _tick(self) -> None:
        if self.alerting is None:
            return
        changed = self.alerting.tick(time.time())
        self._publish_alerts(changed)
        cost = self.alerting.cost_summaries()
        if self.metrics is not None:
            self.metrics.set_cost(cost)
        self.outputs.on_cost(cost)
        self._ask_link_detail(time.monotonic())

    def _ask_link_detail(self, now: float) -> None:
        """Hosts where a link rule holds get asked for the per-link values it is judged on."""
        if self._watch_links is None or self.alerting is None:
            return
        for host in sorted(self.alerting.judging(LINK_CONDITIONS)):
            if now - self._links_asked.get(host, float("-inf")) >= LINK_RENEW_S:
                self._links_asked[host] = now
                self._watch_links(host, LINK_WATCH_S)

    def _stats(self, now: float) -> None:
        while self._arrivals and self._arrivals[0][0] < now - 5.0:
            self._arrivals.popleft()
        span = max(1.0, min(5.0, now - self._arrivals[0][0])) if self._arrivals else 1.0
        rate = sum(n for _, n in self._arrivals) / span
        total = self.live.samples_total if self.live is not None else 0
        store = self.store
        stats = HubStats(
            rate,
            total,
            self._history_bytes(),
            self._dropped(),
            self.bad_batches,
            store.errors if store is not None else 0,
            store.last_error if store is not None else None,
            sum(store.rate_limited.values()) if store is not None else 0,
        )
        self.outputs.on_stats(stats)

    def _history_bytes(self) -> int | None:
        if self.history_path is None:
            return None
        size = 0
        for p in (self.history_path, Path(str(self.history_path) + "-wal")):
            try:
                size += p.stat().st_size
            except OSError:
                continue
        return size
