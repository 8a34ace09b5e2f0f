"""The demo daemons a CLI command starts are stopped when it ends.

``gpufleet stream demo:…`` or ``gpufleet kill demo:…`` attaches to a local sampler daemon,
starting it when none runs; left alone, that daemon would sample on for a day after the
command ended. Daemons that were already running (the window's, serve's) belong to
whoever started them and are left running (``core/fleet/localdaemons``)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager

from gpufleet.core.fleet.fleet import Fleet
from gpufleet.core.pipeline.build import demo_daemons_running, stop_demo_daemons


@contextmanager
def demo_daemons_stopped(fleet: Fleet) -> Iterator[None]:
    """Within: the fleet runs; after: it is stopped, and the demo daemons it started too."""
    demo = [h for h in fleet.hosts() if h.transport == "local"]
    before = demo_daemons_running(demo) if demo else None
    try:
        yield
    finally:
        fleet.stop()
        if demo:
            for name, problem in stop_demo_daemons(fleet, before).items():
                print(f"gpufleet: could not stop the demo sampler of {name}: {problem}",
                      file=sys.stderr)  # fmt: skip
