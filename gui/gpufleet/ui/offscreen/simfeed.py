"""Simulated history, made in-process: the demo scenarios' sampler run faster than real time.

``simulate(hosts, duration_s, end_t)`` runs the real sampler loop (``gpufleet_sampler.loop``)
over the sim backend for each host, with simulated monotonic time and wall-clock stamps that
end at ``end_t``, and yields the parsed messages as Fleet events. The screenshot command and
the GUI benchmark use it so plots have history without waiting half an hour; the sim's child
processes are closed when a host's run ends.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from gpufleet_sampler.backends.sim import SimBackend
from gpufleet_sampler.loop import Sampler

from gpufleet.core.config.hostconfig import HostConfig
from gpufleet.core.fleet.events import HostMessage
from gpufleet.core.wire.messages import Hello, parse_object


def simulate(
    hosts: Sequence[HostConfig],
    duration_s: float,
    end_t: float,
    *,
    procs_interval: float = 10.0,
) -> Iterator[HostMessage]:
    """Every message of ``duration_s`` seconds of each host, host after host."""
    for h in hosts:
        backend = SimBackend(h.scenario or "healthy-8xa100", h.seed, h.interval_s)
        try:
            sampler = Sampler(backend, h.interval_s, procs_interval=procs_interval)
            hello = parse_object(sampler.hello())
            assert isinstance(hello, Hello)
            yield HostMessage(h.name, hello)
            n = int(duration_s / h.interval_s)
            start = end_t - n * h.interval_s
            for i in range(n + 1):
                for obj in sampler.step(i * h.interval_s, start + i * h.interval_s):
                    yield HostMessage(h.name, parse_object(obj, hello))
        finally:
            backend.close()
