"""The pipeline hub asks a host for its per-link NVLink values while a link rule holds there
(pending or firing), and never while the job's NVLink traffic is healthy: a real hub thread,
a real rule engine with the shipped rules, streams written from the protocol."""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Mapping
from typing import Any

from gpufleet.core.alerts.rules import RuleEngine, load_rules
from gpufleet.core.fleet.events import FleetEvent, HostMessage
from gpufleet.core.pipeline import hub as hub_mod
from gpufleet.core.pipeline.alerting import Alerting
from gpufleet.core.pipeline.hub import PipelineHub

from tests.support.rules_support import BUSY, Stream


def _allreduce(t: int, scale: Mapping[int, float]) -> dict[int, Any]:
    """8 GPUs in step: 35 % of the 300 GB/s nominal while gradients are exchanged, quiet
    while computing (checkpoint pauses and all)."""
    rate = 105e9 if t % 10 < 4 else 2e9
    if 300 <= t < 330:
        rate = 0.0  # a checkpoint: every GPU quiet at once
    out = {}
    for g in range(8):
        r = rate * scale.get(g, 1.0)
        out[g] = {**BUSY, "nvlink_tx_bps": r, "nvlink_rx_bps": r}
    return out


def test_a_host_with_a_slow_nvlink_gpu_is_asked_for_per_link_values_a_healthy_one_never() -> None:
    events: queue.Queue[FleetEvent] = queue.Queue()
    asked: list[tuple[str, float]] = []
    lock = threading.Lock()

    def watch(host: str, seconds: float) -> bool:
        with lock:
            asked.append((host, seconds))
        return True

    hub = PipelineHub(
        events, alerting=Alerting(RuleEngine(load_rules(include_user=False))), watch_links=watch
    )
    sick, healthy = Stream(n_gpus=8), Stream(n_gpus=8)
    events.put(HostMessage("sick", sick.hello))
    events.put(HostMessage("healthy", healthy.hello))
    for t in range(600):
        events.put(HostMessage("sick", sick.sample(t, gpus=_allreduce(t, {5: 0.4}))))
        events.put(HostMessage("healthy", healthy.sample(t, gpus=_allreduce(t, {}))))
    hub.start()
    try:
        deadline = time.monotonic() + 20.0
        while time.monotonic() < deadline:
            with lock:
                if asked:
                    break
            time.sleep(0.05)
        # A few more of the hub's ticks (2 s apart): renewed at most once a minute.
        time.sleep(2.0 * hub_mod.TICK_EVERY_S + 0.5)
    finally:
        hub.stop()
    assert asked == [("sick", hub_mod.LINK_WATCH_S)]
