"""What the pipeline hub hands out: the outputs interface a front end implements (the GUI's
bridge turns each call into a Qt signal); a process without a window passes ``NoOutputs``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from gpufleet.core.cost.rental import CostSummary
from gpufleet.core.fleet.events import HostGap, HostStatus
from gpufleet.core.model.alert import Alert
from gpufleet.core.model.stats import HubStats
from gpufleet.core.wire.messages import Hello


class HubOutputs(Protocol):
    """Where the hub's results go; every method is called on the hub's thread."""

    def on_status(self, status: HostStatus) -> None: ...
    def on_hello(self, host: str, hello: Hello) -> None: ...
    def on_error(self, host: str, message: str) -> None: ...
    def on_gap(self, gap: HostGap) -> None: ...
    def on_alerts(self, changed: Sequence[Alert], active: Sequence[Alert]) -> None: ...
    def on_cost(self, summaries: dict[str, CostSummary]) -> None: ...
    def on_stats(self, stats: HubStats) -> None: ...


class NoOutputs:
    """The hub of a process without a window (``serve-metrics``): results go nowhere else."""

    def on_status(self, status: HostStatus) -> None:
        pass

    def on_hello(self, host: str, hello: Hello) -> None:
        pass

    def on_error(self, host: str, message: str) -> None:
        pass

    def on_gap(self, gap: HostGap) -> None:
        pass

    def on_alerts(self, changed: Sequence[Alert], active: Sequence[Alert]) -> None:
        pass

    def on_cost(self, summaries: dict[str, CostSummary]) -> None:
        pass

    def on_stats(self, stats: HubStats) -> None:
        pass
