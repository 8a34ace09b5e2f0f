"""Simulated history, made in-process: the demo scenarios' sampler run faster than real time.

``simulate(hosts, duration_s, end_t)`` runs the real sampler loop (``gpufleet_sampler.loop``)
over the sim backend for each host, with simulated monotonic time and wall-clock stamps that
end at ``end_t``, and yields the parsed messages as Fleet events. The screenshot command and
the GUI benchmark use it so plots have history without waiting half an hour; the sim's child
processes are closed when a host's run ends.

The demo app uses it too (``prefill_then``): before its fleet starts, half an hour of each
demo host is simulated into the live buffers and the rule engine, off the GUI thread (about
2.5 s for the six demo hosts here), and the live sampler daemons then start their scenarios
that far in (``GPUFLEET_SIM_START_S``), so the story goes on instead of starting over: the
plots are full from the first seconds and the alerts have their history. That half hour is
also written to the demo's own history store (samples, processes, events, and the alerts it
fired with their lifecycle), replacing whatever an earlier demo run left for those minutes:
evidence exported from an alert of it, ``gpufleet diagnose demo:h100-a`` and ``gpufleet export
demo:h100-a`` read what the window shows.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from gpufleet_sampler.backends.sim import SimBackend
from gpufleet_sampler.loop import Sampler
from PySide6.QtCore import QThreadPool

from gpufleet.core.alerts.lifecycle import AlertLifecycle
from gpufleet.core.config.hostconfig import HostConfig
from gpufleet.core.fleet.events import HostMessage
from gpufleet.core.history.store import Store
from gpufleet.core.live.buffers import LiveBuffers
from gpufleet.core.model.alert import Alert
from gpufleet.core.wire.messages import Hello, parse_object
from gpufleet.ui.background.worker import run_in_pool

log = logging.getLogger(__name__)
# Simulated minutes the demo opens with: its range is 1 h, and 30 min fills the scenarios'
# faults (thermal throttle, ECC, the miner) with their start and their evolution.
DEMO_PREFILL_S = 1800.0
# One simulated sample every 2 s for the pre-filled half hour: 900 per GPU still give one
# per pixel column of a full-screen plot, in half the time (2.4 s → 1.2 s for the six demo
# hosts with their rules, measured here) before the live 1 s samples take over.
PREFILL_STRIDE = 2


def simulate(
    hosts: Sequence[HostConfig],
    duration_s: float,
    end_t: float,
    *,
    procs_interval: float = 10.0,
    stride: int = 1,
) -> Iterator[HostMessage]:
    """Every message of ``duration_s`` seconds of each host, host after host; with
    ``stride`` n, one sample every n intervals (the sim integrates over the longer step)."""
    for h in hosts:
        # From scenario time 0, whatever GPUFLEET_SIM_START_S says (that is for the live
        # samplers that continue this run).
        backend = SimBackend(h.scenario or "healthy-8xa100", h.seed, h.interval_s, start_s=0.0)
        try:
            sampler = Sampler(backend, h.interval_s, procs_interval=procs_interval)
            hello = parse_object(sampler.hello())
            assert isinstance(hello, Hello)
            yield HostMessage(h.name, hello)
            step = h.interval_s * max(1, stride)
            n = int(duration_s / step)
            start = end_t - n * step
            for i in range(n + 1):
                for obj in sampler.step(i * step, start + i * step):
                    yield HostMessage(h.name, parse_object(obj, hello))
        finally:
            backend.close()


def feed(
    hosts: Sequence[HostConfig],
    live: LiveBuffers,
    rules: Any,
    seconds: float,
    end_t: float,
    stride: int = 1,
    store: Store | None = None,
    lifecycle: AlertLifecycle | None = None,
) -> int:
    """``seconds`` of each host's simulation into ``live`` and ``rules`` (when given), the
    rules told the hosts stream and ticked at ``end_t``; → the number of messages. With a
    ``store``, the messages are recorded there too (after deleting the hosts' rows from the
    start of the run on), and with a ``lifecycle`` the alerts the run fired, in their last
    state."""
    if store is not None:
        for h in hosts:
            store.forget_host(h.name, since=end_t - seconds)
    # The live buffers first, for every host (what the plots need, ~40 % of the time),
    # then the rules: the window shows full plots before the alerts are worked out.
    msgs = []
    for ev in simulate(hosts, seconds, end_t, stride=stride):
        live.feed(ev.host, ev.msg)
        if store is not None:
            store.write(ev.host, ev.msg)
        msgs.append(ev)
    if rules is not None:
        alerts = _run_rules(hosts, rules, msgs, end_t)
        if lifecycle is not None:
            for a in alerts:
                lifecycle.record(a)
    if store is not None:
        store.flush()
    return len(msgs)


def _run_rules(
    hosts: Sequence[HostConfig], rules: Any, msgs: Sequence[HostMessage], end_t: float
) -> list[Alert]:
    """The messages through the rules; → every alert they changed, in its last state."""
    latest: dict[str, Alert] = {}
    for ev in msgs:
        for a in rules.feed(ev.host, ev.msg):
            latest[a.id] = a
    for h in hosts:
        for a in rules.host_status(h.name, "streaming", end_t):
            latest[a.id] = a
    for a in rules.tick(end_t):
        latest[a.id] = a
    # The live sampler that goes on from here is a run of its own, started by the app.
    for h in hosts:
        rules.expect_new_run(h.name)
    return list(latest.values())


def prefill_then(
    hosts: Sequence[HostConfig],
    live: LiveBuffers,
    rules: Any,
    then: Callable[[], None],
    seconds: float = DEMO_PREFILL_S,
    pool: QThreadPool | None = None,
    store: Store | None = None,
    lifecycle: AlertLifecycle | None = None,
) -> None:
    """Simulate ``seconds`` of the sim ``hosts`` (ending now) into ``live`` and ``rules`` in
    the pool, then call ``then`` on the GUI thread (start the fleet and the bridge there:
    nothing else may feed ``rules`` meanwhile). The live samplers started after it begin
    their scenarios ``seconds`` in. ``store`` and ``lifecycle`` (the demo's own) keep the
    half hour and its alerts. A failure is logged and ``then`` still runs: the demo
    starts with empty plots rather than not at all."""
    sims = [h for h in hosts if h.backend == "sim" and h.transport == "local"]
    if not sims or seconds <= 0:
        then()
        return
    os.environ.setdefault("GPUFLEET_SIM_START_S", f"{seconds:g}")
    end_t = time.time()

    def failed(e: BaseException) -> None:
        log.warning("demo history not pre-filled: %s", e)
        then()

    def work() -> int:
        return feed(sims, live, rules, seconds, end_t, store=store, lifecycle=lifecycle)

    run_in_pool(work, lambda _n: then(), failed, pool)
