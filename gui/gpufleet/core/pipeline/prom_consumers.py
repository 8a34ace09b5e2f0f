"""The Prometheus pieces every front end builds the same way, all opt-in from config.toml:
the host groups read from Prometheus servers (``[[prometheus]]``) and the Alertmanager
receiver (``[settings] alertmanager_listen``). The window (``ui/controllers/prom_wiring.py``)
and ``gpufleet serve`` start them here.

- A ``PromPoller`` per host group publishes into the hub's event queue, so the hub, the rules
  and the cost treat its instances as hosts (named ``<group>/<Hostname>``, priced from the
  entry); the group itself is a host, so a Prometheus that is down shows its reason.
- The receiver's alerts go to the hub (``post_external``), which merges them into the alerts.
"""

from __future__ import annotations

import contextlib
import queue
from collections.abc import Mapping, Sequence
from typing import Any

from gpufleet.core.config.hostconfig import HostConfig
from gpufleet.core.config.prometheus_sources import PromSourceConfig, parse_sources
from gpufleet.core.fleet.events import FleetEvent
from gpufleet.core.pipeline.hub import PipelineHub
from gpufleet.core.prometheus.am_receiver import AlertmanagerReceiver
from gpufleet.core.prometheus.source import PromPoller


class PromSources:
    """The running host groups of one front end: their pollers, and the HostConfig of each
    instance the first time it is seen."""

    def __init__(self, hub: PipelineHub, sources: Sequence[PromSourceConfig]) -> None:
        self.hub = hub
        self.sources: dict[str, PromSourceConfig] = {s.name: s for s in sources}
        self.pollers: list[PromPoller] = []
        self._seen: set[str] = set()

    @classmethod
    def from_tables(cls, hub: PipelineHub, tables: Sequence[Mapping[str, Any]]) -> PromSources:
        """Raises ValueError (one line naming the entry) for a bad ``[[prometheus]]`` table."""
        return cls(hub, parse_sources(tables))

    def groups(self) -> list[HostConfig]:
        """One host per group (its status line tells whether its Prometheus answers)."""
        return [
            HostConfig(name=s.name, host=s.url, transport="local", tags=("prometheus",))
            for s in self.sources.values()
        ]

    def start(self) -> None:
        events = self.hub.events

        def publish(ev: FleetEvent) -> None:
            # The front end fell behind when the queue is full: the poller never blocks on it.
            with contextlib.suppress(queue.Full):
                events.put_nowait(ev)

        for s in self.sources.values():
            poller = PromPoller(s, publish)
            poller.start()
            self.pollers.append(poller)

    def new_instance(self, host: str, known: bool = False) -> HostConfig | None:
        """The HostConfig of a Prometheus instance seen for the first time (``host`` a hello's
        host name, ``known``: the front end has it already), else None."""
        group, _, hostname = host.partition("/")
        src = self.sources.get(group)
        if src is None or not hostname or known or host in self._seen:
            return None
        self._seen.add(host)
        return src.host_config(hostname)

    def stop(self) -> None:
        for p in self.pollers:
            p.stop()
        self.pollers = []


def start_am_receiver(hub: PipelineHub, listen: str) -> AlertmanagerReceiver:
    """Alertmanager's webhook on ``listen``, its alerts merged by the hub. Raises
    ReceiverError (or the keyring's error) when it cannot start."""
    rx = AlertmanagerReceiver(hub.post_external, listen=listen)
    rx.start()
    return rx
