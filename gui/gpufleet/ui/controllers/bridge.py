"""The one place where the pipeline's output crosses into Qt.

The pipeline hub (``gpufleet.core.pipeline.hub``) drains the fleet on its own thread and feeds
the live buffers, the store, the alerting and the exporter; this bridge is its ``HubOutputs``:
each result becomes a Qt signal carrying plain immutable objects (HostStatus, Alert tuples,
CostSummary dicts, HubStats), which Qt queues to the GUI thread. The GUI thread never blocks
on the queue, the network or the disk; it only reads the ring buffers at its own redraw rate.
Commands that touch the rule engine (ack, snooze) go to the hub, which owns it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from PySide6.QtCore import QObject, Signal

from gpufleet.core.cost.rental import CostSummary
from gpufleet.core.fleet.events import HostGap, HostStatus
from gpufleet.core.model.alert import Alert
from gpufleet.core.model.stats import HubStats
from gpufleet.core.pipeline.hub import PipelineHub
from gpufleet.core.wire.messages import Hello


class FleetBridge(QObject):
    status_changed = Signal(object)  # HostStatus
    hello_received = Signal(str, object)  # host, Hello
    alerts_changed = Signal(object)  # tuple[Alert, ...] whose state changed
    alerts_snapshot = Signal(object)  # tuple[Alert, ...] active now
    cost_updated = Signal(object)  # dict host -> CostSummary
    gap = Signal(object)  # HostGap
    error_message = Signal(str, str)  # host, message
    stats = Signal(object)  # HubStats

    def __init__(self, hub: PipelineHub, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.hub = hub

    # -- life and commands -------------------------------------------------------------------

    def start(self, hosts: Sequence[str] = ()) -> None:
        """Start the hub with this bridge as its outputs; ``hosts``' alerts from the previous
        run come back first."""
        self.hub.start(self, hosts)

    def stop(self, timeout: float = 5.0) -> None:
        self.hub.stop(timeout)

    def post(self, fn: Callable[[], None]) -> None:
        """Run ``fn`` on the hub's thread (it owns the rule engine)."""
        self.hub.post(fn)

    def ack(self, alert_id: str) -> None:
        self.hub.ack(alert_id)

    def snooze(self, alert_id: str, until_t: float) -> None:
        self.hub.snooze(alert_id, until_t)

    def post_external(self, alerts: Sequence[Alert]) -> None:
        self.hub.post_external(alerts)

    # -- HubOutputs (called on the hub's thread) ---------------------------------------------

    def on_status(self, status: HostStatus) -> None:
        self.status_changed.emit(status)

    def on_hello(self, host: str, hello: Hello) -> None:
        self.hello_received.emit(host, hello)

    def on_error(self, host: str, message: str) -> None:
        self.error_message.emit(host, message)

    def on_gap(self, gap: HostGap) -> None:
        self.gap.emit(gap)

    def on_alerts(self, changed: Sequence[Alert], active: Sequence[Alert]) -> None:
        if changed:
            self.alerts_changed.emit(tuple(changed))
        self.alerts_snapshot.emit(tuple(active))

    def on_cost(self, summaries: dict[str, CostSummary]) -> None:
        self.cost_updated.emit(summaries)

    def on_stats(self, stats: HubStats) -> None:
        self.stats.emit(stats)
