"""What a tab needs to redraw: the live buffers, the selected host, the time range, the theme.

Built by the main window once per redraw tick and handed to the visible tab only.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gpufleet.core.config.hostconfig import HostConfig
from gpufleet.core.live.buffers import LiveBuffers, Series
from gpufleet.core.wire.messages import Hello
from gpufleet.ui.background.history import HistoryCache
from gpufleet.ui.widgets.theme import Theme


@dataclass
class View:
    live: LiveBuffers
    host: str | None
    hosts: Mapping[str, HostConfig]
    t0: float
    t1: float
    theme: Theme
    history: HistoryCache | None = None
    cost: Mapping[str, Any] = field(default_factory=dict)  # host -> CostSummary
    states: Mapping[str, str] = field(default_factory=dict)  # host -> session state
    # host -> what its provider's API no longer answers (core.providers.drift_board)
    provider_notes: Mapping[str, str] = field(default_factory=dict)

    def hello(self) -> Hello | None:
        return self.live.hello(self.host) if self.host else None

    def gpus(self) -> list[int]:
        return self.live.gpus(self.host) if self.host else []

    def nominal(self, gpu: int, key: str) -> float | None:
        h = self.hello()
        g = h.gpu(gpu) if h else None
        v = g.nominal_value(key) if g else None
        return float(v) if isinstance(v, (int, float)) and not math.isnan(v) else None

    def unsupported(self, gpu: int, metric: str) -> str | None:
        h = self.hello()
        g = h.gpu(gpu) if h else None
        if g is None:
            return None
        reason = g.unsupported.get(metric)
        return str(reason) if reason is not None else None

    def series_many(self, metric: str, gpus: list[int], max_points: int) -> list[Any]:
        """Live data, extended from the store's history when the range starts before the
        live window (the store query ran off the GUI thread; see HistoryCache)."""
        if self.host is None:  # no host selected yet (a tab shown before the first one)
            return [Series(np.empty(0), np.empty(0)) for _ in gpus]
        live = self.live.series_many(self.host, gpus, metric, self.t0, self.t1, max_points)
        if self.history is None:
            return live
        return self.history.extend(self.host, gpus, metric, self.t0, self.t1, live, max_points)
